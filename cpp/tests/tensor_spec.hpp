// The C++ tests' TensorSpec maker: an output of (h, w, c) in the given order and type, stored
// padded to (hp, wp, cp), one frame a (hp * wp * cp)-element step.
#pragma once

#include <cstddef>

#include "hailo_decode/types.hpp"

inline hailo_decode::TensorSpec spec(const char* name, hailo_decode::DType t, hailo_decode::Order o, int h, int w,
                                     int c, int hp, int wp, int cp) {
    hailo_decode::TensorSpec s;
    s.name = name; s.dtype = t; s.order = o;
    s.height = h; s.width = w; s.channels = c;
    s.padded_height = hp; s.padded_width = wp; s.padded_channels = cp;
    s.frame_stride = size_t(hp) * wp * cp;
    return s;
}
