#include "topk.hpp"

#include <algorithm>
#include <functional>
#include <limits>
#include <type_traits>

namespace hailo_decode {
namespace detail {
namespace {

// A strict total order (indices are unique), so the k kept and their order do not depend on how
// nth_element and sort get there.
inline bool better(const TopkKey& a, const TopkKey& b) {
    return a.score > b.score || (a.score == b.score && a.index < b.index);
}

template <typename T>
inline float score_at(const TopkHead& h, const T* frame, size_t cell, int c) {
    return class_score(*h.gate, *h.cls, frame, cell + h.cls->channel_offset[size_t(c)], c);
}

// The gate's test in the tensor's own domain (the threshold as the smallest passing raw value).
template <typename T>
inline bool raw_passes(const ClassScorer& gate, T raw, int c) {
    if constexpr (std::is_same<T, float>::value) return raw >= gate.x_min[size_t(c)];
    else return int32_t(raw) >= gate.q_min[size_t(c)];
}

template <typename T>
void add_anchors_t(const TopkHead& h, TopkWorkspace& ws) {
    const TensorView& v = *h.cls;
    const ClassScorer& gate = *h.gate;
    const T* frame = static_cast<const T*>(h.frame);
    const size_t start = ws.best.size();
    ws.head_start.push_back(start);
    ws.best.resize(start + size_t(v.height) * size_t(v.width));
    float* out = ws.best.data() + start;
    const float gated = -std::numeric_limits<float>::infinity();
    size_t passing = 0;
    for (int row = 0; row < v.height; ++row)
        for (int col = 0; col < v.width; ++col, ++out) {
            const size_t cell = v.cell(row, col);
            float best = 0.0f;
            bool passes = false;
            bool done = false;
            if constexpr (std::is_same<T, uint8_t>::value) {
                if (v.per_tensor_quant && v.contiguous_channels) {
                    // One quantization: the score does not decrease with q, so the largest q scores best.
                    const uint8_t* p = frame + cell;
                    uint8_t m = 0;
                    for (int c = 0; c < v.channels; ++c) m = std::max(m, p[c]);
                    best = gate.lut[m];
                    passes = int32_t(m) >= gate.q_min[0];
                    done = true;
                }
            }
            if (!done) {
                best = score_at(h, frame, cell, 0);
                for (int c = 0; c < v.channels; ++c) {
                    best = std::max(best, score_at(h, frame, cell, c));
                    passes = passes || raw_passes(gate, frame[cell + v.channel_offset[size_t(c)]], c);
                }
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
                if (int32_t(p[c]) >= lo) ws.selected.push_back(TopkKey{lut[p[c]], uint64_t(rank) * nc + uint64_t(c)});
            return;
        }
    }
    for (int c = 0; c < v.channels; ++c) {
        const float s = score_at(h, frame, cell, c);
        if (agnostic) {
            if (s == best.score) {  // the lowest class with the best score
                ws.selected.push_back(TopkKey{s, uint64_t(rank) * nc + uint64_t(c)});
                return;
            }
            continue;
        }
        if (s >= floor && raw_passes(gate, frame[cell + v.channel_offset[size_t(c)]], c)) ws.selected.push_back(TopkKey{s, uint64_t(rank) * nc + uint64_t(c)});
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
    switch (head.cls->dtype) {
        case DType::U8: add_anchors_t<uint8_t>(head, ws); break;
        case DType::U16: add_anchors_t<uint16_t>(head, ws); break;
        case DType::F32: add_anchors_t<float>(head, ws); break;
    }
}

TopkAnchor anchor_at(const TopkWorkspace& ws, const TopkHead* heads, uint64_t anchor) {
    size_t h = size_t(std::upper_bound(ws.head_start.begin(), ws.head_start.end(), size_t(anchor)) - ws.head_start.begin()) - 1;
    const size_t local = size_t(anchor) - ws.head_start[h];
    const size_t width = size_t(heads[h].cls->width);
    return TopkAnchor{uint32_t(h), int32_t(local / width), int32_t(local % width)};
}

void select_end2end(TopkWorkspace& ws, const TopkHead* heads, size_t k, int num_classes, bool agnostic) {
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
            if (b != gated && b >= kth) ws.ranked.push_back(TopkKey{b, uint64_t(i)});
        }
    select_top(ws.ranked, k);
    ws.selected.clear();
    const uint64_t nc = uint64_t(num_classes);
    // With k anchors chosen, each brings its best pair: k pairs score at least the k-th anchor's
    // best, so no pair below it can be among the k best (ties at it are kept).
    const float floor = ws.ranked.size() == k && k > 0 ? ws.ranked.back().score : -std::numeric_limits<float>::infinity();
    for (size_t r = 0; r < ws.ranked.size(); ++r) {
        const TopkAnchor a = anchor_at(ws, heads, ws.ranked[r].index);
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
