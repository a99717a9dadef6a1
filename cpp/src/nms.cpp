#include "nms.hpp"

#include <algorithm>
#include <limits>

#include "kernels/iou_scalar.hpp"
#include "kernels/kernels.hpp"

namespace hailo_decode {
namespace detail {

constexpr size_t kShortList = 8;
constexpr size_t kRankMax = 128;
// Up to this many candidates NMS runs list by list (kernels' nms_list) where the kernels have it.
// Past it the candidate-by-candidate walk is faster: the list path stores every candidate's box
// in its list's slice (the walk only the kept ones), which for tens of thousands of candidates
// (a dense frame at HailoRT's threshold: 8,000 rows) measured 5-10 % slower.
constexpr size_t kListByList = 4096;

namespace {

// Up to kRankMax candidates: each one's place in the order is counted, without a branch
// on the scores (a comparison sort's branches mispredict about once per element). place[i] is
// the number of scores above candidate i's, plus, when scores are equal, the number of those
// listed before it: the stable order. That is std::sort's order too when no two scores are
// equal, and at up to 16 candidates whatever they are (libstdc++'s std::sort is then an
// insertion sort, which is stable). Returns false, leaving it to std::sort, for HailoRT's order
// of more than 16 candidates with equal scores.
bool place_by_rank(const ScratchVector<Candidate>& c, bool hailort_sort, uint32_t* place) {
    const size_t n = c.size();
    // Scores padded with -inf to a multiple of 8 (above no score), so that the counting kernel
    // runs in whole vectors; 64-byte aligned (and `place`) so that no AVX-512 vector straddles
    // two cache lines.
    alignas(64) float s[kRankMax];
    const size_t m = (n + 7) & ~size_t(7);
    for (size_t i = 0; i < m; ++i) s[i] = i < n ? c[i].score : -std::numeric_limits<float>::infinity();
    kernels::active().count_above(s, n, place);  // place has room for kRankMax, a multiple of 8
    // No two scores equal (and none NaN) exactly when the places are 0 .. n-1, which is exactly when
    // they add up to n (n - 1) / 2: equal scores share their group's first place, and a NaN has
    // place 0 and counts above no other, so either makes the sum smaller. (A bitset of the places
    // taken, or-ed one place after another, waited on its own stores.)
    size_t sum = 0;
    for (size_t i = 0; i < n; ++i) sum += place[i];
    if (sum == n * (n - 1) / 2) return true;
    if (hailort_sort && n > 16) return false;
    for (size_t i = 0; i < n; ++i)
        for (size_t j = 0; j < i; ++j) place[i] += uint32_t(s[j] == s[i]);
    return true;
}

}  // namespace

void sort_candidates(ScratchVector<Candidate>& c, bool hailort_sort, SortScratch& scratch) {
    if (c.size() <= kRankMax) {
        alignas(64) uint32_t place[kRankMax];
        if (place_by_rank(c, hailort_sort, place)) {
            scratch.sorted.resize(c.size());
            for (size_t i = 0; i < c.size(); ++i) scratch.sorted[place[i]] = c[i];
            c.swap(scratch.sorted);
            return;
        }
    }
    // std::sort moves (score, position) pairs of 8 bytes instead of the 16-byte candidates, then
    // the candidates are gathered once. The permutation is the same: std::sort's depends only on
    // the comparisons it sees, and the pairs compare as the candidates do.
    ScratchVector<SortKey>& keys = scratch.keys;
    keys.resize(c.size());
    for (size_t i = 0; i < c.size(); ++i) keys[i] = {c[i].score, uint32_t(i)};
    if (hailort_sort) {
        // HailoRT (remove_overlapping_boxes): std::sort(..., a.score > b.score) on the candidates
        // in scan order, so equal scores end up exactly where HailoRT puts them.
        std::sort(keys.begin(), keys.end(), [](const SortKey& a, const SortKey& b) { return a.score > b.score; });
    } else {
        // Stable by construction (positions are scan order), without std::stable_sort's buffer.
        std::sort(keys.begin(), keys.end(), [](const SortKey& a, const SortKey& b) {
            return a.score > b.score || (a.score == b.score && a.at < b.at);
        });
    }
    scratch.sorted.resize(c.size());
    for (size_t i = 0; i < c.size(); ++i) scratch.sorted[i] = c[keys[i].at];
    c.swap(scratch.sorted);
}

void order_row_class_col(ScratchVector<Candidate>& c, size_t first, const ScratchVector<Box>& boxes, uint32_t width,
                         ScratchVector<uint64_t>& keys, ScratchVector<Candidate>& scratch) {
    const size_t end = c.size();
    auto row_of = [&](size_t i) { return boxes[c[i].box].cell / width; };
    for (size_t i = first; i < end;) {
        const uint32_t row = row_of(i);
        size_t j = i + 1;
        while (j < end && row_of(j) == row) ++j;
        if (j - i >= (size_t(1) << 24)) {  // past the key's 24 bits of position: a plain stable sort
            std::stable_sort(c.begin() + std::ptrdiff_t(i), c.begin() + std::ptrdiff_t(j),
                             [](const Candidate& a, const Candidate& b) { return a.class_id < b.class_id; });
        } else if (j - i > 1) {
            // (class, column) is unique in a row (the columns of one class come in order); the
            // position rides in the key's low 24 bits (classes and columns stay below 2^20).
            keys.resize(j - i);
            for (size_t k = i; k < j; ++k)
                keys[k - i] = uint64_t(uint32_t(c[k].class_id)) << 44 | uint64_t(boxes[c[k].box].cell % width) << 24 |
                              uint64_t(k - i);
            std::sort(keys.begin(), keys.end());
            scratch.resize(j - i);
            for (size_t k = i; k < j; ++k) scratch[k - i] = c[k];
            for (size_t k = i; k < j; ++k) c[k] = scratch[size_t(keys[k - i] & 0xffffffu)];
        }
        i = j;
    }
}

void carve_lists(const ScratchVector<Candidate>& sorted, size_t n, size_t lists, bool agnostic,
                 std::vector<uint32_t>& start, std::vector<uint32_t>& count) {
    count.assign(lists, 0);
    for (size_t i = 0; i < n; ++i) ++count[agnostic ? 0 : size_t(sorted[i].class_id)];
    start.resize(lists);
    uint32_t at = 0;
    for (size_t l = 0; l < lists; ++l) {
        start[l] = at;
        at += count[l];
        count[l] = 0;
    }
}

namespace {

constexpr uint32_t kNoStart = ~uint32_t(0);

// A box as the IoU kernels take it, (y0, x0, y1, x1) whatever the output order, and its area.
template <bool kYxyx>
inline float canonical(const Box& b, float canon[4]) {
    canon[0] = b.v[kYxyx ? 0 : 1];
    canon[1] = b.v[kYxyx ? 1 : 0];
    canon[2] = b.v[kYxyx ? 2 : 3];
    canon[3] = b.v[kYxyx ? 3 : 2];
    return (canon[2] - canon[0]) * (canon[3] - canon[1]);
}

// A kept candidate's output record, written in place (a braced temporary would be copied whole).
inline void fill(const Candidate& c, const Box& b, Detection& det) {
    for (int j = 0; j < 4; ++j) det.box[j] = b.v[j];
    det.score = c.score;
    det.class_id = c.class_id;
    det.head = b.head;
    det.cell = b.cell;
}

inline void output(const Candidate& c, const Box& b, std::vector<Detection>& out) { fill(c, b, out.emplace_back()); }

template <bool kYxyx>
void suppress_in(const ScratchVector<Candidate>& sorted, const ScratchVector<Box>& boxes, const Settings& s,
                 int num_classes, NmsWorkspace& ws, std::vector<Detection>& out) {
    size_t n = sorted.size();
    if (s.max_candidates >= 0 && size_t(s.max_candidates) < n) n = size_t(s.max_candidates);
    if (n == 0) return;  // nothing to carve lists for (a frame where nothing passes)
    const size_t lists = s.agnostic ? 1 : size_t(num_classes);
    // Between calls every list's count and every class's output count are 0 and every start is
    // unset; only the lists and classes of this frame's candidates are set up and reset, in the
    // order they first appear (work per candidate, not per class: most frames hold a few classes).
    if (ws.count.size() != lists) {
        ws.count.assign(lists, 0);
        ws.start.assign(lists, kNoStart);
        ws.tally.assign(4 * lists, 0);
    }
    if (ws.output_of_class.size() != size_t(num_classes)) ws.output_of_class.assign(size_t(num_classes), 0);
    if (ws.lists.size() < n) ws.lists.resize(n);
    auto list_of = [&](size_t i) { return s.agnostic ? size_t(0) : size_t(sorted[i].class_id); };
    // The reset runs however the function ends: if the output's growth throws, the workspace
    // (the decoder's, reused by its next call) still holds the invariant above.
    struct Reset {
        const ScratchVector<Candidate>& sorted;
        size_t n, n_lists = 0;
        bool agnostic;
        NmsWorkspace& ws;
        ~Reset() {
            for (size_t j = 0; j < n_lists; ++j) {
                const uint32_t l = ws.lists[j];
                ws.count[l] = 0;
                ws.start[l] = kNoStart;
                if (!agnostic) ws.output_of_class[l] = 0;
            }
            if (agnostic)
                for (size_t i = 0; i < n; ++i) ws.output_of_class[size_t(sorted[i].class_id)] = 0;
        }
    } reset{sorted, n, 0, s.agnostic, ws};
    // Each list's candidates counted in four partial counts (candidate i in count i % 4): one
    // count incremented candidate after candidate waits for its last store (a frame's candidates
    // are mostly of one or a few classes).
    // The same pass notes each list at its first candidate (its start, unset until then, marks it
    // seen); the starts are then laid out list by list.
    uint32_t* const tally = ws.tally.data();
    uint32_t* const first_seen = ws.start.data();
    for (size_t i = 0; i < n; ++i) {
        const size_t l = list_of(i);
        ++tally[4 * l + (i & 3)];
        if (first_seen[l] == kNoStart) {
            first_seen[l] = 0;
            ws.lists[reset.n_lists++] = uint32_t(l);
        }
    }
    uint32_t at = 0;
    for (size_t j = 0; j < reset.n_lists; ++j) {
        const size_t l = ws.lists[j];
        ws.start[l] = at;
        uint32_t* t = tally + 4 * l;
        at += (t[0] + t[1]) + (t[2] + t[3]);
        t[0] = t[1] = t[2] = t[3] = 0;
    }
    for (auto* v : {&ws.y0, &ws.x0, &ws.y1, &ws.x1, &ws.area})
        if (v->size() < n) v->resize(n);
    const kernels::Table& k = kernels::active();
    // Settings and arrays read into locals: the output's growth (a call that may allocate) would
    // otherwise make the compiler read them again for every candidate.
    const bool capped_class = s.max_per_class >= 0, capped_total = s.max_total >= 0, agnostic = s.agnostic;
    const int64_t max_per_class = s.max_per_class, max_total = s.max_total;
    const float iou_threshold = s.iou_threshold;
    const bool iou_inclusive = s.iou_inclusive;
    float *const ay0 = ws.y0.data(), *const ax0 = ws.x0.data(), *const ay1 = ws.y1.data(), *const ax1 = ws.x1.data(),
                 *const a_area = ws.area.data();
    uint32_t *const list_start = ws.start.data(), *const list_count = ws.count.data();
    int64_t* const output_of_class = ws.output_of_class.data();
    const Box* const box_at = boxes.data();
    int64_t total = 0;
    if (k.nms_list && n <= kListByList && (!capped_total || n <= size_t(max_total))) {
        // List by list: each list's candidates (all of them, in score order) in its slice, the
        // kernel's greedy NMS over the slice, then the kept ones output in score order. The same
        // detections as the walk below: a list's NMS depends on its own candidates only, a
        // class-aware list stops at max_per_class kept (a full class neither outputs nor
        // suppresses), an agnostic one keeps every box that survives (a full class's box still
        // suppresses) and the walk applies the class caps. Where a total cap could stop the
        // walk early (fewer than n), and past kListByList candidates, the walk runs instead.
        if (ws.slot.size() < n) ws.slot.resize(n);
        if (ws.keep.size() < n) ws.keep.resize(n);
        uint32_t* const slot_of = ws.slot.data();
        uint8_t* const keep = ws.keep.data();
        for (size_t i = 0; i < n; ++i) {
            const size_t list = list_of(i);
            const uint32_t slot = list_start[list] + list_count[list]++;
            slot_of[i] = slot;
            float canon[4];
            a_area[slot] = canonical<kYxyx>(box_at[sorted[i].box], canon);
            ay0[slot] = canon[0];
            ax0[slot] = canon[1];
            ay1[slot] = canon[2];
            ax1[slot] = canon[3];
        }
        size_t longest = 0;
        for (size_t j = 0; j < reset.n_lists; ++j) longest = std::max(longest, size_t(list_count[ws.lists[j]]));
        // Aligned to 64 bytes, not just to AVX2's 32: an AVX-512 block store that straddles two
        // cache lines does not forward to the loads that read it back (measured on an Intel
        // Xeon with AVX-512: the dense YOLOX frame 7 % slower at 32-byte alignment).
        const size_t kept_floats = 5 * ((longest + 7) & ~size_t(7)) + 16;  // + 16: room to align
        if (ws.kept.size() < kept_floats) ws.kept.resize(kept_floats);
        float* const kept = reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(ws.kept.data()) + 63) & ~uintptr_t(63));
        const size_t max_keep = capped_class && !agnostic ? size_t(max_per_class) : ~size_t(0);
        for (size_t j = 0; j < reset.n_lists; ++j) {
            const size_t first = list_start[ws.lists[j]];
            k.nms_list(ay0 + first, ax0 + first, ay1 + first, ax1 + first, a_area + first, list_count[ws.lists[j]],
                       iou_threshold, iou_inclusive, max_keep, keep + first, kept);
        }
        // No total cap can bind here (n <= max_total). Class-aware, a list is one class and the
        // kernel stopped it at max_per_class kept, so every kept candidate is output without the
        // per-class count (a load-increment-store per record). Agnostic, the classes' caps apply
        // below. The records are written through a pointer, each at the next place whether kept
        // or not (the place moves on when kept): emplace_back reloads and stores the vector's end
        // every record, a chain through memory.
        if (!(capped_class && agnostic)) {
            const size_t first_out = out.size();
            out.resize(first_out + n);
            Detection* const d = out.data() + first_out;
            size_t n_out = 0;
            for (size_t i = 0; i < n; ++i) {
                fill(sorted[i], box_at[sorted[i].box], d[n_out]);
                n_out += keep[slot_of[i]];
            }
            out.resize(first_out + n_out);
            return;
        }
        for (size_t i = 0; i < n; ++i) {
            if (!keep[slot_of[i]]) continue;
            const Candidate& c = sorted[i];
            const size_t cls = size_t(c.class_id);
            if (output_of_class[cls] >= max_per_class) continue;
            ++output_of_class[cls];
            output(c, box_at[c.box], out);
        }
        return;
    }
    for (size_t i = 0; i < n; ++i) {
        if (capped_total && total >= max_total) break;  // nothing later can be output
        const Candidate& c = sorted[i];
        const size_t cls = size_t(c.class_id);
        const bool class_full = capped_class && output_of_class[cls] >= max_per_class;
        // Class-aware: a box of a full class can neither be output nor suppress an outputable box.
        // Agnostic: it may still suppress boxes of other classes, so it goes through NMS.
        if (class_full && !agnostic) continue;
        const Box& b = box_at[c.box];
        float canon[4];
        const float area = canonical<kYxyx>(b, canon);
        const size_t list = agnostic ? 0 : cls;
        const size_t first = list_start[list], n_kept = list_count[list];
        const float *y0 = ay0 + first, *x0 = ax0 + first, *y1 = ay1 + first, *x1 = ax1 + first, *ka = a_area + first;
        // Most kept lists are a few boxes long: below a vector's width the scalar test runs inline
        // (the same result as the kernel, which would fall back to it anyway).
        const bool suppressed =
            n_kept < kShortList
                ? kernels::any_iou_over_scalar(y0, x0, y1, x1, ka, n_kept, canon, area, iou_threshold, iou_inclusive)
                : k.any_iou_over(y0, x0, y1, x1, ka, n_kept, canon, area, iou_threshold, iou_inclusive);
        if (suppressed) continue;
        const size_t slot = first + n_kept;
        ay0[slot] = canon[0];
        ax0[slot] = canon[1];
        ay1[slot] = canon[2];
        ax1[slot] = canon[3];
        a_area[slot] = area;
        ++list_count[list];
        if (class_full) continue;
        ++output_of_class[cls];
        ++total;
        output(c, b, out);
    }
}

}  // namespace

void suppress(const ScratchVector<Candidate>& sorted, const ScratchVector<Box>& boxes, const Settings& s,
              int num_classes, NmsWorkspace& ws, std::vector<Detection>& out) {
    if (s.yxyx)
        suppress_in<true>(sorted, boxes, s, num_classes, ws, out);
    else
        suppress_in<false>(sorted, boxes, s, num_classes, ws, out);
}

}  // namespace detail
}  // namespace hailo_decode
