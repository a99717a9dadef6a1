// Plain data types shared by every stage of the decoder: what a tensor looks like in memory,
// how the heads pair tensors, the NMS settings, and what a detection is. Filled by the caller and
// checked by Decoder's constructor (std::invalid_argument naming the output and the bad value).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace hailo_decode {

enum class DType : uint8_t { U8 = 0, U16 = 1, F32 = 2 };

// Bytes of one element of that type; every buffer must be aligned to it.
inline size_t dtype_size(DType t) { return t == DType::U8 ? 1 : t == DType::U16 ? 2 : 4; }

// How element (h, w, c) is addressed inside one frame. FCR has NHWC's addressing (HailoRT copies
// it with the same routine), so it is NHWC here. A dense host buffer is NHWC with padded == logical.
enum class Order : uint8_t {
    NHWC = 0,  // h*Wp*Cp + w*Cp + c
    NHCW = 1,  // h*Wp*Cp + c*Wp + w            (raw device buffers)
    F8CR = 2,  // h*Wp*Cp + (c - c%8)*Wp + w*8 + c%8  (raw device buffers, Cp % 8 == 0)
    NCHW = 3,  // c*Hp*Wp + h*Wp + w            (host, only when asked for)
};

// One output tensor as it lies in memory. Checked: shape and padded shape in [1, 32768] with
// padded >= logical (F8CR: padded_channels a multiple of 8), frame_stride >= one frame's span.
struct TensorSpec {
    std::string name;  // HailoRT's output name; every error message names it
    DType dtype = DType::U8;
    Order order = Order::NHWC;
    int height = 0, width = 0, channels = 0;                      // logical shape
    int padded_height = 0, padded_width = 0, padded_channels = 0;  // memory shape (= logical when dense)
    size_t frame_stride = 0;  // elements from one frame to the next in a batch (dense: Hp x Wp x Cp)
    // Quantization, value = (q - zp) x scale: one value (per tensor) or `channels` values (per
    // channel), finite, scale > 0, every q dequantizing to a finite float. Unused for F32.
    std::vector<float> zp{0.0f};
    std::vector<float> scale{1.0f};
};

// Which head family the decoder reads (Config::kind).
//   DFL:    YOLOv8/YOLO11/YOLO26/YOLOv10: box tensor 4 x bins channels, class tensor nc channels.
//   YOLOV5: YOLOv5/YOLOv7 anchor heads: one tensor of A x (5 + nc) channels, (x, y, w, h,
//           objectness, classes) per anchor; HeadSpec::anchors holds the A (w, h) pairs in pixels.
//   YOLOX:  reg (4), objectness (1) and class (nc) tensors per head.
//   SSD:    reg (A x 4) and class (A x classes) tensors per head, HeadSpec::box_anchors holding the
//           A (w, h) pairs normalized by the input size, Config::ssd the box coding (HailoRT's ssd op).
enum class HeadKind : uint8_t { DFL = 0, YOLOV5 = 1, YOLOX = 2, SSD = 3 };

// SSD heads' box coding and background class (HailoRT 4.23 ssd_post_process.hpp): a cell's anchor
// a reads its 4 regression channels a*4 + {ty, tx, th, tw}_index, x_centre = tx / centers_scale *
// anchor_w + (col + 0.5) / W, w = exp(tw / dims_scale) * anchor_w (likewise y, h). The class tensor
// holds A x (classes + 1) channels when background_class >= 0 (that class, the first or the last,
// is never a detection; with the first, the other ids move down by one), A x classes otherwise.
struct SsdCoding {
    float centers_scale = 10.0f, dims_scale = 5.0f;
    int ty_index = 0, tx_index = 1, th_index = 2, tw_index = 3;
    int background_class = -1;  // index in the class tensor's classes, -1: none
};

// How pose heads' keypoint channels and OBB heads' angle channel become pixels and radians; the
// Ultralytics head classes differ (nn/modules/head.py, 8.4):
//   KeypointDecode::YOLOV8 (Pose: YOLOv8/YOLO11): x = (raw_x * 2 + col) * stride (its anchors are
//     cell + 0.5 and it subtracts 0.5 again), y likewise with the row;
//   KeypointDecode::YOLO26 (Pose26): x = (raw_x + (col + 0.5)) * stride, y likewise.
//   AngleDecode::SIGMOID (OBB: YOLOv8/YOLO11): angle = (sigmoid(raw) - 0.25) * pi, in [-pi/4, 3pi/4);
//   AngleDecode::RAW (OBB26): angle = raw, any value.
// Visibility is sigmoid(raw_v) in both keypoint forms.
enum class KeypointDecode : uint8_t { YOLOV8 = 0, YOLO26 = 1 };
enum class AngleDecode : uint8_t { SIGMOID = 0, RAW = 1 };

// One detection head: its box tensor (4 x bins channels) and class tensor (num_classes channels)
// on the same grid (DFL kind; the other kinds below). Checked: indices in range, stride > 0,
// matching grids and channel counts.
struct HeadSpec {
    int box_output = -1;  // index into Config::outputs
    int cls_output = -1;
    int stride = 0;       // input pixels per grid cell
    // Optional per-head task outputs (indices into Config::outputs, -1: none), on the head's grid.
    int kpt_output = -1;    // pose: K * keypoint_dims channels, (x, y[, visibility]) per keypoint
    int angle_output = -1;  // oriented boxes: 1 channel, the raw angle logit
    int mask_output = -1;   // segmentation: mask coefficients
    int obj_output = -1;    // YOLOX: the objectness tensor (box_output: reg, cls_output: classes)
    std::vector<int> anchors;  // YOLOV5: (w, h) pairs in input pixels, one pair per anchor
    std::vector<float> box_anchors;  // SSD: (w, h) pairs normalized by the input size, one per anchor
};

// Thresholds, NMS and output form. Checked: score thresholds not NaN, 1 value or num_classes values;
// iou_threshold finite; image size > 0. Defaults are HailoRT's post-process except the caps.
struct Settings {
    bool sigmoid = false;                  // apply sigmoid to class values (raw logits)
    std::vector<float> score_threshold{0.2f};  // one value, or one per class
    bool score_inclusive = true;           // score >= th (HailoRT) or score > th (Ultralytics)
    float iou_threshold = 0.7f;
    bool iou_inclusive = true;             // suppress on IoU >= th (HailoRT) or > th (Ultralytics)
    bool multi_label = true;               // every passing class of a cell, or its best class only
    bool agnostic = false;                 // suppression across classes
    int64_t max_per_class = -1;            // < 0: no cap. Applied after NMS (HailoRT's default: 100).
    int64_t max_total = -1;                // < 0: no cap. Applied after the per-class cap.
    int64_t max_candidates = -1;           // < 0: no cap. Highest-scoring candidates kept before NMS.
    bool hailort_sort = true;              // std::sort as HailoRT does (ties unstable) or stable
    // With hailort_sort: HailoRT 5.0.1+'s ops (setup's hailort_version) instead of 4.23's. Their
    // candidates come per row in (class, column) order (YOLOv8/DFL heads) or (anchor, column)
    // order (YOLOv5), which std::sort's ties depend on, and a raw value must also pass the
    // threshold quantized as HailoRT quantizes it (score_threshold.hpp, hailort_quantize).
    bool hailort_v5 = false;
    bool normalized = true;                // coordinates divided by the input size
    bool yxyx = true;                      // [ymin, xmin, ymax, xmax] or [x1, y1, x2, y2]
    int image_height = 0, image_width = 0;  // the network's input size, in pixels (required)
    // Rotated NMS (OBB heads), class-aware: centres are offset by class_id * class_offset before
    // probiou, as Ultralytics does with max_wh = 7680 (the offset rounds the centres in float32;
    // 0 compares them unmoved). Unused by axis-aligned NMS.
    float class_offset = 0.0f;
    // End-to-end heads (Ultralytics' one-to-one head, YOLO26/YOLOv10): no NMS, the top-k selection
    // of topk.hpp; max_total is max_det there (-1: Ultralytics' 300).
    bool end2end = false;
    // YOLOV5/YOLOX: the box formulas of HailoRT's op (normalized by the grid, as its float32 code
    // computes them) or of the model's own repository (pixels, by the stride).
    bool hailort_decode = true;
};

// Everything a Decoder needs. Checked: at least one output and one head, num_classes > 0, bins > 0.
struct Config {
    std::vector<TensorSpec> outputs;  // indexed by HeadSpec; Decoder::decode takes one buffer each
    std::vector<HeadSpec> heads;      // candidate order follows this order
    int num_classes = 0;
    int bins = 16;                    // DFL bins per side; 1 = distances given directly
    HeadKind kind = HeadKind::DFL;
    Settings settings;
    int num_keypoints = 0;        // pose: K (0: no keypoints)
    int keypoint_dims = 3;        // pose: 3 (x, y, visibility) or 2 (x, y)
    int proto_output = -1;        // segmentation: the prototype tensor (index into outputs), -1: none
    bool drop_empty_masks = false;  // segmentation: drop detections whose input-size mask is empty (Ultralytics)
    bool mask_objectness = true;    // anchor (YOLOv5) seg heads: mask coefficients times the anchor's objectness
    KeypointDecode keypoint_decode = KeypointDecode::YOLOV8;  // pose
    AngleDecode angle_decode = AngleDecode::SIGMOID;          // OBB
    SsdCoding ssd;                // SSD heads
};

// One kept detection. `box` is in the output coordinates chosen by Settings (order, normalization).
// `head` (index into Config::heads) and `cell` (row * W + col of that head's grid) name the anchor it
// came from, so that per-cell task outputs (keypoints, mask coefficients) can be read for it later.
struct Detection {
    float box[4];
    float score;
    int32_t class_id;
    uint32_t head;
    uint32_t cell;
};

}  // namespace hailo_decode
