// HailoRT's HAILO_NMS_BY_CLASS float32 layout: for each class in order, a float count and then
// `count` boxes {y_min, x_min, y_max, x_max, score}; classes back to back; the buffer holds
// classes * (1 + 5 * max_per_class) floats.
#pragma once

#include <cstddef>
#include <cstdint>

namespace hailo_decode {

// The floats a HAILO_NMS_BY_CLASS buffer holds: num_classes x (1 + 5 x max_per_class). Throws
// std::invalid_argument when that does not fit a size_t.
size_t hailo_nms_by_class_floats(size_t num_classes, size_t max_per_class);

// Writes `count` detections into `out` in that layout, keeping at most max_per_class per class in
// the given order and zeroing the unused tail. Pass them as Decoder::frame() gives them under the
// default Settings: score-descending, boxes normalized [ymin, xmin, ymax, xmax]; classes any order.
// Checks first, writing nothing when it throws std::invalid_argument: out_floats >=
// hailo_nms_by_class_floats(num_classes, max_per_class), and every class id in [0, num_classes).
// Expects boxes_yxyx to hold 4 x count floats, scores and class_ids count values each, `out`
// out_floats floats, none of them overlapping `out`; keeps no pointer. Returns the number of
// floats written before the zeroed tail.
size_t pack_hailo_nms_by_class(const float* boxes_yxyx, const float* scores, const int32_t* class_ids,
                               size_t count, size_t num_classes, size_t max_per_class, float* out,
                               size_t out_floats);

}  // namespace hailo_decode
