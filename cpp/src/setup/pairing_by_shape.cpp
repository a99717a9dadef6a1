// Heads from the output shapes alone: outputs sharing a grid form a head, told apart by their
// channel counts (box 4 x bins, angle 1, keypoints a multiple of keypoint_dims, mask coefficients
// the prototype's channels, the class count the same on every grid). Ambiguity is an error that
// lists the readings, never a guess.
#include <algorithm>
#include <map>
#include <stdexcept>
#include <tuple>

#include "pairing_detail.hpp"

namespace hailo_decode::setup::detail {

namespace {

// Heads of a -seg model named: with their mask coefficient outputs (and, in a config, the prototype).
std::string seg_advice(Wording w) {
    if (w == Wording::Python) return "pass " + heads_text(w, HeadsAdvice::Mask);
    return "name the heads in the config: " + heads_text(w, HeadsAdvice::Mask) + ", and the prototype output in \"proto\"";
}

// The two outputs of a trio other than `one`.
std::pair<const OutputShape*, const OutputShape*> others(const Outputs& trio, const OutputShape* one) {
    Outputs rest;
    for (const OutputShape* o : trio)
        if (o != one) rest.push_back(o);
    return {rest[0], rest[1]};
}

NamedHead dfl_head(const OutputShape& box, const OutputShape& cls) {
    NamedHead h;
    h.box = box.name;
    h.cls = cls.name;
    return h;
}

std::string box_or_class_error(const GridGroup& g, const OutputShape& a, const OutputShape& b, const std::string& advice) {
    return "cannot tell box from class output on grid " + grid_text(g.height, g.width) + ": " + quoted(a.name) + " has " +
           std::to_string(a.channels) + " channels, " + quoted(b.name) + " has " + std::to_string(b.channels) + "; " +
           advice;
}

// (task, class channels, extra channels): one way of reading every grid's three outputs.
using Reading = std::tuple<std::string, int, int>;

// Each reading that fits every grid, with each grid's candidate heads under it.
std::map<Reading, std::vector<std::vector<NamedHead>>> three_per_grid_readings(const std::vector<GridGroup>& ordered,
                                                                                 int bins, const std::string& task,
                                                                                 int dims) {
    std::map<Reading, std::vector<std::vector<NamedHead>>> readings;
    bool first = true;
    for (const GridGroup& g : ordered) {
        std::map<Reading, std::vector<NamedHead>> found;
        const bool has64 = std::any_of(g.outputs.begin(), g.outputs.end(), [](const OutputShape* o) { return o->channels == 64; });
        for (const OutputShape* box : g.outputs) {
            if (!(bins != 0 ? int64_t(box->channels) == 4 * int64_t(bins) : box->channels % 4 == 0)) continue;
            // A 64-channel box (16 bins) is preferred over another multiple of 4, as for detection.
            if (bins == 0 && box->channels != 64 && has64) continue;
            const auto [a, b] = others(g.outputs, box);
            for (const auto& [cls, extra] : {std::make_pair(a, b), std::make_pair(b, a)}) {
                if ((task.empty() || task == "obb") && extra->channels == 1) {
                    NamedHead h = dfl_head(*box, *cls);
                    h.angle = extra->name;
                    found[{"obb", cls->channels, 1}].push_back(h);
                }
                if ((task.empty() || task == "pose") && extra->channels % dims == 0) {
                    NamedHead h = dfl_head(*box, *cls);
                    h.kpt = extra->name;
                    found[{"pose", cls->channels, extra->channels}].push_back(h);
                }
            }
        }
        std::map<Reading, std::vector<std::vector<NamedHead>>> kept;
        for (auto& [key, heads] : found) {
            if (!first && !readings.count(key)) continue;
            auto per_grid = first ? std::vector<std::vector<NamedHead>>{} : std::move(readings[key]);
            per_grid.push_back(std::move(heads));
            kept[key] = std::move(per_grid);
        }
        readings = std::move(kept);
        first = false;
    }
    return readings;
}

}  // namespace

std::vector<GridGroup> group_by_grid(const Outputs& outputs) {
    std::vector<GridGroup> groups;
    for (const OutputShape* o : outputs) {
        auto it = std::find_if(groups.begin(), groups.end(),
                               [&](const GridGroup& g) { return g.height == o->height && g.width == o->width; });
        if (it == groups.end()) it = groups.insert(groups.end(), GridGroup{o->height, o->width, {}});
        it->outputs.push_back(o);
    }
    return groups;
}

std::vector<GridGroup> finest_first(std::vector<GridGroup> groups) {
    std::stable_sort(groups.begin(), groups.end(), [](const GridGroup& x, const GridGroup& y) {
        return int64_t(x.height) * x.width > int64_t(y.height) * y.width;
    });
    return groups;
}

const OutputShape* pick_box(const OutputShape& a, const OutputShape& b, int bins) {
    if (a.channels == b.channels) return nullptr;
    auto only = [&](auto&& fits) -> const OutputShape* {
        const bool fa = fits(a), fb = fits(b);
        return fa == fb ? nullptr : fa ? &a : &b;
    };
    if (bins != 0) return only([&](const OutputShape& o) { return int64_t(o.channels) == 4 * int64_t(bins); });
    // Ultralytics' reg_max is 16 (YOLOv8/YOLO11: 64 channels) or 1 (YOLO26: 4 channels, the
    // distances themselves): those are preferred, in that order, over any other multiple of 4 (a
    // YOLO26 head with 80 classes has a 4- and an 80-channel output).
    if (const OutputShape* sixteen = only([](const OutputShape& o) { return o.channels == 64; })) return sixteen;
    if (const OutputShape* one = only([](const OutputShape& o) { return o.channels == 4; })) return one;
    return only([](const OutputShape& o) { return o.channels % 4 == 0; });
}

std::vector<NamedHead> pair_by_shape(const Outputs& outputs, int bins, const std::string& task, int keypoint_dims,
                                     Wording w) {
    const std::string advice = name_heads_advice(w);
    const std::vector<GridGroup> groups = group_by_grid(outputs);
    std::vector<size_t> sizes;
    for (const GridGroup& g : groups)
        if (std::find(sizes.begin(), sizes.end(), g.outputs.size()) == sizes.end()) sizes.push_back(g.outputs.size());
    const bool pose_or_obb = task == "pose" || task == "obb";
    if (sizes.size() != 1 || (sizes[0] != 2 && sizes[0] != 3) || (task == "detect" && sizes[0] != 2) ||
        (pose_or_obb && sizes[0] != 3)) {
        const std::string hint = family_hint(groups, task, w);
        if (!hint.empty()) throw std::invalid_argument("cannot pair outputs by shape: " + groups_text(groups, true) + ": " + hint);
        const std::string per = task == "detect" ? "two (box, class)"
                                : pose_or_obb   ? "three (box, class, kpt or angle)"
                                                : "two (box, class) or three (box, class, kpt or angle)";
        // A task given settles what each grid needs: it is named, as it may be the mistake.
        const std::string given = task.empty() ? "" : " with " + setting_text(w, "task", quoted(task), "\"" + task + "\"");
        throw std::invalid_argument("cannot pair outputs by shape: each grid needs " + per + " outputs" + given + ", got " +
                                    groups_text(groups, false) + "; " + advice);
    }
    const std::vector<GridGroup> ordered = finest_first(groups);
    std::vector<NamedHead> heads;
    if (sizes[0] == 2) {
        for (const GridGroup& g : ordered) {
            const OutputShape &a = *g.outputs[0], &b = *g.outputs[1];
            const OutputShape* box = pick_box(a, b, bins);
            if (!box)
                throw std::invalid_argument(box_or_class_error(g, a, b, advice) +
                                            (bins ? "" : " (or " + setting_text(w, "bins", "...", "...") + ")"));
            heads.push_back(dfl_head(*box, box == &a ? b : a));
        }
        return heads;
    }
    const int dims = keypoint_dims == 0 ? 3 : keypoint_dims;
    const auto readings = three_per_grid_readings(ordered, bins, task, dims);
    if (readings.size() == 1) {
        const auto& per_grid = readings.begin()->second;
        if (std::all_of(per_grid.begin(), per_grid.end(), [](const auto& options) { return options.size() == 1; })) {
            for (const auto& options : per_grid) heads.push_back(options[0]);
            return heads;
        }
    }
    const std::string names = groups_text(groups, true);
    const std::string hint = family_hint(groups, task, w);
    if (!hint.empty()) throw std::invalid_argument("cannot pair outputs by shape: " + names + ": " + hint);
    if (readings.empty())
        throw std::invalid_argument("cannot pair outputs by shape: no reading as box (4 x bins), class and kpt (a multiple of " +
                                    std::to_string(dims) + ") or angle (1 channel) fits every grid: " + names + "; " + advice);
    std::string options;
    for (const auto& [reading, per_grid] : readings) {
        const auto& [t, nc, k] = reading;
        options += (options.empty() ? "" : "; ") + t + " with " + std::to_string(nc) + " " + plural(nc, "class", "classes");
        if (t == "pose") options += " and " + std::to_string(k) + " kpt channels";
    }
    if (readings.size() == 1) options += " (with two outputs of one grid that could each be either)";
    // The task settles a pose/OBB ambiguity; when it is given already (or no other reading is left),
    // only naming the heads does.
    const bool task_helps = task.empty() && readings.size() > 1;
    const std::string set_task = w == Wording::Python
        ? "pass task='pose' or task='obb' (and keypoint_dims=2 for (x, y) keypoints), or "
        : "set \"task\": \"pose\" or \"obb\" (and \"keypoint_dims\": 2 for (x, y) keypoints), or ";
    throw std::invalid_argument("cannot pair outputs by shape, it is ambiguous: " + options + " all fit " + names + "; " +
                                (task_helps ? set_task : "") + advice);
}

std::string find_proto(const Outputs& outputs) {
    // Alone on the finest grid, twice as fine as the next (stride 4 against 8), while every other
    // grid holds three outputs (box, class, mask coefficients).
    const std::vector<GridGroup> ordered = finest_first(group_by_grid(outputs));
    if (ordered.size() < 2) return "";
    const GridGroup &finest = ordered[0], &next = ordered[1];
    if (finest.outputs.size() != 1 || finest.height != 2 * next.height || finest.width != 2 * next.width) return "";
    for (size_t i = 1; i < ordered.size(); ++i)
        if (ordered[i].outputs.size() != 3) return "";
    return finest.outputs[0]->name;
}

std::vector<NamedHead> pair_seg_by_shape(const Outputs& outputs, const OutputShape& proto, int bins, Wording w) {
    const std::string advice = seg_advice(w);
    const std::vector<GridGroup> groups = group_by_grid(outputs);
    std::vector<GridGroup> bad;
    for (const GridGroup& g : groups)
        if (g.outputs.size() != 3) bad.push_back(g);
    if (!bad.empty())
        throw std::invalid_argument("cannot pair segmentation outputs by shape: each grid needs a box, a class and a mask "
                                    "coefficient output, got " + groups_text(bad, false) + "; " + advice);
    std::vector<NamedHead> heads;
    for (const GridGroup& g : finest_first(groups)) {
        Outputs masks;
        for (const OutputShape* o : g.outputs)
            if (o->channels == proto.channels) masks.push_back(o);
        if (masks.size() != 1)
            throw std::invalid_argument("cannot tell the mask coefficient output on grid " + grid_text(g.height, g.width) + ": " +
                                        outputs_text(g.outputs, true) + " against prototype " + quoted(proto.name) + " with " +
                                        std::to_string(proto.channels) + " channels; " + advice);
        const auto [a, b] = others(g.outputs, masks[0]);
        const OutputShape* box = pick_box(*a, *b, bins);
        if (!box) throw std::invalid_argument(box_or_class_error(g, *a, *b, advice));
        NamedHead h = dfl_head(*box, box == a ? *b : *a);
        h.mask = masks[0]->name;
        heads.push_back(h);
    }
    return heads;
}

}  // namespace hailo_decode::setup::detail
