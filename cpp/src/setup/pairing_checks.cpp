// The checks of heads against their outputs: every output in exactly one head; the task outputs
// (keypoints, angle, mask coefficients) on every head or none, on the head's grid, with channels
// the decoder can read.
#include <algorithm>
#include <set>
#include <stdexcept>

#include "pairing_detail.hpp"

namespace hailo_decode::setup::detail {

void check_used_once(const std::vector<std::string>& used, const std::vector<OutputShape>& outputs, Wording w) {
    if (std::set<std::string>(used.begin(), used.end()).size() != used.size())
        throw std::invalid_argument("an output is used by more than one head: " + names_text(used));
    std::vector<std::string> unused;
    for (const OutputShape& o : outputs)
        if (std::find(used.begin(), used.end(), o.name) == used.end()) unused.push_back(o.name);
    if (!unused.empty())
        throw std::invalid_argument("outputs " + names_text(unused) + " belong to no head; " + unused_outputs_advice(w));
}

namespace {

// What `task` needs on every head, in words.
std::string task_needs(const std::string& task, Wording w) {
    if (task == "pose") return "a kpt output";
    if (task == "obb") return "an angle output";
    if (task == "segment") return "a mask output (and " + key_text(w, "proto") + ")";
    return "no kpt, angle or mask output";
}

void check_on_box_grid(const NamedHead& h, const std::string& role, const std::string& name, const ByName& by_name) {
    const OutputShape &o = *by_name.at(name), &box = *by_name.at(h.box);
    if (o.height != box.height || o.width != box.width)
        throw std::invalid_argument(role + " output " + quoted(name) + ": grid " + grid_text(o.height, o.width) +
                                    " differs from its head's box output " + quoted(h.box) + " grid " +
                                    grid_text(box.height, box.width));
}

}  // namespace

TaskShape check_task_outputs(const std::vector<NamedHead>& heads, const ByName& by_name, const std::string& task,
                             int keypoint_dims, Wording w) {
    size_t with_kpt = 0, with_angle = 0;
    bool with_mask = false;
    for (const NamedHead& h : heads) {
        with_kpt += !h.kpt.empty();
        with_angle += !h.angle.empty();
        with_mask = with_mask || !h.mask.empty();
    }
    for (const auto& [role, having] : {std::make_pair(std::string("kpt"), with_kpt), std::make_pair(std::string("angle"), with_angle)}) {
        if (having == 0 || having == heads.size()) continue;
        std::vector<std::string> lacking;
        for (const NamedHead& h : heads)
            if ((role == "kpt" ? h.kpt : h.angle).empty()) lacking.push_back(h.box);
        throw std::invalid_argument("every head needs a " + role + " output when one has it; heads with box outputs " +
                                    names_text(lacking) + " have none");
    }
    if (with_kpt && with_angle) throw std::invalid_argument("a head has either a kpt (pose) or an angle (OBB) output, not both");
    const std::string found = with_kpt ? "pose" : with_angle ? "obb" : with_mask ? "segment" : "detect";
    if (!task.empty() && task != found)
        throw std::invalid_argument(setting_text(w, "task", quoted(task), json::Value::string(task).dump()) + " needs " +
                                    task_needs(task, w) + " on every head; the heads describe " +
                                    quoted(found));
    for (const NamedHead& h : heads) {
        if (!h.kpt.empty()) check_on_box_grid(h, "kpt", h.kpt, by_name);
        if (!h.angle.empty()) check_on_box_grid(h, "angle", h.angle, by_name);
    }
    if (found == "obb") {
        for (const NamedHead& h : heads) {
            const OutputShape& o = *by_name.at(h.angle);
            if (o.channels != 1)
                throw std::invalid_argument("angle output " + quoted(o.name) + ": expected 1 channel (the angle logit), got " +
                                            std::to_string(o.channels));
        }
    }
    if (found != "pose") return {found, 0, 3};
    const int dims = keypoint_dims == 0 ? 3 : keypoint_dims;
    std::set<int> counts;
    std::vector<std::string> seen;
    std::string each;  // {'kpt8': 51, 'kpt16': 34}, each output once
    for (const NamedHead& h : heads) {
        const int c = by_name.at(h.kpt)->channels;
        counts.insert(c);
        if (std::find(seen.begin(), seen.end(), h.kpt) != seen.end()) continue;
        seen.push_back(h.kpt);
        each += (each.empty() ? "" : ", ") + quoted(h.kpt) + ": " + std::to_string(c);
    }
    if (counts.size() != 1) throw std::invalid_argument("all kpt outputs must have the same channels, got {" + each + "}");
    const int c = *counts.begin();
    if (c % dims) {
        const std::string hint = dims == 3 && c % 2 == 0
                                     ? (w == Wording::Python ? "; pass " : "; set ") + setting_text(w, "keypoint_dims", "2", "2") +
                                           " for (x, y) keypoints"
                                     : "";
        throw std::invalid_argument("kpt output " + quoted(heads[0].kpt) + ": " + std::to_string(c) +
                                    " channels is not a multiple of " + std::to_string(dims) + " (" +
                                    (dims == 3 ? "x, y, visibility" : "x, y") + " per keypoint)" + hint);
    }
    return {found, c / dims, dims};
}

void check_seg(const OutputShape& proto, const std::vector<NamedHead>& heads, const ByName& by_name, int image_height,
               int image_width, int proto_stride, Wording w) {
    for (const NamedHead& h : heads) {
        const OutputShape &m = *by_name.at(h.mask), &b = *by_name.at(h.box);
        if (m.channels != proto.channels)
            throw std::invalid_argument("output " + quoted(m.name) + ": " + std::to_string(m.channels) +
                                        " mask coefficients, but the prototype output " + quoted(proto.name) + " has " +
                                        std::to_string(proto.channels) + " channels (they must be equal)");
        if (m.height != b.height || m.width != b.width)
            throw std::invalid_argument("output " + quoted(m.name) + ": mask coefficient grid " + grid_text(m.height, m.width) +
                                        " differs from its head's box grid " + grid_text(b.height, b.width) + " (" +
                                        quoted(b.name) + ")");
    }
    if (proto_stride == 0) return;
    const int st = proto_stride;
    if (image_height % st || image_width % st || proto.height != image_height / st || proto.width != image_width / st)
        throw std::invalid_argument("output " + quoted(proto.name) + ": prototype grid " + grid_text(proto.height, proto.width) +
                                    " is not image_size / " + std::to_string(st) + " = " +
                                    grid_text(image_height / st, image_width / st) + " (image_size " +
                                    grid_text(image_height, image_width) + "); " + (w == Wording::Python ? "pass " : "set ") +
                                    setting_text(w, "proto_stride", "None", "null") + " to allow it");
}

}  // namespace hailo_decode::setup::detail
