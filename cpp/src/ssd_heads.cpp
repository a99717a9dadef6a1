#include "ssd_heads.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "kernels/kernels.hpp"

namespace hailo_decode {
namespace detail {
namespace {

[[noreturn]] void bad(const std::string& what) { throw std::invalid_argument(what); }

const TensorView& view_at(const std::vector<TensorView>& views, int index, const char* role) {
    if (index < 0 || size_t(index) >= views.size())
        bad(std::string("SSD head refers to an output index out of range (") + role + ")");
    return views[size_t(index)];
}

void check_coding(const SsdCoding& c, int classes_in_tensor) {
    if (!std::isfinite(c.centers_scale) || !(c.centers_scale > 0.0f) || !std::isfinite(c.dims_scale) ||
        !(c.dims_scale > 0.0f))
        bad("SSD centers_scale and dims_scale must be finite and > 0, got " + std::to_string(c.centers_scale) + ", " +
            std::to_string(c.dims_scale));
    const int idx[4] = {c.ty_index, c.tx_index, c.th_index, c.tw_index};
    int seen = 0;
    for (int i : idx) {
        if (i < 0 || i > 3) bad("SSD regression indices (ty, tx, th, tw) must be 0..3, got " + std::to_string(i));
        seen |= 1 << i;
    }
    if (seen != 15)
        bad("SSD regression indices (ty, tx, th, tw) must be a permutation of 0..3, got (" + std::to_string(idx[0]) +
            ", " + std::to_string(idx[1]) + ", " + std::to_string(idx[2]) + ", " + std::to_string(idx[3]) + ")");
    if (c.background_class != -1 && c.background_class != 0 && c.background_class != classes_in_tensor - 1)
        bad("SSD background class must be -1 (none), 0 or the last class (" + std::to_string(classes_in_tensor - 1) +
            "), got " + std::to_string(c.background_class));
}

template <typename T>
inline const T* frame_of(const void* base, const TensorView& v, size_t frame) {
    return frame_ptr<T>(base, v, frame);
}

}  // namespace

SsdHeads::SsdHeads(const Config& cfg, const std::vector<TensorView>& views) : cfg_(cfg) {
    const Settings& s = cfg.settings;
    const SsdCoding& coding = cfg.ssd;
    const int nc = cfg.num_classes;
    const bool with_bg = coding.background_class >= 0;
    const int per_anchor = nc + (with_bg ? 1 : 0);
    check_coding(coding, per_anchor);
    for (size_t i = 0; i < cfg.heads.size(); ++i) {
        const HeadSpec& hs = cfg.heads[i];
        Head h;
        h.index = i;
        h.reg = &view_at(views, hs.box_output, "reg");
        h.cls = &view_at(views, hs.cls_output, "cls");
        h.out_reg = hs.box_output;
        h.out_cls = hs.cls_output;
        const std::string& name = h.reg->spec->name;
        if (hs.box_output == hs.cls_output) bad("SSD head '" + name + "': reg and cls must be two outputs");
        if (hs.box_anchors.empty() || hs.box_anchors.size() % 2)
            bad("output '" + name + "': SSD anchors must be (w, h) pairs, got " + std::to_string(hs.box_anchors.size()) +
                " values");
        for (float a : hs.box_anchors)
            if (!std::isfinite(a) || !(a > 0.0f)) bad("output '" + name + "': SSD anchors must be finite and > 0, got " + std::to_string(a));
        h.num_anchors = int(hs.box_anchors.size() / 2);
        h.per_anchor = per_anchor;
        h.anchors = hs.box_anchors;
        if (h.reg->channels != 4 * h.num_anchors)
            bad("output '" + name + "': SSD reg channels must be anchors x 4 = " + std::to_string(4 * h.num_anchors) +
                ", got " + std::to_string(h.reg->channels));
        if (h.cls->channels != h.num_anchors * per_anchor)
            bad("output '" + h.cls->spec->name + "': SSD class channels must be anchors x " +
                (with_bg ? "(classes + background) = " + std::to_string(h.num_anchors) + " x " + std::to_string(per_anchor)
                         : "classes = " + std::to_string(h.num_anchors) + " x " + std::to_string(per_anchor)) +
                " = " + std::to_string(h.num_anchors * per_anchor) + ", got " + std::to_string(h.cls->channels));
        if (h.cls->height != h.reg->height || h.cls->width != h.reg->width)
            bad("output '" + h.cls->spec->name + "': grid (" + std::to_string(h.cls->height) + ", " +
                std::to_string(h.cls->width) + ") differs from reg output '" + name + "' (" +
                std::to_string(h.reg->height) + ", " + std::to_string(h.reg->width) + ")");
        // Per class channel: its output class and its threshold (the background's: never).
        std::vector<float> th(size_t(h.cls->channels));
        h.class_of.resize(size_t(h.cls->channels));
        for (int a = 0; a < h.num_anchors; ++a)
            for (int k = 0; k < per_anchor; ++k) {
                const size_t ch = size_t(a * per_anchor + k);
                int id = k;
                if (with_bg && k == coding.background_class) id = -1;
                else if (with_bg && coding.background_class == 0) id = k - 1;
                h.class_of[ch] = id;
                th[ch] = id < 0 ? std::numeric_limits<float>::infinity()
                                : s.score_threshold[s.score_threshold.size() == 1 ? 0 : size_t(id)];
            }
        h.cls_scorer = make_class_scorer(*h.cls, th, s.score_inclusive, s.sigmoid);
        // Background channels never pass, whatever the activation makes of +inf.
        for (size_t ch = 0; ch < h.class_of.size(); ++ch)
            if (h.class_of[ch] < 0) {
                if (!h.cls_scorer.q_min.empty()) h.cls_scorer.q_min[ch] = std::numeric_limits<int32_t>::max();
                if (!h.cls_scorer.x_min.empty()) h.cls_scorer.x_min[ch] = std::numeric_limits<float>::quiet_NaN();
            }
        h.reg_scorer = make_class_scorer(*h.reg, {0.0f}, true, false);
        const int order[4] = {coding.ty_index, coding.tx_index, coding.th_index, coding.tw_index};
        for (int a = 0; a < h.num_anchors; ++a)
            for (int j = 0; j < 4; ++j) {
                h.reg_channel.push_back(a * 4 + order[j]);
                h.reg_offset.push_back(h.reg->channel_offset[size_t(a * 4 + order[j])]);
            }
        if (h.cls->dtype == DType::U8 && h.cls->contiguous_channels && !h.cls_scorer.q_min.empty()) {
            int32_t lowest = std::numeric_limits<int32_t>::max();
            for (int32_t q : h.cls_scorer.q_min) lowest = std::min(lowest, q);
            h.uniform_u8 = true;
            h.cut = lowest;
        }
        heads_.push_back(std::move(h));
    }
    if (s.hailort_sort)  // the op visits its std::map<reg name, cls name>: regression outputs in name order
        std::stable_sort(heads_.begin(), heads_.end(),
                         [](const Head& a, const Head& b) { return a.reg->spec->name < b.reg->spec->name; });
}

template <typename R>
void SsdHeads::add_box(const Head& h, const R* reg, int row, int col, int a, ScratchVector<Box>& boxes) const {
    const Settings& s = cfg_.settings;
    const SsdCoding& c = cfg_.ssd;
    const TensorView& v = *h.reg;
    const size_t cell = v.cell(row, col);
    const size_t* off = h.reg_offset.data() + size_t(4 * a);
    // Each value with its own channel's quantization (the reg scorer's table or zero point and scale).
    auto value = [&](int j) { return class_score(h.reg_scorer, v, reg, cell + off[j], h.reg_channel[size_t(4 * a + j)]); };
    float ty = value(0), tx = value(1), th = value(2), tw = value(3);
    tx /= c.centers_scale;
    ty /= c.centers_scale;
    tw /= c.dims_scale;
    th /= c.dims_scale;
    const float wa = h.anchors[size_t(2 * a)], ha = h.anchors[size_t(2 * a + 1)];
    const float w = std::exp(tw) * wa;
    const float hh = std::exp(th) * ha;
    const float w_stride = 1.0f / float(v.width), h_stride = 1.0f / float(v.height);
    const float xcenter_a = float(col) * w_stride + 0.5f * w_stride;
    const float ycenter_a = float(row) * h_stride + 0.5f * h_stride;
    const float x_center = tx * wa + xcenter_a;
    const float y_center = ty * ha + ycenter_a;
    float y0 = y_center - hh / 2.0f, x0 = x_center - w / 2.0f, y1 = y_center + hh / 2.0f, x1 = x_center + w / 2.0f;
    if (!s.normalized) {
        y0 *= float(s.image_height); y1 *= float(s.image_height);
        x0 *= float(s.image_width); x1 *= float(s.image_width);
    }
    Box& b = boxes.emplace_back();
    if (s.yxyx) {
        b.v[0] = y0; b.v[1] = x0; b.v[2] = y1; b.v[3] = x1;
    } else {
        b.v[0] = x0; b.v[1] = y0; b.v[2] = x1; b.v[3] = y1;
    }
    b.head = uint32_t(h.index);
    b.cell = (uint32_t(row) * uint32_t(v.width) + uint32_t(col)) * uint32_t(h.num_anchors) + uint32_t(a);
}

template <typename R, typename C>
void SsdHeads::head(const Head& h, const R* reg, const C* cls, ScratchVector<Candidate>& candidates,
                    ScratchVector<Box>& boxes) const {
    const TensorView& cv = *h.cls;
    const ClassScorer& sc = h.cls_scorer;
    const bool multi = cfg_.settings.multi_label;
    const int per = h.per_anchor;
    const int total = h.num_anchors * per;
    const kernels::Table& k = kernels::active();
    uint32_t hits[1024];
    for (int row = 0; row < cv.height; ++row)
        for (int col = 0; col < cv.width; ++col) {
            const size_t cell = cv.cell(row, col);
            auto add = [&](int a, int ch) {  // a passing class channel of anchor a (boxes once per anchor)
                const float score = class_score(sc, cv, cls, cell + cv.channel_offset[size_t(ch)], ch);
                Candidate& cand = candidates.emplace_back();
                cand.score = score;
                cand.class_id = h.class_of[size_t(ch)];
                cand.box = uint32_t(boxes.size());
                (void)a;
            };
            if (multi) {
                int last_anchor = -1;
                auto hit = [&](int ch) {
                    const int a = ch / per;
                    if (a != last_anchor) {
                        // The anchor's box follows its candidates' index: decode it before the first.
                        if (last_anchor >= 0) add_box(h, reg, row, col, last_anchor, boxes);
                        last_anchor = a;
                    }
                    add(a, ch);
                };
                if constexpr (std::is_same<C, uint8_t>::value) {
                    if (h.uniform_u8) {
                        if (h.cut > 255) continue;
                        const uint8_t* bytes = cls + cell;
                        for (int first = 0; first < total; first += 1024) {
                            const size_t n = size_t(std::min(1024, total - first));
                            const size_t found = k.scan_u8_uniform(bytes + first, uint8_t(h.cut), n, hits);
                            for (size_t j = 0; j < found; ++j) {
                                const int ch = first + int(hits[j]);
                                if (int32_t(bytes[ch]) >= sc.q_min[size_t(ch)]) hit(ch);
                            }
                        }
                        if (last_anchor >= 0) add_box(h, reg, row, col, last_anchor, boxes);
                        continue;
                    }
                }
                for (int ch = 0; ch < total; ++ch)
                    if (raw_passes(sc, cls[cell + cv.channel_offset[size_t(ch)]], ch)) hit(ch);
                if (last_anchor >= 0) add_box(h, reg, row, col, last_anchor, boxes);
                continue;
            }
            // Best class of each anchor (the first on ties, background excluded), kept if it passes.
            for (int a = 0; a < h.num_anchors; ++a) {
                int best = -1;
                float best_score = 0.0f;
                for (int kk = 0; kk < per; ++kk) {
                    const int ch = a * per + kk;
                    if (h.class_of[size_t(ch)] < 0) continue;
                    const float v = class_score(sc, cv, cls, cell + cv.channel_offset[size_t(ch)], ch);
                    if (best < 0 || v > best_score) { best = ch; best_score = v; }
                }
                if (best < 0 || !raw_passes(sc, cls[cell + cv.channel_offset[size_t(best)]], best)) continue;
                add(a, best);
                add_box(h, reg, row, col, a, boxes);
            }
        }
}

void SsdHeads::collect(const void* const* tensors, size_t frame, ScratchVector<Candidate>& candidates,
                       ScratchVector<Box>& boxes) const {
    for (const Head& h : heads_) {
        const void* r = tensors[h.out_reg];
        const void* c = tensors[h.out_cls];
#define HD_SSD_CLS(R)                                                                                              \
    switch (h.cls->dtype) {                                                                                        \
        case DType::U8: head(h, frame_of<R>(r, *h.reg, frame), frame_of<uint8_t>(c, *h.cls, frame), candidates, boxes); break; \
        case DType::U16: head(h, frame_of<R>(r, *h.reg, frame), frame_of<uint16_t>(c, *h.cls, frame), candidates, boxes); break; \
        case DType::F32: head(h, frame_of<R>(r, *h.reg, frame), frame_of<float>(c, *h.cls, frame), candidates, boxes); break; \
    }
        switch (h.reg->dtype) {
            case DType::U8: HD_SSD_CLS(uint8_t) break;
            case DType::U16: HD_SSD_CLS(uint16_t) break;
            case DType::F32: HD_SSD_CLS(float) break;
        }
#undef HD_SSD_CLS
    }
}

}  // namespace detail
}  // namespace hailo_decode
