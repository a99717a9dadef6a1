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

}  // namespace detail
}  // namespace hailo_decode
