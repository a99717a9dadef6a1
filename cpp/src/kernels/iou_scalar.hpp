// The scalar one-against-many IoU test, the reference every SIMD any_iou_over matches. Internal
// linkage on purpose: scalar.cpp builds its kernel from it and nms.cpp calls it directly for the
// short lists that dominate NMS (no indirect call); no SIMD translation unit may include it.
#pragma once

#include <cstddef>

namespace hailo_decode {
namespace kernels {

static inline bool any_iou_over_scalar(const float* y0, const float* x0, const float* y1, const float* x1,
                                       const float* area, size_t n, const float b[4], float b_area, float th,
                                       bool inclusive) {
    for (size_t i = 0; i < n; ++i) {
        const float ow = (x1[i] < b[3] ? x1[i] : b[3]) - (x0[i] > b[1] ? x0[i] : b[1]);
        const float oh = (y1[i] < b[2] ? y1[i] : b[2]) - (y0[i] > b[0] ? y0[i] : b[0]);
        float iou = 0.0f;
        if (ow > 0.0f && oh > 0.0f) {
            const float inter = ow * oh;
            iou = inter / ((area[i] + b_area) - inter);
        }
        if (inclusive ? iou >= th : iou > th) return true;
    }
    return false;
}

}  // namespace kernels
}  // namespace hailo_decode
