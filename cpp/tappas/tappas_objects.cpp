#include "tappas_objects.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>

#include "sigmoid_rows.hpp"

namespace hailo_decode::tappas {

namespace {

constexpr float kMaskTransparency = 0.3f;  // hailo-apps' instance segmentation

// A point of the input (normalised) relative to the box.
HailoPoint point_in_box(const NormBox& box, float x, float y, float confidence) {
    const float w = box.xmax - box.xmin, h = box.ymax - box.ymin;
    return HailoPoint(w > 0.0f ? (x - box.xmin) / w : 0.0f, h > 0.0f ? (y - box.ymin) / h : 0.0f,
                      clamp_unit(confidence));
}

}  // namespace

const std::vector<std::pair<int, int>>& coco_skeleton() {
    static const std::vector<std::pair<int, int>> pairs = {{0, 1},  {1, 3},   {0, 2},   {2, 4},   {5, 6},   {5, 7},
                                                           {7, 9},  {6, 8},   {8, 10},  {5, 11},  {6, 12},  {11, 12},
                                                           {11, 13}, {12, 14}, {13, 15}, {14, 16}};
    return pairs;
}

void pixel_box(const Detection& d, const Settings& s, InputSize input, float xyxy[4]) {
    if (s.yxyx) {
        xyxy[0] = d.box[1], xyxy[1] = d.box[0], xyxy[2] = d.box[3], xyxy[3] = d.box[2];
    } else {
        xyxy[0] = d.box[0], xyxy[1] = d.box[1], xyxy[2] = d.box[2], xyxy[3] = d.box[3];
    }
    if (s.normalized) {
        xyxy[0] *= input.width, xyxy[2] *= input.width;
        xyxy[1] *= input.height, xyxy[3] *= input.height;
    }
}

void clip_pixel_box(float xyxy[4], const NormBox& p, InputSize input) {
    const float lo[4] = {p.xmin * input.width, p.ymin * input.height, p.xmin * input.width, p.ymin * input.height};
    const float hi[4] = {p.xmax * input.width, p.ymax * input.height, p.xmax * input.width, p.ymax * input.height};
    for (int k = 0; k < 4; ++k) xyxy[k] = std::clamp(xyxy[k], lo[k], hi[k]);
}

void attach_keypoints(HailoDetection& detection, const NormBox& box, const float* k, int count, bool normalized,
                      InputSize input, float threshold) {
    std::vector<HailoPoint> points;
    points.reserve(size_t(count));
    const float sx = normalized ? 1.0f : input.width, sy = normalized ? 1.0f : input.height;
    for (int i = 0; i < count; ++i, k += 3) points.push_back(point_in_box(box, k[0] / sx, k[1] / sy, k[2]));
    static const std::vector<std::pair<int, int>> no_pairs;
    detection.add_object(std::make_shared<HailoLandmarks>("centerpose", std::move(points), threshold,
                                                          count == 17 ? coco_skeleton() : no_pairs));
}

std::string rotated_box_text(const float r[5], InputSize input) {
    char text[160];
    std::snprintf(text, sizeof text, "hailo_decode.obb %.9g %.9g %.9g %.9g %.9g %.9g %.9g", double(r[0]), double(r[1]),
                  double(r[2]), double(r[3]), double(r[4]), double(input.width), double(input.height));
    return text;
}

void attach_rotated_box(HailoDetection& detection, const NormBox& box, const float r[5], int class_id,
                        InputSize input, bool user_meta) {
    // Ultralytics' xywhr2xyxyxyxy: the corners centre +- w/2 along the angle +- h/2 across it.
    const float c = std::cos(r[4]), s = std::sin(r[4]);
    const float ax = r[2] / 2 * c, ay = r[2] / 2 * s;   // half the width, along the angle
    const float bx = -r[3] / 2 * s, by = r[3] / 2 * c;  // half the height, across it
    const float corners[4][2] = {{r[0] + ax + bx, r[1] + ay + by},
                                 {r[0] + ax - bx, r[1] + ay - by},
                                 {r[0] - ax - bx, r[1] - ay - by},
                                 {r[0] - ax + bx, r[1] - ay + by}};
    std::vector<HailoPoint> points;
    points.reserve(4);
    for (const auto& p : corners) points.push_back(point_in_box(box, p[0] / input.width, p[1] / input.height, 1.0f));
    static const std::vector<std::pair<int, int>> outline = {{0, 1}, {1, 2}, {2, 3}, {3, 0}};
    detection.add_object(std::make_shared<HailoLandmarks>("obb", std::move(points), 0.0f, outline));
    if (user_meta) detection.add_object(std::make_shared<HailoUserMeta>(class_id, rotated_box_text(r, input), r[4]));
}

namespace {

// TAPPAS' decode_masks: int(CLAMP(v x n, 0, n)), truncation of a float in [0, n].
int tappas_cell(float v, int n) {
    const float x = v * float(n);
    return int(x < 0.0f ? 0.0f : (x > float(n) ? float(n) : x));
}

}  // namespace

void attach_mask(HailoDetection& detection, const float box[4], const NormBox& norm, const MaskWindow& win,
                 const float* logits, const MaskGrid& g, int class_id, MaskCrop crop) {
    if (win.rows <= 0 || win.cols <= 0) return;
    int x0, x1, y0, y1;
    if (crop == MaskCrop::Tappas) {
        const float w = norm.xmax - norm.xmin, h = norm.ymax - norm.ymin;  // HailoBBox keeps xmin, ymin, w, h
        x0 = tappas_cell(norm.xmin, g.proto_width), x1 = tappas_cell(norm.xmin + w, g.proto_width);
        y0 = tappas_cell(norm.ymin, g.proto_height), y1 = tappas_cell(norm.ymin + h, g.proto_height);
    } else {
        // The box on the prototype grid, in float32 as Ultralytics scales it (Python: masks_at_proto).
        const float sx = float(double(g.proto_width) / double(g.image_width));
        const float sy = float(double(g.proto_height) / double(g.image_height));
        crop_range(box[0] * sx, box[2] * sx, g.proto_width, x0, x1);  // Ultralytics' crop, as the core's renderers
        crop_range(box[1] * sy, box[3] * sy, g.proto_height, y0, y1);
    }
    if (x0 >= x1 || y0 >= y1) return;
    const int width = x1 - x0;
    std::vector<float> values(size_t(width) * size_t(y1 - y0));
    float* out = values.data();
    // The window holds the box's cells and one more each side, so the crop's rows lie inside it;
    // clamped all the same (edge cells repeated), as the core's renderers do.
    const bool inside = x0 >= win.col0 && x1 <= win.col0 + win.cols;
    for (int y = y0; y < y1; ++y, out += width) {
        const int row = std::clamp(y - win.row0, 0, win.rows - 1);
        const float* line = logits + size_t(row) * size_t(win.cols);
        if (inside) {
            sigmoid_row(line + (x0 - win.col0), out, width);
        } else {
            for (int x = x0; x < x1; ++x) sigmoid_row(line + std::clamp(x - win.col0, 0, win.cols - 1), out + (x - x0), 1);
        }
    }
    detection.add_object(
        std::make_shared<HailoConfClassMask>(std::move(values), x1 - x0, y1 - y0, kMaskTransparency, class_id));
}

}  // namespace hailo_decode::tappas
