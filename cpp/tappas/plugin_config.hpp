// The hailofilter config file (config-path): libyolo_hailortpp_post.so's keys (labels;
// detection_threshold and max_boxes, which the core reads as score_threshold and max_total), the
// plugin's own (output_format_type, nms_json, heads, keypoint_threshold, obb_user_meta), and every DecoderConfig setting and model option under its own name, read
// and checked by the core's setup::read_options (hailo_decode/setup.hpp): the one implementation
// of the presets and checks, shared with the Python package.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "hailo_decode/json.hpp"
#include "hailo_decode/setup.hpp"

namespace hailo_decode::tappas {

// hailonet's output-format-type: what the output buffers hold, whatever the tensor metadata says
// (hailonet builds the metadata from the HEF, so with FLOAT32 the data are float32 while the
// metadata still says UINT8 or UINT16).
enum class OutputFormat : uint8_t { Auto, U8, U16, F32 };

// A bad config file: the message is one line naming the file and the key.
struct ConfigError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct PluginConfig {
    std::string path;                    // "" when config-path is "NULL" or names no file
    std::string notice;                  // a config-path that names no file: said once, defaults used
    std::vector<std::string> labels;     // by TAPPAS class id: [0] "unlabeled", class k at k + 1
    bool labels_given = false;           // false: COCO's names
    OutputFormat output_format = OutputFormat::Auto;
    float keypoint_threshold = 0.5f;     // pose: HailoLandmarks' threshold (hailooverlay draws points at or above it)
    json::Value document;                // the whole file (an object; empty object without a file)
    std::optional<json::Value> nms_json; // the Model Zoo NMS JSON document (inline or read from its file)
    std::string nms_json_where;          // its file, or "<config>: nms_json", for messages
    std::optional<json::Value> heads;    // "heads": the heads named (read by setup::read_heads)
    bool obb_user_meta = false;          // OBB: also the exact rotated box as a HailoUserMeta (opt-in)
    // TAPPAS' libyolov5seg_post.so config (its keys, or function-name yolov5seg): its heads, read by
    // the core (setup::read_yolov5seg_json); masks then cropped as that post-process crops them.
    std::optional<setup::Yolov5SegJson> yolov5seg;
    setup::Options options;              // the file's settings and model options, checked
};

// The keys the plugin reads itself; read_options skips them.
const std::vector<std::string>& plugin_keys();

// Reads config-path: "NULL" or a path that names no file gives the defaults (COCO's labels, the
// "hailort" preset), as libyolo_hailortpp_post.so does. Throws ConfigError (one line naming the file
// and the key) for a file that cannot be read, is not JSON, or has an unknown key, a wrong type or
// a value out of range.
// function_name "yolov5seg" (libyolov5seg_post.so's entry point) reads the file as that
// post-process's config even without its keys, or without a file (its defaults).
PluginConfig read_plugin_config(const std::string& config_path, const std::string& function_name = "filter");

// The options a Decoder is built with: nms_settings (an NMS JSON's, or nullptr) under the config
// file's own settings, which win (detection_threshold and max_boxes are read by the core as
// score_threshold and max_total). Throws ConfigError.
setup::Options resolve_options(const PluginConfig& config, const json::Value* nms_settings);

}  // namespace hailo_decode::tappas
