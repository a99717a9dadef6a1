// Boxes in the picture. The plugin's detections are made normalised to the network input and
// clipped to the picture on the way: for `filter` the picture is the network input itself; for
// TAPPAS' filter_letterbox, hailocropper's letterbox has set the ROI's scaling bbox to where the
// picture lies, the detections are mapped through it to the picture
// (hailo_common::create_flattened_bbox, as TAPPAS' own letterbox filters map them) and the scaling
// bbox is then cleared, so that hailooverlay draws them where they now are.
//
// The rule (docs/gstreamer.md, "Boxes in the picture"): every box is clipped to the picture; a
// detection with nothing left inside it is dropped, and so is one whose clipped box is less than
// one pixel wide or high at the network's scale of the picture (the network input for `filter`,
// the letterboxed picture's size inside the input for `filter_letterbox`): hailooverlay sizes a
// detection's mask as int(frame width x box width), which is then at least one pixel on any frame
// at least that large. Landmarks and masks are made for the clipped box (tappas_objects.hpp).
#pragma once

#include <vector>

#include "abi_line.hpp"
#include "tappas_objects.hpp"

namespace hailo_decode::tappas {

// Where the picture lies, for one frame.
struct PictureMap {
    bool letterbox = false;
    HailoBBox frame{0.0f, 0.0f, 1.0f, 1.0f};  // create_flattened_bbox(roi bbox, scaling bbox): input -> picture
    NormBox picture{0.0f, 0.0f, 1.0f, 1.0f};   // the picture in network-input coordinates (clip boxes to it)
};

// The ROI's picture: the network input itself, or (letterbox) the scaling bbox's. A scaling bbox
// that maps nothing (zero, negative or not finite size) is taken as none.
PictureMap picture_map(HailoROI& roi, bool letterbox);

// `box` clipped to the picture; false when nothing is left inside it (or it holds a NaN).
inline bool clip_to_picture(NormBox& box, const PictureMap& map) {
    const NormBox& p = map.picture;
    if (!(box.xmin == box.xmin && box.ymin == box.ymin && box.xmax == box.xmax && box.ymax == box.ymax)) return false;
    box.xmin = box.xmin > p.xmin ? box.xmin : p.xmin;
    box.ymin = box.ymin > p.ymin ? box.ymin : p.ymin;
    box.xmax = box.xmax < p.xmax ? box.xmax : p.xmax;
    box.ymax = box.ymax < p.ymax ? box.ymax : p.ymax;
    return box.xmax > box.xmin && box.ymax > box.ymin;
}

// Maps the detections to the picture (letterbox; their boxes clipped to [0, 1] there, where float
// rounding could leave them a hair outside), then drops those less than one pixel wide or high
// at the network's scale of the picture (`input`: the network input in pixels; {0, 0} when it is
// not known, as for an NMS op's output: then only empty boxes are dropped, which clipping did).
void fit_to_picture(const PictureMap& map, InputSize input, std::vector<HailoDetectionPtr>& detections);

}  // namespace hailo_decode::tappas
