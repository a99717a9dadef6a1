// AVX2 seg kernels, compiled with -mavx2 (no FMA) and used only where kernels::active() is AVX2 or
// above. Must match seg_scalar.cpp bit for bit (seg_kernels.hpp): a lane is a cell or a pixel,
// with the scalar's operations in the scalar's order.
#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>

#include "seg_kernels.hpp"
#include "seg_tail.hpp"

namespace hailo_decode {
namespace kernels {
namespace {

// Eight cells' 32 bytes (cell c at q + c * stride) transposed into buf (256 bytes): channel k's
// eight bytes, cell c at byte c, start at buf + slot(k). Three rounds of in-lane unpacks (bytes,
// then pairs, then quads); channel k lands in register 2 (k' >> 2) + ((k' >> 1) & 1) (k' = k & 15),
// 128-bit half k >> 4, quadword k & 1.
inline void transpose8(const uint8_t* q, size_t stride, uint8_t* buf) {
    __m256i r[8];
    for (int c = 0; c < 8; ++c) r[c] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q + size_t(c) * stride));
    __m256i a[4], b[4];  // pairs of cells: channels (16 L + i) and (16 L + 8 + i), i < 8
    for (int p = 0; p < 4; ++p) {
        a[p] = _mm256_unpacklo_epi8(r[2 * p], r[2 * p + 1]);
        b[p] = _mm256_unpackhi_epi8(r[2 * p], r[2 * p + 1]);
    }
    const __m256i quads[8] = {  // four cells: channel bases 0, 4, 8, 12 (cells 0-3, then 4-7)
        _mm256_unpacklo_epi16(a[0], a[1]), _mm256_unpackhi_epi16(a[0], a[1]), _mm256_unpacklo_epi16(b[0], b[1]),
        _mm256_unpackhi_epi16(b[0], b[1]), _mm256_unpacklo_epi16(a[2], a[3]), _mm256_unpackhi_epi16(a[2], a[3]),
        _mm256_unpacklo_epi16(b[2], b[3]), _mm256_unpackhi_epi16(b[2], b[3])};
    for (int x = 0; x < 4; ++x) {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(buf + 64 * x), _mm256_unpacklo_epi32(quads[x], quads[4 + x]));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(buf + 64 * x + 32), _mm256_unpackhi_epi32(quads[x], quads[4 + x]));
    }
}

constexpr int slot(int k) {
    return 32 * (2 * ((k & 15) >> 2) + (((k & 15) >> 1) & 1)) + 16 * (k >> 4) + 8 * (k & 1);
}

inline __m256 channel(const uint8_t* buf, int k, __m256 zp, __m256 scale) {
    const __m256i v = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(buf + slot(k))));
    return _mm256_mul_ps(_mm256_sub_ps(_mm256_cvtepi32_ps(v), zp), scale);
}

// Two groups of eight cells at a time: two independent chains of 32 adds.
void cells_u8(const uint8_t* cells, size_t n, size_t stride, float zp, float scale, const float* negc, float* out) {
    alignas(32) uint8_t buf0[256], buf1[256];
    const __m256 vzp = _mm256_set1_ps(zp), vs = _mm256_set1_ps(scale);
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        transpose8(cells + i * stride, stride, buf0);
        transpose8(cells + (i + 8) * stride, stride, buf1);
        __m256 c = _mm256_broadcast_ss(negc);
        __m256 s0 = _mm256_mul_ps(c, channel(buf0, 0, vzp, vs)), s1 = _mm256_mul_ps(c, channel(buf1, 0, vzp, vs));
        for (int k = 1; k < kSegChannels; ++k) {
            c = _mm256_broadcast_ss(negc + k);
            s0 = _mm256_add_ps(s0, _mm256_mul_ps(c, channel(buf0, k, vzp, vs)));
            s1 = _mm256_add_ps(s1, _mm256_mul_ps(c, channel(buf1, k, vzp, vs)));
        }
        _mm256_storeu_ps(out + i, s0);
        _mm256_storeu_ps(out + i + 8, s1);
    }
    for (; i + 8 <= n || (i < n && n >= 8); i += 8) {
        if (i + 8 > n) i = n - 8;  // the last cells as one more group ending at n (same values again)
        transpose8(cells + i * stride, stride, buf0);
        __m256 s = _mm256_mul_ps(_mm256_broadcast_ss(negc), channel(buf0, 0, vzp, vs));
        for (int k = 1; k < kSegChannels; ++k)
            s = _mm256_add_ps(s, _mm256_mul_ps(_mm256_broadcast_ss(negc + k), channel(buf0, k, vzp, vs)));
        _mm256_storeu_ps(out + i, s);
    }
    for (; i < n; ++i) out[i] = seg::cell_u8(cells + i * stride, zp, scale, negc);
}

inline __m256 exp8(__m256 in) {
    const __m256 one = _mm256_set1_ps(1.0f);
    __m256 x = _mm256_min_ps(in, _mm256_set1_ps(seg::kExpHi));
    x = _mm256_max_ps(x, _mm256_set1_ps(seg::kExpLo));
    const __m256 tt = _mm256_add_ps(_mm256_mul_ps(x, _mm256_set1_ps(seg::kLog2e)), _mm256_set1_ps(0.5f));
    __m256 m = _mm256_cvtepi32_ps(_mm256_cvttps_epi32(tt));
    m = _mm256_sub_ps(m, _mm256_and_ps(_mm256_cmp_ps(m, tt, _CMP_GT_OQ), one));
    __m256 r = _mm256_add_ps(_mm256_mul_ps(m, _mm256_set1_ps(seg::kC1)), x);
    r = _mm256_add_ps(_mm256_mul_ps(m, _mm256_set1_ps(seg::kC2)), r);
    const __m256 r2 = _mm256_mul_ps(r, r), r3 = _mm256_mul_ps(r2, r);
    __m256 y = _mm256_add_ps(_mm256_mul_ps(_mm256_set1_ps(seg::kP0), r), _mm256_set1_ps(seg::kP1));
    __m256 y1 = _mm256_add_ps(_mm256_mul_ps(_mm256_set1_ps(seg::kP3), r), _mm256_set1_ps(seg::kP4));
    const __m256 y2 = _mm256_add_ps(r, one);
    y = _mm256_add_ps(_mm256_mul_ps(y, r), _mm256_set1_ps(seg::kP2));
    y1 = _mm256_add_ps(_mm256_mul_ps(y1, r), _mm256_set1_ps(seg::kP5));
    y = _mm256_add_ps(_mm256_mul_ps(y, r3), y1);
    y = _mm256_add_ps(_mm256_mul_ps(y, r2), y2);
    const __m256i mi = _mm256_cvttps_epi32(m), m1 = _mm256_srai_epi32(mi, 1), m2 = _mm256_sub_epi32(mi, m1);
    const __m256i bias = _mm256_set1_epi32(127);
    const __m256 p1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(m1, bias), 23));
    const __m256 p2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(m2, bias), 23));
    const __m256 scaled = _mm256_mul_ps(_mm256_mul_ps(y, p1), p2);
    return _mm256_blendv_ps(scaled, in, _mm256_cmp_ps(scaled, in, _CMP_LT_OQ));  // scaled < in ? in : scaled
}

void sigmoid(float* v, size_t n) {
    const __m256 one = _mm256_set1_ps(1.0f);
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(v + i, _mm256_div_ps(one, _mm256_add_ps(one, exp8(_mm256_loadu_ps(v + i)))));
    for (; i < n; ++i) v[i] = seg::sigmoid(v[i]);
}

void hpass(const float* src, const SegHBlock* blocks, size_t n_blocks, float* out) {
    for (size_t b = 0; b < n_blocks; ++b) {
        const SegHBlock& k = blocks[b];
        const float* s = src + k.first;
        auto tap = [&](int t) {
            const __m256i idx = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(k.idx[t]));
            return k.span <= 8 ? _mm256_permutevar8x32_ps(_mm256_loadu_ps(s), idx) : _mm256_i32gather_ps(s, idx, 4);
        };
        __m256 acc = _mm256_mul_ps(tap(0), _mm256_loadu_ps(k.coef[0]));
        for (int t = 1; t < k.taps; ++t) acc = _mm256_add_ps(acc, _mm256_mul_ps(tap(t), _mm256_loadu_ps(k.coef[t])));
        _mm256_storeu_ps(out + b * kSegBlock, acc);
    }
}

void vpass(const float* const* rows, const float* coef, int taps, float cut, size_t n, uint8_t* out) {
    const __m256 vcut = _mm256_set1_ps(cut);
    __m256 c[kSegTaps];
    for (int k = 0; k < taps; ++k) c[k] = _mm256_set1_ps(coef[k]);
    auto gt = [&](size_t x) {
        __m256 acc = _mm256_mul_ps(_mm256_loadu_ps(rows[0] + x), c[0]);
        for (int k = 1; k < taps; ++k) acc = _mm256_add_ps(acc, _mm256_mul_ps(_mm256_loadu_ps(rows[k] + x), c[k]));
        return _mm256_castps_si256(_mm256_cmp_ps(acc, vcut, _CMP_GT_OQ));
    };
    const __m256i one = _mm256_set1_epi8(1);
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    size_t x = 0;
    for (; x + 32 <= n; x += 32) {  // four compares packed to bytes (per 128-bit half; a permute restores the order)
        const __m256i w16a = _mm256_packs_epi32(gt(x), gt(x + 8));
        const __m256i w16b = _mm256_packs_epi32(gt(x + 16), gt(x + 24));
        const __m256i w = _mm256_permutevar8x32_epi32(_mm256_packs_epi16(w16a, w16b), order);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + x), _mm256_and_si256(w, one));
    }
    for (; x + 8 <= n; x += 8) {
        const __m256i m = gt(x);
        const __m128i w16 = _mm_packs_epi32(_mm256_castsi256_si128(m), _mm256_extracti128_si256(m, 1));
        _mm_storel_epi64(reinterpret_cast<__m128i*>(out + x), _mm_and_si128(_mm_packs_epi16(w16, w16), _mm_set1_epi8(1)));
    }
    seg::vpass_tail(rows, coef, taps, cut, x, n, out);
}

const SegTable kAvx2{"avx2", cells_u8, sigmoid, hpass, vpass};

}  // namespace

const SegTable* seg_avx2_table() { return &kAvx2; }

}  // namespace kernels
}  // namespace hailo_decode
#else
#include "seg_kernels.hpp"
namespace hailo_decode { namespace kernels { const SegTable* seg_avx2_table() { return nullptr; } } }
#endif
