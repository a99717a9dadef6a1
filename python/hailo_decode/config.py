"""What the decoder needs to know: each output's layout and quantization, how outputs pair into
heads, and the decoding settings (thresholds, NMS rules, box format), with two presets."""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from dataclasses import replace as _dc_replace
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Set, Tuple, Union, cast

import numpy as np

from ._entry_points import lookup

__all__ = ["OutputInfo", "Head", "AnchorHead", "YoloxHead", "DecoderConfig", "SEMANTICS", "BOX_FORMATS", "end2end_choice"]

_DTYPES = ("uint8", "uint16", "float32")
_HOST_ORDERS = ("NHWC", "FCR", "F8CR", "NCHW")
_DEVICE_ORDERS = ("NHWC", "FCR", "F8CR", "NHCW")
BOX_FORMATS = ("yxyx_normalized", "xyxy_normalized", "yxyx_pixels", "xyxy_pixels")
# YOLOv8/YOLO11 detect from P3: the finest grid has stride 8 when nothing else says otherwise.
_DEFAULT_FINEST_STRIDE = 8


def _as_quant(value: Any, what: str, name: str) -> Union[float, Tuple[float, ...]]:
    arr = np.asarray(value, dtype=np.float64)
    if arr.ndim == 0:
        return float(arr)
    if arr.ndim == 1 and arr.size >= 1:
        return tuple(float(v) for v in arr)
    raise ValueError(f"output {name!r}: {what} must be a number or a 1-D sequence, got shape {arr.shape}")


@dataclass(frozen=True)
class OutputInfo:
    """One output tensor as the host receives it.

    shape: logical (H, W, C). dtype: "uint8", "uint16" or "float32" (already dequantized).
    order: the format order HailoRT reports. Host buffers (vstreams, InferModel) are dense
    channel-last for NHWC, FCR and F8CR alike; "NCHW" only when asked for.
    device=True: a raw device buffer (C++ raw streams, HAILO_DISABLE_PP) in `order`
    (NHWC/FCR, NHCW or F8CR) with `padded_shape` (Hp, Wp, Cp) from the stream info.
    zp, scale: quantization, one value per tensor or one per channel (per-feature HEFs).
    """

    name: str
    shape: Tuple[int, int, int]
    dtype: str = "uint8"
    order: str = "NHWC"
    zp: Union[float, Tuple[float, ...]] = 0.0
    scale: Union[float, Tuple[float, ...]] = 1.0
    padded_shape: Optional[Tuple[int, int, int]] = None
    device: bool = False

    def __post_init__(self) -> None:
        name = self.name
        if not isinstance(name, str) or not name:
            raise TypeError(f"output name must be a non-empty string, got {name!r}")
        try:
            shape = tuple(int(v) for v in self.shape)
        except (TypeError, ValueError):
            raise TypeError(f"output {name!r}: shape must be (H, W, C) integers, got {self.shape!r}") from None
        if len(shape) != 3 or min(shape) <= 0:
            raise ValueError(f"output {name!r}: shape must be (H, W, C) with positive sizes, got {self.shape!r}")
        try:
            dtype = np.dtype(self.dtype).name
        except TypeError:
            raise TypeError(f"output {name!r}: dtype must be one of {_DTYPES}, got {self.dtype!r}") from None
        if dtype not in _DTYPES:
            raise TypeError(f"output {name!r}: dtype must be one of {_DTYPES}, got {dtype!r}")
        order = str(self.order).upper().replace("HAILO_FORMAT_ORDER_", "").replace("FORMATORDER.", "")
        allowed = _DEVICE_ORDERS if self.device else _HOST_ORDERS
        if order not in allowed:
            hint = " (NHCW exists only as a raw device buffer: pass device=True with padded_shape)" if order == "NHCW" else ""
            where = "device" if self.device else "host"
            raise ValueError(f"output {name!r}: {where} order must be one of {allowed}, got {self.order!r}{hint}")
        padded = shape if self.padded_shape is None else tuple(int(v) for v in self.padded_shape)
        if len(padded) != 3 or any(p < s for p, s in zip(padded, shape)):
            raise ValueError(f"output {name!r}: padded_shape must be (Hp, Wp, Cp) >= shape {shape}, got {self.padded_shape!r}")
        if not self.device and padded != shape:
            raise ValueError(f"output {name!r}: host buffers are dense; padded_shape {padded} != shape {shape} "
                             f"needs device=True")
        if self.device and order == "F8CR" and padded[2] % 8:
            raise ValueError(f"output {name!r}: F8CR needs padded channels that are a multiple of 8, got {padded[2]}")
        zp = _as_quant(self.zp, "zp", name)
        scale = _as_quant(self.scale, "scale", name)
        for what, q in (("zp", zp), ("scale", scale)):
            values = q if isinstance(q, tuple) else (q,)
            if len(values) not in (1, shape[2]):
                raise ValueError(f"output {name!r}: {what} must have 1 or {shape[2]} values (one per channel), got {len(values)}")
            if not all(math.isfinite(v) for v in values):
                raise ValueError(f"output {name!r}: {what} must be finite, got {q}")
            if what == "scale" and not all(v > 0 for v in values):
                raise ValueError(f"output {name!r}: scale must be > 0, got {q}")
        if dtype != "float32":
            # The core dequantizes in float32: every quantized value must stay a finite float32.
            qmax = np.float32(255 if dtype == "uint8" else 65535)
            with np.errstate(over="ignore", invalid="ignore"):  # overflow is what this detects
                zps = np.asarray(zp, dtype=np.float32).reshape(-1)
                scales = np.asarray(scale, dtype=np.float32).reshape(-1)
                ends = np.concatenate([(np.float32(0) - zps) * scales, (qmax - zps) * scales])
            if not (np.all(scales > 0) and np.all(np.isfinite(ends))):
                raise ValueError(f"output {name!r}: zp {zp} and scale {scale} do not dequantize {dtype} values to "
                                 f"finite float32 numbers (the scale must be > 0 and (q - zp) * scale finite in float32)")
        object.__setattr__(self, "shape", shape)
        object.__setattr__(self, "dtype", dtype)
        object.__setattr__(self, "order", order)
        object.__setattr__(self, "padded_shape", padded)
        object.__setattr__(self, "zp", zp)
        object.__setattr__(self, "scale", scale)

    @property
    def channels(self) -> int:
        return self.shape[2]

    @property
    def memory_shape(self) -> Tuple[int, int, int]:
        """(Hp, Wp, Cp) as resolved at construction: padded_shape, or the logical shape when none
        was given (host buffers are dense)."""
        padded = self.padded_shape
        return self.shape if padded is None else padded

    @property
    def frame_elements(self) -> int:
        """Elements from one frame to the next: dense for host buffers; for raw device buffers the
        padded frame rounded up to a multiple of 8 bytes, as HailoRT sizes it."""
        h, w, c = self.memory_shape
        n = h * w * c
        if self.device:
            item = np.dtype(self.dtype).itemsize
            n = -(-n * item // 8) * 8 // item
        return n

    @property
    def batch_frame_shapes(self) -> Tuple[Tuple[int, ...], ...]:
        """Per-frame shapes a batch (a leading axis) may have: for raw device buffers only those
        whose size is the raw frame size, since frames are spaced by it."""
        if not self.device:
            return self.frame_shapes
        return tuple(s for s in self.frame_shapes if int(np.prod(s)) == self.frame_elements)

    @property
    def frame_shapes(self) -> Tuple[Tuple[int, ...], ...]:
        """Shapes a single frame may arrive in (a batch adds a leading axis)."""
        h, w, c = self.shape
        if self.device:
            hp, wp, cp = self.memory_shape
            dense = hp * wp * cp
            shapes: Set[Tuple[int, ...]] = {(self.frame_elements,), (dense,)}
            shapes.add((hp, cp, wp) if self.order == "NHCW" else (hp, wp, cp))
            return tuple(sorted(shapes, key=len))
        return ((c, h, w),) if self.order == "NCHW" else ((h, w, c),)


@dataclass(frozen=True)
class Head:
    """One detection scale: the box tensor (4 x bins channels), the class tensor, and its stride
    (None: derived from the input size). Segmentation heads also name their mask coefficient
    tensor (`mask`, as many channels as the prototype output, `DecoderConfig(proto=...)`); pose
    heads add `kpt`, the keypoint tensor (K x 3 channels, x, y, visibility per keypoint, or K x 2);
    oriented-box (OBB) heads add `angle`, the 1-channel angle tensor."""

    box: str
    cls: str
    stride: Optional[int] = None
    mask: Optional[str] = None
    kpt: Optional[str] = None
    angle: Optional[str] = None

    def outputs(self) -> Tuple[str, ...]:
        """The names of this head's outputs: box, cls, then mask, kpt or angle when present."""
        return tuple(n for n in (self.box, self.cls, self.mask, self.kpt, self.angle) if n is not None)


TASKS = ("detect", "segment", "pose", "obb")
# Ultralytics' max_wh: class-aware NMS offsets each box by class x 7680 pixels (utils/nms.py).
ULTRALYTICS_MAX_WH = 7680.0


@dataclass(frozen=True, init=False)
class AnchorHead(Head):
    """A YOLOv5/YOLOv7 anchor head: one tensor of A x (5 + classes) channels, (x, y, w, h,
    objectness, classes) per anchor (channel a * (5 + classes) + k), and its A anchors as (w, h)
    pairs in input pixels. `box` and `cls` both name the tensor.

        AnchorHead("yolov5s/conv70", anchors=((10, 13), (16, 30), (33, 23)), stride=8)
    """

    anchors: Tuple[Tuple[int, int], ...] = ()

    def __init__(self, output: str, anchors: Iterable[Sequence[int]], stride: Optional[int] = None) -> None:
        pairs = []
        for a in anchors:
            try:
                aw, ah = a
                pair = (int(aw), int(ah))
            except (TypeError, ValueError):
                raise ValueError(f"anchor head {output!r}: anchors must be (w, h) pairs of integers, got {a!r}") from None
            if pair != (aw, ah) or min(pair) <= 0 or max(pair) > MAX_IMAGE_SIDE:
                raise ValueError(f"anchor head {output!r}: anchors must be positive whole pixels, got {a!r}")
            pairs.append(pair)
        if not pairs:
            raise ValueError(f"anchor head {output!r}: at least one anchor (w, h) is needed")
        object.__setattr__(self, "box", output)
        object.__setattr__(self, "cls", output)
        object.__setattr__(self, "stride", stride)
        object.__setattr__(self, "anchors", tuple(pairs))

    @property
    def output(self) -> str:
        return self.box


@dataclass(frozen=True, init=False)
class YoloxHead(Head):
    """A YOLOX head: reg (4 channels: x, y, w, h offsets), objectness (1) and class (classes)
    tensors on one grid. `box` names reg.

        YoloxHead("yolox/conv55", "yolox/conv56", "yolox/conv54", stride=8)   # reg, obj, cls
    """

    obj: str = ""

    def __init__(self, reg: str, obj: str, cls: str, stride: Optional[int] = None) -> None:
        object.__setattr__(self, "box", reg)
        object.__setattr__(self, "cls", cls)
        object.__setattr__(self, "stride", stride)
        object.__setattr__(self, "obj", obj)

    @property
    def reg(self) -> str:
        return self.box


# Settings every preset fills; any of them can be given explicitly instead.
SEMANTICS: Dict[str, Dict[str, Any]] = {
    # What HailoRT's own YOLOv8 post-process does (DFC nms_postprocess, engine=cpu).
    "hailort": dict(
        class_activation="none", score_threshold=0.2, score_test=">=", iou_threshold=0.7, iou_test=">=",
        multi_label=True, agnostic=False, max_per_class=100, max_total=None, max_candidates=None,
        tie_break="hailort", box_format="yxyx_normalized", rotated_class_offset=0.0, end2end=False,
    ),
    # What Ultralytics' predict does on the same head (utils/nms.py).
    "ultralytics": dict(
        class_activation="sigmoid", score_threshold=0.25, score_test=">", iou_threshold=0.7, iou_test=">",
        multi_label=False, agnostic=False, max_per_class=None, max_total=300, max_candidates=30000,
        tie_break="stable", box_format="xyxy_pixels", rotated_class_offset=ULTRALYTICS_MAX_WH, end2end=False,
    ),
}
_SETTINGS = tuple(SEMANTICS["hailort"])


# Caps beyond this are not caps: they would only make HailoRT-shaped buffers impossibly large.
MAX_CAP = 1 << 20
# No network input is this large; the core holds sizes and strides as 32-bit integers.
MAX_IMAGE_SIDE = 1 << 20


def _opt_int(value: Any, what: str, low: int = 0) -> Optional[int]:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not low <= value <= MAX_CAP:
        raise ValueError(f"{what} must be None or an integer >= {low} (at most {MAX_CAP}), got {value!r}")
    return int(value)


def _json_int(value: Any, what: str) -> int:
    """An integer from the NMS JSON (which may hold floats such as 16.0, or Infinity)."""
    try:
        f = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"NMS JSON: {what} must be a number, got {value!r}") from None
    if not math.isfinite(f) or f != int(f):
        raise ValueError(f"NMS JSON: {what} must be a whole number, got {value!r}")
    return int(f)


def _json_float(value: Any, what: str) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ValueError(f"NMS JSON: {what} must be a number, got {value!r}") from None


def _choice(value: Any, allowed: Sequence[str], what: str) -> str:
    if value not in allowed:
        raise ValueError(f"{what} must be one of {tuple(allowed)}, got {value!r}")
    return value


class DecoderConfig:
    """Everything a Decoder needs. Build it by hand, from the DFC NMS JSON (`from_nms_json`), or
    let it pair heads from the output shapes.

    DecoderConfig(outputs, heads=None, *, image_size=None, semantics="hailort", classes=None,
                  bins=None, **settings)

    settings (a preset fills what is not given): class_activation ("none" | "sigmoid"),
    score_threshold (float, or one per class), score_test (">=" | ">"), iou_threshold,
    iou_test (">=" | ">"), multi_label, agnostic, max_per_class, max_total, max_candidates,
    tie_break ("hailort" | "stable"), box_format (see BOX_FORMATS), rotated_class_offset (OBB:
    class-aware rotated NMS offsets box centres by class x this many pixels before probiou, as
    Ultralytics does with max_wh = 7680; 0 compares them unmoved),
    end2end (bool: Ultralytics' end-to-end selection of one-to-one heads, YOLO26/YOLOv10, instead of
    NMS: a top-k over anchors by best class score, a top-k over their (anchor, class) pairs, then the
    score test; max_total is max_det there, None meaning Ultralytics' 300; see `end2end_choice`).
    classes: an allow-list of class ids (others never detected).
    Segmentation (YOLOv8/YOLO11 -seg): proto names the prototype output ((H/4, W/4, 32) for
    those models; found by shape when heads are paired by shape), each Head its mask coefficient
    output. proto_stride: the prototype grid must be image_size / proto_stride (None: not checked).
    drop_empty_masks: drop detections whose mask at the input size is empty (None: as the
    preset, True for "ultralytics", whose predictor does it, False for "hailort").
    task: "detect", "pose" or "obb"; None: what the heads say (a head with `kpt` is pose, with
    `angle` OBB). When heads are paired from the output shapes, it settles which third output per
    grid is which. keypoint_dims: 3 (x, y, visibility; the default) or 2 (x, y) per keypoint.
    """

    def __init__(self, outputs: Iterable[OutputInfo], heads: Optional[Iterable[Head]] = None, *,
                 image_size: Optional[Tuple[int, int]] = None, semantics: str = "hailort",
                 classes: Optional[Iterable[int]] = None, bins: Optional[int] = None, proto: Optional[str] = None,
                 proto_stride: Optional[int] = 4, drop_empty_masks: Optional[bool] = None,
                 task: Optional[str] = None, keypoint_dims: Optional[int] = None, **settings: Any) -> None:
        self.outputs: Tuple[OutputInfo, ...] = tuple(outputs)
        if not self.outputs or not all(isinstance(o, OutputInfo) for o in self.outputs):
            raise TypeError("outputs must be a non-empty sequence of OutputInfo")
        names = [o.name for o in self.outputs]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise ValueError(f"output names must be unique, repeated: {sorted(dup)}")
        unknown = set(settings) - set(_SETTINGS)
        if unknown:
            raise TypeError(f"unknown setting(s) {sorted(unknown)}; settings are {list(_SETTINGS)}")
        self.semantics = _choice(semantics, tuple(SEMANTICS), "semantics")
        resolved = dict(SEMANTICS[semantics])
        resolved.update(settings)
        self._explicit = dict(settings)
        self._drop_explicit = drop_empty_masks

        if task is not None:
            _choice(task, TASKS, "task")
        if keypoint_dims is not None and (isinstance(keypoint_dims, bool) or keypoint_dims not in (2, 3)):
            raise ValueError(f"keypoint_dims must be 2 (x, y) or 3 (x, y, visibility), got {keypoint_dims!r}")
        by_name = {o.name: o for o in self.outputs}
        heads = None if heads is None else tuple(heads)
        self.head_kind = _head_family(heads)
        self.heads: Tuple[Head, ...]
        self.proto: Optional[str]
        if self.head_kind != "dfl":
            # YOLOv5/YOLOX heads decode boxes only: no prototype, keypoint or angle outputs.
            if proto is not None or task not in (None, "detect"):
                raise ValueError(f"{self.head_kind} heads are detection heads: no task={task!r} or proto= for them")
            self.bins = 0  # no DFL
            self.num_classes, self.image_size, self.heads = _anchor_family_layout(
                self.head_kind, cast(Tuple[Head, ...], heads), by_name, image_size)
            self.proto = None
            self.task, self.num_keypoints, self.keypoint_dims = "detect", 0, 3
            self.proto_stride = proto_stride
            self.drop_empty_masks = False
        else:
            if proto is not None and proto not in by_name:
                raise ValueError(f"proto output {proto!r} is not among the outputs {names}")
            if heads is None:
                if proto is None and task in (None, "segment"):
                    proto = _find_proto(self.outputs)
                rest = [o for o in self.outputs if o.name != proto]
                pairs = (_pair_by_shape(rest, bins, task, keypoint_dims) if proto is None
                         else _pair_seg_by_shape(rest, by_name[proto], bins))
            else:
                pairs = []
                for h in heads:
                    if not isinstance(h, Head):
                        raise TypeError(f"heads must be Head objects, got {h!r}")
                    for role, n in (("box", h.box), ("cls", h.cls), ("mask", h.mask), ("kpt", h.kpt), ("angle", h.angle)):
                        if n is not None and n not in by_name:
                            raise ValueError(f"head {role} output {n!r} is not among the outputs {names}")
                    pairs.append(h)
                if not pairs:
                    raise ValueError("heads must not be empty")
            self.proto = proto
            with_mask = [h for h in pairs if h.mask is not None]
            if proto is None and with_mask:
                raise ValueError(f"head mask output {with_mask[0].mask!r} needs the prototype output: pass proto=")
            if proto is not None and len(with_mask) != len(pairs):
                lacking = [h.box for h in pairs if h.mask is None]
                raise ValueError(f"with a prototype output ({proto!r}) every head needs its mask coefficient output; "
                                 f"heads with box outputs {lacking} have none")
            if with_mask and any(h.kpt is not None or h.angle is not None for h in pairs):
                raise ValueError("a head has mask coefficients or keypoints or an angle, not two of them")
            self.task, self.num_keypoints, self.keypoint_dims = _check_task_outputs(pairs, by_name, task, keypoint_dims)
            used = [n for h in pairs for n in h.outputs()] + ([proto] if proto else [])
            if len(set(used)) != len(used):
                raise ValueError(f"an output is used by more than one head: {used}")
            unused = [n for n in names if n not in used]
            if unused:
                raise ValueError(f"outputs {unused} belong to no head; remove them or add heads")

            box_channels = {by_name[h.box].channels for h in pairs}
            cls_channels = {by_name[h.cls].channels for h in pairs}
            if len(box_channels) != 1 or len(cls_channels) != 1:
                raise ValueError(f"all heads must share box channels and class count; got box channels "
                                 f"{sorted(box_channels)}, class channels {sorted(cls_channels)}")
            (bc,), (cc,) = box_channels, cls_channels
            if bc % 4:
                raise ValueError(f"box output {pairs[0].box!r} has {bc} channels, not 4 x bins")
            self.bins = bc // 4
            if bins is not None and bins != self.bins:
                raise ValueError(f"bins={bins} but box outputs have {bc} channels (= 4 x {self.bins})")
            self.num_classes = cc
            for h in pairs:
                b, c = by_name[h.box], by_name[h.cls]
                if b.shape[:2] != c.shape[:2]:
                    raise ValueError(f"head ({h.box!r}, {h.cls!r}): grids differ, {b.shape[:2]} vs {c.shape[:2]}")
            self.image_size, self.heads = _resolve_strides(pairs, by_name, image_size)
            if proto is not None:
                _check_seg(by_name[proto], [by_name[h.mask] for h in self.heads if h.mask], self.heads, by_name,
                           self.image_size, proto_stride)
            self.proto_stride = proto_stride
            self.drop_empty_masks = (self.semantics == "ultralytics") if drop_empty_masks is None else bool(drop_empty_masks)

        s = resolved
        self.class_activation = _choice(s["class_activation"], ("none", "sigmoid"), "class_activation")
        self.score_test = _choice(s["score_test"], (">=", ">"), "score_test")
        self.iou_test = _choice(s["iou_test"], (">=", ">"), "iou_test")
        self.tie_break = _choice(s["tie_break"], ("hailort", "stable"), "tie_break")
        off = s["rotated_class_offset"]
        if (isinstance(off, bool) or not isinstance(off, (int, float, np.floating, np.integer))
                or not math.isfinite(off) or off < 0 or not np.isfinite(np.float32(off))):
            raise ValueError(f"rotated_class_offset must be a finite number >= 0, got {off!r}")
        self.rotated_class_offset = float(off)
        self.box_format = _choice(s["box_format"], BOX_FORMATS, "box_format")
        if not isinstance(s["end2end"], (bool, np.bool_)):
            raise TypeError(f"end2end must be True or False, got {s['end2end']!r}")
        self.end2end = bool(s["end2end"])
        if self.end2end and self.head_kind != "dfl":
            raise ValueError(f"end2end selection is for DFL heads (YOLO26/YOLOv10), not {self.head_kind} heads")
        if self.end2end and self.task != "detect":
            raise ValueError(f"end2end selection is built for detection heads; task {self.task!r} heads "
                             f"(keypoints, angles, masks) take NMS for now (end2end=False)")
        self.multi_label = bool(s["multi_label"])
        self.agnostic = bool(s["agnostic"])
        self.max_per_class = _opt_int(s["max_per_class"], "max_per_class")
        self.max_total = _opt_int(s["max_total"], "max_total")
        self.max_candidates = _opt_int(s["max_candidates"], "max_candidates")
        iou = s["iou_threshold"]
        if (isinstance(iou, bool) or not isinstance(iou, (int, float, np.floating, np.integer))
                or not math.isfinite(iou) or not np.isfinite(np.float32(iou))):
            raise ValueError(f"iou_threshold must be a finite number (as float32 too), got {iou!r}")
        self.iou_threshold = float(iou)
        th = np.asarray(s["score_threshold"], dtype=np.float64)
        if th.ndim > 1 or (th.ndim == 1 and th.size != self.num_classes):
            raise ValueError(f"score_threshold must be a number or one per class ({self.num_classes}), got shape {th.shape}")
        if not np.all(np.isfinite(th)):
            raise ValueError(f"score_threshold must be finite, got {s['score_threshold']!r}")
        self.score_threshold: Union[float, Tuple[float, ...]] = float(th) if th.ndim == 0 else tuple(float(v) for v in th)
        self.classes: Optional[Tuple[int, ...]] = None
        if classes is not None:
            cl = tuple(int(c) for c in classes)
            bad = [c for c in cl if not 0 <= c < self.num_classes]
            if bad:
                raise ValueError(f"classes {bad} out of range [0, {self.num_classes})")
            self.classes = cl

    # -- derived views -------------------------------------------------------------------------
    def thresholds_per_class(self) -> Tuple[float, ...]:
        """The score threshold of every class; +inf for classes outside the allow-list."""
        th = self.score_threshold
        per = list(th) if isinstance(th, tuple) else [th] * self.num_classes
        if self.classes is not None:
            allowed = set(self.classes)
            per = [v if c in allowed else math.inf for c, v in enumerate(per)]
        return tuple(per)

    @property
    def output_names(self) -> Tuple[str, ...]:
        return tuple(o.name for o in self.outputs)

    def output(self, name: str) -> OutputInfo:
        for o in self.outputs:
            if o.name == name:
                return o
        raise KeyError(name)

    def replace(self, **changes: Any) -> "DecoderConfig":
        """A copy with some settings changed (outputs, heads, image_size, semantics, classes,
        or any setting)."""
        kw: Dict[str, Any] = dict(outputs=self.outputs, heads=self.heads, image_size=self.image_size,
                                  semantics=self.semantics, classes=self.classes, task=self.task,
                                  keypoint_dims=self.keypoint_dims if self.task == "pose" else None,
                                  **self._explicit)
        if self.proto is not None:
            kw.update(proto=self.proto, proto_stride=self.proto_stride)
            if self._drop_explicit is not None:
                kw["drop_empty_masks"] = self._drop_explicit
        if "semantics" in changes and changes["semantics"] != self.semantics:
            # A new preset fills everything the caller did not set explicitly.
            kw = {k: v for k, v in kw.items() if k not in _SETTINGS or k in self._explicit}
        kw.update(changes)
        return DecoderConfig(**kw)

    def __repr__(self) -> str:
        heads = ", ".join(_head_repr(h) for h in self.heads)
        task = "" if self.task == "detect" else f"task={self.task!r}, "
        if self.task == "pose":
            task += f"keypoints={self.num_keypoints}x{self.keypoint_dims}, "
        return (f"DecoderConfig({task}semantics={self.semantics!r}, head_kind={self.head_kind!r}, "
                f"classes={self.num_classes}, bins={self.bins}, "
                f"image_size={self.image_size}, heads=[{heads}], activation={self.class_activation!r}, "
                f"score {self.score_test} {self.score_threshold}, iou {self.iou_test} {self.iou_threshold}, "
                f"multi_label={self.multi_label}, agnostic={self.agnostic}, max_per_class={self.max_per_class}, "
                f"max_total={self.max_total}, box_format={self.box_format!r}, end2end={self.end2end})")

    # -- constructors ---------------------------------------------------------------------------
    @classmethod
    def from_nms_json(cls, source: Union[str, os.PathLike, Mapping[str, Any]], outputs: Iterable[OutputInfo],
                      **settings: Any) -> "DecoderConfig":
        """From the DFC NMS JSON users already have (a path, the JSON text, or a dict): (`nms_scores_th`, `nms_iou_th`, `image_dims`
        [height, width], `max_proposals_per_class`, `classes`, `regression_length`,
        `bbox_decoders` with `reg_layer`, `cls_layer`, `stride`; the Model Zoo's YOLOv5/YOLOv7 JSON has
        `encoded_layer` with anchor `w` and `h` lists instead (AnchorHead), its YOLOX JSON `reg_layer`,
        `objectness_layer` (or `obj_layer`) and `cls_layer` (YoloxHead)). Layer names match output names
        exactly or as the part after the last '/'. Keywords override the JSON; the preset fills
        the rest."""
        if isinstance(source, Mapping):
            doc = dict(source)
        elif isinstance(source, str) and source.lstrip().startswith("{"):
            doc = json.loads(source)  # the JSON text itself, pasted
        else:
            with open(source, "r", encoding="utf-8") as f:
                doc = json.load(f)
        outputs = tuple(outputs)
        if doc.get("background_removal"):
            raise ValueError("NMS JSON: background_removal=true is not supported")
        decoders = doc.get("bbox_decoders")
        if not decoders:
            raise ValueError("NMS JSON: 'bbox_decoders' is missing or empty")
        if not isinstance(decoders, (list, tuple)):
            raise ValueError(f"NMS JSON: 'bbox_decoders' must be a list, got {type(decoders).__name__}")
        heads = []
        for i, d in enumerate(decoders):
            if not isinstance(d, Mapping):
                raise ValueError(f"NMS JSON: bbox_decoders[{i}] must be an object, got {d!r}")
            try:
                heads.append(_json_head(d, i, outputs))
            except KeyError as e:
                raise ValueError(f"NMS JSON: bbox_decoders[{i}] lacks {e}") from None
        from_json: Dict[str, Any] = {}
        if "nms_scores_th" in doc:
            from_json["score_threshold"] = _json_float(doc["nms_scores_th"], "nms_scores_th")
        if "nms_iou_th" in doc:
            from_json["iou_threshold"] = _json_float(doc["nms_iou_th"], "nms_iou_th")
        if "max_proposals_per_class" in doc:
            from_json["max_per_class"] = _json_int(doc["max_proposals_per_class"], "max_proposals_per_class")
        if "image_dims" in doc:
            dims = doc["image_dims"]
            if not isinstance(dims, (list, tuple)) or len(dims) != 2:
                raise ValueError(f"NMS JSON: image_dims must be [height, width], got {dims!r}")
            from_json["image_size"] = (_json_int(dims[0], "image_dims[0]"), _json_int(dims[1], "image_dims[1]"))
        from_json.update(settings)
        config = cls(outputs, heads, **from_json)
        if "classes" in doc and _json_int(doc["classes"], "classes") != config.num_classes:
            raise ValueError(f"NMS JSON says {doc['classes']} classes, class outputs have {config.num_classes} channels")
        if "regression_length" in doc and config.head_kind == "dfl":
            rl = _json_int(doc["regression_length"], "regression_length")
            # DFC JSONs count bins (16); Ultralytics-style configs say reg_max - 1 (15).
            if config.bins not in (rl, rl + 1):
                raise ValueError(f"NMS JSON regression_length {rl} does not fit box outputs with {config.bins} bins "
                                 f"({4 * config.bins} channels)")
        return config


    @classmethod
    def from_hef(cls, source: Any, network_group: Any = None, *, device_buffers: bool = False,
                 **settings: Any) -> "DecoderConfig":
        """From a .hef file read without HailoRT (hailo_decode.hef): outputs, quantization and,
        when the HEF has a YOLOv8 NMS op, its heads, thresholds and image size. device_buffers=True
        describes raw device buffers (device order, padded shape) instead of vstream buffers."""
        return lookup("config.from_hef")(source, network_group, device_buffers=device_buffers, **settings)

    @classmethod
    def from_hailo(cls, obj: Any, nms_json: Any = None, **kwargs: Any) -> "DecoderConfig":
        """From live HailoRT objects (a hailo_platform HEF, configured network group, InferModel or
        ConfiguredInferModel); see hailo_decode.hailort.config_from_hailo for the options."""
        return lookup("config.from_hailo")(obj, nms_json, **kwargs)


def end2end_choice(config: "DecoderConfig") -> Tuple[bool, str]:
    """The selection a head's shapes suggest, with the reason: end-to-end for box tensors of 4
    channels (YOLO26's one-to-one head: reg_max 1, the distances themselves; exported end-to-end
    by default), NMS for DFL box tensors (YOLOv8/YOLO11 export their one-to-many head; YOLOv10's
    one-to-one head has 16 bins too and cannot be told apart from them: pass end2end=True)."""
    channels = 4 * config.bins
    if config.bins == 1:
        return True, ("box tensors have 4 channels (distances, no DFL): a YOLO26-style one-to-one head, "
                      "selected end-to-end (top-k, no NMS); pass end2end=False for a one-to-many export")
    return False, (f"box tensors have {channels} channels ({config.bins} DFL bins): a YOLOv8/YOLO11-style head, "
                   f"selected by NMS; pass end2end=True for a YOLOv10 one-to-one head")


def _json_head(d: Mapping[str, Any], i: int, outputs: Sequence[OutputInfo]) -> Head:
    """One bbox decoder of the NMS JSON: YOLOv8 (reg/cls), YOLOv5 (encoded_layer, w, h) or YOLOX
    (reg/objectness/cls)."""
    stride = _json_int(d["stride"], f"bbox_decoders[{i}].stride")
    if "encoded_layer" in d:
        ws, hs = d["w"], d["h"]
        if not isinstance(ws, (list, tuple)) or not isinstance(hs, (list, tuple)) or len(ws) != len(hs) or not ws:
            raise ValueError(f"NMS JSON: bbox_decoders[{i}] anchor lists w {ws!r} and h {hs!r} must be non-empty and "
                             f"of one length")
        anchors = [(_json_int(a, f"bbox_decoders[{i}].w"), _json_int(b, f"bbox_decoders[{i}].h")) for a, b in zip(ws, hs)]
        return AnchorHead(_match_output(str(d["encoded_layer"]), outputs), anchors, stride)
    obj = d.get("objectness_layer", d.get("obj_layer"))
    if obj is not None:
        return YoloxHead(_match_output(str(d["reg_layer"]), outputs), _match_output(str(obj), outputs),
                         _match_output(str(d["cls_layer"]), outputs), stride)
    return Head(_match_output(str(d["reg_layer"]), outputs), _match_output(str(d["cls_layer"]), outputs), stride)


def _head_repr(h: Head) -> str:
    if isinstance(h, AnchorHead):
        return f"({h.box}, anchors {list(h.anchors)}, stride {h.stride})"
    if isinstance(h, YoloxHead):
        return f"(reg {h.box}, obj {h.obj}, cls {h.cls}, stride {h.stride})"
    return "(" + ", ".join(h.outputs()) + f", stride {h.stride})"


def _head_family(heads: Optional[Sequence[Head]]) -> str:
    """"dfl", "yolov5" or "yolox", from the kind of Head objects given (all of one kind)."""
    if heads is None:
        return "dfl"
    kinds = {"yolov5" if isinstance(h, AnchorHead) else "yolox" if isinstance(h, YoloxHead) else "dfl" for h in heads}
    if len(kinds) > 1:
        raise ValueError(f"heads mix head families {sorted(kinds)}; use Head (DFL), AnchorHead (YOLOv5/YOLOv7) or "
                         f"YoloxHead (YOLOX) for all of them")
    return kinds.pop() if kinds else "dfl"


def _anchor_family_layout(kind: str, heads: Tuple[Head, ...], by_name: Mapping[str, OutputInfo],
                          image_size: Optional[Tuple[int, int]]) -> Tuple[int, Tuple[int, int], Tuple[Head, ...]]:
    """(num_classes, image_size, heads with strides) of YOLOv5 or YOLOX heads, after checking
    every output belongs to exactly one head and the channel counts fit."""
    if not heads:
        raise ValueError("heads must not be empty")
    names = list(by_name)
    roles: List[Tuple[str, str]] = []
    for h in heads:
        roles += [("tensor", h.box)] if isinstance(h, AnchorHead) else \
            [("reg", h.box), ("obj", cast(YoloxHead, h).obj), ("cls", h.cls)]
    for role, n in roles:
        if n not in by_name:
            raise ValueError(f"head {role} output {n!r} is not among the outputs {names}")
    used = [n for _, n in roles]
    if len(set(used)) != len(used):
        raise ValueError(f"an output is used by more than one head: {used}")
    unused = [n for n in names if n not in used]
    if unused:
        raise ValueError(f"outputs {unused} belong to no head; remove them or add heads")
    classes = set()
    for h in heads:
        if isinstance(h, AnchorHead):
            o = by_name[h.box]
            per = o.channels // len(h.anchors)
            if o.channels % len(h.anchors) or per < 6:
                raise ValueError(f"output {o.name!r}: {o.channels} channels do not hold {len(h.anchors)} anchors x "
                                 f"(5 + classes)")
            classes.add(per - 5)
        else:
            yh = cast(YoloxHead, h)
            reg, obj, cls = by_name[yh.box], by_name[yh.obj], by_name[yh.cls]
            if reg.channels != 4:
                raise ValueError(f"output {reg.name!r}: YOLOX reg must have 4 channels, got {reg.channels}")
            if obj.channels != 1:
                raise ValueError(f"output {obj.name!r}: YOLOX objectness must have 1 channel, got {obj.channels}")
            for o in (obj, cls):
                if o.shape[:2] != reg.shape[:2]:
                    raise ValueError(f"output {o.name!r}: grid {o.shape[:2]} differs from reg {reg.name!r} {reg.shape[:2]}")
            classes.add(cls.channels)
    if len(classes) != 1:
        raise ValueError(f"all heads must share the class count; got {sorted(classes)}")
    plain = [Head(h.box, h.box, h.stride) for h in heads]  # strides resolve from the first tensor's grid
    size, resolved = _resolve_strides(plain, by_name, image_size)
    out: List[Head] = []
    for h, r in zip(heads, resolved):
        if isinstance(h, AnchorHead):
            out.append(AnchorHead(h.box, h.anchors, r.stride))
        else:
            out.append(YoloxHead(h.box, cast(YoloxHead, h).obj, h.cls, r.stride))
    return classes.pop(), size, tuple(out)


def _match_output(layer: str, outputs: Sequence[OutputInfo]) -> str:
    exact = [o.name for o in outputs if o.name == layer]
    if exact:
        return exact[0]
    suffix = [o.name for o in outputs if o.name.rsplit("/", 1)[-1] == layer]
    if len(suffix) == 1:
        return suffix[0]
    names = [o.name for o in outputs]
    if not suffix:
        raise ValueError(f"NMS JSON layer {layer!r} matches no output (by name or the part after '/'): {names}")
    raise ValueError(f"NMS JSON layer {layer!r} matches several outputs: {suffix}")


def _check_task_outputs(heads: Sequence[Head], by_name: Mapping[str, OutputInfo], task: Optional[str],
                        keypoint_dims: Optional[int]) -> Tuple[str, int, int]:
    """(task, num_keypoints, keypoint_dims) the heads describe; a ValueError naming the output for
    anything the core could not decode."""
    with_kpt = [h for h in heads if h.kpt is not None]
    with_angle = [h for h in heads if h.angle is not None]
    for role, having in (("kpt", with_kpt), ("angle", with_angle)):
        if having and len(having) != len(heads):
            lacking = [h.box for h in heads if h not in having]
            raise ValueError(f"every head needs a {role} output when one has it; heads with box outputs {lacking} "
                             f"have none")
    if with_kpt and with_angle:
        raise ValueError("a head has either a kpt (pose) or an angle (OBB) output, not both")
    with_mask = any(h.mask is not None for h in heads)
    found = "pose" if with_kpt else "obb" if with_angle else "segment" if with_mask else "detect"
    if task is not None and task != found:
        need = {"pose": "a kpt output", "obb": "an angle output", "segment": "a mask output (and proto=)",
                "detect": "no kpt, angle or mask output"}[task]
        raise ValueError(f"task={task!r} needs {need} on every head; the heads describe {found!r}")
    for h in heads:
        box = by_name[h.box]
        for role, name in (("kpt", h.kpt), ("angle", h.angle)):
            if name is None:
                continue
            o = by_name[name]
            if o.shape[:2] != box.shape[:2]:
                raise ValueError(f"{role} output {name!r}: grid {o.shape[:2]} differs from its head's box output "
                                 f"{h.box!r} grid {box.shape[:2]}")
    if found == "obb":
        for h in heads:
            o = by_name[h.angle]  # type: ignore[index]
            if o.channels != 1:
                raise ValueError(f"angle output {o.name!r}: expected 1 channel (the angle logit), got {o.channels}")
        return found, 0, 3
    if found != "pose":
        return found, 0, 3
    dims = 3 if keypoint_dims is None else int(keypoint_dims)
    channels = {by_name[h.kpt].channels for h in heads}  # type: ignore[index]
    if len(channels) != 1:
        raise ValueError(f"all kpt outputs must have the same channels, got "
                         f"{ {h.kpt: by_name[h.kpt].channels for h in heads} }")  # type: ignore[index]
    (c,) = channels
    if c % dims:
        hint = "; pass keypoint_dims=2 for (x, y) keypoints" if dims == 3 and c % 2 == 0 else ""
        raise ValueError(f"kpt output {heads[0].kpt!r}: {c} channels is not a multiple of {dims} "
                         f"({'x, y, visibility' if dims == 3 else 'x, y'} per keypoint){hint}")
    return found, c // dims, dims


def _pair_by_shape(outputs: Sequence[OutputInfo], bins: Optional[int], task: Optional[str] = None,
                   keypoint_dims: Optional[int] = None) -> List[Head]:
    """Pairs outputs sharing a grid into heads: (box, cls) for detection, (box, cls, kpt) for pose,
    (box, cls, angle) for OBB, by channel count (box 4 x bins, angle 1, kpt a multiple of
    keypoint_dims, and the class count the same on every grid); refuses to guess when ambiguous."""
    groups: Dict[Tuple[int, int], List[OutputInfo]] = {}
    for o in outputs:
        groups.setdefault(o.shape[:2], []).append(o)
    advice = ("pass heads=[Head(box=..., cls=..., stride=..., kpt=... or angle=...), ...] or use "
              "DecoderConfig.from_nms_json")
    sizes = {len(g) for g in groups.values()}
    if len(sizes) != 1 or not sizes <= {2, 3} or (task == "detect" and sizes != {2}) \
            or (task in ("pose", "obb") and sizes != {3}):
        per = "two (box, class)" if task == "detect" else "three (box, class, kpt or angle)" \
            if task in ("pose", "obb") else "two (box, class) or three (box, class, kpt or angle)"
        bad = {g: [o.name for o in os_] for g, os_ in groups.items()}
        raise ValueError(f"cannot pair outputs by shape: each grid needs {per} outputs, got {bad}; {advice}")
    ordered = sorted(groups.items(), key=lambda kv: -kv[0][0] * kv[0][1])
    if sizes == {2}:
        heads = []
        for grid, (a, b) in ordered:
            box = _pick_box(a, b, bins)
            if box is None:
                raise ValueError(f"cannot tell box from class output on grid {grid}: {a.name!r} has {a.channels} "
                                 f"channels, {b.name!r} has {b.channels}; {advice}" + ("" if bins else " (or bins=...)"))
            heads.append(Head(box.name, (b if box is a else a).name))
        return heads
    # Three per grid: every reading (task, class channels, extra channels) that fits every grid.
    dims = 3 if keypoint_dims is None else keypoint_dims
    # Each grid's candidate heads per reading; a reading fits when every grid has one for it.
    readings: Optional[Dict[Tuple[str, int, int], List[List[Head]]]] = None
    for _grid, trio in ordered:
        found: Dict[Tuple[str, int, int], List[Head]] = {}
        for box in trio:
            if not (box.channels == 4 * bins if bins is not None else box.channels % 4 == 0):
                continue
            # A 64-channel box (16 bins) is preferred over another multiple of 4, as for detection.
            if bins is None and box.channels != 64 and any(o.channels == 64 for o in trio):
                continue
            a, b = (o for o in trio if o is not box)
            for cls, extra in ((a, b), (b, a)):
                if task in (None, "obb") and extra.channels == 1:
                    found.setdefault(("obb", cls.channels, 1), []).append(Head(box.name, cls.name, angle=extra.name))
                if task in (None, "pose") and extra.channels % dims == 0:
                    found.setdefault(("pose", cls.channels, extra.channels), []).append(
                        Head(box.name, cls.name, kpt=extra.name))
        readings = {key: ([] if readings is None else readings[key]) + [heads]
                    for key, heads in found.items() if readings is None or key in readings}
    assert readings is not None
    if len(readings) == 1:
        per_grid = next(iter(readings.values()))
        if all(len(options) == 1 for options in per_grid):
            return [options[0] for options in per_grid]
    names = {g: [f"{o.name} ({o.channels} ch)" for o in os_] for g, os_ in groups.items()}
    if not readings:
        raise ValueError(f"cannot pair outputs by shape: no reading as box (4 x bins), class and kpt (a multiple of "
                         f"{dims}) or angle (1 channel) fits every grid: {names}; {advice}")
    options = "; ".join(f"{t} with {nc} class{'' if nc == 1 else 'es'}" + (f" and {k} kpt channels" if t == "pose" else "")
                        for (t, nc, k) in sorted(readings))
    if len(readings) == 1:
        options += " (with two outputs of one grid that could each be either)"
    raise ValueError(f"cannot pair outputs by shape, it is ambiguous: {options} all fit {names}; pass task='pose' or "
                     f"task='obb' (and keypoint_dims=2 for (x, y) keypoints), or {advice}")


def _pick_box(a: OutputInfo, b: OutputInfo, bins: Optional[int]) -> Optional[OutputInfo]:
    if a.channels == b.channels:
        return None
    if bins is not None:
        fits = [o for o in (a, b) if o.channels == 4 * bins]
        return fits[0] if len(fits) == 1 else None
    sixteen = [o for o in (a, b) if o.channels == 64]  # 16 bins, YOLOv8/YOLO11's reg_max
    if len(sixteen) == 1:
        return sixteen[0]
    by4 = [o for o in (a, b) if o.channels % 4 == 0]
    return by4[0] if len(by4) == 1 else None


def _resolve_strides(pairs: Sequence[Head], by_name: Mapping[str, OutputInfo],
                     image_size: Optional[Tuple[int, int]]) -> Tuple[Tuple[int, int], Tuple[Head, ...]]:
    grids = [by_name[h.box].shape[:2] for h in pairs]
    if image_size is None:
        known = [(g, h.stride) for g, h in zip(grids, pairs) if h.stride is not None]
        if known:
            (gh, gw), st = known[0]
            image_size = (gh * int(st), gw * int(st))
        else:
            gh, gw = max(grids, key=lambda g: g[0] * g[1])
            image_size = (gh * _DEFAULT_FINEST_STRIDE, gw * _DEFAULT_FINEST_STRIDE)
    try:
        ih, iw = (int(v) for v in image_size)
    except (TypeError, ValueError):
        raise ValueError(f"image_size must be (height, width), got {image_size!r}") from None
    if not (0 < ih <= MAX_IMAGE_SIDE and 0 < iw <= MAX_IMAGE_SIDE):
        raise ValueError(f"image_size must be positive and at most {MAX_IMAGE_SIDE} a side, got {image_size!r}")
    resolved = []
    for (gh, gw), h in zip(grids, pairs):
        if h.stride is not None:
            st = int(h.stride)
            if not 0 < st <= MAX_IMAGE_SIDE:
                raise ValueError(f"head ({h.box!r}, {h.cls!r}): stride must be positive and at most "
                                 f"{MAX_IMAGE_SIDE}, got {h.stride}")
        else:
            if ih % gh or iw % gw or ih // gh != iw // gw:
                raise ValueError(f"head ({h.box!r}, {h.cls!r}): grid {(gh, gw)} does not divide image_size {(ih, iw)} "
                                 f"into one stride; pass the stride")
            st = ih // gh
        resolved.append(_dc_replace(h, stride=st))
    return (ih, iw), tuple(resolved)


def _find_proto(outputs: Sequence[OutputInfo]) -> Optional[str]:
    """The prototype output of a -seg model, by shape: alone on the finest grid, twice as fine as
    the next (stride 4 against 8), while every other grid holds three outputs (box, class, mask
    coefficients). None when the outputs do not look like that (a detection model)."""
    groups: Dict[Tuple[int, int], List[OutputInfo]] = {}
    for o in outputs:
        groups.setdefault(o.shape[:2], []).append(o)
    if len(groups) < 2:
        return None
    ordered = sorted(groups, key=lambda g: -g[0] * g[1])
    finest, next_ = ordered[0], ordered[1]
    if len(groups[finest]) != 1 or finest != (2 * next_[0], 2 * next_[1]):
        return None
    if not all(len(groups[g]) == 3 for g in ordered[1:]):
        return None
    return groups[finest][0].name


def _pair_seg_by_shape(outputs: Sequence[OutputInfo], proto: OutputInfo, bins: Optional[int]) -> List[Head]:
    """(box, cls, mask) heads of a -seg model by shape: per grid the output with the prototype's
    channel count holds the coefficients, the other two pair as for detection."""
    groups: Dict[Tuple[int, int], List[OutputInfo]] = {}
    for o in outputs:
        groups.setdefault(o.shape[:2], []).append(o)
    advice = "pass heads=[Head(box=..., cls=..., stride=..., mask=...), ...]"
    bad = {g: [o.name for o in os_] for g, os_ in groups.items() if len(os_) != 3}
    if bad:
        raise ValueError(f"cannot pair segmentation outputs by shape: each grid needs a box, a class and a mask "
                         f"coefficient output, got {bad}; {advice}")
    heads = []
    for grid, trio in sorted(groups.items(), key=lambda kv: -kv[0][0] * kv[0][1]):
        masks = [o for o in trio if o.channels == proto.channels]
        if len(masks) != 1:
            raise ValueError(f"cannot tell the mask coefficient output on grid {grid}: "
                             f"{[(o.name, o.channels) for o in trio]} against prototype {proto.name!r} with "
                             f"{proto.channels} channels; {advice}")
        a, b = [o for o in trio if o is not masks[0]]
        box = _pick_box(a, b, bins)
        if box is None:
            raise ValueError(f"cannot tell box from class output on grid {grid}: {a.name!r} has {a.channels} channels, "
                             f"{b.name!r} has {b.channels}; {advice}")
        heads.append(Head(box.name, (b if box is a else a).name, None, masks[0].name))
    return heads


def _check_seg(proto: OutputInfo, masks: Sequence[OutputInfo], heads: Sequence[Head],
               by_name: Mapping[str, OutputInfo], image_size: Tuple[int, int], proto_stride: Optional[int]) -> None:
    for h in heads:
        m, b = by_name[h.mask], by_name[h.box]  # type: ignore[index]
        if m.channels != proto.channels:
            raise ValueError(f"output {m.name!r}: {m.channels} mask coefficients, but the prototype output "
                             f"{proto.name!r} has {proto.channels} channels (they must be equal)")
        if m.shape[:2] != b.shape[:2]:
            raise ValueError(f"output {m.name!r}: mask coefficient grid {m.shape[:2]} differs from its head's box "
                             f"grid {b.shape[:2]} ({b.name!r})")
    if proto_stride is not None:
        st = int(proto_stride)
        want = (image_size[0] // st, image_size[1] // st)
        if image_size[0] % st or image_size[1] % st or proto.shape[:2] != want:
            raise ValueError(f"output {proto.name!r}: prototype grid {proto.shape[:2]} is not image_size / {st} = "
                             f"{want} (image_size {image_size}); pass proto_stride=None to allow it")
