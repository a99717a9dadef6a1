"""HAILO_NMS_BY_CLASS (float32): for each class in order a float count, then `count` boxes of
[y_min, x_min, y_max, x_max, score], classes back to back; the buffer holds
classes * (1 + 5 * max_per_class) floats. pyhailort turns one frame into a list over classes of
(n, 5) arrays (an empty class is a float64 (0, 5) array), or with tf_nms_format=True into
[classes, 5, max_per_class] padded with zeros.

Rows here are that per-class list: rows[k] is an (n, 5) array of class k."""

from __future__ import annotations

import math
from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

from .. import _core

__all__ = ["BBOX_PARAMS", "DEFAULT_MAX_PER_CLASS", "MAX_NMS_BUFFER_FLOATS", "max_per_class_or_default",
           "buffer_size", "check_flat_size", "class_runs", "flat_to_rows", "flat_to_pyhailort", "flat_to_tf", "tf_to_rows",
           "checked_rows", "list_depth", "rows_to_arrays", "pack"]

BBOX_PARAMS = 5  # y_min, x_min, y_max, x_max, score
DEFAULT_MAX_PER_CLASS = 100
# Far above HailoRT's own (80 classes x 100 boxes: 40,080 floats), far below what would exhaust memory.
MAX_NMS_BUFFER_FLOATS = 1 << 28


def max_per_class_or_default(max_per_class: Optional[int]) -> int:
    """Boxes per class in HailoRT's NMS forms: the cap, or HailoRT's usual 100 without one."""
    return int(DEFAULT_MAX_PER_CLASS if max_per_class is None else max_per_class)


def buffer_size(num_classes: int, max_per_class: int) -> int:
    """float32 values in a HAILO_NMS_BY_CLASS buffer: classes * (1 + 5 * max_per_class)."""
    nc, mpc = int(num_classes), int(max_per_class)
    if nc < 0 or mpc < 0:
        raise ValueError(f"num_classes and max_per_class must be >= 0, got {nc}, {mpc}")
    size = nc * (1 + BBOX_PARAMS * mpc)  # Python integers: no overflow
    if size > MAX_NMS_BUFFER_FLOATS:
        raise ValueError(f"a HAILO_NMS_BY_CLASS buffer for {nc} classes x {mpc} boxes would hold {size} float32 "
                         f"values, more than {MAX_NMS_BUFFER_FLOATS}")
    return size


def check_flat_size(size: int, num_classes: int, max_per_class: Optional[int] = None) -> None:
    """A flat frame of `size` float32 values must be what HailoRT writes for these counts:
    classes * (1 + 5 * max_per_class) values (any max_per_class when it is not given). Another size
    means the class count (or the cap) is not the model's, and the counts would be read from the
    middle of other classes' boxes: ValueError naming the sizes."""
    nc = int(num_classes)
    if max_per_class is not None:
        expected = buffer_size(nc, max_per_class)
        if size != expected:
            raise ValueError(f"a flat HAILO_NMS_BY_CLASS frame of {size} float32 values does not fit num_classes={nc}, "
                             f"max_per_class={max_per_class}: that frame holds {expected} (classes x (1 + 5 x "
                             f"max_per_class)); pass the HEF's classes and max proposals per class "
                             f"(`hailo-decode inspect model.hef` prints them)")
        return
    per_class, extra = divmod(size, nc)
    if size < nc or extra or (per_class - 1) % BBOX_PARAMS:
        raise ValueError(f"a flat HAILO_NMS_BY_CLASS frame of {size} float32 values does not fit num_classes={nc}: "
                         f"a frame holds classes x (1 + 5 x max_per_class) values; pass the HEF's class count "
                         f"(`hailo-decode inspect model.hef` prints it)")


def class_runs(flat: np.ndarray, num_classes: int) -> List[Tuple[int, int]]:
    """(count, start) of every class in a flat buffer, each checked against the buffer's end."""
    runs, pos = [], 0
    for k in range(num_classes):
        if pos >= flat.size:
            raise ValueError(f"HAILO_NMS_BY_CLASS buffer ends before class {k} (size {flat.size})")
        c = float(flat[pos])
        if not (math.isfinite(c) and c >= 0 and c == int(c)):
            raise ValueError(f"HAILO_NMS_BY_CLASS buffer: class {k} count {c} is not a whole number >= 0")
        n = int(c)
        if pos + 1 + BBOX_PARAMS * n > flat.size:
            raise ValueError(f"HAILO_NMS_BY_CLASS buffer: class {k} claims {n} boxes, past the end (size {flat.size})")
        runs.append((n, pos + 1))
        pos += 1 + BBOX_PARAMS * n
    return runs


def flat_to_rows(flat: np.ndarray, num_classes: int) -> List[np.ndarray]:
    """The per-class (n, 5) float32 views of a flat buffer (no copy)."""
    return [flat[s:s + BBOX_PARAMS * n].reshape(n, BBOX_PARAMS) for n, s in class_runs(flat, num_classes)]


def flat_to_pyhailort(flat: np.ndarray, num_classes: int) -> List[np.ndarray]:
    """What pyhailort returns for one frame: as flat_to_rows, but an empty class is a float64
    (0, 5) array, as pyhailort makes it."""
    return [np.empty((0, BBOX_PARAMS)) if len(r) == 0 else r for r in flat_to_rows(flat, num_classes)]


def flat_to_tf(flat: np.ndarray, num_classes: int, max_per_class: int) -> np.ndarray:
    """tf_nms_format: [classes, 5, max_per_class] float32, padded with zeros."""
    tf = np.zeros((num_classes, max_per_class, BBOX_PARAMS), dtype=np.float32)
    for k, (n, start) in enumerate(class_runs(flat, num_classes)):
        if n > max_per_class:
            raise ValueError(f"class {k} has {n} boxes, more than max_per_class={max_per_class}")
        tf[k, :n] = flat[start:start + BBOX_PARAMS * n].reshape(n, BBOX_PARAMS)
    return np.swapaxes(tf, 1, 2)


def tf_to_rows(tf: np.ndarray, num_classes: Optional[int] = None, max_per_class: Optional[int] = None) -> List[np.ndarray]:
    """Rows of one tf_nms_format frame [classes, 5, max]: the rows that are not all-zero padding.
    num_classes and max_per_class, when given, must be the array's sizes."""
    a = np.asarray(tf)
    if a.ndim != 3 or a.shape[1] != BBOX_PARAMS:
        raise ValueError(f"tf_nms_format must be [classes, 5, max_per_class], got shape {a.shape}")
    if num_classes is not None and a.shape[0] != num_classes:
        raise ValueError(f"expected {num_classes} classes, tf array has {a.shape[0]}")
    if max_per_class is not None and a.shape[2] != max_per_class:
        raise ValueError(f"max_per_class={max_per_class}, but the tf_nms_format array [classes, 5, max_per_class] "
                         f"has shape {a.shape}")
    rows = []
    for k in range(a.shape[0]):
        r = a[k].T.astype(np.float32, copy=False)
        rows.append(r[np.any(r != 0, axis=1)])  # padding rows are all zeros
    return rows


def checked_rows(output: Any, num_classes: Optional[int] = None, max_per_class: Optional[int] = None) -> List[np.ndarray]:
    """One frame of pyhailort's per-class list, each entry checked to be (n, 5) numbers, at most
    max_per_class of them when it is given."""
    if not isinstance(output, (list, tuple)):
        raise ValueError(f"expected a per-class list for a frame, got {type(output).__name__}")
    rows = []
    for k, r in enumerate(output):
        try:
            a = np.asarray(r, dtype=np.float32)
        except (TypeError, ValueError):
            raise ValueError(f"class {k}: expected an (n, 5) array of numbers, got {type(r).__name__}") from None
        if a.size and (a.ndim != 2 or a.shape[1] != BBOX_PARAMS):
            raise ValueError(f"class {k}: expected an (n, 5) array, got shape {a.shape}")
        rows.append(a.reshape(-1, BBOX_PARAMS))
        if max_per_class is not None and len(rows[-1]) > max_per_class:
            raise ValueError(f"class {k}: {len(rows[-1])} boxes, more than max_per_class={max_per_class}")
    if num_classes is not None and len(rows) != num_classes:
        raise ValueError(f"expected {num_classes} classes, got a list of {len(rows)}")
    return rows


def list_depth(x: Any, limit: int = 5) -> Optional[int]:
    """Nesting depth of lists (an ndarray adds its ndim; a number is depth 0), from the first
    non-empty item at each level; None when every branch is empty. Deeper than `limit`: ValueError."""
    depth = 0
    while isinstance(x, (list, tuple)):
        depth += 1
        if depth > limit:
            raise ValueError(f"HailoRT NMS output nested deeper than {limit} levels")
        items = [i for i in x if not (isinstance(i, (list, tuple)) and len(i) == 0)]
        if not items:
            return None if depth < 3 else depth
        x = items[0]
    return depth + (x.ndim if isinstance(x, np.ndarray) else 0)


def rows_to_arrays(rows: Sequence[np.ndarray]) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(boxes (n, 4) yxyx normalized, scores (n,), class_ids (n,)) of every class's rows, best
    score first; equal scores keep class order (HailoRT's global order is not in this form)."""
    boxes, scores, classes = [], [], []
    for k, r in enumerate(rows):
        r = np.asarray(r, dtype=np.float32).reshape(-1, BBOX_PARAMS)
        boxes.append(r[:, :4])
        scores.append(r[:, 4])
        classes.append(np.full(len(r), k, dtype=np.int32))
    b = np.concatenate(boxes) if boxes else np.zeros((0, 4), np.float32)
    s = np.concatenate(scores) if scores else np.zeros(0, np.float32)
    c = np.concatenate(classes) if classes else np.zeros(0, np.int32)
    order = np.argsort(-s, kind="stable")
    return np.ascontiguousarray(b[order]), s[order], c[order]


def pack(boxes_yxyx: np.ndarray, scores: np.ndarray, class_ids: np.ndarray, num_classes: int, max_per_class: int,
         out: Optional[np.ndarray] = None) -> np.ndarray:
    """The flat buffer HailoRT writes: at most max_per_class boxes per class in the order given
    (score-descending within a class), the unused tail zeroed; into `out` when given (C-contiguous
    float32, large enough)."""
    nc, mpc = int(num_classes), int(max_per_class)
    size = buffer_size(nc, mpc)
    if out is None:
        out = np.empty(size, dtype=np.float32)
    elif not isinstance(out, np.ndarray) or out.dtype != np.float32 or not out.flags.c_contiguous:
        raise TypeError(f"out must be a C-contiguous float32 ndarray, got {type(out).__name__} {getattr(out, 'dtype', '')}")
    elif out.size < size:
        raise ValueError(f"out holds {out.size} float32 values, HAILO_NMS_BY_CLASS for {nc} classes x {mpc} boxes "
                         f"needs {size}")
    class_ids = np.ascontiguousarray(class_ids, dtype=np.int32)
    if class_ids.size and (class_ids.min() < 0 or class_ids.max() >= nc):
        raise ValueError(f"class ids must lie in [0, {nc}), got {class_ids.min()}..{class_ids.max()}")
    _core.pack_hailo_nms_by_class(np.ascontiguousarray(boxes_yxyx, dtype=np.float32),
                                  np.ascontiguousarray(scores, dtype=np.float32), class_ids, nc, mpc, out)
    return out
