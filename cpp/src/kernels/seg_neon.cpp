// NEON seg kernels (built with -ffp-contract=off: no FMLA, so each product and sum rounds on its
// own as in the op's x86-64 build). Must match seg_scalar.cpp bit for bit (seg_kernels.hpp).
#if defined(__aarch64__)
#include <arm_neon.h>

#include "seg_kernels.hpp"
#include "seg_tail.hpp"

namespace hailo_decode {
namespace kernels {
namespace {

// Four cells' 32 channels dequantized ((q - zp) * scale), channel k of the four at deq + 4 k:
// vst4q interleaves the four cells' vectors of four channels.
inline void dequantize4(const uint8_t* q, size_t stride, float32x4_t zp, float32x4_t scale, float* deq) {
    for (int h = 0; h < kSegChannels; h += 16) {
        float32x4_t v[4][4];  // [cell][quarter]
        for (int j = 0; j < 4; ++j) {
            const uint8x16_t b = vld1q_u8(q + size_t(j) * stride + size_t(h));
            const uint16x8_t lo = vmovl_u8(vget_low_u8(b)), hi = vmovl_u8(vget_high_u8(b));
            const uint32x4_t w[4] = {vmovl_u16(vget_low_u16(lo)), vmovl_u16(vget_high_u16(lo)), vmovl_u16(vget_low_u16(hi)),
                                     vmovl_u16(vget_high_u16(hi))};
            for (int u = 0; u < 4; ++u) v[j][u] = vmulq_f32(vsubq_f32(vcvtq_f32_u32(w[u]), zp), scale);
        }
        for (int u = 0; u < 4; ++u) {
            float32x4x4_t t;
            t.val[0] = v[0][u];
            t.val[1] = v[1][u];
            t.val[2] = v[2][u];
            t.val[3] = v[3][u];
            vst4q_f32(deq + 4 * (h + 4 * u), t);
        }
    }
}

void cells_u8(const uint8_t* cells, size_t n, size_t stride, float zp, float scale, const float* negc, float* out) {
    const float32x4_t vzp = vdupq_n_f32(zp), vs = vdupq_n_f32(scale);
    float d0[4 * kSegChannels], d1[4 * kSegChannels];
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {  // two groups of four: two independent chains
        dequantize4(cells + i * stride, stride, vzp, vs, d0);
        dequantize4(cells + (i + 4) * stride, stride, vzp, vs, d1);
        float32x4_t s0 = vmulq_n_f32(vld1q_f32(d0), negc[0]), s1 = vmulq_n_f32(vld1q_f32(d1), negc[0]);
        for (int k = 1; k < kSegChannels; ++k) {
            s0 = vaddq_f32(s0, vmulq_n_f32(vld1q_f32(d0 + 4 * k), negc[k]));
            s1 = vaddq_f32(s1, vmulq_n_f32(vld1q_f32(d1 + 4 * k), negc[k]));
        }
        vst1q_f32(out + i, s0);
        vst1q_f32(out + i + 4, s1);
    }
    for (; i + 4 <= n; i += 4) {
        dequantize4(cells + i * stride, stride, vzp, vs, d0);
        float32x4_t s = vmulq_n_f32(vld1q_f32(d0), negc[0]);
        for (int k = 1; k < kSegChannels; ++k) s = vaddq_f32(s, vmulq_n_f32(vld1q_f32(d0 + 4 * k), negc[k]));
        vst1q_f32(out + i, s);
    }
    for (; i < n; ++i) out[i] = seg::cell_u8(cells + i * stride, zp, scale, negc);
}

inline float32x4_t exp4(float32x4_t in) {
    const float32x4_t one = vdupq_n_f32(1.0f);
    float32x4_t x = vbslq_f32(vcltq_f32(in, vdupq_n_f32(seg::kExpHi)), in, vdupq_n_f32(seg::kExpHi));
    x = vbslq_f32(vcgtq_f32(x, vdupq_n_f32(seg::kExpLo)), x, vdupq_n_f32(seg::kExpLo));
    const float32x4_t tt = vaddq_f32(vmulq_n_f32(x, seg::kLog2e), vdupq_n_f32(0.5f));
    float32x4_t m = vcvtq_f32_s32(vcvtq_s32_f32(tt));
    m = vsubq_f32(m, vreinterpretq_f32_u32(vandq_u32(vcgtq_f32(m, tt), vreinterpretq_u32_f32(one))));
    float32x4_t r = vaddq_f32(vmulq_n_f32(m, seg::kC1), x);
    r = vaddq_f32(vmulq_n_f32(m, seg::kC2), r);
    const float32x4_t r2 = vmulq_f32(r, r), r3 = vmulq_f32(r2, r);
    float32x4_t y = vaddq_f32(vmulq_n_f32(r, seg::kP0), vdupq_n_f32(seg::kP1));
    float32x4_t y1 = vaddq_f32(vmulq_n_f32(r, seg::kP3), vdupq_n_f32(seg::kP4));
    const float32x4_t y2 = vaddq_f32(r, one);
    y = vaddq_f32(vmulq_f32(y, r), vdupq_n_f32(seg::kP2));
    y1 = vaddq_f32(vmulq_f32(y1, r), vdupq_n_f32(seg::kP5));
    y = vaddq_f32(vmulq_f32(y, r3), y1);
    y = vaddq_f32(vmulq_f32(y, r2), y2);
    const int32x4_t mi = vcvtq_s32_f32(m), m1 = vshrq_n_s32(mi, 1), m2 = vsubq_s32(mi, m1);
    const int32x4_t bias = vdupq_n_s32(127);
    const float32x4_t p1 = vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(m1, bias), 23));
    const float32x4_t p2 = vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(m2, bias), 23));
    const float32x4_t scaled = vmulq_f32(vmulq_f32(y, p1), p2);
    return vbslq_f32(vcltq_f32(scaled, in), in, scaled);  // scaled < in ? in : scaled
}

void sigmoid(float* v, size_t n) {
    const float32x4_t one = vdupq_n_f32(1.0f);
    size_t i = 0;
    for (; i + 4 <= n; i += 4) vst1q_f32(v + i, vdivq_f32(one, vaddq_f32(one, exp4(vld1q_f32(v + i)))));
    for (; i < n; ++i) v[i] = seg::sigmoid(v[i]);
}

void hpass(const float* src, const SegHBlock* blocks, size_t n_blocks, float* out) {
    for (size_t b = 0; b < n_blocks; ++b) seg::hblock(src, blocks[b], out + b * kSegBlock);
}

void vpass(const float* const* rows, const float* coef, int taps, float cut, size_t n, uint8_t* out) {
    const float32x4_t vcut = vdupq_n_f32(cut);
    auto gt = [&](size_t x) {
        float32x4_t acc = vmulq_n_f32(vld1q_f32(rows[0] + x), coef[0]);
        for (int k = 1; k < taps; ++k) acc = vaddq_f32(acc, vmulq_n_f32(vld1q_f32(rows[k] + x), coef[k]));
        return vmovn_u32(vcgtq_f32(acc, vcut));
    };
    size_t x = 0;
    for (; x + 8 <= n; x += 8) {
        const uint8x8_t b = vmovn_u16(vcombine_u16(gt(x), gt(x + 4)));
        vst1_u8(out + x, vand_u8(b, vdup_n_u8(1)));
    }
    seg::vpass_tail(rows, coef, taps, cut, x, n, out);
}

const SegTable kNeon{"neon", cells_u8, sigmoid, hpass, vpass};

}  // namespace

const SegTable* seg_neon_table() { return &kNeon; }

}  // namespace kernels
}  // namespace hailo_decode
#else
#include "seg_kernels.hpp"
namespace hailo_decode { namespace kernels { const SegTable* seg_neon_table() { return nullptr; } } }
#endif
