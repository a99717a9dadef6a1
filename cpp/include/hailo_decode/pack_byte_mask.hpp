// HailoRT's HAILO_NMS_WITH_BYTE_MASK output (include/hailo/hailort.h, hailo_detection_with_byte_mask_t,
// and libhailort/src/net_flow/ops/yolov5_seg_post_process.cpp, copy_detection_to_result_buffer),
// written from kept detections, in either of HailoRT's two record layouts (ByteMaskLayout).
//
// Layout, packed, little-endian: uint16 detection count, then per detection a record
//   float32 y_min, x_min, y_max, x_max   (normalized to the input)
//   float32 score
//   uint16  class_id
//   uint64  mask_size                     (bytes of the mask that follows)
//   uint64  mask                          (a pointer in HailoRT's own buffer; written 0 here)
//   uint64  mask_offset                   (5.2.0+ only: the mask's offset from the buffer's start,
//                                          which HailoRT sets to the byte right after the record)
// 38 bytes up to HailoRT 5.1, 46 from 5.2.0; followed at once by mask_size bytes: the mask cropped to the box at the input size, row-major,
//   width  = uint32(ceil((x_max - x_min) * W)), height = uint32(ceil((y_max - y_min) * H)) (float32),
//   first byte = pixel (max(ceil(y_min * H), 0), max(ceil(x_min * W), 0)); 1 = object, 0 = background.
// A frame holds 2 + record * max_bboxes_total + max_accumulated_mask_size bytes (HailoRT's default
// mask budget is 2 * H * W). HailoRT adds a detection only while offset + 38 + mask_size < buffer
// size, and stops at the first that does not fit; so does this writer.
//
// Where HailoRT's loop leaves bytes of a mask unwritten (a box reaching past the image: it writes
// rows and columns up to min(ceil(max * size), size) only) or reads past its image buffer, this
// writer writes 0: pixels outside the image are background.
#pragma once

#include <cstddef>
#include <cstdint>

#include "hailo_decode/masks.hpp"

namespace hailo_decode {

constexpr size_t kByteMaskRecordBytes = 38;      // HailoRT 4.x .. 5.1
constexpr size_t kByteMaskRecordBytes52 = 46;    // HailoRT 5.2.0+: a size_t mask_offset appended

// Which record HailoRT writes: HailoRT423 for every version before 5.2.0, HailoRT52 from 5.2.0.
enum class ByteMaskLayout : int { HailoRT423 = 0, HailoRT52 = 1 };

// The record size of a layout (38 or 46); throws std::invalid_argument for an unknown value.
size_t byte_mask_record_bytes(ByteMaskLayout layout);

// 2 + record * max_total + mask_budget; throws std::invalid_argument on overflow.
size_t byte_mask_frame_bytes(size_t max_total, size_t mask_budget,
                             ByteMaskLayout layout = ByteMaskLayout::HailoRT423);

// HailoRT's crop of a normalized box: the first pixel and the mask's width and height.
struct ByteMaskCrop {
    uint32_t x0 = 0, y0 = 0, width = 0, height = 0;
};
ByteMaskCrop byte_mask_crop(float y_min, float x_min, float y_max, float x_max, int image_height, int image_width);

struct ByteMaskPacked {
    size_t detections = 0;  // how many were written (the count field)
    size_t bytes = 0;       // bytes used, from the start of the buffer
    bool truncated = false; // a detection did not fit and it and the rest were left out
};

// Detections i in [0, count), in the given order: boxes_yxyx normalized (the records and
// HailoRT's crop of each), their mask windows and logits as the decoder produced them
// (hailo_decode/decoder.hpp), rendered at the input size as render_mask does with crops_xyxy[i]
// (the box in input pixels, as the masks were cropped) as the crop. The crop is not re-derived
// from the normalized box: x / W * W need not give x back in float32, and a box edge one ulp past
// a pixel column would then take in a column the masks leave out. The rest of `out` is left as it is.
ByteMaskPacked pack_byte_mask(const float* boxes_yxyx, const float* crops_xyxy, const float* scores,
                              const int32_t* class_ids, size_t count, const MaskWindow* windows, const float* logits,
                              const MaskGrid& grid, uint8_t* out, size_t out_bytes,
                              ByteMaskLayout layout = ByteMaskLayout::HailoRT423);

// The same from masks already at the input size: masks[i] is (H, W) bytes, nonzero = object.
ByteMaskPacked pack_byte_mask_from_masks(const float* boxes_yxyx, const float* scores, const int32_t* class_ids,
                                         size_t count, const uint8_t* masks, int image_height, int image_width,
                                         uint8_t* out, size_t out_bytes,
                                         ByteMaskLayout layout = ByteMaskLayout::HailoRT423);

}  // namespace hailo_decode
