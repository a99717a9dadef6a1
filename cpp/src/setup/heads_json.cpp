// setup::read_heads: the heads a config names ({"box", "cls", ...} objects), read once for the
// TAPPAS plugin's "heads" key and Python's DecoderConfig(heads=[{...}, ...]). This file checks
// the description itself (keys, kinds, one family, names, numbers); pair_outputs then checks the
// heads against the outputs' shapes as it checks Head objects.
#include <algorithm>
#include <stdexcept>

#include "pairing_detail.hpp"

namespace hailo_decode::setup {

namespace {

using detail::kMaxImageSide;
using detail::quoted;

// Keys of each family; "cls" and "stride" are shared.
const std::vector<std::string> kDflOnly = {"box", "angle", "kpt", "mask"};
const std::vector<std::string> kAnchorOnly = {"output", "anchors"};
const std::vector<std::string> kYoloxOnly = {"reg", "obj"};
const std::vector<std::string> kAllKeys = {"box", "cls", "stride", "angle", "kpt", "mask", "output", "anchors", "reg", "obj"};

bool has(const std::vector<std::string>& keys, const std::string& k) {
    return std::find(keys.begin(), keys.end(), k) != keys.end();
}

const char* family_words(HeadKind kind) {
    return kind == HeadKind::YOLOV5 ? "a YOLOv5/YOLOv7 anchor head (\"output\", \"anchors\")"
           : kind == HeadKind::YOLOX ? "a YOLOX head (\"reg\", \"obj\", \"cls\")"
                                     : "a DFL head (\"box\", \"cls\")";
}

class HeadReader {
public:
    explicit HeadReader(const std::string& where) : prefix_(where.empty() ? "" : where + ": ") {}

    [[noreturn]] void fail(const std::string& what) const { throw std::invalid_argument(prefix_ + what); }
    [[noreturn]] void fail_kind(const std::string& what) const { throw type_error(prefix_ + what); }

    NamedHead head(const json::Value& v, size_t i) const {
        const std::string at = "heads[" + std::to_string(i) + "]";
        if (!v.is_object())
            fail_kind(at + " must be an object ({\"box\": ..., \"cls\": ...}, {\"output\": ..., \"anchors\": ...} or "
                      "{\"reg\": ..., \"obj\": ..., \"cls\": ...}), got " + v.dump());
        for (const auto& m : v.members()) {
            if (has(kAllKeys, m.first)) continue;
            const std::string close = closest_name(m.first, kAllKeys);
            fail_kind(at + ": unknown key " + json::Value::string(m.first).dump() +
                      (close.empty() ? "" : "; did you mean " + json::Value::string(close).dump() + "?"));
        }
        NamedHead h;
        h.kind = kind_of(v, at);
        if (h.kind == HeadKind::YOLOV5) {
            h.box = name(v, at, "output", true);
            h.cls = h.box;
            h.anchors = anchors(v, at);
        } else if (h.kind == HeadKind::YOLOX) {
            h.box = name(v, at, "reg", true);
            h.obj = name(v, at, "obj", true);
            h.cls = name(v, at, "cls", true);
        } else {
            h.box = name(v, at, "box", true);
            h.cls = name(v, at, "cls", true);
            h.angle = name(v, at, "angle", false);
            h.kpt = name(v, at, "kpt", false);
            h.mask = name(v, at, "mask", false);
            if (int(!h.angle.empty()) + int(!h.kpt.empty()) + int(!h.mask.empty()) > 1)
                fail(at + ": a head has at most one of \"angle\" (OBB), \"kpt\" (pose) and \"mask\" (segmentation)");
        }
        h.stride = stride(v, at);
        return h;
    }

private:
    // The family the keys say; a head with keys of two families is refused.
    HeadKind kind_of(const json::Value& v, const std::string& at) const {
        std::string dfl, anchor, yolox;  // the first key of each family found
        for (const auto& m : v.members()) {
            if (dfl.empty() && has(kDflOnly, m.first)) dfl = m.first;
            if (anchor.empty() && has(kAnchorOnly, m.first)) anchor = m.first;
            if (yolox.empty() && has(kYoloxOnly, m.first)) yolox = m.first;
        }
        const bool has_cls = v.find("cls") != nullptr;
        std::vector<std::string> found;
        for (const std::string* k : {&dfl, &anchor, &yolox})
            if (!k->empty()) found.push_back(*k);
        if (found.size() > 1)
            fail(at + ": " + json::Value::string(found[0]).dump() + " and " + json::Value::string(found[1]).dump() +
                 " are keys of different head kinds (DFL: \"box\", \"cls\", \"angle\" | \"kpt\" | \"mask\"; YOLOv5/YOLOv7: "
                 "\"output\", \"anchors\"; YOLOX: \"reg\", \"obj\", \"cls\")");
        if (!anchor.empty()) {
            if (has_cls) fail(at + ": an anchor head (\"output\", \"anchors\") has no \"cls\": its one tensor holds the classes");
            return HeadKind::YOLOV5;
        }
        if (!yolox.empty()) return HeadKind::YOLOX;
        return HeadKind::DFL;
    }

    // An output name: a non-empty string (null or absent: "" when optional).
    std::string name(const json::Value& v, const std::string& at, const char* key, bool required) const {
        const json::Value* n = v.find(key);
        if (n == nullptr || n->is_null()) {
            if (!required) return "";
            fail(at + ": \"" + key + "\" (an output name) is missing");
        }
        if (!n->is_string()) fail_kind(at + "." + key + " must be an output name (a string), got " + n->dump());
        if (n->as_string().empty()) fail(at + "." + key + " must be an output name, got \"\"");
        return n->as_string();
    }

    // A whole number in [1, 2^20] written as an integer (16, not 16.0 or "16").
    int64_t whole(const json::Value& n, const std::string& what, const std::string& must) const {
        if (!n.is_number()) fail_kind(what + " must be " + must + ", got " + n.dump());
        if (!n.is_integer_literal() || !n.is_int64() || n.as_int() < 1 || n.as_int() > kMaxImageSide)
            fail(what + " must be " + must + ", got " + n.dump());
        return n.as_int();
    }

    int stride(const json::Value& v, const std::string& at) const {
        const json::Value* s = v.find("stride");
        if (s == nullptr || s->is_null()) return 0;
        return int(whole(*s, at + ".stride", "a positive integer (at most " + std::to_string(kMaxImageSide) +
                                                 "; left out: from the grid and the input size)"));
    }

    std::vector<std::pair<int, int>> anchors(const json::Value& v, const std::string& at) const {
        const json::Value* a = v.find("anchors");
        const std::string must = "a list of [w, h] pairs of positive whole pixels";
        if (a == nullptr || a->is_null()) fail(at + ": \"anchors\" (" + must + ") is missing");
        if (!a->is_array()) fail_kind(at + ".anchors must be " + must + ", got " + a->dump());
        if (a->items().empty()) fail(at + ".anchors: at least one anchor [w, h] is needed");
        std::vector<std::pair<int, int>> out;
        for (size_t j = 0; j < a->items().size(); ++j) {
            const json::Value& wh = a->items()[j];
            const std::string here = at + ".anchors[" + std::to_string(j) + "]";
            if (!wh.is_array() || wh.items().size() != 2)
                (wh.is_array() ? fail(here + " must be a [w, h] pair, got " + wh.dump())
                               : fail_kind(here + " must be a [w, h] pair, got " + wh.dump()));
            const std::string px = "a positive whole number of pixels (at most " + std::to_string(kMaxImageSide) + ")";
            out.emplace_back(int(whole(wh.items()[0], here + "[0] (w)", px)), int(whole(wh.items()[1], here + "[1] (h)", px)));
        }
        return out;
    }

    std::string prefix_;
};

// Each name a head gives is one of the outputs'; the closest is named when it is not.
void check_names(const std::vector<NamedHead>& heads, const std::vector<OutputShape>& outputs, const HeadReader& r) {
    std::vector<std::string> names;
    for (const OutputShape& o : outputs) names.push_back(o.name);
    for (size_t i = 0; i < heads.size(); ++i) {
        const NamedHead& h = heads[i];
        const bool v5 = h.kind == HeadKind::YOLOV5, x = h.kind == HeadKind::YOLOX;
        const std::pair<const char*, const std::string*> roles[] = {
            {v5 ? "output" : x ? "reg" : "box", &h.box}, {"cls", v5 ? nullptr : &h.cls}, {"obj", &h.obj},
            {"angle", &h.angle}, {"kpt", &h.kpt}, {"mask", &h.mask}};
        for (const auto& [role, n] : roles) {
            if (n == nullptr || n->empty() || has(names, *n)) continue;
            const std::string close = closest_name(*n, names);
            r.fail("heads[" + std::to_string(i) + "]." + role + ": " + quoted(*n) + " is not among the outputs " +
                   detail::names_text(names) + (close.empty() ? "" : "; did you mean " + quoted(close) + "?"));
        }
    }
}

}  // namespace

std::vector<NamedHead> read_heads(const json::Value& heads, const std::string& where,
                                  const std::vector<OutputShape>* outputs) {
    const HeadReader r(where);
    if (!heads.is_array())
        r.fail_kind("heads must be a list of heads ({\"box\": ..., \"cls\": ..., \"stride\": ...}, ...), got " + heads.dump());
    if (heads.items().empty()) r.fail("heads must not be empty (leave the key out to pair the outputs by shape)");
    std::vector<NamedHead> out;
    for (size_t i = 0; i < heads.items().size(); ++i) {
        out.push_back(r.head(heads.items()[i], i));
        if (out.back().kind != out.front().kind)
            r.fail("heads[0] is " + std::string(family_words(out.front().kind)) + ", heads[" + std::to_string(i) + "] " +
                   family_words(out.back().kind) + ": all heads must be of one kind");
    }
    if (outputs) check_names(out, *outputs, r);
    return out;
}

}  // namespace hailo_decode::setup
