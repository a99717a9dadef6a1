// Detections reused from frame to frame: a HailoDetection costs three heap allocations (the object
// and the two mutexes its bases make), more than the core's whole decode of a detection. The pool
// keeps every detection it made; one that only the pool still holds (the pipeline has dropped the
// frame that carried it) is reset and handed out again, so a steady stream allocates nothing.
// Downstream elements that keep a detection (a tracker) keep it whole: it is not reused while
// anyone else holds it.
#pragma once

#include <atomic>
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
    void reset(const HailoBBox& bbox, int class_id, const std::string& label, float confidence) {
        m_bbox = bbox;
        m_scaling_bbox = HailoBBox(0.0f, 0.0f, 1.0f, 1.0f);
        // Most are empty or unchanged: tested first, which is cheaper than the calls that clear them.
        if (!m_stream_id.empty()) m_stream_id.clear();
        if (!m_sub_objects.empty()) m_sub_objects.clear();
        if (!m_tensors.empty()) m_tensors.clear();
        m_class_id = class_id;
        m_label = label;  // reuses the string's storage
        m_confidence = confidence;
    }
};

class DetectionPool {
public:
    // Call at the start of each frame, before take().
    void begin_frame();
    // A detection no one else holds, reset to these values (a new one when every pooled one is
    // in use). The reference is the pool's own and lasts until the next take(): copy it. Inline: it
    // runs once a detection, where a call costs as much as the work.
    const std::shared_ptr<PooledDetection>& take(const HailoBBox& bbox, int class_id, const std::string& label,
                                                 float confidence) {
        while (next_ < detections_.size() && detections_[next_].use_count() != 1) ++next_;
        if (next_ == detections_.size()) grow();
        const std::shared_ptr<PooledDetection>& d = detections_[next_++];
        // The last holder downstream (another thread) released it with a release decrement of the
        // count; this fence orders our writes after everything it did with the detection.
        std::atomic_thread_fence(std::memory_order_acquire);
        d->reset(bbox, class_id, label, confidence);
        return d;
    }

private:
    void grow();  // one more pooled detection, at the end

    std::vector<std::shared_ptr<PooledDetection>> detections_;
    size_t next_ = 0;  // take() looks from here: the ones before were handed out this frame
};

}  // namespace hailo_decode::tappas
