// read_nms_json for SSD documents (hailo_model_zoo/cfg/postprocess_config/mobilenet_ssd_nms_postprocess_config.json):
//   {"nms_scores_th", "nms_iou_th", "max_proposals_per_class", "centers_scale_factor",
//    "bbox_dimensions_scale_factor", "image_dims": [h, w], "classes", "background_removal",
//    "background_removal_index", "bbox_decoders": [{"name", "w": [...], "h": [...], "reg_layer", "cls_layer"}]}
// Anchors are floats normalized by the input size; the regression order is HailoRT's default
// (ty, tx, th, tw: the DFC's, ssd_post_process.hpp DEFAULT_*_OFFSET_IDX).
#include <algorithm>
#include <cmath>

#include "nms_json_reader.hpp"
#include "options_detail.hpp"
#include "pairing_ssd.hpp"

namespace hailo_decode::setup::detail {

namespace {

const std::vector<std::string> kSsdTopKeys = {
    "nms_scores_th", "nms_iou_th", "image_dims", "max_proposals_per_class", "classes", "background_removal",
    "background_removal_index", "bbox_decoders", "centers_scale_factor", "bbox_dimensions_scale_factor",
    "max_total_proposals", "number_of_detection_heads"};
const std::vector<std::string> kSsdDecoderKeys = {"name", "w", "h", "reg_layer", "cls_layer", "stride"};

// The SSD reader: the shared reading plus anchors, normalized floats.
class SsdReader : public NmsJsonReader {
public:
    using NmsJsonReader::NmsJsonReader;

    double positive(const json::Value& v, const std::string& what) const {
        if (!v.is_number()) fail_kind(": " + what + " must be a number, got " + shown(v));
        const double d = v.as_number();
        if (!std::isfinite(d) || !(d > 0) || d > 1e6) fail(": " + what + " must be a finite number > 0, got " + shown(v));
        return d;
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
    const SsdReader read(where, outputs);
    read.known_keys(doc, kSsdTopKeys, "");
    SsdCoding coding;
    if (const json::Value* v = doc.find("centers_scale_factor"))
        coding.centers_scale = float(read.positive(*v, "centers_scale_factor"));
    if (const json::Value* v = doc.find("bbox_dimensions_scale_factor"))
        coding.dims_scale = float(read.positive(*v, "bbox_dimensions_scale_factor"));
    const bool background = read.flag(doc, "background_removal");
    int64_t bg_index = 0;
    if (const json::Value* v = doc.find("background_removal_index")) bg_index = read.bounded(*v, "background_removal_index", 0);
    coding.background_class = background ? int(bg_index) : -1;

    const std::vector<json::Value>& decoders = read.decoders(doc, kSsdDecoderKeys);
    NmsJson out;
    for (size_t i = 0; i < decoders.size(); ++i) {
        const json::Value& d = decoders[i];
        const std::string at = "bbox_decoders[" + std::to_string(i) + "]";
        NamedHead h;
        h.kind = HeadKind::SSD;
        h.box = read.output_name(d, "reg_layer", i);
        h.cls = read.output_name(d, "cls_layer", i);
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
    out.settings = json::Value::object(read.settings(doc));
    if (const json::Value* v = doc.find("classes")) {
        out.classes = read.bounded(*v, "classes", 1);
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
