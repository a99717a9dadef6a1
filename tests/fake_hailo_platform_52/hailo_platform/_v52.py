"""Double only: HailoRT 5.2's behaviour installed over the shared double's modules (imported once by
this package's __init__). Each replacement names the 5.2 source it follows (file relative to
hailort/libhailort at tag v5.2.0; `../common/...` is hailort/common).
"""

from __future__ import annotations

import os

import numpy

from hailo_platform import _fake_device
from hailo_platform.pyhailort import _pyhailort
from hailo_platform.pyhailort import pyhailort as _p

_ORIG = {name: getattr(_p, name) for name in ("_expand_format", "_host_frame", "_frame_shape", "_vstream_infos")}
_ORIG_CONFIGURE = _p.VDevice.configure
_BY_SCORE_RECORD = numpy.dtype([("y_min", "<f4"), ("x_min", "<f4"), ("y_max", "<f4"), ("x_max", "<f4"),
                                ("score", "<f4"), ("class_id", "<u2")])


def pp_disabled():
    """HailoRT 5.2: ../common/utils.hpp::is_env_variable_on (IS_PP_DISABLED: HAILO_DISABLE_PP set
    and its value starting with "1", read with getenv at each use)."""
    return os.environ.get("HAILO_DISABLE_PP", "")[:1] == "1"


def device_frame(host, order, padded):
    """HailoRT 5.2: src/transform/transform.cpp::transform__d2h_F8CR

    The raw device buffer of a logical (H, W, C) frame, as the chip writes it and HailoRT 5.2 hands
    it out under HAILO_DISABLE_PP (no transform): padded to (Hp, Wp, Cp); NHWC and FCR row by row
    (element h*Wp*Cp + w*Cp + c), NHCW a row of channel planes (h*Wp*Cp + c*Wp + w, the layout
    transform__d2h_NHCW_to_NHWC reads), F8CR blocks of 8 features per column (h*Wp*Cp +
    (c - c%8)*Wp + w*8 + c%8, the offsets transform__d2h_F8CR reads). Flat."""
    h, w, c = host.shape
    hp, wp, cp = padded
    dense = numpy.zeros((hp, wp, cp), host.dtype)
    dense[:h, :w, :c] = host
    if order == "NHCW":
        return numpy.ascontiguousarray(dense.transpose(0, 2, 1)).reshape(-1)
    if order == "F8CR":
        if cp % 8:
            raise ValueError("double: F8CR needs padded features that are a multiple of 8")
        return numpy.ascontiguousarray(dense.reshape(hp, wp, cp // 8, 8).transpose(0, 2, 1, 3)).reshape(-1)
    if order in ("NHWC", "FCR"):
        return dense.reshape(-1)
    raise NotImplementedError(f"double: device order {order} is not modelled")


def _vstream_infos(model, direction):
    """HailoRT 5.2: src/hef/layer_info.hpp::get_vstream_info_from_layer_info_impl

    Under HAILO_DISABLE_PP: each output's device order (is_multi_planar || IS_PP_DISABLED), its
    shape the hw shape (src/hef/hef.cpp, HefUtils::fill_layer_info_with_base_info:
    layer_info.shape = layer_info.hw_shape), its name the renamed one (HefUtils::fill_layer_info),
    and no post-process op (hef.cpp, empty_ops_metadata): the raw layers are the outputs.
    Otherwise as 4.23."""
    if direction == "out" and pp_disabled():
        return [_pyhailort.VStreamInfo(o.name, model.network_name, _pyhailort.StreamDirection.D2H,
                                       _pyhailort.HailoFormat(o.format_type, getattr(_pyhailort.FormatOrder, o.device_order)),
                                       o.quant_info(), shape=tuple(o.padded_shape))
                for o in model.outputs]
    return _ORIG["_vstream_infos"](model, direction)


def _is_nms_output(model, name):
    """Double only: whether `name` is the model's NMS op output (and the op runs)."""
    return model.nms is not None and name == model.nms.name and not pp_disabled()


def _expand_format(model, name, user_format):
    """HailoRT 5.2: src/net_flow/pipeline/async_pipeline_builder.cpp::AsyncPipelineBuilder::expand_auto_output_formats

    Under HAILO_DISABLE_PP the stream's own format, whatever the user set (set_format_type /
    set_format_order are ignored). HAILO_NMS_BY_SCORE from the NMS op: only UINT8
    (src/net_flow/ops/nms_post_process.cpp, NmsOpMetadata::validate_format_type)."""
    if pp_disabled():
        o = model.output(name)
        return _pyhailort.HailoFormat(o.format_type, getattr(_pyhailort.FormatOrder, o.device_order))
    if _is_nms_output(model, name) and user_format.order == _pyhailort.FormatOrder.HAILO_NMS_BY_SCORE:
        fmt = user_format._copy()
        if fmt.type == _pyhailort.FormatType.AUTO:
            fmt.type = _pyhailort.FormatType.UINT8  # HailoRTDefaults::get_default_nms_format_type
        if fmt.type != _pyhailort.FormatType.UINT8:
            raise _p.HailoRTInvalidArgumentException(
                f"Invalid argument. See hailort.log for more information (The given output format type "
                f"{fmt.type.name} is not supported, should be HAILO_FORMAT_TYPE_UINT8)")
        return fmt
    return _ORIG["_expand_format"](model, name, user_format)


def _by_score_bytes(flat, nms):
    """HailoRT 5.2: src/net_flow/ops/nms_post_process.cpp::NmsPostProcessOp::fill_nms_by_score_format_buffer

    The frame as HAILO_NMS_BY_SCORE: a uint16 count, then 22-byte records in descending score,
    up to max_bboxes_total (classes x max per class); made here from the op's BY_CLASS frame."""
    recs = []
    pos = 0
    for k in range(nms.number_of_classes):
        n = int(flat[pos])
        pos += 1
        for b in flat[pos:pos + 5 * n].reshape(n, 5):
            recs.append((*[float(v) for v in b], k))
        pos += 5 * nms.max_bboxes_per_class
    recs.sort(key=lambda r: -r[4])
    total = nms.number_of_classes * nms.max_bboxes_per_class
    recs = recs[:total]
    out = numpy.zeros(2 + _BY_SCORE_RECORD.itemsize * total, numpy.uint8)
    out[:2] = numpy.array([len(recs)], "<u2").view(numpy.uint8)
    if recs:
        out[2:2 + _BY_SCORE_RECORD.itemsize * len(recs)] = numpy.array(recs, _BY_SCORE_RECORD).view(numpy.uint8)
    return out


def _host_frame(model, name, fmt, chip):
    """HailoRT 5.2: src/transform/transform.cpp::FrameOutputTransformContext::transform_inner

    Under HAILO_DISABLE_PP no transform at all: the device buffer (device_frame). BY_SCORE from the
    op's frame (_by_score_bytes). Otherwise as 4.23."""
    if pp_disabled():
        o = model.output(name)
        return device_frame(chip, o.device_order, o.padded_shape)
    if fmt.order == _pyhailort.FormatOrder.HAILO_NMS_BY_SCORE:
        return _by_score_bytes(chip, model.nms)
    return _ORIG["_host_frame"](model, name, fmt, chip)


def _frame_shape(model, name, fmt):
    """HailoRT 5.2: bindings/python/src/bindings_common.hpp::get_pybind_shape

    HAILO_NMS_BY_SCORE: the host frame size in bytes, one dimension (5.2; 4.23 raised "not
    supported in python API"). Under HAILO_DISABLE_PP the shape is the hw shape. Otherwise as 4.23."""
    if pp_disabled():
        return list(model.output(name).padded_shape)
    if fmt.order == _pyhailort.FormatOrder.HAILO_NMS_BY_SCORE:
        nms = model.nms
        return [2 + _BY_SCORE_RECORD.itemsize * nms.number_of_classes * nms.max_bboxes_per_class]
    return _ORIG["_frame_shape"](model, name, fmt)


def _configure(self, hef, configure_params_by_name={}):  # noqa: B006 - the real signature
    """HailoRT 5.2: bindings/python/platform/hailo_platform/pyhailort/pyhailort.py::VDevice.configure

    On a Hailo-10H the VDevice is HailoRT's HRPC client, whose configure is HAILO_NOT_IMPLEMENTED
    (vdevice_hrpc_client.cpp, VDeviceHrpcClient::configure): no network groups, no vstreams."""
    if getattr(hef, "_model", None) is not None and hef._model.hailo10h:
        _p._raise_status(_pyhailort.HAILO_NOT_IMPLEMENTED)
    return _ORIG_CONFIGURE(self, hef, configure_params_by_name)


_ORIG_RUN_ONE = _p._ConfiguredInferModelCpp.run_async_one
_ORIG_READY = _p._ConfiguredInferModelCpp.wait_for_async_ready


def _hrpc_run_async_one(self, bindings, job):
    """HailoRT 5.2: src/net_flow/pipeline/configured_infer_model_hrpc_client.cpp::ConfiguredInferModelHrpcClient::run_async

    A Hailo-10H: the client validates the bindings and sends the frame; the server's pipeline
    (AsyncInferRunnerImpl::run there) refuses one its queue cannot take with HAILO_QUEUE_IS_FULL,
    and any failure shuts the client's model down (run_async: shutdown() on a failed
    run_async_impl). Seen from the client, what a local device does; the queue is the server's."""
    if not self.model.hailo10h:
        return _ORIG_RUN_ONE(self, bindings, job)
    self.hrpc_requests = getattr(self, "hrpc_requests", 0) + 1  # one RUN_ASYNC request per frame
    return _ORIG_RUN_ONE(self, bindings, job)


def _hrpc_wait_for_async_ready(self, timeout, frames_count):
    """HailoRT 5.2: src/net_flow/pipeline/configured_infer_model_hrpc_client.cpp::ConfiguredInferModelHrpcClient::wait_for_async_ready

    A Hailo-10H: waits until max_ongoing_transfers minus the frames in flight is at least
    frames_count, else HAILO_TIMEOUT (more than the maximum never fits)."""  # noqa: E501 - the note stays on one line
    return _ORIG_READY(self, timeout, frames_count)


def _install():
    """Double only: puts the replacements into the shared modules."""
    for name, fn in (("_expand_format", _expand_format), ("_host_frame", _host_frame),
                     ("_frame_shape", _frame_shape), ("_vstream_infos", _vstream_infos)):
        setattr(_p, name, fn)
    _p.VDevice.configure = _configure
    _p._ConfiguredInferModelCpp.run_async_one = _hrpc_run_async_one
    _p._ConfiguredInferModelCpp.wait_for_async_ready = _hrpc_wait_for_async_ready
    _fake_device.VERSION = "5.2"


_install()
