// Candidates -> kept detections: one sort by score, greedy suppression, caps.
#pragma once

#include <cstdint>
#include <vector>

#include "hailo_decode/types.hpp"
#include "scratch_vector.hpp"

namespace hailo_decode {
namespace detail {

struct Candidate {
    float score;
    int32_t class_id;
    uint32_t box;  // index into the frame's box list
};  // (a frame's candidates are listed in scan order: their position is the stable tie-break)

struct Box {
    float v[4];  // in the output order and units
    uint32_t head, cell;  // the anchor it was decoded from (Detection::head, ::cell)
};

// Kept boxes as structure of arrays, (y0, x0, y1, x1) whatever the output order, for the
// one-against-many IoU kernel: one arena per frame, each class's list a slice of it sized by the
// number of that class's candidates (a list never holds more), so nothing grows or is cleared
// per class. Between calls of suppress, count, tally and output_of_class are all 0 and start all
// unset (it sets up and resets only the entries of the frame's candidates).
struct NmsWorkspace {
    ScratchVector<float> y0, x0, y1, x1, area;  // the arena
    std::vector<uint32_t> start, count;         // per list (class, or one when agnostic)
    std::vector<uint32_t> tally;                // per list, 4 partial candidate counts (all 0 between calls)
    ScratchVector<uint32_t> lists;              // the frame's lists, in the order they first appear
    std::vector<int64_t> output_of_class;
    ScratchVector<uint32_t> slot;  // list by list (kernels' nms_list): each candidate's place in the arena
    ScratchVector<uint8_t> keep;   // per arena place: kept by its list's NMS
    ScratchVector<float> kept;     // the nms_list kernel's kept boxes
};

// Score-descending. hailort_sort: std::sort with HailoRT's comparator on the candidates in scan
// order, so equal scores end up exactly where HailoRT puts them. Otherwise ties keep scan order.
struct SortKey {
    float score;
    uint32_t at;  // position in the candidate list
};
struct SortScratch {
    ScratchVector<SortKey> keys;
    ScratchVector<Candidate> sorted;
};
void sort_candidates(ScratchVector<Candidate>& candidates, bool hailort_sort, SortScratch& scratch);

// HailoRT 5.0.1+'s YOLOv8 candidate order (Settings::hailort_v5): candidates [first, end) of one
// head, listed by row, column, class (the scan's order; boxes[cand.box].cell = row * width + col),
// reordered to row, class, column, as v5.2.0 yolov8_post_process.hpp lines 141-166 walk the class
// tensor. `keys` is scratch. Work only for rows holding more than one candidate.
void order_row_class_col(ScratchVector<Candidate>& candidates, size_t first, const ScratchVector<Box>& boxes,
                         uint32_t width, ScratchVector<uint64_t>& keys, ScratchVector<Candidate>& scratch);

// One arena, one slice per list (class, or the only list when agnostic): list l starts at
// start[l] with room for as many entries as it has candidates among sorted[0, n) (a list never
// holds more), so nothing grows or is cleared per class; count[l] (entries so far) is set to 0.
// Slices lie in list order, work per list: rotated NMS's verdict walk relies on slots rising with
// the list index. Greedy NMS (suppress) carves the same slices sparsely instead, in the order the
// frame's lists first appear, so that its work is per candidate, not per class (80 classes, a few
// present).
void carve_lists(const ScratchVector<Candidate>& sorted, size_t n, size_t lists, bool agnostic,
                 std::vector<uint32_t>& start, std::vector<uint32_t>& count);

// Greedy NMS over sorted candidates; appends the detections that survive the caps to `out`.
// Suppression and IoU as HailoRT's remove_overlapping_boxes / compute_iou: a candidate is dropped
// when a kept box (of its class unless agnostic) overlaps it past the threshold.
void suppress(const ScratchVector<Candidate>& sorted, const ScratchVector<Box>& boxes, const Settings& s,
              int num_classes, NmsWorkspace& ws, std::vector<Detection>& out);

}  // namespace detail
}  // namespace hailo_decode
