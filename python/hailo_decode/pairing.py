"""Heads from outputs. The C++ core pairs them (setup::pair_outputs in cpp/src/setup/pairing*.cpp):
by shape and task, the strides (stride x grid = image size on every head), and the checks that
every output belongs to exactly one head of the right shape. This module hands it Head objects
and turns its heads back into them."""

from __future__ import annotations

from typing import Any, Dict, Iterable, List, Mapping, NamedTuple, Optional, Sequence, Tuple, Union

from . import _core
from .heads import AnchorHead, Head, SsdHead, YoloxHead
from .outputs import OutputInfo

_KIND_NAMES = {_core.HeadKind.DFL: "dfl", _core.HeadKind.YOLOV5: "yolov5", _core.HeadKind.YOLOX: "yolox",
               _core.HeadKind.SSD: "ssd"}


class Layout(NamedTuple):
    """What pairing found: the head family ("dfl", "yolov5", "yolox"), the heads with strides, the
    image size and task, and the counts the decoder needs."""
    head_kind: str
    heads: Tuple[Head, ...]
    image_size: Tuple[int, int]
    task: str
    num_classes: int
    bins: int  # 0 for YOLOv5/YOLOX heads
    num_keypoints: int
    keypoint_dims: int
    proto: Optional[str]
    core: _core.Layout  # the same, as the core holds it (make_config's input)


def pair_outputs(outputs: Sequence[OutputInfo], heads: Optional[Iterable[Union[Head, Mapping[str, Any]]]],
                 options: _core.Options) -> Layout:
    """Heads paired by shape (heads None) or the heads given (Head objects, or dicts as a config
    file's "heads" key holds them), checked, with their strides; a
    ValueError naming what is wrong. options: what _core.read_options read (the model options
    task, bins, keypoint_dims, proto, proto_stride and image_size, checked there)."""
    if heads is not None:
        heads = _from_dicts(list(heads), outputs)
    named = None if heads is None else [_named(h) for h in heads]
    lay = _core.pair_outputs([(o.name, *o.shape) for o in outputs], options, named)
    return Layout(_KIND_NAMES[lay.kind], tuple(_head(h) for h in lay.heads), (lay.image_height, lay.image_width), lay.task,
                  lay.num_classes, lay.bins, lay.num_keypoints, lay.keypoint_dims, lay.proto or None, lay)


def _from_dicts(heads: List[Any], outputs: Sequence[OutputInfo]) -> List[Any]:
    """Head dicts (a TAPPAS config's "heads": {"box", "cls", "stride", "angle" | "kpt" | "mask"},
    {"output", "anchors", "stride"}, {"reg", "obj", "cls", "stride"}) read by the core, which reads
    the plugin's key with the same checks; Head objects as they are."""
    dicts = [isinstance(h, Mapping) for h in heads]
    if not any(dicts):
        return heads
    if not all(dicts):
        raise TypeError("heads must be all Head objects or all dicts (a config file's \"heads\"), not both")
    shapes = [_core.OutputShape(o.name, *o.shape) for o in outputs]
    return [_head(h) for h in _core.read_heads([dict(h) for h in heads], "", shapes)]


def _named(h: Any) -> Dict[str, Any]:
    if isinstance(h, AnchorHead):
        return dict(kind="yolov5", box=h.box, stride=h.stride, anchors=list(h.anchors))
    if isinstance(h, SsdHead):
        return dict(kind="ssd", box=h.box, cls=h.cls, box_anchors=list(h.anchors), ssd=h.coding())
    if isinstance(h, YoloxHead):
        return dict(kind="yolox", box=h.box, obj=h.obj, cls=h.cls, stride=h.stride)
    if isinstance(h, Head):
        return dict(kind="dfl", box=h.box, cls=h.cls, mask=h.mask, kpt=h.kpt, angle=h.angle, stride=h.stride)
    raise TypeError(f"heads must be Head objects, got {h!r}")


def _head(h: Any) -> Head:
    stride = h.stride or None  # the core's 0: not given
    if h.kind == _core.HeadKind.YOLOV5:
        return AnchorHead(h.box, h.anchors, stride)
    if h.kind == _core.HeadKind.YOLOX:
        return YoloxHead(h.box, h.obj, h.cls, stride)
    if h.kind == _core.HeadKind.SSD:
        c = h.ssd
        order = "".join(k for _, k in sorted(zip((c.ty_index, c.tx_index, c.th_index, c.tw_index), "yxhw")))
        return SsdHead(h.box, h.cls, h.box_anchors, centers_scale=c.centers_scale, dims_scale=c.dims_scale,
                       reg_order=order, background=None if c.background_class < 0 else c.background_class)
    return Head(h.box, h.cls, stride, h.mask or None, h.kpt or None, h.angle or None)


def _head_repr(h: Head) -> str:
    if isinstance(h, AnchorHead):
        return f"({h.box}, anchors {list(h.anchors)}, stride {h.stride})"
    if isinstance(h, SsdHead):
        return f"(reg {h.box}, cls {h.cls}, {len(h.anchors)} anchors)"
    if isinstance(h, YoloxHead):
        return f"(reg {h.box}, obj {h.obj}, cls {h.cls}, stride {h.stride})"
    return "(" + ", ".join(h.outputs()) + f", stride {h.stride})"

