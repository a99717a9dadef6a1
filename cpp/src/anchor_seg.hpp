// YOLOv5/YOLOv7-seg heads (HeadKind::YOLOV5 with Config::proto_output): each anchor's entry in its
// head's tensor is (x, y, w, h, objectness, classes, then the prototype's count of mask
// coefficients), A x (5 + classes + coefficients) channels a cell. A detection names its anchor
// through Detection::cell = (row * W + col) * A + anchor (the plain row * W + col of the other
// heads would not say which anchor's coefficients to read).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "hailo_decode/types.hpp"
#include "tensor_view.hpp"

namespace hailo_decode {
namespace detail {

// The mask coefficient count of a YOLOv5 config: the prototype's channels, 0 without one.
int anchor_coefficients(const Config& cfg, const std::vector<TensorView>& views);

// Each (head, anchor)'s coefficients as a view over its head's tensor: channel
// a * (5 + classes + n) + 5 + classes + k, with that channel's quantization. Entry first[h] + a.
struct AnchorCoefViews {
    std::vector<TensorView> views;
    std::vector<size_t> first;  // per head
    std::vector<int> anchors;   // per head
};
AnchorCoefViews make_anchor_coef_views(const Config& cfg, const std::vector<TensorView>& views);

// Row, column and anchor of a YOLOv5-seg detection's cell (grid width W, A anchors).
inline void split_anchor_cell(uint32_t cell, int anchors, int width, int& row, int& col, int& anchor) {
    const uint32_t rc = cell / uint32_t(anchors);
    anchor = int(cell - rc * uint32_t(anchors));
    row = int(rc / uint32_t(width));
    col = int(rc - uint32_t(row) * uint32_t(width));
}

}  // namespace detail
}  // namespace hailo_decode
