// HailoRT 4.23's yolov5_seg mask arithmetic (hailo_decode/yolov5_seg.hpp), as the op's x86-64 build
// does it: the coefficient x prototype sums and the sigmoid of Eigen 3.4 on SSE (no FMA), then
// stb_image_resize's float triangle-filter passes. One implementation per instruction set, chosen
// with the main table like mask_kernels.hpp (seg_active()); every path is bit-identical to
// seg_scalar.cpp: each lane does the same IEEE operations in the same order (no FMA contraction).
#pragma once

#include <cstddef>
#include <cstdint>

namespace hailo_decode {
namespace kernels {

constexpr int kSegChannels = 32;  // the op's MASK_COEFFICIENT_SIZE
constexpr int kSegTaps = 4;       // stb's triangle filter: at most 4 input pixels an output pixel
constexpr int kSegBlock = 8;      // output columns a horizontal block

// Eight output columns of stb's horizontal pass: column j's value is the sum over k < taps of
// src[first + idx[k][j]] * coef[k][j], k in order (a column with fewer taps than `taps` has
// coefficient 0 for the rest: + (+0) leaves a sum of non-negative values as it is). `span` is
// 1 + the largest idx: a path with 8-lane permutes reads src[first .. first + 7] when span <= 8.
struct SegHBlock {
    int32_t first, taps, span, pad_;
    int32_t idx[kSegTaps][kSegBlock];
    float coef[kSegTaps][kSegBlock];
};

struct SegTable {
    const char* name;
    // The op's logit sums of n uint8 prototype cells (32 channels side by side, cell i at
    // cells + i * stride): out[i] = sum over k in order of negc[k] * ((float(q_ik) - zp) * scale)
    // (Eigen's gemv with the coefficients negated, 1 x 32 times 32 x cells).
    void (*cells_u8)(const uint8_t* cells, size_t n, size_t stride, float zp, float scale, const float* negc,
                     float* out);
    // v[i] = 1 / (1 + pexp(v[i])) in place, pexp Eigen 3.4's pexp_float (x86-64 SSE, no FMA).
    void (*sigmoid)(float* v, size_t n);
    // stb's horizontal pass, one input row: out[8 b + j] for block b's column j (blocks[b]); src
    // readable to src[first + 7] of every block with span <= 8.
    void (*hpass)(const float* src, const SegHBlock* blocks, size_t n_blocks, float* out);
    // stb's vertical pass and the op's threshold: out[x] = (sum over k < taps of rows[k][x] *
    // coef[k], in order) > cut, 1 or 0, for x < n.
    void (*vpass)(const float* const* rows, const float* coef, int taps, float cut, size_t n, uint8_t* out);
};

const SegTable& seg_scalar_table();
const SegTable* seg_sse2_table();  // nullptr where not built
const SegTable* seg_avx2_table();
const SegTable* seg_neon_table();

// The table whose instruction set is kernels::active()'s (levels above AVX2 use AVX2's).
const SegTable& seg_active();

}  // namespace kernels
}  // namespace hailo_decode
