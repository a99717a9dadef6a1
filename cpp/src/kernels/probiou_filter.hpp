// Rotated NMS's pair filter (Table::probiou_filter), written once over a lane type V that each
// kernel translation unit defines for its instruction set (scalar: one lane). Included by each of
// them; V lives in that unit's anonymous namespace, so every instantiation has internal linkage
// and nothing built for one instruction set is shared.
//
// V provides: F (floats) and M (a lane mask); kWidth; load(p), set1(v); add, sub, mul, div, sqrt
// (IEEE, correctly rounded: the same bits as scalar); lt, gt (ordered: false with NaN); and_,
// andnot(a, b) = a & ~b; first(n): the lanes below n; bits(m): the mask as an integer, lane i at
// bit i.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels.hpp"

namespace hailo_decode {
namespace kernels {

template <class V>
static size_t probiou_filter_impl(const ProbiouList& l, size_t n, const ProbiouProbe& g, const ProbiouBounds& bounds,
                                  uint32_t* undecided) {
    using F = typename V::F;
    using M = typename V::M;
    const F gx = V::set1(g.x), gy = V::set1(g.y), ga = V::set1(g.a), gb = V::set1(g.b), gc = V::set1(g.c);
    const F gdet = V::set1(g.det), gfar = V::set1(g.far_spread);
    const F eps = V::set1(1e-7f), quarter = V::set1(0.25f), half = V::set1(0.5f), one = V::set1(1.0f),
            four = V::set1(4.0f), zero = V::set1(0.0f), huge = V::set1(1e30f);
    const F far_limit = V::set1(bounds.far_limit), lo = V::set1(bounds.band_lo), hi = V::set1(bounds.band_hi);
    const bool use_far = bounds.far_limit > 0.0f;
    const bool use_lo = bounds.banded && bounds.band_lo > 1e-7f, use_hi = bounds.banded && bounds.band_hi < 100.0f;
    size_t k = 0;
    for (size_t i = 0; i < n; i += V::kWidth) {
        M todo = V::first(n - i);
        // p = the earlier candidate, q = the probe: the operations of probiou_parts(p, q) in order.
        const F px = V::load(l.x + i), py = V::load(l.y + i);
        const F dx = V::sub(px, gx), dy = V::sub(py, gy);
        const F dy2 = V::mul(dy, dy), dx2 = V::mul(dx, dx);
        if (use_far) {
            const M far = V::gt(V::add(dx2, dy2), V::mul(far_limit, V::add(V::load(l.far_spread + i), gfar)));
            todo = V::andnot(todo, far);
            if (V::bits(todo) == 0) continue;
        }
        const F A = V::add(V::load(l.a + i), ga), B = V::add(V::load(l.b + i), gb), C = V::add(V::load(l.c + i), gc);
        const F D = V::sub(V::mul(A, B), V::mul(C, C));
        const F De = V::add(D, eps);
        const F t1 = V::mul(V::div(V::add(V::mul(A, dy2), V::mul(B, dx2)), De), quarter);
        const F t2 = V::mul(V::div(V::mul(V::mul(C, V::sub(gx, px)), dy), De), half);
        const F t12 = V::add(t1, t2);
        const F x = V::add(V::div(D, V::add(V::mul(four, V::sqrt(V::mul(V::load(l.det + i), gdet))), eps)), eps);
        if (bounds.banded) {
            const M in_range = V::and_(V::gt(x, zero), V::lt(x, huge));
            // log(x) <= x - 1: the distance is below the band, probiou above the threshold.
            if (use_lo && V::bits(V::and_(todo, V::and_(in_range, V::lt(V::add(t12, V::mul(half, V::sub(x, one))), lo)))))
                return kProbiouOver;
            // log(x) >= 1 - 1/x: above the band, probiou below the threshold.
            if (use_hi)
                todo = V::andnot(todo, V::and_(in_range, V::gt(V::add(t12, V::mul(half, V::sub(one, V::div(one, x)))), hi)));
        }
        for (uint32_t b = V::bits(todo); b != 0; b &= b - 1) undecided[k++] = uint32_t(i + size_t(__builtin_ctz(b)));
    }
    return k;
}

}  // namespace kernels
}  // namespace hailo_decode
