"""What the decoder needs to know: each output's layout and quantization, how outputs pair into
heads, and the decoding settings (thresholds, NMS rules, box format), with two presets.

The presets, the check of every setting and the reading of the DFC NMS JSON are the C++ core's
(hailo_decode/setup.hpp, through `_core`), which the TAPPAS plugin reads too: the same rules, the
same messages."""

from __future__ import annotations

import os
from collections.abc import Iterable as _Iterable
from typing import Any, Dict, Iterable, Mapping, Optional, Tuple, Union, cast

import numpy as np

from . import _core
from .heads import AnchorHead, Head, SsdHead, YoloxHead
from .outputs import OutputInfo
from .pairing import _head, _head_repr, pair_outputs

__all__ = ["OutputInfo", "Head", "AnchorHead", "YoloxHead", "SsdHead", "DecoderConfig", "SEMANTICS", "BOX_FORMATS",
           "end2end_choice", "KEYPOINT_DECODES", "ANGLE_DECODES", "task_decode_choice"]

# Views of the core's choices and presets (cpp/src/setup/options.cpp).
BOX_FORMATS = tuple(_core.choices("box_format"))
# How keypoints and angles decode: "yolov8" (Pose, YOLOv8/YOLO11) or "yolo26" (Pose26); "sigmoid"
# (OBB) or "raw" (OBB26). The core's choices table gives each formula.
KEYPOINT_DECODES = tuple(_core.choices("keypoint_decode"))
ANGLE_DECODES = tuple(_core.choices("angle_decode"))

# The settings every preset fills ("hailort": HailoRT's own YOLOv8 post-process, DFC
# nms_postprocess engine=cpu; "ultralytics": Ultralytics' predict on the same head); any of them
# can be given explicitly instead.
SEMANTICS: Dict[str, Dict[str, Any]] = {name: _core.preset(name) for name in _core.preset_names()}
_SETTINGS = tuple(_core.preset_setting_names())
_NOTHING_GIVEN = _core.read_options({})  # the hailort preset, model options not given


class DecoderConfig:
    """Everything a Decoder needs. Build it by hand, from the DFC NMS JSON (`from_nms_json`), or
    let it pair heads from the output shapes.

    heads: Head / AnchorHead / YoloxHead objects, or the same as dicts, as the TAPPAS plugin's
    config file names them under "heads" (read by the same C++ code): {"box", "cls", "stride",
    and at most one of "angle", "kpt", "mask"}, {"output", "anchors": [[w, h], ...], "stride"}, or
    {"reg", "obj", "cls", "stride"}; "stride" may be left out. None: paired by shape.

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
    mask_objectness (YOLOv5/YOLOv7-seg anchor heads; a setting given by keyword): the mask
    coefficients multiplied by the anchor's objectness before the masks, as HailoRT's yolov5_seg op
    and YOLOv5's own NMS do (True, the default); False: the raw coefficients, as TAPPAS'
    libyolov5seg_post.so does.
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
    hailort_version: the HailoRT whose ops tie_break="hailort" reproduces, "X.Y" or "X.Y.Z" of
    HailoRT 4 or 5 (None: "4.23"). From 5.0.1 the YOLOv8 and YOLOv5 ops list their candidates in
    another order (ties come out differently) and pre-filter on quantized thresholds
    (docs/presets.md); with tie_break="stable" it changes nothing.
    """

    def __init__(self, outputs: Iterable[OutputInfo], heads: Optional[Iterable[Union[Head, Mapping[str, Any]]]] = None, *,
                 image_size: Optional[Tuple[int, int]] = None, semantics: str = "hailort",
                 classes: Optional[Iterable[int]] = None, bins: Optional[int] = None, proto: Optional[str] = None,
                 proto_stride: Optional[int] = 4, drop_empty_masks: Optional[bool] = None,
                 task: Optional[str] = None, keypoint_dims: Optional[int] = None,
                 keypoint_decode: Optional[str] = None, angle_decode: Optional[str] = None,
                 hailort_version: Optional[str] = None, **settings: Any) -> None:
        self.outputs: Tuple[OutputInfo, ...] = tuple(outputs)
        if not self.outputs or not all(isinstance(o, OutputInfo) for o in self.outputs):
            raise TypeError("outputs must be a non-empty sequence of OutputInfo")
        # Every setting and model option is checked by the core (unknown keys, kinds, ranges);
        # None is "not given" (proto_stride None: not checked).
        if isinstance(classes, _Iterable) and not isinstance(classes, (str, bytes, Mapping, list, tuple, np.ndarray)):
            classes = list(classes)  # a range, set or generator, read once
        opts = _core.read_options(dict(
            settings, semantics=semantics, image_size=image_size, classes=classes, bins=bins, proto=proto,
            proto_stride=proto_stride, drop_empty_masks=drop_empty_masks, task=task, keypoint_dims=keypoint_dims,
            keypoint_decode=keypoint_decode, angle_decode=angle_decode, hailort_version=hailort_version))
        self._options = opts
        self.semantics: str = opts.semantics
        self._explicit = dict(settings)
        self._drop_explicit = drop_empty_masks
        self._decodes_explicit = dict(keypoint_decode=keypoint_decode, angle_decode=angle_decode)

        # Pairing, the strides and every check of heads against outputs: the C++ core (pairing.py),
        # with the model options read_options checked.
        layout = pair_outputs(self.outputs, heads, opts)
        self.head_kind, self.heads, self.image_size = layout.head_kind, layout.heads, layout.image_size
        self.task, self.num_keypoints, self.keypoint_dims = layout.task, layout.num_keypoints, layout.keypoint_dims
        self.num_classes, self.bins, self.proto = layout.num_classes, layout.bins, layout.proto
        self.proto_stride: Optional[int] = opts.proto_stride or None  # None: not checked
        if self.head_kind != "dfl":
            self.drop_empty_masks = False  # YOLOv5/YOLOX heads decode boxes only
        else:
            self.drop_empty_masks = _core.drop_empty_masks(opts)

        self.class_activation: str = opts.class_activation
        self.score_test: str = opts.score_test
        self.iou_test: str = opts.iou_test
        self.tie_break: str = opts.tie_break
        self.hailort_version: str = opts.hailort_version
        self.rotated_class_offset: float = opts.rotated_class_offset
        self.box_format: str = opts.box_format
        self.end2end: bool = opts.end2end
        self.multi_label: bool = opts.multi_label
        self.agnostic: bool = opts.agnostic
        self.max_per_class, self.max_total, self.max_candidates = (
            None if cap < 0 else cap for cap in (opts.max_per_class, opts.max_total, opts.max_candidates))
        self.iou_threshold: float = opts.iou_threshold
        self.score_threshold: Union[float, Tuple[float, ...]] = (
            tuple(opts.score_threshold) if opts.score_threshold_per_class else opts.score_threshold[0])
        self.classes: Optional[Tuple[int, ...]] = tuple(opts.classes) if opts.has_classes else None
        # Unless given, the forms the box tensors imply (`task_decode_choice`): a hand-built YOLO26
        # pose/OBB config must not decode its keypoints or angles with YOLOv8's formulas.
        self.keypoint_decode: str = _core.keypoint_decode(opts, self.bins)
        self.angle_decode: str = _core.angle_decode(opts, self.bins)
        self._layout = layout.core  # make_config's input, paired once
        _core.make_settings(self._layout, opts)  # what needs the class count: per-class thresholds, classes, end2end

    # -- derived views -------------------------------------------------------------------------
    def thresholds_per_class(self) -> Tuple[float, ...]:
        """The score threshold of every class; +inf for classes outside the allow-list."""
        return tuple(_core.thresholds_per_class(self._options, self.num_classes))

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
        kw["hailort_version"] = self.hailort_version
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
            doc: Any = dict(source)
        else:
            # The JSON text itself (pasted) or a file: parsed by the core, as the TAPPAS plugin parses it.
            pasted = isinstance(source, str) and source.lstrip()[:1] in ("{", "[")
            if pasted:
                text, where = cast(str, source), "NMS JSON"
            else:
                with open(source, "r", encoding="utf-8") as f:
                    text, where = f.read(), os.fspath(source)
            try:
                doc = _core.parse_json(text)
            except ValueError as e:
                raise ValueError(f"{where}: {e}") from None
        outputs = tuple(outputs)
        shapes = [_core.OutputShape(o.name, *o.shape) for o in outputs if isinstance(o, OutputInfo)]
        nms = _core.read_nms_json(doc, shapes)
        return cls(outputs, [_head(h) for h in nms.heads], **dict(nms.settings, **settings))

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
    kpt, angle = _core.keypoint_decode(_NOTHING_GIVEN, bins), _core.angle_decode(_NOTHING_GIVEN, bins)
    if kpt == "yolo26":
        return kpt, angle, ("box tensors have 4 channels (no DFL): YOLO26 heads (Pose26/OBB26), keypoints "
                            "(raw + col + 0.5) * stride, raw angles")
    return kpt, angle, (f"box tensors have {4 * bins} channels ({bins} DFL bins): YOLOv8/YOLO11 heads "
                        f"(Pose/OBB), keypoints (raw * 2 + col) * stride, angles (sigmoid(raw) - 0.25) * pi")


def task_decode_choice(config: "DecoderConfig") -> Tuple[str, str, str]:
    """(keypoint_decode, angle_decode, reason) the box tensors suggest: YOLO26's Pose26/OBB26 forms
    for 4-channel box tensors (reg_max 1, no DFL: only YOLO26 exports them), YOLOv8/YOLO11's Pose/OBB
    forms for DFL box tensors. A YOLO26 model trained with reg_max 16 would need
    keypoint_decode="yolo26" / angle_decode="raw" passed."""
    return _decodes_for_bins(config.bins)
