#include "tensor_view.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace hailo_decode {
namespace detail {
namespace {

[[noreturn]] void fail(const TensorSpec& s, const std::string& what) {
    throw std::invalid_argument("output '" + s.name + "': " + what);
}

std::vector<float> per_channel(const TensorSpec& s, const std::vector<float>& values, const char* what) {
    if (values.size() != 1 && values.size() != size_t(s.channels))
        fail(s, std::string(what) + " must have 1 or " + std::to_string(s.channels) + " values, got " +
                    std::to_string(values.size()));
    std::vector<float> out(size_t(s.channels));
    for (int c = 0; c < s.channels; ++c) out[size_t(c)] = values.size() == 1 ? values[0] : values[size_t(c)];
    return out;
}

}  // namespace

TensorView make_tensor_view(const TensorSpec& s) {
    constexpr int kMaxDim = 1 << 15;
    if (s.height <= 0 || s.width <= 0 || s.channels <= 0 || s.height > kMaxDim || s.width > kMaxDim ||
        s.channels > kMaxDim)
        fail(s, "shape (" + std::to_string(s.height) + ", " + std::to_string(s.width) + ", " +
                    std::to_string(s.channels) + ") must be positive and at most " + std::to_string(kMaxDim));
    if (s.padded_height < s.height || s.padded_width < s.width || s.padded_channels < s.channels ||
        s.padded_height > kMaxDim || s.padded_width > kMaxDim || s.padded_channels > kMaxDim)
        fail(s, "padded shape (" + std::to_string(s.padded_height) + ", " + std::to_string(s.padded_width) +
                    ", " + std::to_string(s.padded_channels) + ") must be at least the shape (" +
                    std::to_string(s.height) + ", " + std::to_string(s.width) + ", " +
                    std::to_string(s.channels) + ")");
    if (s.order == Order::F8CR && s.padded_channels % 8 != 0)
        fail(s, "F8CR needs padded channels that are a multiple of 8, got " + std::to_string(s.padded_channels));

    TensorView v;
    v.spec = &s;
    v.dtype = s.dtype;
    v.height = s.height;
    v.width = s.width;
    v.channels = s.channels;
    const size_t hp = size_t(s.padded_height), wp = size_t(s.padded_width), cp = size_t(s.padded_channels);
    v.channel_offset.resize(size_t(s.channels));
    switch (s.order) {
        case Order::NHWC:
            v.row_stride = wp * cp;
            v.col_stride = cp;
            for (size_t c = 0; c < v.channel_offset.size(); ++c) v.channel_offset[c] = c;
            break;
        case Order::NHCW:
            v.row_stride = wp * cp;
            v.col_stride = 1;
            for (size_t c = 0; c < v.channel_offset.size(); ++c) v.channel_offset[c] = c * wp;
            break;
        case Order::F8CR:
            v.row_stride = wp * cp;
            v.col_stride = 8;
            for (size_t c = 0; c < v.channel_offset.size(); ++c) v.channel_offset[c] = (c - c % 8) * wp + c % 8;
            break;
        case Order::NCHW:
            v.row_stride = wp;
            v.col_stride = 1;
            for (size_t c = 0; c < v.channel_offset.size(); ++c) v.channel_offset[c] = c * hp * wp;
            break;
        default:
            fail(s, "unknown order code " + std::to_string(int(s.order)));
    }
    v.contiguous_channels = s.order == Order::NHWC;
    size_t last = v.cell(s.height - 1, s.width - 1);
    size_t max_channel = 0;
    for (size_t off : v.channel_offset) max_channel = off > max_channel ? off : max_channel;
    v.frame_elements = last + max_channel + 1;
    // Row-contiguous orders are scanned a whole (padded) row at a time: a frame must hold them all.
    if (s.order != Order::NCHW) v.frame_elements = std::max(v.frame_elements, size_t(s.height) * v.row_stride);
    if (s.frame_stride < v.frame_elements)
        fail(s, "frame stride " + std::to_string(s.frame_stride) + " is smaller than one frame (" +
                    std::to_string(v.frame_elements) + " elements)");
    v.frame_stride = s.frame_stride;

    // The scan plan holds a few bytes per position of a padded row: keep that bounded.
    constexpr size_t kMaxRow = size_t(1) << 22;
    if (s.order != Order::NCHW && v.row_stride > kMaxRow)
        fail(s, "a padded row holds " + std::to_string(v.row_stride) + " elements, more than " + std::to_string(kMaxRow));
    if (s.dtype != DType::F32) {
        v.zp = per_channel(s, s.zp, "zero points");
        v.scale = per_channel(s, s.scale, "scales");
        const float qmax = s.dtype == DType::U8 ? 255.0f : 65535.0f;
        for (int c = 0; c < s.channels; ++c) {
            const float zp = v.zp[size_t(c)], sc = v.scale[size_t(c)];
            if (!std::isfinite(zp))
                fail(s, "zero point of channel " + std::to_string(c) + " must be finite, got " + std::to_string(zp));
            if (!(std::isfinite(sc) && sc > 0.0f))
                fail(s, "scale of channel " + std::to_string(c) + " must be finite and > 0, got " + std::to_string(sc));
            // Every quantized value must dequantize to a finite float32.
            if (!std::isfinite(dequantize(0.0f, zp, sc)) || !std::isfinite(dequantize(qmax, zp, sc)))
                fail(s, "zero point " + std::to_string(zp) + " and scale " + std::to_string(sc) + " of channel " +
                            std::to_string(c) + " dequantize to non-finite float32 values");
        }
    }
    v.per_tensor_quant = s.dtype != DType::F32 && s.zp.size() == 1 && s.scale.size() == 1;
    return v;
}

}  // namespace detail
}  // namespace hailo_decode
