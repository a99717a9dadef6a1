// Segmentation bindings: arrays in, checked once against each other (every window inside the
// grid, every window's logits inside the logit array), then the C++ rooms with the GIL released.
#include "masks.hpp"

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <pybind11/stl.h>

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
using U8 = py::array_t<uint8_t, py::array::c_style | py::array::forcecast>;

MaskGrid grid_of(const py::tuple& g) {
    if (g.size() != 4 && g.size() != 5)
        throw py::value_error("grid must be (proto_height, proto_width, image_height, image_width[, rule])");
    MaskGrid m{g[0].cast<int>(), g[1].cast<int>(), g[2].cast<int>(), g[3].cast<int>()};
    if (g.size() == 5) {  // MaskRule: 0 Ultralytics' process_mask, 1 YOLOv5's
        const int rule = g[4].cast<int>();
        if (rule != 0 && rule != 1) throw py::value_error("grid's mask rule must be 0 or 1, got " + std::to_string(rule));
        m.rule = MaskRule(rule);
    }
    if (m.proto_height <= 0 || m.proto_width <= 0 || m.image_height <= 0 || m.image_width <= 0)
        throw py::value_error("grid sizes must be positive");
    return m;
}

// Windows from the arrays, each checked against the grid and the logits, into a per-thread vector
// (grown once, then reused: no allocation per call once warm; valid until the thread's next call).
const std::vector<MaskWindow>& windows_of(const I32& win, const I64& offsets, size_t n_logits, const MaskGrid& g) {
    if (win.ndim() != 2 || win.shape(1) != 4 || offsets.ndim() != 1 || offsets.shape(0) != win.shape(0))
        throw py::value_error("windows must be (n, 4) and offsets (n,)");
    const size_t n = size_t(win.shape(0));
    thread_local std::vector<MaskWindow> out;
    out.assign(n, MaskWindow{});
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

// (sx, ox, sy, oy, height, width, up, top, left, src_h, src_w): MaskSampling's fields, the
// source checked against the grid upsampled by `up`.
MaskSampling sampling_of(const py::tuple& s, const MaskGrid& g) {
    if (s.size() != 11) throw py::value_error("sampling must be (sx, ox, sy, oy, height, width, up, top, left, src_h, src_w)");
    MaskSampling m;
    m.sx = s[0].cast<float>(); m.ox = s[1].cast<float>(); m.sy = s[2].cast<float>(); m.oy = s[3].cast<float>();
    m.height = s[4].cast<int>(); m.width = s[5].cast<int>();
    m.up = s[6].cast<int>(); m.top = s[7].cast<int>(); m.left = s[8].cast<int>();
    m.src_h = s[9].cast<int>(); m.src_w = s[10].cast<int>();
    if (m.height <= 0 || m.width <= 0 || m.height > (1 << 16) || m.width > (1 << 16))
        throw py::value_error("mask target size must be in [1, 65536] a side");
    if (m.up < 1 || m.up > 8) throw py::value_error("sampling's up must be in [1, 8], got " + std::to_string(m.up));
    const int64_t sh = int64_t(g.proto_height) * m.up, sw = int64_t(g.proto_width) * m.up;
    if (m.top < 0 || m.left < 0 || m.src_h < 0 || m.src_w < 0 || m.top + int64_t(m.src_h) > sh ||
        m.left + int64_t(m.src_w) > sw || (m.src_h == 0 && m.top >= sh) || (m.src_w == 0 && m.left >= sw))
        throw py::value_error("sampling's source lies outside the prototype grid upsampled " + std::to_string(m.up) + "x");
    return m;
}

py::tuple sampling_tuple(const MaskSampling& s) {
    return py::make_tuple(s.sx, s.ox, s.sy, s.oy, s.height, s.width, s.up, s.top, s.left, s.src_h, s.src_w);
}

// Python's repr of a shape tuple: (20, 160, 160), (5,).
std::string shape_repr(const py::array& a) {
    std::string r = "(";
    for (py::ssize_t i = 0; i < a.ndim(); ++i) r += (i ? ", " : "") + std::to_string(a.shape(i));
    return r + (a.ndim() == 1 ? ",)" : ")");
}

// `out_obj` checked as a mask buffer for n masks of s's size (a bool or uint8 ndarray (n, H, W),
// C-contiguous and writeable, checked here so that the Python caller need not), or a new
// numpy.zeros array of `dtype` when None (calloc'd: the pages outside the boxes are never touched).
py::array mask_buffer(py::object out_obj, size_t n, const MaskSampling& s, const char* dtype) {
    py::array out;
    if (out_obj.is_none()) {
        out = py::module_::import("numpy").attr("zeros")(
            py::make_tuple(py::ssize_t(n), py::ssize_t(s.height), py::ssize_t(s.width)), dtype);
        if (!(out.flags() & py::array::c_style)) throw py::value_error("numpy.zeros gave a non-contiguous array");
        return out;
    }
    const bool is_array = py::isinstance<py::array>(out_obj);
    if (is_array) out = py::reinterpret_borrow<py::array>(out_obj);
    const char kind = is_array ? out.dtype().kind() : 0;
    if (!is_array || !((kind == 'b' || kind == 'u') && out.dtype().itemsize() == 1) ||
        !(out.flags() & py::array::c_style) || !out.writeable())
        throw py::type_error("out must be a writeable, C-contiguous bool or uint8 ndarray, got " +
                             std::string(py::str(py::type::of(out_obj).attr("__name__"))) +
                             (is_array ? " " + std::string(py::str(out.dtype())) : std::string()));
    if (out.ndim() != 3 || size_t(out.shape(0)) != n || out.shape(1) != s.height || out.shape(2) != s.width)
        throw py::value_error("out must have shape (" + std::to_string(n) + ", " + std::to_string(s.height) + ", " +
                              std::to_string(s.width) + "), got " + shape_repr(out));
    return out;
}

// Masks (n, H, W) uint8 0/1 of every detection at the sampling's resolution, cropped with crops
// (n, 4) xyxy: into `out` when given (every byte written; returned as it is: an array_t<uint8_t>
// return would convert a bool out into a uint8 copy), else into a new numpy.zeros uint8 array.
py::array render(F32 logits, I32 win, I64 offsets, F32 crops, py::tuple grid, py::tuple sampling,
                  py::object out_obj, std::optional<std::pair<float, float>> crop_scale) {
    const MaskGrid g = grid_of(grid);
    const MaskSampling s = sampling_of(sampling, g);
    if (logits.ndim() != 1) throw py::value_error("logits must be 1-D");
    const std::vector<MaskWindow>& w = windows_of(win, offsets, size_t(logits.shape(0)), g);
    if (crops.ndim() != 2 || crops.shape(1) != 4 || size_t(crops.shape(0)) != w.size())
        throw py::value_error("crops must be (n, 4), one per window");
    const size_t n = w.size(), plane = size_t(s.height) * size_t(s.width);
    const bool zeroed = out_obj.is_none();
    py::array out = mask_buffer(out_obj, n, s, "uint8");
    uint8_t* dst = static_cast<uint8_t*>(out.mutable_data());
    const float* lg = logits.data();
    const float* cr = crops.data();
    {
        py::gil_scoped_release release;
        thread_local MaskScratch scratch;  // grown once per thread, then reused: no allocation per call
        for (size_t i = 0; i < n; ++i) {
            const float* c = cr + 4 * i;
            float scaled[4];
            if (crop_scale) {  // x1 y1 x2 y2 times (sx, sy) in float32: NumPy's crops * [sx, sy, sx, sy]
                scaled[0] = c[0] * crop_scale->first; scaled[1] = c[1] * crop_scale->second;
                scaled[2] = c[2] * crop_scale->first; scaled[3] = c[3] * crop_scale->second;
                c = scaled;
            }
            render_mask(lg + w[i].offset, w[i], g, s, c, 0, 0, s.height, s.width, dst + i * plane, size_t(s.width), scratch,
                        zeroed);
        }
    }
    return out;
}

// Detections.masks_at_proto in one call: the prototype-grid masks (n, ph, pw) of boxes (n, 4)
// xyxy input pixels, each scaled to the grid as Ultralytics does (times (pw / iw, ph / ih), the
// ratios rounded to float32, the products in float32), copied from the windows' sign bytes (the
// decoder's, one per logit), into `out` or a new bool array. A given `out` is zeroed in one pass
// first, then only the crops' rows are written: the crops are short rows (a box a quarter of its
// input size), and a memset per gap between two of them cost more.
py::array render_proto(U8 signs, I32 win, I64 offsets, F32 boxes, py::tuple grid, py::object out_obj) {
    const MaskGrid g = grid_of(grid);
    const MaskSampling s = sampling_to_proto(g);
    if (signs.ndim() != 1) throw py::value_error("signs must be 1-D");
    const std::vector<MaskWindow>& w = windows_of(win, offsets, size_t(signs.shape(0)), g);
    if (boxes.ndim() != 2 || boxes.shape(1) != 4 || size_t(boxes.shape(0)) != w.size())
        throw py::value_error("boxes must be (n, 4), one per window");
    const bool given = !out_obj.is_none();
    py::array out = mask_buffer(out_obj, w.size(), s, "bool");
    const size_t n = w.size(), plane = size_t(s.height) * size_t(s.width);
    uint8_t* dst = static_cast<uint8_t*>(out.mutable_data());
    const uint8_t* sg = signs.data();
    const float* bx = boxes.data();
    const float sx = float(double(g.proto_width) / double(g.image_width));
    const float sy = float(double(g.proto_height) / double(g.image_height));
    py::gil_scoped_release release;
    if (given && n) std::memset(dst, 0, n * plane);
    for (size_t i = 0; i < n; ++i) {
        const float* b = bx + 4 * i;
        const float crop[4] = {b[0] * sx, b[1] * sy, b[2] * sx, b[3] * sy};
        render_proto_mask(sg + w[i].offset, w[i], g, crop, dst + i * plane, size_t(s.width));
    }
    return out;
}

py::tuple packed(const ByteMaskPacked& r) { return py::make_tuple(r.detections, r.bytes, r.truncated); }

ByteMaskLayout layout_of(int layout) {
    const ByteMaskLayout l = ByteMaskLayout(layout);
    byte_mask_record_bytes(l);  // throws (ValueError) for an unknown layout
    return l;
}

py::tuple pack_logits(F32 boxes, F32 crops, F32 scores, I32 classes, I32 win, I64 offsets, F32 logits, py::tuple grid,
                      py::array out, int layout_code) {
    const ByteMaskLayout layout = layout_of(layout_code);
    check_detection_arrays(boxes, scores, classes);
    if (crops.ndim() != 2 || crops.shape(1) != 4 || crops.shape(0) != boxes.shape(0))
        throw py::value_error("crops must be (n, 4) xyxy input pixels, one per box");
    const MaskGrid g = grid_of(grid);
    if (logits.ndim() != 1) throw py::value_error("logits must be 1-D");
    const std::vector<MaskWindow>& w = windows_of(win, offsets, size_t(logits.shape(0)), g);
    if (w.size() != size_t(boxes.shape(0))) throw py::value_error("one mask window per detection");
    size_t size = 0;
    uint8_t* dst = writeable_output<uint8_t>(out, size, "uint8");
    ByteMaskPacked r;
    {
        py::gil_scoped_release release;
        r = pack_byte_mask(boxes.data(), crops.data(), scores.data(), classes.data(), w.size(), w.data(), logits.data(), g,
                           dst, size, layout);
    }
    return packed(r);
}

py::tuple pack_masks(F32 boxes, F32 scores, I32 classes, py::array_t<uint8_t, py::array::c_style | py::array::forcecast> masks,
                     py::array out, int layout_code) {
    const ByteMaskLayout layout = layout_of(layout_code);
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
                                      dst, size, layout);
    }
    return packed(r);
}

}  // namespace

py::tuple frame_masks(const Decoder& dec, size_t frame) {
    const Decoder::FrameMasks fm = dec.masks(frame);
    py::array_t<int32_t> win({py::ssize_t(fm.count), py::ssize_t(4)});
    py::array_t<int64_t> off{py::ssize_t(fm.count)};
    py::array_t<float> logits{py::ssize_t(fm.logit_count)};
    py::array_t<uint8_t> signs{py::ssize_t(fm.logit_count)};
    auto w = win.mutable_unchecked<2>();
    auto o = off.mutable_unchecked<1>();
    for (size_t i = 0; i < fm.count; ++i) {
        const MaskWindow& m = fm.windows[i];
        w(py::ssize_t(i), 0) = m.row0; w(py::ssize_t(i), 1) = m.col0; w(py::ssize_t(i), 2) = m.rows; w(py::ssize_t(i), 3) = m.cols;
        o(py::ssize_t(i)) = int64_t(m.offset);
    }
    if (fm.logit_count) {
        std::memcpy(logits.mutable_data(), fm.logits, fm.logit_count * sizeof(float));
        std::memcpy(signs.mutable_data(), fm.signs, fm.logit_count);
    }
    return py::make_tuple(win, off, logits, signs);
}

void bind_masks(py::module_& m) {
    m.def("render_masks", &render, py::arg("logits"), py::arg("windows"), py::arg("offsets"), py::arg("crops"),
          py::arg("grid"), py::arg("sampling"), py::arg("out") = py::none(), py::arg("crop_scale") = py::none(),
          "Masks (n, H, W) uint8 0/1 from window logits, at the sampling's resolution, cropped with crops (n, 4) xyxy, "
          "times crop_scale (sx, sy) in float32 when given (into out, a writeable C-contiguous bool or uint8 (n, H, W) "
          "ndarray, when given).");
    m.def("render_proto_masks", &render_proto, py::arg("signs"), py::arg("windows"), py::arg("offsets"),
          py::arg("boxes_xyxy"), py::arg("grid"), py::arg("out") = py::none(),
          "Masks (n, proto_h, proto_w) bool at the prototype grid from the windows' sign bytes (1 where the logit "
          "is > 0, laid out as the logits), each cropped to its box (n, 4) "
          "xyxy input pixels scaled to the grid in float32 (Ultralytics' process_mask(upsample=False)); into out, a "
          "writeable C-contiguous bool or uint8 ndarray of that shape, when given.");
    m.def("mask_sampling_input", [](py::tuple g) { return sampling_tuple(sampling_to_input(grid_of(g))); }, py::arg("grid"));
    m.def("mask_sampling_proto", [](py::tuple g) { return sampling_tuple(sampling_to_proto(grid_of(g))); }, py::arg("grid"));
    m.def("mask_sampling_native", [](py::tuple g, int h, int w) {
        if (h <= 0 || w <= 0 || h > (1 << 16) || w > (1 << 16))
            throw py::value_error("original size must be in [1, 65536] a side, got " + std::to_string(h) + " x " + std::to_string(w));
        return sampling_tuple(sampling_native(grid_of(g), h, w));
    }, py::arg("grid"), py::arg("height"), py::arg("width"),
          "Ultralytics' process_mask_native (retina_masks) sampling to an original (height, width) letterboxed into the input.");
    m.def("pack_byte_mask", &pack_logits, py::arg("boxes_yxyx"), py::arg("crops"), py::arg("scores"),
          py::arg("class_ids"), py::arg("windows"), py::arg("offsets"), py::arg("logits"), py::arg("grid"), py::arg("out"),
          py::arg("layout") = 0,
          "HAILO_NMS_WITH_BYTE_MASK (layout 0: 38-byte records, HailoRT < 5.2; 1: 46-byte, 5.2+) from window logits, each mask cropped with crops (n, 4) xyxy input pixels (the "
          "boxes the masks are cropped with); returns (detections, bytes, truncated).");
    m.def("pack_byte_mask_from_masks", &pack_masks, py::arg("boxes_yxyx"), py::arg("scores"), py::arg("class_ids"),
          py::arg("masks"), py::arg("out"), py::arg("layout") = 0,
          "HAILO_NMS_WITH_BYTE_MASK (layout 0: 38-byte records, HailoRT < 5.2; 1: 46-byte, 5.2+) from (n, H, W) masks; "
          "returns (detections, bytes, truncated).");
    m.def("byte_mask_frame_bytes", [](size_t max_total, size_t mask_budget, int layout) {
        return byte_mask_frame_bytes(max_total, mask_budget, layout_of(layout));
    }, py::arg("max_total"), py::arg("mask_budget"), py::arg("layout") = 0);
    m.attr("BYTE_MASK_RECORD_BYTES") = kByteMaskRecordBytes;
    m.attr("BYTE_MASK_RECORD_BYTES_52") = kByteMaskRecordBytes52;
}

}  // namespace hailo_decode_bindings
