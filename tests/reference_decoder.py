"""Plain NumPy reference decoder for YOLOv8 head tensors from Hailo devices.

This module is the *independent* oracle the test-suite compares the fast
implementation against. It is written from the specification
(``/work/shared/reference/hailort-facts.md`` sections 1-4 and 8) and favours
obviousness over speed:

1. every output tensor is brought to its logical ``(H, W, C)`` form
   (host or padded device layout) and dequantized completely;
2. the activation is applied to every class value;
3. DFL is evaluated at every cell;
4. candidates are collected (heads in spec order, then row, column, class);
5. candidates are sorted by score (stable, or libstdc++ ``std::sort`` through a
   tiny compiled oracle, ``hailort_sort_oracle.cpp``);
6. a plain greedy NMS runs, followed by the per-class and total caps.

Public API
----------
``reference_decode(outputs, spec) -> (boxes, scores, class_ids)``
    ``boxes`` (n, 4) float32, ``scores`` (n,) float32, ``class_ids`` (n,) int64.
``decode_candidates(outputs, spec) -> dict``
    every candidate before sorting/NMS (used by ``random_cases`` and tests).
``logical_raw(array, info)`` / ``logical_float(array, info)``
    one output tensor as (H, W, C), raw values / dequantized float32.
``dequantize(raw, info)``, ``sigmoid32(x)``, ``dfl_distances(box)``,
``iou32(box, boxes)``, ``greedy_nms(...)``, ``sort_order(scores, tie_break)``,
``hailort_sort_permutation(scores)``, ``oracle_binary()``.

Numeric conventions (deliberate):

* dequantization ``(float32(q) - float32(zp)) * float32(scale)`` in float32;
* sigmoid ``1 / (1 + exp(-x))`` in float32;
* score threshold compared in float32 (the threshold is rounded to float32);
* DFL softmax + expectation is evaluated in float64 (max-subtracted, i.e. the
  mathematically exact value of the float32 logits) and rounded to float32;
  a float32 implementation agrees to ~1e-7 relative;
* box corners ``cx - l*stride`` etc. in float32 pixels, then (if
  ``normalized``) divided by the float32 image size;
* IoU computed in float32 on the output coordinates exactly as HailoRT's
  ``compute_iou`` (0 when overlap width or height <= 0, no +1); the IoU
  threshold comparison promotes the float32 IoU to float64 and compares with the
  threshold as given (HailoRT's ``nms_iou_th`` is a double, torchvision also
  compares a float IoU with a double threshold).
"""

from __future__ import annotations

import functools
import hashlib
import os
import struct
import subprocess
import tempfile
from pathlib import Path

import numpy as np

__all__ = [
    "DEFAULTS",
    "reference_decode",
    "decode_candidates",
    "logical_raw",
    "logical_float",
    "dequantize",
    "sigmoid32",
    "dfl_distances",
    "cell_boxes",
    "iou32",
    "greedy_nms",
    "sort_order",
    "hailort_sort_permutation",
    "oracle_binary",
    "resolve_spec",
]

# Optional spec keys and their defaults. Required keys: heads, outputs,
# image_size, score_threshold, iou_threshold.
DEFAULTS = {
    "activation": "none",
    "score_test": ">=",
    "multi_label": True,
    "iou_test": ">=",
    "agnostic": False,
    "tie_break": "stable",
    "max_candidates": None,
    "max_per_class": None,
    "max_total": None,
    "normalized": False,
    "box_order": "xyxy",
}

_REQUIRED = ("heads", "outputs", "image_size", "score_threshold", "iou_threshold")

_DTYPES = {"uint8": np.uint8, "uint16": np.uint16, "float32": np.float32}
_HOST_ORDERS = ("NHWC", "FCR", "F8CR", "NCHW")
_DEVICE_ORDERS = ("NHWC", "FCR", "NHCW", "F8CR")


def resolve_spec(spec: dict) -> dict:
    """Return a copy of ``spec`` with defaults filled in; validate the enums."""
    missing = [k for k in _REQUIRED if k not in spec]
    if missing:
        raise KeyError(f"spec is missing required keys: {missing}")
    full = dict(DEFAULTS)
    full.update(spec)
    if full["activation"] not in ("none", "sigmoid"):
        raise ValueError(f"bad activation {full['activation']!r}")
    for key in ("score_test", "iou_test"):
        if full[key] not in (">=", ">"):
            raise ValueError(f"bad {key} {full[key]!r}")
    if full["tie_break"] not in ("stable", "hailort"):
        raise ValueError(f"bad tie_break {full['tie_break']!r}")
    if full["box_order"] not in ("xyxy", "yxyx"):
        raise ValueError(f"bad box_order {full['box_order']!r}")
    return full


# --------------------------------------------------------------------------
# Layouts and quantization
# --------------------------------------------------------------------------

def logical_raw(array: np.ndarray, info: dict) -> np.ndarray:
    """Return the logical (H, W, C) elements of one output, undequantized.

    Host layout: "NHWC"/"FCR"/"F8CR" are dense ``h*W*C + w*C + c``; "NCHW" is
    ``c*H*W + h*W + w``. The array may be shaped or flat.

    Device layout: flat buffer of at least Hp*Wp*Cp elements;
    "NHWC"/"FCR": ``h*Wp*Cp + w*Cp + c``; "NHCW": ``h*Wp*Cp + c*Wp + w``;
    "F8CR": ``h*Wp*Cp + (c - c%8)*Wp + w*8 + c%8``.
    Only elements with h<H, w<W, c<C are read.
    """
    H, W, C = (int(v) for v in info["shape"])
    dtype = np.dtype(_DTYPES[info["dtype"]])
    arr = np.asarray(array)
    if arr.dtype != dtype:
        raise TypeError(f"array dtype {arr.dtype} does not match spec dtype {info['dtype']}")
    order = info["order"]
    layout = info["layout"]

    if layout == "host":
        if order not in _HOST_ORDERS:
            raise ValueError(f"bad host order {order!r}")
        if arr.size != H * W * C:
            raise ValueError(f"host array has {arr.size} elements, expected {H * W * C}")
        flat = arr.reshape(-1)
        if order == "NCHW":
            return flat.reshape(C, H, W).transpose(1, 2, 0).copy()
        return flat.reshape(H, W, C).copy()

    if layout != "device":
        raise ValueError(f"bad layout {layout!r}")
    if order not in _DEVICE_ORDERS:
        raise ValueError(f"bad device order {order!r}")
    padded = info.get("padded_shape")
    if padded is None:
        raise ValueError("device layout needs padded_shape")
    Hp, Wp, Cp = (int(v) for v in padded)
    if Hp < H or Wp < W or Cp < C:
        raise ValueError(f"padded shape {padded} smaller than shape {info['shape']}")
    flat = arr.reshape(-1)
    if flat.size < Hp * Wp * Cp:
        raise ValueError(f"device buffer has {flat.size} elements, needs {Hp * Wp * Cp}")

    h, w, c = np.meshgrid(np.arange(H), np.arange(W), np.arange(C), indexing="ij")
    if order in ("NHWC", "FCR"):
        index = h * Wp * Cp + w * Cp + c
    elif order == "NHCW":
        index = h * Wp * Cp + c * Wp + w
    else:  # F8CR
        if Cp % 8 != 0:
            raise ValueError(f"F8CR needs padded features % 8 == 0, got {Cp}")
        index = h * Wp * Cp + (c - c % 8) * Wp + w * 8 + c % 8
    return flat[index]


def _per_channel(value, C: int, what: str) -> np.ndarray:
    """zp/scale as float32, either a scalar or a length-C vector."""
    v = np.asarray(value, dtype=np.float32)
    if v.ndim == 0:
        return v
    v = v.reshape(-1)
    if v.size < C:
        raise ValueError(f"per-channel {what} has {v.size} entries, need {C}")
    return v[:C]


def dequantize(raw: np.ndarray, info: dict) -> np.ndarray:
    """(H, W, C) raw values -> float32: (float32(q) - float32(zp)) * float32(scale).

    float32 tensors are returned as they are (zp/scale ignored).
    """
    if info["dtype"] == "float32":
        return np.asarray(raw, dtype=np.float32)
    C = raw.shape[-1]
    zp = _per_channel(info["zp"], C, "zp")
    scale = _per_channel(info["scale"], C, "scale")
    q = raw.astype(np.float32)
    diff = (q - zp).astype(np.float32)
    return (diff * scale).astype(np.float32)


def logical_float(array: np.ndarray, info: dict) -> np.ndarray:
    """One output tensor as dequantized float32 (H, W, C)."""
    return dequantize(logical_raw(array, info), info)


# --------------------------------------------------------------------------
# Per-cell math
# --------------------------------------------------------------------------

def sigmoid32(x: np.ndarray) -> np.ndarray:
    """float32 1 / (1 + exp(-x))."""
    x = np.asarray(x, dtype=np.float32)
    one = np.float32(1.0)
    with np.errstate(over="ignore"):
        return (one / (one + np.exp(-x))).astype(np.float32)


def dfl_distances(box: np.ndarray) -> np.ndarray:
    """(H, W, 4R) float32 box tensor -> (H, W, 4) float32 distances l, t, r, b.

    R = C / 4 bins per side; channels [0,R) left, [R,2R) top, [2R,3R) right,
    [3R,4R) bottom. Softmax per side, distance = sum(i * p_i). With R == 1
    the values are the distances themselves.
    """
    H, W, C = box.shape
    if C % 4 != 0:
        raise ValueError(f"box tensor has {C} channels, not a multiple of 4")
    R = C // 4
    sides = box.reshape(H, W, 4, R)
    if R == 1:
        return sides[..., 0].astype(np.float32)
    x = sides.astype(np.float64)
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    p = e / e.sum(axis=-1, keepdims=True)
    dist = (p * np.arange(R, dtype=np.float64)).sum(axis=-1)
    return dist.astype(np.float32)


def cell_boxes(dist: np.ndarray, stride: int) -> np.ndarray:
    """(H, W, 4) distances -> (H, W, 4) xyxy boxes in input pixels, float32."""
    H, W, _ = dist.shape
    s = np.float32(stride)
    rows = np.arange(H, dtype=np.float32)[:, None]
    cols = np.arange(W, dtype=np.float32)[None, :]
    cx = ((cols + np.float32(0.5)) * s) * np.ones((H, 1), np.float32)
    cy = ((rows + np.float32(0.5)) * s) * np.ones((1, W), np.float32)
    x1 = cx - dist[..., 0] * s
    y1 = cy - dist[..., 1] * s
    x2 = cx + dist[..., 2] * s
    y2 = cy + dist[..., 3] * s
    return np.stack([x1, y1, x2, y2], axis=-1).astype(np.float32)


# --------------------------------------------------------------------------
# Candidates
# --------------------------------------------------------------------------

def _passes(values: np.ndarray, threshold: np.ndarray, test: str) -> np.ndarray:
    if test == ">=":
        return values >= threshold
    return values > threshold


def decode_candidates(outputs: dict, spec: dict) -> dict:
    """All candidates of one frame, in candidate order (heads, row, col, class).

    Returns a dict of arrays, one entry per candidate:
      ``boxes_px`` (n,4) float32 xyxy pixels, ``boxes`` (n,4) float32 xyxy in
      output units (normalized or pixels; always xyxy), ``scores`` (n,) float32,
      ``class_ids`` (n,) int64, ``head``/``row``/``col`` (n,) int64.
    Also ``num_classes`` and ``threshold`` (per-class float32 array).
    """
    spec = resolve_spec(spec)
    H_img, W_img = (int(v) for v in spec["image_size"])

    per_head = []
    num_classes = None
    for head_index, head in enumerate(spec["heads"]):
        box_info = spec["outputs"][head["box"]]
        cls_info = spec["outputs"][head["cls"]]
        box = logical_float(outputs[head["box"]], box_info)
        cls = logical_float(outputs[head["cls"]], cls_info)
        if box.shape[:2] != cls.shape[:2]:
            raise ValueError(f"head {head_index}: box grid {box.shape[:2]} != cls grid {cls.shape[:2]}")
        if num_classes is None:
            num_classes = cls.shape[2]
        elif cls.shape[2] != num_classes:
            raise ValueError("heads disagree on the number of classes")
        if spec["activation"] == "sigmoid":
            cls = sigmoid32(cls)
        boxes = cell_boxes(dfl_distances(box), int(head["stride"]))
        per_head.append((head_index, boxes, cls))

    if num_classes is None:
        raise ValueError("spec has no heads")
    th = np.asarray(spec["score_threshold"], dtype=np.float32)
    if th.ndim == 0:
        th = np.full(num_classes, th, dtype=np.float32)
    th = th.reshape(-1)
    if th.size != num_classes:
        raise ValueError(f"score_threshold has {th.size} entries for {num_classes} classes")

    parts = []
    for head_index, boxes, cls in per_head:
        if spec["multi_label"]:
            mask = _passes(cls, th[None, None, :], spec["score_test"])
            rows, cols, ks = np.nonzero(mask)  # C order: row, col, class
        else:
            best = np.argmax(cls, axis=2)  # first maximum -> lowest class on ties
            best_score = np.take_along_axis(cls, best[..., None], axis=2)[..., 0]
            mask = _passes(best_score, th[best], spec["score_test"])
            rows, cols = np.nonzero(mask)  # C order: row, col
            ks = best[rows, cols]
        parts.append(
            dict(
                boxes_px=boxes[rows, cols].reshape(-1, 4),
                scores=cls[rows, cols, ks].astype(np.float32),
                class_ids=ks.astype(np.int64),
                head=np.full(rows.size, head_index, dtype=np.int64),
                row=rows.astype(np.int64),
                col=cols.astype(np.int64),
            )
        )

    cand = {key: np.concatenate([p[key] for p in parts]) for key in parts[0]}
    cand["boxes_px"] = cand["boxes_px"].astype(np.float32).reshape(-1, 4)
    boxes = cand["boxes_px"].copy()
    if spec["normalized"]:
        boxes[:, [0, 2]] = boxes[:, [0, 2]] / np.float32(W_img)
        boxes[:, [1, 3]] = boxes[:, [1, 3]] / np.float32(H_img)
    cand["boxes"] = boxes.astype(np.float32)
    cand["num_classes"] = num_classes
    cand["threshold"] = th
    return cand


# --------------------------------------------------------------------------
# Sorting
# --------------------------------------------------------------------------

_ORACLE_SOURCE = Path(__file__).with_name("hailort_sort_oracle.cpp")
_ORACLE_FLAGS = ("-O2", "-std=c++17")


@functools.lru_cache(maxsize=None)
def oracle_binary() -> Path:
    """Compile ``hailort_sort_oracle.cpp`` once and return the executable.

    The binary lives in ``$HAILO_DECODE_REF_CACHE`` or else
    ``<tempdir>/hailo-decode-ref-<uid>/``, named by a hash of the source, the
    flags and ``g++ --version``; an existing binary with the same hash is reused
    (so it is built at most once per change, and once per process at most).
    Compilation goes to a temporary name and is renamed atomically, so parallel
    test workers are safe.
    """
    cache = os.environ.get("HAILO_DECODE_REF_CACHE")
    if cache:
        cache_dir = Path(cache)
    else:
        cache_dir = Path(tempfile.gettempdir()) / f"hailo-decode-ref-{os.getuid()}"
    cache_dir.mkdir(parents=True, exist_ok=True)
    source = _ORACLE_SOURCE.read_bytes()
    version = subprocess.run(["g++", "--version"], capture_output=True, check=True).stdout
    key = hashlib.sha256(source + b"\0" + " ".join(_ORACLE_FLAGS).encode() + b"\0" + version)
    exe = cache_dir / f"hailort_sort_oracle-{key.hexdigest()[:16]}"
    if not exe.exists():
        tmp = cache_dir / f"{exe.name}.tmp{os.getpid()}"
        subprocess.run(
            ["g++", *_ORACLE_FLAGS, str(_ORACLE_SOURCE), "-o", str(tmp)],
            check=True,
            capture_output=True,
        )
        os.replace(tmp, exe)
    return exe


def hailort_sort_permutation(scores: np.ndarray) -> np.ndarray:
    """Permutation produced by libstdc++ std::sort(score desc) on these scores."""
    scores = np.asarray(scores, dtype=np.float32).reshape(-1)
    n = scores.size
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    payload = struct.pack("<I", n) + scores.astype("<f4").tobytes()
    result = subprocess.run([str(oracle_binary())], input=payload, capture_output=True, check=True)
    perm = np.array(result.stdout.split(), dtype=np.int64)
    if perm.size != n or not np.array_equal(np.sort(perm), np.arange(n)):
        raise RuntimeError("sort oracle did not return a permutation")
    return perm


def sort_order(scores: np.ndarray, tie_break: str) -> np.ndarray:
    """Indices of the candidates sorted by score, descending."""
    scores = np.asarray(scores, dtype=np.float32)
    if tie_break == "stable":
        return np.argsort(-scores, kind="stable").astype(np.int64)
    if tie_break == "hailort":
        return hailort_sort_permutation(scores)
    raise ValueError(f"bad tie_break {tie_break!r}")


# --------------------------------------------------------------------------
# NMS
# --------------------------------------------------------------------------

def iou32(box: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    """float32 IoU of one xyxy box with each of ``boxes`` (k, 4).

    inter = ow * oh with ow = min(x2) - max(x1), oh = min(y2) - max(y1);
    IoU = 0 when ow <= 0 or oh <= 0; else inter / (area_a + area_b - inter).
    """
    box = np.asarray(box, dtype=np.float32)
    boxes = np.asarray(boxes, dtype=np.float32).reshape(-1, 4)
    ow = np.minimum(box[2], boxes[:, 2]) - np.maximum(box[0], boxes[:, 0])
    oh = np.minimum(box[3], boxes[:, 3]) - np.maximum(box[1], boxes[:, 1])
    inter = ow * oh
    area_a = (box[3] - box[1]) * (box[2] - box[0])
    area_b = (boxes[:, 3] - boxes[:, 1]) * (boxes[:, 2] - boxes[:, 0])
    union = (area_a + area_b) - inter
    overlap = (ow > 0) & (oh > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        iou = np.where(overlap, inter / np.where(overlap, union, np.float32(1)), np.float32(0))
    return iou.astype(np.float32)


def greedy_nms(boxes: np.ndarray, class_ids: np.ndarray, iou_threshold: float,
               iou_test: str, agnostic: bool) -> np.ndarray:
    """Greedy NMS over boxes that are ALREADY in sorted order.

    Returns the positions (into ``boxes``) of the kept boxes, in order. A box is
    kept when no previously kept box (of the same class unless ``agnostic``)
    has IoU ``iou_test`` ``iou_threshold`` with it.

    Implementation: HailoRT's ``remove_overlapping_boxes`` loop -- walk the
    sorted boxes; a box that is still alive is kept and kills every later alive
    box it overlaps -- run separately for each class (boxes of different classes
    never suppress each other, so the groups are independent) or once over all
    boxes when agnostic. The IoU of one box against the later ones is computed
    with numpy, which keeps large candidate sets (low thresholds) fast.
    """
    boxes = np.asarray(boxes, dtype=np.float32).reshape(-1, 4)
    class_ids = np.asarray(class_ids, dtype=np.int64)
    th = float(iou_threshold)
    if agnostic:
        groups = [np.arange(len(boxes))]
    else:
        groups = [np.flatnonzero(class_ids == k) for k in np.unique(class_ids)]
    kept = []
    for positions in groups:  # positions are increasing, i.e. in sorted order
        group_boxes = boxes[positions]
        alive = np.ones(len(positions), dtype=bool)
        for i in range(len(positions)):
            if not alive[i]:
                continue
            kept.append(positions[i])
            later = np.flatnonzero(alive[i + 1:]) + i + 1
            if later.size == 0:
                continue
            iou = iou32(group_boxes[i], group_boxes[later]).astype(np.float64)
            killed = iou >= th if iou_test == ">=" else iou > th
            alive[later[killed]] = False
    return np.sort(np.array(kept, dtype=np.int64))


def _cap_per_class(class_ids: np.ndarray, limit) -> np.ndarray:
    """Positions to keep when at most ``limit`` per class (first ones win)."""
    if limit is None:
        return np.arange(len(class_ids))
    counts = {}
    keep = []
    for pos, k in enumerate(class_ids.tolist()):
        if counts.get(k, 0) < int(limit):
            counts[k] = counts.get(k, 0) + 1
            keep.append(pos)
    return np.array(keep, dtype=np.int64)


# --------------------------------------------------------------------------
# The decoder
# --------------------------------------------------------------------------

def reference_decode(outputs: dict, spec: dict):
    """Decode one frame. Returns (boxes (n,4) float32, scores (n,) float32,
    class_ids (n,) int64) in final order (score descending as sorted)."""
    spec = resolve_spec(spec)
    cand = decode_candidates(outputs, spec)

    order = sort_order(cand["scores"], spec["tie_break"])
    if spec["max_candidates"] is not None:
        order = order[: int(spec["max_candidates"])]

    boxes = cand["boxes"][order]
    scores = cand["scores"][order]
    class_ids = cand["class_ids"][order]

    kept = greedy_nms(boxes, class_ids, spec["iou_threshold"], spec["iou_test"], spec["agnostic"])
    boxes, scores, class_ids = boxes[kept], scores[kept], class_ids[kept]

    keep = _cap_per_class(class_ids, spec["max_per_class"])
    boxes, scores, class_ids = boxes[keep], scores[keep], class_ids[keep]

    if spec["max_total"] is not None:
        n = int(spec["max_total"])
        boxes, scores, class_ids = boxes[:n], scores[:n], class_ids[:n]

    if spec["box_order"] == "yxyx":
        boxes = boxes[:, [1, 0, 3, 2]]
    return (
        np.ascontiguousarray(boxes, dtype=np.float32).reshape(-1, 4),
        np.ascontiguousarray(scores, dtype=np.float32),
        np.ascontiguousarray(class_ids, dtype=np.int64),
    )
