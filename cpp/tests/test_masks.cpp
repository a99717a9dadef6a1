// C++ unit tests of the masks room: the mask kernels on every SIMD path, the logits of a window
// from every kind of prototype view, the rendering against a plain whole-map reference.
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <new>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <algorithm>
#include <string>
#include <vector>

#include "../src/kernels/kernels.hpp"
#include "../src/kernels/mask_kernels.hpp"
#include "../src/mask_logits.hpp"
#include "../src/tensor_view.hpp"
#include "hailo_decode/decoder.hpp"
#include "hailo_decode/masks.hpp"
#include "hailo_decode/pack_byte_mask.hpp"
#include "check.hpp"
#include "count_allocations.hpp"
#include "tensor_spec.hpp"

using namespace hailo_decode;
using namespace hailo_decode::detail;

static uint32_t lcg(uint32_t& s) { return s = s * 1664525u + 1013904223u; }
static float unit(uint32_t& s) { return float(lcg(s) >> 8) / float(1u << 24); }  // [0, 1)

static std::vector<const kernels::MaskTable*> mask_tables() {
    std::vector<const kernels::MaskTable*> t{&kernels::mask_scalar_table()};
    const std::string names = kernels::available();
    for (const kernels::MaskTable* k : {kernels::mask_sse2_table(), kernels::mask_avx2_table(),
                                        kernels::mask_avxvnni_table(), kernels::mask_avx512vnni_table(),
                                        kernels::mask_neon_table(), kernels::mask_neondot_table()})
        if (k && names.find(k->name) != std::string::npos) t.push_back(k);
    return t;
}

static bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// Every path gives the scalar reference's bits; the integer kernel equals the exact sum, the
// float kernels the double-precision sum to float rounding.
static void test_kernels_agree() {
    uint32_t seed = 7;
    const size_t n = 37, stride = 40;  // padded cells: 8 values between cells are never read
    std::vector<float> xf(n * stride);
    std::vector<uint8_t> xq(n * stride);
    for (auto& v : xf) v = (unit(seed) - 0.5f) * 8.0f;
    for (auto& v : xq) v = uint8_t(lcg(seed) >> 24);
    float cf[32];
    int16_t ci[32];
    for (int k = 0; k < 32; ++k) {
        cf[k] = (unit(seed) - 0.5f) * 3.0f;
        ci[k] = int16_t(int(lcg(seed) >> 23) - 255);  // [-255, 256) -> clipped below
        if (ci[k] > 255) ci[k] = 255;
    }
    ci[0] = 255;
    ci[1] = -255;  // the extremes
    const float zp = 117.0f;
    std::vector<float> ref_f(n), ref_u(n), got(n);
    std::vector<float> ref_i(n), got_i(n);  // exact integer sums, as floats (|sum| < 2^24)
    // window_u8i over one row of n cells, scale 1: float(the exact integer sum) of each.
    auto cell_sums = [](const kernels::MaskTable& k, const uint8_t* cells, size_t count, size_t step, int32_t zp0,
                        const int16_t* coef, float* out) { k.window_u8i(cells, 1, count, 0, step, zp0, coef, 1.0f, out); };
    const kernels::MaskTable& s = kernels::mask_scalar_table();
    s.dot_f32(xf.data(), n, stride, cf, ref_f.data());
    s.dot_u8f(xq.data(), n, stride, zp, cf, ref_u.data());
    cell_sums(s, xq.data(), n, stride, 117, ci, ref_i.data());
    for (size_t i = 0; i < n; ++i) {
        double df = 0, du = 0;
        long long di = 0;
        for (int k = 0; k < 32; ++k) {
            df += double(cf[k]) * xf[i * stride + k];
            du += double(cf[k]) * (double(xq[i * stride + k]) - 117.0);
            di += (long long)ci[k] * (int(xq[i * stride + k]) - 117);
        }
        CHECK(std::fabs(ref_f[i] - df) <= 1e-5 * (1 + std::fabs(df)));
        CHECK(std::fabs(ref_u[i] - du) <= 1e-4 * (1 + std::fabs(du)));
        CHECK(ref_i[i] == float(di));
    }
    // The extreme integer case: every term 255 * 255.
    {
        std::vector<uint8_t> hi(9 * 32, 255);  // 9 cells: a batch of 8 and a tail of 1 on the AVX2 path
        int16_t c255[32];
        for (auto& c : c255) c = 255;
        float out[9] = {};
        for (const kernels::MaskTable* k : mask_tables()) {
            cell_sums(*k, hi.data(), 9, 32, 0, c255, out);
            for (float v : out) CHECK(v == float(32 * 255 * 255));
            cell_sums(*k, hi.data(), 9, 32, 255, c255, out);
            for (float v : out) CHECK(v == 0.0f);
            for (auto& c : c255) c = -255;
            cell_sums(*k, hi.data(), 9, 32, 0, c255, out);
            for (float v : out) CHECK(v == float(-32 * 255 * 255));
            for (auto& c : c255) c = 255;
        }
    }
    // window_u8i: windows of 5 rows x 1 to 37 cells (blocks of 8 and what is left: on AVX2 a last
    // block overlapping the one before it; AVX-512: blocks of 16, a row's end as one of 16 or 8), rows 40 cells apart: each value float(exact sum) *
    // scale, the same bits on every path, nothing written past the window.
    for (size_t cols : {size_t(1), size_t(5), size_t(7), size_t(8), size_t(9), size_t(15), size_t(16), size_t(19), size_t(24),
                        size_t(26), size_t(37)}) {
        const size_t rows = 5, cs = 40 * 32;
        std::vector<uint8_t> win(rows * cs);
        for (auto& v : win) v = uint8_t(lcg(seed) >> 24);
        for (size_t k = 0; k < 32; ++k) win[k] = 255;  // the first cell at the extreme
        const float scale = 0.0123f;
        std::vector<float> want(rows * cols), have(rows * cols);
        for (size_t r = 0; r < rows; ++r)
            for (size_t j = 0; j < cols; ++j) {
                long long di = 0;
                for (int k = 0; k < 32; ++k) di += (long long)ci[k] * (int(win[r * cs + j * 32 + k]) - 3);
                want[r * cols + j] = float(di) * scale;
            }
        for (const kernels::MaskTable* k : mask_tables()) {
            std::vector<float> padded(rows * cols + 8, 1e30f);
            k->window_u8i(win.data(), rows, cols, cs, 32, 3, ci, scale, padded.data());
            std::copy(padded.begin(), padded.begin() + std::ptrdiff_t(rows * cols), have.begin());
            bool ok = true;
            for (size_t i = 0; i < have.size(); ++i) ok = ok && same_bits(have[i], want[i]);
            for (size_t i = rows * cols; i < padded.size(); ++i) ok = ok && padded[i] == 1e30f;
            CHECK(ok);
            int16_t c255[32];
            for (auto& c : c255) c = -255;
            std::vector<uint8_t> hi(9 * 32, 255);
            float ext[9];
            k->window_u8i(hi.data(), 1, 9, 0, 32, 0, c255, 1.0f, ext);
            for (float v : ext) CHECK(v == float(-32 * 255 * 255));
        }
    }
    for (const kernels::MaskTable* k : mask_tables()) {
        k->dot_f32(xf.data(), n, stride, cf, got.data());
        bool ok = true;
        for (size_t i = 0; i < n; ++i) ok = ok && same_bits(got[i], ref_f[i]);
        CHECK(ok);
        k->dot_u8f(xq.data(), n, stride, zp, cf, got.data());
        ok = true;
        for (size_t i = 0; i < n; ++i) ok = ok && same_bits(got[i], ref_u[i]);
        CHECK(ok);
        cell_sums(*k, xq.data(), n, stride, 117, ci, got_i.data());
        ok = true;
        for (size_t i = 0; i < n; ++i) ok = ok && same_bits(got_i[i], ref_i[i]);
        CHECK(ok);
        // blend_row: values around 0 (signs decided by rounding), zeros, infinities (inf * 0 = NaN: 0).
        const size_t m = 77;
        std::vector<float> a(m), b(m);
        for (size_t j = 0; j < m; ++j) {
            a[j] = (unit(seed) - 0.5f) * 1e-6f;
            b[j] = -a[j] * (1.0f + (unit(seed) - 0.5f) * 1e-6f);
        }
        a[3] = 0.0f; b[3] = -0.0f; a[40] = INFINITY; b[41] = -INFINITY;
        std::vector<uint8_t> want(m), have(m, 9);
        // sign_row: v > 0 itself (NaN, -0 and -inf: 0; +inf: 1), at every length (the blocks and tails).
        {
            std::vector<float> v(a);
            v[5] = NAN; v[6] = -0.0f; v[7] = INFINITY; v[8] = -INFINITY; v[70] = 1e-45f;
            for (size_t len = 0; len <= m; ++len) {
                std::vector<uint8_t> got(m, 9);
                size_t ones = 0;
                const size_t got_n = k->sign_row(v.data(), len, got.data());
                for (size_t j = 0; j < len; ++j) {
                    CHECK(got[j] == uint8_t(v[j] > 0.0f));
                    ones += v[j] > 0.0f;
                }
                for (size_t j = len; j < m; ++j) CHECK(got[j] == 9);  // nothing past the row
                CHECK(got_n == ones);
            }
        }
        for (size_t len = 0; len <= m; ++len) {  // every length: the blocks and what is left
            std::vector<uint8_t> got(m, 9);
            size_t ones = 0;
            const size_t got_n = k->blend_row(a.data(), b.data(), 0.625f, 0.375f, len, got.data());
            for (size_t j = 0; j < len; ++j) {
                float t = a[j] * 0.625f;
                t = t + b[j] * 0.375f;
                CHECK(got[j] == uint8_t(t > 0.0f));
                ones += t > 0.0f;
            }
            for (size_t j = len; j < m; ++j) CHECK(got[j] == 9);  // nothing past the row
            CHECK(got_n == ones);
        }
        const size_t want_n = kernels::mask_scalar_table().blend_row(a.data(), b.data(), 0.625f, 0.375f, m, want.data());
        const size_t have_n = k->blend_row(a.data(), b.data(), 0.625f, 0.375f, m, have.data());
        CHECK(want == have && want_n == have_n);
        size_t ones = 0;
        for (size_t j = 0; j < m; ++j) {
            float t = a[j] * 0.625f;
            t = t + b[j] * 0.375f;
            ones += t > 0.0f;
            CHECK(want[j] == uint8_t(t > 0.0f));
        }
        CHECK(want_n == ones && ones > 5 && ones < m - 5);
        std::printf("mask kernels checked on %s\n", k->name);
    }
}

// window_u8i's exact sums for every kind of coefficient set the vector paths treat apart (AVX-VNNI
// splits the coefficients into signed bytes: one part for [-128, 127], two for [-256, 254], three
// or the negation otherwise): each set against the exact sum in 64-bit integers, with prototype
// bytes and zero points at 0 and 255, windows of 1 to 19 cells a row.
static void test_window_u8i_coefficient_kinds() {
    uint32_t seed = 99;
    auto in = [&seed](int lo, int hi) { return lo + int(lcg(seed) % uint32_t(hi - lo + 1)); };
    struct Kind {
        const char* what;
        int lo, hi;           // coefficients drawn from [lo, hi]
        int16_t first, last;  // and these two forced in (the kind's extremes)
    };
    const Kind kinds[] = {
        {"one signed byte", -128, 127, -128, 127},
        {"zero point 128 (qc - 128)", -128, 127, 0, -128},
        {"two parts", -256, 254, -255, 254},
        {"zero point 0 (qc in [0, 255])", 0, 255, 255, 0},
        {"zero point 255 (qc - 255)", -255, 0, -255, 0},
        {"both extremes", -255, 255, 255, -255},
        {"all 255", 255, 255, 255, 255},
        {"all -255", -255, -255, -255, -255},
        {"all zero", 0, 0, 0, 0},
        {"small", -3, 3, 3, -3},
    };
    const size_t rows = 3, cs = 21 * 32;
    std::vector<uint8_t> win(rows * cs);
    for (const Kind& kind : kinds) {
        int16_t c[32];
        for (auto& v : c) v = int16_t(in(kind.lo, kind.hi));
        c[0] = kind.first;
        c[31] = kind.last;
        for (int fill = 0; fill < 3; ++fill) {  // random bytes, all 0, all 255
            for (auto& v : win) v = fill == 0 ? uint8_t(lcg(seed) >> 24) : fill == 1 ? 0 : 255;
            if (fill == 0) win[5] = 0, win[6] = 255;
            for (int32_t zp : {0, 255, 128, 7}) {
                for (size_t cols : {size_t(1), size_t(7), size_t(8), size_t(13), size_t(19)}) {
                    const float scale = 0.37f;
                    std::vector<float> want(rows * cols);
                    for (size_t r = 0; r < rows; ++r)
                        for (size_t j = 0; j < cols; ++j) {
                            long long di = 0;
                            for (int k = 0; k < 32; ++k) di += (long long)c[k] * (int(win[r * cs + j * 32 + k]) - zp);
                            want[r * cols + j] = float(di) * scale;
                        }
                    for (const kernels::MaskTable* k : mask_tables()) {
                        std::vector<float> have(rows * cols + 8, 1e30f);
                        k->window_u8i(win.data(), rows, cols, cs, 32, zp, c, scale, have.data());
                        bool ok = true;
                        for (size_t i = 0; i < want.size(); ++i) ok = ok && same_bits(have[i], want[i]);
                        for (size_t i = want.size(); i < have.size(); ++i) ok = ok && have[i] == 1e30f;
                        if (!ok)
                            std::printf("window_u8i on %s: %s, fill %d, zp %d, %zu cols\n", k->name, kind.what, fill,
                                        int(zp), cols);
                        CHECK(ok);
                    }
                }
            }
        }
    }
}

// PyTorch's bilinear (align_corners=False) of a whole (gh, gw) map to (H, W), written per pixel
// from the formula, then > 0 and Ultralytics' crop: the reference render_mask must equal.
// PyTorch's bilinear source taps (align_corners=False) along one axis, for the references below.
static void axis(float scale, int dst, int n, int& i0, int& i1, float& w0, float& w1) {
    float src = scale * (float(dst) + 0.5f) - 0.5f;
    if (src < 0) src = 0;
    i0 = std::min(int(std::floor(src)), n - 1);
    i1 = i0 < n - 1 ? i0 + 1 : i0;
    w1 = std::min(std::max(src - float(i0), 0.0f), 1.0f);
    w0 = 1.0f - w1;
}

static std::vector<uint8_t> whole_map_reference(const std::vector<float>& map, int gh, int gw, int H, int W,
                                                const float box[4]) {
    std::vector<uint8_t> out(size_t(H) * W, 0);
    const float sy = float(gh) / float(H), sx = float(gw) / float(W);
    for (int y = 0; y < H; ++y)
        for (int x = 0; x < W; ++x) {
            int y0, y1, x0, x1;
            float h0, h1, w0, w1;
            axis(sy, y, gh, y0, y1, h0, h1);
            axis(sx, x, gw, x0, x1, w0, w1);
            const float top = map[size_t(y0) * gw + x0] * w0 + map[size_t(y0) * gw + x1] * w1;
            const float bot = map[size_t(y1) * gw + x0] * w0 + map[size_t(y1) * gw + x1] * w1;
            const float v = top * h0 + bot * h1;
            const bool in = float(x) >= box[0] && float(x) < box[2] && float(y) >= box[1] && float(y) < box[3];
            out[size_t(y) * W + x] = uint8_t(in && v > 0.0f);
        }
    return out;
}

// The window's logits cut from the whole map.
static std::vector<float> cut(const std::vector<float>& map, int gw, const MaskWindow& w) {
    std::vector<float> out(size_t(w.rows) * w.cols);
    for (int r = 0; r < w.rows; ++r)
        for (int c = 0; c < w.cols; ++c) out[size_t(r) * w.cols + c] = map[size_t(w.row0 + r) * gw + w.col0 + c];
    return out;
}

// render_mask of the sub-rectangle [H/4, 3H/4) x [W/5, W/5 + W/2) into rows 3 bytes longer than the
// rectangle (a row stride): the same pixels as `ref`, the whole (H, W) mask.
static bool sub_rectangle_matches(const float* logits, const MaskWindow& w, const MaskGrid& g, const MaskSampling& s,
                                  const float* box, const std::vector<uint8_t>& ref, MaskScratch& scratch) {
    const int H = g.image_height, W = g.image_width;
    const int r0 = H / 4, c0 = W / 5, h = H / 2, wd = W / 2;
    std::vector<uint8_t> sub(size_t(h) * (wd + 3), 9);
    render_mask(logits, w, g, s, box, r0, c0, h, wd, sub.data(), size_t(wd + 3), scratch);
    bool ok = true;
    for (int r = 0; r < h; ++r)
        for (int c = 0; c < wd; ++c) ok = ok && sub[size_t(r) * (wd + 3) + c] == ref[size_t(r0 + r) * W + c0 + c];
    return ok;
}

static void test_render_matches_whole_map() {
    uint32_t seed = 11;
    MaskScratch scratch;
    struct Case { int gh, gw, H, W; };
    for (const Case cs : {Case{16, 16, 64, 64}, Case{12, 20, 48, 80}, Case{10, 10, 40, 40}, Case{7, 9, 21, 36},
                          Case{20, 44, 80, 176}}) {  // the last: crop rows of more than 32 cells
        const MaskGrid g{cs.gh, cs.gw, cs.H, cs.W};
        std::vector<float> map(size_t(cs.gh) * cs.gw);
        // A smooth blob plus noise: signs change inside boxes.
        for (int r = 0; r < cs.gh; ++r)
            for (int c = 0; c < cs.gw; ++c)
                map[size_t(r) * cs.gw + c] = 3.0f - 0.12f * float((r - cs.gh / 2) * (r - cs.gh / 2) + (c - cs.gw / 3) * (c - cs.gw / 3)) +
                                              (unit(seed) - 0.5f) * 2.0f;
        std::vector<std::vector<float>> boxes = {
            {0, 0, float(cs.W), float(cs.H)},                         // the whole image
            {-20, -5, 13.3f, 9.9f},                                   // over the top-left border
            {float(cs.W) - 7.5f, float(cs.H) - 3.2f, float(cs.W) + 30, float(cs.H) + 9},  // bottom-right border
            {10.2f, 11.7f, 11.1f, 12.05f},                            // smaller than a prototype cell
            {5, 5, 5, 9},                                             // zero width
            {float(cs.W) + 5, 0, float(cs.W) + 9, 4},                 // outside
            {4.0f, 8.0f, 20.0f, 16.0f},                               // integer edges
        };
        for (int i = 0; i < 40; ++i) {
            const float x1 = unit(seed) * cs.W * 1.2f - 0.1f * cs.W, y1 = unit(seed) * cs.H * 1.2f - 0.1f * cs.H;
            boxes.push_back({x1, y1, x1 + unit(seed) * cs.W * 0.6f, y1 + unit(seed) * cs.H * 0.6f});
        }
        const MaskSampling in = sampling_to_input(g);
        const MaskWindow full{0, 0, cs.gh, cs.gw, 0};
        for (const auto& b : boxes) {
            const std::vector<uint8_t> ref = whole_map_reference(map, cs.gh, cs.gw, cs.H, cs.W, b.data());
            // From the whole map, and from the box's window only: both equal the reference.
            std::vector<uint8_t> got(size_t(cs.H) * cs.W, 7);
            size_t set = render_mask(map.data(), full, g, in, b.data(), 0, 0, cs.H, cs.W, got.data(), size_t(cs.W), scratch);
            CHECK(got == ref);
            std::vector<uint8_t> zeroed(size_t(cs.H) * cs.W, 0);  // out_zeroed: writes only inside the crop
            render_mask(map.data(), full, g, in, b.data(), 0, 0, cs.H, cs.W, zeroed.data(), size_t(cs.W), scratch, true);
            CHECK(zeroed == ref);
            size_t ref_set = 0;
            for (uint8_t v : ref) ref_set += v;
            CHECK(set == ref_set);
            const MaskWindow w = mask_window(b.data(), g);
            if (w.rows > 0) {
                const std::vector<float> part = cut(map, cs.gw, w);
                std::fill(got.begin(), got.end(), 7);
                render_mask(part.data(), w, g, in, b.data(), 0, 0, cs.H, cs.W, got.data(), size_t(cs.W), scratch);
                CHECK(got == ref);
                CHECK(mask_has_pixels(part.data(), w, g, in, b.data(), scratch) == (ref_set > 0));
                // The prototype resolution: the sign of the logit at each cell inside the box scaled
                // by proto / input (Ultralytics' process_mask with upsample=False).
                const MaskSampling ps = sampling_to_proto(g);
                const float rx = float(double(cs.gw) / cs.W), ry = float(double(cs.gh) / cs.H);
                const float pb[4] = {b[0] * rx, b[1] * ry, b[2] * rx, b[3] * ry};
                std::vector<uint8_t> pm(size_t(cs.gh) * cs.gw, 7);
                render_mask(part.data(), w, g, ps, pb, 0, 0, cs.gh, cs.gw, pm.data(), size_t(cs.gw), scratch);
                bool ok = true;
                for (int r = 0; r < cs.gh; ++r)
                    for (int c = 0; c < cs.gw; ++c) {
                        const bool in_box = float(c) >= pb[0] && float(c) < pb[2] && float(r) >= pb[1] && float(r) < pb[3];
                        ok = ok && pm[size_t(r) * cs.gw + c] == uint8_t(in_box && map[size_t(r) * cs.gw + c] > 0.0f);
                    }
                CHECK(ok);
                // The same mask copied from the window's sign bytes into a zeroed plane.
                std::vector<uint8_t> signs(part.size()), from_signs(pm.size(), 0);
                for (size_t i = 0; i < part.size(); ++i) signs[i] = part[i] > 0.0f;
                render_proto_mask(signs.data(), w, g, pb, from_signs.data(), size_t(cs.gw));
                CHECK(from_signs == pm);
            } else {
                CHECK(ref_set == 0);
            }
            // A sub-rectangle with a row stride: the same pixels.
            CHECK(sub_rectangle_matches(map.data(), full, g, in, b.data(), ref, scratch));
        }
    }
}

// MaskRule::yolov5 (YOLOv5 v7.0's process_mask) from the whole map, per pixel from the formula:
// sigmoid of every cell, zero outside the box scaled to the grid, PyTorch's bilinear of the whole
// probability map, > 0.5, no crop at the input. render_mask and mask_has_pixels from the box's
// window (and from the whole map, and into a sub-rectangle) must equal it.
static void test_yolov5_rule_matches_whole_map() {
    uint32_t seed = 23;
    MaskScratch scratch;
    struct Case { int gh, gw, H, W; };
    int outside_box = 0, tiny_set = 0;
    for (const Case cs : {Case{16, 16, 64, 64}, Case{12, 20, 48, 80}, Case{7, 9, 21, 36}, Case{10, 10, 37, 43}}) {
        MaskGrid g{cs.gh, cs.gw, cs.H, cs.W};
        g.rule = MaskRule::yolov5;
        std::vector<float> map(size_t(cs.gh) * cs.gw);
        for (int r = 0; r < cs.gh; ++r)
            for (int c = 0; c < cs.gw; ++c)
                map[size_t(r) * cs.gw + c] = 3.0f - 0.12f * float((r - cs.gh / 2) * (r - cs.gh / 2) + (c - cs.gw / 3) * (c - cs.gw / 3)) +
                                              (unit(seed) - 0.5f) * 4.0f;
        std::vector<std::vector<float>> boxes = {
            {0, 0, float(cs.W), float(cs.H)}, {-20, -5, 13.3f, 9.9f},
            {float(cs.W) - 7.5f, float(cs.H) - 3.2f, float(cs.W) + 30, float(cs.H) + 9},
            {10.2f, 11.7f, 11.1f, 12.05f}, {5, 5, 5, 9}, {float(cs.W) + 5, 0, float(cs.W) + 9, 4}, {4.0f, 8.0f, 20.0f, 16.0f},
        };
        for (int i = 0; i < 40; ++i) {
            const float x1 = unit(seed) * cs.W * 1.2f - 0.1f * cs.W, y1 = unit(seed) * cs.H * 1.2f - 0.1f * cs.H;
            const float span = i % 4 == 0 ? 3.0f : cs.W * 0.6f;  // every fourth a few pixels
            boxes.push_back({x1, y1, x1 + unit(seed) * span, y1 + unit(seed) * span});
        }
        const float rx = float(double(cs.gw) / cs.W), ry = float(double(cs.gh) / cs.H);
        const MaskSampling in = sampling_to_input(g);
        const MaskWindow full{0, 0, cs.gh, cs.gw, 0};
        const float sy = float(cs.gh) / float(cs.H), sx = float(cs.gw) / float(cs.W);
        for (const auto& b : boxes) {
            std::vector<float> prob(map.size());
            for (int r = 0; r < cs.gh; ++r)
                for (int c = 0; c < cs.gw; ++c) {
                    const bool kept = float(c) >= b[0] * rx && float(c) < b[2] * rx && float(r) >= b[1] * ry && float(r) < b[3] * ry;
                    prob[size_t(r) * cs.gw + c] = kept ? 1.0f / (1.0f + std::exp(-map[size_t(r) * cs.gw + c])) : 0.0f;
                }
            std::vector<uint8_t> ref(size_t(cs.H) * cs.W);
            size_t ref_set = 0;
            for (int y = 0; y < cs.H; ++y)
                for (int x = 0; x < cs.W; ++x) {
                    int y0, y1, x0, x1;
                    float h0, h1, w0, w1;
                    axis(sy, y, cs.gh, y0, y1, h0, h1);
                    axis(sx, x, cs.gw, x0, x1, w0, w1);
                    const float top = prob[size_t(y0) * cs.gw + x0] * w0 + prob[size_t(y0) * cs.gw + x1] * w1;
                    const float bot = prob[size_t(y1) * cs.gw + x0] * w0 + prob[size_t(y1) * cs.gw + x1] * w1;
                    const uint8_t v = top * h0 + bot * h1 > 0.5f;
                    ref[size_t(y) * cs.W + x] = v;
                    ref_set += v;
                    const bool in_box = float(x) >= b[0] && float(x) < b[2] && float(y) >= b[1] && float(y) < b[3];
                    outside_box += v && !in_box;
                }
            tiny_set += (b[2] - b[0] < 4.0f) && ref_set > 0;
            std::vector<uint8_t> got(ref.size(), 7);
            CHECK(render_mask(map.data(), full, g, in, b.data(), 0, 0, cs.H, cs.W, got.data(), size_t(cs.W), scratch) == ref_set);
            CHECK(got == ref);
            const MaskWindow w = mask_window(b.data(), g);
            if (w.rows > 0) {
                const std::vector<float> part = cut(map, cs.gw, w);
                std::vector<uint8_t> zeroed(ref.size(), 0);
                render_mask(part.data(), w, g, in, b.data(), 0, 0, cs.H, cs.W, zeroed.data(), size_t(cs.W), scratch, true);
                CHECK(zeroed == ref);
                CHECK(mask_has_pixels(part.data(), w, g, in, b.data(), scratch) == (ref_set > 0));
                CHECK(sub_rectangle_matches(part.data(), w, g, in, b.data(), ref, scratch));
            } else {
                CHECK(ref_set == 0);
            }
        }
    }
    CHECK(outside_box > 0);  // the rule's pixels past the box are there (no crop at the input)
    CHECK(tiny_set > 0);     // and boxes of a few pixels set some
}

// Worked by hand: a 2 x 2 map [[-1, 3], [1, -3]] to 8 x 8 (scale 0.25). Pixel x = 3: src =
// 0.25 * 3.5 - 0.5 = 0.375 -> cells 0, 1 with weights 0.625, 0.375; pixel y = 0: src < 0 -> row 0
// alone. Row 0 at x = 3: -1 * 0.625 + 3 * 0.375 = 0.5 > 0; at x = 2 (src 0.125): -0.875 + 0.375 < 0.
// Row y = 3 (weights 0.625, 0.375) at x = 0 (col 0 alone): -1 * 0.625 + 1 * 0.375 = -0.25 < 0;
// y = 4 (src 0.625, weights 0.375, 0.625): -0.375 + 0.625 = 0.25 > 0.
static void test_hand_worked() {
    const MaskGrid g{2, 2, 8, 8};
    const std::vector<float> map = {-1, 3, 1, -3};
    const MaskWindow w{0, 0, 2, 2, 0};
    const float box[4] = {0, 0, 8, 8};
    std::vector<uint8_t> m(64);
    MaskScratch s;
    render_mask(map.data(), w, g, sampling_to_input(g), box, 0, 0, 8, 8, m.data(), 8, s);
    CHECK(m[0 * 8 + 3] == 1);
    CHECK(m[0 * 8 + 2] == 0);
    CHECK(m[3 * 8 + 0] == 0);
    CHECK(m[4 * 8 + 0] == 1);
    // Crop: box x2 = 3.0 excludes column 3, x1 = 2.5 excludes column 2 (p >= 2.5 -> from 3).
    const float narrow[4] = {2.5f, 0.0f, 3.0f, 8.0f};
    render_mask(map.data(), w, g, sampling_to_input(g), narrow, 0, 0, 8, 8, m.data(), 8, s);
    size_t any = 0;
    for (uint8_t v : m) any += v;
    CHECK(any == 0);
    const float one[4] = {2.5f, 0.0f, 3.5f, 1.0f};  // exactly pixel (0, 3)
    CHECK(render_mask(map.data(), w, g, sampling_to_input(g), one, 0, 0, 8, 8, m.data(), 8, s) == 1 && m[3] == 1);
}

// Element (h, w, c) of a spec's buffer, as tensor_view documents the orders.
static size_t at(const TensorSpec& s, int h, int w, int c) {
    const size_t wp = size_t(s.padded_width), cp = size_t(s.padded_channels);
    switch (s.order) {
        case Order::NHWC: return h * wp * cp + w * cp + c;
        case Order::NHCW: return h * wp * cp + c * wp + w;
        case Order::F8CR: return h * wp * cp + (c - c % 8) * wp + w * 8 + c % 8;
        case Order::NCHW: return size_t(c) * s.padded_height * wp + h * wp + w;
    }
    return 0;
}

// Window logits from each kind of prototype view against a double-precision reference; the
// integer path exactly (its value is (s_p s_c) times an exact integer sum).
static void test_window_logits() {
    uint32_t seed = 5;
    const int gh = 12, gw = 10, C = 32;
    struct Kind { DType t; Order o; int cp, wp; bool per_channel; };
    const Kind kinds[] = {{DType::U8, Order::NHWC, 32, 10, false}, {DType::U8, Order::NHWC, 40, 12, false},
                          {DType::F32, Order::NHWC, 32, 10, false}, {DType::U8, Order::NHCW, 32, 16, false},
                          {DType::U16, Order::NHWC, 32, 10, false}, {DType::U8, Order::F8CR, 32, 10, false},
                          {DType::U8, Order::NHWC, 32, 10, true}};
    // Coefficients: a uint8 tensor (integer path) and their float values.
    TensorSpec cs = spec("coef", DType::U8, Order::NHWC, 4, 4, C, 4, 4, C);
    cs.zp = {131.0f};
    cs.scale = {0.02f};
    std::vector<uint8_t> coef(cs.frame_stride);
    for (auto& v : coef) v = uint8_t(lcg(seed) >> 24);
    const TensorView cv = make_tensor_view(cs);
    const CoefPlan cplan = make_coef_plan(cv);
    CHECK(cplan.integer);
    const int crow = 2, ccol = 3;
    float deq[32];
    for (int k = 0; k < C; ++k) deq[k] = (float(coef[at(cs, crow, ccol, k)]) - 131.0f) * 0.02f;
    const MaskWindow w{3, 2, 6, 7, 0};
    for (const Kind& kd : kinds) {
        TensorSpec ps = spec("proto", kd.t, kd.o, gh, gw, C, gh, kd.wp, kd.cp);
        if (kd.per_channel) {
            ps.zp.assign(C, 0.0f);
            ps.scale.assign(C, 0.0f);
            for (int k = 0; k < C; ++k) { ps.zp[k] = float(100 + k); ps.scale[k] = 0.01f + 0.001f * k; }
        } else {
            ps.zp = {kd.t == DType::U16 ? 30000.0f : 120.0f};
            ps.scale = {kd.t == DType::U16 ? 1e-4f : 0.03f};
        }
        const TensorView pv = make_tensor_view(ps);
        std::vector<uint8_t> bytes(ps.frame_stride * dtype_size(kd.t));
        std::vector<double> value(size_t(gh) * gw * C);  // the dequantized values, for the reference
        for (int r = 0; r < gh; ++r)
            for (int c = 0; c < gw; ++c)
                for (int k = 0; k < C; ++k) {
                    const size_t e = at(ps, r, c, k);
                    double v = 0;
                    if (kd.t == DType::U8) {
                        const uint8_t q = uint8_t(lcg(seed) >> 24);
                        bytes[e] = q;
                        v = (double(q) - ps.zp[kd.per_channel ? k : 0]) * double(ps.scale[kd.per_channel ? k : 0]);
                    } else if (kd.t == DType::U16) {
                        const uint16_t q = uint16_t(lcg(seed) >> 16);
                        std::memcpy(bytes.data() + 2 * e, &q, 2);
                        v = (double(q) - ps.zp[0]) * double(ps.scale[0]);
                    } else {
                        const float f = (unit(seed) - 0.5f) * 4.0f;
                        std::memcpy(bytes.data() + 4 * e, &f, 4);
                        v = f;
                    }
                    value[(size_t(r) * gw + c) * C + k] = v;
                }
        const ProtoPlan pplan = make_proto_plan(pv);
        MaskCoefficients mc;
        prepare_coefficients(pplan, cplan, deq, coef.data(), crow, ccol, mc);
        const bool integer = kd.t == DType::U8 && !kd.per_channel && kd.o == Order::NHWC;
        CHECK(mc.integer == integer);
        std::vector<float> ref_bits;
        for (const kernels::MaskTable* k : mask_tables()) {
            CHECK(kernels::select(k->name));
            std::vector<float> out(size_t(w.rows) * w.cols, 1e30f), cell;
            std::vector<uint8_t> signs(out.size() + 8, 9);
            window_logits(pplan, bytes.data(), mc, w, out.data(), signs.data(), cell);
            bool signs_ok = true;  // logit > 0 for each, nothing written past the window
            for (size_t i = 0; i < signs.size(); ++i)
                signs_ok = signs_ok && signs[i] == (i < out.size() ? uint8_t(out[i] > 0.0f) : uint8_t(9));
            CHECK(signs_ok);
            bool close = true;
            for (int r = 0; r < w.rows; ++r)
                for (int c = 0; c < w.cols; ++c) {
                    double ref = 0, mag = 0;
                    for (int kk = 0; kk < C; ++kk) {
                        const double t = double(deq[kk]) * value[(size_t(w.row0 + r) * gw + w.col0 + c) * C + kk];
                        ref += t;
                        mag += std::fabs(t);
                    }
                    const float got = out[size_t(r) * w.cols + c];
                    if (integer) {
                        // (s_p s_c) * exact integer: one float product's rounding from the exact value.
                        close = close && std::fabs(got - ref) <= 1e-6 * (1 + mag);
                    } else {
                        close = close && std::fabs(got - ref) <= 2e-6 * (1 + mag);
                    }
                }
            CHECK(close);
            if (ref_bits.empty()) ref_bits = out;
            CHECK(std::memcmp(ref_bits.data(), out.data(), out.size() * sizeof(float)) == 0);
        }
    }
    kernels::select(mask_tables().back()->name);
}

// The decoder end to end on a tiny model: one head (8 x 8 cells, stride 8, 64 x 64 input, boxes
// given as distances), a 16 x 16 x 32 uint8 prototype tensor and uint8 coefficients whose values
// are small integers, so every logit is an exact integer and the expected masks follow from the
// whole-map reference above without rounding questions.
static void test_decoder_masks() {
    const int G = 8, P = 16, C = 32, S = 64;
    Config cfg;
    cfg.outputs.push_back(spec("box", DType::F32, Order::NHWC, G, G, 4, G, G, 4));
    cfg.outputs.push_back(spec("cls", DType::F32, Order::NHWC, G, G, 2, G, G, 2));
    cfg.outputs.push_back(spec("coef", DType::U8, Order::NHWC, G, G, C, G, G, C));
    cfg.outputs.push_back(spec("proto", DType::U8, Order::NHWC, P, P, C, P, P, C));
    cfg.outputs[2].zp = {128.0f};
    cfg.outputs[2].scale = {1.0f};
    cfg.outputs[3].zp = {0.0f};
    cfg.outputs[3].scale = {1.0f};
    HeadSpec h;
    h.box_output = 0;
    h.cls_output = 1;
    h.mask_output = 2;
    h.stride = 8;
    cfg.heads = {h};
    cfg.proto_output = 3;
    cfg.num_classes = 2;
    cfg.bins = 1;
    cfg.settings.score_threshold = {0.5f};
    cfg.settings.normalized = false;
    cfg.settings.yxyx = false;
    cfg.settings.image_height = cfg.settings.image_width = S;
    std::vector<float> box(G * G * 4, 1.0f), cls(G * G * 2, 0.0f);
    std::vector<uint8_t> coef(G * G * C, 128), proto(P * P * C, 0);
    // Prototype channel 0: 1 in the left half, channel 1: 1 in the top half.
    for (int r = 0; r < P; ++r)
        for (int c = 0; c < P; ++c) {
            proto[(r * P + c) * C + 0] = c < P / 2;
            proto[(r * P + c) * C + 1] = r < P / 2;
        }
    // Detection A at cell (2, 2): centre (20, 20), distances 2 -> box (4, 4, 36, 36); mask =
    // 2 * ch0 - 1 * ch1 (logit 2, 1, -1 or 0 by quadrant). Detection B at cell (6, 5): centre
    // (44, 52), distances 1 -> (36, 44, 52, 60); coefficients -1, -1: never > 0, an empty mask.
    auto set_cell = [&](int r, int c, float score, float dist, int c0, int c1) {
        cls[(r * G + c) * 2] = score;
        for (int k = 0; k < 4; ++k) box[(r * G + c) * 4 + k] = dist;
        coef[(r * G + c) * C + 0] = uint8_t(128 + c0);
        coef[(r * G + c) * C + 1] = uint8_t(128 + c1);
    };
    set_cell(2, 2, 0.9f, 2.0f, 2, -1);
    set_cell(6, 5, 0.8f, 1.0f, -1, -1);
    std::vector<float> map(P * P);
    for (int r = 0; r < P; ++r)
        for (int c = 0; c < P; ++c) map[r * P + c] = 2.0f * float(c < P / 2) - 1.0f * float(r < P / 2);
    const void* ptrs[4] = {box.data(), cls.data(), coef.data(), proto.data()};
    const size_t sizes[4] = {box.size(), cls.size(), coef.size(), proto.size()};
    // The same with the end-to-end selection (both cells pass, so the same two rows, in order).
    for (int run = 0; run < 4; ++run) {
        const bool drop = run % 2 == 1;
        Config c = cfg;
        c.drop_empty_masks = drop;
        c.settings.end2end = run >= 2;
        Decoder dec(c);
        dec.decode(ptrs, sizes, 1);
        auto [dets, n] = dec.frame(0);
        CHECK(n == (drop ? 1u : 2u));
        const Decoder::FrameMasks fm = dec.masks(0);
        CHECK(fm.count == n);
        const MaskGrid g = dec.mask_grid();
        CHECK(g.proto_height == P && g.image_width == S);
        MaskScratch scratch;
        for (size_t i = 0; i < n; ++i) {
            const std::vector<uint8_t> ref = whole_map_reference(
                i == 0 ? map : std::vector<float>(P * P, -1.0f), P, P, S, S, dets[i].box);
            std::vector<uint8_t> got(S * S, 5);
            render_mask(fm.logits + fm.windows[i].offset, fm.windows[i], g, sampling_to_input(g), dets[i].box, 0, 0, S, S,
                        got.data(), S, scratch);
            CHECK(got == ref);
            CHECK(fm.windows[i].offset + size_t(fm.windows[i].rows) * fm.windows[i].cols <= fm.logit_count);
        }
        for (size_t i = 0; i < fm.logit_count; ++i) CHECK(fm.signs[i] == uint8_t(fm.logits[i] > 0.0f));
        CHECK(dets[0].box[0] == 4.0f && dets[0].box[2] == 36.0f);
        // Detection A's mask: pixels of the box with logit > 0: the left half minus where the top
        // half's -1 wins (logit 2 - 1 = 1 > 0 there too), so the box's part left of x = 32 plus
        // the bilinear edge; at least the pixel (10, 10) and not (10, 34) (right-top: -1).
        std::vector<uint8_t> a(S * S);
        render_mask(fm.logits + fm.windows[0].offset, fm.windows[0], g, sampling_to_input(g), dets[0].box, 0, 0, S, S,
                    a.data(), S, scratch);
        CHECK(a[10 * S + 10] == 1 && a[10 * S + 34] == 0 && a[3 * S + 10] == 0);
        // A second decode of the same data: the same logits (the workspace is reused), and once
        // warm no allocation at all, the empty-mask test and its scratch included.
        std::vector<float> first(fm.logits, fm.logits + fm.logit_count);
        dec.decode(ptrs, sizes, 1);
        const long before = g_allocations.load();
        for (int i = 0; i < 5; ++i) dec.decode(ptrs, sizes, 1);
        CHECK(g_allocations.load() == before);
        const Decoder::FrameMasks again = dec.masks(0);
        CHECK(again.logit_count == first.size() && std::equal(first.begin(), first.end(), again.logits));
        // Masks off (set_masks_enabled): the same detections, no windows nor logits; on again, the same masks.
        std::vector<Detection> with(dets, dets + n);
        dec.set_masks_enabled(false);
        dec.decode(ptrs, sizes, 1);
        auto [dets_off, n_off] = dec.frame(0);
        CHECK(n_off == with.size() && std::memcmp(dets_off, with.data(), n_off * sizeof(Detection)) == 0);
        const Decoder::FrameMasks off = dec.masks(0);
        if (c.drop_empty_masks)  // (it needs the masks to keep a detection: computed all the same)
            CHECK(off.count == n && off.logit_count == first.size());
        else
            CHECK(off.count == 0 && off.windows == nullptr && off.logit_count == 0);
        dec.set_masks_enabled(true);
        dec.decode(ptrs, sizes, 1);
        const Decoder::FrameMasks on = dec.masks(0);
        CHECK(on.count == n && on.logit_count == first.size() && std::equal(first.begin(), first.end(), on.logits));
    }
    // Bad configurations: a clear error naming the output.
    Config bad_c = cfg;
    bad_c.outputs[2].channels = bad_c.outputs[2].padded_channels = 16;
    bad_c.outputs[2].frame_stride = G * G * 16;
    bool threw = false;
    try { Decoder d(bad_c); } catch (const std::invalid_argument& e) {
        threw = std::strstr(e.what(), "'coef'") && std::strstr(e.what(), "16 mask coefficients") && std::strstr(e.what(), "32");
    }
    CHECK(threw);
    Config no_proto = cfg;
    no_proto.proto_output = -1;
    threw = false;
    try { Decoder d(no_proto); } catch (const std::invalid_argument& e) { threw = std::strstr(e.what(), "prototype") != nullptr; }
    CHECK(threw);
}

// HailoRT 5.2's 46-byte records (hailort.h at v5.2.0, hailo_detection_with_byte_mask_t: a size_t
// mask_offset after the pointer; yolov5_seg_post_process.cpp sets it to the byte after the record):
// the 4.23 frame of the same detections with each record's 8 bytes inserted, by hand.
static void test_pack_byte_mask_52() {
    const int H = 20, W = 30;
    const float boxes[8] = {0.25f, 0.1f, 0.6f, 0.5f, 0.05f, 0.3f, 0.5f, 0.9f};
    const float scores[2] = {0.9f, 0.4f};
    const int32_t classes[2] = {3, 7};
    std::vector<uint8_t> masks(2 * H * W);
    for (size_t i = 0; i < masks.size(); ++i) masks[i] = uint8_t((i * 5) % 3 == 0);
    std::vector<uint8_t> old(4000, 0), now(4000, 0);
    const ByteMaskPacked a = pack_byte_mask_from_masks(boxes, scores, classes, 2, masks.data(), H, W, old.data(), old.size());
    const ByteMaskPacked b = pack_byte_mask_from_masks(boxes, scores, classes, 2, masks.data(), H, W, now.data(), now.size(),
                                                       ByteMaskLayout::HailoRT52);
    CHECK(a.detections == 2 && b.detections == 2 && b.bytes == a.bytes + 2 * 8);
    std::vector<uint8_t> want(old.begin(), old.begin() + 2);
    size_t off = 2;
    for (int i = 0; i < 2; ++i) {
        uint64_t size;
        std::memcpy(&size, old.data() + off + 22, 8);
        want.insert(want.end(), old.begin() + long(off), old.begin() + long(off + 38));
        const uint64_t mask_offset = uint64_t(want.size() + 8);
        const uint8_t* p = reinterpret_cast<const uint8_t*>(&mask_offset);
        want.insert(want.end(), p, p + 8);
        want.insert(want.end(), old.begin() + long(off + 38), old.begin() + long(off + 38 + size));
        off += 38 + size;
    }
    CHECK(want.size() == b.bytes && std::equal(want.begin(), want.end(), now.begin()));
    CHECK(byte_mask_record_bytes(ByteMaskLayout::HailoRT52) == 46 && byte_mask_record_bytes(ByteMaskLayout::HailoRT423) == 38);
    CHECK(byte_mask_frame_bytes(100, 2 * 640 * 640, ByteMaskLayout::HailoRT52) == 2 + 4600 + 819200);
    bool threw = false;
    try { byte_mask_record_bytes(ByteMaskLayout(7)); } catch (const std::invalid_argument&) { threw = true; }
    CHECK(threw);
}

// HAILO_NMS_WITH_BYTE_MASK: the bytes laid out as the header describes, read back by hand.
static void test_pack_byte_mask() {
    const int H = 20, W = 30;
    // Box 0: x 0.1..0.5, y 0.25..0.6 -> x0 = ceil(3) = 3, width = ceil(0.4 * 30) = 12 (float32:
    // 0.4f * 30 = 12.000001 -> 13), y0 = 5, height = ceil(0.35 * 20) = 7. Computed the way
    // HailoRT does, in float32, below, and compared.
    const float boxes[8] = {0.25f, 0.1f, 0.6f, 0.5f, 0.9f, 0.8f, 1.2f, 1.1f};  // box 1 reaches past the image
    const float scores[2] = {0.9f, 0.4f};
    const int32_t classes[2] = {3, 65535};
    std::vector<uint8_t> masks(2 * H * W);
    for (size_t i = 0; i < masks.size(); ++i) masks[i] = uint8_t((i * 7) % 3 == 0);
    auto crop_of = [&](int i) {
        const float* b = boxes + 4 * i;
        ByteMaskCrop c;
        c.x0 = uint32_t(std::max(std::ceil(b[1] * float(W)), 0.0f));
        c.y0 = uint32_t(std::max(std::ceil(b[0] * float(H)), 0.0f));
        c.width = uint32_t(std::ceil((b[3] - b[1]) * float(W)));
        c.height = uint32_t(std::ceil((b[2] - b[0]) * float(H)));
        return c;
    };
    const size_t need = 2 + 2 * 38 + size_t(crop_of(0).width) * crop_of(0).height + size_t(crop_of(1).width) * crop_of(1).height;
    std::vector<uint8_t> buf(need + 1, 0xAB);
    const ByteMaskPacked r = pack_byte_mask_from_masks(boxes, scores, classes, 2, masks.data(), H, W, buf.data(), buf.size());
    CHECK(r.detections == 2 && !r.truncated && r.bytes == need);
    uint16_t count;
    std::memcpy(&count, buf.data(), 2);
    CHECK(count == 2);
    size_t off = 2;
    for (int i = 0; i < 2; ++i) {
        float f[5];
        std::memcpy(f, buf.data() + off, 20);
        uint16_t cls;
        uint64_t size, ptr;
        std::memcpy(&cls, buf.data() + off + 20, 2);
        std::memcpy(&size, buf.data() + off + 22, 8);
        std::memcpy(&ptr, buf.data() + off + 30, 8);
        CHECK(f[0] == boxes[4 * i] && f[1] == boxes[4 * i + 1] && f[3] == boxes[4 * i + 3] && f[4] == scores[i]);
        CHECK(cls == uint16_t(classes[i]) && ptr == 0);
        const ByteMaskCrop c = crop_of(i);
        CHECK(size == uint64_t(c.width) * c.height);
        const ByteMaskCrop mine = byte_mask_crop(boxes[4 * i], boxes[4 * i + 1], boxes[4 * i + 2], boxes[4 * i + 3], H, W);
        CHECK(mine.x0 == c.x0 && mine.y0 == c.y0 && mine.width == c.width && mine.height == c.height);
        off += 38;
        bool ok = true;
        for (uint32_t y = 0; y < c.height; ++y)
            for (uint32_t x = 0; x < c.width; ++x) {
                const uint32_t iy = c.y0 + y, ix = c.x0 + x;
                const uint8_t want = (iy < uint32_t(H) && ix < uint32_t(W)) ? masks[size_t(i) * H * W + iy * W + ix] : 0;
                ok = ok && buf[off + y * c.width + x] == want;
            }
        CHECK(ok);
        off += size;
    }
    CHECK(buf[need] == 0xAB);  // nothing written past the last mask
    // HailoRT adds a detection only while offset + 38 + size < buffer size: exactly `need` bytes
    // hold the first detection only.
    std::vector<uint8_t> exact(need);
    const ByteMaskPacked t = pack_byte_mask_from_masks(boxes, scores, classes, 2, masks.data(), H, W, exact.data(), exact.size());
    CHECK(t.detections == 1 && t.truncated);
    std::memcpy(&count, exact.data(), 2);
    CHECK(count == 1);
    CHECK(byte_mask_frame_bytes(100, 2 * 640 * 640) == 2 + 3800 + 819200);
    // From logits: the same bytes as from the masks render_mask gives at the input size.
    const MaskGrid g{5, 8, H, W};
    std::vector<float> map(40);
    uint32_t seed = 3;
    for (auto& v : map) v = unit(seed) - 0.4f;
    const MaskWindow full{0, 0, 5, 8, 0};
    MaskWindow wins[2] = {full, full};
    MaskScratch sc;
    std::vector<uint8_t> rendered(2 * H * W);
    float px[8];
    for (int i = 0; i < 2; ++i) {
        const float* b = boxes + 4 * i;
        const float p[4] = {b[1] * W, b[0] * H, b[3] * W, b[2] * H};
        std::memcpy(px + 4 * i, p, sizeof p);
        render_mask(map.data(), full, g, sampling_to_input(g), p, 0, 0, H, W, rendered.data() + i * H * W, W, sc);
    }
    std::vector<uint8_t> a(need + 1, 0), b2(need + 1, 0);
    pack_byte_mask_from_masks(boxes, scores, classes, 2, rendered.data(), H, W, a.data(), a.size());
    pack_byte_mask(boxes, px, scores, classes, 2, wins, map.data(), g, b2.data(), b2.size());
    CHECK(a == b2);
}

// PyTorch's bilinear (align_corners=False) of one axis, written out again for the native test.
struct RefTap {
    int i0, i1;
    float w0, w1;
};
static RefTap ref_tap(float scale, int dst, int n) {
    float src = scale * (float(dst) + 0.5f) - 0.5f;
    if (src < 0.0f) src = 0.0f;
    const int i0 = std::min(int(std::floor(src)), n - 1);
    const float l = std::min(std::max(src - float(i0), 0.0f), 1.0f);
    return {i0, i0 < n - 1 ? i0 + 1 : i0, 1.0f - l, l};
}

// The whole (n_h, n_w) map `m` resized to (H, W): ((v00 w0 + v01 w1) h0 + (v10 w0 + v11 w1) h1).
static std::vector<float> ref_resize(const std::vector<float>& m, int n_h, int n_w, int H, int W, float sy, float sx) {
    std::vector<float> out(size_t(H) * W);
    for (int y = 0; y < H; ++y) {
        const RefTap ty = ref_tap(sy, y, n_h);
        for (int x = 0; x < W; ++x) {
            const RefTap tx = ref_tap(sx, x, n_w);
            float a = m[size_t(ty.i0) * n_w + tx.i0] * tx.w0;
            a = a + m[size_t(ty.i0) * n_w + tx.i1] * tx.w1;
            float b = m[size_t(ty.i1) * n_w + tx.i0] * tx.w0;
            b = b + m[size_t(ty.i1) * n_w + tx.i1] * tx.w1;
            float t = a * ty.w0;
            out[size_t(y) * W + x] = t + b * ty.w1;
        }
    }
    return out;
}

// sampling_native: process_mask_native's geometry worked by hand, and its two-step rendering
// against the steps done whole-map (upsample by f, crop the content, resize, > 0, crop the box).
static void test_native_sampling() {
    const MaskGrid big{160, 160, 640, 640};
    MaskSampling s = sampling_native(big, 480, 640);  // pad 160: 160 | 80 = 240, f 1; rows 20..140
    CHECK(s.up == 1 && s.top == 20 && s.left == 0 && s.src_h == 120 && s.src_w == 160 && s.sy == 0.25f && s.sx == 0.25f);
    s = sampling_native(big, 427, 640);  // pad 213: f 4; rows 106..533 of 640, no resize
    CHECK(s.up == 4 && s.top == 106 && s.src_h == 427 && s.src_w == 640 && s.sy == 1.0f && s.sx == 1.0f);
    s = sampling_native(big, 636, 640);  // pad 4: 4 | 2 = 6, f 2; rows 1..319 of 320
    CHECK(s.up == 2 && s.top == 1 && s.src_h == 318 && s.src_w == 320 && s.sy == 0.5f);
    CHECK(throws([&] { sampling_native(big, 0, 640); }, "must be positive"));
    // An 8 x 8 grid (input 32 x 32), original 27 x 40: gain 0.8, content 22 x 32, pad 10: 10 | 5
    // = 15, f 4; the 32 x 32 stage grid's rows 5..27 resized to 27 x 40 (scales 22/27, 0.8).
    const MaskGrid g{8, 8, 32, 32};
    s = sampling_native(g, 27, 40);
    CHECK(s.up == 4 && s.top == 5 && s.left == 0 && s.src_h == 22 && s.src_w == 32);
    CHECK(s.sy == float(22) / float(27) && s.sx == float(32) / float(40));
    uint32_t seed = 21;
    std::vector<float> logits(64);
    for (int r = 0; r < 8; ++r)
        for (int c = 0; c < 8; ++c) logits[size_t(r) * 8 + c] = 1.5f - 0.2f * float(std::abs(r - 4) + std::abs(c - 3)) + (unit(seed) - 0.5f);
    const std::vector<float> stage = ref_resize(logits, 8, 8, 32, 32, 0.25f, 0.25f);
    std::vector<float> content(stage.begin() + 5 * 32, stage.begin() + 27 * 32);
    const std::vector<float> want_map = ref_resize(content, 22, 32, 27, 40, float(22) / float(27), float(32) / float(40));
    const MaskWindow win{0, 0, 8, 8, 0};
    MaskScratch scratch;
    for (const kernels::MaskTable* k : mask_tables()) {
        CHECK(kernels::select(k->name));
        for (const std::vector<float>& box : {std::vector<float>{0, 0, 40, 27}, std::vector<float>{3.5f, 2.2f, 31.0f, 20.7f}}) {
            std::vector<uint8_t> got(27 * 40, 7);
            const size_t set = render_mask(logits.data(), win, g, s, box.data(), 0, 0, 27, 40, got.data(), 40, scratch);
            size_t want_set = 0;
            bool ok = true;
            for (int y = 0; y < 27; ++y)
                for (int x = 0; x < 40; ++x) {
                    const bool in = float(x) >= box[0] && float(x) < box[2] && float(y) >= box[1] && float(y) < box[3];
                    const uint8_t want = in && want_map[size_t(y) * 40 + x] > 0.0f;
                    want_set += want;
                    ok = ok && got[size_t(y) * 40 + x] == want;
                }
            CHECK(ok && set == want_set && want_set > 0);
        }
    }
    CHECK(kernels::select(mask_tables().back()->name));
}

// FUZZING.md run 14: the masks are cropped with the pixel box as decoded. A left edge one ulp
// past column 52 (52.000004) leaves column 52 out; normalized (/ 96) and scaled back (* 96) it
// is 52.0 exactly. The byte mask from logits must hold the masks' pixels, not re-crop with that.
static void test_pack_byte_mask_uses_the_pixel_crop() {
    const int H = 96, W = 96;
    const float x1 = std::nextafter(52.0f, 100.0f);
    const float xn = x1 / float(W);
    CHECK(xn * float(W) == 52.0f);  // the premise: the normalized box rounds back onto the column
    const float px[4] = {x1, 60.0f, 90.0f, 80.0f};
    const float boxes[4] = {60.0f / float(H), xn, 80.0f / float(H), 90.0f / float(W)};
    const float score = 0.9f;
    const int32_t cls = 0;
    const MaskGrid g{24, 24, H, W};
    std::vector<float> map(24 * 24, 1.0f);  // every logit positive: the mask is the crop
    const MaskWindow full{0, 0, 24, 24, 0};
    const ByteMaskCrop c = byte_mask_crop(boxes[0], boxes[1], boxes[2], boxes[3], H, W);
    CHECK(c.x0 == 52 && c.y0 == 60);
    std::vector<uint8_t> buf(2 + 38 + size_t(c.width) * c.height + 1, 0xAB);
    const ByteMaskPacked r = pack_byte_mask(boxes, px, &score, &cls, 1, &full, map.data(), g, buf.data(), buf.size());
    CHECK(r.detections == 1);
    const uint8_t* m = buf.data() + 2 + 38;
    bool ok = true;
    for (uint32_t y = 0; y < c.height; ++y)
        for (uint32_t x = 0; x < c.width; ++x) {
            const float fx = float(c.x0 + x), fy = float(c.y0 + y);  // x1 <= x < x2, y1 <= y < y2
            const uint8_t want = fx >= px[0] && fx < px[2] && fy >= px[1] && fy < px[3];
            ok = ok && m[size_t(y) * c.width + x] == want;
        }
    CHECK(ok);
    CHECK(m[0] == 0);  // column 52 of row 60
}

int main() {
    std::printf("kernel paths tested: %s\n", kernels::available());
    test_kernels_agree();
    test_window_u8i_coefficient_kinds();
    test_hand_worked();
    test_render_matches_whole_map();
    test_yolov5_rule_matches_whole_map();
    test_window_logits();
    test_decoder_masks();
    test_pack_byte_mask();
    test_pack_byte_mask_52();
    test_native_sampling();
    test_pack_byte_mask_uses_the_pixel_crop();
    return report();
}
