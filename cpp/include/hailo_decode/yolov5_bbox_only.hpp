// HailoRT 4.23's yolov5_bbox_only op (libhailort/src/net_flow/ops/yolov5_bbox_only_post_process.{hpp,cpp}):
// a float32 NHWC tensor (1, proposals, 5 + classes), one row per anchor of every cell of every
// YOLOv5 head (inputs in name order: the op iterates a std::map; then row, column, anchor):
// {y_min, x_min, y_max, x_max} of the YOLOv5 op's decode (normalized by the grid and the image
// size: w = powf(2 tw, 2) * anchor_w / image_w, x_c = (2 tx - 0.5 + col) / W, x_max = x_min + w),
// then the objectness and every class value, dequantized (the op applies no sigmoid: its
// should_sigmoid() is false). No threshold, no NMS.
//
//   Yolov5BboxOnly op(config);                          // YOLOv5 heads (HeadKind::YOLOV5)
//   op.write(tensors, elements, n_frames, out, n);      // n >= n_frames x op.frame_floats()
#pragma once

#include <cstddef>
#include <memory>

#include "hailo_decode/types.hpp"

namespace hailo_decode {

class Yolov5BboxOnly {
public:
    // Validates the config as a Decoder does (outputs, YOLOv5 heads: anchors, channels); throws
    // std::invalid_argument naming the output.
    explicit Yolov5BboxOnly(Config config);
    ~Yolov5BboxOnly();
    Yolov5BboxOnly(const Yolov5BboxOnly&) = delete;
    Yolov5BboxOnly& operator=(const Yolov5BboxOnly&) = delete;

    size_t proposals() const;    // rows of one frame: sum over heads of H x W x anchors
    size_t row_floats() const;   // 5 + classes
    size_t frame_floats() const;  // proposals() x row_floats()

    // Writes n_frames frames, frame f at out + f x frame_floats(). tensors / buffer_elements as
    // Decoder::decode takes them (checked the same way before any element is read); out_floats is
    // out's length (checked). float32 inputs must be finite. Allocates nothing.
    void write(const void* const* tensors, const size_t* buffer_elements, size_t n_frames, float* out,
               size_t out_floats) const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace hailo_decode
