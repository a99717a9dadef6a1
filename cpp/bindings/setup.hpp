// Setup bindings: the C++ core's settings, presets, checks, NMS JSON and pairing
// (hailo_decode/setup.hpp) for DecoderConfig. bind_setup: cpp/bindings/setup.cpp; bind_pairing:
// cpp/bindings/pairing.cpp.
#pragma once

#include <pybind11/pybind11.h>

namespace hailo_decode_bindings {

void bind_setup(pybind11::module_& m);
void bind_pairing(pybind11::module_& m);

}  // namespace hailo_decode_bindings
