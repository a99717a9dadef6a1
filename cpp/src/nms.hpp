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

// Kept boxes as structure of arrays, (y0, x0, y1, x1) whatever the output order, for the
// one-against-many IoU kernel.
struct BoxSoA {
    std::vector<float> y0, x0, y1, x1, area;
    void clear() { y0.clear(); x0.clear(); y1.clear(); x1.clear(); area.clear(); }
    size_t size() const { return area.size(); }
};

struct NmsWorkspace {
    std::vector<BoxSoA> kept;  // per class, or one list when agnostic
    std::vector<int64_t> output_of_class;
};

// Score-descending. hailort_sort: std::sort with HailoRT's comparator on the candidates in scan
// order, so equal scores end up exactly where HailoRT puts them. Otherwise ties keep scan order.
void sort_candidates(std::vector<Candidate>& candidates, bool hailort_sort);

// Greedy NMS over sorted candidates; appends the detections that survive the caps to `out`.
// Suppression and IoU as HailoRT's remove_overlapping_boxes / compute_iou: a candidate is dropped
// when a kept box (of its class unless agnostic) overlaps it past the threshold.
void suppress(const std::vector<Candidate>& sorted, const std::vector<Box>& boxes, const Settings& s,
              int num_classes, NmsWorkspace& ws, std::vector<Detection>& out);

}  // namespace detail
}  // namespace hailo_decode
