// Mask logits of one detection over its prototype window, read in place from the prototype
// tensor's view (any order, padding, dtype, quantization).
//
// Paths, chosen once per tensor pair (each gives the same value on every SIMD path):
// - exact integer: uint8 prototypes and uint8 coefficients, each with one integer zero point and
//   scale (what a HEF hands out): logit = (s_p s_c) * sum (qc - zc)(qp - zp), the sum exact in int32.
// - uint8 prototypes (one integer or float zero point and scale), float coefficients c:
//   logit = tree-sum (c s_p)(qp - zp).
// - float32 prototypes: logit = tree-sum c x.
// - anything else (uint16, per-channel quantization, channels not contiguous, C != 32): each value
//   dequantized as (q - zp[k]) scale[k] first, then the tree (C == 32) or a plain sum in k order.
#pragma once

#include <cstdint>
#include <vector>

#include "hailo_decode/masks.hpp"
#include "tensor_view.hpp"

namespace hailo_decode {
namespace detail {

struct ProtoPlan {
    enum class Kind : uint8_t { F32, U8, Generic };
    const TensorView* view = nullptr;
    Kind kind = Kind::Generic;
    bool integer_zp = false;  // U8 with an integer zero point in [0, 255]
    int32_t zp_int = 0;
    float zp = 0.0f, scale = 1.0f;
};

// Throws std::invalid_argument (naming the output) when scales are not positive and finite.
ProtoPlan make_proto_plan(const TensorView& proto);

// How a coefficient tensor takes the exact integer path: uint8, one integer zero point and scale.
struct CoefPlan {
    const TensorView* view = nullptr;
    bool integer = false;
    int32_t zp = 0;
    float scale = 1.0f;
};
CoefPlan make_coef_plan(const TensorView& coef);

// One detection's coefficients in the form its path multiplies.
struct MaskCoefficients {
    bool integer = false;
    float int_scale = 1.0f;   // s_p * s_c (integer path)
    int16_t q[32] = {};       // qc - zc (integer path)
    std::vector<float> f;     // float paths: C values (c s_p on the uint8 path)
};

// Whether a detection's coefficients take the exact integer path (uint8 prototypes with an
// integer zero point, coefficients as CoefPlan::integer says).
bool integer_path(const ProtoPlan& proto, const CoefPlan& coef);

// From the coefficients dequantized to float32 (the gather room's output for the cell; not read,
// and need not be gathered, on the integer path) and, for the integer path, the raw cell (row,
// col) of the coefficient tensor's frame.
void prepare_coefficients(const ProtoPlan& proto, const CoefPlan& coef, const float* dequantized,
                          const void* coef_frame, int row, int col, MaskCoefficients& out);

// Logits of the window's cells, row-major, into out (window.rows * window.cols floats), and
// their signs into signs (as many bytes: logit > 0, 1 or 0), what the prototype-grid masks copy:
// one sign pass over the whole window while its logits are in L1, instead of one per crop row at
// every render.
void window_logits(const ProtoPlan& proto, const void* proto_frame, const MaskCoefficients& c,
                   const MaskWindow& window, float* out, uint8_t* signs, std::vector<float>& cell_scratch);

}  // namespace detail
}  // namespace hailo_decode
