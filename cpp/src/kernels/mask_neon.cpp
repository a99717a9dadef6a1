// NEON mask kernels (built with -ffp-contract=off: no FMLA). Must match mask_scalar.cpp bit for
// bit: lanes 0-3 of the tree (mask_kernels.hpp) in `a`, lanes 4-7 in `b`.
#if defined(__aarch64__)
#include <arm_neon.h>

#include "mask_blend_tail.hpp"
#include "mask_kernels.hpp"

namespace hailo_decode {
namespace kernels {
namespace {

inline float finish(float32x4_t a, float32x4_t b) {
    const float32x4_t m = vaddq_f32(a, b);
    const float32x2_t h = vadd_f32(vget_low_f32(m), vget_high_f32(m));  // [m0 + m2, m1 + m3]
    return vget_lane_f32(vpadd_f32(h, h), 0);
}

template <typename Load>
inline float tree(const float* coef, Load load) {
    float32x4_t a = vmulq_f32(vld1q_f32(coef), load(0));
    float32x4_t b = vmulq_f32(vld1q_f32(coef + 4), load(4));
    for (int k = 8; k < 32; k += 8) {
        a = vaddq_f32(a, vmulq_f32(vld1q_f32(coef + k), load(k)));
        b = vaddq_f32(b, vmulq_f32(vld1q_f32(coef + k + 4), load(k + 4)));
    }
    return finish(a, b);
}

void dot_f32(const float* cells, size_t n, size_t stride, const float* coef, float* out) {
    for (size_t i = 0; i < n; ++i) {
        const float* x = cells + i * stride;
        out[i] = tree(coef, [x](int k) { return vld1q_f32(x + k); });
    }
}

void dot_u8f(const uint8_t* cells, size_t n, size_t stride, float zp, const float* coef, float* out) {
    const float32x4_t vzp = vdupq_n_f32(zp);
    for (size_t i = 0; i < n; ++i) {
        const uint8_t* q = cells + i * stride;
        float32x4_t x[8];
        for (int h = 0; h < 2; ++h) {
            const uint8x16_t b = vld1q_u8(q + 16 * h);
            const uint16x8_t w[2] = {vmovl_u8(vget_low_u8(b)), vmovl_u8(vget_high_u8(b))};
            for (int j = 0; j < 2; ++j) {
                x[4 * h + 2 * j] = vsubq_f32(vcvtq_f32_u32(vmovl_u16(vget_low_u16(w[j]))), vzp);
                x[4 * h + 2 * j + 1] = vsubq_f32(vcvtq_f32_u32(vmovl_u16(vget_high_u16(w[j]))), vzp);
            }
        }
        out[i] = tree(coef, [&x](int k) { return x[k / 4]; });
    }
}

// out[i] = the exact integer sum of cell i (window_u8i's, one cell at a time).
void cell_sums_u8i(const uint8_t* cells, size_t n, size_t stride, int32_t zp, const int16_t* coef, int32_t* out) {
    const int16x8_t vzp = vdupq_n_s16(int16_t(zp));
    int16x8_t c[4];
    for (int j = 0; j < 4; ++j) c[j] = vld1q_s16(coef + 8 * j);
    for (size_t i = 0; i < n; ++i) {
        const uint8_t* q = cells + i * stride;
        int32x4_t s = vdupq_n_s32(0);
        for (int h = 0; h < 2; ++h) {
            const uint8x16_t b = vld1q_u8(q + 16 * h);
            const int16x8_t d0 = vsubq_s16(vreinterpretq_s16_u16(vmovl_u8(vget_low_u8(b))), vzp);
            const int16x8_t d1 = vsubq_s16(vreinterpretq_s16_u16(vmovl_u8(vget_high_u8(b))), vzp);
            s = vmlal_s16(s, vget_low_s16(d0), vget_low_s16(c[2 * h]));
            s = vmlal_s16(s, vget_high_s16(d0), vget_high_s16(c[2 * h]));
            s = vmlal_s16(s, vget_low_s16(d1), vget_low_s16(c[2 * h + 1]));
            s = vmlal_s16(s, vget_high_s16(d1), vget_high_s16(c[2 * h + 1]));
        }
        out[i] = vaddvq_s32(s);
    }
}

void window_u8i(const uint8_t* cells, size_t rows, size_t cols, size_t row_stride, size_t col_stride, int32_t zp,
                const int16_t* coef, float scale, float* out) {
    for (size_t r = 0; r < rows; ++r) {
        float* o = out + r * cols;
        const uint8_t* row = cells + r * row_stride;
        for (size_t j = 0; j < cols; ++j) {
            int32_t s;
            cell_sums_u8i(row + j * col_stride, 1, 0, zp, coef, &s);
            o[j] = float(s) * scale;
        }
    }
}

size_t blend_row(const float* a, const float* b, float h0, float h1, size_t n, uint8_t* out) {
    const float32x4_t vh0 = vdupq_n_f32(h0), vh1 = vdupq_n_f32(h1), zero = vdupq_n_f32(0.0f);
    size_t j = 0, set = 0;
    auto gt = [&](size_t k) {
        const float32x4_t t = vaddq_f32(vmulq_f32(vld1q_f32(a + k), vh0), vmulq_f32(vld1q_f32(b + k), vh1));
        return vmovn_u32(vcgtq_f32(t, zero));
    };
    for (; j + 8 <= n; j += 8) {
        const uint8x8_t v = vand_u8(vmovn_u16(vcombine_u16(gt(j), gt(j + 4))), vdup_n_u8(1));
        vst1_u8(out + j, v);
        set += vaddv_u8(v);
    }
    return set + blend_row_tail(a, b, h0, h1, j, n, out);
}

size_t sign_row(const float* v, size_t n, uint8_t* out) {
    const float32x4_t zero = vdupq_n_f32(0.0f);
    size_t j = 0, set = 0;
    auto gt = [&](size_t k) { return vmovn_u32(vcgtq_f32(vld1q_f32(v + k), zero)); };
    for (; j + 8 <= n; j += 8) {
        const uint8x8_t b = vand_u8(vmovn_u16(vcombine_u16(gt(j), gt(j + 4))), vdup_n_u8(1));
        vst1_u8(out + j, b);
        set += vaddv_u8(b);
    }
    return set + sign_row_tail(v, j, n, out);
}

const MaskTable kNeon{"neon", dot_f32, dot_u8f, window_u8i, blend_row, sign_row};

}  // namespace

const MaskTable* mask_neon_table() { return &kNeon; }

}  // namespace kernels
}  // namespace hailo_decode
#else
#include "mask_kernels.hpp"
namespace hailo_decode { namespace kernels { const MaskTable* mask_neon_table() { return nullptr; } } }
#endif
