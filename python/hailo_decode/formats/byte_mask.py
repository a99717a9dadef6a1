"""HailoRT's HAILO_NMS_WITH_BYTE_MASK output (4.23: include/hailo/hailort.h, the yolov5_seg op),
both ways, as array functions.

Layout, packed, little-endian: uint16 detection count, then per detection a 38-byte record
{float32 y_min, x_min, y_max, x_max (normalized), float32 score, uint16 class_id, uint64
mask_size, uint64 mask pointer} followed by mask_size bytes: the mask cropped to the box at the
input size, width ceil((x_max - x_min) * W), height ceil((y_max - y_min) * H) (float32), its first
byte the pixel (max(ceil(y_min * H), 0), max(ceil(x_min * W), 0)). A frame is
2 + 38 * max_bboxes_total + max_accumulated_mask_size bytes (HailoRT's default mask budget:
2 * H * W).
"""

from __future__ import annotations

from typing import Optional, Tuple

import numpy as np

from .. import _core

__all__ = ["RECORD_BYTES", "RECORD_DTYPE", "byte_mask_frame_size", "read_byte_mask", "write_byte_mask", "mask_crop"]

RECORD_BYTES = 38
RECORD_DTYPE = np.dtype([("y_min", "<f4"), ("x_min", "<f4"), ("y_max", "<f4"), ("x_max", "<f4"), ("score", "<f4"),
                         ("class_id", "<u2"), ("mask_size", "<u8"), ("mask", "<u8")])
assert RECORD_DTYPE.itemsize == RECORD_BYTES


def byte_mask_frame_size(max_total: int, mask_budget: int) -> int:
    """Bytes of one frame: 2 + 38 * max_total + mask_budget."""
    if max_total < 0 or mask_budget < 0:
        raise ValueError(f"max_total and mask_budget must be >= 0, got {max_total}, {mask_budget}")
    return 2 + RECORD_BYTES * int(max_total) + int(mask_budget)


def mask_crop(box_yxyx: np.ndarray, image_size: Tuple[int, int]) -> Tuple[int, int, int, int]:
    """(x0, y0, width, height) of a normalized box's mask, with HailoRT's float32 rounding (each
    value a uint32 as its static_cast gives it for values in range; NaN and negatives 0, values
    past the range clamped, as the writer in cpp/src/pack_byte_mask.cpp does)."""
    h, w = np.float32(image_size[0]), np.float32(image_size[1])
    y0n, x0n, y1n, x1n = (np.float32(v) for v in box_yxyx)

    def u32(v: np.float32) -> int:
        if not v > 0:
            return 0
        return int(min(v, np.float32(4294967040.0)))

    with np.errstate(over="ignore", invalid="ignore"):
        return (u32(np.ceil(x0n * w)), u32(np.ceil(y0n * h)), u32(np.ceil(np.float32(x1n - x0n) * w)),
                u32(np.ceil(np.float32(y1n - y0n) * h)))


def read_byte_mask(buffer: np.ndarray, image_size: Tuple[int, int]
                   ) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One frame -> (boxes (n, 4) float32 normalized [ymin, xmin, ymax, xmax], scores (n,) float32,
    class_ids (n,) int32, masks (n, H, W) bool at the input size). Every size is checked against
    the buffer's end and each mask_size against the box's crop; nothing is read past the buffer."""
    b = np.asarray(buffer)
    if b.dtype != np.uint8:
        b = b.view(np.uint8) if b.flags.c_contiguous else np.ascontiguousarray(b).view(np.uint8)
    b = b.reshape(-1)
    H, W = int(image_size[0]), int(image_size[1])
    if H <= 0 or W <= 0:
        raise ValueError(f"image_size must be a positive (height, width), got {image_size!r}")
    if b.size < 2:
        raise ValueError(f"HAILO_NMS_WITH_BYTE_MASK buffer of {b.size} bytes has no detection count")
    n = int(b[:2].view("<u2")[0])
    boxes = np.zeros((n, 4), np.float32)
    scores = np.zeros(n, np.float32)
    classes = np.zeros(n, np.int32)
    masks = np.zeros((n, H, W), np.bool_)
    pos = 2
    for i in range(n):
        if pos + RECORD_BYTES > b.size:
            raise ValueError(f"HAILO_NMS_WITH_BYTE_MASK buffer: detection {i} of {n} starts past the end "
                             f"({b.size} bytes)")
        rec = b[pos:pos + RECORD_BYTES].view(RECORD_DTYPE)[0]
        pos += RECORD_BYTES
        box = np.array([rec["y_min"], rec["x_min"], rec["y_max"], rec["x_max"]], np.float32)
        size = int(rec["mask_size"])
        x0, y0, w, h = mask_crop(box, (H, W))
        if size != w * h:
            raise ValueError(f"HAILO_NMS_WITH_BYTE_MASK buffer: detection {i} has mask_size {size}, its box's crop is "
                             f"{w} x {h} = {w * h} bytes (image_size {(H, W)} right?)")
        if pos + size > b.size:
            raise ValueError(f"HAILO_NMS_WITH_BYTE_MASK buffer: detection {i}'s mask of {size} bytes runs past the end")
        crop = b[pos:pos + size].reshape(h, w)
        pos += size
        ye, xe = min(y0 + h, H), min(x0 + w, W)
        if ye > y0 and xe > x0:
            masks[i, y0:ye, x0:xe] = crop[:ye - y0, :xe - x0] != 0
        boxes[i], scores[i], classes[i] = box, rec["score"], rec["class_id"]
    return boxes, scores, classes, masks


def write_byte_mask(boxes_yxyx: np.ndarray, scores: np.ndarray, class_ids: np.ndarray, masks: np.ndarray,
                    out: Optional[np.ndarray] = None, *, max_total: Optional[int] = None,
                    mask_budget: Optional[int] = None) -> Tuple[np.ndarray, int]:
    """Detections with (n, H, W) masks at the input size -> (buffer, detections written). The
    buffer is `out` (uint8, C-contiguous) or a new one of byte_mask_frame_size(max_total or n,
    mask_budget or 2 H W) bytes, zero-filled. Detections that do not fit are left out, as HailoRT does."""
    m = np.asarray(masks)
    if m.ndim != 3:
        raise ValueError(f"masks must be (n, H, W), got shape {m.shape}")
    n = len(m)
    if out is None:
        size = byte_mask_frame_size(n if max_total is None else max_total,
                                    2 * m.shape[1] * m.shape[2] if mask_budget is None else mask_budget)
        out = np.zeros(size, np.uint8)
    elif not isinstance(out, np.ndarray) or out.dtype != np.uint8 or not out.flags.c_contiguous:
        raise TypeError("out must be a C-contiguous uint8 ndarray")
    written, _, _ = _core.pack_byte_mask_from_masks(
        np.ascontiguousarray(boxes_yxyx, np.float32).reshape(-1, 4), np.ascontiguousarray(scores, np.float32),
        np.ascontiguousarray(class_ids, np.int32), np.ascontiguousarray(m, np.uint8), out)
    return out, int(written)
