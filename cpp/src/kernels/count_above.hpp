// The scalar count_above (kernels.hpp), the reference every SIMD one matches; scalar.cpp and
// neon.cpp build their kernel from it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace hailo_decode {
namespace kernels {

inline void count_above_scalar(const float* s, size_t n, uint32_t* above) {
    const size_t m = (n + 7) & ~size_t(7);
    for (size_t i = 0; i < m; ++i) {
        uint32_t a = 0;
        for (size_t j = 0; j < n; ++j) a += uint32_t(s[j] > s[i]);
        above[i] = a;
    }
}

}  // namespace kernels
}  // namespace hailo_decode
