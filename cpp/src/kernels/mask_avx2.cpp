// AVX2 mask kernels, compiled with -mavx2 (no FMA) and used only where kernels::active() is the
// AVX2 table (after its CPU check). Must match mask_scalar.cpp bit for bit: one 8-lane register
// holds the tree's lanes (mask_kernels.hpp).
#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>

#include "mask_kernels.hpp"

namespace hailo_decode {
namespace kernels {
namespace {

inline float finish(__m256 lanes) {
    const __m128 m = _mm_add_ps(_mm256_castps256_ps128(lanes), _mm256_extractf128_ps(lanes, 1));
    const __m128 h = _mm_add_ps(m, _mm_movehl_ps(m, m));
    return _mm_cvtss_f32(_mm_add_ss(h, _mm_shuffle_ps(h, h, 1)));
}

void dot_f32(const float* cells, size_t n, size_t stride, const float* coef, float* out) {
    const __m256 c0 = _mm256_loadu_ps(coef), c1 = _mm256_loadu_ps(coef + 8), c2 = _mm256_loadu_ps(coef + 16),
                 c3 = _mm256_loadu_ps(coef + 24);
    for (size_t i = 0; i < n; ++i) {
        const float* x = cells + i * stride;
        __m256 s = _mm256_mul_ps(c0, _mm256_loadu_ps(x));
        s = _mm256_add_ps(s, _mm256_mul_ps(c1, _mm256_loadu_ps(x + 8)));
        s = _mm256_add_ps(s, _mm256_mul_ps(c2, _mm256_loadu_ps(x + 16)));
        s = _mm256_add_ps(s, _mm256_mul_ps(c3, _mm256_loadu_ps(x + 24)));
        out[i] = finish(s);
    }
}

void dot_u8f(const uint8_t* cells, size_t n, size_t stride, float zp, const float* coef, float* out) {
    const __m256 c0 = _mm256_loadu_ps(coef), c1 = _mm256_loadu_ps(coef + 8), c2 = _mm256_loadu_ps(coef + 16),
                 c3 = _mm256_loadu_ps(coef + 24);
    const __m256 vzp = _mm256_set1_ps(zp);
    auto x8 = [&vzp](const uint8_t* q) {
        const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(q));
        return _mm256_sub_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(b)), vzp);
    };
    for (size_t i = 0; i < n; ++i) {
        const uint8_t* q = cells + i * stride;
        __m256 s = _mm256_mul_ps(c0, x8(q));
        s = _mm256_add_ps(s, _mm256_mul_ps(c1, x8(q + 8)));
        s = _mm256_add_ps(s, _mm256_mul_ps(c2, x8(q + 16)));
        s = _mm256_add_ps(s, _mm256_mul_ps(c3, x8(q + 24)));
        out[i] = finish(s);
    }
}

void dot_u8i(const uint8_t* cells, size_t n, size_t stride, int32_t zp, const int16_t* coef, int32_t* out) {
    const __m256i vzp = _mm256_set1_epi16(int16_t(zp));
    const __m256i c0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(coef));
    const __m256i c1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(coef + 16));
    for (size_t i = 0; i < n; ++i) {
        const uint8_t* q = cells + i * stride;
        const __m256i lo = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q)));
        const __m256i hi = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q + 16)));
        const __m256i s8 = _mm256_add_epi32(_mm256_madd_epi16(_mm256_sub_epi16(lo, vzp), c0),
                                            _mm256_madd_epi16(_mm256_sub_epi16(hi, vzp), c1));
        __m128i s = _mm_add_epi32(_mm256_castsi256_si128(s8), _mm256_extracti128_si256(s8, 1));
        s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(1, 0, 3, 2)));
        s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(2, 3, 0, 1)));
        out[i] = _mm_cvtsi128_si32(s);
    }
}

const MaskTable kAvx2{"avx2", dot_f32, dot_u8f, dot_u8i};

}  // namespace

const MaskTable* mask_avx2_table() { return &kAvx2; }

}  // namespace kernels
}  // namespace hailo_decode
#else
#include "mask_kernels.hpp"
namespace hailo_decode { namespace kernels { const MaskTable* mask_avx2_table() { return nullptr; } } }
#endif
