#include "plugin_config.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <sys/stat.h>

#include "coco_labels.hpp"

namespace hailo_decode::tappas {

namespace {

const std::vector<std::string> kPluginKeys = {"labels",        "output_format_type", "nms_json",     "keypoint_threshold",
                                              "heads",         "obb_user_meta",      "outputs_size", "outputs_name",
                                              "anchors",       "input_shape",        "strides"};
// libyolo_hailortpp_post.so's names, read and checked by the core as the settings they name.
const std::vector<setup::OptionAlias> kAliases = {{"detection_threshold", "score_threshold"},
                                                  {"max_boxes", "max_total"}};

bool is_regular_file(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string read_text(const std::string& path, const std::string& what) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    if (in) text << in.rdbuf();
    if (!in || in.bad()) throw ConfigError(path + ": cannot read " + what);
    return text.str();
}

json::Value parse_file(const std::string& path, const std::string& what) {
    const std::string text = read_text(path, what);
    try {
        return json::parse(text);
    } catch (const std::exception& e) {
        throw ConfigError(path + ": not valid JSON: " + e.what());
    }
}

// The folder of `path` (with its trailing '/'), "" for a bare file name.
std::string folder_of(const std::string& path) {
    const size_t slash = path.find_last_of('/');
    return slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
}

[[noreturn]] void bad(const std::string& path, const std::string& key, const std::string& must, const json::Value& got) {
    throw ConfigError(path + ": " + key + " must be " + must + ", got " + got.dump());
}

void read_labels(PluginConfig& c, const json::Value& v) {
    if (!v.is_array()) bad(c.path, "labels", "a list of strings (\"unlabeled\" first, then one per class)", v);
    c.labels.clear();
    for (const json::Value& item : v.items()) {
        if (!item.is_string()) bad(c.path, "labels", "a list of strings", item);
        c.labels.push_back(item.as_string());
    }
    c.labels_given = true;
}

OutputFormat read_output_format(const std::string& path, const json::Value& v) {
    static const std::pair<const char*, OutputFormat> names[] = {{"HAILO_FORMAT_TYPE_AUTO", OutputFormat::Auto},
                                                                 {"HAILO_FORMAT_TYPE_UINT8", OutputFormat::U8},
                                                                 {"HAILO_FORMAT_TYPE_UINT16", OutputFormat::U16},
                                                                 {"HAILO_FORMAT_TYPE_FLOAT32", OutputFormat::F32}};
    if (v.is_string())
        for (const auto& [name, format] : names)
            if (v.as_string() == name) return format;
    bad(path, "output_format_type",
        "hailonet's output-format-type: HAILO_FORMAT_TYPE_AUTO, HAILO_FORMAT_TYPE_UINT8, HAILO_FORMAT_TYPE_UINT16 or "
        "HAILO_FORMAT_TYPE_FLOAT32",
        v);
}

void read_nms_json(PluginConfig& c, const json::Value& v) {
    if (v.is_object()) {
        c.nms_json = v;
        c.nms_json_where = c.path + ": nms_json";
        return;
    }
    if (!v.is_string() || v.as_string().empty())
        bad(c.path, "nms_json", "the Model Zoo NMS JSON: an object, or its file's path (relative to this file)", v);
    const std::string& given = v.as_string();
    const std::string file = given[0] == '/' ? given : folder_of(c.path) + given;
    if (!is_regular_file(file)) throw ConfigError(c.path + ": nms_json: no file " + file);
    c.nms_json = parse_file(file, "the NMS JSON (nms_json)");
    if (!c.nms_json->is_object()) throw ConfigError(file + ": the NMS JSON (nms_json) must be an object");
    c.nms_json_where = file;
}

// The heads' description checked now (keys, kinds, names, strides); their names against the
// outputs when the first frame shows them (FilterState::build).
void read_heads_key(PluginConfig& c, const json::Value& v) {
    try {
        setup::read_heads(v, c.path);
    } catch (const std::exception& e) {
        throw ConfigError(e.what());
    }
    c.heads = v;
}

// Runs the core's checks; its messages name the key, prefixed here with the file when they do not.
setup::Options read_options_of(const json::Value& object, const std::string& path) {
    try {
        setup::Options options = setup::read_options(object, path, kPluginKeys, kAliases);
        options.wording = setup::Wording::ConfigFile;  // pairing's advice names this file's keys
        return options;
    } catch (const std::exception& e) {
        const std::string what = e.what();
        if (path.empty() || what.compare(0, path.size(), path) == 0) throw ConfigError(what);
        throw ConfigError(path + ": " + what);
    }
}

// A key of the file that gives `setting`, under its own name or an alias.
bool document_gives(const json::Value& document, const std::string& setting) {
    if (document.find(setting) != nullptr) return true;
    for (const setup::OptionAlias& a : kAliases)
        if (a.setting == setting && document.find(a.alias) != nullptr) return true;
    return false;
}

// libyolov5seg_post.so's keys (or its entry point's name): its heads and settings, from the core.
void read_yolov5seg(PluginConfig& c, const std::string& function_name) {
    if (function_name != "yolov5seg" && !setup::is_yolov5seg_json(c.document)) return;
    if (c.heads || c.nms_json) {
        const std::string key = c.heads ? "heads" : "nms_json";
        if (!setup::is_yolov5seg_json(c.document))  // only the entry point's name asks for TAPPAS' reading
            throw ConfigError(c.path + ": function-name yolov5seg reads libyolov5seg_post.so's keys (outputs_name, "
                              "anchors, strides, ...) or its defaults, and " + key +
                              " names the heads: use function-name filter with " + key);
        throw ConfigError(c.path + ": " + key +
                          " and libyolov5seg_post.so's keys (outputs_name, anchors, strides, ...) both name the heads: "
                          "give one of them");
    }
    try {
        c.yolov5seg = setup::read_yolov5seg_json(c.document, c.path);
    } catch (const std::exception& e) {
        throw ConfigError(e.what());
    }
    c.heads = c.yolov5seg->heads;
}

}  // namespace

const std::vector<std::string>& plugin_keys() { return kPluginKeys; }

PluginConfig read_plugin_config(const std::string& config_path, const std::string& function_name) {
    PluginConfig c;
    c.labels = coco_labels();
    c.document = json::Value::object({});
    if (config_path.empty() || config_path == "NULL" || !is_regular_file(config_path)) {
        // libyolo_hailortpp_post.so's behaviour (COCO's labels, default settings), with a word when
        // a path was given: a typo there would otherwise go unnoticed.
        if (!config_path.empty() && config_path != "NULL")
            c.notice = "config-path " + config_path + " is not a file: using the defaults (COCO's labels, the "
                       "hailort preset)";
        read_yolov5seg(c, function_name);
        if (c.yolov5seg && !c.notice.empty())
            c.notice = "config-path " + config_path + " is not a file: using libyolov5seg_post.so's defaults "
                       "(yolov5n-seg at 640, COCO's labels)";
        c.options = resolve_options(c, c.yolov5seg ? &c.yolov5seg->settings : nullptr);
        return c;
    }
    c.path = config_path;
    c.document = parse_file(config_path, "the config file");
    if (!c.document.is_object()) bad(c.path, "the config file", "a JSON object", c.document);
    for (const auto& [key, value] : c.document.members()) {
        if (key == "labels") {
            read_labels(c, value);
        } else if (key == "output_format_type") {
            c.output_format = read_output_format(c.path, value);
        } else if (key == "keypoint_threshold") {
            if (!value.is_number() || !(value.as_number() >= 0.0 && value.as_number() <= 1.0))
                bad(c.path, key, "a number in [0, 1]", value);
            c.keypoint_threshold = float(value.as_number());
        } else if (key == "nms_json") {
            read_nms_json(c, value);
        } else if (key == "obb_user_meta") {
            if (!value.is_bool()) bad(c.path, key, "true or false", value);
            c.obb_user_meta = value.as_bool();
        } else if (key == "heads") {
            read_heads_key(c, value);
        }
    }
    if (c.heads && c.nms_json)
        throw ConfigError(c.path + ": heads and nms_json both name the heads: give one of them");
    // Every other key is a DecoderConfig setting or model option: checked now, so that a bad file is
    // reported when the pipeline starts, not at its first frame.
    read_yolov5seg(c, function_name);
    c.options = resolve_options(c, c.yolov5seg ? &c.yolov5seg->settings : nullptr);
    return c;
}

setup::Options resolve_options(const PluginConfig& c, const json::Value* nms_settings) {
    if (nms_settings == nullptr || !nms_settings->is_object() || nms_settings->members().empty())
        return read_options_of(c.document, c.path);
    // The NMS JSON's settings first, the file's own (under either name) replacing them.
    std::vector<std::pair<std::string, json::Value>> merged;
    for (const auto& member : nms_settings->members())
        if (!document_gives(c.document, member.first)) merged.push_back(member);
    for (const auto& member : c.document.members()) merged.push_back(member);
    return read_options_of(json::Value::object(std::move(merged)), c.path);
}

}  // namespace hailo_decode::tappas
