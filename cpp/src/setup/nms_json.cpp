// read_nms_json: the DFC / Model Zoo NMS JSON (hailo_model_zoo/cfg/postprocess_config/*.json) as
// heads and settings. Every key those files hold is known (the ones the decoder has no use for are
// skipped); any other is refused, naming the closest known key.
#include <algorithm>
#include <cmath>

#include "hailo_decode/setup.hpp"
#include "nms_json_reader.hpp"
#include "options_detail.hpp"
#include "pairing_ssd.hpp"

namespace hailo_decode::setup {

namespace {

using detail::shown;

// Top level. Read: the thresholds, image_dims, max_proposals_per_class, classes,
// regression_length, background_removal, bbox_decoders, YOLOv5-seg's "proto" ([{number, stride}]:
// task segment, the prototype's stride and coefficient count; the prototype output is the one no
// decoder names). Skipped: SSD/CenterNet box scaling, the background class index, YOLOv5-seg's
// total cap, the head count.
const std::vector<std::string> kTopKeys = {
    "nms_scores_th", "nms_iou_th", "image_dims", "max_proposals_per_class", "classes", "regression_length",
    "background_removal", "bbox_decoders", "background_removal_index", "max_total_proposals", "proto",
    "number_of_detection_heads", "centers_scale_factor", "bbox_dimensions_scale_factor", "input_division_factor"};
// One bbox decoder. Read: stride and the layers of YOLOv8 (reg, cls), YOLOv5/YOLOv7 (encoded, w, h)
// and YOLOX (reg, objectness or obj, cls). Skipped: its name, NanoDet's combined layer and
// CenterNet's split regression layers (those heads are not decoded: their layers match no head).
const std::vector<std::string> kDecoderKeys = {"stride", "reg_layer", "cls_layer", "encoded_layer", "w", "h",
                                               "objectness_layer", "obj_layer", "name", "combined_layer",
                                               "reg_layer_h", "reg_layer_w"};

// The YOLO families' reader: the shared reading plus a bbox decoder as a head.
class Reader : public detail::NmsJsonReader {
public:
    using NmsJsonReader::NmsJsonReader;

    // One bbox decoder: YOLOv5 (encoded_layer with anchor w/h lists), YOLOX (reg, objectness, cls)
    // or YOLOv8 (reg, cls).
    NamedHead head(const json::Value& d, size_t i) const {
        const std::string at = "bbox_decoders[" + std::to_string(i) + "]";
        NamedHead h;
        h.stride = bounded(member(d, "stride", i), at + ".stride", 1);
        if (d.find("encoded_layer")) {
            const json::Value& ws = member(d, "w", i);
            const json::Value& hs = member(d, "h", i);
            if (!ws.is_array() || !hs.is_array() || ws.items().size() != hs.items().size() || ws.items().empty())
                fail(": " + at + " anchor lists w " + shown(ws) + " and h " + shown(hs) +
                     " must be non-empty and of one length");
            for (size_t a = 0; a < ws.items().size(); ++a)
                h.anchors.emplace_back(bounded(ws.items()[a], at + ".w", 1), bounded(hs.items()[a], at + ".h", 1));
            h.kind = HeadKind::YOLOV5;
            h.box = h.cls = output_name(d, "encoded_layer", i);
            return h;
        }
        h.box = output_name(d, "reg_layer", i);
        const json::Value* obj = d.find("objectness_layer") ? d.find("objectness_layer") : d.find("obj_layer");
        if (obj && !obj->is_null()) {
            h.kind = HeadKind::YOLOX;
            h.obj = output_name(d, d.find("objectness_layer") ? "objectness_layer" : "obj_layer", i);
        }
        h.cls = output_name(d, "cls_layer", i);
        return h;
    }
};

}  // namespace

const std::vector<std::pair<std::string, std::string>>& detail::nms_json_setting_names() {
    static const std::vector<std::pair<std::string, std::string>> names = {
        {"nms_scores_th", "score_threshold"}, {"nms_iou_th", "iou_threshold"},
        {"max_proposals_per_class", "max_per_class"}, {"image_dims", "image_size"}};
    return names;
}

NmsJson read_nms_json(const json::Value& doc, const std::vector<OutputShape>& outputs, const std::string& where) {
    if (detail::is_ssd_nms_json(doc)) return detail::read_ssd_nms_json(doc, outputs, where);
    const Reader read(where, outputs);
    if (!doc.is_object()) read.fail_kind(": the document must be an object (of nms_scores_th, bbox_decoders, ...), got " + shown(doc));
    read.known_keys(doc, kTopKeys, "");
    if (read.flag(doc, "background_removal")) read.fail(": background_removal=true is not supported");
    const std::vector<json::Value>& decoders = read.decoders(doc, kDecoderKeys);

    // (Each decoder's stride x grid = image size is pair_outputs' check, as for every head.)
    NmsJson out;
    for (size_t i = 0; i < decoders.size(); ++i) out.heads.push_back(read.head(decoders[i], i));
    std::vector<std::pair<std::string, json::Value>> settings = read.settings(doc);
    // YOLOv5-seg: "proto": [{"number": 32, "stride": 4}] (the Model Zoo's yolov5*_seg configs).
    int64_t coefficients = 0;
    if (const json::Value* p = doc.find("proto")) {
        const json::Value* first = p->is_array() && p->items().size() == 1 ? &p->items()[0] : nullptr;
        if (!first || !first->is_object() || !first->find("number") || !first->find("stride"))
            read.fail(": proto must be [{\"number\": mask coefficients, \"stride\": pixels}], got " + shown(*p));
        coefficients = read.bounded(*first->find("number"), "proto[0].number", 1);
        settings.emplace_back("task", json::Value::string("segment"));
        settings.emplace_back("proto_stride", read.whole(*first->find("stride"), "proto[0].stride"));
    }
    out.settings = json::Value::object(std::move(settings));

    // The counts the document states must be the outputs' (the first head's, as pairing reads them).
    const NamedHead& h0 = out.heads[0];
    const OutputShape& cls0 = read.shape_of(h0.cls);
    if (const json::Value* v = doc.find("classes")) {
        out.classes = read.bounded(*v, "classes", 0);
        const int anchors = int(h0.anchors.size());
        const bool known =
            h0.kind != HeadKind::YOLOV5 || (cls0.channels % anchors == 0 && cls0.channels / anchors > 5 + coefficients);
        const int64_t have = h0.kind == HeadKind::YOLOV5 ? cls0.channels / anchors - 5 - coefficients : cls0.channels;
        if (known && out.classes != have)
            read.fail(" says " + std::to_string(out.classes) + " classes, class outputs have " + std::to_string(have) +
                      " channels");
    }
    if (const json::Value* v = doc.find("regression_length")) {
        out.regression_length = read.bounded(*v, "regression_length", 0);
        const OutputShape& box = read.shape_of(h0.box);
        const int64_t bins = box.channels / 4;
        // DFC JSONs count the bins (16); Ultralytics-style configs say reg_max - 1 (15).
        if (h0.kind == HeadKind::DFL && box.channels % 4 == 0 && bins != out.regression_length &&
            bins != out.regression_length + 1)
            read.fail(" regression_length " + std::to_string(out.regression_length) + " does not fit box outputs with " +
                      std::to_string(bins) + " bins (" + std::to_string(box.channels) + " channels)");
    }
    return out;
}

}  // namespace hailo_decode::setup
