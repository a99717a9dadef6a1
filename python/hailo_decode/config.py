"""What the decoder needs to know: each output's layout and quantization, how outputs pair into
heads, and the decoding settings (thresholds, NMS rules, box format), with two presets."""

from __future__ import annotations

import json
import math
import os
from typing import Any, Dict, Iterable, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from .heads import TASKS, ULTRALYTICS_MAX_WH, AnchorHead, Head, YoloxHead
from .outputs import OutputInfo
from .pairing import _head_repr, _match_output, pair_outputs

__all__ = ["OutputInfo", "Head", "AnchorHead", "YoloxHead", "DecoderConfig", "SEMANTICS", "BOX_FORMATS", "end2end_choice",
           "KEYPOINT_DECODES", "ANGLE_DECODES", "task_decode_choice"]

BOX_FORMATS = ("yxyx_normalized", "xyxy_normalized", "yxyx_pixels", "xyxy_pixels")
# How keypoint and angle channels become pixels and radians (Ultralytics 8.4, nn/modules/head.py):
#   keypoint_decode "yolov8": Pose (YOLOv8/YOLO11), x = (raw * 2 + col) * stride;
#                   "yolo26": Pose26 (YOLO26), x = (raw + col + 0.5) * stride (rows for y);
#   angle_decode "sigmoid": OBB (YOLOv8/YOLO11), angle = (sigmoid(raw) - 0.25) * pi;
#                "raw":     OBB26 (YOLO26), angle = raw.
KEYPOINT_DECODES = ("yolov8", "yolo26")
ANGLE_DECODES = ("sigmoid", "raw")


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
    keypoint_decode ("yolov8" | "yolo26") and angle_decode ("sigmoid" | "raw"): how pose heads'
    keypoints and OBB heads' angles decode (KEYPOINT_DECODES, ANGLE_DECODES); None: what the box
    tensors imply (`task_decode_choice`): "yolov8" and "sigmoid", Ultralytics' Pose and OBB heads
    (YOLOv8/YOLO11), for DFL box tensors; "yolo26" and "raw", YOLO26's Pose26/OBB26, for 4-channel
    ones (only YOLO26 exports those; `from_hef` also picks end2end for them). Every task works
    with end2end too: the rows are chosen first, then their keypoints, angle (rotated box) or mask
    coefficients are read.
    """

    def __init__(self, outputs: Iterable[OutputInfo], heads: Optional[Iterable[Head]] = None, *,
                 image_size: Optional[Tuple[int, int]] = None, semantics: str = "hailort",
                 classes: Optional[Iterable[int]] = None, bins: Optional[int] = None, proto: Optional[str] = None,
                 proto_stride: Optional[int] = 4, drop_empty_masks: Optional[bool] = None,
                 task: Optional[str] = None, keypoint_dims: Optional[int] = None,
                 keypoint_decode: Optional[str] = None, angle_decode: Optional[str] = None, **settings: Any) -> None:
        self.outputs: Tuple[OutputInfo, ...] = tuple(outputs)
        if not self.outputs or not all(isinstance(o, OutputInfo) for o in self.outputs):
            raise TypeError("outputs must be a non-empty sequence of OutputInfo")
        unknown = set(settings) - set(_SETTINGS)
        if unknown:
            raise TypeError(f"unknown setting(s) {sorted(unknown)}; settings are {list(_SETTINGS)}")
        self.semantics = _choice(semantics, tuple(SEMANTICS), "semantics")
        resolved = dict(SEMANTICS[semantics])
        resolved.update(settings)
        self._explicit = dict(settings)
        self._drop_explicit = drop_empty_masks
        if keypoint_decode is not None:
            _choice(keypoint_decode, KEYPOINT_DECODES, "keypoint_decode")
        if angle_decode is not None:
            _choice(angle_decode, ANGLE_DECODES, "angle_decode")
        self._decodes_explicit = dict(keypoint_decode=keypoint_decode, angle_decode=angle_decode)

        if task is not None:
            _choice(task, TASKS, "task")
        if keypoint_dims is not None and (isinstance(keypoint_dims, bool) or keypoint_dims not in (2, 3)):
            raise ValueError(f"keypoint_dims must be 2 (x, y) or 3 (x, y, visibility), got {keypoint_dims!r}")
        # Pairing, the strides and every check of heads against outputs: the C++ core (pairing.py).
        layout = pair_outputs(self.outputs, heads, task=task, bins=bins, keypoint_dims=keypoint_dims, proto=proto,
                              proto_stride=proto_stride, image_size=image_size)
        self.head_kind, self.heads, self.image_size = layout.head_kind, layout.heads, layout.image_size
        self.task, self.num_keypoints, self.keypoint_dims = layout.task, layout.num_keypoints, layout.keypoint_dims
        self.num_classes, self.bins, self.proto = layout.num_classes, layout.bins, layout.proto
        self.proto_stride = proto_stride
        if self.head_kind != "dfl":
            self.drop_empty_masks = False  # YOLOv5/YOLOX heads decode boxes only
        else:
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
        # Unless given, the forms the box tensors imply (`task_decode_choice`): a hand-built YOLO26
        # pose/OBB config must not decode its keypoints or angles with YOLOv8's formulas.
        implied_kpt, implied_angle, _ = _decodes_for_bins(self.bins)
        self.keypoint_decode: str = keypoint_decode or implied_kpt
        self.angle_decode: str = angle_decode or implied_angle
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
        kw.update({k: v for k, v in self._decodes_explicit.items() if v is not None})
        if "semantics" in changes and changes["semantics"] != self.semantics:
            # A new preset fills everything the caller did not set explicitly.
            kw = {k: v for k, v in kw.items() if k not in _SETTINGS or k in self._explicit}
        kw.update(changes)
        return DecoderConfig(**kw)

    def __repr__(self) -> str:
        heads = ", ".join(_head_repr(h) for h in self.heads)
        task = "" if self.task == "detect" else f"task={self.task!r}, "
        if self.task == "pose":
            task += f"keypoints={self.num_keypoints}x{self.keypoint_dims}, keypoint_decode={self.keypoint_decode!r}, "
        if self.task == "obb":
            task += f"angle_decode={self.angle_decode!r}, "
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
        # Upward import (hef sits above config): the HEF reader builds configs, so it needs config.
        from .hef import config_from_hef
        return config_from_hef(source, network_group, device_buffers=device_buffers, **settings)

    @classmethod
    def from_hailo(cls, obj: Any, nms_json: Any = None, **kwargs: Any) -> "DecoderConfig":
        """From live HailoRT objects (a hailo_platform HEF, configured network group, InferModel or
        ConfiguredInferModel); see hailo_decode.hailort.config_from_hailo for the options."""
        # Upward import (hailort sits above config): the HailoRT adapters build configs from live objects.
        from .hailort import config_from_hailo
        return config_from_hailo(obj, nms_json, **kwargs)


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


def _decodes_for_bins(bins: int) -> Tuple[str, str, str]:
    if bins == 1:
        return "yolo26", "raw", ("box tensors have 4 channels (no DFL): YOLO26 heads (Pose26/OBB26), keypoints "
                                 "(raw + col + 0.5) * stride, raw angles")
    return "yolov8", "sigmoid", (f"box tensors have {4 * bins} channels ({bins} DFL bins): YOLOv8/YOLO11 heads "
                                 f"(Pose/OBB), keypoints (raw * 2 + col) * stride, angles (sigmoid(raw) - 0.25) * pi")


def task_decode_choice(config: "DecoderConfig") -> Tuple[str, str, str]:
    """(keypoint_decode, angle_decode, reason) the box tensors suggest: YOLO26's Pose26/OBB26 forms
    for 4-channel box tensors (reg_max 1, no DFL: only YOLO26 exports them), YOLOv8/YOLO11's Pose/OBB
    forms for DFL box tensors. A YOLO26 model trained with reg_max 16 would need
    keypoint_decode="yolo26" / angle_decode="raw" passed."""
    return _decodes_for_bins(config.bins)


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
