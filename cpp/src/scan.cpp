#include "scan.hpp"

#include <algorithm>
#include <limits>

#include "kernels/kernels.hpp"

namespace hailo_decode {
namespace detail {

ScanPlan make_scan_plan(const TensorView& v, const ClassScorer& s) {
    ScanPlan p;
    const Order order = v.spec->order;
    if (order == Order::NCHW) return p;
    p.row_scan = true;
    p.cell_ordered = order == Order::NHWC;
    p.row_len = v.row_stride;
    p.pos_col.assign(p.row_len, 0);
    p.pos_class.assign(p.row_len, -1);
    for (int w = 0; w < v.width; ++w)
        for (int c = 0; c < v.channels; ++c) {
            const size_t pos = size_t(w) * v.col_stride + v.channel_offset[size_t(c)];
            p.pos_col[pos] = w;
            p.pos_class[pos] = c;
        }
    auto build = [&](auto& limits, auto never, auto limit_of) {
        limits.assign(p.row_len, never);
        for (size_t pos = 0; pos < p.row_len; ++pos)
            if (p.pos_class[pos] >= 0) limits[pos] = limit_of(p.pos_class[pos]);
    };
    switch (v.dtype) {
        case DType::U8:
            build(p.limit_u8, uint8_t(255), [&](int c) { return uint8_t(std::min<int32_t>(s.q_min[size_t(c)], 255)); });
            break;
        case DType::U16:
            build(p.limit_u16, uint16_t(65535), [&](int c) { return uint16_t(std::min<int32_t>(s.q_min[size_t(c)], 65535)); });
            break;
        case DType::F32:
            build(p.limit_f32, std::numeric_limits<float>::quiet_NaN(), [&](int c) { return s.x_min[size_t(c)]; });
            break;
    }
    auto set_uniform = [&](const auto& limits) {
        p.uniform = !limits.empty() && std::all_of(limits.begin(), limits.end(), [&](auto l) { return l == limits[0]; });
        if (p.uniform) p.uniform_limit = limits[0];
    };
    if (v.dtype == DType::U8) set_uniform(p.limit_u8);
    if (v.dtype == DType::U16) set_uniform(p.limit_u16);
    // Dense rows (NHWC, no padding) against one exact limit: a flagged position is a hit, and its
    // column and class follow from pos = col * C + class, by a multiply instead of two tables
    // that the stream through the caches keeps evicting. ceil(2^32 / C) divides exactly while
    // pos * C < 2^32.
    const size_t C = size_t(v.channels);
    p.dense_exact = p.uniform && p.cell_ordered && p.row_len == size_t(v.width) * C &&
                    uint64_t(p.row_len) * C < (uint64_t(1) << 32) &&
                    std::all_of(s.q_min.begin(), s.q_min.end(), [&](int32_t q) { return uint32_t(q) == p.uniform_limit; });
    p.channels = uint32_t(C);
    p.div_channels = ((uint64_t(1) << 32) + C - 1) / C;
    if (p.dense_exact) {
        // Up to kCallElements per call (see there); while every product pos * C and cell * W
        // stays below 2^32 the two divisions by multiplication are exact (else the general scan).
        p.rows_per_call = int(std::max<size_t>(1, std::min<size_t>(ScanPlan::kCallElements / p.row_len, size_t(v.height))));
        const uint64_t W = uint64_t(v.width);
        p.div_width = ((uint64_t(1) << 32) + W - 1) / W;
        if (uint64_t(p.rows_per_call) * p.row_len * C >= (uint64_t(1) << 32)) p.dense_exact = false;
    }
    return p;
}

void reserve_scan(const ScanPlan& plan, ScanResult& out) {
    const size_t need = plan.dense_exact ? size_t(plan.rows_per_call) * plan.row_len : plan.row_len;
    if (out.positions.size() < need) out.positions.resize(need);
}

namespace {

// n: row_len, or a multiple of it for uniform limits (rows back to back).
template <typename T>
size_t run_kernel(const kernels::Table& k, const T* row, const ScanPlan& p, size_t n, uint32_t* out);
template <>
size_t run_kernel<uint8_t>(const kernels::Table& k, const uint8_t* row, const ScanPlan& p, size_t n, uint32_t* out) {
    if (p.uniform) return k.scan_u8_uniform(row, uint8_t(p.uniform_limit), n, out);
    return k.scan_u8(row, p.limit_u8.data(), n, out);
}
template <>
size_t run_kernel<uint16_t>(const kernels::Table& k, const uint16_t* row, const ScanPlan& p, size_t n, uint32_t* out) {
    if (p.uniform) return k.scan_u16_uniform(row, uint16_t(p.uniform_limit), n, out);
    return k.scan_u16(row, p.limit_u16.data(), n, out);
}
template <>
size_t run_kernel<float>(const kernels::Table& k, const float* row, const ScanPlan& p, size_t n, uint32_t* out) {
    return k.scan_f32(row, p.limit_f32.data(), n, out);
}

// Appends (col, class) and its score to the row's hits, given in (col, class) order: a new cell
// when the column changes.
inline void append_hit(ScanResult& out, int32_t row, int32_t col, int32_t c, float score) {
    if (out.cells.empty() || out.cells.back().row != row || out.cells.back().col != col) {
        CellHit& cell = out.cells.emplace_back();  // in place: see decode_hits
        cell.row = row;
        cell.col = col;
        cell.first_class = uint32_t(out.classes.size());
        cell.class_count = 0;
    }
    out.classes.push_back(c);
    out.scores.push_back(score);
    ++out.cells.back().class_count;
}

// The n hits of one call over whole dense rows starting at row first_row (dense_exact: every
// flagged position is a hit, and no cell continues from the previous call). The lists grow once
// and are written through pointers; class counts follow from where the next cell starts.
template <typename T>
void append_dense_hits(const ScanPlan& p, const TensorView& v, const ClassScorer& s, const T* rows_start,
                       int32_t first_row, size_t n, ScanResult& out) {
    if (n == 0) return;
    const size_t k0 = out.classes.size(), c0 = out.cells.size();
    out.classes.resize(k0 + n);
    out.scores.resize(k0 + n);
    out.cells.resize(c0 + n);  // at most a new cell a hit; trimmed below
    const uint32_t* positions = out.positions.data();
    int32_t* classes = out.classes.data() + k0;
    float* scores = out.scores.data() + k0;
    CellHit* cells = out.cells.data();
    size_t n_cells = c0;
    uint32_t last_cell = ~0u;
    for (size_t i = 0; i < n; ++i) {
        const uint32_t pos = positions[i];
        const uint32_t cell = uint32_t((pos * p.div_channels) >> 32);
        const int32_t c = int32_t(pos - cell * p.channels);
        if (cell != last_cell) {
            const uint32_t row = uint32_t((cell * p.div_width) >> 32);
            CellHit& hit = cells[n_cells++];
            hit.row = first_row + int32_t(row);
            hit.col = int32_t(cell - row * uint32_t(v.width));
            hit.first_class = uint32_t(k0 + i);
            last_cell = cell;
        }
        classes[i] = c;
        scores[i] = class_score(s, v, rows_start, pos, c);
    }
    for (size_t j = c0; j < n_cells; ++j)
        cells[j].class_count = (j + 1 < n_cells ? cells[j + 1].first_class : uint32_t(k0 + n)) - cells[j].first_class;
    out.cells.resize(n_cells);
}

template <typename T>
void scan_rows(const ScanPlan& p, const TensorView& v, const ClassScorer& s, const T* frame, ScanResult& out) {
    const kernels::Table& k = kernels::active();
    if (p.dense_exact) {  // rows back to back: several per kernel call (see ScanPlan::rows_per_call)
        for (int r = 0; r < v.height; r += p.rows_per_call) {
            const int rows = std::min(p.rows_per_call, v.height - r);
            const T* rows_start = frame + size_t(r) * v.row_stride;
            const size_t n = run_kernel(k, rows_start, p, size_t(rows) * p.row_len, out.positions.data());
            append_dense_hits(p, v, s, rows_start, r, n, out);
        }
        return;
    }
    const int32_t* pos_class = p.pos_class.data();
    const int32_t* pos_col = p.pos_col.data();
    for (int r = 0; r < v.height; ++r) {
        const T* row = frame + size_t(r) * v.row_stride;
        const size_t n = run_kernel(k, row, p, p.row_len, out.positions.data());
        if (n == 0) continue;
        const uint32_t* positions = out.positions.data();
        // padding, or a limit clamped to the type's maximum: not a hit
        auto real_hit = [&](uint32_t pos) { return pos_class[pos] >= 0 && raw_passes<T>(s, row[pos], pos_class[pos]); };
        if (p.cell_ordered) {  // positions already in (col, class) order
            for (size_t i = 0; i < n; ++i) {
                const uint32_t pos = positions[i];
                if (real_hit(pos)) append_hit(out, r, pos_col[pos], pos_class[pos], class_score(s, v, row, pos, pos_class[pos]));
            }
        } else {
            out.row_keys.clear();
            for (size_t i = 0; i < n; ++i)
                if (real_hit(positions[i]))
                    out.row_keys.push_back(uint64_t(uint32_t(pos_col[positions[i]])) << 32 | uint32_t(pos_class[positions[i]]));
            std::sort(out.row_keys.begin(), out.row_keys.end());
            for (uint64_t key : out.row_keys) {
                const int32_t col = int32_t(key >> 32), c = int32_t(key & 0xffffffffu);
                const size_t pos = size_t(col) * v.col_stride + v.channel_offset[size_t(c)];
                append_hit(out, r, col, c, class_score(s, v, row, pos, c));
            }
        }
    }
}

template <typename T>
void scan_cells(const TensorView& v, const ClassScorer& s, const T* frame, ScanResult& out) {
    for (int r = 0; r < v.height; ++r)
        for (int w = 0; w < v.width; ++w) {
            const T* cell = frame + v.cell(r, w);
            const uint32_t first = uint32_t(out.classes.size());
            for (int c = 0; c < v.channels; ++c)
                if (raw_passes<T>(s, cell[v.channel_offset[size_t(c)]], c)) {
                    out.classes.push_back(c);
                    out.scores.push_back(class_score(s, v, cell, v.channel_offset[size_t(c)], c));
                }
            if (out.classes.size() != first) out.cells.push_back({r, w, first, uint32_t(out.classes.size()) - first});
        }
}

template <typename T>
void scan_typed(const ScanPlan& p, const TensorView& v, const ClassScorer& s, const void* frame, ScanResult& out) {
    const T* f = static_cast<const T*>(frame);
    if (p.row_scan) scan_rows<T>(p, v, s, f, out); else scan_cells<T>(v, s, f, out);
}

}  // namespace

void scan_class_tensor(const ScanPlan& p, const TensorView& v, const ClassScorer& s, const void* frame, ScanResult& out) {
    switch (v.dtype) {
        case DType::U8: scan_typed<uint8_t>(p, v, s, frame, out); break;
        case DType::U16: scan_typed<uint16_t>(p, v, s, frame, out); break;
        case DType::F32: scan_typed<float>(p, v, s, frame, out); break;
    }
}

}  // namespace detail
}  // namespace hailo_decode
