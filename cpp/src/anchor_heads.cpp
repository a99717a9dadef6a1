#include "anchor_heads.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "anchor_seg.hpp"
#include "kernels/kernels.hpp"

namespace hailo_decode {
namespace detail {
namespace {

[[noreturn]] void bad(const std::string& what) { throw std::invalid_argument(what); }

// A lambda inlined at each call (yolov5's visit: called from two loop orders).
#if defined(__GNUC__)
#define HD_ALWAYS_INLINE __attribute__((always_inline))
#else
#define HD_ALWAYS_INLINE
#endif

const TensorView& view_at(const std::vector<TensorView>& views, int index, const char* role) {
    if (index < 0 || size_t(index) >= views.size())
        bad(std::string("head refers to an output index out of range (") + role + ")");
    return views[size_t(index)];
}

// Field by field: a braced temporary is built on the stack and read back whole (a
// store-forwarding stall per candidate).
inline void put_candidate(Candidate& cand, float score, int c, uint32_t box) {
    cand.score = score;
    cand.class_id = c;
    cand.box = box;
}

inline void add_candidate(ScratchVector<Candidate>& candidates, float score, int c, uint32_t box) {
    put_candidate(candidates.emplace_back(), score, c, box);
}

template <typename T>
inline const T* frame_of(const void* const* tensors, int output, const TensorView& v, size_t frame) {
    return frame_ptr<T>(tensors[output], v, frame);
}

}  // namespace

AnchorHeads::AnchorHeads(const Config& cfg, const std::vector<TensorView>& views) : cfg_(cfg), views_(views) {
    const Settings& s = cfg.settings;
    const int nc = cfg.num_classes;
    thresholds_.resize(size_t(nc));
    for (int c = 0; c < nc; ++c)
        thresholds_[size_t(c)] = s.score_threshold.size() == 1 ? s.score_threshold[0] : s.score_threshold[size_t(c)];
    const float lowest = *std::min_element(s.score_threshold.begin(), s.score_threshold.end());
    lowest_ = lowest;
    coefs_ = anchor_coefficients(cfg, views);
    const std::vector<float> gate{lowest};
    for (size_t i = 0; i < cfg.heads.size(); ++i) {
        const HeadSpec& hs = cfg.heads[i];
        Head h;
        h.index = i;
        h.stride = hs.stride;
        h.out_main = hs.box_output;
        h.main = &view_at(views, hs.box_output, "box");
        const std::string& name = h.main->spec->name;
        if (hs.stride <= 0) bad("output '" + name + "': stride must be positive, got " + std::to_string(hs.stride));
        if (cfg.kind == HeadKind::YOLOV5) {
            if (hs.anchors.empty() || hs.anchors.size() % 2)
                bad("output '" + name + "': anchors must be (w, h) pairs, got " + std::to_string(hs.anchors.size()) +
                    " values");
            for (int a : hs.anchors)
                if (a <= 0) bad("output '" + name + "': anchors must be positive, got " + std::to_string(a));
            h.num_anchors = int(hs.anchors.size() / 2);
            const int entry = 5 + nc + coefs_;  // YOLOv5-seg: the mask coefficients close each entry
            const int want = h.num_anchors * entry;
            if (h.main->channels != want)
                bad("output '" + name + "': channels must be anchors x (5 + classes" + (coefs_ ? " + coefficients" : "") +
                    ") = " + std::to_string(h.num_anchors) + " x " + std::to_string(entry) + " = " + std::to_string(want) +
                    ", got " + std::to_string(h.main->channels));
            for (int a : hs.anchors) h.anchors.push_back(float(a));
            // Every channel takes the activation (YOLOv5 applies the sigmoid to the whole output).
            h.main_scorer = make_class_scorer(*h.main, gate, s.score_inclusive, s.sigmoid);
            for (int a = 0; a < h.num_anchors; ++a) h.obj_offset.push_back(h.main->channel_offset[size_t(a * entry + 4)]);
            if (s.hailort_v5 && h.main->dtype != DType::F32) {
                // HailoRT 5.x: objectness >= quantize(th) (folded into the gate's limits) and each
                // class >= quantize(th) (v5.2.0 yolov5_post_process.hpp lines 126-131, 182-193).
                const int32_t qmax = h.main->dtype == DType::U8 ? 255 : 65535;
                h.v5_limit.assign(size_t(h.main->channels), 0);
                for (int ch = 0; ch < h.main->channels; ++ch) {
                    const int k = ch % entry;
                    if (k < 4 || k >= 5 + nc) continue;  // (mask coefficients: no pre-filter)
                    const float th = k == 4 ? lowest : thresholds_[size_t(k - 5)];
                    h.v5_limit[size_t(ch)] =
                        hailort_prefilter_limit(th, s.sigmoid, h.main->zp[size_t(ch)], h.main->scale[size_t(ch)], qmax);
                    if (k == 4) h.main_scorer.q_min[size_t(ch)] = std::max(h.main_scorer.q_min[size_t(ch)], h.v5_limit[size_t(ch)]);
                }
            }
            if (h.main->dtype == DType::U8 && h.main->per_tensor_quant && h.main_scorer.lut_stride == 0) {
                h.cut_by_obj.resize(256);  // objectness and classes share the tensor's one table
                for (size_t q = 0; q < 256; ++q) h.cut_by_obj[q] = class_cut(h.main_scorer, *h.main, h.main_scorer.lut[q]);
            }
            h.obj = h.cls = nullptr;
            h.out_obj = h.out_cls = -1;
        } else {
            h.obj = &view_at(views, hs.obj_output, "objectness");
            h.cls = &view_at(views, hs.cls_output, "class");
            h.out_obj = hs.obj_output;
            h.out_cls = hs.cls_output;
            if (h.main->channels != 4) bad("output '" + name + "': YOLOX reg channels must be 4, got " + std::to_string(h.main->channels));
            if (h.obj->channels != 1)
                bad("output '" + h.obj->spec->name + "': objectness channels must be 1, got " + std::to_string(h.obj->channels));
            if (h.cls->channels != nc)
                bad("output '" + h.cls->spec->name + "': class channels must be num_classes = " + std::to_string(nc) +
                    ", got " + std::to_string(h.cls->channels));
            for (const TensorView* v : {h.obj, h.cls})
                if (v->height != h.main->height || v->width != h.main->width)
                    bad("output '" + v->spec->name + "': grid (" + std::to_string(v->height) + ", " + std::to_string(v->width) +
                        ") differs from reg output '" + name + "' (" + std::to_string(h.main->height) + ", " +
                        std::to_string(h.main->width) + ")");
            // reg is raw (no activation); objectness and classes take it.
            h.main_scorer = make_class_scorer(*h.main, gate, s.score_inclusive, false);
            h.obj_scorer = make_class_scorer(*h.obj, gate, s.score_inclusive, s.sigmoid);
            h.cls_scorer = make_class_scorer(*h.cls, gate, s.score_inclusive, s.sigmoid);
            if (s.hailort_v5 && h.obj->dtype != DType::F32) {
                // HailoRT 5.x: objectness >= quantize(th) (v5.2.0 yolox_post_process.hpp lines 95, 105),
                // folded into the gate's limit; the classes' pre-filter is yolox_prefilter's.
                const int32_t qmax = h.obj->dtype == DType::U8 ? 255 : 65535;
                h.obj_scorer.q_min[0] = std::max(
                    h.obj_scorer.q_min[0], hailort_prefilter_limit(lowest, s.sigmoid, h.obj->zp[0], h.obj->scale[0], qmax));
            }
            if (h.obj->dtype == DType::U8 && h.obj->per_tensor_quant && h.obj_scorer.lut_stride == 0 &&
                h.cls->dtype == DType::U8 && h.cls->per_tensor_quant) {
                h.cut_by_obj.resize(256);
                for (size_t q = 0; q < 256; ++q) h.cut_by_obj[q] = class_cut(h.cls_scorer, *h.cls, h.obj_scorer.lut[q]);
            }
            if (h.main->dtype == DType::U8) {
                h.size_wh.resize(512);
                for (size_t k = 0; k < 2; ++k)
                    for (size_t q = 0; q < 256; ++q)
                        h.size_wh[k * 256 + q] = yolox_size(h, int(k), std::exp(h.main_scorer.lut[(2 + k) * h.main_scorer.lut_stride + q]));
            }
        }
        heads_.push_back(std::move(h));
    }
    if (cfg.kind == HeadKind::YOLOV5 && s.hailort_sort) {
        // HailoRT's op iterates a std::map<std::string, MemoryView>: inputs in name order.
        std::stable_sort(heads_.begin(), heads_.end(),
                         [](const Head& a, const Head& b) { return a.main->spec->name < b.main->spec->name; });
    }
}

void AnchorHeads::collect(const void* const* tensors, size_t frame, ScratchVector<Candidate>& candidates,
                          ScratchVector<Box>& boxes) const {
    for (const Head& h : heads_) {
        const DType t = h.main->dtype;
        if (cfg_.kind == HeadKind::YOLOV5) {
            switch (t) {
                case DType::U8: yolov5(h, frame_of<uint8_t>(tensors, h.out_main, *h.main, frame), candidates, boxes); break;
                case DType::U16: yolov5(h, frame_of<uint16_t>(tensors, h.out_main, *h.main, frame), candidates, boxes); break;
                case DType::F32: yolov5(h, frame_of<float>(tensors, h.out_main, *h.main, frame), candidates, boxes); break;
            }
        } else {
            if (h.obj->dtype != t || h.cls->dtype != t)
                bad("YOLOX head '" + h.main->spec->name + "': reg, objectness and class outputs must share one dtype");
            switch (t) {
#define HD_YOLOX(T)                                                                                  \
    yolox(h, frame_of<T>(tensors, h.out_main, *h.main, frame), frame_of<T>(tensors, h.out_obj, *h.obj, frame), \
          frame_of<T>(tensors, h.out_cls, *h.cls, frame), candidates, boxes)
                case DType::U8: HD_YOLOX(uint8_t); break;
                case DType::U16: HD_YOLOX(uint16_t); break;
                case DType::F32: HD_YOLOX(float); break;
#undef HD_YOLOX
            }
        }
    }
}

int32_t AnchorHeads::class_cut(const ClassScorer& sc, const TensorView& cls, float obj) const {
    if (cls.dtype != DType::U8 || !cls.per_tensor_quant || !(obj >= 0.0f)) return 0;
    const Settings& s = cfg_.settings;
    int32_t lo = 0, hi = 256;
    while (lo < hi) {
        const int32_t mid = (lo + hi) / 2;
        if (score_passes(sc.lut[size_t(mid)] * obj, lowest_, s.score_inclusive)) hi = mid; else lo = mid + 1;
    }
    return lo;
}

bool AnchorHeads::yolox_prefilter(const Head& h, int c, int32_t q, float objectness) const {
    const TensorView& cv = *h.cls;
    const int32_t qmax = cv.dtype == DType::U8 ? 255 : 65535;
    return q >= hailort_prefilter_limit(thresholds_[size_t(c)] / objectness, cfg_.settings.sigmoid, cv.zp[size_t(c)],
                                        cv.scale[size_t(c)], qmax);
}

template <typename BoxOf, typename ScoreOf, typename Skip, typename Prefilter>
void AnchorHeads::add_cell(const Head& h, int row, int col, BoxOf box_of, ScoreOf score_of, Skip skip,
                           Prefilter prefilter, const uint8_t* class_bytes, int32_t cut,
                           ScratchVector<Candidate>& candidates, ScratchVector<Box>& boxes) const {
    const Settings& s = cfg_.settings;
    const uint32_t box_index = uint32_t(boxes.size());
    bool any = false;
    if (s.multi_label && class_bytes) {
        if (cut > 255) return;  // no class byte can pass
        const kernels::Table& k = kernels::active();
        uint32_t hits[256];
        for (int first = 0; first < cfg_.num_classes; first += 256) {
            const size_t n = size_t(std::min(256, cfg_.num_classes - first));
            const size_t found = k.scan_u8_uniform(class_bytes + first, uint8_t(cut), n, hits);
            for (size_t j = 0; j < found; ++j) {
                const int c = first + int(hits[j]);
                const float score = score_of(c);
                if (!score_passes(score, thresholds_[size_t(c)], s.score_inclusive) || !prefilter(c)) continue;
                add_candidate(candidates, score, c, box_index);
                any = true;
            }
        }
    } else if (s.multi_label) {
        for (int c = 0; c < cfg_.num_classes; ++c) {
            if (skip(c)) continue;
            const float score = score_of(c);
            if (!score_passes(score, thresholds_[size_t(c)], s.score_inclusive) || !prefilter(c)) continue;
            add_candidate(candidates, score, c, box_index);
            any = true;
        }
    } else {  // the best class (the first on ties), kept if it passes its own threshold
        int best = 0;
        float best_score = score_of(0);
        for (int c = 1; c < cfg_.num_classes; ++c) {
            const float v = score_of(c);
            if (v > best_score) { best = c; best_score = v; }
        }
        if (score_passes(best_score, thresholds_[size_t(best)], s.score_inclusive) && prefilter(best)) {
            add_candidate(candidates, best_score, best, box_index);
            any = true;
        }
    }
    if (!any) return;
    float b[4];
    box_of(b);
    store_box(h, row, col, b, boxes);
}

AnchorHeads::BoxForm AnchorHeads::box_form(const Head& h) const {
    const Settings& s = cfg_.settings;
    return {s.hailort_decode, s.normalized, s.yxyx, float(h.main->width), float(h.main->height), float(h.stride),
            float(s.image_width), float(s.image_height), uint32_t(h.index), uint32_t(h.main->width)};
}

// Inlined into each caller (a call per box, with the settings read again, cost YOLOX's passing
// cells about a tenth of their decode).
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
inline void AnchorHeads::put_box(const BoxForm& f, int row, int col, const float b[4], Box& out) {
    // b: HailoRT's normalized (y_min, x_min, y_max, x_max), or the repository's pixel (x1, y1, x2, y2).
    float y0, x0, y1, x1;
    if (f.hailort) {
        y0 = b[0]; x0 = b[1]; y1 = b[2]; x1 = b[3];
        if (!f.normalized) {
            y0 *= f.image_h; y1 *= f.image_h; x0 *= f.image_w; x1 *= f.image_w;
        }
    } else {
        x0 = b[0]; y0 = b[1]; x1 = b[2]; y1 = b[3];
        if (f.normalized) {
            y0 /= f.image_h; y1 /= f.image_h; x0 /= f.image_w; x1 /= f.image_w;
        }
    }
    if (f.yxyx) {
        out.v[0] = y0; out.v[1] = x0; out.v[2] = y1; out.v[3] = x1;
    } else {
        out.v[0] = x0; out.v[1] = y0; out.v[2] = x1; out.v[3] = y1;
    }
    out.head = f.head;
    out.cell = uint32_t(row) * f.width + uint32_t(col);
}

inline void AnchorHeads::put_box(const BoxForm& f, int row, int col, const float b[4], ScratchVector<Box>& boxes) {
    put_box(f, row, col, b, boxes.emplace_back());
}

inline void AnchorHeads::store_box(const Head& h, int row, int col, const float b[4], ScratchVector<Box>& boxes) const {
    put_box(box_form(h), row, col, b, boxes);
}

template <typename T>
void AnchorHeads::yolov5(const Head& h, const T* frame, ScratchVector<Candidate>& candidates, ScratchVector<Box>& boxes) const {
    const TensorView& v = *h.main;
    const ClassScorer& sc = h.main_scorer;
    const Settings& s = cfg_.settings;
    const int entry = 5 + cfg_.num_classes + coefs_;
    const float grid_w = float(v.width), grid_h = float(v.height);
    const float image_w = float(s.image_width), image_h = float(s.image_height);
    const float stride = float(h.stride);
    const int na = h.num_anchors;
    const size_t* obj_offset = h.obj_offset.data();
    // The gate (the must-read pass) runs as its own loop over a block of cells with its limits and
    // offsets in locals, before any anchor's work: written inline in the body below, the body's
    // register pressure made the compiler reload them from the stack every cell.
    auto limit = [&](int c) { return raw_limit<T>(sc, c); };
    // The gate keeps only the block's cells with a passing anchor (their columns), appended
    // without a branch: about one cell in a hundred passes, so a second loop over every cell of
    // the block cost more than the gate itself and mispredicted once per passing cell. Which of a
    // kept cell's anchors pass is tested again below (a few cells).
    constexpr int kBlock = 256;
    uint32_t gate[kBlock];
    // One anchor of one cell whose objectness may pass: its candidates and box.
    auto visit = [&](int row, int col, int a) HD_ALWAYS_INLINE {
        const size_t cell = v.cell(row, col);
        const int base = a * entry;
        if (!raw_passes(sc, frame[cell + obj_offset[a]], base + 4)) return;
        const size_t boxes_before = boxes.size();
        auto value = [&](int k) {
            const int c = base + k;
            return class_score(sc, v, frame, cell + v.channel_offset[size_t(c)], c);
        };
        const float obj = value(4);
        const float aw = h.anchors[size_t(2 * a)], ah = h.anchors[size_t(2 * a + 1)];
        auto box_of = [&](float b[4]) {
            const float tx = value(0), ty = value(1), tw = value(2), th = value(3);
            if (s.hailort_decode) {
                const float w = std::pow(2.0f * tw, 2.0f) * aw / image_w;
                const float hh = std::pow(2.0f * th, 2.0f) * ah / image_h;
                const float xc = (tx * 2.0f - 0.5f + float(col)) / grid_w;
                const float yc = (ty * 2.0f - 0.5f + float(row)) / grid_h;
                const float x_min = xc - w / 2.0f, y_min = yc - hh / 2.0f;
                b[0] = y_min; b[1] = x_min; b[2] = y_min + hh; b[3] = x_min + w;
            } else {
                const float xc = (tx * 2.0f + (float(col) - 0.5f)) * stride;
                const float yc = (ty * 2.0f + (float(row) - 0.5f)) * stride;
                const float w2 = tw * 2.0f, h2 = th * 2.0f;
                const float w = w2 * w2 * aw, hh = h2 * h2 * ah;
                b[0] = xc - w / 2.0f; b[1] = yc - hh / 2.0f; b[2] = xc + w / 2.0f; b[3] = yc + hh / 2.0f;
            }
        };
        int32_t cut;
        if constexpr (std::is_same<T, uint8_t>::value)
            cut = h.cut_by_obj.empty() ? class_cut(sc, v, obj) : h.cut_by_obj[frame[cell + obj_offset[a]]];
        else
            cut = class_cut(sc, v, obj);
        const uint8_t* class_bytes = nullptr;
        if constexpr (std::is_same<T, uint8_t>::value)
            if (v.contiguous_channels) class_bytes = frame + cell + size_t(base + 5);
        auto raw = [&](int c) { return frame[cell + v.channel_offset[size_t(base + 5 + c)]]; };
        add_cell(h, row, col, box_of, [&](int c) { return value(5 + c) * obj; },
                 [&](int c) {
                     if constexpr (std::is_same<T, float>::value) return false;  // no raw bound for floats
                     else return int32_t(raw(c)) < cut;
                 },
                 [&](int c) {  // HailoRT 5.x's class pre-filter (integers only)
                     if constexpr (std::is_same<T, float>::value) return true;
                     else return h.v5_limit.empty() || int32_t(raw(c)) >= h.v5_limit[size_t(base + 5 + c)];
                 },
                 class_bytes, cut, candidates, boxes);
        // YOLOv5-seg: the box names its anchor too (anchor_seg.hpp), whose coefficients the masks read.
        if (coefs_ && boxes.size() > boxes_before)
            boxes.back().cell = boxes.back().cell * uint32_t(na) + uint32_t(a);
    };
    if (s.hailort_v5) {
        // HailoRT 5.0.1+: row, anchor, column (v5.2.0 yolov5_post_process.hpp lines 187-211), the
        // gate anchor by anchor.
        for (int row = 0; row < v.height; ++row)
            for (int a = 0; a < na; ++a) {
                const size_t o = obj_offset[a];
                const auto l = limit(a * entry + 4);
                for (int col0 = 0; col0 < v.width; col0 += kBlock) {
                    const int block = std::min(kBlock, v.width - col0);
                    const T* first = frame + v.cell(row, col0);
                    int n = 0;
                    for (int i = 0; i < block; ++i) {
                        gate[n] = uint32_t(col0 + i);
                        n += int(first[size_t(i) * v.col_stride + o] >= l);
                    }
                    for (int j = 0; j < n; ++j) visit(row, int(gate[j]), a);
                }
            }
        return;
    }
    for (int row = 0; row < v.height; ++row)
        for (int col0 = 0; col0 < v.width; col0 += kBlock) {
            const int block = std::min(kBlock, v.width - col0);
            const T* first = frame + v.cell(row, col0);
            const size_t col_stride = v.col_stride;
            int n = 0;
            if (na == 3) {
                const size_t o0 = obj_offset[0], o1 = obj_offset[1], o2 = obj_offset[2];
                const auto l0 = limit(4), l1 = limit(entry + 4), l2 = limit(2 * entry + 4);
                for (int i = 0; i < block; ++i) {
                    const T* p = first + size_t(i) * col_stride;
                    gate[n] = uint32_t(col0 + i);
                    n += int((p[o0] >= l0) | (p[o1] >= l1) | (p[o2] >= l2));
                }
            } else {
                for (int i = 0; i < block; ++i) {
                    const T* p = first + size_t(i) * col_stride;
                    bool any = false;
                    for (int a = 0; a < na; ++a) any |= p[obj_offset[a]] >= limit(a * entry + 4);
                    gate[n] = uint32_t(col0 + i);
                    n += int(any);
                }
            }
            for (int j = 0; j < n; ++j)
                for (int a = 0; a < na; ++a) visit(row, int(gate[j]), a);
        }
}

float AnchorHeads::yolox_size(const Head& h, int axis, float e) const {
    if (cfg_.settings.hailort_decode) return e / float(axis == 0 ? h.main->width : h.main->height);
    return e * float(h.stride);
}

inline void AnchorHeads::yolox_corners(const BoxForm& f, int row, int col, float tx, float ty, float w, float hh,
                                       float b[4]) {
    if (f.hailort) {
        const float xc = (tx + float(col)) / f.grid_w;
        const float yc = (ty + float(row)) / f.grid_h;
        const float x_min = xc - w / 2.0f, y_min = yc - hh / 2.0f;
        b[0] = y_min; b[1] = x_min; b[2] = y_min + hh; b[3] = x_min + w;
    } else {
        const float xc = (tx + float(col)) * f.stride, yc = (ty + float(row)) * f.stride;
        b[0] = xc - w / 2.0f; b[1] = yc - hh / 2.0f; b[2] = xc + w / 2.0f; b[3] = yc + hh / 2.0f;
    }
}

void AnchorHeads::yolox_box(const Head& h, int row, int col, float tx, float ty, float w, float hh, float b[4]) const {
    yolox_corners(box_form(h), row, col, tx, ty, w, hh, b);
}

template <typename T, typename Cell>
void AnchorHeads::yolox_gate(const Head& h, const T* obj, Cell cell) const {
    const TensorView& ov = *h.obj;
    const int height = ov.height, width = ov.width;
    if constexpr (!std::is_same<T, float>::value) {
        if (ov.col_stride == 1) {
            // Objectness values side by side in a row: the gate is the SIMD scan against one
            // limit, in column order.
            const int32_t q_min = h.obj_scorer.q_min[0];
            if (q_min > int32_t(std::numeric_limits<T>::max())) return;  // nothing can pass
            const kernels::Table& k = kernels::active();
            constexpr size_t kChunk = 1024;  // values per scan call (hits on the stack)
            uint32_t hits[kChunk];
            auto scan = [&](const T* values, size_t n) {
                if constexpr (std::is_same<T, uint8_t>::value) return k.scan_u8_uniform(values, uint8_t(q_min), n, hits);
                else return k.scan_u16_uniform(values, uint16_t(q_min), n, hits);
            };
            const size_t first = ov.channel_offset[0];
            if (ov.row_stride == size_t(width)) {
                // Rows back to back: a chunk at a time across rows (a few calls a head instead of
                // one per row), each hit's row and column from its position.
                const size_t n_cells = size_t(height) * size_t(width);
                for (size_t start = 0; start < n_cells; start += kChunk) {
                    const size_t found = scan(obj + first + start, std::min(kChunk, n_cells - start));
                    for (size_t j = 0; j < found; ++j) {
                        const uint32_t at = uint32_t(start + hits[j]);
                        cell(int(at / uint32_t(width)), int(at % uint32_t(width)), first + at);
                    }
                }
                return;
            }
            for (int row = 0; row < height; ++row) {
                const size_t row_first = ov.cell(row, 0) + first;
                for (int start = 0; start < width; start += int(kChunk)) {
                    const size_t found = scan(obj + row_first + size_t(start), std::min(kChunk, size_t(width - start)));
                    for (size_t j = 0; j < found; ++j) cell(row, start + int(hits[j]), row_first + size_t(start) + hits[j]);
                }
            }
            return;
        }
    }
    for (int row = 0; row < height; ++row)
        for (int col = 0; col < width; ++col) {
            const size_t o = ov.cell(row, col) + ov.channel_offset[0];
            if (raw_passes(h.obj_scorer, obj[o], 0)) cell(row, col, o);
        }
}

void AnchorHeads::yolox_u8(const Head& h, const uint8_t* reg, const uint8_t* obj, const uint8_t* cls,
                           ScratchVector<Candidate>& candidates, ScratchVector<Box>& boxes) const {
    const TensorView& rv = *h.main;
    const TensorView& cv = *h.cls;
    const bool inclusive = cfg_.settings.score_inclusive;
    const size_t nc = size_t(cfg_.num_classes);  // at most 256 here
    const float* obj_lut = h.obj_scorer.lut.data();
    const float* cls_lut = h.cls_scorer.lut.data();  // one table: per-tensor quantization
    const float* reg_lut = h.main_scorer.lut.data();
    const size_t reg_lut_stride = h.main_scorer.lut_stride;
    const float* size_w = h.size_wh.data();
    const float* size_h = size_w + 256;
    const int32_t* cut_of = h.cut_by_obj.data();
    const float* thresholds = thresholds_.data();
    const bool v5 = cfg_.settings.hailort_v5;  // HailoRT 5.x's class pre-filter (yolox_prefilter)
    const size_t r_off[4] = {rv.channel_offset[0], rv.channel_offset[1], rv.channel_offset[2], rv.channel_offset[3]};
    const kernels::Table& k = kernels::active();
    // The box's settings and the reg tensor's addressing in locals, read once a call: behind the
    // candidates' and boxes' growth (a possible allocation) the compiler read them again per cell.
    const BoxForm form = box_form(h);
    const size_t reg_row_stride = rv.row_stride, reg_col_stride = rv.col_stride;
    // The passing cells are gathered in batches and their class bytes scanned in one kernel call
    // a batch; the batch's candidates and boxes then follow in cell order, as one by one.
    constexpr size_t kBatch = 16;
    const uint8_t* cells[kBatch];
    uint8_t cuts[kBatch];
    int rows[kBatch], cols[kBatch];
    float objectness[kBatch];
    uint32_t hit_cell[kBatch * 256], hit_class[kBatch * 256];
    size_t n = 0;
    // Candidates and boxes are written through pointers into room made for the batch's most (a
    // candidate per hit, a box per cell), which is then cut to what was written: emplace_back
    // would load and store each vector's end every time, a chain through memory.
    // The batch's count is handed to the flush, not captured: captured by reference it would live
    // in memory, and each passing cell's increment would wait on the one before.
    auto flush = [&](const size_t n) {
        const size_t found = k.cells_at_least_u8(cells, cuts, n, nc, hit_cell, hit_class);
        const size_t c0 = candidates.size(), b0 = boxes.size();
        candidates.resize(c0 + found);
        boxes.resize(b0 + n);
        Candidate* const cand = candidates.data() + c0;
        Box* const box = boxes.data() + b0;
        size_t n_cand = 0, n_box = 0;
        for (size_t j = 0; j < found;) {
            const size_t i = hit_cell[j];
            const uint32_t box_index = uint32_t(b0 + n_box);
            const uint8_t* bytes = cells[i];
            const size_t cell_first = n_cand;
            for (; j < found && hit_cell[j] == i; ++j) {
                const int c = int(hit_class[j]);
                const float score = cls_lut[bytes[c]] * objectness[i];
                put_candidate(cand[n_cand], score, c, box_index);  // written whether it passes; kept if it does
                n_cand += size_t(score_passes(score, thresholds[c], inclusive) &&
                                 (!v5 || yolox_prefilter(h, c, bytes[c], objectness[i])));
            }
            if (n_cand == cell_first) continue;  // a passing objectness with no passing class costs no box
            const int row = rows[i], col = cols[i];
            const uint8_t* r = reg + size_t(row) * reg_row_stride + size_t(col) * reg_col_stride;
            float b[4];
            yolox_corners(form, row, col, reg_lut[r[r_off[0]]], reg_lut[reg_lut_stride + r[r_off[1]]], size_w[r[r_off[2]]],
                          size_h[r[r_off[3]]], b);
            put_box(form, row, col, b, box[n_box++]);
        }
        candidates.resize(c0 + n_cand);
        boxes.resize(b0 + n_box);
    };
    yolox_gate(h, obj, [&](int row, int col, size_t o) {
        const int32_t cut = cut_of[obj[o]];
        if (cut > 255) return;  // no class byte can pass with this objectness
        cells[n] = cls + cv.cell(row, col);
        cuts[n] = uint8_t(cut);
        rows[n] = row;
        cols[n] = col;
        objectness[n] = obj_lut[obj[o]];
        if (++n == kBatch) {
            flush(n);
            n = 0;
        }
    });
    if (n) flush(n);
}

template <typename T>
void AnchorHeads::yolox(const Head& h, const T* reg, const T* obj, const T* cls, ScratchVector<Candidate>& candidates,
                        ScratchVector<Box>& boxes) const {
    const TensorView& rv = *h.main;
    const TensorView& ov = *h.obj;
    const TensorView& cv = *h.cls;
    if constexpr (std::is_same<T, uint8_t>::value) {
        if (!h.cut_by_obj.empty() && cv.contiguous_channels && cfg_.settings.multi_label && cfg_.num_classes <= 256) {
            yolox_u8(h, reg, obj, cls, candidates, boxes);
            return;
        }
    }
    const bool v5 = cfg_.settings.hailort_v5;
    // One passing cell's box and candidates.
    yolox_gate(h, obj, [&](int row, int col, size_t o) {
        const float objectness = class_score(h.obj_scorer, ov, obj, o, 0);
        auto box_of = [&](float b[4]) {
            const size_t rc = rv.cell(row, col);
            auto r = [&](int k) { return class_score(h.main_scorer, rv, reg, rc + rv.channel_offset[size_t(k)], k); };
            yolox_box(h, row, col, r(0), r(1), yolox_size(h, 0, std::exp(r(2))), yolox_size(h, 1, std::exp(r(3))), b);
        };
        const size_t cc = cv.cell(row, col);
        int32_t cut;
        if constexpr (std::is_same<T, uint8_t>::value)
            cut = h.cut_by_obj.empty() ? class_cut(h.cls_scorer, cv, objectness) : h.cut_by_obj[obj[o]];
        else
            cut = class_cut(h.cls_scorer, cv, objectness);
        const uint8_t* class_bytes = nullptr;
        if constexpr (std::is_same<T, uint8_t>::value)
            if (cv.contiguous_channels) class_bytes = cls + cc;
        add_cell(h, row, col, box_of,
                 [&](int c) { return class_score(h.cls_scorer, cv, cls, cc + cv.channel_offset[size_t(c)], c) * objectness; },
                 [&](int c) {
                     if constexpr (std::is_same<T, float>::value) return false;  // no raw bound for floats
                     else return int32_t(cls[cc + cv.channel_offset[size_t(c)]]) < cut;
                 },
                 [&](int c) {  // HailoRT 5.x's class pre-filter (integers only)
                     if constexpr (std::is_same<T, float>::value) return true;
                     else return !v5 || yolox_prefilter(h, c, int32_t(cls[cc + cv.channel_offset[size_t(c)]]), objectness);
                 },
                 class_bytes, cut, candidates, boxes);
    });
}

}  // namespace detail
}  // namespace hailo_decode
