"""A minimal HEF writer for tests, independent of hailo_decode.hef: its own protobuf encoder, written
from the field numbers of hailort/libhailort/hef.proto. It builds what the real test files lack: a
YOLOv8 NMS op with bbox decoders, per-feature quantization, FCR/F8CR/NHCW outputs with padding,
uint16 outputs, multi-layout (Hailo-8L) and legacy layouts, and malformed files."""

from __future__ import annotations

import hashlib
import struct
import zlib
from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

# ---------------------------------------------------------------------------------------------
# Protobuf encoding
# ---------------------------------------------------------------------------------------------


def enc_varint(n: int) -> bytes:
    if n < 0:
        n &= (1 << 64) - 1  # proto int32/int64 negatives: ten bytes
    out = bytearray()
    while True:
        low = n & 0x7F
        n >>= 7
        if n:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


def tag(number: int, wire: int) -> bytes:
    return enc_varint((number << 3) | wire)


def uint(number: int, value: int, *, keep_zero: bool = False) -> bytes:
    """A varint field; proto3 omits zeros unless keep_zero (for `optional` fields)."""
    if value == 0 and not keep_zero:
        return b""
    return tag(number, 0) + enc_varint(int(value))


def ln(number: int, payload: bytes) -> bytes:
    return tag(number, 2) + enc_varint(len(payload)) + payload


def msg(number: int, *parts: bytes) -> bytes:
    return ln(number, b"".join(parts))


def string(number: int, s: str) -> bytes:
    return ln(number, s.encode("utf-8")) if s else b""


def f32(number: int, value: float) -> bytes:
    return tag(number, 5) + struct.pack("<f", value) if value != 0 else b""


def f64(number: int, value: float) -> bytes:
    return tag(number, 1) + struct.pack("<d", value) if value != 0 else b""


def packed_f64(number: int, values: Sequence[float]) -> bytes:
    return ln(number, struct.pack(f"<{len(values)}d", *values)) if values else b""


# ---------------------------------------------------------------------------------------------
# HEF content
# ---------------------------------------------------------------------------------------------
# Device format codes of the HEF compiler.
CODE = {"NHWC": 0, "NHCW": 1, "NC": 2, "FCR": 3, "NHW": 5, "F8CR": 7}


@dataclass
class Layer:
    name: str
    shape: Tuple[int, int, int]
    order: str = "NHWC"                       # device order (CODE key) or a raw int code
    padded: Optional[Tuple[int, int, int]] = None
    data_bytes: int = 1
    zp: float = 0.0
    scale: float = 1.0
    zps: Sequence[float] = ()
    scales: Sequence[float] = ()
    limvals: Tuple[float, float] = (0.0, 0.0)
    pad_index: Optional[int] = None
    output: bool = True
    boundary: bool = True
    transposed: bool = False
    original_names: Sequence[str] = ()
    core_buffers_per_frame: int = 0


def edge_layer_base(layer: Layer) -> bytes:
    h, w, c = layer.shape
    hp, wp, cp = layer.padded or layer.shape
    code = layer.order if isinstance(layer.order, int) else CODE[layer.order]
    # ProtoHEFEdgeLayerBase: height 1, padded_height 2, width 3, padded_width 4, features 5,
    # padded_features 6, format 7, sys_index 8, core_bytes_per_buffer 9, core_buffers_per_frame 10,
    # data_bytes 12, engine_id 16
    return b"".join([uint(1, h), uint(2, hp), uint(3, w), uint(4, wp), uint(5, c), uint(6, cp), uint(7, code),
                     uint(8, 3), uint(9, w * c * layer.data_bytes), uint(10, layer.core_buffers_per_frame),
                     uint(12, layer.data_bytes), uint(16, 0)])


def numeric_info(layer: Layer) -> bytes:
    # ProtoHEFEdgeLayerNumericInfo: qp_zp 1 (float), qp_scale 2, limvals_min 3, limvals_max 4,
    # qp_zps 5 (repeated double), qp_scales 6
    return b"".join([f32(1, layer.zp), f32(2, layer.scale), f32(3, layer.limvals[0]), f32(4, layer.limvals[1]),
                     packed_f64(5, layer.zps), packed_f64(6, layer.scales)])


def layer_info(layer: Layer) -> bytes:
    # ProtoHEFEdgeLayerInfo: name 1, edge_layer_base 2, numeric_info 3, hn_output_layer_name 4,
    # original_names 5, transposed 6
    return b"".join([string(1, layer.name), msg(2, edge_layer_base(layer)), msg(3, numeric_info(layer)),
                     string(4, layer.name.split("/")[-1])] + [string(5, n) for n in layer.original_names]
                    + [uint(6, int(layer.transposed))])


def edge_layer(layer: Layer, context_index: int = 0) -> bytes:
    # ProtoHEFEdgeLayer: direction 1, edge_layer_type 2, layer_info 3, context_switch_info 5,
    # network_index 6, pad_index 7 (optional)
    # ProtoHEFContextSwitchInformation: context_index 1, edge_connection_type 3 (0 boundary, 1 intermediate)
    cs = msg(5, uint(1, context_index), uint(3, 0 if layer.boundary else 1))
    pad = uint(7, layer.pad_index, keep_zero=True) if layer.pad_index is not None else b""
    return b"".join([uint(1, 1 if layer.output else 0), uint(2, 0), msg(3, layer_info(layer)), cs, uint(6, 0), pad])


def mux_edge_layer(name: str, predecessors: Sequence[Layer], shape: Tuple[int, int, int]) -> bytes:
    mux_base = edge_layer_base(Layer(name, shape))
    preds = [msg(5, msg(1, layer_info(p))) for p in predecessors]  # ProtoHefEdge.layer_info = 1
    # ProtoHEFEdgeLayerMux: name 1, edge_layer_base 2, predecessors 5; ProtoHEFEdgeLayer.layer_mux = 4
    return b"".join([uint(1, 1), uint(2, 1), msg(4, string(1, name), msg(2, mux_base), *preds)])


def context(edge_layers: Sequence[bytes], index: int = 0, operations: int = 0) -> bytes:
    # ProtoHEFContext: context_index 1, operations 2, metadata 3; ProtoHEFContextMetadata: name 1, edge_layers 2
    ops = b"".join(msg(2, msg(1, uint(1, k + 1)), msg(2, uint(1, k), msg(9))) for k in range(operations))
    return b"".join([uint(1, index), ops, msg(3, string(1, f"context_{index}"), *[msg(2, e) for e in edge_layers])])


def ng_metadata(name: str, index: int = 0, transposed: bool = False) -> bytes:
    # ProtoHEFNetworkGroupMetadata: network_group_name 1, network_group_index 2, transposed_net 3, bottleneck_fps 4
    return b"".join([string(1, name), uint(2, index), uint(3, int(transposed)), f64(4, 123.5)])


def core_op(name: str, contexts: Sequence[bytes], sorted_outputs: Sequence[str] = (), networks: Sequence[str] = (),
            partial: Sequence[bytes] = ()) -> bytes:
    # ProtoHEFCoreOp: network_group_metadata 1, preliminary_config 2, contexts 3, sorted_outputs_order 4,
    # networks_names 6, partial_core_ops 7 (ProtoHEFPartialCoreOp: core_op 1, layout 2)
    parts = [msg(1, ng_metadata(name)), msg(2, msg(1, msg(1, uint(1, 1))))]
    parts += [msg(3, c) for c in contexts]
    parts += [string(4, s) for s in sorted_outputs]
    parts += [string(6, n) for n in networks]
    parts += [msg(7, msg(1, p), msg(2, uint(1, 0b1011))) for p in partial]
    return b"".join(parts)


@dataclass
class Decoder:
    stride: int
    reg_pad: int
    cls_pad: int


@dataclass
class Yolov8Nms:
    decoders: Sequence[Decoder]
    score_th: float = 0.2
    iou_th: float = 0.7
    max_per_class: int = 100
    classes: int = 80
    image_hw: Tuple[float, float] = (640.0, 640.0)
    regression_length: int = 16
    name: str = "yolov8_nms_postprocess"
    output_name: str = ""
    input_pads: Sequence[int] = ()
    bbox_decoding_only: bool = False   # the yolov8_bbox_only op: decoded boxes and scores, no NMS
    strides: Optional[Sequence[int]] = None  # override the decoders' strides (to build inconsistent HEFs)


def pad(index: int, name: str = "") -> bytes:
    # ProtoHEFPad: index 1, name 2, format_order 3, ... (only what HailoRT needs here)
    return b"".join([uint(1, index, keep_zero=True), string(2, name)])


def yolov8_nms_op(n: Yolov8Nms) -> bytes:
    # ProtoHEFYolov8BboxDecoder: stride 1, reg_pad_index 2, cls_pad_index 3
    strides = [d.stride for d in n.decoders] if n.strides is None else list(n.strides)
    decs = [msg(4, uint(1, st), uint(2, d.reg_pad, keep_zero=True), uint(3, d.cls_pad, keep_zero=True))
            for d, st in zip(n.decoders, strides)]
    # ProtoHEFYolov8NmsOp: image_height 1, image_width 2, input_division_factor 3, bbox_decoders 4, regression_length 5
    y8 = b"".join([f64(1, n.image_hw[0]), f64(2, n.image_hw[1]), uint(3, 1), *decs, uint(5, n.regression_length)])
    # ProtoHEFNmsOp: nms_score_th 1, nms_iou_th 2, max_proposals_per_class 3, classes 4, background_removal 5,
    # background_removal_index 6, yolov8_nms_op 12, bbox_decoding_only 13
    nms = b"".join([f64(1, n.score_th), f64(2, n.iou_th), uint(3, n.max_per_class), uint(4, n.classes), uint(5, 0),
                    uint(6, 0), msg(12, y8), uint(13, int(n.bbox_decoding_only))])
    # ProtoHEFOp: name 1, input_pads 2, output_pads 3, nms_op 5
    return b"".join([string(1, n.name), *[msg(2, pad(p, f"in{p}")) for p in n.input_pads],
                     msg(3, pad(1000, n.output_name or n.name)), msg(5, nms)])


def network_group(name: str, layers: Sequence[Layer], *, nms: Optional[Yolov8Nms] = None, style: str = "ops",
                  sorted_outputs: Optional[Sequence[str]] = None, extra_edges: Sequence[bytes] = (),
                  contexts: int = 1, index: int = 0, partial: bool = False, transposed: bool = False) -> bytes:
    """style "ops": ProtoHEFNetworkGroup.ops[] with a core_op (HAILO_NET_FLOW HEFs); "legacy": the
    network group's own metadata/contexts fields. partial: the layers live in partial layout 0
    (Hailo-8L), the top-level contexts are empty. contexts > 1 spreads the layers over contexts and
    adds an intermediate (non-boundary) layer between them."""
    edges_per_ctx: List[List[bytes]] = [[] for _ in range(contexts)]
    for i, layer in enumerate(layers):
        k = 0 if not layer.output else (contexts - 1 if i % 2 else 0)
        edges_per_ctx[k].append(edge_layer(layer, k))
    if contexts > 1:
        inter = Layer(f"{name}/intermediate", (10, 10, 16), "NHWC", output=True, boundary=False)
        edges_per_ctx[0].append(edge_layer(inter, 0))
        edges_per_ctx[1].append(edge_layer(Layer(inter.name, inter.shape, output=False, boundary=False), 1))
    edges_per_ctx[0].extend(extra_edges)
    ctxs = [context(e, k, operations=3) for k, e in enumerate(edges_per_ctx)]
    so = [l.name for l in layers if l.output] if sorted_outputs is None else list(sorted_outputs)
    if style == "ops":
        core = core_op(name, [] if partial else ctxs, so, partial=[core_op(name, ctxs, so)] if partial else [])
        if transposed:
            core = msg(1, ng_metadata(name, transposed=True)) + core
        ops = [msg(8, string(1, f"{name}_core"), msg(4, core))]
        if nms is not None:
            ops.append(msg(8, yolov8_nms_op(nms)))
        # ProtoHEFPadEdge: src 1, dst 2 (core output pad -> NMS input pad)
        edges = []
        if nms is not None:
            for d in nms.decoders:
                for p in (d.reg_pad, d.cls_pad):
                    edges.append(msg(9, uint(1, p, keep_zero=True), uint(2, 100 + p)))
        # ProtoHEFNetworkGroup: ops 8, pad_edges 9, network_group_name 10, network_group_index 11
        return b"".join(ops + edges + [string(10, name), uint(11, index)])
    if style == "legacy":
        body = [msg(1, ng_metadata(name, index, transposed))]
        if partial:
            inner = b"".join([msg(1, ng_metadata(name, index, transposed))] + [msg(3, c) for c in ctxs]
                             + [string(4, s) for s in so])
            body.append(msg(7, msg(1, inner), msg(2, uint(1, 0b11))))  # ProtoHEFPartialNetworkGroup
        else:
            body += [msg(3, c) for c in ctxs] + [string(4, s) for s in so]
        return b"".join(body)
    raise ValueError(style)


HW_ARCH = {"HAILO8": 0, "HAILO8P": 1, "HAILO8R": 2, "HAILO8L": 3, "HAILO15M": 4, "HAILO10H": 5, "HAILO1XH": 103}


def hef_proto(groups: Sequence[bytes], *, hw_arch: str = "HAILO8", sdk: str = "3.31.0",
              extensions: Sequence[int] = (0, 3, 12, 13, 27), optional_extensions: Sequence[int] = (),
              unknown_fields: bool = True) -> bytes:
    # ProtoHEFHeader: hw_arch 1, timestamp 2, sdk_version 3, version 4
    header = b"".join([uint(1, HW_ARCH[hw_arch]), uint(2, 1_700_000_000_000), string(3, sdk), uint(4, 1)])
    # ProtoHEFHef: header 1, network_groups 2, mapping 3, included_features 4, extensions 5, optional_extensions 6
    parts = [msg(1, header)] + [msg(2, g) for g in groups]
    parts += [msg(5, uint(1, e, keep_zero=True), string(2, f"ext{e}")) for e in extensions]
    parts += [msg(6, uint(1, e, keep_zero=True), string(2, f"opt{e}")) for e in optional_extensions]
    if unknown_fields:  # fields a newer SDK might add: every wire type, under numbers the reader does not know
        parts += [uint(77, 5), tag(78, 1) + b"\x01" * 8, tag(79, 5) + b"\x02" * 4, ln(80, b"\x08\x01future"),
                  ln(3, b"\x00" * 40)]
    return b"".join(parts)


def wrap(proto: bytes, version: int = 1, ccws: bytes = b"\xAA" * 64, *, padding: int = 16,
         additional: bytes = b"") -> bytes:
    """A HEF file: big-endian header of the given version, the proto, then CCWS (v1+)."""
    magic = b"\x01HEF"
    if version == 0:
        return magic + struct.pack(">III", 0, len(proto), 0) + hashlib.md5(proto).digest() + proto
    if version == 1:
        crc = zlib.crc32(proto + ccws) & 0xFFFFFFFF
        return magic + struct.pack(">IIIQI", 1, len(proto), crc, len(ccws), 0) + proto + ccws
    x_all = x_proto = 0
    try:
        import xxhash
    except ImportError:
        xxhash = None
    if version == 2:
        if xxhash is not None:
            x_all = xxhash.xxh3_64_intdigest(proto + ccws)
        return magic + struct.pack(">IIQQQQ", 2, len(proto), x_all, len(ccws), 0, 0) + proto + ccws
    if version == 3:
        body = ccws + b"\x00" * padding
        if xxhash is not None:
            x_proto = xxhash.xxh3_64_intdigest(proto)
            x_all = xxhash.xxh3_64_intdigest(proto + body + additional)
        return (magic + struct.pack(">IIQQIQQQ", 3, len(proto), x_all, len(body), padding, len(additional), x_proto, 0)
                + proto + body + additional)
    raise ValueError(version)


def section_boundaries(hef: bytes) -> List[int]:
    """Offsets where a HEF's sections start/end (header fields, proto, CCWS), for truncation tests."""
    version = struct.unpack_from(">I", hef, 4)[0]
    hsize = {0: 32, 1: 28, 2: 44, 3: 56}[version]
    proto = struct.unpack_from(">I", hef, 8)[0]
    cuts = {0, 1, 4, 8, 12, hsize - 1, hsize, hsize + 1, hsize + proto // 2, hsize + proto - 1, hsize + proto,
            hsize + proto + 1, len(hef) - 1}
    return sorted(c for c in cuts if c < len(hef))


# ---------------------------------------------------------------------------------------------
# The YOLOv8 model the tests use
# ---------------------------------------------------------------------------------------------
def _padded_width(w: int) -> int:
    """The next multiple of 8 above w (40 -> 48, 20 -> 24): padding as the test HEF's layers have it."""
    return w - w % 8 + 8


def yolov8_layers(classes: int = 80, net: str = "yolov8n", logits: bool = False, input_size: int = 640) -> List[Layer]:
    """Six raw head outputs in the layouts HEFs use: FCR, F8CR and NHCW with padding, uint8 and
    uint16, per-feature quantized class and box outputs; plus the input. Pad indices 10..15.
    logits: class outputs quantized as raw logits (no sigmoid on chip) instead of scores.
    input_size: the square input's side; the grids are input_size / 8, / 16, / 32."""
    g8, g16, g32 = input_size // 8, input_size // 16, input_size // 32
    # per-feature: the class output (zero points 0, scales just under 1/255) and a uint16 box output
    cls_scales = [1 / 255 * (1 - 0.001 * (k % 50)) for k in range(classes)]
    box_zps = [30000.0 + 7 * k for k in range(64)]
    box_scales = [0.0003 * (1 + 0.002 * k) for k in range(64)]
    layers = [
        Layer(f"{net}/input_layer1", (input_size, input_size, 3), "NHWC", output=False, scale=1.0,
              limvals=(0.0, 255.0)),
        Layer(f"{net}/conv41", (g8, g8, 64), "FCR", data_bytes=1, zp=84.0, scale=0.089, pad_index=10),
        Layer(f"{net}/conv42", (g8, g8, classes), "NHCW", padded=(g8, g8, classes), data_bytes=1, zp=0.0,
              scale=1 / 255, pad_index=11),
        Layer(f"{net}/conv52", (g16, g16, 64), "F8CR", padded=(g16, _padded_width(g16), 64), data_bytes=1, zp=99.0,
              scale=0.091, pad_index=12),
        Layer(f"{net}/conv53", (g16, g16, classes), "NHCW", padded=(g16, _padded_width(g16), classes), data_bytes=2,
              zp=0.0, scale=1 / 65535, pad_index=13),
        Layer(f"{net}/conv62", (g32, g32, 64), "NHCW", padded=(g32, _padded_width(g32), 64), data_bytes=2,
              zp=30000.0, scale=0.0003, zps=box_zps, scales=box_scales, pad_index=14),
        Layer(f"{net}/conv63", (g32, g32, classes), "FCR", padded=(g32, g32, -(-classes // 8) * 8), data_bytes=1,
              zp=0.0, scale=1 / 255, zps=[0.0] * classes, scales=cls_scales, pad_index=15),
    ]
    if logits:
        for layer in layers[2::2]:
            layer.zp, layer.scale = (128.0, 0.05) if layer.data_bytes == 1 else (32768.0, 0.0002)
            if layer.zps:
                layer.zps = [120.0 + k % 5 for k in range(classes)]
                layer.scales = [0.05] * classes
    return layers


def yolov8_nms(classes: int = 80, **kw) -> Yolov8Nms:
    return Yolov8Nms([Decoder(8, 10, 11), Decoder(16, 12, 13), Decoder(32, 14, 15)], classes=classes,
                     input_pads=(110, 111, 112, 113, 114, 115), **kw)


def yolov8_hef(version: int = 1, *, classes: int = 80, nms: bool = True, net: str = "yolov8n", style: str = "ops",
               hw_arch: str = "HAILO8", per_feature: bool = True, partial: bool = False, contexts: int = 1,
               logits: bool = False, input_size: int = 640, **nms_kw) -> bytes:
    layers = yolov8_layers(classes, net, logits, input_size)
    ng = network_group(net, layers, nms=yolov8_nms(classes, **nms_kw) if nms else None, style=style,
                       partial=partial, contexts=contexts,
                       sorted_outputs=[l.name for l in layers if l.output][::-1])
    exts = [0, 3, 12, 13, 27] + ([25] if per_feature else [])
    return wrap(hef_proto([ng], hw_arch=hw_arch, extensions=exts), version)
