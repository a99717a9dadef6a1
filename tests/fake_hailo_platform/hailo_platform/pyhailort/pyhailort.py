"""Test double of `hailo_platform.pyhailort.pyhailort` (HailoRT's Python layer), driven by the
descriptions in `hailo_platform._fake_device` instead of a device.

Mirrors the public surface hailo-decode uses, as in hailo-ai/hailort
`hailort/libhailort/bindings/python/platform/hailo_platform/pyhailort/pyhailort.py` and the C++
bindings (`bindings/python/src/{vstream_api,infer_model_api,bindings_common}.{cpp,hpp}`):

- HEF(path): get_network_group_names, get_networks_names, get_{input,output}_vstream_infos,
  get_{input,output}_stream_infos, get_sorted_output_names, path.
- VDevice(params=None, *, device_ids=None): configure(hef, params) -> [ConfiguredNetwork],
  create_infer_model(hef_source, name="") -> InferModel; scheduler ROUND_ROBIN by default.
- {Input,Output}VStreamParams.make(network_group, quantized=None, format_type=None, timeout_ms=None,
  queue_size=None, network_name=None) -> {name: VStreamParams}, user_buffer_format order AUTO.
- InferVStreams(network_group, input_params, output_params, tf_nms_format=False): context manager;
  infer(inputs) -> {name: ndarray [N, ...]} allocated fresh on every call; NMS outputs as a list
  (per frame) of lists (per class) of (n, 5) arrays, or [N, classes, 5, max] with tf_nms_format.
- OutputVStreams / OutputVStream.recv(): one frame, no batch axis, a new buffer every call.
- InferModel: output(name) / outputs / output_names; InferStream .shape (list), .format (a copy),
  .set_format_type(), .quant_infos, .is_nms; configure() -> ConfiguredInferModel with
  create_bindings(input_buffers=None, output_buffers=None), run(list_of_bindings, timeout_ms),
  run_async(list_of_bindings, callback=None) -> AsyncInferJob; the caller's output arrays are the
  destination (HailoRT memcpy's into them after the job).
"""

from __future__ import annotations

from collections import deque
from typing import List

import numpy

from . import _pyhailort
from ._pyhailort import (BBOX_PARAMS, FormatFlags, FormatOrder, FormatType, HailoFormat, QuantInfo,  # noqa: F401
                         StreamDirection, VStreamInfo, StreamInfo, VStreamParams)
from .. import _fake_device

DEFAULT_VSTREAM_TIMEOUT_MS = 10000
DEFAULT_VSTREAM_QUEUE_SIZE = 2


class HailoRTException(Exception):
    pass


class HailoRTTimeout(HailoRTException):
    pass


class HailoRTStreamAborted(HailoRTException):
    pass


class HailoRTStreamAbortedByUser(HailoRTException):
    pass


class HailoRTInvalidOperationException(HailoRTException):
    pass


class HailoRTInvalidArgumentException(HailoRTException):
    pass


class HailoRTNotFoundException(HailoRTException):
    pass


class HailoRTInvalidHEFException(HailoRTException):
    pass


class HailoCommunicationClosedException(HailoRTException):
    pass


HailoStreamInterface = _pyhailort.StreamInterface
HailoStreamDirection = _pyhailort.StreamDirection
HailoFormatFlags = _pyhailort.FormatFlags
HailoSchedulingAlgorithm = _pyhailort.SchedulingAlgorithm
HailoPowerMode = _pyhailort.PowerMode


def _invalid_argument(msg: str) -> HailoRTInvalidArgumentException:
    return HailoRTInvalidArgumentException(f"Invalid argument. See hailort.log for more information ({msg})")


# ---------------------------------------------------------------------------------------------
# What the chip + HailoRT's host transform deliver for one output in a given user format
# ---------------------------------------------------------------------------------------------

def _expand_format(model, name: str, user_format: HailoFormat) -> HailoFormat:
    """HailoRTDefaults::expand_auto_format / NmsOpMetadata::expand_output_format_autos_by_op_type,
    then the format validation HailoRT does when it builds the pipeline."""
    fmt = user_format.copy()
    if model.nms is not None and name == model.nms.name:
        if fmt.order == FormatOrder.AUTO:
            fmt.order = FormatOrder.HAILO_NMS_BY_CLASS
        if fmt.type == FormatType.AUTO:
            fmt.type = FormatType.FLOAT32
        if fmt.order != FormatOrder.HAILO_NMS_BY_CLASS:
            raise _invalid_argument(f"The given output format order {fmt.order.name} is not supported by this double")
        if fmt.type != FormatType.FLOAT32:
            raise _invalid_argument(f"The given output format type {fmt.type.name} is not supported, "
                                    f"should be HAILO_FORMAT_TYPE_FLOAT32")
        return fmt
    o = model.output(name)
    if fmt.type == FormatType.AUTO:
        fmt.type = o.format_type
    if fmt.order == FormatOrder.AUTO:
        fmt.order = getattr(FormatOrder, o.order)
    if fmt.type not in (o.format_type, FormatType.FLOAT32):
        raise NotImplementedError(f"double: {o.dtype} output {name!r} as {fmt.type.name} is not modelled")
    dense = ("NHWC", "FCR", "F8CR") if o.order in ("NHWC", "FCR", "F8CR") else (o.order,)
    if fmt.order.name not in dense:
        raise NotImplementedError(f"double: output {name!r} in order {fmt.order.name} is not modelled")
    return fmt


def _host_frame(model, name: str, fmt: HailoFormat, chip: numpy.ndarray) -> numpy.ndarray:
    """One frame as HailoRT writes it for the user: raw integers, or dequantized float32
    (q - qp_zp) * qp_scale (per channel when the HEF has per-feature quantization)."""
    if fmt.order == FormatOrder.HAILO_NMS_BY_CLASS:
        return chip
    o = model.output(name)
    if fmt.type == FormatType.FLOAT32:
        qis = o.quant_infos()
        zp = numpy.array([q.qp_zp for q in qis], dtype=numpy.float32)
        scale = numpy.array([q.qp_scale for q in qis], dtype=numpy.float32)
        return (chip.astype(numpy.float32) - zp) * scale
    return chip


def _frame_shape(model, name: str, fmt: HailoFormat) -> List[int]:
    if model.nms is not None and name == model.nms.name:
        return _pyhailort.pybind_shape(None, model.nms.nms_shape, fmt)
    return _pyhailort.pybind_shape(model.output(name).shape, None, fmt)


def _vstream_infos(model, direction: str) -> List[VStreamInfo]:
    if direction == "in":
        return [VStreamInfo(model.input_name, model.network_name, StreamDirection.H2D,
                            HailoFormat(FormatType.UINT8, FormatOrder.NHWC), QuantInfo(0.0, 1.0, 0.0, 255.0),
                            shape=model.input_shape)]
    if model.nms is not None:
        # NmsOpMetadata::get_output_vstream_info: the op's output only; qp_scale = 1 "in order to
        # pass is_qp_valid check in pyhailort".
        return [VStreamInfo(model.nms.name, model.network_name, StreamDirection.D2H,
                            HailoFormat(FormatType.FLOAT32, FormatOrder.HAILO_NMS_BY_CLASS),
                            QuantInfo(0.0, 1.0, 0.0, 0.0), nms_shape=model.nms.nms_shape)]
    return [VStreamInfo(o.name, model.network_name, StreamDirection.D2H,
                        HailoFormat(o.format_type, getattr(FormatOrder, o.order)), o.quant_info(), shape=o.shape)
            for o in model.outputs]


def _stream_infos(model, direction: str) -> List[StreamInfo]:
    if direction == "in":
        h, w, c = model.input_shape
        return [StreamInfo(model.input_name, StreamDirection.H2D, HailoFormat(FormatType.UINT8, FormatOrder.NHWC),
                           (h, w, c), QuantInfo(0.0, 1.0, 0.0, 255.0), 0, 1)]
    return [StreamInfo(o.name, StreamDirection.D2H, HailoFormat(o.format_type, getattr(FormatOrder, o.device_order)),
                       o.padded_shape, o.quant_info(), i + 1, numpy.dtype(o.dtype).itemsize)
            for i, o in enumerate(model.outputs)]


def _open_model(hef_source):
    if isinstance(hef_source, bytes):
        raise NotImplementedError("double: HEF from a buffer is not modelled; register a FakeModel and pass its path")
    if not isinstance(hef_source, str):
        raise ValueError("HEF can only be created from a file path (str) or a buffer (bytes)")
    model = _fake_device.lookup(hef_source)
    if model is None:
        raise HailoRTException("libhailort failed with error: 13 (HAILO_OPEN_FILE_FAILURE)")
    return model


# ---------------------------------------------------------------------------------------------
# HEF, ConfigureParams, VDevice, ConfiguredNetwork
# ---------------------------------------------------------------------------------------------

class ConfigureParams(object):
    @staticmethod
    def create_from_hef(hef, interface):
        """{network_group_name: ConfigureParams} with default values."""
        return {name: _pyhailort.ConfigureParams() for name in hef.get_network_group_names()}


class HEF(object):
    """Python representation of the Hailo Executable Format."""

    def __init__(self, hef_source):
        self._model = _open_model(hef_source)
        self._path = hef_source if isinstance(hef_source, str) else None

    @property
    def path(self):
        return self._path

    def get_network_group_names(self):
        return [self._model.name]

    def get_networks_names(self, network_group_name=None):
        return [self._model.network_name]

    def _check_name(self, name):
        if name not in (None, "", self._model.name, self._model.network_name):
            raise HailoRTNotFoundException("Item not found. See hailort.log for more information")

    def get_input_vstream_infos(self, name=None):
        self._check_name(name)
        return _vstream_infos(self._model, "in")

    def get_output_vstream_infos(self, name=None):
        self._check_name(name)
        return _vstream_infos(self._model, "out")

    def get_all_vstream_infos(self, name=None):
        return self.get_input_vstream_infos(name) + self.get_output_vstream_infos(name)

    def get_input_stream_infos(self, name=None):
        self._check_name(name)
        return _stream_infos(self._model, "in")

    def get_output_stream_infos(self, name=None):
        self._check_name(name)
        return _stream_infos(self._model, "out")

    def get_all_stream_infos(self, name=None):
        return self.get_input_stream_infos(name) + self.get_output_stream_infos(name)

    def get_sorted_output_names(self, network_group_name=None):
        return [i.name for i in _vstream_infos(self._model, "out")]

    def get_stream_names_from_vstream_name(self, vstream_name, network_group_name=None):
        m = self._model
        if m.nms is not None and vstream_name == m.nms.name:
            return [o.name for o in m.outputs]
        return [vstream_name]

    def get_vstream_names_from_stream_name(self, stream_name, network_group_name=None):
        m = self._model
        return [m.nms.name] if m.nms is not None else [stream_name]


class EmptyContextManager(object):
    """What activate() returns when the scheduler is enabled (the VDevice default)."""

    def __enter__(self):
        pass

    def __exit__(self, *args):
        pass


class _ConfiguredNetworkGroupCpp(object):
    """Stands for _pyhailort.ConfiguredNetworkGroup (what ConfiguredNetwork wraps)."""

    def __init__(self, model):
        self.model = model
        self.output_holders = []  # open OutputVStreams pipelines, fed by InputVStream.send

    def _make_params(self, infos, format_type, timeout_ms, queue_size):
        return {i.name: VStreamParams(HailoFormat(format_type, FormatOrder.AUTO, FormatFlags.NONE), timeout_ms, queue_size)
                for i in infos}

    def make_input_vstream_params(self, name, format_type, timeout_ms, queue_size):
        return self._make_params(_vstream_infos(self.model, "in"), format_type, timeout_ms, queue_size)

    def make_output_vstream_params(self, name, format_type, timeout_ms, queue_size):
        return self._make_params(_vstream_infos(self.model, "out"), format_type, timeout_ms, queue_size)

    def is_scheduled(self):
        return True


class ConfiguredNetwork(object):
    """Represents a network group loaded to the device."""

    def __init__(self, configured_network):
        self._configured_network = configured_network

    @property
    def name(self):
        return self._configured_network.model.name

    def get_networks_names(self):
        return [self._configured_network.model.network_name]

    def activate(self, network_group_params=None):
        return EmptyContextManager()  # scheduler enabled: activation is a deprecated no-op

    @staticmethod
    def create_params():
        return None

    def get_sorted_output_names(self):
        return [i.name for i in _vstream_infos(self._configured_network.model, "out")]

    def get_output_shapes(self):
        return tuple(i.shape for i in self.get_output_vstream_infos())

    def get_input_vstream_infos(self, network_name=None):
        return _vstream_infos(self._configured_network.model, "in")

    def get_output_vstream_infos(self, network_name=None):
        return _vstream_infos(self._configured_network.model, "out")

    def get_all_vstream_infos(self, network_name=None):
        return self.get_input_vstream_infos() + self.get_output_vstream_infos()

    def get_input_stream_infos(self, network_name=None):
        return _stream_infos(self._configured_network.model, "in")

    def get_output_stream_infos(self, network_name=None):
        return _stream_infos(self._configured_network.model, "out")

    def get_all_stream_infos(self, network_name=None):
        return self.get_input_stream_infos() + self.get_output_stream_infos()


class VDevice(object):
    """Hailo virtual device representation."""

    def __init__(self, params=None, *, device_ids=None):
        self._params = params if params is not None else VDevice.create_params()
        self._device_ids = device_ids
        self._loaded_network_groups = []
        self._released = False

    @staticmethod
    def create_params():
        return _pyhailort.VDeviceParams.default()

    def __enter__(self):
        return self

    def __exit__(self, *args):
        self.release()
        return False

    def release(self):
        self._released = True

    def configure(self, hef, configure_params_by_name={}):  # noqa: B006 - the real signature
        if self._released:
            raise HailoRTException("VDevice was released")
        networks = [ConfiguredNetwork(_ConfiguredNetworkGroupCpp(hef._model))]
        self._loaded_network_groups.extend(networks)
        return networks

    @property
    def loaded_network_groups(self):
        return self._loaded_network_groups

    def create_infer_model(self, hef_source, name=""):
        if self._released:
            raise HailoRTException("VDevice was released")
        return InferModel(_InferModelCpp(_open_model(hef_source)), hef_source)


# ---------------------------------------------------------------------------------------------
# VStream params and pipelines
# ---------------------------------------------------------------------------------------------

def _make_params(cpp_method, format_type, timeout_ms, queue_size):
    if format_type is None:
        format_type = FormatType.AUTO
    if timeout_ms is None:
        timeout_ms = DEFAULT_VSTREAM_TIMEOUT_MS
    if queue_size is None:
        queue_size = DEFAULT_VSTREAM_QUEUE_SIZE
    return cpp_method("", format_type, timeout_ms, queue_size)


class InputVStreamParams(object):
    @staticmethod
    def make(configured_network, quantized=None, format_type=None, timeout_ms=None, queue_size=None, network_name=None):
        return _make_params(configured_network._configured_network.make_input_vstream_params,
                            format_type, timeout_ms, queue_size)

    make_from_network_group = make


class OutputVStreamParams(object):
    @staticmethod
    def make(configured_network, quantized=None, format_type=None, timeout_ms=None, queue_size=None, network_name=None):
        return _make_params(configured_network._configured_network.make_output_vstream_params,
                            format_type, timeout_ms, queue_size)

    make_from_network_group = make


class HailoRTTransformUtils(object):
    """pyhailort's NMS conversions, written out from their documented behaviour."""

    @staticmethod
    def dequantize_output_buffer_in_place(raw_buffer, dst_dtype, elements_count, quant_info):
        if not _pyhailort.is_qp_valid(quant_info):
            raise HailoRTInvalidOperationException("quant_info is invalid as the model was compiled with multiple "
                                                   "quant_infos. Please compile again or provide a list of quant_infos.")
        raw_buffer[:elements_count] = ((raw_buffer[:elements_count].astype(numpy.float32) - quant_info.qp_zp)
                                       * quant_info.qp_scale).astype(raw_buffer.dtype)

    @staticmethod
    def output_raw_buffer_to_nms_format_single_frame(raw_output_buffer, number_of_classes, offset=0):
        """A list over classes of (n, 5) views into the buffer; an empty class is numpy.empty([0, 5])
        (float64, as pyhailort makes it)."""
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
        return [HailoRTTransformUtils.output_raw_buffer_to_nms_format_single_frame(f, number_of_classes)
                for f in raw_output_buffer]

    @staticmethod
    def output_raw_buffer_to_nms_tf_format_single_frame(raw_output_buffer, converted_output_frame, number_of_classes,
                                                        max_bboxes_per_class, quantized_empty_bbox, offset=0):
        for k in range(number_of_classes):
            n = int(raw_output_buffer[offset])
            offset += 1
            if n:
                converted_output_frame[k][:n] = raw_output_buffer[offset:offset + BBOX_PARAMS * n].reshape(n, BBOX_PARAMS)
                offset += BBOX_PARAMS * n
            converted_output_frame[k][n:max_bboxes_per_class] = quantized_empty_bbox

    @staticmethod
    def output_raw_buffer_to_nms_tf_format(raw_output_buffer, shape, dtype, quantized_empty_bbox):
        """[N, classes, 5, max] from N flat frames (frames spaced classes * (5 * max + 1) apart)."""
        n_frames, classes, _, max_boxes = shape
        out = numpy.empty([n_frames, classes, max_boxes, BBOX_PARAMS], dtype=dtype)
        for f in range(n_frames):
            HailoRTTransformUtils.output_raw_buffer_to_nms_tf_format_single_frame(
                raw_output_buffer, out[f], classes, max_boxes, quantized_empty_bbox,
                f * classes * (BBOX_PARAMS * max_boxes + 1))
        return numpy.swapaxes(out, 2, 3)


def _empty_bbox(dtype, quant_info):
    empty = numpy.asarray([0] * BBOX_PARAMS, dtype=dtype)
    if empty.dtype == numpy.float32:
        HailoRTTransformUtils.dequantize_output_buffer_in_place(empty, empty.dtype, BBOX_PARAMS, quant_info)
    return empty


class _OutputPipeline(object):
    """One output's expanded user format, shape and dtype (OutputLayerUtils in pyhailort)."""

    def __init__(self, model, name, params):
        user = params.user_buffer_format if params is not None else HailoFormat()
        self.model = model
        self.name = name
        self.format = _expand_format(model, name, user)
        self.shape = _frame_shape(model, name, self.format)
        self.dtype = _pyhailort.get_dtype(self.format.type)
        self.info = next(i for i in _vstream_infos(model, "out") if i.name == name)
        self.is_nms = self.format.order in (FormatOrder.HAILO_NMS_BY_CLASS, FormatOrder.HAILO_NMS_BY_SCORE)

    def write(self, chip_frame, dst):
        host = _host_frame(self.model, self.name, self.format, chip_frame)
        dst.reshape(-1)[...] = host.reshape(-1)


class InferVStreams(object):
    """Pipeline that allows to call blocking inference, to be used as a context manager."""

    def __init__(self, configured_net_group, input_vstreams_params, output_vstreams_params, tf_nms_format=False):
        self._configured_net_group = configured_net_group
        self._model = configured_net_group._configured_network.model
        self._input_vstreams_params = input_vstreams_params
        self._output_vstreams_params = output_vstreams_params
        self._tf_nms_format = tf_nms_format
        self._pipelines = None

    def __enter__(self):
        names = [i.name for i in _vstream_infos(self._model, "out")]
        missing = [n for n in names if n not in self._output_vstreams_params]
        if missing:
            raise _invalid_argument(f"no output vstream params for {missing}")
        self._pipelines = {n: _OutputPipeline(self._model, n, self._output_vstreams_params[n]) for n in names}
        return self

    def __exit__(self, *args):
        self._pipelines = None
        return False

    def infer(self, input_data):
        if self._pipelines is None:
            raise HailoRTException("InferVStreams must be used as a context manager")
        if not isinstance(input_data, dict):
            input_data = {self._model.input_name: input_data}
        if set(input_data) != {self._model.input_name}:
            raise _invalid_argument(f"inputs {sorted(input_data)} != [{self._model.input_name!r}]")
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
    def __init__(self, holder, name):
        self._holder = holder
        self._name = name

    @property
    def name(self):
        return self._name

    @property
    def shape(self):
        return self._holder.model.input_shape

    @property
    def dtype(self):
        return numpy.dtype(numpy.uint8)

    def send(self, input_data):
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
        pass


class InputVStreams(object):
    def __init__(self, configured_network, input_vstreams_params):
        self._configured_network = configured_network
        self._input_vstreams_params = input_vstreams_params
        self._vstreams = {}

    def __enter__(self):
        holder = self._configured_network._configured_network
        for name in self._input_vstreams_params:
            self._vstreams[name] = InputVStream(holder, name)
        return self

    def get(self, name=None):
        if name is None:
            if len(self._vstreams) != 1:
                raise HailoRTException("There is no single input vStream. You must give a name")
            name = list(self._vstreams)[0]
        return self._vstreams[name]

    def __exit__(self, *args):
        return False

    def __iter__(self):
        return iter(self._vstreams.values())


class OutputVStream(object):
    """A single output virtual stream (device to host)."""

    def __init__(self, pipeline, tf_nms_format=False):
        self._pipeline = pipeline
        self._tf_nms_format = tf_nms_format
        self._queue = deque()

    @property
    def output_order(self):
        return self._pipeline.format.order

    @property
    def shape(self):
        return tuple(self._pipeline.shape)

    @property
    def dtype(self):
        return self._pipeline.dtype

    @property
    def name(self):
        return self._pipeline.info.name

    @property
    def network_name(self):
        return self._pipeline.info.network_name

    @property
    def info(self):
        return self._pipeline.info

    def recv(self):
        """One frame, no batch dimension, in a buffer allocated for this call (the C++ side wraps
        a fresh Buffer in a py::array); NMS outputs converted as pyhailort does."""
        if not self._queue:
            raise HailoRTTimeout("Received a timeout - hailort has failed because a timeout had occurred")
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
        self._queue.append(chip[self._pipeline.info.name])


class OutputVStreams(object):
    """Output virtual streams pipelines that allows to receive data, to be used as a context manager."""

    def __init__(self, configured_network, output_vstreams_params, tf_nms_format=False):
        self._configured_network = configured_network
        self._output_vstreams_params = output_vstreams_params
        self._tf_nms_format = tf_nms_format
        self._vstreams = {}

    def __enter__(self):
        holder = self._configured_network._configured_network
        for name, params in self._output_vstreams_params.items():
            self._vstreams[name] = OutputVStream(_OutputPipeline(holder.model, name, params), self._tf_nms_format)
        holder.output_holders.append(self)
        return self

    def _push(self, chip):
        for v in self._vstreams.values():
            v._push(chip)

    def get(self, name=None):
        if name is None:
            if len(self._vstreams) != 1:
                raise HailoRTException("There is no single output vStream. You must give a name")
            name = list(self._vstreams)[0]
        return self._vstreams[name]

    def clear(self):
        for v in self._vstreams.values():
            v._queue.clear()

    def __exit__(self, *args):
        holders = self._configured_network._configured_network.output_holders
        if self in holders:
            holders.remove(self)
        return False

    def __iter__(self):
        return iter(self._vstreams.values())


# ---------------------------------------------------------------------------------------------
# InferModel API
# ---------------------------------------------------------------------------------------------

class _InferModelCpp(object):
    """Stands for _pyhailort.InferModel: holds the per-output formats the user sets."""

    def __init__(self, model):
        self.model = model
        self.formats = {i.name: i.format.copy() for i in _vstream_infos(model, "out")}
        self.input_format = HailoFormat(FormatType.UINT8, FormatOrder.NHWC)
        self.batch_size = 0


class _InferStreamCpp(object):
    def __init__(self, cpp, name, is_input=False):
        self.cpp = cpp
        self.name = name
        self.is_input = is_input

    @property
    def fmt(self):
        return self.cpp.input_format if self.is_input else self.cpp.formats[self.name]


class InferModel:
    """Everything needed to configure a model for inference (VDevice.create_infer_model)."""

    class InferStream:
        def __init__(self, infer_stream):
            self._infer_stream = infer_stream

        @property
        def name(self):
            return self._infer_stream.name

        @property
        def shape(self):
            s = self._infer_stream
            if s.is_input:
                return list(s.cpp.model.input_shape)
            return list(_frame_shape(s.cpp.model, s.name, s.fmt))  # std::vector<size_t> -> list

        @property
        def format(self):
            return self._infer_stream.fmt.copy()  # hailo_format_t is returned by value

        def set_format_type(self, type):  # noqa: A002
            self._infer_stream.fmt.type = type

        def set_format_order(self, order):
            self._infer_stream.fmt.order = order

        @property
        def quant_infos(self):
            s = self._infer_stream
            m = s.cpp.model
            if s.is_input:
                return [QuantInfo(0.0, 1.0, 0.0, 255.0)]
            if m.nms is not None and s.name == m.nms.name:
                return [QuantInfo(0.0, 1.0, 0.0, 0.0)]
            return m.output(s.name).quant_infos()

        @property
        def is_nms(self):
            s = self._infer_stream
            m = s.cpp.model
            return (not s.is_input) and m.nms is not None and s.name == m.nms.name

        def set_nms_score_threshold(self, threshold):
            pass

        def set_nms_iou_threshold(self, threshold):
            pass

        def set_nms_max_proposals_per_class(self, max_proposals):
            pass

    def __init__(self, infer_model, hef_path):
        self._infer_model = infer_model
        self._hef_path = hef_path
        self._hef = None

    @property
    def hef(self):
        if not self._hef:
            self._hef = HEF(self._hef_path)
        return self._hef

    def set_batch_size(self, batch_size):
        self._infer_model.batch_size = batch_size

    @property
    def input_names(self):
        return [self._infer_model.model.input_name]

    @property
    def output_names(self):
        return [i.name for i in _vstream_infos(self._infer_model.model, "out")]

    @property
    def inputs(self):
        return [self.input()]

    @property
    def outputs(self):
        return [self.output(n) for n in self.output_names]

    def input(self, name=""):
        if name not in ("", self._infer_model.model.input_name):
            raise HailoRTNotFoundException("Item not found. See hailort.log for more information")
        return self.InferStream(_InferStreamCpp(self._infer_model, self._infer_model.model.input_name, True))

    def output(self, name=""):
        names = self.output_names
        if name == "":
            if len(names) != 1:
                raise HailoRTNotFoundException("Item not found. See hailort.log for more information")
            name = names[0]
        if name not in names:
            raise HailoRTNotFoundException("Item not found. See hailort.log for more information")
        return self.InferStream(_InferStreamCpp(self._infer_model, name))

    def configure(self):
        cpp = self._infer_model
        pipelines = {n: _OutputPipeline(cpp.model, n, VStreamParams(cpp.formats[n], 0, 0)) for n in self.output_names}
        return ConfiguredInferModel(_ConfiguredInferModelCpp(cpp.model, pipelines), self)


class _ConfiguredInferModelCpp(object):
    def __init__(self, model, pipelines):
        self.model = model
        self.pipelines = pipelines


class _BindingsCpp(object):
    def __init__(self):
        self.buffers = {}


class AsyncInferCompletionInfo:
    def __init__(self, exception):
        self._exception = exception

    @property
    def exception(self):
        return self._exception


class AsyncInferJob:
    def __init__(self, job):
        self._job = job

    def wait(self, timeout_ms):
        return None  # the double completes jobs before run_async returns


class ConfiguredInferModel:
    """A configured InferModel (use it as a context manager)."""

    class Bindings:
        class InferStream:
            def __init__(self, cpp, name, nms_info=None):
                self._cpp = cpp
                self._name = name
                self._buffer = None
                self._nms_info = nms_info

            def set_buffer(self, buffer):
                if not buffer.flags.c_contiguous:
                    raise HailoRTException("Buffer must be C_CONTIGUOUS")
                self._cpp.buffers[self._name] = buffer
                self._buffer = buffer

            def get_buffer(self, tf_format=False):
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
            self._bindings = bindings
            self._inputs = {}
            self._outputs = {}
            self._input_names = input_names
            self._output_names = output_names
            self._nms_infos = nms_infos

        def input(self, name=""):
            if name == "" and len(self._input_names) == 1:
                name = self._input_names[0]
            if name not in self._input_names:
                raise HailoRTNotFoundException("Item not found. See hailort.log for more information")
            if name not in self._inputs:
                self._inputs[name] = self.InferStream(self._bindings, name)
            return self._inputs[name]

        def output(self, name=""):
            if name == "" and len(self._output_names) == 1:
                name = self._output_names[0]
            if name not in self._output_names:
                raise HailoRTNotFoundException("Item not found. See hailort.log for more information")
            if name not in self._outputs:
                self._outputs[name] = self.InferStream(self._bindings, name, self._nms_infos.get(name))
            return self._outputs[name]

        def get(self):
            return self._bindings

    def __init__(self, configured_infer_model, infer_model):
        self._configured_infer_model = configured_infer_model
        self._input_names = infer_model.input_names
        self._output_names = infer_model.output_names
        self._infer_model = infer_model

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        self._configured_infer_model = None

    def activate(self):
        pass

    def deactivate(self):
        pass

    def _get_nms_infos(self):
        infos = {}
        for name in self._output_names:
            output = self._infer_model.output(name)
            if output.format.order == FormatOrder.HAILO_NMS_BY_CLASS:
                info = next(i for i in self._infer_model.hef.get_output_vstream_infos() if i.name == name)
                infos[name] = (info.nms_shape.number_of_classes, info.nms_shape.max_bboxes_per_class,
                               output.quant_infos[0])
        return infos

    def create_bindings(self, input_buffers=None, output_buffers=None):
        if self._configured_infer_model is None:
            raise HailoRTException("ConfiguredInferModel was shut down")
        bindings = self.Bindings(_BindingsCpp(), self._input_names, self._output_names, self._get_nms_infos())
        for name, buffer in (input_buffers or {}).items():
            bindings.input(name).set_buffer(buffer)
        for name, buffer in (output_buffers or {}).items():
            bindings.output(name).set_buffer(buffer)
        return bindings

    def wait_for_async_ready(self, timeout_ms=1000, frames_count=1):
        pass

    def get_async_queue_size(self):
        return 4

    def run(self, bindings, timeout):
        """A synchronous inference over a list of bindings (one per frame)."""
        job = self.run_async(bindings)
        job.wait(timeout)

    def run_async(self, bindings, callback=None):
        cpp = self._configured_infer_model
        if cpp is None:
            raise HailoRTException("ConfiguredInferModel was shut down")
        if not isinstance(bindings, (list, tuple)):
            # pybind11 cannot convert a single Bindings to std::vector<Bindings>
            raise TypeError("run_async(): incompatible function arguments: bindings must be a list of Bindings")
        model = cpp.model
        for b in bindings:  # HailoRT validates every buffer before it starts the job
            for name in self._input_names:
                buf = b.get().buffers.get(name)
                need = int(numpy.prod(model.input_shape))
                if buf is None or buf.nbytes != need:
                    raise HailoRTInvalidOperationException(f"input {name!r}: buffer of {need} bytes required, "
                                                           f"got {None if buf is None else buf.nbytes}")
            for name, p in cpp.pipelines.items():
                buf = b.get().buffers.get(name)
                need = int(numpy.prod(p.shape)) * p.dtype.itemsize
                if buf is None or buf.nbytes != need:
                    raise HailoRTInvalidOperationException(f"output {name!r}: buffer of {need} bytes required, "
                                                           f"got {None if buf is None else buf.nbytes}")
        for b in bindings:
            chip = model.next_frame()
            for name, p in cpp.pipelines.items():
                buf = b.get().buffers[name]
                host = numpy.ascontiguousarray(_host_frame(model, name, p.format, chip[name]), dtype=p.dtype)
                # memcpy from HailoRT's aligned buffer into the caller's array (infer_model_api.cpp)
                buf.reshape(-1).view(numpy.uint8)[...] = host.reshape(-1).view(numpy.uint8)
        if callback is not None:
            callback(completion_info=AsyncInferCompletionInfo(None))
        return AsyncInferJob(None)

    def shutdown(self):
        self._configured_infer_model = None
