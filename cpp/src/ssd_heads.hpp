// SSD heads (HeadKind::SSD): HailoRT 4.23's ssd op (libhailort/src/net_flow/ops/ssd_post_process.{hpp,cpp})
// as candidates and boxes for the shared sort and NMS (its NMS is NmsPostProcessOp's, the one the
// YOLOv8 op uses).
//
// Per head a regression tensor of A x 4 channels and a class tensor of A x classes channels on one
// grid (H, W). Anchor a of cell (row, col):
//   t* = dequantize(reg channel a*4 + *_index), tx /= centers_scale, ty likewise,
//        tw /= dims_scale, th likewise (float32 divisions, as the op divides by float(uint32))
//   w = expf(tw) * anchor_w,  h = expf(th) * anchor_h
//   x_centre = tx * anchor_w + (col * (1 / W) + 0.5 * (1 / W)),  y_centre likewise with row and H
//   box = (y_c - h / 2, x_c - w / 2, y_c + h / 2, x_c + w / 2), normalized (the op never clips:
//   its normalize_boxes is always false, TODO HRT-10033)
// Each class value (dequantized, no activation unless settings.sigmoid) that is >= its threshold is a
// candidate (multi-label); the background class is skipped and, when it is the first, the other
// ids move down by one. Candidate order (which the op's unstable sort's ties depend on): heads in
// the order of their regression outputs' names (the op's reg_to_cls_inputs is a std::map), then row,
// column, anchor, class. Detection::cell is (row * W + col) * A + anchor.
#pragma once

#include <vector>

#include "hailo_decode/types.hpp"
#include "nms.hpp"
#include "score_threshold.hpp"
#include "tensor_view.hpp"

namespace hailo_decode {
namespace detail {

class SsdHeads {
public:
    // Validates the SSD heads of cfg against their views (channels, grids, anchors, the coding);
    // throws std::invalid_argument naming the output.
    SsdHeads(const Config& cfg, const std::vector<TensorView>& views);

    // Appends one frame's candidates and boxes in HailoRT's candidate order.
    void collect(const void* const* tensors, size_t frame, ScratchVector<Candidate>& candidates,
                 ScratchVector<Box>& boxes) const;

private:
    struct Head {
        size_t index;  // into Config::heads
        const TensorView* reg;
        const TensorView* cls;
        int out_reg, out_cls;
        int num_anchors;
        int per_anchor;               // class channels per anchor (classes, + 1 with a background)
        std::vector<float> anchors;   // (w, h) per anchor
        std::vector<int32_t> class_of;  // per class channel: the output class id, -1 for the background
        ClassScorer cls_scorer;       // per class channel: its threshold (background: never)
        ClassScorer reg_scorer;       // dequantized regression values (no activation)
        std::vector<size_t> reg_offset;  // per anchor, its ty, tx, th, tw channel offsets
        std::vector<int> reg_channel;    // and those channels
        // uint8 class values side by side, one quantization: the one cut of the scan (the lowest
        // q_min); each hit is then tested against its own channel's q_min.
        bool uniform_u8 = false;
        int32_t cut = 0;
    };
    const Config& cfg_;
    std::vector<Head> heads_;  // in visiting order

    template <typename R, typename C>
    void head(const Head& h, const R* reg, const C* cls, ScratchVector<Candidate>& candidates,
              ScratchVector<Box>& boxes) const;
    template <typename R>
    void add_box(const Head& h, const R* reg, int row, int col, int a, ScratchVector<Box>& boxes) const;
};

}  // namespace detail
}  // namespace hailo_decode
