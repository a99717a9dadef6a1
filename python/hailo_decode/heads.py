"""How outputs form heads: Head (YOLOv8/YOLO11 DFL heads and their task outputs), AnchorHead
(YOLOv5/YOLOv7) and YoloxHead (YOLOX)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional, Sequence, Tuple

from . import _core


__all__ = ["Head", "AnchorHead", "YoloxHead", "SsdHead", "TASKS"]

# No network input is this large; the core holds sizes and strides as 32-bit integers.
MAX_IMAGE_SIDE = 1 << 20

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


# The tasks a config can name (DecoderConfig(task=...)): a view of the core's choices
# (cpp/src/setup/options.cpp).
TASKS = tuple(_core.choices("task"))


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


@dataclass(frozen=True, init=False)
class SsdHead(Head):
    """An SSD head (HailoRT's ssd op; Model Zoo ssd_mobilenet_v1/v2): a regression tensor of A x 4
    channels (ty, tx, th, tw per anchor in `reg_order`) and a class tensor of A x classes channels
    (with `background`, the index of the background class among them, 0 or the last, or None), and
    its A anchors as (w, h) pairs normalized by the input size (floats). The box coding is
    HailoRT's: x_centre = tx / centers_scale * w_a + (col + 0.5) / W, w = exp(tw / dims_scale) * w_a.
    Every head of a model shares centers_scale, dims_scale, reg_order and background. `box` names
    reg. SSD grids do not divide the input (19 x 19 at 300): give image_size.

        SsdHead("ssd/conv13", "ssd/conv14", anchors=((0.1, 0.1), (0.28, 0.14), (0.14, 0.28)), background=0)
    """

    anchors: Tuple[Tuple[float, float], ...] = ()
    centers_scale: float = 10.0
    dims_scale: float = 5.0
    reg_order: str = "yxhw"
    background: Optional[int] = None

    def __init__(self, reg: str, cls: str, anchors: Iterable[Sequence[float]], *, centers_scale: float = 10.0,
                 dims_scale: float = 5.0, reg_order: str = "yxhw", background: Optional[int] = None) -> None:
        pairs = []
        for a in anchors:
            try:
                aw, ah = a
                pairs.append((float(aw), float(ah)))
            except (TypeError, ValueError):
                raise ValueError(f"SSD head {reg!r}: anchors must be (w, h) pairs of numbers, got {a!r}") from None
        if sorted(str(reg_order)) != sorted("yxhw") or len(str(reg_order)) != 4:
            raise ValueError(f"SSD head {reg!r}: reg_order must order the letters y, x, h, w (e.g. 'yxhw'), got {reg_order!r}")
        object.__setattr__(self, "box", reg)
        object.__setattr__(self, "cls", cls)
        object.__setattr__(self, "stride", None)
        object.__setattr__(self, "anchors", tuple(pairs))
        object.__setattr__(self, "centers_scale", float(centers_scale))
        object.__setattr__(self, "dims_scale", float(dims_scale))
        object.__setattr__(self, "reg_order", str(reg_order))
        object.__setattr__(self, "background", None if background is None else int(background))

    @property
    def reg(self) -> str:
        return self.box

    def coding(self) -> "_core.SsdCoding":
        """The box coding as the core holds it."""
        c = _core.SsdCoding()
        c.centers_scale, c.dims_scale = self.centers_scale, self.dims_scale
        c.ty_index, c.tx_index, c.th_index, c.tw_index = (self.reg_order.index(k) for k in "yxhw")
        c.background_class = -1 if self.background is None else self.background
        return c
