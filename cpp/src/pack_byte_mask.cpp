#include "hailo_decode/pack_byte_mask.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

namespace hailo_decode {
namespace {

// uint32(x) of a non-negative float as HailoRT's static_cast does for in-range values; clamped.
inline uint32_t to_u32(float v) {
    if (!(v > 0.0f)) return 0;
    if (v >= 4294967040.0f) return 4294967040u;
    return uint32_t(v);
}

template <typename Fill>
ByteMaskPacked pack(const float* boxes, const float* scores, const int32_t* class_ids, size_t count, int H, int W,
                    uint8_t* out, size_t out_bytes, ByteMaskLayout layout, Fill fill) {
    const size_t record = byte_mask_record_bytes(layout);
    if (out_bytes < 2) throw std::invalid_argument("HAILO_NMS_WITH_BYTE_MASK buffer too small: " + std::to_string(out_bytes) + " bytes");
    for (size_t i = 0; i < count; ++i)
        if (class_ids[i] < 0 || class_ids[i] > 65535)
            throw std::invalid_argument("class id " + std::to_string(class_ids[i]) + " does not fit HailoRT's uint16 class_id");
    ByteMaskPacked r;
    size_t offset = 2;
    for (size_t i = 0; i < count && i < 65535; ++i) {
        const float* b = boxes + 4 * i;
        const ByteMaskCrop crop = byte_mask_crop(b[0], b[1], b[2], b[3], H, W);
        const uint64_t mask_size = uint64_t(crop.width) * crop.height;
        if (mask_size >= out_bytes || offset + record + mask_size >= out_bytes) {
            r.truncated = true;
            break;
        }
        uint8_t* rec = out + offset;
        std::memcpy(rec, b, 16);
        std::memcpy(rec + 16, scores + i, 4);
        const uint16_t cls = uint16_t(class_ids[i]);
        std::memcpy(rec + 20, &cls, 2);
        std::memcpy(rec + 22, &mask_size, 8);
        std::memset(rec + 30, 0, 8);
        if (layout == ByteMaskLayout::HailoRT52) {
            // 5.2's copy_detection_to_result_buffer: mask_offset = buffer_offset + detection_size.
            const uint64_t mask_offset = uint64_t(offset + record);
            std::memcpy(rec + 38, &mask_offset, 8);
        }
        offset += record;
        fill(i, crop, out + offset);
        offset += size_t(mask_size);
        ++r.detections;
    }
    const uint16_t n = uint16_t(r.detections);
    std::memcpy(out, &n, 2);
    r.bytes = offset;
    return r;
}

}  // namespace

size_t byte_mask_record_bytes(ByteMaskLayout layout) {
    switch (layout) {
        case ByteMaskLayout::HailoRT423: return kByteMaskRecordBytes;
        case ByteMaskLayout::HailoRT52: return kByteMaskRecordBytes52;
    }
    throw std::invalid_argument("unknown HAILO_NMS_WITH_BYTE_MASK layout " + std::to_string(int(layout)) +
                                " (0: HailoRT before 5.2, 38-byte records; 1: 5.2+, 46-byte records)");
}

size_t byte_mask_frame_bytes(size_t max_total, size_t mask_budget, ByteMaskLayout layout) {
    const size_t record = byte_mask_record_bytes(layout);
    const size_t max = std::numeric_limits<size_t>::max();
    if (max_total > (max - 2) / record || mask_budget > max - 2 - record * max_total)
        throw std::invalid_argument("HAILO_NMS_WITH_BYTE_MASK size overflows");
    return 2 + record * max_total + mask_budget;
}

ByteMaskCrop byte_mask_crop(float y_min, float x_min, float y_max, float x_max, int H, int W) {
    const float h = float(H), w = float(W);
    ByteMaskCrop c;
    c.x0 = to_u32(std::fmax(std::ceil(x_min * w), 0.0f));
    c.y0 = to_u32(std::fmax(std::ceil(y_min * h), 0.0f));
    c.width = to_u32(std::ceil((x_max - x_min) * w));
    c.height = to_u32(std::ceil((y_max - y_min) * h));
    return c;
}

ByteMaskPacked pack_byte_mask(const float* boxes, const float* crops, const float* scores, const int32_t* class_ids,
                              size_t count, const MaskWindow* windows, const float* logits, const MaskGrid& g,
                              uint8_t* out, size_t out_bytes, ByteMaskLayout layout) {
    MaskScratch scratch;
    const MaskSampling to_input = sampling_to_input(g);
    return pack(boxes, scores, class_ids, count, g.image_height, g.image_width, out, out_bytes, layout,
                [&](size_t i, const ByteMaskCrop& crop, uint8_t* dst) {
                    const float* px = crops + 4 * i;  // the pixel box the masks are cropped with
                    if (crop.width == 0 || crop.height == 0) return;
                    // Rows and columns past int range cannot be inside the image: rendered as 0.
                    const int r0 = int(std::min<uint32_t>(crop.y0, uint32_t(g.image_height)));
                    const int c0 = int(std::min<uint32_t>(crop.x0, uint32_t(g.image_width)));
                    if (crop.y0 > uint32_t(g.image_height) || crop.x0 > uint32_t(g.image_width)) {
                        std::memset(dst, 0, size_t(crop.width) * crop.height);
                        return;
                    }
                    render_mask(logits + windows[i].offset, windows[i], g, to_input, px, r0, c0, int(crop.height),
                                int(crop.width), dst, crop.width, scratch);
                });
}

ByteMaskPacked pack_byte_mask_from_masks(const float* boxes, const float* scores, const int32_t* class_ids,
                                         size_t count, const uint8_t* masks, int H, int W, uint8_t* out,
                                         size_t out_bytes, ByteMaskLayout layout) {
    return pack(boxes, scores, class_ids, count, H, W, out, out_bytes, layout,
                [&](size_t i, const ByteMaskCrop& crop, uint8_t* dst) {
                    const uint8_t* m = masks + i * size_t(H) * size_t(W);
                    for (uint32_t r = 0; r < crop.height; ++r) {
                        uint8_t* row = dst + size_t(r) * crop.width;
                        const uint64_t y = uint64_t(crop.y0) + r;
                        for (uint32_t c = 0; c < crop.width; ++c) {
                            const uint64_t x = uint64_t(crop.x0) + c;
                            row[c] = (y < uint64_t(H) && x < uint64_t(W)) ? uint8_t(m[y * W + x] != 0) : 0;
                        }
                    }
                });
}

}  // namespace hailo_decode
