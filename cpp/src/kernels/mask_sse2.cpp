// SSE2 mask kernels. Must match mask_scalar.cpp bit for bit (the tree in mask_kernels.hpp:
// lanes 0-3 in `a`, lanes 4-7 in `b`).
#if defined(__x86_64__) || defined(_M_X64)
#include <emmintrin.h>

#include "mask_blend_tail.hpp"
#include "mask_kernels.hpp"

namespace hailo_decode {
namespace kernels {
namespace {

// (m0 + m2) + (m1 + m3) of m = a + b.
inline float finish(__m128 a, __m128 b) {
    const __m128 m = _mm_add_ps(a, b);
    const __m128 h = _mm_add_ps(m, _mm_movehl_ps(m, m));  // [m0 + m2, m1 + m3, ...]
    return _mm_cvtss_f32(_mm_add_ss(h, _mm_shuffle_ps(h, h, 1)));
}

// Lanes of the tree from the eight 4-float groups of products' factors.
template <typename Load>
inline float tree(const float* coef, Load load) {
    __m128 a = _mm_mul_ps(_mm_loadu_ps(coef), load(0));
    __m128 b = _mm_mul_ps(_mm_loadu_ps(coef + 4), load(4));
    for (int k = 8; k < 32; k += 8) {
        a = _mm_add_ps(a, _mm_mul_ps(_mm_loadu_ps(coef + k), load(k)));
        b = _mm_add_ps(b, _mm_mul_ps(_mm_loadu_ps(coef + k + 4), load(k + 4)));
    }
    return finish(a, b);
}

void dot_f32(const float* cells, size_t n, size_t stride, const float* coef, float* out) {
    for (size_t i = 0; i < n; ++i) {
        const float* x = cells + i * stride;
        out[i] = tree(coef, [x](int k) { return _mm_loadu_ps(x + k); });
    }
}

void dot_u8f(const uint8_t* cells, size_t n, size_t stride, float zp, const float* coef, float* out) {
    const __m128i zero = _mm_setzero_si128();
    const __m128 vzp = _mm_set1_ps(zp);
    for (size_t i = 0; i < n; ++i) {
        const uint8_t* q = cells + i * stride;
        const __m128i lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));
        const __m128i hi = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q + 16));
        __m128 x[8];
        const __m128i w[4] = {_mm_unpacklo_epi8(lo, zero), _mm_unpackhi_epi8(lo, zero), _mm_unpacklo_epi8(hi, zero),
                              _mm_unpackhi_epi8(hi, zero)};
        for (int j = 0; j < 4; ++j) {
            x[2 * j] = _mm_sub_ps(_mm_cvtepi32_ps(_mm_unpacklo_epi16(w[j], zero)), vzp);
            x[2 * j + 1] = _mm_sub_ps(_mm_cvtepi32_ps(_mm_unpackhi_epi16(w[j], zero)), vzp);
        }
        out[i] = tree(coef, [&x](int k) { return x[k / 4]; });
    }
}

// A cell at a time: its bytes widened (unpack with zero), minus zp, madd with the coefficients,
// the four partial sums folded; exact in int32, then float(sum) * scale.
void window_u8i(const uint8_t* cells, size_t rows, size_t cols, size_t row_stride, size_t col_stride, int32_t zp,
                const int16_t* coef, float scale, float* out) {
    const __m128i zero = _mm_setzero_si128();
    const __m128i vzp = _mm_set1_epi16(int16_t(zp));
    const __m128i c[4] = {_mm_loadu_si128(reinterpret_cast<const __m128i*>(coef)),
                          _mm_loadu_si128(reinterpret_cast<const __m128i*>(coef + 8)),
                          _mm_loadu_si128(reinterpret_cast<const __m128i*>(coef + 16)),
                          _mm_loadu_si128(reinterpret_cast<const __m128i*>(coef + 24))};
    for (size_t r = 0; r < rows; ++r)
        for (size_t j = 0; j < cols; ++j) {
            const uint8_t* q = cells + r * row_stride + j * col_stride;
            const __m128i lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));
            const __m128i hi = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q + 16));
            __m128i s = _mm_madd_epi16(_mm_sub_epi16(_mm_unpacklo_epi8(lo, zero), vzp), c[0]);
            s = _mm_add_epi32(s, _mm_madd_epi16(_mm_sub_epi16(_mm_unpackhi_epi8(lo, zero), vzp), c[1]));
            s = _mm_add_epi32(s, _mm_madd_epi16(_mm_sub_epi16(_mm_unpacklo_epi8(hi, zero), vzp), c[2]));
            s = _mm_add_epi32(s, _mm_madd_epi16(_mm_sub_epi16(_mm_unpackhi_epi8(hi, zero), vzp), c[3]));
            s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(1, 0, 3, 2)));
            s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(2, 3, 0, 1)));
            out[r * cols + j] = float(_mm_cvtsi128_si32(s)) * scale;
        }
}

// 16 pixels a step: four compares packed to bytes (0xFF/0x00), masked to 1/0.
size_t blend_row(const float* a, const float* b, float h0, float h1, size_t n, uint8_t* out) {
    const __m128 vh0 = _mm_set1_ps(h0), vh1 = _mm_set1_ps(h1), zero = _mm_setzero_ps();
    const __m128i one = _mm_set1_epi8(1);
    size_t j = 0, set = 0;
    auto gt = [&](size_t k) {
        const __m128 t = _mm_add_ps(_mm_mul_ps(_mm_loadu_ps(a + k), vh0), _mm_mul_ps(_mm_loadu_ps(b + k), vh1));
        return _mm_castps_si128(_mm_cmpgt_ps(t, zero));
    };
    for (; j + 16 <= n; j += 16) {
        const __m128i w = _mm_packs_epi16(_mm_packs_epi32(gt(j), gt(j + 4)), _mm_packs_epi32(gt(j + 8), gt(j + 12)));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + j), _mm_and_si128(w, one));
        set += size_t(__builtin_popcount(unsigned(_mm_movemask_epi8(w))));
    }
    for (; j + 4 <= n; j += 4) {
        const unsigned bits = unsigned(_mm_movemask_ps(_mm_castsi128_ps(gt(j))));
        const uint32_t bytes = (bits & 1u) | ((bits >> 1) & 1u) << 8 | ((bits >> 2) & 1u) << 16 | ((bits >> 3) & 1u) << 24;
        __builtin_memcpy(out + j, &bytes, 4);
        set += size_t(__builtin_popcount(bits));
    }
    return set + blend_row_tail(a, b, h0, h1, j, n, out);
}

size_t sign_row(const float* v, size_t n, uint8_t* out) {
    const __m128 zero = _mm_setzero_ps();
    const __m128i one = _mm_set1_epi8(1);
    size_t j = 0, set = 0;
    auto gt = [&](size_t k) { return _mm_castps_si128(_mm_cmpgt_ps(_mm_loadu_ps(v + k), zero)); };
    for (; j + 16 <= n; j += 16) {
        const __m128i w = _mm_packs_epi16(_mm_packs_epi32(gt(j), gt(j + 4)), _mm_packs_epi32(gt(j + 8), gt(j + 12)));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + j), _mm_and_si128(w, one));
        set += size_t(__builtin_popcount(unsigned(_mm_movemask_epi8(w))));
    }
    return set + sign_row_tail(v, j, n, out);
}

const MaskTable kSse2{"sse2", dot_f32, dot_u8f, window_u8i, blend_row, sign_row};

}  // namespace

const MaskTable* mask_sse2_table() { return &kSse2; }

}  // namespace kernels
}  // namespace hailo_decode
#else
#include "mask_kernels.hpp"
namespace hailo_decode { namespace kernels { const MaskTable* mask_sse2_table() { return nullptr; } } }
#endif
