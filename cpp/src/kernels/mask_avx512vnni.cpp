// AVX-512 VNNI mask kernel (compiled with -mavx512f -mavx512vl -mavx512vnni; used only where
// kernels::active() is the "avx512vnni" table, after its CPU check): mask_avxvnni.cpp's kernel
// with 512-bit registers, two cells a register, sixteen cells a block, so the reduction of the
// cells' partial sums (the block's main cost once vpdpbusd does the multiplies) takes half the
// instructions a cell. A row's last cells take one more block of sixteen overlapping the one
// before it, or a block of eight when that covers them (narrow windows: most of their rows end so).
// The coefficients as signed-byte parts: mask_vnni_split.hpp. The other mask
// kernels are AVX2's (a sign_row with mask registers, masked loads and a masked store for the
// row's end, was slower than AVX2's on this Zen 5: 7.4 against 6.7 us for the 20 masks).
#if (defined(__x86_64__) || defined(_M_X64)) && defined(__AVX512F__) && defined(__AVX512VL__) && \
    defined(__AVX512VNNI__)
#include <immintrin.h>

#include "mask_kernels.hpp"
#include "mask_prefetch.hpp"
#include "mask_vnni_split.hpp"

// GCC 12's AVX-512 intrinsics start from _mm512_undefined_*(), which -Wall reports as used
// uninitialized (a false positive of the headers, not of this code).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace hailo_decode {
namespace kernels {
namespace {

struct SplitCoefficients {
    __m512i part[3];  // each part's 32 bytes in both halves (a register holds two cells)
    int parts;
    bool negated;
    int32_t sum;
};

SplitCoefficients split(const int16_t* coef) {
    VnniSplit v;
    vnni_split(coef, v);
    SplitCoefficients s;
    for (int p = 0; p < 3; ++p)
        s.part[p] = _mm512_broadcast_i64x4(_mm256_load_si256(reinterpret_cast<const __m256i*>(v.part[p])));
    s.parts = v.parts;
    s.negated = v.negated;
    s.sum = v.sum;
    return s;
}

template <int Parts>
inline __m512i dot(__m512i v, const SplitCoefficients& c) {
    __m512i acc = _mm512_dpbusd_epi32(_mm512_setzero_si512(), v, c.part[0]);
    if (Parts >= 2) acc = _mm512_dpbusd_epi32(acc, v, c.part[1]);
    if (Parts >= 3) acc = _mm512_dpbusd_epi32(acc, v, c.part[2]);
    return acc;
}

// Two cells, q and q + stride: lanes 0-7 add up to the first's sum_k q_k c_k, 8-15 the second's.
template <int Parts, bool Dense>
inline __m512i partial2(const uint8_t* q, size_t stride, const SplitCoefficients& c) {
    __m512i v;
    if (Dense) {  // stride 32: the two cells are one 64-byte run
        v = _mm512_loadu_si512(q);
    } else {
        v = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(q))),
                               _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q + stride)), 1);
    }
    return dot<Parts>(v, c);
}

// Two registers of partial sums as one: lane j sums lanes j and j ^ m of a (where the mask's bit
// j is clear) or of b (where it is set); Swap moves lane j ^ m to j. Blends and one shuffle.
template <__mmask16 Mask, typename Swap>
inline __m512i fold(__m512i a, __m512i b, Swap swap) {
    const __m512i x = _mm512_mask_blend_epi32(Mask, a, b);
    const __m512i y = swap(_mm512_mask_blend_epi32(Mask, b, a));
    return _mm512_add_epi32(x, y);
}

// Sixteen cells' partial sums (register j: cells 2j and 2j + 1) to their sixteen sums, in order.
inline __m512i reduce16(const __m512i* p) {
    auto pairs = [](__m512i v) { return _mm512_shuffle_epi32(v, _MM_PERM_CDAB); };
    auto halves = [](__m512i v) { return _mm512_shuffle_epi32(v, _MM_PERM_BADC); };
    auto quarters = [](__m512i v) { return _mm512_shuffle_i32x4(v, v, _MM_SHUFFLE(2, 3, 0, 1)); };
    // Each 256-bit half of p[j] is one cell; after the first fold each half holds two cells'
    // alternating lanes, after the second four cells' in order in each 128-bit quarter.
    const __m512i t0 = fold<0xCCCC>(fold<0xAAAA>(p[0], p[1], pairs), fold<0xAAAA>(p[2], p[3], pairs), halves);
    const __m512i t1 = fold<0xCCCC>(fold<0xAAAA>(p[4], p[5], pairs), fold<0xAAAA>(p[6], p[7], pairs), halves);
    // Quarters: cells 0 2 4 6 | 8 10 12 14 | 1 3 5 7 | 9 11 13 15.
    const __m512i u = fold<0xF0F0>(t0, t1, quarters);
    return _mm512_permutexvar_epi32(_mm512_setr_epi32(0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15), u);
}

// Eight cells' partial sums (register j: cells 2j and 2j + 1) to their eight sums, in order, in
// each half: reduce16's first two folds, then each quarter added to its neighbour (quarters 0
// and 2 then hold cells 0 2 4 6 and 1 3 5 7).
inline __m512i reduce8(const __m512i* p) {
    auto pairs = [](__m512i v) { return _mm512_shuffle_epi32(v, _MM_PERM_CDAB); };
    auto halves = [](__m512i v) { return _mm512_shuffle_epi32(v, _MM_PERM_BADC); };
    const __m512i t = fold<0xCCCC>(fold<0xAAAA>(p[0], p[1], pairs), fold<0xAAAA>(p[2], p[3], pairs), halves);
    const __m512i u = _mm512_add_epi32(t, _mm512_shuffle_i32x4(t, t, _MM_SHUFFLE(2, 3, 0, 1)));
    return _mm512_permutexvar_epi32(_mm512_setr_epi32(0, 8, 1, 9, 2, 10, 3, 11, 0, 8, 1, 9, 2, 10, 3, 11), u);
}

template <int Parts, bool Dense>
void window(const uint8_t* cells, size_t rows, size_t cols, size_t row_stride, size_t col_stride, int32_t zp,
            const SplitCoefficients& c, float scale, float* out) {
    const __m512i vbias = _mm512_set1_epi32(zp * c.sum);
    const __m512i vneg = _mm512_set1_epi32(c.negated ? -1 : 0);  // x ^ -1 - -1 = -x
    const __m512 vscale = _mm512_set1_ps(scale);
    prefetch_first_rows(cells, rows, cols, row_stride, col_stride);  // mask_prefetch.hpp
    bool prefetch = false;
    // N cells' partial sums (two a register) from q on, prefetching the same cells some rows ahead.
    auto partials = [&](const uint8_t* q, __m512i* p, int n) {
        if (prefetch) prefetch_block_ahead(q, size_t(n), row_stride, col_stride);
        for (int j = 0; j < n / 2; ++j) p[j] = partial2<Parts, Dense>(q + 2 * size_t(j) * col_stride, col_stride, c);
    };
    // The logits of sixteen cells' integer sums.
    auto logits = [&](__m512i sums) {
        const __m512i d = _mm512_sub_epi32(sums, vbias);
        return _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_xor_si512(d, vneg), vneg)), vscale);
    };
    auto block16 = [&](const uint8_t* q, float* o) {
        __m512i p[8];
        partials(q, p, 16);
        _mm512_storeu_ps(o, logits(reduce16(p)));
    };
    // Eight cells: the end of a row whose last block would hold eight or fewer new cells (half
    // the work of a block of sixteen overlapping the one before it), and rows of 8 to 15 cells.
    auto block8 = [&](const uint8_t* q, float* o) {
        __m512i p[4];
        partials(q, p, 8);
        _mm256_storeu_ps(o, _mm512_castps512_ps256(logits(reduce8(p))));
    };
    // Fewer than 8 cells in a row: each cell on its own.
    auto one = [&](const uint8_t* q) {
        const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q));
        __m256i acc = _mm256_dpbusd_epi32(_mm256_setzero_si256(), v, _mm512_castsi512_si256(c.part[0]));
        if (Parts >= 2) acc = _mm256_dpbusd_epi32(acc, v, _mm512_castsi512_si256(c.part[1]));
        if (Parts >= 3) acc = _mm256_dpbusd_epi32(acc, v, _mm512_castsi512_si256(c.part[2]));
        __m128i t = _mm_add_epi32(_mm256_castsi256_si128(acc), _mm256_extracti128_si256(acc, 1));
        t = _mm_add_epi32(t, _mm_shuffle_epi32(t, _MM_SHUFFLE(1, 0, 3, 2)));
        t = _mm_add_epi32(t, _mm_shuffle_epi32(t, _MM_SHUFFLE(2, 3, 0, 1)));
        const int32_t d = _mm_cvtsi128_si32(t) - zp * c.sum;
        return float(c.negated ? -d : d) * scale;
    };
    for (size_t r = 0; r < rows; ++r) {
        const uint8_t* row = cells + r * row_stride;
        float* o = out + r * cols;
        prefetch = r + kPrefetchRows < rows;
        if (cols < 8) {
            for (size_t i = 0; i < cols; ++i) o[i] = one(row + i * col_stride);
            continue;
        }
        size_t i = 0;
        for (; i + 16 <= cols; i += 16) block16(row + i * col_stride, o + i);
        // The last cells as one more block ending at the row's end: it rewrites some cells with
        // their same value.
        if (i == cols) continue;
        if (cols - i > 8 && cols >= 16) {
            block16(row + (cols - 16) * col_stride, o + cols - 16);
        } else {
            if (cols - i > 8) block8(row + i * col_stride, o + i);  // 9 to 15 cells
            block8(row + (cols - 8) * col_stride, o + cols - 8);
        }
    }
}

template <int Parts>
void window_parts(const uint8_t* cells, size_t rows, size_t cols, size_t row_stride, size_t col_stride, int32_t zp,
                  const SplitCoefficients& c, float scale, float* out) {
    if (col_stride == size_t(kMaskChannels)) window<Parts, true>(cells, rows, cols, row_stride, col_stride, zp, c, scale, out);
    else window<Parts, false>(cells, rows, cols, row_stride, col_stride, zp, c, scale, out);
}

void window_u8i(const uint8_t* cells, size_t rows, size_t cols, size_t row_stride, size_t col_stride, int32_t zp,
                const int16_t* coef, float scale, float* out) {
    const SplitCoefficients c = split(coef);
    if (c.parts == 1) window_parts<1>(cells, rows, cols, row_stride, col_stride, zp, c, scale, out);
    else if (c.parts == 2) window_parts<2>(cells, rows, cols, row_stride, col_stride, zp, c, scale, out);
    else window_parts<3>(cells, rows, cols, row_stride, col_stride, zp, c, scale, out);
}

// The kernels of this level's own; the rest (null) are AVX2's (mask_dispatch.cpp puts the table
// together). Constant-initialized: nothing here runs before the CPU check.
const MaskTable kOwn{"avx512vnni", nullptr, nullptr, window_u8i, nullptr, nullptr};

}  // namespace

const MaskTable* mask_avx512vnni_kernels() { return &kOwn; }

}  // namespace kernels
}  // namespace hailo_decode
#else
#include "mask_kernels.hpp"
namespace hailo_decode { namespace kernels { const MaskTable* mask_avx512vnni_kernels() { return nullptr; } } }
#endif
