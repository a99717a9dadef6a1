// Rotated NMS's pair filter (Table::probiou_filter), written once over a lane type V that each
// kernel translation unit defines for its instruction set (scalar: one lane). Included by each of
// them; V lives in that unit's anonymous namespace, so every instantiation has internal linkage
// and nothing built for one instruction set is shared.
//
// V provides: F (floats) and M (a lane mask); kWidth; load(p), set1(v); add, sub, mul, div, sqrt
// (IEEE, correctly rounded: the same bits as scalar), abs; lt, gt (ordered: false with NaN); and_,
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
    // The division-free test (below): margins of 2^-16 and 2^-14, hundreds of times the rounding.
    const F two_eps = V::set1(2e-7f), big_d = V::set1(1e20f), big_n = V::set1(1e30f), margin = V::set1(0x1p-16f);
    const F gdet16 = V::set1(16.0f * (1.0f + 0x1p-14f) * g.det), hi4 = V::set1(4.0f * (1.0f + 0x1p-16f) * bounds.band_hi);
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
        const F n1 = V::add(V::mul(A, dy2), V::mul(B, dx2)), n2 = V::mul(V::mul(C, V::sub(gx, px)), dy);
        if (use_hi) {
            // Above the band without dividing, from the same n1, n2, D as probiou_parts: then
            // t12 = n1 / De / 4 + n2 / De / 2 > band_hi as computed, since n1 + 2 n2 exceeds
            // 4 band_hi De by more than the rounding of those steps; and the computed x >= 1,
            // since D > 4 sqrt(det_p det_q) + eps with room to spare (squared: (D - 2 eps)^2 >
            // 16 det_p det_q (1 + 2^-14)), so 1 - 1/x >= 0 and the band test above says "below
            // the threshold" (and the test below it does not pass: x - 1 >= 0).
            const F e = V::sub(D, two_eps);
            const M x_at_least_1 = V::and_(V::and_(V::gt(e, zero), V::lt(D, big_d)),
                                           V::gt(V::mul(e, e), V::mul(V::load(l.det + i), gdet16)));
            const F n1a = V::abs(n1), n2a = V::abs(n2);
            const F lhs = V::sub(V::add(n1, V::add(n2, n2)), V::mul(margin, V::add(n1a, V::add(n2a, n2a))));
            const M far_t = V::and_(V::gt(lhs, V::mul(hi4, De)), V::and_(V::lt(n1a, big_n), V::lt(n2a, big_n)));
            todo = V::andnot(todo, V::and_(x_at_least_1, far_t));
            if (V::bits(todo) == 0) continue;
        }
        const F t1 = V::mul(V::div(n1, De), quarter);
        const F t2 = V::mul(V::div(n2, De), half);
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
