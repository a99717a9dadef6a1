// Rotated NMS's Gaussians (Table::probiou_gaussians), written once over a lane type V that each
// kernel translation unit defines for its instruction set (scalar: one lane), as
// probiou_filter.hpp is: included by each of them, every instantiation with internal linkage.
//
// V provides, beyond probiou_filter.hpp's: store(p, v); le, ge (ordered: false with NaN);
// select(m, a, b) (a in the lanes of m, b elsewhere).
#pragma once

#include <cstddef>

#include "kernels.hpp"

namespace hailo_decode {
namespace kernels {

// rotated_nms.hpp make_gaussian then probe_of, a vector of boxes at a time, with their operations
// in their order (each an IEEE operation, correctly rounded: every path gives the scalar bits).
template <class V>
static void probiou_gaussians_impl(const ProbiouBoxes& in, size_t n, const ProbiouGaussians& out) {
    using F = typename V::F;
    using M = typename V::M;
    const F twelve = V::set1(12.0f), zero = V::set1(0.0f), inf = V::set1(__builtin_inff());
    const F tiny = V::set1(1e-7f), thin = V::set1(1e-5f);
    auto finite = [&inf](F v) { return V::lt(V::abs(v), inf); };  // false for +-inf and NaN
    for (size_t i = 0; i < n; i += V::kWidth) {
        const F w = V::load(in.w + i), h = V::load(in.h + i), cs = V::load(in.cos + i), sn = V::load(in.sin + i);
        // _get_covariance_matrix: (w^2 / 12, h^2 / 12) rotated by the angle.
        const F ga = V::div(V::mul(w, w), twelve), gb = V::div(V::mul(h, h), twelve);
        const F cos2 = V::mul(cs, cs), sin2 = V::mul(sn, sn);
        const F a = V::add(V::mul(ga, cos2), V::mul(gb, sin2));
        const F b = V::add(V::mul(ga, sin2), V::mul(gb, cos2));
        const F c = V::mul(V::mul(V::sub(ga, gb), cs), sn);
        const F raw_det = V::sub(V::mul(a, b), V::mul(c, c));
        const F det = V::select(V::le(raw_det, zero), zero, raw_det);  // clamp_(0); NaN kept
        const F spread = V::add(a, b);
        // Regular: finite, not tiny, not too thin (make_gaussian); far_spread = +inf otherwise.
        const M regular = V::and_(
            V::and_(V::and_(finite(V::load(in.x + i)), finite(V::load(in.y + i))),
                    V::and_(finite(spread), V::and_(finite(c), finite(det)))),
            V::and_(V::ge(det, tiny), V::ge(det, V::mul(V::mul(thin, spread), spread))));
        V::store(out.a + i, a);
        V::store(out.b + i, b);
        V::store(out.c + i, c);
        V::store(out.det + i, det);
        V::store(out.far_spread + i, V::select(regular, spread, inf));
    }
}

}  // namespace kernels
}  // namespace hailo_decode
