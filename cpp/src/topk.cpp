#include "topk.hpp"

#include <algorithm>
#include <cstring>
#include <functional>
#include <limits>
#include <type_traits>

#include "kernels/kernels.hpp"

namespace hailo_decode {
namespace detail {
namespace {

// A strict total order (indices are unique), so the k kept and their order do not depend on how
// nth_element and sort get there.
inline bool better(const TopkKey& a, const TopkKey& b) {
    return a.score > b.score || (a.score == b.score && a.index < b.index);
}

// A key appended field by field: a braced temporary is built on the stack in two halves and read
// back as one 16-byte value, a store-forwarding stall per key (a third of stage 2's time on a
// frame with 300 anchors chosen).
inline void push_key(ScratchVector<TopkKey>& keys, float score, uint64_t index) {
    TopkKey& key = keys.emplace_back();
    key.score = score;
    key.index = index;
}

inline void set_key(TopkKey& key, float score, uint64_t index) {
    key.score = score;
    key.index = index;
}

// The anchor at stage-1 rank r as stage 2 reaches it: kept for the caller (ws.anchors), and the
// bytes the caller reads next for it prefetched (TopkHead::touch).
inline TopkAnchor chosen(TopkWorkspace& ws, const TopkHead* heads, size_t r) {
    const TopkAnchor a = anchor_at(ws, heads, ws.ranked[r].index);
    TopkAnchor& kept = ws.anchors[r];  // field by field: a whole-struct copy went through the stack
    kept.head = a.head;                // and stalled on its reload (a quarter of stage 2's time)
    kept.row = a.row;
    kept.col = a.col;
    const TopkHead& h = heads[a.head];
    if (h.touch) __builtin_prefetch(h.touch + size_t(a.row) * h.touch_row + size_t(a.col) * h.touch_col);
    return a;
}

template <typename T>
inline float score_at(const TopkHead& h, const T* frame, size_t cell, int c) {
    return class_score(*h.gate, *h.cls, frame, cell + h.cls->channel_offset[size_t(c)], c);
}

// The general path: every class's score in float (any dtype, quantization or layout).
template <typename T>
void add_anchors_t(const TopkHead& h, size_t start, TopkWorkspace& ws) {
    const TensorView& v = *h.cls;
    const ClassScorer& gate = *h.gate;
    const T* frame = static_cast<const T*>(h.frame);
    float* out = ws.best.data() + start;
    const float gated = -std::numeric_limits<float>::infinity();
    size_t passing = 0;
    for (int row = 0; row < v.height; ++row)
        for (int col = 0; col < v.width; ++col, ++out) {
            const size_t cell = v.cell(row, col);
            float best = score_at(h, frame, cell, 0);
            bool passes = false;
            for (int c = 0; c < v.channels; ++c) {
                best = std::max(best, score_at(h, frame, cell, c));
                passes = passes || raw_passes(gate, frame[cell + v.channel_offset[size_t(c)]], c);
            }
            *out = passes ? best : gated;
            passing += passes;
        }
    ws.passing += passing;
}

// Passing pairs of one ranked anchor, appended to ws.selected (agnostic: only its best class).
template <typename T>
void add_pairs_t(const TopkHead& h, const TopkAnchor& a, size_t rank, const TopkKey& best, uint64_t nc, bool agnostic,
                 float floor, TopkWorkspace& ws) {
    const TensorView& v = *h.cls;
    const ClassScorer& gate = *h.gate;
    const T* frame = static_cast<const T*>(h.frame);
    const size_t cell = v.cell(a.row, a.col);
    if constexpr (std::is_same<T, uint8_t>::value) {
        if (!agnostic && v.per_tensor_quant && v.contiguous_channels) {
            // One quantization: "passes the gate and scores >= floor" is q >= one value (the lut
            // does not decrease), so the class bytes are compared raw.
            const float* lut = gate.lut.data();
            int32_t lo = gate.q_min[0], hi = 256;  // first q >= q_min with lut[q] >= floor
            while (lo < hi) {
                const int32_t mid = (lo + hi) / 2;
                if (lut[mid] >= floor) hi = mid; else lo = mid + 1;
            }
            const uint8_t* p = frame + cell;
            for (int c = 0; c < v.channels; ++c)
                if (int32_t(p[c]) >= lo) push_key(ws.selected, lut[p[c]], uint64_t(rank) * nc + uint64_t(c));
            return;
        }
    }
    for (int c = 0; c < v.channels; ++c) {
        const float s = score_at(h, frame, cell, c);
        if (agnostic) {
            if (s == best.score) {  // the lowest class with the best score
                push_key(ws.selected, s, uint64_t(rank) * nc + uint64_t(c));
                return;
            }
            continue;
        }
        if (s >= floor && raw_passes(gate, frame[cell + v.channel_offset[size_t(c)]], c)) push_key(ws.selected, s, uint64_t(rank) * nc + uint64_t(c));
    }
}


// The byte path (topk.hpp): uint8, one quantization, classes contiguous, and a score table that
// never decreases (NaN-free), so that the largest byte of a cell is its best score.
bool takes_byte_path(const TopkHead& h) {
    const TensorView& v = *h.cls;
    const ClassScorer& g = *h.gate;
    if (v.dtype != DType::U8 || !v.per_tensor_quant || !v.contiguous_channels || v.channels < 1) return false;
    return g.lut_ascending && !g.q_min.empty();  // checked once, when the gate was made
}

// The passing cells (largest class byte >= the gate's) with their largest bytes, in anchor order
// (one pass over the class bytes, kernels' cell_max_gate_u8), and how many have each byte.
void add_anchor_bytes(const TopkHead& h, size_t start, TopkWorkspace& ws) {
    const TensorView& v = *h.cls;
    const uint8_t* frame = static_cast<const uint8_t*>(h.frame);
    const kernels::Table& k = kernels::active();
    const int32_t q_min = h.gate->q_min[0];
    const size_t width = size_t(v.width), n = size_t(v.height) * width;
    const size_t first = ws.pass_cell.size();
    size_t passing = 0;
    if (q_min <= 255) {  // else nothing passes: not a byte is read
        ws.pass_max.resize(first + n);
        ws.pass_cell.resize(first + n);
        uint8_t* m = ws.pass_max.data() + first;
        uint32_t* cell = ws.pass_cell.data() + first;
        const uint8_t gate = uint8_t(std::max<int32_t>(q_min, 0));
        const size_t channels = size_t(v.channels);
        if (v.row_stride == width * v.col_stride)  // rows back to back: one call a head
            passing = k.cell_max_gate_u8(frame, v.col_stride, channels, n, gate, uint32_t(start), m, cell);
        else
            for (int row = 0; row < v.height; ++row)
                passing += k.cell_max_gate_u8(frame + v.cell(row, 0), v.col_stride, channels, width, gate,
                                              uint32_t(start + size_t(row) * width), m + passing, cell + passing);
        ws.pass_max.resize(first + passing);
        ws.pass_cell.resize(first + passing);
    }
    ws.pass_start.push_back(first + passing);
    const size_t at = ws.histogram.size();
    ws.histogram.resize(at + 256);
    uint32_t* hist = ws.histogram.data() + at;
    std::fill(hist, hist + 256, 0u);
    const uint8_t* m = ws.pass_max.data() + first;
    if (passing < 1024) {
        size_t i = 0;  // four a step: the loop's own count, test and branch were half its instructions
        for (; i + 4 <= passing; i += 4) {
            ++hist[m[i]]; ++hist[m[i + 1]]; ++hist[m[i + 2]]; ++hist[m[i + 3]];
        }
        for (; i < passing; ++i) ++hist[m[i]];
    } else {
        // Four histograms, so that runs of one byte (a real head's background at a low threshold:
        // thousands of cells on one byte) do not wait on each other's increments.
        uint32_t sub[4][256] = {};
        size_t i = 0;
        for (; i + 4 <= passing; i += 4) {
            ++sub[0][m[i]]; ++sub[1][m[i + 1]]; ++sub[2][m[i + 2]]; ++sub[3][m[i + 3]];
        }
        for (; i < passing; ++i) ++sub[0][m[i]];
        for (int q = 0; q < 256; ++q) hist[q] = sub[0][q] + sub[1][q] + sub[2][q] + sub[3][q];
    }
    ws.passing += passing;
}

// The general path's best scores of a byte-path head, for a frame whose heads take both paths.
void best_from_bytes(const TopkHead& h, size_t head, size_t start, size_t n, TopkWorkspace& ws) {
    const float gated = -std::numeric_limits<float>::infinity();
    const float* lut = h.gate->lut.data();
    std::fill(ws.best.begin() + std::ptrdiff_t(start), ws.best.begin() + std::ptrdiff_t(start + n), gated);
    for (size_t e = ws.pass_start[head]; e < ws.pass_start[head + 1]; ++e) ws.best[ws.pass_cell[e]] = lut[ws.pass_max[e]];
}

size_t cells_of(const TopkHead& h) { return size_t(h.cls->height) * size_t(h.cls->width); }

// Places a passing cell of head h at stage-1 rank `at`, with everything later stages read of it:
// its key, its anchor (head, row, column), its class bytes and stage 2's limit (the last level's
// smallest byte, a byte: a chosen anchor's own best is at or above it), and the bytes the caller
// reads next for it prefetched (TopkHead::touch). Done here, where the head is known, rather than
// by a later walk over the ranks that found each anchor's head and row again (anchor_at: about a
// tenth of the frame's instructions at 300 anchors chosen). Per-head values are taken once.
struct Placer {
    const float* lut;
    const uint8_t* frame;
    const char* touch;
    size_t row_stride, col_stride, touch_row, touch_col, head_start;
    uint64_t width;
    const Divisor& by_width;  // the workspace's (anchor_at's)
    uint32_t head;
    uint8_t limit;
    Placer(const TopkWorkspace& ws, const TopkHead* heads, size_t h)
        : lut(heads[h].gate->lut.data()), frame(static_cast<const uint8_t*>(heads[h].frame)), touch(heads[h].touch),
          row_stride(heads[h].cls->row_stride), col_stride(heads[h].cls->col_stride), touch_row(heads[h].touch_row),
          touch_col(heads[h].touch_col), head_start(ws.head_start[h]), width(uint64_t(heads[h].cls->width)),
          by_width(ws.head_width[h]), head(uint32_t(h)), limit(uint8_t(ws.cursor[h] + 1)) {}
    void operator()(TopkWorkspace& ws, size_t at, size_t e) const {
        const uint32_t anchor = ws.pass_cell[e];
        set_key(ws.ranked[at], lut[ws.pass_max[e]], uint64_t(anchor));
        const uint64_t local = anchor - head_start;
        const uint64_t row = by_width(local), col = local - row * width;
        TopkAnchor& a = ws.anchors[at];  // field by field (no stack temporary)
        a.head = head;
        a.row = int32_t(row);
        a.col = int32_t(col);
        ws.cells[at] = frame + row * row_stride + col * col_stride;
        ws.limits[at] = limit;
        if (touch) __builtin_prefetch(touch + row * touch_row + col * touch_col);
    }
};

// Both stages on the byte path for few passing cells (a trained detector at a usual threshold
// passes tens): those cells alone sorted (`better`, the stated order), then each one's passing
// pairs at or above the floor, sorted. The walk below visits every score level from the top byte
// down to the gate's (about 200 at conf 0.2, each across every head) whatever the count, which
// cost more than sorting a few dozen keys.
constexpr size_t kFewPassing = 64;

void select_few(TopkWorkspace& ws, const TopkHead* heads, size_t k, int num_classes, bool agnostic) {
    const kernels::Table& kt = kernels::active();
    for (size_t h = 0; h < ws.head_start.size(); ++h) {
        const float* lut = heads[h].gate->lut.data();
        for (size_t e = ws.pass_start[h]; e < ws.pass_start[h + 1]; ++e) push_key(ws.ranked, lut[ws.pass_max[e]], ws.pass_cell[e]);
    }
    select_top(ws.ranked, k);
    ws.anchors.resize(ws.ranked.size());
    const uint64_t nc = uint64_t(num_classes);
    // select_end2end's floor: with k anchors chosen, no pair below the k-th one's best is needed.
    const float floor = ws.ranked.size() == k ? ws.ranked.back().score : -std::numeric_limits<float>::infinity();
    if (agnostic) {  // each anchor's best class, in stage-1 order
        for (size_t r = 0; r < ws.ranked.size(); ++r) {
            const TopkAnchor a = chosen(ws, heads, r);
            add_pairs_t<uint8_t>(heads[a.head], a, r, ws.ranked[r], nc, true, floor, ws);
        }
        return;
    }
    // A pair is kept when its byte passes the gate and scores at least the floor: one byte per
    // head, the first q >= q_min with lut[q] >= floor (add_pairs_t's bound, found once a head).
    ws.cursor.resize(ws.head_start.size());
    for (size_t h = 0; h < ws.head_start.size(); ++h) {
        const float* lut = heads[h].gate->lut.data();
        int32_t lo = heads[h].gate->q_min[0], hi = 256;
        while (lo < hi) {
            const int32_t mid = (lo + hi) / 2;
            if (lut[mid] >= floor) hi = mid; else lo = mid + 1;
        }
        ws.cursor[h] = lo;
    }
    for (size_t r = 0; r < ws.ranked.size(); ++r) {
        const TopkAnchor a = chosen(ws, heads, r);
        const TopkHead& h = heads[a.head];
        const int32_t lo = ws.cursor[a.head];
        if (lo > 255) continue;
        const uint8_t* p = static_cast<const uint8_t*>(h.frame) + h.cls->cell(a.row, a.col);
        const size_t channels = size_t(h.cls->channels);
        ws.positions.resize(std::max(ws.positions.size(), channels));
        const size_t hits = kt.scan_u8_uniform(p, uint8_t(lo), channels, ws.positions.data());
        const float* lut = h.gate->lut.data();
        for (size_t j = 0; j < hits; ++j)
            push_key(ws.selected, lut[p[ws.positions[j]]], uint64_t(r) * nc + ws.positions[j]);
    }
    select_top(ws.selected, k);
}

// Both stages on the byte path (topk.hpp). Levels are numbered from the best score down; a
// head's byte q has level ws.level[256 h + q] once the walk has passed it (q > cursor[h]).
void select_bytes(TopkWorkspace& ws, const TopkHead* heads, size_t k, int num_classes, bool agnostic) {
    const size_t nh = ws.head_start.size();
    ws.ranked.clear();
    ws.selected.clear();
    if (k == 0) return;
    if (ws.passing <= kFewPassing) {
        select_few(ws, heads, k, num_classes, agnostic);
        return;
    }
    ws.level.resize(256 * nh);
    ws.cursor.resize(nh);
    ws.level_next.clear();
    for (size_t h = 0; h < nh; ++h) ws.cursor[h] = 255;
    // The walk: the best score not yet passed, every head's bytes of that score as one level,
    // until k cells are counted (the last level is the k-th best score's) or none are left.
    uint64_t counted = 0;
    // Every head with the same score table and gate (one quantization for all, as exported models
    // usually have): a level is a run of equal scores in that one table, so the walk steps one
    // byte at a time, summing the heads' counts (the loop below compares every head's next score
    // per level: about 150 instructions a level, 7,000 a frame at conf 0.2).
    bool shared = true;
    for (size_t h = 1; h < nh && shared; ++h)
        shared = heads[h].gate->q_min[0] == heads[0].gate->q_min[0] &&
                 std::memcmp(heads[h].gate->lut.data(), heads[0].gate->lut.data(), 256 * sizeof(float)) == 0;
    if (shared) {
        const float* lut = heads[0].gate->lut.data();
        const int32_t q_min = std::max<int32_t>(heads[0].gate->q_min[0], 0);
        int32_t q = 255;
        for (; q >= q_min; --q) {
            if (q == 255 || lut[q] != lut[q + 1]) {  // a new level
                if (counted >= k) break;
                ws.level_next.push_back(uint32_t(counted));
            }
            const uint16_t level = uint16_t(ws.level_next.size() - 1);
            for (size_t h = 0; h < nh; ++h) {
                ws.level[256 * h + size_t(q)] = level;
                counted += ws.histogram[256 * h + size_t(q)];
            }
        }
        for (size_t h = 0; h < nh; ++h) ws.cursor[h] = q;
    }
    while (!shared) {
        bool any = false;
        float top = 0.0f;
        for (size_t h = 0; h < nh; ++h) {
            const int32_t q = ws.cursor[h];
            if (q < heads[h].gate->q_min[0]) continue;
            const float s = heads[h].gate->lut[size_t(q)];
            if (!any || s > top) top = s;
            any = true;
        }
        if (!any) break;
        const uint16_t level = uint16_t(ws.level_next.size());
        ws.level_next.push_back(uint32_t(counted));  // where this level's cells start
        for (size_t h = 0; h < nh; ++h) {
            const float* lut = heads[h].gate->lut.data();
            const int32_t q_min = heads[h].gate->q_min[0];
            const uint32_t* hist = ws.histogram.data() + 256 * h;
            int32_t& q = ws.cursor[h];
            for (; q >= q_min && lut[q] == top; --q) {
                ws.level[256 * h + size_t(q)] = level;
                counted += hist[q];
            }
        }
        if (counted >= k) break;
    }
    // Stage 1: the cells at or above the last level, placed in anchor order (ties keep it); the
    // last level's cells past the k-th place are left out.
    const size_t n_ranked = size_t(std::min<uint64_t>(counted, k));
    ws.ranked.resize(n_ranked);
    ws.anchors.resize(n_ranked);
    ws.cells.resize(n_ranked);
    ws.limits.resize(n_ranked);
    const kernels::Table& kt = kernels::active();
    // Every cell at or above a byte of head h, placed by level in anchor order.
    auto place_from = [&](size_t h, int32_t from) {
        const size_t start = ws.pass_start[h], n = ws.pass_start[h + 1] - start;
        ws.positions.resize(std::max(ws.positions.size(), n));
        const size_t hits = kt.scan_u8_uniform(ws.pass_max.data() + start, uint8_t(from), n, ws.positions.data());
        const Placer place(ws, heads, h);
        const uint16_t* level = ws.level.data() + 256 * h;
        for (size_t j = 0; j < hits; ++j) {
            const size_t e = start + ws.positions[j];
            const uint32_t at = ws.level_next[level[ws.pass_max[e]]]++;
            if (at < n_ranked) place(ws, at, e);
        }
    };
    if (counted <= 2 * uint64_t(k) + 64) {
        for (size_t h = 0; h < nh; ++h)
            if (ws.cursor[h] + 1 <= 255) place_from(h, ws.cursor[h] + 1);
    } else {
        // Many more cells tie at the last level (the k-th best score) than it has places: a real
        // head's background at a low threshold, where thousands of cells share one small byte and
        // placing each (a scan hit) cost more than the rest of the decode. The cells above it (fewer
        // than k) are placed first, from each head's smallest byte above the last level; then the
        // last level's cells, in anchor order, a block at a time until its places are filled.
        const size_t last = ws.level_next.size() - 1;
        auto above_last = [&](size_t h) {  // the last level's bytes of head h are [cursor + 1, this)
            const uint16_t* level = ws.level.data() + 256 * h;
            int32_t x = ws.cursor[h] + 1;
            while (x <= 255 && level[x] == last) ++x;
            return x;
        };
        for (size_t h = 0; h < nh; ++h) {
            const int32_t x = above_last(h);
            if (x <= 255) place_from(h, x);
        }
        size_t need = n_ranked - std::min<size_t>(n_ranked, ws.level_next[last]);
        constexpr size_t block = 1024;
        ws.positions.resize(std::max(ws.positions.size(), block));
        for (size_t h = 0; h < nh && need > 0; ++h) {
            const int32_t lo = ws.cursor[h] + 1, x = above_last(h);
            if (lo > 255 || x == lo) continue;  // no byte of this head is in the last level
            const size_t start = ws.pass_start[h], n = ws.pass_start[h + 1] - start;
            const Placer place(ws, heads, h);
            for (size_t b = 0; b < n && need > 0; b += block) {
                const size_t hits = kt.scan_u8_uniform(ws.pass_max.data() + start + b, uint8_t(lo), std::min(block, n - b),
                                                       ws.positions.data());
                for (size_t j = 0; j < hits && need > 0; ++j) {
                    const size_t e = start + b + ws.positions[j];
                    const uint8_t q = ws.pass_max[e];
                    if (int32_t(q) >= x) continue;  // above the last level: placed already
                    place(ws, ws.level_next[last]++, e);
                    --need;
                }
            }
        }
    }
    const uint64_t nc = uint64_t(num_classes);
    if (agnostic) {  // each anchor's best class, in stage-1 order
        for (size_t r = 0; r < n_ranked; ++r) {
            const TopkAnchor& a = ws.anchors[r];
            add_pairs_t<uint8_t>(heads[a.head], a, r, ws.ranked[r], nc, true, 0.0f, ws);
        }
        return;
    }
    // Stage 2: the pairs at or above the last level (at least as good as the k-th anchor's best,
    // select_end2end's floor), found for every chosen anchor in one kernel call (in rank then
    // class order; the anchors' class bytes and limits were kept as they were placed), counted
    // per level, then placed.
    const size_t channels = size_t(num_classes);  // every head's (select_end2end)
    ws.hit_cell.resize(std::max(ws.hit_cell.size(), n_ranked * channels));
    ws.hit_channel.resize(ws.hit_cell.size());
    const size_t hits = kt.cells_at_least_u8(ws.cells.data(), ws.limits.data(), n_ranked, channels, ws.hit_cell.data(),
                                             ws.hit_channel.data());
    ws.pairs.resize(hits);
    ws.pair_level.resize(hits);
    uint32_t* next = ws.level_next.data();
    const size_t levels = ws.level_next.size();
    for (size_t l = 0; l < levels; ++l) next[l] = 0;
    for (size_t j = 0; j < hits; ++j) {  // keyed and counted per level in one pass
        const uint32_t r = ws.hit_cell[j], c = ws.hit_channel[j];
        const uint32_t h = ws.anchors[r].head;
        const uint8_t q = ws.cells[r][c];
        set_key(ws.pairs[j], heads[h].gate->lut[q], uint64_t(r) * nc + c);
        const uint16_t l = ws.level[256 * size_t(h) + q];
        ws.pair_level[j] = l;
        ++next[l];
    }
    uint32_t sum = 0;
    for (size_t l = 0; l < levels; ++l) {
        const uint32_t c = next[l];
        next[l] = sum;
        sum += c;
    }
    const size_t n_selected = std::min(ws.pairs.size(), k);
    ws.selected.resize(n_selected);
    for (size_t j = 0; j < ws.pairs.size(); ++j) {
        const uint32_t at = next[ws.pair_level[j]]++;
        if (at < n_selected) ws.selected[at] = ws.pairs[j];
    }
}

}  // namespace

void select_top(ScratchVector<TopkKey>& keys, size_t k) {
    if (k < keys.size()) {
        std::nth_element(keys.begin(), keys.begin() + std::ptrdiff_t(k), keys.end(), better);
        keys.resize(k);
    }
    std::sort(keys.begin(), keys.end(), better);
}

void add_anchors(const TopkHead& head, uint32_t, TopkWorkspace& ws) {
    const size_t start = ws.best.size(), n = cells_of(head);
    ws.head_start.push_back(start);
    ws.head_width.emplace_back(uint64_t(head.cls->width > 0 ? head.cls->width : 1));
    ws.best.resize(start + n);
    const bool bytes = takes_byte_path(head);
    ws.byte_path.push_back(uint8_t(bytes));
    if (bytes) {
        add_anchor_bytes(head, start, ws);
        return;
    }
    ws.pass_start.push_back(ws.pass_cell.size());    // none: keeps a head's passing cells at pass_start[h]
    ws.histogram.resize(ws.histogram.size() + 256);  // unused: keeps a head's 256 at 256 h
    switch (head.cls->dtype) {
        case DType::U8: add_anchors_t<uint8_t>(head, start, ws); break;
        case DType::U16: add_anchors_t<uint16_t>(head, start, ws); break;
        case DType::F32: add_anchors_t<float>(head, start, ws); break;
    }
}

void select_end2end(TopkWorkspace& ws, const TopkHead* heads, size_t k, int num_classes, bool agnostic) {
    const size_t nh = ws.head_start.size();
    bool all_bytes = nh > 0 && nh < 256;  // (levels are uint16: 256 a head)
    for (size_t h = 0; h < nh; ++h) all_bytes = all_bytes && ws.byte_path[h] && heads[h].cls->channels == num_classes;
    if (all_bytes) {
        select_bytes(ws, heads, k, num_classes, agnostic);
        return;
    }
    for (size_t h = 0; h < nh; ++h)
        if (ws.byte_path[h]) best_from_bytes(heads[h], h, ws.head_start[h], cells_of(heads[h]), ws);
    // Stage 1: the k-th best score first, then only the anchors at or above it are ranked.
    const float gated = -std::numeric_limits<float>::infinity();
    float kth = gated;
    if (k > 0 && ws.passing > k) {
        ws.scratch.assign(ws.best.begin(), ws.best.end());
        std::nth_element(ws.scratch.begin(), ws.scratch.begin() + std::ptrdiff_t(k - 1), ws.scratch.end(),
                         std::greater<float>());
        kth = ws.scratch[k - 1];
    }
    ws.ranked.clear();
    if (k > 0)
        for (size_t i = 0; i < ws.best.size(); ++i) {
            const float b = ws.best[i];
            if (b != gated && b >= kth) push_key(ws.ranked, b, uint64_t(i));
        }
    select_top(ws.ranked, k);
    ws.anchors.resize(ws.ranked.size());
    ws.selected.clear();
    const uint64_t nc = uint64_t(num_classes);
    // With k anchors chosen, each brings its best pair: k pairs score at least the k-th anchor's
    // best, so no pair below it can be among the k best (ties at it are kept).
    const float floor = ws.ranked.size() == k && k > 0 ? ws.ranked.back().score : -std::numeric_limits<float>::infinity();
    for (size_t r = 0; r < ws.ranked.size(); ++r) {
        const TopkAnchor a = chosen(ws, heads, r);
        const TopkHead& h = heads[a.head];
        switch (h.cls->dtype) {
            case DType::U8: add_pairs_t<uint8_t>(h, a, r, ws.ranked[r], nc, agnostic, floor, ws); break;
            case DType::U16: add_pairs_t<uint16_t>(h, a, r, ws.ranked[r], nc, agnostic, floor, ws); break;
            case DType::F32: add_pairs_t<float>(h, a, r, ws.ranked[r], nc, agnostic, floor, ws); break;
        }
    }
    if (!agnostic) select_top(ws.selected, k);  // agnostic: already in stage-1 order
}

}  // namespace detail
}  // namespace hailo_decode
