"""Plain NumPy model of Ultralytics' end-to-end selection (ultralytics/nn/modules/head.py,
Detect.get_topk_index / postprocess, and the end2end branch of utils/nms.py), written from that
source for the tests, with the tie order hailo-decode states (torch.topk leaves it unspecified):

* anchors: heads in order, each row-major; boxes xyxy = (anchor - (l, t), anchor + (r, b)) * stride
  with anchor = (col + 0.5, row + 0.5) (dist2bbox, xywh=False);
* k = min(max_det, anchors);
* stage 1: the k anchors of highest best class score; ties: lower anchor index first;
* stage 2: of those k anchors' k * nc pairs (flattened as rank * nc + class), the k highest;
  ties: lower flattened index first;
* agnostic: stage 1 alone, the class the lowest one of the highest score;
* then `score > conf` (or >=), then the class allow-list, then [:max_det].

Everything is computed on the whole (unfiltered) score array, so the tests also check the
decoder's gate (it ranks only anchors and pairs that can pass) against the plain algorithm.
"""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

import numpy as np


def _topk(values: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k largest values, descending; equal values: lower index first."""
    order = np.lexsort((np.arange(values.size), -values.astype(np.float64)))
    return order[:k]


def end2end_select(scores: Sequence[np.ndarray], boxes: Sequence[np.ndarray], *, max_det: int = 300,
                   conf: float = 0.25, test: str = ">", agnostic: bool = False,
                   classes: Optional[Sequence[int]] = None,
                   thresholds: Optional[np.ndarray] = None,
                   topk: Optional[int] = None) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """scores[h]: (H, W, nc) float32 class scores (after the activation); boxes[h]: (H, W, 4)
    float32 boxes. Returns (boxes (n, 4), scores (n,), classes (n,), anchor index (n,)).
    topk: the head's own k when it differs from max_det (Ultralytics 8.4's predict sets the head's
    max_det to max(max_det, 300) and cuts to max_det after the score test)."""
    s = np.concatenate([np.asarray(a, np.float32).reshape(-1, a.shape[-1]) for a in scores])
    b = np.concatenate([np.asarray(a, np.float32).reshape(-1, 4) for a in boxes])
    anchors, nc = s.shape
    k = min(max_det if topk is None else topk, anchors)
    best = s.max(axis=1)
    if agnostic:
        idx = _topk(best, k)
        labels = np.argmax(s[idx] == best[idx, None], axis=1)  # the lowest class of the best score
        sc, cl, an = best[idx], labels, idx
    else:
        ori = _topk(best, k)
        flat = s[ori].reshape(-1)
        sel = _topk(flat, k)
        sc, cl, an = flat[sel], sel % nc, ori[sel // nc]
    th = np.full(nc, np.float32(conf), np.float32) if thresholds is None else np.asarray(thresholds, np.float32)
    keep = sc >= th[cl] if test == ">=" else sc > th[cl]
    sc, cl, an = sc[keep], cl[keep], an[keep]
    if classes is not None:
        m = np.isin(cl, np.asarray(classes))
        sc, cl, an = sc[m], cl[m], an[m]
    sc, cl, an = sc[:max_det], cl[:max_det], an[:max_det]
    return b[an], sc.astype(np.float32), cl.astype(np.int64), an


def ultralytics_boxes(dist: np.ndarray, stride: int) -> np.ndarray:
    """(H, W, 4) distances (l, t, r, b) in strides -> (H, W, 4) xyxy pixels, Ultralytics' order of
    operations: (anchor -/+ distance) * stride, in float32."""
    H, W, _ = dist.shape
    ax = (np.arange(W, dtype=np.float32) + np.float32(0.5))[None, :]
    ay = (np.arange(H, dtype=np.float32) + np.float32(0.5))[:, None]
    st = np.float32(stride)
    x1 = (ax - dist[..., 0]) * st
    y1 = (ay - dist[..., 1]) * st
    x2 = (ax + dist[..., 2]) * st
    y2 = (ay + dist[..., 3]) * st
    return np.stack([x1, y1, x2, y2], axis=-1).astype(np.float32)


def tie_groups(scores: np.ndarray, ulps: int = 0) -> List[np.ndarray]:
    """Runs of equal scores in a score-descending list, as index arrays.

    ulps > 0: scores within that many float32 steps of the run's first score join the run. torch's
    CPU sigmoid gives equal inputs results one ulp apart (its vectorized body and its scalar tail
    round differently: torch.sigmoid of 2100 equal float32 logits -5.7773 gives two values), so a
    tie in Ultralytics' scores may show as two runs one ulp apart."""
    scores = np.asarray(scores, np.float32)
    groups, start = [], 0
    for i in range(1, len(scores) + 1):
        if i == len(scores) or abs(float(scores[i]) - float(scores[start])) > ulps * float(np.spacing(scores[start])):
            groups.append(np.arange(start, i))
            start = i
    return groups
