// Scalar mask kernels: the reference every SIMD path matches bit for bit (see mask_kernels.hpp).
#include "mask_blend_tail.hpp"
#include "mask_kernels.hpp"

namespace hailo_decode {
namespace kernels {
namespace {

// The fixed tree over the 32 products.
inline float tree32(const float* p) {
    float lane[8];
    for (int j = 0; j < 8; ++j) lane[j] = ((p[j] + p[j + 8]) + p[j + 16]) + p[j + 24];
    float m[4];
    for (int j = 0; j < 4; ++j) m[j] = lane[j] + lane[j + 4];
    return (m[0] + m[2]) + (m[1] + m[3]);
}

void dot_f32(const float* cells, size_t n, size_t stride, const float* coef, float* out) {
    for (size_t i = 0; i < n; ++i) {
        const float* x = cells + i * stride;
        float p[32];
        for (int k = 0; k < 32; ++k) p[k] = coef[k] * x[k];
        out[i] = tree32(p);
    }
}

void dot_u8f(const uint8_t* cells, size_t n, size_t stride, float zp, const float* coef, float* out) {
    for (size_t i = 0; i < n; ++i) {
        const uint8_t* q = cells + i * stride;
        float p[32];
        for (int k = 0; k < 32; ++k) p[k] = coef[k] * (float(q[k]) - zp);
        out[i] = tree32(p);
    }
}

void window_u8i(const uint8_t* cells, size_t rows, size_t cols, size_t row_stride, size_t col_stride, int32_t zp,
                const int16_t* coef, float scale, float* out) {
    for (size_t r = 0; r < rows; ++r)
        for (size_t j = 0; j < cols; ++j) {
            const uint8_t* q = cells + r * row_stride + j * col_stride;
            int32_t s = 0;
            for (int k = 0; k < 32; ++k) s += int32_t(coef[k]) * (int32_t(q[k]) - zp);
            out[r * cols + j] = float(s) * scale;
        }
}

size_t blend_row(const float* a, const float* b, float h0, float h1, size_t n, uint8_t* out) {
    return blend_row_tail(a, b, h0, h1, 0, n, out);
}

size_t sign_row(const float* v, size_t n, uint8_t* out) { return sign_row_tail(v, 0, n, out); }

const MaskTable kScalar{"scalar", dot_f32, dot_u8f, window_u8i, blend_row, sign_row};

}  // namespace

const MaskTable& mask_scalar_table() { return kScalar; }

}  // namespace kernels
}  // namespace hailo_decode
