// C++ unit tests of the task rooms (gather; rotated NMS and keypoint/angle decode as they land),
// run by ctest. Expected values are worked out by hand in the comments beside them.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <vector>

#include "../src/gather.hpp"
#include "../src/tensor_view.hpp"
#include "hailo_decode/decoder.hpp"

using namespace hailo_decode;
using namespace hailo_decode::detail;

static int failures = 0, checks = 0;
#define CHECK(cond)                                                     \
    do {                                                                \
        ++checks;                                                       \
        if (!(cond)) {                                                  \
            ++failures;                                                 \
            std::printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); \
        }                                                               \
    } while (0)

static TensorSpec spec(const char* name, DType t, Order o, int h, int w, int c, int hp, int wp, int cp) {
    TensorSpec s;
    s.name = name; s.dtype = t; s.order = o;
    s.height = h; s.width = w; s.channels = c;
    s.padded_height = hp; s.padded_width = wp; s.padded_channels = cp;
    s.frame_stride = size_t(hp) * wp * cp;
    return s;
}

static void test_gather_cell() {
    // A 3x4 grid of 10 channels, padded to (3, 5, 16); element (h, w, c) holds 20*h + 5*w + c,
    // placed by each order's formula (hailort-facts.md section 1), padding 0xEE. Per-channel zero
    // point c and scale 0.5, so every channel of cell (h, w) dequantizes to (20*h + 5*w) * 0.5.
    for (Order o : {Order::NHWC, Order::NHCW, Order::F8CR}) {
        TensorSpec s = spec("kpt", DType::U8, o, 3, 4, 10, 3, 5, 16);
        s.zp.clear();
        s.scale.clear();
        for (int c = 0; c < 10; ++c) { s.zp.push_back(float(c)); s.scale.push_back(0.5f); }
        TensorView v = make_tensor_view(s);
        std::vector<uint8_t> buf(s.frame_stride, 0xEE);  // padding: a value no test expects
        for (int h = 0; h < 3; ++h)
            for (int w = 0; w < 4; ++w)
                for (int c = 0; c < 10; ++c) {
                    size_t at = 0;
                    if (o == Order::NHWC) at = size_t(h) * 5 * 16 + size_t(w) * 16 + size_t(c);
                    if (o == Order::NHCW) at = size_t(h) * 5 * 16 + size_t(c) * 5 + size_t(w);
                    if (o == Order::F8CR) at = size_t(h) * 5 * 16 + size_t(c - c % 8) * 5 + size_t(w) * 8 + size_t(c % 8);
                    buf[at] = uint8_t(20 * h + 5 * w + c);
                }
        float out[10];
        gather_cell(v, buf.data(), 2, 3, out);
        bool ok = true;  // (55 + c - c) * 0.5 = 27.5 for every channel
        for (int c = 0; c < 10; ++c) ok = ok && out[c] == 27.5f;
        CHECK(ok);
        gather_cell(v, buf.data(), 0, 1, out);  // (5 + c - c) * 0.5 = 2.5
        ok = true;
        for (int c = 0; c < 10; ++c) ok = ok && out[c] == 2.5f;
        CHECK(ok);
    }
    // uint16, one zero point and scale: (1000 - 10) * 0.25 = 247.5
    TensorSpec s16 = spec("a16", DType::U16, Order::NHWC, 1, 2, 3, 1, 2, 3);
    s16.zp = {10.0f};
    s16.scale = {0.25f};
    std::vector<uint16_t> b16{0, 0, 0, 1000, 1010, 1020};
    float o16[3];
    gather_cell(make_tensor_view(s16), b16.data(), 0, 1, o16);
    CHECK(o16[0] == 247.5f && o16[1] == 250.0f && o16[2] == 252.5f);
    // float32, NCHW: values as they are
    TensorSpec sf = spec("af", DType::F32, Order::NCHW, 2, 2, 2, 2, 2, 2);
    std::vector<float> bf{0, 1, 2, 3, 10, 11, 12, 13};  // channel planes of 2x2
    float of[2];
    gather_cell(make_tensor_view(sf), bf.data(), 1, 0, of);
    CHECK(of[0] == 2.0f && of[1] == 12.0f);
}

static void test_detection_anchor() {
    // Two heads: a 2x2 grid (stride 8) and a 1x1 grid (stride 16) on a 16x16 input, bins 1. The
    // one passing cell is (row 1, col 1) of head 0 -> cell 1 * 2 + 1 = 3; then (0, 0) of head 1.
    Config cfg;
    cfg.outputs = {spec("box0", DType::F32, Order::NHWC, 2, 2, 4, 2, 2, 4), spec("cls0", DType::F32, Order::NHWC, 2, 2, 1, 2, 2, 1),
                   spec("box1", DType::F32, Order::NHWC, 1, 1, 4, 1, 1, 4), spec("cls1", DType::F32, Order::NHWC, 1, 1, 1, 1, 1, 1)};
    HeadSpec h0, h1;
    h0.box_output = 0; h0.cls_output = 1; h0.stride = 8;
    h1.box_output = 2; h1.cls_output = 3; h1.stride = 16;
    cfg.heads = {h0, h1};
    cfg.num_classes = 1;
    cfg.bins = 1;
    cfg.settings.image_height = cfg.settings.image_width = 16;
    cfg.settings.score_threshold = {0.5f};
    cfg.settings.iou_threshold = 0.99f;
    Decoder dec(cfg);
    std::vector<float> box0(16, 0.25f), cls0{0.1f, 0.1f, 0.1f, 0.9f}, box1(4, 0.25f), cls1{0.8f};
    const void* ptrs[] = {box0.data(), cls0.data(), box1.data(), cls1.data()};
    size_t elems[] = {16, 4, 4, 1};
    dec.decode(ptrs, elems, 1);
    auto [dets, n] = dec.frame(0);
    CHECK(n == 2);
    if (n == 2) {
        CHECK(dets[0].head == 0 && dets[0].cell == 3 && dets[0].score == 0.9f);
        CHECK(dets[1].head == 1 && dets[1].cell == 0 && dets[1].score == 0.8f);
    }
}

int main() {
    test_gather_cell();
    test_detection_anchor();
    std::printf("%d passed, %d failed\n", checks - failures, failures);
    return failures == 0 ? 0 : 1;
}
