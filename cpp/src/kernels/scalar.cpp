// The scalar reference kernels: always built, the definition every SIMD path must match bit for bit.
#include <cmath>
#include <cstring>

#include "iou_scalar.hpp"
#include "dfl_cells.hpp"
#include "cell_max_tail.hpp"
#include "cells_scan.hpp"
#include "count_above.hpp"
#include "kernels.hpp"
#include "probiou_filter.hpp"
#include "probiou_gaussians.hpp"
#include "rotated_enclosing.hpp"

namespace hailo_decode {
namespace kernels {

float exp_neg(float x) {
    x = x < kExpMin ? kExpMin : x;
    // n = round(x * log2e), ties away from zero for x <= 0, by truncation as cvttps2dq does.
    const int n = int(x * kLog2e - 0.5f);
    const float fn = float(n);
    float r = x - fn * kLn2Hi;
    r = r - fn * kLn2Lo;
    const float r2 = r * r;
    float p = kExpP0;
    p = p * r + kExpP1;
    p = p * r + kExpP2;
    p = p * r + kExpP3;
    p = p * r + kExpP4;
    p = p * r + kExpP5;
    p = p * r2 + r;
    p = p + 1.0f;
    const uint32_t bits = uint32_t(n + 127) << 23;
    float scale;
    std::memcpy(&scale, &bits, sizeof scale);
    return p * scale;
}

void make_exp_table(float scale, ExpTable& t) {
    for (int i = 0; i < 8; ++i) {
        t.e64[i] = exp_neg(-float(64 * (3 - i % 4)) * scale);
        t.e8[i] = exp_neg(-float(8 * (7 - i)) * scale);
        t.e1[i] = exp_neg(-float(7 - i) * scale);
    }
    for (int q = 0; q < 256; ++q) t.full[q] = (t.e64[q >> 6] * t.e8[(q >> 3) & 7]) * t.e1[q & 7];
}

namespace {

template <typename T>
size_t scan(const T* v, const T* lim, size_t n, uint32_t* out) {
    size_t k = 0;
    for (size_t i = 0; i < n; ++i)
        if (v[i] >= lim[i]) out[k++] = uint32_t(i);
    return k;
}

template <typename T>
size_t scan_uniform(const T* v, T lim, size_t n, uint32_t* out) {
    size_t k = 0;
    for (size_t i = 0; i < n; ++i)
        if (v[i] >= lim) out[k++] = uint32_t(i);
    return k;
}

size_t scan_u8(const uint8_t* v, const uint8_t* l, size_t n, uint32_t* o) { return scan(v, l, n, o); }
size_t scan_u8_uniform(const uint8_t* v, uint8_t l, size_t n, uint32_t* o) { return scan_uniform(v, l, n, o); }
size_t scan_u16_uniform(const uint16_t* v, uint16_t l, size_t n, uint32_t* o) { return scan_uniform(v, l, n, o); }
size_t scan_u16(const uint16_t* v, const uint16_t* l, size_t n, uint32_t* o) { return scan(v, l, n, o); }
size_t scan_f32(const float* v, const float* l, size_t n, uint32_t* o) { return scan(v, l, n, o); }

// The fixed tree of the Table's DFL kernels over v[0..8).
float tree8(const float* v) { return ((v[0] + v[1]) + (v[2] + v[3])) + ((v[4] + v[5]) + (v[6] + v[7])); }

// Per side: expectation = sum(i * e_i) / sum(e_i), with e_i = exp(x_i) up to a factor common to
// the side (the same value as HailoRT's sum(i * e_i / sum) up to float rounding), both sums in the
// fixed tree. The float and the uint8 kernels differ only in how exps16 gets the e_i of a side.
template <typename Exps16>
void expectations16(Exps16 exps16, float out[4]) {
    for (int side = 0; side < 4; ++side) {
        float e[16], v[8], w[8];
        exps16(side, e);
        for (int i = 0; i < 8; ++i) {
            v[i] = e[i] + e[i + 8];
            w[i] = float(i) * e[i] + float(i + 8) * e[i + 8];
        }
        out[side] = tree8(w) / tree8(v);
    }
}

void dfl16(const float* x, float out[4]) {
    expectations16(
        [x](int side, float* e) {  // exp(x_i - max): no overflow for any finite logits
            const float* s = x + 16 * side;
            float m = s[0];
            for (int i = 1; i < 16; ++i) m = s[i] > m ? s[i] : m;
            for (int i = 0; i < 16; ++i) e[i] = exp_neg(s[i] - m);
        },
        out);
}

void dfl16_u8(const uint8_t* q, const ExpTable& t, float out[4]) {
    expectations16(
        [q, &t](int side, float* e) {
            for (int i = 0; i < 16; ++i) e[i] = t.full[q[16 * side + i]];
        },
        out);
}

bool any_iou_over(const float* y0, const float* x0, const float* y1, const float* x1, const float* area,
                  size_t n, const float b[4], float b_area, float th, bool inclusive) {
    return any_iou_over_scalar(y0, x0, y1, x1, area, n, b, b_area, th, inclusive);
}

void dequant_u8(const uint8_t* src, size_t n, float zp, float scale, float* dst) {
    for (size_t i = 0; i < n; ++i) dst[i] = (float(src[i]) - zp) * scale;
}

uint64_t byte_sum(const uint8_t* p, size_t n) {
    uint64_t s = 0;
    for (size_t i = 0; i < n; ++i) s += p[i];
    return s;
}

void cell_max_u8(const uint8_t* base, size_t pitch, size_t channels, size_t n, uint8_t* out) {
    cell_max_u8_bytes(base, pitch, channels, n, out);
}

size_t cell_max_gate_u8(const uint8_t* base, size_t pitch, size_t channels, size_t n, uint8_t gate, uint32_t first,
                        uint8_t* max_out, uint32_t* index_out) {
    return cell_max_gate_u8_bytes(base, pitch, channels, n, gate, first, max_out, index_out);
}

void dfl16_u8_cells(const uint8_t* base, const size_t* offsets, size_t n, const ExpTable& t, float* out) {
    dfl16_u8_cells_with<dfl16_u8>(base, offsets, n, t, out);
}

// One lane: the reference every path's probiou_filter matches.
struct Lane1 {
    using F = float;
    using M = bool;
    static constexpr size_t kWidth = 1;
    static F load(const float* p) { return *p; }
    static F set1(float v) { return v; }
    static F add(F a, F b) { return a + b; }
    static F sub(F a, F b) { return a - b; }
    static F mul(F a, F b) { return a * b; }
    static F div(F a, F b) { return a / b; }
    static F sqrt(F a) { return std::sqrt(a); }
    static F abs(F a) { return std::fabs(a); }
    static M lt(F a, F b) { return a < b; }
    static M gt(F a, F b) { return a > b; }
    static M and_(M a, M b) { return a && b; }
    static M andnot(M a, M b) { return a && !b; }
    static void store(float* p, F v) { *p = v; }
    static M le(F a, F b) { return a <= b; }
    static M ge(F a, F b) { return a >= b; }
    static F select(M m, F a, F b) { return m ? a : b; }
    static F neg(F a) { return -a; }
    static M first(size_t n) { return n > 0; }
    static uint32_t bits(M m) { return m ? 1u : 0u; }
};

size_t probiou_filter(const ProbiouList& l, size_t n, const ProbiouProbe& g, const ProbiouBounds& b, uint32_t* undecided) {
    return probiou_filter_impl<Lane1>(l, n, g, b, undecided);
}

void probiou_verdicts(const ProbiouList& l, size_t n, const ProbiouBounds& b, uint8_t* verdict) {
    probiou_verdicts_impl<Lane1>(l, n, b, verdict);
}

void probiou_gaussians(const ProbiouBoxes& in, size_t n, const ProbiouGaussians& out) {
    probiou_gaussians_impl<Lane1>(in, n, out);
}

void enclosing_boxes(const ProbiouBoxes& in, size_t n, float width, float height, bool normalize,
                     const EnclosingBoxes& out) {
    enclosing_boxes_impl<Lane1>(in, n, width, height, normalize, out);
}

size_t cells_at_least_u8(const uint8_t* const* cells, const uint8_t* limits, size_t n, size_t channels,
                         uint32_t* out_cell, uint32_t* out_channel) {
    return cells_at_least_u8_bytes(cells, limits, n, channels, out_cell, out_channel);
}

const Table kScalar{"scalar", scan_u8, scan_u16, scan_f32, scan_u8_uniform, scan_u16_uniform, dfl16, dfl16_u8, dfl16_u8_cells, any_iou_over, probiou_filter, probiou_verdicts, probiou_gaussians, enclosing_boxes, dequant_u8, byte_sum, cell_max_u8, cell_max_gate_u8, cells_at_least_u8, count_above_scalar, nullptr};

}  // namespace

const Table& scalar_table() { return kScalar; }

}  // namespace kernels
}  // namespace hailo_decode
