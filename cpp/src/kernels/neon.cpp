// NEON kernels (always present on aarch64). Built with -ffp-contract=off so that no multiply and
// add fuse into FMLA: each lane rounds as scalar.cpp does, bit for bit.
#if defined(__aarch64__)
#include <arm_neon.h>

#include "dfl_cells.hpp"
#include "iou_tail.hpp"
#include "cell_max_tail.hpp"
#include "cells_scan.hpp"
#include "count_above.hpp"
#include "kernels.hpp"
#include "nms_list.hpp"
#include "probiou_filter.hpp"
#include "probiou_gaussians.hpp"
#include "rotated_enclosing.hpp"

namespace hailo_decode {
namespace kernels {
namespace {

// Positions of the set lanes of a 16 x u8 comparison, in order.
inline size_t emit16(uint8x16_t ge, size_t base, uint32_t* out, size_t k) {
    uint8_t lanes[16];
    vst1q_u8(lanes, ge);
    for (int j = 0; j < 16; ++j)
        if (lanes[j]) out[k++] = uint32_t(base + size_t(j));
    return k;
}

size_t scan_u8(const uint8_t* v, const uint8_t* l, size_t n, uint32_t* out) {
    size_t i = 0, k = 0;
    for (; i + 16 <= n; i += 16) {
        const uint8x16_t ge = vcgeq_u8(vld1q_u8(v + i), vld1q_u8(l + i));
        if (vmaxvq_u8(ge)) k = emit16(ge, i, out, k);
    }
    for (; i < n; ++i)
        if (v[i] >= l[i]) out[k++] = uint32_t(i);
    return k;
}

size_t scan_u8_uniform(const uint8_t* v, uint8_t limit, size_t n, uint32_t* out) {
    size_t i = 0, k = 0;
    const uint8x16_t lim = vdupq_n_u8(limit);
    for (; i + 64 <= n; i += 64) {  // 64 bytes per test: their maximum passes iff any byte does
        if (vmaxvq_u8(vmaxq_u8(vmaxq_u8(vld1q_u8(v + i), vld1q_u8(v + i + 16)),
                               vmaxq_u8(vld1q_u8(v + i + 32), vld1q_u8(v + i + 48)))) < limit)
            continue;
        for (size_t j = 0; j < 64; j += 16) {  // read again rather than kept in an array
            const uint8x16_t ge = vcgeq_u8(vld1q_u8(v + i + j), lim);
            if (vmaxvq_u8(ge)) k = emit16(ge, i + j, out, k);
        }
    }
    for (; i + 16 <= n; i += 16) {
        const uint8x16_t ge = vcgeq_u8(vld1q_u8(v + i), lim);
        if (vmaxvq_u8(ge)) k = emit16(ge, i, out, k);
    }
    for (; i < n; ++i)
        if (v[i] >= limit) out[k++] = uint32_t(i);
    return k;
}

size_t scan_u16_uniform(const uint16_t* v, uint16_t limit, size_t n, uint32_t* out) {
    size_t i = 0, k = 0;
    for (; i + 32 <= n; i += 32) {  // 32 values per test: their maximum passes iff any does
        uint16x8_t a[4];
        for (int j = 0; j < 4; ++j) a[j] = vld1q_u16(v + i + 8 * j);
        if (vmaxvq_u16(vmaxq_u16(vmaxq_u16(a[0], a[1]), vmaxq_u16(a[2], a[3]))) < limit) continue;
        for (size_t j = i; j < i + 32; ++j)
            if (v[j] >= limit) out[k++] = uint32_t(j);
    }
    for (; i < n; ++i)
        if (v[i] >= limit) out[k++] = uint32_t(i);
    return k;
}

size_t scan_u16(const uint16_t* v, const uint16_t* l, size_t n, uint32_t* out) {
    size_t i = 0, k = 0;
    for (; i + 8 <= n; i += 8) {
        const uint16x8_t ge = vcgeq_u16(vld1q_u16(v + i), vld1q_u16(l + i));
        if (!vmaxvq_u16(ge)) continue;
        uint16_t lanes[8];
        vst1q_u16(lanes, ge);
        for (int j = 0; j < 8; ++j)
            if (lanes[j]) out[k++] = uint32_t(i + size_t(j));
    }
    for (; i < n; ++i)
        if (v[i] >= l[i]) out[k++] = uint32_t(i);
    return k;
}

size_t scan_f32(const float* v, const float* l, size_t n, uint32_t* out) {
    size_t i = 0, k = 0;
    for (; i + 4 <= n; i += 4) {
        const uint32x4_t ge = vcgeq_f32(vld1q_f32(v + i), vld1q_f32(l + i));
        if (!vmaxvq_u32(ge)) continue;
        uint32_t lanes[4];
        vst1q_u32(lanes, ge);
        for (int j = 0; j < 4; ++j)
            if (lanes[j]) out[k++] = uint32_t(i + size_t(j));
    }
    for (; i < n; ++i)
        if (v[i] >= l[i]) out[k++] = uint32_t(i);
    return k;
}

inline float32x4_t exp_neg(float32x4_t x) {
    x = vmaxq_f32(x, vdupq_n_f32(kExpMin));
    const int32x4_t n = vcvtq_s32_f32(vsubq_f32(vmulq_f32(x, vdupq_n_f32(kLog2e)), vdupq_n_f32(0.5f)));
    const float32x4_t fn = vcvtq_f32_s32(n);
    float32x4_t r = vsubq_f32(x, vmulq_f32(fn, vdupq_n_f32(kLn2Hi)));
    r = vsubq_f32(r, vmulq_f32(fn, vdupq_n_f32(kLn2Lo)));
    const float32x4_t r2 = vmulq_f32(r, r);
    float32x4_t p = vdupq_n_f32(kExpP0);
    p = vaddq_f32(vmulq_f32(p, r), vdupq_n_f32(kExpP1));
    p = vaddq_f32(vmulq_f32(p, r), vdupq_n_f32(kExpP2));
    p = vaddq_f32(vmulq_f32(p, r), vdupq_n_f32(kExpP3));
    p = vaddq_f32(vmulq_f32(p, r), vdupq_n_f32(kExpP4));
    p = vaddq_f32(vmulq_f32(p, r), vdupq_n_f32(kExpP5));
    p = vaddq_f32(vmulq_f32(p, r2), r);
    p = vaddq_f32(p, vdupq_n_f32(1.0f));
    const float32x4_t scale = vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(n, vdupq_n_s32(127)), 23));
    return vmulq_f32(p, scale);
}

// The expectations of four sides from their exps, e[4 side + j] = e_(4j..4j+3): sums in the
// fixed tree ((v0 + v1) + (v2 + v3)) + ((v4 + v5) + (v6 + v7)), four sides at once (vpaddq adds
// neighbours: [a0 + a1, a2 + a3, b0 + b1, b2 + b3]).
inline void expectations(const float32x4_t e[16], float out[4]) {
    const float idx_values[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
    float32x4_t idx[4], v[4], w[4];
    for (int j = 0; j < 4; ++j) idx[j] = vld1q_f32(idx_values + 4 * j);
    for (int side = 0; side < 4; ++side) {
        const float32x4_t* es = e + 4 * side;
        v[side] = vpaddq_f32(vaddq_f32(es[0], es[2]), vaddq_f32(es[1], es[3]));
        w[side] = vpaddq_f32(vaddq_f32(vmulq_f32(idx[0], es[0]), vmulq_f32(idx[2], es[2])),
                             vaddq_f32(vmulq_f32(idx[1], es[1]), vmulq_f32(idx[3], es[3])));
    }
    const float32x4_t sum = vpaddq_f32(vpaddq_f32(v[0], v[1]), vpaddq_f32(v[2], v[3]));
    vst1q_f32(out, vdivq_f32(vpaddq_f32(vpaddq_f32(w[0], w[1]), vpaddq_f32(w[2], w[3])), sum));
}

void dfl16(const float* x, float out[4]) {
    float32x4_t e[16], m[4];
    for (int side = 0; side < 4; ++side) {  // the four maxima, then 16 independent exps
        const float* s = x + 16 * side;
        m[side] = vdupq_n_f32(vmaxvq_f32(vmaxq_f32(vmaxq_f32(vld1q_f32(s), vld1q_f32(s + 4)),
                                                   vmaxq_f32(vld1q_f32(s + 8), vld1q_f32(s + 12)))));
    }
    for (int j = 0; j < 16; ++j) e[j] = exp_neg(vsubq_f32(vld1q_f32(x + 4 * j), m[j / 4]));
    expectations(e, out);
}

void dfl16_u8(const uint8_t* q, const ExpTable& t, float out[4]) {
    float looked_up[64];  // no float gather in NEON: the look-ups are scalar
    for (int i = 0; i < 64; ++i) looked_up[i] = t.full[q[i]];
    float32x4_t e[16];
    for (int j = 0; j < 16; ++j) e[j] = vld1q_f32(looked_up + 4 * j);
    expectations(e, out);
}

// HailoRT's compute_iou test of four boxes (l*) against one (b*, broadcast), lane by lane, as the
// AVX2 kernel: all ones where the IoU passes th; no overlap is an IoU of 0. min/max as the scalar
// reference and x86's minps/maxps take them: a < b ? a : b (b when either is NaN); vminq/vmaxq
// return NaN instead, which gave a NaN box another verdict at threshold 0.
inline uint32x4_t iou_passes(float32x4_t ly0, float32x4_t lx0, float32x4_t ly1, float32x4_t lx1, float32x4_t la,
                             float32x4_t by0, float32x4_t bx0, float32x4_t by1, float32x4_t bx1, float32x4_t ba,
                             float32x4_t t, bool inclusive) {
    auto lesser = [](float32x4_t a, float32x4_t b) { return vbslq_f32(vcltq_f32(a, b), a, b); };
    auto greater = [](float32x4_t a, float32x4_t b) { return vbslq_f32(vcgtq_f32(a, b), a, b); };
    const float32x4_t zero = vdupq_n_f32(0.0f);
    const float32x4_t ow = vsubq_f32(lesser(lx1, bx1), greater(lx0, bx0));
    const float32x4_t oh = vsubq_f32(lesser(ly1, by1), greater(ly0, by0));
    const uint32x4_t overlap = vandq_u32(vcgtq_f32(ow, zero), vcgtq_f32(oh, zero));
    const float32x4_t inter = vmulq_f32(ow, oh);
    const float32x4_t uni = vsubq_f32(vaddq_f32(la, ba), inter);
    const float32x4_t iou = vreinterpretq_f32_u32(vandq_u32(overlap, vreinterpretq_u32_f32(vdivq_f32(inter, uni))));
    return inclusive ? vcgeq_f32(iou, t) : vcgtq_f32(iou, t);
}

bool any_iou_over(const float* y0, const float* x0, const float* y1, const float* x1, const float* area,
                  size_t n, const float b[4], float b_area, float th, bool inclusive) {
    const float32x4_t by0 = vdupq_n_f32(b[0]), bx0 = vdupq_n_f32(b[1]), by1 = vdupq_n_f32(b[2]), bx1 = vdupq_n_f32(b[3]);
    const float32x4_t ba = vdupq_n_f32(b_area), t = vdupq_n_f32(th);
    // Whether any of the `lanes` passes.
    auto hits = [&](const float* ly0, const float* lx0, const float* ly1, const float* lx1, const float* la, uint32x4_t lanes) {
        const uint32x4_t hit = iou_passes(vld1q_f32(ly0), vld1q_f32(lx0), vld1q_f32(ly1), vld1q_f32(lx1), vld1q_f32(la), by0,
                                          bx0, by1, bx1, ba, t, inclusive);
        return vmaxvq_u32(vandq_u32(lanes, hit)) != 0;
    };
    size_t i = 0;
    for (; i + 4 <= n; i += 4)
        if (hits(y0 + i, x0 + i, y1 + i, x1 + i, area + i, vdupq_n_u32(~0u))) return true;
    if (i == n) return false;
    // The last 1-3 boxes, copied into one vector's room (NEON has no masked load).
    float tail[5][4] = {};
    copy_iou_tail(y0, x0, y1, x1, area, i, n, tail);
    const uint32_t lane_index[4] = {0, 1, 2, 3};
    const uint32x4_t lanes = vcltq_u32(vld1q_u32(lane_index), vdupq_n_u32(uint32_t(n - i)));
    return hits(tail[0], tail[1], tail[2], tail[3], tail[4], lanes);
}

// Greedy NMS of one list (kernels.hpp; the loop: nms_list.hpp), four lanes: no call or tail copy
// per box (any_iou_over copies a list's last 1-3 boxes into a vector's room on every call).
struct ListLanes {
    using F = float32x4_t;
    using Mask = uint32x4_t;
    static constexpr size_t kWidth = 4;
    static uint32x4_t lane_index() {
        const uint32_t index[4] = {0, 1, 2, 3};
        return vld1q_u32(index);
    }
    static F zero() { return vdupq_n_f32(0.0f); }
    static F set1(float x) { return vdupq_n_f32(x); }
    static F load(const float* p) { return vld1q_f32(p); }
    static void store(float* p, F v) { vst1q_f32(p, v); }
    static Mask all() { return vdupq_n_u32(~0u); }
    static Mask first(size_t n) { return vcltq_u32(lane_index(), vdupq_n_u32(uint32_t(n))); }
    static Mask slot(size_t n) { return vceqq_u32(lane_index(), vdupq_n_u32(uint32_t(n))); }
    static F put(F r, F v, Mask slot) { return vbslq_f32(slot, v, r); }
    static bool any_passes(Mask live, const F l[5], const F b[5], F t, bool inclusive) {
        return vmaxvq_u32(vandq_u32(live, iou_passes(l[0], l[1], l[2], l[3], l[4], b[0], b[1], b[2], b[3], b[4], t, inclusive))) != 0;
    }
};

size_t nms_list(const float* y0, const float* x0, const float* y1, const float* x1, const float* area, size_t m,
                float th, bool inclusive, size_t max_keep, uint8_t* keep, float* kept) {
    return nms_list_with<ListLanes>(y0, x0, y1, x1, area, m, th, inclusive, max_keep, keep, kept);
}

void dequant_u8(const uint8_t* src, size_t n, float zp, float scale, float* dst) {
    size_t i = 0;
    const float32x4_t z = vdupq_n_f32(zp), s = vdupq_n_f32(scale);
    for (; i + 8 <= n; i += 8) {
        const uint16x8_t w = vmovl_u8(vld1_u8(src + i));
        const float32x4_t lo = vcvtq_f32_u32(vmovl_u16(vget_low_u16(w)));
        const float32x4_t hi = vcvtq_f32_u32(vmovl_u16(vget_high_u16(w)));
        vst1q_f32(dst + i, vmulq_f32(vsubq_f32(lo, z), s));
        vst1q_f32(dst + i + 4, vmulq_f32(vsubq_f32(hi, z), s));
    }
    for (; i < n; ++i) dst[i] = (float(src[i]) - zp) * scale;
}

uint64_t byte_sum(const uint8_t* p, size_t n) {
    // Four independent accumulators, as the AVX2 floor (see there).
    uint64x2_t acc[4] = {vdupq_n_u64(0), vdupq_n_u64(0), vdupq_n_u64(0), vdupq_n_u64(0)};
    size_t i = 0;
    for (; i + 64 <= n; i += 64)
        for (int j = 0; j < 4; ++j) acc[j] = vpadalq_u32(acc[j], vpaddlq_u16(vpaddlq_u8(vld1q_u8(p + i + 16 * j))));
    for (; i + 16 <= n; i += 16) acc[0] = vpadalq_u32(acc[0], vpaddlq_u16(vpaddlq_u8(vld1q_u8(p + i))));
    const uint64x2_t a = vaddq_u64(vaddq_u64(acc[0], acc[1]), vaddq_u64(acc[2], acc[3]));
    uint64_t s = vgetq_lane_u64(a, 0) + vgetq_lane_u64(a, 1);
    for (; i < n; ++i) s += p[i];
    return s;
}

// 16 bytes at a time (the last 16 may overlap the previous: harmless for a maximum), then
// AArch64's across-vector maximum per cell.
inline uint8_t max_of_cell(const uint8_t* p, size_t channels) {
    uint8x16_t v = vld1q_u8(p);
    size_t c = 16;
    for (; c + 16 <= channels; c += 16) v = vmaxq_u8(v, vld1q_u8(p + c));
    if (c < channels) v = vmaxq_u8(v, vld1q_u8(p + channels - 16));
    return vmaxvq_u8(v);
}

void cell_max_u8(const uint8_t* base, size_t pitch, size_t channels, size_t n, uint8_t* out) {
    if (channels < 16) {
        cell_max_u8_bytes(base, pitch, channels, n, out);
        return;
    }
    for (size_t i = 0; i < n; ++i) out[i] = max_of_cell(base + i * pitch, channels);
}

// The scalar kernel's appends, each cell's maximum by vector.
size_t cell_max_gate_u8(const uint8_t* base, size_t pitch, size_t channels, size_t n, uint8_t gate, uint32_t first,
                        uint8_t* max_out, uint32_t* index_out) {
    if (channels < 16) return cell_max_gate_u8_bytes(base, pitch, channels, n, gate, first, max_out, index_out);
    size_t k = 0;
    for (size_t i = 0; i < n; ++i)
        k = append_if_passing(max_of_cell(base + i * pitch, channels), gate, uint32_t(first + i), max_out, index_out, k);
    return k;
}

HD_INLINE_CALLS void dfl16_u8_cells(const uint8_t* base, const size_t* offsets, size_t n, const ExpTable& t, float* out) {
    dfl16_u8_cells_with<dfl16_u8>(base, offsets, n, t, out);
}

struct Lane4 {
    using F = float32x4_t;
    using M = uint32x4_t;
    static constexpr size_t kWidth = 4;
    static F load(const float* p) { return vld1q_f32(p); }
    static F set1(float v) { return vdupq_n_f32(v); }
    static F add(F a, F b) { return vaddq_f32(a, b); }
    static F sub(F a, F b) { return vsubq_f32(a, b); }
    static F mul(F a, F b) { return vmulq_f32(a, b); }
    static F div(F a, F b) { return vdivq_f32(a, b); }
    static F sqrt(F a) { return vsqrtq_f32(a); }
    static F abs(F a) { return vabsq_f32(a); }
    static M lt(F a, F b) { return vcltq_f32(a, b); }
    static M gt(F a, F b) { return vcgtq_f32(a, b); }
    static M and_(M a, M b) { return vandq_u32(a, b); }
    static M andnot(M a, M b) { return vbicq_u32(a, b); }
    static void store(float* p, F v) { vst1q_f32(p, v); }
    static M le(F a, F b) { return vcleq_f32(a, b); }
    static M ge(F a, F b) { return vcgeq_f32(a, b); }
    static F select(M m, F a, F b) { return vbslq_f32(m, a, b); }
    static F neg(F a) { return vnegq_f32(a); }
    static M first(size_t n) {
        const uint32_t lane_index[4] = {0, 1, 2, 3};
        return vcltq_u32(vld1q_u32(lane_index), vdupq_n_u32(uint32_t(n < 4 ? n : 4)));
    }
    static uint32_t bits(M m) {
        const uint32_t weights[4] = {1, 2, 4, 8};
        return vaddvq_u32(vandq_u32(m, vld1q_u32(weights)));
    }
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

// The scalar reference (NEON has no byte mask; this runs on a few hundred cells a frame).
size_t cells_at_least_u8(const uint8_t* const* cells, const uint8_t* limits, size_t n, size_t channels,
                         uint32_t* out_cell, uint32_t* out_channel) {
    return cells_at_least_u8_bytes(cells, limits, n, channels, out_cell, out_channel);
}

const Table kNeon{"neon", scan_u8, scan_u16, scan_f32, scan_u8_uniform, scan_u16_uniform, dfl16, dfl16_u8, dfl16_u8_cells, any_iou_over, probiou_filter, probiou_verdicts, probiou_gaussians, enclosing_boxes, dequant_u8, byte_sum, cell_max_u8, cell_max_gate_u8, cells_at_least_u8, count_above_scalar, nms_list};

}  // namespace

const Table* neon_table() { return &kNeon; }

}  // namespace kernels
}  // namespace hailo_decode
#else
#include "kernels.hpp"
namespace hailo_decode { namespace kernels { const Table* neon_table() { return nullptr; } } }
#endif
