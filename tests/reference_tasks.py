"""Plain NumPy reference for pose and oriented-box (OBB) heads, the oracle the C++ decoder is
compared with. Written from Ultralytics' documented computations (8.4: nn/modules/head.py Pose
and OBB, utils/tal.py dist2rbox, utils/metrics.py batch_probiou, utils/nms.py
non_max_suppression and TorchNMS.fast_nms), not from this package's code, and dense on purpose:
every cell of every head is decoded, then filtered.

``reference_task_decode(heads, spec) -> dict`` with keys boxes (n, 4) xyxy pixels, scores (n,),
class_ids (n,), and keypoints (n, K, 3) for pose or rboxes (n, 5) for OBB.

heads: a list of dicts, one per head, of float32 (H, W, C) arrays already dequantized:
``box`` (4 x bins DFL logits), ``cls`` (logits), ``kpt`` (K x dims) or ``angle`` (1), and
``stride``. spec: ``conf``, ``iou``, and optionally ``max_det`` (300), ``max_nms`` (30000),
``agnostic`` (False), ``max_wh`` (7680), ``keypoint_dims`` (3).

Numeric conventions: float64 throughout (from the float32 inputs), results rounded to float32.
Ties in score keep anchor order (heads in order, rows, columns), which is this package's stated
rule; torch's argsort leaves it unspecified.
"""

from __future__ import annotations

from typing import Dict, List

import numpy as np

from reference_decoder import dfl_distances

__all__ = ["reference_task_decode", "probiou64", "fast_nms", "greedy_nms_offset", "sigmoid64"]


def sigmoid64(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.asarray(x, dtype=np.float64)))


def probiou64(a: np.ndarray, b: np.ndarray, eps: float = 1e-7) -> np.ndarray:
    """(n, m) probabilistic IoU of rotated boxes [cx, cy, w, h, angle] (Llerena et al. 2021:
    1 - Hellinger distance of the boxes' Gaussians, with Ultralytics' eps and clamps)."""
    a = np.asarray(a, dtype=np.float64).reshape(-1, 5)
    b = np.asarray(b, dtype=np.float64).reshape(-1, 5)

    def cov(r: np.ndarray):
        va, vb, t = r[:, 2] ** 2 / 12.0, r[:, 3] ** 2 / 12.0, r[:, 4]
        c, s = np.cos(t), np.sin(t)
        return va * c * c + vb * s * s, va * s * s + vb * c * c, (va - vb) * c * s

    a1, b1, c1 = (v[:, None] for v in cov(a))
    a2, b2, c2 = (v[None, :] for v in cov(b))
    dx = a[:, 0][:, None] - b[:, 0][None, :]
    dy = a[:, 1][:, None] - b[:, 1][None, :]
    A, B, C = a1 + a2, b1 + b2, c1 + c2
    det = A * B - C * C
    t1 = (A * dy * dy + B * dx * dx) / (det + eps) * 0.25
    t2 = (C * (-dx) * dy) / (det + eps) * 0.5
    d1 = np.clip(a1 * b1 - c1 * c1, 0, None)
    d2 = np.clip(a2 * b2 - c2 * c2, 0, None)
    with np.errstate(invalid="ignore", divide="ignore"):
        t3 = np.log(det / (4.0 * np.sqrt(d1 * d2) + eps) + eps) * 0.5
    bd = np.clip(t1 + t2 + t3, eps, 100.0)
    return 1.0 - np.sqrt(1.0 - np.exp(-bd) + eps)


def fast_nms(rboxes: np.ndarray, iou: float) -> np.ndarray:
    """Positions kept by Fast-NMS over boxes ALREADY sorted best first: a box goes when any
    earlier box (kept or not) has probiou > iou with it."""
    n = len(rboxes)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    m = np.triu(probiou64(rboxes, rboxes), k=1)
    return np.flatnonzero(~(m > iou).any(axis=0))


def greedy_nms_offset(boxes: np.ndarray, iou: float) -> np.ndarray:
    """torchvision-style greedy NMS (IoU > iou suppresses) over boxes ALREADY sorted best first
    (and already offset by class)."""
    boxes = np.asarray(boxes, dtype=np.float64)
    area = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    alive = np.ones(len(boxes), dtype=bool)
    keep: List[int] = []
    for i in range(len(boxes)):
        if not alive[i]:
            continue
        keep.append(i)
        rest = np.flatnonzero(alive[i + 1:]) + i + 1
        w = np.clip(np.minimum(boxes[i, 2], boxes[rest, 2]) - np.maximum(boxes[i, 0], boxes[rest, 0]), 0, None)
        h = np.clip(np.minimum(boxes[i, 3], boxes[rest, 3]) - np.maximum(boxes[i, 1], boxes[rest, 1]), 0, None)
        inter = w * h
        alive[rest[inter / (area[i] + area[rest] - inter) > iou]] = False
    return np.asarray(keep, dtype=np.int64)


def _enclosing(r: np.ndarray) -> np.ndarray:
    c, s = np.cos(r[:, 4]), np.sin(r[:, 4])
    hx = np.abs(r[:, 2] / 2 * c) + np.abs(r[:, 3] / 2 * s)
    hy = np.abs(r[:, 2] / 2 * s) + np.abs(r[:, 3] / 2 * c)
    return np.stack([r[:, 0] - hx, r[:, 1] - hy, r[:, 0] + hx, r[:, 1] + hy], axis=1)


def reference_task_decode(heads: List[Dict], spec: Dict) -> Dict[str, np.ndarray]:
    conf, iou = float(spec["conf"]), float(spec["iou"])
    max_det, max_nms = int(spec.get("max_det", 300)), int(spec.get("max_nms", 30000))
    agnostic, max_wh = bool(spec.get("agnostic", False)), float(spec.get("max_wh", 7680.0))
    dims = int(spec.get("keypoint_dims", 3))
    pose = "kpt" in heads[0]
    obb = "angle" in heads[0]
    rows_box, rows_score, rows_extra = [], [], []
    for h in heads:
        st = float(h["stride"])
        d = dfl_distances(np.asarray(h["box"], dtype=np.float32)).astype(np.float64)  # (H, W, 4), strides
        H, W, _ = d.shape
        gx, gy = np.meshgrid(np.arange(W, dtype=np.float64), np.arange(H, dtype=np.float64))
        ax, ay = gx + 0.5, gy + 0.5  # anchor points: cell centres in grid units
        scores = sigmoid64(h["cls"])  # (H, W, nc)
        if obb:
            t = (sigmoid64(h["angle"][..., 0]) - 0.25) * np.pi
            xf, yf = (d[..., 2] - d[..., 0]) / 2, (d[..., 3] - d[..., 1]) / 2
            cx = (xf * np.cos(t) - yf * np.sin(t) + ax) * st
            cy = (xf * np.sin(t) + yf * np.cos(t) + ay) * st
            box = np.stack([cx, cy, (d[..., 0] + d[..., 2]) * st, (d[..., 1] + d[..., 3]) * st, t], axis=-1)
        else:
            box = np.stack([(ax - d[..., 0]) * st, (ay - d[..., 1]) * st, (ax + d[..., 2]) * st,
                            (ay + d[..., 3]) * st], axis=-1)
        rows_box.append(box.reshape(H * W, -1))
        rows_score.append(scores.reshape(H * W, -1))
        if pose:
            k = np.asarray(h["kpt"], dtype=np.float64).reshape(H, W, -1, dims)
            x = (k[..., 0] * 2.0 + gx[..., None]) * st
            y = (k[..., 1] * 2.0 + gy[..., None]) * st
            v = sigmoid64(k[..., 2]) if dims == 3 else np.ones_like(x)
            rows_extra.append(np.stack([x, y, v], axis=-1).reshape(H * W, -1, 3))
    boxes = np.concatenate(rows_box)
    scores = np.concatenate(rows_score)
    extra = np.concatenate(rows_extra) if pose else None
    # Best class of each anchor (first on ties), a candidate when it passes conf (strictly).
    best = scores.argmax(axis=1)
    best_score = scores[np.arange(len(scores)), best]
    cand = np.flatnonzero(best_score > conf)
    order = cand[np.argsort(-best_score[cand], kind="stable")][:max_nms]
    b, s, c = boxes[order], best_score[order], best[order]
    off = 0.0 if agnostic else max_wh
    if obb:
        shifted = b.copy()
        shifted[:, 0:2] += (c * off)[:, None]
        keep = fast_nms(shifted, iou)
    else:
        keep = greedy_nms_offset(b + (c * off)[:, None], iou)
    keep = keep[:max_det]
    out: Dict[str, np.ndarray] = dict(scores=s[keep].astype(np.float32), class_ids=c[keep].astype(np.int32))
    if obb:
        out["rboxes"] = b[keep].astype(np.float32)
        out["boxes"] = _enclosing(b[keep]).astype(np.float32)
    else:
        out["boxes"] = b[keep].astype(np.float32)
    if pose:
        out["keypoints"] = extra[order][keep].astype(np.float32)  # type: ignore[index]
    return out
