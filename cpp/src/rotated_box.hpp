// Oriented boxes of OBB heads, each step as Ultralytics computes it (float32, the same operations
// in the same order):
//   angle   = (sigmoid(logit) - 0.25) * pi                      nn/modules/head.py OBB.forward_head
//             (OBB26.forward_head: the raw value, AngleDecode::RAW)
//   centre  = rotate((r - l) / 2, (b - t) / 2) by the angle,
//             + (col + 0.5, row + 0.5), times the stride;
//   size    = (l + r, t + b) times the stride                   utils/tal.py dist2rbox
//   corners = centre +- (w/2 cos, w/2 sin) +- (-h/2 sin, h/2 cos)  utils/ops.py xywhr2xyxyxyxy
//   enclosing axis-aligned box = min / max of the corners       engine/results.py OBB.xyxy
#pragma once

#include <cmath>

#include "hailo_decode/types.hpp"
#include "score_threshold.hpp"

namespace hailo_decode {
namespace detail {

struct RotatedBox {
    float cx, cy, w, h, angle;  // input pixels, radians (Ultralytics' xywhr)
};

// cos and sin of an angle, computed once a candidate and used by every step that needs them (each
// step of Ultralytics' computes them again from the same angle: the same values).
struct Turn {
    float cos, sin;
};
inline Turn turn_of(float angle) { return {std::cos(angle), std::sin(angle)}; }

inline float obb_angle(float logit) {
    constexpr float kPi = 3.14159265358979323846f;
    return (sigmoid(logit) - 0.25f) * kPi;  // in [-pi/4, 3pi/4]
}

// The angle of a raw angle channel value: OBB's sigmoid form, or OBB26's raw value itself.
inline float decode_angle(float raw, AngleDecode how) { return how == AngleDecode::RAW ? raw : obb_angle(raw); }

// d: (left, top, right, bottom) distances in strides; col, row: the cell.
inline RotatedBox dist2rbox(const float d[4], float angle, Turn t, int col, int row, int stride) {
    const float c = t.cos, s = t.sin;
    const float xf = (d[2] - d[0]) / 2.0f, yf = (d[3] - d[1]) / 2.0f;
    const float x = xf * c - yf * s, y = xf * s + yf * c;
    const float st = float(stride);
    return {(x + (float(col) + 0.5f)) * st, (y + (float(row) + 0.5f)) * st, (d[0] + d[2]) * st, (d[1] + d[3]) * st,
            angle};
}
inline RotatedBox dist2rbox(const float d[4], float angle, int col, int row, int stride) {
    return dist2rbox(d, angle, turn_of(angle), col, row, stride);
}

// The four corners (x, y) in xywhr2xyxyxyxy's order.
inline void rbox_corners(const RotatedBox& b, Turn t, float out[8]) {
    const float c = t.cos, s = t.sin;
    const float v1x = b.w / 2.0f * c, v1y = b.w / 2.0f * s;
    const float v2x = -b.h / 2.0f * s, v2y = b.h / 2.0f * c;
    out[0] = b.cx + v1x + v2x; out[1] = b.cy + v1y + v2y;
    out[2] = b.cx + v1x - v2x; out[3] = b.cy + v1y - v2y;
    out[4] = b.cx - v1x - v2x; out[5] = b.cy - v1y - v2y;
    out[6] = b.cx - v1x + v2x; out[7] = b.cy - v1y + v2y;
}

// The axis-aligned box enclosing the corners, (x0, y0, x1, y1) in pixels.
inline void enclosing_box(const RotatedBox& b, Turn t, float out[4]) {
    float p[8];
    rbox_corners(b, t, p);
    auto lo = [](float a, float b) { return b < a ? b : a; };
    auto hi = [](float a, float b) { return b > a ? b : a; };
    out[0] = lo(lo(p[0], p[2]), lo(p[4], p[6]));
    out[1] = lo(lo(p[1], p[3]), lo(p[5], p[7]));
    out[2] = hi(hi(p[0], p[2]), hi(p[4], p[6]));
    out[3] = hi(hi(p[1], p[3]), hi(p[5], p[7]));
}
inline void enclosing_box(const RotatedBox& b, float out[4]) { enclosing_box(b, turn_of(b.angle), out); }

}  // namespace detail
}  // namespace hailo_decode
