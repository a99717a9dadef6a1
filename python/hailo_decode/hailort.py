"""Adapters over HailoRT's Python package `hailo_platform` (pyhailort).

    config_from_hailo(obj, nms_json=None, **settings) -> DecoderConfig
        obj: a hailo_platform.HEF, a configured network group (VDevice.configure(...)[0]), an
        InferModel (VDevice.create_infer_model) or a ConfiguredInferModel. Reads every output's
        name, shape, format order and type and its quantization.
    decode_vstreams(decoder, output_vstreams) -> Detections
        receives one frame from every OutputVStream and decodes it.
    make_bindings(decoder, configured_infer_model) -> HailoBindings
        allocates every output array once, binds it, and decodes from it in place after each run.

Every adapter reads the installed pyhailort's version (hailo_platform.__version__) and does what
that version's source does (read at tags v4.23.0 and v5.2.0; InferModel / ConfiguredInferModel
are the same API in both). Where 5.x differs:

- HAILO_DISABLE_PP (5.x only; common/utils.hpp IS_PP_DISABLED: set and starting with "1"): the
  post-process ops are dropped, every output is a device buffer reported with its device order and
  padded (hw) shape as the shape, renamed from "<name>_<index>", in the stream's format whatever
  set_format_* asked (hef.cpp, layer_info.hpp, async_pipeline_builder.cpp at v5.2.0).
  config_from_hailo then takes the logical shapes and quantization from the HEF file and checks
  them against the object (_config_pp_disabled); without the file it refuses.
- per-feature quantization with empty qp_zps / qp_scales lists: the scalars per channel from
  5.0.0 (hef.cpp, fill_layer_info); HailoRT 4.x refuses such a HEF.
- HAILO_NMS_BY_SCORE: UINT8 only from 5.1.1 (HailoRT refuses FLOAT32 at configure); pyhailort 4.x
  gives it no buffer shape.
What HailoRT gives and does not give:

- quantization: every vstream info and InferModel.output(name).quant_infos carry ONE quant_info
  (libhailort/src/net_flow/pipeline/infer_model.cpp, InferStream::Impl::get_quant_infos, "TODO:
  Support quant infos vector"). For a per-feature quantized output (HEF extension
  OUTPUT_SCALE_PER_FEATURE) that entry is all zeros; the per-channel values exist only in the HEF
  file, which config_from_hailo then reads with hailo_decode.hef (HefQuantizationWarning says so).
  FLOAT32 outputs are dequantized by HailoRT itself, per channel.
- the async queue: ConfiguredInferModel.run / run_async push their bindings one by one and refuse
  one that does not fit in get_async_queue_size() with HAILO_QUEUE_IS_FULL, after which the model
  is shut down (async_infer_runner.cpp, AsyncInferRunnerImpl::run; infer_model.cpp,
  ConfiguredInferModel::run_async). HailoBindings.run pushes at most that many at a time.
  On a Hailo-10H the queue is the server's (configured_infer_model_hrpc_client.cpp): the client's
  wait_for_async_ready counts frames in flight, the server refuses one that does not fit, and a
  failed run_async shuts the client's model down; HailoBindings.run works the same on both.
- Hailo-10H (5.x), which HailoRT drives through its HRPC client: VDevice.configure is
  HAILO_NOT_IMPLEMENTED (src/vdevice/vdevice_hrpc_client.cpp, VDeviceHrpcClient::configure), so
  there are no network groups or vstreams (no decode_vstreams): use the InferModel path.
- make_bindings with a Decoder whose outputs the model lacks, when its only output is HailoRT's
  NMS op, refuses (the decoder's thresholds would never apply); decoder=None takes HailoRT's.

`hailo_platform` is imported only inside these functions: `import hailo_decode` (and this module)
works without HailoRT, and the adapters raise an ImportError that says what is missing.

Outputs that HailoRT's own NMS op produces (HAILO_NMS_BY_CLASS) are already detections: the
adapters turn them into the same Detections with `decode_hailo_nms` (pass decoder=None, or a
decoder whose box_format / image_size you want).
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import math
import os
import re
import sys
from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple, Union, cast

import numpy as np

from .config import DecoderConfig, OutputInfo
from .decoder import Decoder
from .detections import Detections, decode_hailo_nms

__all__ = ["config_from_hailo", "decode_vstreams", "make_bindings", "HailoBindings", "HefQuantizationWarning"]


class HefQuantizationWarning(UserWarning):
    """config_from_hailo read per-channel zero points and scales from the HEF file, because HailoRT
    reports a single, all-zero quant_info for those outputs (4.23 and 5.1: InferModel's quant_infos
    hold one entry). The values are the HEF's own; silence it with
    warnings.simplefilter("ignore", HefQuantizationWarning), or pass hef_path= to read the file on
    purpose."""

# Numeric values of HailoRT's public enums (include/hailo/hailort.h), for objects that hand out
# plain ints instead of pybind11 enums.
_FORMAT_ORDERS = {0: "AUTO", 1: "NHWC", 2: "NHCW", 3: "FCR", 4: "F8CR", 5: "NHW", 6: "NC", 9: "HAILO_NMS",
                  11: "NCHW", 20: "HAILO_NMS_WITH_BYTE_MASK", 21: "HAILO_NMS_ON_CHIP", 22: "HAILO_NMS_BY_CLASS",
                  23: "HAILO_NMS_BY_SCORE"}
_FORMAT_TYPES = {0: "AUTO", 1: "UINT8", 2: "UINT16", 3: "FLOAT32"}
_DTYPE_OF_TYPE = {"UINT8": "uint8", "UINT16": "uint16", "FLOAT32": "float32"}
_HOST_ORDERS = ("NHWC", "FCR", "F8CR", "NCHW")
_DEVICE_ORDERS = ("NHWC", "FCR", "F8CR", "NHCW")
_NMS_BY_CLASS = ("HAILO_NMS_BY_CLASS", "HAILO_NMS")  # HAILO_NMS: the same layout, before HailoRT 4.21


# -- HailoRT availability ---------------------------------------------------------------------

def _require_hailort(what: str) -> Any:
    """Imports hailo_platform, or raises an ImportError that says what to install."""
    try:
        return importlib.import_module("hailo_platform")
    except ImportError as e:
        raise ImportError(
            f"hailo_decode.hailort.{what} needs HailoRT's Python package 'hailo_platform' (pyhailort), which "
            f"could not be imported ({e}). Install the HailoRT Python wheel that matches your HailoRT "
            f"driver/library (Hailo Developer Zone; on a Raspberry Pi 5: 'sudo apt install hailo-all' and a venv "
            f"with --system-site-packages). hailo_decode's Decoder itself does not need HailoRT: build a "
            f"DecoderConfig from OutputInfo(...) and pass arrays."
        ) from e


_PP_ENV = "HAILO_DISABLE_PP"


def _pyhailort_version(hp: Any = None) -> Tuple[int, int, int]:
    """The installed pyhailort's version as (major, minor, patch): hailo_platform.__version__, which
    the real package's __init__ sets and checks against _pyhailort.__version__ (4.x and 5.x)."""
    hp = hp if hp is not None else sys.modules.get("hailo_platform")
    text = getattr(hp, "__version__", None)
    m = re.match(r"^(\d+)\.(\d+)\.(\d+)", str(text)) if text is not None else None
    if m is None:
        raise ValueError(f"hailo_platform.__version__ is {text!r}, not a HailoRT version \"X.Y.Z\": which HailoRT's "
                         f"behaviour applies (4.x or 5.x) cannot be told")
    return int(m.group(1)), int(m.group(2)), int(m.group(3))


def _pp_disabled(version: Tuple[int, int, int]) -> bool:
    """HAILO_DISABLE_PP as HailoRT 5.x reads it (common/utils.hpp, IS_PP_DISABLED and
    is_env_variable_on: set, and its value starts with "1"); HailoRT 4.x does not read it."""
    return version >= (5, 0, 0) and os.environ.get(_PP_ENV, "")[:1] == "1"


def _version_text(version: Tuple[int, int, int]) -> str:
    return ".".join(str(v) for v in version)


def _hef_module() -> Any:
    """hailo_decode.hef (the HEF file reader) when it exists and offers config_from_hef, else None."""
    name = "hailo_decode.hef"
    mod = sys.modules.get(name)
    if mod is None:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        if spec is None:
            return None
        mod = importlib.import_module(name)
    return mod if callable(getattr(mod, "config_from_hef", None)) else None


# -- reading HailoRT's enums and infos ----------------------------------------------------------

def _enum_name(value: Any, table: Mapping[int, str]) -> str:
    """'FCR' from FormatOrder.FCR (pybind11 enum), 'FormatOrder.FCR', 'HAILO_FORMAT_ORDER_FCR', 3 or 'fcr'."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return table.get(int(value), str(int(value)))
    name = getattr(value, "name", None)
    if not isinstance(name, str):
        name = str(value)
    name = name.rsplit(".", 1)[-1].upper()
    for prefix in ("HAILO_FORMAT_ORDER_", "HAILO_FORMAT_TYPE_"):
        if name.startswith(prefix):
            return name[len(prefix):]
    return name


def _order_name(value: Any) -> str:
    return _enum_name(value, _FORMAT_ORDERS)


def _type_name(value: Any) -> str:
    return _enum_name(value, _FORMAT_TYPES)


def _is_nms_order(order: str) -> bool:
    return order.startswith("HAILO_NMS")


def _quant_pair(q: Any) -> Tuple[float, float]:
    return float(q.qp_zp), float(q.qp_scale)


def _quant_valid(q: Any) -> bool:
    """HailoRTCommon::is_qp_valid: INVALID_QUANT_INFO is all four fields 0."""
    fields = [getattr(q, f, 0.0) for f in ("qp_zp", "qp_scale", "limvals_min", "limvals_max")]
    return any(float(v) != 0.0 for v in fields)


@dataclass
class _Out:
    """One output as a HailoRT object describes it (after the user's format choice)."""

    name: str
    shape: Tuple[int, ...]
    order: str
    type: str
    quants: Optional[List[Tuple[float, float]]]  # None: not available from this object
    nms_classes: Optional[int] = None
    nms_max: Optional[int] = None
    padded_shape: Optional[Tuple[int, ...]] = None
    device: bool = False


class _NeedsHef(ValueError):
    """What the object cannot tell (an NMS-only model's raw layers, a fused layer's device
    layout): hailo_decode.hef can, given the HEF file."""


class _NeedsQuant(ValueError):
    """Outputs whose single quant_info is INVALID_QUANT_INFO (per-feature quantization): their
    per-channel values are only in the HEF."""

    def __init__(self, names: List[str]) -> None:
        super().__init__(names)
        self.names = names


def _kind(obj: Any) -> str:
    if callable(getattr(obj, "create_bindings", None)) and callable(getattr(obj, "run", None)):
        return "configured_infer_model"
    if callable(getattr(obj, "output", None)) and hasattr(obj, "output_names") and callable(getattr(obj, "configure", None)):
        return "infer_model"
    if callable(getattr(obj, "get_output_vstream_infos", None)):
        return "hef" if callable(getattr(obj, "get_network_group_names", None)) else "network_group"
    raise TypeError(f"expected a hailo_platform HEF, configured network group, InferModel or ConfiguredInferModel, "
                    f"got {type(obj).__name__}")


def _infer_model_of(cim: Any) -> Any:
    # pyhailort's ConfiguredInferModel keeps the InferModel it was configured from as _infer_model
    # (ConfiguredInferModel.__init__ in pyhailort.py); there is no public accessor.
    model = getattr(cim, "_infer_model", None)
    if model is None:
        raise TypeError("this ConfiguredInferModel does not expose its InferModel; pass the InferModel instead "
                        "(or infer_model=... to make_bindings)")
    return model


def _outs_from_infer_model(model: Any) -> List[_Out]:
    outs = []
    for name in model.output_names:
        s = model.output(name)
        fmt = s.format
        order, ftype = _order_name(fmt.order), _type_name(fmt.type)
        is_nms = bool(getattr(s, "is_nms", False)) or _is_nms_order(order)
        o = _Out(name, tuple(int(v) for v in s.shape), order, ftype, None)
        if is_nms:
            o.nms_classes, o.nms_max = _nms_shape_from_hef(model, name)
        else:
            # HailoRT 4.23 and 5.1: one entry, the vstream's quant_info (all zeros for a per-feature
            # output: None here, the HEF has the values). A list per channel is taken as given.
            qs = list(s.quant_infos)
            if qs and all(_quant_valid(q) for q in qs):
                o.quants = [_quant_pair(q) for q in qs]
        outs.append(o)
    return outs


def _nms_shape_from_hef(model: Any, name: str) -> Tuple[Optional[int], Optional[int]]:
    try:
        for info in model.hef.get_output_vstream_infos():
            if info.name == name:
                ns = info.nms_shape
                return int(ns.number_of_classes), int(ns.max_bboxes_per_class)
    except Exception:  # noqa: BLE001 - the count is a convenience; the list form carries it anyway
        pass
    return None, None


def _effective_format(info: Any, output_params: Optional[Mapping[str, Any]], format_type: Any) -> Tuple[str, str]:
    """The (order, type) a vstream delivers: the user's VStreamParams / format_type with AUTO
    expanded to the info's own (HailoRTDefaults::expand_auto_format)."""
    order, ftype = _order_name(info.format.order), _type_name(info.format.type)
    user_type, user_order = None, None
    if output_params is not None and info.name in output_params:
        ubf = output_params[info.name].user_buffer_format
        user_type, user_order = _type_name(ubf.type), _order_name(ubf.order)
    elif format_type is not None:
        user_type = _type_name(format_type)
    if user_type not in (None, "AUTO"):
        ftype = user_type
    if user_order not in (None, "AUTO"):
        order = user_order
    return order, ftype


def _outs_from_vstream_infos(obj: Any, network_name: Optional[str], output_params: Optional[Mapping[str, Any]],
                             format_type: Any, device: bool) -> List[_Out]:
    infos = obj.get_output_vstream_infos(network_name) if network_name else obj.get_output_vstream_infos()
    outs = []
    for info in infos:
        order, ftype = _effective_format(info, output_params, format_type)
        if _is_nms_order(order):
            ns = info.nms_shape
            outs.append(_Out(info.name, (), order, ftype, None, int(ns.number_of_classes), int(ns.max_bboxes_per_class)))
            continue
        q = info.quant_info
        quants = [_quant_pair(q)] if _quant_valid(q) else None
        outs.append(_Out(info.name, tuple(int(v) for v in info.shape), order, ftype, quants))
    if not device:
        return outs
    # Raw device buffers: the order and padded shape of each output's stream.
    streams = obj.get_output_stream_infos(network_name) if network_name else obj.get_output_stream_infos()
    by_name = {s.name: s for s in streams}
    raw = []
    for o in outs:
        if o.nms_classes is not None:
            continue
        s = by_name.get(o.name)
        if s is None:
            raise _NeedsHef(f"output {o.name!r}: no low-level stream of that name (a mux/demux or fused layer); "
                            f"its device layout is only in the HEF")
        o.order, o.type = _order_name(s.format.order), _type_name(s.format.type)
        o.padded_shape = tuple(int(v) for v in s.shape)
        o.device = True
        raw.append(o)
    if not raw and any(o.nms_classes is not None for o in outs):
        raise _NeedsHef("the raw layers behind HailoRT's NMS op are hidden from the output vstreams, so their "
                        "logical shapes are unknown here")
    return raw


def _input_size(obj: Any, kind: str, network_name: Optional[str]) -> Optional[Tuple[int, int]]:
    """(height, width) of the single network input, when there is exactly one image input."""
    try:
        if kind == "infer_model":
            if len(obj.input_names) != 1:
                return None
            shape = tuple(obj.input().shape)
        else:
            infos = obj.get_input_vstream_infos(network_name) if network_name else obj.get_input_vstream_infos()
            if len(infos) != 1:
                return None
            shape = tuple(infos[0].shape)
    except Exception:  # noqa: BLE001 - the input size is a default, never a requirement
        return None
    return (int(shape[0]), int(shape[1])) if len(shape) == 3 else None


def _output_info(o: _Out) -> OutputInfo:
    if o.order == "NHCW" and not o.device:
        raise _NeedsHef(f"output {o.name!r} reports the device order NHCW (a raw buffer, HAILO_DISABLE_PP?): its "
                        f"logical shape and padding are not known from this object; build OutputInfo(..., "
                        f"device=True, padded_shape=...) from the stream info")
    allowed = _DEVICE_ORDERS if o.device else _HOST_ORDERS
    if o.order not in allowed:
        raise ValueError(f"output {o.name!r} has format order {o.order}, not a YOLOv8 head tensor ({'/'.join(allowed)}); "
                         f"pick the head outputs with output_names=[...]")
    if o.type not in _DTYPE_OF_TYPE:
        raise ValueError(f"output {o.name!r}: format type {o.type} is not resolved to UINT8/UINT16/FLOAT32")
    if len(o.shape) != 3:
        raise ValueError(f"output {o.name!r}: shape {o.shape} is not (height, width, channels)")
    dtype = _DTYPE_OF_TYPE[o.type]
    kw: Dict[str, Any] = {}
    if o.device:
        kw = dict(device=True, padded_shape=o.padded_shape)
    if dtype == "float32":  # FLOAT32: HailoRT already dequantized it
        return OutputInfo(o.name, o.shape, dtype, o.order, zp=0.0, scale=1.0, **kw)
    c = o.shape[2]
    quants = o.quants
    if quants is None:  # _config_from_object fills them from the HEF or raises _NeedsQuant first
        raise _NeedsQuant([o.name])
    zp: Union[float, Tuple[float, ...]]
    scale: Union[float, Tuple[float, ...]]
    if len(quants) == 1:
        zp, scale = quants[0]
    elif len(quants) == c:
        zps, scales = [q[0] for q in quants], [q[1] for q in quants]
        if len(set(zps)) == 1 and len(set(scales)) == 1:
            zp, scale = zps[0], scales[0]
        else:
            zp, scale = tuple(zps), tuple(scales)
    else:
        raise ValueError(f"output {o.name!r}: {len(quants)} quant infos for {c} channels")
    if isinstance(scale, float) and not (scale > 0 and math.isfinite(scale)):
        raise ValueError(f"output {o.name!r}: quant_info qp_scale is {scale} (not a positive finite number); "
                         f"pass hef_path= to read the HEF's quantization, or request FLOAT32 outputs")
    return OutputInfo(o.name, o.shape, dtype, o.order, zp=zp, scale=scale, **kw)


def _hef_path_of(obj: Any, kind: str) -> Optional[str]:
    """The HEF file behind the object: HEF.path, InferModel.hef.path (pyhailort.py, InferModel.hef
    opens HEF(hef_path)), a ConfiguredInferModel's InferModel's; None for a network group (pyhailort
    keeps no path there) or a HEF made from bytes."""
    try:
        if kind == "hef":
            return obj.path
        if kind == "configured_infer_model":
            obj, kind = _infer_model_of(obj), "infer_model"
        if kind == "infer_model":
            return obj.hef.path
    except Exception:  # noqa: BLE001 - no path is an answer here, not an error
        return None
    return None


def _hailort_version() -> str:
    hp = sys.modules.get("hailo_platform")
    return str(getattr(hp, "__version__", "4.23/5.x"))


def _per_feature_from_hef(hef_mod: Any, path: str, network_name: Optional[str],
                          names: List[str]) -> Dict[str, List[Tuple[float, float]]]:
    """Per-channel (zp, scale) of the named outputs, read from the HEF with hailo_decode.hef, as
    float32 (HailoRT's hailo_quant_info_t holds float32). An empty qp_zps or qp_scales list: from
    HailoRT 5.0.0 the scalar qp_zp / qp_scale for every channel (hef.cpp at v5.2.0,
    HefUtils::fill_layer_info, is_qp_zps_empty); HailoRT 4.x refuses such a HEF (the same
    function at v4.23.0 requires one value per channel: "Invalid quantization infos vector")."""
    version = _pyhailort_version()
    info = hef_mod.read_hef(path)
    group = None if network_name is None else network_name.split("/")[0]
    try:
        ng = info.network_group(group)
    except KeyError as e:
        raise ValueError(f"HEF {path}: {e.args[0]}") from None
    out: Dict[str, List[Tuple[float, float]]] = {}
    for name in names:
        try:
            layer = ng.output(name)
        except KeyError:
            raise ValueError(f"output {name!r} reports per-feature quantization (an all-zero quant_info) but the "
                             f"HEF {path} has no output of that name; its outputs are "
                             f"{[o.name for o in ng.outputs]}") from None
        zps = tuple(layer.qp_zps) if layer.qp_zps else None
        scales = tuple(layer.qp_scales) if layer.qp_scales else None
        c = layer.shape[2]
        if (zps is None or scales is None) and version < (5, 0, 0):
            empty = " and ".join(w for w, v in (("qp_zps", zps), ("qp_scales", scales)) if v is None)
            raise ValueError(f"output {name!r}: the HEF {path} is per-feature quantized but its {empty} list is empty; "
                             f"HailoRT {_version_text(version)} refuses such a HEF (hef.cpp, HefUtils::fill_layer_info: "
                             f"\"Invalid quantization infos vector in HEF!\"), HailoRT 5.0.0+ uses the scalar "
                             f"qp_zp/qp_scale for every channel")
        zps = zps or (layer.qp_zp,) * c
        scales = scales or (layer.qp_scale,) * c
        if len(zps) != c or len(scales) != c:
            raise ValueError(f"output {name!r}: the HEF {path} has {len(zps)} zero points and {len(scales)} scales "
                             f"for {c} channels")
        out[name] = [(float(np.float32(z)), float(np.float32(s))) for z, s in zip(zps, scales)]
    return out


def _needs_quant_message(names: List[str], kind: str, hef_mod: Any, path: Optional[str]) -> str:
    where = {"hef": "the HEF's vstream infos", "network_group": "the network group's vstream infos"}.get(
        kind, "InferModel.output(name).quant_infos")
    fix = []
    if hef_mod is None or not callable(getattr(hef_mod, "read_hef", None)):
        fix.append("install hailo_decode.hef (the HEF reader) to read them from the file")
    elif not path:
        fix.append("pass hef_path= (this object does not know its HEF file) to read them with hailo_decode.hef")
    fix.append("or request FLOAT32 outputs, which HailoRT dequantizes per channel itself")
    return (f"outputs {names} are quantized per channel (per-feature HEF), and HailoRT {_hailort_version()} reports "
            f"a single quant_info for each, all zeros (INVALID_QUANT_INFO): {where} hold one entry, not one per "
            f"channel. The per-channel values are only in the HEF file: {'; '.join(fix)}")


# -- 1. config_from_hailo --------------------------------------------------------------------------

def config_from_hailo(obj: Any, nms_json: Any = None, *, hef_path: Optional[str] = None,
                      output_params: Optional[Mapping[str, Any]] = None, format_type: Any = None,
                      network_name: Optional[str] = None, output_names: Optional[Iterable[str]] = None,
                      device: bool = False, **settings: Any) -> DecoderConfig:
    """A DecoderConfig for the raw head outputs of a HailoRT model.

    obj: hailo_platform.HEF, a configured network group, an InferModel or a ConfiguredInferModel.
    Per output it reads name, shape, format order and type, and quantization: the quant_info (HEF
    and network group vstream infos) or InferModel.output(name).quant_infos, which in HailoRT 4.23
    and 5.1 holds that same single entry. For a per-feature quantized output that entry is all
    zeros; the per-channel values are then read from the HEF file (hef_path=, else HEF.path or the
    InferModel's HEF) with hailo_decode.hef, with a HefQuantizationWarning unless hef_path= named
    the file; without a known file a ValueError says what to pass. Outputs delivered as FLOAT32
    (set_format_type / format_type / output_params) are taken as dequantized by HailoRT, per
    channel too. NCHW outputs (set_format_order(FormatOrder.NCHW)) are described as NCHW.

    nms_json: the DFC NMS JSON (path or dict): heads, strides and thresholds from its
    bbox_decoders (DecoderConfig.from_nms_json); without it heads are paired from shapes and the
    input size is the network's input.
    output_params / format_type (HEF or network group only): the format the vstreams will deliver,
    the dict OutputVStreamParams.make(...) returned or one FormatType; InferModel outputs carry
    their own (output(name).set_format_type(...)).
    network_name: the network (HEF: network or network group) to read; default the first.
    output_names: use only these outputs (others, e.g. extra heads, are ignored).
    device=True (HEF or network group): raw device buffers (C++ raw streams, HAILO_DISABLE_PP):
    device order and padded shape from get_output_stream_infos().
    hef_path: read the HEF file itself with hailo_decode.hef.config_from_hef(hef_path,
    network_group, device_buffers=device, **settings) (when that module is installed; then it
    takes precedence unless nms_json is given; with nms_json only the per-channel quantization
    comes from it). Without hef_path the object's HEF path is still used when the object cannot
    tell something: per-channel quantization (merged into the object's outputs, with the
    warning), the raw layers of a HEF with HailoRT's own NMS (the whole config from the file).
    settings: anything DecoderConfig takes (semantics, class_activation, score_threshold,
    image_size, classes, ...). hailort_version, unless given: the installed pyhailort's "X.Y", so
    that the hailort preset matches its ops and decode_to_hailo_nms(format="byte_mask") writes its
    records.
    HAILO_DISABLE_PP (HailoRT 5.x): see _config_pp_disabled; the HEF file is then required.
    """
    hp = _require_hailort("config_from_hailo")
    hef_mod = _hef_module()
    version = _pyhailort_version(hp)
    if "hailort_version" not in settings:
        # The ops to match (the hailort preset) and the byte-mask records to write: the installed HailoRT's.
        settings["hailort_version"] = f"{version[0]}.{version[1]}"
    if _pp_disabled(version):
        return _config_pp_disabled(obj, _kind(obj), version, hef_mod, hef_path, nms_json, network_name, output_names,
                                   output_params, format_type, dict(settings))

    def from_hef(path: str) -> DecoderConfig:
        group = None if network_name is None else network_name.split("/")[0]
        return hef_mod.config_from_hef(path, group, device_buffers=device, **settings)

    if hef_path is not None and hef_mod is not None and nms_json is None:
        return from_hef(hef_path)

    kind = _kind(obj)
    args = (obj, kind, nms_json, output_params, format_type, network_name, output_names, device)
    try:
        return _config_from_object(*args, dict(settings))
    except _NeedsQuant as e:
        path = hef_path or _hef_path_of(obj, kind)
        if hef_mod is None or not path or not callable(getattr(hef_mod, "read_hef", None)):
            raise ValueError(_needs_quant_message(e.names, kind, hef_mod, path)) from None
        config = _config_from_object(*args, dict(settings), _per_feature_from_hef(hef_mod, path, network_name, e.names))
        if hef_path is None:
            import warnings
            warnings.warn(f"outputs {e.names}: HailoRT {_hailort_version()} reports one all-zero quant_info for "
                          f"these per-feature quantized outputs (InferModel.output(name).quant_infos and the vstream "
                          f"infos hold a single entry); their per-channel zero points and scales were read from the "
                          f"HEF file {path}", HefQuantizationWarning, stacklevel=2)
        return config
    except _NeedsHef as e:
        path = hef_path or _hef_path_of(obj, kind)
        if hef_mod is not None and path:
            return from_hef(path)
        where = "" if hef_mod is None else " (no HEF path is known: pass hef_path=)"
        raise ValueError(f"{e}{where}") from None


# -- HAILO_DISABLE_PP (HailoRT 5.x) -------------------------------------------------------------------

def _live_outputs(obj: Any, kind: str, network_name: Optional[str]) -> List[Tuple[str, str, str, Tuple[int, ...]]]:
    """(name, order, type, shape) of every output as the object reports it."""
    if kind == "configured_infer_model":
        obj, kind = _infer_model_of(obj), "infer_model"
    out = []
    if kind == "infer_model":
        for name in obj.output_names:
            st = obj.output(name)
            out.append((name, _order_name(st.format.order), _type_name(st.format.type), tuple(int(v) for v in st.shape)))
        return out
    infos = obj.get_output_vstream_infos(network_name) if network_name else obj.get_output_vstream_infos()
    return [(i.name, _order_name(i.format.order), _type_name(i.format.type), tuple(int(v) for v in i.shape))
            for i in infos]


def _match_renamed(live_names: List[str], layer_names: List[str], path: str) -> Dict[str, str]:
    """HEF edge-layer name -> the name HailoRT reports for it under HAILO_DISABLE_PP: an output
    layer "<name>_<index>" is renamed to the longest output name it starts with (hef.cpp at v5.2.0,
    HefUtils::fill_layer_info, IS_PP_DISABLED); the same rule, from the reported names."""
    mapping: Dict[str, str] = {}
    for layer in layer_names:
        best = max((n for n in live_names if layer.startswith(n)), key=len, default=None)
        if best is not None:
            if best in mapping.values():
                other = next(k for k, v in mapping.items() if v == best)
                raise ValueError(f"HAILO_DISABLE_PP: the HEF {path}'s output layers {other!r} and {layer!r} would both be "
                                 f"reported as {best!r}; which one HailoRT hands out cannot be told")
            mapping[layer] = best
    missing = [n for n in live_names if n not in mapping.values()]
    if missing:
        raise ValueError(f"HAILO_DISABLE_PP: outputs {missing} match no output layer of the HEF {path} "
                         f"(its outputs: {sorted(layer_names)}): is it the HEF this model was created from?")
    return mapping


def _renamed_head(head: Any, mapping: Mapping[str, str]) -> Any:
    changes = {f.name: mapping[v] for f in dataclasses.fields(head)
               if isinstance(v := getattr(head, f.name), str) and v in mapping and mapping[v] != v}
    return dataclasses.replace(head, **changes) if changes else head


def _config_pp_disabled(obj: Any, kind: str, version: Tuple[int, int, int], hef_mod: Any, hef_path: Optional[str],
                        nms_json: Any, network_name: Optional[str], output_names: Optional[Iterable[str]],
                        output_params: Any, format_type: Any, settings: Dict[str, Any]) -> DecoderConfig:
    """HailoRT 5.x with HAILO_DISABLE_PP=1: every output is a device buffer. The object reports its
    device order and padded (hw) shape as the output's shape (hef.cpp at v5.2.0,
    fill_layer_info_with_base_info: layer_info.shape = hw_shape; layer_info.hpp,
    get_vstream_info_from_layer_info_impl: the device order), the pipeline takes the stream's
    format whatever set_format_* asked (async_pipeline_builder.cpp, expand_auto_output_formats), the
    post-process ops are gone and outputs are renamed. The logical shapes and the quantization are
    only in the HEF file: read with hailo_decode.hef, matched by name, checked against the object."""
    where = f"{_PP_ENV}={os.environ.get(_PP_ENV)!r} (HailoRT {_version_text(version)})"
    path = hef_path or _hef_path_of(obj, kind)
    if hef_mod is None or not path or not callable(getattr(hef_mod, "read_hef", None)):
        raise ValueError(f"{where}: HailoRT hands out raw device buffers whose logical shapes and quantization only "
                         f"the HEF file holds (the object reports the padded device shapes), and "
                         + ("hailo_decode.hef is not installed" if hef_mod is None else
                            "this object does not know its HEF file: pass hef_path="))
    if output_params is not None or format_type is not None:
        raise TypeError(f"{where}: output_params / format_type do nothing, HailoRT delivers every output in its "
                        f"device format (async_pipeline_builder.cpp, expand_auto_output_formats)")
    group = None if network_name is None else network_name.split("/")[0]
    ng = hef_mod.read_hef(path).network_group(group)
    live = _live_outputs(obj, kind, network_name)
    mapping = _match_renamed([n for n, *_ in live], [o.name for o in ng.outputs], path)
    by_live = {v: ng.output(k) for k, v in mapping.items()}
    for name, order, ftype, shape in live:
        layer = by_live[name]
        if order != layer.device_order or shape != tuple(layer.hw_shape):
            raise ValueError(f"{where}: output {name!r} is reported as {order} {shape}, the HEF {path}'s layer "
                             f"{layer.name!r} is {layer.device_order} with hw shape {tuple(layer.hw_shape)}: not the "
                             f"HEF of this model, or not HailoRT's HAILO_DISABLE_PP reporting")
        if ftype not in ("AUTO", (layer.dtype or "").upper()):
            raise ValueError(f"{where}: output {name!r} is set to {ftype}, but HailoRT ignores set_format_type under "
                             f"HAILO_DISABLE_PP and delivers the device's {layer.dtype} (async_pipeline_builder.cpp, "
                             f"expand_auto_output_formats): leave the format type AUTO")
    if nms_json is not None:
        wanted = [k for k, v in mapping.items() if output_names is None or v in set(output_names)]
        infos = [dataclasses.replace(o, name=mapping[o.name])
                 for o in hef_mod.decoder_outputs(ng, wanted, device_buffers=True)]
        return DecoderConfig.from_nms_json(nms_json, infos, **settings)
    cfg = hef_mod.config_from_hef(path, group, device_buffers=True, **settings)
    if any(mapping.get(o.name, o.name) != o.name for o in cfg.outputs):
        changes: Dict[str, Any] = dict(outputs=[dataclasses.replace(o, name=mapping.get(o.name, o.name))
                                                for o in cfg.outputs],
                                       heads=[_renamed_head(h, mapping) for h in cfg.heads])
        if cfg.proto is not None:
            changes["proto"] = mapping.get(cfg.proto, cfg.proto)
        cfg = cfg.replace(**changes)
    if output_names is not None:
        unknown = sorted(set(output_names) - {o.name for o in cfg.outputs})
        if unknown:
            raise ValueError(f"output_names {unknown} are not outputs of this config: {[o.name for o in cfg.outputs]}")
    return cfg


def _config_from_object(obj: Any, kind: str, nms_json: Any, output_params: Optional[Mapping[str, Any]],
                        format_type: Any, network_name: Optional[str], output_names: Optional[Iterable[str]],
                        device: bool, settings: Dict[str, Any],
                        hef_quants: Optional[Mapping[str, List[Tuple[float, float]]]] = None) -> DecoderConfig:
    if kind == "configured_infer_model":
        obj, kind = _infer_model_of(obj), "infer_model"
    if kind == "infer_model":
        if output_params is not None or format_type is not None or device:
            raise TypeError("output_params / format_type / device apply to a HEF or network group; an InferModel "
                            "carries its own formats (output(name).set_format_type(...))")
        outs = _outs_from_infer_model(obj)
    else:
        outs = _outs_from_vstream_infos(obj, network_name, output_params, format_type, device)
    if output_names is not None:
        wanted = list(output_names)
        have = {o.name for o in outs}
        missing = [n for n in wanted if n not in have]
        if missing:
            raise ValueError(f"output_names {missing} are not outputs of this model: {sorted(have)}")
        outs = [o for o in outs if o.name in wanted]
    raw = [o for o in outs if o.nms_classes is None and not _is_nms_order(o.order)]
    nms = [o for o in outs if o not in raw]
    if not raw:
        names = [o.name for o in nms]
        raise _NeedsHef(f"this model's outputs {names} come from HailoRT's own NMS op (HAILO_NMS_BY_CLASS): they are "
                        f"already detections, and the raw head layers behind them are not outputs. Decode them "
                        f"with hd.decode_hailo_nms(output, num_classes=...), decode_vstreams(None, vstreams) or "
                        f"make_bindings(None, configured_infer_model); a config for the raw layers needs the HEF "
                        f"file (hef_path=, hailo_decode.hef)")
    missing_quant = []
    for o in raw:
        if o.quants is None and o.type != "FLOAT32":
            if hef_quants is not None and o.name in hef_quants:
                o.quants = list(hef_quants[o.name])
            else:
                missing_quant.append(o.name)
    if missing_quant:
        raise _NeedsQuant(missing_quant)
    infos = [_output_info(o) for o in raw]
    if nms_json is not None:
        return DecoderConfig.from_nms_json(nms_json, infos, **settings)
    if "image_size" not in settings:
        size = _input_size(obj, kind, network_name)
        if size is not None:
            settings["image_size"] = size
    return DecoderConfig(infos, **settings)


# -- 2. decode_vstreams ---------------------------------------------------------------------------

def _vstream_list(output_vstreams: Any) -> List[Any]:
    if isinstance(output_vstreams, Mapping):
        return list(output_vstreams.values())
    if callable(getattr(output_vstreams, "recv", None)):
        return [output_vstreams]
    return list(output_vstreams)


def _vstream_order(v: Any) -> str:
    order = getattr(v, "output_order", None)
    if order is None:
        order = v.info.format.order
    return _order_name(order)


def _to_frame_shape(o: OutputInfo, a: np.ndarray) -> np.ndarray:
    """pyhailort hands NCHW outputs out with an (H, W, C)-shaped array filled channel-first:
    view it as (C, H, W); a device buffer shaped as its hw shape is viewed flat. Everything else
    passes through unchanged (the Decoder checks it)."""
    if o.order == "NCHW" and not o.device and a.shape[-3:] == o.shape and o.shape != o.frame_shapes[0]:
        h, w, c = o.shape
        return a.reshape(a.shape[:-3] + (c, h, w))
    if o.device and a.shape[-3:] == o.memory_shape and a.shape[-3:] not in o.frame_shapes:
        # A device buffer shaped (Hp, Wp, Cp) whatever its order (HAILO_DISABLE_PP vstreams report
        # the hw shape): its bytes are the device layout, read flat.
        return a.reshape(a.shape[:-3] + (-1,))
    return a


def _nms_detections(output: Any, decoder: Optional[Decoder], classes: Optional[int],
                    max_per_class: Optional[int]) -> Union[Detections, List[Detections]]:
    if decoder is None:
        return decode_hailo_nms(output, num_classes=classes, max_per_class=max_per_class)
    cfg = decoder.config
    return decode_hailo_nms(output, num_classes=classes, max_per_class=max_per_class, image_size=cfg.image_size,
                            box_format=cfg.box_format)


def decode_vstreams(decoder: Optional[Decoder], output_vstreams: Any) -> Detections:
    """Receives one frame from each output vstream (OutputVStream.recv()) and decodes it.

    output_vstreams: the entered OutputVStreams, a list of OutputVStream, or a dict of them. Their
    names must be exactly the decoder's outputs (every open vstream must be read, or HailoRT's
    pipeline stalls). For a model with HailoRT's own NMS (one HAILO_NMS_BY_CLASS vstream) the
    decoder may be None: the result is the same Detections, via decode_hailo_nms (with the
    decoder's box_format and image_size when one is given).
    """
    _require_hailort("decode_vstreams")
    vstreams = _vstream_list(output_vstreams)
    by_name = {v.name: v for v in vstreams}
    if decoder is not None and not isinstance(decoder, Decoder):
        raise TypeError(f"decoder must be a hailo_decode.Decoder or None, got {type(decoder).__name__}")
    if len(vstreams) == 1 and _is_nms_order(_vstream_order(vstreams[0])):
        v = vstreams[0]
        order = _vstream_order(v)
        if order not in _NMS_BY_CLASS:
            raise ValueError(f"vstream {v.name!r} delivers {order}; only HAILO_NMS_BY_CLASS is supported")
        ns = v.info.nms_shape
        # one frame (recv() has no batch axis), so one Detections
        return cast(Detections, _nms_detections(v.recv(), decoder, int(ns.number_of_classes),
                                                int(ns.max_bboxes_per_class)))
    if decoder is None:
        raise ValueError(f"vstreams {sorted(by_name)} are raw outputs: pass a Decoder "
                         f"(Decoder(config_from_hailo(network_group, output_params=...)))")
    cfg = decoder.config
    expected = set(cfg.output_names)
    if set(by_name) != expected:
        raise ValueError(f"output vstreams {sorted(by_name)} do not match the decoder's outputs {sorted(expected)}: "
                         f"missing {sorted(expected - set(by_name))}, unexpected {sorted(set(by_name) - expected)}")
    frames = {o.name: _to_frame_shape(o, by_name[o.name].recv()) for o in cfg.outputs}
    return decoder(frames)  # type: ignore[return-value]  # recv() has no batch axis


# -- 3. make_bindings -----------------------------------------------------------------------------

class HailoBindings:
    """Output arrays allocated once and bound to a ConfiguredInferModel; decode() reads them in place.

        hb = make_bindings(decoder, configured_infer_model)
        hb.bindings.input().set_buffer(image)
        configured_infer_model.run([hb.bindings], timeout_ms)     # or hb.run(timeout_ms)
        dets = hb.decode()

    With batch_size=N larger than get_async_queue_size(), use hb.run(): it pushes the frames a
    queue at a time (ConfiguredInferModel.run(hb.bindings_list) would fail with HAILO_QUEUE_IS_FULL).

    bindings: the Bindings (a list of them, one per frame, with batch_size=N); buffers: name ->
    the bound array (batch axis first with batch_size); the same arrays for every frame.
    """

    def __init__(self, configured_infer_model: Any, bindings: Any, buffers: Dict[str, np.ndarray],
                 decoder: Optional[Decoder], frames: Dict[str, np.ndarray],
                 nms: Optional[Tuple[str, Optional[int], Optional[int], str]], batch_size: Optional[int]) -> None:
        self.configured_infer_model = configured_infer_model
        self.bindings = bindings
        self.buffers = buffers
        self.decoder = decoder
        self.batch_size = batch_size
        self._frames = frames
        self._nms = nms

    @property
    def bindings_list(self) -> List[Any]:
        """What ConfiguredInferModel.run / run_async take: a list of Bindings."""
        return list(self.bindings) if isinstance(self.bindings, list) else [self.bindings]

    def run(self, timeout_ms: int = 10000) -> Union[Detections, List[Detections]]:
        """Infers every bound frame, then decode().

        Pushes at most get_async_queue_size() bindings at a time: wait_for_async_ready(timeout_ms,
        n) before each run_async of n, then waits for every job (job.wait(timeout_ms)). HailoRT's
        own ConfiguredInferModel.run(bindings) is run_async + wait and refuses a batch larger than
        the queue with HAILO_QUEUE_IS_FULL, shutting the model down (4.23: async_infer_runner.cpp,
        AsyncInferRunnerImpl::run; infer_model.cpp, ConfiguredInferModel::run_async). An object
        without get_async_queue_size (not a pyhailort ConfiguredInferModel) gets run(bindings)."""
        cim = self.configured_infer_model
        frames = self.bindings_list
        queue = _async_queue_size(cim)
        if queue is None:
            cim.run(frames, timeout_ms)
            return self.decode()
        jobs = []
        for start in range(0, len(frames), queue):
            chunk = frames[start:start + queue]
            cim.wait_for_async_ready(timeout_ms, len(chunk))
            jobs.append(cim.run_async(chunk))
        for job in jobs:
            job.wait(timeout_ms)
        return self.decode()

    def decode(self) -> Union[Detections, List[Detections]]:
        """Decodes the bound arrays as they are now (after run, or after run_async's job.wait()):
        Detections, or a list of them with batch_size."""
        if self._nms is None:
            return self.decoder(self._frames)  # type: ignore[misc]
        name, classes, max_per_class, form = self._nms
        buf = self.buffers[name]
        if form == "by_score":  # the buffer's bytes, whatever dtype HailoRT was asked for
            frames = buf.reshape(len(buf), -1) if self.batch_size is not None else buf.reshape(-1)
            cfg = self.decoder.config if self.decoder is not None else None
            return decode_hailo_nms(frames.view(np.uint8), format="by_score", num_classes=classes,
                                    image_size=cfg.image_size if cfg else None,
                                    box_format=cfg.box_format if cfg else "yxyx_normalized")
        if classes is None:  # the count is unknown: let pyhailort parse its own buffer
            parsed = [b.output(name).get_buffer() for b in self.bindings_list]
            output: Any = parsed if self.batch_size is not None else parsed[0]
        else:
            output = buf
        return _nms_detections(output, self.decoder, classes, max_per_class)

    def __repr__(self) -> str:
        return f"HailoBindings(outputs={list(self.buffers)}, batch_size={self.batch_size})"


def _async_queue_size(cim: Any) -> Optional[int]:
    """ConfiguredInferModel.get_async_queue_size() (frames the async pipeline holds at once), or
    None when the object has no async queue to respect."""
    get = getattr(cim, "get_async_queue_size", None)
    if not callable(get) or not callable(getattr(cim, "wait_for_async_ready", None)) \
            or not callable(getattr(cim, "run_async", None)):
        return None
    size = int(get())
    if size < 1:
        raise ValueError(f"ConfiguredInferModel.get_async_queue_size() returned {size}; expected >= 1")
    return size


def _model_outputs(model: Any, version: Tuple[int, int, int]) -> Dict[str, Tuple[Tuple[int, ...], np.dtype, str, Any]]:
    out = {}
    for name in model.output_names:
        s = model.output(name)
        fmt = s.format
        ftype, order = _type_name(fmt.type), _order_name(fmt.order)
        if ftype not in _DTYPE_OF_TYPE:
            raise ValueError(f"model output {name!r}: format type {ftype} is not UINT8/UINT16/FLOAT32")
        try:
            shape = tuple(int(v) for v in s.shape)
        except Exception as e:  # noqa: BLE001 - pyhailort's own exception type is not importable here
            if order != "HAILO_NMS_BY_SCORE":
                raise
            # pyhailort before 5.x has no buffer shape for BY_SCORE (bindings_common.hpp,
            # get_pybind_shape: "not supported in python API"); 5.2 gives its bytes.
            raise ValueError(f"model output {name!r} is HAILO_NMS_BY_SCORE, which pyhailort "
                             f"{_version_text(version)} cannot hand out ({e}); use HAILO_NMS_BY_CLASS (the "
                             f"default) or HailoRT 5.x") from None
        out[name] = (shape, np.dtype(_DTYPE_OF_TYPE[ftype]), order, s)
    return out


def _check_against_config(o: OutputInfo, shape: Tuple[int, ...], dtype: np.dtype) -> None:
    if dtype != np.dtype(o.dtype):
        fix = ("call infer_model.output(name).set_format_type(FormatType.FLOAT32) before configure()"
               if o.dtype == "float32" else "build the config from this InferModel (config_from_hailo(infer_model))")
        raise ValueError(f"output {o.name!r}: the model delivers {dtype.name} but the decoder expects {o.dtype}; {fix}")
    if shape in o.frame_shapes:
        return
    n = int(np.prod(shape))
    if any(int(np.prod(s)) == n for s in o.frame_shapes):
        return
    raise ValueError(f"output {o.name!r}: the model's buffer shape {shape} does not hold a frame of "
                     f"{' or '.join(str(s) for s in o.frame_shapes)}")


def _decode_view(o: OutputInfo, arr: np.ndarray, batched: bool) -> np.ndarray:
    """A view of the bound array in a shape the Decoder takes (made once)."""
    lead = arr.shape[:1] if batched else ()
    frame = arr.shape[1:] if batched else arr.shape
    if frame in o.frame_shapes:
        return arr
    for s in sorted(o.frame_shapes, key=len, reverse=True):
        if int(np.prod(s)) == int(np.prod(frame)):
            return arr.reshape(lead + tuple(s))
    return arr


def make_bindings(decoder: Optional[Decoder], configured_infer_model: Any, *, infer_model: Any = None,
                  batch_size: Optional[int] = None,
                  input_buffers: Optional[Mapping[str, np.ndarray]] = None) -> HailoBindings:
    """Allocates each output array once (shape and dtype from the model), binds them with
    create_bindings(output_buffers=...), and returns a HailoBindings whose decode() reads those
    same arrays in place after run / run_async: no array is allocated per frame.

    infer_model: the InferModel, when the ConfiguredInferModel does not expose it (without either,
    shapes and dtypes come from the decoder's config). batch_size=N: N Bindings over one
    [N, ...] array per output; decode() then gives a list. input_buffers: bound as given (set
    later with hb.bindings.input(name).set_buffer(...) otherwise); with batch_size, arrays of N
    frames, frame i bound to Bindings i.
    Every output of the model gets a buffer (HailoRT requires it); the decoder reads its own. A
    model with HailoRT's own NMS: decoder may be None, decode() gives Detections via
    decode_hailo_nms.
    """
    version = _pyhailort_version(_require_hailort("make_bindings"))
    if decoder is not None and not isinstance(decoder, Decoder):
        raise TypeError(f"decoder must be a hailo_decode.Decoder or None, got {type(decoder).__name__}")
    if batch_size is not None and (isinstance(batch_size, bool) or int(batch_size) < 1):
        raise ValueError(f"batch_size must be None or >= 1, got {batch_size!r}")
    model = infer_model if infer_model is not None else getattr(configured_infer_model, "_infer_model", None)
    cfg = decoder.config if decoder is not None else None

    specs: Dict[str, Tuple[Tuple[int, ...], np.dtype]] = {}
    nms: Optional[Tuple[str, Optional[int], Optional[int], str]] = None
    if model is not None:
        outputs = _model_outputs(model, version)
        nms_names = [n for n, (_, _, order, s) in outputs.items() if _is_nms_order(order) or getattr(s, "is_nms", False)]
        for n, (shape, dtype, _, _) in outputs.items():
            specs[n] = (shape, dtype)
        raw_wanted = list(cfg.output_names) if cfg is not None else []
        missing = [n for n in raw_wanted if n not in outputs]
        if cfg is not None and not missing:
            pp = _pp_disabled(version)
            for o in cfg.outputs:
                if pp and specs[o.name][1] != np.dtype(o.dtype):
                    raise ValueError(f"output {o.name!r}: the model reports {specs[o.name][1].name}, but under "
                                     f"{_PP_ENV}=1 HailoRT {_version_text(version)} ignores set_format_type and "
                                     f"delivers the device's {o.dtype} (async_pipeline_builder.cpp, "
                                     f"expand_auto_output_formats): leave the format type AUTO")
                _check_against_config(o, *specs[o.name])
        elif len(nms_names) == 1 and cfg is not None:
            # HailoRT ran its own NMS op (the HEF's thresholds): the decoder's settings would never
            # apply, so this is refused rather than done quietly.
            hint = (f"set {_PP_ENV}=1 before creating the VDevice (HailoRT 5.x) to get the raw outputs"
                    if version >= (5, 0, 0) else "compile the HEF without the NMS op to get the raw outputs")
            raise ValueError(f"the decoder's outputs {missing} are not outputs of this model: its only output is "
                             f"{nms_names[0]!r}, HailoRT's own NMS op (run with the HEF's thresholds, not the "
                             f"decoder's). Pass decoder=None to take HailoRT's detections as they are, or {hint}")
        elif len(nms_names) == 1:
            name = nms_names[0]
            order, dtype = outputs[name][2], outputs[name][1]
            # HAILO_NMS_BY_SCORE: read as bytes whatever the type (HailoRT 5.1.1+ configures it
            # only as UINT8: nms_post_process.cpp at v5.2.0, NmsOpMetadata::validate_format_type).
            if order != "HAILO_NMS_BY_SCORE" and order not in _NMS_BY_CLASS:
                raise ValueError(f"output {name!r} delivers {order}; HAILO_NMS_BY_CLASS and HAILO_NMS_BY_SCORE are "
                                 f"supported")
            classes, max_per_class = _nms_shape_from_hef(model, name)
            nms = (name, classes, max_per_class, "by_score" if order == "HAILO_NMS_BY_SCORE" else "by_class")
        elif cfg is None:
            raise ValueError(f"outputs {sorted(outputs)} are raw outputs: pass a Decoder")
        else:
            raise ValueError(f"the decoder's outputs {missing} are not outputs of this model {sorted(outputs)}")
    else:
        if cfg is None:
            raise ValueError("without the InferModel (infer_model=...) make_bindings needs a Decoder")
        for o in cfg.outputs:
            specs[o.name] = ((o.frame_elements,) if o.device else o.frame_shapes[0], np.dtype(o.dtype))

    lead: Tuple[int, ...] = () if batch_size is None else (int(batch_size),)
    buffers = {n: np.zeros(lead + shape, dtype=dtype) for n, (shape, dtype) in specs.items()}
    n_frames = 1 if batch_size is None else int(batch_size)
    inputs = dict(input_buffers or {})
    if batch_size is not None:
        for n, a in inputs.items():
            if len(a) != n_frames:
                raise ValueError(f"input {n!r}: with batch_size={n_frames} give an array of {n_frames} frames, got "
                                 f"shape {np.shape(a)}")
    all_bindings = []
    for i in range(n_frames):
        outs = buffers if batch_size is None else {n: a[i] for n, a in buffers.items()}
        ins = inputs if batch_size is None else {n: a[i] for n, a in inputs.items()}
        all_bindings.append(configured_infer_model.create_bindings(input_buffers=ins or None, output_buffers=outs))
    frames: Dict[str, np.ndarray] = {}
    if nms is None and cfg is not None:
        frames = {o.name: _decode_view(o, buffers[o.name], batch_size is not None) for o in cfg.outputs}
    bindings = all_bindings[0] if batch_size is None else all_bindings
    return HailoBindings(configured_infer_model, bindings, buffers, decoder, frames, nms, batch_size)


# The entry points on the lower floors (DecoderConfig.from_hailo, Decoder.decode_vstreams and
# Decoder.make_bindings) call these; config and decoder do not import this module.
