// An NMS op's own output (HAILO_NMS_BY_CLASS, float32), read as libyolo_hailortpp_post.so reads it
// (TAPPAS hailo_nms_decode.hpp): class after class, a float count and then that many
// {y_min, x_min, y_max, x_max, score} records; classes * (1 + 5 * max_bboxes_per_class) floats.
#pragma once

#include <cstdint>
#include <vector>

namespace hailo_decode::tappas {

struct NmsRecord {
    float y_min, x_min, y_max, x_max, score;
    int32_t class_index;  // 0-based: the TAPPAS class id is class_index + 1
};

// Appends the buffer's records to `out` in buffer order (by class, then as written). Throws
// std::invalid_argument, having appended nothing, when a count is not a whole number in
// [0, max_per_class] (libyolo_hailortpp_post.so throws for a count over max_per_class) or a box
// holds a value that is not finite (the op writes none: the buffer is not what it says). Reads
// `data` with memcpy: no alignment is assumed.
void read_nms_by_class(const uint8_t* data, uint32_t num_classes, uint32_t max_per_class, std::vector<NmsRecord>& out);

// Keeps the records whose score is > their class's threshold (libyolo_hailortpp_post.so's test;
// `thresholds` by class index, nullptr: every record) and, when max_boxes >= 0, at most the
// max_boxes best of them (ties: the earlier in the buffer), in buffer order.
void filter_nms_records(std::vector<NmsRecord>& records, const std::vector<double>* thresholds, int64_t max_boxes,
                        std::vector<uint32_t>& scratch);

}  // namespace hailo_decode::tappas
