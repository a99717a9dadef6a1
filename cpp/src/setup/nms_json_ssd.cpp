// read_nms_json for SSD documents (hailo_model_zoo/cfg/postprocess_config/mobilenet_ssd_nms_postprocess_config.json):
//   {"nms_scores_th", "nms_iou_th", "max_proposals_per_class", "centers_scale_factor",
//    "bbox_dimensions_scale_factor", "image_dims": [h, w], "classes", "background_removal",
//    "background_removal_index", "bbox_decoders": [{"name", "w": [...], "h": [...], "reg_layer", "cls_layer"}]}
// Anchors are floats normalized by the input size; the regression order is HailoRT's default
// (ty, tx, th, tw: the DFC's, ssd_post_process.hpp DEFAULT_*_OFFSET_IDX).
#include <algorithm>
#include <cmath>

#include "options_detail.hpp"
#include "pairing_ssd.hpp"

namespace hailo_decode::setup::detail {

namespace {

const std::vector<std::string> kSsdTopKeys = {
    "nms_scores_th", "nms_iou_th", "image_dims", "max_proposals_per_class", "classes", "background_removal",
    "background_removal_index", "bbox_decoders", "centers_scale_factor", "bbox_dimensions_scale_factor",
    "max_total_proposals", "number_of_detection_heads"};
const std::vector<std::string> kSsdDecoderKeys = {"name", "w", "h", "reg_layer", "cls_layer", "stride"};

std::string shown(const json::Value& v) {
    std::string s = v.dump();
    return s.size() <= 80 ? s : s.substr(0, 76) + " ...";
}

struct SsdReader {
    std::string prefix;
    const std::vector<OutputShape>& outputs;

    [[noreturn]] void fail(const std::string& what) const { throw std::invalid_argument(prefix + what); }
    [[noreturn]] void fail_kind(const std::string& what) const { throw type_error(prefix + what); }

    void known(const json::Value& object, const std::vector<std::string>& keys, const std::string& in) const {
        for (const auto& m : object.members()) {
            if (std::find(keys.begin(), keys.end(), m.first) != keys.end()) continue;
            const std::string close = closest_name(m.first, keys);
            fail_kind(in + ": unknown key " + json::Value::string(m.first).dump() +
                      (close.empty() ? "" : "; did you mean " + json::Value::string(close).dump() + "?"));
        }
    }
    double positive(const json::Value& v, const std::string& what) const {
        if (!v.is_number()) fail_kind(": " + what + " must be a number, got " + shown(v));
        const double d = v.as_number();
        if (!std::isfinite(d) || !(d > 0) || d > 1e6) fail(": " + what + " must be a finite number > 0, got " + shown(v));
        return d;
    }
    int64_t whole(const json::Value& v, const std::string& what, int64_t low, int64_t high) const {
        if (!v.is_number()) fail_kind(": " + what + " must be a number, got " + shown(v));
        if (!v.is_whole() || v.as_number() < double(low) || v.as_number() > double(high))
            fail(": " + what + " must be a whole number in [" + std::to_string(low) + ", " + std::to_string(high) +
                 "], got " + shown(v));
        return int64_t(v.as_number());
    }
    std::string layer(const json::Value& d, const std::string& key, const std::string& at) const {
        const json::Value* v = d.find(key);
        if (!v) fail(": " + at + " lacks '" + key + "'");
        if (!v->is_string()) fail_kind(": " + at + "." + key + " must be a string (an output name), got " + shown(*v));
        const std::string& name = v->as_string();
        for (const OutputShape& o : outputs)
            if (o.name == name) return o.name;
        std::vector<std::string> hits;
        for (const OutputShape& o : outputs) {
            const size_t slash = o.name.rfind('/');
            if ((slash == std::string::npos ? o.name : o.name.substr(slash + 1)) == name) hits.push_back(o.name);
        }
        if (hits.size() == 1) return hits[0];
        std::string list;
        for (const OutputShape& o : outputs) list += (list.empty() ? "'" : ", '") + o.name + "'";
        fail(" layer '" + name + "' matches " + (hits.empty() ? "no output" : "several outputs") +
             " (by name or the part after '/'): [" + list + "]");
    }
};

}  // namespace

bool is_ssd_nms_json(const json::Value& doc) {
    if (!doc.is_object()) return false;
    const json::Value* decoders = doc.find("bbox_decoders");
    if (!decoders || !decoders->is_array()) return false;
    for (const json::Value& d : decoders->items())
        if (d.is_object() && d.find("reg_layer") && d.find("w") && d.find("h") && !d.find("encoded_layer") && !d.find("stride"))
            return true;
    return false;
}

NmsJson read_ssd_nms_json(const json::Value& doc, const std::vector<OutputShape>& outputs, const std::string& where) {
    const SsdReader read{(where.empty() ? "" : where + ": ") + "NMS JSON", outputs};
    read.known(doc, kSsdTopKeys, "");
    SsdCoding coding;
    if (const json::Value* v = doc.find("centers_scale_factor"))
        coding.centers_scale = float(read.positive(*v, "centers_scale_factor"));
    if (const json::Value* v = doc.find("bbox_dimensions_scale_factor"))
        coding.dims_scale = float(read.positive(*v, "bbox_dimensions_scale_factor"));
    bool background = false;
    if (const json::Value* v = doc.find("background_removal")) {
        if (!v->is_bool()) read.fail_kind(": background_removal must be true or false, got " + shown(*v));
        background = v->as_bool();
    }
    int64_t bg_index = 0;
    if (const json::Value* v = doc.find("background_removal_index")) bg_index = read.whole(*v, "background_removal_index", 0, 1 << 20);
    coding.background_class = background ? int(bg_index) : -1;

    const json::Value* decoders = doc.find("bbox_decoders");
    if (!decoders || decoders->is_null() || (decoders->is_array() && decoders->items().empty()))
        read.fail(": 'bbox_decoders' is missing or empty");
    if (!decoders->is_array()) read.fail_kind(": 'bbox_decoders' must be a list, got " + shown(*decoders));
    NmsJson out;
    for (size_t i = 0; i < decoders->items().size(); ++i) {
        const json::Value& d = decoders->items()[i];
        const std::string at = "bbox_decoders[" + std::to_string(i) + "]";
        if (!d.is_object()) read.fail_kind(": " + at + " must be an object, got " + shown(d));
        read.known(d, kSsdDecoderKeys, ": " + at);
        NamedHead h;
        h.kind = HeadKind::SSD;
        h.box = read.layer(d, "reg_layer", at);
        h.cls = read.layer(d, "cls_layer", at);
        const json::Value* ws = d.find("w");
        const json::Value* hs = d.find("h");
        if (!ws || !hs || !ws->is_array() || !hs->is_array() || ws->items().size() != hs->items().size() ||
            ws->items().empty())
            read.fail(": " + at + " anchor lists w and h must be non-empty and of one length");
        for (size_t a = 0; a < ws->items().size(); ++a)
            h.box_anchors.emplace_back(read.positive(ws->items()[a], at + ".w"), read.positive(hs->items()[a], at + ".h"));
        h.ssd = coding;
        out.heads.push_back(std::move(h));
    }
    std::vector<std::pair<std::string, json::Value>> settings;
    auto number = [&](const char* key) {
        const json::Value* v = doc.find(key);
        if (v && !v->is_number()) read.fail_kind(std::string(": ") + key + " must be a number, got " + shown(*v));
        return v;
    };
    if (const json::Value* v = number("nms_scores_th")) settings.emplace_back("score_threshold", json::Value::number(v->as_number()));
    if (const json::Value* v = number("nms_iou_th")) settings.emplace_back("iou_threshold", json::Value::number(v->as_number()));
    if (const json::Value* v = number("max_proposals_per_class"))
        settings.emplace_back("max_per_class", json::Value::integer(read.whole(*v, "max_proposals_per_class", 0, int64_t(1) << 20)));
    if (const json::Value* dims = doc.find("image_dims")) {
        if (!dims->is_array() || dims->items().size() != 2) read.fail(": image_dims must be [height, width], got " + shown(*dims));
        settings.emplace_back("image_size", json::Value::array({json::Value::integer(read.whole(dims->items()[0], "image_dims[0]", 1, 1 << 20)),
                                                                json::Value::integer(read.whole(dims->items()[1], "image_dims[1]", 1, 1 << 20))}));
    }
    for (const auto& [option, value] : settings) {
        const auto& names = nms_json_setting_names();
        const auto alias = std::find_if(names.begin(), names.end(), [&](const auto& a) { return a.second == option; });
        check_option(option, value, alias->first, read.prefix);
    }
    out.settings = json::Value::object(std::move(settings));
    if (const json::Value* v = doc.find("classes")) {
        out.classes = read.whole(*v, "classes", 1, 1 << 20);
        // "classes" counts the background too (91 for COCO's 90): the class outputs' channels per anchor.
        const NamedHead& h0 = out.heads[0];
        for (const OutputShape& o : outputs)
            if (o.name == h0.cls) {
                const int64_t a = int64_t(h0.box_anchors.size());
                if (o.channels % a || o.channels / a != out.classes)
                    read.fail(" says " + std::to_string(out.classes) + " classes, class output '" + o.name + "' has " +
                              std::to_string(o.channels) + " channels = " + std::to_string(a) + " anchors x " +
                              (o.channels % a ? "?" : std::to_string(o.channels / a)));
            }
    }
    if (background && (bg_index != 0 && (out.classes < 0 || bg_index != out.classes - 1)))
        read.fail(": background_removal_index must be 0 or the last class (classes - 1), got " + std::to_string(bg_index));
    return out;
}

}  // namespace hailo_decode::setup::detail
