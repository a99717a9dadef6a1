// The reading both NMS JSON readers share (nms_json.cpp: YOLO families; nms_json_ssd.cpp: SSD):
// messages prefixed with where the document came from, unknown keys refused with the closest known
// one, whole numbers in range, and a decoder's layer matched to an output by name or by the part
// after its last '/'.
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "hailo_decode/setup.hpp"
#include "options_detail.hpp"

namespace hailo_decode::setup::detail {

// Counts, sizes, strides and anchors an NMS JSON may give: at most 2^20.
constexpr int64_t kNmsJsonMaxInt = int64_t(1) << 20;

inline std::string quoted(const std::string& name) { return "'" + name + "'"; }

inline std::string name_list(const std::vector<std::string>& names) {
    std::string out = "[";
    for (size_t i = 0; i < names.size(); ++i) out += (i ? ", " : "") + quoted(names[i]);
    return out + "]";
}

// A value as the document wrote it, cut to 80 characters for a message.
inline std::string shown(const json::Value& v) {
    std::string s = v.dump();
    return s.size() <= 80 ? s : s.substr(0, 76) + " ...";
}

class NmsJsonReader {
public:
    NmsJsonReader(const std::string& where, const std::vector<OutputShape>& outputs)
        : prefix_((where.empty() ? "" : where + ": ") + "NMS JSON"), outputs_(outputs) {}

    const std::string& prefix() const { return prefix_; }
    const std::vector<OutputShape>& outputs() const { return outputs_; }

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
        return std::fabs(d) < 9223372036854775808.0 ? json::Value::integer(int64_t(d))
                                                    : json::Value::integer_beyond_int64(d);
    }

    // The same in [low, 2^20].
    int bounded(const json::Value& v, const std::string& what, int64_t low) const {
        const double d = whole(v, what).as_number();
        if (d < double(low) || d > double(kNmsJsonMaxInt))
            fail(": " + what + " must be a whole number in [" + std::to_string(low) + ", " +
                 std::to_string(kNmsJsonMaxInt) + "], got " + shown(v));
        return int(d);
    }

    json::Value number(const json::Value& v, const std::string& what) const {
        if (!v.is_number()) fail_kind(": " + what + " must be a number, got " + shown(v));
        return json::Value::number(v.as_number());
    }

    // bbox_decoders: a non-empty list of objects, each with only known keys.
    const std::vector<json::Value>& decoders(const json::Value& doc, const std::vector<std::string>& known) const {
        const json::Value* list = doc.find("bbox_decoders");
        if (!list || list->is_null() || (list->is_array() && list->items().empty()))
            fail(": 'bbox_decoders' is missing or empty");
        if (!list->is_array()) fail_kind(": 'bbox_decoders' must be a list, got " + shown(*list));
        for (size_t i = 0; i < list->items().size(); ++i) {
            const json::Value& d = list->items()[i];
            const std::string at = "bbox_decoders[" + std::to_string(i) + "]";
            if (!d.is_object()) fail_kind(": " + at + " must be an object, got " + shown(d));
            known_keys(d, known, ": " + at);
        }
        return list->items();
    }

    // A true/false key; false when absent.
    bool flag(const json::Value& doc, const std::string& key) const {
        const json::Value* v = doc.find(key);
        if (!v) return false;
        if (!v->is_bool()) fail_kind(": " + key + " must be true or false, got " + shown(*v));
        return v->as_bool();
    }

    // The settings every NMS JSON may hold (nms_scores_th, nms_iou_th, max_proposals_per_class,
    // image_dims), as options, each checked in its option's range with the document's key named.
    std::vector<std::pair<std::string, json::Value>> settings(const json::Value& doc) const {
        std::vector<std::pair<std::string, json::Value>> out;
        if (const json::Value* v = doc.find("nms_scores_th")) out.emplace_back("score_threshold", number(*v, "nms_scores_th"));
        if (const json::Value* v = doc.find("nms_iou_th")) out.emplace_back("iou_threshold", number(*v, "nms_iou_th"));
        if (const json::Value* v = doc.find("max_proposals_per_class"))
            out.emplace_back("max_per_class", whole(*v, "max_proposals_per_class"));
        if (const json::Value* dims = doc.find("image_dims")) {
            if (!dims->is_array() || dims->items().size() != 2)
                fail(": image_dims must be [height, width], got " + shown(*dims));
            out.emplace_back("image_size", json::Value::array({whole(dims->items()[0], "image_dims[0]"),
                                                               whole(dims->items()[1], "image_dims[1]")}));
        }
        const auto& names = nms_json_setting_names();
        for (const auto& [option, value] : out) {
            const auto alias = std::find_if(names.begin(), names.end(), [&](const auto& a) { return a.second == option; });
            check_option(option, value, alias->first, prefix_);
        }
        return out;
    }

    const json::Value& member(const json::Value& d, const std::string& key, size_t i) const {
        const json::Value* v = d.find(key);
        if (!v) fail(": bbox_decoders[" + std::to_string(i) + "] lacks " + quoted(key));
        return *v;
    }

    // The output bbox_decoders[i].key names: exactly, or as the part after its last '/'.
    size_t output(const json::Value& d, const std::string& key, size_t i) const {
        const json::Value& v = member(d, key, i);
        if (!v.is_string())
            fail_kind(": bbox_decoders[" + std::to_string(i) + "]." + key +
                      " must be a string (an output name), got " + shown(v));
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

    const std::string& output_name(const json::Value& d, const std::string& key, size_t i) const {
        return outputs_[output(d, key, i)].name;
    }

    const OutputShape& shape_of(const std::string& name) const {
        return *std::find_if(outputs_.begin(), outputs_.end(), [&](const OutputShape& o) { return o.name == name; });
    }

private:
    std::string prefix_;
    const std::vector<OutputShape>& outputs_;
};

}  // namespace hailo_decode::setup::detail
