// The gather room: per-cell task outputs (keypoints, mask coefficients, angles) read for the few
// cells that matter (kept detections, or candidates), never for a whole tensor.
#pragma once

#include "tensor_view.hpp"

namespace hailo_decode {
namespace detail {

// The `v.channels` values of cell (row, col) of one frame of `v`, dequantized to float32 as
// tensor_view does elsewhere ((q - zp[c]) * scale[c]; float inputs as they are). `frame` points
// at the frame's first element; row and col must be inside the view's grid (callers take them from
// cells of the same grid, checked once when the decoder is built).
void gather_cell(const TensorView& v, const void* frame, int row, int col, float* out);

// The K keypoints of one kept detection, from its cell (row, col) of a pose head's keypoint tensor
// (K * dims channels, interleaved x, y[, visibility] as Ultralytics' cv4 conv emits them), as
// Ultralytics' kpts_decode computes them in float32 (k.decode picks the head class):
//   Pose:   x = (raw_x * 2 + (anchor_x - 0.5)) * stride, anchor_x = col + 0.5, so (raw_x * 2 + col) * stride
//   Pose26: x = (raw_x + anchor_x) * stride
//   (row for y), visibility = sigmoid(raw_v); 1.0 when the model has none (dims == 2).
// Written as K x (x, y, visibility); x, y divided by the input width and height when normalized.
// `scratch` holds at least K * dims floats. visibility_lut: null, or (uint8 with one zero point
// and scale) the visibility of each of the 256 codes, sigmoid(dequantize(q)), used instead of exp.
struct KeypointLayout {
    int count = 0, dims = 3;
    KeypointDecode decode = KeypointDecode::YOLOV8;
    bool normalized = false;
    float image_width = 1.0f, image_height = 1.0f;
};
void decode_keypoints(const TensorView& v, const void* frame, int row, int col, int stride, const KeypointLayout& k,
                      const float* visibility_lut, float* scratch, float* out);

}  // namespace detail
}  // namespace hailo_decode
