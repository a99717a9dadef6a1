// Scalar seg kernels: the reference every SIMD path matches bit for bit (seg_kernels.hpp).
#include "seg_kernels.hpp"
#include "seg_tail.hpp"

namespace hailo_decode {
namespace kernels {
namespace {

void cells_u8(const uint8_t* cells, size_t n, size_t stride, float zp, float scale, const float* negc, float* out) {
    for (size_t i = 0; i < n; ++i) out[i] = seg::cell_u8(cells + i * stride, zp, scale, negc);
}

void sigmoid(float* v, size_t n) {
    for (size_t i = 0; i < n; ++i) v[i] = seg::sigmoid(v[i]);
}

void hpass(const float* src, const SegHBlock* blocks, size_t n_blocks, float* out) {
    for (size_t b = 0; b < n_blocks; ++b) seg::hblock(src, blocks[b], out + b * kSegBlock);
}

void vpass(const float* const* rows, const float* coef, int taps, float cut, size_t n, uint8_t* out) {
    seg::vpass_tail(rows, coef, taps, cut, 0, n, out);
}

const SegTable kScalar{"scalar", cells_u8, sigmoid, hpass, vpass};

}  // namespace

const SegTable& seg_scalar_table() { return kScalar; }

}  // namespace kernels
}  // namespace hailo_decode
