// For each 8-bit mask, the positions of its set bits in increasing order (the rest 0): the byte
// shuffle that packs the passing lanes of 8 to the front (cell_max_gate_u8's vector paths with a
// byte shuffle), and, widened, those lanes' cell numbers. 2 kB, made at compile time.
#pragma once

#include <cstdint>

namespace hailo_decode {
namespace kernels {

struct GateOrder {
    alignas(8) uint8_t lanes[256][8];
};

constexpr GateOrder make_gate_order() {
    GateOrder t{};
    for (int mask = 0; mask < 256; ++mask) {
        int k = 0;
        for (int j = 0; j < 8; ++j)
            if ((mask >> j) & 1) t.lanes[mask][k++] = uint8_t(j);
    }
    return t;
}

inline constexpr GateOrder kGateOrder = make_gate_order();

}  // namespace kernels
}  // namespace hailo_decode
