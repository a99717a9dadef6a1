"""OutputInfo: one output tensor as the host receives it (layout, padding, quantization)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional, Set, Tuple, Union

import numpy as np

__all__ = ["OutputInfo", "check_array_dtype"]

_DTYPES = ("uint8", "uint16", "float32")
_HOST_ORDERS = ("NHWC", "FCR", "F8CR", "NCHW")
_DEVICE_ORDERS = ("NHWC", "FCR", "F8CR", "NHCW")


class _FromQuantInfo(float):
    """The default of OutputInfo's zp and scale: not given. Required for uint8/uint16 outputs
    (their values mean nothing without it); float32 outputs take 0.0 and 1.0."""

    def __repr__(self) -> str:
        return "<HailoRT's quant info>"


_NOT_GIVEN = _FromQuantInfo("nan")
_QUANTIZED = ("uint8", "uint16")


def _required_quant(name: str, dtype: str, zp: Any, scale: Any) -> None:
    """Quantized outputs need their zp and scale: a uint8 value read with scale 1 scores 39 where
    the model said 0.4, and nothing else would tell."""
    missing = [what for what, v in (("zp", zp), ("scale", scale)) if v is _NOT_GIVEN]
    if dtype in _QUANTIZED and missing:
        raise ValueError(f"output {name!r}: a {dtype} output needs its quantization, but {' and '.join(missing)} "
                         f"{'is' if len(missing) == 1 else 'are'} not given: pass zp= and scale= from HailoRT's "
                         f"quant info (vstream_info.quant_info.qp_zp and qp_scale, or `hailo-decode inspect model.hef`), "
                         f"or scale=1.0, zp=0.0 explicitly to read the raw integers")


def check_array_dtype(o: "OutputInfo", a: np.ndarray) -> None:
    """An array handed in for output `o` must have its declared dtype (TypeError otherwise):
    decoding and diagnosing read the same values the same way."""
    if a.dtype != np.dtype(o.dtype):
        raise TypeError(f"output {o.name!r}: expected dtype {o.dtype}, got {a.dtype}")


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
    zp, scale: quantization, one value per tensor or one per channel (per-feature HEFs), as
    HailoRT's quant info gives them (qp_zp, qp_scale; `hailo-decode inspect model.hef` prints
    them); a value is (q - zp) * scale. Required for uint8 and uint16 outputs: without them the
    raw integers would be read as the values (a score of 39 instead of 0.4). To read raw
    integers as they are, pass the identity explicitly: scale=1.0, zp=0.0. float32 outputs are
    already dequantized and need neither.
    """

    name: str
    shape: Tuple[int, int, int]
    dtype: str = "uint8"
    order: str = "NHWC"
    zp: Union[float, Tuple[float, ...]] = _NOT_GIVEN
    scale: Union[float, Tuple[float, ...]] = _NOT_GIVEN
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
        _required_quant(name, dtype, self.zp, self.scale)
        zp = 0.0 if self.zp is _NOT_GIVEN else _as_quant(self.zp, "zp", name)
        scale = 1.0 if self.scale is _NOT_GIVEN else _as_quant(self.scale, "scale", name)
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
