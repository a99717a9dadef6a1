// Setup: the JSON parser (valid and invalid documents, positions, depth, escapes, duplicates),
// read_options (every key's kind and range, unknown keys), read_nms_json (real Model Zoo JSONs) and
// the Config they make.
#include <cmath>
#include <string>

#include "hailo_decode/json.hpp"
#include "hailo_decode/setup.hpp"
#include "check.hpp"

using namespace hailo_decode;

static bool parse_fails(const std::string& text, const char* needle) {
    return throws([&] { json::parse(text); }, needle);
}

static void test_json_values() {
    const json::Value v = json::parse(R"( {"a": [1, -2.5, 1e2, true, false, null], "b": {"c": "x"}, "d": 16.0} )");
    CHECK(v.is_object() && v.members().size() == 3 && v.members()[0].first == "a");
    const auto& a = v.find("a")->items();
    CHECK(a.size() == 6);
    CHECK(a[0].is_integer_literal() && a[0].as_int() == 1);
    CHECK(a[1].as_number() == -2.5 && !a[1].is_whole() && !a[1].is_integer_literal());
    CHECK(a[2].is_whole() && !a[2].is_integer_literal() && a[2].as_int() == 100);
    CHECK(a[3].as_bool() && !a[4].as_bool() && a[5].is_null());
    CHECK(v.find("b")->find("c")->as_string() == "x");
    CHECK(v.find("d")->is_whole() && !v.find("d")->is_integer_literal());
    CHECK(v.find("zz") == nullptr);
    CHECK(json::parse("-0").as_number() == 0.0 && json::parse("0").is_integer_literal());
    CHECK(json::parse("9223372036854775807").as_int() == INT64_MAX && json::parse("-9223372036854775808").is_int64());
    CHECK(json::parse("9223372036854775807").dump() == "9223372036854775807");
    CHECK(json::parse("9199999999999999488").dump() == "9199999999999999488");
    const json::Value big = json::parse("100000000000000000000000000000");  // beyond int64
    CHECK(big.is_integer_literal() && big.as_number() == 1e29);
    CHECK(throws([&] { big.as_int(); }, "not an integer within 64 bits"));
    CHECK(json::parse("1e-400").as_number() == 0.0);  // underflow reads as 0
    CHECK(json::parse("[]").items().empty() && json::parse("{}").members().empty());
    CHECK(throws([] { json::parse("1").as_string(); }, "JSON value is a number, not a string"));
}

static void test_json_escapes() {
    CHECK(json::parse(R"("a\"b\\c\/d\b\f\n\r\t")").as_string() == "a\"b\\c/d\b\f\n\r\t");
    CHECK(json::parse(R"("\u00e9\u20AC")").as_string() == "\xC3\xA9\xE2\x82\xAC");      // é €
    CHECK(json::parse(R"("\ud83d\ude00")").as_string() == "\xF0\x9F\x98\x80");          // a surrogate pair
    CHECK(json::parse("\"\xC3\xA9\"").as_string() == "\xC3\xA9");                        // raw UTF-8 kept
    CHECK(parse_fails(R"("\ud83d")", "column 2: a high surrogate"));
    CHECK(parse_fails(R"("\ud83dx")", "without a low one"));
    CHECK(parse_fails(R"("\ude00")", "a low surrogate"));
    CHECK(parse_fails(R"("\u12g4")", "expected 4 hex digits after \\u, got 'g'"));
    CHECK(parse_fails(R"("\x")", "unknown escape \\ followed by 'x'"));
    CHECK(parse_fails("\"\\\xC3\xA9\"", "unknown escape \\ followed by byte 0xC3"));
    CHECK(parse_fails("\"a\nb\"", "line 1, column 3: a control character"));
    CHECK(parse_fails("\"\xC0\xAF\"", "invalid UTF-8"));           // overlong '/'
    CHECK(parse_fails("\"\xED\xA0\x80\"", "invalid UTF-8"));       // an encoded surrogate
    CHECK(parse_fails("\"\xE2\x82\"", "cut short"));
    CHECK(parse_fails("\"abc", "line 1, column 1: a string that never ends"));
}

static void test_json_errors_and_positions() {
    CHECK(parse_fails("", "line 1, column 1: the text is empty"));
    CHECK(parse_fails("  \n ", "line 2, column 2: the text is empty"));
    CHECK(parse_fails("{\n  \"a\": 1,\n  \"b\": tru\n}", "line 3, column 8: expected a JSON value, got 't'"));
    CHECK(parse_fails("{\"a\": 1,}", "line 1, column 9: expected a key"));
    CHECK(parse_fails("[1, 2,]", "line 1, column 7: expected a JSON value, got ']'"));
    CHECK(parse_fails("[1 2]", "line 1, column 4: expected ',' or ']' after a list item, got '2'"));
    CHECK(parse_fails("{\"a\" 1}", "expected ':' after a key, got '1'"));
    CHECK(parse_fails("{\"a\": 1 \"b\": 2}", "expected ',' or '}' after an object member"));
    CHECK(parse_fails("{\"a\": 1, \"b\": 2, \"a\": 3}", "line 1, column 18: duplicate key \"a\""));
    CHECK(parse_fails("{} x", "line 1, column 4: unexpected 'x' after the JSON value"));
    CHECK(parse_fails("NaN", "NaN and Infinity are not JSON numbers"));
    CHECK(parse_fails("[Infinity]", "NaN and Infinity"));
    CHECK(parse_fails("-Infinity", "expected a digit after '-'"));
    CHECK(parse_fails("01", "leading zeros"));
    CHECK(parse_fails("1.", "expected a digit after '.'"));
    CHECK(parse_fails("1e", "expected a digit in the exponent"));
    CHECK(parse_fails("+1", "expected a JSON value, got '+'"));
    CHECK(parse_fails("1e400", "number 1e400 is out of range"));
    CHECK(parse_fails("{'a': 1}", "expected a key (a string in double quotes), got '''"));
    CHECK(parse_fails("// c\n{}", "expected a JSON value, got '/'"));
    CHECK(parse_fails("\xEF\xBB\xBF{}", "byte order mark"));
    CHECK(parse_fails(std::string("[\x01]"), "got byte 0x01"));
    // Columns count characters: "é" is one.
    CHECK(parse_fails("[\"\xC3\xA9\", x]", "line 1, column 7: expected a JSON value, got 'x'"));
}

static void test_json_limits() {
    std::string deep64(64, '['), deep65(65, '[');
    deep64 += std::string(64, ']');
    deep65 += std::string(65, ']');
    CHECK(json::parse(deep64).is_array());
    CHECK(parse_fails(deep65, "column 65: lists and objects nest deeper than 64 levels"));
    std::string hostile(100000, '[');  // no stack overflow
    CHECK(parse_fails(hostile, "nest deeper than 64"));
    std::string huge = "\"" + std::string((size_t(16) << 20), 'a') + "\"";
    CHECK(parse_fails(huge, "more than the 16 MiB"));
}

static void test_json_dump() {
    CHECK(json::parse(R"({"a": [1, 2.5, "x\"y", true, null], "b": {}})").dump() ==
          R"({"a": [1, 2.5, "x\"y", true, null], "b": {}})");
    CHECK(json::Value::number(2.0).dump() == "2.0");
    CHECK(json::Value::integer(2).dump() == "2");
    CHECK(json::Value::number(-0.5).dump() == "-0.5");
    CHECK(json::Value::number(1e30).dump() == "1e+30");
    CHECK(json::Value::number(0.1).dump() == "0.1");
    CHECK(json::Value::number(NAN).dump() == "NaN");
    CHECK(json::Value::number(-INFINITY).dump() == "-Infinity");
    CHECK(json::parse("100000000000000000000000000000").dump() == "100000000000000000000000000000");
    CHECK(json::Value::integer_beyond_int64(1e30).dump() == "1e+30");
    CHECK(json::Value::string("a\nb\x01").dump() == "\"a\\nb\\u0001\"");
    // What dump writes, parse reads back (finite values).
    const std::string text = R"([0.30000000000000004, -1e-300, 123456789012, "\u00e9"])";
    CHECK(json::parse(json::parse(text).dump()).dump() == json::parse(text).dump());
}


// ---- read_options ----------------------------------------------------------------------------

static setup::Options options(const std::string& text) { return setup::read_options(json::parse(text)); }

static bool options_fail(const std::string& text, const char* needle) {
    return throws([&] { options(text); }, needle);
}

static bool options_type_error(const std::string& text) {
    try {
        options(text);
    } catch (const setup::type_error&) {
        return true;
    } catch (const std::invalid_argument&) {
    }
    return false;
}

static void test_presets() {
    const auto& names = setup::preset_setting_names();
    CHECK(names.size() == 14 && names[0] == "class_activation" && names[13] == "end2end");
    CHECK(setup::option_names().front() == "semantics" && setup::option_names().size() == 27);
    const setup::Options h = options("{}");
    CHECK(h.semantics == "hailort" && h.class_activation == "none" && h.score_threshold == std::vector<double>{0.2});
    CHECK(h.score_test == ">=" && h.iou_threshold == 0.7 && h.iou_test == ">=" && h.multi_label && !h.agnostic);
    CHECK(h.max_per_class == 100 && h.max_total == -1 && h.max_candidates == -1 && h.tie_break == "hailort");
    CHECK(h.box_format == "yxyx_normalized" && h.rotated_class_offset == 0.0 && !h.end2end);
    CHECK(h.explicit_settings.empty() && !h.score_threshold_per_class && h.proto_stride == 4);
    const setup::Options u = options(R"({"semantics": "ultralytics", "multi_label": true, "max_total": null})");
    CHECK(u.class_activation == "sigmoid" && u.score_threshold == std::vector<double>{0.25} && u.score_test == ">");
    CHECK(u.iou_threshold == 0.7 && u.iou_test == ">" && u.multi_label && !u.agnostic && u.max_per_class == -1);
    CHECK(u.max_total == -1 && u.max_candidates == 30000 && u.tie_break == "stable" && u.box_format == "xyxy_pixels");
    CHECK(u.rotated_class_offset == 7680.0 && !u.end2end);
    CHECK((u.explicit_settings == std::vector<std::string>{"multi_label", "max_total"}));
    CHECK(setup::drop_empty_masks(u) && !setup::drop_empty_masks(h));
    CHECK(throws([] { setup::preset("torch"); }, "no preset \"torch\""));
    CHECK(setup::choices("box_format").size() == 4 && setup::choices("semantics") == setup::preset_names());
    CHECK(throws([] { setup::choices("bins"); }, "no choice setting \"bins\""));
}

static void test_options_model() {
    const setup::Options o = options(R"({"task": "pose", "bins": 1, "keypoint_dims": 2, "image_size": [384, 640],
        "classes": [0, 2], "proto": "seg/proto", "proto_stride": null, "drop_empty_masks": false,
        "score_threshold": [0.1, 0.2, 0.3], "keypoint_decode": null, "angle_decode": "raw"})");
    CHECK(o.task == "pose" && o.bins == 1 && o.keypoint_dims == 2 && o.image_height == 384 && o.image_width == 640);
    CHECK(o.has_classes && (o.classes == std::vector<int>{0, 2}) && o.proto == "seg/proto" && o.proto_stride == 0);
    CHECK(o.drop_empty_masks == 0 && o.score_threshold_per_class && o.score_threshold.size() == 3);
    CHECK(setup::keypoint_decode(o, 1) == "yolo26" && setup::keypoint_decode(o, 16) == "yolov8");
    CHECK(setup::angle_decode(o, 16) == "raw");
    const std::vector<double> per = setup::thresholds_per_class(o, 3);
    CHECK(per[0] == 0.1 && std::isinf(per[1]) && per[2] == 0.3);
    CHECK(throws([&] { setup::thresholds_per_class(o, 4); }, "score_threshold must be a number or one per class (4), got 3 values"));
    const setup::Options few = options(R"({"classes": [3, 1, 7]})");
    CHECK(throws([&] { setup::thresholds_per_class(few, 3); }, "classes [3, 7] out of range [0, 3)"));
    CHECK(setup::thresholds_per_class(options("{}"), 2) == (std::vector<double>{0.2, 0.2}));
}

static void test_hailort_version() {
    CHECK(options("{}").hailort_version == "4.23" && options(R"({"hailort_version": null})").hailort_version == "4.23");
    CHECK(options(R"({"hailort_version": "5.0.1"})").hailort_version == "5.0.1");
    CHECK((setup::hailort_version_numbers("5.2") == std::array<int, 3>{5, 2, 0}));
    CHECK((setup::hailort_version_numbers("4.23.0") == std::array<int, 3>{4, 23, 0}));
    // 5.0.1 is the first with the new candidate order and pre-filters; 5.0.0 and 4.x keep 4.23's.
    CHECK(!setup::hailort_v5_ops("4.23") && !setup::hailort_v5_ops("5.0") && !setup::hailort_v5_ops("5.0.0"));
    CHECK(setup::hailort_v5_ops("5.0.1") && setup::hailort_v5_ops("5.1") && setup::hailort_v5_ops("5.2.0"));
    const std::string form = R"(hailort_version must be a HailoRT version "X.Y" or "X.Y.Z" (e.g. "4.23", "5.2", "5.0.1"))";
    CHECK(options_fail(R"({"hailort_version": 5.2})", (form + ", got 5.2").c_str()));
    for (const char* bad : {"6.0", "3.1", "5", "5.", "5..1", ".5", "5.2.0.1", "v5.2", "5.2-rc1", "", "5.12345"})
        CHECK(options_fail("{\"hailort_version\": \"" + std::string(bad) + "\"}",
                           (form + " of HailoRT 4 or 5, got \"" + bad + "\"").c_str()));
}

static void test_options_errors() {
    // Every key: a value of the wrong kind and one out of range, each message naming key, rule, value.
    CHECK(options_fail(R"({"semantics": "torch"})", R"(semantics must be one of "hailort", "ultralytics", got "torch")"));
    CHECK(options_fail(R"({"class_activation": "relu"})", R"(class_activation must be one of "none", "sigmoid", got "relu")"));
    CHECK(options_fail(R"({"class_activation": 1})", "class_activation must be one of"));
    CHECK(options_fail(R"({"score_threshold": 1.5})", "score_threshold must be a number in [0, 1], got 1.5"));
    CHECK(options_fail(R"({"score_threshold": -0.1})", "score_threshold must be a number in [0, 1], got -0.1"));
    CHECK(options_fail(R"({"score_threshold": "0.5"})", R"(score_threshold must be a number in [0, 1], got "0.5")"));
    CHECK(options_fail(R"({"score_threshold": [0.1, 2]})", "score_threshold[1] must be a number in [0, 1], got 2"));
    CHECK(options_fail(R"({"score_threshold": []})", "a list of them (one per class), got []"));
    CHECK(options_fail(R"({"score_test": "=>"})", R"(score_test must be one of ">=", ">", got "=>")"));
    CHECK(options_fail(R"({"iou_threshold": -0.5})", "iou_threshold must be a number in [0, 1], got -0.5"));
    CHECK(options_fail(R"({"iou_threshold": 1.01})", "iou_threshold must be a number in [0, 1], got 1.01"));
    CHECK(options_fail(R"({"iou_threshold": null})", "iou_threshold must be a number in [0, 1], got null"));
    CHECK(options_fail(R"({"iou_test": ">>"})", "iou_test must be one of"));
    CHECK(options_fail(R"({"multi_label": 1})", "multi_label must be true or false, got 1"));
    CHECK(options_fail(R"({"agnostic": "yes"})", R"(agnostic must be true or false, got "yes")"));
    CHECK(options_fail(R"({"end2end": 0})", "end2end must be true or false, got 0"));
    for (const char* cap : {"max_per_class", "max_total", "max_candidates"}) {
        const std::string k = cap;
        CHECK(options_fail("{\"" + k + "\": -1}", (k + " must be null (no cap) or an integer in [0, 1048576], got -1").c_str()));
        CHECK(options_fail("{\"" + k + "\": 1048577}", "got 1048577"));
        CHECK(options_fail("{\"" + k + "\": 2.0}", "got 2.0"));
        CHECK(options_fail("{\"" + k + "\": \"5\"}", "got \"5\""));
    }
    CHECK(options("{\"max_total\": 1048576}").max_total == 1048576);
    CHECK(options_fail(R"({"tie_break": "random"})", R"(tie_break must be one of "hailort", "stable", got "random")"));
    CHECK(options_fail(R"({"box_format": "xywh"})", "box_format must be one of \"yxyx_normalized\""));
    CHECK(options_fail(R"({"rotated_class_offset": -1})", "rotated_class_offset must be a finite number >= 0 (finite as float32 too), got -1"));
    CHECK(options_fail(R"({"rotated_class_offset": 1e39})", "got 1e+39"));
    CHECK(options_fail(R"({"rotated_class_offset": true})", "got true"));
    CHECK(options_fail(R"({"task": "seg"})", R"(task must be one of "detect", "segment", "pose", "obb" (or null), got "seg")"));
    CHECK(options_fail(R"({"bins": 0})", "bins must be an integer in [1, 1048576] (or null), got 0"));
    CHECK(options_fail(R"({"bins": 16.5})", "bins must be an integer"));
    CHECK(options_fail(R"({"keypoint_dims": 4})", "keypoint_dims must be 2 (x, y) or 3 (x, y, visibility), got 4"));
    CHECK(options_fail(R"({"keypoint_dims": true})", "keypoint_dims must be 2 (x, y) or 3"));
    CHECK(options_fail(R"({"keypoint_decode": "Pose26"})", R"(keypoint_decode must be one of "yolov8", "yolo26" (or null), got "Pose26")"));
    CHECK(options_fail(R"({"angle_decode": 1})", R"(angle_decode must be one of "sigmoid", "raw" (or null), got 1)"));
    CHECK(options_fail(R"({"image_size": [0, 640]})", "image_size must be [height, width], two integers in [1, 1048576], got [0, 640]"));
    CHECK(options_fail(R"({"image_size": [640]})", "got [640]"));
    CHECK(options_fail(R"({"image_size": [640, 1048577]})", "got [640, 1048577]"));
    CHECK(options_fail(R"({"image_size": 640})", "image_size must be [height, width]"));
    CHECK(options_fail(R"({"classes": [0, -1]})", "classes[1] must be a class id, an integer in [0, 1048576], got -1"));
    CHECK(options_fail(R"({"classes": 3})", "classes must be a list of class ids (or null: every class), got 3"));
    CHECK(options_fail(R"({"proto": 3})", "proto must be the prototype output's name (or null), got 3"));
    CHECK(options_fail(R"({"proto_stride": 0})", "proto_stride must be a positive integer (at most 1048576), or null (not checked), got 0"));
    CHECK(options_fail(R"({"drop_empty_masks": 1})", "drop_empty_masks must be true or false, got 1"));
    CHECK(options_fail(R"({"mask_objectness": 1})", "mask_objectness must be true or false, got 1"));
    CHECK(options(R"({"mask_objectness": false})").mask_objectness == 0 && options("{}").mask_objectness == -1);
    CHECK(options_fail("[1]", "the options must be an object of named settings, got [1]"));
    // Unknown keys: the closest known one (an NMS JSON spelling answers with the option's name), or the list.
    CHECK(options_fail(R"({"score_thresh": 0.3})", R"(unknown key "score_thresh"; did you mean "score_threshold"?)"));
    CHECK(options_fail(R"({"nms_iou_thr": 0.3})", R"(unknown key "nms_iou_thr"; did you mean "iou_threshold"?)"));
    CHECK(options_fail(R"({"IOU_THRESHOLD": 0.3})", R"(did you mean "iou_threshold"?)"));
    CHECK(options_fail(R"({"zzz": 1})", R"(unknown key "zzz"; the keys are "semantics", "class_activation")"));
    CHECK(throws([] { setup::read_options(json::parse(R"({"labels": 1, "x": 2})"), "plugin.json", {"labels"}); },
                 R"(plugin.json: unknown key "x")"));
    CHECK(throws([] { setup::read_options(json::parse(R"({"iou_threshold": 2})"), "plugin.json"); },
                 "plugin.json: iou_threshold must be"));
    // Wrong kinds and unknown keys are type errors (Python's TypeError); wrong values are not.
    CHECK(options_type_error(R"({"end2end": "yes"})") && options_type_error(R"({"nope": 1})"));
    CHECK(!options_type_error(R"({"iou_threshold": 2})") && !options_type_error(R"({"box_format": "xywh"})"));
    CHECK(setup::closest_name("stride", {"strides", "stride_x"}) == "strides");
    CHECK(setup::closest_name("abc", {"xyz"}).empty());
}

// ---- read_nms_json ---------------------------------------------------------------------------

// hailo_model_zoo/cfg/postprocess_config/yolov8n_nms_config.json
static const char* kYolov8n = R"({
	"nms_scores_th": 0.2, "nms_iou_th": 0.7, "image_dims": [640, 640], "max_proposals_per_class": 100,
	"classes": 80, "regression_length": 16, "background_removal": false,
	"bbox_decoders": [
		{"name": "yolov8n/bbox_decoder41", "stride": 8, "reg_layer": "yolov8n/conv41", "cls_layer": "yolov8n/conv42"},
		{"name": "yolov8n/bbox_decoder52", "stride": 16, "reg_layer": "yolov8n/conv52", "cls_layer": "yolov8n/conv53"},
		{"name": "yolov8n/bbox_decoder62", "stride": 32, "reg_layer": "yolov8n/conv62", "cls_layer": "yolov8n/conv63"}
	]
})";

// hailo_model_zoo/cfg/postprocess_config/yolov5s_nms_config.json
static const char* kYolov5s = R"({
  "nms_scores_th": 0.001, "nms_iou_th": 0.6, "image_dims": [640, 640], "max_proposals_per_class": 80,
  "background_removal": false, "classes": 80,
  "bbox_decoders": [
      {"name": "bbox_decoder55", "w": [10, 16, 33], "h": [13, 30, 23], "stride": 8, "encoded_layer": "conv55"},
      {"name": "bbox_decoder63", "w": [30, 62, 59], "h": [61, 45, 119], "stride": 16, "encoded_layer": "conv63"},
      {"name": "bbox_decoder70", "w": [116, 156, 373], "h": [90, 198, 326], "stride": 32, "encoded_layer": "conv70"}
  ]
})";

// hailo_model_zoo/cfg/postprocess_config/nms_config_yolox_s_leaky.json
static const char* kYoloxS = R"({
    "nms_scores_th": 0.2, "nms_iou_th": 0.65, "number_of_detection_heads": 3, "image_dims": [640, 640],
    "max_proposals_per_class": 100, "classes": 80,
    "bbox_decoders": [
        {"name": "bbox_decoder_8", "stride": 8, "reg_layer": "conv55", "objectness_layer": "conv56", "cls_layer": "conv54"},
        {"name": "bbox_decoder_16", "stride": 16, "reg_layer": "conv69", "objectness_layer": "conv70", "cls_layer": "conv68"},
        {"name": "bbox_decoder_32", "stride": 32, "reg_layer": "conv82", "objectness_layer": "conv83", "cls_layer": "conv81"}
    ]
})";

static std::vector<setup::OutputShape> yolov8n_outputs() {
    const std::string prefix = "yolov8n/";
    std::vector<setup::OutputShape> out;
    const int strides[] = {8, 16, 32};
    const char* names[][2] = {{"conv41", "conv42"}, {"conv52", "conv53"}, {"conv62", "conv63"}};
    for (int k = 0; k < 3; ++k) {
        const int g = 640 / strides[k];
        out.push_back({prefix + names[k][0], g, g, 64});
        out.push_back({prefix + names[k][1], g, g, 80});
    }
    return out;
}

static bool nms_fail(const std::string& text, const std::vector<setup::OutputShape>& outputs, const char* needle) {
    return throws([&] { setup::read_nms_json(json::parse(text), outputs); }, needle);
}

// kYolov8n with `from` replaced by `to` (once).
static std::string edited(std::string text, const std::string& from, const std::string& to) {
    const size_t at = text.find(from);
    CHECK(at != std::string::npos);
    return text.replace(at, from.size(), to);
}

static void test_nms_json_real_files() {
    const auto outs = yolov8n_outputs();
    const setup::NmsJson v8 = setup::read_nms_json(json::parse(kYolov8n), outs);
    CHECK(v8.heads.size() == 3 && v8.heads[0].kind == HeadKind::DFL && v8.heads[0].box == "yolov8n/conv41");
    CHECK(v8.heads[0].cls == "yolov8n/conv42" && v8.heads[2].stride == 32 && v8.classes == 80 && v8.regression_length == 16);
    CHECK(v8.settings.dump() == R"({"score_threshold": 0.2, "iou_threshold": 0.7, "max_per_class": 100, "image_size": [640, 640]})");
    const setup::Options o = setup::read_options(v8.settings);  // the settings read as options
    CHECK(o.score_threshold == std::vector<double>{0.2} && o.max_per_class == 100 && o.image_height == 640);

    std::vector<setup::OutputShape> v5 = {{"yolov5s/conv55", 80, 80, 255}, {"yolov5s/conv63", 40, 40, 255},
                                          {"yolov5s/conv70", 20, 20, 255}};
    const setup::NmsJson a = setup::read_nms_json(json::parse(kYolov5s), v5);  // conv55 matches yolov5s/conv55
    CHECK(a.heads.size() == 3 && a.heads[0].kind == HeadKind::YOLOV5 && a.heads[0].box == "yolov5s/conv55");
    CHECK(a.heads[0].cls == a.heads[0].box && a.heads[2].anchors.size() == 3);
    CHECK(a.heads[2].anchors[2] == std::make_pair(373, 326) && a.heads[1].stride == 16);
    v5[0].channels = 3 * 86;  // 81 classes
    CHECK(nms_fail(kYolov5s, v5, "NMS JSON says 80 classes, class outputs have 81 channels"));

    const std::vector<setup::OutputShape> x = {{"conv54", 80, 80, 80}, {"conv55", 80, 80, 4}, {"conv56", 80, 80, 1},
                                               {"conv68", 40, 40, 80}, {"conv69", 40, 40, 4}, {"conv70", 40, 40, 1},
                                               {"conv81", 20, 20, 80}, {"conv82", 20, 20, 4}, {"conv83", 20, 20, 1}};
    const setup::NmsJson y = setup::read_nms_json(json::parse(kYoloxS), x);
    CHECK(y.heads[0].kind == HeadKind::YOLOX && y.heads[0].box == "conv55" && y.heads[0].obj == "conv56");
    CHECK(y.heads[0].cls == "conv54" && y.heads[2].stride == 32);
    CHECK(y.settings.find("iou_threshold")->as_number() == 0.65);
}

static void test_nms_json_errors() {
    const auto outs = yolov8n_outputs();
    CHECK(nms_fail("[1]", outs, "NMS JSON: the document must be an object"));
    CHECK(nms_fail(edited(kYolov8n, "\"nms_iou_th\"", "\"nms_iou_thr\""), outs,
                   R"(NMS JSON: unknown key "nms_iou_thr"; did you mean "nms_iou_th"?)"));
    CHECK(nms_fail(edited(kYolov8n, "\"reg_layer\"", "\"reg_layr\""), outs,
                   R"(NMS JSON: bbox_decoders[0]: unknown key "reg_layr"; did you mean "reg_layer"?)"));
    // Keys of real files the decoder skips are accepted.
    CHECK(setup::read_nms_json(json::parse(edited(kYolov8n, "\"classes\"", R"("background_removal_index": 0,
        "centers_scale_factor": 10, "bbox_dimensions_scale_factor": 5, "input_division_factor": 4,
        "max_total_proposals": 100, "proto": [{"number": 32, "stride": 4}], "classes")")), outs).heads.size() == 3);
    CHECK(nms_fail(edited(kYolov8n, "\"background_removal\": false", "\"background_removal\": true"), outs,
                   "NMS JSON: background_removal=true is not supported"));
    CHECK(nms_fail(R"({"nms_scores_th": 0.2})", outs, "NMS JSON: 'bbox_decoders' is missing or empty"));
    CHECK(nms_fail(R"({"bbox_decoders": []})", outs, "is missing or empty"));
    CHECK(nms_fail(R"({"bbox_decoders": {"a": 1}})", outs, "NMS JSON: 'bbox_decoders' must be a list, got {\"a\": 1}"));
    CHECK(nms_fail(R"({"bbox_decoders": [1]})", outs, "NMS JSON: bbox_decoders[0] must be an object, got 1"));
    CHECK(nms_fail(R"({"bbox_decoders": [{"reg_layer": "conv41", "cls_layer": "conv42"}]})", outs,
                   "NMS JSON: bbox_decoders[0] lacks 'stride'"));
    CHECK(nms_fail(edited(kYolov8n, "\"stride\": 8", "\"stride\": 8.5"), outs,
                   "NMS JSON: bbox_decoders[0].stride must be a whole number, got 8.5"));
    CHECK(nms_fail(edited(kYolov8n, "\"stride\": 8", "\"stride\": \"8\""), outs,
                   "NMS JSON: bbox_decoders[0].stride must be a number, got \"8\""));
    CHECK(nms_fail(edited(kYolov8n, "\"stride\": 8", "\"stride\": 0"), outs, "stride must be a whole number in [1, 1048576], got 0"));
    CHECK(setup::read_nms_json(json::parse(edited(kYolov8n, "\"stride\": 8", "\"stride\": 8.0")), outs).heads[0].stride == 8);
    CHECK(nms_fail(edited(kYolov8n, "\"yolov8n/conv41\"", "\"conv99\""), outs,
                   "NMS JSON layer 'conv99' matches no output (by name or the part after '/'): ['yolov8n/conv41'"));
    CHECK(nms_fail(edited(kYolov8n, "\"yolov8n/conv41\"", "55"), outs,
                   "NMS JSON: bbox_decoders[0].reg_layer must be a string (an output name), got 55"));
    auto twice = outs;
    twice.push_back({"other/conv41", 80, 80, 64});
    CHECK(nms_fail(edited(kYolov8n, "\"yolov8n/conv41\"", "\"conv41\""), twice,
                   "NMS JSON layer 'conv41' matches several outputs: ['yolov8n/conv41', 'other/conv41']"));
    CHECK(nms_fail(edited(kYolov8n, "\"nms_scores_th\": 0.2", "\"nms_scores_th\": \"0.2\""), outs,
                   "NMS JSON: nms_scores_th must be a number, got \"0.2\""));
    CHECK(nms_fail(edited(kYolov8n, "[640, 640]", "[640]"), outs, "NMS JSON: image_dims must be [height, width], got [640]"));
    // The settings it carries are checked as the options they set, under the document's names.
    CHECK(nms_fail(edited(kYolov8n, "\"nms_iou_th\": 0.7", "\"nms_iou_th\": -0.5"), outs,
                   "NMS JSON: nms_iou_th must be a number in [0, 1], got -0.5"));
    CHECK(nms_fail(edited(kYolov8n, "[640, 640]", "[0, 640]"), outs,
                   "NMS JSON: image_dims must be [height, width], two integers in [1, 1048576], got [0, 640]"));
    CHECK(nms_fail(edited(kYolov8n, "\"max_proposals_per_class\": 100", "\"max_proposals_per_class\": -1"), outs,
                   "NMS JSON: max_proposals_per_class must be null (no cap) or an integer in [0, 1048576], got -1"));
    CHECK(nms_fail(edited(kYolov8n, "\"classes\": 80", "\"classes\": 81"), outs, "NMS JSON says 81 classes, class outputs have 80 channels"));
    CHECK(nms_fail(edited(kYolov8n, "\"regression_length\": 16", "\"regression_length\": 8"), outs,
                   "NMS JSON regression_length 8 does not fit box outputs with 16 bins (64 channels)"));
    CHECK(setup::read_nms_json(json::parse(edited(kYolov8n, "\"regression_length\": 16", "\"regression_length\": 15")), outs)
              .regression_length == 15);
    CHECK(throws([&] { setup::read_nms_json(json::parse("{}"), outs, "m.json"); }, "m.json: NMS JSON: 'bbox_decoders'"));
}

static void test_config_for_layout() {
    setup::Layout layout;
    layout.kind = HeadKind::DFL;
    layout.image_height = 640;
    layout.image_width = 640;
    layout.task = "detect";
    layout.num_classes = 3;
    layout.bins = 1;
    layout.heads = {setup::NamedHead{HeadKind::DFL, "b", "c", "", "", "", "", 8, {}}};
    std::vector<TensorSpec> specs(2);
    specs[0].name = "c";
    specs[1].name = "b";
    const setup::Options o = options(R"({"semantics": "ultralytics", "classes": [1], "box_format": "yxyx_pixels"})");
    const Config c = setup::config_for_layout(specs, layout, o);
    CHECK(c.heads.size() == 1 && c.heads[0].box_output == 1 && c.heads[0].cls_output == 0 && c.heads[0].stride == 8);
    CHECK(c.heads[0].mask_output == -1 && c.bins == 1 && c.num_classes == 3 && c.keypoint_decode == KeypointDecode::YOLO26);
    CHECK(c.angle_decode == AngleDecode::RAW && c.proto_output == -1 && !c.drop_empty_masks);
    const Settings& s = c.settings;
    CHECK(s.sigmoid && std::isinf(s.score_threshold[0]) && s.score_threshold[1] == 0.25f && !s.score_inclusive);
    CHECK(s.iou_threshold == 0.7f && !s.iou_inclusive && !s.multi_label && s.max_per_class == -1 && s.max_total == 300);
    CHECK(s.max_candidates == 30000 && !s.hailort_sort && !s.normalized && s.yxyx && s.image_height == 640);
    CHECK(s.class_offset == 7680.0f && !s.end2end && !s.hailort_decode);
    layout.kind = HeadKind::YOLOX;
    CHECK(throws([&] { setup::make_settings(layout, options(R"({"end2end": true})")); },
                 "end2end selection is for DFL heads (YOLO26/YOLOv10), not yolox heads"));
    layout.heads[0].box = "nope";
    CHECK(throws([&] { setup::config_for_layout(specs, layout, o); }, "head box output 'nope' is not among the outputs"));
}

// The plugin's path: JSON text -> options -> make_config (pair_outputs, then config_for_layout).
static void test_make_config() {
    std::vector<TensorSpec> specs;
    for (const setup::OutputShape& o : yolov8n_outputs()) {
        TensorSpec t;
        t.name = o.name;
        t.height = t.padded_height = o.height;
        t.width = t.padded_width = o.width;
        t.channels = t.padded_channels = o.channels;
        specs.push_back(t);
    }
    const setup::Options o = setup::read_options(json::parse(R"({"score_threshold": 0.3, "max_total": 50})"));
    const Config c = setup::make_config(specs, o);
    CHECK(c.heads.size() == 3 && c.num_classes == 80 && c.bins == 16 && c.kind == HeadKind::DFL);
    CHECK(c.heads[0].box_output == 0 && c.heads[0].cls_output == 1 && c.heads[2].stride == 32);
    CHECK(c.settings.image_height == 640 && c.settings.score_threshold.size() == 80 && c.settings.max_total == 50);
    CHECK(c.settings.score_threshold[79] == 0.3f && c.settings.max_per_class == 100 && c.settings.hailort_sort);
    CHECK(!c.settings.hailort_v5);  // the default, 4.23's ops
    const auto version = [&](const char* text) {
        return setup::make_config(specs, setup::read_options(json::parse(text))).settings.hailort_v5;
    };
    CHECK(version(R"({"hailort_version": "5.2"})") && !version(R"({"hailort_version": "5.0.0"})"));
    CHECK(!version(R"({"hailort_version": "5.2", "tie_break": "stable"})"));  // only HailoRT's ties are versioned
    const setup::NmsJson nms = setup::read_nms_json(json::parse(kYolov8n), yolov8n_outputs());
    const Config from_json = setup::make_config(specs, setup::read_options(nms.settings), &nms.heads);
    CHECK(from_json.heads.size() == 3 && from_json.heads[1].box_output == 2 && from_json.settings.iou_threshold == 0.7f);
}

int main() {
    test_json_values();
    test_json_escapes();
    test_json_errors_and_positions();
    test_json_limits();
    test_json_dump();
    test_presets();
    test_options_model();
    test_hailort_version();
    test_options_errors();
    test_nms_json_real_files();
    test_nms_json_errors();
    test_config_for_layout();
    test_make_config();
    return report();
}
