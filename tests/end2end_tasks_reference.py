"""Plain NumPy model of Ultralytics' end-to-end heads with task channels (8.4:
nn/modules/head.py Detect.postprocess, Pose/Pose26.kpts_decode, OBB/OBB26.forward_head,
utils/tal.py dist2rbox; utils/nms.py's end2end branch), written from that source for the tests:
every anchor of every head is decoded (dense, float64), the rows are chosen by
end2end_reference.end2end_select (the stated tie order), and each chosen row carries its anchor's
keypoints, rotated box or mask coefficients.

``end2end_task_decode(heads, spec) -> dict``: heads is a list of dicts of float32 (H, W, C)
arrays already dequantized, ``box`` (4 x bins), ``cls`` (logits), and ``kpt`` (K x dims), ``angle``
(1) or ``mask`` (nm), plus ``stride``. spec: ``conf``, and optionally ``max_det`` (300), ``topk``,
``test`` (">"), ``agnostic``, ``keypoint_decode`` ("yolov8" | "yolo26"), ``angle_decode``
("sigmoid" | "raw"), ``keypoint_dims`` (3). Returns boxes (n, 4) xyxy (OBB: the enclosing box),
scores, class_ids, anchors, and keypoints (n, K, 3), rboxes (n, 5) or coefficients (n, nm).
"""

from __future__ import annotations

from typing import Dict, List

import numpy as np

from end2end_reference import end2end_select
from reference_decoder import dfl_distances, sigmoid32

__all__ = ["end2end_task_decode", "dense_keypoints", "dense_rboxes", "enclosing"]


def _sigmoid64(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.asarray(x, dtype=np.float64)))


def dense_keypoints(kpt: np.ndarray, stride: int, decode: str, dims: int = 3) -> np.ndarray:
    """(H, W, K * dims) raw -> (H, W, K, 3) [x, y, visibility]:
    Pose (yolov8): (raw * 2 + (anchor - 0.5)) * stride; Pose26 (yolo26): (raw + anchor) * stride;
    anchor = cell + 0.5; visibility sigmoid(raw), 1 without a visibility channel."""
    H, W, _ = kpt.shape
    k = np.asarray(kpt, np.float64).reshape(H, W, -1, dims)
    ax = (np.arange(W, dtype=np.float64) + 0.5)[None, :, None]
    ay = (np.arange(H, dtype=np.float64) + 0.5)[:, None, None]
    if decode == "yolo26":
        x, y = (k[..., 0] + ax) * stride, (k[..., 1] + ay) * stride
    else:
        x, y = (k[..., 0] * 2.0 + (ax - 0.5)) * stride, (k[..., 1] * 2.0 + (ay - 0.5)) * stride
    v = _sigmoid64(k[..., 2]) if dims == 3 else np.ones_like(x)
    return np.stack([x, y, v], axis=-1)


def dense_rboxes(dist: np.ndarray, angle: np.ndarray, stride: int, decode: str) -> np.ndarray:
    """(H, W, 4) distances and (H, W, 1) raw angles -> (H, W, 5) [cx, cy, w, h, angle] pixels:
    OBB's angle (sigmoid(raw) - 0.25) * pi, OBB26's the raw value; then dist2rbox."""
    d = np.asarray(dist, np.float64)
    raw = np.asarray(angle, np.float64)[..., 0]
    t = raw if decode == "raw" else (_sigmoid64(raw) - 0.25) * np.pi
    H, W, _ = d.shape
    ax = (np.arange(W, dtype=np.float64) + 0.5)[None, :]
    ay = (np.arange(H, dtype=np.float64) + 0.5)[:, None]
    xf, yf = (d[..., 2] - d[..., 0]) / 2, (d[..., 3] - d[..., 1]) / 2
    cx = (xf * np.cos(t) - yf * np.sin(t) + ax) * stride
    cy = (xf * np.sin(t) + yf * np.cos(t) + ay) * stride
    return np.stack([cx, cy, (d[..., 0] + d[..., 2]) * stride, (d[..., 1] + d[..., 3]) * stride, t], axis=-1)


def enclosing(r: np.ndarray) -> np.ndarray:
    """The axis-aligned box (x1, y1, x2, y2) enclosing each rotated box's corners."""
    r = np.asarray(r, np.float64).reshape(-1, 5)
    c, s = np.cos(r[:, 4]), np.sin(r[:, 4])
    hx = np.abs(r[:, 2] / 2 * c) + np.abs(r[:, 3] / 2 * s)
    hy = np.abs(r[:, 2] / 2 * s) + np.abs(r[:, 3] / 2 * c)
    return np.stack([r[:, 0] - hx, r[:, 1] - hy, r[:, 0] + hx, r[:, 1] + hy], axis=1)


def end2end_task_decode(heads: List[Dict], spec: Dict) -> Dict[str, np.ndarray]:
    dims = int(spec.get("keypoint_dims", 3))
    kdec, adec = spec.get("keypoint_decode", "yolov8"), spec.get("angle_decode", "sigmoid")
    scores, boxes, extra = [], [], []
    for h in heads:
        st = int(h["stride"])
        d = dfl_distances(np.asarray(h["box"], np.float32)).astype(np.float64)
        H, W, _ = d.shape
        scores.append(sigmoid32(np.asarray(h["cls"], np.float32)))  # float32, as the selection sees them
        if "angle" in h:
            r = dense_rboxes(d, h["angle"], st, adec).reshape(-1, 5)
            extra.append(r)
            boxes.append(enclosing(r).reshape(H, W, 4))
            continue
        ax = (np.arange(W, dtype=np.float64) + 0.5)[None, :]
        ay = (np.arange(H, dtype=np.float64) + 0.5)[:, None]
        boxes.append(np.stack([(ax - d[..., 0]) * st, (ay - d[..., 1]) * st, (ax + d[..., 2]) * st,
                               (ay + d[..., 3]) * st], axis=-1))
        if "kpt" in h:
            extra.append(dense_keypoints(h["kpt"], st, kdec, dims).reshape(H * W, -1, 3))
        elif "mask" in h:
            extra.append(np.asarray(h["mask"], np.float32).reshape(H * W, -1))
    b, s, c, an = end2end_select(scores, [x.astype(np.float64) for x in boxes], max_det=int(spec.get("max_det", 300)),
                                 conf=float(spec["conf"]), test=spec.get("test", ">"),
                                 agnostic=bool(spec.get("agnostic", False)), topk=spec.get("topk"))
    out: Dict[str, np.ndarray] = dict(boxes=np.asarray(b, np.float64), scores=s, class_ids=c, anchors=an)
    if extra:
        e = np.concatenate(extra)[an]
        key = "rboxes" if "angle" in heads[0] else "keypoints" if "kpt" in heads[0] else "coefficients"
        out[key] = e
    return out
