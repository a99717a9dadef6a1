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

using namespace hailo_decode;
using namespace hailo_decode::detail;

// The gate (ranking only the anchors whose best score passes, topk.hpp) must not change any
// result: random uint8 heads (80 classes, sparse high bytes, or every byte from a few levels),
// thresholds on and between quantization levels, > and >=, k small and large, agnostic or not,
// against the plain algorithm over every anchor (stage 1 top k by best score, stage 2 top k
// pairs, then the score test), with the stated tie order.
struct Row { float score; uint64_t anchor; int cls; };

static std::vector<Row> plain_end2end(const std::vector<std::vector<uint8_t>>& bytes, const std::vector<float>& lut,
                                      size_t nc, size_t k, float conf, bool inclusive, bool agnostic) {
    std::vector<std::pair<float, uint64_t>> anchors;  // (best score, anchor)
    std::vector<const uint8_t*> cell;
    for (const auto& head : bytes)
        for (size_t i = 0; i < head.size() / nc; ++i) {
            float best = lut[head[i * nc]];
            for (size_t c = 1; c < nc; ++c) best = std::max(best, lut[head[i * nc + c]]);
            anchors.push_back({best, uint64_t(cell.size())});
            cell.push_back(head.data() + i * nc);
        }
    std::stable_sort(anchors.begin(), anchors.end(), [](auto& a, auto& b) { return a.first > b.first; });
    anchors.resize(std::min(k, anchors.size()));
    std::vector<Row> pairs;  // in rank, then class order: a stable sort by score keeps the stated ties
    for (const auto& a : anchors)
        for (size_t c = 0; c < nc; ++c) {
            const float s = lut[cell[a.second][c]];
            if (agnostic) {
                if (s == a.first) { pairs.push_back(Row{s, a.second, int(c)}); break; }
                continue;
            }
            pairs.push_back(Row{s, a.second, int(c)});
        }
    std::stable_sort(pairs.begin(), pairs.end(), [](const Row& a, const Row& b) { return a.score > b.score; });
    pairs.resize(std::min(k, pairs.size()));
    std::vector<Row> out;
    for (const Row& r : pairs)
        if (inclusive ? r.score >= conf : r.score > conf) out.push_back(r);
    return out;
}

static std::vector<Row> run_select(TopkWorkspace& ws, std::vector<TopkHead>& heads, size_t k, int nc, float conf,
                                   bool inclusive, bool agnostic) {
    ws.clear();
    for (size_t h = 0; h < heads.size(); ++h) add_anchors(heads[h], uint32_t(h), ws);
    select_end2end(ws, heads.data(), k, nc, agnostic);
    std::vector<Row> out;
    for (const TopkKey& key : ws.selected) {
        const float s = key.score;
        if (inclusive ? s >= conf : s > conf)
            out.push_back(Row{s, ws.ranked[size_t(key.index / uint64_t(nc))].index, int(key.index % uint64_t(nc))});
    }
    return out;
}

static bool same_rows(const std::vector<Row>& a, const std::vector<Row>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (a[i].score != b[i].score || a[i].anchor != b[i].anchor || a[i].cls != b[i].cls) return false;
    return true;
}

static void test_prefilter_changes_nothing() {
    std::mt19937 rng(7);
    const int nc = 80;
    const int grids[3] = {12, 6, 3};
    // Runs where anchors were gated out and fewer than k pass (stage 1 would have taken failing
    // ones) or more than k pass (stage 1 ranks among the passing ones only).
    int fewer_than_k = 0, more_than_k = 0;
    // Both byte-path selections run: few passing cells sorted (at most 64, topk.cpp's select_few)
    // and the counting walk (more).
    int few_passing = 0, many_passing = 0;
    for (int trial = 0; trial < 60; ++trial) {
        const float scale = trial % 3 == 0 ? 1.0f / 255.0f : 1.0f / 64.0f;
        const float zp = float(trial % 5);
        std::vector<std::vector<uint8_t>> bytes(3);
        std::vector<TensorSpec> specs(3);
        std::vector<TensorView> views(3);
        for (int h = 0; h < 3; ++h) {
            const int g = grids[h];
            bytes[size_t(h)].resize(size_t(g) * g * nc);
            for (auto& b : bytes[size_t(h)]) {
                if (trial % 4 == 3) b = uint8_t(40 * (rng() % 5));  // few levels: ties everywhere
                else b = rng() % 500 < 3 ? uint8_t(60 + rng() % 196) : uint8_t(rng() % 40);  // sparse highs
            }
            TensorSpec& t = specs[size_t(h)];
            t.name = "cls" + std::to_string(h);
            t.dtype = DType::U8;
            t.order = Order::NHWC;
            t.height = t.padded_height = t.width = t.padded_width = g;
            t.channels = t.padded_channels = nc;
            t.frame_stride = bytes[size_t(h)].size();
            t.zp = {zp};
            t.scale = {scale};
            views[size_t(h)] = make_tensor_view(t);
        }
        std::vector<float> lut(256);  // the test's own scores: (q - zp) * scale (activation none)
        for (int q = 0; q < 256; ++q) lut[size_t(q)] = (float(q) - zp) * scale;
        // Thresholds on a level (a byte's score exactly), halfway between two, below every byte.
        const int q = int(rng() % 256);
        const float confs[4] = {lut[size_t(q)], (lut[size_t(q)] + lut[size_t(std::min(q + 1, 255))]) / 2, -1.0f, 0.2f};
        for (float conf : confs)
            for (bool inclusive : {false, true})
                for (size_t k : {size_t(1), size_t(7), size_t(300), size_t(5000)}) {
                    const bool agnostic = (trial + int(k)) % 5 == 0;
                    std::vector<ClassScorer> gates;
                    for (int h = 0; h < 3; ++h) {
                        ClassScorer g = make_class_scorer(views[size_t(h)], {conf}, inclusive, false);
                        CHECK(g.lut.size() >= 256 && g.lut_stride == 0);
                        for (size_t b = 0; b < 256 && b < g.lut.size(); ++b) CHECK(g.lut[b] == lut[b]);
                        gates.push_back(std::move(g));
                    }
                    std::vector<TopkHead> heads;
                    for (int h = 0; h < 3; ++h) heads.push_back(TopkHead{&views[size_t(h)], &gates[size_t(h)], bytes[size_t(h)].data()});
                    const std::vector<Row> expected = plain_end2end(bytes, lut, nc, k, conf, inclusive, agnostic);
                    TopkWorkspace ws;
                    CHECK(same_rows(run_select(ws, heads, k, nc, conf, inclusive, agnostic), expected));
                    CHECK(same_rows(run_select(ws, heads, k, nc, conf, inclusive, agnostic), expected));  // warm workspace
                    const size_t anchors = 144 + 36 + 9;
                    fewer_than_k += ws.passing > 0 && ws.passing < std::min(k, anchors);
                    more_than_k += ws.passing > k && ws.passing < anchors;
                    few_passing += ws.passing > 0 && ws.passing <= 64;
                    many_passing += ws.passing > 64;
                }
    }
    CHECK(fewer_than_k > 50 && more_than_k > 50);
    CHECK(few_passing > 50 && many_passing > 50);
}


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
            ws.head_width.emplace_back(uint64_t(widths[h]));
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
    // Divisor: the multiply-shift equals integer division below 2^21 (every n at its edges, every
    // multiple of d and its neighbours for small d), and quotient() beyond.
    for (uint64_t d : {uint64_t(1), uint64_t(2), uint64_t(3), uint64_t(7), uint64_t(80), uint64_t(641), uint64_t(65537),
                       (uint64_t(1) << 21) - 1, uint64_t(1) << 21, uint64_t(1000003)}) {
        const Divisor by(d);
        for (uint64_t n = 0; n < 5000; ++n) CHECK(by(n) == n / d);
        for (uint64_t n = (uint64_t(1) << 21) - 5000; n < (uint64_t(1) << 21) + 5000; ++n) CHECK(by(n) == n / d);
        for (uint64_t m = 0; m * d < (uint64_t(1) << 22); m += (d < 64 ? 1 : 1 + m / 64))
            for (uint64_t n : {m * d, m * d + d - 1, m * d + 1}) CHECK(by(n) == n / d);
        for (uint64_t n : {uint64_t(1) << 32, (uint64_t(1) << 40) + 12345, uint64_t(1) << 53, ~uint64_t(0)}) CHECK(by(n) == n / d);
    }
    test_prefilter_changes_nothing();
    return report();
}
