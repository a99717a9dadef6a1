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
    // anchor_at: head, row and column by the reciprocal multiply equal integer division's, for
    // widths that do not divide powers of two and anchors at every row boundary and beyond 2^32.
    {
        const int widths[4] = {80, 7, 3, 1000003};
        const size_t heights[4] = {80, 13, 5, 5000};
        std::vector<TensorView> views(4);
        std::vector<TopkHead> heads(4);
        TopkWorkspace ws;
        size_t start = 0;
        for (int h = 0; h < 4; ++h) {
            views[h].width = widths[h];
            views[h].height = int(heights[h]);
            heads[h] = TopkHead{&views[size_t(h)], nullptr, nullptr};
            ws.head_start.push_back(start);
            ws.head_row_scale.push_back(1.0 / double(widths[h]));
            start += heights[h] * size_t(widths[h]);
        }
        for (int h = 0; h < 4; ++h) {
            const uint64_t w = uint64_t(widths[h]), first = ws.head_start[size_t(h)];
            for (uint64_t row = 0; row < heights[h]; row += (row < 20 ? 1 : 97)) {
                for (uint64_t col : {uint64_t(0), uint64_t(1), w / 2, w - 1}) {
                    const TopkAnchor a = anchor_at(ws, heads.data(), first + row * w + col);
                    CHECK(a.head == uint32_t(h) && uint64_t(a.row) == row && uint64_t(a.col) == col);
                }
            }
        }
    }
    return report();
}
