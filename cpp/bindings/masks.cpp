// Segmentation bindings: arrays in, checked once against each other (every window inside the
// grid, every window's logits inside the logit array), then the C++ rooms with the GIL released.
#include "masks.hpp"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "arrays.hpp"
#include "hailo_decode/masks.hpp"
#include "hailo_decode/pack_byte_mask.hpp"

namespace py = pybind11;
using namespace hailo_decode;

namespace hailo_decode_bindings {
namespace {

using F32 = py::array_t<float, py::array::c_style | py::array::forcecast>;
using I32 = py::array_t<int32_t, py::array::c_style | py::array::forcecast>;
using I64 = py::array_t<int64_t, py::array::c_style | py::array::forcecast>;

MaskGrid grid_of(const py::tuple& g) {
    if (g.size() != 4) throw py::value_error("grid must be (proto_height, proto_width, image_height, image_width)");
    MaskGrid m{g[0].cast<int>(), g[1].cast<int>(), g[2].cast<int>(), g[3].cast<int>()};
    if (m.proto_height <= 0 || m.proto_width <= 0 || m.image_height <= 0 || m.image_width <= 0)
        throw py::value_error("grid sizes must be positive");
    return m;
}

// Windows from the arrays, each checked against the grid and the logits.
std::vector<MaskWindow> windows_of(const I32& win, const I64& offsets, size_t n_logits, const MaskGrid& g) {
    if (win.ndim() != 2 || win.shape(1) != 4 || offsets.ndim() != 1 || offsets.shape(0) != win.shape(0))
        throw py::value_error("windows must be (n, 4) and offsets (n,)");
    const size_t n = size_t(win.shape(0));
    std::vector<MaskWindow> out(n);
    auto w = win.unchecked<2>();
    auto o = offsets.unchecked<1>();
    for (size_t i = 0; i < n; ++i) {
        MaskWindow& m = out[i];
        m.row0 = w(py::ssize_t(i), 0); m.col0 = w(py::ssize_t(i), 1); m.rows = w(py::ssize_t(i), 2); m.cols = w(py::ssize_t(i), 3);
        const int64_t off = o(py::ssize_t(i));
        const bool empty = m.rows == 0 || m.cols == 0;
        if (m.rows < 0 || m.cols < 0 || off < 0 ||
            (!empty && (m.row0 < 0 || m.col0 < 0 || int64_t(m.row0) + m.rows > g.proto_height ||
                        int64_t(m.col0) + m.cols > g.proto_width ||
                        uint64_t(off) + uint64_t(m.rows) * uint64_t(m.cols) > n_logits)))
            throw py::value_error("mask window " + std::to_string(i) + " lies outside the prototype grid or the logits");
        m.offset = uint64_t(off);
    }
    return out;
}

MaskSampling sampling_of(const py::tuple& s) {
    if (s.size() != 6) throw py::value_error("sampling must be (sx, ox, sy, oy, height, width)");
    MaskSampling m;
    m.sx = s[0].cast<float>(); m.ox = s[1].cast<float>(); m.sy = s[2].cast<float>(); m.oy = s[3].cast<float>();
    m.height = s[4].cast<int>(); m.width = s[5].cast<int>();
    if (m.height <= 0 || m.width <= 0 || m.height > (1 << 16) || m.width > (1 << 16))
        throw py::value_error("mask target size must be in [1, 65536] a side");
    return m;
}

py::tuple sampling_tuple(const MaskSampling& s) { return py::make_tuple(s.sx, s.ox, s.sy, s.oy, s.height, s.width); }

// Masks (n, H, W) uint8 0/1 of every detection at the sampling's resolution, cropped with crops (n, 4) xyxy.
py::array_t<uint8_t> render(F32 logits, I32 win, I64 offsets, F32 crops, py::tuple grid, py::tuple sampling) {
    const MaskGrid g = grid_of(grid);
    const MaskSampling s = sampling_of(sampling);
    if (logits.ndim() != 1) throw py::value_error("logits must be 1-D");
    const std::vector<MaskWindow> w = windows_of(win, offsets, size_t(logits.shape(0)), g);
    if (crops.ndim() != 2 || crops.shape(1) != 4 || size_t(crops.shape(0)) != w.size())
        throw py::value_error("crops must be (n, 4), one per window");
    const size_t n = w.size(), plane = size_t(s.height) * size_t(s.width);
    // numpy.zeros: calloc'd, so the pages outside the boxes are never touched (most of a plane).
    py::array_t<uint8_t> out = py::module_::import("numpy").attr("zeros")(
        py::make_tuple(py::ssize_t(n), py::ssize_t(s.height), py::ssize_t(s.width)), "uint8");
    if (!(out.flags() & py::array::c_style)) throw py::value_error("numpy.zeros gave a non-contiguous array");
    uint8_t* dst = out.mutable_data();
    const float* lg = logits.data();
    const float* cr = crops.data();
    {
        py::gil_scoped_release release;
        MaskScratch scratch;
        for (size_t i = 0; i < n; ++i)
            render_mask(lg + w[i].offset, w[i], g, s, cr + 4 * i, 0, 0, s.height, s.width, dst + i * plane,
                        size_t(s.width), scratch, true);
    }
    return out;
}

py::tuple packed(const ByteMaskPacked& r) { return py::make_tuple(r.detections, r.bytes, r.truncated); }

py::tuple pack_logits(F32 boxes, F32 crops, F32 scores, I32 classes, I32 win, I64 offsets, F32 logits, py::tuple grid,
                      py::array out) {
    check_detection_arrays(boxes, scores, classes);
    if (crops.ndim() != 2 || crops.shape(1) != 4 || crops.shape(0) != boxes.shape(0))
        throw py::value_error("crops must be (n, 4) xyxy input pixels, one per box");
    const MaskGrid g = grid_of(grid);
    if (logits.ndim() != 1) throw py::value_error("logits must be 1-D");
    const std::vector<MaskWindow> w = windows_of(win, offsets, size_t(logits.shape(0)), g);
    if (w.size() != size_t(boxes.shape(0))) throw py::value_error("one mask window per detection");
    size_t size = 0;
    uint8_t* dst = writeable_output<uint8_t>(out, size, "uint8");
    ByteMaskPacked r;
    {
        py::gil_scoped_release release;
        r = pack_byte_mask(boxes.data(), crops.data(), scores.data(), classes.data(), w.size(), w.data(), logits.data(), g,
                           dst, size);
    }
    return packed(r);
}

py::tuple pack_masks(F32 boxes, F32 scores, I32 classes, py::array_t<uint8_t, py::array::c_style | py::array::forcecast> masks,
                     py::array out) {
    check_detection_arrays(boxes, scores, classes);
    if (masks.ndim() != 3 || masks.shape(0) != boxes.shape(0))
        throw py::value_error("masks must be (n, H, W), one per detection");
    size_t size = 0;
    uint8_t* dst = writeable_output<uint8_t>(out, size, "uint8");
    ByteMaskPacked r;
    const int H = int(masks.shape(1)), W = int(masks.shape(2));
    {
        py::gil_scoped_release release;
        r = pack_byte_mask_from_masks(boxes.data(), scores.data(), classes.data(), size_t(boxes.shape(0)), masks.data(), H, W,
                                      dst, size);
    }
    return packed(r);
}

}  // namespace

py::tuple frame_masks(const Decoder& dec, size_t frame) {
    const Decoder::FrameMasks fm = dec.masks(frame);
    py::array_t<int32_t> win({py::ssize_t(fm.count), py::ssize_t(4)});
    py::array_t<int64_t> off{py::ssize_t(fm.count)};
    py::array_t<float> logits{py::ssize_t(fm.logit_count)};
    auto w = win.mutable_unchecked<2>();
    auto o = off.mutable_unchecked<1>();
    for (size_t i = 0; i < fm.count; ++i) {
        const MaskWindow& m = fm.windows[i];
        w(py::ssize_t(i), 0) = m.row0; w(py::ssize_t(i), 1) = m.col0; w(py::ssize_t(i), 2) = m.rows; w(py::ssize_t(i), 3) = m.cols;
        o(py::ssize_t(i)) = int64_t(m.offset);
    }
    if (fm.logit_count) std::memcpy(logits.mutable_data(), fm.logits, fm.logit_count * sizeof(float));
    return py::make_tuple(win, off, logits);
}

void bind_masks(py::module_& m) {
    m.def("render_masks", &render, py::arg("logits"), py::arg("windows"), py::arg("offsets"), py::arg("crops"),
          py::arg("grid"), py::arg("sampling"),
          "Masks (n, H, W) uint8 0/1 from window logits, at the sampling's resolution, cropped with crops (n, 4) xyxy.");
    m.def("mask_sampling_input", [](py::tuple g) { return sampling_tuple(sampling_to_input(grid_of(g))); }, py::arg("grid"));
    m.def("mask_sampling_proto", [](py::tuple g) { return sampling_tuple(sampling_to_proto(grid_of(g))); }, py::arg("grid"));
    m.def("mask_sampling_original", [](py::tuple g, int h, int w, float gain, float px, float py_) {
        return sampling_tuple(sampling_to_original(grid_of(g), h, w, gain, px, py_));
    }, py::arg("grid"), py::arg("height"), py::arg("width"), py::arg("gain"), py::arg("pad_x"), py::arg("pad_y"));
    m.def("pack_byte_mask", &pack_logits, py::arg("boxes_yxyx"), py::arg("crops"), py::arg("scores"),
          py::arg("class_ids"), py::arg("windows"), py::arg("offsets"), py::arg("logits"), py::arg("grid"), py::arg("out"),
          "HAILO_NMS_WITH_BYTE_MASK from window logits, each mask cropped with crops (n, 4) xyxy input pixels (the "
          "boxes the masks are cropped with); returns (detections, bytes, truncated).");
    m.def("pack_byte_mask_from_masks", &pack_masks, py::arg("boxes_yxyx"), py::arg("scores"), py::arg("class_ids"),
          py::arg("masks"), py::arg("out"), "HAILO_NMS_WITH_BYTE_MASK from (n, H, W) masks; returns (detections, bytes, truncated).");
    m.def("byte_mask_frame_bytes", &byte_mask_frame_bytes, py::arg("max_total"), py::arg("mask_budget"));
    m.attr("BYTE_MASK_RECORD_BYTES") = kByteMaskRecordBytes;
}

}  // namespace hailo_decode_bindings
