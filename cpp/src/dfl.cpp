#include "dfl.hpp"

#include <cmath>
#include <type_traits>

#include "kernels/kernels.hpp"

namespace hailo_decode {
namespace detail {
namespace {

// Local pointers: `values` could alias the vectors' storage as far as the compiler knows, which
// would make it reload them on every element.
template <typename T>
void load_cell(const TensorView& v, const T* frame, int row, int col, float* values) {
    const T* cell = frame + v.cell(row, col);
    const size_t* off = v.channel_offset.data();
    const int n = v.channels;
    if (v.dtype == DType::F32) {
        for (int c = 0; c < n; ++c) values[c] = float(cell[off[c]]);
        return;
    }
    const float* zp = v.zp.data();
    const float* scale = v.scale.data();
    if (v.contiguous_channels && v.per_tensor_quant) {  // the common case
        if constexpr (std::is_same<T, uint8_t>::value) {
            // A few values (YOLO26's one per side): the kernel's own scalar formula here, not an
            // indirect call that would only run its tail loop.
            if (n < 8)
                for (int c = 0; c < n; ++c) values[c] = (float(cell[c]) - zp[0]) * scale[0];
            else
                kernels::active().dequant_u8(cell, size_t(n), zp[0], scale[0], values);
        } else {
            for (int c = 0; c < n; ++c) values[c] = dequantize(float(cell[c]), zp[0], scale[0]);
        }
        return;
    }
    if (v.contiguous_channels) {
        for (int c = 0; c < n; ++c) values[c] = dequantize(float(cell[c]), zp[c], scale[c]);
        return;
    }
    for (int c = 0; c < n; ++c) values[c] = dequantize(float(cell[off[c]]), zp[c], scale[c]);
}

// Softmax then expectation, in HailoRT's order (normalize, then sum(i * p_i)). The maximum is
// subtracted before exp: mathematically the same softmax, and no overflow for large logits.
float expectation(const float* x, int bins, float* e) {
    float m = x[0];
    for (int i = 1; i < bins; ++i) m = x[i] > m ? x[i] : m;
    float sum = 0.0f;
    for (int i = 0; i < bins; ++i) {
        e[i] = std::exp(x[i] - m);
        sum += e[i];
    }
    float d = 0.0f;
    for (int i = 0; i < bins; ++i) d += float(i) * (e[i] / sum);
    return d;
}

}  // namespace

std::unique_ptr<kernels::ExpTable> make_dfl_exp_table(const TensorView& v, int bins) {
    // Past kDflTableMaxRange the exps relative to byte 255 would leave the normal floats; such
    // (unusually coarse) tensors take the float path, which subtracts each side's maximum.
    if (!(v.dtype == DType::U8 && bins == 16 && v.per_tensor_quant)) return nullptr;
    if (!(255.0f * v.scale[0] <= kernels::kDflTableMaxRange)) return nullptr;
    std::unique_ptr<kernels::ExpTable> t(new kernels::ExpTable);
    kernels::make_exp_table(v.scale[0], *t);  // scale > 0: checked with the tensor
    return t;
}

CellCentres make_cell_centres(int width, int height, int stride, const Settings& s) {
    const float w = s.normalized ? float(s.image_width) : 1.0f;
    const float h = s.normalized ? float(s.image_height) : 1.0f;
    const float st = float(stride);
    CellCentres c;
    for (int col = 0; col < width; ++col) c.x.push_back(((float(col) + 0.5f) * st) / w);
    for (int row = 0; row < height; ++row) c.y.push_back(((float(row) + 0.5f) * st) / h);
    return c;
}

void dfl_distances(const TensorView& v, const void* frame, int row, int col, int bins,
                   float* scratch, float d[4]) {
    switch (v.dtype) {
        case DType::U8: load_cell(v, static_cast<const uint8_t*>(frame), row, col, scratch); break;
        case DType::U16: load_cell(v, static_cast<const uint16_t*>(frame), row, col, scratch); break;
        case DType::F32: load_cell(v, static_cast<const float*>(frame), row, col, scratch); break;
    }
    if (bins == 16) {  // YOLOv8/YOLO11's reg_max: the SIMD kernel
        kernels::active().dfl16(scratch, d);
        return;
    }
    for (int side = 0; side < 4; ++side)
        d[side] = bins == 1 ? scratch[side] : expectation(scratch + side * bins, bins, scratch + 4 * bins);
}

}  // namespace detail
}  // namespace hailo_decode
