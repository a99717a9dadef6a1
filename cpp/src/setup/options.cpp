// The named settings, the two presets and read_options: every value's kind and range checked where
// it enters, with a message naming the key, what it must be and what it got.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>

#include "hailo_decode/setup.hpp"
#include "options_detail.hpp"

namespace hailo_decode::setup {

namespace {

// Caps, sides, strides and class ids beyond this are not real: they would only make buffers
// impossibly large (the core holds them as 32-bit integers).
constexpr int64_t kMaxInt = int64_t(1) << 20;
const std::string kMaxIntText = "1048576";

const std::vector<std::string> kModelOptions = {"task", "bins", "keypoint_dims", "keypoint_decode", "angle_decode",
                                                "image_size", "classes", "proto", "proto_stride", "drop_empty_masks",
                                                "mask_objectness", "hailort_version"};
const std::string kVersionForm = "a HailoRT version \"X.Y\" or \"X.Y.Z\" (e.g. \"4.23\", \"5.2\", \"5.0.1\")";

json::Value cap_value(int64_t cap) { return cap < 0 ? json::Value() : json::Value::integer(cap); }

json::Value make_preset(const char* activation, double score, const char* score_test, double iou, const char* iou_test,
                        bool multi_label, int64_t max_per_class, int64_t max_total, int64_t max_candidates,
                        const char* tie_break, const char* box_format, double rotated_class_offset) {
    return json::Value::object({
        {"class_activation", json::Value::string(activation)},
        {"score_threshold", json::Value::number(score)},
        {"score_test", json::Value::string(score_test)},
        {"iou_threshold", json::Value::number(iou)},
        {"iou_test", json::Value::string(iou_test)},
        {"multi_label", json::Value::boolean(multi_label)},
        {"agnostic", json::Value::boolean(false)},
        {"max_per_class", cap_value(max_per_class)},
        {"max_total", cap_value(max_total)},
        {"max_candidates", cap_value(max_candidates)},
        {"tie_break", json::Value::string(tie_break)},
        {"box_format", json::Value::string(box_format)},
        {"rotated_class_offset", json::Value::number(rotated_class_offset)},
        {"end2end", json::Value::boolean(false)},
    });
}

// A value as a message shows it: its JSON text, cut when long.
std::string shown(const json::Value& v) {
    std::string s = v.dump();
    return s.size() <= 80 ? s : s.substr(0, 76) + " ...";
}

std::string quoted_list(const std::vector<std::string>& names) {
    std::string out;
    for (const std::string& n : names) out += (out.empty() ? "" : ", ") + json::Value::string(n).dump();
    return out;
}

size_t edit_distance(const std::string& a, const std::string& b) {
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        size_t diagonal = row[0];
        row[0] = i;
        for (size_t j = 1; j <= b.size(); ++j) {
            const size_t above = row[j];
            const bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                              std::tolower(static_cast<unsigned char>(b[j - 1]));
            row[j] = std::min({above + 1, row[j - 1] + 1, diagonal + (same ? 0 : 1)});
            diagonal = above;
        }
    }
    return row[b.size()];
}

// Reads one value after another, each failure prefixed with `where`.
class Reader {
public:
    // Messages name option `key` as `shown` when given (another document's name for it).
    explicit Reader(const std::string& where, std::string key = "", std::string shown = "")
        : prefix_(where.empty() ? "" : where + ": "), key_(std::move(key)), shown_(std::move(shown)) {}

    // "<key> must be <must>, got <value>": a type_error when the value is of another kind.
    [[noreturn]] void fail(const std::string& key, const std::string& must, const json::Value& got, bool wrong_kind) const {
        // key_ as shown_, also as the start of an item's name (score_threshold[2]).
        const bool renamed = !key_.empty() && key.compare(0, key_.size(), key_) == 0;
        const std::string msg =
            prefix_ + (renamed ? shown_ + key.substr(key_.size()) : key) + " must be " + must + ", got " + shown(got);
        if (wrong_kind) throw type_error(msg);
        throw std::invalid_argument(msg);
    }

    std::string choice(const std::string& key, const json::Value& v, bool optional = false) const {
        if (optional && v.is_null()) return "";
        const std::vector<std::string>& allowed = choices(key);
        const std::string must = "one of " + quoted_list(allowed) + (optional ? " (or null)" : "");
        if (!v.is_string()) fail(key, must, v, true);
        if (std::find(allowed.begin(), allowed.end(), v.as_string()) == allowed.end()) fail(key, must, v, false);
        return v.as_string();
    }

    bool boolean(const std::string& key, const json::Value& v) const {
        if (!v.is_bool()) fail(key, "true or false", v, true);
        return v.as_bool();
    }

    // A number in [0, 1] (the thresholds).
    double unit(const std::string& key, const json::Value& v) const {
        const std::string must = "a number in [0, 1]";
        if (!v.is_number()) fail(key, must, v, true);
        const double d = v.as_number();
        if (!(d >= 0.0 && d <= 1.0)) fail(key, must, v, false);
        return d;
    }

    // An integer in [low, 2^20]; `must` says so in the key's own words.
    int64_t integer(const std::string& key, const json::Value& v, int64_t low, const std::string& must) const {
        if (!v.is_number()) fail(key, must, v, true);
        if (!v.is_integer_literal() || !v.is_whole() || v.as_number() < double(low) || v.as_number() > double(kMaxInt))
            fail(key, must, v, false);
        return v.as_int();
    }

    int64_t cap(const std::string& key, const json::Value& v) const {
        if (v.is_null()) return -1;
        return integer(key, v, 0, "null (no cap) or an integer in [0, " + kMaxIntText + "]");
    }

    std::vector<double> score_threshold(const json::Value& v, bool& per_class) const {
        const std::string key = "score_threshold";
        per_class = v.is_array();
        if (!per_class) return {unit(key, v)};
        if (v.items().empty()) fail(key, "a number in [0, 1] or a list of them (one per class)", v, false);
        std::vector<double> out;
        for (size_t i = 0; i < v.items().size(); ++i) out.push_back(unit(key + "[" + std::to_string(i) + "]", v.items()[i]));
        return out;
    }

    double rotated_class_offset(const json::Value& v) const {
        const std::string key = "rotated_class_offset", must = "a finite number >= 0 (finite as float32 too)";
        if (!v.is_number()) fail(key, must, v, true);
        const double d = v.as_number();
        if (!(d >= 0.0 && d <= double(std::numeric_limits<float>::max()))) fail(key, must, v, false);
        return d;
    }

    void image_size(const json::Value& v, Options& o) const {
        if (v.is_null()) return;
        const std::string must = "[height, width], two integers in [1, " + kMaxIntText + "]";
        if (!v.is_array()) fail("image_size", must, v, true);
        if (v.items().size() != 2) fail("image_size", must, v, false);
        for (const json::Value& side : v.items())
            if (!side.is_integer_literal() || !side.is_whole() || side.as_number() < 1 || side.as_number() > double(kMaxInt))
                fail("image_size", must, v, !side.is_number());
        o.image_height = int(v.items()[0].as_int());
        o.image_width = int(v.items()[1].as_int());
    }

    void classes(const json::Value& v, Options& o) const {
        if (v.is_null()) return;
        if (!v.is_array()) fail("classes", "a list of class ids (or null: every class)", v, true);
        o.has_classes = true;
        for (size_t i = 0; i < v.items().size(); ++i)
            o.classes.push_back(int(integer("classes[" + std::to_string(i) + "]", v.items()[i], 0,
                                            "a class id, an integer in [0, " + kMaxIntText + "]")));
    }

    void model_option(const std::string& key, const json::Value& v, Options& o) const {
        if (key == "task") {
            o.task = choice(key, v, true);
        } else if (key == "bins") {
            if (!v.is_null()) o.bins = int(integer(key, v, 1, "an integer in [1, " + kMaxIntText + "] (or null)"));
        } else if (key == "keypoint_dims") {
            if (v.is_null()) return;
            const std::string must = "2 (x, y) or 3 (x, y, visibility)";
            if (!v.is_number()) fail(key, must, v, true);
            if (!v.is_integer_literal() || !(v.as_number() == 2 || v.as_number() == 3)) fail(key, must, v, false);
            o.keypoint_dims = int(v.as_int());
        } else if (key == "keypoint_decode") {
            o.keypoint_decode = choice(key, v, true);
        } else if (key == "angle_decode") {
            o.angle_decode = choice(key, v, true);
        } else if (key == "image_size") {
            image_size(v, o);
        } else if (key == "classes") {
            classes(v, o);
        } else if (key == "proto") {
            if (v.is_null()) return;
            if (!v.is_string()) fail(key, "the prototype output's name (or null)", v, true);
            o.proto = v.as_string();
        } else if (key == "proto_stride") {
            o.proto_stride = v.is_null() ? 0 : int(integer(key, v, 1, "a positive integer (at most " + kMaxIntText +
                                                                      "), or null (not checked)"));
        } else if (key == "drop_empty_masks") {
            if (!v.is_null()) o.drop_empty_masks = boolean(key, v) ? 1 : 0;
        } else if (key == "mask_objectness") {
            if (!v.is_null()) o.mask_objectness = boolean(key, v) ? 1 : 0;
        } else if (key == "hailort_version") {
            if (v.is_null()) return;  // not given: 4.23's ops
            if (!v.is_string()) fail(key, kVersionForm, v, true);
            try {
                hailort_version_numbers(v.as_string());
            } catch (const std::invalid_argument&) {
                fail(key, kVersionForm + " of HailoRT 4 or 5", v, false);
            }
            o.hailort_version = v.as_string();
        }
    }

    void preset_setting(const std::string& key, const json::Value& v, Options& o) const {
        if (key == "class_activation") o.class_activation = choice(key, v);
        else if (key == "score_threshold") o.score_threshold = score_threshold(v, o.score_threshold_per_class);
        else if (key == "score_test") o.score_test = choice(key, v);
        else if (key == "iou_threshold") o.iou_threshold = unit(key, v);
        else if (key == "iou_test") o.iou_test = choice(key, v);
        else if (key == "multi_label") o.multi_label = boolean(key, v);
        else if (key == "agnostic") o.agnostic = boolean(key, v);
        else if (key == "max_per_class") o.max_per_class = cap(key, v);
        else if (key == "max_total") o.max_total = cap(key, v);
        else if (key == "max_candidates") o.max_candidates = cap(key, v);
        else if (key == "tie_break") o.tie_break = choice(key, v);
        else if (key == "box_format") o.box_format = choice(key, v);
        else if (key == "rotated_class_offset") o.rotated_class_offset = rotated_class_offset(v);
        else if (key == "end2end") o.end2end = boolean(key, v);
    }

    // An unknown key: the closest known one, or the list of them.
    [[noreturn]] void unknown_key(const std::string& key, const std::vector<std::string>& extra_keys) const {
        std::vector<std::string> spellings = option_names();
        spellings.insert(spellings.end(), extra_keys.begin(), extra_keys.end());
        // A key spelt like an NMS JSON name is answered with the option's (nms_iou_thr -> iou_threshold).
        for (const auto& alias : detail::nms_json_setting_names()) spellings.push_back(alias.first);
        std::string close = closest_name(key, spellings);
        for (const auto& alias : detail::nms_json_setting_names())
            if (close == alias.first) close = alias.second;
        const std::string msg = prefix_ + "unknown key " + json::Value::string(key).dump() +
                                (close.empty() ? "; the keys are " + quoted_list(option_names())
                                               : "; did you mean " + json::Value::string(close).dump() + "?");
        throw type_error(msg);
    }

private:
    std::string prefix_, key_, shown_;
};

bool contains(const std::vector<std::string>& names, const std::string& name) {
    return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

const std::vector<std::string>& preset_setting_names() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> out;
        for (const auto& m : preset("hailort").members()) out.push_back(m.first);
        return out;
    }();
    return names;
}

const std::vector<std::string>& preset_names() {
    static const std::vector<std::string> names = {"hailort", "ultralytics"};
    return names;
}

const json::Value& preset(const std::string& name) {
    // HailoRT's own YOLOv8 post-process (DFC nms_postprocess, engine=cpu).
    static const json::Value hailort =
        make_preset("none", 0.2, ">=", 0.7, ">=", true, 100, -1, -1, "hailort", "yxyx_normalized", 0.0);
    // Ultralytics' predict on the same head (utils/nms.py); class-aware rotated NMS offsets centres
    // by class x max_wh = 7680 pixels.
    static const json::Value ultralytics =
        make_preset("sigmoid", 0.25, ">", 0.7, ">", false, -1, 300, 30000, "stable", "xyxy_pixels", 7680.0);
    if (name == "hailort") return hailort;
    if (name == "ultralytics") return ultralytics;
    throw std::invalid_argument("no preset " + json::Value::string(name).dump() + "; the presets are " +
                                quoted_list(preset_names()));
}

const std::vector<std::string>& choices(const std::string& key) {
    static const std::vector<std::pair<std::string, std::vector<std::string>>> table = {
        {"semantics", preset_names()},
        {"class_activation", {"none", "sigmoid"}},
        {"score_test", {">=", ">"}},
        {"iou_test", {">=", ">"}},
        {"tie_break", {"hailort", "stable"}},
        {"box_format", {"yxyx_normalized", "xyxy_normalized", "yxyx_pixels", "xyxy_pixels"}},
        {"task", {"detect", "segment", "pose", "obb"}},
        // How keypoints and angles decode (Ultralytics 8.4, nn/modules/head.py): "yolov8" (Pose,
        // YOLOv8/YOLO11) x = (raw * 2 + col) * stride, "yolo26" (Pose26) x = (raw + col + 0.5) * stride;
        // "sigmoid" (OBB) angle = (sigmoid(raw) - 0.25) * pi, "raw" (OBB26) angle = raw.
        {"keypoint_decode", {"yolov8", "yolo26"}},
        {"angle_decode", {"sigmoid", "raw"}},
    };
    for (const auto& [name, values] : table)
        if (name == key) return values;
    throw std::invalid_argument("no choice setting " + json::Value::string(key).dump());
}

const std::vector<std::string>& option_names() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> out = {"semantics"};
        const auto& settings = preset_setting_names();
        out.insert(out.end(), settings.begin(), settings.end());
        out.insert(out.end(), kModelOptions.begin(), kModelOptions.end());
        return out;
    }();
    return names;
}

std::string closest_name(const std::string& name, const std::vector<std::string>& known) {
    const size_t limit = std::max<size_t>(2, name.size() / 3);
    std::string best;
    size_t best_distance = limit + 1;
    for (const std::string& k : known) {
        const size_t d = edit_distance(name, k);
        if (d < best_distance) {
            best = k;
            best_distance = d;
        }
    }
    return best;
}

Options read_options(const json::Value& object, const std::string& where, const std::vector<std::string>& extra_keys,
                     const std::vector<OptionAlias>& aliases) {
    const Reader read(where);
    if (!object.is_object()) read.fail("the options", "an object of named settings", object, true);
    std::vector<std::string> known = extra_keys;
    for (const OptionAlias& a : aliases) {
        if (!contains(preset_setting_names(), a.setting))
            throw std::logic_error("read_options: alias " + a.alias + " of " + a.setting + ", which is not a preset setting");
        known.push_back(a.alias);
    }
    for (const auto& m : object.members())
        if (!contains(option_names(), m.first) && !contains(known, m.first)) read.unknown_key(m.first, known);

    Options o;
    if (const json::Value* s = object.find("semantics")) o.semantics = read.choice("semantics", *s);
    const json::Value& fallback = preset(o.semantics);
    for (const std::string& key : preset_setting_names()) {
        const json::Value* given = object.find(key);
        std::string shown = key;  // the name the object gives it under
        for (const OptionAlias& a : aliases) {
            const json::Value* other = a.setting == key ? object.find(a.alias) : nullptr;
            if (!other) continue;
            if (given)
                throw std::invalid_argument((where.empty() ? "" : where + ": ") + a.alias + " and " + shown +
                                            ": give one of them (both are names of " + key + ")");
            given = other;
            shown = a.alias;
        }
        if (given) o.explicit_settings.push_back(key);
        Reader(where, key, shown).preset_setting(key, given ? *given : *fallback.find(key), o);
    }
    for (const std::string& key : kModelOptions)
        if (const json::Value* v = object.find(key)) read.model_option(key, *v, o);
    return o;
}

void detail::check_option(const std::string& key, const json::Value& value, const std::string& shown,
                          const std::string& where) {
    const Reader read(where, key, shown);
    Options o;
    if (contains(preset_setting_names(), key)) read.preset_setting(key, value, o);
    else read.model_option(key, value, o);
}

std::vector<double> thresholds_per_class(const Options& options, int num_classes) {
    const size_t nc = size_t(std::max(num_classes, 0));
    if (options.score_threshold_per_class && options.score_threshold.size() != nc)
        throw std::invalid_argument("score_threshold must be a number or one per class (" + std::to_string(nc) +
                                    "), got " + std::to_string(options.score_threshold.size()) + " values");
    std::vector<double> per(nc, options.score_threshold.empty() ? 0.0 : options.score_threshold[0]);
    if (options.score_threshold_per_class) per = options.score_threshold;
    if (!options.has_classes) return per;
    std::string bad;
    std::vector<bool> allowed(nc, false);
    for (int c : options.classes) {
        if (c >= 0 && size_t(c) < nc) allowed[size_t(c)] = true;
        else bad += (bad.empty() ? "" : ", ") + std::to_string(c);
    }
    if (!bad.empty())
        throw std::invalid_argument("classes [" + bad + "] out of range [0, " + std::to_string(nc) + ")");
    for (size_t c = 0; c < nc; ++c)
        if (!allowed[c]) per[c] = std::numeric_limits<double>::infinity();
    return per;
}

std::string keypoint_decode(const Options& options, int bins) {
    return !options.keypoint_decode.empty() ? options.keypoint_decode : bins == 1 ? "yolo26" : "yolov8";
}

std::string angle_decode(const Options& options, int bins) {
    return !options.angle_decode.empty() ? options.angle_decode : bins == 1 ? "raw" : "sigmoid";
}

std::array<int, 3> hailort_version_numbers(const std::string& version) {
    std::array<int, 3> out{0, 0, 0};
    size_t part = 0, digits = 0;
    for (char ch : version) {
        if (ch == '.') {
            if (digits == 0 || ++part > 2) part = 3;  // an empty part or a fourth one: malformed
            if (part == 3) break;
            digits = 0;
        } else if (ch >= '0' && ch <= '9' && digits < 4) {
            out[part] = out[part] * 10 + (ch - '0');
            ++digits;
        } else {
            part = 3;  // another character, or a part of more than 4 digits
            break;
        }
    }
    if (part == 3 || part == 0 || digits == 0 || (out[0] != 4 && out[0] != 5))
        throw std::invalid_argument("hailort_version must be " + kVersionForm + " of HailoRT 4 or 5, got " +
                                    json::Value::string(version).dump());
    return out;
}

bool hailort_v5_ops(const std::string& version) {
    // HailoRT 5.0.1 changed the YOLOv8 / YOLOv5 ops' loops (docs/presets.md); 4.x and 5.0.0 keep 4.23's.
    return hailort_version_numbers(version) >= std::array<int, 3>{5, 0, 1};
}

bool drop_empty_masks(const Options& options) {
    return options.drop_empty_masks < 0 ? options.semantics == "ultralytics" : options.drop_empty_masks == 1;
}

}  // namespace hailo_decode::setup
