#include "hailo_decode/pack_by_score.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

namespace hailo_decode {

size_t hailo_nms_by_score_bytes(size_t max_bboxes_total) {
    if (max_bboxes_total > kHailoNmsByScoreMaxTotal)
        throw std::invalid_argument("HAILO_NMS_BY_SCORE: max_bboxes_total " + std::to_string(max_bboxes_total) +
                                    " exceeds 65535, what its uint16 count can hold");
    return kHailoNmsByScoreCountBytes + kHailoNmsByScoreRecordBytes * max_bboxes_total;
}

size_t pack_hailo_nms_by_score(const float* boxes, const float* scores, const int32_t* class_ids, size_t count,
                               size_t max_bboxes_total, uint8_t* out, size_t out_bytes) {
    const size_t needed = hailo_nms_by_score_bytes(max_bboxes_total);
    if (out_bytes < needed)
        throw std::invalid_argument("HAILO_NMS_BY_SCORE buffer too small: need " + std::to_string(needed) +
                                    " bytes (2 + 22 x " + std::to_string(max_bboxes_total) + "), got " +
                                    std::to_string(out_bytes));
    const size_t n = std::min(count, max_bboxes_total);
    for (size_t i = 0; i < n; ++i) {
        if (class_ids[i] < 0 || size_t(class_ids[i]) > 65535)
            throw std::invalid_argument("HAILO_NMS_BY_SCORE: class id " + std::to_string(class_ids[i]) + " at " +
                                        std::to_string(i) + " does not fit its uint16 class_id");
        if (std::isnan(scores[i]) || (i > 0 && !(scores[i] <= scores[i - 1])))
            throw std::invalid_argument("HAILO_NMS_BY_SCORE: detections must come score-descending (HailoRT's order); "
                                        "score " + std::to_string(scores[i]) + " at " + std::to_string(i) +
                                        " follows " + (i ? std::to_string(scores[i - 1]) : std::string("nothing")));
    }
    // Records sit at odd offsets (2 + 22 k): every field goes through memcpy.
    uint8_t* rec = out + kHailoNmsByScoreCountBytes;
    for (size_t i = 0; i < n; ++i, rec += kHailoNmsByScoreRecordBytes) {
        std::memcpy(rec, boxes + 4 * i, 4 * sizeof(float));
        std::memcpy(rec + 16, scores + i, sizeof(float));
        const uint16_t cls = uint16_t(class_ids[i]);
        std::memcpy(rec + 20, &cls, sizeof(cls));
    }
    const uint16_t written = uint16_t(n);
    std::memcpy(out, &written, sizeof(written));
    const size_t used = kHailoNmsByScoreCountBytes + kHailoNmsByScoreRecordBytes * n;
    std::fill(out + used, out + out_bytes, uint8_t(0));
    return used;
}

}  // namespace hailo_decode
