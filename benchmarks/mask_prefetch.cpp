// A/B of the AVX2 window_u8i's prefetch (BENCHMARKS.md, "Instance masks"): the kernel's body as in
// cpp/src/kernels/mask_avx2.cpp, templated on the prefetch: 0 none; 3 each block asks for its cells
// 3 rows further down; -3 / -4 the same 3 or 4 rows down (inside the window only) plus the
// window's first 3 or 4 rows before it starts (-4 is what mask_avx2.cpp does). 20 windows of 9 to
// 72 cells a side over 64 distinct 160 x 160 x 32 tensors taken round-robin (52 MB: each comes
// from memory, as a frame just DMA'd), or the same one again and again with INCACHE=1; beside a
// read pass over one tensor. Medians of 300 calls, six times:
//   g++ -O2 -mavx2 -std=c++17 benchmarks/mask_prefetch.cpp -o /tmp/mask_prefetch && /tmp/mask_prefetch
#include <immintrin.h>
#include <chrono>
#include <cstdio>
#include <cstdint>
#include <vector>
#include <algorithm>
#include <cstring>
#include <cstdlib>
template <int PF>
void window_u8i(const uint8_t* cells, size_t rows, size_t cols, size_t row_stride, size_t col_stride, int32_t zp,
                const int16_t* coef, float scale, float* out) {
    alignas(32) int16_t even_c[16], odd_c[16];
    int32_t coef_sum = 0;
    for (int j = 0; j < 16; ++j) { even_c[j] = coef[2 * j]; odd_c[j] = coef[2 * j + 1]; }
    for (int k = 0; k < 32; ++k) coef_sum += coef[k];
    const __m256i ce = _mm256_load_si256(reinterpret_cast<const __m256i*>(even_c));
    const __m256i co = _mm256_load_si256(reinterpret_cast<const __m256i*>(odd_c));
    const __m256i low_bytes = _mm256_set1_epi16(0x00ff);
    const __m256i vbias = _mm256_set1_epi32(zp * coef_sum);
    const __m256 vscale = _mm256_set1_ps(scale);
    auto partial = [&](const uint8_t* q) {
        const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q));
        return _mm256_add_epi32(_mm256_madd_epi16(_mm256_and_si256(v, low_bytes), ce),
                                _mm256_madd_epi16(_mm256_srli_epi16(v, 8), co));
    };
    constexpr int D = PF < 0 ? -PF : PF;
    bool pf_on = PF != 0;
    if (PF < 0)
        for (size_t r = 0; r < size_t(D) && r < rows; ++r)
            for (size_t i = 0; i < cols; i += 2) _mm_prefetch(reinterpret_cast<const char*>(cells + r * row_stride + i * col_stride), _MM_HINT_T0);
    auto block8 = [&](const uint8_t* q, float* o) {
        if (pf_on) {
            const uint8_t* n = q + D * row_stride;
            _mm_prefetch(reinterpret_cast<const char*>(n), _MM_HINT_T0);
            _mm_prefetch(reinterpret_cast<const char*>(n + 2 * col_stride), _MM_HINT_T0);
            _mm_prefetch(reinterpret_cast<const char*>(n + 4 * col_stride), _MM_HINT_T0);
            _mm_prefetch(reinterpret_cast<const char*>(n + 6 * col_stride), _MM_HINT_T0);
        }
        const __m256i t01 = _mm256_hadd_epi32(partial(q), partial(q + col_stride));
        const __m256i t23 = _mm256_hadd_epi32(partial(q + 2 * col_stride), partial(q + 3 * col_stride));
        const __m256i t45 = _mm256_hadd_epi32(partial(q + 4 * col_stride), partial(q + 5 * col_stride));
        const __m256i t67 = _mm256_hadd_epi32(partial(q + 6 * col_stride), partial(q + 7 * col_stride));
        const __m256i u0 = _mm256_hadd_epi32(t01, t23);
        const __m256i u1 = _mm256_hadd_epi32(t45, t67);
        const __m256i sums = _mm256_add_epi32(_mm256_permute2x128_si256(u0, u1, 0x20), _mm256_permute2x128_si256(u0, u1, 0x31));
        _mm256_storeu_ps(o, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(sums, vbias)), vscale));
    };
    for (size_t r = 0; r < rows; ++r) {
        const uint8_t* row = cells + r * row_stride;
        float* o = out + r * cols;
        if (PF < 0) pf_on = r + D < rows;
        size_t i = 0;
        for (; i + 8 <= cols; i += 8) block8(row + i * col_stride, o + i);
        if (cols >= 8 && i < cols) { block8(row + (cols - 8) * col_stride, o + cols - 8); continue; }
        for (; i < cols; ++i) {
            int32_t s = 0; const uint8_t* q = row + i * col_stride;
            for (int k = 0; k < 32; ++k) s += coef[k] * (int(q[k]) - zp);
            o[i] = float(s) * scale;
        }
    }
}
int main() {
    const int N = 64; const size_t T = 160 * 160 * 32;
    std::vector<std::vector<uint8_t>> t(N, std::vector<uint8_t>(T));
    uint32_t s = 1;
    for (auto& x : t) for (auto& v : x) { s = s * 1664525u + 1013904223u; v = uint8_t(s >> 24); }
    struct W { int r0, c0, rows, cols; };
    std::vector<W> ws; uint32_t z = 7; size_t cells = 0;
    for (int i = 0; i < 20; ++i) {
        z = z * 1664525u + 1013904223u; int side = 9 + int(z >> 26);  // 9..72
        z = z * 1664525u + 1013904223u; int h = 9 + int(z >> 26);
        z = z * 1664525u + 1013904223u; int r0 = int((z >> 16) % uint32_t(160 - h));
        z = z * 1664525u + 1013904223u; int c0 = int((z >> 16) % uint32_t(160 - side));
        ws.push_back({r0, c0, h, side}); cells += size_t(h) * size_t(side);
    }
    int16_t c[32]; for (int k = 0; k < 32; ++k) c[k] = int16_t(k * 15 - 240);
    std::vector<float> out(cells);
    int idx = 0;
    for (int rep = 0; rep < 6; ++rep) {
        std::vector<double> a, b, rp, d2, d3;
        for (int it = 0; it < 300; ++it) {
            for (int v = 0; v < 5; ++v) {
                const uint8_t* p = t[idx].data(); if (!getenv("INCACHE")) idx = (idx + 1) % N;
                auto t0 = std::chrono::steady_clock::now();
                if (v == 2) { volatile uint64_t sink; uint64_t acc = 0; const uint64_t* q = (const uint64_t*)p;
                    for (size_t i = 0; i < T / 8; i += 4) acc += q[i] ^ q[i+1] ^ q[i+2] ^ q[i+3];
                    sink = acc; (void)sink; }
                else { size_t off = 0; for (auto& w : ws) {
                    const uint8_t* base = p + (size_t(w.r0) * 160 + size_t(w.c0)) * 32;
                    if (v == 0) window_u8i<0>(base, w.rows, w.cols, 160 * 32, 32, 117, c, 0.01f, out.data() + off);
                    else (v == 1 ? window_u8i<3> : v == 3 ? window_u8i<-3> : window_u8i<-4>)(base, w.rows, w.cols, 160 * 32, 32, 117, c, 0.01f, out.data() + off);
                    off += size_t(w.rows) * size_t(w.cols); } }
                double d = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() * 1e6;
                (v == 0 ? a : v == 1 ? b : v == 2 ? rp : v == 3 ? d2 : d3).push_back(d);
            }
        }
        auto med = [](std::vector<double>& x) { std::nth_element(x.begin(), x.begin() + x.size() / 2, x.end()); return x[x.size() / 2]; };
        std::printf("%s: cells %zu  none %.1f us  3 rows %.1f  3 rows+head %.1f  4 rows+head %.1f us  read pass %.1f us\n", getenv("INCACHE") ? "in cache" : "fresh", cells, med(a), med(b), med(d2), med(d3), med(rp));
    }
}
