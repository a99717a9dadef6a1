// The head family of the heads given, and the layout of YOLOv5/YOLOv7 anchor heads (one tensor of
// anchors x (5 + classes) channels) and YOLOX heads (reg 4, objectness 1, classes). Both decode
// boxes only: no prototype, keypoint or angle outputs.
#include <algorithm>
#include <set>
#include <stdexcept>

#include "pairing_detail.hpp"

namespace hailo_decode::setup::detail {

namespace {

const char* family_name(HeadKind kind) {
    return kind == HeadKind::YOLOV5 ? "yolov5" : kind == HeadKind::YOLOX ? "yolox" : "dfl";
}

void check_anchors(const NamedHead& h) {
    if (h.anchors.empty())
        throw std::invalid_argument("anchor head " + quoted(h.box) + ": at least one anchor (w, h) is needed");
    for (const auto& [w, ht] : h.anchors)
        if (w <= 0 || ht <= 0 || w > kMaxImageSide || ht > kMaxImageSide)
            throw std::invalid_argument("anchor head " + quoted(h.box) + ": anchors must be positive whole pixels, got " +
                                        grid_text(w, ht));
}

// The class count one head's outputs hold, after checking their channels and grids (YOLOv5-seg:
// `coefficients` mask coefficients close each anchor's entry).
int head_classes(const NamedHead& h, const ByName& by_name, int coefficients = 0) {
    if (h.kind == HeadKind::YOLOV5) {
        const OutputShape& o = *by_name.at(h.box);
        const int a = int(h.anchors.size());
        if (o.channels % a || o.channels / a < 6 + coefficients)
            throw std::invalid_argument("output " + quoted(o.name) + ": " + std::to_string(o.channels) + " channels do not hold " +
                                        std::to_string(a) + " anchors x (5 + classes" +
                                        (coefficients ? " + " + std::to_string(coefficients) + " mask coefficients" : "") + ")");
        return o.channels / a - 5 - coefficients;
    }
    const OutputShape &reg = *by_name.at(h.box), &obj = *by_name.at(h.obj), &cls = *by_name.at(h.cls);
    if (reg.channels != 4)
        throw std::invalid_argument("output " + quoted(reg.name) + ": YOLOX reg must have 4 channels, got " +
                                    std::to_string(reg.channels));
    if (obj.channels != 1)
        throw std::invalid_argument("output " + quoted(obj.name) + ": YOLOX objectness must have 1 channel, got " +
                                    std::to_string(obj.channels));
    for (const OutputShape* o : {&obj, &cls})
        if (o->height != reg.height || o->width != reg.width)
            throw std::invalid_argument("output " + quoted(o->name) + ": grid " + grid_text(o->height, o->width) +
                                        " differs from reg " + quoted(reg.name) + " " + grid_text(reg.height, reg.width));
    return cls.channels;
}

}  // namespace

// The one output no head names, when its grid is finer than every head's (a prototype's).
static bool finer_leftover(const std::vector<NamedHead>& heads, const std::vector<OutputShape>& outputs,
                           const ByName& by_name) {
    const OutputShape* left = nullptr;
    for (const OutputShape& o : outputs)
        if (std::none_of(heads.begin(), heads.end(), [&](const NamedHead& h) { return h.box == o.name; })) left = &o;
    if (!left) return false;
    for (const NamedHead& h : heads) {
        const auto it = by_name.find(h.box);
        if (it == by_name.end() || it->second->height >= left->height || it->second->width >= left->width) return false;
    }
    return true;
}

// YOLOv5/YOLOv7-seg: the anchor heads and the prototype (named, or the one output no head takes);
// every output is a head's tensor or the prototype, once.
static Layout anchor_seg_layout(std::vector<NamedHead> heads, const std::vector<OutputShape>& outputs, const ByName& by_name,
                                const Options& options) {
    std::vector<std::string> names;
    for (const OutputShape& o : outputs) names.push_back(o.name);
    std::vector<std::string> used;
    for (NamedHead& h : heads) {
        h.cls = h.box;
        if (!by_name.count(h.box))
            throw std::invalid_argument("head tensor output " + quoted(h.box) + " is not among the outputs " + names_text(names));
        if (std::find(used.begin(), used.end(), h.box) != used.end())
            throw std::invalid_argument("output " + quoted(h.box) + " is the tensor of two heads");
        check_anchors(h);
        used.push_back(h.box);
    }
    std::vector<std::string> rest;
    for (const OutputShape& o : outputs)
        if (std::find(used.begin(), used.end(), o.name) == used.end()) rest.push_back(o.name);
    std::string proto = options.proto;
    if (proto.empty()) {
        if (rest.size() != 1)
            throw std::invalid_argument("YOLOv5-seg heads need one prototype output; outputs no head takes: " + names_text(rest) +
                                        "; name it: " + key_text(options.wording, "proto"));
        proto = rest[0];
    } else if (!by_name.count(proto)) {
        throw std::invalid_argument("proto output " + quoted(proto) + " is not among the outputs " + names_text(names));
    } else if (std::find(used.begin(), used.end(), proto) != used.end()) {
        throw std::invalid_argument("proto output " + quoted(proto) + " is a head's tensor too");
    } else if (rest.size() != 1) {
        rest.erase(std::find(rest.begin(), rest.end(), proto));
        throw std::invalid_argument("outputs " + names_text(rest) + " belong to no head (YOLOv5-seg: the heads' tensors "
                                    "and the prototype)");
    }
    const OutputShape& p = *by_name.at(proto);
    std::set<int> classes;
    for (const NamedHead& h : heads) classes.insert(head_classes(h, by_name, p.channels));
    if (classes.size() != 1)
        throw std::invalid_argument("all heads must share the class count; got " + ints_text({classes.begin(), classes.end()}));
    Layout layout;
    layout.kind = HeadKind::YOLOV5;
    layout.task = "segment";
    layout.num_classes = *classes.begin();
    layout.bins = 0;
    resolve_strides(heads, by_name, options, layout);
    if (options.proto_stride > 0 &&
        (p.height * options.proto_stride != layout.image_height || p.width * options.proto_stride != layout.image_width))
        throw std::invalid_argument("prototype output " + quoted(proto) + " " + grid_text(p.height, p.width) + " is not the input " +
                                    grid_text(layout.image_height, layout.image_width) + " / proto_stride " +
                                    std::to_string(options.proto_stride) + "; give the right " +
                                    (options.wording == Wording::Python ? std::string("proto_stride (None: not checked)")
                                                                        : "\"proto_stride\" (null: not checked)"));
    for (NamedHead& h : heads) h.mask = h.box;  // the coefficients lie in the head's tensor
    layout.heads = std::move(heads);
    layout.proto = proto;
    return layout;
}

HeadKind head_family(const std::vector<NamedHead>& heads, Wording w) {
    std::set<std::string> kinds;
    for (const NamedHead& h : heads) kinds.insert(family_name(h.kind));
    if (kinds.size() > 1)
        throw std::invalid_argument("heads mix head families " + names_text({kinds.begin(), kinds.end()}) + "; " +
                                    (w == Wording::Python
                                         ? "use Head (DFL), AnchorHead (YOLOv5/YOLOv7) or YoloxHead (YOLOX) for all of them"
                                         : "name heads of one kind in \"heads\""));
    return heads.empty() ? HeadKind::DFL : heads[0].kind;
}

Layout anchor_family_layout(HeadKind kind, std::vector<NamedHead> heads, const std::vector<OutputShape>& outputs,
                            const ByName& by_name, const Options& options) {
    if (heads.empty()) throw std::invalid_argument("heads must not be empty");
    // YOLOv5/YOLOv7-seg: anchor heads and a prototype output (named, or the one output no head takes
    // when its grid is finer than every head's: a prototype's, not a forgotten head's).
    if (kind == HeadKind::YOLOV5 && (options.task == "segment" || !options.proto.empty() ||
                                     (options.task.empty() && outputs.size() == heads.size() + 1 &&
                                      finer_leftover(heads, outputs, by_name))))
        return anchor_seg_layout(std::move(heads), outputs, by_name, options);
    if (!options.proto.empty() || !(options.task.empty() || options.task == "detect"))
        throw std::invalid_argument(std::string(family_name(kind)) + " heads are detection heads: no " +
                                    setting_text(options.wording, "task", task_text(options.task),
                                                 options.task.empty() ? "null" : json::Value::string(options.task).dump()) +
                                    " or " + key_text(options.wording, "proto") + " for them");
    std::vector<std::string> names, used;
    for (const OutputShape& o : outputs) names.push_back(o.name);
    for (NamedHead& h : heads) {
        if (kind == HeadKind::YOLOV5) h.cls = h.box;  // one tensor: box and class
        const std::vector<std::pair<const char*, std::string>> roles =
            kind == HeadKind::YOLOV5 ? std::vector<std::pair<const char*, std::string>>{{"tensor", h.box}}
                                     : std::vector<std::pair<const char*, std::string>>{{"reg", h.box}, {"obj", h.obj}, {"cls", h.cls}};
        for (const auto& [role, n] : roles) {
            if (!by_name.count(n))
                throw std::invalid_argument(std::string("head ") + role + " output " + quoted(n) + " is not among the outputs " +
                                            names_text(names));
            used.push_back(n);
        }
        if (kind == HeadKind::YOLOV5) check_anchors(h);
    }
    check_used_once(used, outputs, options.wording);
    std::set<int> classes;
    for (const NamedHead& h : heads) classes.insert(head_classes(h, by_name));
    if (classes.size() != 1)
        throw std::invalid_argument("all heads must share the class count; got " + ints_text({classes.begin(), classes.end()}));
    Layout layout;
    layout.kind = kind;
    layout.task = "detect";
    layout.num_classes = *classes.begin();
    layout.bins = 0;  // no DFL
    resolve_strides(heads, by_name, options, layout);
    layout.heads = std::move(heads);
    return layout;
}

}  // namespace hailo_decode::setup::detail
