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

// Sets a HailoDetection's fields again, as if it were newly made (TAPPAS' own has no class-id
// setter). The pooled objects stay plain HailoDetections, never a subclass of ours: TAPPAS' Python
// module (hailo-apps' callbacks) gives Python an object's most-derived class only when it knows that
// class, and hands a subclass it does not know over as a bare HailoObject, without get_label() and
// the rest. A pointer to a protected member named through a derived class may be applied to any
// HailoDetection (C++ [class.protected]); this struct is never made.
struct DetectionFields : HailoDetection {
    // Box, class, label, confidence; no sub-objects, tensors or stream id, and the default scaling
    // box. Only for a detection no one else holds (no lock taken).
    static void reset(HailoDetection& d, const HailoBBox& bbox, int class_id, const std::string& label,
                      float confidence) {
        d.*(&DetectionFields::m_bbox) = bbox;
        d.*(&DetectionFields::m_scaling_bbox) = HailoBBox(0.0f, 0.0f, 1.0f, 1.0f);
        // Most are empty or unchanged: tested first, which is cheaper than the calls that clear them.
        std::string& stream_id = d.*(&DetectionFields::m_stream_id);
        if (!stream_id.empty()) stream_id.clear();
        std::vector<HailoObjectPtr>& sub_objects = d.*(&DetectionFields::m_sub_objects);
        if (!sub_objects.empty()) sub_objects.clear();
        auto& tensors = d.*(&DetectionFields::m_tensors);
        if (!tensors.empty()) tensors.clear();
        d.*(&DetectionFields::m_class_id) = class_id;
        d.*(&DetectionFields::m_label) = label;  // reuses the string's storage
        d.*(&DetectionFields::m_confidence) = confidence;
    }
};

class DetectionPool {
public:
    // Call at the start of each frame, before take().
    void begin_frame();
    // A detection no one else holds, reset to these values (a new one when every pooled one is
    // in use). The reference is the pool's own and lasts until the next take(): copy it. Inline: it
    // runs once a detection, where a call costs as much as the work.
    const HailoDetectionPtr& take(const HailoBBox& bbox, int class_id, const std::string& label, float confidence) {
        while (next_ < detections_.size() && detections_[next_].use_count() != 1) ++next_;
        if (next_ == detections_.size()) grow();
        const HailoDetectionPtr& d = detections_[next_++];
        // The last holder downstream (another thread) released it with a release decrement of the
        // count; this fence orders our writes after everything it did with the detection.
        std::atomic_thread_fence(std::memory_order_acquire);
        DetectionFields::reset(*d, bbox, class_id, label, confidence);
        return d;
    }

private:
    void grow();  // one more pooled detection, at the end

    std::vector<HailoDetectionPtr> detections_;
    size_t next_ = 0;  // take() looks from here: the ones before were handed out this frame
};

}  // namespace hailo_decode::tappas
