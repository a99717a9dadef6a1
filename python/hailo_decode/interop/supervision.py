"""Detections -> Roboflow supervision: `sv.Detections` (boxes, masks, rotated-box corners) and
`sv.KeyPoints` (supervision keeps keypoints apart from detections). supervision is imported only
when called (pip extra `supervision`)."""

from __future__ import annotations

import inspect
import warnings
from types import ModuleType
from typing import Any, Optional, Sequence

import numpy as np

from hailo_decode.interop import _common  # the sibling module, not the package (no package-level cycle)

__all__ = ["to_supervision", "to_supervision_keypoints"]

# supervision's own data keys (supervision.config): kept literal so this module needs no import
# of supervision to be read.
_CLASS_NAME = "class_name"
_ORIENTED_BOX = "xyxyxyxy"


def _sv() -> ModuleType:
    with warnings.catch_warnings():
        # supervision >= 0.27 warns at import when OpenCV is absent; none of our calls needs it.
        warnings.filterwarnings("ignore", message=".*OpenCV.*", category=UserWarning)
        return _common.optional_import("supervision", "supervision", "to_supervision")


def _class_names(ids: np.ndarray, class_names: Optional[Sequence[str]]) -> Optional[np.ndarray]:
    if class_names is None:
        return None
    names = [str(n) for n in class_names]
    if ids.size and ids.max() >= len(names):
        raise ValueError(f"class id {int(ids.max())} has no name: class_names holds {len(names)}")
    return np.array([names[i] for i in ids], dtype=str)


def to_supervision(dets: Any, class_names: Optional[Sequence[str]] = None) -> Any:
    """A `supervision.Detections`: xyxy in pixels of the detections' image (whatever their
    box_format; normalized boxes need image_size), confidence, class_id; `mask` from `masks`
    (n, H, W) when present; rotated boxes (`rboxes`, xywhr) as data["xyxyxyxy"] corners, as
    supervision's from_ultralytics stores them; data["class_name"] when class_names is given.

    For boxes in the original image of a letterboxed input, convert first:
    `to_supervision(dets.to_original((h, w)))`. Keypoints: `to_supervision_keypoints`."""
    sv = _sv()
    ids = _common.class_ids(dets)
    data = {}
    names = _class_names(ids, class_names)
    if names is not None:
        data[_CLASS_NAME] = names
    rboxes = _common.rboxes_pixels(dets)
    if rboxes is not None:
        data[_ORIENTED_BOX] = _common.rbox_corners(rboxes)
    return sv.Detections(xyxy=_common.xyxy_pixels(dets), mask=_common.masks(dets),
                         confidence=_common.scores(dets), class_id=ids, data=data)


def to_supervision_keypoints(dets: Any, class_names: Optional[Sequence[str]] = None) -> Any:
    """A `supervision.KeyPoints` from `keypoints` (n, K, 3) [x, y, visibility]: xy in pixels,
    the visibility as keypoint_confidence, the detection scores as detection_confidence (as
    supervision's from_ultralytics fills them). ValueError when the detections have no keypoints."""
    sv = _sv()
    _common.xyxy_pixels(dets)  # the boxes must agree with the rest, even though KeyPoints has none
    kpts = _common.keypoints_pixels(dets)
    if kpts is None:
        raise ValueError("these detections have no keypoints (a pose model's decoder gives them)")
    ids = _common.class_ids(dets)
    data = {}
    names = _class_names(ids, class_names)
    if names is not None:
        data[_CLASS_NAME] = names
    xy = np.ascontiguousarray(kpts[..., :2])
    conf = np.ascontiguousarray(kpts[..., 2])
    params = inspect.signature(sv.KeyPoints).parameters
    if "keypoint_confidence" in params:  # supervision >= 0.29
        return sv.KeyPoints(xy=xy, class_id=ids, keypoint_confidence=conf,
                            detection_confidence=_common.scores(dets), data=data)
    return sv.KeyPoints(xy=xy, class_id=ids, confidence=conf, data=data)  # before 0.29
