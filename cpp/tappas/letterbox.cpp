#include "letterbox.hpp"

namespace hailo_decode::tappas {

void map_through_scaling_bbox(HailoROI& roi, const std::vector<HailoDetectionPtr>& detections) {
    const HailoBBox frame = hailo_common::create_flattened_bbox(roi.get_bbox(), roi.get_scaling_bbox());
    for (const HailoDetectionPtr& detection : detections) {
        const HailoBBox b = detection->get_bbox();
        const float xmin = b.xmin() * frame.width() + frame.xmin();
        const float ymin = b.ymin() * frame.height() + frame.ymin();
        const float xmax = b.xmax() * frame.width() + frame.xmin();
        const float ymax = b.ymax() * frame.height() + frame.ymin();
        detection->set_bbox(HailoBBox(xmin, ymin, xmax - xmin, ymax - ymin));
    }
    roi.clear_scaling_bbox();
}

}  // namespace hailo_decode::tappas
