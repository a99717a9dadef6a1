// C++ unit tests of the task rooms (gather; rotated NMS and keypoint/angle decode as they land),
// run by ctest. Expected values are worked out by hand in the comments beside them.
#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "../src/gather.hpp"
#include "../src/rotated_box.hpp"
#include "../src/rotated_nms.hpp"
#include "../src/tensor_view.hpp"
#include "hailo_decode/decoder.hpp"
#include "check.hpp"
#include "count_allocations.hpp"
#include "tensor_spec.hpp"

using namespace hailo_decode;
using namespace hailo_decode::detail;

static bool near(float a, float b, float tol) { return std::fabs(a - b) <= tol; }

static void test_gather_cell() {
    // A 3x4 grid of 10 channels, padded to (3, 5, 16); element (h, w, c) holds 20*h + 5*w + c,
    // placed by each order's formula (hailort-facts.md section 1), padding 0xEE. Per-channel zero
    // point c and scale 0.5, so every channel of cell (h, w) dequantizes to (20*h + 5*w) * 0.5.
    for (Order o : {Order::NHWC, Order::NHCW, Order::F8CR}) {
        TensorSpec s = spec("kpt", DType::U8, o, 3, 4, 10, 3, 5, 16);
        s.zp.clear();
        s.scale.clear();
        for (int c = 0; c < 10; ++c) { s.zp.push_back(float(c)); s.scale.push_back(0.5f); }
        TensorView v = make_tensor_view(s);
        std::vector<uint8_t> buf(s.frame_stride, 0xEE);  // padding: a value no test expects
        for (int h = 0; h < 3; ++h)
            for (int w = 0; w < 4; ++w)
                for (int c = 0; c < 10; ++c) {
                    size_t at = 0;
                    if (o == Order::NHWC) at = size_t(h) * 5 * 16 + size_t(w) * 16 + size_t(c);
                    if (o == Order::NHCW) at = size_t(h) * 5 * 16 + size_t(c) * 5 + size_t(w);
                    if (o == Order::F8CR) at = size_t(h) * 5 * 16 + size_t(c - c % 8) * 5 + size_t(w) * 8 + size_t(c % 8);
                    buf[at] = uint8_t(20 * h + 5 * w + c);
                }
        float out[10];
        gather_cell(v, buf.data(), 2, 3, out);
        bool ok = true;  // (55 + c - c) * 0.5 = 27.5 for every channel
        for (int c = 0; c < 10; ++c) ok = ok && out[c] == 27.5f;
        CHECK(ok);
        gather_cell(v, buf.data(), 0, 1, out);  // (5 + c - c) * 0.5 = 2.5
        ok = true;
        for (int c = 0; c < 10; ++c) ok = ok && out[c] == 2.5f;
        CHECK(ok);
    }
    // uint16, one zero point and scale: (1000 - 10) * 0.25 = 247.5
    TensorSpec s16 = spec("a16", DType::U16, Order::NHWC, 1, 2, 3, 1, 2, 3);
    s16.zp = {10.0f};
    s16.scale = {0.25f};
    std::vector<uint16_t> b16{0, 0, 0, 1000, 1010, 1020};
    float o16[3];
    gather_cell(make_tensor_view(s16), b16.data(), 0, 1, o16);
    CHECK(o16[0] == 247.5f && o16[1] == 250.0f && o16[2] == 252.5f);
    // float32, NCHW: values as they are
    TensorSpec sf = spec("af", DType::F32, Order::NCHW, 2, 2, 2, 2, 2, 2);
    std::vector<float> bf{0, 1, 2, 3, 10, 11, 12, 13};  // channel planes of 2x2
    float of[2];
    gather_cell(make_tensor_view(sf), bf.data(), 1, 0, of);
    CHECK(of[0] == 2.0f && of[1] == 12.0f);
}

static void test_detection_anchor() {
    // Two heads: a 2x2 grid (stride 8) and a 1x1 grid (stride 16) on a 16x16 input, bins 1. The
    // one passing cell is (row 1, col 1) of head 0 -> cell 1 * 2 + 1 = 3; then (0, 0) of head 1.
    Config cfg;
    cfg.outputs = {spec("box0", DType::F32, Order::NHWC, 2, 2, 4, 2, 2, 4), spec("cls0", DType::F32, Order::NHWC, 2, 2, 1, 2, 2, 1),
                   spec("box1", DType::F32, Order::NHWC, 1, 1, 4, 1, 1, 4), spec("cls1", DType::F32, Order::NHWC, 1, 1, 1, 1, 1, 1)};
    HeadSpec h0, h1;
    h0.box_output = 0; h0.cls_output = 1; h0.stride = 8;
    h1.box_output = 2; h1.cls_output = 3; h1.stride = 16;
    cfg.heads = {h0, h1};
    cfg.num_classes = 1;
    cfg.bins = 1;
    cfg.settings.image_height = cfg.settings.image_width = 16;
    cfg.settings.score_threshold = {0.5f};
    cfg.settings.iou_threshold = 0.99f;
    Decoder dec(cfg);
    std::vector<float> box0(16, 0.25f), cls0{0.1f, 0.1f, 0.1f, 0.9f}, box1(4, 0.25f), cls1{0.8f};
    const void* ptrs[] = {box0.data(), cls0.data(), box1.data(), cls1.data()};
    size_t elems[] = {16, 4, 4, 1};
    dec.decode(ptrs, elems, 1);
    auto [dets, n] = dec.frame(0);
    CHECK(n == 2);
    if (n == 2) {
        CHECK(dets[0].head == 0 && dets[0].cell == 3 && dets[0].score == 0.9f);
        CHECK(dets[1].head == 1 && dets[1].cell == 0 && dets[1].score == 0.8f);
    }
}

static void test_probiou() {
    // Equal w x h boxes at angle 0, shifted by dx: a = w^2/12, b = h^2/12, c = 0, so
    // t1 = dx^2 / (4 * 2a) = 1.5 dx^2 / w^2, t2 = 0, t3 = log(4ab / (4ab)) / 2 = 0:
    // w = 12, dx = 4 -> bd = 1/6, iou = 1 - sqrt(1 - exp(-1/6)) = 0.608178.
    const Gaussian a = make_gaussian(100, 50, 12, 6, 0), b = make_gaussian(104, 50, 12, 6, 0);
    CHECK(near(probiou(a, b), 0.608178f, 2e-5f));
    // The same pair turned a quarter (w along y, the shift along y): the same overlap.
    const float q = 1.5707963f;
    CHECK(near(probiou(make_gaussian(0, 0, 12, 6, q), make_gaussian(0, 4, 12, 6, q)), 0.608178f, 2e-5f));
    // Identical boxes: bd clamps to eps = 1e-7; in float32 exp(-1e-7) rounds to 1 - 2^-23, so
    // iou = 1 - sqrt(2^-23 + 1e-7) = 1 - 4.682e-4.
    CHECK(near(probiou(a, a), 1.0f - 4.682e-4f, 2e-6f));
    // Far apart: bd clamps to 100, iou = 1 - sqrt(1 + 1e-7) <= 0.
    CHECK(probiou(a, make_gaussian(5000, 50, 12, 6, 0)) <= 0.0f);
    // Symmetric bit for bit, rotated boxes included.
    const Gaussian c = make_gaussian(10, 11, 20, 7, 0.3f), d = make_gaussian(14, 9, 9, 16, -0.6f);
    const float cd = probiou(c, d), dc = probiou(d, c);
    CHECK(std::memcmp(&cd, &dc, sizeof cd) == 0);
}

// Random boxes of every size (tiny, thin, huge), angles, and positions near and far (offset by
// 7680 x class as Ultralytics does), then for each a slightly moved, resized, turned copy or three:
// close pairs, many near any threshold.
static std::vector<Gaussian> random_gaussians() {
    uint32_t seed = 12345;
    auto uni = [&seed](float lo, float hi) {
        seed = seed * 1664525u + 1013904223u;
        return lo + (hi - lo) * float(seed >> 8) / float(1u << 24);
    };
    std::vector<Gaussian> g;
    for (int i = 0; i < 400; ++i) {
        const float size = std::pow(10.0f, uni(-2.0f, 3.0f));
        const float aspect = std::pow(10.0f, uni(-2.5f, 2.5f));
        const float off = 7680.0f * float(i % 3 == 0 ? 14 : 0);
        g.push_back(make_gaussian(uni(0, 300) + off, uni(0, 300) + off, size, size * aspect, uni(-0.8f, 2.4f)));
    }
    for (int i = 0; i < 400; ++i) {
        const Gaussian b = g[size_t(i)];  // a copy: push_back below may move the vector
        const float w = std::sqrt(12.0f * b.a), h = std::sqrt(12.0f * b.b);  // (about: a, b are the rotated variances)
        for (int k = 0; k < 3; ++k)
            g.push_back(make_gaussian(b.x + uni(-0.5f, 0.5f) * w, b.y + uni(-0.5f, 0.5f) * h, w * uni(0.5f, 1.5f),
                                      h * uni(0.5f, 1.5f), uni(-0.8f, 2.4f)));
    }
    return g;
}

static void test_far_apart_skips_only_pairs_below_threshold() {
    // far_apart is a shortcut of rotated NMS: every pair it skips must have a full probiou below
    // the threshold. Random boxes of every size (tiny, thin, huge), angles, and positions near and
    // far (offset by 7680 x class as Ultralytics does); every pair, at thresholds from 1e-3 to 0.99.
    const std::vector<Gaussian> g = random_gaussians();
    long skipped = 0, wrong = 0, differ = 0, near_threshold = 0;
    for (float th : {0.001f, 0.01f, 0.1f, 0.3f, 0.5f, 0.7f, 0.9f, 0.99f}) {
        const float limit = far_limit_for(th);
        CHECK(limit > 0.0f);
        for (bool inclusive : {false, true}) {
            const OverlapTest test = make_overlap_test(th, inclusive);
            CHECK(test.banded);
            for (size_t i = 0; i < g.size(); ++i)
                for (size_t j = 0; j < g.size(); ++j) {
                    const float iou = probiou(g[i], g[j]);
                    if (!inclusive && far_apart(g[i], g[j], limit)) {
                        ++skipped;
                        wrong += !(iou < th);
                    }
                    differ += test.over(g[i], g[j]) != (inclusive ? iou >= th : iou > th);
                    near_threshold += std::fabs(iou - th) < 0.01f * th;
                }
        }
    }
    CHECK(wrong == 0);
    CHECK(differ == 0);  // the shortcuts give the full test's answer, pair by pair
    CHECK(skipped > 300000);  // the shortcut was exercised
    CHECK(near_threshold > 1000);  // and pairs close to each threshold were compared
    CHECK(far_limit_for(0.0f) == 0.0f && far_limit_for(1.0f) == 0.0f && far_limit_for(-1.0f) == 0.0f);
    CHECK(far_limit_for(NAN) == 0.0f);
}

// Boxes as kernels::probiou_filter reads them, padded with zeros to whole vectors.
struct GaussianList {
    std::vector<float> x, y, a, b, c, det, far_spread;
    explicit GaussianList(const std::vector<Gaussian>& g) {
        for (const Gaussian& e : g) {
            const kernels::ProbiouProbe p = probe_of(e);
            for (auto [v, f] : {std::pair{&x, p.x}, {&y, p.y}, {&a, p.a}, {&b, p.b}, {&c, p.c}, {&det, p.det},
                                {&far_spread, p.far_spread}})
                v->push_back(f);
        }
        for (auto* v : {&x, &y, &a, &b, &c, &det, &far_spread}) v->resize(v->size() + 8, 0.0f);
    }
    kernels::ProbiouList at(size_t i) const {
        return {x.data() + i, y.data() + i, a.data() + i, b.data() + i, c.data() + i, det.data() + i,
                far_spread.data() + i};
    }
};

// Every kernel table available on this machine, scalar first.
static std::vector<const kernels::Table*> kernel_tables() {
    std::vector<const kernels::Table*> t{&kernels::scalar_table()};
    const std::string names = kernels::available();
    for (const kernels::Table* k : {kernels::sse2_table(), kernels::avx2_table(), kernels::neon_table()})
        if (k && names.find(k->name) != std::string::npos) t.push_back(k);
    return t;
}

static void test_probiou_filter_matches_full_probiou() {
    // kernels::probiou_filter decides pairs without log or exp (far apart; the distance's bounds
    // below or above the band); rotated NMS then runs the exact test on the undecided ones. Pair
    // by pair, every decision must be the full probiou's answer, and every path's (SSE2, AVX2,
    // NEON) the scalar one's. The pairs: the random set (every size, irregular ones added), and
    // per threshold, pairs stepped finely across the distance of the threshold itself and of each
    // edge of the band (equal boxes side by side: bd = 1.5 dx^2 / w^2, the log term about 0; and
    // turned, unequal copies, whose log term is not); and needles, nearly degenerate pairs whose
    // computed x (the log's argument) falls below 1 by rounding, so that probiou passes although
    // the distance term alone is above the band (x >= 1 holds only in exact arithmetic).
    std::vector<Gaussian> g = random_gaussians();
    std::vector<std::pair<Gaussian, Gaussian>> needles;
    uint32_t seed = 777;
    auto uni = [&seed](float lo, float hi) {
        seed = seed * 1664525u + 1013904223u;
        return lo + (hi - lo) * float(seed >> 8) / float(1u << 24);
    };
    for (int i = 0; i < 20000; ++i) {
        const float w = std::pow(10.0f, uni(0, 1)), h = w * std::pow(10.0f, uni(-9, -4)), turn = uni(-0.8f, 2.4f);
        const float off = uni(0, 3) * std::pow(10.0f, uni(-5, -1));
        const Gaussian p = make_gaussian(uni(0, 1000), uni(0, 1000), w, h, turn);
        needles.push_back({p, make_gaussian(p.x - off * std::sin(turn), p.y + off * std::cos(turn), w * uni(0.999f, 1.001f),
                                            h * uni(0.5f, 2.0f), turn + uni(-1e-3f, 1e-3f))});
    }
    long needles_over = 0;  // pairs that pass with x < 1 and the distance term above the band
    g.push_back(make_gaussian(10, 10, 0, 5, 0.1f));             // no area: det 0
    g.push_back(make_gaussian(10, 10, 1e-4f, 300, 0.4f));       // needle
    g.push_back(make_gaussian(NAN, 10, 5, 5, 0.1f));            // NaN centre
    g.push_back(make_gaussian(10, 10, INFINITY, 5, 0.1f));      // infinite size
    g.push_back(make_gaussian(1e20f, -1e20f, 5, 5, 0.1f));      // far out
    const GaussianList all(g);
    const std::vector<const kernels::Table*> paths = kernel_tables();
    std::vector<uint32_t> undecided(g.size() + 8), ref_undecided(g.size() + 8);
    long over = 0, under = 0, left = 0, wrong = 0, paths_differ = 0, near_band = 0, lists = 0;
    long verdicts[3] = {0, 0, 0};
    std::vector<float> thresholds{0.001f, 0.01f, 0.1f, 0.3f, 0.5f, 0.7f, 0.9f, 0.99f};
    for (size_t i = 0; i < 400; i += 50) thresholds.push_back(probiou(g[i], g[400 + 3 * i]));  // a pair at each
    for (float th : thresholds) {
        for (bool inclusive : {false, true}) {
            const OverlapTest test = make_overlap_test(th, inclusive);
            const kernels::ProbiouBounds bounds = bounds_of(test);
            auto full = [&](const Gaussian& p, const Gaussian& q) {
                const float iou = probiou(p, q);
                return inclusive ? iou >= th : iou > th;
            };
            // The pairs across the threshold's distance and the band's edges.
            std::vector<std::pair<Gaussian, Gaussian>> pairs;
            const double limit = -std::log(1.0 + 1e-7 - (1.0 - double(th)) * (1.0 - double(th)));
            for (double target : {double(test.band_lo), double(test.band_hi), limit}) {
                const double dx0 = 12.0 * std::sqrt(target / 1.5);
                for (int k = -60; k <= 60; ++k) {
                    const float dx = float(dx0 * (1.0 + 2e-6 * k));
                    pairs.push_back({make_gaussian(100, 50, 12, 6, 0), make_gaussian(100 + dx, 50, 12, 6, 0)});
                    pairs.push_back({make_gaussian(100, 50, 12, 6, 0.7f),
                                     make_gaussian(100 + dx * 0.76f, 50 + dx * 0.64f, 13, 5.5f, 0.75f)});
                }
            }
            for (size_t i = 0; i < g.size(); i += 3)
                for (size_t j = 0; j < g.size(); j += 7) pairs.push_back({g[i], g[j]});
            pairs.insert(pairs.end(), needles.begin(), needles.end());
            for (const auto& [p, q] : pairs) {
                const GaussianList one({p});
                const kernels::ProbiouProbe probe = probe_of(q);
                const bool want = full(p, q);
                size_t ref = 0;
                for (const kernels::Table* k : paths) {
                    const size_t r = k->probiou_filter(one.at(0), 1, probe, bounds, undecided.data());
                    if (k == paths[0]) ref = r;
                    paths_differ += r != ref;
                    wrong += (r == kernels::kProbiouOver && !want) || (r == 0 && want) ||
                             (r == 1 && undecided[0] != 0) || (r > 1 && r != kernels::kProbiouOver);
                    if (k != paths[0]) continue;
                    over += r == kernels::kProbiouOver;
                    under += r == 0;
                    left += r == 1;
                }
                wrong += test.over(p, q) != want;
                const ProbiouParts parts = probiou_parts(p, q);
                needles_over += want && parts.x < 1.0f && parts.t12 > test.band_hi;
                near_band += std::fabs(probiou_distance(p, q) / float(limit) - 1.0f) < 0.02f;
            }
            // Lists of 1 to 20 boxes at every start (vector tails, blocks): the filter and the
            // exact test on what it leaves give "any pair passes", on every path the same way.
            for (size_t j = 0; j < g.size(); j += 11) {
                const size_t n = 1 + j % 20, start = (j * 7) % (g.size() - n);
                const kernels::ProbiouProbe probe = probe_of(g[j]);
                bool want = false;
                for (size_t i = 0; i < n; ++i) want = want || full(g[start + i], g[j]);
                const size_t ref = paths[0]->probiou_filter(all.at(start), n, probe, bounds, ref_undecided.data());
                for (const kernels::Table* k : paths) {
                    const size_t r = k->probiou_filter(all.at(start), n, probe, bounds, undecided.data());
                    paths_differ += r != ref || (r != kernels::kProbiouOver &&
                                                 !std::equal(undecided.begin(), undecided.begin() + long(r), ref_undecided.begin()));
                    bool got = r == kernels::kProbiouOver;
                    for (size_t u = 0; !got && u < r; ++u) {
                        wrong += undecided[u] >= n || (u > 0 && undecided[u] <= undecided[u - 1]);
                        if (undecided[u] < n) got = test.over(g[start + undecided[u]], g[j]);
                    }
                    wrong += got != want;
                }
                ++lists;
            }
            // probiou_verdicts, a whole list per call: each verdict is probiou_filter's answer for
            // that candidate against the ones before it, on every path, and agrees with the full
            // probiou. Lists from the random set (every start, lengths 1 to 40: blocks, tails) and
            // from the band's pairs side by side (where verdicts are left to the exact test).
            std::vector<Gaussian> near;
            for (size_t u = 0; u < pairs.size() && u < 726; ++u) {
                near.push_back(pairs[u].first);
                near.push_back(pairs[u].second);
            }
            const GaussianList near_list(near);
            for (const auto& [src, list] : {std::pair{&g, &all}, {&near, &near_list}}) {
                std::vector<uint8_t> verdict(41), ref_verdict(41);
                for (size_t j = 0; j + 40 < src->size(); j += 13) {
                    const size_t n = 1 + j % 40, start = j;
                    paths[0]->probiou_verdicts(list->at(start), n, bounds, ref_verdict.data());
                    for (const kernels::Table* k : paths) {
                        k->probiou_verdicts(list->at(start), n, bounds, verdict.data());
                        paths_differ += !std::equal(verdict.begin(), verdict.begin() + long(n), ref_verdict.begin());
                    }
                    for (size_t q = 0; q < n; ++q) {
                        const Gaussian& probe = (*src)[start + q];
                        const size_t r = q ? paths[0]->probiou_filter(list->at(start), q, probe_of(probe), bounds, undecided.data()) : 0;
                        const uint8_t from_filter = r == kernels::kProbiouOver ? kernels::kProbiouSuppressed
                                                    : r == 0                    ? kernels::kProbiouClear
                                                                                : kernels::kProbiouUndecided;
                        wrong += ref_verdict[q] != from_filter;
                        bool want = false;
                        for (size_t e = 0; e < q; ++e) want = want || full((*src)[start + e], probe);
                        wrong += (ref_verdict[q] == kernels::kProbiouSuppressed && !want) ||
                                 (ref_verdict[q] == kernels::kProbiouClear && want);
                        ++verdicts[ref_verdict[q]];
                    }
                }
            }
        }
    }
    CHECK(wrong == 0);
    CHECK(paths_differ == 0);
    CHECK(verdicts[kernels::kProbiouClear] > 1000 && verdicts[kernels::kProbiouSuppressed] > 1000 &&
          verdicts[kernels::kProbiouUndecided] > 100);
    // Each way out was taken many times, and pairs at the band were compared.
    CHECK(over > 10000 && under > 100000 && left > 1000);
    CHECK(near_band > 1000);
    CHECK(needles_over > 100);
    CHECK(lists > 1000);
    std::printf("probiou_filter: %ld over, %ld under, %ld left to the exact test, %ld near the band, %ld needles; paths %zu\n",
                over, under, left, near_band, needles_over, paths.size());
    std::printf("probiou_verdicts: %ld clear, %ld suppressed, %ld undecided\n", verdicts[0], verdicts[1], verdicts[2]);
}

static void test_probiou_gaussians_match_make_gaussian() {
    // kernels::probiou_gaussians computes rotated NMS's Gaussians a vector at a time: each must be
    // probe_of(make_gaussian(...)) bit for bit (the same IEEE operations in the same order), on
    // every path. Boxes of every size and aspect (tiny: det below 1e-7; thin: det below
    // 1e-5 spread^2; huge: overflow to inf), zero and negative sides, angles where cos or sin is
    // exactly 0, NaN and infinite centres, sides and angles, at every position in a vector
    // (lists of every length, tails).
    uint32_t seed = 4242;
    auto uni = [&seed](float lo, float hi) {
        seed = seed * 1664525u + 1013904223u;
        return lo + (hi - lo) * float(seed >> 8) / float(1u << 24);
    };
    std::vector<std::array<float, 5>> boxes;  // cx, cy, w, h, angle
    for (int i = 0; i < 3000; ++i) {
        const float size = std::pow(10.0f, uni(-5.0f, 21.0f)), aspect = std::pow(10.0f, uni(-6.0f, 6.0f));
        boxes.push_back({uni(-10, 8000), uni(-10, 8000), size, size * aspect, uni(-0.8f, 2.4f)});
    }
    const float special[] = {0.0f, -0.0f, -3.0f, 1e-30f, 1e-4f, 1.0f, 3e19f, 1e30f, INFINITY, -INFINITY, NAN};
    for (float v : special) {
        boxes.push_back({v, 10, 5, 5, 0.3f});
        boxes.push_back({10, v, 5, 5, 0.3f});
        boxes.push_back({10, 10, v, 5, 0.3f});
        boxes.push_back({10, 10, 5, v, 0.3f});
        boxes.push_back({10, 10, 5, 5, v});
        boxes.push_back({10, 10, v, v, 1.1f});
    }
    for (float angle : {0.0f, 1.57079637f, -0.785398185f, 2.35619450f}) boxes.push_back({10, 10, 40, 3, angle});
    const size_t n = boxes.size();
    std::vector<float> x(n + 8), y(n + 8), w(n + 8), h(n + 8), cs(n + 8), sn(n + 8);
    std::vector<kernels::ProbiouProbe> want(n);
    for (size_t i = 0; i < n; ++i) {
        const auto& b = boxes[i];
        const Turn t = turn_of(b[4]);
        x[i] = b[0]; y[i] = b[1]; w[i] = b[2]; h[i] = b[3]; cs[i] = t.cos; sn[i] = t.sin;
        want[i] = probe_of(make_gaussian(b[0], b[1], b[2], b[3], t));
    }
    // Bit for bit, except that any NaN equals any NaN: the sign and payload of a NaN made from two
    // NaN operands follows their order, which a compiler may swap in a commutative operation.
    auto same = [](float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0 || (std::isnan(a) && std::isnan(b)); };
    long differ = 0, regular = 0, irregular = 0, calls = 0;
    for (const kernels::Table* k : kernel_tables()) {
        for (size_t start : {size_t(0), size_t(1), size_t(5)}) {
            for (size_t len : {n - start, size_t(1), size_t(3), size_t(7), size_t(8), size_t(9), size_t(17)}) {
                std::vector<float> a(n + 8, -1.0f), bb(n + 8, -1.0f), c(n + 8, -1.0f), det(n + 8, -1.0f), far(n + 8, -1.0f);
                k->probiou_gaussians({x.data() + start, y.data() + start, w.data() + start, h.data() + start,
                                      cs.data() + start, sn.data() + start},
                                     len, {a.data(), bb.data(), c.data(), det.data(), far.data()});
                ++calls;
                for (size_t i = 0; i < len; ++i) {
                    const kernels::ProbiouProbe& e = want[start + i];
                    differ += !same(a[i], e.a) || !same(bb[i], e.b) || !same(c[i], e.c) || !same(det[i], e.det) ||
                              !same(far[i], e.far_spread);
                    if (k == kernel_tables()[0] && len == n - start && start == 0) {
                        regular += !std::isinf(e.far_spread);
                        irregular += std::isinf(e.far_spread);
                    }
                }
            }
        }
    }
    CHECK(differ == 0);
    CHECK(regular > 500 && irregular > 500);  // both kinds of box were made
    CHECK(calls > 20);
}

static void test_enclosing_boxes_match_enclosing_box() {
    // kernels::enclosing_boxes computes the output boxes of rotated NMS's candidates a vector at a
    // time: each must be enclosing_output_box's (enclosing_box's corners, minima and maxima, then
    // the division by the image size) bit for bit, on every path, normalized or in pixels.
    uint32_t seed = 999;
    auto uni = [&seed](float lo, float hi) {
        seed = seed * 1664525u + 1013904223u;
        return lo + (hi - lo) * float(seed >> 8) / float(1u << 24);
    };
    std::vector<RotatedBox> boxes;
    for (int i = 0; i < 2000; ++i) {
        const float size = std::pow(10.0f, uni(-3.0f, 4.0f));
        boxes.push_back({uni(-100, 1200), uni(-100, 1200), size, size * std::pow(10.0f, uni(-3.0f, 3.0f)), uni(-0.8f, 2.4f)});
    }
    const float special[] = {0.0f, -0.0f, -3.0f, 1e-30f, 1e30f, 3e38f, INFINITY, -INFINITY, NAN};
    for (float v : special) {
        boxes.push_back({v, 10, 5, 5, 0.3f});
        boxes.push_back({10, v, 5, 5, 0.3f});
        boxes.push_back({10, 10, v, 5, 0.3f});
        boxes.push_back({10, 10, 5, v, 0.3f});
        boxes.push_back({10, 10, 5, 5, v});
        // Corners mixing NaN and infinities (inf - inf), or +0 and -0 (a -0 centre, zero sides):
        // where the order of the minimum's and maximum's comparisons shows.
        boxes.push_back({10, 10, v, v, 0.3f});
        boxes.push_back({v, v, 0.0f, 0.0f, 0.3f});
        boxes.push_back({v, v, v, v, 1.1f});
    }
    for (float angle : {0.0f, 1.57079637f, -0.785398185f, 2.35619450f}) boxes.push_back({10, 10, 40, 3, angle});
    const size_t n = boxes.size();
    std::vector<float> cx(n + 8), cy(n + 8), w(n + 8), h(n + 8), cs(n + 8), sn(n + 8);
    for (size_t i = 0; i < n; ++i) {
        const Turn t = turn_of(boxes[i].angle);
        cx[i] = boxes[i].cx; cy[i] = boxes[i].cy; w[i] = boxes[i].w; h[i] = boxes[i].h; cs[i] = t.cos; sn[i] = t.sin;
    }
    // Bit for bit, except that any NaN equals any NaN: the sign and payload of a NaN made from two
    // NaN operands follows their order, which a compiler may swap in a commutative operation.
    auto same = [](float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0 || (std::isnan(a) && std::isnan(b)); };
    long differ = 0, compared = 0;
    for (const kernels::Table* k : kernel_tables()) {
        for (bool normalized : {true, false}) {
            Settings s;
            s.normalized = normalized;
            s.yxyx = false;
            s.image_width = 1024;
            s.image_height = 768;
            for (size_t start : {size_t(0), size_t(3)}) {
                for (size_t len : {n - start, size_t(1), size_t(5), size_t(8), size_t(13)}) {
                    std::vector<float> x0(n + 8, -1.0f), y0(n + 8, -1.0f), x1(n + 8, -1.0f), y1(n + 8, -1.0f);
                    k->enclosing_boxes({cx.data() + start, cy.data() + start, w.data() + start, h.data() + start,
                                        cs.data() + start, sn.data() + start},
                                       len, 1024.0f, 768.0f, normalized, {x0.data(), y0.data(), x1.data(), y1.data()});
                    for (size_t i = 0; i < len; ++i) {
                        const RotatedBox& r = boxes[start + i];
                        float want[4];
                        enclosing_output_box(r, turn_of(r.angle), s, want);
                        const bool d = !same(x0[i], want[0]) || !same(y0[i], want[1]) || !same(x1[i], want[2]) ||
                                       !same(y1[i], want[3]);
                        if (d && differ == 0)
                            std::printf("enclosing_boxes %s: box %zu (%g %g %g %g %g) gives %a %a %a %a, want %a %a %a %a\n",
                                        k->name, start + i, r.cx, r.cy, r.w, r.h, r.angle, x0[i], y0[i], x1[i], y1[i],
                                        want[0], want[1], want[2], want[3]);
                        differ += d;
                        ++compared;
                    }
                }
            }
        }
    }
    CHECK(differ == 0);
    CHECK(compared > 8000);
}

// Sorted candidates (score, class) and their rotated boxes, for suppress_rotated.
struct RotatedCase {
    ScratchVector<Candidate> cands;
    ScratchVector<RotatedBox> rboxes;
    ScratchVector<Turn> turns;
    ScratchVector<Box> boxes;
    void add(float score, int cls, RotatedBox r) {
        cands.push_back({score, cls, uint32_t(rboxes.size())});
        rboxes.push_back(r);
        turns.push_back(turn_of(r.angle));
        Box b{};
        b.v[0] = r.cx;  // marks which candidate a detection came from
        b.head = 0;
        b.cell = uint32_t(rboxes.size() - 1);
        boxes.push_back(b);
    }
    std::vector<uint32_t> kept(const Settings& s, int nc) {
        RotatedNmsWorkspace ws;
        std::vector<Detection> out;
        ScratchVector<RotatedBox> out_r;
        suppress_rotated(cands, rboxes, turns, boxes, s, nc, ws, out, out_r);
        std::vector<uint32_t> ids;
        for (size_t i = 0; i < out.size(); ++i) {
            ids.push_back(out[i].cell);
            if (out_r[i].cx != rboxes[out[i].cell].cx) ids.push_back(999);  // rbox and detection disagree
        }
        return ids;
    }
};

static void test_fast_nms() {
    Settings s;
    s.iou_threshold = 0.5f;
    s.iou_inclusive = false;
    // A chain: A overlaps B (dx 4: 0.61), B overlaps C, A and C are 8 apart (iou 1 - sqrt(1 - e^-0.667) = 0.27).
    // Greedy NMS would keep A and C; Fast-NMS drops C too, because B (itself dropped) overlaps it.
    RotatedCase chain;
    chain.add(0.9f, 0, {100, 50, 12, 6, 0});
    chain.add(0.8f, 0, {104, 50, 12, 6, 0});
    chain.add(0.7f, 0, {108, 50, 12, 6, 0});
    CHECK(chain.kept(s, 1) == std::vector<uint32_t>({0}));
    // Same box, two classes: class-aware keeps both (with or without the centre offset), agnostic one.
    RotatedCase two;
    two.add(0.9f, 0, {100, 50, 12, 6, 0.2f});
    two.add(0.8f, 1, {100, 50, 12, 6, 0.2f});
    CHECK(two.kept(s, 2) == std::vector<uint32_t>({0, 1}));
    s.class_offset = 7680.0f;
    CHECK(two.kept(s, 2) == std::vector<uint32_t>({0, 1}));
    s.agnostic = true;
    CHECK(two.kept(s, 2) == std::vector<uint32_t>({0}));
    s.agnostic = false;
    // The threshold test: at iou == threshold, ">" keeps and ">=" drops.
    RotatedCase pair;
    pair.add(0.9f, 0, {100, 50, 12, 6, 0});
    pair.add(0.8f, 0, {104, 50, 12, 6, 0});
    s.class_offset = 0.0f;
    s.iou_threshold = probiou(make_gaussian(100, 50, 12, 6, 0), make_gaussian(104, 50, 12, 6, 0));
    CHECK(pair.kept(s, 1) == std::vector<uint32_t>({0, 1}));
    s.iou_inclusive = true;
    CHECK(pair.kept(s, 1) == std::vector<uint32_t>({0}));
    // Caps: four far-apart boxes of classes 0, 0, 1, 0: max_per_class 2 -> 0, 1, 2; then max_total 2 -> 0, 1.
    s.iou_threshold = 0.5f;
    RotatedCase caps;
    caps.add(0.9f, 0, {0, 0, 10, 10, 0});
    caps.add(0.8f, 0, {100, 0, 10, 10, 0});
    caps.add(0.7f, 1, {200, 0, 10, 10, 0});
    caps.add(0.6f, 0, {300, 0, 10, 10, 0});
    s.max_per_class = 2;
    CHECK(caps.kept(s, 2) == std::vector<uint32_t>({0, 1, 2}));
    s.max_total = 2;
    CHECK(caps.kept(s, 2) == std::vector<uint32_t>({0, 1}));
    // max_candidates: only the best n candidates take part.
    s.max_per_class = s.max_total = -1;
    s.max_candidates = 3;
    CHECK(caps.kept(s, 2) == std::vector<uint32_t>({0, 1, 2}));
}

static void test_rotated_box() {
    // Distances (l, t, r, b) = (0.5, 0.5, 1.5, 0.5) strides at cell (col 0, row 0), stride 16, angle
    // pi/4: the centre offset ((r - l) / 2, (b - t) / 2) = (0.5, 0) turns to (0.35355, 0.35355);
    // centre ((0.35355 + 0.5) * 16) = 13.6569 on both axes; w = 2 * 16 = 32, h = 1 * 16 = 16.
    const float d[4] = {0.5f, 0.5f, 1.5f, 0.5f};
    const RotatedBox r = dist2rbox(d, 0.78539816f, 0, 0, 16);
    CHECK(near(r.cx, 13.65685f, 1e-4f) && near(r.cy, 13.65685f, 1e-4f) && r.w == 32.0f && r.h == 16.0f);
    // Enclosing box: half extents (16 + 8) * cos(pi/4) = 16.9706 on both axes.
    float e[4];
    enclosing_box(r, e);
    CHECK(near(e[0], 13.65685f - 16.97056f, 1e-4f) && near(e[2], 13.65685f + 16.97056f, 1e-4f));
    CHECK(near(e[1], 13.65685f - 16.97056f, 1e-4f) && near(e[3], 13.65685f + 16.97056f, 1e-4f));
    // Angles: logit 0 -> (0.5 - 0.25) * pi = pi/4; very negative -> -pi/4; very positive -> 3pi/4.
    CHECK(near(obb_angle(0.0f), 0.78539816f, 1e-6f));
    CHECK(near(obb_angle(-40.0f), -0.78539816f, 1e-6f) && near(obb_angle(40.0f), 2.3561945f, 1e-6f));
}

// One head: 2x2 grid, stride 8, 16x16 input, bins 1, float; cell (row 1, col 0) scores 0.9.
static Config task_config(int kpt_channels, int angle_channels) {
    Config cfg;
    cfg.outputs = {spec("box", DType::F32, Order::NHWC, 2, 2, 4, 2, 2, 4), spec("cls", DType::F32, Order::NHWC, 2, 2, 1, 2, 2, 1)};
    HeadSpec h;
    h.box_output = 0; h.cls_output = 1; h.stride = 8;
    if (kpt_channels) {
        cfg.outputs.push_back(spec("kpt", DType::F32, Order::NHWC, 2, 2, kpt_channels, 2, 2, kpt_channels));
        h.kpt_output = 2;
    }
    if (angle_channels) {
        cfg.outputs.push_back(spec("angle", DType::F32, Order::NHWC, 2, 2, angle_channels, 2, 2, angle_channels));
        h.angle_output = int(cfg.outputs.size()) - 1;
    }
    cfg.heads = {h};
    cfg.num_classes = 1;
    cfg.bins = 1;
    cfg.settings.image_height = cfg.settings.image_width = 16;
    cfg.settings.score_threshold = {0.5f};
    return cfg;
}

static void test_pose_decode() {
    // Two keypoints (x, y, v) at cell (row 1, col 0): (0.25, -0.5, 0) -> x = (0.5 + 0) * 8 = 4,
    // y = (-1 + 1) * 8 = 0, v = 0.5; (1, 1, 2) -> x = (2 + 0) * 8 = 16, y = (2 + 1) * 8 = 24,
    // v = sigmoid(2) = 0.8807971. Normalized by the 16x16 input: 0.25, 0, 1, 1.5.
    Config cfg = task_config(6, 0);
    cfg.num_keypoints = 2;
    cfg.keypoint_dims = 3;
    std::vector<float> box(16, 0.5f), cls{0.1f, 0.2f, 0.9f, 0.3f}, kpt(24, 7.0f);
    const float k[6] = {0.25f, -0.5f, 0.0f, 1.0f, 1.0f, 2.0f};
    std::memcpy(kpt.data() + 2 * 6, k, sizeof k);
    const void* ptrs[] = {box.data(), cls.data(), kpt.data()};
    size_t elems[] = {16, 4, 24};
    for (bool normalized : {false, true}) {
        cfg.settings.normalized = normalized;
        Decoder dec(cfg);
        dec.decode(ptrs, elems, 1);
        auto kp = dec.keypoints(0);
        CHECK(dec.frame(0).second == 1 && kp.second == 1 && kp.first != nullptr);
        if (kp.second != 1) continue;
        const float f = normalized ? 16.0f : 1.0f;
        const float* p = kp.first;
        CHECK(p[0] == 4.0f / f && p[1] == 0.0f && p[2] == 0.5f);
        CHECK(p[3] == 16.0f / f && p[4] == 24.0f / f && near(p[5], 0.8807971f, 1e-6f));
        CHECK(dec.rboxes(0).first == nullptr);
    }
    // (x, y) only: visibility 1.0.
    Config two = task_config(4, 0);
    two.num_keypoints = 2;
    two.keypoint_dims = 2;
    two.settings.normalized = false;
    std::vector<float> kpt2(16, 0.0f);
    kpt2[8] = 0.25f;
    const void* p2[] = {box.data(), cls.data(), kpt2.data()};
    size_t e2[] = {16, 4, 16};
    Decoder dec2(two);
    dec2.decode(p2, e2, 1);
    auto kp2 = dec2.keypoints(0);
    CHECK(kp2.second == 1);
    if (kp2.second == 1) {
        CHECK(kp2.first[0] == 4.0f && kp2.first[1] == 8.0f && kp2.first[2] == 1.0f && kp2.first[5] == 1.0f);
    }
    // Bad configs name the output.
    Config bad = task_config(5, 0);
    bad.num_keypoints = 2;
    CHECK(throws([&] { Decoder x(bad); }, "output 'kpt': keypoint channels must be num_keypoints x keypoint_dims = 2 x 3 = 6, got 5"));
    Config dims = task_config(8, 0);
    dims.num_keypoints = 2;
    dims.keypoint_dims = 4;
    CHECK(throws([&] { Decoder x(dims); }, "keypoint_dims must be 2"));
    Config none = task_config(6, 0);
    CHECK(throws([&] { Decoder x(none); }, "num_keypoints is 0"));
    Config grid = task_config(6, 0);
    grid.num_keypoints = 2;
    grid.outputs[2] = spec("kpt", DType::F32, Order::NHWC, 1, 2, 6, 1, 2, 6);
    CHECK(throws([&] { Decoder x(grid); }, "output 'kpt': keypoint grid (1, 2) differs from its box output 'box' (2, 2)"));
}

static void test_obb_decode() {
    // Cell (row 1, col 0), distances (0.5, 0.5, 1.5, 0.5), angle logit 0 (pi/4), stride 8:
    // centre ((0.35355 + 0.5) * 8, (0.35355 + 1.5) * 8) = (6.8284, 14.8284), w = 16, h = 8;
    // the enclosing box's half extents (8 + 4) * cos(pi/4) = 8.4853.
    Config cfg = task_config(0, 1);
    cfg.settings.normalized = false;
    cfg.settings.yxyx = false;
    std::vector<float> box(16, 0.5f), cls{0.1f, 0.2f, 0.9f, 0.3f}, angle(4, 3.0f);
    box[2 * 4 + 2] = 1.5f;
    angle[2] = 0.0f;
    const void* ptrs[] = {box.data(), cls.data(), angle.data()};
    size_t elems[] = {16, 4, 4};
    Decoder dec(cfg);
    dec.decode(ptrs, elems, 1);
    auto [dets, n] = dec.frame(0);
    auto rb = dec.rboxes(0);
    CHECK(n == 1 && rb.second == 1);
    if (n == 1 && rb.second == 1) {
        const float* r = rb.first;
        CHECK(near(r[0], 6.82843f, 1e-4f) && near(r[1], 14.82843f, 1e-4f) && r[2] == 16.0f && r[3] == 8.0f);
        CHECK(near(r[4], 0.78539816f, 1e-6f));
        CHECK(near(dets[0].box[0], 6.82843f - 8.48528f, 1e-4f) && near(dets[0].box[3], 14.82843f + 8.48528f, 1e-4f));
        CHECK(dets[0].head == 0 && dets[0].cell == 2);
    }
    CHECK(dec.keypoints(0).first == nullptr);
    Config bad = task_config(0, 2);
    CHECK(throws([&] { Decoder x(bad); }, "output 'angle': angle channels must be 1, got 2"));
}

static void test_yolo26_decodes_and_end2end_rows() {
    // Pose26 on the keypoints of test_pose_decode, cell (row 1, col 0), anchor (0.5, 1.5):
    // (0.25, -0.5, 0) -> x = (0.25 + 0.5) * 8 = 6, y = (-0.5 + 1.5) * 8 = 8, v = 0.5;
    // (1, 1, 2) -> x = (1 + 0.5) * 8 = 12, y = (1 + 1.5) * 8 = 20, v = sigmoid(2). The end-to-end
    // selection (k = min(300, 4) anchors; only cell 2 passes 0.5) gives the same one row.
    Config cfg = task_config(6, 0);
    cfg.num_keypoints = 2;
    cfg.keypoint_decode = KeypointDecode::YOLO26;
    cfg.settings.normalized = false;
    std::vector<float> box(16, 0.5f), cls{0.1f, 0.2f, 0.9f, 0.3f}, kpt(24, 7.0f), angle(4, 9.0f);
    const float k[6] = {0.25f, -0.5f, 0.0f, 1.0f, 1.0f, 2.0f};
    std::memcpy(kpt.data() + 2 * 6, k, sizeof k);
    for (bool e2e : {false, true}) {
        cfg.settings.end2end = e2e;
        Decoder dec(cfg);
        const void* ptrs[] = {box.data(), cls.data(), kpt.data()};
        size_t elems[] = {16, 4, 24};
        dec.decode(ptrs, elems, 1);
        auto kp = dec.keypoints(0);
        CHECK(dec.frame(0).second == 1 && kp.second == 1);
        if (kp.second != 1) continue;
        const float* p = kp.first;
        CHECK(p[0] == 6.0f && p[1] == 8.0f && p[2] == 0.5f);
        CHECK(p[3] == 12.0f && p[4] == 20.0f && near(p[5], 0.8807971f, 1e-6f));
        CHECK(dec.frame(0).first[0].cell == 2);
    }
    // OBB26: the raw angle is the angle. Cell 2's raw 0.3 (float) or code 158 of (zp 128, scale
    // 0.01) (uint8, by table): distances 0.5 -> w = h = 8, centre (0.5, 1.5) * 8 = (4, 12).
    Config obb = task_config(0, 1);
    obb.angle_decode = AngleDecode::RAW;
    obb.settings.normalized = false;
    angle[2] = 0.3f;
    std::vector<uint8_t> angle_u8(4, 0);
    angle_u8[2] = 158;
    for (int run = 0; run < 4; ++run) {
        Config c = obb;
        c.settings.end2end = run % 2 == 1;
        const bool u8 = run >= 2;
        if (u8) {
            c.outputs[2].dtype = DType::U8;
            c.outputs[2].zp = {128.0f};
            c.outputs[2].scale = {0.01f};
        }
        Decoder dec(c);
        const void* ptrs[] = {box.data(), cls.data(), u8 ? static_cast<const void*>(angle_u8.data()) : angle.data()};
        size_t elems[] = {16, 4, 4};
        dec.decode(ptrs, elems, 1);
        auto rb = dec.rboxes(0);
        CHECK(dec.frame(0).second == 1 && rb.second == 1);
        if (rb.second != 1) continue;
        const float want = u8 ? (158.0f - 128.0f) * 0.01f : 0.3f;
        CHECK(rb.first[0] == 4.0f && rb.first[1] == 12.0f && rb.first[2] == 8.0f && rb.first[3] == 8.0f);
        CHECK(rb.first[4] == want);
    }
    // A C++ caller's out-of-range enum value is refused by name.
    Config bad_k = task_config(6, 0);
    bad_k.num_keypoints = 2;
    bad_k.keypoint_decode = KeypointDecode(7);
    CHECK(throws([&] { Decoder x(bad_k); }, "keypoint_decode must be YOLOV8 or YOLO26, got 7"));
    Config bad_a = task_config(0, 1);
    bad_a.angle_decode = AngleDecode(2);
    CHECK(throws([&] { Decoder x(bad_a); }, "angle_decode must be SIGMOID or RAW, got 2"));
}

static void test_tasks_allocate_nothing_when_warm() {
    // Pose and OBB configs of the small cases above, after NMS and end to end, decoded many times
    // after one warm-up.
    for (const bool end2end : {false, true}) {
        Config pose = task_config(6, 0);
        pose.num_keypoints = 2;
        Config obb = task_config(0, 1);
        pose.settings.end2end = obb.settings.end2end = end2end;
        std::vector<float> box(16, 0.5f), cls{0.6f, 0.7f, 0.9f, 0.8f}, kpt(24, 0.1f), angle(4, 0.3f);
        for (Config* cfg : {&pose, &obb}) {
            Decoder dec(*cfg);
            const void* ptrs[] = {box.data(), cls.data(), cfg == &pose ? kpt.data() : angle.data()};
            size_t elems[] = {16, 4, cfg == &pose ? size_t(24) : size_t(4)};
            dec.decode(ptrs, elems, 1);
            const long before = g_allocations.load();
            for (int i = 0; i < 200; ++i) dec.decode(ptrs, elems, 1);
            CHECK(g_allocations.load() == before);
            CHECK(dec.frame(0).second >= 1);
            if (end2end) {  // every anchor is a row (no suppression), with its keypoints or rotated box
                CHECK(dec.frame(0).second == 4);
                CHECK(cfg == &pose ? dec.keypoints(0).second == 4 : dec.rboxes(0).second == 4);
            }
        }
    }
}

int main() {
    test_gather_cell();
    test_detection_anchor();
    test_probiou();
    test_fast_nms();
    test_far_apart_skips_only_pairs_below_threshold();
    test_probiou_filter_matches_full_probiou();
    test_probiou_gaussians_match_make_gaussian();
    test_enclosing_boxes_match_enclosing_box();
    test_rotated_box();
    test_pose_decode();
    test_obb_decode();
    test_tasks_allocate_nothing_when_warm();
    test_yolo26_decodes_and_end2end_rows();
    return report();
}
