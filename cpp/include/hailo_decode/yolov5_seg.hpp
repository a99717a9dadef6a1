// HailoRT's yolov5_seg op's HAILO_NMS_WITH_BYTE_MASK frame (4.23's, and 5.x's: see "HailoRT 5.x" below), written from a Decoder's
// YOLOv5/YOLOv7-seg detections (HeadKind::YOLOV5 with Config::proto_output) byte for byte as the op
// writes it (libhailort/src/net_flow/ops/yolov5_seg_post_process.cpp, nms_post_process.hpp,
// yolov5_post_process.hpp, stb_image_resize.h), computing only the pixels it writes:
//
//   coefficients   c_k = dequantize(coef_k) * objectness  (yolov5_post_process.hpp lines 76-80)
//   mask value     sigmoid(sum_k c_k * proto_k), the sum in k order (Eigen's gemv, lines 182-196 of
//                  yolov5_seg_post_process.cpp), exp as Eigen 3.4's pexp_float on x86-64 (SSE, no
//                  FMA; its scalar std::exp on the last H*W % 4 cells), then 1 / (1 + e)
//   resize         stb_image_resize's float resize to the input size, STBIR_FILTER_TRIANGLE,
//                  STBIR_EDGE_CLAMP (horizontal pass, then vertical), its float arithmetic in order
//   crop           rows max(ceil(y_min H), 0) ..= min(ceil(y_max H), H) and the columns alike, both
//                  bounds inclusive, byte (i - y0) * ceil((x_max - x_min) W) + (j - x0) set to
//                  value(i * W + j) > mask_threshold (lines 198-232): the last column of a row lands
//                  on the next row's first byte, and the last row past the mask (later records and
//                  masks overwrite what they cover, as in the op). Where the op reads past its H x W
//                  buffer (row H) this takes the value 0.0 (byte 0 unless mask_threshold < 0);
//                  bytes the op leaves unwritten (a box crossing the image's left or top edge) are 0.
//   count          incremented before the max_total test and before the fit test (lines 277-305):
//                  with more detections than max_total, or a mask that does not fit, the count
//                  field is one more than the records written.
//   mask pointer   the address of the mask's first byte in `out`, as the op's points into its buffer.
//
// The order of detections is the decoder's (HailoRT's sort and NMS under tie_break "hailort"); the
// decoder must not cap them (max_per_class and max_total unset: the op's byte-mask output applies
// only max_total, here) and must give yxyx_normalized boxes.
//
// HailoRT 5.x (v5.2.0's yolov5_seg_post_process.cpp, with its two opt-in environment variables
// HAILORT_YOLOV5_SEG_PP_CROP_OPT / _NN_RESIZE unset, their default): the same mask arithmetic,
// crop, count and fit rule as 4.23; the candidates are those of 5.x's YOLOv5 op (row, anchor,
// column order and its quantized pre-filters: the decoder's Settings::hailort_v5, set by a 5.0.1+
// hailort_version), and from 5.2.0 each record is 46 bytes, its mask_offset the mask's offset from
// the frame's start (ByteMaskLayout::HailoRT52). A decoder's hailort_version and the layout asked
// for must name the same HailoRT: write() refuses the 5.2 layout from a decoder of 4.x's ops.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "hailo_decode/decoder.hpp"
#include "hailo_decode/pack_byte_mask.hpp"

namespace hailo_decode {

struct Yolov5SegFramePacked {
    size_t records = 0;     // detections written
    size_t count = 0;       // the count field (records + 1 when the op would stop early)
    size_t bytes = 0;       // from the buffer's start to the end of the last mask
    bool truncated = false; // a mask did not fit max_accumulated_mask_size
};

class Yolov5SegFrameWriter {
public:
    // Checks cfg (kind YOLOV5 with a prototype of 32 channels, yxyx normalized boxes, no caps, an
    // input larger than the prototype grid on both axes); throws std::invalid_argument naming what
    // is wrong. The writer keeps its own copy of what it needs.
    explicit Yolov5SegFrameWriter(const Config& cfg);
    ~Yolov5SegFrameWriter();
    Yolov5SegFrameWriter(const Yolov5SegFrameWriter&) = delete;
    Yolov5SegFrameWriter& operator=(const Yolov5SegFrameWriter&) = delete;

    // Frame `frame` of dec's last decode (dec built from the same config) from that decode's
    // buffers (`tensors`, as Decoder::decode took them), into out[0, out_bytes). max_total: the op's
    // max_bboxes_total; mask_threshold: its mask_threshold (compared in double, as the op does).
    // Bytes past the last mask are left as they are except where a mask's last row spills.
    // layout: the records HailoRT writes (38 bytes up to 5.1, 46 from 5.2.0).
    Yolov5SegFramePacked write(const Decoder& dec, size_t frame, const void* const* tensors, size_t max_total,
                               double mask_threshold, uint8_t* out, size_t out_bytes,
                               ByteMaskLayout layout = ByteMaskLayout::HailoRT423);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace hailo_decode
