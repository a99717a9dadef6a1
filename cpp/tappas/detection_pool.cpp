#include "detection_pool.hpp"

#include <atomic>

namespace hailo_decode::tappas {

namespace {
// Beyond this many pooled detections, the ones still held downstream are let go (the pool stays
// small even when an element downstream keeps detections for long).
constexpr size_t kMaxPooled = 4096;
}  // namespace

PooledDetection::PooledDetection() : HailoDetection(HailoBBox(0.0f, 0.0f, 0.0f, 0.0f), 0, std::string(), 0.0f) {}

void PooledDetection::reset(const HailoBBox& bbox, int class_id, const std::string& label, float confidence) {
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

void DetectionPool::begin_frame() {
    next_ = 0;
    if (detections_.size() <= kMaxPooled) return;
    size_t kept = 0;
    for (auto& d : detections_)
        if (d.use_count() == 1) detections_[kept++] = std::move(d);
    detections_.resize(kept);
}

std::shared_ptr<PooledDetection> DetectionPool::take(const HailoBBox& bbox, int class_id, const std::string& label,
                                                     float confidence) {
    while (next_ < detections_.size() && detections_[next_].use_count() != 1) ++next_;
    if (next_ == detections_.size()) detections_.push_back(std::make_shared<PooledDetection>());
    std::shared_ptr<PooledDetection>& d = detections_[next_++];
    // The last holder downstream (another thread) released it with a release decrement of the
    // count; this fence orders our writes after everything it did with the detection.
    std::atomic_thread_fence(std::memory_order_acquire);
    d->reset(bbox, class_id, label, confidence);
    return d;
}

}  // namespace hailo_decode::tappas
