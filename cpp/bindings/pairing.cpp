// Pairing binding: setup::pair_outputs (cpp/src/setup/pairing*.cpp) for DecoderConfig, through
// python/hailo_decode/pairing.py. The model options pairing reads (task, bins, keypoint_dims, proto,
// proto_stride, image_size) arrive as the Options read_options checked (bindings/setup.cpp): their
// rules and messages are read_options', not repeated here. The heads arrive as Python dicts and are
// converted here: head numbers (stride, anchors) are checked as 64-bit values before they narrow to
// int (so 2**40 is refused by its value, not by an overflow). Refusals are ValueError
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
    static const std::vector<std::string> keys{"kind", "box", "cls", "mask", "kpt", "angle", "obj", "stride", "anchors",
                                               "box_anchors", "ssd"};
    for (const auto& kv : d) {
        const std::string k = py::str(kv.first);
        if (std::find(keys.begin(), keys.end(), k) == keys.end()) throw py::type_error("unknown head key " + repr_of(kv.first));
    }
    NamedHead h;
    const std::string kind = d.contains("kind") ? py::str(d["kind"]).cast<std::string>() : "dfl";
    if (kind == "yolov5") h.kind = HeadKind::YOLOV5;
    else if (kind == "yolox") h.kind = HeadKind::YOLOX;
    else if (kind == "ssd") h.kind = HeadKind::SSD;
    else if (kind != "dfl") throw py::value_error("head kind must be 'dfl', 'yolov5', 'yolox' or 'ssd', got " + repr_of(d["kind"]));
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
    if (d.contains("box_anchors"))  // SSD: floats, checked by pair_outputs
        for (const py::handle a : d["box_anchors"]) {
            const py::tuple wh = py::tuple(py::reinterpret_borrow<py::object>(a));
            if (wh.size() != 2) throw py::value_error("anchors must be (w, h) pairs, got " + repr_of(a));
            h.box_anchors.emplace_back(py::float_(wh[0]).cast<double>(), py::float_(wh[1]).cast<double>());
        }
    if (d.contains("ssd")) h.ssd = d["ssd"].cast<SsdCoding>();
    return h;
}

setup::Layout pair(const std::vector<std::tuple<std::string, int, int, int>>& outputs, const setup::Options& options,
                   const py::object& heads) {
    std::vector<setup::OutputShape> shapes;
    for (const auto& [name, h, w, c] : outputs) shapes.push_back({name, h, w, c});
    if (heads.is_none()) return setup::pair_outputs(shapes, options);
    std::vector<NamedHead> named;
    for (const py::handle h : heads) named.push_back(named_head(h));
    return setup::pair_outputs(shapes, options, &named);
}

}  // namespace

namespace hailo_decode_bindings {

void bind_pairing(py::module_& m) {
    // NamedHead, Layout and Options are registered by bind_setup, which runs first (module.cpp).
    m.def("pair_outputs", &pair, py::arg("outputs"), py::arg("options"), py::arg("heads") = py::none(),
          "Heads from outputs [(name, h, w, c), ...] with the model options read_options checked (task, bins, "
          "keypoint_dims, proto, proto_stride, image_size): paired by shape (heads None) or the heads given (dicts: "
          "kind, box, cls, mask, kpt, angle, obj, stride, anchors), checked, strides resolved (stride x grid = image "
          "size). ValueError names what is wrong.");
}

}  // namespace hailo_decode_bindings
