// hailort_sort_oracle: reproduces the permutation that libstdc++'s std::sort
// produces on HailoRT's NMS candidate vector (comparator: a.score > b.score).
//
// std::sort is not stable; with 8-bit scores many candidates tie and the
// resulting order decides which boxes survive NMS. The permutation depends only
// on the sequence of comparisons, so sorting {score, index} records with the same
// comparator on the same input order reproduces HailoRT's order, ties included.
//
// Protocol (binary in, text out):
//   stdin : uint32 n (little-endian), then n float32 scores (little-endian)
//   stdout: n lines, the original index of each element after the sort
//
// Build: g++ -O2 -std=c++17 hailort_sort_oracle.cpp -o hailort_sort_oracle
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

struct Candidate {
    float score;
    uint32_t index;
};

int main() {
    uint32_t n = 0;
    if (std::fread(&n, sizeof(n), 1, stdin) != 1) {
        std::fprintf(stderr, "hailort_sort_oracle: cannot read count\n");
        return 1;
    }
    std::vector<float> scores(n);
    if (n > 0 && std::fread(scores.data(), sizeof(float), n, stdin) != n) {
        std::fprintf(stderr, "hailort_sort_oracle: cannot read %u scores\n", n);
        return 1;
    }
    std::vector<Candidate> v;
    v.reserve(n);
    for (uint32_t i = 0; i < n; i++) {
        v.push_back(Candidate{scores[i], i});
    }
    std::sort(v.begin(), v.end(),
              [](const Candidate &a, const Candidate &b) { return a.score > b.score; });
    for (const auto &c : v) {
        std::printf("%u\n", c.index);
    }
    return 0;
}
