// Instance masks from prototype logits (YOLOv8/YOLO11 -seg), usable from C++ pipelines.
//
// A detection's mask logit at prototype cell (r, c) is sum_k coef[k] * proto[r, c, k]. Only the
// cells that the detection's mask reads are computed: its MaskWindow. A mask at some resolution
// (the network input, the prototype grid, the original image behind a letterbox) is then
// rendered from those logits as Ultralytics 8.4's process_mask does it at the input size: the
// logit map sampled bilinearly (PyTorch's F.interpolate, align_corners=False: source coordinate
// scale * (x + 0.5) - 0.5, negatives clamped to 0, the last cell repeated at the far edge; the
// interpolation (v00 w0 + v01 w1) h0 + (v10 w0 + v11 w1) h1 in float32), binarized with > 0,
// then cropped to the box (pixel column x kept when x >= x1 and x < x2, rows alike); YOLOv5-seg's
// masks under the ultralytics preset follow YOLOv5's own rule instead (MaskRule::yolov5).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace hailo_decode {

// The crop along one axis: the integer pixels p with p >= a and p < b within [0, n), as [lo, hi) =
// [ceil(a), ceil(b)) clamped (NaN counts as 0). Every renderer here crops with it.
void crop_range(float a, float b, int n, int& lo, int& hi);

// Reusable buffers of the render calls (grown as needed, never shrunk).
struct MaskScratch {
    std::vector<float> floats;
    std::vector<int32_t> ints;
    std::vector<float> stage;  // the upsampled grid's cells a two-step sampling reads
    std::vector<float> probs;  // MaskRule::yolov5: the window's cropped probabilities
};

// Prototype rows [row0, row0 + rows) and columns [col0, col0 + cols), logits stored row-major
// from `offset` (floats) in a frame's logit list. rows == 0 or cols == 0: the mask is empty.
struct MaskWindow {
    int32_t row0 = 0, col0 = 0, rows = 0, cols = 0;
    uint64_t offset = 0;
};

// How a mask at the input size is made from the logits.
enum class MaskRule : int {
    // Ultralytics 8.4's process_mask (every -seg family but YOLOv5's): logits upsampled, > 0,
    // cropped at the input size (the file's header).
    ultralytics = 0,
    // YOLOv5 v7.0's own process_mask(upsample=True) (YOLOv5/YOLOv7-seg anchor heads under the
    // ultralytics preset): sigmoid of the logits (float32, 1 / (1 + exp(-x))), cropped at the
    // prototype grid (cell c kept when c >= x1 * pw / iw and c < x2 * pw / iw, the box scaled in
    // float32; rows alike), those probabilities upsampled to the input (the same bilinear
    // sampling), > 0.5, no crop at the input size (pixels may lie just outside the box). Applies
    // to the input-size sampling only; the others sample as the ultralytics rule does.
    yolov5 = 1,
};

struct MaskGrid {
    int proto_height = 0, proto_width = 0;  // the prototype tensor's grid (input / 4 for YOLOv8)
    int image_height = 0, image_width = 0;  // the network input
    MaskRule rule = MaskRule::ultralytics;
};

// Target pixel (y, x) samples a source grid at (sy * (y + 0.5) + oy, sx * (x + 0.5) + ox), the
// coordinate clamped to [0, src_h - 1] x [0, src_w - 1] as PyTorch does (negatives to 0, the last
// cell repeated); source cell (r, c) is cell (top + r, left + c) of the stage grid. The stage grid
// is the prototype grid when up == 1, else the prototype grid upsampled bilinearly by `up`
// (F.interpolate(scale_factor=up): scale 1 / up, offset -0.5) and computed first: two
// interpolations in a row, as Ultralytics' process_mask_native does when the letterbox padding
// does not fall on whole prototype cells.
struct MaskSampling {
    float sx = 1, ox = -0.5f, sy = 1, oy = -0.5f;
    int height = 0, width = 0;  // the target grid
    int up = 1;                 // the stage grid: the prototype grid times `up` a side
    int top = 0, left = 0;      // the source's first cell in the stage grid
    int src_h = 0, src_w = 0;   // the source's size (the crop of the stage grid that is resized); 0: all of it
};

// The network input: scale proto / image (float32, as PyTorch's area_pixel_compute_scale), offset -0.5.
MaskSampling sampling_to_input(const MaskGrid& g);
// The prototype grid itself: every pixel reads its own cell exactly (rendered as logit > 0, with
// no interpolation arithmetic: Ultralytics' process_mask(upsample=False)).
MaskSampling sampling_to_proto(const MaskGrid& g);
// An original image of (height, width) letterboxed (centred, Ultralytics' LetterBox) into the
// input: Ultralytics 8.4's process_mask_native(protos, coefs, boxes, (height, width)), i.e.
// retina_masks=True. up = the smallest of 1, 2, 4 that puts the letterbox padding on whole cells
// of the upsampled grid (4 // gcd(4, pad | pad // 2), pad the total padding of both axes OR'ed);
// then scale_masks: the stage grid's letterbox content [top, top + src_h) x [left, left + src_w)
// (gain min(stage / original) per side, sides and padding rounded as Python's round), resized to
// (height, width) with F.interpolate(size=...) (scale float(src) / float(target)).
// Throws std::invalid_argument for sizes that are not positive.
MaskSampling sampling_native(const MaskGrid& g, int height, int width);

// The prototype cells the masks of a box (x1, y1, x2, y2 in input pixels) read at input and at
// prototype resolution, plus one cell each side, clipped to the grid. `offset` is left 0.
MaskWindow mask_window(const float box_xyxy[4], const MaskGrid& g);

// Renders pixels [r0, r0 + h) x [c0, c0 + w) of the target grid into out (row_stride bytes apart):
// 1 where the pixel lies in the target grid and inside crop_xyxy (target pixels) and its sampled
// logit is > 0, else 0. `logits` points at the window's first logit. Samples that fall outside the
// window take its edge cells (never the case for the input and prototype samplings, whose windows
// cover them). out_zeroed: `out` already holds zeros (a fresh calloc'd plane), so only the pixels
// inside the crop are written. Returns the number of pixels set.
size_t render_mask(const float* logits, const MaskWindow& window, const MaskGrid& g, const MaskSampling& s,
                   const float crop_xyxy[4], int r0, int c0, int h, int w, uint8_t* out, size_t row_stride,
                   MaskScratch& scratch, bool out_zeroed = false);

// The prototype-grid mask (sampling_to_proto: each pixel its own cell's logit > 0) of a window
// from its sign bytes (`signs`: one byte per logit, 1 where it is > 0, row-major as the logits;
// Decoder::FrameMasks::signs), cropped to crop_xyxy (prototype-grid pixels), into out (the whole
// grid, row_stride bytes a row), which must hold zeros already: only the crop's pixels are written,
// each a copy of its cell's byte. The same bytes as render_mask with sampling_to_proto.
void render_proto_mask(const uint8_t* signs, const MaskWindow& window, const MaskGrid& g, const float crop_xyxy[4],
                       uint8_t* out, size_t row_stride);

// With g.rule == MaskRule::yolov5 and s == sampling_to_input(g), render_mask and mask_has_pixels
// follow YOLOv5's rule instead: crop_xyxy is the box in input pixels, cropped at the prototype
// grid; every pixel of the rectangle the upsampling of that crop can reach is computed.

// Whether any pixel of the crop would be set (stops at the first), without writing a mask.
bool mask_has_pixels(const float* logits, const MaskWindow& window, const MaskGrid& g, const MaskSampling& s,
                     const float crop_xyxy[4], MaskScratch& scratch);

}  // namespace hailo_decode
