// The decoder: raw YOLOv8-style head tensors in, kept detections out.
//
//   hailo_decode::Decoder dec(config);            // validates once, precomputes thresholds
//   dec.decode(tensors, elements, n_frames);      // no allocation once warmed up
//   auto [first, count] = dec.frame(0);           // detections of frame 0, best score first
//
// One Decoder owns its workspaces: calls on one Decoder must not overlap (the Python binding
// serializes them); different Decoders share nothing and may run on different threads at once.
// `threads` > 1 spreads the frames of a batch over a persistent pool; results do not depend on it.
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "hailo_decode/masks.hpp"
#include "hailo_decode/types.hpp"

namespace hailo_decode {

class Decoder {
public:
    // Validates `config` (shapes, quantization, heads, settings) and precomputes the thresholds and
    // tables; threads in [1, 256]. Throws std::invalid_argument naming the output and the bad value.
    // The Decoder keeps its own copy of the config: the caller's may go away.
    explicit Decoder(Config config, int threads = 1);
    ~Decoder();
    Decoder(const Decoder&) = delete;
    Decoder& operator=(const Decoder&) = delete;

    // The validated configuration; the reference lives as long as the Decoder.
    const Config& config() const;

    // Decodes n_frames frames. tensors[i] points at frame 0 of config().outputs[i] (frame f starts
    // f x frame_stride elements further) and buffer_elements[i] says how many elements of that
    // output's dtype the buffer holds; both arrays have config().outputs.size() entries. Checks,
    // before any element is read: no null buffer, every buffer_elements[i] >= required_elements(
    // outputs[i], n_frames); then that float32 inputs are finite. Throws std::invalid_argument naming
    // the output; a throw from these checks leaves the previous results as they were. Expects each
    // buffer aligned to its element size (2 bytes for U16, 4 for F32; not checked), unchanged during
    // the call, and n_frames x frame_stride within size_t; no pointer is kept once it returns.
    // Allocates only while its workspaces grow to the largest frame and batch seen. Calls on one
    // Decoder must not overlap each other, nor a use of what frame() returned.
    void decode(const void* const* tensors, const size_t* buffer_elements, size_t n_frames);

    // Detections of frame `index` of the last decode(), best score first: a pointer into the
    // Decoder's own storage, valid until the next decode() or the Decoder's end. Throws
    // std::out_of_range when index >= frame_count().
    std::pair<const Detection*, size_t> frame(size_t index) const;
    // Per-detection task outputs of one frame, in the order of frame(index): keypoints as
    // num_keypoints x (x, y, visibility) floats per detection (pose heads), rotated boxes as
    // (cx, cy, w, h, angle) floats per detection in input pixels (OBB heads). Null, 0 when the
    // config has no such outputs or the frame no detections.
    std::pair<const float*, size_t> keypoints(size_t index) const;  // (data, detections)
    std::pair<const float*, size_t> rboxes(size_t index) const;
    // Frames of the last decode() (0 before the first).
    size_t frame_count() const;

    // Segmentation (Config::proto_output set): the mask windows of frame(index)'s detections, one
    // per detection in the same order, and that frame's logits (window offsets count from
    // `logits`). Render them with render_mask (hailo_decode/masks.hpp) on mask_grid().
    struct FrameMasks {
        const MaskWindow* windows = nullptr;
        size_t count = 0;
        const float* logits = nullptr;
        size_t logit_count = 0;
        const uint8_t* signs = nullptr;  // logit_count bytes, 1 where the logit is > 0 (render_proto_mask)
    };
    FrameMasks masks(size_t index) const;
    MaskGrid mask_grid() const;
    // Whether decode() computes the mask windows and logits that masks() returns (default on). Off
    // for a caller that reads only the detections (the yolov5_seg frame writer computes the op's
    // own masks); still computed with Config::drop_empty_masks, which needs them to keep a
    // detection. Applies from the next decode(); masks() of a decode without them is empty.
    void set_masks_enabled(bool on);
    // Threads a decode() spreads its frames over (the constructor's `threads`).
    int threads() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// Elements a buffer must hold for n_frames frames of this tensor: (n_frames - 1) x frame_stride
// plus the span of the last frame that is read (0 for no frame). Validates the spec as the Decoder
// does, throwing std::invalid_argument naming the output.
size_t required_elements(const TensorSpec& spec, size_t n_frames);

}  // namespace hailo_decode
