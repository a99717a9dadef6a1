#include "rotated_nms.hpp"

#include <cmath>
#include <cstring>
#include <limits>

namespace hailo_decode {
namespace detail {

Gaussian make_gaussian(float cx, float cy, float w, float h, Turn t) {
    // _get_covariance_matrix: (w^2 / 12, h^2 / 12) rotated by the angle.
    const float ga = w * w / 12.0f, gb = h * h / 12.0f;
    const float cs = t.cos, sn = t.sin;
    const float cos2 = cs * cs, sin2 = sn * sn;
    Gaussian g;
    g.x = cx;
    g.y = cy;
    g.a = ga * cos2 + gb * sin2;
    g.b = ga * sin2 + gb * cos2;
    g.c = (ga - gb) * cs * sn;
    const float det = g.a * g.b - g.c * g.c;
    g.det = det > 0.0f ? det : 0.0f;  // clamp_(0), NaN kept as torch keeps it
    if (std::isnan(det)) g.det = det;
    g.spread = g.a + g.b;
    g.regular = std::isfinite(g.x) && std::isfinite(g.y) && std::isfinite(g.spread) && std::isfinite(g.c) &&
                std::isfinite(g.det) && g.det >= 1e-7f && g.det >= 1e-5f * g.spread * g.spread;
    return g;
}

float far_limit_for(float iou_threshold) {
    // iou = 1 - sqrt(1 - exp(-bd) + eps) > th  needs  bd < -log(1 + eps - (1 - th)^2).
    const double th = iou_threshold, eps = 1e-7;
    if (!(th > 1e-6) || th >= 1.0) return 0.0f;  // no pair can be ruled out (th >= 1: none passes anyway)
    const double arg = 1.0 + eps - (1.0 - th) * (1.0 - th);
    if (!(arg > 0.0)) return 0.0f;
    const double bd_limit = -std::log(arg);
    // d^2 > 4 (spread_p + spread_q) * 1.1 * (bd_limit + 1)  =>  computed bd > bd_limit + 0.5
    return float(4.0 * 1.1 * (bd_limit + 1.0));
}

ProbiouParts probiou_parts(const Gaussian& p, const Gaussian& q) {
    constexpr float eps = 1e-7f;
    const float A = p.a + q.a, B = p.b + q.b, C = p.c + q.c;
    const float dy = p.y - q.y, dx = p.x - q.x;
    const float D = A * B - C * C;
    const float t1 = ((A * (dy * dy) + B * (dx * dx)) / (D + eps)) * 0.25f;
    const float t2 = ((C * (q.x - p.x) * dy) / (D + eps)) * 0.5f;
    return {t1 + t2, D / (4.0f * std::sqrt(p.det * q.det) + eps) + eps};
}

float probiou_distance(const ProbiouParts& parts) {
    float bd = parts.t12 + std::log(parts.x) * 0.5f;
    // clamp(eps, 100): NaN stays NaN (and then fails every threshold test)
    if (bd < 1e-7f) bd = 1e-7f;
    if (bd > 100.0f) bd = 100.0f;
    return bd;
}

float probiou_distance(const Gaussian& p, const Gaussian& q) { return probiou_distance(probiou_parts(p, q)); }

float probiou_of_distance(float bd) { return 1.0f - std::sqrt(1.0f - std::exp(-bd) + 1e-7f); }

float probiou(const Gaussian& p, const Gaussian& q) { return probiou_of_distance(probiou_distance(p, q)); }

OverlapTest make_overlap_test(float iou_threshold, bool inclusive) {
    OverlapTest t;
    t.threshold = iou_threshold;
    t.inclusive = inclusive;
    t.far_limit = far_limit_for(iou_threshold);
    const double th = iou_threshold, arg = 1.0 + 1e-7 - (1.0 - th) * (1.0 - th);
    if (th >= 1e-3 && th < 1.0 && arg > 0.0) {
        // iou == th at this distance in exact arithmetic. 1 % either side moves probiou by more than
        // 6e-5 (at th >= 1e-3), several hundred times its float32 rounding.
        const double limit = -std::log(arg);
        t.band_lo = float(limit * (1.0 - 1e-2) - 1e-6);
        t.band_hi = float(limit * (1.0 + 1e-2) + 1e-6);
        t.banded = std::isfinite(t.band_lo) && std::isfinite(t.band_hi);
    }
    return t;
}

kernels::ProbiouBounds bounds_of(const OverlapTest& t) { return {t.far_limit, t.banded, t.band_lo, t.band_hi}; }

kernels::ProbiouProbe probe_of(const Gaussian& g) {
    return {g.x, g.y, g.a, g.b, g.c, g.det, g.regular ? g.spread : std::numeric_limits<float>::infinity()};
}

Gaussian gaussian_of(const kernels::ProbiouProbe& p) {
    // A regular box's trace is finite: +inf marks the others (whose trace no test reads).
    const bool regular = !std::isinf(p.far_spread);
    return {p.x, p.y, p.a, p.b, p.c, p.det, p.far_spread, regular};
}

// The axis-aligned box enclosing a rotated box, in output form (order, normalization).
void enclosing_output_box(const RotatedBox& r, Turn t, const Settings& s, float v[4]) {
    float e[4];
    enclosing_box(r, t, e);
    if (s.normalized) {
        const float w = float(s.image_width), h = float(s.image_height);
        e[0] = e[0] / w; e[1] = e[1] / h; e[2] = e[2] / w; e[3] = e[3] / h;
    }
    order_output_box(e, s, v);
}

void order_output_box(const float e[4], const Settings& s, float v[4]) {
    if (s.yxyx) {
        v[0] = e[1]; v[1] = e[0]; v[2] = e[3]; v[3] = e[2];
    } else {
        v[0] = e[0]; v[1] = e[1]; v[2] = e[2]; v[3] = e[3];
    }
}

void suppress_rotated(const ScratchVector<Candidate>& sorted, const ScratchVector<RotatedBox>& rboxes,
                      const ScratchVector<Turn>& turns, const ScratchVector<Box>& boxes_out, const Settings& s, int num_classes,
                      RotatedNmsWorkspace& ws, std::vector<Detection>& out, ScratchVector<RotatedBox>& out_rboxes) {
    size_t n = sorted.size();
    if (s.max_candidates >= 0 && size_t(s.max_candidates) < n) n = size_t(s.max_candidates);
    const size_t lists = s.agnostic ? 1 : size_t(num_classes);
    carve_lists(sorted, n, lists, s.agnostic, ws.start, ws.count);
    // Zeros in the growth, so the vector reads past a list's end see initialized floats.
    for (auto* v : {&ws.x, &ws.y, &ws.a, &ws.b, &ws.c, &ws.det, &ws.far_spread, &ws.w, &ws.h, &ws.cos, &ws.sin, &ws.cx,
                    &ws.cy, &ws.x0, &ws.y0, &ws.x1, &ws.y1})
        if (v->size() < n + 8) v->resize(n + 8, 0.0f);
    if (ws.undecided.size() < n) ws.undecided.resize(n);
    if (ws.verdict.size() < n) ws.verdict.resize(n);
    if (ws.slot.size() < n) ws.slot.resize(n);
    const kernels::Table& k = kernels::active();
    ws.output_of_class.assign(size_t(num_classes), 0);
    const bool capped_class = s.max_per_class >= 0, capped_total = s.max_total >= 0;
    const OverlapTest test = make_overlap_test(s.iou_threshold, s.iou_inclusive);
    const kernels::ProbiouBounds bounds = bounds_of(test);
    // Every candidate's box in its list's slot (score order within the list), then every
    // Gaussian in one kernel call over all slots (make_gaussian's operations, vector-wide).
    for (size_t i = 0; i < n; ++i) {
        const Candidate& cand = sorted[i];
        const RotatedBox& r = rboxes[cand.box];
        const Turn t = turns[cand.box];
        // Class-aware: the class offset of Ultralytics' NMS, on the centres, in float32.
        const float off = s.agnostic ? 0.0f : float(cand.class_id) * s.class_offset;
        const size_t list = s.agnostic ? 0 : size_t(cand.class_id);
        const uint32_t slot = ws.start[list] + ws.count[list]++;
        ws.slot[i] = slot;
        ws.cx[slot] = r.cx;
        ws.cy[slot] = r.cy;
        ws.x[slot] = r.cx + off;
        ws.y[slot] = r.cy + off;
        ws.w[slot] = r.w;
        ws.h[slot] = r.h;
        ws.cos[slot] = t.cos;
        ws.sin[slot] = t.sin;
    }
    k.probiou_gaussians({ws.x.data(), ws.y.data(), ws.w.data(), ws.h.data(), ws.cos.data(), ws.sin.data()}, n,
                        {ws.a.data(), ws.b.data(), ws.c.data(), ws.det.data(), ws.far_spread.data()});
    // Every candidate's verdict against the earlier ones of its list, a list per call.
    // Fast-NMS's pairs do not depend on one another's outcome, so the kernel settles a whole list
    // in one call (its constants broadcast once, not once a candidate); the loop below runs the
    // exact test only for the few candidates it leaves undecided.
    // A list's candidates from slot `first` on, as the kernels read them.
    auto list_at = [&ws](size_t first) {
        return kernels::ProbiouList{ws.x.data() + first, ws.y.data() + first, ws.a.data() + first, ws.b.data() + first,
                                    ws.c.data() + first, ws.det.data() + first, ws.far_spread.data() + first};
    };
    for (size_t l = 0; l < lists; ++l)
        k.probiou_verdicts(list_at(ws.start[l]), ws.count[l], bounds, ws.verdict.data() + ws.start[l]);
    // The few candidates left undecided (pairs only the exact test, with its log and exp, settles)
    // are settled in place: a byte scan, then probiou_filter and the exact test for each.
    const uint8_t* const verdicts = ws.verdict.data();
    auto next_undecided = [verdicts, n](size_t from) {  // memchr: a vector-wide byte search
        const void* at = from < n ? std::memchr(verdicts + from, kernels::kProbiouUndecided, n - from) : nullptr;
        return at ? size_t(static_cast<const uint8_t*>(at) - verdicts) : n;
    };
    size_t list = 0;
    for (size_t slot = next_undecided(0); slot < n; slot = next_undecided(slot + 1)) {
        while (slot >= ws.start[list] + ws.count[list]) ++list;  // slots rise, lists with them
        const size_t first = ws.start[list], q = slot - first;  // q >= 1: a list's first slot is clear
        const kernels::ProbiouList earlier = list_at(first);
        const kernels::ProbiouProbe probe{earlier.x[q], earlier.y[q], earlier.a[q], earlier.b[q],
                                          earlier.c[q], earlier.det[q], earlier.far_spread[q]};
        const size_t left = k.probiou_filter(earlier, q, probe, bounds, ws.undecided.data());
        bool suppressed = left == kernels::kProbiouOver;
        for (size_t u = 0; u < left && !suppressed; ++u) {
            const size_t j = ws.undecided[u];
            suppressed = test.over(gaussian_of({earlier.x[j], earlier.y[j], earlier.a[j], earlier.b[j], earlier.c[j],
                                                earlier.det[j], earlier.far_spread[j]}),
                                   gaussian_of(probe));
        }
        ws.verdict[slot] = suppressed ? kernels::kProbiouSuppressed : kernels::kProbiouClear;
    }
    // The survivors in score order, without a branch on each verdict (kept or not is as good as
    // random: a branch on it was mispredicted about every other candidate). Fast-NMS: every
    // candidate suppressed later ones, dropped or not, in its verdict already.
    uint32_t* kept = ws.undecided.data();  // free again: room for n
    size_t n_kept = 0;
    for (size_t i = 0; i < n; ++i) {
        kept[n_kept] = uint32_t(i);
        n_kept += ws.verdict[ws.slot[i]] != kernels::kProbiouSuppressed;
    }
    // Every slot's enclosing box in output scale, vector-wide (for all of them: cheaper than one
    // at a time for the survivors); the survivors' rows take theirs in the settings' order.
    k.enclosing_boxes({ws.cx.data(), ws.cy.data(), ws.w.data(), ws.h.data(), ws.cos.data(), ws.sin.data()}, n,
                      float(s.image_width), float(s.image_height), s.normalized,
                      {ws.x0.data(), ws.y0.data(), ws.x1.data(), ws.y1.data()});
    int64_t total = 0;
    for (size_t u = 0; u < n_kept; ++u) {
        if (capped_total && total >= s.max_total) break;  // nothing later can be output
        const Candidate& cand = sorted[kept[u]];
        const size_t cls = size_t(cand.class_id);
        if (capped_class && ws.output_of_class[cls] >= s.max_per_class) continue;
        ++ws.output_of_class[cls];
        ++total;
        Detection& det = out.emplace_back();
        const Box& b = boxes_out[cand.box];
        const uint32_t slot = ws.slot[kept[u]];
        const float e[4] = {ws.x0[slot], ws.y0[slot], ws.x1[slot], ws.y1[slot]};
        order_output_box(e, s, det.box);
        det.score = cand.score;
        det.class_id = cand.class_id;
        det.head = b.head;
        det.cell = b.cell;
        out_rboxes.push_back(rboxes[cand.box]);
    }
}

}  // namespace detail
}  // namespace hailo_decode
