// Segmentation bindings (cpp/bindings/masks.cpp): mask rendering and HAILO_NMS_WITH_BYTE_MASK.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "hailo_decode/decoder.hpp"

namespace hailo_decode_bindings {

void bind_masks(pybind11::module_& m);

// One frame's masks as arrays owned by Python: windows (n, 4) int32 [row0, col0, rows, cols],
// offsets (n,) int64 into logits, logits (m,) float32 and their signs (m,) uint8 (logit > 0)
// (copies: the decoder's lists are reused).
pybind11::tuple frame_masks(const hailo_decode::Decoder& dec, size_t frame);

}  // namespace hailo_decode_bindings
