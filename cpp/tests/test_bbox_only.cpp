// Unit tests of the yolov8_bbox_only reader (bbox_only): thresholds, HailoRT's candidate order,
// NMS, box formats and the checks, against outcomes worked out by hand in the comments.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <stdexcept>
#include <vector>

#include "hailo_decode/bbox_only.hpp"
#include "check.hpp"

using namespace hailo_decode;



// Three rows, two classes: A and B overlap (IoU 0.9), C stands apart.
//   A = [0.1, 0.1, 0.5, 0.5]  scores (0.9, 0.3)
//   B = [0.1, 0.1, 0.5, 0.46] scores (0.8, 0.85)   IoU(A, B) = 0.144 / 0.16 = 0.9
//   C = [0.6, 0.6, 0.9, 0.9]  scores (0.1, 0.5)
static std::vector<float> rows() {
    return {0.1f, 0.1f, 0.5f, 0.5f, 0.9f, 0.3f,
            0.1f, 0.1f, 0.5f, 0.46f, 0.8f, 0.85f,
            0.6f, 0.6f, 0.9f, 0.9f, 0.1f, 0.5f};
}

static Settings hailort() {
    Settings s;  // the types.hpp defaults are HailoRT's: >= 0.2, IoU >= 0.7, multi-label, yxyx normalized
    s.score_threshold = {0.2f};
    s.iou_threshold = 0.7f;
    return s;
}

static void test_hailort_semantics() {
    // Candidates (row, class order): A0 0.9, A1 0.3, B0 0.8, B1 0.85, C1 0.5. Sorted: A0, B1, B0, C1, A1.
    // B0 goes (same class as A0, IoU 0.9 >= 0.7), A1 goes (B1 kept first). Kept: A0, B1, C1.
    const std::vector<float> r = rows();
    std::vector<Detection> out;
    decode_bbox_only(r.data(), r.size(), 3, 2, hailort(), out);
    CHECK(out.size() == 3);
    CHECK(out[0].score == 0.9f && out[0].class_id == 0 && out[0].box[3] == 0.5f);
    CHECK(out[1].score == 0.85f && out[1].class_id == 1 && out[1].box[3] == 0.46f);
    CHECK(out[2].score == 0.5f && out[2].class_id == 1 && out[2].box[0] == 0.6f);
    // Agnostic: A0 suppresses B1, B0 and A1 across classes; kept A0 and C1.
    Settings s = hailort();
    s.agnostic = true;
    out.clear();
    decode_bbox_only(r.data(), r.size(), 3, 2, s, out);
    CHECK(out.size() == 2 && out[0].score == 0.9f && out[1].score == 0.5f);
    // Caps after NMS: one per class keeps A0 and B1; a total of 1 keeps A0.
    s = hailort();
    s.max_per_class = 1;
    out.clear();
    decode_bbox_only(r.data(), r.size(), 3, 2, s, out);
    CHECK(out.size() == 2 && out[0].class_id == 0 && out[1].class_id == 1 && out[1].score == 0.85f);
    s.max_per_class = -1;
    s.max_total = 1;
    out.clear();
    decode_bbox_only(r.data(), r.size(), 3, 2, s, out);
    CHECK(out.size() == 1 && out[0].score == 0.9f);
}

static void test_thresholds_and_best_class() {
    const std::vector<float> r = rows();
    std::vector<Detection> out;
    Settings s = hailort();
    s.score_threshold = {0.5f};  // C1 sits exactly on it: kept by >=, dropped by >
    decode_bbox_only(r.data(), r.size(), 3, 2, s, out);
    CHECK(out.size() == 3 && out[2].score == 0.5f);
    s.score_inclusive = false;
    out.clear();
    decode_bbox_only(r.data(), r.size(), 3, 2, s, out);
    CHECK(out.size() == 2);
    // Per-class thresholds: class 0 at 0.95 drops A0, so B0 (0.8) is gone too; class 1 at 0.2.
    s = hailort();
    s.score_threshold = {0.95f, 0.2f};
    out.clear();
    decode_bbox_only(r.data(), r.size(), 3, 2, s, out);
    CHECK(out.size() == 2 && out[0].class_id == 1 && out[0].score == 0.85f && out[1].score == 0.5f);
    // Best class only: A -> 0 (0.9), B -> 1 (0.85), C -> 1 (0.5); nothing overlaps within a class.
    s = hailort();
    s.multi_label = false;
    out.clear();
    decode_bbox_only(r.data(), r.size(), 3, 2, s, out);
    CHECK(out.size() == 3 && out[0].class_id == 0 && out[1].class_id == 1 && out[2].class_id == 1);
    // Sigmoid on the host: logit 0 -> 0.5, logit -3 -> 0.047 (under 0.2).
    const std::vector<float> logits = {0.f, 0.f, 1.f, 1.f, 0.f, -3.f};
    s = hailort();
    s.sigmoid = true;
    out.clear();
    decode_bbox_only(logits.data(), logits.size(), 1, 2, s, out);
    CHECK(out.size() == 1 && out[0].class_id == 0 && out[0].score == 0.5f);
}

static void test_box_formats() {
    const std::vector<float> r = rows();
    std::vector<Detection> out;
    Settings s = hailort();
    s.yxyx = false;
    s.normalized = false;
    s.image_height = 100;
    s.image_width = 200;
    decode_bbox_only(r.data(), r.size(), 3, 2, s, out);
    // A as xyxy pixels: x 0.1 x 200 = 20, y 0.1 x 100 = 10, x 0.5 x 200 = 100, y 0.5 x 100 = 50
    CHECK(out.size() == 3 && out[0].box[0] == 20.0f && out[0].box[1] == 10.0f && out[0].box[2] == 100.0f &&
          out[0].box[3] == 50.0f);
}

static void test_checks() {
    std::vector<float> r = rows();
    std::vector<Detection> out;
    CHECK(throws([&] { decode_bbox_only(r.data(), r.size() - 1, 3, 2, hailort(), out); }, "need 18"));
    CHECK(throws([&] { decode_bbox_only(r.data(), r.size(), 3, 0, hailort(), out); }, "num_classes"));
    Settings s = hailort();
    s.score_threshold = {0.1f, 0.2f, 0.3f};
    CHECK(throws([&] { decode_bbox_only(r.data(), r.size(), 3, 2, s, out); }, "1 or 2 values"));
    r[8] = std::numeric_limits<float>::quiet_NaN();  // row 1, column 2
    CHECK(throws([&] { decode_bbox_only(r.data(), r.size(), 3, 2, hailort(), out); }, "proposal 1, column 2"));
    CHECK(throws([] { bbox_only_floats(std::numeric_limits<size_t>::max() / 2, 80); }, "overflows"));
    CHECK(bbox_only_floats(8400, 80) == 8400 * 84);
    CHECK(out.empty());
    decode_bbox_only(r.data(), 0, 0, 2, hailort(), out);  // no proposals: nothing, no error
    CHECK(out.empty());
}

int main() {
    test_hailort_semantics();
    test_thresholds_and_best_class();
    test_box_formats();
    test_checks();
    return report();
}
