// Class scores and the exact threshold in the tensor's own domain.
//
// The score of a class value is activation(dequantize(q)) in float32. Because that is a
// non-decreasing function of q, "score passes the threshold" is the same as "q >= the smallest q
// that passes", found once by bisection over the integer range (or over the ordered float32 values
// for float inputs). The scan then compares raw values only, and its result is exactly the float
// test HailoRT makes on the dequantized score, rounding included.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "tensor_view.hpp"

namespace hailo_decode {
namespace detail {

// HailoRT's sigmoid, float32: 1 / (1 + exp(-x)).
inline float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

inline bool score_passes(float score, float threshold, bool inclusive) {
    return inclusive ? score >= threshold : score > threshold;
}

struct ClassScorer {
    bool sigmoid = false;
    // Per channel, the smallest raw value that passes. Integers: q_min in [0, qmax + 1]
    // (qmax + 1: never). Floats: the smallest float32 that passes (NaN: never, as x >= NaN is false).
    std::vector<int32_t> q_min;
    std::vector<float> x_min;
    // uint8 only: the score of every q, one table of 256 per channel (lut_stride 256) or one for
    // all channels when they share their quantization (lut_stride 0)
    std::vector<float> lut;
    size_t lut_stride = 0;
    // uint8 with one table: its scores never decrease with q (and none is NaN), so a cell's largest
    // byte is its best score (the end-to-end top-k's byte path relies on it).
    bool lut_ascending = false;

    float activate(float x) const { return sigmoid ? detail::sigmoid(x) : x; }
};

// The smallest raw value of channel c that passes, in the tensor's own domain (q_min for integer
// dtypes, x_min for float32), and the gate's test against it: the gates of the anchor-based heads
// and of the end-to-end top-k compare raw values before any score is computed.
template <typename T>
inline auto raw_limit(const ClassScorer& gate, int c) {
    if constexpr (std::is_same<T, float>::value) return gate.x_min[size_t(c)];
    else return gate.q_min[size_t(c)];
}
template <typename T>
inline bool raw_passes(const ClassScorer& gate, T raw, int c) {
    if constexpr (std::is_same<T, float>::value) return raw >= raw_limit<T>(gate, c);
    else return int32_t(raw) >= raw_limit<T>(gate, c);
}

// HailoRT 5.x's quantized threshold (Settings::hailort_v5), the pre-filter its ops apply before
// the float test: Quantization::quantize_input (v5.2.0 include/hailo/quantization.hpp lines
// 270-274), rintf(clip(x, limvals) / scale + zp) cast to the type. The limvals are taken to be the
// representable range [dequantize(0), dequantize(qmax)] (hailo_decode has no others), so the clip
// only saturates; a NaN (0 / 0 in YOLOX's th / objectness) casts to 0 as x86's conversion makes it.
inline int32_t hailort_quantize(float x, float zp, float scale, int32_t qmax) {
    const float lo = dequantize(0.0f, zp, scale), hi = dequantize(float(qmax), zp, scale);
    if (x >= hi) x = hi;
    else if (x <= lo) x = lo;
    const float q = std::rint(x / scale + zp);
    if (!(q >= 0.0f)) return 0;
    return q >= float(qmax) ? qmax : int32_t(q);
}
// HailoRT 5.x's logit, the pre-filter's threshold when its op applies a sigmoid (v5.2.0
// nms_post_process.hpp lines 155-170: clipped to [1e-7, 1 - 1e-7]).
inline float hailort_logit(float p) {
    const float lo = 1e-7f, hi = 1.0f - 1e-7f;
    p = p >= hi ? hi : p <= lo ? lo : p;
    return std::log(p / (1.0f - p));
}
// The smallest raw value of a channel that HailoRT 5.x's pre-filter lets through for threshold th
// (quantized as is, or as its logit when sigmoid), in [0, qmax].
inline int32_t hailort_prefilter_limit(float th, bool sigmoid, float zp, float scale, int32_t qmax) {
    return hailort_quantize(sigmoid ? hailort_logit(th) : th, zp, scale, qmax);
}
// Raises the scorer's integer limits (q_min) to HailoRT 5.x's pre-filter of each channel's
// threshold, so that the scans and gates built on them apply it at no cost (float32 tensors: no
// pre-filter, HailoRT's ops take integers only).
void apply_hailort_prefilter(ClassScorer& scorer, const TensorView& v, const std::vector<float>& thresholds);

// thresholds: 1 value or one per channel. Throws std::invalid_argument on a NaN threshold.
ClassScorer make_class_scorer(const TensorView& cls, const std::vector<float>& thresholds, bool inclusive,
                              bool apply_sigmoid);

// Score of channel c at element index `index` of a frame.
template <typename T>
inline float class_score(const ClassScorer& s, const TensorView& v, const T* frame, size_t index, int c);

template <>
inline float class_score<uint8_t>(const ClassScorer& s, const TensorView&, const uint8_t* frame, size_t index,
                                  int c) {
    return s.lut[size_t(c) * s.lut_stride + frame[index]];
}
template <>
inline float class_score<uint16_t>(const ClassScorer& s, const TensorView& v, const uint16_t* frame, size_t index,
                                   int c) {
    return s.activate(dequantize(float(frame[index]), v.zp[size_t(c)], v.scale[size_t(c)]));
}
template <>
inline float class_score<float>(const ClassScorer& s, const TensorView&, const float* frame, size_t index, int) {
    return s.activate(frame[index]);
}

}  // namespace detail
}  // namespace hailo_decode
