// When outputs do not pair as DFL heads, what they look like instead: YOLOv5/YOLOv7 anchor heads
// (one tensor per grid; their anchors are not in the tensors) or YOLOX heads (reg 4, objectness
// 1, classes per grid), a (4, 1, nc) triple that YOLO26's end-to-end OBB head (a 4-channel box,
// nc classes, a 1-channel angle) shares. The hint names what configures each.
#include <algorithm>
#include <optional>
#include <set>
#include <utility>

#include "pairing_detail.hpp"

namespace hailo_decode::setup::detail {

namespace {

// (anchors, classes) of one YOLOv5/YOLOv7 tensor of anchors x (5 + classes) channels, three
// anchors (both repositories' default) first; none when no count from 1 to 5 fits.
std::optional<std::pair<int, int>> anchor_reading(int channels) {
    for (int a : {3, 1, 2, 4, 5})
        if (channels % a == 0 && channels / a >= 6) return std::make_pair(a, channels / a - 5);
    return std::nullopt;
}

// The class count of a grid holding YOLOX's reg (4), objectness (1) and class outputs.
std::optional<int> yolox_classes(const Outputs& trio) {
    if (trio.size() != 3) return std::nullopt;
    std::multiset<int> rest;
    for (const OutputShape* o : trio) rest.insert(o->channels);
    if (!rest.count(4) || !rest.count(1)) return std::nullopt;
    rest.erase(rest.find(4));
    rest.erase(rest.find(1));
    return *rest.begin();
}

std::string classes_text(int nc) { return std::to_string(nc) + " " + plural(nc, "class", "classes"); }

}  // namespace

std::string family_hint(const std::vector<GridGroup>& groups, const std::string& task, Wording w) {
    auto all_of_size = [&](size_t n) {
        return std::all_of(groups.begin(), groups.end(), [&](const GridGroup& g) { return g.outputs.size() == n; });
    };
    if (groups.empty()) return "";
    if (all_of_size(1)) {
        const int channels = groups[0].outputs[0]->channels;
        const bool one_count = std::all_of(groups.begin(), groups.end(),
                                           [&](const GridGroup& g) { return g.outputs[0]->channels == channels; });
        const auto reading = one_count ? anchor_reading(channels) : std::nullopt;
        if (!reading) return "";
        const auto [a, nc] = *reading;
        return "one tensor per grid looks like YOLOv5/YOLOv7 anchor heads (" + std::to_string(a) + " " +
               plural(a, "anchor", "anchors") + " x (5 + " + classes_text(nc) + ") = " + std::to_string(a * (5 + nc)) +
               " channels): their anchors are not in the tensors; " + family_advice(w) + ", or " +
               heads_text(w, HeadsAdvice::Anchor);
    }
    if (!(task.empty() || task == "detect" || task == "obb") || !all_of_size(3)) return "";
    const std::optional<int> nc = yolox_classes(groups[0].outputs);
    if (!nc) return "";
    for (const GridGroup& g : groups)
        if (yolox_classes(g.outputs) != nc) return "";
    const std::string hint = "4, 1 and " + std::to_string(*nc) + " channels per grid look like YOLOX heads (reg, objectness, " +
                             classes_text(*nc) + "): " + family_advice(w) + ", or " + heads_text(w, HeadsAdvice::Yolox);
    if (task == "detect") return hint;
    // Only the 4-channel output can be the box then, and only the 1-channel one the angle, unless
    // the class count is 4 or 1 too.
    const std::string heads = heads_text(w, HeadsAdvice::Angle);
    const std::string by_shape = (*nc != 1 && *nc != 4) ? setting_text(w, "task", "'obb'", "\"obb\"") + ", " +
                                                              setting_text(w, "bins", "1", "1") + " (or " + heads + ")"
                                                        : heads;
    return hint + ". Or YOLO26's end-to-end OBB head (a 4-channel box, " + classes_text(*nc) + ", a 1-channel angle): " +
           by_shape + " with " + setting_text(w, "end2end", "True", "true") + ", " +
           setting_text(w, "angle_decode", "'raw'", "\"raw\"");
}

}  // namespace hailo_decode::setup::detail
