#include "gather.hpp"

#include <cstdint>

namespace hailo_decode {
namespace detail {
namespace {

template <typename T>
void gather_quantized(const TensorView& v, const T* frame, size_t cell, float* out) {
    const T* p = frame + cell;
    const float* zp = v.zp.data();
    const float* scale = v.scale.data();
    if (v.contiguous_channels) {
        for (int c = 0; c < v.channels; ++c) out[c] = dequantize(float(p[c]), zp[c], scale[c]);
    } else {
        for (int c = 0; c < v.channels; ++c)
            out[c] = dequantize(float(p[v.channel_offset[size_t(c)]]), zp[c], scale[c]);
    }
}

}  // namespace

void gather_cell(const TensorView& v, const void* frame, int row, int col, float* out) {
    const size_t cell = v.cell(row, col);
    switch (v.dtype) {
        case DType::U8: gather_quantized(v, static_cast<const uint8_t*>(frame), cell, out); break;
        case DType::U16: gather_quantized(v, static_cast<const uint16_t*>(frame), cell, out); break;
        case DType::F32: {
            const float* p = static_cast<const float*>(frame) + cell;
            for (int c = 0; c < v.channels; ++c) out[c] = p[v.channel_offset[size_t(c)]];
            break;
        }
    }
}

}  // namespace detail
}  // namespace hailo_decode
