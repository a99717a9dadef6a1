#include "roi_objects.hpp"

#include <mutex>
#include <string>

namespace hailo_decode::tappas {

namespace {

// HailoMainObject's objects and lock, for add_detections. A pointer to a protected member named
// through a derived class may be applied to any HailoMainObject (C++ [class.protected]).
struct MainObjectParts : HailoMainObject {
    static std::vector<HailoObjectPtr>& objects(HailoMainObject& o) { return o.*(&MainObjectParts::m_sub_objects); }
    static std::mutex& lock(HailoMainObject& o) { return *(o.*(&MainObjectParts::mutex)); }
};

}  // namespace

void add_detections(HailoROI& roi, std::vector<HailoDetectionPtr>& detections) {
    if (detections.empty()) return;
    // HailoROI::add_object's part for an object that is a ROI. For the whole frame with no stream id
    // (hailofilter's usual ROI) both are a new detection's defaults already: skipped.
    const HailoBBox box = roi.get_bbox();
    const std::string stream_id = roi.get_stream_id();
    if (!(box.xmin() == 0.0f && box.ymin() == 0.0f && box.width() == 1.0f && box.height() == 1.0f &&
          stream_id.empty())) {
        for (const HailoDetectionPtr& detection : detections) {
            detection->set_scaling_bbox(box);
            detection->set_stream_id(stream_id);
        }
    }
    {
        std::lock_guard<std::mutex> lock(MainObjectParts::lock(roi));
        std::vector<HailoObjectPtr>& objects = MainObjectParts::objects(roi);
        objects.reserve(objects.size() + detections.size());
        for (HailoDetectionPtr& detection : detections) objects.emplace_back(std::move(detection));
    }
    detections.clear();
}

}  // namespace hailo_decode::tappas
