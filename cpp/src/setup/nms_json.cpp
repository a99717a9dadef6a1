// read_nms_json: the DFC / Model Zoo NMS JSON (hailo_model_zoo/cfg/postprocess_config/*.json) as
// heads and settings. Every key those files hold is known (the ones the decoder has no use for are
// skipped); any other is refused, naming the closest known key.
#include <algorithm>
#include <cmath>

#include "hailo_decode/setup.hpp"
#include "options_detail.hpp"
#include "pairing_ssd.hpp"

namespace hailo_decode::setup {

namespace {

constexpr int64_t kMaxInt = int64_t(1) << 20;

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

std::string quoted(const std::string& name) { return "'" + name + "'"; }

std::string name_list(const std::vector<std::string>& names) {
    std::string out = "[";
    for (size_t i = 0; i < names.size(); ++i) out += (i ? ", " : "") + quoted(names[i]);
    return out + "]";
}

std::string shown(const json::Value& v) {
    std::string s = v.dump();
    return s.size() <= 80 ? s : s.substr(0, 76) + " ...";
}

class Reader {
public:
    Reader(const std::string& where, const std::vector<OutputShape>& outputs)
        : prefix_((where.empty() ? "" : where + ": ") + "NMS JSON"), outputs_(outputs) {}

    [[noreturn]] void fail(const std::string& what) const { throw std::invalid_argument(prefix_ + what); }
    [[noreturn]] void fail_kind(const std::string& what) const { throw type_error(prefix_ + what); }

    void known_keys(const json::Value& object, const std::vector<std::string>& known, const std::string& in) const {
        for (const auto& m : object.members()) {
            if (std::find(known.begin(), known.end(), m.first) != known.end()) continue;
            const std::string close = closest_name(m.first, known);
            fail_kind(in + ": unknown key " + json::Value::string(m.first).dump() +
                      (close.empty() ? "" : "; did you mean " + json::Value::string(close).dump() + "?"));
        }
    }

    // A number written as a whole value (16 or 16.0; the DFC writes both), as an integer Value.
    json::Value whole(const json::Value& v, const std::string& what) const {
        if (!v.is_number()) fail_kind(": " + what + " must be a number, got " + shown(v));
        if (!v.is_whole()) fail(": " + what + " must be a whole number, got " + shown(v));
        if (v.is_integer_literal()) return v;
        const double d = v.as_number();  // 16.0: the integer 16
        return std::fabs(d) < 9223372036854775808.0 ? json::Value::integer(int64_t(d)) : json::Value::integer_beyond_int64(d);
    }

    // The same in [low, 2^20]: sizes, strides, anchors and counts the decoder reads here.
    int bounded(const json::Value& v, const std::string& what, int64_t low) const {
        const double d = whole(v, what).as_number();
        if (d < double(low) || d > double(kMaxInt))
            fail(": " + what + " must be a whole number in [" + std::to_string(low) + ", " + std::to_string(kMaxInt) +
                 "], got " + shown(v));
        return int(d);
    }

    json::Value number(const json::Value& v, const std::string& what) const {
        if (!v.is_number()) fail_kind(": " + what + " must be a number, got " + shown(v));
        return json::Value::number(v.as_number());
    }

    const json::Value& member(const json::Value& d, const std::string& key, size_t i) const {
        const json::Value* v = d.find(key);
        if (!v) fail(": bbox_decoders[" + std::to_string(i) + "] lacks " + quoted(key));
        return *v;
    }

    // The output a layer names: exactly, or as the part after its last '/'.
    size_t output(const json::Value& d, const std::string& key, size_t i) const {
        const json::Value& v = member(d, key, i);
        if (!v.is_string())
            fail_kind(": bbox_decoders[" + std::to_string(i) + "]." + key + " must be a string (an output name), got " +
                      shown(v));
        const std::string& layer = v.as_string();
        for (size_t k = 0; k < outputs_.size(); ++k)
            if (outputs_[k].name == layer) return k;
        std::vector<size_t> suffix;
        for (size_t k = 0; k < outputs_.size(); ++k) {
            const std::string& n = outputs_[k].name;
            const size_t slash = n.rfind('/');
            if ((slash == std::string::npos ? n : n.substr(slash + 1)) == layer) suffix.push_back(k);
        }
        if (suffix.size() == 1) return suffix[0];
        std::vector<std::string> names;
        for (size_t k : suffix) names.push_back(outputs_[k].name);
        if (!suffix.empty()) fail(" layer " + quoted(layer) + " matches several outputs: " + name_list(names));
        for (const OutputShape& o : outputs_) names.push_back(o.name);
        fail(" layer " + quoted(layer) + " matches no output (by name or the part after '/'): " + name_list(names));
    }

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
            h.box = h.cls = outputs_[output(d, "encoded_layer", i)].name;
            return h;
        }
        h.box = outputs_[output(d, "reg_layer", i)].name;
        const json::Value* obj = d.find("objectness_layer") ? d.find("objectness_layer") : d.find("obj_layer");
        if (obj && !obj->is_null()) {
            h.kind = HeadKind::YOLOX;
            h.obj = outputs_[output(d, d.find("objectness_layer") ? "objectness_layer" : "obj_layer", i)].name;
        }
        h.cls = outputs_[output(d, "cls_layer", i)].name;
        return h;
    }

    const OutputShape& shape_of(const std::string& name) const {
        return *std::find_if(outputs_.begin(), outputs_.end(), [&](const OutputShape& o) { return o.name == name; });
    }

private:
    std::string prefix_;
    const std::vector<OutputShape>& outputs_;
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
    if (const json::Value* bg = doc.find("background_removal")) {
        if (!bg->is_bool()) read.fail_kind(": background_removal must be true or false, got " + shown(*bg));
        if (bg->as_bool()) read.fail(": background_removal=true is not supported");
    }
    const json::Value* decoders = doc.find("bbox_decoders");
    if (!decoders || decoders->is_null() || (decoders->is_array() && decoders->items().empty()))
        read.fail(": 'bbox_decoders' is missing or empty");
    if (!decoders->is_array()) read.fail_kind(": 'bbox_decoders' must be a list, got " + shown(*decoders));

    // (Each decoder's stride x grid = image size is pair_outputs' check, as for every head.)
    NmsJson out;
    for (size_t i = 0; i < decoders->items().size(); ++i) {
        const json::Value& d = decoders->items()[i];
        const std::string at = "bbox_decoders[" + std::to_string(i) + "]";
        if (!d.is_object()) read.fail_kind(": " + at + " must be an object, got " + shown(d));
        read.known_keys(d, kDecoderKeys, ": " + at);
        out.heads.push_back(read.head(d, i));
    }

    std::vector<std::pair<std::string, json::Value>> settings;
    if (const json::Value* v = doc.find("nms_scores_th")) settings.emplace_back("score_threshold", read.number(*v, "nms_scores_th"));
    if (const json::Value* v = doc.find("nms_iou_th")) settings.emplace_back("iou_threshold", read.number(*v, "nms_iou_th"));
    if (const json::Value* v = doc.find("max_proposals_per_class"))
        settings.emplace_back("max_per_class", read.whole(*v, "max_proposals_per_class"));
    if (const json::Value* dims = doc.find("image_dims")) {
        if (!dims->is_array() || dims->items().size() != 2)
            read.fail(": image_dims must be [height, width], got " + shown(*dims));
        settings.emplace_back("image_size", json::Value::array({read.whole(dims->items()[0], "image_dims[0]"),
                                                                read.whole(dims->items()[1], "image_dims[1]")}));
    }
    // Each in the range of the option it sets, the message naming the document's key.
    for (const auto& [option, value] : settings) {
        const auto& names = detail::nms_json_setting_names();
        const auto alias = std::find_if(names.begin(), names.end(), [&](const auto& a) { return a.second == option; });
        detail::check_option(option, value, alias->first, (where.empty() ? "" : where + ": ") + "NMS JSON");
    }
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
