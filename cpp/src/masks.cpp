// Mask windows and rendering (hailo_decode/masks.hpp): the bilinear sampling of PyTorch's CPU
// upsample (UpSampleKernel.cpp, generic kernel: weights from area_pixel_compute_source_index and
// guard_index_and_lambda, the height pair outermost), done separably: each needed prototype row
// is interpolated along x once, then each target row blends two of those rows. Every target pixel
// gets exactly the float operations of the whole-map interpolation, so cropping first changes
// nothing, and only the box's pixels are computed.
#include "hailo_decode/masks.hpp"

#include "kernels/mask_blend_tail.hpp"
#include "kernels/mask_kernels.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <string>

namespace hailo_decode {
namespace {

struct Tap {
    int i0, i1;
    float w0, w1;
};

// PyTorch's source index and weights for output index `dst` over an input axis of n cells.
inline Tap tap(float scale, float offset, int dst, int n) {
    float src = scale * (float(dst) + 0.5f) + offset;
    if (!(src > 0.0f)) src = 0.0f;
    int i0 = src >= float(n - 1) ? n - 1 : int(src);
    float l1 = src - float(i0);
    l1 = l1 < 0.0f ? 0.0f : (l1 > 1.0f ? 1.0f : l1);
    return {i0, i0 + (i0 < n - 1 ? 1 : 0), 1.0f - l1, l1};
}

inline int clampi(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }

// n bytes from s to d (not overlapping) in fixed-size moves, the last one overlapping the one
// before it: a crop row is a few dozen bytes, where a memcpy call cost more than the copy.
inline void copy_row(uint8_t* d, const uint8_t* s, size_t n) {
    if (n >= 16) {
        size_t i = 0;
        for (; i + 16 <= n; i += 16) std::memcpy(d + i, s + i, 16);
        if (i < n) std::memcpy(d + n - 16, s + n - 16, 16);
    } else if (n >= 8) {
        std::memcpy(d, s, 8);
        std::memcpy(d + n - 8, s + n - 8, 8);
    } else if (n >= 4) {
        std::memcpy(d, s, 4);
        std::memcpy(d + n - 4, s + n - 4, 4);
    } else {
        for (size_t i = 0; i < n; ++i) d[i] = s[i];
    }
}

// The source axis a sampling reads: n cells from `first` of the stage grid.
struct Axis {
    int first, n;
};

// Calls sink(y, a, b, h0, h1, n) for the target rows y in [y0, y1): the sampled value of column
// x0 + j is (a[j] * h0) + (b[j] * h1), a and b being the two source rows interpolated along x
// (columns [x0, x1), already inside the target and the crop). `values` holds the window `win` of
// the stage grid; the source is its cells [ay.first, + ay.n) x [ax.first, + ax.n). Stops when
// sink returns false.
template <typename Sink>
void sample_rows(const float* values, const MaskWindow& win, const MaskSampling& s, Axis ay, Axis ax, int y0,
                 int y1, int x0, int x1, MaskScratch& scratch, Sink sink) {
    const int nx = x1 - x0, ny = y1 - y0;
    scratch.ints.resize(size_t(2 * nx + 2 * ny));
    int32_t* ix0 = scratch.ints.data();
    int32_t* ix1 = ix0 + nx;
    int32_t* iy0 = ix1 + nx;
    int32_t* iy1 = iy0 + ny;
    // Weights first, then the x-interpolated rows, then one output row.
    const size_t weights = size_t(2 * nx + 2 * ny);
    const int dy = ay.first - win.row0, dx = ax.first - win.col0;  // source cell -> window cell
    int row_lo = 0, row_hi = 0;
    {
        const Tap first = tap(s.sy, s.oy, y0, ay.n), last = tap(s.sy, s.oy, y1 - 1, ay.n);
        row_lo = clampi(first.i0 + dy, 0, win.rows - 1);
        row_hi = clampi(last.i1 + dy, 0, win.rows - 1);
    }
    const size_t n_rows = size_t(row_hi - row_lo + 1);
    scratch.floats.resize(weights + n_rows * size_t(nx));
    float* wx0 = scratch.floats.data();
    float* wx1 = wx0 + nx;
    float* wy0 = wx1 + nx;
    float* wy1 = wy0 + ny;
    float* rows = wy1 + ny;
    for (int j = 0; j < nx; ++j) {
        const Tap t = tap(s.sx, s.ox, x0 + j, ax.n);
        ix0[j] = clampi(t.i0 + dx, 0, win.cols - 1);
        ix1[j] = clampi(t.i1 + dx, 0, win.cols - 1);
        wx0[j] = t.w0;
        wx1[j] = t.w1;
    }
    for (int i = 0; i < ny; ++i) {
        const Tap t = tap(s.sy, s.oy, y0 + i, ay.n);
        iy0[i] = clampi(t.i0 + dy, 0, win.rows - 1) - row_lo;
        iy1[i] = clampi(t.i1 + dy, 0, win.rows - 1) - row_lo;
        wy0[i] = t.w0;
        wy1[i] = t.w1;
    }
    // The exact 4x upsampling (prototypes at input / 4): target column 4k + j reads cells k - 1, k
    // (j = 0, 1) or k, k + 1 (j = 2, 3) with the weights 3/8 5/8, 1/8 7/8, 7/8 1/8, 5/8 3/8, the
    // values tap() gives there, so blocks of four columns whose cells lie inside the window and
    // the source take that pattern without index arrays; the columns around them the general loop.
    int fast_lo = 0, fast_hi = 0;  // columns j in [fast_lo, fast_hi) go by blocks
    int kb = 0;                    // first block's source cell
    if (s.sx == 0.25f && s.ox == -0.5f) {
        kb = std::max({win.col0 - ax.first + 1, 1, (x0 + 3) / 4});
        const int ke = std::min({win.col0 - ax.first + win.cols - 2, ax.n - 2, x1 / 4 - 1});  // last block's
        if (ke >= kb) {
            fast_lo = 4 * kb - x0;
            fast_hi = 4 * (ke + 1) - x0;
        }
    }
    for (size_t r = 0; r < n_rows; ++r) {
        const float* v = values + (size_t(row_lo) + r) * size_t(win.cols);
        float* o = rows + r * size_t(nx);
        auto general = [&](int j0, int j1) {
            for (int j = j0; j < j1; ++j) {
                float t = v[ix0[j]] * wx0[j];
                t = t + v[ix1[j]] * wx1[j];
                o[j] = t;
            }
        };
        general(0, fast_lo);
        const float* p = v + (kb - 1 + dx);
        for (int j = fast_lo; j < fast_hi; j += 4, ++p) {
            const float a = p[0], b = p[1], c = p[2];
            o[j] = a * 0.375f + b * 0.625f;
            o[j + 1] = a * 0.125f + b * 0.875f;
            o[j + 2] = b * 0.875f + c * 0.125f;
            o[j + 3] = b * 0.625f + c * 0.375f;
        }
        general(fast_hi > fast_lo ? fast_hi : fast_lo, nx);
    }
    for (int i = 0; i < ny; ++i) {
        const float* a = rows + size_t(iy0[i]) * size_t(nx);
        const float* b = rows + size_t(iy1[i]) * size_t(nx);
        if (!sink(y0 + i, a, b, wy0[i], wy1[i], nx)) return;
    }
}

// The source the sampling's taps read, in stage-grid cells.
inline void source_axes(const MaskGrid& g, const MaskSampling& s, Axis& ay, Axis& ax) {
    ay = {s.top, s.src_h > 0 ? s.src_h : g.proto_height * s.up - s.top};
    ax = {s.left, s.src_w > 0 ? s.src_w : g.proto_width * s.up - s.left};
}

// Runs sample_rows over the target rows [y0, y1) and columns [x0, x1): straight from the window's
// logits when up == 1; else first the stage grid's cells those samples read, each interpolated
// from the logits as F.interpolate(scale_factor=up) gives it (t = a h0; t + b h1, the float
// operations of the one-step blend), into scratch.stage.
template <typename Sink>
void sample(const float* logits, const MaskWindow& win, const MaskGrid& g, const MaskSampling& s, int y0, int y1,
            int x0, int x1, MaskScratch& scratch, Sink sink) {
    Axis ay, ax;
    source_axes(g, s, ay, ax);
    if (s.up <= 1) {
        sample_rows(logits, win, s, ay, ax, y0, y1, x0, x1, scratch, sink);
        return;
    }
    // The stage cells the target rows and columns read: the taps of the first and last pixel.
    const int r0 = tap(s.sy, s.oy, y0, ay.n).i0 + ay.first, r1 = tap(s.sy, s.oy, y1 - 1, ay.n).i1 + ay.first;
    const int c0 = tap(s.sx, s.ox, x0, ax.n).i0 + ax.first, c1 = tap(s.sx, s.ox, x1 - 1, ax.n).i1 + ax.first;
    MaskWindow stage_win;
    stage_win.row0 = r0;
    stage_win.col0 = c0;
    stage_win.rows = r1 - r0 + 1;
    stage_win.cols = c1 - c0 + 1;
    scratch.stage.resize(size_t(stage_win.rows) * size_t(stage_win.cols));
    float* stage = scratch.stage.data();
    MaskSampling up;
    up.sx = up.sy = 1.0f / float(s.up);
    up.ox = up.oy = -0.5f;
    const Axis py{0, g.proto_height}, px{0, g.proto_width};
    sample_rows(logits, win, up, py, px, r0, r1 + 1, c0, c1 + 1, scratch,
                [&](int y, const float* a, const float* b, float h0, float h1, int n) {
                    float* o = stage + size_t(y - r0) * size_t(stage_win.cols);
                    for (int j = 0; j < n; ++j) {
                        float t = a[j] * h0;
                        o[j] = t + b[j] * h1;
                    }
                    return true;
                });
    sample_rows(stage, stage_win, s, ay, ax, y0, y1, x0, x1, scratch, sink);
}

// Sampling the prototype grid at its own cells (sampling_to_proto): no interpolation at all.
inline bool is_identity(const MaskGrid& g, const MaskSampling& s) {
    return s.up == 1 && s.sx == 1.0f && s.sy == 1.0f && s.ox == -0.5f && s.oy == -0.5f && s.top == 0 && s.left == 0 &&
           (s.src_h == 0 || s.src_h == g.proto_height) && (s.src_w == 0 || s.src_w == g.proto_width) &&
           s.height == g.proto_height && s.width == g.proto_width;
}

// The target rows and columns that can be set: inside the target, the crop and [r0, r0+h) x [c0, c0+w).
inline bool settable(const MaskWindow& win, const MaskSampling& s, const float crop[4], int r0, int c0, int h, int w,
                     int& y0, int& y1, int& x0, int& x1) {
    if (win.rows <= 0 || win.cols <= 0 || s.height <= 0 || s.width <= 0) return false;
    int cx0, cx1, cy0, cy1;
    crop_range(crop[0], crop[2], s.width, cx0, cx1);
    crop_range(crop[1], crop[3], s.height, cy0, cy1);
    y0 = std::max(r0, cy0);
    y1 = std::min(r0 + h, cy1);
    x0 = std::max(c0, cx0);
    x1 = std::min(c0 + w, cx1);
    return y0 < y1 && x0 < x1;
}

}  // namespace

void crop_range(float a, float b, int n, int& lo, int& hi) {
    auto c = [n](float v) {
        if (!(v > 0.0f)) return 0;  // also NaN
        if (v >= float(n)) return n;
        return int(std::ceil(v));
    };
    lo = c(a);
    hi = std::max(lo, c(b));
}

MaskSampling sampling_to_input(const MaskGrid& g) {
    MaskSampling s;
    s.sx = float(g.proto_width) / float(g.image_width);
    s.sy = float(g.proto_height) / float(g.image_height);
    s.ox = s.oy = -0.5f;
    s.height = g.image_height;
    s.width = g.image_width;
    return s;
}

MaskSampling sampling_to_proto(const MaskGrid& g) {
    MaskSampling s;
    s.sx = s.sy = 1.0f;
    s.ox = s.oy = -0.5f;
    s.height = g.proto_height;
    s.width = g.proto_width;
    return s;
}

MaskSampling sampling_native(const MaskGrid& g, int height, int width) {
    if (height <= 0 || width <= 0 || g.proto_height <= 0 || g.proto_width <= 0)
        throw std::invalid_argument("mask target and prototype sizes must be positive, got " + std::to_string(height) +
                                    " x " + std::to_string(width));
    // Python's round() (half to even) on doubles, as Ultralytics computes these.
    auto py_round = [](double v) { return int64_t(std::nearbyint(v)); };
    const int64_t mh = g.proto_height, mw = g.proto_width, h = height, w = width;
    // process_mask_native: the input is taken as 4 x the prototype grid.
    const double gain = std::min(double(4 * mh) / double(h), double(4 * mw) / double(w));
    const int64_t pad = (4 * mh - std::max<int64_t>(py_round(double(h) * gain), 1)) |
                        (4 * mw - std::max<int64_t>(py_round(double(w) * gain), 1));
    const int64_t p = pad | (pad >= 0 ? pad / 2 : -((-pad + 1) / 2));  // Python's pad // 2
    const int64_t f = 4 / std::gcd<int64_t>(4, p);
    MaskSampling s;
    s.up = int(f);
    s.height = height;
    s.width = width;
    // scale_masks on the (f mh, f mw) grid: unchanged when it is already the target size.
    const int64_t ih = f * mh, iw = f * mw;
    if (ih == h && iw == w) {
        s.sx = s.sy = 1.0f;
        s.src_h = int(ih);
        s.src_w = int(iw);
        return s;
    }
    const double sg = std::min(double(ih) / double(h), double(iw) / double(w));
    const int64_t new_h = std::max<int64_t>(py_round(double(h) * sg), 1), new_w = std::max<int64_t>(py_round(double(w) * sg), 1);
    const int64_t top = py_round(double(ih - new_h) / 2 - 0.1), left = py_round(double(iw - new_w) / 2 - 0.1);
    // masks[..., top:bottom, left:right]: Python's slice, clipped to the grid.
    auto slice = [](int64_t a, int64_t b, int64_t n, int& first, int& count) {
        a = std::clamp<int64_t>(a, 0, n);
        b = std::clamp<int64_t>(b, 0, n);
        first = int(a);
        count = int(std::max<int64_t>(b - a, 0));
    };
    slice(top, top + new_h, ih, s.top, s.src_h);
    slice(left, left + new_w, iw, s.left, s.src_w);
    if (s.src_h == 0 || s.src_w == 0) throw std::invalid_argument("mask letterbox content is empty");
    // F.interpolate(size=...): scale float(input) / output.
    s.sy = float(s.src_h) / float(h);
    s.sx = float(s.src_w) / float(w);
    s.ox = s.oy = -0.5f;
    return s;
}

MaskWindow mask_window(const float box[4], const MaskGrid& g) {
    MaskWindow win;
    if (g.proto_height <= 0 || g.proto_width <= 0 || g.image_height <= 0 || g.image_width <= 0) return win;
    const MaskSampling in = sampling_to_input(g);
    // One axis: the cells the input-resolution crop samples and the prototype-resolution crop
    // holds, one more each side, within [0, cells).
    auto axis = [](float a, float b, int pixels, int cells, float scale, int& start, int& count) {
        int lo = cells, hi = -1;
        int p0, p1;
        crop_range(a, b, pixels, p0, p1);
        if (p0 < p1) {
            lo = std::min(lo, tap(scale, -0.5f, p0, cells).i0);
            hi = std::max(hi, tap(scale, -0.5f, p1 - 1, cells).i1);
        }
        const float ratio = float(double(cells) / double(pixels));  // Ultralytics' box scaling (float32)
        int q0, q1;
        crop_range(a * ratio, b * ratio, cells, q0, q1);
        if (q0 < q1) {
            lo = std::min(lo, q0);
            hi = std::max(hi, q1 - 1);
        }
        if (hi < lo) {
            start = count = 0;
            return;
        }
        lo = std::max(lo - 1, 0);
        hi = std::min(hi + 1, cells - 1);
        start = lo;
        count = hi - lo + 1;
    };
    int c0, nc, r0, nr;
    axis(box[0], box[2], g.image_width, g.proto_width, in.sx, c0, nc);
    axis(box[1], box[3], g.image_height, g.proto_height, in.sy, r0, nr);
    if (nc == 0 || nr == 0) return win;
    win.row0 = r0;
    win.col0 = c0;
    win.rows = nr;
    win.cols = nc;
    return win;
}

namespace {

// Zeros for every byte of a target rectangle that no row segment writes (nothing when the
// rectangle already holds zeros). Segments come in row order; when the rectangle is one
// contiguous run (rows of exactly its width), each gap between two segments is one memset.
class Gaps {
public:
    Gaps(uint8_t* out, int r0, int c0, int h, int w, size_t row_stride, bool zeroed)
        : out_(out), r0_(r0), c0_(c0), h_(h), w_(w), stride_(row_stride), zeroed_(zeroed),
          flat_(row_stride == size_t(w)), pending_(out), next_row_(r0) {}
    // The bytes before row y's segment [x_from, x_to); returns where the segment starts.
    uint8_t* segment(int y, int x_from, int x_to) {
        uint8_t* p = at(y, x_from);
        if (flat_) {
            fill(pending_, p);
            pending_ = at(y, x_to);
        } else {
            while (next_row_ < y) fill(at(next_row_, c0_), at(next_row_, c0_ + w_)), ++next_row_;
            fill(at(y, c0_), p);
            fill(at(y, x_to), at(y, c0_ + w_));
            next_row_ = y + 1;
        }
        return p;
    }
    // The rest of the rectangle after the last segment.
    void finish() {
        if (flat_) {
            fill(pending_, out_ + size_t(h_) * size_t(w_));
        } else {
            for (; next_row_ < r0_ + h_; ++next_row_) fill(at(next_row_, c0_), at(next_row_, c0_ + w_));
        }
    }

private:
    uint8_t* at(int y, int x) const { return out_ + size_t(y - r0_) * stride_ + size_t(x - c0_); }
    void fill(uint8_t* from, uint8_t* to) const {
        if (!zeroed_ && to > from) std::memset(from, 0, size_t(to - from));
    }
    uint8_t* out_;
    int r0_, c0_, h_, w_;
    size_t stride_;
    bool zeroed_, flat_;
    uint8_t* pending_;
    int next_row_;
};

// MaskRule::yolov5 at the input size (masks.hpp): the sampling is sampling_to_input's.
bool yolov5_input(const MaskGrid& g, const MaskSampling& s) {
    if (g.rule != MaskRule::yolov5) return false;
    const MaskSampling in = sampling_to_input(g);
    return s.up == 1 && s.sx == in.sx && s.sy == in.sy && s.ox == in.ox && s.oy == in.oy && s.height == in.height &&
           s.width == in.width && s.top == 0 && s.left == 0 && s.src_h == 0 && s.src_w == 0;
}

// The first target index x in [0, len] whose tap's i0 (by_i0) or i1 is >= q (taps grow with x).
int first_reaching(float scale, float offset, int n, int len, bool by_i0, int q) {
    int lo = 0, hi = len;
    while (lo < hi) {
        const int mid = lo + (hi - lo) / 2;
        const Tap t = tap(scale, offset, mid, n);
        if ((by_i0 ? t.i0 : t.i1) >= q) hi = mid; else lo = mid + 1;
    }
    return lo;
}

// YOLOv5's process_mask before the upsampling: the window's probabilities (sigmoid in float32),
// zero outside the box's prototype-grid crop, into scratch.probs; and the target pixels
// [y0, y1) x [x0, x1) whose taps read a kept cell (every other pixel samples zeros). False: none.
bool yolov5_probs(const float* logits, const MaskWindow& win, const MaskGrid& g, const MaskSampling& s,
                  const float box[4], MaskScratch& scratch, int& y0, int& y1, int& x0, int& x1) {
    if (win.rows <= 0 || win.cols <= 0) return false;
    // downsampled_bboxes *= mw / iw: the float32 box times the ratio rounded to float32.
    const float rx = float(double(g.proto_width) / double(g.image_width));
    const float ry = float(double(g.proto_height) / double(g.image_height));
    int q0, q1, p0, p1;  // kept cells: columns [q0, q1), rows [p0, p1)
    crop_range(box[0] * rx, box[2] * rx, g.proto_width, q0, q1);
    crop_range(box[1] * ry, box[3] * ry, g.proto_height, p0, p1);
    if (q0 >= q1 || p0 >= p1) return false;
    scratch.probs.resize(size_t(win.rows) * size_t(win.cols));
    float* out = scratch.probs.data();
    for (int r = 0; r < win.rows; ++r) {
        const int row = win.row0 + r;
        const bool row_kept = row >= p0 && row < p1;
        for (int c = 0; c < win.cols; ++c) {
            const int col = win.col0 + c;
            const size_t at = size_t(r) * size_t(win.cols) + size_t(c);
            out[at] = row_kept && col >= q0 && col < q1 ? 1.0f / (1.0f + std::exp(-logits[at])) : 0.0f;
        }
    }
    x0 = first_reaching(s.sx, s.ox, g.proto_width, s.width, false, q0);
    x1 = first_reaching(s.sx, s.ox, g.proto_width, s.width, true, q1);
    y0 = first_reaching(s.sy, s.oy, g.proto_height, s.height, false, p0);
    y1 = first_reaching(s.sy, s.oy, g.proto_height, s.height, true, p1);
    return x0 < x1 && y0 < y1;
}

// YOLOv5's rule over the target rectangle [r0, r0 + h) x [c0, c0 + w): the probabilities sampled
// as the ultralytics rule samples the logits, > 0.5, no crop at the target.
template <typename RowSink>
bool yolov5_rows(const float* logits, const MaskWindow& win, const MaskGrid& g, const MaskSampling& s,
                 const float box[4], int r0, int c0, int h, int w, MaskScratch& scratch, RowSink sink) {
    int y0, y1, x0, x1;
    if (!yolov5_probs(logits, win, g, s, box, scratch, y0, y1, x0, x1)) return false;
    y0 = std::max(y0, r0);
    y1 = std::min(y1, r0 + h);
    x0 = std::max(x0, c0);
    x1 = std::min(x1, c0 + w);
    if (y0 >= y1 || x0 >= x1) return false;
    Axis ay, ax;
    source_axes(g, s, ay, ax);
    sample_rows(scratch.probs.data(), win, s, ay, ax, y0, y1, x0, x1, scratch,
                [&](int y, const float* a, const float* b, float h0, float h1, int n) { return sink(y, x0, x1, a, b, h0, h1, n); });
    return true;
}

}  // namespace

size_t render_mask(const float* logits, const MaskWindow& win, const MaskGrid& g, const MaskSampling& s,
                   const float crop[4], int r0, int c0, int h, int w, uint8_t* out, size_t row_stride,
                   MaskScratch& scratch, bool out_zeroed) {
    if (h <= 0 || w <= 0) return 0;
    if (yolov5_input(g, s)) {
        Gaps v5(out, r0, c0, h, w, row_stride, out_zeroed);
        size_t set = 0;
        yolov5_rows(logits, win, g, s, crop, r0, c0, h, w, scratch,
                    [&](int y, int x0, int x1, const float* a, const float* b, float h0, float h1, int n) {
                        set += kernels::blend_row_tail(a, b, h0, h1, 0, size_t(n), v5.segment(y, x0, x1), 0.5f);
                        return true;
                    });
        v5.finish();
        return set;
    }
    // Every byte is written: zeros outside the settable rectangle (unless already zero), the blend
    // inside it (each byte once; the prototype grid's case below zeroes everything first).
    Gaps gaps(out, r0, c0, h, w, row_stride, out_zeroed);
    int y0, y1, x0, x1;
    if (!settable(win, s, crop, r0, c0, h, w, y0, y1, x0, x1)) {
        gaps.finish();
        return 0;
    }
    size_t set = 0;
    const kernels::MaskTable& k = kernels::mask_active();
    if (is_identity(g, s)) {
        // The prototype grid itself (process_mask(upsample=False)): each pixel is its own cell's
        // logit > 0, read straight from the window (which covers the crop's cells). The crop's
        // rows are short (a box a quarter of its input size), so the rectangle is zeroed first in
        // one pass (one memset when its rows are contiguous) and the rows' segments written over
        // it: a memset call per gap between two segments cost more than the segments' bytes
        // written twice.
        if (!out_zeroed) {
            if (row_stride == size_t(w)) {
                std::memset(out, 0, size_t(h) * size_t(w));
            } else {
                for (int y = 0; y < h; ++y) std::memset(out + size_t(y) * row_stride, 0, size_t(w));
            }
        }
        for (int y = y0; y < y1; ++y) {
            uint8_t* o = out + size_t(y - r0) * row_stride + size_t(x0 - c0);
            const int wr = clampi(y - win.row0, 0, win.rows - 1);
            const float* v = logits + size_t(wr) * size_t(win.cols);
            const int j0 = x0 - win.col0, j1 = x1 - win.col0;
            if (j0 >= 0 && j1 <= win.cols) {
                set += k.sign_row(v + j0, size_t(j1 - j0), o);
            } else {
                for (int x = x0; x < x1; ++x) {
                    const uint8_t b = v[clampi(x - win.col0, 0, win.cols - 1)] > 0.0f;
                    o[x - x0] = b;
                    set += b;
                }
            }
        }
        return set;
    }
    sample(logits, win, g, s, y0, y1, x0, x1, scratch,
           [&](int y, const float* a, const float* b, float h0, float h1, int n) {
               set += k.blend_row(a, b, h0, h1, size_t(n), gaps.segment(y, x0, x1));
               return true;
           });
    gaps.finish();
    return set;
}

void render_proto_mask(const uint8_t* signs, const MaskWindow& win, const MaskGrid& g, const float crop[4],
                       uint8_t* out, size_t row_stride) {
    const MaskSampling s = sampling_to_proto(g);
    int y0, y1, x0, x1;
    if (!settable(win, s, crop, 0, 0, s.height, s.width, y0, y1, x0, x1)) return;
    const int j0 = x0 - win.col0, j1 = x1 - win.col0;
    const bool inside = j0 >= 0 && j1 <= win.cols;  // always, for the decoder's windows
    for (int y = y0; y < y1; ++y) {
        uint8_t* o = out + size_t(y) * row_stride + size_t(x0);
        const uint8_t* v = signs + size_t(clampi(y - win.row0, 0, win.rows - 1)) * size_t(win.cols);
        if (inside) {
            copy_row(o, v + j0, size_t(j1 - j0));
        } else {
            for (int x = x0; x < x1; ++x) o[x - x0] = v[clampi(x - win.col0, 0, win.cols - 1)];
        }
    }
}

namespace {
// Whether any blended value a[j] * h0 + b[j] * h1 (the kernels' operations, in their order) is
// above cut: 0 for logits, 0.5 for YOLOv5's probabilities.
bool any_blend_above(const float* a, const float* b, float h0, float h1, int n, float cut) {
    for (int j = 0; j < n; ++j) {
        float t = a[j] * h0;
        t = t + b[j] * h1;
        if (t > cut) return true;
    }
    return false;
}
}  // namespace

bool mask_has_pixels(const float* logits, const MaskWindow& win, const MaskGrid& g, const MaskSampling& s,
                     const float crop[4], MaskScratch& scratch) {
    bool any = false;
    if (yolov5_input(g, s)) {
        yolov5_rows(logits, win, g, s, crop, 0, 0, s.height, s.width, scratch,
                    [&any](int, int, int, const float* a, const float* b, float h0, float h1, int n) {
                        any = any_blend_above(a, b, h0, h1, n, 0.5f);
                        return !any;
                    });
        return any;
    }
    int y0, y1, x0, x1;
    if (!settable(win, s, crop, 0, 0, s.height, s.width, y0, y1, x0, x1)) return false;
    sample(logits, win, g, s, y0, y1, x0, x1, scratch,
                [&any](int, const float* a, const float* b, float h0, float h1, int n) {
                    any = any_blend_above(a, b, h0, h1, n, 0.0f);
                    return !any;
                });
    return any;
}

}  // namespace hailo_decode
