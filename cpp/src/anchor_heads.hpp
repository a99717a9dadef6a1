// Anchor-based heads with an objectness channel: YOLOv5/YOLOv7 (HeadKind::YOLOV5) and YOLOX
// (HeadKind::YOLOX). Each head's cells become candidates and boxes for the shared sort and NMS.
//
// The objectness value is tested first, in the tensor's own domain (the threshold as the
// smallest passing raw value, score_threshold.hpp), and a cell's class values are read only when
// it passes: HailoRT's ops skip such cells too (4.23 yolov5_post_process.hpp / yolox_post_process.hpp,
// `objectness < nms_score_th`: continue).
//
// Under hailort_decode the boxes are computed as HailoRT's float32 code does, normalized by the
// grid (the stride is not used):
//   YOLOv5: w = powf(2 tw, 2) * anchor_w / image_w, xc = (2 tx - 0.5 + col) / W,
//   YOLOX:  w = expf(tw) / W,                        xc = (tx + col) / W,
//   then x_min = xc - w / 2 and x_max = x_min + w (likewise y); score = class * objectness.
// (HailoRT calls unqualified pow/exp on float32 values; this assumes they resolve to the float
// overloads, powf/expf of the C library, as they do when <math.h>'s C++ overloads are visible.)
// Otherwise the repositories' decode in pixels: YOLOv5 x = (2 tx + col - 0.5) * stride,
// w = (2 tw)^2 * anchor_w; YOLOX x = (tx + col) * stride, w = exp(tw) * stride; corners x -/+ w / 2.
//
// Candidate order (HailoRT's, which its unstable sort's ties depend on): YOLOv5 visits its inputs
// in the order of their names (the op keeps them in a std::map), then row, column, anchor, class
// (HailoRT 5.0.1+, Settings::hailort_v5: row, anchor, column, class); YOLOX its decoders in order,
// then row, column, class (every version). Under hailort_v5 a value must also pass HailoRT 5.x's
// quantized pre-filters: objectness >= quantize(th), and YOLOv5's classes >= quantize(th),
// YOLOX's >= quantize(th / objectness) (score_threshold.hpp, hailort_quantize).
#pragma once

#include <vector>

#include "hailo_decode/types.hpp"
#include "nms.hpp"
#include "score_threshold.hpp"
#include "tensor_view.hpp"

namespace hailo_decode {
namespace detail {

class AnchorHeads {
public:
    // Validates the heads of cfg (kind YOLOV5 or YOLOX) against their views; throws
    // std::invalid_argument naming the output.
    AnchorHeads(const Config& cfg, const std::vector<TensorView>& views);

    // Appends one frame's candidates (and their boxes) in HailoRT's candidate order.
    void collect(const void* const* tensors, size_t frame, ScratchVector<Candidate>& candidates,
                 ScratchVector<Box>& boxes) const;

private:
    struct Head {
        size_t index;               // into Config::heads
        const TensorView* main;     // YOLOV5: the tensor; YOLOX: reg
        const TensorView* obj;      // YOLOX
        const TensorView* cls;      // YOLOX
        int out_main, out_obj, out_cls;
        ClassScorer main_scorer, obj_scorer, cls_scorer;  // values (activation) and the objectness gate
        std::vector<float> anchors;  // YOLOV5: (w, h) per anchor, as float32
        std::vector<size_t> obj_offset;  // YOLOV5: each anchor's objectness element within a cell
        // uint8 objectness and classes with one quantization each (YOLOX) or one for the tensor
        // (YOLOv5): class_cut of each objectness byte's score (256), made once, not searched for
        // per passing cell (the same values: the same function).
        std::vector<int32_t> cut_by_obj;
        // YOLOX, uint8 reg: the box width of each code of channel 2 (tw), then the height of each
        // code of channel 3 (th), 256 each (yolox_size of std::exp of its value): the two expf and
        // divisions per box become lookups (the same functions made them: the same values).
        std::vector<float> size_wh;
        // Settings::hailort_v5, integer tensors: YOLOv5's per-channel pre-filter limits (HailoRT
        // 5.x's quantized threshold of each class channel; the objectness channels' limits are
        // folded into main_scorer's q_min, YOLOX's into obj_scorer's).
        std::vector<int32_t> v5_limit;
        int num_anchors = 0;
        int stride = 0;
    };
    const Config& cfg_;
    const std::vector<TensorView>& views_;
    std::vector<Head> heads_;  // in visiting order
    std::vector<float> thresholds_;  // one per class

    template <typename T>
    void yolov5(const Head& h, const T* frame, ScratchVector<Candidate>& candidates, ScratchVector<Box>& boxes) const;
    template <typename T>
    void yolox(const Head& h, const T* reg, const T* obj, const T* cls, ScratchVector<Candidate>& candidates,
               ScratchVector<Box>& boxes) const;
    // yolox's uint8 path (one quantization each for objectness and classes, class bytes side by
    // side, at most 256 classes, multi-label): tables for every per-cell value (the class cut, the
    // box's exp), the class bytes of a batch of passing cells scanned in one kernel call.
    void yolox_u8(const Head& h, const uint8_t* reg, const uint8_t* obj, const uint8_t* cls,
                  ScratchVector<Candidate>& candidates, ScratchVector<Box>& boxes) const;
    // Calls cell(row, col, objectness index) for each YOLOX cell whose objectness passes, in row
    // then column order (the SIMD scan when the objectness values of a row are side by side).
    template <typename T, typename Cell>
    void yolox_gate(const Head& h, const T* obj, Cell cell) const;
    // A YOLOX box's width (axis 0) or height (axis 1) from e = exp(tw) or exp(th): HailoRT's
    // e / grid width (height), or the repository's e * stride.
    float yolox_size(const Head& h, int axis, float e) const;
    // A YOLOX box from the cell's reg values tx, ty and its size w, hh (yolox_size): HailoRT's
    // normalized (y_min, x_min, y_max, x_max) or the repository's pixel (x1, y1, x2, y2), as box_of's b.
    void yolox_box(const Head& h, int row, int col, float tx, float ty, float w, float hh, float b[4]) const;
    // Appends the box b (box_of's form) of cell (row, col) in the output's units and order.
    void store_box(const Head& h, int row, int col, const float b[4], ScratchVector<Box>& boxes) const;
    // What yolox_box and store_box read of the settings and the head, gathered once (yolox_u8
    // keeps it in a local for the whole call); yolox_corners and put_box are their bodies.
    struct BoxForm {
        bool hailort, normalized, yxyx;
        float grid_w, grid_h, stride, image_w, image_h;
        uint32_t head, width;
    };
    BoxForm box_form(const Head& h) const;
    static void yolox_corners(const BoxForm& f, int row, int col, float tx, float ty, float w, float hh, float b[4]);
    static void put_box(const BoxForm& f, int row, int col, const float b[4], ScratchVector<Box>& boxes);
    static void put_box(const BoxForm& f, int row, int col, const float b[4], Box& out);  // in place
    // Adds the cell's candidates from its class scores (multi-label or the best class) and its box.
    // skip(c) true means class c cannot pass (a raw-value bound; it only saves work). prefilter(c)
    // false drops a class whose score passes (HailoRT 5.x's quantized pre-filter). With
    // class_bytes (uint8 class values side by side), multi-label takes the classes whose byte is
    // at least `cut` from the SIMD scan instead of testing skip(c) class by class. box_of(float[4])
    // writes the cell's box (normalized y_min, x_min, y_max, x_max, or pixel x1, y1, x2, y2): it is
    // called only when a class passes (a passing objectness with no passing class costs no expf).
    template <typename BoxOf, typename ScoreOf, typename Skip, typename Prefilter>
    void add_cell(const Head& h, int row, int col, BoxOf box_of, ScoreOf score_of, Skip skip, Prefilter prefilter,
                  const uint8_t* class_bytes, int32_t cut, ScratchVector<Candidate>& candidates,
                  ScratchVector<Box>& boxes) const;
    // YOLOX under hailort_v5: whether raw class value q passes HailoRT 5.x's pre-filter of class c
    // at this objectness, q >= quantize(th / objectness) (v5.2.0 yolox_post_process.hpp lines
    // 130-135); computed only for classes whose score passes.
    bool yolox_prefilter(const Head& h, int c, int32_t q, float objectness) const;
    // uint8, one quantization: the smallest raw class value whose score (lut[q] * obj) can pass the
    // lowest threshold (the product does not decrease with q for obj >= 0); 0 when no bound applies.
    int32_t class_cut(const ClassScorer& sc, const TensorView& cls, float obj) const;
    float lowest_ = 0.0f;
    int coefs_ = 0;  // YOLOv5-seg: mask coefficients per anchor entry (anchor_seg.hpp), 0 otherwise
};

}  // namespace detail
}  // namespace hailo_decode
