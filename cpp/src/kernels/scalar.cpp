// The scalar reference kernels: always built, the definition every SIMD path must match bit for bit.
#include <cstring>

#include "iou_scalar.hpp"
#include "kernels.hpp"

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
        t.e64[i] = i < 4 ? exp_neg(-float(64 * i) * scale) : 0.0f;
        t.e8[i] = exp_neg(-float(8 * i) * scale);
        t.e1[i] = exp_neg(-float(i) * scale);
    }
    for (int d = 0; d < 256; ++d) t.full[d] = (t.e64[d >> 6] * t.e8[(d >> 3) & 7]) * t.e1[d & 7];
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

// Sum of 16 values in the fixed tree the 4-lane and 8-lane paths compute.
float tree_sum16(const float* e) {
    float t[8], u[4];
    for (int i = 0; i < 8; ++i) t[i] = e[i] + e[i + 8];
    for (int i = 0; i < 4; ++i) u[i] = t[i] + t[i + 4];
    return (u[0] + u[2]) + (u[1] + u[3]);
}

// Per side: expectation = sum(i * e_i) / sum(e_i), e_i = exp(x_i - max) given by exp_gap(x_i,
// max), both sums in the fixed tree (the same value as HailoRT's sum(i * e_i / sum) up to float
// rounding). The float and the uint8 kernels differ only in how they get e_i.
template <typename T, typename ExpGap>
void expectations16(const T* x, ExpGap exp_gap, float out[4]) {
    for (int side = 0; side < 4; ++side) {
        const T* s = x + 16 * side;
        T m = s[0];
        for (int i = 1; i < 16; ++i) m = s[i] > m ? s[i] : m;
        float e[16], w[16];
        for (int i = 0; i < 16; ++i) {
            e[i] = exp_gap(s[i], m);
            w[i] = float(i) * e[i];
        }
        out[side] = tree_sum16(w) / tree_sum16(e);
    }
}

void dfl16(const float* x, float out[4]) {
    expectations16(x, [](float v, float m) { return exp_neg(v - m); }, out);
}

void dfl16_u8(const uint8_t* q, const ExpTable& t, float out[4]) {
    expectations16(q, [&](uint8_t v, uint8_t m) { return t.full[m - v]; }, out);
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

const Table kScalar{"scalar", scan_u8, scan_u16, scan_f32, scan_u8_uniform, scan_u16_uniform, dfl16, dfl16_u8, any_iou_over, dequant_u8, byte_sum};

}  // namespace

const Table& scalar_table() { return kScalar; }

}  // namespace kernels
}  // namespace hailo_decode
