// Setting up a Decoder from what a user says: DecoderConfig's named settings and model options,
// the two presets, the check of every value, the pairing of outputs into heads, and the DFC /
// Model Zoo NMS JSON. One implementation, read by the Python package (DecoderConfig, through the
// binding) and by the TAPPAS plugin (its JSON config file) alike.
//
//   json::Value doc = json::parse(text);
//   setup::Options opt = setup::read_options(doc, "config.json");   // every key and value checked
//   Config cfg = setup::make_config(outputs, opt);                   // paired, checked, ready
//   Decoder dec(cfg);
//
// Every failure is a std::invalid_argument whose message names the key or output, what it must be
// and what it got (prefixed with `where` when one is given).
#pragma once

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "hailo_decode/json.hpp"
#include "hailo_decode/types.hpp"

namespace hailo_decode::setup {

// The failure of a value of the wrong kind (a string where a number belongs) or of an unknown key:
// still a std::invalid_argument; Python raises it as TypeError, every other failure as ValueError.
struct type_error : std::invalid_argument {
    using std::invalid_argument::invalid_argument;
};

// One output as pairing sees it: its name and logical (H, W, C).
struct OutputShape {
    std::string name;
    int height = 0, width = 0, channels = 0;
};

// A head by output names ("" : none). stride 0: derived from the grid and the input size.
//   DFL:    box, cls, and at most one of mask (segmentation), kpt (pose), angle (OBB).
//   YOLOV5: box == cls == the one tensor; anchors (w, h) pairs in input pixels.
//   YOLOX:  box = reg (4 channels), obj (1 channel), cls.
struct NamedHead {
    HeadKind kind = HeadKind::DFL;
    std::string box, cls, mask, kpt, angle, obj;
    int stride = 0;
    std::vector<std::pair<int, int>> anchors;
    // SSD (kind SSD: box = reg, cls): anchors (w, h) normalized by the input size, and the box
    // coding, the same on every head (setup/pairing_ssd.hpp).
    std::vector<std::pair<double, double>> box_anchors;
    SsdCoding ssd;
};

// The settings a preset fills, in DecoderConfig's order (Python: SEMANTICS["hailort"] keys):
// class_activation, score_threshold, score_test, iou_threshold, iou_test, multi_label, agnostic,
// max_per_class, max_total, max_candidates, tie_break, box_format, rotated_class_offset, end2end.
const std::vector<std::string>& preset_setting_names();
// The preset names: "hailort" (HailoRT's own post-process), "ultralytics" (Ultralytics' predict).
const std::vector<std::string>& preset_names();
// A preset: an object of every preset_setting_names() key (null: no cap). Throws for other names.
const json::Value& preset(const std::string& name);
// The values a named choice accepts: "semantics" (preset_names()), "class_activation",
// "score_test", "iou_test", "tie_break", "box_format", "task", "keypoint_decode", "angle_decode".
const std::vector<std::string>& choices(const std::string& key);
// Every key read_options accepts: "semantics", the preset settings, then the model options
// (task, bins, keypoint_dims, keypoint_decode, angle_decode, image_size, classes, proto,
// proto_stride, drop_empty_masks, mask_objectness, hailort_version).
const std::vector<std::string>& option_names();
// The known name closest to `name` (edit distance), "" when none is close: for "did you mean".
std::string closest_name(const std::string& name, const std::vector<std::string>& known);

// Who reads pairing's advice: the Python package (its keywords and classes: heads=[Head(...)],
// task='obb', DecoderConfig.from_nms_json) or a config file (the TAPPAS plugin: its keys "heads",
// "task", "proto", "nms_json"). Only the advice's wording differs; the checks are the same.
enum class Wording : uint8_t { Python, ConfigFile };

// Resolved and checked options: each preset setting from the object or, when absent, the preset;
// model options as given (empty / 0 / -1: not given).
struct Options {
    std::string semantics = "hailort";
    // --- preset settings ---
    std::string class_activation;          // "none" | "sigmoid"
    std::vector<double> score_threshold;   // one value, or one per class (count checked by make_config)
    bool score_threshold_per_class = false;  // given as a list (then one per class, even of one class)
    std::string score_test;                // ">=" | ">"
    double iou_threshold = 0.0;
    std::string iou_test;                  // ">=" | ">"
    bool multi_label = false, agnostic = false;
    int64_t max_per_class = -1, max_total = -1, max_candidates = -1;  // -1: None (no cap)
    std::string tie_break;                 // "hailort" | "stable"
    std::string box_format;                // yxyx_normalized | xyxy_normalized | yxyx_pixels | xyxy_pixels
    double rotated_class_offset = 0.0;
    bool end2end = false;
    std::vector<std::string> explicit_settings;  // preset settings the object gave
    // --- model options ---
    std::string task;                      // "" | detect | segment | pose | obb
    int bins = 0;                          // 0: from the box tensors
    int keypoint_dims = 0;                 // 0: 3 (x, y, visibility)
    std::string keypoint_decode;           // "" | yolov8 | yolo26 ("": what the box tensors imply)
    std::string angle_decode;              // "" | sigmoid | raw
    int image_height = 0, image_width = 0; // 0: from the strides or the finest grid (stride 8)
    bool has_classes = false;
    std::vector<int> classes;              // allow-list of class ids (range checked by make_config)
    std::string proto;                     // "": found by shape; else the prototype output's name
    int proto_stride = 4;                  // 0: not checked (Python None)
    int drop_empty_masks = -1;             // -1: the preset's (ultralytics: 1, hailort: 0)
    int mask_objectness = -1;              // YOLOv5-seg: coefficients times the objectness (-1: yes, as HailoRT's
                                           // op and YOLOv5's NMS; 0: raw, as TAPPAS' libyolov5seg_post.so)
    // The HailoRT whose ops tie_break "hailort" reproduces: "X.Y" or "X.Y.Z", major 4 or 5. A
    // model option, not a preset setting: it names the runtime a model is deployed on, as
    // image_size names its input, and means nothing to tie_break "stable".
    std::string hailort_version = "4.23";
    // --- not a key: set by the caller (read_options leaves Python's) ---
    Wording wording = Wording::Python;     // the words pairing's errors advise in
};

// Another name a caller's files use for a preset setting: the TAPPAS plugin reads
// libyolo_hailortpp_post.so's detection_threshold as score_threshold and max_boxes as max_total.
struct OptionAlias {
    std::string alias, setting;
};

// Reads an object of options: keys are option_names() (plus `extra_keys`, which are skipped: the
// caller reads them, e.g. the plugin's "labels"). An unknown key names the closest known one; a
// wrong type or a value out of range names the key, what it must be and what it got. An alias is
// read and checked as its setting, messages naming the alias; an object giving both is refused.
Options read_options(const json::Value& object, const std::string& where = "",
                     const std::vector<std::string>& extra_keys = {}, const std::vector<OptionAlias>& aliases = {});

// What options imply once the class count and box bins are known (make_config reads them; Python's
// DecoderConfig shows them):
// The score threshold of every class, +inf outside the `classes` allow-list; checks a per-class
// score_threshold has num_classes values and the allow-list's ids lie in [0, num_classes).
std::vector<double> thresholds_per_class(const Options& options, int num_classes);
// keypoint_decode and angle_decode as given, else what the box tensors imply: YOLO26's Pose26 /
// OBB26 forms ("yolo26", "raw") for 4-channel box tensors (bins 1, only YOLO26 exports them),
// YOLOv8/YOLO11's ("yolov8", "sigmoid") otherwise.
std::string keypoint_decode(const Options& options, int bins);
std::string angle_decode(const Options& options, int bins);
// drop_empty_masks as given, else the preset's: Ultralytics' predictor drops them, HailoRT keeps them.
bool drop_empty_masks(const Options& options);
// hailort_version as (major, minor, patch) (patch 0 when not given); throws std::invalid_argument
// naming the key, the form and the value for a malformed one or a major other than 4 or 5.
std::array<int, 3> hailort_version_numbers(const std::string& version);
// Whether that version's YOLOv8 / YOLOv5 ops collect candidates in 5.0.1's order and pre-filter on
// quantized thresholds (Settings::hailort_v5): 5.0.1 and later.
bool hailort_v5_ops(const std::string& version);

// The heads of a DFC / Model Zoo NMS JSON document (bbox_decoders: YOLOv8 reg_layer/cls_layer,
// YOLOv5 encoded_layer with anchor w/h lists, YOLOX reg/objectness/cls layers; layer names match an
// output exactly or as the part after the last '/') and the settings it carries (nms_scores_th ->
// score_threshold, nms_iou_th -> iou_threshold, max_proposals_per_class -> max_per_class,
// image_dims -> image_size), as an object of option names that read_options reads.
struct NmsJson {
    std::vector<NamedHead> heads;
    json::Value settings;       // object: the options the document sets
    int64_t classes = -1;       // "classes", -1: absent (checked against the class outputs)
    int64_t regression_length = -1;
};
NmsJson read_nms_json(const json::Value& doc, const std::vector<OutputShape>& outputs, const std::string& where = "");

// The config file of TAPPAS' libyolov5seg_post.so (keys outputs_size, outputs_name, anchors,
// input_shape, strides; iou_threshold and score_threshold are settings), read for the TAPPAS
// plugin: its heads (for read_heads), its prototype, and the options that reproduce that
// post-process (setup/yolov5seg_json.cpp says which), to be read under the file's own. A key the
// file does not give takes the post-process's default (yolov5n-seg at 640).
struct Yolov5SegJson {
    json::Value heads;                              // [{"output", "anchors", "stride"}, ...]
    std::string proto;                              // outputs_name[0]
    std::vector<std::pair<std::string, int>> grids; // each head's output and its outputs_size
    json::Value settings;                           // object of option names
};
const std::vector<std::string>& yolov5seg_json_keys();
bool is_yolov5seg_json(const json::Value& doc);  // gives any of yolov5seg_json_keys()
Yolov5SegJson read_yolov5seg_json(const json::Value& doc, const std::string& where = "");
// Each name of outputs_name among the outputs, each head's grid its outputs_size (messages name
// the key).
void check_yolov5seg_outputs(const Yolov5SegJson& file, const std::vector<OutputShape>& outputs,
                             const std::string& where = "");

// The heads a config names: the TAPPAS plugin's "heads" key, and DecoderConfig(heads=[{...}, ...])
// in Python (the same dicts). A list of objects, one a head, all of one family:
//   DFL (YOLOv8/YOLO11/YOLO26): {"box": name, "cls": name, "stride": 8, and at most one of
//                                "angle" (OBB), "kpt" (pose), "mask" (segmentation): name}
//   YOLOv5/YOLOv7 anchor head:  {"output": name, "anchors": [[w, h], ...], "stride": 8}
//   YOLOX:                      {"reg": name, "obj": name, "cls": name, "stride": 8}
// "stride" may be left out (or null): derived from the grid and the input size. The prototype
// output of segmentation is the "proto" option. Each failure is one line naming the key as
// heads[i].key (after `where`): an unknown key names the closest known one and a value of the
// wrong kind is a type_error; a missing name, a head mixing two families' keys or heads of two
// families, a stride or anchor out of range are std::invalid_argument. With `outputs`, each name
// must be one of them (the closest is named).
std::vector<NamedHead> read_heads(const json::Value& heads, const std::string& where = "",
                                  const std::vector<OutputShape>* outputs = nullptr);

// What pairing found: the head family, heads with every stride resolved, the input size, the task
// and the counts the core needs.
struct Layout {
    HeadKind kind = HeadKind::DFL;
    std::vector<NamedHead> heads;  // finest grid first when paired by shape; as given otherwise
    int image_height = 0, image_width = 0;
    std::string task;              // detect | segment | pose | obb
    int num_classes = 0;
    int bins = 0;                  // 0 for YOLOv5 / YOLOX heads
    int num_keypoints = 0, keypoint_dims = 3;
    std::string proto;             // "" when not segmentation
    SsdCoding ssd;                 // SSD heads' coding
};
// Pairs outputs into heads by shape (heads == nullptr) or checks the heads given, resolves the
// strides (stride x grid = input size for every head) and checks every output belongs to exactly
// one head of the right shape. Uses options' task, bins, keypoint_dims, proto, proto_stride,
// image_size.
Layout pair_outputs(const std::vector<OutputShape>& outputs, const Options& options,
                    const std::vector<NamedHead>* heads = nullptr);

// The core Config (hailo_decode/types.hpp) for these outputs: pair_outputs (or the heads given),
// then every setting into Settings (box_format, thresholds per class with the allow-list, ...);
// checked as Decoder's constructor checks it.
Config make_config(const std::vector<TensorSpec>& outputs, const Options& options,
                   const std::vector<NamedHead>* heads = nullptr);
// make_config's second half: the Config of a layout already paired (heads named, strides resolved).
Config config_for_layout(const std::vector<TensorSpec>& outputs, const Layout& layout, const Options& options);
// The Settings part of it: throws for a per-class score_threshold of the wrong length, classes out
// of range, end2end on YOLOv5/YOLOX heads.
Settings make_settings(const Layout& layout, const Options& options);

}  // namespace hailo_decode::setup
