// The vertical blend of two interpolated rows, one value at a time: the scalar kernel's whole
// loop and the SIMD kernels' last few values, with the same float operations in the same order
// (so every path gives the same bytes). Included by each mask kernel's translation unit:
// internal linkage, so nothing built for one instruction set is shared.
#pragma once

#include <cstddef>
#include <cstdint>

namespace hailo_decode {
namespace kernels {

// out[j] = (a[j] * h0 + b[j] * h1 > cut) for j in [j0, n); returns how many were set. cut: 0 for
// logits (Ultralytics' masks), 0.5 for probabilities (YOLOv5's own process_mask, masks.cpp).
static inline size_t blend_row_tail(const float* a, const float* b, float h0, float h1, size_t j0, size_t n,
                                    uint8_t* out, float cut = 0.0f) {
    size_t set = 0;
    for (size_t j = j0; j < n; ++j) {
        float t = a[j] * h0;
        t = t + b[j] * h1;
        const uint8_t v = t > cut;
        out[j] = v;
        set += v;
    }
    return set;
}

// out[j] = (v[j] > 0) for j in [j0, n); returns how many were set.
static inline size_t sign_row_tail(const float* v, size_t j0, size_t n, uint8_t* out) {
    size_t set = 0;
    for (size_t j = j0; j < n; ++j) {
        const uint8_t b = v[j] > 0.0f;
        out[j] = b;
        set += b;
    }
    return set;
}

}  // namespace kernels
}  // namespace hailo_decode
