"""The yolov8_bbox_only op's output (libhailort/src/net_flow/ops/yolov8_bbox_only_post_process.hpp):
float32 NHWC (1, proposals, 4 + classes). Proposals are the cells of every bbox decoder's grid,
decoders in the HEF's order, then row, then column; each row is {y_min, x_min, y_max, x_max}
normalized by the op's image size (the NMS op's own decode), then every class's dequantized
score (no sigmoid). HailoRT runs no NMS on it: `nms` does, in HailoRT's candidate order (row,
then class) with the Decoder's own sort and suppression, so a bbox-only HEF gives the detections
its NMS twin would."""

from __future__ import annotations

from typing import Any, Optional, Tuple

import numpy as np

from .. import _core

__all__ = ["BOX_VALUES", "floats", "rows", "split", "nms", "BBOX_OPS", "yolov5_scores"]

BOX_VALUES = 4  # y_min, x_min, y_max, x_max
# The ops whose rows this reads: yolov8_bbox_only ({box, classes}) and yolov5_bbox_only
# (yolov5_bbox_only_post_process.hpp add_bboxes: {box, objectness, classes}, inputs in name order,
# then row, column, anchor: the YOLOv5 op's candidate order).
BBOX_OPS = ("yolov8", "yolov5")
_NMS_SETTINGS = ("class_activation", "score_threshold", "score_test", "iou_threshold", "iou_test", "multi_label",
                 "agnostic", "max_per_class", "max_total", "max_candidates", "tie_break")


def floats(proposals: int, num_classes: int) -> int:
    """float32 values in one frame: proposals x (4 + classes)."""
    p, c = int(proposals), int(num_classes)
    if p < 0 or c < 1:
        raise ValueError(f"proposals must be >= 0 and num_classes >= 1, got {p}, {c}")
    return p * (BOX_VALUES + c)


def rows(output: Any, num_classes: Optional[int] = None, proposals: Optional[int] = None) -> np.ndarray:
    """One frame as a C-contiguous (proposals, 4 + classes) float32 array (a view when it can be).
    Takes HailoRT's (1, proposals, 4 + classes), (proposals, 4 + classes), or the flat buffer
    (which needs num_classes)."""
    a = np.asarray(output)
    if a.dtype != np.float32:
        raise TypeError(f"the yolov8_bbox_only output is float32 (HailoRT requires FormatType.FLOAT32), got {a.dtype}")
    if a.ndim == 3 and a.shape[0] == 1:
        a = a[0]
    elif a.ndim == 1:
        if num_classes is None:
            raise ValueError("a flat yolov8_bbox_only buffer needs num_classes=")
        width = BOX_VALUES + int(num_classes)
        if a.size % width:
            raise ValueError(f"a flat yolov8_bbox_only buffer of {a.size} values is not a whole number of rows of "
                             f"4 + {num_classes} values")
        a = a.reshape(-1, width)
    if a.ndim != 2:
        raise ValueError(f"expected the yolov8_bbox_only output (1, proposals, 4 + classes), got shape {np.shape(output)}")
    if a.shape[1] < BOX_VALUES + 1:
        raise ValueError(f"yolov8_bbox_only rows hold 4 box values and at least one score, got {a.shape[1]} values")
    if num_classes is not None and a.shape[1] != BOX_VALUES + int(num_classes):
        raise ValueError(f"expected rows of 4 + {num_classes} values, got {a.shape[1]}")
    if proposals is not None and a.shape[0] != int(proposals):
        raise ValueError(f"expected {proposals} proposals, got {a.shape[0]}")
    return np.ascontiguousarray(a)


def split(frame: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """(boxes (proposals, 4) yxyx normalized, scores (proposals, classes)) of `rows(...)`: views,
    no NMS."""
    return frame[:, :BOX_VALUES], frame[:, BOX_VALUES:]


def nms(frame: np.ndarray, *, semantics: str = "hailort", **settings: Any) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(boxes (n, 4) yxyx normalized, scores (n,), class_ids (n,)) kept from `rows(...)`, best
    first. Settings as DecoderConfig names them (class_activation, score_threshold, score_test,
    iou_threshold, iou_test, multi_label, agnostic, max_per_class, max_total, max_candidates,
    tie_break), checked by the core as DecoderConfig's are (the same ranges and messages); the
    preset (`semantics`) fills the rest. Non-finite values: ValueError."""
    unknown = sorted(set(settings) - set(_NMS_SETTINGS))
    if unknown:
        raise TypeError(f"unknown setting(s) {unknown}; settings are {list(_NMS_SETTINGS)}")
    options = _core.read_options(dict(settings, semantics=semantics))
    num_classes = frame.shape[1] - BOX_VALUES
    layout = _core.Layout()  # what the settings need of a model: its class count (per-class thresholds)
    layout.num_classes = num_classes
    s = _core.make_settings(layout, options)
    s.normalized = True  # the op's boxes: yxyx, normalized (box_format is the caller's, applied after)
    s.yxyx = True
    boxes, scores, class_ids = _core.decode_bbox_only(frame, frame.shape[0], num_classes, s)
    return boxes, scores, class_ids


def yolov5_scores(frame: np.ndarray, *, semantics: str = "hailort", **settings: Any) -> np.ndarray:
    """yolov5_bbox_only rows (proposals, 5 + classes) as yolov8_bbox_only rows (proposals,
    4 + classes) whose scores are the YOLOv5 op's: class x objectness in float32 (both after the
    activation when class_activation is "sigmoid"), and nothing for a proposal whose objectness
    fails the score test (the op skips it: yolov5_post_process.hpp, `objectness < nms_score_th`).
    `nms` then runs on them with class_activation "none". Non-finite values: ValueError."""
    if frame.shape[1] < BOX_VALUES + 2:
        raise ValueError(f"yolov5_bbox_only rows hold 4 box values, the objectness and at least one class, got "
                         f"{frame.shape[1]} values")
    if not np.isfinite(frame).all():
        bad = np.argwhere(~np.isfinite(frame))[0]
        raise ValueError(f"yolov5_bbox_only output: non-finite value {frame[tuple(bad)]} at proposal {bad[0]}, "
                         f"column {bad[1]}")
    options = _core.read_options(dict({k: v for k, v in settings.items() if k in _NMS_SETTINGS}, semantics=semantics))
    obj = frame[:, BOX_VALUES:BOX_VALUES + 1]
    cls = frame[:, BOX_VALUES + 1:]
    if options.class_activation == "sigmoid":
        one = np.float32(1.0)
        obj = (one / (one + np.exp(-obj))).astype(np.float32)
        cls = (one / (one + np.exp(-cls))).astype(np.float32)
    scores = (cls * obj).astype(np.float32)
    th = np.asarray(options.score_threshold, np.float32)  # one value or one per class
    gate = obj >= th.min() if options.score_test == ">=" else obj > th.min()
    lowest = np.float32(np.finfo(np.float32).min)
    out = np.empty((frame.shape[0], BOX_VALUES + cls.shape[1]), np.float32)
    out[:, :BOX_VALUES] = frame[:, :BOX_VALUES]
    out[:, BOX_VALUES:] = np.where(gate, scores, lowest)
    return out
