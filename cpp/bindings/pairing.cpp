// Pairing binding: setup::pair_outputs (cpp/src/setup/pairing*.cpp) for DecoderConfig, through
// python/hailo_decode/pairing.py. Python's values arrive as Python objects and are converted here:
// None becomes Options' "not given" (0 or ""), numbers are checked as 64-bit values before they
// narrow to int (so 2**40 is refused by its value, not by an overflow). Refusals are ValueError
// (std::invalid_argument), values of the wrong type TypeError.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>
#include <vector>

#include "../src/setup/pairing_detail.hpp"
#include "hailo_decode/setup.hpp"
#include "setup.hpp"

namespace py = pybind11;
using namespace hailo_decode;
using setup::NamedHead;

namespace {

// int(value) as Python computes it, saturated to int64 (beyond it, every range here is left).
int64_t to_int64(py::handle value) {
    const py::int_ i(py::reinterpret_borrow<py::object>(value));
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
    if (overflow) return overflow > 0 ? INT64_MAX : INT64_MIN;
    return v;
}

// A value already checked, or one a later check refuses by its (saturated) value.
int to_int(int64_t v) { return int(std::clamp<int64_t>(v, INT_MIN, INT_MAX)); }

std::string repr_of(py::handle value) { return py::repr(value).cast<std::string>(); }

// A model option that Options holds as a positive int with 0 for None: an explicit 0 would read
// as "not given", so only None may mean that.
int positive_or_none(const py::object& value, const char* what) {
    if (value.is_none()) return 0;
    const int64_t v = to_int64(value);
    if (v < 1) throw py::value_error(std::string(what) + " must be None or a positive integer, got " + repr_of(value));
    return to_int(v);
}

std::string output_name(const py::dict& d, const char* role) {
    if (!d.contains(role) || d[role].is_none()) return "";
    const py::object v = d[role];
    if (!py::isinstance<py::str>(v)) throw py::type_error(std::string("head ") + role + " output must be a str, got " + repr_of(v));
    return v.cast<std::string>();
}

// {"kind": "dfl" | "yolov5" | "yolox", "box", "cls", "mask", "kpt", "angle", "obj": str or None,
//  "stride": int or None, "anchors": [(w, h), ...]}
NamedHead named_head(py::handle item) {
    if (!py::isinstance<py::dict>(item)) throw py::type_error("heads must be dicts, got " + repr_of(item));
    const py::dict d = py::reinterpret_borrow<py::dict>(item);
    static const std::vector<std::string> keys{"kind", "box", "cls", "mask", "kpt", "angle", "obj", "stride", "anchors"};
    for (const auto& kv : d) {
        const std::string k = py::str(kv.first);
        if (std::find(keys.begin(), keys.end(), k) == keys.end()) throw py::type_error("unknown head key " + repr_of(kv.first));
    }
    NamedHead h;
    const std::string kind = d.contains("kind") ? py::str(d["kind"]).cast<std::string>() : "dfl";
    if (kind == "yolov5") h.kind = HeadKind::YOLOV5;
    else if (kind == "yolox") h.kind = HeadKind::YOLOX;
    else if (kind != "dfl") throw py::value_error("head kind must be 'dfl', 'yolov5' or 'yolox', got " + repr_of(d["kind"]));
    h.box = output_name(d, "box");
    h.cls = output_name(d, "cls");
    h.mask = output_name(d, "mask");
    h.kpt = output_name(d, "kpt");
    h.angle = output_name(d, "angle");
    h.obj = output_name(d, "obj");
    if (d.contains("stride") && !d["stride"].is_none()) {
        const int64_t stride = to_int64(d["stride"]);
        setup::detail::check_stride(h, stride);
        h.stride = int(stride);
    }
    if (d.contains("anchors"))
        for (const py::handle a : d["anchors"]) {
            const py::tuple wh = py::tuple(py::reinterpret_borrow<py::object>(a));
            if (wh.size() != 2) throw py::value_error("anchors must be (w, h) pairs, got " + repr_of(a));
            h.anchors.emplace_back(to_int(to_int64(wh[0])), to_int(to_int64(wh[1])));
        }
    return h;
}

// (height, width) as Python's int() reads each, or (0, 0) for None.
void read_image_size(const py::object& value, setup::Options& options) {
    if (value.is_none()) return;
    std::vector<int64_t> sides;
    try {
        for (const py::handle v : value) sides.push_back(to_int64(v));
    } catch (const py::error_already_set&) {
        sides.clear();
    }
    if (sides.size() != 2) throw py::value_error("image_size must be (height, width), got " + repr_of(value));
    setup::detail::check_image_size(sides[0], sides[1]);
    options.image_height = int(sides[0]);
    options.image_width = int(sides[1]);
}

setup::Layout pair(const std::vector<std::tuple<std::string, int, int, int>>& outputs, const py::object& heads,
                   const py::object& task, const py::object& bins, const py::object& keypoint_dims, const py::object& proto,
                   const py::object& proto_stride, const py::object& image_size) {
    std::vector<setup::OutputShape> shapes;
    for (const auto& [name, h, w, c] : outputs) shapes.push_back({name, h, w, c});
    setup::Options options;  // the model options pairing reads; read_options fills the rest elsewhere
    if (!task.is_none()) options.task = py::str(task);
    options.bins = positive_or_none(bins, "bins");
    options.keypoint_dims = keypoint_dims.is_none() ? 0 : to_int(to_int64(keypoint_dims));
    if (!proto.is_none()) options.proto = py::str(proto);
    options.proto_stride = positive_or_none(proto_stride, "proto_stride");
    read_image_size(image_size, options);
    if (heads.is_none()) return setup::pair_outputs(shapes, options);
    std::vector<NamedHead> named;
    for (const py::handle h : heads) named.push_back(named_head(h));
    return setup::pair_outputs(shapes, options, &named);
}

}  // namespace

namespace hailo_decode_bindings {

void bind_pairing(py::module_& m) {
    // NamedHead and Layout may be bound by bind_setup too (NMS JSON heads, make_config's layout):
    // one registration serves both.
    if (!py::detail::get_type_info(typeid(NamedHead)))
        py::class_<NamedHead>(m, "NamedHead")
            .def(py::init<>())
            .def_readwrite("kind", &NamedHead::kind)
            .def_readwrite("box", &NamedHead::box)
            .def_readwrite("cls", &NamedHead::cls)
            .def_readwrite("mask", &NamedHead::mask)
            .def_readwrite("kpt", &NamedHead::kpt)
            .def_readwrite("angle", &NamedHead::angle)
            .def_readwrite("obj", &NamedHead::obj)
            .def_readwrite("stride", &NamedHead::stride)
            .def_readwrite("anchors", &NamedHead::anchors);
    if (!py::detail::get_type_info(typeid(setup::Layout)))
        py::class_<setup::Layout>(m, "Layout")
            .def_readonly("kind", &setup::Layout::kind)
            .def_readonly("heads", &setup::Layout::heads)
            .def_readonly("image_height", &setup::Layout::image_height)
            .def_readonly("image_width", &setup::Layout::image_width)
            .def_readonly("task", &setup::Layout::task)
            .def_readonly("num_classes", &setup::Layout::num_classes)
            .def_readonly("bins", &setup::Layout::bins)
            .def_readonly("num_keypoints", &setup::Layout::num_keypoints)
            .def_readonly("keypoint_dims", &setup::Layout::keypoint_dims)
            .def_readonly("proto", &setup::Layout::proto);
    m.def("pair_outputs", &pair, py::arg("outputs"), py::arg("heads") = py::none(), py::arg("task") = py::none(),
          py::arg("bins") = py::none(), py::arg("keypoint_dims") = py::none(), py::arg("proto") = py::none(),
          py::arg("proto_stride") = py::none(), py::arg("image_size") = py::none(),
          "Heads from outputs [(name, h, w, c), ...]: paired by shape (heads None) or the heads given (dicts: kind, "
          "box, cls, mask, kpt, angle, obj, stride, anchors), checked, strides resolved (stride x grid = image size). "
          "ValueError names what is wrong.");
}

}  // namespace hailo_decode_bindings
