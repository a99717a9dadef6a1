#include "hailo_decode/bbox_only.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "nms.hpp"
#include "score_threshold.hpp"

namespace hailo_decode {

using namespace detail;

size_t bbox_only_floats(size_t proposals, size_t num_classes) {
    const size_t max = std::numeric_limits<size_t>::max();
    if (num_classes > max - 4 || (proposals && 4 + num_classes > max / proposals))
        throw std::invalid_argument("yolov8_bbox_only size overflows: " + std::to_string(proposals) + " x (4 + " +
                                    std::to_string(num_classes) + ")");
    return proposals * (4 + num_classes);
}

void decode_bbox_only(const float* rows, size_t floats, size_t proposals, int num_classes, const Settings& s,
                      std::vector<Detection>& out) {
    if (num_classes <= 0) throw std::invalid_argument("num_classes must be positive, got " + std::to_string(num_classes));
    const size_t width = 4 + size_t(num_classes);
    const size_t needed = bbox_only_floats(proposals, size_t(num_classes));
    if (floats < needed)
        throw std::invalid_argument("yolov8_bbox_only output holds " + std::to_string(floats) + " float32 values, " +
                                    std::to_string(proposals) + " proposals x (4 + " + std::to_string(num_classes) +
                                    ") need " + std::to_string(needed));
    const size_t n_th = s.score_threshold.size();
    if (n_th != 1 && n_th != size_t(num_classes))
        throw std::invalid_argument("score_threshold needs 1 or " + std::to_string(num_classes) + " values, got " +
                                    std::to_string(n_th));
    if (!std::isfinite(s.iou_threshold)) throw std::invalid_argument("iou threshold must be finite");
    if (!s.normalized && (s.image_height <= 0 || s.image_width <= 0))
        throw std::invalid_argument("pixel boxes need a positive image size");
    for (size_t i = 0; i < needed; ++i)
        if (!std::isfinite(rows[i]))
            throw std::invalid_argument("yolov8_bbox_only output: non-finite value " + std::to_string(rows[i]) +
                                        " at proposal " + std::to_string(i / width) + ", column " +
                                        std::to_string(i % width));
    auto threshold = [&](size_t k) { return s.score_threshold[n_th == 1 ? 0 : k]; };
    auto passes = [&](float v, size_t k) { return s.score_inclusive ? v >= threshold(k) : v > threshold(k); };
    auto score = [&](const float* row, size_t k) { return s.sigmoid ? sigmoid(row[4 + k]) : row[4 + k]; };

    ScratchVector<Candidate> candidates;
    ScratchVector<Box> boxes;
    for (size_t p = 0; p < proposals; ++p) {
        const float* row = rows + p * width;
        const size_t before = candidates.size();
        if (s.multi_label) {
            for (size_t k = 0; k < size_t(num_classes); ++k) {
                const float v = score(row, k);
                if (passes(v, k)) candidates.push_back({v, int32_t(k), uint32_t(boxes.size())});
            }
        } else {
            size_t best = 0;
            float best_v = score(row, 0);
            for (size_t k = 1; k < size_t(num_classes); ++k) {
                const float v = score(row, k);
                if (v > best_v) { best = k; best_v = v; }
            }
            if (passes(best_v, best)) candidates.push_back({best_v, int32_t(best), uint32_t(boxes.size())});
        }
        if (candidates.size() == before) continue;
        Box b;
        const float sy = s.normalized ? 1.0f : float(s.image_height), sx = s.normalized ? 1.0f : float(s.image_width);
        const float y0 = row[0] * sy, x0 = row[1] * sx, y1 = row[2] * sy, x1 = row[3] * sx;
        if (s.yxyx) {
            b.v[0] = y0; b.v[1] = x0; b.v[2] = y1; b.v[3] = x1;
        } else {
            b.v[0] = x0; b.v[1] = y0; b.v[2] = x1; b.v[3] = y1;
        }
        boxes.push_back(b);
    }
    SortScratch scratch;
    sort_candidates(candidates, s.hailort_sort, scratch);
    NmsWorkspace ws;
    suppress(candidates, boxes, s, num_classes, ws, out);
}

}  // namespace hailo_decode
