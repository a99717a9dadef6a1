"""HAILO_NMS_BY_SCORE (hailort.h hailo_detections_t): a uint16 count, then `count` packed 22-byte
records hailo_detection_t {float32 y_min, x_min, y_max, x_max, score; uint16 class_id}, in score
order (HailoRT's one global sort), at most max_bboxes_total of them, no per-class cap. A frame is
2 + 22 * max_bboxes_total bytes; HailoRT fills max_bboxes_total with classes x max_per_class
unless told otherwise (InferModel output().set_nms_max_proposals_total). HailoRT writes it only
for the InferModel API (vstreams refuse the order), as FormatType.UINT8, in the host's byte order
(little-endian on every host it runs on); pyhailort's get_buffer() turns it into a list of
Detection objects (y_min, x_min, y_max, x_max, score, class_id), get_buffer(tf_format=None) hands
out the bytes.

HailoRT's writer (NmsPostProcessOp::fill_nms_by_score_format_buffer, the same loop in 4.21 and
5.1, and in 4.23 by hailort-facts.md) stops only once its count exceeds max_bboxes_total: with more survivors it
writes max_bboxes_total + 1 records, the last one past the end of the frame, and a count of
max_bboxes_total + 1. `read` takes such a frame as what it holds (the records that fit) and never
follows a count past the buffer; `pack` writes at most max_bboxes_total records."""

from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple, Union

import numpy as np

from .. import _core

__all__ = ["COUNT_BYTES", "RECORD_BYTES", "MAX_TOTAL", "RECORD", "buffer_size", "default_max_total", "as_bytes",
           "read", "objects_to_arrays", "pack"]

COUNT_BYTES = 2
RECORD_BYTES = 22
MAX_TOTAL = 65535  # the count is a uint16
# hailo_detection_t, packed, in the host's byte order.
RECORD = np.dtype([("y_min", "=f4"), ("x_min", "=f4"), ("y_max", "=f4"), ("x_max", "=f4"), ("score", "=f4"),
                   ("class_id", "=u2")])
assert RECORD.itemsize == RECORD_BYTES

Arrays = Tuple[np.ndarray, np.ndarray, np.ndarray]


def buffer_size(max_bboxes_total: int) -> int:
    """Bytes of one frame: 2 + 22 * max_bboxes_total (HailoRTCommon::get_nms_by_score_host_frame_size)."""
    m = int(max_bboxes_total)
    if not 0 <= m <= MAX_TOTAL:
        raise ValueError(f"max_bboxes_total must lie in [0, {MAX_TOTAL}] (the count is a uint16), got {m}")
    return COUNT_BYTES + RECORD_BYTES * m


def default_max_total(num_classes: int, max_per_class: int) -> int:
    """HailoRT's max_bboxes_total when nobody sets it: classes x max_proposals_per_class."""
    return int(num_classes) * int(max_per_class)


def as_bytes(buffer: Union[np.ndarray, bytes, bytearray, memoryview]) -> np.ndarray:
    """The frame as a 1-D uint8 array (no copy for a contiguous uint8 array or a bytes object)."""
    if isinstance(buffer, (bytes, bytearray, memoryview)):
        return np.frombuffer(buffer, dtype=np.uint8)
    if not isinstance(buffer, np.ndarray):
        raise TypeError(f"a HAILO_NMS_BY_SCORE frame must be a uint8 ndarray or bytes, got {type(buffer).__name__}")
    if buffer.dtype != np.uint8:
        raise TypeError(f"a HAILO_NMS_BY_SCORE frame must be uint8 (HailoRT writes it as FormatType.UINT8), got "
                        f"{buffer.dtype}; if the array holds the frame's bytes, pass array.view(numpy.uint8)")
    return np.ascontiguousarray(buffer).reshape(-1)


def read(buffer: Union[np.ndarray, bytes, bytearray, memoryview], *, max_bboxes_total: Optional[int] = None,
         num_classes: Optional[int] = None) -> Arrays:
    """(boxes (n, 4) yxyx normalized float32, scores (n,) float32, class_ids (n,) int32) of one
    frame, in the frame's order (HailoRT's; a frame whose scores are not descending is sorted,
    stably). Reads only what the buffer holds: at most (len - 2) // 22 records, and at most
    max_bboxes_total when given. A count one over that, in a whole frame (2 + 22 k bytes, or
    max_bboxes_total given), is HailoRT 4.23's record past the end (dropped); any other count over
    it is a truncated or corrupt frame (ValueError), as are non-finite values and, with
    num_classes, class ids out of range."""
    b = as_bytes(buffer)
    if b.size < COUNT_BYTES:
        raise ValueError(f"HAILO_NMS_BY_SCORE frame of {b.size} bytes is shorter than its 2-byte count")
    capacity = (b.size - COUNT_BYTES) // RECORD_BYTES
    if max_bboxes_total is not None:
        capacity = min(capacity, int(max_bboxes_total))
    count = int(np.frombuffer(b, dtype="=u2", count=1)[0])
    # HailoRT 4.23's extra record is past the end of a whole frame; a count one over the records
    # of a buffer that is not one is a truncated frame.
    whole = max_bboxes_total is not None or (b.size - COUNT_BYTES) % RECORD_BYTES == 0
    if count > capacity + (1 if whole else 0):
        raise ValueError(f"HAILO_NMS_BY_SCORE frame claims {count} detections, its {b.size} bytes"
                         + (f" (max_bboxes_total {max_bboxes_total})" if max_bboxes_total is not None else "")
                         + f" hold {capacity}")
    n = min(count, capacity)
    recs = np.frombuffer(b, dtype=RECORD, count=n, offset=COUNT_BYTES)
    boxes = np.stack([recs["y_min"], recs["x_min"], recs["y_max"], recs["x_max"]], axis=1).astype(np.float32)
    scores = recs["score"].astype(np.float32)
    class_ids = recs["class_id"].astype(np.int32)
    bad = ~(np.isfinite(boxes).all(axis=1) & np.isfinite(scores))
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"HAILO_NMS_BY_SCORE frame: record {i} holds a non-finite value "
                         f"({boxes[i].tolist()}, score {scores[i]})")
    if num_classes is not None and n and int(class_ids.max()) >= int(num_classes):
        i = int(np.argmax(class_ids >= int(num_classes)))
        raise ValueError(f"HAILO_NMS_BY_SCORE frame: record {i} has class id {class_ids[i]}, the model has "
                         f"{num_classes} classes")
    return _best_first(boxes, scores, class_ids)


def _best_first(boxes: np.ndarray, scores: np.ndarray, class_ids: np.ndarray) -> Arrays:
    if scores.size > 1 and np.any(scores[1:] > scores[:-1]):
        order = np.argsort(-scores, kind="stable")
        return np.ascontiguousarray(boxes[order]), scores[order], class_ids[order]
    return boxes, scores, class_ids


_FIELDS = ("y_min", "x_min", "y_max", "x_max", "score", "class_id")


def objects_to_arrays(detections: Sequence[Any], num_classes: Optional[int] = None) -> Arrays:
    """pyhailort's one frame of HAILO_NMS_BY_SCORE (get_buffer(): a list of Detection objects with
    y_min, x_min, y_max, x_max, score, class_id) as arrays, checked as `read` checks a buffer."""
    if not isinstance(detections, (list, tuple)):
        raise TypeError(f"expected a list of Detection objects for a frame, got {type(detections).__name__}")
    values = np.zeros((len(detections), 6), dtype=np.float64)
    for i, d in enumerate(detections):
        try:
            values[i] = [float(getattr(d, f)) for f in _FIELDS]
        except AttributeError:
            raise TypeError(f"detection {i}: expected an object with {', '.join(_FIELDS)} (pyhailort's Detection), "
                            f"got {type(d).__name__}") from None
        except (TypeError, ValueError):
            raise ValueError(f"detection {i}: its fields are not numbers") from None
    if not np.isfinite(values).all():
        raise ValueError(f"detection {int(np.argmax(~np.isfinite(values).all(axis=1)))}: non-finite value")
    cls = values[:, 5]
    if len(cls) and (cls.min() < 0 or cls.max() > MAX_TOTAL or np.any(cls != np.round(cls))):
        raise ValueError("class ids must be whole numbers in [0, 65535]")
    if num_classes is not None and len(cls) and cls.max() >= int(num_classes):
        raise ValueError(f"class id {int(cls.max())} out of range for {num_classes} classes")
    return _best_first(np.ascontiguousarray(values[:, :4], dtype=np.float32), values[:, 4].astype(np.float32),
                       cls.astype(np.int32))


def pack(boxes_yxyx: np.ndarray, scores: np.ndarray, class_ids: np.ndarray, max_bboxes_total: int,
         out: Optional[np.ndarray] = None) -> np.ndarray:
    """The bytes HailoRT's NMS op writes for these detections (in the order given, which must be
    score-descending: HailoRT's, as a Decoder gives them): the first max_bboxes_total of them, the
    count, the rest of the frame zeroed. Into `out` when given (writeable C-contiguous uint8 of at
    least buffer_size(max_bboxes_total) bytes), else into a new array of exactly that size."""
    size = buffer_size(max_bboxes_total)
    if out is None:
        out = np.empty(size, dtype=np.uint8)
    elif not isinstance(out, np.ndarray) or out.dtype != np.uint8 or not out.flags.c_contiguous:
        raise TypeError(f"out must be a C-contiguous uint8 ndarray, got {type(out).__name__} {getattr(out, 'dtype', '')}")
    elif out.size < size:
        raise ValueError(f"out holds {out.size} bytes, HAILO_NMS_BY_SCORE for {max_bboxes_total} detections needs "
                         f"{size}")
    _core.pack_hailo_nms_by_score(np.ascontiguousarray(boxes_yxyx, dtype=np.float32),
                                  np.ascontiguousarray(scores, dtype=np.float32),
                                  np.ascontiguousarray(class_ids, dtype=np.int32), int(max_bboxes_total), out)
    return out
