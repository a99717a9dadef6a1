#include "nms_tensor.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

namespace hailo_decode::tappas {

namespace {
float float_at(const uint8_t* data, size_t index) {
    float v;
    std::memcpy(&v, data + index * sizeof(float), sizeof v);
    return v;
}
}  // namespace

void read_nms_by_class(const uint8_t* data, uint32_t num_classes, uint32_t max_per_class, std::vector<NmsRecord>& out) {
    const size_t first = out.size();
    size_t at = 0;  // in floats
    for (uint32_t k = 0; k < num_classes; ++k) {
        const float count = float_at(data, at++);
        if (!(count >= 0.0f && count <= float(max_per_class)) || count != std::floor(count)) {
            out.resize(first);
            throw std::invalid_argument("class " + std::to_string(k) + " has a box count of " + std::to_string(count) +
                                        ", not a whole number in [0, max_bboxes_per_class = " +
                                        std::to_string(max_per_class) + "]");
        }
        for (uint32_t i = 0, n = uint32_t(count); i < n; ++i, at += 5) {
            NmsRecord r;
            r.y_min = float_at(data, at);
            r.x_min = float_at(data, at + 1);
            r.y_max = float_at(data, at + 2);
            r.x_max = float_at(data, at + 3);
            r.score = float_at(data, at + 4);
            r.class_index = int32_t(k);
            // The op writes none; a buffer that is not what the metadata says can (hailooverlay and
            // downstream code would get NaN boxes).
            if (!(std::isfinite(r.y_min) && std::isfinite(r.x_min) && std::isfinite(r.y_max) && std::isfinite(r.x_max) &&
                  std::isfinite(r.score))) {
                out.resize(first);
                throw std::invalid_argument("class " + std::to_string(k) + " has a box with a value that is not finite");
            }
            out.push_back(r);
        }
    }
}

void filter_nms_records(std::vector<NmsRecord>& records, const std::vector<double>* thresholds, int64_t max_boxes,
                        std::vector<uint32_t>& scratch) {
    if (thresholds)
        records.erase(std::remove_if(records.begin(), records.end(),
                                     [thresholds](const NmsRecord& r) {
                                         // read_nms_by_class gave class_index < the tensor's classes, which
                                         // the thresholds cover (FilterState::add_nms)
                                         return !(double(r.score) > (*thresholds)[size_t(r.class_index)]);
                                     }),
                      records.end());
    if (max_boxes < 0 || records.size() <= size_t(max_boxes)) return;
    // The max_boxes best, then back in buffer order.
    scratch.resize(records.size());
    for (uint32_t i = 0; i < scratch.size(); ++i) scratch[i] = i;
    std::stable_sort(scratch.begin(), scratch.end(),
                     [&records](uint32_t a, uint32_t b) { return records[a].score > records[b].score; });
    scratch.resize(size_t(max_boxes));
    std::sort(scratch.begin(), scratch.end());
    for (size_t i = 0; i < scratch.size(); ++i) records[i] = records[scratch[i]];
    records.resize(scratch.size());
}

}  // namespace hailo_decode::tappas
