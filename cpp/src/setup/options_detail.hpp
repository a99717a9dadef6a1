// What read_options shares with the other setup readers (read_nms_json).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "hailo_decode/json.hpp"

namespace hailo_decode::setup::detail {

// Checks `value` as read_options checks option `key`, the message naming it `shown` instead and
// prefixed with `where` (the NMS JSON's nms_iou_th is read as iou_threshold: "NMS JSON: nms_iou_th
// must be a number in [0, 1], got 1.5").
void check_option(const std::string& key, const json::Value& value, const std::string& shown, const std::string& where);

// The NMS JSON's keys of the settings it carries, and the options they set (nms_iou_th ->
// iou_threshold, ...): read_nms_json reads them, read_options answers a key spelt like one of them
// with the option's name.
const std::vector<std::pair<std::string, std::string>>& nms_json_setting_names();

}  // namespace hailo_decode::setup::detail
