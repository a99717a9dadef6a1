#include "nms.hpp"

#include <algorithm>

namespace hailo_decode {
namespace detail {

void sort_candidates(std::vector<Candidate>& c, bool hailort_sort) {
    if (hailort_sort) {
        // HailoRT (remove_overlapping_boxes): std::sort(..., a.score > b.score). std::sort's
        // permutation depends only on the comparisons it sees, so the same input order and the
        // same comparator give HailoRT's order, equal scores included.
        std::sort(c.begin(), c.end(), [](const Candidate& a, const Candidate& b) { return a.score > b.score; });
    } else {
        // Stable by construction, without std::stable_sort's temporary buffer.
        std::sort(c.begin(), c.end(), [](const Candidate& a, const Candidate& b) {
            return a.score > b.score || (a.score == b.score && a.seq < b.seq);
        });
    }
}

float iou(const Box& a, const Box& b, bool yxyx) {
    const int y0 = yxyx ? 0 : 1, x0 = yxyx ? 1 : 0, y1 = yxyx ? 2 : 3, x1 = yxyx ? 3 : 2;
    const float overlap_w = std::min(a.v[x1], b.v[x1]) - std::max(a.v[x0], b.v[x0]);
    const float overlap_h = std::min(a.v[y1], b.v[y1]) - std::max(a.v[y0], b.v[y0]);
    if (overlap_w <= 0.0f || overlap_h <= 0.0f) return 0.0f;
    const float inter = overlap_w * overlap_h;
    const float area_a = (a.v[y1] - a.v[y0]) * (a.v[x1] - a.v[x0]);
    const float area_b = (b.v[y1] - b.v[y0]) * (b.v[x1] - b.v[x0]);
    return inter / (area_a + area_b - inter);
}

void suppress(const std::vector<Candidate>& sorted, const std::vector<Box>& boxes, const Settings& s,
              int num_classes, NmsWorkspace& ws, std::vector<Detection>& out) {
    ws.kept.clear();
    ws.last_kept_of_class.assign(size_t(num_classes), -1);
    ws.output_of_class.assign(size_t(num_classes), 0);
    const float th = s.iou_threshold;
    auto overlaps = [&](const Box& a, const Box& b) {
        const float v = iou(a, b, s.yxyx);
        return s.iou_inclusive ? v >= th : v > th;
    };
    size_t n = sorted.size();
    if (s.max_candidates >= 0 && size_t(s.max_candidates) < n) n = size_t(s.max_candidates);
    int64_t total = 0;
    for (size_t i = 0; i < n; ++i) {
        if (s.max_total >= 0 && total >= s.max_total) break;  // nothing later can be output
        const Candidate& c = sorted[i];
        const bool class_full = s.max_per_class >= 0 && ws.output_of_class[size_t(c.class_id)] >= s.max_per_class;
        // Class-aware: a box of a full class can neither be output nor suppress an outputable box.
        // Agnostic: it may still suppress boxes of other classes, so it goes through NMS.
        if (class_full && !s.agnostic) continue;
        const Box& b = boxes[c.box];
        bool suppressed = false;
        if (s.agnostic) {
            for (const auto& k : ws.kept)
                if (overlaps(k.box, b)) { suppressed = true; break; }
        } else {
            for (int32_t k = ws.last_kept_of_class[size_t(c.class_id)]; k >= 0; k = ws.kept[size_t(k)].prev_same_class)
                if (overlaps(ws.kept[size_t(k)].box, b)) { suppressed = true; break; }
        }
        if (suppressed) continue;
        ws.kept.push_back({b, c.class_id, ws.last_kept_of_class[size_t(c.class_id)]});
        ws.last_kept_of_class[size_t(c.class_id)] = int32_t(ws.kept.size() - 1);
        if (class_full) continue;
        ++ws.output_of_class[size_t(c.class_id)];
        ++total;
        out.push_back({{b.v[0], b.v[1], b.v[2], b.v[3]}, c.score, c.class_id});
    }
}

}  // namespace detail
}  // namespace hailo_decode
