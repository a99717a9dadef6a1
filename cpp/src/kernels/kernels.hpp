// The hot loops, one implementation per instruction set behind one table chosen once.
//
// Every kernel is a pure function whose result is bit-identical on every path: integer and
// comparison kernels trivially, float kernels because each lane does the same IEEE operations in
// the same order as the scalar reference (no FMA contraction; the fixed reduction tree below).
// Kernel translation units use no STL, so nothing compiled for AVX2 can be shared with code that
// runs on a CPU without it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace hailo_decode {
namespace kernels {

// exp((q - 255) * scale) for every byte q, the table dfl16_u8 takes: the softmax of a side
// needs the exps only up to one common factor, so the reference is the largest byte, 255, rather
// than the side's maximum, and a value is looked up by the byte itself (no maximum, no gaps).
// Each value is the product of three entries of 8, q = 64 a + 8 b + c, as (e64[a] * e8[b]) * e1[c]:
// a path with permutes forms it in registers (an 8-lane permute uses the low 3 bits of its index,
// so no masking either; e64 has 4 entries, stored twice so that AVX's in-lane vpermilps, which
// reads the low 2 bits within each 128-bit half, looks it up at a fraction of an 8-lane
// permute's cost), a path without them reads `full`, and both get the same float.
// It applies while 255 * scale <= kDflTableMaxRange, so that every value stays a normal float.
struct ExpTable {
    float e64[8];     // exp_neg(-64 (3 - a) scale) at a and a + 4
    float e8[8];      // exp_neg(-8 (7 - b) scale)
    float e1[8];      // exp_neg(-(7 - c) scale)
    float full[256];  // (e64[q >> 6] * e8[(q >> 3) & 7]) * e1[q & 7]
};
constexpr float kDflTableMaxRange = 80.0f;
void make_exp_table(float scale, ExpTable& table);

// Rotated NMS's boxes as probiou sees them (rotated_nms.hpp Gaussian), structure of arrays: centre,
// covariance [[a, c], [c, b]], det, and far_spread: the trace a + b for a regular box (one the
// far test may rule out), +inf otherwise (no pair with it is ever far).
struct ProbiouList {
    const float *x, *y, *a, *b, *c, *det, *far_spread;
};
struct ProbiouProbe {
    float x, y, a, b, c, det, far_spread;
};
// Rotated boxes as Table::probiou_gaussians reads them (structure of arrays): centre (class offset
// already added), sides, and the cos and sin of the angle; and where it writes their Gaussians.
struct ProbiouBoxes {
    const float *x, *y, *w, *h, *cos, *sin;
};
struct ProbiouGaussians {
    float *a, *b, *c, *det, *far_spread;
};
// Where Table::enclosing_boxes writes: the enclosing boxes' sides, x0 y0 x1 y1.
struct EnclosingBoxes {
    float *x0, *y0, *x1, *y1;
};
// rotated_nms.hpp OverlapTest's shortcuts: the far limit (<= 0: none) and the distance band.
struct ProbiouBounds {
    float far_limit;
    bool banded;
    float band_lo, band_hi;
};
constexpr size_t kProbiouOver = ~size_t(0);
// Table::probiou_verdicts: a candidate certainly clear of every earlier one, certainly suppressed
// by one, or (rare) with pairs only the exact test settles.
constexpr uint8_t kProbiouClear = 0, kProbiouSuppressed = 1, kProbiouUndecided = 2;

struct Table {
    const char* name;
    // Writes the positions i in [0, n) with values[i] >= limits[i] to `out` (room for n), in
    // increasing order; returns how many.
    size_t (*scan_u8)(const uint8_t* values, const uint8_t* limits, size_t n, uint32_t* out);
    size_t (*scan_u16)(const uint16_t* values, const uint16_t* limits, size_t n, uint32_t* out);
    size_t (*scan_f32)(const float* values, const float* limits, size_t n, uint32_t* out);
    // The same against one limit for every position (one threshold for every class, rows without
    // padding): half the loads of the pattern scans, nothing but the values to read.
    size_t (*scan_u8_uniform)(const uint8_t* values, uint8_t limit, size_t n, uint32_t* out);
    size_t (*scan_u16_uniform)(const uint16_t* values, uint16_t limit, size_t n, uint32_t* out);
    // DFL with 16 bins: x holds 64 logits (left, top, right, bottom, 16 each); writes the four
    // expectations of softmax(x_side). Per side, with v_i = e_i + e_(i+8) and
    // w_i = i e_i + (i + 8) e_(i+8) (i < 8), both sums take the tree
    // ((v0 + v1) + (v2 + v3)) + ((v4 + v5) + (v6 + v7)): pairwise adds, as SSE3/AVX hadd and NEON
    // vpaddq do them, four sides at once.
    void (*dfl16)(const float* x, float out[4]);
    // The same for 64 uint8 values of one per-tensor quantized cell with scale > 0: since
    // x_i = scale * (q_i - zp), exp(x_i) is the table's value at q_i up to a factor common to the
    // side, which the expectation divides out; no exp is computed per cell.
    void (*dfl16_u8)(const uint8_t* q, const ExpTable& table, float out[4]);
    // dfl16_u8 of n cells, base + offsets[i] (64 contiguous bytes each), to out[4 i .. 4 i + 4):
    // one call a head, so the tables stay in registers and the cells' work overlaps.
    void (*dfl16_u8_cells)(const uint8_t* base, const size_t* offsets, size_t n, const ExpTable& table, float* out);
    // Whether box b (y0, x0, y1, x1; area b_area) has IoU >= th (inclusive) or > th with any of
    // the n boxes stored as structure of arrays, IoU as HailoRT's compute_iou.
    bool (*any_iou_over)(const float* y0, const float* x0, const float* y1, const float* x1,
                         const float* area, size_t n, const float b[4], float b_area, float th,
                         bool inclusive);
    // Rotated NMS's test of one probe against the n boxes of a list (p = list[i], q = probe), the
    // part of OverlapTest::over without log or exp: kProbiouOver when some pair certainly passes
    // (its distance bound is below the band), else the number of pairs left undecided (neither
    // far apart nor above the band), their positions written to `undecided` (room for n) in
    // increasing order, for the exact test. Each lane does probiou_parts's operations in its
    // order, so every path decides the same pairs. Reads the arrays in whole vectors: they must
    // hold initialized floats up to n rounded up to 8 (the lanes past n are ignored).
    size_t (*probiou_filter)(const ProbiouList& list, size_t n, const ProbiouProbe& probe, const ProbiouBounds& bounds,
                             uint32_t* undecided);
    // probiou_filter of every candidate p of one list against the ones before it (list[0, p)),
    // in one call, the constants broadcast once: verdict[p] is kProbiouSuppressed when
    // probiou_filter(list, p, list[p]) gives kProbiouOver, kProbiouClear when it leaves no pair
    // undecided, else kProbiouUndecided (the caller runs probiou_filter for that one). Fast-NMS
    // compares every pair whether or not the earlier one was itself dropped, so no verdict waits
    // on another. Reads as probiou_filter does, up to n rounded up to 8.
    void (*probiou_verdicts)(const ProbiouList& list, size_t n, const ProbiouBounds& bounds, uint8_t* verdict);
    // The Gaussians of n rotated boxes: out[i] = probe_of(make_gaussian(x, y, w, h, {cos, sin}))
    // (rotated_nms.hpp) without its centre, bit for bit: covariance, det clamped at 0 (NaN kept),
    // far_spread the trace when regular, +inf otherwise. Reads and writes in whole vectors: every
    // array must have room for n rounded up to 8, the inputs initialized that far.
    void (*probiou_gaussians)(const ProbiouBoxes& in, size_t n, const ProbiouGaussians& out);
    // The axis-aligned boxes enclosing n rotated boxes (in.x, in.y: their centres, no class
    // offset), divided by the image's width and height when `normalize`: rotated_box.hpp
    // enclosing_box's corners, minima and maxima, bit for bit. Reads and writes as
    // probiou_gaussians does, in whole vectors.
    void (*enclosing_boxes)(const ProbiouBoxes& in, size_t n, float width, float height, bool normalize,
                            const EnclosingBoxes& out);
    // dst[i] = (float(src[i]) - zp) * scale: HailoRT's dequantization, per tensor.
    void (*dequant_u8)(const uint8_t* src, size_t n, float zp, float scale, float* dst);
    // Sum of n bytes: one read pass, the floor a scan cannot beat (benchmarks).
    uint64_t (*byte_sum)(const uint8_t* p, size_t n);
    // out[i] = the largest of base[i * pitch + c] for c in [0, channels) (channels >= 1), i < n:
    // the best class byte of n cells in a row. The vector paths reduce eight cells together
    // (their partial maxima interleaved by unpacks), not one horizontal reduction per cell.
    void (*cell_max_u8)(const uint8_t* base, size_t pitch, size_t channels, size_t n, uint8_t* out);
    // cell_max_u8 that keeps only the cells whose maximum is >= gate: for each, in increasing i,
    // max_out[k] = its maximum and index_out[k] = first + i; returns k. Both outputs need room
    // for n (a vector path writes whole groups at k; k never passes i). The end-to-end selection
    // then counts and ranks the passing cells only.
    size_t (*cell_max_gate_u8)(const uint8_t* base, size_t pitch, size_t channels, size_t n, uint8_t gate,
                               uint32_t first, uint8_t* max_out, uint32_t* index_out);
    // For n cells (cells[i]: `channels` contiguous bytes), the channels whose byte is >= limits[i],
    // in (cell, channel) order: hit j is out_cell[j] = i, out_channel[j] = c (room for n * channels).
    // Returns the number of hits. The end-to-end stage 2 (the chosen anchors' classes at or above
    // the k-th anchor's best score) and YOLOX's class scan (a batch of cells whose objectness
    // passes, each with its class cut), in one call rather than a scan per cell.
    size_t (*cells_at_least_u8)(const uint8_t* const* cells, const uint8_t* limits, size_t n, size_t channels,
                                uint32_t* out_cell, uint32_t* out_channel);
    // above[i] = how many of s[0, n) are greater than s[i], for i in [0, m) with m = n rounded up
    // to a multiple of 8: s holds n scores padded with -inf up to m (read whole vectors), above
    // has room for m (the padding's counts are written too, and mean nothing). The candidate sort's
    // rank count (nms.cpp), a score broadcast against eight candidates at once.
    void (*count_above)(const float* s, size_t n, uint32_t* above);
    // Greedy NMS of one list: m boxes in score order (structure of arrays y0, x0, y1, x1, area),
    // box j kept unless a kept box before it passes any_iou_over's test with it (the same bits:
    // each lane does its operations); once max_keep are kept the rest are not. keep[j] = 1 when
    // kept, else 0; returns the number kept. `kept`: room for 5 x (m rounded up to 8) floats,
    // 64-byte aligned (AVX-512's whole vectors), where the kernel keeps its kept boxes. Null where
    // a path has none (scalar): nms.cpp then tests each candidate with any_iou_over against its
    // list's kept boxes, the same result.
    size_t (*nms_list)(const float* y0, const float* x0, const float* y1, const float* x1, const float* area, size_t m,
                       float th, bool inclusive, size_t max_keep, uint8_t* keep, float* kept);
};

const Table& scalar_table();

// The reference exp (below) of x <= 0.
float exp_neg(float x);
const Table* sse2_table();   // nullptr where not built
const Table* avx2_table();
const Table* neon_table();
// AVX-512 (F, VL, BW) detection kernels, the rest of the table null: the "avx512vnni" level puts
// them over AVX2's (dispatch.cpp). nullptr where not built.
const Table* avx512_kernels();

// The table in use: the best the CPU supports, chosen at first use. HAILO_DECODE_SIMD=scalar
// (or sse2, avx2, avxvnni, avx512vnni, neon, neondot) forces one, if this build and CPU have it.
const Table& active();
// Switch at run time (tests, benchmarks). Returns false if `name` is not available here.
bool select(const char* name);
// Names available in this build on this CPU, best last, as a comma-separated list.
const char* available();

// exp(x) for x <= 0 (after max subtraction) as every path computes it: Cephes-style range
// reduction x = n ln2 + r and a degree-5 polynomial in r; inputs below kExpMin are clamped.
constexpr float kExpMin = -87.0f;
constexpr float kLog2e = 1.44269504088896341f;
constexpr float kLn2Hi = 0.693359375f;
constexpr float kLn2Lo = -2.12194440e-4f;
constexpr float kExpP0 = 1.9875691500e-4f;
constexpr float kExpP1 = 1.3981999507e-3f;
constexpr float kExpP2 = 8.3334519073e-3f;
constexpr float kExpP3 = 4.1665795894e-2f;
constexpr float kExpP4 = 1.6666665459e-1f;
constexpr float kExpP5 = 5.0000001201e-1f;

}  // namespace kernels
}  // namespace hailo_decode
