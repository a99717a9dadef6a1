#include "tensor_specs.hpp"

#include <stdexcept>

namespace hailo_decode::tappas {

DType buffer_dtype(const std::string& name, const TensorMeta& meta, OutputFormat format) {
    switch (format) {
        case OutputFormat::U8: return DType::U8;
        case OutputFormat::U16: return DType::U16;
        case OutputFormat::F32: return DType::F32;
        case OutputFormat::Auto: break;
    }
    switch (meta.type) {
        case ElementType::Auto:
        case ElementType::U8: return DType::U8;
        case ElementType::U16: return DType::U16;
        case ElementType::F32: return DType::F32;
        case ElementType::Other: break;
    }
    throw std::invalid_argument("output " + name + ": its metadata names an element type that is not UINT8, UINT16 or FLOAT32");
}

TensorSpec tensor_spec(const std::string& name, const TensorMeta& meta, OutputFormat format) {
    TensorSpec s;
    s.name = name;
    s.dtype = buffer_dtype(name, meta, format);
    s.order = Order::NHWC;
    s.height = s.padded_height = int(meta.height);
    s.width = s.padded_width = int(meta.width);
    s.channels = s.padded_channels = int(meta.features);
    s.frame_stride = size_t(meta.height) * size_t(meta.width) * size_t(meta.features);
    if (s.dtype != DType::F32) {
        s.zp.assign(1, meta.zp);
        s.scale.assign(1, meta.scale);
    }
    return s;
}

setup::OutputShape output_shape(const std::string& name, const TensorMeta& meta) {
    setup::OutputShape o;
    o.name = name;
    o.height = int(meta.height);
    o.width = int(meta.width);
    o.channels = int(meta.features);
    return o;
}

}  // namespace hailo_decode::tappas
