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
