// SSD heads for setup::pair_outputs and read_nms_json (pairing_ssd.cpp, nms_json_ssd.cpp): kept
// apart from the other families' pairing, which they share nothing with but the Layout they fill.
#pragma once

#include <unordered_map>
#include <vector>

#include "hailo_decode/setup.hpp"

namespace hailo_decode::setup::detail {

// The layout of SSD heads given (every head kind SSD): each (reg, cls) pair an output of its own,
// every output in one head, reg A x 4 channels and cls A x (classes [+ background]) on one grid,
// one box coding and one class count on every head; the input size from options.image_size (SSD
// grids do not divide it: 19 x 19 at 300 x 300), each head's stride 0 (unused).
Layout ssd_layout(const std::vector<NamedHead>& heads, const std::vector<OutputShape>& outputs, const Options& options);

// True when an NMS JSON document describes SSD heads: a bbox decoder with reg_layer and anchor
// w/h lists and no stride (YOLOv5's have encoded_layer, YOLOv8's and YOLOX's a stride and no lists).
bool is_ssd_nms_json(const json::Value& doc);
// read_nms_json for such a document (the Model Zoo's mobilenet_ssd_nms_postprocess_config.json):
// heads with their float anchors, the coding (centers_scale_factor, bbox_dimensions_scale_factor,
// background_removal / background_removal_index) and the settings as read_nms_json gives them.
NmsJson read_ssd_nms_json(const json::Value& doc, const std::vector<OutputShape>& outputs, const std::string& where);

}  // namespace hailo_decode::setup::detail
