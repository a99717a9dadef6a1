// Distribution focal loss decoding for one cell, and the box it gives.
#pragma once

#include <memory>

#include "hailo_decode/types.hpp"
#include "kernels/kernels.hpp"
#include "tensor_view.hpp"

namespace hailo_decode {
namespace detail {

// The exp table kernels::dfl16_u8 takes, for the box tensors it applies to (uint8, 16 bins, one
// zero point and scale, any layout: the same values give the same boxes in every layout); null for
// every other tensor.
std::unique_ptr<kernels::ExpTable> make_dfl_exp_table(const TensorView& box, int bins);

// The four distances (left, top, right, bottom), in strides, of the cell (row, col) of one frame
// of the box tensor: softmax over `bins` values per side and its expectation sum(i * p_i); with
// bins == 1 the dequantized values are the distances. `scratch` holds at least 5 * bins floats.
// (Tensors with an exp table take kernels::dfl16_u8 instead: the same softmax, by look-up.)
void dfl_distances(const TensorView& box, const void* frame, int row, int col, int bins, float* scratch,
                   float distances[4]);

// Box corners as HailoRT's decode computes them, divided by the input size when normalized and
// written in the order the settings ask for.
void make_box(const float distances[4], int row, int col, int stride, const Settings& s, float out[4]);

}  // namespace detail
}  // namespace hailo_decode
