"""How outputs form heads: Head (YOLOv8/YOLO11 DFL heads and their task outputs), AnchorHead
(YOLOv5/YOLOv7) and YoloxHead (YOLOX)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional, Sequence, Tuple

from . import _core


__all__ = ["Head", "AnchorHead", "YoloxHead", "TASKS"]

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
