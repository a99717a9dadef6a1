// The logistic function over a row of floats, in plain loops the compiler vectorizes (SSE2, AVX2 and
// AVX-512F clones on x86-64, NEON):
// exp by Cephes' expf reduction and polynomial (relative error about 1e-7), no libm call per value.
// Segmentation masks are sigmoid values of every prototype cell a box covers: tens of thousands a
// frame, where a call to expf each would cost more than the decode that made the logits.
#pragma once

namespace hailo_decode::tappas {

// out[i] = 1 / (1 + exp(-in[i])), within 2e-7 of the exact value; in and out may not overlap.
void sigmoid_row(const float* in, float* out, int n);

}  // namespace hailo_decode::tappas
