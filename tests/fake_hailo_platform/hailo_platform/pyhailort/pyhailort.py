"""Test double of `hailo_platform.pyhailort.pyhailort` (HailoRT's Python layer), driven by the
descriptions in `hailo_platform._fake_device` instead of a device.

HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::<module>

Every class and member names the HailoRT 4.23 source it mirrors, as `HailoRT 4.23: <file>::<symbol>`
(file relative to `hailort/libhailort/` in hailo-ai/hailort, branch hailo8); helpers with no
HailoRT counterpart say `Double only: <why>` (tests/test_fake_hailo_notes.py checks both). Where
HailoRT is strict, the double is too:

- InferModel.output(name).quant_infos holds ONE entry, the vstream's quant_info, which is all zeros
  for a per-feature quantized output (src/net_flow/pipeline/infer_model.cpp,
  InferModelBase::InferStream::Impl::get_quant_infos: "TODO: Support quant infos vector").
- FLOAT32 outputs are dequantized with the stream's quant infos, one per channel for per-feature
  layers (src/net_flow/pipeline/async_pipeline_builder.cpp: output_stream_base->get_quant_infos()).
- ConfiguredInferModel's async queue holds get_async_queue_size() frames. run_async pushes one
  binding at a time and refuses a frame that does not fit with HAILO_QUEUE_IS_FULL
  (src/net_flow/pipeline/async_infer_runner.cpp, AsyncInferRunnerImpl::run), after which the model
  is shut down (infer_model.cpp, ConfiguredInferModel::run_async); pyhailort surfaces it as
  HailoRTException("libhailort failed with error: 82 (HAILO_QUEUE_IS_FULL)") raised from
  _pyhailort.HailoRTStatusException("82") (ExceptionWrapper). wait_for_async_ready(frames_count >
  queue size) times out (HailoRTTimeout). Frames in flight complete only when something waits for
  them (job.wait, wait_for_async_ready, run): the double never completes work on its own, and the
  caller's output arrays are written at completion (infer_model_api.cpp: memcpy in the callback).
- NCHW user order as HailoRT delivers it: an (H, W, C)-shaped array (get_pybind_shape) filled
  channel first, only from NHCW device layers (src/transform/transform.cpp, reorder_output_stream).

Versions read (hailo-ai/hailort commits): infer_model.cpp and hailo_platform/__init__.py at 4.23.0
(a5b7365c) and 5.1.1 (1adb3306); pyhailort.py at 4.21.0 (0df636dc, the newest 4.x version found
stored; its ConfiguredInferModel / InferModel match the 5.x ones read, 19b04439 and 5.4.0 c3258bfb,
and 4.18.0 01e4c7f5); async_infer_runner.cpp
and transform.cpp at 4.21.0 (1c3f1af4); hailort.h status codes at 4.21.0; infer_model_api.cpp and
bindings_common.hpp at 4.18.0 (01e4c7f5). The notes name the 4.23 file and symbol; where only an
earlier version was readable, the behaviour is the same in every later version read.
"""

from __future__ import annotations

from collections import deque
from datetime import timedelta
from typing import List

import numpy

from . import _pyhailort
from ._pyhailort import (BBOX_PARAMS, FormatFlags, FormatOrder, FormatType, HailoFormat, QuantInfo,  # noqa: F401
                         StreamDirection, VStreamInfo, StreamInfo, VStreamParams)
from .. import _fake_device

DEFAULT_VSTREAM_TIMEOUT_MS = 10000
DEFAULT_VSTREAM_QUEUE_SIZE = 2


class HailoRTException(Exception):
    """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::HailoRTException"""


class HailoRTTimeout(HailoRTException):
    """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::HailoRTTimeout"""


class HailoRTStreamAborted(HailoRTException):
    """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::HailoRTStreamAborted"""


class HailoRTStreamAbortedByUser(HailoRTException):
    """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::HailoRTStreamAbortedByUser"""


class HailoRTInvalidOperationException(HailoRTException):
    """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::HailoRTInvalidOperationException"""


class HailoRTInvalidArgumentException(HailoRTException):
    """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::HailoRTInvalidArgumentException"""


class HailoRTNotFoundException(HailoRTException):
    """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::HailoRTNotFoundException"""


class HailoRTInvalidHEFException(HailoRTException):
    """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::HailoRTInvalidHEFException"""


class HailoCommunicationClosedException(HailoRTException):
    """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::HailoCommunicationClosedException"""


class ExceptionWrapper(object):
    """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::ExceptionWrapper

    Turns _pyhailort.HailoRTStatusException (the status in args[0]) into the matching
    HailoRTException subclass, raised `from` the original; anything else passes unchanged."""

    def __enter__(self):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::ExceptionWrapper.__enter__"""

    def __exit__(self, exception_type, value, traceback):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::ExceptionWrapper.__exit__"""
        if value is not None:
            if exception_type is _pyhailort.HailoRTStatusException:
                self._raise_indicative_status_exception(value)
            else:
                raise

    @staticmethod
    def create_exception_from_status(error_code):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::ExceptionWrapper.create_exception_from_status
        (the statuses this double raises; the rest as the real fallback)."""  # noqa: E501 - a source note stays on one line
        name = get_status_message(error_code)
        if name == "HAILO_TIMEOUT":
            return HailoRTTimeout("Received a timeout - hailort has failed because a timeout had occurred")
        if name == "HAILO_STREAM_ABORT":
            return HailoRTStreamAborted("Stream was aborted")
        if name == "HAILO_INVALID_OPERATION":
            return HailoRTInvalidOperationException("Invalid operation. See hailort.log for more information")
        if name == "HAILO_INVALID_ARGUMENT":
            return HailoRTInvalidArgumentException("Invalid argument. See hailort.log for more information")
        if name == "HAILO_NOT_FOUND":
            return HailoRTNotFoundException("Item not found. See hailort.log for more information")
        return HailoRTException("libhailort failed with error: {} ({})".format(error_code, name))

    def _raise_indicative_status_exception(self, libhailort_exception):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::ExceptionWrapper._raise_indicative_status_exception"""  # noqa: E501 - a source note stays on one line
        error_code = int(libhailort_exception.args[0])
        raise self.create_exception_from_status(error_code) from libhailort_exception


def get_status_message(status_code):
    """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::get_status_message"""
    status_str = _pyhailort.get_status_message(status_code)
    if status_str == "":
        raise ValueError("Value {} is not a valid status".format(status_code))
    return status_str


def _raise_status(status: int):
    """Double only: a C++ call failing with `status`, as pyhailort surfaces it (utils.hpp
    THROW_STATUS_ERROR inside ExceptionWrapper)."""
    with ExceptionWrapper():
        _pyhailort._throw_status(status)


HailoStreamInterface = _pyhailort.StreamInterface
HailoStreamDirection = _pyhailort.StreamDirection
HailoFormatFlags = _pyhailort.FormatFlags
HailoSchedulingAlgorithm = _pyhailort.SchedulingAlgorithm
HailoPowerMode = _pyhailort.PowerMode


# ---------------------------------------------------------------------------------------------
# What the chip + HailoRT's host transform deliver for one output in a given user format
# ---------------------------------------------------------------------------------------------

def _expand_format(model, name: str, user_format: HailoFormat) -> HailoFormat:
    """HailoRT 4.23: src/transform/transform.cpp::FrameOutputTransformContext::create (the user
    format with AUTO expanded by HailoRTDefaults::expand_auto_format, or by
    NmsOpMetadata::expand_output_format_autos_by_op_type for the NMS op's output), then the checks
    HailoRT makes when it builds the pipeline. Raises where HailoRT would; NotImplementedError
    where the double does not model a conversion HailoRT has."""
    fmt = user_format._copy()
    if model.nms is not None and name == model.nms.name:
        if fmt.order == FormatOrder.AUTO:
            fmt.order = FormatOrder.HAILO_NMS_BY_CLASS
        if fmt.type == FormatType.AUTO:
            fmt.type = FormatType.FLOAT32
        if fmt.order != FormatOrder.HAILO_NMS_BY_CLASS:
            raise NotImplementedError(f"double: NMS output {name!r} in order {fmt.order.name} is not modelled")
        if fmt.type != FormatType.FLOAT32:
            raise HailoRTInvalidArgumentException(
                f"Invalid argument. See hailort.log for more information (The given output format type "
                f"{fmt.type.name} is not supported, should be HAILO_FORMAT_TYPE_FLOAT32)")
        return fmt
    o = model.output(name)
    if fmt.type == FormatType.AUTO:
        fmt.type = o.format_type
    if fmt.order == FormatOrder.AUTO:
        fmt.order = getattr(FormatOrder, o.order)
    if fmt.type not in (o.format_type, FormatType.FLOAT32):
        raise NotImplementedError(f"double: {o.dtype} output {name!r} as {fmt.type.name} is not modelled")
    if fmt.order == FormatOrder.NCHW:
        # reorder_output_stream: NHCW -> NCHW, and NHW -> NCHW with one feature; nothing else.
        if o.device_order != "NHCW" and not (o.device_order == "NHW" and o.shape[2] == 1):
            raise HailoRTInvalidOperationException(
                f"Invalid operation. See hailort.log for more information (Unsupported output stream "
                f"transformation from hailo_format_order_t {o.device_order} to hailo_format_order_t NCHW)")
        if fmt.type == FormatType.FLOAT32 and o.per_channel and len({(q.qp_zp, q.qp_scale) for q in o.quant_infos()}) > 1:
            # FrameOutputTransformContext's constructor repeats each feature's quant info
            # dst_frame_size times for NCHW (a byte count, not the H*W elements of a channel plane).
            raise NotImplementedError(f"double: FLOAT32 NCHW output {name!r} with per-feature quantization: "
                                      f"HailoRT's per-feature dequantization is not per channel plane for NCHW")
        return fmt
    dense = ("NHWC", "FCR", "F8CR") if o.order in ("NHWC", "FCR", "F8CR") else (o.order,)
    if fmt.order.name not in dense:
        raise NotImplementedError(f"double: output {name!r} in order {fmt.order.name} is not modelled")
    return fmt


def _host_frame(model, name: str, fmt: HailoFormat, chip: numpy.ndarray) -> numpy.ndarray:
    """HailoRT 4.23: src/transform/transform.cpp::FrameOutputTransformContext::transform_inner

    One frame as HailoRT writes it for the user: raw integers, or dequantized float32
    (q - qp_zp) * qp_scale with the stream's quant infos (per channel for per-feature layers,
    FrameOutputTransformContext::quantize_stream); reordered channel first for NCHW."""
    if fmt.order == FormatOrder.HAILO_NMS_BY_CLASS:
        return chip
    o = model.output(name)
    host = chip
    if fmt.type == FormatType.FLOAT32:
        qis = o.quant_infos()
        zp = numpy.array([q.qp_zp for q in qis], dtype=numpy.float32)
        scale = numpy.array([q.qp_scale for q in qis], dtype=numpy.float32)
        host = (chip.astype(numpy.float32) - zp) * scale
    if fmt.order == FormatOrder.NCHW:
        host = numpy.ascontiguousarray(numpy.moveaxis(host, -1, 0))
    return host


def _frame_shape(model, name: str, fmt: HailoFormat) -> List[int]:
    """HailoRT 4.23: bindings/python/src/bindings_common.hpp::HailoRTBindingsCommon::get_pybind_shape"""
    if model.nms is not None and name == model.nms.name:
        return _pyhailort.pybind_shape(None, model.nms.nms_shape, fmt)
    return _pyhailort.pybind_shape(model.output(name).shape, None, fmt)


def _vstream_infos(model, direction: str) -> List[VStreamInfo]:
    """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::HEF.get_output_vstream_infos
    (for an NMS op only its output, with qp_scale 1 "in order to pass is_qp_valid check in
    pyhailort", NmsOpMetadata::get_output_vstream_info)."""
    if direction == "in":
        return [VStreamInfo(model.input_name, model.network_name, StreamDirection.H2D,
                            HailoFormat(FormatType.UINT8, FormatOrder.NHWC), QuantInfo(0.0, 1.0, 0.0, 255.0),
                            shape=model.input_shape)]
    if model.nms is not None:
        return [VStreamInfo(model.nms.name, model.network_name, StreamDirection.D2H,
                            HailoFormat(FormatType.FLOAT32, FormatOrder.HAILO_NMS_BY_CLASS),
                            QuantInfo(0.0, 1.0, 0.0, 0.0), nms_shape=model.nms.nms_shape)]
    return [VStreamInfo(o.name, model.network_name, StreamDirection.D2H,
                        HailoFormat(o.format_type, getattr(FormatOrder, o.order)), o.quant_info(), shape=o.shape)
            for o in model.outputs]


def _stream_infos(model, direction: str) -> List[StreamInfo]:
    """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::HEF.get_output_stream_infos"""
    if direction == "in":
        h, w, c = model.input_shape
        return [StreamInfo(model.input_name, StreamDirection.H2D, HailoFormat(FormatType.UINT8, FormatOrder.NHWC),
                           (h, w, c), QuantInfo(0.0, 1.0, 0.0, 255.0), 0, 1)]
    return [StreamInfo(o.name, StreamDirection.D2H, HailoFormat(o.format_type, getattr(FormatOrder, o.device_order)),
                       o.padded_shape, o.quant_info(), i + 1, numpy.dtype(o.dtype).itemsize)
            for i, o in enumerate(model.outputs)]


def _open_model(hef_source):
    """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::HEF.__init__
    (a path that does not open: HAILO_OPEN_FILE_FAILURE)."""
    if isinstance(hef_source, bytes):
        raise NotImplementedError("double: HEF from a buffer is not modelled; register a FakeModel and pass its path")
    if not isinstance(hef_source, str):
        raise ValueError("HEF can only be created from a file path (str) or a buffer (bytes)")
    model = _fake_device.lookup(hef_source)
    if model is None:
        _raise_status(_pyhailort.HAILO_OPEN_FILE_FAILURE)
    return model


# ---------------------------------------------------------------------------------------------
# HEF, ConfigureParams, VDevice, ConfiguredNetwork
# ---------------------------------------------------------------------------------------------

class ConfigureParams(object):
    """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::ConfigureParams"""

    @staticmethod
    def create_from_hef(hef, interface):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::ConfigureParams.create_from_hef"""
        return {name: _pyhailort.ConfigureParams() for name in hef.get_network_group_names()}


class HEF(object):
    """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::HEF"""

    def __init__(self, hef_source):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::HEF.__init__"""
        self._model = _open_model(hef_source)
        self._path = hef_source if isinstance(hef_source, str) else None

    @property
    def path(self):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::HEF.path"""
        return self._path

    def get_network_group_names(self):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::HEF.get_network_group_names"""
        return [self._model.name]

    def get_networks_names(self, network_group_name=None):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::HEF.get_networks_names"""
        return [self._model.network_name]

    def _check_name(self, name):
        """Double only: the names a one-network HEF answers to (HAILO_NOT_FOUND otherwise)."""
        if name not in (None, "", self._model.name, self._model.network_name):
            _raise_status(_pyhailort.HAILO_NOT_FOUND)

    def get_input_vstream_infos(self, name=None):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::HEF.get_input_vstream_infos"""
        self._check_name(name)
        return _vstream_infos(self._model, "in")

    def get_output_vstream_infos(self, name=None):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::HEF.get_output_vstream_infos"""
        self._check_name(name)
        return _vstream_infos(self._model, "out")

    def get_all_vstream_infos(self, name=None):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::HEF.get_all_vstream_infos"""
        return self.get_input_vstream_infos(name) + self.get_output_vstream_infos(name)

    def get_input_stream_infos(self, name=None):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::HEF.get_input_stream_infos"""
        self._check_name(name)
        return _stream_infos(self._model, "in")

    def get_output_stream_infos(self, name=None):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::HEF.get_output_stream_infos"""
        self._check_name(name)
        return _stream_infos(self._model, "out")

    def get_all_stream_infos(self, name=None):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::HEF.get_all_stream_infos"""
        return self.get_input_stream_infos(name) + self.get_output_stream_infos(name)

    def get_sorted_output_names(self, network_group_name=None):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::HEF.get_sorted_output_names"""
        return [i.name for i in _vstream_infos(self._model, "out")]

    def get_stream_names_from_vstream_name(self, vstream_name, network_group_name=None):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::HEF.get_stream_names_from_vstream_name"""
        m = self._model
        if m.nms is not None and vstream_name == m.nms.name:
            return [o.name for o in m.outputs]
        return [vstream_name]

    def get_vstream_names_from_stream_name(self, stream_name, network_group_name=None):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::HEF.get_vstream_names_from_stream_name"""
        m = self._model
        return [m.nms.name] if m.nms is not None else [stream_name]


class EmptyContextManager(object):
    """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::EmptyContextManager
    (what activate() returns when the scheduler is enabled, the VDevice default)."""

    def __enter__(self):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::EmptyContextManager.__enter__"""

    def __exit__(self, *args):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::EmptyContextManager.__exit__"""


class _ConfiguredNetworkGroupCpp(object):
    """HailoRT 4.23: bindings/python/src/network_group_api.cpp::ConfiguredNetworkGroupWrapper (what
    ConfiguredNetwork wraps)."""

    def __init__(self, model):
        """Double only: holds the model and the open OutputVStreams fed by InputVStream.send."""
        self.model = model
        self.output_holders = []

    def _make_params(self, infos, format_type, timeout_ms, queue_size):
        """Double only: HailoRTDefaults::get_vstreams_params (user_buffer_format order AUTO, type as asked)."""
        return {i.name: VStreamParams(HailoFormat(format_type, FormatOrder.AUTO, FormatFlags.NONE), timeout_ms, queue_size)
                for i in infos}

    def make_input_vstream_params(self, name, format_type, timeout_ms, queue_size):
        """HailoRT 4.23: bindings/python/src/network_group_api.cpp::ConfiguredNetworkGroupWrapper::make_input_vstream_params"""
        return self._make_params(_vstream_infos(self.model, "in"), format_type, timeout_ms, queue_size)

    def make_output_vstream_params(self, name, format_type, timeout_ms, queue_size):
        """HailoRT 4.23: bindings/python/src/network_group_api.cpp::ConfiguredNetworkGroupWrapper::make_output_vstream_params"""
        return self._make_params(_vstream_infos(self.model, "out"), format_type, timeout_ms, queue_size)

    def is_scheduled(self):
        """HailoRT 4.23: bindings/python/src/network_group_api.cpp::ConfiguredNetworkGroupWrapper::is_scheduled"""
        return True


class ConfiguredNetwork(object):
    """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::ConfiguredNetwork"""

    def __init__(self, configured_network):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::ConfiguredNetwork.__init__"""
        self._configured_network = configured_network

    @property
    def name(self):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::ConfiguredNetwork.name"""
        return self._configured_network.model.name

    def get_networks_names(self):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::ConfiguredNetwork.get_networks_names"""
        return [self._configured_network.model.network_name]

    def activate(self, network_group_params=None):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::ConfiguredNetwork.activate
        (scheduler enabled: a deprecated no-op returning EmptyContextManager)."""
        return EmptyContextManager()

    @staticmethod
    def create_params():
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::ConfiguredNetwork.create_params"""
        return None

    def get_sorted_output_names(self):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::ConfiguredNetwork.get_sorted_output_names"""  # noqa: E501 - a source note stays on one line
        return [i.name for i in _vstream_infos(self._configured_network.model, "out")]

    def get_output_shapes(self):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::ConfiguredNetwork.get_output_shapes"""
        return tuple(i.shape for i in self.get_output_vstream_infos())

    def get_input_vstream_infos(self, network_name=None):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::ConfiguredNetwork.get_input_vstream_infos"""  # noqa: E501 - a source note stays on one line
        return _vstream_infos(self._configured_network.model, "in")

    def get_output_vstream_infos(self, network_name=None):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::ConfiguredNetwork.get_output_vstream_infos"""  # noqa: E501 - a source note stays on one line
        return _vstream_infos(self._configured_network.model, "out")

    def get_all_vstream_infos(self, network_name=None):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::ConfiguredNetwork.get_all_vstream_infos"""
        return self.get_input_vstream_infos() + self.get_output_vstream_infos()

    def get_input_stream_infos(self, network_name=None):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::ConfiguredNetwork.get_input_stream_infos"""
        return _stream_infos(self._configured_network.model, "in")

    def get_output_stream_infos(self, network_name=None):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::ConfiguredNetwork.get_output_stream_infos"""  # noqa: E501 - a source note stays on one line
        return _stream_infos(self._configured_network.model, "out")

    def get_all_stream_infos(self, network_name=None):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::ConfiguredNetwork.get_all_stream_infos"""
        return self.get_input_stream_infos() + self.get_output_stream_infos()


class VDevice(object):
    """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::VDevice"""

    def __init__(self, params=None, *, device_ids=None):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::VDevice.__init__"""
        self._params = params if params is not None else VDevice.create_params()
        self._device_ids = device_ids
        self._loaded_network_groups = []
        self._released = False

    @staticmethod
    def create_params():
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::VDevice.create_params"""
        return _pyhailort.VDeviceParams.default()

    def __enter__(self):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::VDevice.__enter__"""
        return self

    def __exit__(self, *args):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::VDevice.__exit__"""
        self.release()
        return False

    def release(self):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::VDevice.release"""
        self._released = True

    def configure(self, hef, configure_params_by_name={}):  # noqa: B006 - the real signature
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::VDevice.configure"""
        if self._released:
            raise AttributeError("'NoneType' object has no attribute 'configure'")  # self._vdevice is None
        networks = [ConfiguredNetwork(_ConfiguredNetworkGroupCpp(hef._model))]
        self._loaded_network_groups.extend(networks)
        return networks

    @property
    def loaded_network_groups(self):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::VDevice.loaded_network_groups"""
        return self._loaded_network_groups

    def create_infer_model(self, hef_source, name=""):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::VDevice.create_infer_model"""
        if self._released:
            raise AttributeError("'NoneType' object has no attribute 'create_infer_model_from_file'")
        return InferModel(_InferModelCpp(_open_model(hef_source)), hef_source)


# ---------------------------------------------------------------------------------------------
# VStream params and pipelines
# ---------------------------------------------------------------------------------------------

def _make_params(cpp_method, format_type, timeout_ms, queue_size):
    """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::OutputVStreamParams.make
    (the defaults it fills in)."""
    if format_type is None:
        format_type = FormatType.AUTO
    if timeout_ms is None:
        timeout_ms = DEFAULT_VSTREAM_TIMEOUT_MS
    if queue_size is None:
        queue_size = DEFAULT_VSTREAM_QUEUE_SIZE
    return cpp_method("", format_type, timeout_ms, queue_size)


class InputVStreamParams(object):
    """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::InputVStreamParams"""

    @staticmethod
    def make(configured_network, quantized=None, format_type=None, timeout_ms=None, queue_size=None, network_name=None):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::InputVStreamParams.make"""
        return _make_params(configured_network._configured_network.make_input_vstream_params,
                            format_type, timeout_ms, queue_size)

    make_from_network_group = make


class OutputVStreamParams(object):
    """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::OutputVStreamParams"""

    @staticmethod
    def make(configured_network, quantized=None, format_type=None, timeout_ms=None, queue_size=None, network_name=None):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::OutputVStreamParams.make"""
        return _make_params(configured_network._configured_network.make_output_vstream_params,
                            format_type, timeout_ms, queue_size)

    make_from_network_group = make


class HailoRTTransformUtils(object):
    """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::HailoRTTransformUtils
    (the NMS conversions, written from their documented behaviour)."""

    @staticmethod
    def dequantize_output_buffer_in_place(raw_buffer, dst_dtype, elements_count, quant_info):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::HailoRTTransformUtils.dequantize_output_buffer_in_place"""  # noqa: E501 - a source note stays on one line
        if not _pyhailort.is_qp_valid(quant_info):
            raise HailoRTInvalidOperationException("quant_info is invalid as the model was compiled with multiple "
                                                   "quant_infos. Please compile again or provide a list of quant_infos.")
        raw_buffer[:elements_count] = ((raw_buffer[:elements_count].astype(numpy.float32) - quant_info.qp_zp)
                                       * quant_info.qp_scale).astype(raw_buffer.dtype)

    @staticmethod
    def output_raw_buffer_to_nms_format_single_frame(raw_output_buffer, number_of_classes, offset=0):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::HailoRTTransformUtils.output_raw_buffer_to_nms_format_single_frame
        (a list over classes of (n, 5) views into the buffer; an empty class is numpy.empty([0, 5]),
        float64, as pyhailort makes it)."""  # noqa: E501 - a source note stays on one line
        frame = []
        for _ in range(number_of_classes):
            n = int(raw_output_buffer[offset])
            offset += 1
            if n == 0:
                frame.append(numpy.empty([0, BBOX_PARAMS]))
            else:
                frame.append(raw_output_buffer[offset:offset + BBOX_PARAMS * n].reshape(n, BBOX_PARAMS))
                offset += BBOX_PARAMS * n
        return frame

    @staticmethod
    def output_raw_buffer_to_nms_format(raw_output_buffer, number_of_classes):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::HailoRTTransformUtils.output_raw_buffer_to_nms_format"""  # noqa: E501 - a source note stays on one line
        return [HailoRTTransformUtils.output_raw_buffer_to_nms_format_single_frame(f, number_of_classes)
                for f in raw_output_buffer]

    @staticmethod
    def output_raw_buffer_to_nms_tf_format_single_frame(raw_output_buffer, converted_output_frame, number_of_classes,
                                                        max_bboxes_per_class, quantized_empty_bbox, offset=0):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::HailoRTTransformUtils.output_raw_buffer_to_nms_tf_format_single_frame"""  # noqa: E501 - a source note stays on one line
        for k in range(number_of_classes):
            n = int(raw_output_buffer[offset])
            offset += 1
            if n:
                converted_output_frame[k][:n] = raw_output_buffer[offset:offset + BBOX_PARAMS * n].reshape(n, BBOX_PARAMS)
                offset += BBOX_PARAMS * n
            converted_output_frame[k][n:max_bboxes_per_class] = quantized_empty_bbox

    @staticmethod
    def output_raw_buffer_to_nms_tf_format(raw_output_buffer, shape, dtype, quantized_empty_bbox):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::HailoRTTransformUtils.output_raw_buffer_to_nms_tf_format
        ([N, classes, 5, max] from N flat frames, spaced classes * (5 * max + 1) apart)."""  # noqa: E501 - a source note stays on one line
        n_frames, classes, _, max_boxes = shape
        out = numpy.empty([n_frames, classes, max_boxes, BBOX_PARAMS], dtype=dtype)
        for f in range(n_frames):
            HailoRTTransformUtils.output_raw_buffer_to_nms_tf_format_single_frame(
                raw_output_buffer, out[f], classes, max_boxes, quantized_empty_bbox,
                f * classes * (BBOX_PARAMS * max_boxes + 1))
        return numpy.swapaxes(out, 2, 3)


def _empty_bbox(dtype, quant_info):
    """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::OutputLayerUtils.__init__
    (its _quantized_empty_bbox)."""
    empty = numpy.asarray([0] * BBOX_PARAMS, dtype=dtype)
    if empty.dtype == numpy.float32:
        HailoRTTransformUtils.dequantize_output_buffer_in_place(empty, empty.dtype, BBOX_PARAMS, quant_info)
    return empty


class _OutputPipeline(object):
    """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::OutputLayerUtils
    (one output's expanded user format, shape and dtype)."""

    def __init__(self, model, name, params):
        """Double only: resolves the user format once, as HailoRT does when it builds the pipeline."""
        user = params.user_buffer_format if params is not None else HailoFormat()
        self.model = model
        self.name = name
        self.format = _expand_format(model, name, user)
        self.shape = _frame_shape(model, name, self.format)
        self.dtype = _pyhailort.get_dtype(self.format.type)
        self.info = next(i for i in _vstream_infos(model, "out") if i.name == name)
        self.is_nms = self.format.order in (FormatOrder.HAILO_NMS_BY_CLASS, FormatOrder.HAILO_NMS_BY_SCORE)

    def write(self, chip_frame, dst):
        """Double only: writes one frame's host bytes into dst (HailoRT's transform output)."""
        host = numpy.ascontiguousarray(_host_frame(self.model, self.name, self.format, chip_frame), dtype=self.dtype)
        dst.reshape(-1)[...] = host.reshape(-1)


class InferVStreams(object):
    """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::InferVStreams"""

    def __init__(self, configured_net_group, input_vstreams_params, output_vstreams_params, tf_nms_format=False):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::InferVStreams.__init__"""
        self._configured_net_group = configured_net_group
        self._model = configured_net_group._configured_network.model
        self._input_vstreams_params = input_vstreams_params
        self._output_vstreams_params = output_vstreams_params
        self._tf_nms_format = tf_nms_format
        self._pipelines = None

    def __enter__(self):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::InferVStreams.__enter__"""
        names = [i.name for i in _vstream_infos(self._model, "out")]
        missing = [n for n in names if n not in self._output_vstreams_params]
        if missing:
            _raise_status(_pyhailort.HAILO_INVALID_ARGUMENT)
        self._pipelines = {n: _OutputPipeline(self._model, n, self._output_vstreams_params[n]) for n in names}
        return self

    def __exit__(self, *args):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::InferVStreams.__exit__"""
        self._pipelines = None
        return False

    def infer(self, input_data):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::InferVStreams.infer
        (output arrays [N, ...] allocated on every call; NMS outputs converted to pyhailort's list
        or tf form)."""
        if self._pipelines is None:
            raise HailoRTException("InferVStreams must be used as a context manager")
        if not isinstance(input_data, dict):
            input_data = {self._model.input_name: input_data}
        if set(input_data) != {self._model.input_name}:
            _raise_status(_pyhailort.HAILO_INVALID_ARGUMENT)
        data = numpy.asarray(input_data[self._model.input_name])
        if data.ndim != 4 or tuple(data.shape[1:]) != self._model.input_shape:
            raise HailoRTException(f"input shape {data.shape} != [N, {self._model.input_shape}]")
        batch_size = data.shape[0]
        output_buffers = {n: numpy.empty([batch_size] + list(p.shape), dtype=p.dtype) for n, p in self._pipelines.items()}
        for f in range(batch_size):
            chip = self._model.next_frame()
            for n, p in self._pipelines.items():
                p.write(chip[n], output_buffers[n][f])
        for n, p in self._pipelines.items():
            if not p.is_nms:
                continue
            nms_shape = p.info.nms_shape
            if self._tf_nms_format:
                shape = [batch_size, nms_shape.number_of_classes, BBOX_PARAMS, nms_shape.max_bboxes_per_class]
                output_buffers[n] = HailoRTTransformUtils.output_raw_buffer_to_nms_tf_format(
                    output_buffers[n].reshape(-1), shape, p.dtype, _empty_bbox(p.dtype, p.info.quant_info))
            else:
                output_buffers[n] = HailoRTTransformUtils.output_raw_buffer_to_nms_format(
                    output_buffers[n], nms_shape.number_of_classes)
        return output_buffers


class InputVStream(object):
    """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::InputVStream"""

    def __init__(self, holder, name):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::InputVStream.__init__"""
        self._holder = holder
        self._name = name

    @property
    def name(self):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::InputVStream.name"""
        return self._name

    @property
    def shape(self):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::InputVStream.shape"""
        return self._holder.model.input_shape

    @property
    def dtype(self):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::InputVStream.dtype"""
        return numpy.dtype(numpy.uint8)

    def send(self, input_data):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::InputVStream.send
        (each frame sent makes every open output vstream receive one frame)."""
        data = numpy.asarray(input_data)
        if data.ndim == 3:
            data = data[None]
        if tuple(data.shape[1:]) != self._holder.model.input_shape:
            raise HailoRTException(f"input shape {data.shape} != [N, {self._holder.model.input_shape}]")
        for _ in range(data.shape[0]):
            chip = self._holder.model.next_frame()
            for outputs in self._holder.output_holders:
                outputs._push(chip)

    def flush(self):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::InputVStream.flush"""


class InputVStreams(object):
    """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::InputVStreams"""

    def __init__(self, configured_network, input_vstreams_params):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::InputVStreams.__init__"""
        self._configured_network = configured_network
        self._input_vstreams_params = input_vstreams_params
        self._vstreams = {}

    def __enter__(self):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::InputVStreams.__enter__"""
        holder = self._configured_network._configured_network
        for name in self._input_vstreams_params:
            self._vstreams[name] = InputVStream(holder, name)
        return self

    def get(self, name=None):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::InputVStreams.get"""
        if name is None:
            if len(self._vstreams) != 1:
                raise HailoRTException("There is no single input vStream. You must give a name")
            name = list(self._vstreams)[0]
        return self._vstreams[name]

    def __exit__(self, *args):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::InputVStreams.__exit__"""
        return False

    def __iter__(self):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::InputVStreams.__iter__"""
        return iter(self._vstreams.values())


class OutputVStream(object):
    """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::OutputVStream"""

    def __init__(self, pipeline, tf_nms_format=False):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::OutputVStream.__init__"""
        self._pipeline = pipeline
        self._tf_nms_format = tf_nms_format
        self._queue = deque()

    @property
    def output_order(self):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::OutputVStream.output_order"""
        return self._pipeline.format.order

    @property
    def shape(self):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::OutputVStream.shape"""
        return tuple(self._pipeline.shape)

    @property
    def dtype(self):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::OutputVStream.dtype"""
        return self._pipeline.dtype

    @property
    def name(self):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::OutputVStream.name"""
        return self._pipeline.info.name

    @property
    def network_name(self):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::OutputVStream.network_name"""
        return self._pipeline.info.network_name

    @property
    def info(self):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::OutputVStream.info"""
        return self._pipeline.info

    def recv(self):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::OutputVStream.recv
        (one frame, no batch axis, in a buffer allocated for this call; NMS outputs converted as
        pyhailort does; nothing sent: HAILO_TIMEOUT)."""
        if not self._queue:
            _raise_status(_pyhailort.HAILO_TIMEOUT)
        chip = self._queue.popleft()
        result = numpy.empty(self._pipeline.shape, dtype=self._pipeline.dtype)
        self._pipeline.write(chip, result)
        if not self._pipeline.is_nms:
            return result
        nms_shape = self._pipeline.info.nms_shape
        if self._tf_nms_format:
            converted = numpy.empty([nms_shape.number_of_classes, nms_shape.max_bboxes_per_class, BBOX_PARAMS],
                                    dtype=self._pipeline.dtype)
            HailoRTTransformUtils.output_raw_buffer_to_nms_tf_format_single_frame(
                result, converted, nms_shape.number_of_classes, nms_shape.max_bboxes_per_class,
                _empty_bbox(self._pipeline.dtype, self._pipeline.info.quant_info))
            return numpy.swapaxes(converted, 1, 2)
        return HailoRTTransformUtils.output_raw_buffer_to_nms_format_single_frame(result, nms_shape.number_of_classes)

    def _push(self, chip):
        """Double only: the device delivered a frame to this vstream's queue."""
        self._queue.append(chip[self._pipeline.info.name])


class OutputVStreams(object):
    """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::OutputVStreams"""

    def __init__(self, configured_network, output_vstreams_params, tf_nms_format=False):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::OutputVStreams.__init__"""
        self._configured_network = configured_network
        self._output_vstreams_params = output_vstreams_params
        self._tf_nms_format = tf_nms_format
        self._vstreams = {}

    def __enter__(self):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::OutputVStreams.__enter__"""
        holder = self._configured_network._configured_network
        for name, params in self._output_vstreams_params.items():
            self._vstreams[name] = OutputVStream(_OutputPipeline(holder.model, name, params), self._tf_nms_format)
        holder.output_holders.append(self)
        return self

    def _push(self, chip):
        """Double only: the device delivered a frame to every vstream of this holder."""
        for v in self._vstreams.values():
            v._push(chip)

    def get(self, name=None):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::OutputVStreams.get"""
        if name is None:
            if len(self._vstreams) != 1:
                raise HailoRTException("There is no single output vStream. You must give a name")
            name = list(self._vstreams)[0]
        return self._vstreams[name]

    def clear(self):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::OutputVStreams.clear"""
        for v in self._vstreams.values():
            v._queue.clear()

    def __exit__(self, *args):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::OutputVStreams.__exit__"""
        holders = self._configured_network._configured_network.output_holders
        if self in holders:
            holders.remove(self)
        return False

    def __iter__(self):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::OutputVStreams.__iter__"""
        return iter(self._vstreams.values())


# ---------------------------------------------------------------------------------------------
# InferModel API
# ---------------------------------------------------------------------------------------------

class _InferModelCpp(object):
    """HailoRT 4.23: bindings/python/src/infer_model_api.cpp::InferModelWrapper (holds the formats
    the user sets per output; each InferStream starts with the vstream info's format)."""

    def __init__(self, model):
        """Double only: InferModelBase::create reads the HEF's vstream infos."""
        self.model = model
        self.formats = {i.name: i.format._copy() for i in _vstream_infos(model, "out")}
        self.input_format = HailoFormat(FormatType.UINT8, FormatOrder.NHWC)
        self.batch_size = 0


class _InferStreamCpp(object):
    """HailoRT 4.23: src/net_flow/pipeline/infer_model.cpp::InferModelBase::InferStream::Impl"""

    def __init__(self, cpp, name, is_input=False):
        """Double only: one edge of the InferModel."""
        self.cpp = cpp
        self.name = name
        self.is_input = is_input

    @property
    def fmt(self):
        """HailoRT 4.23: src/net_flow/pipeline/infer_model.cpp::InferModelBase::InferStream::Impl::format"""
        return self.cpp.input_format if self.is_input else self.cpp.formats[self.name]

    @property
    def info(self):
        """Double only: the vstream info the Impl holds (m_vstream_info)."""
        direction = "in" if self.is_input else "out"
        return next(i for i in _vstream_infos(self.cpp.model, direction) if i.name == self.name)

    def get_quant_infos(self):
        """HailoRT 4.23: src/net_flow/pipeline/infer_model.cpp::InferModelBase::InferStream::Impl::get_quant_infos
        ("TODO: Support quant infos vector": ONE entry, the vstream's quant_info, all zeros for a
        per-feature quantized output)."""
        return [self.info.quant_info]


class InferModel:
    """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::InferModel"""

    class InferStream:
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::InferModel.InferStream"""

        def __init__(self, infer_stream):
            """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::InferModel.InferStream.__init__"""
            self._infer_stream = infer_stream

        @property
        def name(self):
            """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::InferModel.InferStream.name"""
            return self._infer_stream.name

        @property
        def shape(self):
            """HailoRT 4.23: bindings/python/src/infer_model_api.cpp::InferModelInferStreamWrapper::shape
            (get_pybind_shape of the user format, a list)."""
            s = self._infer_stream
            if s.is_input:
                return list(s.cpp.model.input_shape)
            return list(_frame_shape(s.cpp.model, s.name, s.fmt))

        @property
        def format(self):
            """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::InferModel.InferStream.format
            (hailo_format_t by value: changing the copy changes nothing)."""
            return self._infer_stream.fmt._copy()

        def set_format_type(self, type):  # noqa: A002
            """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::InferModel.InferStream.set_format_type"""  # noqa: E501 - a source note stays on one line
            self._infer_stream.fmt.type = type

        def set_format_order(self, order):
            """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::InferModel.InferStream.set_format_order"""  # noqa: E501 - a source note stays on one line
            self._infer_stream.fmt.order = order

        @property
        def quant_infos(self):
            """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::InferModel.InferStream.quant_infos
            (InferStream::Impl::get_quant_infos: one entry)."""
            return self._infer_stream.get_quant_infos()

        @property
        def is_nms(self):
            """HailoRT 4.23: src/net_flow/pipeline/infer_model.cpp::InferModelBase::InferStream::Impl::is_nms"""
            return _pyhailort.is_nms_order(self._infer_stream.info.format.order)

        def set_nms_score_threshold(self, threshold):
            """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::InferModel.InferStream.set_nms_score_threshold"""  # noqa: E501 - a source note stays on one line

        def set_nms_iou_threshold(self, threshold):
            """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::InferModel.InferStream.set_nms_iou_threshold"""  # noqa: E501 - a source note stays on one line

        def set_nms_max_proposals_per_class(self, max_proposals):
            """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::InferModel.InferStream.set_nms_max_proposals_per_class"""  # noqa: E501 - a source note stays on one line

    def __init__(self, infer_model, hef_path):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::InferModel.__init__"""
        self._infer_model = infer_model
        self._hef_path = hef_path
        self._hef = None

    @property
    def hef(self):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::InferModel.hef
        (HEF(hef_path) on first use)."""
        if not self._hef:
            self._hef = HEF(self._hef_path)
        return self._hef

    def set_batch_size(self, batch_size):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::InferModel.set_batch_size"""
        self._infer_model.batch_size = batch_size

    @property
    def input_names(self):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::InferModel.input_names"""
        return [self._infer_model.model.input_name]

    @property
    def output_names(self):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::InferModel.output_names"""
        return [i.name for i in _vstream_infos(self._infer_model.model, "out")]

    @property
    def inputs(self):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::InferModel.inputs"""
        return [self.input()]

    @property
    def outputs(self):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::InferModel.outputs"""
        return [self.output(n) for n in self.output_names]

    def input(self, name=""):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::InferModel.input
        (an unknown name: HAILO_NOT_FOUND)."""
        if name not in ("", self._infer_model.model.input_name):
            _raise_status(_pyhailort.HAILO_NOT_FOUND)
        return self.InferStream(_InferStreamCpp(self._infer_model, self._infer_model.model.input_name, True))

    def output(self, name=""):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::InferModel.output
        (no name with several outputs: HAILO_INVALID_OPERATION; an unknown name: HAILO_NOT_FOUND)."""
        names = self.output_names
        if name == "":
            if len(names) != 1:
                _raise_status(_pyhailort.HAILO_INVALID_OPERATION)
            name = names[0]
        if name not in names:
            _raise_status(_pyhailort.HAILO_NOT_FOUND)
        return self.InferStream(_InferStreamCpp(self._infer_model, name))

    def configure(self):
        """HailoRT 4.23: src/net_flow/pipeline/infer_model.cpp::InferModelBase::configure (the
        async pipeline is built from the formats set now; later format changes do not apply)."""
        cpp = self._infer_model
        pipelines = {n: _OutputPipeline(cpp.model, n, VStreamParams(cpp.formats[n], 0, 0)) for n in self.output_names}
        return ConfiguredInferModel(_ConfiguredInferModelCpp(cpp.model, pipelines), self)


class _AsyncInferJobCpp(object):
    """HailoRT 4.23: src/net_flow/pipeline/infer_model.cpp::AsyncInferJobImpl"""

    def __init__(self, cim, frames, callback):
        """Double only: a job over `frames` frames; done when every frame completed."""
        self.cim = cim
        self.pending = frames
        self.status = _pyhailort.HAILO_SUCCESS
        self.callback = callback

    def frame_done(self, status):
        """HailoRT 4.23: src/net_flow/pipeline/infer_model.cpp::AsyncInferJobImpl::stream_done
        (the job completes with its first failure; the callback runs once all frames are done)."""
        if status != _pyhailort.HAILO_SUCCESS and self.status == _pyhailort.HAILO_SUCCESS:
            self.status = status
        self.pending -= 1
        if self.pending == 0 and self.callback is not None:
            self.callback(self.status)

    def wait(self, timeout):
        """HailoRT 4.23: bindings/python/src/infer_model_api.cpp::AsyncInferJobWrapper::wait (the
        pipeline completes frames in order: waiting for this job completes every frame before it)."""
        while self.pending and self.cim.inflight:
            self.cim.complete_oldest()
        if self.pending:
            _pyhailort._throw_status(_pyhailort.HAILO_TIMEOUT)
        if self.status != _pyhailort.HAILO_SUCCESS:
            _pyhailort._throw_status(self.status)


class _ConfiguredInferModelCpp(object):
    """HailoRT 4.23: src/net_flow/pipeline/infer_model.cpp::ConfiguredInferModelImpl (with
    AsyncInferRunnerImpl's bounded pipeline queue of get_async_queue_size() frames)."""

    def __init__(self, model, pipelines):
        """Double only: the model, its output pipelines and the frames in flight."""
        self.model = model
        self.pipelines = pipelines
        self.inflight = deque()  # (chip frame, {name: user output array}, job), oldest first
        self.pipeline_status = _pyhailort.HAILO_SUCCESS

    def get_async_queue_size(self):
        """HailoRT 4.23: src/net_flow/pipeline/infer_model.cpp::ConfiguredInferModelImpl::get_async_queue_size
        (ConfiguredNetworkGroup::infer_queue_size)."""
        return self.model.async_queue_size

    def complete_oldest(self):
        """Double only: the device finishes the oldest frame in flight; HailoRT's output transform
        runs and the binding's memcpy into the user's arrays (infer_model_api.cpp,
        cb_wrapper_with_output_copy) happens now."""
        chip, outs, job = self.inflight.popleft()
        for name, p in self.pipelines.items():
            p.write(chip[name], outs[name])
        job.frame_done(_pyhailort.HAILO_SUCCESS)

    def wait_for_async_ready(self, timeout, frames_count):
        """HailoRT 4.23: src/net_flow/pipeline/infer_model.cpp::ConfiguredInferModelImpl::wait_for_async_ready
        (waits until the pipeline can take frames_count frames; more than the queue holds never
        fits: HAILO_TIMEOUT, "the edge ... could not receive N transfer-requests")."""
        if frames_count > self.get_async_queue_size():
            _pyhailort._throw_status(_pyhailort.HAILO_TIMEOUT)
        while self.get_async_queue_size() - len(self.inflight) < frames_count:
            self.complete_oldest()

    def validate_bindings(self, bindings):
        """HailoRT 4.23: src/net_flow/pipeline/infer_model.cpp::ConfiguredInferModelImpl::validate_bindings
        (every input and output buffer of the frame size: HAILO_INVALID_OPERATION otherwise)."""
        need_in = int(numpy.prod(self.model.input_shape))
        buf = bindings.buffers.get(self.model.input_name)
        if buf is None or buf.nbytes != need_in:
            _pyhailort._throw_status(_pyhailort.HAILO_INVALID_OPERATION)
        for name, p in self.pipelines.items():
            buf = bindings.buffers.get(name)
            if buf is None or buf.nbytes != int(numpy.prod(p.shape)) * p.dtype.itemsize:
                _pyhailort._throw_status(_pyhailort.HAILO_INVALID_OPERATION)

    def run_async_one(self, bindings, job):
        """HailoRT 4.23: src/net_flow/pipeline/infer_model.cpp::ConfiguredInferModel::run_async
        (one binding: validate_bindings, then AsyncInferRunnerImpl::run refuses when the pipeline
        was shut down or a queue is full, HAILO_QUEUE_IS_FULL; any failure shuts the model down)."""
        try:
            self.validate_bindings(bindings)
            if self.pipeline_status != _pyhailort.HAILO_SUCCESS:
                _pyhailort._throw_status(self.pipeline_status)
            if len(self.inflight) >= self.get_async_queue_size():
                _pyhailort._throw_status(_pyhailort.HAILO_QUEUE_IS_FULL)
        except _pyhailort.HailoRTStatusException:
            self.shutdown()
            raise
        outs = {name: bindings.buffers[name] for name in self.pipelines}
        self.inflight.append((self.model.next_frame(), outs, job))

    def run_async(self, bindings_list, callback):
        """HailoRT 4.23: src/net_flow/pipeline/infer_model.cpp::ConfiguredInferModel::run_async
        (the vector overload: one run_async per binding, TRY: the first failure returns, frames
        already pushed stay in the pipeline)."""
        job = _AsyncInferJobCpp(self, len(bindings_list), callback)
        for b in bindings_list:
            self.run_async_one(b, job)
        return job

    def shutdown(self):
        """HailoRT 4.23: src/net_flow/pipeline/infer_model.cpp::ConfiguredInferModelImpl::shutdown
        (AsyncPipeline::shutdown: the pipeline status becomes HAILO_STREAM_ABORT, frames in flight
        are dequeued with it and never written)."""
        self.pipeline_status = _pyhailort.HAILO_STREAM_ABORT
        while self.inflight:
            _, _, job = self.inflight.popleft()
            job.frame_done(_pyhailort.HAILO_STREAM_ABORT)


class _BindingsCpp(object):
    """HailoRT 4.23: bindings/python/src/infer_model_api.cpp::ConfiguredInferModelBindingsWrapper"""

    def __init__(self):
        """Double only: name -> the array set_buffer bound."""
        self.buffers = {}


class AsyncInferCompletionInfo:
    """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::AsyncInferCompletionInfo"""

    def __init__(self, exception):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::AsyncInferCompletionInfo.__init__"""
        self._exception = exception

    @property
    def exception(self):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::AsyncInferCompletionInfo.exception"""
        return self._exception


class AsyncInferJob:
    """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::AsyncInferJob"""

    def __init__(self, job):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::AsyncInferJob.__init__"""
        self._job = job

    def wait(self, timeout_ms):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::AsyncInferJob.wait
        (HailoRTTimeout when the job does not finish; the job's failure status otherwise, e.g.
        HailoRTStreamAborted for frames the shutdown dropped)."""
        with ExceptionWrapper():
            self._job.wait(timedelta(milliseconds=timeout_ms))


class ConfiguredInferModel:
    """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::ConfiguredInferModel"""

    class Bindings:
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::ConfiguredInferModel.Bindings"""

        class InferStream:
            """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::ConfiguredInferModel.Bindings.InferStream"""  # noqa: E501 - a source note stays on one line

            def __init__(self, cpp, name, nms_info=None):
                """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::ConfiguredInferModel.Bindings.InferStream.__init__"""  # noqa: E501 - a source note stays on one line
                self._cpp = cpp
                self._name = name
                self._buffer = None
                self._nms_info = nms_info

            def set_buffer(self, buffer):
                """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::ConfiguredInferModel.Bindings.InferStream.set_buffer
                (a C-contiguous array, bound by pointer: HailoRT writes into this very array)."""  # noqa: E501 - a source note stays on one line
                if not buffer.flags.c_contiguous:
                    raise HailoRTException("Buffer must be C_CONTIGUOUS")
                self._cpp.buffers[self._name] = buffer
                self._buffer = buffer

            def get_buffer(self, tf_format=False):
                """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::ConfiguredInferModel.Bindings.InferStream.get_buffer
                (the bound array; for an NMS output pyhailort's list form, or tf form with
                tf_format=True; tf_format=None: the raw buffer)."""  # noqa: E501 - a source note stays on one line
                buffer = self._buffer
                if tf_format is None or self._nms_info is None:
                    return buffer
                classes, max_boxes, quant_info = self._nms_info
                if tf_format:
                    return HailoRTTransformUtils.output_raw_buffer_to_nms_tf_format(
                        buffer.reshape(-1), [1, classes, BBOX_PARAMS, max_boxes], numpy.float32,
                        _empty_bbox(numpy.float32, quant_info))[0]
                return HailoRTTransformUtils.output_raw_buffer_to_nms_format_single_frame(buffer, classes)

        def __init__(self, bindings, input_names, output_names, nms_infos):
            """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::ConfiguredInferModel.Bindings.__init__"""  # noqa: E501 - a source note stays on one line
            self._bindings = bindings
            self._inputs = {}
            self._outputs = {}
            self._input_names = input_names
            self._output_names = output_names
            self._nms_infos = nms_infos

        def input(self, name=""):
            """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::ConfiguredInferModel.Bindings.input"""
            if name == "" and len(self._input_names) == 1:
                name = self._input_names[0]
            if name not in self._input_names:
                _raise_status(_pyhailort.HAILO_NOT_FOUND)
            if name not in self._inputs:
                self._inputs[name] = self.InferStream(self._bindings, name)
            return self._inputs[name]

        def output(self, name=""):
            """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::ConfiguredInferModel.Bindings.output"""
            if name == "" and len(self._output_names) == 1:
                name = self._output_names[0]
            if name not in self._output_names:
                _raise_status(_pyhailort.HAILO_NOT_FOUND)
            if name not in self._outputs:
                self._outputs[name] = self.InferStream(self._bindings, name, self._nms_infos.get(name))
            return self._outputs[name]

        def get(self):
            """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::ConfiguredInferModel.Bindings.get"""
            return self._bindings

    def __init__(self, configured_infer_model, infer_model):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::ConfiguredInferModel.__init__
        (keeps the InferModel as _infer_model; there is no public accessor)."""
        self._configured_infer_model = configured_infer_model
        self._input_names = infer_model.input_names
        self._output_names = infer_model.output_names
        self._infer_model = infer_model
        self._buffer_guards = deque()

    def __enter__(self):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::ConfiguredInferModel.__enter__"""
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::ConfiguredInferModel.__exit__
        (drops the C++ object: every later call fails with AttributeError on None)."""
        self._configured_infer_model = None

    def activate(self):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::ConfiguredInferModel.activate"""

    def deactivate(self):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::ConfiguredInferModel.deactivate"""

    def _get_nms_infos(self):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::ConfiguredInferModel._get_nms_infos"""
        infos = {}
        for name in self._output_names:
            output = self._infer_model.output(name)
            if output.format.order == FormatOrder.HAILO_NMS_BY_CLASS:
                info = next(i for i in self._infer_model.hef.get_output_vstream_infos() if i.name == name)
                infos[name] = (info.nms_shape.number_of_classes, info.nms_shape.max_bboxes_per_class,
                               output.quant_infos[0])
        return infos

    def create_bindings(self, input_buffers=None, output_buffers=None):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::ConfiguredInferModel.create_bindings"""
        if self._configured_infer_model is None:
            raise AttributeError("'NoneType' object has no attribute 'create_bindings'")
        bindings = self.Bindings(_BindingsCpp(), self._input_names, self._output_names, self._get_nms_infos())
        for name, buffer in (input_buffers or {}).items():
            bindings.input(name).set_buffer(buffer)
        for name, buffer in (output_buffers or {}).items():
            bindings.output(name).set_buffer(buffer)
        return bindings

    def wait_for_async_ready(self, timeout_ms=1000, frames_count=1):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::ConfiguredInferModel.wait_for_async_ready
        ("Calling this function with frames_count greater than get_async_queue_size will timeout":
        HailoRTTimeout)."""
        with ExceptionWrapper():
            self._configured_infer_model.wait_for_async_ready(timedelta(milliseconds=timeout_ms), frames_count)

    def get_async_queue_size(self):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::ConfiguredInferModel.get_async_queue_size"""  # noqa: E501 - a source note stays on one line
        with ExceptionWrapper():
            return self._configured_infer_model.get_async_queue_size()

    def run(self, bindings, timeout):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::ConfiguredInferModel.run
        (run_async(bindings) then job.wait(timeout): no wait_for_async_ready, so more bindings than
        the queue holds fail with HAILO_QUEUE_IS_FULL)."""
        with ExceptionWrapper():
            job = self.run_async(bindings)
            job.wait(timeout)

    def run_async(self, bindings, callback=None):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::ConfiguredInferModel.run_async
        (a list of Bindings, pushed one by one; see _ConfiguredInferModelCpp.run_async_one for what
        refuses a frame)."""
        buffers = []
        for b in bindings:  # a single Bindings is not iterable: TypeError, as in pyhailort
            for name in self._input_names:
                buffers.append(b.input(name).get_buffer())
            for name in self._output_names:
                buffers.append(b.output(name).get_buffer(None))
        self._buffer_guards.append(buffers)

        def callback_wrapper(error_code):
            cpp_cb_exception = ExceptionWrapper.create_exception_from_status(error_code) if error_code else None
            if callback:
                callback(completion_info=AsyncInferCompletionInfo(cpp_cb_exception))
            self._buffer_guards.popleft()

        with ExceptionWrapper():
            cpp_job = self._configured_infer_model.run_async([b.get() for b in bindings], callback_wrapper)
        return AsyncInferJob(cpp_job)

    def shutdown(self):
        """HailoRT 4.23: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::ConfiguredInferModel.shutdown"""
        with ExceptionWrapper():
            return self._configured_infer_model.shutdown()
