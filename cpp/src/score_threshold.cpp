#include "score_threshold.hpp"

#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

namespace hailo_decode {
namespace detail {
namespace {

// float32 <-> unsigned key whose integer order is the float order (NaN excluded).
uint32_t float_key(float x) {
    uint32_t u;
    std::memcpy(&u, &x, sizeof u);
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}
float key_float(uint32_t k) {
    uint32_t u = (k & 0x80000000u) ? (k & 0x7fffffffu) : ~k;
    float x;
    std::memcpy(&x, &u, sizeof x);
    return x;
}

// Smallest n in [lo, hi] with pass(n), or hi + 1 when none; pass must be non-decreasing.
template <typename Pass>
int64_t first_passing(int64_t lo, int64_t hi, Pass pass) {
    int64_t end = hi + 1;
    while (lo < end) {
        int64_t mid = lo + (end - lo) / 2;
        if (pass(mid)) end = mid; else lo = mid + 1;
    }
    return lo;
}

}  // namespace

ClassScorer make_class_scorer(const TensorView& v, const std::vector<float>& thresholds, bool inclusive,
                              bool apply_sigmoid) {
    const std::string& name = v.spec->name;
    if (thresholds.size() != 1 && thresholds.size() != size_t(v.channels))
        throw std::invalid_argument("output '" + name + "': score thresholds must be 1 value or one per class (" +
                                    std::to_string(v.channels) + "), got " + std::to_string(thresholds.size()));
    ClassScorer s;
    s.sigmoid = apply_sigmoid;
    const size_t C = size_t(v.channels);
    for (size_t c = 0; c < C; ++c) {
        float th = thresholds.size() == 1 ? thresholds[0] : thresholds[c];
        if (std::isnan(th))
            throw std::invalid_argument("output '" + name + "': score threshold of class " + std::to_string(c) +
                                        " is NaN");
        if (v.dtype == DType::F32) {
            const int64_t lo = float_key(-std::numeric_limits<float>::infinity());
            const int64_t hi = float_key(std::numeric_limits<float>::infinity());
            int64_t k = first_passing(lo, hi, [&](int64_t key) {
                return score_passes(s.activate(key_float(uint32_t(key))), th, inclusive);
            });
            s.x_min.push_back(k > hi ? std::numeric_limits<float>::quiet_NaN() : key_float(uint32_t(k)));
        } else {
            const int64_t qmax = v.dtype == DType::U8 ? 255 : 65535;
            const float zp = v.zp[c], scale = v.scale[c];
            int64_t q = first_passing(0, qmax, [&](int64_t n) {
                return score_passes(s.activate(dequantize(float(n), zp, scale)), th, inclusive);
            });
            s.q_min.push_back(int32_t(q));
        }
    }
    if (v.dtype == DType::U8) {
        // One table per quantization: 1 KB for the usual per-tensor case, which stays in L1.
        const size_t tables = v.per_tensor_quant ? 1 : C;
        s.lut_stride = v.per_tensor_quant ? 0 : 256;
        s.lut.resize(tables * 256);
        for (size_t c = 0; c < tables; ++c)
            for (int q = 0; q < 256; ++q) s.lut[c * 256 + size_t(q)] = s.activate(dequantize(float(q), v.zp[c], v.scale[c]));
        s.lut_ascending = tables == 1;
        for (size_t q = 0; q < 255 && s.lut_ascending; ++q) s.lut_ascending = s.lut[q] <= s.lut[q + 1];
    }
    return s;
}

void apply_hailort_prefilter(ClassScorer& scorer, const TensorView& v, const std::vector<float>& thresholds) {
    if (v.dtype == DType::F32) return;
    const int32_t qmax = v.dtype == DType::U8 ? 255 : 65535;
    for (size_t c = 0; c < scorer.q_min.size(); ++c) {
        const float th = thresholds.size() == 1 ? thresholds[0] : thresholds[c];
        const int32_t limit = hailort_prefilter_limit(th, scorer.sigmoid, v.zp[c], v.scale[c], qmax);
        if (limit > scorer.q_min[c]) scorer.q_min[c] = limit;
    }
}

}  // namespace detail
}  // namespace hailo_decode
