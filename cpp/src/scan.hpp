// The threshold scan: class tensor of one frame -> the cells where at least one class passes,
// with their passing classes, in HailoRT's order (row, column, class).
#pragma once

#include <cstdint>
#include <vector>

#include "score_threshold.hpp"
#include "tensor_view.hpp"

namespace hailo_decode {
namespace detail {

struct CellHit {
    int32_t row, col;
    uint32_t first_class;  // index into the scan's class list
    uint32_t class_count;
};

struct ScanResult {
    std::vector<CellHit> cells;
    std::vector<int32_t> classes;  // passing classes of every cell, back to back
    void clear() { cells.clear(); classes.clear(); }
};

// Appends to `out` (which keeps its capacity from frame to frame).
void scan_class_tensor(const TensorView& cls, const ClassScorer& scorer, const void* frame, ScanResult& out);

}  // namespace detail
}  // namespace hailo_decode
