// The loop over a head's cells around one path's dfl16_u8, included by each kernel translation
// unit and instantiated there with that unit's own kernel: internal linkage, so no code built for
// one instruction set is shared with another.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels.hpp"

// On each path's wrapper: its per-cell kernel is inlined into the loop, so that the exp table
// and constants are loaded once a head rather than once a cell (GCC calls the kernel otherwise).
#if defined(__GNUC__)
#define HD_INLINE_CALLS __attribute__((flatten))
#else
#define HD_INLINE_CALLS
#endif

namespace hailo_decode {
namespace kernels {

template <void (*Dfl16U8)(const uint8_t*, const ExpTable&, float*)>
static inline void dfl16_u8_cells_with(const uint8_t* base, const size_t* offsets, size_t n, const ExpTable& table,
                                       float* out) {
    // The cells are scattered over a tensor the class scan has pushed out of the nearer caches:
    // each is asked for a few cells ahead so that its loads overlap the work on the ones before
    // (both lines it may span: arrays need not start on a line).
    constexpr size_t kAhead = 4;
    auto prefetch = [&](size_t i) {
        __builtin_prefetch(base + offsets[i]);
        __builtin_prefetch(base + offsets[i] + 63);
    };
    for (size_t i = 0; i < n && i < kAhead; ++i) prefetch(i);
    for (size_t i = 0; i < n; ++i) {
        if (i + kAhead < n) prefetch(i + kAhead);
        Dfl16U8(base + offsets[i], table, out + 4 * i);
    }
}

}  // namespace kernels
}  // namespace hailo_decode
