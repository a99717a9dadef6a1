"""Fuzz cases for the readers of HailoRT's other NMS forms (hailo_decode.formats.by_score and
bbox_only, through decode_hailo_nms): specs drawn by hypothesis, runners that build the input
from spec["seed"] and judge the outcome, as decoder_cases does for the rest.

* ``by_score_input``: HAILO_NMS_BY_SCORE frames with a lying count (0, one over the records,
  65535, random), truncated or padded bytes, NaN/inf/huge values and odd class ids in the records,
  as uint8 arrays (1-D, 2-D batches, other ranks), bytes, bytearray, memoryview, wrong dtypes, or
  pyhailort-style lists of Detection objects (some missing fields or holding non-numbers); odd
  max_bboxes_total / num_classes / box_format / image_size. Every frame is a slice of a larger
  buffer whose next bytes hold a sentinel record (class id 4242): a reader that read past its
  frame would return it.
* ``bbox_only_input``: yolov8_bbox_only outputs of 0 to 9 proposals and 1 to 5 classes with
  NaN/inf/huge values, in every accepted shape and some wrong ones and dtypes, with random NMS
  settings (thresholds 0/1/negative/NaN/per class of the wrong length, IoU 0/1/NaN, caps,
  presets, tie-breaks).

A result must be consistent Detections (shapes, class ids in range, scores descending and
finite) that obey the form's rules (by_score: no more records than the bytes hold or
max_bboxes_total allows, a round trip through to_hailo_nms_by_score_buffer; bbox_only: scores pass
the threshold, caps hold, no two kept boxes of a class overlap past the IoU threshold); anything
else must be ValueError/TypeError.
"""

from __future__ import annotations

import struct
from types import SimpleNamespace
from typing import Any, Dict, List

import numpy as np
from hypothesis import strategies as st

import hailo_decode as hd

from .decoder_cases import CLEAN, HarnessFailure

_SENTINEL_CLASS = 4242
_VALUES = [0.0, 0.5, 1.0, -1.0, 1e30, float("nan"), float("inf"), float("-inf"), 1e-45, -0.0, 0.25, 3.4e38]


def _check_detections(d: Any, num_classes: Any) -> None:
    if not isinstance(d, hd.Detections):
        raise HarnessFailure(f"decode_hailo_nms gave {type(d).__name__}")
    n = len(d)
    if d.boxes.shape != (n, 4) or d.scores.shape != (n,) or d.class_ids.shape != (n,):
        raise HarnessFailure("inconsistent Detections")
    if n and not (np.isfinite(d.scores).all() and np.isfinite(d.boxes).all()):
        raise HarnessFailure("non-finite values got through")
    if np.any(d.scores[1:] > d.scores[:-1]):
        raise HarnessFailure("scores are not in descending order")
    if n and d.class_ids.min() < 0:
        raise HarnessFailure("negative class id")
    if n and isinstance(num_classes, int) and not isinstance(num_classes, bool) and d.class_ids.max() >= num_classes:
        raise HarnessFailure(f"class id {d.class_ids.max()} >= num_classes {num_classes}")


# ------------------------------------------------------------------------------------------------
# by_score_input
# ------------------------------------------------------------------------------------------------
@st.composite
def by_score_specs(draw) -> Dict[str, Any]:
    return dict(
        kind="by_score_input", seed=draw(st.integers(0, 2**32 - 1)), records=draw(st.integers(0, 6)),
        count=draw(st.sampled_from(["right"] * 4 + ["plus1", "plus2", "zero", "max", "random"])),
        capacity=draw(st.sampled_from(["records"] * 3 + ["more", "fewer"])),
        cut=draw(st.sampled_from([None] * 4 + ["random", 0, 1, 2, 3])),
        append=draw(st.sampled_from([0] * 4 + [1, 5, 21, 22, 23])),
        values=draw(st.sampled_from(["fine"] * 4 + ["odd"])),
        classes=draw(st.sampled_from(["small"] * 4 + ["big", "max"])),
        container=draw(st.sampled_from(["array"] * 4 + ["batch", "bytes", "bytearray", "memoryview", "objects",
                                                       "objects_batch", "bad_objects", "uint16", "float32", "3d",
                                                       "noncontig"])),
        max_bboxes_total=draw(st.sampled_from([None] * 5 + [0, 1, 3, 10**6, -1, "x", 2.5])),
        num_classes=draw(st.sampled_from([None] * 4 + [8, 1, 0, -3, 5000, "8"])),
        box_format=draw(st.sampled_from(["yxyx_normalized"] * 4 + ["xyxy_pixels", "xyxy_normalized", "bad"])),
        image_size=draw(st.sampled_from([None, None, [480, 640], [0, 0], "ab"])))


def _records(spec: Dict[str, Any], rng: np.random.Generator, n: int) -> List[tuple]:
    out = []
    hi = {"small": 8, "big": 5000, "max": 65536}[spec["classes"]]
    for _ in range(n):
        box = rng.random(4).astype(np.float32).tolist()
        score = float(rng.random())
        if spec["values"] == "odd" and rng.random() < 0.5:
            k = int(rng.integers(0, 5))
            v = float(rng.choice(_VALUES))
            if k < 4:
                box[k] = v
            else:
                score = v
        out.append((box, score, int(rng.integers(0, hi))))
    out.sort(key=lambda r: -r[1] if r[1] == r[1] else 0)
    return out


def _frame(spec: Dict[str, Any], rng: np.random.Generator) -> bytes:
    recs = _records(spec, rng, spec["records"])
    n = len(recs)
    cap = {"records": n, "more": n + int(rng.integers(1, 4)), "fewer": max(0, n - 1)}[spec["capacity"]]
    count = {"right": n, "plus1": cap + 1, "plus2": cap + 2, "zero": 0, "max": 65535,
             "random": int(rng.integers(0, 65536))}[spec["count"]]
    body = b"".join(struct.pack("=5fH", *[np.float32(v) for v in box], np.float32(s), c & 0xFFFF)
                    for box, s, c in recs[:cap])
    frame = struct.pack("=H", count) + body + b"\0" * (22 * (cap - min(cap, n)))
    if spec["cut"] is not None:
        cut = int(rng.integers(0, len(frame) + 1)) if spec["cut"] == "random" else spec["cut"]
        frame = frame[:cut]
    return frame + bytes(rng.integers(0, 256, spec["append"], dtype=np.uint8))


def _in_guarded(frame: bytes) -> np.ndarray:
    """The frame as a view of a larger buffer whose next 22 bytes are a sentinel record."""
    sentinel = struct.pack("=5fH", 0.1, 0.1, 0.2, 0.2, 2.0, _SENTINEL_CLASS)
    whole = np.frombuffer(frame + sentinel, np.uint8)
    return whole[:len(frame)]


def _objects(rng: np.random.Generator, recs: List[tuple], bad: bool) -> List[Any]:
    out: List[Any] = []
    for box, s, c in recs:
        o = SimpleNamespace(y_min=box[0], x_min=box[1], y_max=box[2], x_max=box[3], score=s, class_id=c)
        if bad and rng.random() < 0.5:
            if rng.random() < 0.5:
                delattr(o, "score")
            else:
                o.class_id = "three"
        out.append(o)
    if bad and rng.random() < 0.3:
        out.append(None)
    return out


def _by_score_input(spec: Dict[str, Any], rng: np.random.Generator) -> Any:
    c = spec["container"]
    if c in ("objects", "objects_batch", "bad_objects"):
        one = _objects(rng, _records(spec, rng, spec["records"]), c == "bad_objects")
        return [one, _objects(rng, _records(spec, rng, spec["records"]), False)] if c == "objects_batch" else one
    frame = _frame(spec, rng)
    if c == "batch":
        other = _frame(spec, rng)
        m = min(len(frame), len(other))
        return np.stack([_in_guarded(frame[:m]), _in_guarded(other[:m])])
    if c == "bytes":
        return frame
    if c == "bytearray":
        return bytearray(frame)
    if c == "memoryview":
        return memoryview(frame)
    if c == "uint16":
        return np.frombuffer(frame[:len(frame) // 2 * 2], np.uint16)
    if c == "float32":
        return np.frombuffer(frame[:len(frame) // 4 * 4], np.float32)
    if c == "3d":
        return _in_guarded(frame).reshape(1, 1, -1)
    if c == "noncontig":
        return np.repeat(_in_guarded(frame), 2)[::2]
    return _in_guarded(frame)


def run_by_score_spec(spec: Dict[str, Any]) -> str:
    rng = np.random.default_rng(spec["seed"])
    output = _by_score_input(spec, rng)
    image_size = tuple(spec["image_size"]) if isinstance(spec["image_size"], list) else spec["image_size"]
    mbt, nc = spec["max_bboxes_total"], spec["num_classes"]
    try:
        res = hd.decode_hailo_nms(output, format="by_score", max_bboxes_total=mbt, num_classes=nc,
                                  image_size=image_size, box_format=spec["box_format"])
    except CLEAN:
        return "rejected"
    frames = res if isinstance(res, list) else [res]
    lengths = None
    if isinstance(output, np.ndarray) and output.ndim == 2:
        lengths = [output.shape[1]] * output.shape[0]
    elif isinstance(output, np.ndarray):
        lengths = [output.size]
    elif isinstance(output, (bytes, bytearray, memoryview)):
        lengths = [len(output)]
    for k, d in enumerate(frames):
        _check_detections(d, nc)
        if len(d) and int(d.class_ids.max()) == _SENTINEL_CLASS:
            raise HarnessFailure("the reader returned the sentinel record past the end of its frame")
        if lengths is not None and len(d) > (lengths[k] - 2) // 22:
            raise HarnessFailure(f"{len(d)} records from a {lengths[k]}-byte frame")
        if isinstance(mbt, int) and mbt >= 0 and len(d) > mbt:
            raise HarnessFailure(f"{len(d)} records with max_bboxes_total {mbt}")
        if d.box_format == "yxyx_normalized" and len(d) and d.class_ids.max() <= 65535:
            again = hd.decode_hailo_nms(d.to_hailo_nms_by_score_buffer(max_bboxes_total=len(d)), format="by_score")
            if not (np.array_equal(again.boxes, d.boxes) and np.array_equal(again.scores, d.scores)
                    and np.array_equal(again.class_ids, d.class_ids)):
                raise HarnessFailure("to_hailo_nms_by_score_buffer -> decode_hailo_nms does not round-trip")
    return "decoded"


# ------------------------------------------------------------------------------------------------
# bbox_only_input
# ------------------------------------------------------------------------------------------------
@st.composite
def bbox_only_specs(draw) -> Dict[str, Any]:
    return dict(
        kind="bbox_only_input", seed=draw(st.integers(0, 2**32 - 1)), proposals=draw(st.integers(0, 9)),
        classes=draw(st.integers(1, 5)), values=draw(st.sampled_from(["fine"] * 4 + ["odd", "overlap"])),
        shape=draw(st.sampled_from(["hailort"] * 4 + ["2d", "flat", "batch", "batch3", "5d", "narrow"])),
        dtype=draw(st.sampled_from(["float32"] * 6 + ["float64", "float16", "int32"])),
        num_classes=draw(st.sampled_from(["right"] * 5 + [None, "minus", "plus", 0, "x"])),
        semantics=draw(st.sampled_from(["hailort"] * 4 + ["ultralytics", "bad"])),
        score_threshold=draw(st.sampled_from([None] * 3 + [0.0, 0.5, 1.0, -1.0, float("nan"), 1e30, "per_class",
                                                           "wrong_length"])),
        iou_threshold=draw(st.sampled_from([None] * 3 + [0.0, 0.5, 1.0, float("nan"), 2.0])),
        max_per_class=draw(st.sampled_from([None] * 3 + [0, 1, 2, -1])),
        max_total=draw(st.sampled_from([None] * 4 + [0, 1, 3])),
        tie_break=draw(st.sampled_from([None] * 3 + ["hailort", "stable", "odd"])))


def _bbox_only_input(spec: Dict[str, Any], rng: np.random.Generator) -> np.ndarray:
    n, c = spec["proposals"], spec["classes"]
    rows = rng.random((n, 4 + c)).astype(np.float32)
    rows[:, 2:4] = rows[:, 0:2] + rows[:, 2:4] * 0.5  # mostly well-formed boxes
    if spec["values"] == "overlap" and n:
        rows[:, :4] = rows[0, :4]  # one box, repeated: NMS must keep at most one a class
    if spec["values"] == "odd" and rows.size:
        mask = rng.random(rows.shape) < 0.1
        rows[mask] = rng.choice(np.float32(_VALUES), size=int(mask.sum()))
    with np.errstate(all="ignore"):
        rows = rows.astype(spec["dtype"])
    shape = spec["shape"]
    if shape == "hailort":
        return rows[None]
    if shape == "2d":
        return rows
    if shape == "flat":
        return rows.reshape(-1)
    if shape == "batch":
        return np.stack([rows[None], rows[None][:, ::-1]])
    if shape == "batch3":
        return np.stack([rows, rows])
    if shape == "5d":
        return rows[None, None, None]
    return rows[:, :int(rng.integers(0, 5))]


def run_bbox_only_spec(spec: Dict[str, Any]) -> str:
    rng = np.random.default_rng(spec["seed"])
    output = _bbox_only_input(spec, rng)
    c = spec["classes"]
    nc = {"right": c, "minus": c - 1, "plus": c + 1}.get(spec["num_classes"], spec["num_classes"]) \
        if spec["num_classes"] in ("right", "minus", "plus") else spec["num_classes"]
    kw: Dict[str, Any] = {}
    th = spec["score_threshold"]
    if th == "per_class":
        kw["score_threshold"] = [float(v) for v in rng.random(c)]
    elif th == "wrong_length":
        kw["score_threshold"] = [0.5] * (c + 1)
    elif th is not None:
        kw["score_threshold"] = th
    for key in ("iou_threshold", "max_per_class", "max_total", "tie_break"):
        if spec[key] is not None:
            kw[key] = spec[key]
    try:
        res = hd.decode_hailo_nms(output, format="bbox_only", num_classes=nc, semantics=spec["semantics"], **kw)
    except CLEAN:
        return "rejected"
    frames = res if isinstance(res, list) else [res]
    iou = kw.get("iou_threshold", 0.7 if spec["semantics"] == "hailort" else None)
    # The class count the reader was given: a flat buffer whose length fits rows of 4 + nc as well
    # as 4 + c is read as rows of 4 + nc (it cannot tell them apart).
    k = nc if isinstance(nc, int) and not isinstance(nc, bool) and nc > 0 else c
    most = max(spec["proposals"] * c, output.size // (4 + k) * k)
    for d in frames:
        _check_detections(d, k)
        if len(d) > most:
            raise HarnessFailure(f"{len(d)} detections from {output.size} values in rows of 4 + {k} classes")
        mpc = kw.get("max_per_class", 100 if spec["semantics"] == "hailort" else None)
        if mpc is not None and len(d) and np.bincount(d.class_ids).max() > mpc:
            raise HarnessFailure("max_per_class does not hold")
        if "max_total" in kw and len(d) > kw["max_total"]:
            raise HarnessFailure("max_total does not hold")
        if spec["semantics"] == "hailort" and "score_threshold" in kw and np.ndim(kw["score_threshold"]) == 0:
            if len(d) and d.scores.min() < np.float32(kw["score_threshold"]):
                raise HarnessFailure("a score under the threshold")
        # Copies of one box have IoU exactly 1: a threshold of 1 suppresses them only with the
        # ">=" test (the hailort preset's), not with ">" (Ultralytics', torchvision's).
        suppresses_copies = iou is not None and (0 < iou < 1 or (iou == 1 and spec["semantics"] == "hailort"))
        # Only when the rows are read as they were made (k == c): read in rows of 4 + k, the copies'
        # values land in other columns and the boxes are no longer copies.
        if spec["values"] == "overlap" and suppresses_copies and k == c and len(d):
            if np.bincount(d.class_ids).max() > 1:
                raise HarnessFailure("two copies of one box kept in one class")
    return "decoded"
