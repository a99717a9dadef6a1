// AVX-VNNI mask kernel (compiled with -mavx2 -mavxvnni; used only where kernels::active() is the
// "avxvnni" table, after its CPU check): the exact integer window_u8i with vpdpbusd, which
// multiplies unsigned bytes by signed bytes and adds each four products into an int32 lane, with
// no 16-bit stage to saturate. The other mask kernels are AVX2's.
//
// The coefficients as signed-byte parts: mask_vnni_split.hpp.
#if (defined(__x86_64__) || defined(_M_X64)) && defined(__AVXVNNI__)
#include <immintrin.h>

#include "mask_kernels.hpp"
#include "mask_prefetch.hpp"
#include "mask_vnni_split.hpp"

namespace hailo_decode {
namespace kernels {
namespace {

// One detection's coefficients as vpdpbusd takes them.
struct SplitCoefficients {
    __m256i part[3];
    int parts;
    bool negated;
    int32_t sum;
};

SplitCoefficients split(const int16_t* coef) {
    VnniSplit v;
    vnni_split(coef, v);
    SplitCoefficients s;
    for (int p = 0; p < 3; ++p) s.part[p] = _mm256_load_si256(reinterpret_cast<const __m256i*>(v.part[p]));
    s.parts = v.parts;
    s.negated = v.negated;
    s.sum = v.sum;
    return s;
}

// A cell's eight partial sums (lanes add up to sum_k q_k c_k).
template <int Parts>
inline __m256i partial(const uint8_t* q, const SplitCoefficients& c) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q));
    __m256i acc = _mm256_dpbusd_avx_epi32(_mm256_setzero_si256(), v, c.part[0]);
    if (Parts >= 2) acc = _mm256_dpbusd_avx_epi32(acc, v, c.part[1]);
    if (Parts >= 3) acc = _mm256_dpbusd_avx_epi32(acc, v, c.part[2]);
    return acc;
}

// Two registers of partial sums, a's cells and b's, as one: lane j sums lanes j and j ^ m of a
// (where j & m == 0) or of b (where j & m != 0). Blends and one in-lane shuffle per pair, where
// hadd takes two shuffles: the shuffle unit is what limits the block.
template <int Mask, int Swap>
inline __m256i fold(__m256i a, __m256i b) {
    const __m256i x = _mm256_blend_epi32(a, b, Mask);
    const __m256i y = _mm256_shuffle_epi32(_mm256_blend_epi32(b, a, Mask), Swap);
    return _mm256_add_epi32(x, y);
}

// Eight cells' partial sums to their eight sums, in order.
inline __m256i reduce8(__m256i p0, __m256i p1, __m256i p2, __m256i p3, __m256i p4, __m256i p5, __m256i p6, __m256i p7) {
    constexpr int kPairs = _MM_SHUFFLE(2, 3, 0, 1), kHalves = _MM_SHUFFLE(1, 0, 3, 2);
    // Lanes of cells 0 and 1 alternating, then of cells 0-3 in order in each 128-bit half.
    const __m256i q0 = fold<0xCC, kHalves>(fold<0xAA, kPairs>(p0, p1), fold<0xAA, kPairs>(p2, p3));
    const __m256i q1 = fold<0xCC, kHalves>(fold<0xAA, kPairs>(p4, p5), fold<0xAA, kPairs>(p6, p7));
    // Cells 0-3 (both halves of q0) and 4-7 (of q1).
    return _mm256_add_epi32(_mm256_permute2x128_si256(q0, q1, 0x20), _mm256_permute2x128_si256(q0, q1, 0x31));
}

// The AVX2 kernel's window loop (mask_avx2.cpp: blocks of eight cells reduced together, the row's
// last cells as one more block ending at its end, the same prefetch), with vpdpbusd partials.
template <int Parts>
void window(const uint8_t* cells, size_t rows, size_t cols, size_t row_stride, size_t col_stride, int32_t zp,
            const SplitCoefficients& c, float scale, float* out) {
    const __m256i vbias = _mm256_set1_epi32(zp * c.sum);
    const __m256i vneg = _mm256_set1_epi32(c.negated ? -1 : 0);  // x ^ -1 - -1 = -x
    const __m256 vscale = _mm256_set1_ps(scale);
    prefetch_first_rows(cells, rows, cols, row_stride, col_stride);
    bool prefetch = false;
    auto block8 = [&](const uint8_t* q, float* o) {
        if (prefetch) prefetch_block_ahead(q, 8, row_stride, col_stride);
        const __m256i sums = reduce8(partial<Parts>(q, c), partial<Parts>(q + col_stride, c),
                                     partial<Parts>(q + 2 * col_stride, c), partial<Parts>(q + 3 * col_stride, c),
                                     partial<Parts>(q + 4 * col_stride, c), partial<Parts>(q + 5 * col_stride, c),
                                     partial<Parts>(q + 6 * col_stride, c), partial<Parts>(q + 7 * col_stride, c));
        const __m256i d = _mm256_sub_epi32(sums, vbias);
        const __m256i exact = _mm256_sub_epi32(_mm256_xor_si256(d, vneg), vneg);
        _mm256_storeu_ps(o, _mm256_mul_ps(_mm256_cvtepi32_ps(exact), vscale));
    };
    for (size_t r = 0; r < rows; ++r) {
        const uint8_t* row = cells + r * row_stride;
        float* o = out + r * cols;
        prefetch = r + kPrefetchRows < rows;
        size_t i = 0;
        for (; i + 8 <= cols; i += 8) block8(row + i * col_stride, o + i);
        if (cols >= 8 && i < cols) {
            block8(row + (cols - 8) * col_stride, o + cols - 8);
            continue;
        }
        for (; i < cols; ++i) {
            const __m256i p = partial<Parts>(row + i * col_stride, c);
            __m128i t = _mm_add_epi32(_mm256_castsi256_si128(p), _mm256_extracti128_si256(p, 1));
            t = _mm_add_epi32(t, _mm_shuffle_epi32(t, _MM_SHUFFLE(1, 0, 3, 2)));
            t = _mm_add_epi32(t, _mm_shuffle_epi32(t, _MM_SHUFFLE(2, 3, 0, 1)));
            const int32_t d = _mm_cvtsi128_si32(t) - zp * c.sum;
            o[i] = float(c.negated ? -d : d) * scale;
        }
    }
}

void window_u8i(const uint8_t* cells, size_t rows, size_t cols, size_t row_stride, size_t col_stride, int32_t zp,
                const int16_t* coef, float scale, float* out) {
    const SplitCoefficients c = split(coef);
    if (c.parts == 1) window<1>(cells, rows, cols, row_stride, col_stride, zp, c, scale, out);
    else if (c.parts == 2) window<2>(cells, rows, cols, row_stride, col_stride, zp, c, scale, out);
    else window<3>(cells, rows, cols, row_stride, col_stride, zp, c, scale, out);
}

// The kernels of this level's own; the rest (null) are AVX2's (mask_dispatch.cpp puts the table
// together). Constant-initialized: nothing here runs before the CPU check.
const MaskTable kOwn{"avxvnni", nullptr, nullptr, window_u8i, nullptr, nullptr};

}  // namespace

const MaskTable* mask_avxvnni_kernels() { return &kOwn; }

}  // namespace kernels
}  // namespace hailo_decode
#else
#include "mask_kernels.hpp"
namespace hailo_decode { namespace kernels { const MaskTable* mask_avxvnni_kernels() { return nullptr; } } }
#endif
