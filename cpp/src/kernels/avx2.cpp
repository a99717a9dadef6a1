// AVX2 kernels, compiled with -mavx2 (no -mfma: mul and add stay separate, as in scalar.cpp) and
// only called after the CPU says it has AVX2. Must match scalar.cpp bit for bit.
#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>

#include "dfl_cells.hpp"
#include "cell_max_tail.hpp"
#include "cells_scan.hpp"
#include "gate_order.hpp"
#include "kernels.hpp"
#include "nms_list.hpp"
#include "probiou_filter.hpp"
#include "probiou_gaussians.hpp"
#include "rotated_enclosing.hpp"

namespace hailo_decode {
namespace kernels {
namespace {

inline size_t emit(uint32_t mask, size_t base, uint32_t* out, size_t k, int shift) {
    while (mask) {
        out[k++] = uint32_t(base + (size_t(__builtin_ctz(mask)) >> shift));
        mask &= mask - 1;
    }
    return k;
}

size_t scan_u8(const uint8_t* v, const uint8_t* l, size_t n, uint32_t* out) {
    size_t i = 0, k = 0;
    const __m256i zero = _mm256_setzero_si256();
    // 128 bytes per test (most of a class tensor passes nothing): saturating limit - value is 0
    // exactly where value >= limit; the minimum of four such vectors has a 0 iff any passes.
    // (Blocks with a hit are recomputed rather than kept in an array, which GCC spills.)
    auto gap = [&](size_t j) {
        return _mm256_subs_epu8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(l + j)),
                                _mm256_loadu_si256(reinterpret_cast<const __m256i*>(v + j)));
    };
    for (; i + 128 <= n; i += 128) {
        const __m256i m = _mm256_min_epu8(_mm256_min_epu8(gap(i), gap(i + 32)), _mm256_min_epu8(gap(i + 64), gap(i + 96)));
        if (!_mm256_movemask_epi8(_mm256_cmpeq_epi8(m, zero))) continue;
        for (size_t j = 0; j < 128; j += 32)
            k = emit(uint32_t(_mm256_movemask_epi8(_mm256_cmpeq_epi8(gap(i + j), zero))), i + j, out, k, 0);
    }
    for (; i + 32 <= n; i += 32) {
        const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(v + i));
        const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(l + i));
        const uint32_t m = uint32_t(_mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_max_epu8(a, b), a)));
        if (m) k = emit(m, i, out, k, 0);
    }
    for (; i < n; ++i)
        if (v[i] >= l[i]) out[k++] = uint32_t(i);
    return k;
}

size_t scan_u8_uniform(const uint8_t* v, uint8_t limit, size_t n, uint32_t* out) {
    size_t k = 0;
    const __m256i lim = _mm256_set1_epi8(char(limit));
    auto passing = [&](__m256i a) { return uint32_t(_mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_max_epu8(a, lim), a))); };
    if (n < 32) {
        for (size_t i = 0; i < n; ++i)
            if (v[i] >= limit) out[k++] = uint32_t(i);
        return k;
    }
    // The body reads aligned 32-byte vectors (a load across two cache lines costs about a third
    // more here, and NumPy's large arrays start 16 bytes into a line): one unaligned vector covers
    // the bytes before the first boundary, another the bytes after the last.
    size_t i = (32 - (reinterpret_cast<uintptr_t>(v) & 31)) & 31;
    if (i) k = emit(passing(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(v))) & ((1u << i) - 1), 0, out, k, 0);
    // 256 bytes per test (then 128): their maximum passes iff any byte does; a branch per 128
    // bytes measured 2-3 % slower. The rare block with a hit is read again rather than kept in an
    // array (GCC spills such an array on every block).
    auto at = [&](size_t j) { return _mm256_load_si256(reinterpret_cast<const __m256i*>(v + j)); };
    for (; i + 256 <= n; i += 256) {
        const __m256i lo = _mm256_max_epu8(_mm256_max_epu8(at(i), at(i + 32)), _mm256_max_epu8(at(i + 64), at(i + 96)));
        const __m256i hi = _mm256_max_epu8(_mm256_max_epu8(at(i + 128), at(i + 160)), _mm256_max_epu8(at(i + 192), at(i + 224)));
        if (!passing(_mm256_max_epu8(lo, hi))) continue;
        for (size_t j = 0; j < 256; j += 32) k = emit(passing(at(i + j)), i + j, out, k, 0);
    }
    for (; i + 128 <= n; i += 128) {
        if (!passing(_mm256_max_epu8(_mm256_max_epu8(at(i), at(i + 32)), _mm256_max_epu8(at(i + 64), at(i + 96))))) continue;
        for (size_t j = 0; j < 128; j += 32) k = emit(passing(at(i + j)), i + j, out, k, 0);
    }
    for (; i + 32 <= n; i += 32) {
        const uint32_t m = passing(_mm256_load_si256(reinterpret_cast<const __m256i*>(v + i)));
        if (m) k = emit(m, i, out, k, 0);
    }
    if (i < n)  // the last 32 bytes, less those already seen
        k = emit(passing(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(v + n - 32))) >> (32 - (n - i)), i, out, k, 0);
    return k;
}

size_t scan_u16_uniform(const uint16_t* v, uint16_t limit, size_t n, uint32_t* out) {
    size_t k = 0;
    const __m256i lim = _mm256_set1_epi16(short(limit));
    // Two mask bits per element: keep the even ones.
    auto passing = [&](__m256i a) {
        return uint32_t(_mm256_movemask_epi8(_mm256_cmpeq_epi16(_mm256_max_epu16(a, lim), a))) & 0x55555555u;
    };
    auto at = [&](size_t j) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(v + j)); };
    if (n < 16) {
        for (size_t i = 0; i < n; ++i)
            if (v[i] >= limit) out[k++] = uint32_t(i);
        return k;
    }
    // As scan_u8_uniform: one vector covers the values before the first 32-byte boundary, so that
    // the body's loads never straddle two cache lines (NumPy's arrays start 16 bytes into a line;
    // straddling loads cost this scan about a tenth). A value misaligned to its own size (not from
    // the Python API) only loses that.
    size_t i = ((32 - (reinterpret_cast<uintptr_t>(v) & 31)) & 31) / 2;
    if (i) k = emit(passing(at(0)) & ((1u << (2 * i)) - 1), 0, out, k, 1);
    for (; i + 128 <= n; i += 128) {  // 256 bytes per test, as scan_u8_uniform
        const __m256i lo = _mm256_max_epu16(_mm256_max_epu16(at(i), at(i + 16)), _mm256_max_epu16(at(i + 32), at(i + 48)));
        const __m256i hi = _mm256_max_epu16(_mm256_max_epu16(at(i + 64), at(i + 80)), _mm256_max_epu16(at(i + 96), at(i + 112)));
        if (!passing(_mm256_max_epu16(lo, hi))) continue;
        for (size_t j = 0; j < 128; j += 16) k = emit(passing(at(i + j)), i + j, out, k, 1);
    }
    for (; i + 16 <= n; i += 16) {
        const uint32_t m = passing(at(i));
        if (m) k = emit(m, i, out, k, 1);
    }
    if (i < n)  // the last 16 values, less those already seen
        k = emit(passing(at(n - 16)) >> (2 * (16 - (n - i))), i, out, k, 1);
    return k;
}

size_t scan_u16(const uint16_t* v, const uint16_t* l, size_t n, uint32_t* out) {
    size_t i = 0, k = 0;
    for (; i + 16 <= n; i += 16) {
        const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(v + i));
        const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(l + i));
        // Two mask bits per element: keep the even ones.
        const uint32_t m = uint32_t(_mm256_movemask_epi8(_mm256_cmpeq_epi16(_mm256_max_epu16(a, b), a))) & 0x55555555u;
        if (m) k = emit(m, i, out, k, 1);
    }
    for (; i < n; ++i)
        if (v[i] >= l[i]) out[k++] = uint32_t(i);
    return k;
}

size_t scan_f32(const float* v, const float* l, size_t n, uint32_t* out) {
    size_t i = 0, k = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 ge = _mm256_cmp_ps(_mm256_loadu_ps(v + i), _mm256_loadu_ps(l + i), _CMP_GE_OQ);
        const uint32_t m = uint32_t(_mm256_movemask_ps(ge));
        if (m) k = emit(m, i, out, k, 0);
    }
    for (; i < n; ++i)
        if (v[i] >= l[i]) out[k++] = uint32_t(i);
    return k;
}

inline __m256 exp_neg(__m256 x) {
    x = _mm256_max_ps(x, _mm256_set1_ps(kExpMin));
    const __m256i n = _mm256_cvttps_epi32(_mm256_sub_ps(_mm256_mul_ps(x, _mm256_set1_ps(kLog2e)), _mm256_set1_ps(0.5f)));
    const __m256 fn = _mm256_cvtepi32_ps(n);
    __m256 r = _mm256_sub_ps(x, _mm256_mul_ps(fn, _mm256_set1_ps(kLn2Hi)));
    r = _mm256_sub_ps(r, _mm256_mul_ps(fn, _mm256_set1_ps(kLn2Lo)));
    const __m256 r2 = _mm256_mul_ps(r, r);
    __m256 p = _mm256_set1_ps(kExpP0);
    p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(kExpP1));
    p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(kExpP2));
    p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(kExpP3));
    p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(kExpP4));
    p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(kExpP5));
    p = _mm256_add_ps(_mm256_mul_ps(p, r2), r);
    p = _mm256_add_ps(p, _mm256_set1_ps(1.0f));
    const __m256 scale = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n, _mm256_set1_epi32(127)), 23));
    return _mm256_mul_ps(p, scale);
}

// Lane s: the fixed tree over a_s's 8 lanes, ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7)),
// for four sides at once (hadd adds neighbours within each 128-bit half).
inline __m128 tree8x4(__m256 a0, __m256 a1, __m256 a2, __m256 a3) {
    const __m256 h = _mm256_hadd_ps(_mm256_hadd_ps(a0, a1), _mm256_hadd_ps(a2, a3));
    return _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
}

// The expectations of four sides from their exps, ea_s = e_0..7 and eb_s = e_8..15.
inline void expectations(const __m256 ea[4], const __m256 eb[4], float out[4]) {
    const __m256 idx_lo = _mm256_setr_ps(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256 idx_hi = _mm256_setr_ps(8, 9, 10, 11, 12, 13, 14, 15);
    __m256 v[4], w[4];
    for (int side = 0; side < 4; ++side) {
        v[side] = _mm256_add_ps(ea[side], eb[side]);
        w[side] = _mm256_add_ps(_mm256_mul_ps(idx_lo, ea[side]), _mm256_mul_ps(idx_hi, eb[side]));
    }
    _mm_storeu_ps(out, _mm_div_ps(tree8x4(w[0], w[1], w[2], w[3]), tree8x4(v[0], v[1], v[2], v[3])));
}

void dfl16(const float* x, float out[4]) {
    __m256 ea[4], eb[4];
    for (int side = 0; side < 4; ++side) {
        const __m256 a = _mm256_loadu_ps(x + 16 * side), b = _mm256_loadu_ps(x + 16 * side + 8);
        __m256 m = _mm256_max_ps(a, b);
        m = _mm256_max_ps(m, _mm256_permute2f128_ps(m, m, 1));
        m = _mm256_max_ps(m, _mm256_shuffle_ps(m, m, _MM_SHUFFLE(1, 0, 3, 2)));
        m = _mm256_max_ps(m, _mm256_shuffle_ps(m, m, _MM_SHUFFLE(2, 3, 0, 1)));
        ea[side] = exp_neg(_mm256_sub_ps(a, m));
        eb[side] = exp_neg(_mm256_sub_ps(b, m));
    }
    expectations(ea, eb, out);
}

void dfl16_u8(const uint8_t* q, const ExpTable& t, float out[4]) {
    const __m256 e64 = _mm256_loadu_ps(t.e64), e8 = _mm256_loadu_ps(t.e8), e1 = _mm256_loadu_ps(t.e1);
    // ExpTable::full of 8 bytes: the in-lane permute reads the low 2 bits of q >> 6, the 8-lane
    // ones the low 3 bits of q >> 3 and q. (Three 8-lane permutes took a third longer a cell; a
    // fourth part of 4, to look every part up in-lane, was slower again.)
    auto exp8 = [&](const uint8_t* p) {
        const __m256i d = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
        const __m256 ab = _mm256_mul_ps(_mm256_permutevar_ps(e64, _mm256_srli_epi32(d, 6)),
                                        _mm256_permutevar8x32_ps(e8, _mm256_srli_epi32(d, 3)));
        return _mm256_mul_ps(ab, _mm256_permutevar8x32_ps(e1, d));
    };
    __m256 ea[4], eb[4];
    for (int side = 0; side < 4; ++side) {
        ea[side] = exp8(q + 16 * side);
        eb[side] = exp8(q + 16 * side + 8);
    }
    expectations(ea, eb, out);
}

// HailoRT's compute_iou test of eight boxes (l*) against one (b*, broadcast), lane by lane: all
// ones where the IoU passes th. No overlap is an IoU of 0 (so threshold 0, inclusive, passes).
inline __m256 iou_passes(__m256 ly0, __m256 lx0, __m256 ly1, __m256 lx1, __m256 la, __m256 by0, __m256 bx0, __m256 by1,
                         __m256 bx1, __m256 ba, __m256 t, bool inclusive) {
    const __m256 zero = _mm256_setzero_ps();
    const __m256 ow = _mm256_sub_ps(_mm256_min_ps(lx1, bx1), _mm256_max_ps(lx0, bx0));
    const __m256 oh = _mm256_sub_ps(_mm256_min_ps(ly1, by1), _mm256_max_ps(ly0, by0));
    const __m256 overlap = _mm256_and_ps(_mm256_cmp_ps(ow, zero, _CMP_GT_OQ), _mm256_cmp_ps(oh, zero, _CMP_GT_OQ));
    const __m256 inter = _mm256_mul_ps(ow, oh);
    const __m256 uni = _mm256_sub_ps(_mm256_add_ps(la, ba), inter);
    const __m256 iou = _mm256_and_ps(overlap, _mm256_div_ps(inter, uni));
    return inclusive ? _mm256_cmp_ps(iou, t, _CMP_GE_OQ) : _mm256_cmp_ps(iou, t, _CMP_GT_OQ);
}

bool any_iou_over(const float* y0, const float* x0, const float* y1, const float* x1, const float* area,
                  size_t n, const float b[4], float b_area, float th, bool inclusive) {
    const __m256 by0 = _mm256_set1_ps(b[0]), bx0 = _mm256_set1_ps(b[1]), by1 = _mm256_set1_ps(b[2]),
                 bx1 = _mm256_set1_ps(b[3]);
    const __m256 ba = _mm256_set1_ps(b_area), t = _mm256_set1_ps(th);
    // Whether any of the `lanes` passes; in the tail the lanes past n are left out (their loads
    // were masked, so nothing past the arrays is read).
    auto hits = [&](__m256 ly0, __m256 lx0, __m256 ly1, __m256 lx1, __m256 la, __m256 lanes) {
        return _mm256_movemask_ps(_mm256_and_ps(lanes, iou_passes(ly0, lx0, ly1, lx1, la, by0, bx0, by1, bx1, ba, t, inclusive))) != 0;
    };
    const __m256 all = _mm256_castsi256_ps(_mm256_set1_epi32(-1));
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        if (hits(_mm256_loadu_ps(y0 + i), _mm256_loadu_ps(x0 + i), _mm256_loadu_ps(y1 + i), _mm256_loadu_ps(x1 + i),
                 _mm256_loadu_ps(area + i), all))
            return true;
    if (i == n) return false;
    const __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32(int(n - i)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    return hits(_mm256_maskload_ps(y0 + i, m), _mm256_maskload_ps(x0 + i, m), _mm256_maskload_ps(y1 + i, m),
                _mm256_maskload_ps(x1 + i, m), _mm256_maskload_ps(area + i, m), _mm256_castsi256_ps(m));
}

// Greedy NMS of one list (kernels.hpp; the loop: nms_list.hpp), eight lanes.
struct ListLanes {
    using F = __m256;
    using Mask = __m256;
    static constexpr size_t kWidth = 8;
    static F zero() { return _mm256_setzero_ps(); }
    static F set1(float x) { return _mm256_set1_ps(x); }
    static F load(const float* p) { return _mm256_load_ps(p); }
    static void store(float* p, F v) { _mm256_store_ps(p, v); }
    static Mask all() { return _mm256_castsi256_ps(_mm256_set1_epi32(-1)); }
    static Mask first(size_t n) {
        return _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32(int(n)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)));
    }
    static Mask slot(size_t n) {
        return _mm256_castsi256_ps(_mm256_cmpeq_epi32(_mm256_set1_epi32(int(n)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)));
    }
    static F put(F r, F v, Mask slot) { return _mm256_blendv_ps(r, v, slot); }
    static bool any_passes(Mask live, const F l[5], const F b[5], F t, bool inclusive) {
        return _mm256_movemask_ps(_mm256_and_ps(live, iou_passes(l[0], l[1], l[2], l[3], l[4], b[0], b[1], b[2], b[3], b[4], t, inclusive))) != 0;
    }
};

size_t nms_list(const float* y0, const float* x0, const float* y1, const float* x1, const float* area, size_t m,
                float th, bool inclusive, size_t max_keep, uint8_t* keep, float* kept) {
    return nms_list_with<ListLanes>(y0, x0, y1, x1, area, m, th, inclusive, max_keep, keep, kept);
}

void dequant_u8(const uint8_t* src, size_t n, float zp, float scale, float* dst) {
    size_t i = 0;
    const __m256 z = _mm256_set1_ps(zp), s = _mm256_set1_ps(scale);
    for (; i + 8 <= n; i += 8) {
        const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(src + i));
        _mm256_storeu_ps(dst + i, _mm256_mul_ps(_mm256_sub_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(b)), z), s));
    }
    for (; i < n; ++i) dst[i] = (float(src[i]) - zp) * scale;
}

uint64_t byte_sum(const uint8_t* p, size_t n) {
    // The floor the benchmarks compare with, so it must be a read pass as fast as this machine
    // allows: aligned loads (as the scan's) and four independent accumulators, which keep it
    // bound by the caches or memory rather than by one chain of additions.
    size_t i = 0;
    uint64_t s = 0;
    for (; i < n && (reinterpret_cast<uintptr_t>(p + i) & 31); ++i) s += p[i];
    const __m256i zero = _mm256_setzero_si256();
    __m256i acc[4] = {zero, zero, zero, zero};
    for (; i + 128 <= n; i += 128)
        for (int j = 0; j < 4; ++j)
            acc[j] = _mm256_add_epi64(acc[j], _mm256_sad_epu8(_mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 32 * j)), zero));
    for (; i + 32 <= n; i += 32)
        acc[0] = _mm256_add_epi64(acc[0], _mm256_sad_epu8(_mm256_load_si256(reinterpret_cast<const __m256i*>(p + i)), zero));
    alignas(32) uint64_t lanes[4];
    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), _mm256_add_epi64(_mm256_add_epi64(acc[0], acc[1]), _mm256_add_epi64(acc[2], acc[3])));
    s += lanes[0] + lanes[1] + lanes[2] + lanes[3];
    for (; i < n; ++i) s += p[i];
    return s;
}

// A cell's 32-byte partial maxima: its first 32 bytes, each next 32, and the last 32 (which may
// overlap the previous: harmless for a maximum); never a byte outside the cell. Steps: the
// vectors after the first, (channels - 1) / 32, fixed at compile time for the usual class counts
// (up to 128) so that no loop or test runs per cell (it was about half the kernel's
// instructions); -1: any count, by a loop.
template <int Steps>
inline __m256i partial_max32(const uint8_t* p, size_t channels) {
    __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    if constexpr (Steps < 0) {
        size_t c = 32;
        for (; c + 32 <= channels; c += 32) v = _mm256_max_epu8(v, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + c)));
        if (c < channels) v = _mm256_max_epu8(v, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + channels - 32)));
    } else {
        for (int s = 1; s < Steps; ++s) v = _mm256_max_epu8(v, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32 * s)));
        if constexpr (Steps > 0) v = _mm256_max_epu8(v, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + channels - 32)));
    }
    return v;
}

// Interleaves two vectors' bytes (or words, dwords) and keeps the larger of each pair: the
// result holds both inputs' partial maxima, half as many each.
inline __m256i fold8(__m256i a, __m256i b) { return _mm256_max_epu8(_mm256_unpacklo_epi8(a, b), _mm256_unpackhi_epi8(a, b)); }
inline __m256i fold16(__m256i a, __m256i b) { return _mm256_max_epu8(_mm256_unpacklo_epi16(a, b), _mm256_unpackhi_epi16(a, b)); }
inline __m256i fold32(__m256i a, __m256i b) { return _mm256_max_epu8(_mm256_unpacklo_epi32(a, b), _mm256_unpackhi_epi32(a, b)); }

// The low 8 bytes of x, one per cell, from x's 8-byte groups [c0 .. c7] (four of them).
inline __m128i last_fold(__m256i x) {
    const __m256i d = _mm256_max_epu8(x, _mm256_srli_si256(x, 8));
    return _mm_max_epu8(_mm256_castsi256_si128(d), _mm256_extracti128_si256(d, 1));
}

// The maxima of 8 cells (channels >= 32), in the low 8 bytes.
template <int Steps>
inline __m128i max_of_8_cells(const uint8_t* p, size_t pitch, size_t channels) {
    const __m256i a0 = fold8(partial_max32<Steps>(p, channels), partial_max32<Steps>(p + pitch, channels));
    const __m256i a1 = fold8(partial_max32<Steps>(p + 2 * pitch, channels), partial_max32<Steps>(p + 3 * pitch, channels));
    const __m256i a2 = fold8(partial_max32<Steps>(p + 4 * pitch, channels), partial_max32<Steps>(p + 5 * pitch, channels));
    const __m256i a3 = fold8(partial_max32<Steps>(p + 6 * pitch, channels), partial_max32<Steps>(p + 7 * pitch, channels));
    return last_fold(fold32(fold16(a0, a1), fold16(a2, a3)));
}

// One cell's maximum: the same folds with itself.
template <int Steps>
inline uint8_t max_of_cell(const uint8_t* p, size_t channels) {
    const __m256i v = partial_max32<Steps>(p, channels);
    const __m256i a = fold8(v, v);
    const __m256i b = fold16(a, a);
    return uint8_t(_mm_cvtsi128_si32(last_fold(fold32(b, b))));
}

template <int Steps>
struct CellMax {
    static void run(const uint8_t* base, size_t pitch, size_t channels, size_t n, uint8_t* out) {
        size_t i = 0;
        for (; i + 8 <= n; i += 8)
            _mm_storel_epi64(reinterpret_cast<__m128i*>(out + i), max_of_8_cells<Steps>(base + i * pitch, pitch, channels));
        for (; i < n; ++i) out[i] = max_of_cell<Steps>(base + i * pitch, channels);  // the last cells one at a time
    }

    // Per 8 cells: the passing lanes' mask picks a byte order (gate_order.hpp) that packs their
    // maxima to the front (pshufb) and, widened, gives their cell numbers; all 8 are stored at k
    // and k moves on by the count. No branch on the data. The cells' numbers are a vector stepped
    // by 8 and the cells a pointer stepped by 8 pitches: with fewer values live, the loop keeps
    // everything in registers (a spilled count and pointers were a third of its instructions).
    static size_t gate(const uint8_t* base, size_t pitch, size_t channels, size_t n, uint8_t gate, uint32_t first,
                       uint8_t* max_out, uint32_t* index_out) {
        const __m128i g = _mm_set1_epi8(char(gate));
        const uint64_t* orders = reinterpret_cast<const uint64_t*>(kGateOrder.lanes);
        __m256i number = _mm256_set1_epi32(int(first));
        const __m256i eight = _mm256_set1_epi32(8);
        const size_t groups = n / 8, step = 8 * pitch;
        uint8_t* mo = max_out;
        uint32_t* io = index_out;
        const uint8_t* p = base;
        for (const uint8_t* const end = base + groups * step; p != end; p += step) {
            const __m128i m = max_of_8_cells<Steps>(p, pitch, channels);
            const uint32_t pass = uint32_t(_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_max_epu8(m, g), m))) & 0xFFu;
            const __m128i order = _mm_cvtsi64_si128(static_cast<long long>(orders[pass]));
            _mm_storel_epi64(reinterpret_cast<__m128i*>(mo), _mm_shuffle_epi8(m, order));
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(io), _mm256_add_epi32(number, _mm256_cvtepu8_epi32(order)));
            number = _mm256_add_epi32(number, eight);
            const size_t count = size_t(__builtin_popcount(pass));
            mo += count;
            io += count;
        }
        size_t i = groups * 8, k = size_t(mo - max_out);
        for (; i < n; ++i)
            k = append_if_passing(max_of_cell<Steps>(base + i * pitch, channels), gate, uint32_t(first + i), max_out,
                                  index_out, k);
        return k;
    }
};

void cell_max_u8(const uint8_t* base, size_t pitch, size_t channels, size_t n, uint8_t* out) {
    if (channels < 32) return cell_max_u8_bytes(base, pitch, channels, n, out);
    switch ((channels - 1) / 32) {  // CellMax's Steps where fixed
        case 0: return CellMax<0>::run(base, pitch, channels, n, out);
        case 1: return CellMax<1>::run(base, pitch, channels, n, out);
        case 2: return CellMax<2>::run(base, pitch, channels, n, out);
        case 3: return CellMax<3>::run(base, pitch, channels, n, out);
        default: return CellMax<-1>::run(base, pitch, channels, n, out);
    }
}

size_t cell_max_gate_u8(const uint8_t* base, size_t pitch, size_t channels, size_t n, uint8_t gate, uint32_t first,
                        uint8_t* max_out, uint32_t* index_out) {
    if (channels < 32) return cell_max_gate_u8_bytes(base, pitch, channels, n, gate, first, max_out, index_out);
    switch ((channels - 1) / 32) {
        case 0: return CellMax<0>::gate(base, pitch, channels, n, gate, first, max_out, index_out);
        case 1: return CellMax<1>::gate(base, pitch, channels, n, gate, first, max_out, index_out);
        case 2: return CellMax<2>::gate(base, pitch, channels, n, gate, first, max_out, index_out);
        case 3: return CellMax<3>::gate(base, pitch, channels, n, gate, first, max_out, index_out);
        default: return CellMax<-1>::gate(base, pitch, channels, n, gate, first, max_out, index_out);
    }
}

HD_INLINE_CALLS void dfl16_u8_cells(const uint8_t* base, const size_t* offsets, size_t n, const ExpTable& t, float* out) {
    dfl16_u8_cells_with<dfl16_u8>(base, offsets, n, t, out);
}

struct Lane8 {
    using F = __m256;
    using M = __m256;
    static constexpr size_t kWidth = 8;
    static F load(const float* p) { return _mm256_loadu_ps(p); }
    static F set1(float v) { return _mm256_set1_ps(v); }
    static F add(F a, F b) { return _mm256_add_ps(a, b); }
    static F sub(F a, F b) { return _mm256_sub_ps(a, b); }
    static F mul(F a, F b) { return _mm256_mul_ps(a, b); }
    static F div(F a, F b) { return _mm256_div_ps(a, b); }
    static F sqrt(F a) { return _mm256_sqrt_ps(a); }
    static F abs(F a) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), a); }
    static M lt(F a, F b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
    static M gt(F a, F b) { return _mm256_cmp_ps(a, b, _CMP_GT_OQ); }
    static M and_(M a, M b) { return _mm256_and_ps(a, b); }
    static M andnot(M a, M b) { return _mm256_andnot_ps(b, a); }
    static void store(float* p, F v) { _mm256_storeu_ps(p, v); }
    static M le(F a, F b) { return _mm256_cmp_ps(a, b, _CMP_LE_OQ); }
    static M ge(F a, F b) { return _mm256_cmp_ps(a, b, _CMP_GE_OQ); }
    static F select(M m, F a, F b) { return _mm256_blendv_ps(b, a, m); }
    static F neg(F a) { return _mm256_xor_ps(a, _mm256_set1_ps(-0.0f)); }
    static M first(size_t n) {
        const int k = n < 8 ? int(n) : 8;
        return _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32(k), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)));
    }
    static uint32_t bits(M m) { return uint32_t(_mm256_movemask_ps(m)); }
};

size_t probiou_filter(const ProbiouList& l, size_t n, const ProbiouProbe& g, const ProbiouBounds& b, uint32_t* undecided) {
    return probiou_filter_impl<Lane8>(l, n, g, b, undecided);
}

void probiou_verdicts(const ProbiouList& l, size_t n, const ProbiouBounds& b, uint8_t* verdict) {
    probiou_verdicts_impl<Lane8>(l, n, b, verdict);
}

void probiou_gaussians(const ProbiouBoxes& in, size_t n, const ProbiouGaussians& out) {
    probiou_gaussians_impl<Lane8>(in, n, out);
}

void enclosing_boxes(const ProbiouBoxes& in, size_t n, float width, float height, bool normalize,
                     const EnclosingBoxes& out) {
    enclosing_boxes_impl<Lane8>(in, n, width, height, normalize, out);
}

// Bit j: p[j] >= limit, j < 32.
inline uint32_t at_least32(const uint8_t* p, uint8_t limit) {
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    return uint32_t(_mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_max_epu8(a, _mm256_set1_epi8(char(limit))), a)));
}

// 32 channels a comparison (cells_scan.hpp).
size_t cells_at_least_u8(const uint8_t* const* cells, const uint8_t* limits, size_t n, size_t channels,
                         uint32_t* out_cell, uint32_t* out_channel) {
    return cells_at_least_with<32>(at_least32, cells, limits, n, channels, out_cell, out_channel);
}

// Sixteen candidates (two vectors) at a time where there are, each score broadcast once against
// them: a compare and a subtract per vector per score, no horizontal sum.
void count_above(const float* s, size_t n, uint32_t* above) {
    const size_t m = (n + 7) & ~size_t(7);
    size_t i = 0;
    for (; i + 16 <= m; i += 16) {
        const __m256 x0 = _mm256_loadu_ps(s + i), x1 = _mm256_loadu_ps(s + i + 8);
        __m256i a0 = _mm256_setzero_si256(), a1 = _mm256_setzero_si256();
        for (size_t j = 0; j < n; ++j) {
            const __m256 y = _mm256_broadcast_ss(s + j);
            a0 = _mm256_sub_epi32(a0, _mm256_castps_si256(_mm256_cmp_ps(y, x0, _CMP_GT_OQ)));
            a1 = _mm256_sub_epi32(a1, _mm256_castps_si256(_mm256_cmp_ps(y, x1, _CMP_GT_OQ)));
        }
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(above + i), a0);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(above + i + 8), a1);
    }
    if (i < m) {
        const __m256 x = _mm256_loadu_ps(s + i);
        __m256i a = _mm256_setzero_si256();
        for (size_t j = 0; j < n; ++j)
            a = _mm256_sub_epi32(a, _mm256_castps_si256(_mm256_cmp_ps(_mm256_broadcast_ss(s + j), x, _CMP_GT_OQ)));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(above + i), a);
    }
}

const Table kAvx2{"avx2", scan_u8, scan_u16, scan_f32, scan_u8_uniform, scan_u16_uniform, dfl16, dfl16_u8, dfl16_u8_cells, any_iou_over, probiou_filter, probiou_verdicts, probiou_gaussians, enclosing_boxes, dequant_u8, byte_sum, cell_max_u8, cell_max_gate_u8, cells_at_least_u8, count_above, nms_list};

}  // namespace

const Table* avx2_table() { return &kAvx2; }

}  // namespace kernels
}  // namespace hailo_decode
#else
#include "kernels.hpp"
namespace hailo_decode { namespace kernels { const Table* avx2_table() { return nullptr; } } }
#endif
