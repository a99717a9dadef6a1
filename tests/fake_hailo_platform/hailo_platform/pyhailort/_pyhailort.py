"""Test double of HailoRT's compiled module `hailo_platform.pyhailort._pyhailort` (pybind11).

HailoRT 4.23: bindings/python/src/pyhailort.cpp::PYBIND11_MODULE

Only the part hailo-decode touches: the enums, the plain structs the Python layer hands out, the
status exception and the status names. Every class and function names, in its docstring, the
HailoRT 4.23 source it mirrors as `HailoRT 4.23: <file>::<symbol>` (file relative to
`hailort/libhailort/` in hailo-ai/hailort, branch hailo8); helpers with no HailoRT counterpart say
`Double only: <why>`. tests/test_fake_hailo_notes.py fails on a member without either.

pybind11 enums are not ints: `FormatOrder.FCR == 3` is False, `int(FormatOrder.FCR)` is 3,
`FormatOrder.FCR.name` is "FCR". The enums here behave the same way.
"""

from __future__ import annotations

import enum

import numpy as np

__version__ = "4.23.0"


class _PybindEnum(enum.Enum):
    """Double only: an enum that behaves like a pybind11 py::enum_ (int() works, == with ints does not)."""

    def __int__(self) -> int:
        """Double only: pybind11 enums convert with int()."""
        return int(self.value)

    def __index__(self) -> int:
        """Double only: pybind11 enums convert with operator.index()."""
        return int(self.value)

    def __str__(self) -> str:
        """Double only: pybind11 prints enums as 'Type.NAME'."""
        return f"{type(self).__name__}.{self.name}"


def _enum(name: str, members, note: str):
    """Double only: a pybind11-like enum class whose docstring is its source note."""
    cls = _PybindEnum(name, members)
    cls.__doc__ = note
    return cls


FormatType = _enum("FormatType", [("AUTO", 0), ("UINT8", 1), ("UINT16", 2), ("FLOAT32", 3)],
                   "HailoRT 4.23: include/hailo/hailort.h::hailo_format_type_t (bound as FormatType in "
                   "bindings/python/src/pyhailort.cpp)")

# The names pyhailort.cpp binds; HAILO_NMS = 9 left the bindings when HailoRT 4.21 replaced it with
# HAILO_NMS_BY_CLASS = 22; "12_BIT_BAYER_RGB" is only reachable with getattr, as in pybind11.
FormatOrder = _enum("FormatOrder", [
    ("AUTO", 0), ("NHWC", 1), ("NHCW", 2), ("FCR", 3), ("F8CR", 4), ("NHW", 5), ("NC", 6),
    ("BAYER_RGB", 7), ("12_BIT_BAYER_RGB", 8), ("RGB888", 10), ("NCHW", 11), ("YUY2", 12),
    ("NV12", 13), ("NV21", 14), ("YYUV", 15), ("YYVU", 16), ("RGB4", 17), ("I420", 18),
    ("YYYYUV", 19), ("HAILO_NMS_WITH_BYTE_MASK", 20), ("HAILO_NMS_ON_CHIP", 21),
    ("HAILO_NMS_BY_CLASS", 22), ("HAILO_NMS_BY_SCORE", 23),
], "HailoRT 4.23: include/hailo/hailort.h::hailo_format_order_t (bound as FormatOrder in "
   "bindings/python/src/pyhailort.cpp)")

FormatFlags = _enum("FormatFlags", [("NONE", 0), ("TRANSPOSED", 2)],
                    "HailoRT 4.23: include/hailo/hailort.h::hailo_format_flags_t (py::arithmetic in pyhailort.cpp)")

StreamDirection = _enum("StreamDirection", [("H2D", 0), ("D2H", 1)],
                        "HailoRT 4.23: include/hailo/hailort.h::hailo_stream_direction_t")

# C: PCIE = 0, ETH, MIPI, INTEGRATED
StreamInterface = _enum("StreamInterface", [("PCIe", 0), ("ETH", 1), ("MIPI", 2), ("INTEGRATED", 3)],
                        "HailoRT 4.23: include/hailo/hailort.h::hailo_stream_interface_t")

SchedulingAlgorithm = _enum("SchedulingAlgorithm", [("NONE", 0), ("ROUND_ROBIN", 1)],
                            "HailoRT 4.23: include/hailo/hailort.h::hailo_scheduling_algorithm_t")

PowerMode = _enum("PowerMode", [("PERFORMANCE", 0), ("ULTRA_PERFORMANCE", 1)],
                  "HailoRT 4.23: include/hailo/hailort.h::hailo_power_mode_t")

BBOX_PARAMS = 5  # HailoRTCommon::BBOX_PARAMS: y_min, x_min, y_max, x_max, score

# hailo_status values this double raises (include/hailo/hailort.h, HAILO_STATUS_VARIABLES).
HAILO_SUCCESS = 0
HAILO_INVALID_ARGUMENT = 2
HAILO_TIMEOUT = 4
HAILO_INVALID_OPERATION = 6
HAILO_NOT_IMPLEMENTED = 7
HAILO_OPEN_FILE_FAILURE = 13
HAILO_NOT_FOUND = 61
HAILO_STREAM_ABORT = 63
HAILO_QUEUE_IS_FULL = 82
_STATUS_NAMES = {HAILO_SUCCESS: "HAILO_SUCCESS", HAILO_INVALID_ARGUMENT: "HAILO_INVALID_ARGUMENT",
                 HAILO_TIMEOUT: "HAILO_TIMEOUT", HAILO_INVALID_OPERATION: "HAILO_INVALID_OPERATION",
                 HAILO_NOT_IMPLEMENTED: "HAILO_NOT_IMPLEMENTED", HAILO_OPEN_FILE_FAILURE: "HAILO_OPEN_FILE_FAILURE",
                 HAILO_NOT_FOUND: "HAILO_NOT_FOUND", HAILO_STREAM_ABORT: "HAILO_STREAM_ABORT",
                 HAILO_QUEUE_IS_FULL: "HAILO_QUEUE_IS_FULL"}


def get_status_message(status_code: int) -> str:
    """HailoRT 4.23: bindings/python/src/pyhailort.cpp::get_status_message (the status' name from
    include/hailo/hailort.h; "" for an unknown code, as pyhailort.py::get_status_message expects)."""
    return _STATUS_NAMES.get(int(status_code), "")


class HailoRTDefaults:
    """HailoRT 4.23: bindings/python/src/pyhailort.cpp::HailoRTDefaults"""

    @staticmethod
    def BBOX_PARAMS() -> int:  # noqa: N802 - the real name
        """HailoRT 4.23: include/hailo/hailort_common.hpp::HailoRTCommon::BBOX_PARAMS"""
        return BBOX_PARAMS


class HailoRTStatusException(Exception):
    """HailoRT 4.23: bindings/python/src/utils.hpp::HailoRTStatusException

    What the C++ side throws on a hailo_status error (VALIDATE_STATUS / VALIDATE_EXPECTED), with
    the status as a decimal string in args[0]; pyhailort.py::ExceptionWrapper turns it into a
    HailoRTException subclass raised `from` this one."""


class HailoRTCustomException(Exception):
    """HailoRT 4.23: bindings/python/src/utils.hpp::HailoRTCustomException (EXIT_WITH_ERROR:
    binding-level misuse, e.g. nms_shape of a non-NMS vstream)."""


def _throw_status(status: int) -> None:
    """HailoRT 4.23: bindings/python/src/utils.hpp::THROW_STATUS_ERROR"""
    raise HailoRTStatusException(str(int(status)))


def _f32(x: float) -> float:
    """Double only: hailo_quant_info_t holds float32_t; what Python reads back is the float32 value."""
    return float(np.float32(x))


class QuantInfo:
    """HailoRT 4.23: bindings/python/src/pyhailort.cpp::QuantInfo (hailo_quant_info_t: qp_zp,
    qp_scale, limvals_min, limvals_max, float32; the default is INVALID_QUANT_INFO, all zeros)."""

    def __init__(self, qp_zp: float = 0.0, qp_scale: float = 0.0, limvals_min: float = 0.0,
                 limvals_max: float = 0.0) -> None:
        """HailoRT 4.23: bindings/python/src/pyhailort.cpp::QuantInfo (py::init<float32_t x4>)"""
        self.qp_zp = _f32(qp_zp)
        self.qp_scale = _f32(qp_scale)
        self.limvals_min = _f32(limvals_min)
        self.limvals_max = _f32(limvals_max)

    def __repr__(self) -> str:
        """Double only: readable test failures."""
        return f"QuantInfo(qp_zp={self.qp_zp}, qp_scale={self.qp_scale})"


def is_qp_valid(quant_info: QuantInfo) -> bool:
    """HailoRT 4.23: include/hailo/quantization.hpp::Quantization::is_qp_valid (invalid: all four
    fields 0, INVALID_QUANT_INFO)."""
    return any(v != 0.0 for v in (quant_info.qp_zp, quant_info.qp_scale, quant_info.limvals_min,
                                  quant_info.limvals_max))


class HailoFormat:
    """HailoRT 4.23: bindings/python/src/pyhailort.cpp::HailoFormat (hailo_format_t: type, order, flags)."""

    def __init__(self, type=FormatType.AUTO, order=FormatOrder.AUTO, flags=FormatFlags.NONE) -> None:  # noqa: A002
        """HailoRT 4.23: bindings/python/src/pyhailort.cpp::HailoFormat (def_readwrite type/order/flags)"""
        self.type = type
        self.order = order
        self.flags = flags

    def _copy(self) -> "HailoFormat":
        """Double only: a by-value copy, as pybind11 returns hailo_format_t from C++ getters."""
        return HailoFormat(self.type, self.order, self.flags)

    def __repr__(self) -> str:
        """Double only: readable test failures."""
        return f"HailoFormat(type={self.type}, order={self.order})"


class NmsShape:
    """HailoRT 4.23: bindings/python/src/pyhailort.cpp::NmsShape (hailo_nms_shape_t, read-only fields)."""

    def __init__(self, number_of_classes: int, max_bboxes_per_class: int, max_accumulated_mask_size: int = 0):
        """Double only: the real struct is filled by HailoRT, never built in Python."""
        self._n = int(number_of_classes)
        self._m = int(max_bboxes_per_class)
        self._mask = int(max_accumulated_mask_size)

    @property
    def number_of_classes(self) -> int:
        """HailoRT 4.23: include/hailo/hailort.h::hailo_nms_shape_t.number_of_classes"""
        return self._n

    @property
    def max_bboxes_per_class(self) -> int:
        """HailoRT 4.23: include/hailo/hailort.h::hailo_nms_shape_t.max_bboxes_per_class"""
        return self._m

    @property
    def max_accumulated_mask_size(self) -> int:
        """HailoRT 4.23: include/hailo/hailort.h::hailo_nms_shape_t.max_accumulated_mask_size"""
        return self._mask


def is_nms_order(order) -> bool:
    """HailoRT 4.23: include/hailo/hailort_common.hpp::HailoRTCommon::is_nms"""
    return order in (FormatOrder.HAILO_NMS_BY_CLASS, FormatOrder.HAILO_NMS_BY_SCORE,
                     FormatOrder.HAILO_NMS_WITH_BYTE_MASK)


def nms_host_shape_size(nms_shape: NmsShape) -> int:
    """HailoRT 4.23: include/hailo/hailort_common.hpp::HailoRTCommon::get_nms_host_shape_size (per
    class a count then max boxes of 5 floats)."""
    return (1 + BBOX_PARAMS * nms_shape.max_bboxes_per_class) * nms_shape.number_of_classes


def pybind_shape(hwc, nms_shape, fmt: HailoFormat):
    """HailoRT 4.23: bindings/python/src/bindings_common.hpp::HailoRTBindingsCommon::get_pybind_shape

    The shape of a host buffer in `fmt`: NC -> [C], NHW -> [H, W], everything else (NCHW
    included) -> [H, W, C], whatever the element order inside."""
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
    """HailoRT 4.23: bindings/python/src/bindings_common.hpp::HailoRTBindingsCommon::get_dtype (AUTO
    is an error: convert_format_type_to_string throws "Invalid format type.")."""
    try:
        return _DTYPES[format_type]
    except KeyError:
        raise HailoRTStatusException("Invalid format type.") from None


def get_format_data_bytes(fmt: HailoFormat) -> int:
    """HailoRT 4.23: include/hailo/hailort_common.hpp::HailoRTCommon::get_format_data_bytes"""
    return get_dtype(fmt.type).itemsize


class VStreamInfo:
    """HailoRT 4.23: bindings/python/src/pyhailort.cpp::VStreamInfo (hailo_vstream_info_t: name,
    network_name, direction, format, quant_info, and the properties shape and nms_shape)."""

    def __init__(self, name, network_name, direction, format, quant_info, shape=None, nms_shape=None):  # noqa: A002
        """Double only: the real struct is filled by HailoRT from the HEF."""
        self.name = name
        self.network_name = network_name
        self.direction = direction
        self.format = format
        self.quant_info = quant_info
        self._shape = shape
        self._nms_shape = nms_shape

    @property
    def shape(self):
        """HailoRT 4.23: bindings/python/src/pyhailort.cpp::VStreamInfo.shape ((C,) for NC, (H, W)
        for NHW, (classes, 5, max) for HAILO_NMS_BY_CLASS, else (H, W, C))."""
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
        """HailoRT 4.23: bindings/python/src/pyhailort.cpp::VStreamInfo.nms_shape (EXIT_WITH_ERROR on
        a non-NMS vstream)."""
        if not is_nms_order(self.format.order):
            raise HailoRTCustomException("nms_shape is availale only on nms order vstreams")
        return self._nms_shape

    def __repr__(self) -> str:
        """HailoRT 4.23: bindings/python/src/pyhailort.cpp::VStreamInfo.__repr__"""
        return f'VStreamInfo("{self.name}")'


class StreamInfo:
    """HailoRT 4.23: bindings/python/src/pyhailort.cpp::StreamInfo (hailo_stream_info_t: name,
    direction, format (device order), sys_index, data_bytes, quant_info, and shape = hw_shape)."""

    def __init__(self, name, direction, format, hw_shape, quant_info, sys_index, data_bytes):  # noqa: A002
        """Double only: the real struct is filled by HailoRT from the HEF."""
        self.name = name
        self.direction = direction
        self.format = format
        self._hw_shape = tuple(hw_shape)
        self.quant_info = quant_info
        self.sys_index = sys_index
        self.data_bytes = data_bytes

    @property
    def shape(self):
        """HailoRT 4.23: bindings/python/src/pyhailort.cpp::StreamInfo.shape (the padded hw_shape)"""
        order = self.format.order
        if order == FormatOrder.NC:
            return (self._hw_shape[2],)
        if order == FormatOrder.NHW:
            return (self._hw_shape[0], self._hw_shape[1])
        return tuple(self._hw_shape)

    def __repr__(self) -> str:
        """HailoRT 4.23: bindings/python/src/pyhailort.cpp::StreamInfo.__repr__"""
        return f'StreamInfo("{self.name}")'


class VStreamParams:
    """HailoRT 4.23: bindings/python/src/pyhailort.cpp::VStreamParams (hailo_vstream_params_t:
    user_buffer_format, timeout_ms, queue_size)."""

    def __init__(self, user_buffer_format: HailoFormat, timeout_ms: int, queue_size: int) -> None:
        """Double only: the real params come from make_output_vstream_params."""
        self.user_buffer_format = user_buffer_format
        self.timeout_ms = timeout_ms
        self.queue_size = queue_size


class ConfigureParams:
    """HailoRT 4.23: bindings/python/src/pyhailort.cpp::ConfigureParams (ConfigureNetworkParams, what
    ConfigureParams.create_from_hef returns per network group)."""

    def __init__(self, batch_size: int = 0) -> None:
        """Double only: the real params come from Hef::create_configure_params."""
        self.batch_size = batch_size
        self.power_mode = PowerMode.PERFORMANCE
        self.stream_params_by_name = {}
        self.network_params_by_name = {}


class VDeviceParams:
    """HailoRT 4.23: bindings/python/src/pyhailort.cpp::VDeviceParams (hailo_vdevice_params_t)"""

    def __init__(self) -> None:
        """Double only: the real params come from VDeviceParams.default()."""
        self.device_count = 1
        self.scheduling_algorithm = SchedulingAlgorithm.ROUND_ROBIN  # HailoRTDefaults::get_vdevice_params
        self.group_id = "UNIQUE"
        self.multi_process_service = False
        self.device_ids = []

    @staticmethod
    def default() -> "VDeviceParams":
        """HailoRT 4.23: bindings/python/src/pyhailort.cpp::VDeviceParams.default"""
        return VDeviceParams()
