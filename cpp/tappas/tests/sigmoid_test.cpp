// sigmoid_row (the masks' logistic function): within 2e-7 of the exact value everywhere, and the
// vector lanes of whichever clone the loader picked (SSE2, AVX2, AVX-512F on x86-64; NEON) give the
// same bits as the loop's scalar tail (a row of one value runs only the tail).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <vector>

#include "sigmoid_rows.hpp"

int main() {
    std::vector<float> in;
    for (int i = -200000; i <= 200000; ++i) in.push_back(float(i) * 5e-4f);  // [-100, 100]
    const float inf = std::numeric_limits<float>::infinity();
    for (float v : {inf, -inf, 88.0f, -87.0f, 88.5f, -87.5f, 1e-30f, -1e-30f, 0.0f, -0.0f, 3.4e38f, -3.4e38f})
        in.push_back(v);
    const int n = int(in.size());
    std::vector<float> rows(size_t(n), 0.0f), one(size_t(n), 0.0f);
    hailo_decode::tappas::sigmoid_row(in.data(), rows.data(), n);
    for (int i = 0; i < n; ++i) hailo_decode::tappas::sigmoid_row(&in[size_t(i)], &one[size_t(i)], 1);

    int failures = 0;
    double worst = 0.0;
    for (int i = 0; i < n; ++i) {
        if (std::memcmp(&rows[size_t(i)], &one[size_t(i)], sizeof(float)) != 0) {
            if (++failures <= 5)
                std::fprintf(stderr, "FAILED: sigmoid(%.9g): row %.9g, alone %.9g\n", double(in[size_t(i)]),
                             double(rows[size_t(i)]), double(one[size_t(i)]));
        }
        const double exact = 1.0 / (1.0 + std::exp(-double(in[size_t(i)])));
        const double err = std::fabs(double(rows[size_t(i)]) - exact);
        if (!(err <= 2e-7)) {
            if (++failures <= 10)
                std::fprintf(stderr, "FAILED: sigmoid(%.9g) = %.9g, exact %.9g\n", double(in[size_t(i)]),
                             double(rows[size_t(i)]), exact);
        }
        if (err > worst) worst = err;
    }
    std::printf("%d values, worst error %.3g, %d failed\n", n, worst, failures);
    return failures == 0 ? 0 : 1;
}
