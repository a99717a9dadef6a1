// SSE2 kernels (the x86-64 baseline). Must match scalar.cpp bit for bit.
#if defined(__x86_64__) || defined(_M_X64)
#include <emmintrin.h>

#include "dfl_cells.hpp"
#include "iou_tail.hpp"
#include "cell_max_tail.hpp"
#include "cells_scan.hpp"
#include "kernels.hpp"
#include "nms_list.hpp"
#include "probiou_filter.hpp"
#include "probiou_gaussians.hpp"
#include "rotated_enclosing.hpp"

namespace hailo_decode {
namespace kernels {
namespace {

inline size_t emit(uint32_t mask, size_t base, uint32_t* out, size_t k) {
    while (mask) {
        out[k++] = uint32_t(base + size_t(__builtin_ctz(mask)));
        mask &= mask - 1;
    }
    return k;
}

size_t scan_u8(const uint8_t* v, const uint8_t* l, size_t n, uint32_t* out) {
    size_t i = 0, k = 0;
    const __m128i zero = _mm_setzero_si128();
    // 64 bytes per test: saturating limit - value is 0 exactly where value >= limit.
    // (Blocks with a hit are recomputed rather than kept in an array, which GCC spills.)
    auto gap = [&](size_t j) {
        return _mm_subs_epu8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(l + j)),
                             _mm_loadu_si128(reinterpret_cast<const __m128i*>(v + j)));
    };
    for (; i + 64 <= n; i += 64) {
        const __m128i m = _mm_min_epu8(_mm_min_epu8(gap(i), gap(i + 16)), _mm_min_epu8(gap(i + 32), gap(i + 48)));
        if (!_mm_movemask_epi8(_mm_cmpeq_epi8(m, zero))) continue;
        for (size_t j = 0; j < 64; j += 16)
            k = emit(uint32_t(_mm_movemask_epi8(_mm_cmpeq_epi8(gap(i + j), zero))), i + j, out, k);
    }
    for (; i + 16 <= n; i += 16) {
        const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(v + i));
        const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(l + i));
        const uint32_t m = uint32_t(_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_max_epu8(a, b), a)));
        if (m) k = emit(m, i, out, k);
    }
    for (; i < n; ++i)
        if (v[i] >= l[i]) out[k++] = uint32_t(i);
    return k;
}

size_t scan_u8_uniform(const uint8_t* v, uint8_t limit, size_t n, uint32_t* out) {
    size_t i = 0, k = 0;
    const __m128i lim = _mm_set1_epi8(char(limit));
    auto passing = [&](__m128i a) { return uint32_t(_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_max_epu8(a, lim), a))); };
    auto at = [&](size_t j) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(v + j)); };
    for (; i + 64 <= n; i += 64) {  // 64 bytes per test: their maximum passes iff any byte does
        if (!passing(_mm_max_epu8(_mm_max_epu8(at(i), at(i + 16)), _mm_max_epu8(at(i + 32), at(i + 48))))) continue;
        for (size_t j = 0; j < 64; j += 16) k = emit(passing(at(i + j)), i + j, out, k);
    }
    for (; i + 16 <= n; i += 16) {
        const uint32_t m = passing(_mm_loadu_si128(reinterpret_cast<const __m128i*>(v + i)));
        if (m) k = emit(m, i, out, k);
    }
    for (; i < n; ++i)
        if (v[i] >= limit) out[k++] = uint32_t(i);
    return k;
}

size_t scan_u16_uniform(const uint16_t* v, uint16_t limit, size_t n, uint32_t* out) {
    size_t i = 0, k = 0;
    // SSE2 compares 16-bit lanes as signed only: flipping the sign bit of both sides keeps the order.
    const __m128i bias = _mm_set1_epi16(short(0x8000)), lim = _mm_set1_epi16(short(limit ^ 0x8000u));
    auto biased = [&](size_t at) { return _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(v + at)), bias); };
    auto passing = [&](__m128i b) {  // lanes with b >= lim
        return ~uint32_t(_mm_movemask_epi8(_mm_packs_epi16(_mm_cmpgt_epi16(lim, b), _mm_setzero_si128()))) & 0xffu;
    };
    for (; i + 32 <= n; i += 32) {  // 32 values per test: their maximum passes iff any does
        if (!passing(_mm_max_epi16(_mm_max_epi16(biased(i), biased(i + 8)), _mm_max_epi16(biased(i + 16), biased(i + 24)))))
            continue;
        for (size_t j = 0; j < 32; j += 8) k = emit(passing(biased(i + j)), i + j, out, k);
    }
    for (; i + 8 <= n; i += 8) {
        const uint32_t m = passing(biased(i));
        if (m) k = emit(m, i, out, k);
    }
    for (; i < n; ++i)
        if (v[i] >= limit) out[k++] = uint32_t(i);
    return k;
}

size_t scan_u16(const uint16_t* v, const uint16_t* l, size_t n, uint32_t* out) {
    size_t i = 0, k = 0;
    const __m128i zero = _mm_setzero_si128();
    for (; i + 8 <= n; i += 8) {
        const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(v + i));
        const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(l + i));
        // a >= b  <=>  saturating b - a == 0
        const __m128i ge = _mm_cmpeq_epi16(_mm_subs_epu16(b, a), zero);
        const uint32_t m = uint32_t(_mm_movemask_epi8(_mm_packs_epi16(ge, zero)));
        if (m) k = emit(m, i, out, k);
    }
    for (; i < n; ++i)
        if (v[i] >= l[i]) out[k++] = uint32_t(i);
    return k;
}

size_t scan_f32(const float* v, const float* l, size_t n, uint32_t* out) {
    size_t i = 0, k = 0;
    for (; i + 4 <= n; i += 4) {
        const uint32_t m = uint32_t(_mm_movemask_ps(_mm_cmpge_ps(_mm_loadu_ps(v + i), _mm_loadu_ps(l + i))));
        if (m) k = emit(m, i, out, k);
    }
    for (; i < n; ++i)
        if (v[i] >= l[i]) out[k++] = uint32_t(i);
    return k;
}

inline __m128 exp_neg(__m128 x) {
    x = _mm_max_ps(x, _mm_set1_ps(kExpMin));
    const __m128i n = _mm_cvttps_epi32(_mm_sub_ps(_mm_mul_ps(x, _mm_set1_ps(kLog2e)), _mm_set1_ps(0.5f)));
    const __m128 fn = _mm_cvtepi32_ps(n);
    __m128 r = _mm_sub_ps(x, _mm_mul_ps(fn, _mm_set1_ps(kLn2Hi)));
    r = _mm_sub_ps(r, _mm_mul_ps(fn, _mm_set1_ps(kLn2Lo)));
    const __m128 r2 = _mm_mul_ps(r, r);
    __m128 p = _mm_set1_ps(kExpP0);
    p = _mm_add_ps(_mm_mul_ps(p, r), _mm_set1_ps(kExpP1));
    p = _mm_add_ps(_mm_mul_ps(p, r), _mm_set1_ps(kExpP2));
    p = _mm_add_ps(_mm_mul_ps(p, r), _mm_set1_ps(kExpP3));
    p = _mm_add_ps(_mm_mul_ps(p, r), _mm_set1_ps(kExpP4));
    p = _mm_add_ps(_mm_mul_ps(p, r), _mm_set1_ps(kExpP5));
    p = _mm_add_ps(_mm_mul_ps(p, r2), r);
    p = _mm_add_ps(p, _mm_set1_ps(1.0f));
    const __m128 scale = _mm_castsi128_ps(_mm_slli_epi32(_mm_add_epi32(n, _mm_set1_epi32(127)), 23));
    return _mm_mul_ps(p, scale);
}

// [a0 + a1, a2 + a3, b0 + b1, b2 + b3], as SSE3's hadd.
inline __m128 pairs(__m128 a, __m128 b) {
    return _mm_add_ps(_mm_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0)), _mm_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1)));
}

// The expectations of four sides from their exps, e[4 side + j] = e_(4j..4j+3): sums in the
// fixed tree ((v0 + v1) + (v2 + v3)) + ((v4 + v5) + (v6 + v7)), four sides at once.
inline void expectations(const __m128 e[16], float out[4]) {
    const __m128 idx[4] = {_mm_setr_ps(0, 1, 2, 3), _mm_setr_ps(4, 5, 6, 7), _mm_setr_ps(8, 9, 10, 11),
                           _mm_setr_ps(12, 13, 14, 15)};
    __m128 v[4], w[4];
    for (int side = 0; side < 4; ++side) {
        const __m128* es = e + 4 * side;
        v[side] = pairs(_mm_add_ps(es[0], es[2]), _mm_add_ps(es[1], es[3]));
        w[side] = pairs(_mm_add_ps(_mm_mul_ps(idx[0], es[0]), _mm_mul_ps(idx[2], es[2])),
                        _mm_add_ps(_mm_mul_ps(idx[1], es[1]), _mm_mul_ps(idx[3], es[3])));
    }
    const __m128 sum = pairs(pairs(v[0], v[1]), pairs(v[2], v[3]));
    _mm_storeu_ps(out, _mm_div_ps(pairs(pairs(w[0], w[1]), pairs(w[2], w[3])), sum));
}

void dfl16(const float* x, float out[4]) {
    __m128 e[16], m[4];
    for (int side = 0; side < 4; ++side) {  // the four maxima, then 16 independent exps
        const float* s = x + 16 * side;
        __m128 v = _mm_max_ps(_mm_max_ps(_mm_loadu_ps(s), _mm_loadu_ps(s + 4)),
                              _mm_max_ps(_mm_loadu_ps(s + 8), _mm_loadu_ps(s + 12)));
        v = _mm_max_ps(v, _mm_shuffle_ps(v, v, _MM_SHUFFLE(1, 0, 3, 2)));
        m[side] = _mm_max_ps(v, _mm_shuffle_ps(v, v, _MM_SHUFFLE(2, 3, 0, 1)));
    }
    for (int j = 0; j < 16; ++j) e[j] = exp_neg(_mm_sub_ps(_mm_loadu_ps(x + 4 * j), m[j / 4]));
    expectations(e, out);
}

void dfl16_u8(const uint8_t* q, const ExpTable& t, float out[4]) {
    alignas(16) float looked_up[64];  // SSE2 has no gather: the look-ups are scalar
    for (int i = 0; i < 64; ++i) looked_up[i] = t.full[q[i]];
    __m128 e[16];
    for (int j = 0; j < 16; ++j) e[j] = _mm_load_ps(looked_up + 4 * j);
    expectations(e, out);
}

// HailoRT's compute_iou test of four boxes (l*) against one (b*, broadcast), lane by lane, as the
// AVX2 kernel: all ones where the IoU passes th; no overlap is an IoU of 0.
inline __m128 iou_passes(__m128 ly0, __m128 lx0, __m128 ly1, __m128 lx1, __m128 la, __m128 by0, __m128 bx0, __m128 by1,
                         __m128 bx1, __m128 ba, __m128 t, bool inclusive) {
    const __m128 zero = _mm_setzero_ps();
    const __m128 ow = _mm_sub_ps(_mm_min_ps(lx1, bx1), _mm_max_ps(lx0, bx0));
    const __m128 oh = _mm_sub_ps(_mm_min_ps(ly1, by1), _mm_max_ps(ly0, by0));
    const __m128 overlap = _mm_and_ps(_mm_cmpgt_ps(ow, zero), _mm_cmpgt_ps(oh, zero));
    const __m128 inter = _mm_mul_ps(ow, oh);
    const __m128 iou = _mm_and_ps(overlap, _mm_div_ps(inter, _mm_sub_ps(_mm_add_ps(la, ba), inter)));
    return inclusive ? _mm_cmpge_ps(iou, t) : _mm_cmpgt_ps(iou, t);
}

bool any_iou_over(const float* y0, const float* x0, const float* y1, const float* x1, const float* area,
                  size_t n, const float b[4], float b_area, float th, bool inclusive) {
    const __m128 by0 = _mm_set1_ps(b[0]), bx0 = _mm_set1_ps(b[1]), by1 = _mm_set1_ps(b[2]), bx1 = _mm_set1_ps(b[3]);
    const __m128 ba = _mm_set1_ps(b_area), t = _mm_set1_ps(th);
    // Whether any of the `lanes` passes.
    auto hits = [&](const float* ly0, const float* lx0, const float* ly1, const float* lx1, const float* la, __m128 lanes) {
        const __m128 hit = iou_passes(_mm_loadu_ps(ly0), _mm_loadu_ps(lx0), _mm_loadu_ps(ly1), _mm_loadu_ps(lx1),
                                      _mm_loadu_ps(la), by0, bx0, by1, bx1, ba, t, inclusive);
        return _mm_movemask_ps(_mm_and_ps(lanes, hit)) != 0;
    };
    const __m128 all = _mm_castsi128_ps(_mm_set1_epi32(-1));
    size_t i = 0;
    for (; i + 4 <= n; i += 4)
        if (hits(y0 + i, x0 + i, y1 + i, x1 + i, area + i, all)) return true;
    if (i == n) return false;
    // The last 1-3 boxes, copied into one vector's room (SSE2 has no masked load).
    alignas(16) float tail[5][4] = {};
    copy_iou_tail(y0, x0, y1, x1, area, i, n, tail);
    const __m128 lanes = _mm_castsi128_ps(_mm_cmpgt_epi32(_mm_set1_epi32(int(n - i)), _mm_setr_epi32(0, 1, 2, 3)));
    return hits(tail[0], tail[1], tail[2], tail[3], tail[4], lanes);
}

// Greedy NMS of one list (kernels.hpp; the loop: nms_list.hpp), four lanes: no call or tail copy
// per box (any_iou_over copies a list's last 1-3 boxes into a vector's room on every call).
struct ListLanes {
    using F = __m128;
    using Mask = __m128;
    static constexpr size_t kWidth = 4;
    static F zero() { return _mm_setzero_ps(); }
    static F set1(float x) { return _mm_set1_ps(x); }
    static F load(const float* p) { return _mm_load_ps(p); }
    static void store(float* p, F v) { _mm_store_ps(p, v); }
    static Mask all() { return _mm_castsi128_ps(_mm_set1_epi32(-1)); }
    static Mask first(size_t n) { return _mm_castsi128_ps(_mm_cmpgt_epi32(_mm_set1_epi32(int(n)), _mm_setr_epi32(0, 1, 2, 3))); }
    static Mask slot(size_t n) { return _mm_castsi128_ps(_mm_cmpeq_epi32(_mm_set1_epi32(int(n)), _mm_setr_epi32(0, 1, 2, 3))); }
    static F put(F r, F v, Mask slot) { return _mm_or_ps(_mm_and_ps(slot, v), _mm_andnot_ps(slot, r)); }
    static bool any_passes(Mask live, const F l[5], const F b[5], F t, bool inclusive) {
        return _mm_movemask_ps(_mm_and_ps(live, iou_passes(l[0], l[1], l[2], l[3], l[4], b[0], b[1], b[2], b[3], b[4], t, inclusive))) != 0;
    }
};

size_t nms_list(const float* y0, const float* x0, const float* y1, const float* x1, const float* area, size_t m,
                float th, bool inclusive, size_t max_keep, uint8_t* keep, float* kept) {
    return nms_list_with<ListLanes>(y0, x0, y1, x1, area, m, th, inclusive, max_keep, keep, kept);
}

void dequant_u8(const uint8_t* src, size_t n, float zp, float scale, float* dst) {
    size_t i = 0;
    const __m128i zero = _mm_setzero_si128();
    const __m128 z = _mm_set1_ps(zp), s = _mm_set1_ps(scale);
    for (; i + 16 <= n; i += 16) {
        const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
        const __m128i lo = _mm_unpacklo_epi8(b, zero), hi = _mm_unpackhi_epi8(b, zero);
        const __m128i w[4] = {_mm_unpacklo_epi16(lo, zero), _mm_unpackhi_epi16(lo, zero), _mm_unpacklo_epi16(hi, zero),
                              _mm_unpackhi_epi16(hi, zero)};
        for (int j = 0; j < 4; ++j) _mm_storeu_ps(dst + i + 4 * j, _mm_mul_ps(_mm_sub_ps(_mm_cvtepi32_ps(w[j]), z), s));
    }
    for (; i < n; ++i) dst[i] = (float(src[i]) - zp) * scale;
}

uint64_t byte_sum(const uint8_t* p, size_t n) {
    // Four independent accumulators, as the AVX2 floor (see there).
    const __m128i zero = _mm_setzero_si128();
    __m128i acc[4] = {zero, zero, zero, zero};
    size_t i = 0;
    for (; i + 64 <= n; i += 64)
        for (int j = 0; j < 4; ++j)
            acc[j] = _mm_add_epi64(acc[j], _mm_sad_epu8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i + 16 * j)), zero));
    for (; i + 16 <= n; i += 16)
        acc[0] = _mm_add_epi64(acc[0], _mm_sad_epu8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i)), zero));
    const __m128i a = _mm_add_epi64(_mm_add_epi64(acc[0], acc[1]), _mm_add_epi64(acc[2], acc[3]));
    uint64_t s = uint64_t(_mm_cvtsi128_si64(a)) + uint64_t(_mm_cvtsi128_si64(_mm_unpackhi_epi64(a, a)));
    for (; i < n; ++i) s += p[i];
    return s;
}

// As avx2.cpp's cell_max_u8, 16 bytes at a time.
inline __m128i partial_max16(const uint8_t* p, size_t channels) {
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    size_t c = 16;
    for (; c + 16 <= channels; c += 16) v = _mm_max_epu8(v, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + c)));
    if (c < channels) v = _mm_max_epu8(v, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + channels - 16)));
    return v;
}
inline __m128i fold8(__m128i a, __m128i b) { return _mm_max_epu8(_mm_unpacklo_epi8(a, b), _mm_unpackhi_epi8(a, b)); }
inline __m128i fold16(__m128i a, __m128i b) { return _mm_max_epu8(_mm_unpacklo_epi16(a, b), _mm_unpackhi_epi16(a, b)); }
inline __m128i fold32(__m128i a, __m128i b) { return _mm_max_epu8(_mm_unpacklo_epi32(a, b), _mm_unpackhi_epi32(a, b)); }
inline __m128i last_fold(__m128i x) { return _mm_max_epu8(x, _mm_srli_si128(x, 8)); }

// The maxima of 8 cells (channels >= 16), in the low 8 bytes.
inline __m128i max_of_8_cells(const uint8_t* p, size_t pitch, size_t channels) {
    const __m128i a0 = fold8(partial_max16(p, channels), partial_max16(p + pitch, channels));
    const __m128i a1 = fold8(partial_max16(p + 2 * pitch, channels), partial_max16(p + 3 * pitch, channels));
    const __m128i a2 = fold8(partial_max16(p + 4 * pitch, channels), partial_max16(p + 5 * pitch, channels));
    const __m128i a3 = fold8(partial_max16(p + 6 * pitch, channels), partial_max16(p + 7 * pitch, channels));
    return last_fold(fold32(fold16(a0, a1), fold16(a2, a3)));
}

inline uint8_t max_of_cell(const uint8_t* p, size_t channels) {
    const __m128i v = partial_max16(p, channels);
    const __m128i a = fold8(v, v);
    const __m128i b = fold16(a, a);
    return uint8_t(_mm_cvtsi128_si32(last_fold(fold32(b, b))));
}

void cell_max_u8(const uint8_t* base, size_t pitch, size_t channels, size_t n, uint8_t* out) {
    if (channels < 16) {
        cell_max_u8_bytes(base, pitch, channels, n, out);
        return;
    }
    size_t i = 0;
    for (; i + 8 <= n; i += 8) _mm_storel_epi64(reinterpret_cast<__m128i*>(out + i), max_of_8_cells(base + i * pitch, pitch, channels));
    for (; i < n; ++i) out[i] = max_of_cell(base + i * pitch, channels);
}

// SSE2 has no byte shuffle: the 8 maxima go through memory and the scalar append.
size_t cell_max_gate_u8(const uint8_t* base, size_t pitch, size_t channels, size_t n, uint8_t gate, uint32_t first,
                        uint8_t* max_out, uint32_t* index_out) {
    if (channels < 16) return cell_max_gate_u8_bytes(base, pitch, channels, n, gate, first, max_out, index_out);
    size_t i = 0, k = 0;
    alignas(16) uint8_t m[16];
    for (; i + 8 <= n; i += 8) {
        _mm_store_si128(reinterpret_cast<__m128i*>(m), max_of_8_cells(base + i * pitch, pitch, channels));
        for (size_t j = 0; j < 8; ++j) k = append_if_passing(m[j], gate, uint32_t(first + i + j), max_out, index_out, k);
    }
    for (; i < n; ++i)
        k = append_if_passing(max_of_cell(base + i * pitch, channels), gate, uint32_t(first + i), max_out, index_out, k);
    return k;
}

HD_INLINE_CALLS void dfl16_u8_cells(const uint8_t* base, const size_t* offsets, size_t n, const ExpTable& t, float* out) {
    dfl16_u8_cells_with<dfl16_u8>(base, offsets, n, t, out);
}

struct Lane4 {
    using F = __m128;
    using M = __m128;
    static constexpr size_t kWidth = 4;
    static F load(const float* p) { return _mm_loadu_ps(p); }
    static F set1(float v) { return _mm_set1_ps(v); }
    static F add(F a, F b) { return _mm_add_ps(a, b); }
    static F sub(F a, F b) { return _mm_sub_ps(a, b); }
    static F mul(F a, F b) { return _mm_mul_ps(a, b); }
    static F div(F a, F b) { return _mm_div_ps(a, b); }
    static F sqrt(F a) { return _mm_sqrt_ps(a); }
    static F abs(F a) { return _mm_andnot_ps(_mm_set1_ps(-0.0f), a); }
    static M lt(F a, F b) { return _mm_cmplt_ps(a, b); }
    static M gt(F a, F b) { return _mm_cmpgt_ps(a, b); }
    static M and_(M a, M b) { return _mm_and_ps(a, b); }
    static M andnot(M a, M b) { return _mm_andnot_ps(b, a); }
    static void store(float* p, F v) { _mm_storeu_ps(p, v); }
    static M le(F a, F b) { return _mm_cmple_ps(a, b); }
    static M ge(F a, F b) { return _mm_cmpge_ps(a, b); }
    static F select(M m, F a, F b) { return _mm_or_ps(_mm_and_ps(m, a), _mm_andnot_ps(m, b)); }
    static F neg(F a) { return _mm_xor_ps(a, _mm_set1_ps(-0.0f)); }
    static M first(size_t n) {
        const int k = n < 4 ? int(n) : 4;
        return _mm_castsi128_ps(_mm_cmpgt_epi32(_mm_set1_epi32(k), _mm_setr_epi32(0, 1, 2, 3)));
    }
    static uint32_t bits(M m) { return uint32_t(_mm_movemask_ps(m)); }
};

size_t probiou_filter(const ProbiouList& l, size_t n, const ProbiouProbe& g, const ProbiouBounds& b, uint32_t* undecided) {
    return probiou_filter_impl<Lane4>(l, n, g, b, undecided);
}

void probiou_verdicts(const ProbiouList& l, size_t n, const ProbiouBounds& b, uint8_t* verdict) {
    probiou_verdicts_impl<Lane4>(l, n, b, verdict);
}

void probiou_gaussians(const ProbiouBoxes& in, size_t n, const ProbiouGaussians& out) {
    probiou_gaussians_impl<Lane4>(in, n, out);
}

void enclosing_boxes(const ProbiouBoxes& in, size_t n, float width, float height, bool normalize,
                     const EnclosingBoxes& out) {
    enclosing_boxes_impl<Lane4>(in, n, width, height, normalize, out);
}

// 16 channels a comparison (cells_scan.hpp), bit j: p[j] >= limit.
size_t cells_at_least_u8(const uint8_t* const* cells, const uint8_t* limits, size_t n, size_t channels,
                         uint32_t* out_cell, uint32_t* out_channel) {
    return cells_at_least_with<16>([](const uint8_t* p, uint8_t limit) {
        const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
        return uint32_t(_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_max_epu8(a, _mm_set1_epi8(char(limit))), a)));
    }, cells, limits, n, channels, out_cell, out_channel);
}

// Eight candidates (two vectors) at a time, each score broadcast once against them: a compare
// and a subtract per vector per score, no horizontal sum.
void count_above(const float* s, size_t n, uint32_t* above) {
    const size_t m = (n + 7) & ~size_t(7);
    for (size_t i = 0; i < m; i += 8) {
        const __m128 x0 = _mm_loadu_ps(s + i), x1 = _mm_loadu_ps(s + i + 4);
        __m128i a0 = _mm_setzero_si128(), a1 = _mm_setzero_si128();
        for (size_t j = 0; j < n; ++j) {
            const __m128 y = _mm_set1_ps(s[j]);
            a0 = _mm_sub_epi32(a0, _mm_castps_si128(_mm_cmpgt_ps(y, x0)));
            a1 = _mm_sub_epi32(a1, _mm_castps_si128(_mm_cmpgt_ps(y, x1)));
        }
        _mm_storeu_si128(reinterpret_cast<__m128i*>(above + i), a0);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(above + i + 4), a1);
    }
}

const Table kSse2{"sse2", scan_u8, scan_u16, scan_f32, scan_u8_uniform, scan_u16_uniform, dfl16, dfl16_u8, dfl16_u8_cells, any_iou_over, probiou_filter, probiou_verdicts, probiou_gaussians, enclosing_boxes, dequant_u8, byte_sum, cell_max_u8, cell_max_gate_u8, cells_at_least_u8, count_above, nms_list};

}  // namespace

const Table* sse2_table() { return &kSse2; }

}  // namespace kernels
}  // namespace hailo_decode
#else
#include "kernels.hpp"
namespace hailo_decode { namespace kernels { const Table* sse2_table() { return nullptr; } } }
#endif
