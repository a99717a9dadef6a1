// HailoRT's yolov8_bbox_only op output (libhailort/src/net_flow/ops/yolov8_bbox_only_post_process.hpp):
// a float32 NHWC tensor (1, proposals, 4 + classes), one row per cell of every bbox decoder's grid
// (decoders in the HEF's order, then row, then column): {y_min, x_min, y_max, x_max} normalized by
// the op's image size (the same decode as the NMS op), then each class's dequantized score. No
// sigmoid, no threshold, no NMS: the host does those, here as the Decoder does them.
#pragma once

#include <cstddef>
#include <vector>

#include "hailo_decode/types.hpp"

namespace hailo_decode {

// proposals * (4 + num_classes); throws std::invalid_argument when that does not fit a size_t.
size_t bbox_only_floats(size_t proposals, size_t num_classes);

// Candidates of every row in HailoRT's order (row, then class; every class over the threshold
// with settings.multi_label, the best class only without), sorted and suppressed by the same code
// as the Decoder (settings: sigmoid, score_threshold (one or num_classes values), score_inclusive,
// iou_threshold, iou_inclusive, multi_label, agnostic, max_per_class, max_total, max_candidates,
// hailort_sort; boxes come out normalized yxyx, or as settings.normalized / yxyx ask, pixels using
// image_height / image_width). Appends the kept detections to `out`, best score first.
// Checks first, throwing std::invalid_argument: num_classes > 0; `floats` (the buffer's length)
// >= bbox_only_floats(proposals, num_classes); the thresholds' count; every value finite.
// Expects `rows` to hold `floats` floats. Allocates its working lists per call.
void decode_bbox_only(const float* rows, size_t floats, size_t proposals, int num_classes, const Settings& settings,
                      std::vector<Detection>& out);

}  // namespace hailo_decode
