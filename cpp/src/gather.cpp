#include "gather.hpp"

#include <cstdint>

#include "score_threshold.hpp"

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

void decode_keypoints(const TensorView& v, const void* frame, int row, int col, int stride, const KeypointLayout& k,
                      const float* visibility_lut, float* scratch, float* out) {
    gather_cell(v, frame, row, col, scratch);
    const uint8_t* codes = visibility_lut ? static_cast<const uint8_t*>(frame) + v.cell(row, col) : nullptr;
    const float st = float(stride);
    const bool yolo26 = k.decode == KeypointDecode::YOLO26;
    // Pose26 adds the anchor (cell + 0.5) to the raw value; Pose adds the cell to twice it.
    const float gx = yolo26 ? float(col) + 0.5f : float(col), gy = yolo26 ? float(row) + 0.5f : float(row);
    const float gain = yolo26 ? 1.0f : 2.0f;  // raw * 1 is raw: the same float either way
    for (int i = 0; i < k.count; ++i) {
        const float* raw = scratch + size_t(i) * size_t(k.dims);
        float x = (raw[0] * gain + gx) * st;
        float y = (raw[1] * gain + gy) * st;
        if (k.normalized) {
            x = x / k.image_width;
            y = y / k.image_height;
        }
        out[3 * i] = x;
        out[3 * i + 1] = y;
        if (k.dims != 3)
            out[3 * i + 2] = 1.0f;
        else if (codes)
            out[3 * i + 2] = visibility_lut[codes[v.channel_offset[size_t(3 * i + 2)]]];
        else
            out[3 * i + 2] = sigmoid(raw[2]);
    }
}

}  // namespace detail
}  // namespace hailo_decode
