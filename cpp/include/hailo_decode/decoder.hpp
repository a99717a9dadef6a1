// The decoder: raw YOLOv8-style head tensors in, kept detections out.
//
//   hailo_decode::Decoder dec(config);            // validates once, precomputes thresholds
//   dec.decode(tensors, elements, n_frames);      // no allocation once warmed up
//   auto [first, count] = dec.frame(0);           // detections of frame 0, best score first
//
// One Decoder owns its workspaces: calls on one Decoder must not overlap (the Python binding
// serializes them); different Decoders share nothing. `threads` > 1 spreads the frames of a batch
// over a persistent pool; results do not depend on it.
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "hailo_decode/masks.hpp"
#include "hailo_decode/types.hpp"

namespace hailo_decode {

class Decoder {
public:
    // Throws std::invalid_argument naming the output and the bad value.
    explicit Decoder(Config config, int threads = 1);
    ~Decoder();
    Decoder(const Decoder&) = delete;
    Decoder& operator=(const Decoder&) = delete;

    const Config& config() const;

    // tensors[i] points at frame 0 of config().outputs[i]; buffer_elements[i] is how many
    // elements that buffer holds (checked against n_frames before anything is read).
    void decode(const void* const* tensors, const size_t* buffer_elements, size_t n_frames);

    // Detections of one frame from the last decode(), score-descending.
    std::pair<const Detection*, size_t> frame(size_t index) const;
    size_t frame_count() const;

    // Segmentation (Config::proto_output set): the mask windows of frame(index)'s detections, one
    // per detection in the same order, and that frame's logits (window offsets count from
    // `logits`). Render them with render_mask (hailo_decode/masks.hpp) on mask_grid().
    struct FrameMasks {
        const MaskWindow* windows = nullptr;
        size_t count = 0;
        const float* logits = nullptr;
        size_t logit_count = 0;
    };
    FrameMasks masks(size_t index) const;
    MaskGrid mask_grid() const;
    int threads() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// Minimal elements a buffer must hold for n frames of this tensor.
size_t required_elements(const TensorSpec& spec, size_t n_frames);

}  // namespace hailo_decode
