// setup::read_yolov5seg_json: the config file of TAPPAS' libyolov5seg_post.so (TAPPAS 5.1
// core/hailo/libs/postprocesses/instance_segmentation/yolov5seg.{hpp,cpp}) read as heads and
// options, so that the plugin serves it unchanged. What that post-process does, and what the
// settings given here reproduce:
//   - outputs_name[0] is the prototype; outputs_name[1 + k] is the branch of index n - 1 - k
//     (strides[n - 1 - k], anchors[n - 1 - k]): yolov5seg_post() pairs name 1 with index 2, name 2
//     with 1, name 3 with 0;
//   - anchors[i] a flat list w0, h0, w1, h1, ... in input pixels; outputs_size[i] the branch's grid;
//     input_shape [width, height] (x is divided by input_shape[0]);
//   - a candidate is an anchor whose best class (the first on ties) scores sigmoid(obj) x
//     sigmoid(cls) > score_threshold; NMS by class, sorted by score, IoU >= iou_threshold; no caps;
//   - masks from the raw coefficients (not times the objectness).
// A key it does not give takes the Yolov5segParams default (yolov5n-seg at 640).
#include <cmath>
#include <stdexcept>

#include "hailo_decode/setup.hpp"

namespace hailo_decode::setup {

namespace {

using json::Value;

const std::vector<std::string> kKeys = {"outputs_size", "outputs_name", "anchors", "input_shape", "strides"};

std::string at(const std::string& where) { return where.empty() ? "" : where + ": "; }

[[noreturn]] void bad(const std::string& where, const std::string& key, const std::string& must, const Value& got) {
    throw std::invalid_argument(at(where) + key + " must be " + must + ", got " + got.dump());
}

std::vector<int64_t> integers(const Value& v, const std::string& where, const std::string& key, int64_t lo, int64_t hi,
                              const std::string& must) {
    if (!v.is_array() || v.items().empty()) bad(where, key, must, v);
    std::vector<int64_t> out;
    for (const Value& item : v.items()) {
        if (!item.is_number() || !item.is_whole() || item.as_number() < double(lo) || item.as_number() > double(hi))
            bad(where, key, must, v);
        out.push_back(item.as_int());
    }
    return out;
}

Value default_of(const std::string& key) {
    auto ints = [](std::initializer_list<int64_t> xs) {
        std::vector<Value> items;
        for (int64_t x : xs) items.push_back(Value::integer(x));
        return Value::array(std::move(items));
    };
    if (key == "outputs_size") return ints({20, 40, 80});
    if (key == "input_shape") return ints({640, 640});
    if (key == "strides") return ints({32, 16, 8});
    if (key == "anchors")
        return Value::array({ints({116, 90, 156, 198, 373, 326}), ints({30, 61, 62, 45, 59, 119}), ints({10, 13, 16, 30, 33, 23})});
    return Value::array({Value::string("yolov5n_seg/conv63"), Value::string("yolov5n_seg/conv48"),
                         Value::string("yolov5n_seg/conv55"), Value::string("yolov5n_seg/conv61")});
}

}  // namespace

const std::vector<std::string>& yolov5seg_json_keys() { return kKeys; }

bool is_yolov5seg_json(const json::Value& doc) {
    if (!doc.is_object()) return false;
    for (const std::string& k : kKeys)
        if (doc.find(k) != nullptr) return true;
    return false;
}

Yolov5SegJson read_yolov5seg_json(const json::Value& doc, const std::string& where) {
    auto get = [&](const std::string& key) {
        const Value* v = doc.is_object() ? doc.find(key) : nullptr;
        return v ? *v : default_of(key);
    };
    constexpr int64_t kMaxSide = 65536;
    const std::vector<int64_t> strides = integers(get("strides"), where, "strides", 1, kMaxSide, "a list of strides (positive integers)");
    const size_t n = strides.size();
    const std::string per_branch = " (one per stride, as strides)";
    const std::vector<int64_t> sizes =
        integers(get("outputs_size"), where, "outputs_size", 1, kMaxSide, "a list of grid sizes" + per_branch);
    if (sizes.size() != n) bad(where, "outputs_size", std::to_string(n) + " grid sizes" + per_branch, get("outputs_size"));
    const std::vector<int64_t> input = integers(get("input_shape"), where, "input_shape", 1, kMaxSide,
                                                "[width, height], two positive integers");
    if (input.size() != 2) bad(where, "input_shape", "[width, height], two positive integers", get("input_shape"));

    const Value names = get("outputs_name");
    const std::string names_must = "a list of " + std::to_string(n + 1) +
                                   " output names: the prototype, then the branches of strides[" + std::to_string(n - 1) +
                                   "] down to strides[0]";
    if (!names.is_array() || names.items().size() != n + 1) bad(where, "outputs_name", names_must, names);
    for (const Value& name : names.items())
        if (!name.is_string() || name.as_string().empty()) bad(where, "outputs_name", names_must, names);

    const Value anchors = get("anchors");
    const std::string anchors_must = std::to_string(n) + " lists (one per stride, as strides) of anchor sizes w0, h0, "
                                     "w1, h1, ... in input pixels, the same count each";
    if (!anchors.is_array() || anchors.items().size() != n) bad(where, "anchors", anchors_must, anchors);
    size_t per = 0;
    std::vector<std::vector<int64_t>> wh;
    for (const Value& list : anchors.items()) {
        std::vector<int64_t> a = integers(list, where, "anchors", 1, kMaxSide, anchors_must);
        if (a.size() % 2 != 0 || (per != 0 && a.size() != per)) bad(where, "anchors", anchors_must, anchors);
        per = a.size();
        wh.push_back(std::move(a));
    }

    Yolov5SegJson out;
    std::vector<Value> heads;
    for (size_t k = 0; k < n; ++k) {
        const size_t index = n - 1 - k;  // yolov5seg_post: outputs_name[1 + k] is branch n - 1 - k
        std::vector<Value> pairs;
        for (size_t j = 0; j + 1 < wh[index].size(); j += 2)
            pairs.push_back(Value::array({Value::integer(wh[index][j]), Value::integer(wh[index][j + 1])}));
        heads.push_back(Value::object({{"output", names.items()[1 + k]},
                                       {"anchors", Value::array(std::move(pairs))},
                                       {"stride", Value::integer(strides[index])}}));
        out.grids.push_back({names.items()[1 + k].as_string(), int(sizes[index])});
    }
    out.heads = Value::array(std::move(heads));
    out.proto = names.items()[0].as_string();

    std::vector<std::pair<std::string, Value>> s = {
        {"task", Value::string("segment")},
        {"proto", Value::string(out.proto)},
        {"image_size", Value::array({Value::integer(input[1]), Value::integer(input[0])})},
        {"iou_threshold", Value::number(0.6)},
        {"score_threshold", Value::number(0.25)},
    };
    // The post-process's own NMS, unless the file names a preset (then that preset's settings).
    if (!doc.is_object() || doc.find("semantics") == nullptr) {
        s.push_back({"semantics", Value::string("ultralytics")});  // raw coefficients, sigmoid on the host
        s.push_back({"class_activation", Value::string("sigmoid")});
        s.push_back({"score_test", Value::string(">")});
        s.push_back({"iou_test", Value::string(">=")});
        s.push_back({"multi_label", Value::boolean(false)});
        s.push_back({"agnostic", Value::boolean(false)});
        s.push_back({"max_per_class", Value()});
        s.push_back({"max_total", Value()});
        s.push_back({"max_candidates", Value()});
        s.push_back({"drop_empty_masks", Value::boolean(false)});
    }
    s.push_back({"mask_objectness", Value::boolean(false)});  // its masks: the raw coefficients
    out.settings = Value::object(std::move(s));
    return out;
}

void check_yolov5seg_outputs(const Yolov5SegJson& file, const std::vector<OutputShape>& outputs,
                             const std::string& where) {
    auto find = [&](const std::string& name) -> const OutputShape* {
        for (const OutputShape& o : outputs)
            if (o.name == name) return &o;
        return nullptr;
    };
    std::string have;
    for (const OutputShape& o : outputs) have += (have.empty() ? "" : ", ") + o.name;
    auto missing = [&](const std::string& name) {
        throw std::invalid_argument(at(where) + "outputs_name: " + Value::string(name).dump() +
                                    " is not among the outputs (" + have + ")");
    };
    if (!find(file.proto)) missing(file.proto);
    for (const auto& [name, size] : file.grids) {
        const OutputShape* o = find(name);
        if (!o) missing(name);
        if (o->height != size || o->width != size)
            throw std::invalid_argument(at(where) + "outputs_size: output " + Value::string(name).dump() + " is " +
                                        std::to_string(o->height) + "x" + std::to_string(o->width) +
                                        ", its outputs_size says " + std::to_string(size) + "x" + std::to_string(size));
    }
}

}  // namespace hailo_decode::setup
