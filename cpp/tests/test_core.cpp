// C++ unit tests of the core, run by ctest (and by pytest through tests/test_cpp_core.py).
// Each check compares against values worked out by hand in the comment beside it.
#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <new>
#include <cstdio>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "../src/kernels/iou_scalar.hpp"
#include "../src/kernels/kernels.hpp"
#include "../src/nms.hpp"
#include "../src/scan.hpp"
#include "../src/thread_pool.hpp"
#include "../src/score_threshold.hpp"
#include "../src/tensor_view.hpp"
#include "hailo_decode/decoder.hpp"
#include "hailo_decode/pack.hpp"
#include "check.hpp"
#include "count_allocations.hpp"
#include "tensor_spec.hpp"

using namespace hailo_decode;
using namespace hailo_decode::detail;

static void test_layouts() {
    // Offsets from the formulas in hailort-facts.md section 1, for (h, w, c) = (1, 2, 9).
    auto off = [](const TensorView& v, int h, int w, int c) { return v.cell(h, w) + v.channel_offset[size_t(c)]; };
    TensorSpec nhwc = spec("a", DType::U8, Order::NHWC, 3, 4, 10, 3, 5, 16);
    CHECK(off(make_tensor_view(nhwc), 1, 2, 9) == size_t(1 * 5 * 16 + 2 * 16 + 9));
    TensorSpec nhcw = spec("b", DType::U8, Order::NHCW, 3, 4, 10, 3, 5, 16);
    CHECK(off(make_tensor_view(nhcw), 1, 2, 9) == size_t(1 * 5 * 16 + 9 * 5 + 2));
    TensorSpec f8cr = spec("c", DType::U8, Order::F8CR, 3, 4, 10, 3, 5, 16);
    CHECK(off(make_tensor_view(f8cr), 1, 2, 9) == size_t(1 * 5 * 16 + 8 * 5 + 2 * 8 + 1));
    TensorSpec nchw = spec("d", DType::U8, Order::NCHW, 3, 4, 10, 3, 4, 10);
    CHECK(off(make_tensor_view(nchw), 1, 2, 9) == size_t(9 * 3 * 4 + 1 * 4 + 2));
    TensorSpec bad = spec("e", DType::U8, Order::F8CR, 3, 4, 10, 3, 5, 12);
    CHECK(throws([&] { make_tensor_view(bad); }, "multiple of 8"));
    TensorSpec small = spec("f", DType::U8, Order::NHWC, 3, 4, 10, 2, 4, 10);
    CHECK(throws([&] { make_tensor_view(small); }, "padded shape"));
    TensorSpec zero_scale = spec("g", DType::U8, Order::NHWC, 1, 1, 1, 1, 1, 1);
    zero_scale.scale = {0.0f};
    CHECK(throws([&] { make_tensor_view(zero_scale); }, "scale"));
}

// A C++ caller's frame count so large that frames x stride wraps a size_t must not pass the
// bounds check: the elements needed saturate, and decode() refuses the buffer.
static void test_frame_count_overflow() {
    TensorSpec t = spec("big", DType::U8, Order::NHWC, 4, 4, 8, 4, 4, 8);  // 128 elements a frame
    const size_t huge = SIZE_MAX / 128 + 2;  // (huge - 1) * 128 wraps to a small number
    CHECK(required_elements(t, huge) == SIZE_MAX);
    CHECK(required_elements(t, 3) == size_t(3 * 128));
    CHECK(required_elements(t, 0) == 0);
    Config c;
    c.outputs = {spec("m/box", DType::U8, Order::NHWC, 2, 2, 64, 2, 2, 64), spec("m/cls", DType::U8, Order::NHWC, 2, 2, 1, 2, 2, 1)};
    c.heads = {HeadSpec{}};
    c.heads[0].box_output = 0; c.heads[0].cls_output = 1; c.heads[0].stride = 8;
    c.num_classes = 1;
    c.settings.image_height = c.settings.image_width = 16;
    Decoder dec(c);
    std::vector<uint8_t> box(256), cls(4);
    const void* ptrs[2] = {box.data(), cls.data()};
    const size_t sizes[2] = {box.size(), cls.size()};
    CHECK(throws([&] { dec.decode(ptrs, sizes, SIZE_MAX / 256 + 2); }, "m/box"));
}

static void test_thresholds() {
    // scale float32(1/255), zp 0: q = 51 dequantizes to 0.20000002 (not float32(0.2)), so with
    // th = 0.2 both >= and > start at 51; with th equal to that score, > starts at 52.
    TensorSpec s = spec("cls", DType::U8, Order::NHWC, 1, 1, 1, 1, 1, 1);
    s.scale = {1.0f / 255.0f};
    TensorView v = make_tensor_view(s);
    const float at51 = dequantize(51.0f, 0.0f, 1.0f / 255.0f);
    CHECK(make_class_scorer(v, {0.2f}, true, false).q_min[0] == 51);
    CHECK(make_class_scorer(v, {0.2f}, false, false).q_min[0] == 51);
    CHECK(make_class_scorer(v, {at51}, true, false).q_min[0] == 51);
    CHECK(make_class_scorer(v, {at51}, false, false).q_min[0] == 52);
    CHECK(make_class_scorer(v, {1.5f}, true, false).q_min[0] == 256);   // never
    CHECK(make_class_scorer(v, {0.0f}, true, false).q_min[0] == 0);     // always
    // Sigmoid on logits, zp 128, scale 0.1: sigmoid((q - 128) * 0.1) >= 0.5 exactly from q = 128.
    s.zp = {128.0f}; s.scale = {0.1f};
    v = make_tensor_view(s);
    CHECK(make_class_scorer(v, {0.5f}, true, true).q_min[0] == 128);
    CHECK(make_class_scorer(v, {0.5f}, false, true).q_min[0] == 129);
    // Float input with sigmoid: the boundary is x = 0 for 0.5 inclusive.
    TensorSpec f = spec("clsf", DType::F32, Order::NHWC, 1, 1, 1, 1, 1, 1);
    TensorView fv = make_tensor_view(f);
    ClassScorer fs = make_class_scorer(fv, {0.5f}, true, true);
    CHECK(sigmoid(fs.x_min[0]) >= 0.5f && sigmoid(std::nextafter(fs.x_min[0], -1.0f)) < 0.5f);
    CHECK(std::isnan(make_class_scorer(fv, {2.0f}, true, true).x_min[0]));  // never passes
    CHECK(throws([&] { make_class_scorer(fv, {NAN}, true, true); }, "NaN"));
}

// Every level available on this machine, scalar first (kernels::available()'s order): the
// composite levels too, whose tables put kernels of their own over another's (avx512vnni's
// detection kernels over AVX2's). The active level is left as it was.
static std::vector<const kernels::Table*> tables() {
    static const std::vector<const kernels::Table*> all = [] {
        std::vector<const kernels::Table*> t;
        const std::string before = kernels::active().name, names = kernels::available();
        for (size_t at = 0; at <= names.size();) {
            const size_t end = std::min(names.find(',', at), names.size());
            CHECK(kernels::select(names.substr(at, end - at).c_str()));
            t.push_back(&kernels::active());
            at = end + 1;
        }
        kernels::select(before.c_str());
        return t;
    }();
    return all;
}

static uint32_t lcg(uint32_t& s) { return s = s * 1664525u + 1013904223u; }

// count_above (the candidate sort's rank count): every table against a direct count, at every
// length up to 128 (whole and partial vectors, the AVX2 kernel's 16-wide and 8-wide blocks), with
// ties, signed zeros and infinities among the scores.
static void test_count_above() {
    uint32_t seed = 777;
    const float pool[] = {0.0f, -0.0f, 0.25f, 0.5f, 0.75f, 1.0f, 1e-30f, INFINITY, -INFINITY, 0.3f};
    for (const kernels::Table* k : tables())
        for (size_t n = 0; n <= 128; ++n) {
            const size_t m = (n + 7) & ~size_t(7);
            std::vector<float> s(m + 8, -INFINITY);
            for (size_t i = 0; i < n; ++i)
                s[i] = (lcg(seed) >> 8) % 3 ? float(lcg(seed) >> 8) / 16777216.0f : pool[(lcg(seed) >> 8) % 10];
            std::vector<uint32_t> got(m + 8, 0xdeadbeef);
            k->count_above(s.data(), n, got.data());
            for (size_t i = 0; i < n; ++i) {
                uint32_t want = 0;
                for (size_t j = 0; j < n; ++j) want += s[j] > s[i];
                CHECK(got[i] == want);
            }
            for (size_t i = m; i < m + 8; ++i) CHECK(got[i] == 0xdeadbeef);  // nothing past m written
        }
}

static void test_kernels_agree() {
    uint32_t seed = 12345;
    // One passing value anywhere in a block of the uniform scans (they test 256 or 128 values at a
    // time and go back into a block only when its maximum passes), at every start alignment.
    {
        std::vector<uint8_t> v8(700 + 32, 0);
        std::vector<uint16_t> v16(700 + 32, 0);
        std::vector<uint32_t> got(700);
        for (size_t off : {0u, 1u, 17u, 31u})
            for (size_t at = 0; at < 700; at += 7) {
                v8[off + at] = 255;
                v16[off + at] = 65535;
                for (const kernels::Table* k : tables()) {
                    CHECK(k->scan_u8_uniform(v8.data() + off, 1, 700, got.data()) == 1 && got[0] == at);
                    CHECK(k->scan_u16_uniform(v16.data() + off, 1, 700, got.data()) == 1 && got[0] == at);
                }
                v8[off + at] = 0;
                v16[off + at] = 0;
            }
    }
    // The per-cell maximum: against the definition (every path), for cell widths below, at and
    // between the vector widths, cell counts around the 8-cell groups, pitches with gaps, and the
    // maximum at every channel of a cell (the overlapping last vector, the interleaved folds). The
    // buffer ends exactly at the last cell's last channel: a read past it would be out of bounds
    // (sanitizer builds).
    for (size_t channels : {1u, 2u, 15u, 16u, 17u, 31u, 32u, 33u, 47u, 48u, 63u, 64u, 80u, 96u, 100u, 128u, 129u, 161u}) {
        for (size_t pitch : {channels, channels + 3}) {
            for (size_t n : {0u, 1u, 7u, 8u, 9u, 15u, 16u, 17u, 31u, 32u, 33u, 80u}) {
                std::vector<uint8_t> buf(n ? (n - 1) * pitch + channels : 0);
                for (uint8_t& b : buf) b = uint8_t(lcg(seed) >> 26);  // 0..63: low, so a planted 255 stands out
                std::vector<uint8_t> want(n), got(n + 8);
                auto expect = [&] {
                    for (size_t i = 0; i < n; ++i) {
                        uint8_t m = 0;
                        for (size_t c = 0; c < channels; ++c) m = std::max(m, buf[i * pitch + c]);
                        want[i] = m;
                    }
                };
                // The gated form: the cells whose maximum is >= the gate, in order, with their
                // maxima and numbers (from `first`), for gates that keep none, some and all; its
                // outputs have room for exactly n (whole-group stores must stay inside).
                std::vector<uint8_t> got_max(n);
                std::vector<uint32_t> got_index(n);
                auto agree = [&] {
                    expect();
                    for (const kernels::Table* k : tables()) {
                        k->cell_max_u8(buf.data(), pitch, channels, n, got.data());
                        CHECK(std::equal(want.begin(), want.end(), got.begin()));
                        for (unsigned gate : {0u, 1u, 40u, 60u, 63u, 64u, 200u, 255u}) {
                            const uint32_t first = 1000u + uint32_t(gate);
                            const size_t kept = k->cell_max_gate_u8(buf.data(), pitch, channels, n, uint8_t(gate), first,
                                                                    got_max.data(), got_index.data());
                            size_t j = 0;
                            bool same = true;
                            for (size_t i = 0; i < n; ++i) {
                                if (want[i] < gate) continue;
                                same = same && j < kept && got_max[j] == want[i] && got_index[j] == first + i;
                                ++j;
                            }
                            CHECK(same && kept == j);
                        }
                    }
                };
                agree();
                if (n == 0) continue;
                for (size_t c = 0; c < channels; ++c) {  // one cell's maximum at each channel in turn
                    const size_t cell = c % n;
                    const uint8_t old = buf[cell * pitch + c];
                    buf[cell * pitch + c] = uint8_t(200 + c % 56);
                    agree();
                    buf[cell * pitch + c] = old;
                }
            }
        }
    }
    // The chosen cells' channels at or above each cell's limit: against the definition (every
    // path), for cell widths below, at and between the vector widths and past 64 and 128 (the
    // 64-channel words), limits 0 (every channel) to 255, cells in any order and place. Each cell
    // is a buffer of its own that ends at its last channel (a read past it: out of bounds under
    // the sanitizers).
    for (size_t channels : {1u, 15u, 16u, 17u, 31u, 32u, 33u, 48u, 63u, 64u, 65u, 80u, 96u, 100u, 128u, 129u, 200u, 255u, 256u}) {
        const size_t n = 37;
        std::vector<std::vector<uint8_t>> bufs(n);
        std::vector<const uint8_t*> cells(n);
        std::vector<uint8_t> limits(n);
        for (size_t i = 0; i < n; ++i) {
            bufs[i].resize(channels);
            for (uint8_t& b : bufs[i]) b = uint8_t(lcg(seed) >> 24);
            if (i % 5 == 0) bufs[i][(lcg(seed) >> 8) % channels] = 255;
            cells[n - 1 - i] = bufs[i].data();
            limits[i] = i == 0 ? 0 : i == 1 ? 255 : uint8_t(200 + (lcg(seed) >> 26));
        }
        std::vector<uint32_t> want_cell, want_channel;
        for (size_t i = 0; i < n; ++i)
            for (size_t c = 0; c < channels; ++c)
                if (cells[i][c] >= limits[i]) {
                    want_cell.push_back(uint32_t(i));
                    want_channel.push_back(uint32_t(c));
                }
        CHECK(want_cell.size() > channels);  // limit 0 keeps a whole cell, others some
        std::vector<uint32_t> got_cell(n * channels), got_channel(n * channels);
        for (const kernels::Table* k : tables()) {
            const size_t hits = k->cells_at_least_u8(cells.data(), limits.data(), n, channels, got_cell.data(), got_channel.data());
            CHECK(hits == want_cell.size() && std::equal(want_cell.begin(), want_cell.end(), got_cell.begin()) &&
                  std::equal(want_channel.begin(), want_channel.end(), got_channel.begin()));
        }
    }
    for (size_t n : {0u, 1u, 15u, 16u, 17u, 63u, 64u, 65u, 127u, 128u, 129u, 1000u, 4099u}) {
        std::vector<uint8_t> v8(n), l8(n);
        std::vector<uint16_t> v16(n), l16(n);
        std::vector<float> vf(n), lf(n);
        for (size_t i = 0; i < n; ++i) {
            v8[i] = uint8_t(lcg(seed) >> 24); l8[i] = uint8_t(200 + (lcg(seed) >> 27));
            v16[i] = uint16_t(lcg(seed) >> 16); l16[i] = uint16_t(60000 + (lcg(seed) >> 22));
            vf[i] = float(int(lcg(seed) >> 20) - 2048) / 100.0f; lf[i] = (i % 7 == 0) ? NAN : 15.0f;
        }
        std::vector<uint32_t> ref(n + 1), got(n + 1);
        const auto& S = kernels::scalar_table();
        for (const kernels::Table* k : tables()) {
            size_t a = S.scan_u8(v8.data(), l8.data(), n, ref.data()), b = k->scan_u8(v8.data(), l8.data(), n, got.data());
            CHECK(a == b && std::equal(ref.begin(), ref.begin() + long(a), got.begin()));
            a = S.scan_u16(v16.data(), l16.data(), n, ref.data()); b = k->scan_u16(v16.data(), l16.data(), n, got.data());
            CHECK(a == b && std::equal(ref.begin(), ref.begin() + long(a), got.begin()));
            a = S.scan_f32(vf.data(), lf.data(), n, ref.data()); b = k->scan_f32(vf.data(), lf.data(), n, got.data());
            CHECK(a == b && std::equal(ref.begin(), ref.begin() + long(a), got.begin()));
        }
        // One limit for every position: the same positions as the pattern scan with that limit
        // everywhere, for the extremes (0: everything passes; the maximum) and values in between,
        // and from every start alignment (the AVX2 paths align their loads).
        auto check_uniform = [&](const auto* v, size_t m, auto limit, auto pattern_scan, auto uniform_scan) {
            using T = std::remove_cv_t<std::remove_pointer_t<decltype(v)>>;
            const std::vector<T> pattern(m, limit);
            const size_t a = (S.*pattern_scan)(v, pattern.data(), m, ref.data());
            for (const kernels::Table* k : tables()) {
                const size_t b = (k->*uniform_scan)(v, limit, m, got.data());
                CHECK(a == b && std::equal(ref.begin(), ref.begin() + long(a), got.begin()));
            }
        };
        using kernels::Table;
        for (uint32_t lim : {0u, 1u, 7u, 128u, 200u, 254u, 255u})
            check_uniform(v8.data(), n, uint8_t(lim), &Table::scan_u8, &Table::scan_u8_uniform);
        for (size_t off = 0; off < 65 && off <= n; ++off) {  // every 32- and 64-byte alignment, and the byte sum
            // (a limit of 0 passes every byte: the AVX-512 path's masked head and tail must not
            // count the lanes they leave out)
            check_uniform(v8.data() + off, n - off, uint8_t(130), &Table::scan_u8, &Table::scan_u8_uniform);
            check_uniform(v8.data() + off, n - off, uint8_t(0), &Table::scan_u8, &Table::scan_u8_uniform);
            for (const kernels::Table* k : tables())
                CHECK(k->byte_sum(v8.data() + off, n - off) == S.byte_sum(v8.data() + off, n - off));
        }
        for (uint32_t lim : {0u, 1u, 300u, 32767u, 32768u, 40000u, 65534u, 65535u})
            check_uniform(v16.data(), n, uint16_t(lim), &Table::scan_u16, &Table::scan_u16_uniform);
        for (size_t off = 0; off < 17 && off <= n; ++off)  // every 32-byte alignment of uint16 values
            check_uniform(v16.data() + off, n - off, uint16_t(61000), &Table::scan_u16, &Table::scan_u16_uniform);
        std::vector<float> dq_ref(n), dq(n);
        S.dequant_u8(v8.data(), n, 83.0f, 0.0858f, dq_ref.data());
        for (size_t i = 0; i < n; ++i) CHECK(dq_ref[i] == (float(v8[i]) - 83.0f) * 0.0858f);
        for (const kernels::Table* k : tables()) {
            k->dequant_u8(v8.data(), n, 83.0f, 0.0858f, dq.data());
            CHECK(std::equal(dq.begin(), dq.end(), dq_ref.begin()));  // bit-equal (no NaN here)
            CHECK(k->byte_sum(v8.data(), n) == S.byte_sum(v8.data(), n));
        }
        // the scalar scan itself, against the definition
        size_t a = S.scan_u8(v8.data(), l8.data(), n, ref.data()), count = 0;
        for (size_t i = 0; i < n; ++i) count += v8[i] >= l8[i];
        CHECK(a == count);
    }
    // DFL: bit-identical across paths, and within 2e-6 of a double-precision softmax expectation.
    for (int trial = 0; trial < 200; ++trial) {
        float x[64];
        for (float& v : x) v = float(int(lcg(seed) >> 20) - 2048) / (trial % 2 ? 100.0f : 5.0f);
        float ref[4];
        kernels::scalar_table().dfl16(x, ref);
        for (int side = 0; side < 4; ++side) {
            double m = x[16 * side], sum = 0, w = 0;
            for (int i = 0; i < 16; ++i) m = std::max(m, double(x[16 * side + i]));
            for (int i = 0; i < 16; ++i) { double e = std::exp(double(x[16 * side + i]) - m); sum += e; w += i * e; }
            CHECK(std::fabs(ref[side] - w / sum) < 2e-6 * 16);
        }
        for (const kernels::Table* k : tables()) {
            float got[4];
            k->dfl16(x, got);
            CHECK(std::memcmp(got, ref, sizeof ref) == 0);
        }
    }
    // The exp table: its three parts, their products, within 5e-7 relative of double precision
    // plus the rounding of the float arguments (|x| 2^-24 relative each part).
    for (float scale : {0.0858f, 0.003921569f, 0.3f, kernels::kDflTableMaxRange / 255.0f}) {
        kernels::ExpTable t;
        kernels::make_exp_table(scale, t);
        for (int q = 0; q < 256; ++q) {
            CHECK(t.full[q] == (t.e64[q >> 6] * t.e8[(q >> 3) & 7]) * t.e1[q & 7]);
            const double d = 255 - q, want = std::exp(-d * double(scale));
            CHECK(std::fabs(t.full[q] - want) <= (5e-7 + d * scale * 1.2e-7) * want);
            CHECK(std::isnormal(t.full[q]));
        }
        for (int i = 0; i < 8; ++i) CHECK(t.e1[i] == kernels::exp_neg(-float(7 - i) * scale));
        for (int i = 4; i < 8; ++i) CHECK(t.e64[i] == t.e64[i - 4]);  // in both 128-bit halves
    }
    // DFL from uint8 by look-up: bit-identical across paths (every byte value, maxima anywhere,
    // ties, flat and all-low sides included), and within 2e-6 of the softmax of the dequantized values.
    for (int trial = 0; trial < 300; ++trial) {
        const float scale = trial % 4 == 0 ? 0.0858f : trial % 4 == 1 ? 0.3f : trial % 4 == 2 ? 0.01f
                                                                              : kernels::kDflTableMaxRange / 255.0f;
        kernels::ExpTable lut;
        kernels::make_exp_table(scale, lut);
        uint8_t q[64];
        for (int i = 0; i < 64; ++i) {
            const uint32_t r = lcg(seed) >> 24;
            // low bytes: the exps furthest below the table's reference, 255; 0 and 255: the widest sides
            q[i] = trial % 5 == 0    ? uint8_t(200 + r % 3)
                   : trial % 7 == 0  ? uint8_t(trial)
                   : trial % 11 == 0 ? uint8_t(r % 4)
                   : trial % 13 == 0 ? uint8_t(r % 2 ? 255 : 0)
                                     : uint8_t(r);
        }
        float ref[4];
        kernels::scalar_table().dfl16_u8(q, lut, ref);
        for (int side = 0; side < 4; ++side) {
            double m = -1e30, sum = 0, w = 0;
            for (int i = 0; i < 16; ++i) m = std::max(m, (double(q[16 * side + i]) - 83.0) * scale);
            for (int i = 0; i < 16; ++i) {
                const double e = std::exp((double(q[16 * side + i]) - 83.0) * scale - m);
                sum += e; w += i * e;
            }
            CHECK(std::fabs(ref[side] - w / sum) < 2e-6 * 16);
        }
        for (const kernels::Table* k : tables()) {
            float got[4];
            k->dfl16_u8(q, lut, got);
            CHECK(std::memcmp(got, ref, sizeof ref) == 0);
        }
    }
    // The batch over a head's cells gives each cell's dfl16_u8, whatever the offsets' order.
    {
        std::vector<uint8_t> tensor(64 * 50);
        for (uint8_t& q : tensor) q = uint8_t(lcg(seed) >> 24);
        kernels::ExpTable lut;
        kernels::make_exp_table(0.0858f, lut);
        const std::vector<size_t> offsets = {64 * 7, 0, 64 * 49, 64 * 7, 64 * 20, 64 * 3, 64 * 31};
        for (const kernels::Table* k : tables()) {
            std::vector<float> got(4 * offsets.size());
            k->dfl16_u8_cells(tensor.data(), offsets.data(), offsets.size(), lut, got.data());
            for (size_t i = 0; i < offsets.size(); ++i) {
                float want[4];
                kernels::scalar_table().dfl16_u8(tensor.data() + offsets[i], lut, want);
                CHECK(std::memcmp(got.data() + 4 * i, want, sizeof want) == 0);
            }
            k->dfl16_u8_cells(tensor.data(), offsets.data(), 0, lut, got.data());  // no cell: nothing read
        }
    }
    // IoU: a = (0,0)-(2,2) and b = (1,1)-(3,3) overlap 1 / (4 + 4 - 1) = 1/7; corners touching: 0.
    for (const kernels::Table* k : tables()) {
        std::vector<float> y0(13, 10), x0(13, 10), y1(13, 11), x1(13, 11), area(13, 1);  // far away boxes
        y0[9] = 0; x0[9] = 0; y1[9] = 2; x1[9] = 2; area[9] = 4;  // lane 9: in the SIMD body and the tail alike
        const float b[4] = {1, 1, 3, 3};
        const float seventh = 1.0f / 7.0f;
        CHECK(k->any_iou_over(y0.data(), x0.data(), y1.data(), x1.data(), area.data(), 13, b, 4, seventh, true));
        CHECK(!k->any_iou_over(y0.data(), x0.data(), y1.data(), x1.data(), area.data(), 13, b, 4, seventh, false));
        CHECK(!k->any_iou_over(y0.data(), x0.data(), y1.data(), x1.data(), area.data(), 13, b, 4,
                               std::nextafter(seventh, 1.0f), true));
        const float touching[4] = {2, 2, 4, 4};
        CHECK(!k->any_iou_over(y0.data(), x0.data(), y1.data(), x1.data(), area.data(), 10, touching, 4, 1e-9f, true));
        CHECK(k->any_iou_over(y0.data(), x0.data(), y1.data(), x1.data(), area.data(), 10, touching, 4, 0.0f, true));
    }
    // A NaN coordinate on either side gives every table the scalar reference's answer: the scalar
    // min/max (a < b ? a : b) and x86's minps/maxps take the second operand when one is NaN, NEON's
    // vminq/vmaxq return NaN, which at a threshold of 0 turned a NaN box's "no IoU" into a hit.
    {
        uint32_t nan_seed = 7;
        for (int trial = 0; trial < 400; ++trial) {
            const size_t n = 1 + (lcg(nan_seed) >> 8) % 11;
            std::vector<float> ly0(n), lx0(n), ly1(n), lx1(n), la(n);
            auto coord = [&] { return float((lcg(nan_seed) >> 8) % 6); };
            for (size_t i = 0; i < n; ++i) {
                ly0[i] = coord(); lx0[i] = coord(); ly1[i] = ly0[i] + 1 + coord(); lx1[i] = lx0[i] + 1 + coord();
                if ((lcg(nan_seed) >> 8) % 3 == 0) {
                    float* side[4] = {&ly0[i], &lx0[i], &ly1[i], &lx1[i]};
                    *side[(lcg(nan_seed) >> 8) % 4] = NAN;
                }
                la[i] = (ly1[i] - ly0[i]) * (lx1[i] - lx0[i]);
            }
            float b[4] = {coord(), coord(), 0, 0};
            b[2] = b[0] + 1 + coord();
            b[3] = b[1] + 1 + coord();
            if (trial % 2) b[(lcg(nan_seed) >> 8) % 4] = NAN;
            const float b_area = (b[2] - b[0]) * (b[3] - b[1]);
            for (float th : {0.0f, 0.25f})
                for (bool inclusive : {true, false}) {
                    const bool want = kernels::scalar_table().any_iou_over(ly0.data(), lx0.data(), ly1.data(), lx1.data(),
                                                                           la.data(), n, b, b_area, th, inclusive);
                    for (const kernels::Table* k : tables())
                        CHECK(k->any_iou_over(ly0.data(), lx0.data(), ly1.data(), lx1.data(), la.data(), n, b, b_area, th,
                                              inclusive) == want);
                }
        }
    }
    // Every list length, the passing box at every position, tails included: lanes past n never
    // count, not even at a threshold of 0, where every real lane passes (IoU 0 >= 0).
    for (size_t n = 0; n <= 20; ++n) {
        for (size_t at = 0; at <= n; ++at) {  // at == n: no passing box
            std::vector<float> y0(n, 10), x0(n, 10), y1(n, 11), x1(n, 11), area(n, 1);
            if (at < n) { y0[at] = 0; x0[at] = 0; y1[at] = 2; x1[at] = 2; area[at] = 4; }
            const float b[4] = {1, 1, 3, 3};
            for (const kernels::Table* k : tables()) {
                CHECK(k->any_iou_over(y0.data(), x0.data(), y1.data(), x1.data(), area.data(), n, b, 4, 0.1f, true) == (at < n));
                CHECK(k->any_iou_over(y0.data(), x0.data(), y1.data(), x1.data(), area.data(), n, b, 4, 0.0f, true) == (n > 0));
                CHECK(k->any_iou_over(y0.data(), x0.data(), y1.data(), x1.data(), area.data(), n, b, 4, 0.0f, false) == (at < n));
            }
        }
    }
    // Every path decides as HailoRT's division does, thresholds at the IoU itself and its float
    // neighbours included (where a reordered or fused computation would show).
    for (int trial = 0; trial < 20000; ++trial) {
        auto coord = [&] { return trial % 2 ? float(lcg(seed) >> 28) : float(lcg(seed) >> 8) / 65536.0f; };
        float a[4] = {coord(), coord(), coord(), coord()}, b[4] = {coord(), coord(), coord(), coord()};
        if (a[2] < a[0]) std::swap(a[0], a[2]);
        if (a[3] < a[1]) std::swap(a[1], a[3]);
        if (b[2] < b[0]) std::swap(b[0], b[2]);
        if (b[3] < b[1]) std::swap(b[1], b[3]);
        const float area_a = (a[2] - a[0]) * (a[3] - a[1]), area_b = (b[2] - b[0]) * (b[3] - b[1]);
        const float ow = std::min(a[3], b[3]) - std::max(a[1], b[1]), oh = std::min(a[2], b[2]) - std::max(a[0], b[0]);
        float iou = 0.0f;
        if (ow > 0.0f && oh > 0.0f) iou = (ow * oh) / ((area_a + area_b) - ow * oh);
        const float th_choices[5] = {iou, std::nextafter(iou, 0.0f), std::nextafter(iou, 2.0f),
                                     float(lcg(seed) >> 8) / 16777216.0f, trial % 7 ? 0.5f : 0.0f};
        for (float th : th_choices)
            for (bool inclusive : {true, false}) {
                const bool want = inclusive ? iou >= th : iou > th;
                for (const kernels::Table* k : tables())
                    CHECK(k->any_iou_over(&a[0], &a[1], &a[2], &a[3], &area_a, 1, b, area_b, th, inclusive) == want);
            }
    }
}

// nms_list (the paths that have it) against a greedy loop over any_iou_over_scalar, on lists
// built so that many boxes are kept (a grid of disjoint boxes, so the kernels' register and
// stored blocks both fill) and some later boxes overlap exactly one kept box, at every place in
// the kept order (a block the kernel skipped or tested twice shows), plus NaN coordinates,
// threshold 0 (inclusive: every box suppresses) and every cap on the number kept.
static void test_nms_list() {
    uint32_t seed = 7;
    auto rnd = [&](uint32_t m) { return (lcg(seed) >> 8) % m; };
    for (int trial = 0; trial < 3000; ++trial) {
        const size_t m = trial < 200 ? size_t(trial % 100) : 1 + rnd(120);
        std::vector<float> y0(m), x0(m), y1(m), x1(m), area(m);
        for (size_t j = 0; j < m; ++j) {
            float cy, cx, h = 1.0f + float(rnd(100)) / 200.0f, w = 1.0f + float(rnd(100)) / 200.0f;
            if (j > 0 && rnd(3) == 0) {  // near an earlier box: suppressed by it if that one was kept
                const size_t e = rnd(uint32_t(j));
                cy = (y0[e] + y1[e]) / 2 + float(rnd(40)) / 100.0f;
                cx = (x0[e] + x1[e]) / 2 + float(rnd(40)) / 100.0f;
            } else {  // a cell of its own on a 12 x 12 grid (two boxes may share one)
                cy = 4.0f * float(rnd(12));
                cx = 4.0f * float(rnd(12));
            }
            y0[j] = cy - h / 2; x0[j] = cx - w / 2; y1[j] = cy + h / 2; x1[j] = cx + w / 2;
            if (rnd(150) == 0) (rnd(2) ? y1[j] : x0[j]) = NAN;
            area[j] = (y1[j] - y0[j]) * (x1[j] - x0[j]);
        }
        const float th_choices[4] = {0.0f, 0.2f, 0.5f, 0.9f};
        const float th = th_choices[rnd(4)];
        const bool inclusive = rnd(2) == 0;
        const size_t caps[4] = {~size_t(0), 0, 1 + rnd(40), m};
        const size_t max_keep = caps[rnd(4)];
        std::vector<uint8_t> want(m, 0);
        std::vector<float> ky0, kx0, ky1, kx1, ka;
        for (size_t j = 0; j < m && ky0.size() < max_keep; ++j) {
            const float b[4] = {y0[j], x0[j], y1[j], x1[j]};
            if (kernels::any_iou_over_scalar(ky0.data(), kx0.data(), ky1.data(), kx1.data(), ka.data(), ky0.size(), b, area[j],
                                             th, inclusive))
                continue;
            want[j] = 1;
            ky0.push_back(b[0]); kx0.push_back(b[1]); ky1.push_back(b[2]); kx1.push_back(b[3]); ka.push_back(area[j]);
        }
        for (const kernels::Table* k : tables()) {
            if (!k->nms_list) continue;
            std::vector<uint8_t> got(m, 2);
            alignas(64) static float kept[5 * 128];
            const size_t n_kept = k->nms_list(y0.data(), x0.data(), y1.data(), x1.data(), area.data(), m, th, inclusive,
                                              max_keep, got.data(), kept);
            CHECK(got == want && n_kept == ky0.size());
        }
    }
}

// Greedy NMS as plainly as it can be written, the reference for suppress: each candidate in score
// order, with the caps, against every kept box of its list (any_iou_over_scalar).
static std::vector<Detection> greedy_reference(const ScratchVector<Candidate>& sorted, const ScratchVector<Box>& boxes,
                                               const Settings& s, int num_classes) {
    size_t n = sorted.size();
    if (s.max_candidates >= 0 && size_t(s.max_candidates) < n) n = size_t(s.max_candidates);
    std::vector<std::vector<std::array<float, 5>>> kept(s.agnostic ? 1 : size_t(num_classes));
    std::vector<int64_t> output_of_class(size_t(num_classes), 0);
    std::vector<Detection> out;
    int64_t total = 0;
    for (size_t i = 0; i < n; ++i) {
        if (s.max_total >= 0 && total >= s.max_total) break;
        const Candidate& c = sorted[i];
        const bool class_full = s.max_per_class >= 0 && output_of_class[size_t(c.class_id)] >= s.max_per_class;
        if (class_full && !s.agnostic) continue;
        const Box& b = boxes[c.box];
        const float canon[4] = {b.v[s.yxyx ? 0 : 1], b.v[s.yxyx ? 1 : 0], b.v[s.yxyx ? 2 : 3], b.v[s.yxyx ? 3 : 2]};
        const float area = (canon[2] - canon[0]) * (canon[3] - canon[1]);
        auto& list = kept[s.agnostic ? 0 : size_t(c.class_id)];
        bool suppressed = false;
        for (const auto& e : list)
            if (kernels::any_iou_over_scalar(&e[0], &e[1], &e[2], &e[3], &e[4], 1, canon, area, s.iou_threshold,
                                             s.iou_inclusive)) {
                suppressed = true;
                break;
            }
        if (suppressed) continue;
        list.push_back({canon[0], canon[1], canon[2], canon[3], area});
        if (class_full) continue;
        ++output_of_class[size_t(c.class_id)];
        ++total;
        Detection d;
        std::memcpy(d.box, b.v, sizeof d.box);
        d.score = c.score;
        d.class_id = c.class_id;
        d.head = b.head;
        d.cell = b.cell;
        out.push_back(d);
    }
    return out;
}

// suppress on random frames equals the reference on every table: lists of at most kSplit
// candidates only (a few classes; the limit itself included), longer ones only, both in one frame,
// agnostic on either side of the limit; clustered boxes (much suppression), equal and touching
// boxes, NaN coordinates, tied scores; every cap and threshold rule. One workspace for every
// frame, as a decoder reuses it. (kSplit: where a forward-row NMS for short lists, tried in
// session 11 and not kept, changed method; today's split is at kShortList, 8 kept boxes, which
// these lengths cross too.)
static void test_suppress_matches_greedy() {
    constexpr size_t kSplit = 64;  // list lengths up to it and past it
    uint32_t seed = 99;
    auto rnd = [&](uint32_t m) { return (lcg(seed) >> 8) % m; };
    const std::string best = kernels::active().name;
    NmsWorkspace ws;
    for (int frame = 0; frame < 1500; ++frame) {
        const int shape = frame % 5;  // 0 short lists, 1 long, 2 both, 3 agnostic short, 4 agnostic long
        const int num_classes = shape == 0 || shape == 3 ? int(1 + rnd(4)) : int(1 + rnd(6));
        std::vector<size_t> per_class(static_cast<size_t>(num_classes));
        for (int c = 0; c < num_classes; ++c) {
            const bool short_list = shape == 0 || (shape == 2 && c % 2 == 0);
            if (shape == 3)
                per_class[size_t(c)] = rnd(uint32_t(kSplit / size_t(num_classes)) + 1);
            else if (shape == 4)
                per_class[size_t(c)] = rnd(60) + (c == 0 ? kSplit + 1 : 0);
            else if (short_list)
                per_class[size_t(c)] = rnd(8) == 0 ? kSplit - rnd(2) : rnd(uint32_t(kSplit)) + 1;
            else
                per_class[size_t(c)] = kSplit + 1 + rnd(rnd(4) == 0 ? 2 : 150);
        }
        ScratchVector<Box> boxes;
        ScratchVector<Candidate> candidates;
        const uint32_t levels = rnd(3) == 0 ? 4 : 1000;  // few levels: many ties
        const float cluster[3][2] = {{float(rnd(100)), float(rnd(100))}, {float(rnd(100)), float(rnd(100))},
                                     {float(rnd(100)), float(rnd(100))}};
        for (int c = 0; c < num_classes; ++c)
            for (size_t j = 0; j < per_class[size_t(c)]; ++j) {
                Box b{};
                const float* centre = cluster[rnd(3)];
                const bool grid = rnd(4) == 0;  // whole numbers: equal and touching boxes
                const float cy = centre[0] + (grid ? float(rnd(4)) : float(rnd(1000)) / 100.0f);
                const float cx = centre[1] + (grid ? float(rnd(4)) : float(rnd(1000)) / 100.0f);
                const float h = grid ? float(1 + rnd(3)) : 0.5f + float(rnd(1000)) / 100.0f;
                const float w = grid ? float(1 + rnd(3)) : 0.5f + float(rnd(1000)) / 100.0f;
                b.v[0] = cy - h / 2; b.v[1] = cx - w / 2; b.v[2] = cy + h / 2; b.v[3] = cx + w / 2;
                if (rnd(97) == 0) b.v[rnd(4)] = NAN;
                b.head = uint32_t(c);
                b.cell = uint32_t(boxes.size());
                candidates.push_back({float(1 + rnd(levels)) / float(levels + 1), c, uint32_t(boxes.size())});
                boxes.push_back(b);
            }
        // Scan order mixes the classes (a list's candidates are not contiguous in it).
        for (size_t i = candidates.size(); i > 1; --i) std::swap(candidates[i - 1], candidates[rnd(uint32_t(i))]);
        SortScratch scratch;
        sort_candidates(candidates, frame % 2 == 0, scratch);
        Settings s;
        s.agnostic = shape >= 3;
        s.yxyx = frame % 3 != 0;
        const float th_choices[5] = {0.0f, 0.3f, 0.5f, 0.7f, 1.0f};
        s.iou_threshold = th_choices[rnd(5)];
        s.iou_inclusive = rnd(2) == 0;
        const int64_t per_class_caps[5] = {-1, 0, 1, 3, 100}, total_caps[4] = {-1, 0, 5, 50};
        s.max_per_class = per_class_caps[rnd(5)];
        s.max_total = total_caps[rnd(4)];
        s.max_candidates = rnd(4) == 0 ? int64_t(rnd(100)) : -1;
        const std::vector<Detection> want = greedy_reference(candidates, boxes, s, num_classes);
        for (const kernels::Table* k : tables()) {
            CHECK(kernels::select(k->name));
            std::vector<Detection> got;
            suppress(candidates, boxes, s, num_classes, ws, got);
            bool same = got.size() == want.size();
            for (size_t i = 0; same && i < got.size(); ++i)
                same = std::memcmp(&got[i], &want[i], sizeof(Detection)) == 0;
            CHECK(same);
        }
    }
    kernels::select(best.c_str());
}

// The scan's shortcuts (one limit for the row; column and class by multiplication when the rows
// are dense) find exactly the hits of the general per-position scan, for every channel count.
static void test_scan_strategies() {
    uint32_t seed = 777;
    for (int C : {1, 2, 3, 7, 80, 255}) {
        for (DType dt : {DType::U8, DType::U16}) {
            for (int padded_c : {C, C + 5}) {
                // 80 classes on a 100 x 100 grid: more values than one kernel call takes
                const int H = C == 80 ? 100 : 5, W = C == 80 ? 100 : 9;
                TensorSpec sp = spec("s", dt, Order::NHWC, H, W, C, H, W, padded_c);
                const TensorView v = make_tensor_view(sp);
                for (float th : {0.2f, 3.0f, 1e9f}) {  // 1e9: never passes (the limit is clamped)
                    const ClassScorer sc = make_class_scorer(v, {th}, true, false);
                    const ScanPlan fast = make_scan_plan(v, sc);
                    ScanPlan general = fast;
                    general.uniform = general.dense_exact = false;
                    CHECK(fast.dense_exact == (padded_c == C && th < 1e6f));
                    if (fast.dense_exact && C == 80) CHECK(fast.rows_per_call < H);  // several calls
                    const size_t n = sp.frame_stride;
                    std::vector<uint8_t> b8(n);
                    std::vector<uint16_t> b16(n);
                    for (size_t i = 0; i < n; ++i) { b8[i] = uint8_t(lcg(seed) >> 24); b16[i] = uint16_t(lcg(seed) >> 16); }
                    const void* frame = dt == DType::U8 ? static_cast<const void*>(b8.data()) : b16.data();
                    ScanResult a, b;
                    reserve_scan(fast, a);
                    reserve_scan(general, b);
                    scan_class_tensor(fast, v, sc, frame, a);
                    scan_class_tensor(general, v, sc, frame, b);
                    CHECK(a.classes == b.classes && a.cells.size() == b.cells.size());
                    CHECK(a.scores == b.scores && a.scores.size() == a.classes.size());
                    for (size_t i = 0; i < std::min(a.cells.size(), b.cells.size()); ++i)
                        CHECK(a.cells[i].row == b.cells[i].row && a.cells[i].col == b.cells[i].col &&
                              a.cells[i].first_class == b.cells[i].first_class &&
                              a.cells[i].class_count == b.cells[i].class_count);
                    for (int32_t c : a.classes) CHECK(c >= 0 && c < C);
                    for (const CellHit& h : a.cells)  // each score is its own position's
                        for (uint32_t j = 0; j < h.class_count; ++j) {
                            const int32_t c = a.classes[h.first_class + j];
                            const size_t at = v.cell(h.row, h.col) + v.channel_offset[size_t(c)];
                            const float want = dt == DType::U8 ? class_score(sc, v, b8.data(), at, c)
                                                               : class_score(sc, v, b16.data(), at, c);
                            CHECK(a.scores[h.first_class + j] == want);
                        }
                }
            }
        }
    }
}

// sort_candidates against std::sort with HailoRT's comparator and the stable order, on lists of
// every length around the counting path's limits (16: libstdc++'s insertion sort; 128), with
// scores drawn from few values (many ties), from many (few ties), and +0 against -0 (equal).
static void test_sort_candidates_orders() {
    uint32_t seed = 2024;
    for (size_t n = 0; n <= 140; n += n < 24 || (n > 120 && n < 136) ? 1 : 7)
        for (uint32_t levels : {2u, 5u, 1000000u, 0u}) {
            ScratchVector<Candidate> c(n);
            for (size_t i = 0; i < n; ++i) {
                const uint32_t r = lcg(seed) >> 8;
                const float score = levels ? float(r % levels) / float(levels) : (r & 1 ? 0.0f : -0.0f);
                c[i] = {score, int32_t(r % 3), uint32_t(i)};
            }
            for (bool hailort : {true, false}) {
                ScratchVector<Candidate> want = c, got = c;
                if (hailort)
                    std::sort(want.begin(), want.end(), [](const Candidate& a, const Candidate& b) { return a.score > b.score; });
                else  // the stable order (std::stable_sort's buffer comes from an operator new this file does not count)
                    std::sort(want.begin(), want.end(), [](const Candidate& a, const Candidate& b) {
                        return a.score > b.score || (a.score == b.score && a.box < b.box);
                    });
                SortScratch scratch;
                sort_candidates(got, hailort, scratch);
                bool same = got.size() == want.size();
                for (size_t i = 0; same && i < n; ++i) same = got[i].box == want[i].box;
                CHECK(same);
            }
        }
}

static void test_nms_caps_and_ties() {
    // Three identical boxes of class 0 with scores 0.9, 0.8, 0.8 and one of class 1.
    ScratchVector<Box> boxes{{{0, 0, 1, 1}}, {{0, 0, 1, 1}}, {{0, 0, 1, 1}}, {{0, 0, 1, 1}}};
    ScratchVector<Candidate> c{{0.8f, 0, 0}, {0.9f, 0, 1}, {0.8f, 0, 2}, {0.7f, 1, 3}};
    SortScratch scratch;
    sort_candidates(c, false, scratch);  // stable: the two 0.8 keep their list order
    CHECK(c[0].box == 1 && c[1].box == 0 && c[2].box == 2 && c[3].box == 3);
    Settings s;
    s.iou_threshold = 0.5f;
    NmsWorkspace ws;
    std::vector<Detection> out;
    suppress(c, boxes, s, 2, ws, out);  // class-aware: one per class
    CHECK(out.size() == 2 && out[0].score == 0.9f && out[1].class_id == 1);
    out.clear();
    s.agnostic = true;
    suppress(c, boxes, s, 2, ws, out);  // agnostic: the class-1 box is suppressed too
    CHECK(out.size() == 1);
    out.clear();
    s.agnostic = false;
    s.iou_threshold = 1.0f;
    s.iou_inclusive = false;  // IoU 1 is not > 1: nothing suppressed
    suppress(c, boxes, s, 2, ws, out);
    CHECK(out.size() == 4);
    out.clear();
    s.max_per_class = 1;
    suppress(c, boxes, s, 2, ws, out);
    CHECK(out.size() == 2);
    out.clear();
    s.max_per_class = -1;
    s.max_total = 3;
    suppress(c, boxes, s, 2, ws, out);
    CHECK(out.size() == 3 && out[2].score == 0.8f);
}

static void test_pack() {
    // Two classes, max 2 per class: [n0, box.., n1, box..], zeroed tail.
    const float boxes[] = {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f, 0.7f, 0.8f, 0.0f, 0.0f, 1.0f, 1.0f};
    const float scores[] = {0.9f, 0.8f, 0.7f};
    const int32_t cls[] = {1, 0, 1};
    std::vector<float> out(hailo_nms_by_class_floats(2, 2), -1.0f);
    CHECK(out.size() == 22);
    size_t used = pack_hailo_nms_by_class(boxes, scores, cls, 3, 2, 2, out.data(), out.size());
    CHECK(used == 2 + 3 * 5);
    CHECK(out[0] == 1.0f && out[1] == 0.5f && out[5] == 0.8f);           // class 0: one box
    CHECK(out[6] == 2.0f && out[7] == 0.1f && out[11] == 0.9f && out[16] == 0.7f);  // class 1: two
    CHECK(out[17] == 0.0f && out[21] == 0.0f);                          // tail zeroed
    CHECK(throws([&] { pack_hailo_nms_by_class(boxes, scores, cls, 3, 2, 2, out.data(), 21); }, "too small"));
}

static Config one_head_config(DType t) {
    Config cfg;
    TensorSpec box = spec("box", t, Order::NHWC, 2, 2, 4, 2, 2, 4);
    TensorSpec cls = spec("cls", t, Order::NHWC, 2, 2, 1, 2, 2, 1);
    cfg.outputs = {box, cls};
    cfg.heads = {{0, 1, 8}};
    cfg.num_classes = 1;
    cfg.bins = 1;
    cfg.settings.image_height = 16;
    cfg.settings.image_width = 16;
    cfg.settings.score_threshold = {0.5f};
    return cfg;
}

static void test_decoder_end_to_end() {
    // 2x2 grid, stride 8, input 16x16, bins 1 (distances given directly), float input.
    // Only cell (row 1, col 0) scores 0.9; distances (l, t, r, b) = (0.5, 0.5, 1, 1) strides:
    // centre (4, 12) px -> x [0, 12], y [8, 20] -> normalized yxyx [0.5, 0, 1.25, 0.75].
    Config cfg = one_head_config(DType::F32);
    Decoder dec(cfg);
    std::vector<float> box(16, 0.0f), cls{0.1f, 0.2f, 0.9f, 0.3f};
    const float d[4] = {0.5f, 0.5f, 1.0f, 1.0f};
    std::memcpy(box.data() + 2 * 4, d, sizeof d);
    const void* ptrs[] = {box.data(), cls.data()};
    size_t elems[] = {box.size(), cls.size()};
    dec.decode(ptrs, elems, 1);
    auto [dets, n] = dec.frame(0);
    CHECK(n == 1);
    CHECK(dets[0].box[0] == 0.5f && dets[0].box[1] == 0.0f && dets[0].box[2] == 1.25f && dets[0].box[3] == 0.75f);
    CHECK(dets[0].score == 0.9f && dets[0].class_id == 0);
    // Bounds are checked before anything is read.
    size_t short_elems[] = {box.size() - 1, cls.size()};
    CHECK(throws([&] { dec.decode(ptrs, short_elems, 1); }, "buffer holds 15 elements"));
    CHECK(throws([&] { dec.decode(ptrs, elems, 2); }, "2 frame(s) need 32"));
    cls[1] = NAN;
    CHECK(throws([&] { dec.decode(ptrs, elems, 1); }, "non-finite"));
    Config wrong = one_head_config(DType::U8);
    wrong.bins = 16;
    CHECK(throws([&] { Decoder x(wrong); }, "box channels must be 4 x bins = 64, got 4"));
}


// A yolov8-like frame: three uint8 heads, 80 classes, a few bright "objects" over low scores.
struct SyntheticModel {
    Config cfg;
    std::vector<std::vector<uint8_t>> buffers;
    SyntheticModel(int frames, Order order, bool device) {
        const int grids[3] = {40, 20, 10}, strides[3] = {8, 16, 32};
        uint32_t seed = 7;
        for (int h = 0; h < 3; ++h) {
            const int g = grids[h];
            TensorSpec box = spec("box", DType::U8, order, g, g, 64, g, g + (device ? 3 : 0), 64);
            TensorSpec cls = spec("cls", DType::U8, order, g, g, 80, g, g + (device ? 3 : 0), device ? 80 : 80);
            box.name = "box" + std::to_string(h); cls.name = "cls" + std::to_string(h);
            box.zp = {100}; box.scale = {0.1f}; cls.scale = {1.0f / 255.0f};
            cfg.outputs.push_back(box);
            cfg.outputs.push_back(cls);
            cfg.heads.push_back({2 * h, 2 * h + 1, strides[h]});
            for (const TensorSpec* t : {&box, &cls}) {
                std::vector<uint8_t> b(t->frame_stride * size_t(frames));
                for (auto& v : b) v = uint8_t((lcg(seed) >> 24) % (t == &cls ? 40 : 255));
                if (t == &cls)
                    for (int k = 0; k < 30 * frames; ++k) b[(lcg(seed) >> 8) % b.size()] = uint8_t(128 + (lcg(seed) >> 26) * 2);
                buffers.push_back(b);
            }
        }
        cfg.num_classes = 80;
        cfg.bins = 16;
        cfg.settings.image_height = cfg.settings.image_width = 320;
        cfg.settings.score_threshold = {0.5f};
    }
    std::vector<const void*> ptrs() const { std::vector<const void*> p; for (auto& b : buffers) p.push_back(b.data()); return p; }
    std::vector<size_t> sizes() const { std::vector<size_t> s; for (auto& b : buffers) s.push_back(b.size()); return s; }
};

static void test_no_allocation_after_warmup() {
    for (Order order : {Order::NHWC, Order::NHCW, Order::F8CR}) {
        SyntheticModel m(2, order, order != Order::NHWC);
        Decoder dec(m.cfg);
        auto p = m.ptrs();
        auto n = m.sizes();
        dec.decode(p.data(), n.data(), 2);  // warm-up: workspaces grow here
        CHECK(dec.frame(0).second + dec.frame(1).second > 10);
        const long before = g_allocations.load();
        for (int i = 0; i < 1000; ++i) dec.decode(p.data(), n.data(), 2);
        CHECK(g_allocations.load() == before);
    }
    // The end-to-end selection (uint8: the counting path; both stages and the boxes) too.
    for (Order order : {Order::NHWC, Order::NHCW}) {
        SyntheticModel m(2, order, order != Order::NHWC);
        m.cfg.settings.end2end = true;
        m.cfg.settings.score_threshold = {0.001f};
        Decoder dec(m.cfg);
        auto p = m.ptrs();
        auto n = m.sizes();
        dec.decode(p.data(), n.data(), 2);
        CHECK(dec.frame(0).second > 10);
        const long before = g_allocations.load();
        for (int i = 0; i < 1000; ++i) dec.decode(p.data(), n.data(), 2);
        CHECK(g_allocations.load() == before);
    }
    // YOLOX heads (the objectness scan, the class scan of passing cells).
    {
        Config cfg;
        std::vector<std::vector<uint8_t>> buffers;
        uint32_t seed = 99;
        const int strides[3] = {8, 16, 32};
        for (int h = 0; h < 3; ++h) {
            const int g = 320 / strides[h];
            const int channels[3] = {4, 1, 80};
            const char* role[3] = {"reg", "obj", "cls"};
            for (int r = 0; r < 3; ++r) {
                TensorSpec t = spec(role[r], DType::U8, Order::NHWC, g, g, channels[r], g, g, channels[r]);
                t.name = std::string(role[r]) + std::to_string(h);
                t.scale = {r == 0 ? 0.05f : 1.0f / 255.0f};
                t.zp = {r == 0 ? 128.0f : 0.0f};
                cfg.outputs.push_back(t);
                std::vector<uint8_t> b(t.frame_stride * 2);
                for (auto& v : b) v = uint8_t(r == 1 && (lcg(seed) >> 24) % 20 ? 10 : (lcg(seed) >> 24));
                buffers.push_back(b);
            }
            HeadSpec hs;
            hs.box_output = 3 * h;
            hs.obj_output = 3 * h + 1;
            hs.cls_output = 3 * h + 2;
            hs.stride = strides[h];
            cfg.heads.push_back(hs);
        }
        cfg.kind = HeadKind::YOLOX;
        cfg.num_classes = 80;
        cfg.settings.image_height = cfg.settings.image_width = 320;
        Decoder dec(cfg);
        std::vector<const void*> p;
        std::vector<size_t> n;
        for (auto& b : buffers) { p.push_back(b.data()); n.push_back(b.size()); }
        dec.decode(p.data(), n.data(), 2);
        CHECK(dec.frame(0).second > 10);
        const long before = g_allocations.load();
        for (int i = 0; i < 1000; ++i) dec.decode(p.data(), n.data(), 2);
        CHECK(g_allocations.load() == before);
    }
}

static bool same(const Decoder& a, const Decoder& b, size_t frames) {
    for (size_t f = 0; f < frames; ++f) {
        auto [da, na] = a.frame(f);
        auto [db, nb] = b.frame(f);
        if (na != nb || (na && std::memcmp(da, db, na * sizeof(Detection)) != 0)) return false;
    }
    return true;
}

// The pool's protocol: job 0 runs on the caller, every other job at most once per run and only
// while the run is open; runs back to back (workers spinning) and after a pause (workers asleep)
// alike; an exception from any job reaches the caller and the pool stays usable.
static void test_thread_pool() {
    ThreadPool pool(3);
    std::atomic<int> ran[4];
    for (int round = 0; round < 400; ++round) {
        if (round % 100 == 99) std::this_thread::sleep_for(ThreadPool::kSpin * 3);  // let the workers sleep
        for (auto& r : ran) r = 0;
        const size_t n = size_t(1 + round % 4);
        std::atomic<size_t> next{0};
        std::atomic<size_t> done{0};
        const std::function<void(size_t)> job = [&](size_t i) {
            ran[i].fetch_add(1);
            for (size_t f; (f = next.fetch_add(1)) < 64;) done.fetch_add(1);  // shared work, as decode's frames
        };
        pool.run(n, job);
        CHECK(ran[0] == 1 && done == 64);
        for (size_t i = 1; i < 4; ++i) CHECK(ran[i] <= (i < n ? 1 : 0));
    }
    for (size_t thrower : {0u, 1u}) {
        std::atomic<size_t> next{0};
        const std::function<void(size_t)> job = [&](size_t i) {
            if (i == thrower) throw std::runtime_error("job failed");
            while (next.fetch_add(1) < 1000) {}
        };
        bool caught = thrower == 1;  // a worker may not join in time; job 0 always runs
        try { pool.run(2, job); } catch (const std::runtime_error&) { caught = true; }
        CHECK(caught);
        std::atomic<int> count{0};
        pool.run(4, [&](size_t) { count.fetch_add(1); });
        CHECK(count >= 1 && count <= 4);
    }
}

static void test_threads_same_results() {
    SyntheticModel m(8, Order::NHWC, false);
    auto p = m.ptrs();
    auto n = m.sizes();
    Decoder serial(m.cfg, 1), threaded(m.cfg, 3);
    serial.decode(p.data(), n.data(), 8);
    for (int i = 0; i < 20; ++i) {
        threaded.decode(p.data(), n.data(), size_t(1 + i % 8));
        CHECK(threaded.frame_count() == size_t(1 + i % 8));
        CHECK(same(serial, threaded, threaded.frame_count()));
    }
    // The same detections on every kernel path.
    const std::string best = kernels::active().name;
    for (const kernels::Table* k : tables()) {
        CHECK(kernels::select(k->name));
        Decoder d(m.cfg);
        d.decode(p.data(), n.data(), 8);
        CHECK(same(serial, d, 8));
    }
    kernels::select(best.c_str());
}

int main() {
    test_frame_count_overflow();
    std::printf("kernel paths tested: %s\n", kernels::available());
    test_layouts();
    test_thresholds();
    test_kernels_agree();
    test_scan_strategies();
    test_no_allocation_after_warmup();
    test_thread_pool();
    test_threads_same_results();
    test_count_above();
    test_sort_candidates_orders();
    test_nms_caps_and_ties();
    test_suppress_matches_greedy();
    test_nms_list();
    test_pack();
    test_decoder_end_to_end();
    return report();
}
