// Distribution focal loss decoding for one cell, and the box it gives.
#pragma once

#include <memory>
#include <vector>

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

// Centres of a head's cells as HailoRT's decode computes them, (col + 0.5) * stride / W_img and
// (row + 0.5) * stride / H_img (divided by 1 in pixels, which is exact): one per column and row,
// computed once per head rather than divided again for every cell.
struct CellCentres {
    std::vector<float> x, y;  // per column, per row
};
CellCentres make_cell_centres(int width, int height, int stride, const Settings& s);

// Box corners as HailoRT's decode computes them from the cell's centre, divided by the input size
// when normalized and written in the order the settings ask for. (Inline: it runs once per cell,
// next to the DFL.)
inline void make_box(const float d[4], float xc, float yc, int stride, const Settings& s, float out[4]) {
    // Same operations, in the same order, as HailoRT's YOLOV8PostProcessOp::decode. The four
    // divisions run as one 4-lane one (GCC vector extension: SSE or NEON, each lane the same IEEE
    // division as the scalar one).
    typedef float f4 __attribute__((vector_size(16)));
    const float w = s.normalized ? float(s.image_width) : 1.0f;
    const float h = s.normalized ? float(s.image_height) : 1.0f;
    const float st = float(stride);
    const f4 scaled = f4{d[0] * st, d[1] * st, d[2] * st, d[3] * st};
    // In pixels the divisor is 1, and x / 1 is x: the division (a long-latency instruction that
    // every box waited on) only when normalized.
    const f4 dist = s.normalized ? scaled / f4{w, h, w, h} : scaled;
    const float x_min = xc - dist[0];
    const float y_min = yc - dist[1];
    const float x_max = xc + dist[2];
    const float y_max = yc + dist[3];
    if (s.yxyx) {
        out[0] = y_min; out[1] = x_min; out[2] = y_max; out[3] = x_max;
    } else {
        out[0] = x_min; out[1] = y_min; out[2] = x_max; out[3] = y_max;
    }
}

}  // namespace detail
}  // namespace hailo_decode
