"""Detections, and every HailoRT NMS output form they convert to and from:
the pyhailort list (one (n, 5) array per class), the tf_nms_format array [classes, 5, max],
and the flat float32 HAILO_NMS_BY_CLASS buffer."""

from __future__ import annotations

import math
from typing import Any, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _core
from .config import BOX_FORMATS, _opt_int
from .formats import byte_mask as _byte_mask

__all__ = ["Detections", "MaskLogits", "decode_hailo_nms", "hailo_nms_buffer_size"]

_BBOX_PARAMS = 5  # y_min, x_min, y_max, x_max, score
DEFAULT_MAX_PER_CLASS = 100


# Far above HailoRT's own (80 classes x 100 boxes: 40,080 floats), far below what would exhaust memory.
MAX_NMS_BUFFER_FLOATS = 1 << 28


def hailo_max_per_class(max_per_class: Optional[int]) -> int:
    """Boxes per class in HailoRT's NMS forms: the cap, or HailoRT's usual 100 without one."""
    return int(DEFAULT_MAX_PER_CLASS if max_per_class is None else max_per_class)


def hailo_nms_buffer_size(num_classes: int, max_per_class: int) -> int:
    """float32 values in a HAILO_NMS_BY_CLASS buffer: classes * (1 + 5 * max_per_class)."""
    nc, mpc = int(num_classes), int(max_per_class)
    if nc < 0 or mpc < 0:
        raise ValueError(f"num_classes and max_per_class must be >= 0, got {nc}, {mpc}")
    size = nc * (1 + 5 * mpc)  # Python integers: no overflow
    if size > MAX_NMS_BUFFER_FLOATS:
        raise ValueError(f"a HAILO_NMS_BY_CLASS buffer for {nc} classes x {mpc} boxes would hold {size} float32 "
                         f"values, more than {MAX_NMS_BUFFER_FLOATS}")
    return size


def _convert_boxes(boxes: np.ndarray, src: str, dst: str, image_size: Optional[Tuple[int, int]]) -> np.ndarray:
    if src == dst:
        return boxes
    if src.split("_")[1] != dst.split("_")[1] and image_size is None:
        raise ValueError(f"converting boxes from {src} to {dst} needs image_size")
    out = boxes.astype(np.float32, copy=True)
    if src.startswith("yxyx"):
        out = out[:, [1, 0, 3, 2]]  # to xyxy
    if src.endswith("normalized") and dst.endswith("pixels"):
        h, w = image_size  # type: ignore[misc]
        out = out * np.array([w, h, w, h], dtype=np.float32)
    elif src.endswith("pixels") and dst.endswith("normalized"):
        h, w = image_size  # type: ignore[misc]
        out = out / np.array([w, h, w, h], dtype=np.float32)
    if dst.startswith("yxyx"):
        out = out[:, [1, 0, 3, 2]]
    return np.ascontiguousarray(out, dtype=np.float32)


class MaskLogits:
    """A frame's mask logits as the decoder left them (arrays this object owns): per detection a
    window of the prototype grid, windows (n, 4) int32 [row0, col0, rows, cols], its logits
    row-major at logits[offsets[i]:], and the grid (proto_h, proto_w, input_h, input_w)."""

    __slots__ = ("windows", "offsets", "logits", "grid")

    def __init__(self, windows: np.ndarray, offsets: np.ndarray, logits: np.ndarray,
                 grid: Tuple[int, int, int, int]) -> None:
        self.windows, self.offsets, self.logits, self.grid = windows, offsets, logits, grid

    def render(self, crops: np.ndarray, sampling: Tuple[float, float, float, float, int, int]) -> np.ndarray:
        """(n, H, W) bool masks at the sampling's grid, cropped to crops (n, 4) xyxy in its pixels."""
        crops = np.ascontiguousarray(crops, dtype=np.float32).reshape(-1, 4)
        return _core.render_masks(self.logits, self.windows, self.offsets, crops, self.grid, sampling).view(np.bool_)


class Detections:
    """Kept detections of one frame, best score first.

    boxes (n, 4) float32 in `box_format` ("yxyx_normalized" is HailoRT's [ymin, xmin, ymax, xmax]
    divided by the input size; "xyxy_pixels" is Ultralytics' [x1, y1, x2, y2] in input pixels),
    scores (n,) float32, class_ids (n,) int32 (0-based).

    Segmentation: `masks` (n, H, W) bool at the network input size (at the original image size
    after to_original), as Ultralytics' process_mask(upsample=True) (retina_masks after
    to_original); `masks_at_proto()` at the prototype grid. They are rendered on first use from
    the prototype logits this object owns (none of the caller's buffers is kept).
    """

    __slots__ = ("boxes", "scores", "class_ids", "box_format", "image_size", "num_classes", "max_per_class",
                 "_mask_logits", "_mask_view", "_masks")

    def __init__(self, boxes: np.ndarray, scores: np.ndarray, class_ids: np.ndarray, *,
                 box_format: str = "yxyx_normalized", image_size: Optional[Tuple[int, int]] = None,
                 num_classes: Optional[int] = None, max_per_class: Optional[int] = None,
                 masks: Optional[np.ndarray] = None) -> None:
        self.boxes = np.asarray(boxes, dtype=np.float32).reshape(-1, 4)
        self.scores = np.asarray(scores, dtype=np.float32).reshape(-1)
        self.class_ids = np.asarray(class_ids, dtype=np.int32).reshape(-1)
        if not (len(self.boxes) == len(self.scores) == len(self.class_ids)):
            raise ValueError(f"boxes, scores and class_ids differ in length: {len(self.boxes)}, "
                             f"{len(self.scores)}, {len(self.class_ids)}")
        if box_format not in BOX_FORMATS:
            raise ValueError(f"box_format must be one of {BOX_FORMATS}, got {box_format!r}")
        self.box_format = box_format
        self.image_size = None if image_size is None else (int(image_size[0]), int(image_size[1]))
        self.num_classes = num_classes
        self.max_per_class = max_per_class
        self._mask_logits: Optional[MaskLogits] = None
        self._mask_view: Optional[Tuple[Any, np.ndarray]] = None  # (sampling, crops) of `masks`
        self._masks: Optional[np.ndarray] = None
        if masks is not None:
            m = np.array(masks, dtype=np.bool_, copy=True)
            if m.ndim != 3 or len(m) != len(self.scores):
                raise ValueError(f"masks must be (n, H, W) with n = {len(self.scores)}, got shape {m.shape}")
            self._masks = m

    @classmethod
    def _trusted(cls, boxes: np.ndarray, scores: np.ndarray, class_ids: np.ndarray, meta: dict,
                 mask_logits: Optional[MaskLogits] = None) -> "Detections":
        """From the core's own arrays (already (n, 4) float32, (n,) float32, (n,) int32): no checks."""
        d = cls.__new__(cls)
        d.boxes, d.scores, d.class_ids = boxes, scores, class_ids
        d.box_format, d.image_size = meta["box_format"], meta["image_size"]
        d.num_classes, d.max_per_class = meta["num_classes"], meta["max_per_class"]
        d._mask_logits, d._mask_view, d._masks = mask_logits, None, None
        return d

    # -- segmentation ----------------------------------------------------------------------------
    @property
    def has_masks(self) -> bool:
        return self._mask_logits is not None or self._masks is not None

    @property
    def masks(self) -> Optional[np.ndarray]:
        """(n, H, W) bool: at the network input size (Ultralytics' process_mask(..., upsample=True):
        logits upsampled bilinearly, > 0, cropped to the box), or at the original image size after
        to_original. None for a model without masks. Rendered once, then kept."""
        if self._masks is None and self._mask_logits is not None:
            if self._mask_view is None:
                ml = self._mask_logits
                self._masks = ml.render(self.boxes_as("xyxy_pixels"), _core.mask_sampling_input(ml.grid))
            else:
                sampling, crops = self._mask_view
                self._masks = self._mask_logits.render(crops, sampling)
        return self._masks

    def masks_at_proto(self) -> np.ndarray:
        """(n, proto_h, proto_w) bool at the prototype grid (input / 4): Ultralytics'
        process_mask(..., upsample=False), the logit's sign cropped to the box scaled to the grid."""
        ml = self._mask_logits
        if ml is None:
            raise ValueError("these Detections have no prototype logits (not decoded from a -seg model's raw outputs)")
        if self._mask_view is not None:
            raise ValueError("masks_at_proto is for the Detections the decoder returned, not after to_original")
        ph, pw, ih, iw = ml.grid
        # The box scaled to the grid in float32, as Ultralytics multiplies by (mw / W, mh / H).
        ratio = np.array([pw / iw, ph / ih, pw / iw, ph / ih], dtype=np.float32)
        return ml.render(self.boxes_as("xyxy_pixels") * ratio, _core.mask_sampling_proto(ml.grid))

    def to_hailo_byte_mask(self, out: Optional[np.ndarray] = None, *, max_total: Optional[int] = None,
                           mask_budget: Optional[int] = None) -> np.ndarray:
        """HailoRT's HAILO_NMS_WITH_BYTE_MASK frame (hailo_decode.formats.byte_mask): written into
        `out` (uint8) or a new buffer of 2 + 38 * max_total + mask_budget bytes (defaults: every
        detection, HailoRT's 2 * H * W), zero-filled; detections that do not fit are left out."""
        if self.image_size is None or not self.has_masks:
            raise ValueError("HAILO_NMS_WITH_BYTE_MASK needs masks and the input size")
        h, w = self.image_size
        if out is None:
            out = np.zeros(_byte_mask.byte_mask_frame_size(len(self) if max_total is None else max_total,
                                                           2 * h * w if mask_budget is None else mask_budget), np.uint8)
        elif not isinstance(out, np.ndarray) or out.dtype != np.uint8 or not out.flags.c_contiguous:
            raise TypeError("out must be a C-contiguous uint8 ndarray")
        boxes = np.ascontiguousarray(self.boxes_as("yxyx_normalized"), dtype=np.float32)
        ml = self._mask_logits
        if ml is not None and self._mask_view is None:
            _core.pack_byte_mask(boxes, self.scores, self.class_ids, ml.windows, ml.offsets, ml.logits, ml.grid, out)
        else:
            masks = self.masks
            assert masks is not None
            if masks.shape[1:] != (h, w):
                raise ValueError(f"masks are {masks.shape[1:]}, HAILO_NMS_WITH_BYTE_MASK holds them at the input size {(h, w)}")
            _byte_mask.write_byte_mask(boxes, self.scores, self.class_ids, masks, out)
        return out

    def __len__(self) -> int:
        return len(self.scores)

    def __repr__(self) -> str:
        return (f"Detections(n={len(self)}, box_format={self.box_format!r}, image_size={self.image_size}, "
                f"num_classes={self.num_classes})")

    def boxes_as(self, box_format: str) -> np.ndarray:
        """The boxes in another format (pixels need image_size)."""
        if box_format not in BOX_FORMATS:
            raise ValueError(f"box_format must be one of {BOX_FORMATS}, got {box_format!r}")
        return _convert_boxes(self.boxes, self.box_format, box_format, self.image_size)

    def to_original(self, original_size: Tuple[int, int]) -> "Detections":
        """Undo an Ultralytics-style letterbox (scale by the min ratio, centre with padding) from
        the network input back to the original image: xyxy pixels, clipped to the image."""
        if self.image_size is None:
            raise ValueError("to_original needs the network input size (image_size)")
        (ih, iw), (oh, ow) = self.image_size, (int(original_size[0]), int(original_size[1]))
        if oh <= 0 or ow <= 0:
            raise ValueError(f"original_size must be a positive (height, width), got {original_size!r}")
        gain = min(ih / oh, iw / ow)
        pad_x = round((iw - ow * gain) / 2 - 0.1)
        pad_y = round((ih - oh * gain) / 2 - 0.1)
        b = self.boxes_as("xyxy_pixels").astype(np.float32)
        b -= np.array([pad_x, pad_y, pad_x, pad_y], dtype=np.float32)
        b /= np.float32(gain)
        b[:, [0, 2]] = b[:, [0, 2]].clip(0, ow)
        b[:, [1, 3]] = b[:, [1, 3]].clip(0, oh)
        d = Detections(b, self.scores, self.class_ids, box_format="xyxy_pixels", image_size=(oh, ow),
                       num_classes=self.num_classes, max_per_class=self.max_per_class)
        if self._mask_logits is not None and self._mask_view is None:
            # Masks at the original size, as retina_masks: each original pixel samples the
            # prototype logits where its centre lies in the input, cropped to the scaled box.
            d._mask_logits = self._mask_logits
            d._mask_view = (_core.mask_sampling_original(self._mask_logits.grid, oh, ow, gain, pad_x, pad_y), b)
        elif self._masks is not None:
            d._masks = _letterbox_undo_nearest(self._masks, (oh, ow), gain, pad_x, pad_y, b)
        return d

    # -- HailoRT forms ---------------------------------------------------------------------------
    def _hailo_params(self, num_classes: Optional[int], max_per_class: Optional[int]) -> Tuple[int, int]:
        nc = num_classes if num_classes is not None else self.num_classes
        if nc is None:
            raise ValueError("num_classes is unknown; pass num_classes=")
        return int(nc), hailo_max_per_class(max_per_class if max_per_class is not None else self.max_per_class)

    def to_hailo_nms_buffer(self, out: Optional[np.ndarray] = None, *, num_classes: Optional[int] = None,
                            max_per_class: Optional[int] = None) -> np.ndarray:
        """The flat float32 HAILO_NMS_BY_CLASS buffer HailoRT writes (per class: count, then
        count x [ymin, xmin, ymax, xmax, score], normalized), at most max_per_class per class,
        the unused tail zeroed. Written into `out` when given (C-contiguous float32, large enough)."""
        nc, mpc = self._hailo_params(num_classes, max_per_class)
        size = hailo_nms_buffer_size(nc, mpc)
        if out is None:
            out = np.empty(size, dtype=np.float32)
        elif not isinstance(out, np.ndarray) or out.dtype != np.float32 or not out.flags.c_contiguous:
            raise TypeError(f"out must be a C-contiguous float32 ndarray, got "
                            f"{type(out).__name__} {getattr(out, 'dtype', '')}")
        elif out.size < size:
            raise ValueError(f"out holds {out.size} float32 values, HAILO_NMS_BY_CLASS for {nc} classes x "
                             f"{mpc} boxes needs {size}")
        if len(self) and (self.class_ids.min() < 0 or self.class_ids.max() >= nc):
            raise ValueError(f"class ids must lie in [0, {nc}), got {self.class_ids.min()}..{self.class_ids.max()}")
        boxes = np.ascontiguousarray(self.boxes_as("yxyx_normalized"), dtype=np.float32)
        _core.pack_hailo_nms_by_class(boxes, self.scores, self.class_ids, nc, mpc, out)
        return out

    def to_hailo_nms(self, tf_format: bool = False, *, num_classes: Optional[int] = None,
                     max_per_class: Optional[int] = None) -> Union[List[np.ndarray], np.ndarray]:
        """What pyhailort returns for one frame of a HAILO_NMS_BY_CLASS output: a list over classes
        of (n, 5) float32 [ymin, xmin, ymax, xmax, score] arrays (an empty class is a float64
        (0, 5) array, as pyhailort makes it), or with tf_format=True an array
        [classes, 5, max_per_class] padded with zeros."""
        nc, mpc = self._hailo_params(num_classes, max_per_class)
        flat = self.to_hailo_nms_buffer(num_classes=nc, max_per_class=mpc)
        return _flat_to_tf(flat, nc, mpc) if tf_format else _flat_to_list(flat, nc)


def _letterbox_undo_nearest(masks: np.ndarray, size: Tuple[int, int], gain: float, pad_x: float, pad_y: float,
                            crops: np.ndarray) -> np.ndarray:
    """Masks at the input size (no logits behind them, e.g. read from HAILO_NMS_WITH_BYTE_MASK) to
    the original image: each original pixel takes the input pixel its centre falls in, then the crop."""
    oh, ow = size
    ih, iw = masks.shape[1:]
    ys = np.clip(np.floor((np.arange(oh) + 0.5) * gain + pad_y).astype(np.int64), 0, ih - 1)
    xs = np.clip(np.floor((np.arange(ow) + 0.5) * gain + pad_x).astype(np.int64), 0, iw - 1)
    out = masks[:, ys][:, :, xs]
    cols, rows = np.arange(ow, dtype=np.float32), np.arange(oh, dtype=np.float32)
    for i, (x1, y1, x2, y2) in enumerate(crops):
        out[i] &= ((rows >= y1) & (rows < y2))[:, None] & ((cols >= x1) & (cols < x2))[None, :]
    return out


def _flat_to_list(flat: np.ndarray, num_classes: int) -> List[np.ndarray]:
    out: List[np.ndarray] = []
    for n, start in _class_runs(flat, num_classes):
        out.append(np.empty((0, _BBOX_PARAMS)) if n == 0 else flat[start:start + _BBOX_PARAMS * n].reshape(n, _BBOX_PARAMS))
    return out


def _flat_to_tf(flat: np.ndarray, num_classes: int, max_per_class: int) -> np.ndarray:
    tf = np.zeros((num_classes, max_per_class, _BBOX_PARAMS), dtype=np.float32)
    for k, (n, start) in enumerate(_class_runs(flat, num_classes)):
        if n > max_per_class:
            raise ValueError(f"class {k} has {n} boxes, more than max_per_class={max_per_class}")
        tf[k, :n] = flat[start:start + _BBOX_PARAMS * n].reshape(n, _BBOX_PARAMS)
    return np.swapaxes(tf, 1, 2)


def _class_runs(flat: np.ndarray, num_classes: int) -> List[Tuple[int, int]]:
    """(count, start) of every class in a flat buffer, each checked against the buffer's end."""
    runs, pos = [], 0
    for k in range(num_classes):
        if pos >= flat.size:
            raise ValueError(f"HAILO_NMS_BY_CLASS buffer ends before class {k} (size {flat.size})")
        c = float(flat[pos])
        if not (math.isfinite(c) and c >= 0 and c == int(c)):
            raise ValueError(f"HAILO_NMS_BY_CLASS buffer: class {k} count {c} is not a whole number >= 0")
        n = int(c)
        if pos + 1 + _BBOX_PARAMS * n > flat.size:
            raise ValueError(f"HAILO_NMS_BY_CLASS buffer: class {k} claims {n} boxes, past the end (size {flat.size})")
        runs.append((n, pos + 1))
        pos += 1 + _BBOX_PARAMS * n
    return runs


def _from_rows(rows: Sequence[np.ndarray], image_size: Optional[Tuple[int, int]], box_format: str,
               max_per_class: Optional[int]) -> Detections:
    boxes, scores, classes = [], [], []
    for k, r in enumerate(rows):
        r = np.asarray(r, dtype=np.float32).reshape(-1, _BBOX_PARAMS)
        boxes.append(r[:, :4])
        scores.append(r[:, 4])
        classes.append(np.full(len(r), k, dtype=np.int32))
    b = np.concatenate(boxes) if boxes else np.zeros((0, 4), np.float32)
    s = np.concatenate(scores) if scores else np.zeros(0, np.float32)
    c = np.concatenate(classes) if classes else np.zeros(0, np.int32)
    order = np.argsort(-s, kind="stable")  # best first; equal scores keep class order
    det = Detections(b[order], s[order], c[order], box_format="yxyx_normalized", image_size=image_size,
                     num_classes=len(rows), max_per_class=max_per_class)
    if box_format != "yxyx_normalized":
        det = Detections(det.boxes_as(box_format), det.scores, det.class_ids, box_format=box_format,
                         image_size=image_size, num_classes=len(rows), max_per_class=max_per_class)
    return det


def _list_depth(x: Any, limit: int = 5) -> Optional[int]:
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


def _list_frame(output: Any, num_classes: Optional[int], image_size: Optional[Tuple[int, int]], box_format: str,
                max_per_class: Optional[int]) -> Detections:
    """One frame given as pyhailort's per-class list."""
    if not isinstance(output, (list, tuple)):
        raise ValueError(f"expected a per-class list for a frame, got {type(output).__name__}")
    rows = []
    for k, r in enumerate(output):
        try:
            a = np.asarray(r, dtype=np.float32)
        except (TypeError, ValueError):
            raise ValueError(f"class {k}: expected an (n, 5) array of numbers, got {type(r).__name__}") from None
        if a.size and (a.ndim != 2 or a.shape[1] != _BBOX_PARAMS):
            raise ValueError(f"class {k}: expected an (n, 5) array, got shape {a.shape}")
        rows.append(a.reshape(-1, _BBOX_PARAMS))
    if num_classes is not None and len(rows) != num_classes:
        raise ValueError(f"expected {num_classes} classes, got a list of {len(rows)}")
    return _from_rows(rows, image_size, box_format, max_per_class)


def decode_hailo_nms(output: Any, *, num_classes: Optional[int] = None, max_per_class: Optional[int] = None,
                     image_size: Optional[Tuple[int, int]] = None, box_format: str = "yxyx_normalized",
                     format: str = "by_class") -> Union[Detections, List[Detections]]:
    """HailoRT's own NMS output -> the same Detections the raw path gives.

    format="by_class" (HAILO_NMS_BY_CLASS) accepts, for one frame: the pyhailort list (one (n, 5)
    array per class), the tf_nms_format array [classes, 5, max_per_class], or the flat float32
    buffer (needs num_classes). A batch (list of per-frame lists, a 4-D tf array, a 2-D flat
    array) gives a list of Detections.
    format="byte_mask" (HAILO_NMS_WITH_BYTE_MASK, YOLOv5-seg HEFs) takes one frame's bytes (a 2-D
    array: a batch) and needs image_size (the input's (height, width)); the Detections have masks.
    """
    if format == "byte_mask":
        if image_size is None:
            raise ValueError("HAILO_NMS_WITH_BYTE_MASK needs image_size=(height, width) of the network input")
        a = np.asarray(output)
        if a.ndim == 2 and a.dtype == np.uint8:
            return [decode_hailo_nms(f, num_classes=num_classes, image_size=image_size, box_format=box_format,
                                     format="byte_mask") for f in a]
        boxes, scores, classes, masks = _byte_mask.read_byte_mask(a, image_size)
        nc = _opt_int(num_classes, "num_classes", low=1)
        if nc is not None and len(classes) and classes.max() >= nc:
            raise ValueError(f"HAILO_NMS_WITH_BYTE_MASK buffer has class id {classes.max()}, num_classes is {nc}")
        det = Detections(boxes, scores, classes, box_format="yxyx_normalized", image_size=image_size,
                         num_classes=nc, masks=masks)
        if box_format != "yxyx_normalized":
            det = Detections(det.boxes_as(box_format), scores, classes, box_format=box_format, image_size=image_size,
                             num_classes=nc, masks=masks)
        return det
    if format != "by_class":
        raise ValueError(f"format must be 'by_class' or 'byte_mask', got {format!r}")
    num_classes = _opt_int(num_classes, "num_classes", low=1)
    max_per_class = _opt_int(max_per_class, "max_per_class")
    if isinstance(output, (list, tuple)):
        depth = _list_depth(output)
        if depth == 4:  # a batch: frames of classes of (n, 5) rows
            return [_list_frame(f, num_classes, image_size, box_format, max_per_class) for f in output]
        return _list_frame(output, num_classes, image_size, box_format, max_per_class)
    a = np.asarray(output)
    if a.dtype.kind != "f":
        raise TypeError(f"HailoRT NMS output must be float32, got {a.dtype}")
    if a.ndim in (2, 4):  # a batch of flat buffers or of tf arrays
        return [decode_hailo_nms(f, num_classes=num_classes, max_per_class=max_per_class, image_size=image_size,
                                 box_format=box_format) for f in a]
    if a.ndim == 3:
        nc, five, mpc = a.shape
        if five != _BBOX_PARAMS:
            raise ValueError(f"tf_nms_format must be [classes, 5, max_per_class], got shape {a.shape}")
        if num_classes is not None and nc != num_classes:
            raise ValueError(f"expected {num_classes} classes, tf array has {nc}")
        rows = []
        for k in range(nc):
            r = a[k].T
            rows.append(r[np.any(r != 0, axis=1)])  # padding rows are all zeros
        return _from_rows(rows, image_size, box_format, mpc)
    if a.ndim == 1:
        if num_classes is None:
            raise ValueError("a flat HAILO_NMS_BY_CLASS buffer needs num_classes=")
        flat = a.astype(np.float32, copy=False)
        rows = [flat[s:s + _BBOX_PARAMS * n].reshape(n, _BBOX_PARAMS) for n, s in _class_runs(flat, num_classes)]
        return _from_rows(rows, image_size, box_format, max_per_class)
    raise ValueError(f"unrecognized HailoRT NMS output of shape {a.shape}: expected a per-class list, a flat "
                     f"buffer (1-D, or 2-D for a batch) or tf_nms_format [classes, 5, max] (4-D for a batch)")
