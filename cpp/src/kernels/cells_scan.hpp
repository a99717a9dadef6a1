// Table::cells_at_least_u8's loop around one path's vector comparison, included by each kernel
// translation unit and instantiated there with that unit's own comparison: internal linkage, so
// no code built for one instruction set is shared with another (as dfl_cells.hpp).
#pragma once

#include <cstddef>
#include <cstdint>

namespace hailo_decode {
namespace kernels {

// (cell, c0 + bit) for each set bit of m, in increasing order, appended at k.
static inline size_t emit_cell_hits(uint64_t m, size_t c0, uint32_t cell, uint32_t* out_cell, uint32_t* out_channel,
                                    size_t k) {
    while (m) {
        out_cell[k] = cell;
        out_channel[k] = uint32_t(c0 + size_t(__builtin_ctzll(m)));
        ++k;
        m &= m - 1;
    }
    return k;
}

// The reference, a byte at a time.
static inline size_t cells_at_least_u8_bytes(const uint8_t* const* cells, const uint8_t* limits, size_t n,
                                             size_t channels, uint32_t* out_cell, uint32_t* out_channel) {
    size_t k = 0;
    for (size_t i = 0; i < n; ++i)
        for (size_t c = 0; c < channels; ++c)
            if (cells[i][c] >= limits[i]) {
                out_cell[k] = uint32_t(i);
                out_channel[k] = uint32_t(c);
                ++k;
            }
    return k;
}

// cells_at_least_with for cells of ((V - 1) W, V W] channels, V W <= 128: the V comparisons and
// where their bits go fixed at compile time (as cell_max_u8's Steps), so no loop or test runs per
// vector; both words emitted once per cell.
template <size_t W, size_t V, typename Passing>
static inline size_t cells_at_least_fixed(Passing passing, const uint8_t* const* cells, const uint8_t* limits,
                                          size_t n, size_t channels, uint32_t* out_cell, uint32_t* out_channel) {
    static_assert(V >= 1 && V * W <= 128, "two words");
    const size_t tail_shift = V * W - channels;  // the last vector is read at channels - W
    size_t k = 0;
    for (size_t i = 0; i < n; ++i) {
        const uint8_t* p = cells[i];
        const uint8_t limit = limits[i];
        uint64_t word[2] = {0, 0};
        for (size_t v = 0; v + 1 < V; ++v) word[v * W / 64] |= uint64_t(passing(p + v * W, limit)) << (v * W % 64);
        word[(V - 1) * W / 64] |= (uint64_t(passing(p + channels - W, limit)) >> tail_shift) << ((V - 1) * W % 64);
        k = emit_cell_hits(word[0], 0, uint32_t(i), out_cell, out_channel, k);
        k = emit_cell_hits(word[1], 64, uint32_t(i), out_cell, out_channel, k);
    }
    return k;
}

// W bytes a comparison (passing(p, limit): bit j set iff p[j] >= limit, j < W; narrower cells take
// the reference). A
// cell's bits are gathered 64 channels at a time and emitted once per 64 (one short loop, not one
// per vector: most cells chosen have one or two hits); the last vector is read at channels - W,
// inside the cell, the bytes already seen shifted out. No branch on where a cell starts.
template <size_t W, typename Passing>
static inline size_t cells_at_least_with(Passing passing, const uint8_t* const* cells, const uint8_t* limits, size_t n,
                                         size_t channels, uint32_t* out_cell, uint32_t* out_channel) {
    static_assert(W <= 32 && 64 % W == 0, "whole vectors per 64 channels");
    if (channels < W) return cells_at_least_u8_bytes(cells, limits, n, channels, out_cell, out_channel);
#define HD_FIXED(V) \
    case V - 1: \
        if constexpr (V * W <= 128) return cells_at_least_fixed<W, V>(passing, cells, limits, n, channels, out_cell, out_channel); \
        break;
    switch ((channels - 1) / W) {  // up to 128 channels: cells_at_least_fixed
        HD_FIXED(1) HD_FIXED(2) HD_FIXED(3) HD_FIXED(4) HD_FIXED(5) HD_FIXED(6) HD_FIXED(7) HD_FIXED(8)
        default: break;
    }
#undef HD_FIXED
    size_t k = 0;
    for (size_t i = 0; i < n; ++i) {
        const uint8_t* p = cells[i];
        const uint8_t limit = limits[i];
        uint64_t word = 0;  // channels [base, base + 64)
        size_t base = 0, c = 0;
        for (; c + W <= channels; c += W) {
            word |= uint64_t(passing(p + c, limit)) << (c - base);
            if (c + W - base == 64) {
                k = emit_cell_hits(word, base, uint32_t(i), out_cell, out_channel, k);
                word = 0;
                base += 64;
            }
        }
        if (c < channels)  // c - base <= 64 - W and fewer than W bytes left: they fit in the word
            word |= (uint64_t(passing(p + channels - W, limit)) >> (W - (channels - c))) << (c - base);
        k = emit_cell_hits(word, base, uint32_t(i), out_cell, out_channel, k);
    }
    return k;
}

}  // namespace kernels
}  // namespace hailo_decode
