// Element addressing and dequantization for one output tensor, whatever its order and padding.
// Every order reduces to   offset(h, w, c) = h*row_stride + w*col_stride + channel_offset[c],
// so the kernels need no per-order code.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "hailo_decode/types.hpp"

namespace hailo_decode {
namespace detail {

struct TensorView {
    const TensorSpec* spec = nullptr;
    DType dtype = DType::U8;
    int height = 0, width = 0, channels = 0;
    size_t row_stride = 0, col_stride = 0;
    std::vector<size_t> channel_offset;  // per logical channel
    std::vector<float> zp, scale;        // expanded to one per channel
    size_t frame_elements = 0;           // largest offset read + 1
    size_t frame_stride = 0;
    bool contiguous_channels = false;    // channel_offset[c] == c
    bool per_tensor_quant = false;       // one zero point and scale for every channel

    size_t cell(int row, int col) const { return size_t(row) * row_stride + size_t(col) * col_stride; }
};

// Validates the spec (throws std::invalid_argument naming the output) and derives the addressing.
TensorView make_tensor_view(const TensorSpec& spec);

// Elements a buffer must hold for n frames: strided frames, the last one only as far as it is read.
// Saturates at SIZE_MAX when the count does not fit a size_t: no buffer holds that many, so the
// bounds check refuses the call instead of passing on a product that wrapped around.
inline size_t needed_elements(const TensorView& v, size_t n_frames) {
    if (n_frames == 0) return 0;
    if (v.frame_stride != 0 && n_frames - 1 > (SIZE_MAX - v.frame_elements) / v.frame_stride) return SIZE_MAX;
    return (n_frames - 1) * v.frame_stride + v.frame_elements;
}

template <typename T>
inline const T* frame_ptr(const void* base, const TensorView& v, size_t frame) {
    return static_cast<const T*>(base) + frame * v.frame_stride;
}

// HailoRT's dequantize_output: (float(q) - zp) * scale, in float32.
inline float dequantize(float q, float zp, float scale) { return (q - zp) * scale; }

// Four consecutive uint8 values dequantized as `dequantize` does each: on x86 one SSE2
// conversion of the four bytes and one 4-lane subtract and multiply (the same IEEE operations as
// the scalar ones; GCC otherwise converts byte by byte). Once per end-to-end row (its box).
inline void dequantize4_u8(const uint8_t* p, float zp, float scale, float d[4]) {
#if defined(__SSE2__)
    int32_t bytes;
    std::memcpy(&bytes, p, 4);
    const __m128i zero = _mm_setzero_si128();
    const __m128i q = _mm_unpacklo_epi16(_mm_unpacklo_epi8(_mm_cvtsi32_si128(bytes), zero), zero);
    _mm_storeu_ps(d, _mm_mul_ps(_mm_sub_ps(_mm_cvtepi32_ps(q), _mm_set1_ps(zp)), _mm_set1_ps(scale)));
#else
    for (int j = 0; j < 4; ++j) d[j] = dequantize(float(p[j]), zp, scale);
#endif
}

}  // namespace detail
}  // namespace hailo_decode
