// A tiny YOLOv8-style model and one frame of its raw heads, built in code so that the example needs
// no data file: a 64x64 input, 3 classes, heads at strides 8, 16 and 32 (grids 8x8, 4x4, 2x2), all
// outputs uint8 in dense NHWC host buffers as HailoRT's output vstreams hand them out. Box tensors
// hold 4 sides x 16 DFL bins (left, top, right, bottom); class tensors hold sigmoid scores (the
// activation ran on the chip), quantized with zero point 0 and scale 1/255.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "hailo_decode/types.hpp"

namespace synthetic {

constexpr int kImage = 64;
constexpr int kClasses = 3;
constexpr int kBins = 16;
constexpr int kHeads = 3;
constexpr int kStrides[kHeads] = {8, 16, 32};
constexpr int kMaxPerClass = 100;                // HailoRT's default max_proposals_per_class
constexpr float kBoxScale = 0.25f;               // box logit = byte x 0.25
constexpr float kClassScale = 1.0f / 255.0f;     // score = byte / 255
const char* const kClassNames[kClasses] = {"person", "bicycle", "dog"};

// One cell of one head that predicts something: its DFL distances in strides (the bin that gets
// logit 255 x 0.25 against 0 everywhere else, so the softmax puts all its weight there) and its
// class scores, each with whether the decoder must keep it.
struct Score {
    int class_id;
    uint8_t byte;
    bool kept;
};
struct Cell {
    int head, row, col;
    int distance[4];  // left, top, right, bottom
    std::vector<Score> scores;
};

inline const std::vector<Cell>& cells() {
    static const std::vector<Cell> c = {
        // A person (0.90) and a bicycle (0.31) on one box: multi-label keeps both (NMS is per class).
        {0, 3, 2, {1, 3, 1, 3}, {{0, 230, true}, {1, 80, true}}},
        // The cell below sees the same box as a person too, less sure (0.71): suppressed (IoU 1).
        {0, 4, 2, {1, 4, 1, 2}, {{0, 180, false}}},
        // A dog (0.82) on the stride-16 head.
        {1, 2, 2, {1, 1, 1, 1}, {{2, 210, true}}},
        // A person at 0.16 on the stride-32 head: under the 0.2 threshold.
        {2, 0, 0, {1, 1, 1, 1}, {{0, 40, false}}},
    };
    return c;
}

// The box a cell's distances give, normalized [ymin, xmin, ymax, xmax], as HailoRT writes it.
inline void expected_box(const Cell& c, float out[4]) {
    const float s = float(kStrides[c.head]);
    const float xc = (float(c.col) + 0.5f) * s, yc = (float(c.row) + 0.5f) * s;
    out[0] = (yc - float(c.distance[1]) * s) / float(kImage);
    out[1] = (xc - float(c.distance[0]) * s) / float(kImage);
    out[2] = (yc + float(c.distance[3]) * s) / float(kImage);
    out[3] = (xc + float(c.distance[2]) * s) / float(kImage);
}

// The decoder's configuration: outputs (box, class) per head, the heads, the settings of
// HailoRT's YOLOv8 post-process (the Python package's semantics="hailort" preset).
inline hailo_decode::Config make_config() {
    hailo_decode::Config cfg;
    for (int h = 0; h < kHeads; ++h) {
        const int grid = kImage / kStrides[h];
        for (int is_class = 0; is_class < 2; ++is_class) {
            hailo_decode::TensorSpec t;
            t.name = "synthetic/" + std::string(is_class ? "cls" : "box") + "_s" + std::to_string(kStrides[h]);
            t.dtype = hailo_decode::DType::U8;
            t.order = hailo_decode::Order::NHWC;
            t.height = t.padded_height = grid;
            t.width = t.padded_width = grid;
            t.channels = t.padded_channels = is_class ? kClasses : 4 * kBins;
            t.frame_stride = size_t(grid) * size_t(grid) * size_t(t.channels);  // dense frames
            t.zp = {0.0f};
            t.scale = {is_class ? kClassScale : kBoxScale};
            cfg.outputs.push_back(t);
        }
        hailo_decode::HeadSpec head;  // a DFL detection head: no task outputs, the defaults
        head.box_output = 2 * h;
        head.cls_output = 2 * h + 1;
        head.stride = kStrides[h];
        cfg.heads.push_back(head);
    }
    cfg.num_classes = kClasses;
    cfg.bins = kBins;
    hailo_decode::Settings& s = cfg.settings;
    s.score_threshold = {0.2f};
    s.iou_threshold = 0.7f;
    s.max_per_class = kMaxPerClass;
    s.image_height = s.image_width = kImage;
    return cfg;  // the rest as Settings' defaults: >= tests, multi-label, normalized yxyx
}

// One frame: the six output buffers in make_config()'s output order. Cells that predict nothing
// have distance 0 on every side and score 0 for every class.
inline std::vector<std::vector<uint8_t>> make_frame() {
    std::vector<std::vector<uint8_t>> out;
    for (int h = 0; h < kHeads; ++h) {
        const size_t grid = size_t(kImage / kStrides[h]);
        std::vector<uint8_t> box(grid * grid * 4 * kBins, 0), cls(grid * grid * kClasses, 0);
        for (size_t cell = 0; cell < grid * grid; ++cell)
            for (int side = 0; side < 4; ++side) box[cell * 4 * kBins + size_t(side * kBins)] = 255;
        out.push_back(std::move(box));
        out.push_back(std::move(cls));
    }
    for (const Cell& c : cells()) {
        const size_t grid = size_t(kImage / kStrides[c.head]);
        const size_t cell = size_t(c.row) * grid + size_t(c.col);
        std::vector<uint8_t>& box = out[size_t(2 * c.head)];
        std::vector<uint8_t>& cls = out[size_t(2 * c.head + 1)];
        for (int side = 0; side < 4; ++side) {
            uint8_t* bins = &box[cell * 4 * kBins + size_t(side * kBins)];
            bins[0] = 0;
            bins[c.distance[side]] = 255;
        }
        for (const Score& s : c.scores) cls[cell * kClasses + size_t(s.class_id)] = s.byte;
    }
    return out;
}

}  // namespace synthetic
