// The per-cell maximum of cell_max_u8 one byte at a time: the scalar reference, and every vector
// path's cells too narrow for its vectors. Also cell_max_gate_u8's append and its reference.
#pragma once

#include <cstddef>
#include <cstdint>

namespace hailo_decode {
namespace kernels {

inline uint8_t cell_max_byte(const uint8_t* p, size_t channels) {
    uint8_t m = p[0];
    for (size_t c = 1; c < channels; ++c) m = p[c] > m ? p[c] : m;
    return m;
}

inline void cell_max_u8_bytes(const uint8_t* base, size_t pitch, size_t channels, size_t n, uint8_t* out) {
    for (size_t i = 0; i < n; ++i) out[i] = cell_max_byte(base + i * pitch, channels);
}

// One cell of cell_max_gate_u8: written at k whatever its maximum, kept (k moves on) only when it
// passes. No branch on the data: on a dense head about one cell in six passes, unpredictably. k
// never passes the cell's own position, so the writes stay within room for n.
inline size_t append_if_passing(uint8_t m, uint8_t gate, uint32_t index, uint8_t* max_out, uint32_t* index_out,
                                size_t k) {
    max_out[k] = m;
    index_out[k] = index;
    return k + size_t(m >= gate);
}

inline size_t cell_max_gate_u8_bytes(const uint8_t* base, size_t pitch, size_t channels, size_t n, uint8_t gate,
                                     uint32_t first, uint8_t* max_out, uint32_t* index_out) {
    size_t k = 0;
    for (size_t i = 0; i < n; ++i)
        k = append_if_passing(cell_max_byte(base + i * pitch, channels), gate, uint32_t(first + i), max_out, index_out, k);
    return k;
}

}  // namespace kernels
}  // namespace hailo_decode
