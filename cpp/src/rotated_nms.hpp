// Rotated NMS for oriented boxes: probiou (the Hellinger distance of the boxes' Gaussians) and
// Fast-NMS, as Ultralytics' non_max_suppression(rotated=True) does (utils/nms.py
// TorchNMS.fast_nms with utils/metrics.py batch_probiou):
//  - candidates sorted by score, best first (ties in scan order here; torch's argsort leaves them
//    unspecified);
//  - a candidate is dropped when ANY higher-scoring candidate of its class (any class when
//    agnostic) overlaps it past the threshold, even one that was itself dropped;
//  - class-aware: the centres are offset by class x class_offset first (Ultralytics' max_wh,
//    7680) in float32, so probiou sees the same rounded centres; pairs of different classes are
//    not compared (with the offset their probiou is 0 unless boxes span thousands of pixels);
//  - the caps (max_per_class, then max_total) apply to the survivors, in score order.
#pragma once

#include <cstdint>
#include <vector>

#include "hailo_decode/types.hpp"
#include "kernels/kernels.hpp"
#include "nms.hpp"
#include "rotated_box.hpp"
#include "scratch_vector.hpp"

namespace hailo_decode {
namespace detail {

// A box as probiou needs it: centre and the covariance [[a, c], [c, b]] of its Gaussian
// (a = w^2/12 cos^2 + h^2/12 sin^2, b = w^2/12 sin^2 + h^2/12 cos^2, c = (w^2/12 - h^2/12) cos sin)
// and det = max(a b - c^2, 0).
struct Gaussian {
    float x, y, a, b, c, det;
    float spread;  // a + b: the trace of the covariance
    bool regular;  // finite, not tiny (det >= 1e-7) and not too thin (det >= 1e-5 spread^2): see far_apart
};
Gaussian make_gaussian(float cx, float cy, float w, float h, Turn t);
inline Gaussian make_gaussian(float cx, float cy, float w, float h, float angle) {
    return make_gaussian(cx, cy, w, h, turn_of(angle));
}

// A test that probiou(p, q) is certainly below `threshold`, without its log and exp: for two
// regular boxes, probiou's distance term alone (a quarter of the squared Mahalanobis distance of
// the centres) is at least d^2 / (4 (spread_p + spread_q)), and its log term is >= 0 up to rounding
// (>= -0.55 computed, for regular boxes). far_limit (from far_limit_for) carries a margin of a whole
// unit of that distance plus 10 %, far above float32 rounding, so a pair it skips is one whose
// probiou, computed in full, would not pass either. Used only as a skip: the result is the same.
float far_limit_for(float iou_threshold);  // <= 0: no pair may be skipped
inline bool far_apart(const Gaussian& p, const Gaussian& q, float far_limit) {
    const float dx = p.x - q.x, dy = p.y - q.y;
    return p.regular && q.regular && dx * dx + dy * dy > far_limit * (p.spread + q.spread);
}

// Ultralytics' batch_probiou for one pair, float32, eps 1e-7. Symmetric bit for bit.
// probiou = probiou_of_distance(probiou_distance): bd, the clamped Bhattacharyya distance, then
// 1 - sqrt(1 - exp(-bd) + eps), which falls as bd grows.
float probiou(const Gaussian& p, const Gaussian& q);
float probiou_distance(const Gaussian& p, const Gaussian& q);
float probiou_of_distance(float bd);
// bd = clamp(t12 + log(x) / 2): the distance term and the argument of the log term.
struct ProbiouParts {
    float t12, x;
};
ProbiouParts probiou_parts(const Gaussian& p, const Gaussian& q);
float probiou_distance(const ProbiouParts& parts);

// "probiou(p, q) passes the threshold" as rotated NMS asks it, with the same answer as computing
// probiou in full and comparing, but cheaper: pairs far apart (far_apart) are ruled out without
// log or exp, and for the others the distance bd decides alone unless it lies within 1 % of the
// distance at which probiou equals the threshold (outside that band probiou is far from it: its
// rounding cannot cross), where the full probiou is compared; bounds of the log term settle most
// pairs before the log is taken.
struct OverlapTest {
    float threshold = 0.0f;
    bool inclusive = false;
    float far_limit = 0.0f;
    bool banded = false;
    float band_lo = 0.0f, band_hi = 0.0f;
    bool over(const Gaussian& p, const Gaussian& q) const {
        if (far_limit > 0.0f && far_apart(p, q, far_limit)) return false;
        const ProbiouParts parts = probiou_parts(p, q);
        if (banded && parts.x > 0.0f && parts.x < 1e30f) {
            // Without the log: 1 - 1/x <= log(x) <= x - 1 bounds the distance either side.
            if (parts.t12 + 0.5f * (parts.x - 1.0f) < band_lo && band_lo > 1e-7f) return true;
            if (parts.t12 + 0.5f * (1.0f - 1.0f / parts.x) > band_hi && band_hi < 100.0f) return false;
        }
        const float bd = probiou_distance(parts);
        if (banded) {
            if (bd < band_lo) return true;   // nearer than the band: probiou well above the threshold
            if (bd > band_hi) return false;  // (NaN falls through to the full test, which fails)
        }
        const float iou = probiou_of_distance(bd);
        return inclusive ? iou >= threshold : iou > threshold;
    }
};
OverlapTest make_overlap_test(float iou_threshold, bool inclusive);

// The bounds of a test as the pair-filter kernel takes them.
kernels::ProbiouBounds bounds_of(const OverlapTest& t);
// A Gaussian as the kernels store it (far_spread: the trace when regular, +inf otherwise), and back.
kernels::ProbiouProbe probe_of(const Gaussian& g);
Gaussian gaussian_of(const kernels::ProbiouProbe& p);

struct RotatedNmsWorkspace {
    // Every candidate of each list, in score order, as structure of arrays for
    // kernels::probiou_filter (with a vector's room past the end: the kernel reads whole vectors).
    ScratchVector<float> x, y, a, b, c, det, far_spread;
    ScratchVector<float> w, h, cos, sin;  // kernels::probiou_gaussians's input, in the same slots
    ScratchVector<float> cx, cy;          // the centres without class offset (kernels::enclosing_boxes)
    ScratchVector<float> x0, y0, x1, y1;  // every slot's enclosing box (output scale, x0 y0 x1 y1)
    ScratchVector<uint32_t> slot;         // per candidate in score order: its slot
    ScratchVector<uint32_t> undecided;   // the pairs the filter leaves to the exact test
    ScratchVector<uint8_t> verdict;      // per slot: kernels::probiou_verdicts
    std::vector<uint32_t> start, count;  // per list (class, or one when agnostic)
    std::vector<int64_t> output_of_class;
};

// The axis-aligned box enclosing a rotated box, in output form (the settings' order and
// normalization): what a detection row's box is for an OBB head, after rotated NMS or the top-k.
void enclosing_output_box(const RotatedBox& r, Turn t, const Settings& s, float v[4]);
// Its last step: x0 y0 x1 y1 (normalized when the settings say so) in the settings' order.
void order_output_box(const float e[4], const Settings& s, float v[4]);

// Fast-NMS over sorted candidates (rboxes[c.box] are their rotated boxes, turns[c.box] the cos and
// sin of their angles); appends the survivors that pass the caps to `out` (box: the enclosing
// axis-aligned box in output form, computed here vector-wide for every candidate; head and cell from
// boxes_out[c.box]) and their rotated boxes to `out_rboxes`.
void suppress_rotated(const ScratchVector<Candidate>& sorted, const ScratchVector<RotatedBox>& rboxes,
                      const ScratchVector<Turn>& turns, const ScratchVector<Box>& boxes_out, const Settings& s, int num_classes,
                      RotatedNmsWorkspace& ws, std::vector<Detection>& out, ScratchVector<RotatedBox>& out_rboxes);

}  // namespace detail
}  // namespace hailo_decode
