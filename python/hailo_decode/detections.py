"""Detections, and their conversions to and from every HailoRT NMS output form. The forms
themselves (layouts, sizes, readers, writers) live in `hailo_decode.formats`, one module a form:
by_class (HAILO_NMS_BY_CLASS and pyhailort's list / tf_nms_format views of it), by_score
(HAILO_NMS_BY_SCORE), bbox_only (the yolov8_bbox_only op's boxes and scores, NMS on the host),
byte_mask (HAILO_NMS_WITH_BYTE_MASK, instance masks). Instance masks themselves come from the
prototype logits a Detections owns (MaskLogits), rendered by the C++ masks room."""

from __future__ import annotations

from typing import Any, List, Optional, Sequence, Tuple, Union, cast

import numpy as np

from . import _core
from .config import BOX_FORMATS, SEMANTICS
from .formats import bbox_only, by_class, by_score
from .formats import byte_mask as _byte_mask

__all__ = ["Detections", "MaskLogits", "decode_hailo_nms", "hailo_nms_buffer_size", "hailo_nms_by_score_buffer_size",
           "NMS_FORMATS"]

NMS_FORMATS = ("by_class", "by_score", "bbox_only", "byte_mask")
DEFAULT_MAX_PER_CLASS = by_class.DEFAULT_MAX_PER_CLASS
MAX_NMS_BUFFER_FLOATS = by_class.MAX_NMS_BUFFER_FLOATS
hailo_max_per_class = by_class.max_per_class_or_default
hailo_nms_buffer_size = by_class.buffer_size
hailo_nms_by_score_buffer_size = by_score.buffer_size


def _convert_boxes(boxes: np.ndarray, src: str, dst: str, image_size: Optional[Tuple[int, int]]) -> np.ndarray:
    if src == dst:
        return boxes
    if src.split("_")[1] != dst.split("_")[1] and image_size is None:
        raise ValueError(f"converting boxes from {src} to {dst} needs image_size")
    out: np.ndarray = boxes.astype(np.float32, copy=True)
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
    row-major at logits[offsets[i]:], and the grid (proto_h, proto_w, input_h, input_w[, rule]); signs,
    uint8 logits > 0 (what the prototype-grid masks copy; the decoder's, else computed here)."""

    __slots__ = ("windows", "offsets", "logits", "grid", "signs")

    def __init__(self, windows: np.ndarray, offsets: np.ndarray, logits: np.ndarray,
                 grid: Tuple[int, ...], signs: Optional[np.ndarray] = None) -> None:
        self.windows, self.offsets, self.logits, self.grid = windows, offsets, logits, grid
        self.signs = (np.asarray(logits) > 0).view(np.uint8) if signs is None else signs

    def render(self, crops: np.ndarray, sampling: Tuple[Any, ...], out: Optional[np.ndarray] = None,
               crop_scale: Optional[Tuple[float, float]] = None) -> np.ndarray:
        """(n, H, W) bool masks at the sampling's grid, cropped to crops (n, 4) xyxy in its pixels
        (times crop_scale (sx, sy) in float32 when given, done in C++): a new array, or written
        into `out` (every element; returned)."""
        crops = np.ascontiguousarray(crops, dtype=np.float32).reshape(-1, 4)
        if out is None:
            return _core.render_masks(self.logits, self.windows, self.offsets, crops, self.grid, sampling,
                                      None, crop_scale).view(np.bool_)
        # `out` is checked in C++ (a writeable, C-contiguous bool or uint8 ndarray of shape
        # (n, H, W): TypeError or ValueError otherwise), where it costs less than here.
        _core.render_masks(self.logits, self.windows, self.offsets, crops, self.grid, sampling, out, crop_scale)
        return out


class Detections:
    """Kept detections of one frame, best score first.

    boxes (n, 4) float32 in `box_format` ("yxyx_normalized" is HailoRT's [ymin, xmin, ymax, xmax]
    divided by the input size; "xyxy_pixels" is Ultralytics' [x1, y1, x2, y2] in input pixels),
    scores (n,) float32, class_ids (n,) int32 (0-based).
    Pose heads: keypoints (n, K, 3) float32 [x, y, visibility] (x before y whatever the box order),
    in the boxes' units (pixels, or divided by the input width and height when normalized);
    visibility is 1.0 where the model has none. Every detection keeps all K keypoints.
    OBB heads: rboxes (n, 5) float32 [cx, cy, w, h, angle] in input pixels and radians
    (Ultralytics' xywhr), and `boxes` the axis-aligned box that encloses each rotated box.
    Both are None for plain detection.

    Segmentation: `masks` (n, H, W) bool at the network input size (at the original image size
    after to_original), as Ultralytics' process_mask(upsample=True) (process_mask_native, retina_masks=True, after
    to_original; YOLOv5-seg under the ultralytics preset: YOLOv5 v7.0's own process_mask at the input
    size, docs/segmentation.md); `masks_at_proto()` at the prototype grid. They are rendered on first use from
    the prototype logits this object owns (none of the caller's buffers is kept).
    """

    __slots__ = ("boxes", "scores", "class_ids", "box_format", "image_size", "num_classes", "max_per_class",
                 "keypoints", "rboxes", "_mask_logits", "_mask_view", "_masks")

    def __init__(self, boxes: np.ndarray, scores: np.ndarray, class_ids: np.ndarray, *,
                 box_format: str = "yxyx_normalized", image_size: Optional[Tuple[int, int]] = None,
                 num_classes: Optional[int] = None, max_per_class: Optional[int] = None,
                 keypoints: Optional[np.ndarray] = None, rboxes: Optional[np.ndarray] = None,
                 masks: Optional[np.ndarray] = None) -> None:
        self.boxes = np.asarray(boxes, dtype=np.float32).reshape(-1, 4)
        self.scores = np.asarray(scores, dtype=np.float32).reshape(-1)
        self.class_ids = np.asarray(class_ids, dtype=np.int32).reshape(-1)
        if not (len(self.boxes) == len(self.scores) == len(self.class_ids)):
            raise ValueError(f"boxes, scores and class_ids differ in length: {len(self.boxes)}, "
                             f"{len(self.scores)}, {len(self.class_ids)}")
        self.keypoints: Optional[np.ndarray] = None
        self.rboxes: Optional[np.ndarray] = None
        if keypoints is not None:
            k = np.asarray(keypoints, dtype=np.float32)
            if k.ndim != 3 or k.shape[0] != len(self.scores) or k.shape[2] != 3:
                raise ValueError(f"keypoints must have shape ({len(self.scores)}, K, 3) [x, y, visibility], "
                                 f"got {k.shape}")
            self.keypoints = np.ascontiguousarray(k)
        if rboxes is not None:
            r = np.asarray(rboxes, dtype=np.float32)
            if r.shape != (len(self.scores), 5):
                raise ValueError(f"rboxes must have shape ({len(self.scores)}, 5) [cx, cy, w, h, angle], "
                                 f"got {r.shape}")
            self.rboxes = np.ascontiguousarray(r)
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
    def _trusted(cls, boxes: np.ndarray, scores: np.ndarray, class_ids: np.ndarray,
                 keypoints: Optional[np.ndarray] = None, rboxes: Optional[np.ndarray] = None, *,
                 meta: dict, mask_logits: Optional[MaskLogits] = None) -> "Detections":
        """From the core's own arrays (already (n, 4) float32, (n,) float32, (n,) int32, and
        (n, K, 3), (n, 5) float32 or None): no checks."""
        d = cls.__new__(cls)
        d.boxes, d.scores, d.class_ids = boxes, scores, class_ids
        d.keypoints, d.rboxes = keypoints, rboxes
        d.box_format, d.image_size = meta["box_format"], meta["image_size"]
        d.num_classes, d.max_per_class = meta["num_classes"], meta["max_per_class"]
        d._mask_logits, d._mask_view, d._masks = mask_logits, None, None
        return d

    # -- segmentation ----------------------------------------------------------------------------
    @property
    def has_masks(self) -> bool:
        return self._mask_logits is not None or self._masks is not None

    def render_masks(self, out: Optional[np.ndarray] = None) -> np.ndarray:
        """The masks `masks` holds, rendered again (not kept): into `out` when given, a
        C-contiguous bool or uint8 array of their shape, every element written (a buffer reused
        frame after frame: no new array), else into a new array."""
        ml = self._mask_logits
        if ml is None:
            raise ValueError("these Detections have no prototype logits (not decoded from a -seg model's raw outputs)")
        if self._mask_view is None:
            return ml.render(self.boxes_as("xyxy_pixels"), _core.mask_sampling_input(ml.grid), out)
        sampling, crops = self._mask_view
        return ml.render(crops, sampling, out)

    @property
    def masks(self) -> Optional[np.ndarray]:
        """(n, H, W) bool: at the network input size (Ultralytics' process_mask(..., upsample=True):
        logits upsampled bilinearly, > 0, cropped to the box; YOLOv5-seg under the ultralytics preset:
        YOLOv5's own, the cropped probabilities upsampled, > 0.5), or at the original image size after
        to_original. None for a model without masks. Rendered once, then kept."""
        if self._masks is None and self._mask_logits is not None:
            if self._mask_view is None:
                ml = self._mask_logits
                self._masks = ml.render(self.boxes_as("xyxy_pixels"), _core.mask_sampling_input(ml.grid))
            else:
                sampling, crops = self._mask_view
                self._masks = self._mask_logits.render(crops, sampling)
        return self._masks

    def masks_at_proto(self, out: Optional[np.ndarray] = None) -> np.ndarray:
        """(n, proto_h, proto_w) bool at the prototype grid (input / 4): Ultralytics'
        process_mask(..., upsample=False), the logit's sign cropped to the box scaled to the grid.
        Into `out` when given (C-contiguous bool or uint8 of that shape, every element written:
        a buffer reused frame after frame, no new array), else a new array."""
        ml = self._mask_logits
        if ml is None:
            raise ValueError("these Detections have no prototype logits (not decoded from a -seg model's raw outputs)")
        if self._mask_view is not None:
            raise ValueError("masks_at_proto is for the Detections the decoder returned, not after to_original")
        # One C++ call: the box scaled to the grid in float32 as Ultralytics multiplies by (mw / W,
        # mh / H) (the ratios rounded to float32, the float32 products), `out` checked, the crops'
        # rows copied from the sign bytes.
        masks: np.ndarray = _core.render_proto_masks(ml.signs, ml.windows, ml.offsets, self.boxes_as("xyxy_pixels"),
                                                     ml.grid, out)
        return masks

    def to_hailo_byte_mask(self, out: Optional[np.ndarray] = None, *, max_total: Optional[int] = None,
                           mask_budget: Optional[int] = None, hailort_version: str = "4.23") -> np.ndarray:
        """HailoRT's HAILO_NMS_WITH_BYTE_MASK frame (hailo_decode.formats.byte_mask): written into
        `out` (uint8) or a new buffer of 2 + record * max_total + mask_budget bytes (defaults: every
        detection, HailoRT's 2 * H * W), zero-filled; detections that do not fit are left out.
        hailort_version: whose records ("X.Y" or "X.Y.Z"): 38 bytes before HailoRT 5.2 (the
        default, "4.23"), 46 from 5.2.0 (a mask_offset field added)."""
        if self.image_size is None or not self.has_masks:
            raise ValueError("HAILO_NMS_WITH_BYTE_MASK needs masks and the input size")
        layout = _byte_mask.byte_mask_layout(hailort_version)
        h, w = self.image_size
        if out is None:
            out = np.zeros(_byte_mask.byte_mask_frame_size(len(self) if max_total is None else max_total,
                                                           2 * h * w if mask_budget is None else mask_budget,
                                                           hailort_version=layout), np.uint8)
        elif not isinstance(out, np.ndarray) or out.dtype != np.uint8 or not out.flags.c_contiguous:
            raise TypeError("out must be a C-contiguous uint8 ndarray")
        boxes = np.ascontiguousarray(self.boxes_as("yxyx_normalized"), dtype=np.float32)
        ml = self._mask_logits
        if ml is not None and self._mask_view is None:
            # Cropped with the pixel boxes `masks` uses, not boxes * size: x / W * W need not be x in float32.
            crops = np.ascontiguousarray(self.boxes_as("xyxy_pixels"), dtype=np.float32)
            _core.pack_byte_mask(boxes, crops, self.scores, self.class_ids, ml.windows, ml.offsets, ml.logits, ml.grid,
                                 out, _byte_mask.LAYOUTS[layout][1])
        else:
            masks = self.masks
            assert masks is not None
            if masks.shape[1:] != (h, w):
                raise ValueError(f"masks are {masks.shape[1:]}, HAILO_NMS_WITH_BYTE_MASK holds them at the input size {(h, w)}")
            _byte_mask.write_byte_mask(boxes, self.scores, self.class_ids, masks, out, hailort_version=layout)
        return out

    def __len__(self) -> int:
        return len(self.scores)

    def __repr__(self) -> str:
        extra = ""
        if self.keypoints is not None:
            extra += f", keypoints={self.keypoints.shape[1]}"
        if self.rboxes is not None:
            extra += ", rotated"
        return (f"Detections(n={len(self)}, box_format={self.box_format!r}, image_size={self.image_size}, "
                f"num_classes={self.num_classes}{extra})")

    @property
    def angles(self) -> Optional[np.ndarray]:
        """OBB: the rotated boxes' angles (n,) in radians (rboxes[:, 4]), as decoded: in
        [-pi/4, 3pi/4) (angle_decode "sigmoid"; "raw", YOLO26's OBB26, gives any value), w < h
        allowed (Ultralytics' predict does not regularize them). None otherwise."""
        return None if self.rboxes is None else self.rboxes[:, 4]

    def polygons(self) -> np.ndarray:
        """OBB: the four corners (n, 4, 2) float32 of each rotated box, (x, y) in input pixels, in
        Ultralytics' xywhr2xyxyxyxy order (centre + v1 + v2, + v1 - v2, - v1 - v2, - v1 + v2 with
        v1 = w/2 (cos, sin), v2 = h/2 (-sin, cos))."""
        if self.rboxes is None:
            raise ValueError("polygons() needs rotated boxes: these detections come from heads without an angle output")
        return rbox_corners(self.rboxes)

    def boxes_as(self, box_format: str) -> np.ndarray:
        """The boxes in another format (pixels need image_size)."""
        if box_format not in BOX_FORMATS:
            raise ValueError(f"box_format must be one of {BOX_FORMATS}, got {box_format!r}")
        return _convert_boxes(self.boxes, self.box_format, box_format, self.image_size)

    def to_original(self, original_size: Tuple[int, int]) -> "Detections":
        """Undo an Ultralytics-style letterbox (scale by the min ratio, centre with padding) from
        the network input back to the original image: xyxy pixels, clipped to the image (as
        Ultralytics' scale_boxes). A detection with no area left inside the image (its clipped box
        0 wide or high: it lay in the padding or beyond the edge) is dropped, with its keypoints,
        rotated box and mask, as the TAPPAS plugin drops it. OBB: the rotated box and its enclosing
        box are not clipped (Ultralytics does not clip them); the enclosing box clipped decides."""
        if self.image_size is None:
            raise ValueError("to_original needs the network input size (image_size)")
        (ih, iw), (oh, ow) = self.image_size, (int(original_size[0]), int(original_size[1]))
        if oh <= 0 or ow <= 0:
            raise ValueError(f"original_size must be a positive (height, width), got {original_size!r}")
        # Ultralytics 8.4's scale_boxes / scale_coords: LetterBox rounds each scaled side, so x and y
        # have their own gain (new side / old side) and the padding comes from the rounded sides.
        # (Up to 8.3 one gain served both axes and the padding came from the unrounded sides.)
        gain = min(ih / oh, iw / ow)
        new_h, new_w = max(round(oh * gain), 1), max(round(ow * gain), 1)
        gain_y, gain_x = new_h / oh, new_w / ow
        pad_x, pad_y = round((iw - new_w) / 2 - 0.1), round((ih - new_h) / 2 - 0.1)
        gains = np.array([gain_x, gain_y, gain_x, gain_y], dtype=np.float32)
        b = self.boxes_as("xyxy_pixels").astype(np.float32)
        b -= np.array([pad_x, pad_y, pad_x, pad_y], dtype=np.float32)
        b /= gains
        b[:, [0, 2]] = b[:, [0, 2]].clip(0, ow)
        b[:, [1, 3]] = b[:, [1, 3]].clip(0, oh)
        keypoints = rboxes = None
        if self.keypoints is not None:
            # As Ultralytics' scale_coords: to pixels, padding off, scaled, clipped to the image.
            k = self.keypoints.astype(np.float32, copy=True)
            if self.box_format.endswith("normalized"):
                k[:, :, 0] *= np.float32(iw)
                k[:, :, 1] *= np.float32(ih)
            k[:, :, 0] = ((k[:, :, 0] - np.float32(pad_x)) / np.float32(gain_x)).clip(0, ow)
            k[:, :, 1] = ((k[:, :, 1] - np.float32(pad_y)) / np.float32(gain_y)).clip(0, oh)
            keypoints = k
        if self.rboxes is not None:
            # As Ultralytics' scale_boxes(xywh=True): centre moved and scaled, size scaled, not
            # clipped; the enclosing boxes follow from the mapped rotated boxes.
            r = self.rboxes.astype(np.float32, copy=True)
            r[:, 0] -= np.float32(pad_x)
            r[:, 1] -= np.float32(pad_y)
            r[:, :4] /= gains
            rboxes = r
            corners = rbox_corners(r)
            b = np.concatenate([corners.min(axis=1), corners.max(axis=1)], axis=1).astype(np.float32)
        # No area left in the image: dropped (every array below is taken at `keep`).
        inside = np.stack([b[:, 0].clip(0, ow), b[:, 1].clip(0, oh), b[:, 2].clip(0, ow), b[:, 3].clip(0, oh)], axis=1)
        keep = np.flatnonzero((inside[:, 2] > inside[:, 0]) & (inside[:, 3] > inside[:, 1]))
        every = len(keep) == len(b)

        def pick(a: np.ndarray) -> np.ndarray:
            return a if every else a[keep]

        def pick_opt(a: Optional[np.ndarray]) -> Optional[np.ndarray]:
            return None if a is None else pick(a)

        b = pick(b)
        d = Detections(b, pick(self.scores), pick(self.class_ids), box_format="xyxy_pixels", image_size=(oh, ow),
                       num_classes=self.num_classes, max_per_class=self.max_per_class,
                       keypoints=pick_opt(keypoints), rboxes=pick_opt(rboxes))
        if self._mask_logits is not None and self._mask_view is None:
            # Masks at the original size as Ultralytics' retina_masks=True path renders them:
            # process_mask_native(proto, coefs, boxes scaled as above, (oh, ow)), cropped to `b`.
            ml = self._mask_logits
            if not every:
                ml = MaskLogits(np.ascontiguousarray(ml.windows[keep]), np.ascontiguousarray(ml.offsets[keep]), ml.logits,
                                ml.grid, ml.signs)
            d._mask_logits = ml
            d._mask_view = (_core.mask_sampling_native(ml.grid, oh, ow), b)
        elif self._masks is not None:
            d._masks = _letterbox_undo_nearest(pick(self._masks), (oh, ow), gain, pad_x, pad_y, b)
        return d

    # -- other tools (hailo_decode.interop: each third-party package imported only when called) --
    def to_supervision(self, class_names: Optional[Sequence[str]] = None) -> Any:
        """A `supervision.Detections` (xyxy pixels of image_size, confidence, class_id; masks and
        rotated boxes when the task has them). Needs the extra `supervision`. For the original
        image of a letterboxed input: `dets.to_original((h, w)).to_supervision()`."""
        from .interop import to_supervision

        return to_supervision(self, class_names)

    def to_coco(self, image_id: Union[int, str], category_ids: Any = None) -> List[dict]:
        """COCO results records ({"image_id", "category_id", "bbox": [x, y, w, h], "score"}) in
        pixels of image_size: call it on `to_original(...)` for COCO ground truth of the original
        images. category_ids maps class ids to COCO ids (interop.COCO80_TO_COCO91 for a
        COCO-trained model); None keeps the class id."""
        from .interop import to_coco

        return to_coco(self, image_id, category_ids)

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
        return by_class.pack(self.boxes_as("yxyx_normalized"), self.scores, self.class_ids, nc, mpc, out)

    def to_hailo_nms_by_score_buffer(self, out: Optional[np.ndarray] = None, *, max_bboxes_total: Optional[int] = None,
                                     num_classes: Optional[int] = None,
                                     max_per_class: Optional[int] = None) -> np.ndarray:
        """The uint8 HAILO_NMS_BY_SCORE frame HailoRT's NMS op writes: a uint16 count, then packed
        22-byte records [ymin, xmin, ymax, xmax, score: float32, class_id: uint16], best score
        first (a Decoder's order is HailoRT's, ties included; other detections are sorted stably),
        no per-class cap, at most max_bboxes_total records (HailoRT's default: num_classes x
        max_per_class), the rest of the frame zeroed: 2 + 22 * max_bboxes_total bytes. Where
        HailoRT 4.23 would write one record past the end of its frame, this stays inside.
        Written into `out` when given (C-contiguous uint8, large enough).

        For the bytes HailoRT writes, the detections must hold every survivor of NMS: decode with
        max_per_class=None, or use Decoder.decode_to_hailo_nms(raw, format="by_score")."""
        if max_bboxes_total is None:
            nc, mpc = self._hailo_params(num_classes, max_per_class)
            max_bboxes_total = by_score.default_max_total(nc, mpc)
        scores, boxes, class_ids = self.scores, self.boxes_as("yxyx_normalized"), self.class_ids
        if scores.size > 1 and np.any(scores[1:] > scores[:-1]):
            order = np.argsort(-scores, kind="stable")
            scores, boxes, class_ids = scores[order], boxes[order], class_ids[order]
        if class_ids.size and (class_ids.min() < 0 or class_ids.max() > by_score.MAX_TOTAL):
            raise ValueError(f"class ids must lie in [0, 65535] for HAILO_NMS_BY_SCORE, got "
                             f"{class_ids.min()}..{class_ids.max()}")
        return by_score.pack(boxes, scores, class_ids, int(max_bboxes_total), out)

    def to_hailo_nms(self, tf_format: bool = False, *, num_classes: Optional[int] = None,
                     max_per_class: Optional[int] = None) -> Union[List[np.ndarray], np.ndarray]:
        """What pyhailort returns for one frame of a HAILO_NMS_BY_CLASS output: a list over classes
        of (n, 5) float32 [ymin, xmin, ymax, xmax, score] arrays (an empty class is a float64
        (0, 5) array, as pyhailort makes it), or with tf_format=True an array
        [classes, 5, max_per_class] padded with zeros."""
        nc, mpc = self._hailo_params(num_classes, max_per_class)
        flat = self.to_hailo_nms_buffer(num_classes=nc, max_per_class=mpc)
        return by_class.flat_to_tf(flat, nc, mpc) if tf_format else by_class.flat_to_pyhailort(flat, nc)


def rbox_corners(rboxes: np.ndarray) -> np.ndarray:
    """Corners (n, 4, 2) float32 of rotated boxes (n, 5) [cx, cy, w, h, angle], in the order of
    Ultralytics' xywhr2xyxyxyxy."""
    r = np.asarray(rboxes, dtype=np.float32).reshape(-1, 5)
    ctr = r[:, None, 0:2]
    w, h, a = r[:, 2:3], r[:, 3:4], r[:, 4:5]
    cos, sin = np.cos(a), np.sin(a)
    v1 = np.concatenate([w / 2 * cos, w / 2 * sin], axis=-1)[:, None, :]
    v2 = np.concatenate([-h / 2 * sin, h / 2 * cos], axis=-1)[:, None, :]
    out = np.concatenate([ctr + v1 + v2, ctr + v1 - v2, ctr - v1 - v2, ctr - v1 + v2], axis=1)
    return out.astype(np.float32, copy=False)


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


def _detections(arrays: Tuple[np.ndarray, np.ndarray, np.ndarray], image_size: Optional[Tuple[int, int]],
                box_format: str, num_classes: Optional[int], max_per_class: Optional[int]) -> Detections:
    """Detections from (boxes yxyx normalized, scores, class_ids), in box_format."""
    b, s, c = arrays
    det = Detections(b, s, c, box_format="yxyx_normalized", image_size=image_size, num_classes=num_classes,
                     max_per_class=max_per_class)
    if box_format != "yxyx_normalized":
        with np.errstate(over="ignore"):
            boxes = det.boxes_as(box_format)
        bad = ~np.isfinite(boxes).all(axis=1)
        if bad.any():  # a finite but absurd normalized value (3.4e38) times the image size
            i = int(np.argmax(bad))
            raise ValueError(f"detection {i}: its normalized box {b[i].tolist()} (yxyx) is not finite in {box_format} "
                             f"for image_size {tuple(image_size) if image_size is not None else None}")
        det = Detections(boxes, det.scores, det.class_ids, box_format=box_format,
                         image_size=image_size, num_classes=num_classes, max_per_class=max_per_class)
    return det


def _by_class(output: Any, num_classes: Optional[int], max_per_class: Optional[int],
              image_size: Optional[Tuple[int, int]], box_format: str) -> Union[Detections, List[Detections]]:
    def frame(rows: Sequence[np.ndarray], mpc: Optional[int]) -> Detections:
        return _detections(by_class.rows_to_arrays(rows), image_size, box_format, len(rows), mpc)

    if isinstance(output, (list, tuple)):
        if by_class.list_depth(output) == 4:  # a batch: frames of classes of (n, 5) rows
            return [frame(by_class.checked_rows(f, num_classes, max_per_class), max_per_class) for f in output]
        return frame(by_class.checked_rows(output, num_classes, max_per_class), max_per_class)
    a = np.asarray(output)
    if a.dtype.kind != "f":
        hint = " (a uint8 buffer is HAILO_NMS_BY_SCORE: pass format=\"by_score\")" if a.dtype == np.uint8 else ""
        raise TypeError(f"HailoRT NMS output must be float32, got {a.dtype}{hint}")
    if a.ndim in (2, 4):  # a batch of flat buffers or of tf arrays
        return [cast(Detections, _by_class(f, num_classes, max_per_class, image_size, box_format)) for f in a]
    if a.ndim == 3:
        return frame(by_class.tf_to_rows(a, num_classes, max_per_class), a.shape[2])
    if a.ndim == 1:
        if num_classes is None:
            raise ValueError("a flat HAILO_NMS_BY_CLASS buffer needs num_classes=")
        by_class.check_flat_size(a.size, num_classes, max_per_class)
        return frame(by_class.flat_to_rows(a.astype(np.float32, copy=False), num_classes), max_per_class)
    raise ValueError(f"unrecognized HailoRT NMS output of shape {a.shape}: expected a per-class list, a flat "
                     f"buffer (1-D, or 2-D for a batch) or tf_nms_format [classes, 5, max] (4-D for a batch)")


def _by_score(output: Any, num_classes: Optional[int], max_per_class: Optional[int], max_bboxes_total: Optional[int],
              image_size: Optional[Tuple[int, int]], box_format: str) -> Union[Detections, List[Detections]]:
    def frame(arrays: Tuple[np.ndarray, np.ndarray, np.ndarray]) -> Detections:
        return _detections(arrays, image_size, box_format, num_classes, max_per_class)

    if isinstance(output, (bytes, bytearray, memoryview)):
        return frame(by_score.read(output, max_bboxes_total=max_bboxes_total, num_classes=num_classes))
    if isinstance(output, (list, tuple)):  # pyhailort: one frame of Detection objects, or a list of frames
        if output and all(isinstance(f, (list, tuple, np.ndarray, bytes, bytearray, memoryview)) for f in output):
            return [cast(Detections, _by_score(f, num_classes, max_per_class, max_bboxes_total, image_size, box_format))
                    for f in output]
        b, sc, c = by_score.objects_to_arrays(output, num_classes)
        n = len(sc) if max_bboxes_total is None else min(len(sc), max_bboxes_total)
        return frame((b[:n], sc[:n], c[:n]))
    if not isinstance(output, np.ndarray):
        raise TypeError(f"HAILO_NMS_BY_SCORE output must be a uint8 ndarray, bytes or pyhailort's list of "
                        f"Detection objects, got {type(output).__name__}")
    if output.ndim == 2:  # a batch of frames
        return [cast(Detections, _by_score(f, num_classes, max_per_class, max_bboxes_total, image_size, box_format))
                for f in output]
    if output.ndim != 1:
        raise ValueError(f"a HAILO_NMS_BY_SCORE frame is 1-D bytes (2-D for a batch), got shape {output.shape}")
    return frame(by_score.read(output, max_bboxes_total=max_bboxes_total, num_classes=num_classes))


def _bbox_only(output: Any, num_classes: Optional[int], image_size: Optional[Tuple[int, int]], box_format: str,
               semantics: str, settings: Any, bbox_op: str = "yolov8") -> Union[Detections, List[Detections]]:
    a = np.asarray(output)
    if a.ndim == 4 or (a.ndim == 3 and a.shape[0] != 1):  # (N, 1, proposals, 4 + C) or (N, proposals, 4 + C)
        return [cast(Detections, _bbox_only(f, num_classes, image_size, box_format, semantics, settings, bbox_op))
                for f in a]
    if bbox_op == "yolov5":  # {box, objectness, classes}: the YOLOv5 op's scores, then the same NMS
        rows = bbox_only.yolov5_scores(bbox_only.rows(a, None if num_classes is None else num_classes + 1),
                                       semantics=semantics, **settings)
        arrays = bbox_only.nms(rows, semantics=semantics, **dict(settings, class_activation="none"))
    else:
        rows = bbox_only.rows(a, num_classes)
        arrays = bbox_only.nms(rows, semantics=semantics, **settings)
    nc = rows.shape[1] - bbox_only.BOX_VALUES
    mpc = settings.get("max_per_class", SEMANTICS[semantics]["max_per_class"])  # the cap nms ran with
    return _detections(arrays, image_size, box_format, nc, mpc)


# The sizes HailoRT's NMS buffers are read with (decode_hailo_nms's num_classes, max_per_class,
# max_bboxes_total): counts beyond this are not counts, they would only make the buffers
# impossibly large.
_MAX_COUNT = 1 << 20


def _count(value: Any, what: str, low: int = 0) -> Optional[int]:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not low <= value <= _MAX_COUNT:
        raise ValueError(f"{what} must be None or an integer >= {low} (at most {_MAX_COUNT}), got {value!r}")
    return int(value)


def decode_hailo_nms(output: Any, *, format: str = "by_class", num_classes: Optional[int] = None,  # noqa: A002
                     max_per_class: Optional[int] = None, max_bboxes_total: Optional[int] = None,
                     image_size: Optional[Tuple[int, int]] = None, box_format: str = "yxyx_normalized",
                     semantics: str = "hailort", hailort_version: Optional[str] = None, crop_opt: bool = False,
                     bbox_op: str = "yolov8",
                     **nms_settings: Any) -> Union[Detections, List[Detections]]:
    """HailoRT's own NMS output -> the same Detections the raw path gives.

    format="by_class" (HAILO_NMS_BY_CLASS, HailoRT's default), for one frame: the pyhailort list
    (one (n, 5) array per class), the tf_nms_format array [classes, 5, max_per_class], or the
    flat float32 buffer (needs num_classes; its size must be classes x (1 + 5 x max_per_class),
    and num_classes and max_per_class, when given, must be the sizes the buffer has: ValueError
    naming both otherwise). A batch (list of per-frame lists, a 4-D tf array, a
    2-D flat array) gives a list of Detections.

    format="by_score" (HAILO_NMS_BY_SCORE): the uint8 frame (1-D; 2-D for a batch) or bytes, or
    pyhailort's list of Detection objects (a list of such lists for a batch). Only what the buffer
    holds is read, whatever its count says (max_bboxes_total, when given, caps it further).

    format="byte_mask" (HAILO_NMS_WITH_BYTE_MASK, YOLOv5-seg HEFs): one frame's bytes (a 2-D uint8
    array: a batch); needs image_size (the input's (height, width)); the Detections have masks.
    hailort_version ("X.Y" or "X.Y.Z"): the HailoRT that wrote it, 38-byte records before 5.2,
    46-byte ones from 5.2.0; None reads both and refuses a frame both read differently.
    crop_opt=True: masks cropped as HailoRT 5.x crops them under HAILORT_YOLOV5_SEG_PP_CROP_OPT=1.

    format="bbox_only" (the yolov8_bbox_only op): the float32 (1, proposals, 4 + classes) output
    ((N, 1, proposals, 4 + classes) for a batch; flat needs num_classes). HailoRT ran no NMS on it;
    this runs it as the Decoder does, with the `semantics` preset (HailoRT's by default: the
    detections its NMS op would give) and any DecoderConfig NMS setting as a keyword
    (score_threshold, iou_threshold, max_per_class, ...: take them from the HEF's op).
    bbox_op="yolov5": the yolov5_bbox_only op's output instead, (1, proposals, 5 + classes) rows of
    {box, objectness, classes} (flat needs num_classes, the classes alone); each class's score is
    class x objectness and a proposal whose objectness fails the score test gives none, as HailoRT's
    YOLOv5 op scores them, before the same NMS.
    """
    if bbox_op not in bbox_only.BBOX_OPS:
        raise ValueError(f"bbox_op must be one of {bbox_only.BBOX_OPS}, got {bbox_op!r}")
    if bbox_op != "yolov8" and format != "bbox_only":
        raise TypeError(f"bbox_op applies to format=\"bbox_only\" only, got format={format!r}")
    if format not in NMS_FORMATS:
        raise ValueError(f"format must be one of {NMS_FORMATS}, got {format!r}")
    if box_format not in BOX_FORMATS:
        raise ValueError(f"box_format must be one of {BOX_FORMATS}, got {box_format!r}")
    num_classes = _count(num_classes, "num_classes", low=1)
    max_bboxes_total = _count(max_bboxes_total, "max_bboxes_total")
    if format == "bbox_only":
        if max_per_class is not None:  # the NMS setting: checked by the core with the others
            nms_settings["max_per_class"] = max_per_class
        return _bbox_only(output, num_classes, image_size, box_format, semantics, nms_settings, bbox_op)
    max_per_class = _count(max_per_class, "max_per_class")
    if format == "byte_mask":
        if nms_settings or semantics != "hailort":
            raise TypeError("NMS settings apply to format=\"bbox_only\" only: HailoRT already ran NMS on a byte_mask output")
        return _byte_mask_frames(output, num_classes, image_size, box_format, hailort_version, crop_opt)
    if hailort_version is not None or crop_opt:
        raise TypeError("hailort_version and crop_opt apply to format=\"byte_mask\" only (the other forms' bytes are "
                        "the same in every HailoRT version)")
    if nms_settings or semantics != "hailort":
        raise TypeError(f"NMS settings ({sorted(nms_settings) or 'semantics'}) apply to format=\"bbox_only\" only: "
                        f"HailoRT already ran NMS on a {format} output")
    if format == "by_score":
        return _by_score(output, num_classes, max_per_class, max_bboxes_total, image_size, box_format)
    return _by_class(output, num_classes, max_per_class, image_size, box_format)


def _byte_mask_frames(output: Any, num_classes: Optional[int], image_size: Optional[Tuple[int, int]],
                      box_format: str, hailort_version: Optional[str] = None,
                      crop_opt: bool = False) -> Union[Detections, List[Detections]]:
    if image_size is None:
        raise ValueError("HAILO_NMS_WITH_BYTE_MASK needs image_size=(height, width) of the network input")
    a = np.asarray(output)
    if a.ndim == 2 and a.dtype == np.uint8:
        return [cast(Detections, _byte_mask_frames(f, num_classes, image_size, box_format, hailort_version, crop_opt))
                for f in a]
    boxes, scores, classes, masks = _byte_mask.read_byte_mask(a, image_size, hailort_version=hailort_version,
                                                              crop_opt=crop_opt)
    if num_classes is not None and len(classes) and classes.max() >= num_classes:
        raise ValueError(f"HAILO_NMS_WITH_BYTE_MASK buffer has class id {classes.max()}, num_classes is {num_classes}")
    det = Detections(boxes, scores, classes, box_format="yxyx_normalized", image_size=image_size,
                     num_classes=num_classes, masks=masks)
    if box_format != "yxyx_normalized":
        det = Detections(det.boxes_as(box_format), scores, classes, box_format=box_format, image_size=image_size,
                         num_classes=num_classes, masks=masks)
    return det
