// Rotated NMS's pair filter (Table::probiou_filter and Table::probiou_verdicts), written once over a lane type V that each
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

// The constants of one bounds, broadcast once (per list, not per probe).
template <class V>
struct ProbiouConsts {
    using F = typename V::F;
    F eps, quarter, half, one, four, zero, huge, far_limit, lo, hi;
    // The division-free test (below): margins of 2^-16 and 2^-14, hundreds of times the rounding.
    F two_eps, big_d, big_n, margin, hi4;
    bool use_far, use_lo, use_hi, banded;
    explicit ProbiouConsts(const ProbiouBounds& bounds)
        : eps(V::set1(1e-7f)), quarter(V::set1(0.25f)), half(V::set1(0.5f)), one(V::set1(1.0f)), four(V::set1(4.0f)),
          zero(V::set1(0.0f)), huge(V::set1(1e30f)), far_limit(V::set1(bounds.far_limit)), lo(V::set1(bounds.band_lo)),
          hi(V::set1(bounds.band_hi)), two_eps(V::set1(2e-7f)), big_d(V::set1(1e20f)), big_n(V::set1(1e30f)),
          margin(V::set1(0x1p-16f)), hi4(V::set1(4.0f * (1.0f + 0x1p-16f) * bounds.band_hi)),
          use_far(bounds.far_limit > 0.0f), use_lo(bounds.banded && bounds.band_lo > 1e-7f),
          use_hi(bounds.banded && bounds.band_hi < 100.0f), banded(bounds.banded) {}
};

// One probe, broadcast.
template <class V>
struct ProbiouProbeV {
    using F = typename V::F;
    F gx, gy, ga, gb, gc, gdet, gfar, gdet16;
    explicit ProbiouProbeV(const ProbiouProbe& g)
        : gx(V::set1(g.x)), gy(V::set1(g.y)), ga(V::set1(g.a)), gb(V::set1(g.b)), gc(V::set1(g.c)), gdet(V::set1(g.det)),
          gfar(V::set1(g.far_spread)), gdet16(V::set1(16.0f * (1.0f + 0x1p-14f) * g.det)) {}
};

// The pairs (list[i + lane], probe) for the lanes in `todo`: false when one of them certainly
// passes (its distance bound is below the band), else true with `todo` narrowed to the lanes
// left undecided.
template <class V>
static inline bool probiou_block(const ProbiouConsts<V>& k, const ProbiouProbeV<V>& g, const ProbiouList& l, size_t i,
                                 typename V::M& todo) {
    using F = typename V::F;
    using M = typename V::M;
    // p = the earlier candidate, q = the probe: the operations of probiou_parts(p, q) in order.
    const F px = V::load(l.x + i), py = V::load(l.y + i);
    const F dx = V::sub(px, g.gx), dy = V::sub(py, g.gy);
    const F dy2 = V::mul(dy, dy), dx2 = V::mul(dx, dx);
    if (k.use_far) {
        const M far = V::gt(V::add(dx2, dy2), V::mul(k.far_limit, V::add(V::load(l.far_spread + i), g.gfar)));
        todo = V::andnot(todo, far);
        if (V::bits(todo) == 0) return true;
    }
    const F A = V::add(V::load(l.a + i), g.ga), B = V::add(V::load(l.b + i), g.gb), C = V::add(V::load(l.c + i), g.gc);
    const F D = V::sub(V::mul(A, B), V::mul(C, C));
    const F De = V::add(D, k.eps);
    const F n1 = V::add(V::mul(A, dy2), V::mul(B, dx2)), n2 = V::mul(V::mul(C, V::sub(g.gx, px)), dy);
    if (k.use_hi) {
        // Above the band without dividing, from the same n1, n2, D as probiou_parts: then
        // t12 = n1 / De / 4 + n2 / De / 2 > band_hi as computed, since n1 + 2 n2 exceeds
        // 4 band_hi De by more than the rounding of those steps; and the computed x >= 1,
        // since D > 4 sqrt(det_p det_q) + eps with room to spare (squared: (D - 2 eps)^2 >
        // 16 det_p det_q (1 + 2^-14)), so 1 - 1/x >= 0 and the band test above says "below
        // the threshold" (and the test below it does not pass: x - 1 >= 0).
        const F e = V::sub(D, k.two_eps);
        const M x_at_least_1 = V::and_(V::and_(V::gt(e, k.zero), V::lt(D, k.big_d)),
                                       V::gt(V::mul(e, e), V::mul(V::load(l.det + i), g.gdet16)));
        const F n1a = V::abs(n1), n2a = V::abs(n2);
        const F lhs = V::sub(V::add(n1, V::add(n2, n2)), V::mul(k.margin, V::add(n1a, V::add(n2a, n2a))));
        const M far_t = V::and_(V::gt(lhs, V::mul(k.hi4, De)), V::and_(V::lt(n1a, k.big_n), V::lt(n2a, k.big_n)));
        todo = V::andnot(todo, V::and_(x_at_least_1, far_t));
        if (V::bits(todo) == 0) return true;
    }
    const F t1 = V::mul(V::div(n1, De), k.quarter);
    const F t2 = V::mul(V::div(n2, De), k.half);
    const F t12 = V::add(t1, t2);
    const F x = V::add(V::div(D, V::add(V::mul(k.four, V::sqrt(V::mul(V::load(l.det + i), g.gdet))), k.eps)), k.eps);
    if (k.banded) {
        const M in_range = V::and_(V::gt(x, k.zero), V::lt(x, k.huge));
        // log(x) <= x - 1: the distance is below the band, probiou above the threshold.
        if (k.use_lo &&
            V::bits(V::and_(todo, V::and_(in_range, V::lt(V::add(t12, V::mul(k.half, V::sub(x, k.one))), k.lo)))))
            return false;
        // log(x) >= 1 - 1/x: above the band, probiou below the threshold.
        if (k.use_hi)
            todo = V::andnot(todo, V::and_(in_range, V::gt(V::add(t12, V::mul(k.half, V::sub(k.one, V::div(k.one, x)))), k.hi)));
    }
    return true;
}

template <class V>
static size_t probiou_filter_impl(const ProbiouList& l, size_t n, const ProbiouProbe& g, const ProbiouBounds& bounds,
                                  uint32_t* undecided) {
    const ProbiouConsts<V> k(bounds);
    const ProbiouProbeV<V> gv(g);
    size_t count = 0;
    for (size_t i = 0; i < n; i += V::kWidth) {
        typename V::M todo = V::first(n - i);
        if (!probiou_block(k, gv, l, i, todo)) return kProbiouOver;
        for (uint32_t b = V::bits(todo); b != 0; b &= b - 1) undecided[count++] = uint32_t(i + size_t(__builtin_ctz(b)));
    }
    return count;
}

template <class V>
static void probiou_verdicts_impl(const ProbiouList& l, size_t n, const ProbiouBounds& bounds, uint8_t* verdict) {
    const ProbiouConsts<V> k(bounds);
    if (n > 0) verdict[0] = kProbiouClear;
    for (size_t p = 1; p < n; ++p) {
        const ProbiouProbeV<V> gv(ProbiouProbe{l.x[p], l.y[p], l.a[p], l.b[p], l.c[p], l.det[p], l.far_spread[p]});
        uint8_t v = kProbiouClear;
        for (size_t i = 0; i < p; i += V::kWidth) {
            typename V::M todo = V::first(p - i);
            if (!probiou_block(k, gv, l, i, todo)) {
                v = kProbiouSuppressed;
                break;
            }
            if (V::bits(todo) != 0) v = kProbiouUndecided;
        }
        verdict[p] = v;
    }
}

}  // namespace kernels
}  // namespace hailo_decode
