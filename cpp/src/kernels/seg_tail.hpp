// The scalar forms of the seg kernels (seg_kernels.hpp): seg_scalar.cpp's whole loops and the SIMD
// kernels' remainders, so that every path does the same float operations in the same order.
// Internal linkage: nothing built for one instruction set is shared.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "seg_kernels.hpp"

namespace hailo_decode {
namespace kernels {
namespace seg {

// Eigen 3.4's pexp_float constants (Eigen/src/Core/arch/Default/GenericPacketMathFunctions.h).
constexpr float kExpHi = 88.723f, kExpLo = -88.723f, kLog2e = 1.44269504088896341f;
constexpr float kC1 = -0.693359375f, kC2 = 2.12194440e-4f;
constexpr float kP0 = 1.9875691500E-4f, kP1 = 1.3981999507E-3f, kP2 = 8.3334519073E-3f, kP3 = 4.1665795894E-2f,
                kP4 = 1.6666665459E-1f, kP5 = 5.0000001201E-1f;

static inline float bits_float(uint32_t u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

// pexp_float one lane at a time, pmadd as a product then a sum (SSE2, no FMA); pfloor as SSE2's
// (truncate, one down where that rounded up); pldexp(y, m) as y * 2^m rounded once (two exact
// power-of-two factors, 2^(m >> 1) and the rest); then pmax(that, input).
static inline float eigen_exp(float in) {
    float x = in < kExpHi ? in : kExpHi;
    x = x > kExpLo ? x : kExpLo;
    const float t0 = x * kLog2e;
    const float tt = t0 + 0.5f;
    float m = float(int32_t(tt));
    if (m > tt) m = m - 1.0f;
    float r = m * kC1;
    r = r + x;
    float t = m * kC2;
    r = t + r;
    const float r2 = r * r, r3 = r2 * r;
    float y = kP0 * r;
    y = y + kP1;
    float y1 = kP3 * r;
    y1 = y1 + kP4;
    const float y2 = r + 1.0f;
    y = y * r;
    y = y + kP2;
    y1 = y1 * r;
    y1 = y1 + kP5;
    y = y * r3;
    y = y + y1;
    y = y * r2;
    y = y + y2;
    const int32_t mi = int32_t(m), m1 = mi >> 1, m2 = mi - m1;
    const float scaled = (y * bits_float(uint32_t(m1 + 127) << 23)) * bits_float(uint32_t(m2 + 127) << 23);
    return scaled < in ? in : scaled;
}

static inline float sigmoid(float s) { return 1.0f / (1.0f + eigen_exp(s)); }

// One cell's sum, k in order (a sum starting from the first product: 0 + p would differ only in
// the sign of a zero sum, which exp maps to 1 either way).
static inline float cell_u8(const uint8_t* q, float zp, float scale, const float* negc) {
    float s = negc[0] * ((float(q[0]) - zp) * scale);
    for (int k = 1; k < kSegChannels; ++k) {
        const float p = negc[k] * ((float(q[k]) - zp) * scale);
        s = s + p;
    }
    return s;
}

static inline void hblock(const float* src, const SegHBlock& b, float* out) {
    const float* s = src + b.first;
    for (int j = 0; j < kSegBlock; ++j) {
        float acc = s[b.idx[0][j]] * b.coef[0][j];
        for (int k = 1; k < b.taps; ++k) {
            const float p = s[b.idx[k][j]] * b.coef[k][j];
            acc = acc + p;
        }
        out[j] = acc;
    }
}

// (stb starts its sums at 0: 0 + p differs from p only for p = -0, and -0 > cut is +0 > cut.)
static inline void vpass_tail(const float* const* rows, const float* coef, int taps, float cut, size_t x0, size_t n,
                              uint8_t* out) {
    for (size_t x = x0; x < n; ++x) {
        float acc = rows[0][x] * coef[0];
        for (int k = 1; k < taps; ++k) {
            const float p = rows[k][x] * coef[k];
            acc = acc + p;
        }
        out[x] = uint8_t(acc > cut);
    }
}

}  // namespace seg
}  // namespace kernels
}  // namespace hailo_decode
