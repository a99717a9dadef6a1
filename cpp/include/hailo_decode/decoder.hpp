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
    // Per-detection task outputs of one frame, in the order of frame(index): keypoints as
    // num_keypoints x (x, y, visibility) floats per detection (pose heads), rotated boxes as
    // (cx, cy, w, h, angle) floats per detection in input pixels (OBB heads). Null, 0 when the
    // config has no such outputs or the frame no detections.
    std::pair<const float*, size_t> keypoints(size_t index) const;  // (data, detections)
    std::pair<const float*, size_t> rboxes(size_t index) const;
    size_t frame_count() const;
    int threads() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// Minimal elements a buffer must hold for n frames of this tensor.
size_t required_elements(const TensorSpec& spec, size_t n_frames);

}  // namespace hailo_decode
