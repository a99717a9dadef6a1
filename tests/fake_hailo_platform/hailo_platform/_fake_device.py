"""Double only: the test-data side of the hailo_platform double (no such module in the real package).

A test describes a model and the frames its "device" produces:

    from hailo_platform import _fake_device as fd
    model = fd.FakeModel("yolov8n", [
        fd.FakeOutput("yolov8n/conv41", (80, 80, 64), "uint8", "FCR", zp=84, scale=0.089),
        fd.FakeOutput("yolov8n/conv42", (80, 80, 80), "uint8", "NHWC", zp=0, scale=1 / 255),
        ...], frames=[{"yolov8n/conv41": q41, "yolov8n/conv42": q42, ...}, ...])
    path = fd.register(model)          # what HEF(path) / VDevice.create_infer_model(path) open

Frames are what the chip hands to HailoRT for each inferred input frame, as integer host arrays
(H, W, C) in the output's own dtype, or for an NMS model the flat float32 HAILO_NMS_BY_CLASS buffer
of its NMS output. The pipelines then apply what HailoRT applies: dequantization for FLOAT32
outputs (per tensor, or per channel with the stream's quant infos), the NCHW reorder, pyhailort's
NMS list / tf conversions. The frames are consumed in order, one per inferred frame, cycling when
exhausted.

Per-feature quantization (zp/scale given per channel) is what a HEF with the
OUTPUT_SCALE_PER_FEATURE extension holds: the stream carries the per-channel list (what HailoRT
dequantizes FLOAT32 outputs with), while every vstream info, and InferModel's quant_infos, hold the
single quant_info, which is then INVALID_QUANT_INFO (all zeros).

With `nms=FakeNms(...)` the model has HailoRT's host NMS op: the raw outputs are hidden from the
output vstreams (only the stream infos show them) and the NMS output only comes as FLOAT32.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from .pyhailort import _pyhailort as _c

# HailoRT's default user orders (hailort_defaults.cpp, DEFAULT_FORMAT_ORDER_MAP): device NHCW -> host NHWC.
_HOST_TO_DEVICE_ORDER = {"NHWC": "NHCW", "FCR": "FCR", "F8CR": "F8CR", "NC": "NC", "NHW": "NHW"}
_TYPES = {"uint8": _c.FormatType.UINT8, "uint16": _c.FormatType.UINT16}


@dataclass
class FakeOutput:
    """Double only: one raw output layer, what HEF.get_output_vstream_infos() reports for it.

    order: the host order HailoRT reports (NHWC, FCR, F8CR); the device order of its stream
    follows HailoRT's default map (NHWC host <- NHCW device) unless device_order is given.
    zp/scale: one value, or one per channel (a per-feature HEF: the vstream's quant_info is then
    all zeros, and only the stream, i.e. the HEF, has the list).
    """

    name: str
    shape: Tuple[int, int, int]
    dtype: str = "uint8"
    order: str = "NHWC"
    zp: Union[float, Sequence[float]] = 0.0
    scale: Union[float, Sequence[float]] = 1.0
    padded_shape: Optional[Tuple[int, int, int]] = None
    device_order: Optional[str] = None
    layer_name: Optional[str] = None      # the HEF's edge-layer name when HailoRT 5.x renames it (HAILO_DISABLE_PP)
    per_feature: Optional[bool] = None    # True with scalar zp/scale: a per-feature HEF whose lists are empty

    def __post_init__(self) -> None:
        """Double only: validates the description."""
        self.shape = tuple(int(v) for v in self.shape)
        if self.dtype not in _TYPES:
            raise ValueError(f"FakeOutput {self.name!r}: dtype must be uint8 or uint16 (what a chip emits)")
        if self.order not in ("NHWC", "FCR", "F8CR", "NC", "NHW"):
            raise ValueError(f"FakeOutput {self.name!r}: unsupported host order {self.order!r}")
        self.padded_shape = tuple(self.shape if self.padded_shape is None else self.padded_shape)
        self.device_order = self.device_order or _HOST_TO_DEVICE_ORDER[self.order]

    @property
    def per_channel(self) -> bool:
        """Double only: whether the layer is quantized per feature (lists, or per_feature=True: a
        per-feature HEF whose qp_zps/qp_scales lists are empty, which only HailoRT 5.x loads)."""
        return bool(self.per_feature) or np.ndim(self.zp) > 0 or np.ndim(self.scale) > 0

    def quant_infos(self) -> List[_c.QuantInfo]:
        """Double only: the stream's quant infos (OutputStream::get_quant_infos), one per channel for
        a per-feature layer; what HailoRT dequantizes FLOAT32 outputs with."""
        if not self.per_channel:
            return [_c.QuantInfo(float(self.zp), float(self.scale), 0.0, 0.0)]
        c = self.shape[2]
        zps = np.broadcast_to(np.asarray(self.zp, dtype=np.float64), (c,))
        scales = np.broadcast_to(np.asarray(self.scale, dtype=np.float64), (c,))
        return [_c.QuantInfo(float(z), float(s), 0.0, 0.0) for z, s in zip(zps, scales)]

    def quant_info(self) -> _c.QuantInfo:
        """Double only: the single quant_info of the vstream/stream info; INVALID_QUANT_INFO (all
        zeros) for a per-feature layer."""
        return _c.QuantInfo() if self.per_channel else self.quant_infos()[0]

    @property
    def format_type(self):
        """Double only: the FormatType of the chip's integers."""
        return _TYPES[self.dtype]


@dataclass
class FakeNms:
    """Double only: HailoRT's host NMS op (DFC nms_postprocess, engine=cpu): one HAILO_NMS_BY_CLASS output."""

    name: str
    number_of_classes: int
    max_bboxes_per_class: int = 100

    @property
    def nms_shape(self) -> _c.NmsShape:
        """Double only: the op's nms_shape."""
        return _c.NmsShape(self.number_of_classes, self.max_bboxes_per_class)

    @property
    def flat_size(self) -> int:
        """Double only: floats in one HAILO_NMS_BY_CLASS frame."""
        return _c.nms_host_shape_size(self.nms_shape)


Frames = Union[Sequence[Mapping[str, np.ndarray]], Callable[[int], Mapping[str, np.ndarray]]]

# include/hailo/hailort.h HAILO_DEFAULT_ASYNC_INFER_QUEUE_SIZE (read at 4.21): a device reports its own
# get_async_queue_size() (ConfiguredNetworkGroup::infer_queue_size); the double uses this default.
DEFAULT_ASYNC_QUEUE_SIZE = 2


class FakeModel:
    """Double only: a network group (one network) with one input and the given outputs.

    async_queue_size: what ConfiguredInferModel.get_async_queue_size() reports, the number of
    frames the async pipeline holds at once."""

    def __init__(self, name: str, outputs: Sequence[FakeOutput], *, frames: Frames = (),
                 nms: Optional[FakeNms] = None, input_shape: Tuple[int, int, int] = (640, 640, 3),
                 async_queue_size: int = DEFAULT_ASYNC_QUEUE_SIZE, hailo10h: bool = False) -> None:
        """Double only: see the class. hailo10h: a Hailo-10H behind HailoRT 5.x's HRPC client (only
        the 5.2 double reads it)."""
        self.name = name
        self.hailo10h = bool(hailo10h)
        self.network_name = f"{name}/{name}"  # HailoRTDefaults::get_network_name
        self.outputs = list(outputs)
        self.nms = nms
        self.input_name = f"{name}/input_layer1"
        self.input_shape = tuple(input_shape)
        self.async_queue_size = int(async_queue_size)
        self._frames = frames
        self._counter = itertools.count()
        self.frames_produced = 0
        self.path: Optional[str] = None
        names = [o.name for o in self.outputs] + ([nms.name] if nms else [])
        if len(set(names)) != len(names):
            raise ValueError(f"FakeModel {name!r}: output names repeat: {names}")
        if self.async_queue_size < 1:
            raise ValueError(f"FakeModel {name!r}: async_queue_size must be >= 1")

    def output(self, name: str) -> FakeOutput:
        """Double only: the FakeOutput of that name."""
        for o in self.outputs:
            if o.name == name:
                return o
        raise KeyError(name)

    def rewind(self) -> None:
        """Double only: the next inferred frame is frames[0] again."""
        self._counter = itertools.count()

    def next_frame(self) -> Dict[str, np.ndarray]:
        """Double only: the next frame of every output the host receives (the NMS output for an NMS model)."""
        i = next(self._counter)
        if callable(self._frames):
            frame = self._frames(i)
        else:
            if not len(self._frames):
                raise RuntimeError(f"FakeModel {self.name!r}: no frames to deliver (pass frames=...)")
            frame = self._frames[i % len(self._frames)]
        self.frames_produced += 1
        out = {}
        if self.nms is not None:
            a = np.asarray(frame[self.nms.name])
            if a.dtype != np.float32 or a.size != self.nms.flat_size:
                raise ValueError(f"frame for NMS output {self.nms.name!r} must be {self.nms.flat_size} float32 "
                                 f"(HAILO_NMS_BY_CLASS), got {a.dtype} {a.shape}")
            out[self.nms.name] = a.reshape(-1)
            # The raw layers' frames, when given, too: what HailoRT 5.x hands out under HAILO_DISABLE_PP.
            if not all(o.name in frame for o in self.outputs):
                return out
        for o in self.outputs:
            a = np.asarray(frame[o.name])
            if a.dtype != np.dtype(o.dtype) or a.shape != o.shape:
                raise ValueError(f"frame for output {o.name!r} must be {o.dtype} {o.shape}, got {a.dtype} {a.shape}")
            out[o.name] = a
        return out


_REGISTRY: Dict[str, FakeModel] = {}


def register(model: FakeModel, path: Optional[str] = None) -> str:
    """Double only: makes `model` openable as HEF(path) / create_infer_model(path); returns the path."""
    path = path or f"/fake-hefs/{model.name}.hef"
    model.path = path
    _REGISTRY[path] = model
    return path


def lookup(path: str) -> Optional[FakeModel]:
    """Double only: the model registered at `path`, or None."""
    return _REGISTRY.get(path)


def clear() -> None:
    """Double only: forgets every registered model."""
    _REGISTRY.clear()
