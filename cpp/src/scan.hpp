// The threshold scan: class tensor of one frame -> the cells where at least one class passes,
// with their passing classes, in HailoRT's order (row, column, class).
//
// Orders whose rows are contiguous (NHWC/FCR, NHCW, F8CR, padded or not) are scanned a row at a
// time: the row's raw values are compared, by the SIMD kernel, with a precomputed pattern holding
// each position's smallest passing value (padding and never-passing classes get the type's maximum,
// and the few positions flagged are then checked exactly). When every position has the same limit
// (one threshold, rows without padding: the common case) the row is compared with that one value
// instead, reading nothing but the class bytes. Cells with no passing class are never looked at
// again. NCHW (planar) takes a plain per-cell loop.
#pragma once

#include <cstdint>
#include <vector>

#include "score_threshold.hpp"
#include "scratch_vector.hpp"
#include "tensor_view.hpp"

namespace hailo_decode {
namespace detail {

struct CellHit {
    int32_t row, col;
    uint32_t first_class;  // index into ScanResult::classes
    uint32_t class_count;
};

struct ScanResult {
    ScratchVector<CellHit> cells;
    ScratchVector<int32_t> classes;  // passing classes of every cell, back to back
    ScratchVector<float> scores;   // and their scores, taken as the scan finds them (read again
                                   // after the whole tensor's scan, they came from further out)
    // scratch, kept from frame to frame
    std::vector<uint32_t> positions;
    std::vector<uint64_t> row_keys;  // (col << 32 | class) of one row's hits
    void clear() {
        cells.clear();
        classes.clear();
        scores.clear();
    }
};

struct ScanPlan {
    bool row_scan = false;          // false: per-cell loop (NCHW)
    bool cell_ordered = false;      // positions in a row already come in (col, class) order
    size_t row_len = 0;
    bool uniform = false;           // integer dtypes: every limit equals uniform_limit
    uint32_t uniform_limit = 0;
    bool dense_exact = false;       // uniform, NHWC without padding, and the limit is every class's exact one
    // dense_exact: rows are scanned rows_per_call at a time (up to kCallElements values), and
    // pos / C, cell / W are (x * div) >> 32 (div = ceil(2^32 / divisor); 2^32 for a divisor of 1)
    // (2^19: a yolov8n stride-8 tensor in one call. Each call costs a few dozen cycles and an
    // unaligned head and tail; at 2^15 values a call the scan was 3-4 % slower. The positions
    // buffer holds a call's worth: 2 MiB, written only where values pass.)
    static constexpr size_t kCallElements = size_t(1) << 19;
    int rows_per_call = 1;
    uint32_t channels = 0;
    uint64_t div_channels = 0, div_width = 0;
    std::vector<uint8_t> limit_u8;  // one of these three, by dtype
    std::vector<uint16_t> limit_u16;
    std::vector<float> limit_f32;
    std::vector<int32_t> pos_col, pos_class;  // -1 class: padding
};

ScanPlan make_scan_plan(const TensorView& cls, const ClassScorer& scorer);

// Scans one frame's class tensor and appends its hits, with their scores, to `out`; out.positions must be as large as
// reserve_scan makes it.
void scan_class_tensor(const ScanPlan& plan, const TensorView& cls, const ClassScorer& scorer, const void* frame,
                       ScanResult& out);
void reserve_scan(const ScanPlan& plan, ScanResult& out);

}  // namespace detail
}  // namespace hailo_decode
