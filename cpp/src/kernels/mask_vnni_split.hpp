// The VNNI mask kernels' coefficients (mask_avxvnni.cpp, mask_avx512vnni.cpp): vpdpbusd multiplies
// unsigned bytes (the raw prototype bytes q_k) by signed bytes and adds each four products into an
// int32 lane, with no 16-bit stage to saturate. sum_k c_k (q_k - zp) = sum_k q_k c_k - zp sum_k c_k,
// and the coefficients c_k (in [-255, 255]) are split into parts that each fit a signed byte:
// c_k = p1 + p2 + p3, p1 = clamp(c_k, -128, 127), p2 = clamp(c_k - p1, -128, 127), p3 the rest
// (|p3| <= 1). One vpdpbusd a part: a detection whose c_k all lie in [-128, 127] (a zero point
// near 128) needs one, [-256, 254] two, else three. When -c needs fewer parts than c (some c_k =
// 255: zp_c = 0, so every c_k >= 0) the kernels sum -c and negate the integer sum. Every sum is
// exact in int32 (|sum| <= 32 * 255 * 255 < 2^21), so the result is float(sum) * scale, the
// scalar kernel's bits. Included by each kernel's translation unit: internal linkage, plain C++.
#pragma once

#include <cstdint>

#include "mask_kernels.hpp"

namespace hailo_decode {
namespace kernels {

struct VnniSplit {
    alignas(64) int8_t part[3][kMaskChannels];
    int parts;     // 1 to 3
    bool negated;  // the parts add up to -c
    int32_t sum;   // sum of the (negated, if so) coefficients
};

static inline int vnni_parts_needed(const int16_t* c, int sign) {
    int parts = 1;
    for (int k = 0; k < kMaskChannels; ++k) {
        const int v = sign * c[k];
        if (v < -256 || v > 254) return 3;
        if (v < -128 || v > 127) parts = 2;
    }
    return parts;
}

static inline void vnni_split(const int16_t* coef, VnniSplit& s) {
    const int plain = vnni_parts_needed(coef, 1), negated = vnni_parts_needed(coef, -1);
    s.negated = negated < plain;
    s.parts = s.negated ? negated : plain;
    const int sign = s.negated ? -1 : 1;
    s.sum = 0;
    for (int k = 0; k < kMaskChannels; ++k) {
        int rest = sign * coef[k];
        s.sum += rest;
        for (int p = 0; p < 3; ++p) {
            const int v = p == 2 ? rest : (rest < -128 ? -128 : (rest > 127 ? 127 : rest));
            s.part[p][k] = int8_t(v);
            rest -= v;
        }
    }
}

}  // namespace kernels
}  // namespace hailo_decode
