// HailoRT's HAILO_NMS_BY_SCORE layout (hailort.h hailo_detections_t): a uint16 count, then
// `count` packed 22-byte records hailo_detection_t {float32 y_min, x_min, y_max, x_max, score;
// uint16 class_id}, in HailoRT's global score order (the one sort NMS already did), no per-class
// cap, at most max_bboxes_total records; the buffer holds 2 + 22 * max_bboxes_total bytes
// (HailoRTCommon::get_nms_by_score_host_frame_size). Values are stored in the host's byte order,
// as HailoRT stores them (little-endian on every host it runs on).
//
// Where we differ from HailoRT (4.23; the same loop read in 4.21 and 5.1): its writer
// (NmsPostProcessOp::fill_nms_by_score_format_buffer) stops only once its count exceeds
// max_bboxes_total, so with more survivors than that it writes max_bboxes_total + 1 records and a
// count of max_bboxes_total + 1, the last record past the end of its buffer. Ours writes at most max_bboxes_total records and a count that says so: every
// byte stays inside the caller's buffer.
#pragma once

#include <cstddef>
#include <cstdint>

namespace hailo_decode {

constexpr size_t kHailoNmsByScoreCountBytes = 2;    // uint16 count
constexpr size_t kHailoNmsByScoreRecordBytes = 22;  // sizeof(hailo_detection_t), packed
constexpr size_t kHailoNmsByScoreMaxTotal = 65535;  // the count is a uint16

// 2 + 22 * max_bboxes_total. Throws std::invalid_argument when max_bboxes_total exceeds 65535
// (a uint16 count could not say how many records the buffer holds).
size_t hailo_nms_by_score_bytes(size_t max_bboxes_total);

// Writes the first min(count, max_bboxes_total) detections, in the order given, into `out`
// (boxes normalized [ymin, xmin, ymax, xmax]), then the count, and zeroes the rest of the
// buffer. The order given must be HailoRT's: score-descending, ties as its sort left them (a
// Decoder's output is). Checks before writing anything, throwing std::invalid_argument: out_bytes
// >= hailo_nms_by_score_bytes(max_bboxes_total); every class id in [0, 65535]; scores
// non-increasing and not NaN. Expects boxes_yxyx to hold 4 * count floats and scores, class_ids
// `count` values each; `out` needs no alignment. Returns the bytes written before the zeroed tail.
size_t pack_hailo_nms_by_score(const float* boxes_yxyx, const float* scores, const int32_t* class_ids, size_t count,
                               size_t max_bboxes_total, uint8_t* out, size_t out_bytes);

}  // namespace hailo_decode
