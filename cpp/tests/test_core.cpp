// C++ unit tests of the core, run by ctest (and by pytest through tests/test_cpp_core.py).
// Each check compares against values worked out by hand in the comment beside it.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "../src/nms.hpp"
#include "../src/score_threshold.hpp"
#include "../src/tensor_view.hpp"
#include "hailo_decode/decoder.hpp"
#include "hailo_decode/pack.hpp"

using namespace hailo_decode;
using namespace hailo_decode::detail;

static int failures = 0, checks = 0;
#define CHECK(cond)                                                              \
    do {                                                                         \
        ++checks;                                                                \
        if (!(cond)) {                                                           \
            ++failures;                                                          \
            std::printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);          \
        }                                                                        \
    } while (0)

static bool throws(const std::function<void()>& f, const char* needle) {
    try { f(); } catch (const std::invalid_argument& e) { return std::strstr(e.what(), needle) != nullptr; }
    return false;
}

static TensorSpec spec(const char* name, DType t, Order o, int h, int w, int c, int hp, int wp, int cp) {
    TensorSpec s;
    s.name = name; s.dtype = t; s.order = o;
    s.height = h; s.width = w; s.channels = c;
    s.padded_height = hp; s.padded_width = wp; s.padded_channels = cp;
    s.frame_stride = size_t(hp) * wp * cp;
    return s;
}

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

static void test_iou() {
    Box a{{0, 0, 2, 2}}, b{{1, 1, 3, 3}}, c{{2, 2, 4, 4}};
    CHECK(std::fabs(iou(a, b, true) - 1.0f / 7.0f) < 1e-7f);  // 1 / (4 + 4 - 1)
    CHECK(iou(a, c, true) == 0.0f);                            // touching corners: no overlap
    Box d{{0, 0, 4, 2}};                                       // yxyx: 4 tall, 2 wide
    Box e{{0, 0, 2, 4}};                                       // yxyx: 2 tall, 4 wide
    CHECK(std::fabs(iou(d, e, true) - 4.0f / 12.0f) < 1e-7f);
}

static void test_nms_caps_and_ties() {
    // Three identical boxes of class 0 with scores 0.9, 0.8, 0.8 and one of class 1.
    std::vector<Box> boxes{{{0, 0, 1, 1}}, {{0, 0, 1, 1}}, {{0, 0, 1, 1}}, {{0, 0, 1, 1}}};
    std::vector<Candidate> c{{0.8f, 0, 0, 0}, {0.9f, 0, 1, 1}, {0.8f, 0, 2, 2}, {0.7f, 1, 3, 3}};
    sort_candidates(c, false);
    CHECK(c[0].seq == 1 && c[1].seq == 0 && c[2].seq == 2 && c[3].seq == 3);
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

int main() {
    test_layouts();
    test_thresholds();
    test_iou();
    test_nms_caps_and_ties();
    test_pack();
    test_decoder_end_to_end();
    std::printf("%d passed, %d failed\n", checks - failures, failures);
    return failures == 0 ? 0 : 1;
}
