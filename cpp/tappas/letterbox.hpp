// TAPPAS' filter_letterbox: hailocropper's letterbox sets the ROI's scaling bbox to where the
// picture lies in the network input; the detections, normalised to the input, are mapped through it
// to the picture (hailo_common::create_flattened_bbox), and the scaling bbox is then cleared so that
// hailooverlay draws them where they now are. Landmarks and masks are relative to their detection's
// box and follow it.
#pragma once

#include <vector>

#include "abi_line.hpp"

namespace hailo_decode::tappas {

// Maps `detections` (this call's) and clears the ROI's scaling bbox (always, as TAPPAS does).
void map_through_scaling_bbox(HailoROI& roi, const std::vector<HailoDetectionPtr>& detections);

}  // namespace hailo_decode::tappas
