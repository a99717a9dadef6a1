// scan_u8_cells one byte at a time: the scalar reference, NEON's kernel, and every vector path's
// cells too narrow for its vectors.
#pragma once

#include <cstddef>
#include <cstdint>

namespace hailo_decode {
namespace kernels {

inline size_t scan_u8_cells_bytes(const uint8_t* base, const size_t* offsets, const uint8_t* limits, size_t n,
                                  size_t count, uint32_t* out) {
    size_t k = 0;
    for (size_t i = 0; i < n; ++i) {
        const uint8_t* v = base + offsets[i];
        for (size_t c = 0; c < count; ++c)
            if (v[c] >= limits[i]) out[k++] = uint32_t(i << 8 | c);
    }
    return k;
}

}  // namespace kernels
}  // namespace hailo_decode
