"""Reads a Hailo `.hef` file without HailoRT: its outputs (layout, padding, quantization), inputs,
and the YOLOv8 NMS op when the HEF carries one, then builds a DecoderConfig from them.

    info = read_hef("yolov8n.hef")             # HefInfo: header, network groups, layers, NMS op
    cfg = config_from_hef("yolov8n.hef")       # outputs as vstreams hand them out
    cfg = config_from_hef("yolov8n.hef", device_buffers=True)   # raw device buffers (NHCW, ...)

A HEF is a big-endian header (magic `01 48 45 46`, version 0..3) followed by a protobuf message
(`ProtoHEFHef`, schema `hailort/libhailort/hef.proto`) and, from version 1 on, the compiled
configuration (CCWS) that only the device needs. Only the header and the protobuf are read.

Why a protobuf wire-format reader of our own rather than the `protobuf` package:
  - schema-free: it needs only the field numbers of the few messages on the way to the layers
    (listed next to each message below), not generated code that has to follow Hailo's schema;
  - tolerant across SDK versions: every field it does not ask for (and new SDKs add many) is
    skipped by its wire type without being decoded, so newer HEFs keep reading;
  - no generated code and no dependency: the package's only runtime dependency stays numpy, and
    no `protobuf` runtime/`protoc` version pairing can break an install.
It is also defensive: every length is checked against the bytes left in its enclosing message,
nesting is capped, nothing is allocated from a size read in the file, and any malformed input
raises HefError (a ValueError) with the offset and the message path where reading failed.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import struct
import warnings
import zlib
from dataclasses import asdict, dataclass
from typing import Any, BinaryIO, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from .config import AnchorHead, DecoderConfig, Head, OutputInfo, SsdHead, YoloxHead, end2end_choice, task_decode_choice

__all__ = [
    "HefAnchorOp", "HefAnchorDecoder",
    "HefError", "HefMismatchWarning", "HefHeader", "HefLayer", "HefBboxDecoder", "HefNmsOp", "HefPostProcessOp", "HefNetworkGroup",
    "HefInfo", "read_hef", "config_from_hef", "decoder_outputs", "infer_class_activation", "class_range",
    "FORMAT_CODES", "HOST_ORDER", "hef_mismatches", "bbox_only_proposals", "HefNmsOutput", "hef_nms_output",
]


class HefError(ValueError):
    """The file is not a readable HEF: wrong magic, unsupported version, truncated, corrupt."""


class HefMismatchWarning(UserWarning):
    """The HEF disagrees with itself: its NMS op's image size, its input's size, the op's strides
    and the output grids do not describe the same image (for example an op saying 640x640 on a
    320x320 input, which makes HailoRT put every box in the top-left quarter)."""


# --------------------------------------------------------------------------------------------
# Header (big-endian). The tail after magic/version/proto_size depends on the version.
# --------------------------------------------------------------------------------------------
_MAGIC = b"\x01HEF"
_HEADER_SIZES = {0: 32, 1: 28, 2: 44, 3: 56}
_MAX_DEPTH = 32                   # protobuf nesting we follow (the HEF path needs ~12)
_CHUNK = 1 << 20                  # checksum streaming

# HEF compiler format codes (hailort_defaults.cpp, get_device_format_order) -> device order, and
# the order a vstream reports by default for it (DEFAULT_FORMAT_ORDER_MAP).
FORMAT_CODES: Dict[int, str] = {
    0: "NHWC", 1: "NHCW", 2: "NC", 3: "FCR", 4: "BAYER_RGB", 5: "NHW", 6: "NMS_ON_CHIP", 7: "F8CR",
    8: "RGB888", 11: "YUY2", 13: "NHWC", 14: "HAILO_YYUV", 15: "HAILO_YYVU", 16: "HAILO_YYYYUV",
}
HOST_ORDER: Dict[str, str] = {
    "NHWC": "NHWC", "NHCW": "NHWC", "NC": "NC", "FCR": "FCR", "F8CR": "F8CR", "NHW": "NHW",
    "BAYER_RGB": "BAYER_RGB", "RGB888": "NHWC", "YUY2": "YUY2", "NMS_ON_CHIP": "HAILO_NMS_BY_CLASS",
    "HAILO_YYUV": "NV12", "HAILO_YYVU": "NV21", "HAILO_YYYYUV": "I420",
}
# 103 is PROTO__HW_ARCH__HAILO15H in older schemas, HAILO1XH (Hailo-10H and 15H) in SDK 5.x HEFs.
_HW_ARCH = {0: "HAILO8", 1: "HAILO8P", 2: "HAILO8R", 3: "HAILO8L", 4: "HAILO15M", 5: "HAILO10H", 6: "HAILO15L",
            103: "HAILO1XH", 100: "SAGE_A0", 101: "SAGE_B0", 102: "PAPRIKA_B0", 104: "GINGER", 105: "LAVENDER",
            106: "PLUTO"}
_MULTI_LAYOUT_ARCHS = (3, 4)      # HAILO8L, HAILO15M: the core op lives in partial layouts
_EXTENSIONS = {
    0: "ABBALE", 1: "POSTED_WRITES", 2: "DDR", 3: "PADDED_DDR_BUFFERS", 4: "IS_MULTI_CONTEXTS", 5: "COMPRESSED_PARAMS",
    6: "TRANSPOSE_COMPONENT", 7: "TEST_ONE", 8: "MULTI_NETWORK_VARIABLE_BATCH_SIZE", 9: "IS_NMS_MULTI_CONTEXT",
    10: "OFFLOAD_ARGMAX", 11: "HW_PADDING", 12: "KO_RUN_ASAP", 13: "HAILO_NET_FLOW", 14: "HAILO_NET_FLOW_YOLOV5_NMS",
    15: "HAILO_NET_FLOW_YOLOX_NMS", 16: "HAILO_NET_FLOW_SSD_NMS", 17: "HAILO_NET_FLOW_IOU_NMS",
    18: "WRITE_DATA_BY_TYPE", 19: "NMS_OUTPUT_BURST", 20: "DUAL_DIRECTION_STREAM_INDEX", 21: "HAILO_NET_FLOW_ARGMAX",
    22: "HAILO_NET_FLOW_SOFTMAX", 23: "ALIGNED_FORMAT_TYPE", 24: "HAILO_NET_FLOW_YOLOV5_SEG_NMS",
    25: "OUTPUT_SCALE_PER_FEATURE", 26: "PERIPH_CALCULATION_IN_HAILORT", 27: "HAILO_NET_FLOW_YOLOV8_NMS",
    28: "BATCH_REGISTER_CONFIG", 29: "HAILO_NET_FLOW_BBOX_DECODING", 30: "CCW_PTR_SQUEEZE", 31: "EXTERNAL_RESOURCES",
    32: "SHARED_CONFIG",
}
_EXT_OUTPUT_SCALE_PER_FEATURE = 25
_EXT_HW_PADDING = 11              # optional extension: the DFC configured core HW padding itself
_PERIPH_BYTES_MAX = 0x2000        # HAILO1X_PERIPH_BYTES_PER_BUFFER_MAX_SIZE
_NMS_KINDS = {7: "yolov5", 8: "yolox", 9: "ssd", 10: "iou", 11: "yolov5_seg", 12: "yolov8"}
_PLANES_FORMATS = {0: "NV12", 1: "NV21", 2: "I420"}


# --------------------------------------------------------------------------------------------
# Protobuf wire format (varint 0, fixed64 1, length-delimited 2, fixed32 5).
# --------------------------------------------------------------------------------------------
# What the reader expects of a field it asks for: its wire type(s).
_U = (0,)           # varint: uint32/uint64/bool/enum
_F32 = (5,)         # float
_F64 = (1,)         # double
_LEN = (2,)         # string, bytes, embedded message
_RF64 = (1, 2)      # repeated double, packed (2) or not (1)


class _Msg:
    """One protobuf message, scanned once: the fields asked for are kept (by number, all
    occurrences), every other field is skipped by its wire type."""

    __slots__ = ("_d", "_f", "path", "depth", "start", "_base")

    def __init__(self, data: Union[bytes, memoryview], start: int, end: int, path: str, depth: int,
                 wanted: Mapping[int, Tuple[int, ...]], base: int) -> None:
        if depth > _MAX_DEPTH:
            raise HefError(f"{path}: protobuf nested deeper than {_MAX_DEPTH} levels")
        self._d = data
        self.path = path
        self.depth = depth
        self._base = base          # file offset of data[0], for messages
        self.start = base + start
        fields: Dict[int, List[Tuple[int, Any]]] = {}
        pos = start
        while pos < end:
            at = pos
            key, pos = _varint(data, pos, end, path, base)
            num, wt = key >> 3, key & 7
            if num == 0:
                raise HefError(f"corrupt protobuf in {path} at file offset {base + at}: field number 0")
            val: Any
            if wt == 0:
                val, pos = _varint(data, pos, end, path, base)
            elif wt == 2:
                n, pos = _varint(data, pos, end, path, base)
                if n > end - pos:
                    raise HefError(f"truncated or corrupt protobuf in {path} at file offset {base + at}: field {num} "
                                   f"says {n} bytes, {end - pos} left in the message")
                val = (pos, pos + n)
                pos += n
            elif wt == 1 or wt == 5:
                size = 8 if wt == 1 else 4
                if size > end - pos:
                    raise HefError(f"truncated protobuf in {path} at file offset {base + at}: field {num} needs "
                                   f"{size} bytes, {end - pos} left")
                val = pos
                pos += size
            else:  # 3/4: proto2 groups (not in this proto3 schema); 6/7 do not exist
                raise HefError(f"corrupt protobuf in {path} at file offset {base + at}: field {num} has "
                               f"invalid wire type {wt}")
            expected = wanted.get(num)
            if expected is not None:
                if wt not in expected:
                    raise HefError(f"corrupt protobuf in {path} at file offset {base + at}: field {num} has wire "
                                   f"type {wt}, the schema says {expected[0]}")
                fields.setdefault(num, []).append((wt, val))
        self._f = fields

    # -- scalar accessors: proto3 semantics, last occurrence wins, absent = default ----------
    def has(self, num: int) -> bool:
        return num in self._f

    def u32(self, num: int) -> int:
        v = self._f.get(num)
        return v[-1][1] & 0xFFFFFFFF if v else 0

    def u64(self, num: int) -> int:
        v = self._f.get(num)
        return v[-1][1] & 0xFFFFFFFFFFFFFFFF if v else 0

    def flag(self, num: int) -> bool:
        return self.u64(num) != 0

    def f32(self, num: int) -> float:
        v = self._f.get(num)
        return struct.unpack_from("<f", self._d, v[-1][1])[0] if v else 0.0

    def f64(self, num: int) -> float:
        v = self._f.get(num)
        return struct.unpack_from("<d", self._d, v[-1][1])[0] if v else 0.0

    def f64s(self, num: int) -> Tuple[float, ...]:
        return self._reals(num, 1, "d", "doubles")

    def f32s(self, num: int) -> Tuple[float, ...]:
        return self._reals(num, 5, "f", "floats")

    def _reals(self, num: int, fixed_wire_type: int, code: str, what: str) -> Tuple[float, ...]:
        """A repeated double or float field, packed (proto3's default) or one value a tag."""
        size = struct.calcsize(f"<{code}")
        out: List[float] = []
        for wt, val in self._f.get(num, ()):
            if wt == fixed_wire_type:
                out.append(struct.unpack_from(f"<{code}", self._d, val)[0])
            else:
                s, e = val
                if (e - s) % size:
                    raise HefError(f"corrupt protobuf in {self.path}: packed {what} (field {num}) of {e - s} bytes, "
                                   f"not a multiple of {size}")
                out.extend(struct.unpack_from(f"<{(e - s) // size}{code}", self._d, s))
        return tuple(out)

    def _str(self, val: Tuple[int, int], num: int) -> str:
        s, e = val
        try:
            return bytes(self._d[s:e]).decode("utf-8")
        except UnicodeDecodeError:
            raise HefError(f"corrupt protobuf in {self.path}: string field {num} is not valid UTF-8") from None

    def text(self, num: int) -> str:
        v = self._f.get(num)
        return self._str(v[-1][1], num) if v else ""

    def texts(self, num: int) -> Tuple[str, ...]:
        return tuple(self._str(val, num) for _, val in self._f.get(num, ()))

    def msg(self, num: int, name: str, wanted: Mapping[int, Tuple[int, ...]]) -> Optional["_Msg"]:
        v = self._f.get(num)
        if not v:
            return None
        s, e = v[-1][1]
        return _Msg(self._d, s, e, f"{self.path}.{name}", self.depth + 1, wanted, self._base)

    def need(self, num: int, name: str, wanted: Mapping[int, Tuple[int, ...]]) -> "_Msg":
        """msg() where the caller has checked has(num): present, or a HefError naming the field."""
        m = self.msg(num, name, wanted)
        if m is None:
            raise HefError(f"{self.path}: field {num} ({name}) is missing")
        return m

    def msgs(self, num: int, name: str, wanted: Mapping[int, Tuple[int, ...]]) -> List["_Msg"]:
        return [_Msg(self._d, val[0], val[1], f"{self.path}.{name}[{i}]", self.depth + 1, wanted, self._base)
                for i, (_, val) in enumerate(self._f.get(num, ()))]


def _varint(data: Union[bytes, memoryview], pos: int, end: int, path: str, base: int) -> Tuple[int, int]:
    result = 0
    shift = 0
    start = pos
    while True:
        if pos >= end:
            raise HefError(f"truncated protobuf in {path} at file offset {base + start}: varint runs past the end")
        b = data[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result & 0xFFFFFFFFFFFFFFFF, pos
        shift += 7
        if shift >= 70:
            raise HefError(f"corrupt protobuf in {path} at file offset {base + start}: varint longer than 10 bytes")


# The messages on the way to the layers, with the field numbers read (hef.proto):
_HEF = {1: _LEN, 2: _LEN, 5: _LEN, 6: _LEN}               # ProtoHEFHef: header, network_groups, extensions, optional_extensions
_HEADER = {1: _U, 2: _U, 3: _LEN, 4: _U}                  # ProtoHEFHeader: hw_arch, timestamp, sdk_version, version
_EXTENSION = {1: _U, 2: _LEN}                             # ProtoHEFExtension: type_index, name
_NETWORK_GROUP = {1: _LEN, 3: _LEN, 4: _LEN, 6: _LEN, 7: _LEN, 8: _LEN, 9: _LEN, 10: _LEN, 11: _U}
#   ProtoHEFNetworkGroup: network_group_metadata 1, contexts 3, sorted_outputs_order 4, networks_names 6,
#   partial_network_groups 7, ops 8, pad_edges 9, network_group_name 10, network_group_index 11
_NG_METADATA = {1: _LEN, 2: _U, 3: _U}                    # ProtoHEFNetworkGroupMetadata: name, index, transposed_net
_PARTIAL_NG = {1: _LEN}                                   # ProtoHEFPartialNetworkGroup: network_group
# ProtoHEFOp: name, input_pads, output_pads, core_op, nms_op, logits_op
_OP = {1: _LEN, 2: _LEN, 3: _LEN, 4: _LEN, 5: _LEN, 6: _LEN}
# ProtoHEFCoreOp: metadata, contexts, sorted_outputs_order, networks_names, partial_core_ops
_CORE_OP = {1: _LEN, 3: _LEN, 4: _LEN, 6: _LEN, 7: _LEN}
_PARTIAL_CORE_OP = {1: _LEN}                              # ProtoHEFPartialCoreOp: core_op
_PAD = {1: _U, 2: _LEN}                                   # ProtoHEFPad: index, name
_PAD_EDGE = {1: _U, 2: _U}                                # ProtoHEFPadEdge: src, dst
_NMS_OP = {1: _F64, 2: _F64, 3: _U, 4: _U, 5: _U, 6: _U, 13: _U,
           7: _LEN, 8: _LEN, 9: _LEN, 10: _LEN, 11: _LEN, 12: _LEN}
#   ProtoHEFNmsOp: nms_score_th 1, nms_iou_th 2, max_proposals_per_class 3, classes 4, background_removal 5,
#   background_removal_index 6, bbox_decoding_only 13, oneof yolo 7 / yolox 8 / ssd 9 / iou 10 / yolo_seg 11 / yolov8 12
# ProtoHEFYolov8NmsOp: image_height, image_width, input_division_factor, bbox_decoders, regression_length
_YOLOV8_OP = {1: _F64, 2: _F64, 3: _U, 4: _LEN, 5: _U}
_YOLOV8_DECODER = {1: _U, 2: _U, 3: _U}                   # stride, reg_pad_index, cls_pad_index
# ProtoHEFYoloNmsOp (YOLOv5): image_height 1, image_width 2, input_division_factor 3, bbox_decoders 4
_YOLOV5_OP = {1: _F64, 2: _F64, 3: _U, 4: _LEN}
_YOLOV5_DECODER = {2: (0, 2), 3: (0, 2), 4: _U, 5: _U}   # h (repeated uint32), w, stride, pad_index
# ProtoHEFYoloxNmsOp: image_height 1, image_width 2, bbox_decoders 3
_YOLOX_OP = {1: _F64, 2: _F64, 3: _LEN}
# ProtoHEFYoloSegNmsOp (YOLOv5-seg): image_height 1, image_width 2, bbox_decoders 3 (YOLOv5's), proto_info 4,
# mask_threshold 5; ProtoHEFYoloSegProtoInfo: number 1, stride 2, proto_layer 3 (a layer name)
_YOLOV5_SEG_OP = {1: _F64, 2: _F64, 3: _LEN, 4: _LEN, 5: _F64}
_PROTO_INFO = {1: _U, 2: _U, 3: _LEN}
_YOLOX_DECODER = {1: _U, 2: _U, 3: _U, 4: _U}            # stride, reg_pad_index, cls_pad_index, obj_pad_index
# ProtoHEFSSDNmsOp: image_height 1, image_width 2, centers_scale_factor 3, bbox_dimensions_scale_factor 4,
# ty 5, tx 6, th 7, tw 8, bbox_decoders 9
_SSD_OP = {1: _F64, 2: _F64, 3: _U, 4: _U, 5: _U, 6: _U, 7: _U, 8: _U, 9: _LEN}
_SSD_DECODER = {1: (2, 5), 2: (2, 5), 3: _U, 4: _U}      # h, w (repeated float), reg_pad_index, cls_pad_index
_IMAGE_DIMS = {1: _F64, 2: _F64}                          # image_height/width of the other NMS kinds
_LOGITS_OP = {1: _U}                                      # ProtoHEFLogitsOp: logits_type (0 argmax, 1 softmax)
_CONTEXT = {1: _U, 3: _LEN}                               # ProtoHEFContext: context_index, metadata
_CONTEXT_METADATA = {2: _LEN}                             # ProtoHEFContextMetadata: edge_layers
_EDGE_LAYER = {1: _U, 2: _U, 3: _LEN, 4: _LEN, 5: _LEN, 6: _U, 7: _U, 8: _LEN}
#   ProtoHEFEdgeLayer: direction 1, edge_layer_type 2, layer_info 3, layer_mux 4, context_switch_info 5,
#   network_index 6, pad_index 7 (optional), layer_planes 8
_CS_INFO = {3: _U}                                        # ProtoHEFContextSwitchInformation: edge_connection_type
_LAYER_INFO = {1: _LEN, 2: _LEN, 3: _LEN, 4: _LEN, 5: _LEN, 6: _U}
#   ProtoHEFEdgeLayerInfo: name 1, edge_layer_base 2, numeric_info 3, hn_output_layer_name 4, original_names 5,
#   transposed 6
# ProtoHEFEdgeLayerMux: name, edge_layer_base, predecessors, original_names
_LAYER_MUX = {1: _LEN, 2: _LEN, 5: _LEN, 6: _LEN}
_HEF_EDGE = {1: _LEN, 2: _LEN, 3: _LEN}                   # ProtoHefEdge: layer_info, layer_mux, layer_planes
_LAYER_PLANES = {1: _LEN, 2: _U, 3: _LEN, 4: _U, 5: _U, 6: _U}  # name, planes_format, planes, height, width, features
_LAYER_BASE = {1: _U, 2: _U, 3: _U, 4: _U, 5: _U, 6: _U, 7: _U, 8: _U, 10: _U, 11: _LEN, 12: _U, 15: _U}
#   ProtoHEFEdgeLayerBase: height 1, padded_height 2, width 3, padded_width 4, features 5, padded_features 6,
#   format 7, sys_index 8, core_buffers_per_frame 10, additional_info 11, data_bytes 12, max_shmifo_size 15
_ADDITIONAL_INFO = {1: _LEN}                              # ProtoHEFAdditionalInfo: nms_info
_NMS_INFO = {2: _U, 3: _U, 4: _U, 7: _U}                  # number_of_classes, max_output_size, bbox_size, input_division_factor
_NUMERIC_INFO = {1: _F32, 2: _F32, 3: _F32, 4: _F32, 5: _RF64, 6: _RF64}
#   ProtoHEFEdgeLayerNumericInfo: qp_zp 1, qp_scale 2, limvals_min 3, limvals_max 4, qp_zps 5, qp_scales 6


# --------------------------------------------------------------------------------------------
# What read_hef returns
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class HefHeader:
    """The binary header. ccws_size is v1/v2 `ccws_size`, v3 `ccws_size_with_padding` (0 for v0).
    checksum_ok: True when verified as HailoRT does (v0 md5 of the proto, v1 crc32 of proto + CCWS,
    v2 xxh3-64 of proto + CCWS, v3 xxh3-64 of the proto), None when not verified (v2/v3 need the
    optional `xxhash` module; it is not a dependency). A mismatch raises HefError."""

    version: int
    header_size: int
    proto_size: int
    file_size: int
    ccws_size: int = 0
    padding_size: int = 0
    additional_info_size: int = 0
    checksum_kind: str = ""
    checksum: str = ""
    proto_checksum: Optional[str] = None
    checksum_ok: Optional[bool] = None


@dataclass(frozen=True)
class HefLayer:
    """A boundary edge layer: an output (device to host) or an input.

    shape: logical (H, W, C) as HailoRT reports it; padded_shape: the HEF's padded (Hp, Wp, Cp);
    hw_shape: what HailoRT's stream info reports as hw_shape (the padded shape, except for NHCW
    outputs whose padding HailoRT strips with core HW padding, where it is the shape).
    format_code: the HEF compiler code; device_order its name; host_order what a vstream reports.
    qp_zps/qp_scales: per-feature quantization lists when the HEF has them (else None);
    per_feature: whether HailoRT uses them (OUTPUT_SCALE_PER_FEATURE extension, outputs only)."""

    name: str
    direction: str
    shape: Tuple[int, int, int]
    padded_shape: Tuple[int, int, int]
    hw_shape: Tuple[int, int, int]
    format_code: int
    device_order: str
    host_order: str
    bytes_per_element: int
    dtype: Optional[str]
    qp_zp: float
    qp_scale: float
    limvals_min: float = 0.0
    limvals_max: float = 0.0
    qp_zps: Optional[Tuple[float, ...]] = None
    qp_scales: Optional[Tuple[float, ...]] = None
    per_feature: bool = False
    pad_index: Optional[int] = None
    original_names: Tuple[str, ...] = ()
    context_index: int = 0
    network_index: int = 0
    transposed: bool = False
    mux: Optional[str] = None
    nms_info: Optional[Dict[str, int]] = None

    @property
    def vstream_shape(self) -> Tuple[int, ...]:
        """The shape a vstream reports: (C,) for NC, (H, W) for NHW, else (H, W, C)."""
        h, w, c = self.shape
        if self.host_order == "NC":
            return (c,)
        if self.host_order == "NHW":
            return (h, w)
        return self.shape

    @property
    def zp(self) -> Union[float, Tuple[float, ...]]:
        """The zero point HailoRT applies: one per feature when per_feature, else the tensor's."""
        return self.qp_zps if self.per_feature and self.qp_zps else self.qp_zp

    @property
    def scale(self) -> Union[float, Tuple[float, ...]]:
        return self.qp_scales if self.per_feature and self.qp_scales else self.qp_scale


@dataclass(frozen=True)
class HefBboxDecoder:
    stride: int
    reg_pad_index: int
    cls_pad_index: int
    reg_layer: Optional[str] = None   # output names resolved from the pad indices (None: unresolved)
    cls_layer: Optional[str] = None


@dataclass(frozen=True)
class HefNmsOp:
    """A YOLOv8 NMS op (HailoRT's host post-process). Thresholds are the HEF's doubles.

    bbox_decoding_only (ProtoHEFNmsOp field 13): the op is HailoRT's yolov8_bbox_only op, which
    decodes the boxes and dequantizes the class scores but runs no NMS (see `output_form`)."""

    name: str
    score_threshold: float
    iou_threshold: float
    max_proposals_per_class: int
    classes: int
    image_height: float
    image_width: float
    bbox_decoders: Tuple[HefBboxDecoder, ...]
    regression_length: int = 0
    input_division_factor: int = 0
    background_removal: bool = False
    background_removal_index: int = 0
    bbox_decoding_only: bool = False
    output_name: str = ""

    @property
    def output_form(self) -> str:
        """What the op hands the host. "by_class": the NMS op, whose output is HAILO_NMS_BY_CLASS
        by default and HAILO_NMS_BY_SCORE when the user asks for it (InferModel
        `output().set_format_order`; the HEF does not choose between the two). "bbox_only": the
        yolov8_bbox_only op, a float32 NHWC tensor (1, proposals, 4 + classes)."""
        return "bbox_only" if self.bbox_decoding_only else "by_class"


@dataclass(frozen=True)
class HefAnchorDecoder:
    """One bbox decoder of a YOLOv5 op (layer, anchors (w, h) in pixels) or a YOLOX op (reg, obj,
    cls layers). Layer names are resolved from the pad indices (None: unresolved)."""

    stride: int
    layer: Optional[str] = None                      # YOLOv5: the tensor; YOLOX: reg
    anchors: Tuple[Tuple[int, int], ...] = ()        # YOLOv5
    obj_layer: Optional[str] = None                  # YOLOX
    cls_layer: Optional[str] = None                  # YOLOX
    pad_indices: Tuple[int, ...] = ()


@dataclass(frozen=True)
class HefAnchorOp:
    """A YOLOv5 (kind "yolov5"), YOLOv5-seg ("yolov5_seg") or YOLOX ("yolox") NMS op. Thresholds
    are the HEF's doubles. YOLOv5-seg: the prototype layer and the op's mask_threshold too."""

    name: str
    kind: str
    score_threshold: float
    iou_threshold: float
    max_proposals_per_class: int
    classes: int
    image_height: float
    image_width: float
    decoders: Tuple[HefAnchorDecoder, ...]
    output_name: str = ""
    proto_layer: Optional[str] = None   # yolov5_seg
    mask_threshold: float = 0.0         # yolov5_seg
    # SSD (kind "ssd"): (centers_scale_factor, bbox_dimensions_scale_factor, ty, tx, th, tw) and the
    # background class removed (None: no background_removal); decoders' anchors are floats there.
    ssd_coding: Tuple[float, ...] = ()
    background: Optional[int] = None


@dataclass(frozen=True)
class HefPostProcessOp:
    """Any post-process op of the network group (kind: yolov8, yolov5, yolox, ssd, iou, yolov5_seg,
    argmax, softmax, or nms/logits when the HEF names a kind this reader does not know)."""

    name: str
    kind: str
    output_name: str = ""
    input_pads: Tuple[int, ...] = ()


@dataclass(frozen=True)
class HefNetworkGroup:
    name: str
    index: int
    networks: Tuple[str, ...]
    contexts: int
    inputs: Tuple[HefLayer, ...]
    outputs: Tuple[HefLayer, ...]
    nms: Optional[HefNmsOp] = None
    ops: Tuple[HefPostProcessOp, ...] = ()
    sorted_outputs_order: Tuple[str, ...] = ()
    partial_layout: bool = False  # the layers were read from the first partial layout (Hailo-8L, 15M)
    anchor_op: Optional[HefAnchorOp] = None  # a YOLOv5 or YOLOX NMS op

    def output(self, name: str) -> HefLayer:
        for o in self.outputs:
            if o.name == name:
                return o
        raise KeyError(name)


@dataclass(frozen=True)
class HefInfo:
    header: HefHeader
    hw_arch: int
    hw_arch_name: str
    sdk_version: str
    timestamp: int
    extensions: Tuple[int, ...]
    optional_extensions: Tuple[int, ...]
    network_groups: Tuple[HefNetworkGroup, ...]
    path: Optional[str] = None

    @property
    def extension_names(self) -> Tuple[str, ...]:
        return tuple(_EXTENSIONS.get(e, f"EXTENSION_{e}") for e in self.extensions)

    def network_group(self, name: Union[None, int, str] = None) -> HefNetworkGroup:
        """By name or index; None: the first (as HailoRT does)."""
        if name is None:
            return self.network_groups[0]
        if isinstance(name, int) and not isinstance(name, bool):
            if not 0 <= name < len(self.network_groups):
                raise KeyError(f"network group index {name} out of range (the HEF has {len(self.network_groups)})")
            return self.network_groups[name]
        for ng in self.network_groups:
            if ng.name == name:
                return ng
        raise KeyError(f"no network group {name!r}; the HEF has {[ng.name for ng in self.network_groups]}")

    def to_dict(self) -> Dict[str, Any]:
        """Plain JSON-ready data (tuples become lists)."""
        d = asdict(self)
        d["extension_names"] = list(self.extension_names)
        for ng, ngd in zip(self.network_groups, d["network_groups"]):
            for kind in ("inputs", "outputs"):
                for layer, ld in zip(getattr(ng, kind), ngd[kind]):
                    ld["vstream_shape"] = list(layer.vstream_shape)
        return _jsonable(d)


def _jsonable(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, float) and not math.isfinite(x):
        return str(x)
    return x


# --------------------------------------------------------------------------------------------
# Reading
# --------------------------------------------------------------------------------------------
def _be(fmt: str, data: bytes, off: int) -> int:
    return struct.unpack_from(">" + fmt, data, off)[0]


def _read_header(head: bytes, file_size: int) -> Tuple[HefHeader, int]:
    """Parses the binary header; returns it and the total size the file must have."""
    if file_size < 12:
        raise HefError(f"not a HEF file: {file_size} bytes, shorter than a HEF header")
    if head[:4] != _MAGIC:
        raise HefError(f"not a HEF file: magic is {head[:4].hex(' ')}, expected 01 48 45 46 ('\\x01HEF')")
    version = _be("I", head, 4)
    if version not in _HEADER_SIZES:
        raise HefError(f"unsupported HEF header version {version} (this reader knows versions 0 to 3)")
    hsize = _HEADER_SIZES[version]
    if file_size < hsize:
        raise HefError(f"truncated HEF: {file_size} bytes, the version {version} header alone is {hsize}")
    proto_size = _be("I", head, 8)
    kw: Dict[str, Any] = {}
    if version == 0:   # reserved u32, md5[16] of the proto
        kw.update(checksum_kind="md5", checksum=head[16:32].hex())
        total = hsize + proto_size
    elif version == 1:  # crc32 u32 of proto + ccws, ccws_size u64, reserved u32
        ccws = _be("Q", head, 16)
        kw.update(checksum_kind="crc32", checksum=f"{_be('I', head, 12):08x}", ccws_size=ccws)
        total = hsize + proto_size + ccws
    elif version == 2:  # xxh3 u64 of proto + ccws, ccws_size u64, 2 reserved u64
        ccws = _be("Q", head, 20)
        kw.update(checksum_kind="xxh3_64", checksum=f"{_be('Q', head, 12):016x}", ccws_size=ccws)
        total = hsize + proto_size + ccws
    else:  # v3: xxh3 u64, ccws_size_with_padding u64, hef_padding_size u32, additional_info_size u64,
        #      proto_xxh3 u64 (of the proto only), reserved u64
        ccws = _be("Q", head, 20)
        padding = _be("I", head, 28)
        extra = _be("Q", head, 32)
        if padding > ccws:
            raise HefError(f"corrupt HEF header: padding size {padding} exceeds the CCWS size {ccws}")
        kw.update(checksum_kind="xxh3_64", checksum=f"{_be('Q', head, 12):016x}", ccws_size=ccws, padding_size=padding,
                  additional_info_size=extra, proto_checksum=f"{_be('Q', head, 40):016x}")
        total = hsize + proto_size + ccws + extra
    if proto_size == 0:
        raise HefError("corrupt HEF header: the protobuf section is empty (proto size 0)")
    if proto_size > file_size - hsize:
        raise HefError(f"truncated HEF: the header says the protobuf section is {proto_size} bytes, only "
                       f"{file_size - hsize} follow the {hsize}-byte header")
    if total > file_size:
        raise HefError(f"truncated HEF: the header declares {total} bytes (header {hsize} + proto {proto_size} + "
                       f"CCWS {total - hsize - proto_size}), the file has {file_size}")
    if total < file_size:
        raise HefError(f"corrupt HEF: {file_size - total} bytes beyond the {total} the header declares")
    return HefHeader(version=version, header_size=hsize, proto_size=proto_size, file_size=file_size, **kw), total


def _verify(header: HefHeader, read_range) -> Optional[bool]:
    """Checks the header's checksum; read_range(start, stop) yields the bytes in chunks."""
    h = header
    if h.version == 0:
        md5 = hashlib.md5()
        for chunk in read_range(h.header_size, h.header_size + h.proto_size):
            md5.update(chunk)
        return md5.hexdigest() == h.checksum
    if h.version == 1:
        crc = 0
        for chunk in read_range(h.header_size, h.file_size):
            crc = zlib.crc32(chunk, crc)
        return f"{crc & 0xFFFFFFFF:08x}" == h.checksum
    try:
        import xxhash  # optional: not a dependency
    except ImportError:
        return None
    x = xxhash.xxh3_64()
    if h.version == 3 and h.proto_checksum and int(h.proto_checksum, 16):
        for chunk in read_range(h.header_size, h.header_size + h.proto_size):
            x.update(chunk)
        return x.hexdigest() == h.proto_checksum
    # v2: proto + CCWS; v3 without a proto checksum: everything after the header (additional info too)
    for chunk in read_range(h.header_size, h.file_size):
        x.update(chunk)
    return x.hexdigest() == h.checksum


def read_hef(source: Union[str, os.PathLike, bytes, bytearray, memoryview, BinaryIO], *,
             verify_checksum: bool = True) -> HefInfo:
    """Reads a HEF (a path, the file's bytes, or a binary file object) into a HefInfo.

    Only the header and the protobuf section are read (the compiled configuration is skipped,
    except to verify a v1/v2 checksum). verify_checksum: check the header's checksum (v0 md5, v1
    crc32; v2/v3 xxh3-64 when the optional `xxhash` module is installed); a mismatch raises HefError.
    Raises HefError for anything that is not a well-formed HEF."""
    path: Optional[str] = None
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        with open(path, "rb") as f:
            return _read_file(f, path, verify_checksum)
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source) if not isinstance(source, bytes) else source
        file_size = len(data)
        header, _ = _read_header(data[:56], file_size)

        def read_range(a: int, b: int) -> Iterable[bytes]:
            for s in range(a, b, _CHUNK):
                yield data[s:min(b, s + _CHUNK)]

        ok = _verify(header, read_range) if verify_checksum else None
        proto = data[header.header_size:header.header_size + header.proto_size]
        return _finish(header, ok, proto, path)
    if hasattr(source, "read") and hasattr(source, "seek"):
        return _read_file(source, getattr(source, "name", None), verify_checksum)
    raise TypeError(f"read_hef needs a path, bytes or a binary file, got {type(source).__name__}")


def _read_file(f: BinaryIO, path: Optional[str], verify_checksum: bool) -> HefInfo:
    f.seek(0, os.SEEK_END)
    file_size = f.tell()
    f.seek(0)
    head = f.read(56)
    header, _ = _read_header(head, file_size)

    def read_range(a: int, b: int) -> Iterable[bytes]:
        f.seek(a)
        left = b - a
        while left > 0:
            chunk = f.read(min(_CHUNK, left))
            if not chunk:
                raise HefError(f"truncated HEF: the file ended while reading offset {b - left}")
            left -= len(chunk)
            yield chunk

    ok = _verify(header, read_range) if verify_checksum else None
    proto = b"".join(read_range(header.header_size, header.header_size + header.proto_size))
    return _finish(header, ok, proto, None if path is None else str(path))


def _finish(header: HefHeader, ok: Optional[bool], proto: bytes, path: Optional[str]) -> HefInfo:
    if ok is False:
        raise HefError(f"corrupt HEF: {header.checksum_kind} checksum in the header ({header.checksum}) does not "
                       f"match the file's contents")
    header = HefHeader(**{**asdict(header), "checksum_ok": ok})
    base = header.header_size
    root = _Msg(proto, 0, len(proto), "ProtoHEFHef", 0, _HEF, base)
    hdr = root.msg(1, "header", _HEADER)
    hw_arch = hdr.u32(1) if hdr else 0
    sdk = hdr.text(3) if hdr else ""
    ts = hdr.u64(2) if hdr else 0
    exts = tuple(m.u32(1) for m in root.msgs(5, "extensions", _EXTENSION))
    opt_exts = tuple(m.u32(1) for m in root.msgs(6, "optional_extensions", _EXTENSION))
    groups = root.msgs(2, "network_groups", _NETWORK_GROUP)
    if not groups:
        raise HefError("the HEF holds no network group")
    features = _Features(per_feature=_EXT_OUTPUT_SCALE_PER_FEATURE in exts,
                         hw_padding_in_dfc=_EXT_HW_PADDING in opt_exts,
                         multi_layout=hw_arch in _MULTI_LAYOUT_ARCHS)
    ngs = tuple(_network_group(g, i, features) for i, g in enumerate(groups))
    return HefInfo(header=header, hw_arch=hw_arch, hw_arch_name=_HW_ARCH.get(hw_arch, f"HW_ARCH_{hw_arch}"),
                   sdk_version=sdk, timestamp=ts, extensions=exts, optional_extensions=opt_exts,
                   network_groups=ngs, path=path)


@dataclass(frozen=True)
class _Features:
    per_feature: bool
    hw_padding_in_dfc: bool
    multi_layout: bool


def _network_group(g: _Msg, i: int, features: _Features) -> HefNetworkGroup:
    """One network group. Its layers live in a core op: ops[k].core_op in HEFs with net-flow ops,
    the network group's own legacy fields otherwise; on Hailo-8L/15M (and whenever the top level
    has no contexts) in the first partial layout, which is the one HailoRT reads."""
    ops = g.msgs(8, "ops", _OP)
    core_op = next((op for op in ops if op.has(4)), None)
    partial = False
    if core_op is not None:  # ProtoHEFCoreOp, partial_core_ops 7 -> ProtoHEFPartialCoreOp.core_op 1
        holder = core_op.need(4, "core_op", _CORE_OP)
        partials = ("partial_core_ops", _PARTIAL_CORE_OP, "core_op", _CORE_OP)
    else:  # legacy: partial_network_groups 7 -> ProtoHEFPartialNetworkGroup.network_group 1
        holder = g
        partials = ("partial_network_groups", _PARTIAL_NG, "network_group", _NETWORK_GROUP)
    if features.multi_layout or not holder.has(3):
        parts = holder.msgs(7, partials[0], partials[1])
        if parts and parts[0].has(1):
            holder = parts[0].need(1, partials[2], partials[3])
            partial = True
    meta = holder.msg(1, "network_group_metadata", _NG_METADATA)
    own_meta = g.msg(1, "network_group_metadata", _NG_METADATA) if holder is not g else meta
    name = g.text(10) or (own_meta.text(1) if own_meta else "") or (meta.text(1) if meta else "")
    if not name:
        raise HefError(f"network group {i} has no name")
    transposed_net = bool(meta and meta.flag(3))
    contexts = holder.msgs(3, "contexts", _CONTEXT)
    if not contexts:
        raise HefError(f"network group {name!r} has no contexts: neither ops[].core_op nor the legacy network "
                       f"group fields hold its layers")
    inputs: List[HefLayer] = []
    outputs: List[HefLayer] = []
    seen: set = set()
    for c in contexts:
        cidx = c.u32(1)
        md = c.msg(3, "metadata", _CONTEXT_METADATA)
        if md is None:
            continue
        for e in md.msgs(2, "edge_layers", _EDGE_LAYER):
            cs = e.msg(5, "context_switch_info", _CS_INFO)
            if cs is not None and cs.u32(3) != 0:   # not BOUNDARY: inter-context / DDR / cache
                continue
            direction = "output" if e.u32(1) == 1 else "input"
            pad = e.u32(7) if e.has(7) else None
            for layer in _edge_layers(e, direction, pad, cidx, e.u32(6), transposed_net, features):
                key = (direction, layer.name)
                if key in seen:
                    continue
                seen.add(key)
                (outputs if direction == "output" else inputs).append(layer)
    if not outputs:
        raise HefError(f"network group {name!r} has no output layer")
    sorted_outputs = holder.texts(4)
    if sorted_outputs:
        rank = {n: k for k, n in enumerate(sorted_outputs)}
        outputs.sort(key=lambda o: rank.get(o.name, len(rank)))
    networks = tuple(f"{name}/{n}" for n in holder.texts(6)) or (f"{name}/{name}",)

    # Post-process ops and the pad graph (ProtoHEFPadEdge src -> dst).
    edges_in = {pe.u32(2): pe.u32(1) for pe in g.msgs(9, "pad_edges", _PAD_EDGE)}
    by_pad = {o.pad_index: o.name for o in outputs if o.pad_index is not None}

    def resolve(pad_index: int) -> Optional[str]:
        if pad_index in by_pad:  # HailoRT: bbox decoder pad indices are core output pad indices
            return by_pad[pad_index]
        src = edges_in.get(pad_index)  # tolerate an index of the NMS op's own input pad
        return by_pad.get(src) if src is not None else None

    pp_ops: List[HefPostProcessOp] = []
    nms: Optional[HefNmsOp] = None
    anchor_op: Optional[HefAnchorOp] = None
    for op in ops:
        if op.has(4):
            continue
        op_name = op.text(1)
        out_pads = op.msgs(3, "output_pads", _PAD)
        out_name = out_pads[0].text(2) if out_pads else ""
        in_pads = tuple(p.u32(1) for p in op.msgs(2, "input_pads", _PAD))
        if op.has(5):
            n = op.need(5, "nms_op", _NMS_OP)
            kind = next((k for num, k in sorted(_NMS_KINDS.items()) if n.has(num)), "nms")
            pp_ops.append(HefPostProcessOp(op_name, kind, out_name, in_pads))
            if kind in ("yolov5", "yolox", "yolov5_seg") and anchor_op is None:
                anchor_op = _anchor_op(n, kind, op_name, out_name, resolve)
            if kind == "ssd" and anchor_op is None:
                anchor_op = _ssd_op(n, op_name, out_name, resolve)
            if kind == "yolov8" and nms is None:
                y = n.need(12, "yolov8_nms_op", _YOLOV8_OP)
                decs = []
                for d in y.msgs(4, "bbox_decoders", _YOLOV8_DECODER):
                    decs.append(HefBboxDecoder(stride=d.u32(1), reg_pad_index=d.u32(2), cls_pad_index=d.u32(3),
                                               reg_layer=resolve(d.u32(2)), cls_layer=resolve(d.u32(3))))
                nms = HefNmsOp(name=op_name, score_threshold=n.f64(1), iou_threshold=n.f64(2),
                               max_proposals_per_class=n.u32(3), classes=n.u32(4),
                               image_height=_op_image_side(y, 1, "image_height"),
                               image_width=_op_image_side(y, 2, "image_width"), bbox_decoders=tuple(decs),
                               regression_length=y.u32(5),
                               input_division_factor=y.u32(3), background_removal=n.flag(5),
                               background_removal_index=n.u32(6), bbox_decoding_only=n.flag(13), output_name=out_name)
        elif op.has(6):
            lt = op.need(6, "logits_op", _LOGITS_OP).u32(1)
            pp_ops.append(HefPostProcessOp(op_name, {0: "argmax", 1: "softmax"}.get(lt, "logits"), out_name, in_pads))
    return HefNetworkGroup(name=name, index=g.u32(11) if g.has(11) else (meta.u32(2) if meta else i),
                           networks=networks, contexts=len(contexts), inputs=tuple(inputs), outputs=tuple(outputs),
                           nms=nms, ops=tuple(pp_ops), sorted_outputs_order=sorted_outputs, partial_layout=partial,
                           anchor_op=anchor_op)


# An NMS op's image side: 0 (not set) or pixels from 1 up to this; the boxes are normalized by it.
_MAX_OP_IMAGE_SIDE = 1e6


def _op_image_side(y: _Msg, num: int, field: str) -> float:
    """An NMS op's image_height or image_width (double field `num` of `y`): 0 when not set, else a
    size in pixels. Anything else (negative, below 1, NaN, inf, 1e6 and up) is a corrupt op:
    HailoRT normalizes its boxes by it and the mismatch report divides by it."""
    v = y.f64(num)
    if v == 0 or (1 <= v < _MAX_OP_IMAGE_SIDE):
        return v
    raise HefError(f"{y.path}: {field} is {v!r}, not an image side in pixels (1 to {_MAX_OP_IMAGE_SIDE:g}, or 0 "
                   f"for none): the NMS op is corrupt; compile the model again")


def _packed_u32s(m: _Msg, num: int) -> Tuple[int, ...]:
    """A repeated uint32 field, packed (proto3's default) or not."""
    out: List[int] = []
    for wt, val in m._f.get(num, ()):
        if wt == 0:
            out.append(val & 0xFFFFFFFF)
            continue
        pos, end = val
        while pos < end:
            v, pos = _varint(m._d, pos, end, m.path, m._base)
            out.append(v & 0xFFFFFFFF)
    return tuple(out)


def _anchor_op(n: _Msg, kind: str, op_name: str, out_name: str, resolve: Any) -> HefAnchorOp:
    """The YOLOv5 (ProtoHEFNmsOp field 7) or YOLOX (field 8) op and its decoders."""
    decs: List[HefAnchorDecoder] = []
    extra: Dict[str, Any] = {}
    if kind in ("yolov5", "yolov5_seg"):
        seg = kind == "yolov5_seg"
        y = n.need(11, "yolo_seg_op", _YOLOV5_SEG_OP) if seg else n.need(7, "yolo_nms_op", _YOLOV5_OP)
        if seg:  # (hef.cpp create_yolov5_seg_op_metadata: mask_threshold as float32, the proto by name)
            info = y.need(4, "proto_info", _PROTO_INFO)
            extra = dict(proto_layer=info.text(3) or None, mask_threshold=_f32(y.f64(5)))
        for d in y.msgs(3 if seg else 4, "bbox_decoders", _YOLOV5_DECODER):
            hs, ws = _packed_u32s(d, 2), _packed_u32s(d, 3)
            if len(hs) != len(ws):
                # HailoRT refuses it too (create_yolov5_config: HAILO_INVALID_HEF)
                raise HefError(f"{d.path}: {len(hs)} anchor heights but {len(ws)} widths")
            decs.append(HefAnchorDecoder(stride=d.u32(4), layer=resolve(d.u32(5)), anchors=tuple(zip(ws, hs)),
                                         pad_indices=(d.u32(5),)))
    else:
        y = n.need(8, "yolox_nms_op", _YOLOX_OP)
        for d in y.msgs(3, "bbox_decoders", _YOLOX_DECODER):
            decs.append(HefAnchorDecoder(stride=d.u32(1), layer=resolve(d.u32(2)), obj_layer=resolve(d.u32(4)),
                                         cls_layer=resolve(d.u32(3)), pad_indices=(d.u32(2), d.u32(4), d.u32(3))))
    return HefAnchorOp(name=op_name, kind=kind, score_threshold=n.f64(1), iou_threshold=n.f64(2),
                       max_proposals_per_class=n.u32(3), classes=n.u32(4),
                       image_height=_op_image_side(y, 1, "image_height"),
                       image_width=_op_image_side(y, 2, "image_width"), decoders=tuple(decs), output_name=out_name,
                       **extra)


def _ssd_op(n: _Msg, op_name: str, out_name: str, resolve: Any) -> HefAnchorOp:
    """The SSD op (ProtoHEFNmsOp field 9) and its decoders, as HailoRT's create_ssd_op_metadata
    reads them (hef.cpp): regression indices all 0 mean its defaults (ty 0, tx 1, th 2, tw 3)."""
    y = n.need(9, "ssd_nms_op", _SSD_OP)
    decs: List[HefAnchorDecoder] = []
    for d in y.msgs(9, "bbox_decoders", _SSD_DECODER):
        hs, ws = d.f32s(1), d.f32s(2)
        if len(hs) != len(ws):
            raise HefError(f"{d.path}: {len(hs)} anchor heights but {len(ws)} widths")
        decs.append(HefAnchorDecoder(stride=0, layer=resolve(d.u32(3)), cls_layer=resolve(d.u32(4)),
                                     anchors=tuple(zip(ws, hs)), pad_indices=(d.u32(3), d.u32(4))))  # type: ignore[arg-type]
    order = (y.u32(5), y.u32(6), y.u32(7), y.u32(8))
    if order == (0, 0, 0, 0):
        order = (0, 1, 2, 3)
    return HefAnchorOp(name=op_name, kind="ssd", score_threshold=n.f64(1), iou_threshold=n.f64(2),
                       max_proposals_per_class=n.u32(3), classes=n.u32(4),
                       image_height=_op_image_side(y, 1, "image_height"),
                       image_width=_op_image_side(y, 2, "image_width"), decoders=tuple(decs), output_name=out_name,
                       ssd_coding=(float(y.u32(3)), float(y.u32(4))) + order,
                       background=n.u32(6) if n.flag(5) else None)


def _anchor_op_heads(ng: "HefNetworkGroup", op: HefAnchorOp) -> Tuple[List[Head], List[str], Dict[str, Any]]:
    """Heads, the outputs they use (in the HEF's output order) and the op's settings."""
    heads: List[Head] = []
    for k, d in enumerate(op.decoders):
        layers = (d.layer, d.cls_layer) if op.kind == "ssd" else (d.layer,) if op.kind != "yolox" else (
            d.layer, d.obj_layer, d.cls_layer)
        if any(x is None for x in layers):
            raise ValueError(f"{op.kind} op {op.name!r}: bbox decoder {k} points at pad(s) {list(d.pad_indices)} that "
                             f"are not outputs of {ng.name!r}")
        if op.kind == "ssd":
            cs, ds, ty, tx, th, tw = op.ssd_coding
            order = "".join(k for _, k in sorted(zip((ty, tx, th, tw), "yxhw")))
            heads.append(SsdHead(str(d.layer), str(d.cls_layer), d.anchors, centers_scale=cs, dims_scale=ds,
                                 reg_order=order, background=op.background))
        elif op.kind != "yolox":
            heads.append(AnchorHead(str(d.layer), d.anchors, int(d.stride) or None))
        else:
            heads.append(YoloxHead(str(d.layer), str(d.obj_layer), str(d.cls_layer), int(d.stride) or None))
    used = {n for h in heads for n in (h.box, h.cls, getattr(h, "obj", h.box))}
    kw: Dict[str, Any] = dict(score_threshold=_f32(op.score_threshold), iou_threshold=_f32(op.iou_threshold))
    if op.kind == "yolov5_seg":  # the prototype by its layer name (a stream name, or its last part)
        proto = next((o.name for o in ng.outputs if op.proto_layer and op.proto_layer in (o.name, o.name.split("/")[-1])),
                     None)
        if proto is None:
            raise ValueError(f"yolov5_seg op {op.name!r}: its proto layer {op.proto_layer!r} is not an output of "
                             f"{ng.name!r}")
        used.add(proto)
        kw["proto"] = proto
    names = [o.name for o in ng.outputs if o.name in used]
    if op.max_proposals_per_class:
        kw["max_per_class"] = int(op.max_proposals_per_class)
    if op.image_height > 0 and op.image_width > 0:  # both set (the reader checked their range)
        kw["image_size"] = (int(round(op.image_height)), int(round(op.image_width)))
    return heads, names, kw


def _edge_layers(e: _Msg, direction: str, pad: Optional[int], cidx: int, net_idx: int, transposed_net: bool,
                 features: _Features) -> List[HefLayer]:
    if e.has(3):
        info = e.need(3, "layer_info", _LAYER_INFO)
        return [_layer(info, direction, pad, cidx, net_idx, transposed_net, features, None, True)]
    if e.has(4):
        mux = e.need(4, "layer_mux", _LAYER_MUX)
        out: List[HefLayer] = []
        _mux_leaves(mux, direction, cidx, net_idx, transposed_net, features, out)
        return out
    if e.has(8):
        planes = e.need(8, "layer_planes", _LAYER_PLANES)
        fmt = _PLANES_FORMATS.get(planes.u32(2), f"PLANES_{planes.u32(2)}")
        shape = (planes.u32(4), planes.u32(5), planes.u32(6))
        first = next(iter(planes.msgs(3, "planes", _HEF_EDGE)), None)
        ref = None
        if first is not None and first.has(1):
            ref = _layer(first.need(1, "layer_info", _LAYER_INFO), direction, None, cidx, net_idx, transposed_net,
                         features, None, False)
        return [HefLayer(name=planes.text(1), direction=direction, shape=shape, padded_shape=shape, hw_shape=shape,
                         format_code=-1, device_order=fmt, host_order=fmt,
                         bytes_per_element=ref.bytes_per_element if ref else 1, dtype=ref.dtype if ref else "uint8",
                         qp_zp=ref.qp_zp if ref else 0.0, qp_scale=ref.qp_scale if ref else 1.0,
                         pad_index=pad, context_index=cidx, network_index=net_idx)]
    return []


def _mux_leaves(mux: _Msg, direction: str, cidx: int, net_idx: int, transposed_net: bool, features: _Features,
                out: List[HefLayer]) -> None:
    """A mux edge carries several layers in one stream; HailoRT demuxes it into its predecessors."""
    parent = mux.text(1)
    for p in mux.msgs(5, "predecessors", _HEF_EDGE):
        if p.has(1):
            out.append(_layer(p.need(1, "layer_info", _LAYER_INFO), direction, None, cidx, net_idx, transposed_net,
                              features, parent, False))
        elif p.has(2):  # nested mux; depth is capped by _Msg
            _mux_leaves(p.need(2, "layer_mux", _LAYER_MUX), direction, cidx, net_idx, transposed_net, features, out)


def _layer(info: _Msg, direction: str, pad: Optional[int], cidx: int, net_idx: int, transposed_net: bool,
           features: _Features, mux: Optional[str], boundary_stream: bool) -> HefLayer:
    name = info.text(1)
    if not name:
        raise HefError(f"{info.path}: edge layer without a name")
    base = info.msg(2, "edge_layer_base", _LAYER_BASE)
    if base is None:
        raise HefError(f"{info.path} ({name!r}): edge layer without edge_layer_base")
    code = base.u32(7)
    order = FORMAT_CODES.get(code, f"UNKNOWN_{code}")
    host = HOST_ORDER.get(order, order)
    h, w, c = base.u32(1), base.u32(3), base.u32(5)
    padded = (base.u32(2), base.u32(4), base.u32(6))
    nms_info = None
    if order == "NMS_ON_CHIP":
        add = base.msg(11, "additional_info", _ADDITIONAL_INFO)
        ni = add.msg(1, "nms_info", _NMS_INFO) if add else None
        if ni is not None:
            nms_info = dict(number_of_classes=ni.u64(2), max_output_size=ni.u64(3), bbox_size=ni.u64(4),
                            input_division_factor=ni.u64(7))
            h, w, c = ni.u64(2), 5, ni.u64(3) * max(1, ni.u64(7))
    nbytes = base.u32(12)
    dtype = {1: "uint8", 2: "uint16", 4: "float32"}.get(nbytes)
    transposed = info.flag(6) or transposed_net
    shape = (h, w, c)
    if transposed and order != "NC":
        shape = (w, h, c)
    # HailoRT strips NHCW padding itself ("core HW padding") for boundary streams that qualify; its
    # stream info then reports the unpadded shape as hw_shape.
    hw = padded
    if (boundary_stream and order == "NHCW" and not features.hw_padding_in_dfc and base.u32(10) == h
            and (w * c) % 8 == 0):
        shmifo = base.u32(15)
        max_periph = _PERIPH_BYTES_MAX if shmifo == 0 else min(_PERIPH_BYTES_MAX, shmifo)
        if w * c * nbytes <= max_periph - 1:
            hw = (h, w, c)
    num = info.msg(3, "numeric_info", _NUMERIC_INFO)
    zps = num.f64s(5) if num else ()
    scales = num.f64s(6) if num else ()
    per_feature = features.per_feature and direction == "output" and bool(zps or scales) and order != "NMS_ON_CHIP"
    if per_feature:
        for what, vals in (("qp_zps", zps), ("qp_scales", scales)):
            if vals and len(vals) != c:
                raise HefError(f"{info.path} ({name!r}): {len(vals)} {what} for {c} features")
    return HefLayer(
        name=name, direction=direction, shape=shape, padded_shape=padded, hw_shape=hw, format_code=code,
        device_order=order, host_order=host, bytes_per_element=nbytes, dtype=dtype,
        qp_zp=num.f32(1) if num else 0.0, qp_scale=num.f32(2) if num else 0.0,
        limvals_min=num.f32(3) if num else 0.0, limvals_max=num.f32(4) if num else 0.0,
        qp_zps=zps or None, qp_scales=scales or None, per_feature=per_feature, pad_index=pad,
        original_names=info.texts(5), context_index=cidx, network_index=net_idx, transposed=transposed, mux=mux,
        nms_info=nms_info)


# --------------------------------------------------------------------------------------------
# DecoderConfig from a HEF
# --------------------------------------------------------------------------------------------
def _f32(x: float) -> float:
    """HailoRT casts the HEF's double thresholds to float32 before comparing."""
    return struct.unpack("<f", struct.pack("<f", x))[0] if math.isfinite(x) and abs(x) < 3.4e38 else x


def decoder_outputs(ng: HefNetworkGroup, names: Optional[Sequence[str]] = None, *,
                    device_buffers: bool = False) -> List["OutputInfo"]:
    """OutputInfo for the network group's outputs (all, or `names` in that order).

    Host buffers (default): what a vstream hands out: host order, logical shape, dense.
    device_buffers=True: raw device buffers in the device order with the stream's hw_shape."""

    layers = ng.outputs if names is None else [ng.output(n) for n in names]
    infos = []
    for o in layers:
        if o.dtype not in ("uint8", "uint16"):
            raise ValueError(f"output {o.name!r}: {o.bytes_per_element} bytes per element is not a quantized "
                             f"uint8/uint16 tensor")
        order = o.device_order if device_buffers else o.host_order
        supported = ("NHWC", "FCR", "F8CR", "NHCW") if device_buffers else ("NHWC", "FCR", "F8CR")
        if order not in supported:
            raise ValueError(f"output {o.name!r} is {order} {o.vstream_shape}, not an (H, W, C) feature map a YOLOv8 "
                             f"head can be ({'/'.join(supported)})")
        if device_buffers and o.transposed:
            raise ValueError(f"output {o.name!r} is transposed on the device; raw transposed buffers are not supported")
        if device_buffers and o.mux:
            raise ValueError(f"output {o.name!r} is demuxed by HailoRT from stream {o.mux!r}; it has no raw buffer of "
                             f"its own")
        zp, scale = o.zp, o.scale
        if device_buffers:
            infos.append(OutputInfo(o.name, o.shape, o.dtype, order, zp=zp, scale=scale, padded_shape=o.hw_shape,
                                    device=True))
        else:
            infos.append(OutputInfo(o.name, o.shape, o.dtype, order, zp=zp, scale=scale))
    return infos


_QMAX = {"uint8": 255, "uint16": 65535}


def class_range(layer: HefLayer) -> Tuple[float, float]:
    """The float range a quantized output can represent: [(0 - zp) * scale, (qmax - zp) * scale],
    over all features for per-feature quantization."""
    qmax = _QMAX.get(layer.dtype or "", 255)
    zps = layer.zp if isinstance(layer.zp, tuple) else (layer.zp,)
    scales = layer.scale if isinstance(layer.scale, tuple) else (layer.scale,)
    if len(zps) == 1:
        zps = zps * len(scales)
    if len(scales) == 1:
        scales = scales * len(zps)
    lo = min((0 - z) * s for z, s in zip(zps, scales))
    hi = max((qmax - z) * s for z, s in zip(zps, scales))
    return lo, hi


def infer_class_activation(layers: Sequence[HefLayer]) -> Tuple[Optional[str], str]:
    """Whether class outputs hold sigmoid scores (the model ends in a sigmoid on chip: "none") or
    raw logits ("sigmoid" on the host), from their quantization: scores are quantized over [0, 1],
    logits over a range reaching well below 0. Returns (None, reason) when it cannot tell."""
    ranges = [(o.name, *class_range(o)) for o in layers]
    if not ranges:
        return None, "no class outputs"
    lo = min(r[1] for r in ranges)
    hi = max(r[2] for r in ranges)
    span = f"class outputs are quantized over [{lo:.4g}, {hi:.4g}]"
    if lo < -0.05:
        return "sigmoid", f"{span}: raw logits, the host applies the sigmoid"
    if lo >= -0.05 and hi <= 1.05:
        return "none", f"{span}: sigmoid scores computed on the chip"
    return None, f"{span}: neither scores in [0, 1] nor logits; the preset decides"


_MAX_INPUT_SIDE = 1 << 20  # heads.MAX_IMAGE_SIDE: larger "inputs" are corrupt files, not sizes to suggest


def _wxh(hw: Tuple[int, int]) -> str:
    return f"{hw[1]}x{hw[0]}"


def _op_image_size(nms: HefNmsOp) -> Optional[Tuple[int, int]]:
    if nms.image_height > 0 and nms.image_width > 0:  # both set (the reader checked their range)
        return int(round(nms.image_height)), int(round(nms.image_width))
    return None


def _input_size(ng: HefNetworkGroup) -> Optional[Tuple[int, int]]:
    if len(ng.inputs) == 1 and 0 < min(ng.inputs[0].shape[:2]) and max(ng.inputs[0].shape[:2]) <= _MAX_INPUT_SIDE:
        h, w = ng.inputs[0].shape[:2]
        return int(h), int(w)
    return None


def _op_heads(ng: HefNetworkGroup) -> List[Tuple[int, Tuple[int, int]]]:
    """(stride, grid) of each bbox decoder whose stride is set and whose reg output is known."""
    out = []
    names = {o.name for o in ng.outputs}
    for d in ng.nms.bbox_decoders if ng.nms is not None else ():
        if d.stride and d.reg_layer in names:
            gh, gw = ng.output(d.reg_layer).shape[:2]
            if gh > 0 and gw > 0:
                out.append((int(d.stride), (int(gh), int(gw))))
    return out


def _decode_image_size(ng: HefNetworkGroup, semantics: str) -> Optional[Tuple[int, int]]:
    """The image size from_hef decodes a YOLOv8 NMS op's heads with. Stride x grid must equal the
    image size on every head, so the size the op's strides and the grids describe wins when it is
    the op's or the input's; otherwise the op's under the hailort preset (HailoRT normalizes by it)
    and the input's under the others."""
    nms = ng.nms
    if nms is None:
        return None
    op, inp = _op_image_size(nms), _input_size(ng)
    extents = {(st * gh, st * gw) for st, (gh, gw) in _op_heads(ng)}
    if len(extents) == 1 and next(iter(extents)) in (op, inp):
        return next(iter(extents))
    if op is not None and (semantics == "hailort" or inp is None):
        return op
    return inp


def hef_mismatches(ng: HefNetworkGroup, semantics: str = "hailort", image_size_given: bool = False,
                   heads_given: bool = False) -> List[str]:
    """Where the network group's YOLOv8 NMS op, its input, the op's strides and the output grids
    disagree about the image, each in plain words: the sizes involved, what HailoRT does with
    them, what hailo-decode does under `semantics`, and the fix. Empty when they agree (or the
    HEF has no such op). image_size_given / heads_given: the caller passes image_size= / heads=,
    so the op's size / strides disagreeing need no word."""
    nms = ng.nms
    if nms is None or not nms.bbox_decoders:
        return []
    op, inp = _op_image_size(nms), _input_size(ng)
    heads = _op_heads(ng)
    out: List[str] = []
    extents = [(st * gh, st * gw) for st, (gh, gw) in heads]
    parts = ", ".join(f"stride {st} x grid {_wxh(g)} = {_wxh(e)}" for (st, g), e in zip(heads, extents))
    if len(set(extents)) > 1 and not heads_given:
        fix = ""
        if inp is not None and all(inp[0] % g[0] == 0 and inp[0] // g[0] == inp[1] // g[1] and inp[1] % g[1] == 0
                                   for _, g in heads):
            fix = (f"; the input {_wxh(inp)} gives strides {', '.join(str(inp[0] // g[0]) for _, g in heads)}: pass "
                   f"heads=[Head(box, cls, stride), ...] with those")
        out.append(f"NMS op {nms.name!r}: its strides do not fit the output grids ({parts}), so its heads describe "
                   f"images of different sizes. HailoRT decodes with the op's strides and so does hailo-decode{fix}.")
        return out
    grid_size = extents[0] if extents else None
    if op is not None and inp is not None and op != inp:
        agree = ""
        if grid_size == inp:
            agree = f" The grids agree with the input ({parts}): the op's size is the wrong one."
        elif grid_size == op:
            agree = f" The op's strides agree with its size ({parts}): the input disagrees with both."
        elif grid_size is not None:
            agree = f" The grids say {_wxh(grid_size)} ({parts})."
        sx, sy = inp[1] / op[1], inp[0] / op[0]
        where = " (every box lands in the top-left part of the image)" if sx < 1 and sy < 1 else ""
        head = (f"NMS op {nms.name!r} says image {_wxh(op)}, but the input {ng.inputs[0].name!r} is {_wxh(inp)}."
                f"{agree} HailoRT normalizes its boxes by {_wxh(op)}, so on this HEF its normalized boxes are "
                f"scaled by {sx:g} in x and {sy:g} in y{where}.")
        used = _decode_image_size(ng, semantics)
        if image_size_given:
            pass  # the caller chose the size: nothing to tell
        elif used == op:
            out.append(f"{head} hailo-decode normalizes by {_wxh(op)} too, as HailoRT does; to normalize by the "
                       f"input, pass image_size=({inp[0]}, {inp[1]}) and heads=[Head(box, cls, stride), ...] with "
                       f"stride = {_wxh(inp)} / grid (stride x grid must equal the image size).")
        else:
            out.append(f"{head} hailo-decode normalizes by the input's {_wxh(inp)}, the size the strides x grids "
                       f"describe (stride x grid must equal the image size on every head), so its boxes are where "
                       f"the objects are and differ from the boxes of HailoRT's own op by that scale.")
    ref, what = (inp, f"the input {ng.inputs[0].name!r}") if inp is not None else (op, f"NMS op {nms.name!r}")
    if len(set(extents)) > 1:
        return out
    if (grid_size is not None and ref is not None and grid_size != ref and not heads_given
            and not (op is not None and inp is not None and op != inp and grid_size == op)):
        out.append(f"NMS op {nms.name!r}: its strides x the output grids give {_wxh(grid_size)} ({parts}), but "
                   f"{what} is {_wxh(ref)}. HailoRT places box centres at (cell + 0.5) x stride with the op's "
                   f"strides, and so does hailo-decode; if the strides are wrong, pass heads=[Head(box, cls, "
                   f"stride), ...] with stride = {_wxh(ref)} / grid.")
    return out


def bbox_only_proposals(ng: HefNetworkGroup) -> int:
    """Rows of the yolov8_bbox_only output: the cells of every bbox decoder's grid (HailoRT's
    compute_yolov8_bbox_only_num_of_proposals: the reg and cls inputs' H x W, summed, halved)."""
    if ng.nms is None:
        raise ValueError(f"network group {ng.name!r} has no YOLOv8 NMS op")
    names = {o.name for o in ng.outputs}
    total = 0
    for d in ng.nms.bbox_decoders:
        for layer in (d.reg_layer, d.cls_layer):
            if layer not in names:
                raise ValueError(f"NMS op {ng.nms.name!r}: bbox decoder pads {d.reg_pad_index}/{d.cls_pad_index} are "
                                 f"not outputs of {ng.name!r}")
            gh, gw = ng.output(layer).shape[:2]
            total += int(gh) * int(gw)
    return total // 2


@dataclass(frozen=True)
class HefNmsOutput:
    """What a HEF's YOLOv8 NMS op hands the host, with what reading it needs.

    form: "by_class" (the NMS op: HAILO_NMS_BY_CLASS by default, HAILO_NMS_BY_SCORE when asked
    for, so `formats` lists both) or "bbox_only" (the yolov8_bbox_only op: boxes and scores of
    `proposals` rows, no NMS). max_bboxes_total: HAILO_NMS_BY_SCORE's default (classes x
    max_per_class). Thresholds are HailoRT's float32 values, None where a bbox-only op leaves
    them unset. image_size: the op's, by which HailoRT normalizes the boxes."""

    name: str
    form: str
    num_classes: int
    max_per_class: int
    max_bboxes_total: int
    score_threshold: Optional[float]
    iou_threshold: Optional[float]
    image_size: Optional[Tuple[int, int]]
    proposals: Optional[int] = None

    @property
    def formats(self) -> Tuple[str, ...]:
        return ("bbox_only",) if self.form == "bbox_only" else ("by_class", "by_score")

    def decode(self, output: Any, *, format: Optional[str] = None, **kwargs: Any) -> Any:  # noqa: A002
        """decode_hailo_nms with this op's classes, caps, image size and (bbox-only) thresholds;
        format: one of `formats` (default: `form`). Keywords override."""
        from .detections import decode_hailo_nms

        fmt = self.form if format is None else format
        if fmt not in self.formats:
            raise ValueError(f"NMS op {self.name!r} outputs {' or '.join(self.formats)}, not {fmt!r}")
        kw: Dict[str, Any] = dict(num_classes=self.num_classes, image_size=self.image_size)
        if fmt == "bbox_only":
            kw["max_per_class"] = self.max_per_class
            if self.score_threshold is not None:
                kw["score_threshold"] = self.score_threshold
            if self.iou_threshold is not None:
                kw["iou_threshold"] = self.iou_threshold
        else:
            kw["max_per_class"] = self.max_per_class
            if fmt == "by_score":
                kw["max_bboxes_total"] = self.max_bboxes_total
        kw.update(kwargs)
        return decode_hailo_nms(output, format=fmt, **kw)


def _hef_network_group(source: Union[str, os.PathLike, bytes, HefInfo],
                       network_group: Union[None, int, str]) -> Tuple[HefInfo, HefNetworkGroup]:
    """The HEF (read unless given) and one of its network groups; ValueError naming the choices."""
    info = source if isinstance(source, HefInfo) else read_hef(source)
    try:
        return info, info.network_group(network_group)
    except KeyError as e:
        raise ValueError(str(e.args[0])) from None


def hef_nms_output(source: Union[str, os.PathLike, bytes, HefInfo],
                   network_group: Union[None, int, str] = None) -> HefNmsOutput:
    """The YOLOv8 NMS op's output of a HEF (see HefNmsOutput): which form the op holds (the
    HEF's bbox_decoding_only field), its classes, caps, thresholds and image size.
    ValueError when the network group has no such op."""
    info, ng = _hef_network_group(source, network_group)
    nms = ng.nms
    if nms is None:
        raise ValueError(f"network group {ng.name!r} has no YOLOv8 NMS op: its outputs are raw heads (use a Decoder)")
    mpc = int(nms.max_proposals_per_class) or 100
    classes = int(nms.classes)
    bbox_only = nms.bbox_decoding_only
    return HefNmsOutput(
        name=nms.output_name or nms.name, form=nms.output_form, num_classes=classes, max_per_class=mpc,
        max_bboxes_total=classes * mpc,
        score_threshold=None if bbox_only and nms.score_threshold <= 0 else _f32(nms.score_threshold),
        iou_threshold=None if bbox_only and nms.iou_threshold <= 0 else _f32(nms.iou_threshold),
        image_size=_op_image_size(nms), proposals=bbox_only_proposals(ng) if bbox_only else None)


# The last convolutions of an Ultralytics Detect/Pose/OBB head, as their ONNX names carry them
# into a HEF's original layer names: "/model.22/cv2.0/cv2.0.2/Conv" (box of head 0), cv3 (class),
# cv4 (keypoints for Pose, angle for OBB).
_ULTRALYTICS_HEAD_CONV = re.compile(r"(?:^|/)(cv[234])\.(\d+)(?:/|\.|$)")
_ROLE = {"cv2": "box", "cv3": "cls", "cv4": "extra"}


def heads_from_original_names(ng: "HefNetworkGroup") -> Optional[List[Head]]:
    """Heads of box, class and keypoint or angle outputs from their original (ONNX) layer names,
    where every output has one Ultralytics head-conv name (cv2/cv3/cv4 and the head index) and each
    head index has one box and one class output and at most one third; None otherwise (then the
    shapes are paired). The third is an angle output when it has 1 channel, keypoints otherwise."""
    found: Dict[Tuple[int, str], str] = {}
    for o in ng.outputs:
        hits = {(int(m.group(2)), _ROLE[m.group(1)]) for n in o.original_names for m in [_ULTRALYTICS_HEAD_CONV.search(n)] if m}
        if len(hits) != 1:
            return None
        (key,) = hits
        if key in found:
            return None
        found[key] = o.name
    indices = sorted({i for i, _ in found})
    if not indices or indices != list(range(len(indices))):
        return None
    heads = []
    for i in indices:
        if (i, "box") not in found or (i, "cls") not in found:
            return None
        extra = found.get((i, "extra"))
        angle = extra if extra is not None and ng.output(extra).shape[2] == 1 else None
        kpt = extra if extra is not None and angle is None else None
        heads.append(Head(found[(i, "box")], found[(i, "cls")], kpt=kpt, angle=angle))
    if len({(h.kpt is None, h.angle is None) for h in heads}) != 1:
        return None  # every head the same kind
    return heads


def config_from_hef(source: Union[str, os.PathLike, bytes, HefInfo], network_group: Union[None, int, str] = None, *,
                    device_buffers: bool = False, **settings: Any) -> "DecoderConfig":
    """A DecoderConfig for a HEF's raw YOLOv8 outputs.

    Outputs are described as a vstream hands them out (host order, logical shape, uint8/uint16 by
    the HEF's bytes per element, zp/scale or one per channel for per-feature HEFs); with
    device_buffers=True as raw device buffers (device order such as NHCW, padded hw shape).
    When the HEF has a YOLOv8 NMS op, its bbox decoders give the heads (and which outputs take
    part) and its score/IoU thresholds (as HailoRT's float32), max_proposals_per_class and image
    size fill the settings; otherwise heads are paired from the output shapes and the image size
    is the input layer's. class_activation, unless given, follows the class outputs' quantization
    (`infer_class_activation`): "none" for sigmoid scores quantized over [0, 1], "sigmoid" for
    logits. Keywords (any DecoderConfig argument: semantics, score_threshold, heads, image_size,
    ...) override. end2end, unless given, follows `end2end_choice`: True for box outputs of 4
    channels (YOLO26), False for DFL box outputs (pass end2end=True for YOLOv10); keypoint_decode
    and angle_decode, unless given, follow `task_decode_choice`: YOLO26's Pose26/OBB26 forms
    ("yolo26", "raw") for box outputs of 4 channels, YOLOv8/YOLO11's otherwise.

    When the op, the input, the op's strides and the grids disagree (`hef_mismatches`), a
    HefMismatchWarning says how, and what to pass. Stride x grid must equal the image size on every
    head, so the size the op's strides and the grids describe is used when it is the op's or the
    input's (`_decode_image_size`); otherwise the op's under the hailort preset (HailoRT normalizes
    by it), the input's under the others.
    A bbox-only op (`HefNmsOp.output_form` "bbox_only") gives the same heads and settings, except
    that zero thresholds in it (HailoRT never reads them there) leave the preset's.

    Raises HefError for an unreadable file, ValueError when no YOLOv8 decoder fits the outputs."""

    info, ng = _hef_network_group(source, network_group)
    nms = ng.nms
    kw: Dict[str, Any] = {}
    heads = None
    names: Optional[List[str]] = None
    if nms is not None and nms.bbox_decoders and "heads" not in settings:
        heads, names = [], []
        for k, d in enumerate(nms.bbox_decoders):
            if d.reg_layer is None or d.cls_layer is None:
                raise ValueError(f"NMS op {nms.name!r}: bbox decoder {k} points at pad(s) "
                                 f"{d.reg_pad_index}/{d.cls_pad_index} that are not outputs of {ng.name!r}")
            heads.append(Head(d.reg_layer, d.cls_layer, int(d.stride) or None))
            names += [d.reg_layer, d.cls_layer]
    if nms is None and ng.anchor_op is not None and "heads" not in settings:  # YOLOv5 / YOLOX op
        heads, names, kw = _anchor_op_heads(ng, ng.anchor_op)
    semantics = settings.get("semantics", "hailort")
    if nms is not None:
        # The bbox-only op runs no NMS, so HailoRT never reads its thresholds: zeros there mean
        # "not set", and the preset's values stand.
        if nms.score_threshold > 0 or not nms.bbox_decoding_only:
            kw["score_threshold"] = _f32(nms.score_threshold)
        if nms.iou_threshold > 0 or not nms.bbox_decoding_only:
            kw["iou_threshold"] = _f32(nms.iou_threshold)
        if nms.max_proposals_per_class:
            kw["max_per_class"] = int(nms.max_proposals_per_class)
        size = _decode_image_size(ng, semantics)
        if size is not None:
            kw["image_size"] = size
        for message in hef_mismatches(ng, semantics, image_size_given="image_size" in settings,
                                      heads_given="heads" in settings):
            warnings.warn(message, HefMismatchWarning, stacklevel=2)
    if "heads" in settings:
        heads = settings.pop("heads")
        names = None
        if heads:
            wanted = {n for h in heads for n in (getattr(h, "box", None), getattr(h, "cls", None), getattr(h, "obj", None),
                                                 getattr(h, "mask", None), getattr(h, "kpt", None), getattr(h, "angle", None))}
            wanted.discard(None)
            if settings.get("proto") is not None:
                wanted.add(settings["proto"])
            known = [o.name for o in ng.outputs]
            unknown = sorted(str(n) for n in wanted - set(known))
            if unknown:
                raise ValueError(f"heads name outputs {unknown} that {ng.name!r} does not have; outputs are {known}")
            names = [n for n in known if n in wanted]
    no_op = nms is None and ng.anchor_op is None
    if no_op and "image_size" not in settings and len(ng.inputs) == 1 and min(ng.inputs[0].shape[:2]) > 0:
        kw["image_size"] = tuple(ng.inputs[0].shape[:2])
    if nms is None and heads is None and "heads" not in settings:
        heads = heads_from_original_names(ng)  # None unless the names settle every output's role
    kw.update(settings)
    outputs = decoder_outputs(ng, names, device_buffers=device_buffers)
    try:
        config = DecoderConfig(outputs, heads, **kw)
        if "class_activation" not in settings:
            # (the SSD op reads its class values as they are: no activation to infer)
            activation = (infer_class_activation([ng.output(h.cls) for h in config.heads])[0]
                          if config.head_kind != "ssd" else None)
            if activation is not None:  # explicit, so that replace(semantics=...) keeps it
                config = config.replace(class_activation=activation)
        if "end2end" not in settings and end2end_choice(config)[0]:  # 4-channel box tensors: YOLO26
            config = config.replace(end2end=True)
        kpt_decode, angle_decode, _ = task_decode_choice(config)  # and YOLO26's Pose26/OBB26 forms
        decodes = {k: v for k, v in (("keypoint_decode", kpt_decode), ("angle_decode", angle_decode))
                   if k not in settings and v != getattr(config, k)}
        if decodes:
            config = config.replace(**decodes)
    except ValueError as e:
        raise ValueError(f"{ng.name}: no YOLOv8 decoder for this HEF's {len(outputs)} outputs: {e}") from None
    if nms is not None and nms.classes and nms.classes != config.num_classes:
        raise ValueError(f"NMS op {nms.name!r} says {nms.classes} classes, class outputs have {config.num_classes} "
                         f"channels")
    op = ng.anchor_op
    op_classes = config.num_classes + (op.background is not None) if op is not None and op.kind == "ssd" else config.num_classes
    if nms is None and op is not None and op.classes and op.classes != op_classes:  # (SSD's count the background)
        raise ValueError(f"{op.kind} op {op.name!r} says {op.classes} classes, the outputs hold {config.num_classes}")
    if nms is None and op is not None and op.kind == "yolov5_seg" and config.proto is not None:
        # decode_to_hailo_nms(format="byte_mask")'s default, as the op reads it (a float32)
        config.mask_threshold = op.mask_threshold  # type: ignore[attr-defined]
    return config


