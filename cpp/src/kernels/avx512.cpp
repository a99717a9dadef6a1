// AVX-512 (F, VL, BW) kernels for the detection path, compiled with those flags (no -mfma, as
// avx2.cpp) and used only at the "avx512vnni" level, after its CPU check: the kernels whose work
// is a few short vectors a call (the gate and class scans of a passing cell, the NMS test of one
// box against a kept list, the candidate sort's rank count) take 64 bytes or 16 floats a vector
// and end in a mask register, so a list's or a row's last partial vector is one masked load
// instead of a scalar or overlapping tail. Every other entry is AVX2's (dispatch.cpp puts the
// table together). Must match scalar.cpp bit for bit, as every path.
#if (defined(__x86_64__) || defined(_M_X64)) && defined(__AVX512F__) && defined(__AVX512VL__) && \
    defined(__AVX512BW__)
#include <immintrin.h>

#include "cells_scan.hpp"
#include "kernels.hpp"
#include "nms_list.hpp"

// GCC 12's AVX-512 intrinsics start from _mm512_undefined_*(), which -Wall reports as used
// uninitialized (a false positive of the headers, as in mask_avx512vnni.cpp).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace hailo_decode {
namespace kernels {
namespace {

inline size_t emit64(uint64_t mask, size_t base, uint32_t* out, size_t k) {
    while (mask) {
        out[k++] = uint32_t(base + size_t(__builtin_ctzll(mask)));
        mask &= mask - 1;
    }
    return k;
}

// The first n bits (n <= 64).
inline uint64_t low_bits(size_t n) { return n >= 64 ? ~uint64_t(0) : (uint64_t(1) << n) - 1; }

size_t scan_u8_uniform(const uint8_t* v, uint8_t limit, size_t n, uint32_t* out) {
    const __m512i lim = _mm512_set1_epi8(char(limit));
    auto passing = [&](__m512i a) { return uint64_t(_mm512_cmpge_epu8_mask(a, lim)); };
    // `bytes` (< 64) from p in one masked load, the lanes past them left out (a limit of 0 would
    // pass their zeros).
    auto part = [&](const uint8_t* p, size_t bytes) {
        const __mmask64 m = low_bits(bytes);
        return uint64_t(_mm512_mask_cmpge_epu8_mask(m, _mm512_maskz_loadu_epi8(m, p), lim));
    };
    // The bytes before the first 64-byte boundary (or all n, when fewer) in one masked load, so
    // that the body's loads are aligned and never straddle two cache lines.
    const size_t head = (64 - (reinterpret_cast<uintptr_t>(v) & 63)) & 63;
    size_t i = head < n ? head : n, k = 0;
    if (i) k = emit64(part(v, i), 0, out, k);
    auto at = [&](size_t j) { return _mm512_load_si512(reinterpret_cast<const void*>(v + j)); };
    // 256 bytes per test: their maximum passes iff any byte does; a block with a hit is read
    // again (it is in L1) rather than kept.
    for (; i + 256 <= n; i += 256) {
        const __m512i m = _mm512_max_epu8(_mm512_max_epu8(at(i), at(i + 64)), _mm512_max_epu8(at(i + 128), at(i + 192)));
        if (!passing(m)) continue;
        for (size_t j = 0; j < 256; j += 64) k = emit64(passing(at(i + j)), i + j, out, k);
    }
    for (; i + 64 <= n; i += 64) k = emit64(passing(at(i)), i, out, k);
    if (i < n) k = emit64(part(v + i, n - i), i, out, k);
    return k;
}

// Bit j set iff p[j] >= limit, for the first `bytes` (<= 64) bytes of p: one masked load, so
// nothing past them is read.
inline uint64_t at_least(const uint8_t* p, uint8_t limit, size_t bytes) {
    const __mmask64 m = low_bits(bytes);
    return uint64_t(_mm512_mask_cmpge_epu8_mask(m, _mm512_maskz_loadu_epi8(m, p), _mm512_set1_epi8(char(limit))));
}

size_t cells_at_least_u8(const uint8_t* const* cells, const uint8_t* limits, size_t n, size_t channels,
                         uint32_t* out_cell, uint32_t* out_channel) {
    size_t k = 0;
    if (channels <= 128) {
        // At most two words a cell, the second (if any) a masked load of the rest: YOLOX's 80
        // classes are one full and one 16-byte vector, no overlapping read.
        const size_t first = channels < 64 ? channels : 64, rest = channels - first;
        for (size_t i = 0; i < n; ++i) {
            const uint8_t* p = cells[i];
            k = emit_cell_hits(at_least(p, limits[i], first), 0, uint32_t(i), out_cell, out_channel, k);
            if (rest) k = emit_cell_hits(at_least(p + 64, limits[i], rest), 64, uint32_t(i), out_cell, out_channel, k);
        }
        return k;
    }
    for (size_t i = 0; i < n; ++i)
        for (size_t c = 0; c < channels; c += 64) {
            const size_t bytes = channels - c < 64 ? channels - c : 64;
            k = emit_cell_hits(at_least(cells[i] + c, limits[i], bytes), c, uint32_t(i), out_cell, out_channel, k);
        }
    return k;
}

// As AVX2's: each score broadcast once against 32 candidates (two registers) at a time, then 16,
// then the last 8 (m is a multiple of 8); a compare into a mask and a masked increment a
// register per score, no horizontal sum.
void count_above(const float* s, size_t n, uint32_t* above) {
    const size_t m = (n + 7) & ~size_t(7);
    const __m512i one = _mm512_set1_epi32(1);
    size_t i = 0;
    for (; i + 32 <= m; i += 32) {
        const __m512 x0 = _mm512_loadu_ps(s + i), x1 = _mm512_loadu_ps(s + i + 16);
        __m512i a0 = _mm512_setzero_si512(), a1 = _mm512_setzero_si512();
        for (size_t j = 0; j < n; ++j) {
            const __m512 y = _mm512_set1_ps(s[j]);
            a0 = _mm512_mask_add_epi32(a0, _mm512_cmp_ps_mask(y, x0, _CMP_GT_OQ), a0, one);
            a1 = _mm512_mask_add_epi32(a1, _mm512_cmp_ps_mask(y, x1, _CMP_GT_OQ), a1, one);
        }
        _mm512_storeu_si512(above + i, a0);
        _mm512_storeu_si512(above + i + 16, a1);
    }
    for (; i + 16 <= m; i += 16) {
        const __m512 x = _mm512_loadu_ps(s + i);
        __m512i a = _mm512_setzero_si512();
        for (size_t j = 0; j < n; ++j) a = _mm512_mask_add_epi32(a, _mm512_cmp_ps_mask(_mm512_set1_ps(s[j]), x, _CMP_GT_OQ), a, one);
        _mm512_storeu_si512(above + i, a);
    }
    if (i < m) {
        const __m256 x = _mm256_loadu_ps(s + i);
        const __m256i one8 = _mm256_set1_epi32(1);
        __m256i a = _mm256_setzero_si256();
        for (size_t j = 0; j < n; ++j)
            a = _mm256_mask_add_epi32(a, _mm256_cmp_ps_mask(_mm256_set1_ps(s[j]), x, _CMP_GT_OQ), a, one8);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(above + i), a);
    }
}

// HailoRT's compute_iou test of sixteen boxes (l*) against one (b*, broadcast), in the lanes of
// `live`: the lanes where the IoU passes th. No overlap is an IoU of 0 (a zero-masked division,
// as compute_iou's early return), so threshold 0, inclusive, passes.
inline __mmask16 iou_passes(__mmask16 live, __m512 ly0, __m512 lx0, __m512 ly1, __m512 lx1, __m512 la, __m512 by0,
                            __m512 bx0, __m512 by1, __m512 bx1, __m512 ba, __m512 t, bool inclusive) {
    const __m512 zero = _mm512_setzero_ps();
    const __m512 ow = _mm512_sub_ps(_mm512_min_ps(lx1, bx1), _mm512_max_ps(lx0, bx0));
    const __m512 oh = _mm512_sub_ps(_mm512_min_ps(ly1, by1), _mm512_max_ps(ly0, by0));
    const __mmask16 overlap = _mm512_mask_cmp_ps_mask(_mm512_cmp_ps_mask(ow, zero, _CMP_GT_OQ), oh, zero, _CMP_GT_OQ);
    const __m512 inter = _mm512_mul_ps(ow, oh);
    const __m512 uni = _mm512_sub_ps(_mm512_add_ps(la, ba), inter);
    const __m512 iou = _mm512_maskz_div_ps(overlap, inter, uni);
    return inclusive ? _mm512_mask_cmp_ps_mask(live, iou, t, _CMP_GE_OQ) : _mm512_mask_cmp_ps_mask(live, iou, t, _CMP_GT_OQ);
}

// AVX2's test, sixteen kept boxes a vector and the list's last partial vector as masked loads
// (lanes past n are neither read nor counted).
bool any_iou_over(const float* y0, const float* x0, const float* y1, const float* x1, const float* area, size_t n,
                  const float b[4], float b_area, float th, bool inclusive) {
    const __m512 by0 = _mm512_set1_ps(b[0]), bx0 = _mm512_set1_ps(b[1]), by1 = _mm512_set1_ps(b[2]),
                 bx1 = _mm512_set1_ps(b[3]);
    const __m512 ba = _mm512_set1_ps(b_area), t = _mm512_set1_ps(th);
    auto hits = [&](__mmask16 lanes, size_t i) {
        return iou_passes(lanes, _mm512_maskz_loadu_ps(lanes, y0 + i), _mm512_maskz_loadu_ps(lanes, x0 + i),
                          _mm512_maskz_loadu_ps(lanes, y1 + i), _mm512_maskz_loadu_ps(lanes, x1 + i),
                          _mm512_maskz_loadu_ps(lanes, area + i), by0, bx0, by1, bx1, ba, t, inclusive) != 0;
    };
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        if (hits(0xFFFF, i)) return true;
    return i < n && hits(__mmask16((1u << (n - i)) - 1), i);
}

// Greedy NMS of one list (kernels.hpp; the loop: nms_list.hpp), sixteen lanes: a class's list of
// up to 16 kept boxes is one test a candidate, no loop.
struct ListLanes {
    using F = __m512;
    using Mask = __mmask16;
    static constexpr size_t kWidth = 16;
    static F zero() { return _mm512_setzero_ps(); }
    static F set1(float x) { return _mm512_set1_ps(x); }
    static F load(const float* p) { return _mm512_load_ps(p); }  // `kept` is 64-byte aligned, a block 320 bytes
    static void store(float* p, F v) { _mm512_store_ps(p, v); }
    static Mask all() { return 0xFFFF; }
    static Mask first(size_t n) { return Mask((1u << n) - 1); }
    static Mask slot(size_t n) { return Mask(1u << n); }
    static F put(F r, F v, Mask slot) { return _mm512_mask_mov_ps(r, slot, v); }
    static bool any_passes(Mask live, const F l[5], const F b[5], F t, bool inclusive) {
        return iou_passes(live, l[0], l[1], l[2], l[3], l[4], b[0], b[1], b[2], b[3], b[4], t, inclusive) != 0;
    }
};

size_t nms_list(const float* y0, const float* x0, const float* y1, const float* x1, const float* area, size_t m,
                float th, bool inclusive, size_t max_keep, uint8_t* keep, float* kept) {
    return nms_list_with<ListLanes>(y0, x0, y1, x1, area, m, th, inclusive, max_keep, keep, kept);
}

// This file's kernels, the rest null (dispatch.cpp fills them from AVX2's table, in code built
// without AVX-512: nothing of this file runs before the CPU check). Constant-initialized.
constexpr Table own_kernels() {
    Table t{};
    t.name = "avx512";
    t.scan_u8_uniform = scan_u8_uniform;
    t.cells_at_least_u8 = cells_at_least_u8;
    t.count_above = count_above;
    t.any_iou_over = any_iou_over;
    t.nms_list = nms_list;
    return t;
}
constexpr Table kOwn = own_kernels();

}  // namespace

const Table* avx512_kernels() { return &kOwn; }

}  // namespace kernels
}  // namespace hailo_decode
#else
#include "kernels.hpp"
namespace hailo_decode { namespace kernels { const Table* avx512_kernels() { return nullptr; } } }
#endif
