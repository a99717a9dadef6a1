// The axis-aligned boxes enclosing rotated boxes (Table::enclosing_boxes), written once over a
// lane type V that each kernel translation unit defines (probiou_gaussians.hpp's operations plus
// V::neg), included by each of them as probiou_filter.hpp is.
#pragma once

#include <cstddef>

#include "kernels.hpp"

namespace hailo_decode {
namespace kernels {

// rotated_box.hpp enclosing_box (the corners of rbox_corners, then their min and max, in that
// order), then the division by the image size when normalizing: rotated_nms.cpp
// enclosing_output_box before its reordering, a vector of boxes at a time.
template <class V>
static void enclosing_boxes_impl(const ProbiouBoxes& in, size_t n, float width, float height, bool normalize,
                                 const EnclosingBoxes& out) {
    using F = typename V::F;
    const F two = V::set1(2.0f), wv = V::set1(width), hv = V::set1(height);
    auto lo = [](F a, F b) { return V::select(V::lt(b, a), b, a); };  // b < a ? b : a, as enclosing_box
    auto hi = [](F a, F b) { return V::select(V::gt(b, a), b, a); };
    for (size_t i = 0; i < n; i += V::kWidth) {
        const F cx = V::load(in.x + i), cy = V::load(in.y + i), w = V::load(in.w + i), h = V::load(in.h + i);
        const F c = V::load(in.cos + i), s = V::load(in.sin + i);
        const F half_w = V::div(w, two);
        const F v1x = V::mul(half_w, c), v1y = V::mul(half_w, s);
        const F v2x = V::mul(V::div(V::neg(h), two), s), v2y = V::mul(V::div(h, two), c);
        const F ax = V::add(cx, v1x), bx = V::sub(cx, v1x), ay = V::add(cy, v1y), by = V::sub(cy, v1y);
        const F p0 = V::add(ax, v2x), p1 = V::add(ay, v2y);
        const F p2 = V::sub(ax, v2x), p3 = V::sub(ay, v2y);
        const F p4 = V::sub(bx, v2x), p5 = V::sub(by, v2y);
        const F p6 = V::add(bx, v2x), p7 = V::add(by, v2y);
        F x0 = lo(lo(p0, p2), lo(p4, p6)), y0 = lo(lo(p1, p3), lo(p5, p7));
        F x1 = hi(hi(p0, p2), hi(p4, p6)), y1 = hi(hi(p1, p3), hi(p5, p7));
        if (normalize) {
            x0 = V::div(x0, wv); y0 = V::div(y0, hv); x1 = V::div(x1, wv); y1 = V::div(y1, hv);
        }
        V::store(out.x0 + i, x0);
        V::store(out.y0 + i, y0);
        V::store(out.x1 + i, x1);
        V::store(out.y1 + i, y1);
    }
}

}  // namespace kernels
}  // namespace hailo_decode
