#include "pairing_ssd.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>
#include <string>

namespace hailo_decode::setup::detail {

namespace {

[[noreturn]] void bad(const std::string& what) { throw std::invalid_argument(what); }

std::string q(const std::string& s) { return "'" + s + "'"; }

std::string names(const std::vector<std::string>& v) {
    std::string out = "[";
    for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + q(v[i]);
    return out + "]";
}

bool same_coding(const SsdCoding& a, const SsdCoding& b) {
    return a.centers_scale == b.centers_scale && a.dims_scale == b.dims_scale && a.ty_index == b.ty_index &&
           a.tx_index == b.tx_index && a.th_index == b.th_index && a.tw_index == b.tw_index &&
           a.background_class == b.background_class;
}

}  // namespace

Layout ssd_layout(const std::vector<NamedHead>& heads, const std::vector<OutputShape>& outputs, const Options& options) {
    if (heads.empty()) bad("heads must not be empty");
    if (!options.proto.empty() || !(options.task.empty() || options.task == "detect"))
        bad("SSD heads are detection heads: no task= or proto= for them");
    std::vector<std::string> all, used;
    for (const OutputShape& o : outputs) all.push_back(o.name);
    auto shape = [&](const std::string& role, const std::string& name) -> const OutputShape& {
        for (const OutputShape& o : outputs)
            if (o.name == name) return o;
        bad("SSD head " + role + " output " + q(name) + " is not among the outputs " + names(all));
    };
    std::set<int> classes;
    for (const NamedHead& h : heads) {
        if (h.kind != HeadKind::SSD) bad("heads mix SSD heads with other head families");
        if (!same_coding(h.ssd, heads[0].ssd))
            bad("SSD heads must share one box coding (centers_scale, dims_scale, regression order, background)");
        const OutputShape& reg = shape("reg", h.box);
        const OutputShape& cls = shape("cls", h.cls);
        used.push_back(h.box);
        used.push_back(h.cls);
        const int a = int(h.box_anchors.size());
        if (a == 0) bad("SSD head " + q(h.box) + ": at least one anchor (w, h) is needed");
        for (const auto& [w, ht] : h.box_anchors)
            if (!std::isfinite(w) || !std::isfinite(ht) || !(w > 0) || !(ht > 0) || w > 1e6 || ht > 1e6)
                bad("SSD head " + q(h.box) + ": anchors must be finite and > 0 (normalized by the input size), got (" +
                    std::to_string(w) + ", " + std::to_string(ht) + ")");
        if (reg.channels != 4 * a)
            bad("output " + q(reg.name) + ": SSD reg channels must be anchors x 4 = " + std::to_string(a) + " x 4 = " +
                std::to_string(4 * a) + ", got " + std::to_string(reg.channels));
        if (cls.height != reg.height || cls.width != reg.width)
            bad("output " + q(cls.name) + ": grid (" + std::to_string(cls.height) + ", " + std::to_string(cls.width) +
                ") differs from reg " + q(reg.name) + " (" + std::to_string(reg.height) + ", " +
                std::to_string(reg.width) + ")");
        const int bg = h.ssd.background_class >= 0 ? 1 : 0;
        if (cls.channels % a || cls.channels / a <= bg)
            bad("output " + q(cls.name) + ": " + std::to_string(cls.channels) + " channels do not hold " +
                std::to_string(a) + " anchors x (classes" + (bg ? " + background)" : ")"));
        classes.insert(cls.channels / a - bg);
    }
    if (std::set<std::string>(used.begin(), used.end()).size() != used.size())
        bad("an output is used by more than one SSD head role: " + names(used));
    std::vector<std::string> unused;
    for (const std::string& n : all)
        if (std::find(used.begin(), used.end(), n) == used.end()) unused.push_back(n);
    if (!unused.empty()) bad("outputs " + names(unused) + " belong to no head; remove them or add heads");
    if (classes.size() != 1) {
        std::string counts;
        for (int c : classes) counts += (counts.empty() ? "" : ", ") + std::to_string(c);
        bad("all SSD heads must share the class count; got [" + counts + "]");
    }
    const SsdCoding& c = heads[0].ssd;
    if (!std::isfinite(c.centers_scale) || !(c.centers_scale > 0) || !std::isfinite(c.dims_scale) || !(c.dims_scale > 0))
        bad("SSD centers_scale and dims_scale must be finite and > 0, got " + std::to_string(c.centers_scale) + ", " +
            std::to_string(c.dims_scale));
    const int order[4] = {c.ty_index, c.tx_index, c.th_index, c.tw_index};
    int seen = 0;
    for (int i : order) seen |= (i >= 0 && i <= 3) ? 1 << i : 16;
    if (seen != 15)
        bad("SSD regression order (ty, tx, th, tw indices) must be a permutation of 0..3, got (" + std::to_string(order[0]) +
            ", " + std::to_string(order[1]) + ", " + std::to_string(order[2]) + ", " + std::to_string(order[3]) + ")");
    const int tensor_classes = *classes.begin() + (c.background_class >= 0 ? 1 : 0);
    if (c.background_class >= 0 && c.background_class != 0 && c.background_class != tensor_classes - 1)
        bad("SSD background class must be 0 or the last class (" + std::to_string(tensor_classes - 1) + "), got " +
            std::to_string(c.background_class));
    if (options.image_height <= 0 || options.image_width <= 0)
        bad("SSD heads need the input size (image_size=(height, width)): their grids do not divide it");
    Layout layout;
    layout.kind = HeadKind::SSD;
    layout.task = "detect";
    layout.num_classes = *classes.begin();
    layout.bins = 0;
    layout.image_height = options.image_height;
    layout.image_width = options.image_width;
    layout.heads = heads;
    for (NamedHead& h : layout.heads) h.stride = 0;
    layout.ssd = c;
    return layout;
}

}  // namespace hailo_decode::setup::detail
