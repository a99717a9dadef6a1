// The entry point of postprocess_filter.cpp's shared object (C linkage, as a plugin loader expects).
#pragma once

#include <cstddef>

extern "C" {
// Decodes one frame of the synthetic model's six outputs (tensors[i] holds elements[i] uint8
// values) into HailoRT's HAILO_NMS_BY_CLASS layout in `out` (out_floats float32 values). Returns
// the number of detections, or -1 after printing why to stderr. Calls must not overlap.
int synthetic_postprocess(const void* const* tensors, const size_t* elements, float* out, size_t out_floats);
}
