// hailofilter's tensors as the core's TensorSpecs: name, (H, W, C), element type and quantization.
// hailonet hands dense NHWC host buffers (the vstream's layout), one frame each.
#pragma once

#include <string>

#include "abi_line.hpp"
#include "hailo_decode/setup.hpp"
#include "hailo_decode/types.hpp"
#include "plugin_config.hpp"

namespace hailo_decode::tappas {

// The element type the buffer holds: output_format_type when the config gives one (hailonet's
// output-format-type), else the metadata's (AUTO meaning uint8, as HailoRT chooses for YOLO heads).
// Throws std::invalid_argument naming the tensor for a type the core cannot read.
DType buffer_dtype(const std::string& name, const TensorMeta& meta, OutputFormat format);

// The spec of one dense NHWC output (quantization from the metadata; unused for float32 data).
TensorSpec tensor_spec(const std::string& name, const TensorMeta& meta, OutputFormat format);

setup::OutputShape output_shape(const std::string& name, const TensorMeta& meta);

}  // namespace hailo_decode::tappas
