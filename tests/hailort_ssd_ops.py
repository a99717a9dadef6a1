"""NumPy transliterations of HailoRT 4.23's ssd and yolov5_bbox_only ops, written from their source
for the tests (test-only references, not the code under test):

* ssd: libhailort/src/net_flow/ops/ssd_post_process.cpp, SSDPostProcessOp::execute and
  extract_detections (lines 131-240: pairs in reg_to_cls_inputs' std::map order, then row, column,
  anchor; anchor centre col * (1 / W) + 0.5 * (1 / W)); ssd_post_process.hpp extract_bbox_detections
  (lines 75-124: t* dequantized, tx, ty / centers_scale_factor, tw, th / bbox_dimensions_scale_factor,
  w = exp(tw) * wa, x_center = tx * wa + xcenter_a, box centre -/+ half size, never clipped) and
  extract_bbox_classes (lines 46-73: background skipped, ids after a first background moved down,
  `class_score < nms_score_th` skipped); then NmsPostProcessOp::hailo_nms_format
  (nms_post_process.cpp lines 114-190, 236-252): std::sort by score (libstdc++'s permutation, the
  compiled oracle of reference_decoder), same-class IoU >= th removal with compute_iou (lines
  99-112), and fill_nms_by_class_format_buffer, which loops over nms_config.number_of_classes (the
  classes with the background: its last count lands after the records, a 0.0f in the frame).
* yolov5_bbox_only: yolov5_bbox_only_post_process.{hpp,cpp} (execute lines 92-120: inputs in name
  order; add_bboxes hpp lines 49-93: per row, column, anchor {y_min, x_min, y_max, x_max} of
  YOLOv5PostProcessOp::decode (yolov5_post_process.cpp lines 101-113), objectness, then every class
  value; should_sigmoid() is false).

Inputs are logical (H, W, C) raw arrays; the op's NHCW addressing (channel c of cell (row, col) at
row * Wp * Cp + c * Wp + col) reads the same element, so the logical arrays are read directly.
"""

from __future__ import annotations

from typing import Dict, List, Mapping, Sequence, Tuple

import numpy as np

from hailort_anchor_ops import deq, expf, powf
from reference_decoder import hailort_sort_permutation

F = np.float32
REMOVED = F(0.0)  # REMOVED_CLASS_SCORE (nms_post_process.hpp)


def _iou(a: np.ndarray, b: np.ndarray) -> F:
    """compute_iou: boxes (y_min, x_min, y_max, x_max), float32."""
    ow = F(min(a[3], b[3]) - max(a[1], b[1]))
    oh = F(min(a[2], b[2]) - max(a[0], b[0]))
    if ow <= 0 or oh <= 0:
        return F(0.0)
    inter = F(ow * oh)
    a1 = F(F(a[2] - a[0]) * F(a[3] - a[1]))
    a2 = F(F(b[2] - b[0]) * F(b[3] - b[1]))
    return F(inter / F(F(a1 + a2) - inter))


def nms_by_class_frame(dets: List[Tuple[np.ndarray, F, int]], *, loop_classes: int, out_classes: int,
                       iou_th: float, max_per_class: int) -> np.ndarray:
    """hailo_nms_format with a BY_CLASS output: dets (box yxyx, score, class id) in candidate order."""
    counts = [0] * loop_classes
    for _, _, c in dets:
        counts[c] += 1
    order = hailort_sort_permutation(np.array([d[1] for d in dets], F)) if dets else []
    boxes = [dets[i][0] for i in order]
    scores = [F(dets[i][1]) for i in order]
    classes = [dets[i][2] for i in order]
    for i in range(len(scores)):  # remove_overlapping_boxes
        if scores[i] == REMOVED:
            continue
        for j in range(i + 1, len(scores)):
            if scores[j] == REMOVED:
                continue
            if classes[i] == classes[j] and _iou(boxes[i], boxes[j]) >= F(iou_th):
                scores[j] = REMOVED
                counts[classes[j]] -= 1
    frame = np.zeros(out_classes * (1 + 5 * max_per_class), F)
    buf = frame.view(np.uint8)
    before = [0] * loop_classes
    for c in range(loop_classes):  # fill_nms_by_class_format_buffer
        counts[c] = min(counts[c], max_per_class)
        before[c] = 0 if c == 0 else before[c - 1] + counts[c - 1]
        off = c * 4 + before[c] * 20
        if off + 4 <= buf.size:  # (the op writes it whatever; the tests keep it inside the frame)
            buf[off:off + 4] = np.array([counts[c]], F).view(np.uint8)
    for i in range(len(scores)):
        c = classes[i]
        if scores[i] == REMOVED or counts[c] == 0:
            continue
        off = (c + 1) * 4 + before[c] * 20
        buf[off:off + 20] = np.array([*boxes[i], scores[i]], F).view(np.uint8)
        before[c] += 1
        counts[c] -= 1
    return frame


def ssd_op(pairs: Mapping[str, Tuple[str, np.ndarray, np.ndarray]], quant: Mapping[str, Tuple[float, float]],
           anchors: Mapping[str, Sequence[Tuple[float, float]]], *, classes: int, background: int, score_th: float,
           iou_th: float, max_per_class: int, centers_scale: int, dims_scale: int,
           reg_index: Tuple[int, int, int, int] = (1, 0, 3, 2)) -> np.ndarray:
    """pairs: reg name -> (cls name, reg raw (H, W, A*4), cls raw (H, W, A*classes)); quant and
    anchors by output name ((w, h) pairs, float32 as the op holds them); classes counts the
    background; background -1: no background removal. reg_index: (tx, ty, tw, th) indices.
    Returns the HAILO_NMS_BY_CLASS frame (classes, or classes - 1 with a background)."""
    x_i, y_i, w_i, h_i = reg_index
    th = F(score_th)
    dets: List[Tuple[np.ndarray, F, int]] = []
    for reg_name in sorted(pairs):  # std::map<std::string, std::string> reg_to_cls_inputs
        cls_name, reg_raw, cls_raw = pairs[reg_name]
        reg, cls = deq(reg_raw, *quant[reg_name]), deq(cls_raw, *quant[cls_name])
        H, W, _ = reg.shape
        layer = [(F(w), F(h)) for w, h in anchors[reg_name]]
        for row in range(H):
            for col in range(W):
                for a, (wa, ha) in enumerate(layer):
                    w_stride, h_stride = F(F(1.0) / F(W)), F(F(1.0) / F(H))
                    xc_a = F(F(F(col) * w_stride) + F(F(0.5) * w_stride))
                    yc_a = F(F(F(row) * h_stride) + F(F(0.5) * h_stride))
                    r = reg[row, col, a * 4:(a + 1) * 4]
                    tx = F(r[x_i] / F(centers_scale))
                    ty = F(r[y_i] / F(centers_scale))
                    tw = F(r[w_i] / F(dims_scale))
                    tht = F(r[h_i] / F(dims_scale))
                    w = F(expf(tw) * wa)
                    h = F(expf(tht) * ha)
                    x_c = F(F(tx * wa) + xc_a)
                    y_c = F(F(ty * ha) + yc_a)
                    box = np.array([y_c - h / F(2.0), x_c - w / F(2.0), y_c + h / F(2.0), x_c + w / F(2.0)], F)
                    for k in range(classes):
                        cid = k
                        if background >= 0:
                            if k == background:
                                continue
                            if background == 0:
                                cid -= 1
                        score = cls[row, col, a * classes + k]
                        if score < th:
                            continue
                        dets.append((box, F(score), cid))
    out_classes = classes - (1 if background >= 0 else 0)
    return nms_by_class_frame(dets, loop_classes=classes, out_classes=out_classes, iou_th=iou_th,
                              max_per_class=max_per_class)


def yolov5_bbox_only_op(tensors: Mapping[str, np.ndarray], quant: Mapping[str, Tuple[float, float]],
                        anchors: Mapping[str, Sequence[Tuple[int, int]]], *, num_classes: int,
                        image_hw: Tuple[int, int]) -> np.ndarray:
    """tensors: name -> logical (H, W, A * (5 + nc)) raw values. The op's float32 NHWC output
    (1, proposals, 5 + nc)."""
    ih, iw = F(image_hw[0]), F(image_hw[1])
    e = 5 + num_classes
    rows: List[np.ndarray] = []
    for name in sorted(tensors):  # std::map<std::string, MemoryView>
        x = deq(tensors[name], *quant[name])
        H, W, _ = x.shape
        for row in range(H):
            for col in range(W):
                for a, (aw, ah) in enumerate(anchors[name]):
                    v = x[row, col, a * e:(a + 1) * e]
                    tx, ty, tw, tht = v[0], v[1], v[2], v[3]
                    w = F(F(powf(F(2.0) * tw, 2.0) * F(aw)) / iw)
                    h = F(F(powf(F(2.0) * tht, 2.0) * F(ah)) / ih)
                    xc = F(F(F(tx * F(2.0)) - F(0.5)) + F(col)) / F(W)
                    yc = F(F(F(ty * F(2.0)) - F(0.5)) + F(row)) / F(H)
                    x_min = F(xc - w / F(2.0))
                    y_min = F(yc - h / F(2.0))
                    rows.append(np.concatenate([np.array([y_min, x_min, y_min + h, x_min + w], F), v[4:5], v[5:]]))
    return np.array(rows, F).reshape(1, -1, e)


def ssd_frame_records(frame: np.ndarray, classes: int, max_per_class: int) -> Dict[int, np.ndarray]:
    """class id -> its (n, 5) records of a BY_CLASS frame (for messages)."""
    out, at = {}, 0
    for c in range(classes):
        n = int(frame[at])
        out[c] = frame[at + 1:at + 1 + 5 * n].reshape(n, 5)
        at += 1 + 5 * n
    return out
