"""NumPy models of HailoRT 4.23's YOLOv5 and YOLOX post-process ops, written from their source
(libhailort/src/net_flow/ops/yolov5_post_process.{hpp,cpp}, yolox_post_process.{hpp,cpp},
nms_post_process.{hpp,cpp}) for the tests:

* dequantize (float32(q) - zp) * scale in float32; no sigmoid on the host (the op's
  should_sigmoid() is false; YOLOX reads its inputs with dequantize_output directly);
* YOLOv5: inputs visited in name order (a std::map), then row, column, anchor; skip when
  objectness < th; w = powf(2 tw, 2) * anchor_w / image_w, xc = (2 tx - 0.5 + col) / W (W the grid
  width, the stride unused); box {y_min, x_min, y_min + h, x_min + w}; per class score = cls * obj,
  kept when >= th;
* YOLOX: decoders in list order, then row, column; skip when obj < th; w = expf(tw) / W,
  xc = (tx + col) / W; per class score = cls * obj >= th;
* all candidates sorted together by libstdc++'s std::sort (score descending; ties as that
  unstable sort leaves them: the compiled oracle of reference_decoder), then greedy NMS per class
  with IoU >= th, then max_proposals_per_class per class.

powf and expf are the C library's own (ctypes), as HailoRT calls them.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
from typing import Dict, List, Mapping, Sequence, Tuple

import numpy as np

from reference_decoder import greedy_nms, hailort_sort_permutation

F = np.float32


@functools.lru_cache(maxsize=None)
def _libm():
    lib = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
    for name in ("expf", "powf"):
        getattr(lib, name).restype = ctypes.c_float
    lib.expf.argtypes = [ctypes.c_float]
    lib.powf.argtypes = [ctypes.c_float, ctypes.c_float]
    return lib


def expf(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, F)
    return np.array([_libm().expf(float(v)) for v in x.reshape(-1)], F).reshape(x.shape)


def powf(x: np.ndarray, y: float) -> np.ndarray:
    x = np.asarray(x, F)
    return np.array([_libm().powf(float(v), float(y)) for v in x.reshape(-1)], F).reshape(x.shape)


def deq(raw: np.ndarray, zp: float, scale: float) -> np.ndarray:
    return ((raw.astype(F) - F(zp)) * F(scale)).astype(F)


def _nms(cands: List[Tuple[np.ndarray, float, int]], iou_th: float, max_per_class: int):
    if not cands:
        return np.zeros((0, 4), F), np.zeros(0, F), np.zeros(0, np.int64)
    boxes = np.array([c[0] for c in cands], F)  # yxyx normalized
    scores = np.array([c[1] for c in cands], F)
    classes = np.array([c[2] for c in cands], np.int64)
    order = hailort_sort_permutation(scores)
    boxes, scores, classes = boxes[order], scores[order], classes[order]
    keep = greedy_nms(boxes[:, [1, 0, 3, 2]], classes, F(iou_th), ">=", False)
    boxes, scores, classes = boxes[keep], scores[keep], classes[keep]
    count: Dict[int, int] = {}
    mask = []
    for c in classes:
        count[int(c)] = count.get(int(c), 0) + 1
        mask.append(count[int(c)] <= max_per_class)
    m = np.array(mask, bool)
    return boxes[m], scores[m], classes[m]


def yolov5_op(tensors: Mapping[str, np.ndarray], quant: Mapping[str, Tuple[float, float]],
              anchors: Mapping[str, Sequence[Tuple[int, int]]], *, num_classes: int, score_th: float,
              iou_th: float, max_per_class: int, image_hw: Tuple[int, int]):
    """tensors: name -> logical (H, W, A * (5 + nc)) raw values. Returns HailoRT's kept boxes
    (normalized yxyx), scores, classes in its sorted order."""
    th = F(score_th)
    ih, iw = F(image_hw[0]), F(image_hw[1])
    e = 5 + num_classes
    cands: List[Tuple[np.ndarray, float, int]] = []
    for name in sorted(tensors):  # std::map<std::string, MemoryView>
        zp, scale = quant[name]
        x = deq(tensors[name], zp, scale)
        H, W, _ = x.shape
        for row in range(H):
            for col in range(W):
                for a, (aw, ah) in enumerate(anchors[name]):
                    v = x[row, col, a * e:(a + 1) * e]
                    obj = v[4]
                    if obj < th:
                        continue
                    tx, ty, tw, tht = v[0], v[1], v[2], v[3]
                    w = powf(F(2.0) * tw, 2.0) * F(aw) / iw
                    h = powf(F(2.0) * tht, 2.0) * F(ah) / ih
                    xc = (tx * F(2.0) - F(0.5) + F(col)) / F(W)
                    yc = (ty * F(2.0) - F(0.5) + F(row)) / F(H)
                    x_min = xc - w / F(2.0)
                    y_min = yc - h / F(2.0)
                    box = np.array([y_min, x_min, y_min + h, x_min + w], F)
                    for c in range(num_classes):
                        score = F(v[5 + c] * obj)
                        if score >= th:
                            cands.append((box, float(score), c))
    return _nms(cands, iou_th, max_per_class)


def yolox_op(heads: Sequence[Tuple[np.ndarray, np.ndarray, np.ndarray]],
             quant: Sequence[Tuple[Tuple[float, float], Tuple[float, float], Tuple[float, float]]], *,
             num_classes: int, score_th: float, iou_th: float, max_per_class: int):
    """heads: (reg, obj, cls) logical raw arrays per decoder, in decoder order; quant likewise."""
    th = F(score_th)
    cands: List[Tuple[np.ndarray, float, int]] = []
    for (reg_raw, obj_raw, cls_raw), (qr, qo, qc) in zip(heads, quant):
        reg, obj, cls = deq(reg_raw, *qr), deq(obj_raw, *qo), deq(cls_raw, *qc)
        H, W, _ = reg.shape
        for row in range(H):
            for col in range(W):
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
                for c in range(num_classes):
                    score = F(cls[row, col, c] * o)
                    if score >= th:
                        cands.append((box, float(score), c))
    return _nms(cands, iou_th, max_per_class)


def to_device_nhcw(logical: np.ndarray, padded: Tuple[int, int, int]) -> np.ndarray:
    """A logical (H, W, C) array as a raw NHCW device buffer (h*Wp*Cp + c*Wp + w), padding 0."""
    H, W, C = logical.shape
    hp, wp, cp = padded
    buf = np.zeros((hp, cp, wp), logical.dtype)
    buf[:H, :C, :W] = logical.transpose(0, 2, 1)
    return buf.reshape(-1)
