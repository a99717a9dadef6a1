#include "hailo_decode/pack.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

namespace hailo_decode {

size_t hailo_nms_by_class_floats(size_t num_classes, size_t max_per_class) {
    const size_t max = std::numeric_limits<size_t>::max();
    if (max_per_class > (max - 1) / 5 || (num_classes && 1 + 5 * max_per_class > max / num_classes))
        throw std::invalid_argument("HAILO_NMS_BY_CLASS size overflows: " + std::to_string(num_classes) + " classes x " +
                                    std::to_string(max_per_class) + " boxes");
    return num_classes * (1 + 5 * max_per_class);
}

size_t pack_hailo_nms_by_class(const float* boxes, const float* scores, const int32_t* class_ids, size_t count,
                               size_t num_classes, size_t max_per_class, float* out, size_t out_floats) {
    const size_t needed = hailo_nms_by_class_floats(num_classes, max_per_class);
    if (out_floats < needed)
        throw std::invalid_argument("HAILO_NMS_BY_CLASS buffer too small: need " + std::to_string(needed) +
                                    " float32 values (" + std::to_string(num_classes) + " classes x (1 + 5 x " +
                                    std::to_string(max_per_class) + ")), got " + std::to_string(out_floats));
    for (size_t i = 0; i < count; ++i)
        if (class_ids[i] < 0 || size_t(class_ids[i]) >= num_classes)
            throw std::invalid_argument("class id " + std::to_string(class_ids[i]) + " out of range [0, " +
                                        std::to_string(num_classes) + ")");
    size_t pos = 0;
    for (size_t k = 0; k < num_classes; ++k) {
        const size_t count_at = pos++;
        size_t n = 0;
        for (size_t i = 0; i < count && n < max_per_class; ++i) {
            if (size_t(class_ids[i]) != k) continue;
            std::copy(boxes + 4 * i, boxes + 4 * i + 4, out + pos);
            out[pos + 4] = scores[i];
            pos += 5;
            ++n;
        }
        out[count_at] = float(n);
    }
    std::fill(out + pos, out + out_floats, 0.0f);
    return pos;
}

}  // namespace hailo_decode
