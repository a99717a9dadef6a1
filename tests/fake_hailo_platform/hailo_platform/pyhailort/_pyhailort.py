"""Test double of HailoRT's compiled module `hailo_platform.pyhailort._pyhailort` (pybind11).

Only the part hailo-decode touches: the enums and the plain structs the Python layer hands out.
Names and values follow the public hailo-ai/hailort source:
  - enum values: hailort/libhailort/include/hailo/hailort.h (hailo_format_type_t,
    hailo_format_order_t, hailo_stream_direction_t, hailo_stream_interface_t,
    hailo_scheduling_algorithm_t, INVALID_QUANT_INFO = {0, 0, 0, 0})
  - Python names and properties: hailort/libhailort/bindings/python/src/pyhailort.cpp
    (py::enum_ "FormatType", "FormatOrder", ...; py::class_ "VStreamInfo", "StreamInfo",
    "QuantInfo", "HailoFormat", "NmsShape", "VStreamParams", "ConfigureParams")
  - shapes: bindings/python/src/bindings_common.hpp (get_pybind_shape)

pybind11 enums are not ints: `FormatOrder.FCR == 3` is False, `int(FormatOrder.FCR)` is 3,
`FormatOrder.FCR.name` is "FCR". The enums here behave the same way.
"""

from __future__ import annotations

import enum

import numpy as np

__version__ = "4.23.0"


class _PybindEnum(enum.Enum):
    """An enum that behaves like a pybind11 py::enum_: int() works, comparing with ints does not."""

    def __int__(self) -> int:
        return int(self.value)

    def __index__(self) -> int:
        return int(self.value)

    def __str__(self) -> str:
        return f"{type(self).__name__}.{self.name}"


# hailo_format_type_t
FormatType = _PybindEnum("FormatType", [("AUTO", 0), ("UINT8", 1), ("UINT16", 2), ("FLOAT32", 3)])

# hailo_format_order_t, with the names pyhailort.cpp binds (HAILO_NMS = 9 was dropped from the
# bindings when HailoRT 4.21 removed it; "12_BIT_BAYER_RGB" is only reachable with getattr, as
# in pybind11).
FormatOrder = _PybindEnum("FormatOrder", [
    ("AUTO", 0), ("NHWC", 1), ("NHCW", 2), ("FCR", 3), ("F8CR", 4), ("NHW", 5), ("NC", 6),
    ("BAYER_RGB", 7), ("12_BIT_BAYER_RGB", 8), ("RGB888", 10), ("NCHW", 11), ("YUY2", 12),
    ("NV12", 13), ("NV21", 14), ("YYUV", 15), ("YYVU", 16), ("RGB4", 17), ("I420", 18),
    ("YYYYUV", 19), ("HAILO_NMS_WITH_BYTE_MASK", 20), ("HAILO_NMS_ON_CHIP", 21),
    ("HAILO_NMS_BY_CLASS", 22), ("HAILO_NMS_BY_SCORE", 23),
])

# hailo_format_flags_t (py::arithmetic in the real module)
FormatFlags = _PybindEnum("FormatFlags", [("NONE", 0), ("TRANSPOSED", 2)])

# hailo_stream_direction_t
StreamDirection = _PybindEnum("StreamDirection", [("H2D", 0), ("D2H", 1)])

# hailo_stream_interface_t (C: PCIE = 0, ETH, MIPI, INTEGRATED)
StreamInterface = _PybindEnum("StreamInterface", [("PCIe", 0), ("ETH", 1), ("MIPI", 2), ("INTEGRATED", 3)])

# hailo_scheduling_algorithm_t
SchedulingAlgorithm = _PybindEnum("SchedulingAlgorithm", [("NONE", 0), ("ROUND_ROBIN", 1)])

# hailo_power_mode_t
PowerMode = _PybindEnum("PowerMode", [("PERFORMANCE", 0), ("ULTRA_PERFORMANCE", 1)])

BBOX_PARAMS = 5  # HailoRTCommon::BBOX_PARAMS: y_min, x_min, y_max, x_max, score


class HailoRTDefaults:
    @staticmethod
    def BBOX_PARAMS() -> int:  # noqa: N802 - the real name
        return BBOX_PARAMS


class HailoRTStatusException(Exception):
    """What the C++ side throws on a hailo_status error; ExceptionWrapper maps it to HailoRTException."""


class HailoRTCustomException(Exception):
    """What the C++ side throws for binding-level misuse (e.g. nms_shape of a non-NMS vstream)."""


def _f32(x: float) -> float:
    # hailo_quant_info_t holds float32_t: what Python reads back is the float32 value.
    return float(np.float32(x))


class QuantInfo:
    """hailo_quant_info_t: qp_zp, qp_scale, limvals_min, limvals_max (float32)."""

    def __init__(self, qp_zp: float = 0.0, qp_scale: float = 0.0, limvals_min: float = 0.0,
                 limvals_max: float = 0.0) -> None:
        self.qp_zp = _f32(qp_zp)
        self.qp_scale = _f32(qp_scale)
        self.limvals_min = _f32(limvals_min)
        self.limvals_max = _f32(limvals_max)

    def __repr__(self) -> str:
        return f"QuantInfo(qp_zp={self.qp_zp}, qp_scale={self.qp_scale})"


def is_qp_valid(quant_info: QuantInfo) -> bool:
    """HailoRTCommon::is_qp_valid: invalid means all four fields are 0 (INVALID_QUANT_INFO)."""
    return any(v != 0.0 for v in (quant_info.qp_zp, quant_info.qp_scale, quant_info.limvals_min,
                                  quant_info.limvals_max))


class HailoFormat:
    """hailo_format_t: type (FormatType), order (FormatOrder), flags (FormatFlags)."""

    def __init__(self, type=FormatType.AUTO, order=FormatOrder.AUTO, flags=FormatFlags.NONE) -> None:  # noqa: A002
        self.type = type
        self.order = order
        self.flags = flags

    def copy(self) -> "HailoFormat":
        return HailoFormat(self.type, self.order, self.flags)

    def __repr__(self) -> str:
        return f"HailoFormat(type={self.type}, order={self.order})"


class NmsShape:
    """hailo_nms_shape_t as bound: number_of_classes, max_bboxes_per_class, max_accumulated_mask_size
    (read-only)."""

    def __init__(self, number_of_classes: int, max_bboxes_per_class: int, max_accumulated_mask_size: int = 0):
        self._n = int(number_of_classes)
        self._m = int(max_bboxes_per_class)
        self._mask = int(max_accumulated_mask_size)

    number_of_classes = property(lambda self: self._n)
    max_bboxes_per_class = property(lambda self: self._m)
    max_accumulated_mask_size = property(lambda self: self._mask)


def is_nms_order(order) -> bool:
    return order in (FormatOrder.HAILO_NMS_BY_CLASS, FormatOrder.HAILO_NMS_BY_SCORE,
                     FormatOrder.HAILO_NMS_WITH_BYTE_MASK)


def nms_host_shape_size(nms_shape: NmsShape) -> int:
    """HailoRTCommon::get_nms_host_shape_size: per class a count then max boxes of 5 floats."""
    return (1 + BBOX_PARAMS * nms_shape.max_bboxes_per_class) * nms_shape.number_of_classes


def pybind_shape(hwc, nms_shape, fmt: HailoFormat):
    """HailoRTBindingsCommon::get_pybind_shape: the shape of a host buffer in `fmt`."""
    if fmt.order == FormatOrder.HAILO_NMS_BY_CLASS:
        return [nms_host_shape_size(nms_shape)]
    if fmt.order == FormatOrder.HAILO_NMS_BY_SCORE:
        raise HailoRTStatusException("Format order HAILO_FORMAT_ORDER_HAILO_NMS_BY_SCORE is not supported in python API.")
    h, w, c = hwc
    if fmt.order == FormatOrder.NC:
        return [c]
    if fmt.order == FormatOrder.NHW:
        return [h, w]
    return [h, w, c]


_DTYPES = {FormatType.UINT8: np.dtype("uint8"), FormatType.UINT16: np.dtype("uint16"),
           FormatType.FLOAT32: np.dtype("float32")}


def get_dtype(format_type) -> np.dtype:
    """_pyhailort.get_dtype: numpy dtype of a FormatType (AUTO is an error, as in C++)."""
    try:
        return _DTYPES[format_type]
    except KeyError:
        raise HailoRTStatusException("Invalid format type.") from None


def get_format_data_bytes(fmt: HailoFormat) -> int:
    return get_dtype(fmt.type).itemsize


class VStreamInfo:
    """hailo_vstream_info_t as bound: name, network_name, direction, format, quant_info, and the
    properties shape and nms_shape."""

    def __init__(self, name, network_name, direction, format, quant_info, shape=None, nms_shape=None):  # noqa: A002
        self.name = name
        self.network_name = network_name
        self.direction = direction
        self.format = format
        self.quant_info = quant_info
        self._shape = shape
        self._nms_shape = nms_shape

    @property
    def shape(self):
        order = self.format.order
        if order == FormatOrder.NC:
            return (self._shape[2],)
        if order == FormatOrder.NHW:
            return (self._shape[0], self._shape[1])
        if order == FormatOrder.HAILO_NMS_BY_CLASS:
            return (self._nms_shape.number_of_classes, BBOX_PARAMS, self._nms_shape.max_bboxes_per_class)
        if order in (FormatOrder.HAILO_NMS_BY_SCORE, FormatOrder.HAILO_NMS_WITH_BYTE_MASK):
            raise HailoRTCustomException("Format order has no shape")
        return tuple(self._shape)

    @property
    def nms_shape(self):
        if not is_nms_order(self.format.order):
            raise HailoRTCustomException("nms_shape is availale only on nms order vstreams")
        return self._nms_shape

    def __repr__(self) -> str:
        return f'VStreamInfo("{self.name}")'


class StreamInfo:
    """hailo_stream_info_t as bound: name, direction, format (device order), sys_index,
    data_bytes, quant_info, and shape = the padded device shape (hw_shape)."""

    def __init__(self, name, direction, format, hw_shape, quant_info, sys_index, data_bytes):  # noqa: A002
        self.name = name
        self.direction = direction
        self.format = format
        self._hw_shape = tuple(hw_shape)
        self.quant_info = quant_info
        self.sys_index = sys_index
        self.data_bytes = data_bytes

    @property
    def shape(self):
        order = self.format.order
        if order == FormatOrder.NC:
            return (self._hw_shape[2],)
        if order == FormatOrder.NHW:
            return (self._hw_shape[0], self._hw_shape[1])
        return tuple(self._hw_shape)

    def __repr__(self) -> str:
        return f'StreamInfo("{self.name}")'


class VStreamParams:
    """hailo_vstream_params_t as bound: user_buffer_format, timeout_ms, queue_size."""

    def __init__(self, user_buffer_format: HailoFormat, timeout_ms: int, queue_size: int) -> None:
        self.user_buffer_format = user_buffer_format
        self.timeout_ms = timeout_ms
        self.queue_size = queue_size


class ConfigureParams:
    """ConfigureNetworkParams as bound (what ConfigureParams.create_from_hef returns per group)."""

    def __init__(self, batch_size: int = 0) -> None:
        self.batch_size = batch_size
        self.power_mode = PowerMode.PERFORMANCE
        self.stream_params_by_name = {}
        self.network_params_by_name = {}


class VDeviceParams:
    def __init__(self) -> None:
        self.device_count = 1
        self.scheduling_algorithm = SchedulingAlgorithm.ROUND_ROBIN  # HailoRTDefaults::get_vdevice_params
        self.group_id = "UNIQUE"
        self.multi_process_service = False
        self.device_ids = []

    @staticmethod
    def default() -> "VDeviceParams":
        return VDeviceParams()
