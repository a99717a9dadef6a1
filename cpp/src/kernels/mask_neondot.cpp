// NEON dot-product mask kernel (compiled with -march=armv8.2-a+dotprod; used only where
// kernels::active() is the "neondot" table, after its HWCAP_ASIMDDP check): the exact integer
// window_u8i with udot, which multiplies unsigned bytes and adds each four products into a
// uint32 lane. The coefficients c_k (in [-255, 255]) as two unsigned bytes, c_k = p_k - n_k with
// p_k = max(c_k, 0) and n_k = max(-c_k, 0): sum_k q_k c_k = udot(q, p) - udot(q, n), each at most
// 32 * 255 * 255 < 2^21, exact (a detection whose c_k are all >= 0 or all <= 0 needs one of the
// two). Then sum - zp sum_k c_k, to float, times scale: the scalar kernel's bits. The other mask
// kernels are plain NEON's (the dot product extension is Armv8.2's, e.g. Cortex-A76 of the
// Raspberry Pi 5; older cores keep "neon").
#if defined(__aarch64__) && defined(__ARM_FEATURE_DOTPROD)
#include <arm_neon.h>

#include "mask_kernels.hpp"

namespace hailo_decode {
namespace kernels {
namespace {

struct UnsignedParts {
    uint8x16_t pos[2], neg[2];  // channels 0-15 and 16-31
    int32_t sum;
};

// Four cells' sum_k q_k c_k, cell i at q + i * stride: the positive and negative parts' lanes
// reduced by pairwise adds (four cells' four lanes each -> one lane each).
template <bool Pos, bool Neg>
inline int32x4_t sums4(const uint8_t* q, size_t stride, const UnsignedParts& c) {
    uint32x4_t p[4], n[4];
    for (int i = 0; i < 4; ++i) {
        const uint8_t* cell = q + size_t(i) * stride;
        const uint8x16_t lo = vld1q_u8(cell), hi = vld1q_u8(cell + 16);
        p[i] = n[i] = vdupq_n_u32(0);
        if (Pos) p[i] = vdotq_u32(vdotq_u32(p[i], lo, c.pos[0]), hi, c.pos[1]);
        if (Neg) n[i] = vdotq_u32(vdotq_u32(n[i], lo, c.neg[0]), hi, c.neg[1]);
    }
    const uint32x4_t ps = vpaddq_u32(vpaddq_u32(p[0], p[1]), vpaddq_u32(p[2], p[3]));
    const uint32x4_t ns = vpaddq_u32(vpaddq_u32(n[0], n[1]), vpaddq_u32(n[2], n[3]));
    return vsubq_s32(vreinterpretq_s32_u32(ps), vreinterpretq_s32_u32(ns));
}

template <bool Pos, bool Neg>
void window(const uint8_t* cells, size_t rows, size_t cols, size_t row_stride, size_t col_stride, int32_t zp,
            const UnsignedParts& c, float scale, float* out) {
    const int32x4_t vbias = vdupq_n_s32(zp * c.sum);
    const float32x4_t vscale = vdupq_n_f32(scale);
    for (size_t r = 0; r < rows; ++r) {
        const uint8_t* row = cells + r * row_stride;
        float* o = out + r * cols;
        auto block4 = [&](size_t i) {
            const int32x4_t d = vsubq_s32(sums4<Pos, Neg>(row + i * col_stride, col_stride, c), vbias);
            vst1q_f32(o + i, vmulq_f32(vcvtq_f32_s32(d), vscale));
        };
        size_t i = 0;
        for (; i + 4 <= cols; i += 4) block4(i);
        if (cols >= 4 && i < cols) {  // the last cells as one more block ending at the row's end (same values rewritten)
            block4(cols - 4);
            continue;
        }
        for (; i < cols; ++i) {  // rows shorter than 4 cells
            const int32x4_t d = vsubq_s32(sums4<Pos, Neg>(row + i * col_stride, 0, c), vbias);
            o[i] = float(vgetq_lane_s32(d, 0)) * scale;
        }
    }
}

void window_u8i(const uint8_t* cells, size_t rows, size_t cols, size_t row_stride, size_t col_stride, int32_t zp,
                const int16_t* coef, float scale, float* out) {
    uint8_t pos[kMaskChannels], neg[kMaskChannels];
    UnsignedParts c;
    c.sum = 0;
    bool any_pos = false, any_neg = false;
    for (int k = 0; k < kMaskChannels; ++k) {
        const int v = coef[k];
        pos[k] = uint8_t(v > 0 ? v : 0);
        neg[k] = uint8_t(v < 0 ? -v : 0);
        any_pos = any_pos || v > 0;
        any_neg = any_neg || v < 0;
        c.sum += v;
    }
    for (int h = 0; h < 2; ++h) {
        c.pos[h] = vld1q_u8(pos + 16 * h);
        c.neg[h] = vld1q_u8(neg + 16 * h);
    }
    if (any_pos && any_neg) window<true, true>(cells, rows, cols, row_stride, col_stride, zp, c, scale, out);
    else if (any_neg) window<false, true>(cells, rows, cols, row_stride, col_stride, zp, c, scale, out);
    else window<true, false>(cells, rows, cols, row_stride, col_stride, zp, c, scale, out);
}

// The kernels of this level's own; the rest (null) are plain NEON's (mask_dispatch.cpp puts the
// table together). Constant-initialized: nothing here runs before the CPU check.
const MaskTable kOwn{"neondot", nullptr, nullptr, window_u8i, nullptr, nullptr};

}  // namespace

const MaskTable* mask_neondot_kernels() { return &kOwn; }

}  // namespace kernels
}  // namespace hailo_decode
#else
#include "mask_kernels.hpp"
namespace hailo_decode { namespace kernels { const MaskTable* mask_neondot_kernels() { return nullptr; } } }
#endif
