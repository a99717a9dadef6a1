// COCO's 80 class names as TAPPAS numbers them: index 0 is "unlabeled", class k is at k + 1
// (libyolo_hailortpp_post.so's labels without a config file).
#pragma once

#include <string>
#include <vector>

namespace hailo_decode::tappas {

const std::vector<std::string>& coco_labels();  // 81 names

}  // namespace hailo_decode::tappas
