#include "sigmoid_rows.hpp"

#include <cstdint>
#include <cstring>

// The plugin is built for the baseline ISA of the machine it is built on (SSE2 on x86-64: 4 lanes).
// On x86-64 with glibc the loop is also compiled for AVX2 and AVX-512F, and the loader picks the
// widest the CPU has, once (an ifunc). The lanes compute exactly what the scalar loop does (no FMA
// contraction), so every clone gives the same bits. 20 masks of yolov8n-seg: 130 -> 66-72 us.
// Not under ThreadSanitizer: the ifunc resolver runs while the library is relocated, before TSan's
// runtime is up, and crashes there.
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define HAILO_DECODE_NO_CLONES 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define HAILO_DECODE_NO_CLONES 1
#endif
#if defined(__x86_64__) && defined(__GLIBC__) && (defined(__GNUC__) || defined(__clang__)) && \
    !defined(HAILO_DECODE_NO_CLONES)
#define HAILO_DECODE_SIGMOID_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define HAILO_DECODE_SIGMOID_CLONES
#endif

namespace hailo_decode::tappas {

HAILO_DECODE_SIGMOID_CLONES void sigmoid_row(const float* __restrict in, float* __restrict out, int n) {
    for (int i = 0; i < n; ++i) {
        // exp(t), t = -x clamped to where float's exp is finite and normal.
        float t = -in[i];
        t = t > 88.0f ? 88.0f : t;
        t = t < -87.0f ? -87.0f : t;
        // t = k ln2 + r, |r| <= ln2 / 2; k rounded to nearest by the 1.5 * 2^23 trick (no FMA: the
        // build turns contraction off, so the sum rounds as written).
        float k = t * 1.44269504088896341f + 12582912.0f;
        k = k - 12582912.0f;
        const float r = (t - k * 0.693359375f) - k * -2.12194440e-4f;
        float p = 1.9875691500e-4f;
        p = p * r + 1.3981999507e-3f;
        p = p * r + 8.3334519073e-3f;
        p = p * r + 4.1665795894e-2f;
        p = p * r + 1.6666665459e-1f;
        p = p * r + 5.0000001201e-1f;
        p = p * (r * r) + r + 1.0f;
        const int32_t bits = (int32_t(k) + 127) << 23;  // 2^k, k in [-126, 127]
        float scale;
        std::memcpy(&scale, &bits, sizeof scale);
        out[i] = 1.0f / (1.0f + p * scale);
    }
}

}  // namespace hailo_decode::tappas
