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
    return p;
}

void reserve_scan(const ScanPlan& plan, ScanResult& out) {
    if (out.positions.size() < plan.row_len) out.positions.resize(plan.row_len);
}

namespace {

template <typename T>
bool passes_exactly(const ClassScorer& s, T value, int c);
template <>
bool passes_exactly<uint8_t>(const ClassScorer& s, uint8_t q, int c) { return int32_t(q) >= s.q_min[size_t(c)]; }
template <>
bool passes_exactly<uint16_t>(const ClassScorer& s, uint16_t q, int c) { return int32_t(q) >= s.q_min[size_t(c)]; }
template <>
bool passes_exactly<float>(const ClassScorer& s, float x, int c) { return x >= s.x_min[size_t(c)]; }

template <typename T>
size_t run_kernel(const kernels::Table& k, const T* row, const ScanPlan& p, uint32_t* out);
template <>
size_t run_kernel<uint8_t>(const kernels::Table& k, const uint8_t* row, const ScanPlan& p, uint32_t* out) {
    return k.scan_u8(row, p.limit_u8.data(), p.row_len, out);
}
template <>
size_t run_kernel<uint16_t>(const kernels::Table& k, const uint16_t* row, const ScanPlan& p, uint32_t* out) {
    return k.scan_u16(row, p.limit_u16.data(), p.row_len, out);
}
template <>
size_t run_kernel<float>(const kernels::Table& k, const float* row, const ScanPlan& p, uint32_t* out) {
    return k.scan_f32(row, p.limit_f32.data(), p.row_len, out);
}

template <typename T>
void scan_rows(const ScanPlan& p, const TensorView& v, const ClassScorer& s, const T* frame, ScanResult& out) {
    const kernels::Table& k = kernels::active();
    const uint32_t C = uint32_t(v.channels);
    for (int r = 0; r < v.height; ++r) {
        const T* row = frame + size_t(r) * v.row_stride;
        const size_t n = run_kernel(k, row, p, out.positions.data());
        if (n == 0) continue;
        out.row_keys.clear();
        for (size_t i = 0; i < n; ++i) {
            const uint32_t pos = out.positions[i];
            const int32_t c = p.pos_class[pos];
            if (c < 0 || !passes_exactly<T>(s, row[pos], c)) continue;  // padding, or a limit clamped to the maximum
            out.row_keys.push_back(uint32_t(p.pos_col[pos]) * C + uint32_t(c));
        }
        if (!p.cell_ordered) std::sort(out.row_keys.begin(), out.row_keys.end());
        for (size_t i = 0; i < out.row_keys.size();) {
            const int32_t col = int32_t(out.row_keys[i] / C);
            const uint32_t first = uint32_t(out.classes.size());
            for (; i < out.row_keys.size() && int32_t(out.row_keys[i] / C) == col; ++i)
                out.classes.push_back(int32_t(out.row_keys[i] % C));
            out.cells.push_back({r, col, first, uint32_t(out.classes.size()) - first});
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
                if (passes_exactly<T>(s, cell[v.channel_offset[size_t(c)]], c)) out.classes.push_back(c);
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
