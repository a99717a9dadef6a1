// Table::nms_list's loop (kernels.hpp) around one path's vectors, included by each kernel
// translation unit and instantiated there with that unit's own vector operations: internal
// linkage, so no code built for one instruction set is shared with another (as cells_scan.hpp).
//
// Greedy NMS of one list with no call, tail copy or masked tail per box: the latest kept boxes
// (up to one vector's width W) stay in registers, one lane each; each W that fill them are stored
// as one block of five whole vectors (y0, x0, y1, x1, area), which later boxes load back whole (a
// load the same size and place as its store forwards from it; a vector load over a kept box's
// scalar stores would wait for them to reach the cache). A box runs the blocks' test (their
// number changes once every W kept: the loop's exit is predicted) and the registers' test, the
// lanes past the kept left out, then one branch.
//
// V provides: F (a vector of W floats), Mask (a set of lanes), kWidth; zero(), set1(x), load(p)
// and store(p, v) (p aligned to the vector: `kept` is 64-byte aligned and a block is 5 W
// floats); all() and first(n) (lanes [0, n), n < W); slot(n) (lane n) and put(r, v,
// slot) (r with lane `slot` replaced by v's); any_passes(live, l[5], b[5], t, inclusive): whether
// a lane of `live` has l's IoU with b passing th, with any_iou_over's operations, lane by lane.
#pragma once

#include <cstddef>
#include <cstdint>

namespace hailo_decode {
namespace kernels {

template <typename V>
static inline size_t nms_list_with(const float* y0, const float* x0, const float* y1, const float* x1,
                                   const float* area, size_t m, float th, bool inclusive, size_t max_keep,
                                   uint8_t* keep, float* kept) {
    using F = typename V::F;
    constexpr size_t W = V::kWidth;
    const F t = V::set1(th);
    F reg[5] = {V::zero(), V::zero(), V::zero(), V::zero(), V::zero()};  // the register block
    size_t n_kept = 0, blocks = 0, j = 0;
    for (; j < m && n_kept < max_keep; ++j) {
        const F b[5] = {V::set1(y0[j]), V::set1(x0[j]), V::set1(y1[j]), V::set1(x1[j]), V::set1(area[j])};
        bool suppressed = false;
        for (size_t k = 0; k < blocks && !suppressed; ++k) {
            const float* p = kept + 5 * W * k;
            const F l[5] = {V::load(p), V::load(p + W), V::load(p + 2 * W), V::load(p + 3 * W), V::load(p + 4 * W)};
            suppressed = V::any_passes(V::all(), l, b, t, inclusive);
        }
        const size_t in_registers = n_kept - W * blocks;
        if (!suppressed) suppressed = V::any_passes(V::first(in_registers), reg, b, t, inclusive);
        keep[j] = uint8_t(!suppressed);
        if (suppressed) continue;
        const typename V::Mask slot = V::slot(in_registers);
        for (int q = 0; q < 5; ++q) reg[q] = V::put(reg[q], b[q], slot);
        if (++n_kept - W * blocks == W) {
            float* p = kept + 5 * W * blocks++;
            for (int q = 0; q < 5; ++q) V::store(p + q * W, reg[q]);
        }
    }
    for (; j < m; ++j) keep[j] = 0;
    return n_kept;
}

}  // namespace kernels
}  // namespace hailo_decode
