// Unit tests of SSD heads (HeadKind::SSD, ssd_heads.cpp) and the yolov5_bbox_only writer in the C++
// core: outcomes worked out by hand in the comments (HailoRT 4.23's formulas, ssd_post_process.hpp
// and yolov5_post_process.cpp), the checks' messages, and no allocation once warm.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "check.hpp"
#include "count_allocations.hpp"
#include "hailo_decode/decoder.hpp"
#include "hailo_decode/yolov5_bbox_only.hpp"
#include "tensor_spec.hpp"

using namespace hailo_decode;

// One SSD head on a 2 x 2 grid, 2 anchors, 3 classes in the tensor with the background first (so
// 2 detection classes), float32: reg (2, 2, 8), cls (2, 2, 6).
static Config ssd_config() {
    Config c;
    c.outputs = {spec("reg", DType::F32, Order::NHWC, 2, 2, 8, 2, 2, 8), spec("cls", DType::F32, Order::NHWC, 2, 2, 6, 2, 2, 6)};
    HeadSpec h;
    h.box_output = 0;
    h.cls_output = 1;
    h.box_anchors = {0.4f, 0.2f, 0.1f, 0.3f};  // anchor 0 (w 0.4, h 0.2), anchor 1 (w 0.1, h 0.3)
    c.heads = {h};
    c.kind = HeadKind::SSD;
    c.num_classes = 2;
    c.ssd.background_class = 0;
    c.settings.score_threshold = {0.5f};
    c.settings.iou_threshold = 0.6f;
    c.settings.image_height = c.settings.image_width = 300;
    return c;
}

static void test_decode_by_hand() {
    std::vector<float> reg(2 * 2 * 8, 0.0f), cls(2 * 2 * 6, 0.0f);
    // Cell (row 1, col 0), anchor 1: tx = 1 (channel 4 + 1: ty 0, tx 1, th 2, tw 3), tw = 5 * ln 2.
    // tx / 10 = 0.1; x_centre = 0.1 * 0.1 + (0 * 0.5 + 0.25) = 0.26; w = exp(ln 2) * 0.1 = 0.2;
    // y_centre = 0 * 0.3 + (1 * 0.5 + 0.25) = 0.75, h = 0.3: box (0.6, 0.16, 0.9, 0.36).
    const size_t cell10 = (1 * 2 + 0) * 8;
    reg[cell10 + 4 + 1] = 1.0f;
    reg[cell10 + 4 + 3] = 5.0f * std::log(2.0f);
    const size_t c10 = (1 * 2 + 0) * 6;
    cls[c10 + 3 + 0] = 0.9f;  // anchor 1's background: never a detection
    cls[c10 + 3 + 2] = 0.7f;  // anchor 1, tensor class 2 -> class 1
    cls[c10 + 0 + 1] = 0.5f;  // anchor 0, tensor class 1 -> class 0, at the threshold: kept (>=)
    cls[c10 + 0 + 2] = 0.49f; // below
    Decoder dec(ssd_config());
    const void* t[2] = {reg.data(), cls.data()};
    const size_t n[2] = {reg.size(), cls.size()};
    dec.decode(t, n, 1);
    auto [d, count] = dec.frame(0);
    CHECK(count == 2);
    if (count != 2) return;
    CHECK(d[0].class_id == 1 && d[0].score == 0.7f);
    const float tw = 5.0f * std::log(2.0f) / 5.0f;
    const float w = std::exp(tw) * 0.1f, xc = (1.0f / 10.0f) * 0.1f + (0.0f * (1.0f / 2.0f) + 0.5f * (1.0f / 2.0f));
    const float yc = 0.0f * 0.3f + (1.0f * (1.0f / 2.0f) + 0.5f * (1.0f / 2.0f)), h = std::exp(0.0f) * 0.3f;
    CHECK(d[0].box[0] == yc - h / 2.0f && d[0].box[1] == xc - w / 2.0f && d[0].box[2] == yc + h / 2.0f &&
          d[0].box[3] == xc + w / 2.0f);
    CHECK(std::fabs(d[0].box[1] - 0.16f) < 1e-6f && std::fabs(d[0].box[3] - 0.36f) < 1e-6f);
    CHECK(d[0].cell == (1u * 2u + 0u) * 2u + 1u);  // (row * W + col) * anchors + anchor
    CHECK(d[1].class_id == 0 && d[1].score == 0.5f);
    // Warm: the same frame again allocates nothing.
    const long before = g_allocations.load();
    dec.decode(t, n, 1);
    CHECK(g_allocations.load() == before);
}

static void test_checks() {
    Config c = ssd_config();
    c.outputs[1].channels = c.outputs[1].padded_channels = 5;
    c.outputs[1].frame_stride = 2 * 2 * 5;
    CHECK(throws([&] { Decoder d(c); }, "'cls': SSD class channels must be anchors x (classes + background) = 2 x 3 = 6, got 5"));
    c = ssd_config();
    c.ssd.background_class = 1;
    CHECK(throws([&] { Decoder d(c); }, "background class must be -1 (none), 0 or the last class (2), got 1"));
    c = ssd_config();
    c.ssd.tx_index = 0;
    CHECK(throws([&] { Decoder d(c); }, "permutation of 0..3"));
    c = ssd_config();
    c.heads[0].box_anchors = {0.4f, 0.0f, 0.1f, 0.3f};
    CHECK(throws([&] { Decoder d(c); }, "'reg': SSD anchors must be finite and > 0"));
}

// One YOLOv5 head, 1 x 1 grid, 1 anchor (10, 20) px, 2 classes, uint8 with zp 0 and scale 1/255.
static void test_yolov5_bbox_only_row() {
    Config c;
    c.outputs = {spec("v5", DType::U8, Order::NHWC, 1, 1, 7, 1, 1, 7)};
    c.outputs[0].scale = {1.0f / 255.0f};
    HeadSpec h;
    h.box_output = h.cls_output = 0;
    h.stride = 64;
    h.anchors = {10, 20};
    c.heads = {h};
    c.kind = HeadKind::YOLOV5;
    c.num_classes = 2;
    c.settings.image_height = c.settings.image_width = 64;
    Yolov5BboxOnly op(c);
    CHECK(op.proposals() == 1 && op.row_floats() == 7);
    const uint8_t raw[7] = {255, 0, 255, 51, 102, 204, 0};
    const void* t[1] = {raw};
    const size_t n[1] = {7};
    float out[7];
    const long before = g_allocations.load();
    op.write(t, n, 1, out, 7);
    CHECK(g_allocations.load() == before);
    // tx = 1, ty = 0, tw = 1, th = 0.2: w = 2^2 * 10 / 64, h = 0.4^2 * 20 / 64, xc = (2 - 0.5) / 1,
    // yc = -0.5; then y_min = yc - h / 2, x_min = xc - w / 2, y_max = y_min + h, x_max = x_min + w.
    const float s = 1.0f / 255.0f;
    const float tx = 255.0f * s, ty = 0.0f, tw = 255.0f * s, th = 51.0f * s;
    const float w = std::pow(2.0f * tw, 2.0f) * 10.0f / 64.0f, hh = std::pow(2.0f * th, 2.0f) * 20.0f / 64.0f;
    const float xc = (tx * 2.0f - 0.5f + 0.0f) / 1.0f, yc = (ty * 2.0f - 0.5f + 0.0f) / 1.0f;
    const float x0 = xc - w / 2.0f, y0 = yc - hh / 2.0f;
    CHECK(out[0] == y0 && out[1] == x0 && out[2] == y0 + hh && out[3] == x0 + w);
    CHECK(out[4] == 102.0f * s && out[5] == 204.0f * s && out[6] == 0.0f);
    CHECK(throws([&] { op.write(t, n, 1, out, 6); }, "out holds 6 float32 values"));
    Config bad = c;
    bad.kind = HeadKind::DFL;
    CHECK(throws([&] { Yolov5BboxOnly o(bad); }, "needs YOLOv5 heads"));
}

int main() {
    test_decode_by_hand();
    test_checks();
    test_yolov5_bbox_only_row();
    return report();
}
