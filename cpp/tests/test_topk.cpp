// topk room: the selection keeps the k best in the stated order (score descending, index
// ascending on ties) whatever the input order, and equals a full stable sort's first k.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "../src/topk.hpp"
#include "check.hpp"

using namespace hailo_decode::detail;


int main() {
    std::mt19937 rng(42);
    for (int trial = 0; trial < 200; ++trial) {
        const size_t n = 1 + rng() % 2000, k = rng() % (n + 5);
        const int levels = 1 + int(rng() % 6);  // few levels: many ties
        std::vector<TopkKey> all(n);
        for (size_t i = 0; i < n; ++i) all[i] = TopkKey{float(rng() % levels) / 4.0f, uint64_t(i)};
        if (trial % 4 == 0) all[rng() % n].score = -0.0f;
        std::vector<TopkKey> expected = all;
        std::stable_sort(expected.begin(), expected.end(), [](const TopkKey& a, const TopkKey& b) { return a.score > b.score; });
        expected.resize(std::min(k, n));
        for (int shuffled = 0; shuffled < 2; ++shuffled) {  // in index order (the packed path) or not
            if (shuffled) std::shuffle(all.begin(), all.end(), rng);  // the input order must not matter
            ScratchVector<TopkKey> keys(all.begin(), all.end());
            select_top(keys, k);
            CHECK(keys.size() == expected.size());
            for (size_t i = 0; i < keys.size() && i < expected.size(); ++i)
                CHECK(keys[i].score == expected[i].score && keys[i].index == expected[i].index &&
                      std::signbit(keys[i].score) == std::signbit(expected[i].score));
        }
    }
    return report();
}
