// The last boxes of a kept list, fewer than a 4-lane vector holds, copied into one vector's room
// for the IoU kernels of paths without masked loads (SSE2, NEON). Included by each of those
// translation units: internal linkage, so nothing built for one instruction set is shared.
#pragma once

#include <cstddef>

namespace hailo_decode {
namespace kernels {

// tail[0..5) = y0, x0, y1, x1, area of boxes [i, n), n - i < 4; the other lanes stay as they were.
static inline void copy_iou_tail(const float* y0, const float* x0, const float* y1, const float* x1,
                                 const float* area, size_t i, size_t n, float tail[5][4]) {
    for (size_t j = 0; i + j < n; ++j) {
        tail[0][j] = y0[i + j];
        tail[1][j] = x0[i + j];
        tail[2][j] = y1[i + j];
        tail[3][j] = x1[i + j];
        tail[4][j] = area[i + j];
    }
}

}  // namespace kernels
}  // namespace hailo_decode
