// Adding a frame's detections to the ROI hailofilter hands us, all at once.
//
// HailoROI::add_object takes one object per call: the ROI's lock, a copy of the pointer into its
// vector (an atomic count change, and another when the by-value argument dies), growth of that
// vector one object at a time. At 50 detections a frame that was a third of the plugin's own cost,
// and each locked instruction also stalls the memory loads around it. add_detections does what
// add_object does for each detection (a detection is a HailoROI: its scaling bbox composed with the
// ROI's box, the ROI's stream id, then appended under the ROI's lock), holding the lock once and
// moving the pointers in. The vector and the lock are protected members of HailoMainObject, whose
// layout is the headers' we compile against, the same on both ABI lines.
#pragma once

#include <vector>

#include "abi_line.hpp"

namespace hailo_decode::tappas {

// Appends `detections` to the ROI's objects, in order, and empties `detections`.
void add_detections(HailoROI& roi, std::vector<HailoDetectionPtr>& detections);

}  // namespace hailo_decode::tappas
