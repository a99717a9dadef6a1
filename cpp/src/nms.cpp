#include "nms.hpp"

#include <algorithm>

#include "kernels/iou_scalar.hpp"
#include "kernels/kernels.hpp"

namespace hailo_decode {
namespace detail {

constexpr size_t kShortList = 8;

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

void suppress(const std::vector<Candidate>& sorted, const std::vector<Box>& boxes, const Settings& s,
              int num_classes, NmsWorkspace& ws, std::vector<Detection>& out) {
    const size_t lists = s.agnostic ? 1 : size_t(num_classes);
    if (ws.kept.size() < lists) ws.kept.resize(lists);
    for (size_t i = 0; i < lists; ++i) ws.kept[i].clear();
    ws.output_of_class.assign(size_t(num_classes), 0);
    const kernels::Table& k = kernels::active();
    const int Y0 = s.yxyx ? 0 : 1, X0 = s.yxyx ? 1 : 0, Y1 = s.yxyx ? 2 : 3, X1 = s.yxyx ? 3 : 2;
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
        const float canon[4] = {b.v[Y0], b.v[X0], b.v[Y1], b.v[X1]};
        const float area = (canon[2] - canon[0]) * (canon[3] - canon[1]);
        BoxSoA& kept = ws.kept[s.agnostic ? 0 : size_t(c.class_id)];
        // Most kept lists are a few boxes long: below a vector's width the scalar test runs inline
        // (the same result as the kernel, which would fall back to it anyway).
        const size_t n_kept = kept.size();
        const bool suppressed =
            n_kept < kShortList
                ? kernels::any_iou_over_scalar(kept.y0.data(), kept.x0.data(), kept.y1.data(), kept.x1.data(),
                                               kept.area.data(), n_kept, canon, area, s.iou_threshold, s.iou_inclusive)
                : k.any_iou_over(kept.y0.data(), kept.x0.data(), kept.y1.data(), kept.x1.data(), kept.area.data(),
                                 n_kept, canon, area, s.iou_threshold, s.iou_inclusive);
        if (suppressed) continue;
        kept.y0.push_back(canon[0]);
        kept.x0.push_back(canon[1]);
        kept.y1.push_back(canon[2]);
        kept.x1.push_back(canon[3]);
        kept.area.push_back(area);
        if (class_full) continue;
        ++ws.output_of_class[size_t(c.class_id)];
        ++total;
        Detection& det = out.emplace_back();  // in place: a braced temporary would be copied whole
        for (int j = 0; j < 4; ++j) det.box[j] = b.v[j];
        det.score = c.score;
        det.class_id = c.class_id;
    }
}

}  // namespace detail
}  // namespace hailo_decode
