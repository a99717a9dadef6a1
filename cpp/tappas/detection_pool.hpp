// Detections reused from frame to frame: a HailoDetection costs three heap allocations (the object
// and the two mutexes its bases make), more than the core's whole decode of a detection. The pool
// keeps every detection it made; one that only the pool still holds (the pipeline has dropped the
// frame that carried it) is reset and handed out again, so a steady stream allocates nothing.
// Downstream elements that keep a detection (a tracker) keep it whole: it is not reused while
// anyone else holds it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "abi_line.hpp"

namespace hailo_decode::tappas {

// A HailoDetection whose fields can be set again (TAPPAS' own has no class-id setter); to
// everything downstream it is a HailoDetection.
class PooledDetection final : public HailoDetection {
public:
    PooledDetection();
    // As if newly made: box, class, label, confidence; no sub-objects, tensors or stream id, and
    // the default scaling box.
    void reset(const HailoBBox& bbox, int class_id, const std::string& label, float confidence);
};

class DetectionPool {
public:
    // Call at the start of each frame, before take().
    void begin_frame();
    // A detection no one else holds, reset to these values (a new one when every pooled one is
    // in use).
    std::shared_ptr<PooledDetection> take(const HailoBBox& bbox, int class_id, const std::string& label,
                                          float confidence);

private:
    std::vector<std::shared_ptr<PooledDetection>> detections_;
    size_t next_ = 0;  // take() looks from here: the ones before were handed out this frame
};

}  // namespace hailo_decode::tappas
