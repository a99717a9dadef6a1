// The per-cell maximum of cell_max_u8 one byte at a time: the scalar reference, and every vector
// path's cells too narrow for its vectors.
#pragma once

#include <cstddef>
#include <cstdint>

namespace hailo_decode {
namespace kernels {

inline void cell_max_u8_bytes(const uint8_t* base, size_t pitch, size_t channels, size_t n, uint8_t* out) {
    for (size_t i = 0; i < n; ++i) {
        const uint8_t* p = base + i * pitch;
        uint8_t m = p[0];
        for (size_t c = 1; c < channels; ++c) m = p[c] > m ? p[c] : m;
        out[i] = m;
    }
}

}  // namespace kernels
}  // namespace hailo_decode
