#include "detection_pool.hpp"

namespace hailo_decode::tappas {

namespace {
// Beyond this many pooled detections, the ones still held downstream are let go (the pool stays
// small even when an element downstream keeps detections for long).
constexpr size_t kMaxPooled = 4096;
}  // namespace

void DetectionPool::begin_frame() {
    next_ = 0;
    if (detections_.size() <= kMaxPooled) return;
    size_t kept = 0;
    for (auto& d : detections_)
        if (d.use_count() == 1) detections_[kept++] = std::move(d);
    detections_.resize(kept);
}

void DetectionPool::grow() {
    detections_.push_back(std::make_shared<HailoDetection>(HailoBBox(0.0f, 0.0f, 0.0f, 0.0f), 0, std::string(), 0.0f));
}

}  // namespace hailo_decode::tappas
