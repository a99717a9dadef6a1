// AVX2 mask kernels, compiled with -mavx2 (no FMA) and used only where kernels::active() is the
// AVX2 table (after its CPU check). Must match mask_scalar.cpp bit for bit: one 8-lane register
// holds the tree's lanes (mask_kernels.hpp).
#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>

#include "mask_blend_tail.hpp"
#include "mask_kernels.hpp"
#include "mask_prefetch.hpp"

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

// Two cells' partial sums (eight lanes each) as four lanes each: [a.lo + a.hi | b.hi + b.lo]. A
// blend and one cross-lane permute, where a hadd takes two shuffles.
inline __m256i fold_halves(__m256i a, __m256i b) {
    return _mm256_add_epi32(_mm256_blend_epi32(a, b, 0xF0), _mm256_permute2x128_si256(a, b, 0x21));
}

// Eight cells' partial sums to their eight sums, in order: cells k and k + 4 share a register
// (the low and the high half), then two levels of hadd.
inline __m256i reduce8(const __m256i* p) {
    const __m256i r0 = _mm256_hadd_epi32(fold_halves(p[0], p[4]), fold_halves(p[1], p[5]));
    const __m256i r1 = _mm256_hadd_epi32(fold_halves(p[2], p[6]), fold_halves(p[3], p[7]));
    return _mm256_hadd_epi32(r0, r1);
}

// The whole window in one call: a cell's 32 bytes as two loads that widen 16 bytes each to 16-bit
// lanes (vpmovzxbw from memory), each multiplied by its 16 coefficients with madd; eight cells'
// partial sums reduced together (reduce8); sum - zp sum c, to float, times scale. On Zen 3, for
// the seg workload's 20 windows: widening by masking (v & 0x00ff) and shifting (v >> 8) one
// 32-byte load instead was 15% slower (34 against 29 us), and a reduction of six hadds and two
// permutes 7% slower (medians 45 against 42 us under load).
void window_u8i(const uint8_t* cells, size_t rows, size_t cols, size_t row_stride, size_t col_stride, int32_t zp,
                const int16_t* coef, float scale, float* out) {
    int32_t coef_sum = 0;
    for (int k = 0; k < 32; ++k) coef_sum += coef[k];
    const __m256i c_lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(coef));
    const __m256i c_hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(coef + 16));
    const __m256i vbias = _mm256_set1_epi32(zp * coef_sum);
    const __m256 vscale = _mm256_set1_ps(scale);
    auto partial = [&](const uint8_t* q) {
        const __m256i lo = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q)));
        const __m256i hi = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q + 16)));
        return _mm256_add_epi32(_mm256_madd_epi16(lo, c_lo), _mm256_madd_epi16(hi, c_hi));
    };
    prefetch_first_rows(cells, rows, cols, row_stride, col_stride);  // mask_prefetch.hpp
    bool prefetch = false;
    auto block8 = [&](const uint8_t* q, float* o) {  // eight cells, q the first
        if (prefetch) prefetch_block_ahead(q, 8, row_stride, col_stride);
        __m256i p[8];
        for (int j = 0; j < 8; ++j) p[j] = partial(q + size_t(j) * col_stride);
        const __m256i sums = reduce8(p);
        _mm256_storeu_ps(o, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(sums, vbias)), vscale));
    };
    for (size_t r = 0; r < rows; ++r) {
        const uint8_t* row = cells + r * row_stride;
        float* o = out + r * cols;
        prefetch = r + kPrefetchRows < rows;
        size_t i = 0;
        for (; i + 8 <= cols; i += 8) block8(row + i * col_stride, o + i);
        if (cols >= 8 && i < cols) {  // the last cells as one more block ending at the row's end: it
            block8(row + (cols - 8) * col_stride, o + cols - 8);  // rewrites some cells with their same value
            continue;
        }
        for (; i < cols; ++i) {
            const __m256i p = partial(row + i * col_stride);
            __m128i t = _mm_add_epi32(_mm256_castsi256_si128(p), _mm256_extracti128_si256(p, 1));
            t = _mm_add_epi32(t, _mm_shuffle_epi32(t, _MM_SHUFFLE(1, 0, 3, 2)));
            t = _mm_add_epi32(t, _mm_shuffle_epi32(t, _MM_SHUFFLE(2, 3, 0, 1)));
            o[i] = float(_mm_cvtsi128_si32(t) - zp * coef_sum) * scale;
        }
    }
}

// Eight compare results (int32 lanes, all ones or zero) as eight bytes 1/0 at out; returns the
// lanes' bit mask.
inline unsigned store8(__m256i m, uint8_t* out) {
    const __m128i w16 = _mm_packs_epi32(_mm256_castsi256_si128(m), _mm256_extracti128_si256(m, 1));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(out), _mm_and_si128(_mm_packs_epi16(w16, w16), _mm_set1_epi8(1)));
    return unsigned(_mm256_movemask_ps(_mm256_castsi256_ps(m)));
}

// A row of n compare results, gt(k) giving lanes k..k+7: 32 a step (four 8-lane compares packed
// to bytes; the packs work per 128-bit lane, so a final permute puts the four groups back in
// order), then 8 a step. What is left (fewer than a step) is done as one more step ending at n
// when the row is long enough: it rewrites some bytes with the same value and counts only the
// new ones. Returns how many are 1; rows shorter than 8 are left to the scalar tail (returns j).
template <typename Gt>
inline size_t compare_row(Gt gt, size_t n, uint8_t* out, size_t& set) {
    const __m256i one = _mm256_set1_epi8(1);
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    auto step32 = [&](size_t k) {  // bytes k..k+31; returns their bit mask
        const __m256i w16a = _mm256_packs_epi32(gt(k), gt(k + 8));
        const __m256i w16b = _mm256_packs_epi32(gt(k + 16), gt(k + 24));
        const __m256i w = _mm256_permutevar8x32_epi32(_mm256_packs_epi16(w16a, w16b), order);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + k), _mm256_and_si256(w, one));
        return unsigned(_mm256_movemask_epi8(w));
    };
    size_t j = 0;
    for (; j + 32 <= n; j += 32) set += size_t(__builtin_popcount(step32(j)));
    if (j == n) return n;
    if (j > 0) {  // n > 32: the last 32 bytes
        set += size_t(__builtin_popcount(step32(n - 32) >> (j - (n - 32))));
        return n;
    }
    for (; j + 8 <= n; j += 8) set += size_t(__builtin_popcount(store8(gt(j), out + j)));
    if (j == n || j == 0) return j;
    set += size_t(__builtin_popcount(store8(gt(n - 8), out + n - 8) >> (j - (n - 8))));
    return n;
}

size_t blend_row(const float* a, const float* b, float h0, float h1, size_t n, uint8_t* out) {
    const __m256 vh0 = _mm256_set1_ps(h0), vh1 = _mm256_set1_ps(h1), zero = _mm256_setzero_ps();
    auto gt = [&](size_t k) {
        const __m256 t = _mm256_add_ps(_mm256_mul_ps(_mm256_loadu_ps(a + k), vh0), _mm256_mul_ps(_mm256_loadu_ps(b + k), vh1));
        return _mm256_castps_si256(_mm256_cmp_ps(t, zero, _CMP_GT_OQ));
    };
    size_t set = 0;
    const size_t j = compare_row(gt, n, out, set);
    return set + blend_row_tail(a, b, h0, h1, j, n, out);
}

size_t sign_row(const float* v, size_t n, uint8_t* out) {
    const __m256 zero = _mm256_setzero_ps();
    auto gt = [&](size_t k) { return _mm256_castps_si256(_mm256_cmp_ps(_mm256_loadu_ps(v + k), zero, _CMP_GT_OQ)); };
    size_t set = 0;
    const size_t j = compare_row(gt, n, out, set);
    return set + sign_row_tail(v, j, n, out);
}

const MaskTable kAvx2{"avx2", dot_f32, dot_u8f, window_u8i, blend_row, sign_row};

}  // namespace

const MaskTable* mask_avx2_table() { return &kAvx2; }

}  // namespace kernels
}  // namespace hailo_decode
#else
#include "mask_kernels.hpp"
namespace hailo_decode { namespace kernels { const MaskTable* mask_avx2_table() { return nullptr; } } }
#endif
