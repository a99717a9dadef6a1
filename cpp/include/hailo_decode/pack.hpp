// HailoRT's HAILO_NMS_BY_CLASS float32 layout: for each class in order, a float count and then
// `count` boxes {y_min, x_min, y_max, x_max, score}; classes back to back; the buffer holds
// classes * (1 + 5 * max_per_class) floats.
#pragma once

#include <cstddef>
#include <cstdint>

namespace hailo_decode {

// classes * (1 + 5 * max_per_class); throws std::invalid_argument when that does not fit a size_t.
size_t hailo_nms_by_class_floats(size_t num_classes, size_t max_per_class);

// Writes detections (boxes normalized [ymin, xmin, ymax, xmax], any class order, score-descending
// within each class) into `out`, keeping at most max_per_class per class in the given order and
// zeroing the unused tail. Throws std::invalid_argument if out_floats is too small or a class id
// is out of range. Returns the number of floats written before the zeroed tail.
size_t pack_hailo_nms_by_class(const float* boxes_yxyx, const float* scores, const int32_t* class_ids,
                               size_t count, size_t num_classes, size_t max_per_class, float* out,
                               size_t out_floats);

}  // namespace hailo_decode
