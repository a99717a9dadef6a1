// setup::pair_outputs: heads from the outputs (paired by shape, or the heads given, checked), for
// DecoderConfig (through the binding) and the TAPPAS plugin alike. This file holds the order of
// the steps and the DFL heads' checks; the steps live in the other pairing_*.cpp files.
#include <algorithm>
#include <set>
#include <stdexcept>

#include "pairing_detail.hpp"
#include "pairing_ssd.hpp"

namespace hailo_decode::setup {

namespace {

using namespace detail;

// Names unique, shapes positive: what every later step takes for granted.
ByName index_outputs(const std::vector<OutputShape>& outputs) {
    if (outputs.empty()) throw std::invalid_argument("outputs must not be empty");
    ByName by_name;
    std::set<std::string> repeated;
    for (const OutputShape& o : outputs) {
        if (o.height <= 0 || o.width <= 0 || o.channels <= 0)
            throw std::invalid_argument("output " + quoted(o.name) + ": shape (" + std::to_string(o.height) + ", " +
                                        std::to_string(o.width) + ", " + std::to_string(o.channels) + ") must be positive");
        if (!by_name.emplace(o.name, &o).second) repeated.insert(o.name);
    }
    if (!repeated.empty())
        throw std::invalid_argument("output names must be unique, repeated: " + names_text({repeated.begin(), repeated.end()}));
    return by_name;
}

// Guards for C++ callers that fill Options by hand (read_options checks these with its own words;
// Python and the TAPPAS plugin hand over what it read).
void check_model_options(const Options& options) {
    const std::vector<std::string>& tasks = choices("task");
    if (!options.task.empty() && std::find(tasks.begin(), tasks.end(), options.task) == tasks.end()) {
        std::string allowed;
        for (const std::string& t : tasks) allowed += (allowed.empty() ? "" : ", ") + quoted(t);
        throw std::invalid_argument("task must be one of (" + allowed + "), got " + quoted(options.task));
    }
    if (options.keypoint_dims != 0 && options.keypoint_dims != 2 && options.keypoint_dims != 3)
        throw std::invalid_argument("keypoint_dims must be 2 (x, y) or 3 (x, y, visibility), got " +
                                    std::to_string(options.keypoint_dims));
}

std::vector<std::string> names_of(const std::vector<OutputShape>& outputs) {
    std::vector<std::string> names;
    for (const OutputShape& o : outputs) names.push_back(o.name);
    return names;
}

// The heads given, each output they name checked to exist.
std::vector<NamedHead> given_heads(const std::vector<NamedHead>& heads, const std::vector<OutputShape>& outputs,
                                   const ByName& by_name) {
    for (const NamedHead& h : heads) {
        for (const auto& [role, n] : {std::pair<const char*, const std::string&>{"box", h.box}, {"cls", h.cls},
                                      {"mask", h.mask}, {"kpt", h.kpt}, {"angle", h.angle}}) {
            const bool required = std::string(role) == "box" || std::string(role) == "cls";
            if ((required || !n.empty()) && !by_name.count(n))
                throw std::invalid_argument(std::string("head ") + role + " output " + quoted(n) +
                                            " is not among the outputs " + names_text(names_of(outputs)));
        }
    }
    if (heads.empty()) throw std::invalid_argument("heads must not be empty");
    return heads;
}

// A prototype output goes with a mask coefficient output on every head, and a head has one task.
void check_masks(const std::vector<NamedHead>& heads, const std::string& proto, Wording w) {
    std::vector<std::string> lacking;
    const NamedHead* with_mask = nullptr;
    bool other_task = false;
    for (const NamedHead& h : heads) {
        if (h.mask.empty()) lacking.push_back(h.box);
        else if (!with_mask) with_mask = &h;
        other_task = other_task || !h.kpt.empty() || !h.angle.empty();
    }
    if (proto.empty() && with_mask)
        throw std::invalid_argument("head mask output " + quoted(with_mask->mask) + " needs the prototype output: " +
                                    (w == Wording::Python ? std::string("pass proto=") : "name it in \"proto\""));
    if (!proto.empty() && !lacking.empty())
        throw std::invalid_argument("with a prototype output (" + quoted(proto) + ") every head needs its mask coefficient "
                                    "output; heads with box outputs " + names_text(lacking) + " have none");
    if (with_mask && other_task)
        throw std::invalid_argument("a head has mask coefficients or keypoints or an angle, not two of them");
}

// One box channel count (4 x bins) and one class count on every head, each head on one grid.
void check_channels(const std::vector<NamedHead>& heads, const ByName& by_name, const Options& options, Layout& layout) {
    std::set<int> box_channels, cls_channels;
    for (const NamedHead& h : heads) {
        box_channels.insert(by_name.at(h.box)->channels);
        cls_channels.insert(by_name.at(h.cls)->channels);
    }
    if (box_channels.size() != 1 || cls_channels.size() != 1)
        throw std::invalid_argument("all heads must share box channels and class count; got box channels " +
                                    ints_text({box_channels.begin(), box_channels.end()}) + ", class channels " +
                                    ints_text({cls_channels.begin(), cls_channels.end()}));
    const int bc = *box_channels.begin();
    if (bc % 4)
        throw std::invalid_argument("box output " + quoted(heads[0].box) + " has " + std::to_string(bc) +
                                    " channels, not 4 x bins");
    layout.bins = bc / 4;
    if (options.bins != 0 && options.bins != layout.bins)
        throw std::invalid_argument(setting_text(options.wording, "bins", std::to_string(options.bins), std::to_string(options.bins)) +
                                    " but box outputs have " + std::to_string(bc) +
                                    " channels (= 4 x " + std::to_string(layout.bins) + ")");
    layout.num_classes = *cls_channels.begin();
    for (const NamedHead& h : heads) {
        const OutputShape &b = *by_name.at(h.box), &c = *by_name.at(h.cls);
        if (b.height != c.height || b.width != c.width)
            throw std::invalid_argument(head_text(h) + ": grids differ, " + grid_text(b.height, b.width) + " vs " +
                                        grid_text(c.height, c.width));
    }
}

Layout dfl_layout(const std::vector<OutputShape>& outputs, const ByName& by_name, const Options& options,
                  const std::vector<NamedHead>* heads) {
    std::string proto = options.proto;
    if (!proto.empty() && !by_name.count(proto))
        throw std::invalid_argument("proto output " + quoted(proto) + " is not among the outputs " + names_text(names_of(outputs)));
    std::vector<NamedHead> pairs;
    if (heads) {
        pairs = given_heads(*heads, outputs, by_name);
    } else {
        Outputs all;
        for (const OutputShape& o : outputs) all.push_back(&o);
        if (proto.empty() && (options.task.empty() || options.task == "segment")) proto = find_proto(all);
        Outputs rest;
        for (const OutputShape* o : all)
            if (o->name != proto) rest.push_back(o);
        pairs = proto.empty() ? pair_by_shape(rest, options.bins, options.task, options.keypoint_dims, options.wording)
                              : pair_seg_by_shape(rest, *by_name.at(proto), options.bins, options.wording);
    }
    check_masks(pairs, proto, options.wording);
    Layout layout;
    const TaskShape task = check_task_outputs(pairs, by_name, options.task, options.keypoint_dims, options.wording);
    layout.task = task.task;
    layout.num_keypoints = task.num_keypoints;
    layout.keypoint_dims = task.keypoint_dims;
    std::vector<std::string> used;
    for (const NamedHead& h : pairs)
        for (const std::string* n : {&h.box, &h.cls, &h.mask, &h.kpt, &h.angle})
            if (!n->empty()) used.push_back(*n);
    if (!proto.empty()) used.push_back(proto);
    check_used_once(used, outputs, options.wording);
    check_channels(pairs, by_name, options, layout);
    resolve_strides(pairs, by_name, options, layout);
    if (!proto.empty())
        check_seg(*by_name.at(proto), pairs, by_name, layout.image_height, layout.image_width, options.proto_stride,
                  options.wording);
    layout.kind = HeadKind::DFL;
    layout.heads = std::move(pairs);
    layout.proto = proto;
    return layout;
}

}  // namespace

Layout pair_outputs(const std::vector<OutputShape>& outputs, const Options& options, const std::vector<NamedHead>* heads) {
    const ByName by_name = index_outputs(outputs);
    check_model_options(options);
    if (heads && !heads->empty() && (*heads)[0].kind == HeadKind::SSD) return ssd_layout(*heads, outputs, options);
    const HeadKind kind = heads ? head_family(*heads, options.wording) : HeadKind::DFL;
    if (kind != HeadKind::DFL) return anchor_family_layout(kind, *heads, outputs, by_name, options);
    return dfl_layout(outputs, by_name, options, heads);
}

}  // namespace hailo_decode::setup
