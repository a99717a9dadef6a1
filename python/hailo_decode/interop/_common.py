"""What every interop call reads from a Detections-like object, in one place: boxes as xyxy
pixels, and the optional task arrays (keypoints, masks, rotated boxes) checked against the number
of detections. Duck-typed: nothing here imports `detections` or anything above it."""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any, Optional, Tuple

import numpy as np

from .._install import install_hint
from ..config import BOX_FORMATS


def optional_import(module: str, extra: str, what: str) -> ModuleType:
    """Import a third-party module only when a call needs it, or say which pip extra brings it."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise ImportError(f"{what} needs the optional package {module.split('.')[0]!r}, which is not "
                          f"installed: {install_hint(extra)} ({e})") from e


def image_hw(dets: Any) -> Optional[Tuple[int, int]]:
    """(height, width) of the image the boxes are in, or None when the object does not know it."""
    size = getattr(dets, "image_size", None)
    if size is None:
        return None
    try:
        h, w = (int(v) for v in size)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"image_size must be (height, width), got {size!r}") from None
    if not (0 < h < 1 << 20 and 0 < w < 1 << 20):
        raise ValueError(f"image_size must be a positive (height, width), got {size!r}")
    return h, w


def _box_format(dets: Any) -> str:
    fmt = getattr(dets, "box_format", None)
    if fmt is None:
        raise TypeError(f"{type(dets).__name__} has no box_format: expected a Detections-like object with "
                        f"boxes, scores, class_ids and box_format (one of {BOX_FORMATS})")
    if fmt not in BOX_FORMATS:
        raise ValueError(f"box_format must be one of {BOX_FORMATS}, got {fmt!r}")
    return str(fmt)


def _normalized_scale(dets: Any, what: str) -> Tuple[int, int]:
    hw = image_hw(dets)
    if hw is None:
        raise ValueError(f"{what} are normalized ({_box_format(dets)}) and the detections have no "
                         f"image_size to turn them into pixels")
    return hw


def _floats(value: Any, what: str) -> np.ndarray:
    a = np.asarray(value)
    if a.dtype.kind not in "biuf":
        raise TypeError(f"{what} must be numbers, got dtype {a.dtype}")
    a = a.astype(np.float32)
    if not np.isfinite(a).all():
        raise ValueError(f"{what} hold non-finite values (NaN, inf, or beyond float32)")
    return a


def length(dets: Any) -> int:
    return int(np.asarray(dets.scores).reshape(-1).shape[0])


def xyxy_pixels(dets: Any) -> np.ndarray:
    """(n, 4) float32 [x1, y1, x2, y2] in pixels of the detections' image, whatever their box format."""
    fmt = _box_format(dets)
    boxes = _floats(dets.boxes, "boxes")
    if boxes.size % 4 or (boxes.ndim > 1 and boxes.shape[-1] != 4):
        raise ValueError(f"boxes must be (n, 4), got shape {boxes.shape}")
    boxes = boxes.reshape(-1, 4)
    if len(boxes) != length(dets):
        raise ValueError(f"boxes and scores differ in length: {len(boxes)}, {length(dets)}")
    out = boxes[:, [1, 0, 3, 2]] if fmt.startswith("yxyx") else boxes.copy()
    if fmt.endswith("normalized"):
        h, w = _normalized_scale(dets, "boxes")
        out = out * np.array([w, h, w, h], dtype=np.float32)
    return np.ascontiguousarray(out, dtype=np.float32)


def scores(dets: Any) -> np.ndarray:
    return _floats(dets.scores, "scores").reshape(-1)


def class_ids(dets: Any) -> np.ndarray:
    ids = np.asarray(dets.class_ids).reshape(-1)
    if len(ids) != length(dets):
        raise ValueError(f"class_ids and scores differ in length: {len(ids)}, {length(dets)}")
    if ids.dtype.kind not in "biu" and not (ids.dtype.kind == "f" and np.isfinite(ids).all()
                                            and (ids == np.round(ids)).all() and (np.abs(ids) < 2 ** 31).all()):
        raise TypeError(f"class_ids must be whole numbers, got dtype {ids.dtype}")
    if ids.size and (ids.min() < 0 or ids.max() >= 2 ** 31):
        raise ValueError(f"class_ids must lie in [0, 2**31), got {ids.min()}..{ids.max()}")
    return ids.astype(np.int64)


def _task_array(dets: Any, name: str) -> Optional[np.ndarray]:
    value = getattr(dets, name, None)
    if value is None:
        return None
    a = np.asarray(value)
    if a.ndim == 0 or a.shape[0] != length(dets):
        raise ValueError(f"{name} must have one entry per detection ({length(dets)}), got shape {a.shape}")
    return a


def keypoints_pixels(dets: Any) -> Optional[np.ndarray]:
    """(n, K, 3) float32 [x, y, visibility] in pixels, or None. Keypoints are taken to be in the
    same units as the boxes: normalized by the image size when box_format is *_normalized."""
    k = _task_array(dets, "keypoints")
    if k is None:
        return None
    if k.ndim != 3 or k.shape[2] not in (2, 3):
        raise ValueError(f"keypoints must be (n, K, 3) [x, y, visibility] or (n, K, 2), got shape {k.shape}")
    k = _floats(k, "keypoints")
    if k.shape[2] == 2:  # no visibility: every keypoint counts as seen
        k = np.concatenate([k, np.ones(k.shape[:2] + (1,), np.float32)], axis=2)
    if _box_format(dets).endswith("normalized"):
        h, w = _normalized_scale(dets, "keypoints")
        k[..., 0] *= w
        k[..., 1] *= h
    return k


def masks(dets: Any) -> Optional[np.ndarray]:
    """(n, H, W) bool, or None. When the detections know their image size, the masks must be of it
    (masks at the prototype's resolution would not line up with the boxes)."""
    m = _task_array(dets, "masks")
    if m is None:
        return None
    if m.ndim != 3:
        raise ValueError(f"masks must be (n, H, W), got shape {m.shape}")
    if m.dtype.kind not in "biu":
        raise TypeError(f"masks must be bool (or 0/1 integers), got dtype {m.dtype}")
    hw = image_hw(dets)
    if hw is not None and m.shape[1:] != hw:
        raise ValueError(f"masks are {m.shape[2]}x{m.shape[1]} (W x H), the detections' image is "
                         f"{hw[1]}x{hw[0]}: resize the masks to the image first")
    return m.astype(bool, copy=False)


def rboxes_pixels(dets: Any) -> Optional[np.ndarray]:
    """(n, 5) float32 [cx, cy, w, h, angle in radians] in pixels, or None. Normalized rotated boxes
    are only defined on a square image (a rotated side has no single scale otherwise)."""
    r = _task_array(dets, "rboxes")
    if r is None:
        return None
    if r.ndim != 2 or r.shape[1] != 5:
        raise ValueError(f"rboxes must be (n, 5) [cx, cy, w, h, r], got shape {r.shape}")
    r = _floats(r, "rboxes")
    if _box_format(dets).endswith("normalized"):
        h, w = _normalized_scale(dets, "rotated boxes")
        if h != w:
            raise ValueError(f"normalized rotated boxes on a {w}x{h} image are ambiguous: use a pixels box_format")
        r[:, :4] *= w
    return r


def rbox_corners(r: np.ndarray) -> np.ndarray:
    """(n, 4, 2) corners of [cx, cy, w, h, angle] boxes, in the order Ultralytics' xyxyxyxy gives."""
    r = r.astype(np.float64)  # no float32 overflow on the way for any float32 input
    c, s = np.cos(r[:, 4]), np.sin(r[:, 4])
    half_w = np.stack([r[:, 2] / 2 * c, r[:, 2] / 2 * s], axis=1)
    half_h = np.stack([-r[:, 3] / 2 * s, r[:, 3] / 2 * c], axis=1)
    ctr = r[:, :2]
    return np.stack([ctr + half_w + half_h, ctr + half_w - half_h, ctr - half_w - half_h, ctr - half_w + half_h],
                    axis=1).astype(np.float32)
