// The core Config from checked options and the outputs paired into heads (pair_outputs): output
// names become indices, every setting what the decoder reads (box_format -> normalized / yxyx,
// thresholds per class with the allow-list, ...).
#include <algorithm>

#include "hailo_decode/setup.hpp"

namespace hailo_decode::setup {

namespace {

const char* kind_name(HeadKind k) {
    return k == HeadKind::DFL ? "dfl" : k == HeadKind::YOLOV5 ? "yolov5" : k == HeadKind::SSD ? "ssd" : "yolox";
}

// Index of the output named `name` ("" : -1).
int index_of(const std::vector<TensorSpec>& outputs, const std::string& name, const char* role) {
    if (name.empty()) return -1;
    for (size_t i = 0; i < outputs.size(); ++i)
        if (outputs[i].name == name) return int(i);
    throw std::invalid_argument(std::string("head ") + role + " output '" + name + "' is not among the outputs");
}

}  // namespace

Settings make_settings(const Layout& layout, const Options& options) {
    if (options.end2end && layout.kind != HeadKind::DFL)
        throw std::invalid_argument(std::string("end2end selection is for DFL heads (YOLO26/YOLOv10), not ") +
                                    kind_name(layout.kind) + " heads");
    Settings s;
    s.sigmoid = options.class_activation == "sigmoid";
    // YOLOv5-seg exports raw logits and HailoRT's yolov5_seg op applies the sigmoid on the host
    // (should_sigmoid): the default there, unless class_activation is given.
    const auto& given = options.explicit_settings;
    if (layout.kind == HeadKind::YOLOV5 && !layout.proto.empty() &&
        std::find(given.begin(), given.end(), "class_activation") == given.end())
        s.sigmoid = true;
    s.score_threshold.clear();
    for (double th : thresholds_per_class(options, layout.num_classes)) s.score_threshold.push_back(float(th));
    s.score_inclusive = options.score_test == ">=";
    s.iou_threshold = float(options.iou_threshold);
    s.iou_inclusive = options.iou_test == ">=";
    s.multi_label = options.multi_label;
    s.agnostic = options.agnostic;
    s.max_per_class = options.max_per_class;
    s.max_total = options.max_total;
    s.max_candidates = options.max_candidates;
    s.hailort_sort = options.tie_break == "hailort";
    s.hailort_v5 = s.hailort_sort && hailort_v5_ops(options.hailort_version);
    s.normalized = options.box_format.find("_normalized") != std::string::npos;  // else _pixels
    s.yxyx = options.box_format.compare(0, 4, "yxyx") == 0;
    s.image_height = layout.image_height;
    s.image_width = layout.image_width;
    s.class_offset = float(options.rotated_class_offset);
    s.end2end = options.end2end;
    // Anchor heads: HailoRT's op formulas under the hailort preset, the model repository's otherwise.
    s.hailort_decode = options.semantics == "hailort";
    return s;
}

Config make_config(const std::vector<TensorSpec>& outputs, const Options& options, const std::vector<NamedHead>* heads) {
    std::vector<OutputShape> shapes;
    for (const TensorSpec& t : outputs) shapes.push_back({t.name, t.height, t.width, t.channels});
    return config_for_layout(outputs, pair_outputs(shapes, options, heads), options);
}

Config config_for_layout(const std::vector<TensorSpec>& outputs, const Layout& layout, const Options& options) {
    Config c;
    c.outputs = outputs;
    for (const NamedHead& h : layout.heads) {
        HeadSpec hs;
        hs.box_output = index_of(outputs, h.box, "box");
        hs.cls_output = index_of(outputs, h.cls, "cls");
        hs.mask_output = index_of(outputs, h.mask, "mask");
        hs.kpt_output = index_of(outputs, h.kpt, "kpt");
        hs.angle_output = index_of(outputs, h.angle, "angle");
        hs.obj_output = index_of(outputs, h.obj, "obj");
        hs.stride = h.stride;
        for (const auto& [w, hgt] : h.anchors) {
            hs.anchors.push_back(w);
            hs.anchors.push_back(hgt);
        }
        for (const auto& [w, hgt] : h.box_anchors) {  // SSD: float32, as HailoRT holds them
            hs.box_anchors.push_back(float(w));
            hs.box_anchors.push_back(float(hgt));
        }
        c.heads.push_back(std::move(hs));
    }
    c.num_classes = layout.num_classes;
    c.bins = std::max(layout.bins, 1);  // YOLOv5 / YOLOX heads have no DFL
    c.kind = layout.kind;
    c.ssd = layout.ssd;
    c.settings = make_settings(layout, options);
    c.num_keypoints = layout.num_keypoints;
    c.keypoint_dims = layout.keypoint_dims;
    c.keypoint_decode = keypoint_decode(options, layout.bins) == "yolo26" ? KeypointDecode::YOLO26 : KeypointDecode::YOLOV8;
    c.angle_decode = angle_decode(options, layout.bins) == "raw" ? AngleDecode::RAW : AngleDecode::SIGMOID;
    if (!layout.proto.empty()) {
        c.proto_output = index_of(outputs, layout.proto, "proto");
        // (YOLOv5's segment predict keeps detections with empty masks; Ultralytics' YOLOv8 drops them)
        c.drop_empty_masks = layout.kind == HeadKind::DFL ? drop_empty_masks(options) : options.drop_empty_masks == 1;
        c.mask_objectness = options.mask_objectness != 0;
    }
    return c;
}

}  // namespace hailo_decode::setup
