// Setup bindings: the core's named settings, presets, checks, NMS JSON reading and Config making
// (hailo_decode/setup.hpp), for DecoderConfig. Python hands its values over as they are (dicts,
// numbers, numpy scalars: json_value.hpp), so the plugin's JSON and Python meet the same checks and
// messages. setup::type_error (a value of the wrong kind, an unknown key) is Python's TypeError,
// every other std::invalid_argument ValueError.
//
// The types pair_outputs shares (OutputShape, NamedHead, Layout) are registered here, once:
// bind_setup runs before bind_pairing.
#include "setup.hpp"

#include <pybind11/stl.h>

#include <optional>

#include "hailo_decode/setup.hpp"
#include "json_value.hpp"

namespace py = pybind11;
using namespace hailo_decode;

namespace hailo_decode_bindings {

void bind_setup(py::module_& m) {
    py::register_local_exception_translator([](std::exception_ptr p) {
        try {
            if (p) std::rethrow_exception(p);
        } catch (const setup::type_error& e) {
            PyErr_SetString(PyExc_TypeError, e.what());
        }
    });

    py::class_<setup::OutputShape>(m, "OutputShape")
        .def(py::init([](std::string name, int height, int width, int channels) {
                 return setup::OutputShape{std::move(name), height, width, channels};
             }),
             py::arg("name"), py::arg("height"), py::arg("width"), py::arg("channels"))
        .def_readwrite("name", &setup::OutputShape::name)
        .def_readwrite("height", &setup::OutputShape::height)
        .def_readwrite("width", &setup::OutputShape::width)
        .def_readwrite("channels", &setup::OutputShape::channels);

    py::class_<SsdCoding>(m, "SsdCoding")
        .def(py::init<>())
        .def_readwrite("centers_scale", &SsdCoding::centers_scale)
        .def_readwrite("dims_scale", &SsdCoding::dims_scale)
        .def_readwrite("ty_index", &SsdCoding::ty_index)
        .def_readwrite("tx_index", &SsdCoding::tx_index)
        .def_readwrite("th_index", &SsdCoding::th_index)
        .def_readwrite("tw_index", &SsdCoding::tw_index)
        .def_readwrite("background_class", &SsdCoding::background_class);

    py::class_<setup::NamedHead>(m, "NamedHead")
        .def(py::init<>())
        .def_readwrite("kind", &setup::NamedHead::kind)
        .def_readwrite("box", &setup::NamedHead::box)
        .def_readwrite("cls", &setup::NamedHead::cls)
        .def_readwrite("mask", &setup::NamedHead::mask)
        .def_readwrite("kpt", &setup::NamedHead::kpt)
        .def_readwrite("angle", &setup::NamedHead::angle)
        .def_readwrite("obj", &setup::NamedHead::obj)
        .def_readwrite("stride", &setup::NamedHead::stride)
        .def_readwrite("anchors", &setup::NamedHead::anchors)
        .def_readwrite("box_anchors", &setup::NamedHead::box_anchors)
        .def_readwrite("ssd", &setup::NamedHead::ssd);

    py::class_<setup::Layout>(m, "Layout")
        .def(py::init<>())
        .def_readwrite("kind", &setup::Layout::kind)
        .def_readwrite("heads", &setup::Layout::heads)
        .def_readwrite("image_height", &setup::Layout::image_height)
        .def_readwrite("image_width", &setup::Layout::image_width)
        .def_readwrite("task", &setup::Layout::task)
        .def_readwrite("num_classes", &setup::Layout::num_classes)
        .def_readwrite("bins", &setup::Layout::bins)
        .def_readwrite("num_keypoints", &setup::Layout::num_keypoints)
        .def_readwrite("keypoint_dims", &setup::Layout::keypoint_dims)
        .def_readwrite("proto", &setup::Layout::proto)
        .def_readwrite("ssd", &setup::Layout::ssd);

    py::class_<setup::Options>(m, "Options", "Checked options (read_options): read-only.")
        .def_readonly("semantics", &setup::Options::semantics)
        .def_readonly("class_activation", &setup::Options::class_activation)
        .def_readonly("score_threshold", &setup::Options::score_threshold)
        .def_readonly("score_threshold_per_class", &setup::Options::score_threshold_per_class)
        .def_readonly("score_test", &setup::Options::score_test)
        .def_readonly("iou_threshold", &setup::Options::iou_threshold)
        .def_readonly("iou_test", &setup::Options::iou_test)
        .def_readonly("multi_label", &setup::Options::multi_label)
        .def_readonly("agnostic", &setup::Options::agnostic)
        .def_readonly("max_per_class", &setup::Options::max_per_class)
        .def_readonly("max_total", &setup::Options::max_total)
        .def_readonly("max_candidates", &setup::Options::max_candidates)
        .def_readonly("tie_break", &setup::Options::tie_break)
        .def_readonly("box_format", &setup::Options::box_format)
        .def_readonly("rotated_class_offset", &setup::Options::rotated_class_offset)
        .def_readonly("end2end", &setup::Options::end2end)
        .def_readonly("explicit_settings", &setup::Options::explicit_settings)
        .def_readonly("task", &setup::Options::task)
        .def_readonly("bins", &setup::Options::bins)
        .def_readonly("keypoint_dims", &setup::Options::keypoint_dims)
        .def_readonly("keypoint_decode", &setup::Options::keypoint_decode)
        .def_readonly("angle_decode", &setup::Options::angle_decode)
        .def_readonly("image_height", &setup::Options::image_height)
        .def_readonly("image_width", &setup::Options::image_width)
        .def_readonly("has_classes", &setup::Options::has_classes)
        .def_readonly("classes", &setup::Options::classes)
        .def_readonly("proto", &setup::Options::proto)
        .def_readonly("proto_stride", &setup::Options::proto_stride)
        .def_readonly("drop_empty_masks", &setup::Options::drop_empty_masks)
        .def_readonly("mask_objectness", &setup::Options::mask_objectness)
        .def_readonly("hailort_version", &setup::Options::hailort_version);

    py::class_<setup::NmsJson>(m, "NmsJson", "What read_nms_json found: heads, settings (a dict of option names).")
        .def_readonly("heads", &setup::NmsJson::heads)
        .def_property_readonly("settings", [](const setup::NmsJson& n) { return from_json(n.settings); })
        .def_readonly("classes", &setup::NmsJson::classes)
        .def_readonly("regression_length", &setup::NmsJson::regression_length);

    m.def("parse_json", [](const std::string& text) { return from_json(json::parse(text)); }, py::arg("text"),
          "A JSON document (strict RFC 8259) as Python objects; ValueError 'line L, column C: ...'.");
    m.def("preset_setting_names", &setup::preset_setting_names);
    m.def("preset_names", &setup::preset_names);
    m.def("option_names", &setup::option_names);
    m.def("preset", [](const std::string& name) { return from_json(setup::preset(name)); }, py::arg("name"),
          "A preset's settings as a dict (None: no cap).");
    m.def("choices", &setup::choices, py::arg("key"), "The values a named choice setting accepts.");
    m.def("closest_name", &setup::closest_name, py::arg("name"), py::arg("known"));
    m.def("read_options",
          [](const py::handle& options, const std::string& where,
             const std::vector<std::pair<std::string, std::string>>& aliases) {
              std::vector<setup::OptionAlias> as;
              for (const auto& [alias, setting] : aliases) as.push_back({alias, setting});
              return setup::read_options(to_json(options), where, {}, as);
          },
          py::arg("options"), py::arg("where") = "", py::arg("aliases") = std::vector<std::pair<std::string, std::string>>{},
          "Checked Options from a dict of named settings and model options (None: not given). aliases: "
          "[(alias, setting)], other names of preset settings (the TAPPAS plugin's detection_threshold, max_boxes).");
    m.def("read_nms_json", [](const py::handle& doc, const std::vector<setup::OutputShape>& outputs,
                              const std::string& where) { return setup::read_nms_json(to_json(doc), outputs, where); },
          py::arg("doc"), py::arg("outputs"), py::arg("where") = "");
    m.def("read_heads",
          [](const py::handle& heads, const std::string& where, std::optional<std::vector<setup::OutputShape>> outputs) {
              return setup::read_heads(json_value_detail::to_json(heads, "heads", 0), where, outputs ? &*outputs : nullptr);
          },
          py::arg("heads"), py::arg("where") = "", py::arg("outputs") = py::none(),
          "NamedHeads from a list of head dicts, as a config file's \"heads\" key holds them ({'box', 'cls', 'stride', "
          "'angle' | 'kpt' | 'mask'}, {'output', 'anchors', 'stride'} or {'reg', 'obj', 'cls', 'stride'}); with outputs, "
          "each name checked to be one of them. TypeError: an unknown key or a value of the wrong kind.");
    m.def("thresholds_per_class", &setup::thresholds_per_class, py::arg("options"), py::arg("num_classes"));
    m.def("keypoint_decode", &setup::keypoint_decode, py::arg("options"), py::arg("bins"));
    m.def("angle_decode", &setup::angle_decode, py::arg("options"), py::arg("bins"));
    m.def("drop_empty_masks", &setup::drop_empty_masks, py::arg("options"));
    m.def("make_settings", &setup::make_settings, py::arg("layout"), py::arg("options"));
    m.def("config_for_layout", &setup::config_for_layout, py::arg("outputs"), py::arg("layout"), py::arg("options"));
    m.def("make_config", [](const std::vector<TensorSpec>& outputs, const setup::Options& options,
                            std::optional<std::vector<setup::NamedHead>> heads) {
              return setup::make_config(outputs, options, heads ? &*heads : nullptr);
          }, py::arg("outputs"), py::arg("options"), py::arg("heads") = py::none());
}

}  // namespace hailo_decode_bindings
