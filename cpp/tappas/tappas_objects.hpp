// The core's results as TAPPAS objects, one task each. Coordinates are normalised to the network
// input (the ROI hailonet ran on); confidences are clamped to [0, 1] (TAPPAS' constructors throw
// outside it).
//
//   detection      HailoDetection(bbox, class_id = class + 1, labels[class + 1], confidence)
//   pose           + HailoLandmarks("centerpose", K points normalised to the detection's box, each
//                    with its visibility as confidence; COCO's skeleton pairs when K == 17)
//   segmentation   + HailoConfClassMask: sigmoid of the mask logits at the prototype grid, the cells
//                    the box covers (Ultralytics' crop: cells c with x1 <= c < x2 on the grid;
//                    TAPPAS' yolov5seg crop for its config, MaskCrop), row-major, transparency 0.3,
//                    class_id as the detection's
//   OBB            HailoDetection on the axis-aligned box enclosing the rotated box
//                  + HailoLandmarks("obb", its 4 corners normalised to the detection's box,
//                    pairs (0,1) (1,2) (2,3) (3,0): hailooverlay draws the rotated outline)
//                  + with "obb_user_meta": true only, HailoUserMeta(class_id,
//                    "hailo_decode.obb cx cy w h angle input_w input_h", angle): the rotated box
//                    exactly as the core gives it, network-input pixels and radians (Ultralytics'
//                    xywhr), each printed with %.9g, which reads back as the same float32. Opt-in:
//                    TAPPAS' Python module binds HailoUserMeta without get_type(), so a callback
//                    that walks get_objects() and asks each its type fails on it.
// Boxes are clipped to the picture first (letterbox.hpp); landmarks are relative to the clipped
// box and masks cropped to it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "abi_line.hpp"
#include "detection_pool.hpp"
#include "hailo_decode/masks.hpp"
#include "hailo_decode/types.hpp"

namespace hailo_decode::tappas {

// A box normalised to the network input.
struct NormBox {
    float xmin = 0, ymin = 0, xmax = 0, ymax = 0;
};

// The network input, in pixels.
struct InputSize {
    float width = 0, height = 0;
};

// [0, 1], NaN as 0.
inline float clamp_unit(float v) { return v > 1.0f ? 1.0f : (v >= 0.0f ? v : 0.0f); }

// A core Detection's box (in the Settings' box format) normalised to the input. Inline, as
// make_detection: both run once a detection.
inline NormBox normalized_box(const Detection& d, const Settings& s, InputSize input) {
    NormBox b = s.yxyx ? NormBox{d.box[1], d.box[0], d.box[3], d.box[2]} : NormBox{d.box[0], d.box[1], d.box[2], d.box[3]};
    if (!s.normalized) {
        b.xmin /= input.width;
        b.xmax /= input.width;
        b.ymin /= input.height;
        b.ymax /= input.height;
    }
    return b;
}
// The same box in input pixels, x1 y1 x2 y2, computed as the Python package's boxes_as("xyxy_pixels").
void pixel_box(const Detection& d, const Settings& settings, InputSize input, float xyxy[4]);
// xyxy (input pixels) clipped to `picture` (normalised to the input), for the mask's crop.
void clip_pixel_box(float xyxy[4], const NormBox& picture, InputSize input);

// A detection from the element's pool (detection_pool.hpp): label labels[class_id] ("" beyond them).
// The reference is the pool's (see DetectionPool::take).
inline const HailoDetectionPtr& make_detection(DetectionPool& pool, const NormBox& b, int class_id,
                                               const std::vector<std::string>& labels, float confidence) {
    static const std::string none;
    const std::string& label = class_id >= 0 && size_t(class_id) < labels.size() ? labels[size_t(class_id)] : none;
    return pool.take(HailoBBox(b.xmin, b.ymin, b.xmax - b.xmin, b.ymax - b.ymin), class_id, label,
                     clamp_unit(confidence));
}

// Pose: `keypoints` holds K x (x, y, visibility) in the core's output units (normalised when
// `normalized`, else input pixels).
void attach_keypoints(HailoDetection& detection, const NormBox& box, const float* keypoints, int count,
                      bool normalized, InputSize input, float threshold);

// OBB: rbox = (cx, cy, w, h, angle) in input pixels and radians; user_meta: the HailoUserMeta too.
void attach_rotated_box(HailoDetection& detection, const NormBox& box, const float rbox[5], int class_id,
                        InputSize input, bool user_meta);
// The user string attach_rotated_box writes.
std::string rotated_box_text(const float rbox[5], InputSize input);

// How a mask is cropped to its box on the prototype grid:
//   Ultralytics: cells c with x1 <= c < x2 (box_xyxy scaled to the grid), as Ultralytics crops;
//   Tappas: TAPPAS' yolov5seg decode_masks: cells [int(clamp(xmin x P, 0, P)), int(clamp(xmax x P,
//           0, P))) of the normalised box (xmax as HailoBBox::xmax(): xmin + width).
enum class MaskCrop : uint8_t { Ultralytics, Tappas };

// Segmentation: the detection's mask window and its logits (Decoder::masks), cropped to its box
// (box_xyxy in input pixels, norm the same box normalised to the input; both clipped). Attaches
// nothing when the crop covers no cell.
void attach_mask(HailoDetection& detection, const float box_xyxy[4], const NormBox& norm, const MaskWindow& window,
                 const float* logits, const MaskGrid& grid, int class_id, MaskCrop crop = MaskCrop::Ultralytics);

// COCO's 17-keypoint skeleton as TAPPAS' yolov8pose post-process draws it.
const std::vector<std::pair<int, int>>& coco_skeleton();

}  // namespace hailo_decode::tappas
