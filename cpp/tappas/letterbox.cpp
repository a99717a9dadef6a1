#include "letterbox.hpp"

#include <algorithm>
#include <cmath>

namespace hailo_decode::tappas {

namespace {

bool usable(float v) { return std::isfinite(v) && v > 0.0f; }

float unit(float v) { return v > 1.0f ? 1.0f : (v > 0.0f ? v : 0.0f); }

}  // namespace

PictureMap picture_map(HailoROI& roi, bool letterbox) {
    PictureMap map;
    if (!letterbox) return map;
    map.letterbox = true;
    map.frame = hailo_common::create_flattened_bbox(roi.get_bbox(), roi.get_scaling_bbox());
    const HailoBBox& f = map.frame;
    if (!(usable(f.width()) && usable(f.height()) && std::isfinite(f.xmin()) && std::isfinite(f.ymin()))) {
        map.frame = HailoBBox(0.0f, 0.0f, 1.0f, 1.0f);
        return map;
    }
    // picture x = input x * width + xmin, so the picture's [0, 1] is input [-xmin, 1 - xmin] / width.
    map.picture = NormBox{-f.xmin() / f.width(), -f.ymin() / f.height(), (1.0f - f.xmin()) / f.width(),
                          (1.0f - f.ymin()) / f.height()};
    return map;
}

void fit_to_picture(const PictureMap& map, InputSize input, std::vector<HailoDetectionPtr>& detections) {
    const HailoBBox& f = map.frame;
    // The picture's size in pixels at the network's scale (a letterboxed 640 x 480 picture in a
    // 640 x 640 input: 640 x 480); 0 when the input size is not known.
    const float px_w = std::round((map.picture.xmax - map.picture.xmin) * input.width);
    const float px_h = std::round((map.picture.ymax - map.picture.ymin) * input.height);
    auto too_small = [&](const HailoDetectionPtr& detection) {
        HailoBBox b = detection->get_bbox();
        if (map.letterbox) {
            const float xmin = unit(b.xmin() * f.width() + f.xmin()), ymin = unit(b.ymin() * f.height() + f.ymin());
            const float xmax = unit(b.xmax() * f.width() + f.xmin()), ymax = unit(b.ymax() * f.height() + f.ymin());
            b = HailoBBox(xmin, ymin, xmax - xmin, ymax - ymin);
            detection->set_bbox(b);
        }
        // As hailooverlay sizes a mask: int(frame side x box side), in float.
        return !(b.width() > 0.0f && b.height() > 0.0f) || (px_w > 0.0f && px_w * b.width() < 1.0f) ||
               (px_h > 0.0f && px_h * b.height() < 1.0f);
    };
    detections.erase(std::remove_if(detections.begin(), detections.end(), too_small), detections.end());
}

}  // namespace hailo_decode::tappas
