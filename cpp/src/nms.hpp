// Candidates -> kept detections: one sort by score, greedy suppression, caps.
#pragma once

#include <cstdint>
#include <vector>

#include "hailo_decode/types.hpp"

namespace hailo_decode {
namespace detail {

struct Candidate {
    float score;
    int32_t class_id;
    uint32_t box;  // index into the frame's box list
    uint32_t seq;  // scan order, the stable tie-break
};

struct Box {
    float v[4];  // in the output order and units
};

struct NmsWorkspace {
    struct Kept {
        Box box;
        int32_t class_id;
        int32_t prev_same_class;  // previous kept box of the same class, -1 at the start
    };
    std::vector<Kept> kept;
    std::vector<int32_t> last_kept_of_class;
    std::vector<int64_t> output_of_class;
};

// Score-descending. hailort_sort: std::sort with HailoRT's comparator on the candidates in scan
// order, so equal scores end up exactly where HailoRT puts them. Otherwise ties keep scan order.
void sort_candidates(std::vector<Candidate>& candidates, bool hailort_sort);

// IoU as HailoRT's NmsPostProcessOp::compute_iou computes it (no +1, 0 without overlap).
float iou(const Box& a, const Box& b, bool yxyx);

// Greedy NMS over sorted candidates; appends the detections that survive the caps to `out`.
void suppress(const std::vector<Candidate>& sorted, const std::vector<Box>& boxes, const Settings& s,
              int num_classes, NmsWorkspace& ws, std::vector<Detection>& out);

}  // namespace detail
}  // namespace hailo_decode
