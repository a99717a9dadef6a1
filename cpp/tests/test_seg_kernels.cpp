// The yolov5_seg frame's kernels (cpp/src/kernels/seg_kernels.hpp): every instruction set's path
// gives the scalar reference's bits, on odd lengths, strides with gaps, exp's clamp and underflow
// edges, taps from 1 to 4 and horizontal blocks both within an 8-lane permute's reach and past it;
// the scalar reference itself against double precision (the byte-exact match with HailoRT's op is
// pinned end to end by tests/test_yolov5_seg.py); and the frame writer allocates nothing once warm.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "../src/kernels/kernels.hpp"
#include "../src/kernels/seg_kernels.hpp"
#include "check.hpp"
#include "count_allocations.hpp"
#include "hailo_decode/decoder.hpp"
#include "hailo_decode/yolov5_seg.hpp"
#include "tensor_spec.hpp"

using namespace hailo_decode;
using kernels::SegTable;

static std::vector<const SegTable*> seg_tables() {
    std::vector<const SegTable*> t;
    const std::string names = kernels::available();
    for (const SegTable* k : {kernels::seg_sse2_table(), kernels::seg_avx2_table(), kernels::seg_neon_table()})
        if (k && names.find(k->name) != std::string::npos) t.push_back(k);
    return t;
}

static uint32_t lcg(uint32_t& s) { return s = s * 1664525u + 1013904223u; }
static float unit(uint32_t& s) { return float(lcg(s) >> 8) / float(1u << 24); }

template <typename T>
static bool same_bytes(const std::vector<T>& a, const std::vector<T>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

static void test_cells() {
    uint32_t seed = 11;
    const SegTable& ref = kernels::seg_scalar_table();
    for (size_t stride : {size_t(32), size_t(40)})
        for (size_t n : {1, 3, 4, 7, 8, 9, 15, 16, 17, 24, 33, 100}) {
            std::vector<uint8_t> q(n * stride + 8);
            for (auto& b : q) b = uint8_t(lcg(seed) >> 24);
            float negc[32];
            for (float& c : negc) c = (unit(seed) - 0.5f) * 6.0f;
            const float zp = n % 2 ? 128.0f : 3.7f, scale = n % 2 ? 0.03125f : 0.0173f;
            std::vector<float> want(n), got(n, 1e30f);
            ref.cells_u8(q.data(), n, stride, zp, scale, negc, want.data());
            bool close = true;
            for (size_t i = 0; i < n; ++i) {
                double s = 0, mag = 0;
                for (int k = 0; k < 32; ++k) {
                    const double t = double(negc[k]) * ((double(q[i * stride + k]) - zp) * scale);
                    s += t;
                    mag += std::fabs(t);
                }
                close = close && std::fabs(want[i] - s) <= 1e-5 * (1 + mag);
            }
            CHECK(close);
            // Eigen's order exactly (its gemv: one product after another added to the first; each
            // product and sum rounded on its own, `volatile` keeping a compiler from fusing them).
            bool ordered = true;
            for (size_t i = 0; i < n; ++i) {
                volatile float acc = negc[0] * ((float(q[i * stride]) - zp) * scale);
                for (int k = 1; k < 32; ++k) {
                    volatile float d = (float(q[i * stride + size_t(k)]) - zp) * scale;
                    volatile float prod = negc[k] * d;
                    acc = acc + prod;
                }
                ordered = ordered && same_bytes(std::vector<float>{acc}, std::vector<float>{want[i]});
            }
            CHECK(ordered);
            for (const SegTable* k : seg_tables()) {
                std::fill(got.begin(), got.end(), 1e30f);
                k->cells_u8(q.data(), n, stride, zp, scale, negc, got.data());
                CHECK(same_bytes(want, got));
                if (!same_bytes(want, got)) std::printf("  cells_u8 %s n=%zu stride=%zu\n", k->name, n, stride);
            }
        }
}

static void test_sigmoid() {
    uint32_t seed = 5;
    std::vector<float> v = {0.0f, -0.0f, 1e-30f, -1e-30f, 88.72f, 88.723f, 88.73f, 100.0f, -88.72f, -88.723f, -88.73f,
                            -100.0f, -87.0f, -87.5f, 0.5f, -0.5f, 1.0f, 20.0f, -20.0f};
    for (int i = 0; i < 301; ++i) v.push_back((unit(seed) - 0.5f) * 200.0f);
    for (int i = 0; i < 101; ++i) v.push_back((unit(seed) - 0.5f) * 8.0f);
    std::vector<float> want = v;
    kernels::seg_scalar_table().sigmoid(want.data(), want.size());
    bool close = true;
    for (size_t i = 0; i < v.size(); ++i) {
        const double x = std::min(std::max(double(v[i]), -88.723), 88.723);
        const double s = 1.0 / (1.0 + std::exp(x));
        close = close && std::fabs(want[i] - s) <= 1e-6 * s + 1e-38;
    }
    CHECK(close);
    for (const SegTable* k : seg_tables())
        for (size_t n : {v.size(), size_t(7), size_t(1)}) {
            std::vector<float> got(v.begin(), v.begin() + long(n));
            k->sigmoid(got.data(), n);
            CHECK(std::memcmp(got.data(), want.data(), n * sizeof(float)) == 0);
        }
}

static void test_hpass() {
    uint32_t seed = 3;
    std::vector<float> src(64 + 16);
    for (auto& f : src) f = unit(seed);
    for (int wide = 0; wide < 2; ++wide) {  // blocks within 8 columns, then spanning up to 20 (a gather)
        std::vector<kernels::SegHBlock> blocks(5);
        for (size_t b = 0; b < blocks.size(); ++b) {
            kernels::SegHBlock& k = blocks[b];
            k.taps = int(1 + b % 4);
            k.first = int(4 * b);
            int top = 0;
            for (int t = 0; t < 4; ++t)
                for (int j = 0; j < 8; ++j) {
                    k.idx[t][j] = int(lcg(seed) % (wide ? 20u : 8u));
                    k.coef[t][j] = t < k.taps ? unit(seed) : 0.0f;
                    if (t < k.taps) top = std::max(top, k.idx[t][j]);
                }
            k.span = wide ? 20 : top + 1;
        }
        std::vector<float> want(40), got(40);
        kernels::seg_scalar_table().hpass(src.data(), blocks.data(), blocks.size(), want.data());
        bool exact = true;  // the sum of the taps in order, one block column at a time
        for (size_t b = 0; b < blocks.size(); ++b)
            for (int j = 0; j < 8; ++j) {
                const kernels::SegHBlock& k = blocks[b];
                float acc = src[size_t(k.first + k.idx[0][j])] * k.coef[0][j];
                for (int t = 1; t < k.taps; ++t) {
                    const float p = src[size_t(k.first + k.idx[t][j])] * k.coef[t][j];
                    acc = acc + p;
                }
                exact = exact && std::fabs(acc - want[b * 8 + size_t(j)]) <= 1e-6f;
            }
        CHECK(exact);
        for (const SegTable* k : seg_tables()) {
            k->hpass(src.data(), blocks.data(), blocks.size(), got.data());
            CHECK(same_bytes(want, got));
        }
    }
}

static void test_vpass() {
    uint32_t seed = 9;
    for (int taps = 1; taps <= 4; ++taps)
        for (size_t n : {1, 5, 8, 13, 16, 31, 32, 33, 70, 130}) {
            std::vector<std::vector<float>> rows(4, std::vector<float>(n));
            for (auto& r : rows)
                for (auto& f : r) f = unit(seed);
            const float* ptrs[4] = {rows[0].data(), rows[1].data(), rows[2].data(), rows[3].data()};
            float coef[4];
            for (float& c : coef) c = unit(seed) / float(taps) * 1.2f;
            const float cut = 0.5f;
            std::vector<uint8_t> want(n + 4, 7), got(n + 4, 7);
            kernels::seg_scalar_table().vpass(ptrs, coef, taps, cut, n, want.data());
            bool ok = want[n] == 7;  // nothing written past n
            size_t ones = 0;
            for (size_t x = 0; x < n; ++x) {
                double acc = 0;
                for (int t = 0; t < taps; ++t) acc += double(rows[size_t(t)][x]) * coef[t];
                if (std::fabs(acc - cut) > 1e-5) ok = ok && want[x] == uint8_t(acc > cut);
                ones += want[x];
            }
            CHECK(ok);
            for (const SegTable* k : seg_tables()) {
                std::fill(got.begin(), got.end(), 7);
                k->vpass(ptrs, coef, taps, cut, n, got.data());
                CHECK(same_bytes(want, got));
            }
            (void)ones;
        }
}

// A YOLOv5-seg model of one 4 x 4 head (1 anchor, 1 class, 32 coefficients), a 16 x 16 x 32 uint8
// prototype and a 64 x 64 input: two detections written into a frame, then the same frames again
// with no allocation (the decode's and the writer's buffers reused), on every path.
static Config one_head_model(std::vector<uint8_t>& head, std::vector<uint8_t>& proto) {
    Config c;
    c.outputs = {spec("v5", DType::U8, Order::NHWC, 4, 4, 38, 4, 4, 38), spec("proto", DType::U8, Order::NHWC, 16, 16, 32, 16, 16, 32)};
    c.outputs[0].zp = {128.0f};
    c.outputs[0].scale = {1.0f / 16.0f};
    c.outputs[1].zp = {128.0f};
    c.outputs[1].scale = {1.0f / 32.0f};
    HeadSpec h;
    h.box_output = h.cls_output = 0;
    h.stride = 16;
    h.anchors = {40, 40};
    c.heads = {h};
    c.kind = HeadKind::YOLOV5;
    c.proto_output = 1;
    c.num_classes = 1;
    c.settings.score_threshold = {0.5f};
    c.settings.sigmoid = true;  // the op's: every value of a YOLOv5-seg head through the sigmoid
    c.settings.image_height = c.settings.image_width = 64;
    head.assign(4 * 4 * 38, 0);
    proto.resize(16 * 16 * 32);
    uint32_t seed = 21;
    for (auto& b : proto) b = uint8_t(lcg(seed) >> 24);
    for (int cell : {5, 10}) {  // objectness and class high, box about the anchor, random coefficients
        uint8_t* e = head.data() + cell * 38;
        e[0] = e[1] = e[2] = e[3] = 128;
        e[4] = e[5] = 255;
        for (int k = 0; k < 32; ++k) e[6 + k] = uint8_t(lcg(seed) >> 24);
    }
    return c;
}

static void test_writer_no_allocation() {
    std::vector<uint8_t> head, proto;
    const Config c = one_head_model(head, proto);
    const std::string names = kernels::available(), best = names.substr(names.rfind(',') + 1);
    for (const std::string& level : {std::string("scalar"), best}) {
        CHECK(kernels::select(level.c_str()));
        Decoder dec(c);
        Yolov5SegFrameWriter writer(c);
        const void* t[2] = {head.data(), proto.data()};
        const size_t n[2] = {head.size(), proto.size()};
        std::vector<uint8_t> out(2 + 10 * (38 + 64 * 64), 0);
        dec.set_masks_enabled(false);
        dec.decode(t, n, 1);
        CHECK(dec.frame(0).second == 2);
        Yolov5SegFramePacked r = writer.write(dec, 0, t, 10, 0.5, out.data(), out.size());
        CHECK(r.records == 2);
        const std::vector<uint8_t> first = out;
        const long before = g_allocations.load();
        for (int i = 0; i < 3; ++i) {
            dec.decode(t, n, 1);
            r = writer.write(dec, 0, t, 10, 0.5, out.data(), out.size());
        }
        CHECK(g_allocations.load() == before);
        CHECK(r.records == 2 && out == first);
    }
    kernels::select(best.c_str());
}

// HailoRT 5.2's records (ByteMaskLayout::HailoRT52): 46 bytes, mask_offset the mask's offset in the
// frame, the pointer into it, the masks 4.23's (one anchor: 5.x's row, anchor, column order is 4.x's
// here); refused from a decoder of 4.x's ops.
static void test_writer_52_records() {
    std::vector<uint8_t> head, proto;
    Config c = one_head_model(head, proto);
    const void* t[2] = {head.data(), proto.data()};
    const size_t n[2] = {head.size(), proto.size()};
    std::vector<uint8_t> old_frame(2 + 10 * (46 + 64 * 64), 0), new_frame(old_frame.size(), 0);
    {
        Decoder dec(c);
        Yolov5SegFrameWriter writer(c);
        dec.decode(t, n, 1);
        CHECK(writer.write(dec, 0, t, 10, 0.5, old_frame.data(), old_frame.size()).records == 2);
        CHECK(throws([&] { writer.write(dec, 0, t, 10, 0.5, new_frame.data(), new_frame.size(), ByteMaskLayout::HailoRT52); },
                     "HailoRT 5.x's ops"));
    }
    c.settings.hailort_v5 = true;
    Decoder dec(c);
    Yolov5SegFrameWriter writer(c);
    dec.decode(t, n, 1);
    const Yolov5SegFramePacked r =
        writer.write(dec, 0, t, 10, 0.5, new_frame.data(), new_frame.size(), ByteMaskLayout::HailoRT52);
    CHECK(r.records == 2 && r.count == 2);
    uint64_t size = 0, ptr = 0, offset = 0;
    std::memcpy(&size, new_frame.data() + 2 + 22, 8);
    std::memcpy(&ptr, new_frame.data() + 2 + 30, 8);
    std::memcpy(&offset, new_frame.data() + 2 + 38, 8);
    CHECK(offset == 2 + 46 && ptr == uint64_t(reinterpret_cast<uintptr_t>(new_frame.data() + 48)));
    CHECK(size > 0 && std::memcmp(new_frame.data() + 2, old_frame.data() + 2, 22) == 0);  // box, score, class
    CHECK(std::memcmp(new_frame.data() + 48, old_frame.data() + 40, size_t(size)) == 0);    // the first mask
    CHECK(r.bytes > 2 + 2 * 46 + size);  // two records and both masks
}

int main() {
    std::printf("kernel paths tested: %s\n", kernels::available());
    test_cells();
    test_sigmoid();
    test_hpass();
    test_vpass();
    test_writer_no_allocation();
    test_writer_52_records();
    return report();
}
