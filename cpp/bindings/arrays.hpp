// Checks the bindings share on the arrays Python hands to the pack calls: one frame's detections
// as (n, 4) boxes with (n,) scores and class ids, and a writeable C-contiguous output buffer.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstddef>
#include <string>

namespace hailo_decode_bindings {

template <typename B, typename S, typename C>
void check_detection_arrays(const B& boxes, const S& scores, const C& class_ids) {
    if (boxes.ndim() != 2 || boxes.shape(1) != 4 || scores.ndim() != 1 || class_ids.ndim() != 1 ||
        scores.shape(0) != boxes.shape(0) || class_ids.shape(0) != boxes.shape(0))
        throw pybind11::value_error("boxes must be (n, 4) and scores, class_ids (n,)");
}

// The output's first element and its element count; TypeError naming the wanted dtype otherwise.
template <typename T>
T* writeable_output(pybind11::array& out, size_t& count, const char* dtype_name) {
    const pybind11::dtype want = pybind11::dtype::of<T>();
    if (out.dtype().kind() != want.kind() || out.dtype().itemsize() != want.itemsize() ||
        !(out.flags() & pybind11::array::c_style) || !out.writeable())
        throw pybind11::type_error(std::string("out must be a writeable, C-contiguous ") + dtype_name + " array");
    count = size_t(out.size());
    return static_cast<T*>(out.mutable_data());
}

}  // namespace hailo_decode_bindings
