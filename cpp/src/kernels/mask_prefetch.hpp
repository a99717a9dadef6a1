// The x86 window kernels' prefetch (mask_avx2.cpp, mask_avxvnni.cpp, mask_avx512vnni.cpp). A
// window's rows are short runs of cells a grid row apart, which the hardware prefetchers pick up
// late when the frame comes fresh from memory: each block of cells asks for the same cells
// kPrefetchRows rows further down (inside the window only), and the window's first kPrefetchRows
// rows are asked for before it starts. Prefetches change no result. Included by x86 translation
// units only; static inline, since each is compiled for its own ISA.
#pragma once

#include <xmmintrin.h>

#include <cstddef>
#include <cstdint>

namespace hailo_decode {
namespace kernels {

constexpr size_t kPrefetchRows = 4;

// Every other cell (two 32-byte cells a 64-byte line) of the window's first kPrefetchRows rows.
static inline void prefetch_first_rows(const uint8_t* cells, size_t rows, size_t cols, size_t row_stride,
                                       size_t col_stride) {
    for (size_t r = 0; r < kPrefetchRows && r < rows; ++r)
        for (size_t i = 0; i < cols; i += 2)
            _mm_prefetch(reinterpret_cast<const char*>(cells + r * row_stride + i * col_stride), _MM_HINT_T0);
}

// A block's n cells (q the first), kPrefetchRows rows further down; every other cell.
static inline void prefetch_block_ahead(const uint8_t* q, size_t n, size_t row_stride, size_t col_stride) {
    const char* ahead = reinterpret_cast<const char*>(q + kPrefetchRows * row_stride);
    for (size_t i = 0; i < n; i += 2) _mm_prefetch(ahead + i * col_stride, _MM_HINT_T0);
}

}  // namespace kernels
}  // namespace hailo_decode
