// SSE2 seg kernels (the x86-64 baseline). Must match seg_scalar.cpp bit for bit (seg_kernels.hpp):
// a lane is a cell or a pixel, with the scalar's operations in the scalar's order.
#if defined(__x86_64__) || defined(_M_X64)
#include <emmintrin.h>
#include <xmmintrin.h>

#include "seg_kernels.hpp"
#include "seg_tail.hpp"

namespace hailo_decode {
namespace kernels {
namespace {

// Four cells' 32 channels dequantized ((q - zp) * scale), channel k of the four at deq[k].
inline void dequantize4(const uint8_t* q, size_t stride, __m128 zp, __m128 scale, __m128* deq) {
    const __m128i zero = _mm_setzero_si128();
    alignas(16) float cell[4][kSegChannels];
    for (int j = 0; j < 4; ++j)
        for (int h = 0; h < kSegChannels; h += 16) {
            const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q + size_t(j) * stride + size_t(h)));
            const __m128i lo = _mm_unpacklo_epi8(b, zero), hi = _mm_unpackhi_epi8(b, zero);
            const __m128i w[4] = {_mm_unpacklo_epi16(lo, zero), _mm_unpackhi_epi16(lo, zero), _mm_unpacklo_epi16(hi, zero),
                                  _mm_unpackhi_epi16(hi, zero)};
            for (int v = 0; v < 4; ++v)
                _mm_store_ps(&cell[j][h + 4 * v], _mm_mul_ps(_mm_sub_ps(_mm_cvtepi32_ps(w[v]), zp), scale));
        }
    for (int k = 0; k < kSegChannels; k += 4) {
        __m128 a0 = _mm_load_ps(&cell[0][k]), a1 = _mm_load_ps(&cell[1][k]), a2 = _mm_load_ps(&cell[2][k]),
               a3 = _mm_load_ps(&cell[3][k]);
        _MM_TRANSPOSE4_PS(a0, a1, a2, a3);
        deq[k] = a0;
        deq[k + 1] = a1;
        deq[k + 2] = a2;
        deq[k + 3] = a3;
    }
}

// Two groups of four cells at a time: two independent chains of 32 adds.
void cells_u8(const uint8_t* cells, size_t n, size_t stride, float zp, float scale, const float* negc, float* out) {
    const __m128 vzp = _mm_set1_ps(zp), vs = _mm_set1_ps(scale);
    __m128 d0[kSegChannels], d1[kSegChannels];
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        dequantize4(cells + i * stride, stride, vzp, vs, d0);
        dequantize4(cells + (i + 4) * stride, stride, vzp, vs, d1);
        __m128 c = _mm_set1_ps(negc[0]);
        __m128 s0 = _mm_mul_ps(c, d0[0]), s1 = _mm_mul_ps(c, d1[0]);
        for (int k = 1; k < kSegChannels; ++k) {
            c = _mm_set1_ps(negc[k]);
            s0 = _mm_add_ps(s0, _mm_mul_ps(c, d0[k]));
            s1 = _mm_add_ps(s1, _mm_mul_ps(c, d1[k]));
        }
        _mm_storeu_ps(out + i, s0);
        _mm_storeu_ps(out + i + 4, s1);
    }
    for (; i + 4 <= n; i += 4) {
        dequantize4(cells + i * stride, stride, vzp, vs, d0);
        __m128 s = _mm_mul_ps(_mm_set1_ps(negc[0]), d0[0]);
        for (int k = 1; k < kSegChannels; ++k) s = _mm_add_ps(s, _mm_mul_ps(_mm_set1_ps(negc[k]), d0[k]));
        _mm_storeu_ps(out + i, s);
    }
    for (; i < n; ++i) out[i] = seg::cell_u8(cells + i * stride, zp, scale, negc);
}

inline __m128 exp4(__m128 in) {
    const __m128 one = _mm_set1_ps(1.0f);
    __m128 x = _mm_min_ps(in, _mm_set1_ps(seg::kExpHi));
    x = _mm_max_ps(x, _mm_set1_ps(seg::kExpLo));
    const __m128 tt = _mm_add_ps(_mm_mul_ps(x, _mm_set1_ps(seg::kLog2e)), _mm_set1_ps(0.5f));
    __m128 m = _mm_cvtepi32_ps(_mm_cvttps_epi32(tt));
    m = _mm_sub_ps(m, _mm_and_ps(_mm_cmpgt_ps(m, tt), one));
    __m128 r = _mm_add_ps(_mm_mul_ps(m, _mm_set1_ps(seg::kC1)), x);
    r = _mm_add_ps(_mm_mul_ps(m, _mm_set1_ps(seg::kC2)), r);
    const __m128 r2 = _mm_mul_ps(r, r), r3 = _mm_mul_ps(r2, r);
    __m128 y = _mm_add_ps(_mm_mul_ps(_mm_set1_ps(seg::kP0), r), _mm_set1_ps(seg::kP1));
    __m128 y1 = _mm_add_ps(_mm_mul_ps(_mm_set1_ps(seg::kP3), r), _mm_set1_ps(seg::kP4));
    const __m128 y2 = _mm_add_ps(r, one);
    y = _mm_add_ps(_mm_mul_ps(y, r), _mm_set1_ps(seg::kP2));
    y1 = _mm_add_ps(_mm_mul_ps(y1, r), _mm_set1_ps(seg::kP5));
    y = _mm_add_ps(_mm_mul_ps(y, r3), y1);
    y = _mm_add_ps(_mm_mul_ps(y, r2), y2);
    const __m128i mi = _mm_cvttps_epi32(m), m1 = _mm_srai_epi32(mi, 1), m2 = _mm_sub_epi32(mi, m1);
    const __m128i bias = _mm_set1_epi32(127);
    const __m128 p1 = _mm_castsi128_ps(_mm_slli_epi32(_mm_add_epi32(m1, bias), 23));
    const __m128 p2 = _mm_castsi128_ps(_mm_slli_epi32(_mm_add_epi32(m2, bias), 23));
    const __m128 scaled = _mm_mul_ps(_mm_mul_ps(y, p1), p2);
    const __m128 lt = _mm_cmplt_ps(scaled, in);  // scaled < in ? in : scaled
    return _mm_or_ps(_mm_and_ps(lt, in), _mm_andnot_ps(lt, scaled));
}

void sigmoid(float* v, size_t n) {
    const __m128 one = _mm_set1_ps(1.0f);
    size_t i = 0;
    for (; i + 4 <= n; i += 4) _mm_storeu_ps(v + i, _mm_div_ps(one, _mm_add_ps(one, exp4(_mm_loadu_ps(v + i)))));
    for (; i < n; ++i) v[i] = seg::sigmoid(v[i]);
}

void hpass(const float* src, const SegHBlock* blocks, size_t n_blocks, float* out) {
    for (size_t b = 0; b < n_blocks; ++b) seg::hblock(src, blocks[b], out + b * kSegBlock);
}

void vpass(const float* const* rows, const float* coef, int taps, float cut, size_t n, uint8_t* out) {
    const __m128 vcut = _mm_set1_ps(cut);
    __m128 c[kSegTaps];
    for (int k = 0; k < taps; ++k) c[k] = _mm_set1_ps(coef[k]);
    auto gt = [&](size_t x) {
        __m128 acc = _mm_mul_ps(_mm_loadu_ps(rows[0] + x), c[0]);
        for (int k = 1; k < taps; ++k) acc = _mm_add_ps(acc, _mm_mul_ps(_mm_loadu_ps(rows[k] + x), c[k]));
        return _mm_castps_si128(_mm_cmpgt_ps(acc, vcut));
    };
    size_t x = 0;
    for (; x + 16 <= n; x += 16) {
        const __m128i w = _mm_packs_epi16(_mm_packs_epi32(gt(x), gt(x + 4)), _mm_packs_epi32(gt(x + 8), gt(x + 12)));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + x), _mm_and_si128(w, _mm_set1_epi8(1)));
    }
    seg::vpass_tail(rows, coef, taps, cut, x, n, out);
}

const SegTable kSse2{"sse2", cells_u8, sigmoid, hpass, vpass};

}  // namespace

const SegTable* seg_sse2_table() { return &kSse2; }

}  // namespace kernels
}  // namespace hailo_decode
#else
#include "seg_kernels.hpp"
namespace hailo_decode { namespace kernels { const SegTable* seg_sse2_table() { return nullptr; } } }
#endif
