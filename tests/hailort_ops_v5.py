"""NumPy models of HailoRT's YOLOv8, YOLOv5 and YOLOX post-process ops per version, written from
their public source, for the tie tests of `hailort_version` (test-only).

4.23 (tag v4.23.0) and 5.2 (tag v5.2.0) differ in two things only (the decode formulas, the sort
and the NMS are the same; nms_post_process.cpp's remove_overlapping_boxes std::sorts all
candidates by `a.score > b.score` in both, v5.2.0 line 129):

* the order the candidates are collected in, which std::sort's ties depend on:
  - YOLOv8 (yolov8_post_process.hpp, extract_detections): 4.23 lines 137-155 row, col, class;
    5.2 lines 141-166 row, class, col (the NHCW buffer walked in memory order);
  - YOLOv5 (yolov5_post_process.hpp, extract_detections): 4.23 row, col, anchor; 5.2 lines
    187-211 row, anchor, col ("Loop order optimized for NHCW layout"); classes in order in both,
    inputs in name order in both (yolov5_post_process.cpp line 79: a std::map);
  - YOLOX (yolox_post_process.hpp, extract_detections): row, col, class in both (5.2 lines 101-151).
* 5.2's quantized pre-filters, a raw test before the float one (both must pass):
  - YOLOv8: cls >= quantize(th) (5.2 yolov8_post_process.hpp lines 138, 147);
  - YOLOv5: objectness >= quantize(th) (line 182, 193) and each class >= quantize(th) (lines
    126, 131), quantize(logit(th)) instead when the op applies a sigmoid (lines 68-77; only
    YOLOv5-seg's does, nms_post_process.hpp line 141: should_sigmoid() false);
  - YOLOX: obj >= quantize(th) (lines 95, 105); class >= quantize(th / objectness) (lines 130-135).
  quantize (include/hailo/quantization.hpp lines 270-274): clip the float to the layer's
  limvals, then bankers_round (rintf, lines 36-45) of clipped / scale + zp, cast to the type.
  The limvals are taken here as the representable range [deq(0), deq(qmax)], which the clip then
  never changes inside it (the decoder assumes the same; hailo_decode has no limvals).
  logit (nms_post_process.hpp lines 155-170): clip to [1e-7, 1 - 1e-7], log(x / (1 - x)).

Candidates are (box, score, class) in collection order; sort (libstdc++ std::sort through the
compiled oracle), greedy NMS and the per-class cap are hailort_anchor_ops._nms, as for 4.23.
"""

from __future__ import annotations

from typing import List, Mapping, Sequence, Tuple

import numpy as np

from hailort_anchor_ops import _nms, deq, expf, powf

F = np.float32


def quantize_v52(x, zp: float, scale: float, qmax: int) -> int:
    """Quantization::quantize_input<float32_t, Q> with limvals = [deq(0), deq(qmax)]."""
    x = F(x)
    lo, hi = F((F(0) - F(zp)) * F(scale)), F((F(qmax) - F(zp)) * F(scale))
    if np.isnan(x):
        clipped = x  # clip() returns a NaN unchanged (both comparisons false)
    else:
        clipped = hi if x >= hi else lo if x <= lo else x
    v = np.rint(F(F(clipped / F(scale)) + F(zp)))  # rintf: round half to even
    if np.isnan(v):
        return 0  # (uint8_t)NaN: x86's cvttss2si gives 0x80000000, truncated to 0
    return int(min(max(v, 0), qmax))


def logit_v52(th) -> np.float32:
    x = F(min(max(F(th), F(1e-7)), F(1.0) - F(1e-7)))
    return F(np.log(F(x / F(F(1.0) - x))))


def _sigmoid(x: np.ndarray) -> np.ndarray:
    """HailoRT's sigmoid, 1 / (1 + exp(-x)) in float32 with the C library's expf."""
    return (F(1.0) / (F(1.0) + expf(-x))).astype(F)


def _qmax(raw: np.ndarray) -> int:
    return int(np.iinfo(raw.dtype).max)


def yolov8_op(heads: Sequence[Tuple[np.ndarray, np.ndarray]], quant: Sequence[Tuple[Tuple[float, float], Tuple[float, float]]],
              strides: Sequence[int], *, version: str, score_th: float, iou_th: float, max_per_class: int,
              image_hw: Tuple[int, int], sigmoid: bool = False):
    """heads: (reg (H, W, 64) raw, cls (H, W, nc) raw) per reg_to_cls pair, in that order. DFL:
    softmax of each side's 16 bins (float32, no max subtraction), expectation sum(i * p_i)
    (yolov8_post_process.hpp get_bbox, .cpp dot_product), box from the cell centre.
    sigmoid: class values through sigmoid (HailoRT's YOLOv8 op never does; hailo_decode's
    class_activation="sigmoid" extends it), the pre-filter then on logit(th) as yolov5's."""
    th = F(score_th)
    ih, iw = F(image_hw[0]), F(image_hw[1])
    cands: List[Tuple[np.ndarray, float, int]] = []
    for (reg_raw, cls_raw), ((rzp, rs), (czp, cs)), stride in zip(heads, quant, strides):
        H, W, nc = cls_raw.shape
        cls = deq(cls_raw, czp, cs)
        if sigmoid:
            cls = _sigmoid(cls)
        reg = deq(reg_raw, rzp, rs)
        q_th = quantize_v52(logit_v52(th) if sigmoid else th, czp, cs, _qmax(cls_raw)) if version == "5.2" else 0

        def box_at(row, col):
            d = []
            for side in range(4):
                logits = reg[row, col, side * 16:(side + 1) * 16].astype(F)
                e = np.exp(logits).astype(F)
                p = (e / F(e.sum(dtype=F))).astype(F)
                acc = F(0)
                for i in range(16):
                    acc = F(acc + F(F(i) * p[i]))
                d.append(acc)
            s = F(stride)
            xc = F(F(F(col) + F(0.5)) * s / iw)
            yc = F(F(F(row) + F(0.5)) * s / ih)
            return np.array([yc - d[1] * s / ih, xc - d[0] * s / iw, yc + d[3] * s / ih, xc + d[2] * s / iw], F)

        def visit(row, col, c):
            if version == "5.2" and int(cls_raw[row, col, c]) < q_th:
                return
            if cls[row, col, c] >= th:
                cands.append((box_at(row, col), float(cls[row, col, c]), c))

        for row in range(H):
            if version == "5.2":
                for c in range(nc):
                    for col in range(W):
                        visit(row, col, c)
            else:
                for col in range(W):
                    for c in range(nc):
                        visit(row, col, c)
    return _nms(cands, iou_th, max_per_class)


def yolov5_op(tensors: Mapping[str, np.ndarray], quant: Mapping[str, Tuple[float, float]],
              anchors: Mapping[str, Sequence[Tuple[int, int]]], *, version: str, num_classes: int, score_th: float,
              iou_th: float, max_per_class: int, image_hw: Tuple[int, int], sigmoid: bool = False):
    """As hailort_anchor_ops.yolov5_op (4.23), with 5.2's order and pre-filters under version "5.2".
    sigmoid: every value through dequantize_and_sigmoid (nms_post_process.hpp lines 182-190), as
    the YOLOv5-seg op does (its should_sigmoid() is true); the pre-filters then quantize logit(th)."""
    th = F(score_th)
    ih, iw = F(image_hw[0]), F(image_hw[1])
    e = 5 + num_classes
    cands: List[Tuple[np.ndarray, float, int]] = []
    for name in sorted(tensors):  # std::map<std::string, MemoryView>
        zp, scale = quant[name]
        raw = tensors[name]
        x = deq(raw, zp, scale)
        if sigmoid:
            x = _sigmoid(x)
        H, W, _ = x.shape
        q_th = quantize_v52(logit_v52(th) if sigmoid else th, zp, scale, _qmax(raw)) if version == "5.2" else 0

        def visit(row, col, a, aw, ah):
            v, r = x[row, col, a * e:(a + 1) * e], raw[row, col, a * e:(a + 1) * e]
            if version == "5.2" and int(r[4]) < q_th:
                return
            obj = v[4]
            if obj < th:
                return
            tx, ty, tw, tht = v[0], v[1], v[2], v[3]
            w = powf(F(2.0) * tw, 2.0) * F(aw) / iw
            h = powf(F(2.0) * tht, 2.0) * F(ah) / ih
            xc = (tx * F(2.0) - F(0.5) + F(col)) / F(W)
            yc = (ty * F(2.0) - F(0.5) + F(row)) / F(H)
            x_min = xc - w / F(2.0)
            y_min = yc - h / F(2.0)
            box = np.array([y_min, x_min, y_min + h, x_min + w], F)
            for c in range(num_classes):
                if version == "5.2" and int(r[5 + c]) < q_th:
                    continue
                score = F(v[5 + c] * obj)
                if score >= th:
                    cands.append((box, float(score), c))

        for row in range(H):
            if version == "5.2":
                for a, (aw, ah) in enumerate(anchors[name]):
                    for col in range(W):
                        visit(row, col, a, aw, ah)
            else:
                for col in range(W):
                    for a, (aw, ah) in enumerate(anchors[name]):
                        visit(row, col, a, aw, ah)
    return _nms(cands, iou_th, max_per_class)


def yolox_op(heads: Sequence[Tuple[np.ndarray, np.ndarray, np.ndarray]],
             quant: Sequence[Tuple[Tuple[float, float], Tuple[float, float], Tuple[float, float]]], *,
             version: str, num_classes: int, score_th: float, iou_th: float, max_per_class: int,
             sigmoid: bool = False):
    """As hailort_anchor_ops.yolox_op (4.23), with 5.2's pre-filters under version "5.2" (the
    order is the same). sigmoid: objectness and classes through sigmoid (HailoRT's YOLOX op
    never does; class_activation="sigmoid" extends it), the pre-filters then on logits."""
    th = F(score_th)
    cands: List[Tuple[np.ndarray, float, int]] = []
    for (reg_raw, obj_raw, cls_raw), (qr, qo, qc) in zip(heads, quant):
        reg, obj, cls = deq(reg_raw, *qr), deq(obj_raw, *qo), deq(cls_raw, *qc)
        if sigmoid:
            obj, cls = _sigmoid(obj), _sigmoid(cls)
        H, W, _ = reg.shape
        lim = logit_v52 if sigmoid else F
        q_obj = quantize_v52(lim(th), qo[0], qo[1], _qmax(obj_raw)) if version == "5.2" else 0
        for row in range(H):
            for col in range(W):
                if version == "5.2" and int(obj_raw[row, col, 0]) < q_obj:
                    continue
                o = obj[row, col, 0]
                if o < th:
                    continue
                tx, ty, tw, tht = reg[row, col]
                w = expf(tw) / F(W)
                h = expf(tht) / F(H)
                xc = (tx + F(col)) / F(W)
                yc = (ty + F(row)) / F(H)
                x_min = xc - w / F(2.0)
                y_min = yc - h / F(2.0)
                box = np.array([y_min, x_min, y_min + h, x_min + w], F)
                q_cls = quantize_v52(lim(F(th / o)), qc[0], qc[1], _qmax(cls_raw)) if version == "5.2" else 0
                for c in range(num_classes):
                    if version == "5.2" and int(cls_raw[row, col, c]) < q_cls:
                        continue
                    score = F(cls[row, col, c] * o)
                    if score >= th:
                        cands.append((box, float(score), c))
    return _nms(cands, iou_th, max_per_class)
