// Mask kernels: the 32-term dot products of mask coefficients with prototype cells, one
// implementation per instruction set, chosen with the main table (kernels::active()'s name), so
// HAILO_DECODE_SIMD and kernels::select() govern these too.
//
// Each kernel handles n cells with 32 channels stored contiguously, cell i at cells + i * stride
// (elements). Results are bit-identical on every path:
// - the float kernels form the 32 products c[k] * x[k] and add them in one fixed tree: eight lanes,
//   lane j = ((p[j] + p[j+8]) + p[j+16]) + p[j+24]; then m[j] = lane[j] + lane[j+4] (j < 4);
//   result (m[0] + m[2]) + (m[1] + m[3]). Four-lane paths hold lanes 0-3 and 4-7 in two registers.
// - the integer kernel is exact: sum c[k] * (q[k] - zp) in int32 (|c|, |q - zp| <= 255, so every
//   partial sum is below 2^22), the same in any order.
#pragma once

#include <cstddef>
#include <cstdint>

namespace hailo_decode {
namespace kernels {

constexpr int kMaskChannels = 32;

using WindowU8i = void (*)(const uint8_t* cells, size_t rows, size_t cols, size_t row_stride, size_t col_stride,
                           int32_t zp, const int16_t* coef, float scale, float* out);

struct MaskTable {
    const char* name;
    // out[i] = tree-sum of coef[k] * cells[i*stride + k].
    void (*dot_f32)(const float* cells, size_t n, size_t stride, const float* coef, float* out);
    // out[i] = tree-sum of coef[k] * (float(cells[i*stride + k]) - zp).
    void (*dot_u8f)(const uint8_t* cells, size_t n, size_t stride, float zp, const float* coef, float* out);
    // The exact integer path, a whole window in one call: cell (r, j) at
    // cells + r * row_stride + j * col_stride; out[r * cols + j] = float(sum) * scale with
    // sum = sum of coef[k] * (int(cell[k]) - zp), exactly (coef in [-255, 255], zp in [0, 255]), so
    // float(sum) and the one product are the same on every path.
    WindowU8i window_u8i;
    // One row of a bilinear mask: out[j] = ((a[j] * h0) + (b[j] * h1)) > 0 (1 or 0), each lane with
    // exactly those float32 operations; returns how many are 1.
    size_t (*blend_row)(const float* a, const float* b, float h0, float h1, size_t n, uint8_t* out);
    // One row of a prototype-grid mask: out[j] = v[j] > 0 (1 or 0); returns how many are 1.
    size_t (*sign_row)(const float* v, size_t n, uint8_t* out);
};

const MaskTable& mask_scalar_table();
const MaskTable* mask_sse2_table();  // nullptr where not built
const MaskTable* mask_avx2_table();
const MaskTable* mask_neon_table();
// The VNNI levels: AVX2's table with the kernels of their own (window_u8i) from
// mask_avxvnni.cpp / mask_avx512vnni.cpp; the dot-product level likewise over plain NEON's
// (mask_neondot.cpp). Their *_kernels() hold only those (the rest null). nullptr where not built.
const MaskTable* mask_avxvnni_table();
const MaskTable* mask_avx512vnni_table();
const MaskTable* mask_neondot_table();
const MaskTable* mask_avxvnni_kernels();
const MaskTable* mask_avx512vnni_kernels();
const MaskTable* mask_neondot_kernels();

// The table whose name is that of kernels::active().
const MaskTable& mask_active();

}  // namespace kernels
}  // namespace hailo_decode
