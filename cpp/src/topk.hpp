// End-to-end selection: what Ultralytics' one-to-one heads (YOLO26, YOLOv10; Detect with
// end2end, nn/modules/head.py get_topk_index / postprocess) do instead of NMS.
//
//   stage 1: the k anchors with the best class scores (k = min(max_det, anchors));
//   stage 2: the k best (anchor, class) pairs among those k anchors' k * nc pairs;
//   then the confidence test and max_det (utils/nms.py, the end2end branch).
// With agnostic, stage 1 alone, each anchor with its best class.
//
// Both stages are selections, not sorts of every anchor: counting selections on uint8 heads (the
// byte path, select_end2end below), otherwise std::nth_element then a sort of the k kept.
// torch.topk leaves the order of equal scores unspecified; here it is fixed:
//   stage 1: best score descending, then anchor index ascending (heads in config order, each
//            row-major: the order Ultralytics concatenates anchors in);
//   stage 2: score descending, then stage-1 rank ascending, then class ascending (the flattened
//            index rank * nc + class that torch.topk sees);
//   agnostic: the best class of an anchor is its lowest class of the highest score.
//
// Only anchors whose best score passes the lowest class threshold (the gate) are ranked, and only
// their pairs that pass it. That drops nothing the full selection keeps: a dropped anchor ranks
// below every kept one and all its pairs fail, and a dropped pair ranks below every pair that can
// pass, so neither can take a kept one's place. In full, with P the passing anchors (best score
// passes the gate) and k = min(max_det, every anchor):
//   - a row survives only if its pair passes (score > conf, or >= with score_inclusive), so only
//     pairs of anchors in P can survive (a pair's score is at most its anchor's best);
//   - every anchor in P has a best score strictly above every anchor outside it (passing is a
//     threshold on the score), so in stage 1's order all of P comes first, in the same relative
//     order (score, then anchor index) as when ranked alone:
//     |P| <= k: stage 1 keeps all of P (ranks 0 .. |P|-1, the same ranks), plus anchors whose
//       pairs all fail; |P| > k: stage 1 keeps the first k of P, whatever the others are;
//   - stage 2 ranks pairs by score, then rank, then class: passing pairs strictly above failing
//     ones, so its first k hold every passing pair it would keep, in the same order and with the
//     same stage-1 ranks, whether the failing ones were there or not.
// So ranking P alone (and only P's passing pairs) gives the same surviving rows, in the same
// order, as Ultralytics' two top-ks over every anchor. With one quantization a score passes
// exactly when its byte is at or above the gate's q_min (make_class_scorer tests each byte's
// score with the same > or >= as the final test, and the byte path needs a score table that never
// decreases), so P is "the cells whose largest class byte is >= q_min" (tests/test_topk.cpp and
// tests/test_end2end.py check the result against the plain algorithm over every anchor).
// Finding P with the SIMD uniform scan that detection uses ("any class byte >= q_min") instead of
// cell_max_u8's per-cell maximum was measured and not kept: with 0.02-0.2 % of class bytes
// passing it was 0.5-10 us slower on 80-class yolov*n-sized heads (about 7 ns a hit: a
// mispredicted branch per 256-byte block with one), and within 1 us either way at 0.005 %
// (BENCHMARKS.md); cell_max_u8 has no data-dependent branch and runs near a read pass. Best scores come from one pass over the class
// bytes (the maximum raw value of a cell, for uint8 with one quantization: the score is
// non-decreasing in it); stage 2 reads the class values of the k anchors only, and keeps only
// pairs scoring at least the k-th anchor's best score (the k anchors' best pairs already make k
// pairs that good, so nothing below can be among the k best; ties at it are kept).
#pragma once

#include <cstddef>
#include <cstdint>

#include "score_threshold.hpp"
#include "tensor_view.hpp"
#include "scratch_vector.hpp"

namespace hailo_decode {
namespace detail {

struct TopkKey {
    float score;
    uint64_t index;  // the tie-break: lower first
};

// Keeps the k best of `keys` (score descending, index ascending on equal scores), in that order.
void select_top(ScratchVector<TopkKey>& keys, size_t k);

struct TopkAnchor {
    uint32_t head;
    int32_t row, col;
};

// n / d for d >= 1, given inv_d = 1.0 / double(d): a multiply rather than a 64-bit division (tens
// of cycles, once or twice per chosen anchor or pair). For n below 2^52 n is exact in a double and
// the product is at most one off the quotient, which the two tests correct; larger n divide.
inline uint64_t quotient(uint64_t n, uint64_t d, double inv_d) {
    if (n >= (uint64_t(1) << 52)) return n / d;
    uint64_t q = uint64_t(double(n) * inv_d);
    if (q * d > n) --q;
    else if ((q + 1) * d <= n) ++q;
    return q;
}

// n / d for a d fixed over many n (a head's width, the class count): when both are below 2^21, a
// multiply by m = floor(2^42 / d) + 1 and a shift, exact there (n m / 2^42 = n / d + n e / (d 2^42)
// with 0 < e <= d, and n e < 2^42 keeps that excess below 1 / d, so the floor is n / d's);
// otherwise quotient(). A third of quotient()'s instructions, on each chosen anchor and row.
struct Divisor {
    uint64_t d, magic, below;  // below: the n (and d) the multiply is exact for
    double inv;
    explicit Divisor(uint64_t d_)
        : d(d_ > 0 ? d_ : 1), magic((uint64_t(1) << 42) / d + 1), below(d < (uint64_t(1) << 21) ? uint64_t(1) << 21 : 0),
          inv(1.0 / double(d)) {}
    uint64_t operator()(uint64_t n) const { return n < below ? (n * magic) >> 42 : quotient(n, d, inv); }
};

struct TopkWorkspace {
    ScratchVector<float> best;       // every cell of every head in anchor order: its best score, -inf if gated out
                                     // (the general path; the byte path below fills it only when a head needs it)
    std::vector<size_t> head_start;  // where each head's cells start in `best`
    std::vector<Divisor> head_width;  // each head's width, to split an anchor into row and column
    size_t passing = 0;              // cells not gated out
    ScratchVector<float> scratch;    // for the k-th best score
    ScratchVector<TopkKey> ranked;   // stage 1: index = anchor (position in `best`)
    ScratchVector<TopkKey> selected; // stage 2: index = rank * nc + class (rank into `ranked`)
    ScratchVector<TopkAnchor> anchors;  // per rank into `ranked`: its anchor (set as the byte path places it, else by stage 2)
    // The byte path (uint8 heads with one quantization and contiguous classes), per head: whether
    // it took it, its passing cells (largest class byte >= the gate's) with their largest bytes,
    // in anchor order, and how many passing cells have each byte.
    ScratchVector<uint8_t> byte_path;
    ScratchVector<uint8_t> pass_max;    // every head's passing cells: the largest class byte,
    ScratchVector<uint32_t> pass_cell;  // and the anchor (position in `best`)
    std::vector<size_t> pass_start;     // where each head's start in them, and one past the last head's
    ScratchVector<uint32_t> histogram;  // 256 per head
    ScratchVector<uint16_t> level;      // 256 per head: the score level of a byte (0: best)
    ScratchVector<uint32_t> level_next; // per level: where its next key goes
    ScratchVector<uint32_t> positions;  // scan output
    ScratchVector<const uint8_t*> cells;  // stage 2: the chosen anchors' class bytes,
    ScratchVector<uint8_t> limits;        // the smallest byte of a pair kept (per anchor),
    ScratchVector<uint32_t> hit_cell, hit_channel;  // and the pairs at or above it (rank, class)
    ScratchVector<TopkKey> pairs;       // stage 2 before its counting sort
    ScratchVector<uint16_t> pair_level;
    ScratchVector<int32_t> cursor;      // per head: the walk's next byte (those above have a level)
    void clear() {
        best.clear();
        head_start.clear();
        head_width.clear();
        passing = 0;
        ranked.clear();
        byte_path.clear();
        pass_max.clear();
        pass_cell.clear();
        pass_start.assign(1, 0);
        histogram.clear();
    }
};

// What stage 2 reads of each head: its class tensor, gate and frame; and, optionally, where the
// caller reads next for each chosen anchor (its box values: byte address touch + row * touch_row
// + col * touch_col), prefetched as stage 2 reaches the anchor. Those few hundred scattered reads
// otherwise miss the cache one after another while the rows are made.
struct TopkHead {
    const TensorView* cls;
    const ClassScorer* gate;  // built with the lowest class threshold
    const void* frame;
    const char* touch = nullptr;
    size_t touch_row = 0, touch_col = 0;
};

// Appends one head's cells that pass the gate (row, column order), with their best scores.
void add_anchors(const TopkHead& head, uint32_t head_index, TopkWorkspace& ws);

// Both stages over the anchors added; the pairs chosen end in ws.selected, best first.
//
// When every head takes the byte path (uint8, one quantization per tensor, classes contiguous,
// a non-decreasing score table), a cell's best score is its largest class byte's, and both stages
// are counting selections over the scores' distinct values (at most 256 a head). One SIMD pass
// over the class bytes (kernels' cell_max_gate_u8) keeps the passing cells with their largest
// bytes, in anchor order, and everything after it reads those only (on a dense head about 1,300
// of 8,400 cells pass 0.2): a histogram of their largest bytes, walked from the best score down
// (every head's bytes of one equal score make one level) until k cells are counted, gives the
// k-th best score and, for each level, where its cells start in the ranked order; one scan of the
// cells at or above it (in anchor order, so ties keep index order) then places each where it
// goes. Stage 2 places its pairs (generated in rank, then class order) the same way. No float is
// compared per cell and nothing is sorted; the order is exactly the stated one. When many more cells tie at the
// k-th best score than it has places (a real head's background at a low threshold: thousands of
// cells on one small byte), the cells above it are placed first, then its places filled in anchor
// order until full. When at most 64 cells pass (a trained detector at a usual threshold), they
// are sorted instead, and their pairs (the walk would visit every level down to the gate's).
//
// Otherwise, stage 1 finds the k-th best score among the anchors first (nth_element over plain
// floats) and ranks only the anchors at or above it (ties at it included, so the result is exact).
void select_end2end(TopkWorkspace& ws, const TopkHead* heads, size_t k, int num_classes, bool agnostic);

// Head, row and column of an anchor (an index into ws.best). Inline, and the row by the head's
// width Divisor (the byte path's stage-1 placement splits its anchors with the same one) rather
// than a division: a call returning through the stack and an integer division per chosen anchor
// took a tenth of the end-to-end time.
inline TopkAnchor anchor_at(const TopkWorkspace& ws, const TopkHead* heads, uint64_t anchor) {
    size_t h = ws.head_start.size() - 1;  // the last head starting at or before it (a few heads)
    while (h > 0 && ws.head_start[h] > size_t(anchor)) --h;
    const uint64_t local = anchor - ws.head_start[h];
    const uint64_t width = uint64_t(heads[h].cls->width);
    const uint64_t row = ws.head_width[h](local);
    return TopkAnchor{uint32_t(h), int32_t(row), int32_t(local - row * width)};
}

}  // namespace detail
}  // namespace hailo_decode
