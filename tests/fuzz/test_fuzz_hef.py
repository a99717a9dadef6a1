"""Fuzzing the HEF reader (hailo_decode.hef.read_hef, config_from_hef) and what is built on it.

Rule: any bytes give a HefInfo or HefError from read_hef (never another exception, a crash or a
hang); config_from_hef gives a DecoderConfig or a ValueError (HefError is one; "no YOLOv8 decoder
fits" is documented as ValueError); a config that comes out decodes (or raises ValueError/
TypeError); HefInfo.to_dict() is JSON-ready and `hailo-decode inspect`'s report renders.

Inputs, wider than tests/test_hef.py's fuzzing (which flips bytes of one writer file, inserts
bytes that the header size check then catches, and wraps random bytes):
  * the five real HEFs of ../shared/hefs (or $HAILO_DECODE_HEFS; skipped cleanly when absent,
    never copied) and a dozen writer-built files (tests/hef_writer.py: YOLOv8 NMS op, per-feature
    quantization, padded FCR/F8CR/NHCW, uint16, legacy and Hailo-8L partial layouts, multi-context,
    multi-group, mux and transposed layers), indexed as protobuf trees;
  * structural mutations with the lengths of every enclosing message and the header's proto
    size (and v0/v1 checksums) fixed up, so that the damage reaches the parser of the message it
    is in instead of failing at the outermost length: change a varint/float/double value
    (0, 2**32 - 1, 2**64 - 1, NaN, inf, denormals, ...), change a length, a wire type or a field
    number, drop, duplicate, swap, cut short or overwrite a field with garbage; mostly on the
    fields the reader follows (by the schema below), some anywhere;
  * byte mutations on top (flips, 0x00/0xff/0x80 overwrites, insertions of varint-continuation
    runs, deletions, duplicated ranges), with and without the header fixed up;
  * truncation at every top-level field boundary (and, for writer files, at both ends of every
    field), both as a short file and as a short protobuf with a consistent header;
  * schema-driven random protobufs: messages generated from the field numbers the reader asks
    for (header, network groups, ops, core ops, partial layouts, contexts, edge layers, muxes,
    planes, layer bases, NMS ops, YOLOv8 bbox decoders, numeric info), with values from pools of
    edge cases, unknown fields and wrong wire types mixed in, wrapped in every header version;
  * header fields at random (version, sizes, padding) in front of a valid protobuf.
Sources are passed as bytes, bytearray, memoryview, a file object or a path.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import struct
import sys
import tempfile
import zlib
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: hef_writer
import hef_writer as w  # noqa: E402

import hailo_decode as hd  # noqa: E402
from hailo_decode.hef import HefError, HefInfo, config_from_hef, hef_nms_output, read_hef  # noqa: E402
from hailo_decode.cli.inspect import format_report, inspect_report  # noqa: E402

from .decoder_cases import (OUTCOMES, HarnessFailure, _Ctx, _frame_elements, _log_case,  # noqa: E402
                            check_frame, fuzz_settings, pack_frame, watchdog)

# Mutated HEFs disagree with themselves all the time; config_from_hef still runs hef_mismatches on
# every one of them (and inspect_report prints its findings), only the warnings are not shown.
pytestmark = pytest.mark.filterwarnings("ignore::hailo_decode.HefMismatchWarning")

HEFS = Path(os.environ.get("HAILO_DECODE_HEFS") or Path(__file__).resolve().parents[3] / "shared" / "hefs")
_HEADER_SIZES = {0: 32, 1: 28, 2: 44, 3: 56}

# ------------------------------------------------------------------------------------------------
# The schema the reader follows (field numbers of hailort/libhailort/hef.proto, as listed in
# hailo_decode/hef.py): message -> {field number: message name or scalar kind}.
# ------------------------------------------------------------------------------------------------
U, S, F32, F64, PF64 = "u", "s", "f32", "f64", "pf64"
SCHEMA: Dict[str, Dict[int, str]] = {
    "hef": {1: "header", 2: "ng", 5: "ext", 6: "ext"},
    "header": {1: U, 2: U, 3: S, 4: U},
    "ext": {1: U, 2: S},
    "ng": {1: "ngmeta", 3: "context", 4: S, 6: S, 7: "partial_ng", 8: "op", 9: "pad_edge", 10: S, 11: U},
    "ngmeta": {1: S, 2: U, 3: U},
    "partial_ng": {1: "ng"},
    "op": {1: S, 2: "pad", 3: "pad", 4: "core_op", 5: "nms_op", 6: "logits_op"},
    "core_op": {1: "ngmeta", 3: "context", 4: S, 6: S, 7: "partial_core"},
    "partial_core": {1: "core_op"},
    "pad": {1: U, 2: S},
    "pad_edge": {1: U, 2: U},
    "nms_op": {1: F64, 2: F64, 3: U, 4: U, 5: U, 6: U, 13: U, 7: "dims", 8: "dims", 9: "dims", 10: "dims",
               11: "dims", 12: "yolov8"},
    "yolov8": {1: F64, 2: F64, 3: U, 4: "bbox", 5: U},
    "bbox": {1: U, 2: U, 3: U},
    "dims": {1: F64, 2: F64},
    "logits_op": {1: U},
    "context": {1: U, 3: "ctx_meta"},
    "ctx_meta": {2: "edge"},
    "edge": {1: U, 2: U, 3: "layer_info", 4: "mux", 5: "cs", 6: U, 7: U, 8: "planes"},
    "cs": {3: U},
    "layer_info": {1: S, 2: "base", 3: "numeric", 4: S, 5: S, 6: U},
    "mux": {1: S, 2: "base", 5: "hef_edge", 6: S},
    "hef_edge": {1: "layer_info", 2: "mux", 3: "planes"},
    "planes": {1: S, 2: U, 3: "hef_edge", 4: U, 5: U, 6: U},
    "base": {1: U, 2: U, 3: U, 4: U, 5: U, 6: U, 7: U, 8: U, 10: U, 11: "add_info", 12: U, 15: U},
    "add_info": {1: "nms_info"},
    "nms_info": {2: U, 3: U, 4: U, 7: U},
    "numeric": {1: F32, 2: F32, 3: F32, 4: F32, 5: PF64, 6: PF64},
}
WIRE = {U: 0, S: 2, F32: 5, F64: 1, PF64: 2}


# ------------------------------------------------------------------------------------------------
# Protobuf tree of a file (independent of the reader)
# ------------------------------------------------------------------------------------------------
class _Bad(Exception):
    pass


def _varint(d: bytes, pos: int, end: int) -> Tuple[int, int]:
    r = s = 0
    while True:
        if pos >= end or s >= 70:
            raise _Bad
        b = d[pos]
        pos += 1
        r |= (b & 0x7F) << s
        if b < 0x80:
            return r, pos
        s += 7


def _fields(d: bytes, start: int, end: int) -> List[Tuple[int, int, int, int, int, int]]:
    """(tag offset, length/value offset, payload start, end, wire type, number) of each field."""
    out = []
    pos = start
    while pos < end:
        tag = pos
        key, pos = _varint(d, pos, end)
        num, wt = key >> 3, key & 7
        if num == 0:
            raise _Bad
        if wt == 0:
            lp = pos
            _, pos = _varint(d, pos, end)
            out.append((tag, lp, lp, pos, wt, num))
        elif wt == 2:
            lp = pos
            n, pos = _varint(d, pos, end)
            if n > end - pos:
                raise _Bad
            out.append((tag, lp, pos, pos + n, wt, num))
            pos += n
        elif wt in (1, 5):
            k = 8 if wt == 1 else 4
            if k > end - pos:
                raise _Bad
            out.append((tag, pos, pos, pos + k, wt, num))
            pos += k
        else:
            raise _Bad
    return out


class Node:
    __slots__ = ("tag", "lenpos", "start", "end", "wt", "num", "depth", "parent", "type", "children")

    def __init__(self, f, depth, parent, type_):
        self.tag, self.lenpos, self.start, self.end, self.wt, self.num = f
        self.depth, self.parent, self.type, self.children = depth, parent, type_, []


def index_proto(proto: bytes, budget: int = 100_000) -> List[Node]:
    """Every field of the protobuf, nested messages parsed where they parse (unknown-typed
    payloads too, as long as they are valid protobuf), `type` the schema message the field sits
    in (None outside what the reader follows)."""
    nodes: List[Node] = []
    stack: List[Tuple[int, int, int, Optional[Node], Optional[str]]] = [(0, len(proto), 0, None, "hef")]
    while stack and len(nodes) < budget:
        s, e, depth, parent, mtype = stack.pop()
        try:
            fs = _fields(proto, s, e)
        except _Bad:
            continue
        for f in fs:
            n = Node(f, depth, parent, mtype)
            nodes.append(n)
            if parent is not None:
                parent.children.append(n)
            child_type = SCHEMA.get(mtype, {}).get(n.num) if mtype else None
            child_type = child_type if child_type in SCHEMA else None
            if n.wt == 2 and n.end - n.start > 1 and depth < 20 and not (depth == 0 and n.num in (3, 4)):
                stack.append((n.start, n.end, depth + 1, n, child_type))
    nodes.sort(key=lambda n: n.tag)
    return nodes


def _enc_varint(v: int) -> bytes:
    return w.enc_varint(v)


def _ancestors(n: Node) -> List[Node]:
    out = []
    p = n.parent
    while p is not None:
        out.append(p)
        p = p.parent
    return out  # innermost first


def splice(proto: bytes, a: int, b: int, new: bytes, container: Optional[Node]) -> bytes:
    """Replace proto[a:b] with `new` inside `container` (a length-delimited field; None: top
    level) and fix the length prefix of the container and of every enclosing field."""
    buf = bytearray(proto)
    buf[a:b] = new
    delta = len(new) - (b - a)
    chain = ([container] + _ancestors(container)) if container is not None else []
    for anc in chain:  # innermost first: an outer prefix sits before an inner one
        old = anc.end - anc.start
        enc = _enc_varint(old + delta)
        buf[anc.lenpos:anc.start] = enc
        delta += len(enc) - (anc.start - anc.lenpos)
    return bytes(buf)


# ------------------------------------------------------------------------------------------------
# Files: split, re-wrap with a consistent header
# ------------------------------------------------------------------------------------------------
def split_hef(data: bytes) -> Tuple[int, bytes, bytes, bytes]:
    version = struct.unpack_from(">I", data, 4)[0]
    hs = _HEADER_SIZES[version]
    ps = struct.unpack_from(">I", data, 8)[0]
    return version, data[:hs], data[hs:hs + ps], data[hs + ps:]


def rewrap(header: bytes, proto: bytes, rest: bytes, fix_checksum: bool) -> bytes:
    """The file with a new protobuf section: proto size updated, v0 md5 / v1 crc32 recomputed
    when fix_checksum (v2/v3 xxh3 are left as they are: unverifiable without `xxhash`)."""
    h = bytearray(header)
    struct.pack_into(">I", h, 8, len(proto))
    version = struct.unpack_from(">I", h, 4)[0]
    if fix_checksum and version == 0:
        h[16:32] = hashlib.md5(proto).digest()
    elif fix_checksum and version == 1:
        struct.pack_into(">I", h, 12, zlib.crc32(proto + rest) & 0xFFFFFFFF)
    return bytes(h) + proto + rest


# ------------------------------------------------------------------------------------------------
# Base files
# ------------------------------------------------------------------------------------------------
def _writer_bases() -> Dict[str, bytes]:
    b: Dict[str, bytes] = {}
    for v in range(4):
        b[f"yolov8_v{v}"] = w.yolov8_hef(v, classes=3)
    b["yolov8_legacy"] = w.yolov8_hef(1, classes=3, style="legacy")
    b["yolov8_h8l_partial"] = w.yolov8_hef(1, classes=3, hw_arch="HAILO8L", partial=True)
    b["yolov8_legacy_partial"] = w.yolov8_hef(0, classes=2, style="legacy", partial=True, hw_arch="HAILO15M")
    b["yolov8_2ctx"] = w.yolov8_hef(2, classes=3, contexts=2)
    b["yolov8_no_nms"] = w.yolov8_hef(1, classes=3, nms=False)
    b["yolov8_logits"] = w.yolov8_hef(3, classes=3, logits=True, per_feature=False)
    b["yolov8_bbox_only"] = w.yolov8_hef(1, classes=3, bbox_decoding_only=True)
    b["yolov8_320_input_640_op"] = w.yolov8_hef(2, classes=3, input_size=320)  # the in-the-wild mismatch
    for v, style, arch, partial in ((0, "ops", "HAILO8", False), (1, "legacy", "HAILO8", False),
                                    (3, "ops", "HAILO8L", True), (2, "legacy", "HAILO15M", True)):
        b[f"yolov8_small_v{v}_{style}{'_partial' if partial else ''}"] = _small_yolov8(v, style, arch, partial)
    small = [w.Layer("s/in", (16, 16, 3), output=False),
             w.Layer("s/box", (2, 2, 16), "FCR", zp=10.0, scale=0.1, pad_index=1),
             w.Layer("s/cls", (2, 2, 2), "NHCW", padded=(2, 8, 2), zp=0.0, scale=1 / 255, pad_index=2)]
    nms = w.Yolov8Nms([w.Decoder(8, 1, 2)], classes=2, image_hw=(16.0, 16.0), regression_length=4, input_pads=(101, 102))
    mux = w.mux_edge_layer("s/mux", [w.Layer("s/m0", (2, 2, 4), scale=0.5), w.Layer("s/m1", (1, 1, 8), zp=3.0)], (3, 3, 8))
    ng1 = w.network_group("s", small, nms=nms, extra_edges=[mux])
    ng2 = w.network_group("t", [w.Layer("t/in", (4, 4, 3), output=False),
                                w.Layer("t/o", (4, 4, 8), "F8CR", padded=(4, 4, 8), transposed=True, pad_index=0)],
                          index=1, transposed=True)
    b["two_groups_mux"] = w.wrap(w.hef_proto([ng1, ng2], extensions=(0, 13, 27, 25), optional_extensions=(11,)), 1)
    return b


def _small_yolov8(version: int, style: str, arch: str, partial: bool) -> bytes:
    """hef_writer.yolov8_hef's layouts (FCR, F8CR and NHCW with padding, uint16, per-feature
    quantization) on 8x8/4x4/2x2 grids, small enough to decode in every example."""
    C = 3
    cls_scales = [1 / 255 * (1 - 0.01 * k) for k in range(C)]
    layers = [
        w.Layer("m/input_layer1", (64, 64, 3), "NHWC", output=False, limvals=(0.0, 255.0)),
        w.Layer("m/conv41", (8, 8, 64), "FCR", zp=84.0, scale=0.089, pad_index=10),
        w.Layer("m/conv42", (8, 8, C), "NHCW", padded=(8, 8, C), zp=0.0, scale=1 / 255, pad_index=11),
        w.Layer("m/conv52", (4, 4, 64), "F8CR", padded=(4, 8, 64), zp=99.0, scale=0.091, pad_index=12),
        w.Layer("m/conv53", (4, 4, C), "NHCW", padded=(4, 8, C), data_bytes=2, scale=1 / 65535, pad_index=13),
        w.Layer("m/conv62", (2, 2, 64), "NHCW", padded=(2, 8, 64), data_bytes=2, zp=30000.0, scale=0.0003,
                zps=[30000.0 + 7 * k for k in range(64)], scales=[0.0003 * (1 + 0.002 * k) for k in range(64)],
                pad_index=14),
        w.Layer("m/conv63", (2, 2, C), "FCR", padded=(2, 2, 8), zp=0.0, scale=1 / 255, zps=[0.0] * C,
                scales=cls_scales, pad_index=15),
    ]
    nms = w.Yolov8Nms([w.Decoder(8, 10, 11), w.Decoder(16, 12, 13), w.Decoder(32, 14, 15)], classes=C,
                      image_hw=(64.0, 64.0), score_th=0.3, input_pads=(110, 111, 112, 113, 114, 115))
    ng = w.network_group("m", layers, nms=nms if style == "ops" else None, style=style, partial=partial)
    return w.wrap(w.hef_proto([ng], hw_arch=arch, extensions=[0, 3, 12, 13, 27, 25]), version)


WRITER_BASES = _writer_bases()


@lru_cache(maxsize=None)
def real_names() -> Tuple[str, ...]:
    if not HEFS.is_dir():
        return ()
    return tuple(sorted(p.name for p in HEFS.glob("*.hef") if p.is_file()))


@lru_cache(maxsize=None)
def base_bytes(name: str) -> bytes:
    kind, _, rest = name.partition(":")
    if kind == "real":
        return (HEFS / rest).read_bytes()
    return WRITER_BASES[rest]


@lru_cache(maxsize=None)
def base_index(name: str) -> Tuple[List[Node], List[Node]]:
    """All nodes, and the ones the reader follows (their message type is in the schema)."""
    _, _, proto, _ = split_hef(base_bytes(name))
    nodes = index_proto(proto)
    followed = [n for n in nodes if n.type is not None]
    return nodes, followed


def writer_base_names() -> List[str]:
    return [f"writer:{k}" for k in WRITER_BASES]


def real_base_names() -> List[str]:
    return [f"real:{k}" for k in real_names()]


# ------------------------------------------------------------------------------------------------
# Mutations
# ------------------------------------------------------------------------------------------------
VARINTS = [0, 1, 2, 3, 5, 7, 8, 16, 255, 256, 2**15, 2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**63 - 1, 2**63, 2**64 - 1]
F32S = [0.0, -0.0, 1.0, -1.0, float("nan"), float("inf"), float("-inf"), 1e-45, 3.4e38, -3.4e38, 1e-38, 255.0, 1 / 255]
F64S = [0.0, -0.0, 1.0, 0.5, -1.0, float("nan"), float("inf"), float("-inf"), 5e-324, 1e308, -1e308, 1e6, 640.0,
        2.0**31, 1e-300]
STRUCT_OPS = ["value", "value", "value", "length", "wiretype", "number", "drop", "dup", "swap", "cut", "garbage",
              "overlong"]
BYTE_OPS = ["flip", "set", "insert", "delete", "dup_range"]


@st.composite
def hef_mutation_specs(draw, bases: List[str]) -> Dict[str, Any]:
    return dict(
        kind="hef_mut", base=draw(st.sampled_from(bases)), seed=draw(st.integers(0, 2**32 - 1)),
        struct_op=draw(st.sampled_from(STRUCT_OPS + [None])), followed=draw(st.integers(0, 4)) > 0,
        byte_ops=draw(st.lists(st.sampled_from(BYTE_OPS), max_size=3)) if draw(st.integers(0, 2)) == 0 else [],
        fix_header=draw(st.integers(0, 9)) > 0, fix_checksum=draw(st.booleans()), verify=draw(st.integers(0, 3)) == 0,
        source=draw(st.sampled_from(["bytes", "bytes", "bytearray", "memoryview", "fileobj", "path"])),
        decode=draw(st.integers(0, 4)) > 0)


def _pick(rng: np.random.Generator, seq):
    return seq[int(rng.integers(0, len(seq)))]


def struct_mutation(proto: bytes, nodes: List[Node], op: str, rng: np.random.Generator) -> bytes:
    if not nodes:
        return proto
    n = _pick(rng, nodes)
    parent = n.parent
    if op == "value":
        if n.wt == 0:
            return splice(proto, n.start, n.end, _enc_varint(_pick(rng, VARINTS)), parent)
        if n.wt == 5:
            return splice(proto, n.start, n.end, struct.pack("<f", _pick(rng, F32S)), parent)
        if n.wt == 1:
            return splice(proto, n.start, n.end, struct.pack("<d", _pick(rng, F64S)), parent)
        # a string/bytes/message payload: empty, invalid UTF-8, a NUL, or one more byte
        new = _pick(rng, [b"", b"\xff\xfe", b"\x00", proto[n.start:n.end] + b"\x00", b"x" * 300])
        return splice(proto, n.lenpos, n.end, _enc_varint(len(new)) + new, parent)
    if op == "length" and n.wt == 2:
        old = n.end - n.start
        new_len = _pick(rng, [0, max(0, old - 1), old + 1, old + 3, 2**31, 2**63, 2**64 - 1, old * 2 + 7])
        return splice(proto, n.lenpos, n.start, _enc_varint(new_len), parent)  # payload unchanged
    if op == "overlong":  # the same number in a longer (legal) varint encoding, or 11 bytes (illegal)
        at, stop = (n.lenpos, n.start) if n.wt == 2 else (n.tag, n.lenpos)
        raw = bytearray(proto[at:stop])
        extra = int(rng.integers(1, 9))
        raw[-1] |= 0x80
        return splice(proto, at, stop, bytes(raw) + b"\x80" * (extra - 1) + b"\x00", parent)
    if op == "wiretype":
        key, _ = _varint(proto, n.tag, n.end)
        new_key = (key & ~7) | int(_pick(rng, [0, 1, 2, 5, 3, 4, 6, 7]))
        return splice(proto, n.tag, n.lenpos if n.wt != 0 else n.start, _enc_varint(new_key), parent)
    if op == "number":
        key, _ = _varint(proto, n.tag, n.end)
        num = int(_pick(rng, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 15, 16, 536870911, n.num + 1]))
        stop = n.lenpos if n.wt != 0 else n.start
        return splice(proto, n.tag, stop, _enc_varint((num << 3) | (key & 7)), parent)
    if op == "drop":
        return splice(proto, n.tag, n.end, b"", parent)
    if op == "dup":
        return splice(proto, n.end, n.end, proto[n.tag:n.end] * int(rng.integers(1, 3)), parent)
    if op == "swap":
        sibs = parent.children if parent is not None else [m for m in nodes if m.parent is None]
        k = sibs.index(n) if n in sibs else -1
        if 0 <= k < len(sibs) - 1:
            m = sibs[k + 1]
            return splice(proto, n.tag, m.end, proto[m.tag:m.end] + proto[n.tag:n.end], parent)
        return proto
    if op == "cut" and n.wt == 2:  # the message ends early: a prefix of its payload
        keep = int(rng.integers(0, max(1, n.end - n.start)))
        new = proto[n.start:n.start + keep]
        return splice(proto, n.lenpos, n.end, _enc_varint(len(new)) + new, parent)
    if op == "garbage":
        size = int(rng.integers(0, 24))
        new = bytes(rng.integers(0, 256, size, dtype=np.int64).astype(np.uint8))
        if n.wt == 2:
            return splice(proto, n.lenpos, n.end, _enc_varint(len(new)) + new, parent)
        return splice(proto, n.start, n.end, new, parent)
    return proto


def byte_mutation(data: bytearray, lo: int, hi: int, op: str, rng: np.random.Generator) -> None:
    if hi <= lo:
        return
    pos = int(rng.integers(lo, hi))
    if op == "flip":
        data[pos] ^= 1 << int(rng.integers(0, 8))
    elif op == "set":
        data[pos] = int(_pick(rng, [0x00, 0xFF, 0x80, 0x7F, int(rng.integers(0, 256))]))
    elif op == "insert":
        data[pos:pos] = _pick(rng, [b"\x80" * int(rng.integers(1, 12)), b"\xff" * 4, b"\x00",
                                    bytes(rng.integers(0, 256, 5, dtype=np.int64).astype(np.uint8))])
    elif op == "delete":
        del data[pos:pos + int(rng.integers(1, 17))]
    elif op == "dup_range":
        k = int(rng.integers(1, 33))
        data[pos:pos] = bytes(data[pos:pos + k])


def build_mutant(spec: Dict[str, Any]) -> bytes:
    rng = np.random.default_rng(spec["seed"])
    data = base_bytes(spec["base"])
    version, header, proto, rest = split_hef(data)
    if spec["struct_op"]:
        nodes, followed = base_index(spec["base"])
        pool = followed if spec["followed"] and followed else nodes
        proto = struct_mutation(proto, pool, spec["struct_op"], rng)
    if spec["byte_ops"]:
        buf = bytearray(proto)
        for op in spec["byte_ops"]:
            # near the start and the end of the protobuf, where the reader's fields tend to be
            near = int(_pick(rng, [0, 1, 2]))
            lo, hi = [(0, len(buf)), (0, min(len(buf), 4096)), (max(0, len(buf) - 4096), len(buf))][near]
            byte_mutation(buf, lo, hi, op, rng)
        proto = bytes(buf)
    if spec["fix_header"]:
        return rewrap(header, proto, rest, spec["fix_checksum"])
    return header + proto + rest


# ------------------------------------------------------------------------------------------------
# The check
# ------------------------------------------------------------------------------------------------
MAX_DECODE_ELEMENTS = 200_000
MAX_CELLS_X_CLASSES = 5_000


def _source(data: bytes, kind: str, tmp: Optional[str]):
    if kind == "bytearray":
        return bytearray(data)
    if kind == "memoryview":
        return memoryview(data)
    if kind == "fileobj":
        return io.BytesIO(data)
    if kind == "path" and tmp:
        path = os.path.join(tmp, "fuzz.hef")
        with open(path, "wb") as f:
            f.write(data)
        return path
    return data


def check_hef(data: bytes, *, verify: bool = False, source: str = "bytes", decode: bool = True) -> str:
    """Reads `data` and everything built on it; returns an outcome label, raises on a bug."""
    with tempfile.TemporaryDirectory() if source == "path" else _nullcontext() as tmp:
        try:
            info = read_hef(_source(data, source, tmp), verify_checksum=verify)
        except HefError:
            return "rejected"
    if not isinstance(info, HefInfo):
        raise HarnessFailure(f"read_hef gave {type(info).__name__}")
    json.dumps(info.to_dict())
    label = "read"
    for ng in info.network_groups:
        format_report(inspect_report(info, ng.name))
        try:  # which NMS form the op holds: a description, or ValueError without an op
            out = hef_nms_output(info, ng.name)
            if out.form not in ("by_class", "bbox_only") or out.proposals is not None and out.proposals < 0:
                raise HarnessFailure(f"hef_nms_output gave form {out.form!r}, proposals {out.proposals}")
        except ValueError:
            pass
        for device in (False, True):
            try:
                cfg = config_from_hef(info, ng.name, device_buffers=device)
            except ValueError:
                continue
            if not isinstance(cfg, hd.DecoderConfig):
                raise HarnessFailure(f"config_from_hef gave {type(cfg).__name__}")
            label = "config"
            if decode and _small(cfg):
                label = _decode_config(cfg, len(data) + device)
    return label


class _nullcontext:
    def __enter__(self):
        return None

    def __exit__(self, *a):
        return False


def _small(cfg: "hd.DecoderConfig") -> bool:
    for o in cfg.outputs:
        hp, wp, cp = o.padded_shape
        if hp * wp * cp > MAX_DECODE_ELEMENTS or o.shape[0] * o.shape[1] * o.shape[2] > MAX_DECODE_ELEMENTS:
            return False
    cells = sum(cfg.output(h.cls).shape[0] * cfg.output(h.cls).shape[1] for h in cfg.heads)
    return cells * cfg.num_classes <= MAX_CELLS_X_CLASSES


def _decode_config(cfg: "hd.DecoderConfig", seed: int) -> str:
    try:
        dec = hd.Decoder(cfg)
    except (ValueError, TypeError):
        return "config-rejected-by-decoder"
    rng = np.random.default_rng(seed)
    logical, raw = {}, {}
    for o in cfg.outputs:
        qmax = 255 if o.dtype == "uint8" else 65535
        L = rng.integers(0, qmax + 1, size=o.shape, dtype=np.int64).astype(o.dtype)
        logical[o.name] = L
        desc = dict(device=o.device, base_order=o.order, padded=list(o.padded_shape), dtype=o.dtype,
                    form="flat_rounded", pad_fill="random")
        raw[o.name] = pack_frame(rng, L, desc) if o.device else L
        if o.device and raw[o.name].size != _frame_elements(desc):
            raise HarnessFailure("harness: device frame size")
    try:
        d = dec.decode(raw)
    except (ValueError, TypeError):
        return "decode-rejected"
    ctx = _Ctx({}, cfg)
    labels = check_frame(ctx, d, logical)
    return labels[0] if labels else "decoded"


def run_hef_spec(spec: Dict[str, Any]) -> str:
    _log_case(spec)
    kind = spec["kind"]
    with watchdog():
        if kind == "hef_mut":
            data = build_mutant(spec)
            label = check_hef(data, verify=spec["verify"], source=spec["source"], decode=spec["decode"])
        elif kind == "hef_gen":
            label = check_hef(build_generated(spec), verify=spec["verify"], source="bytes")
        elif kind == "hef_header":
            label = check_hef(build_header_case(spec), verify=spec["verify"], source="bytes")
        else:
            raise KeyError(kind)
    OUTCOMES[f"{kind}:{label}"] += 1
    return label


# ------------------------------------------------------------------------------------------------
# Schema-driven random protobufs
# ------------------------------------------------------------------------------------------------
NAMES = ["net/o0", "net/o1", "net/o2", "net/o3", "net/in", "net", "net/net", "", "y/conv41", "\u00e9"]
_LAYER_NAMES = ["net/o0", "net/o1", "net/o2", "net/o3", "net/in", "net/o0", "net/o1", "\u00e9/x"]
_GROUP_NAMES = ["net", "net", "y", "\u00e9"]
_S_POOLS = {("ng", 10): _GROUP_NAMES[:-1], ("ngmeta", 1): _GROUP_NAMES, ("layer_info", 1): _LAYER_NAMES,
            ("pad", 2): _LAYER_NAMES, ("mux", 1): _LAYER_NAMES, ("planes", 1): _LAYER_NAMES}
LIKELY = {
    "hef": [1, 2, 5], "header": [1, 3], "ext": [1], "ng": [10, 3, 4], "ngmeta": [1], "partial_ng": [1],
    "op": [1, 5], "core_op": [1, 3], "partial_core": [1], "pad": [1, 2], "pad_edge": [1, 2],
    "nms_op": [1, 2, 3, 4, 12], "yolov8": [1, 2, 4, 4, 5], "bbox": [1, 2, 3], "dims": [1, 2], "logits_op": [1],
    "context": [1, 3], "ctx_meta": [2, 2, 2], "edge": [1, 3, 7], "cs": [3], "layer_info": [1, 2, 3],
    "mux": [1, 2, 5, 5], "hef_edge": [1], "planes": [1, 2, 3, 4, 5, 6], "base": [1, 2, 3, 4, 5, 6, 7, 12],
    "add_info": [1], "nms_info": [2, 3, 4], "numeric": [1, 2],
}
_DIMS = [1, 1, 2, 2, 3, 4, 8, 16, 0, 80, 2**32 - 1]
_U_POOLS = {
    ("base", 7): [0, 1, 3, 7, 2, 5, 6, 13, 99], ("base", 12): [1, 2, 1, 4, 0, 3],
    ("edge", 1): [1, 1, 0, 2], ("edge", 7): [0, 1, 2, 3, 4, 5], ("cs", 3): [0, 0, 1, 2],
    ("bbox", 1): [8, 16, 32, 0, 2**32 - 1], ("bbox", 2): [0, 1, 2, 3, 4, 5], ("bbox", 3): [0, 1, 2, 3, 4, 5],
    ("ext", 1): [25, 11, 27, 13, 0, 99], ("header", 1): [0, 3, 4, 5, 103, 77],
    ("nms_op", 3): [100, 0, 1, 2**32 - 1], ("nms_op", 4): [1, 2, 3, 80, 0], ("yolov8", 5): [16, 4, 1, 0],
    ("logits_op", 1): [0, 1, 7], ("planes", 2): [0, 1, 2, 9], ("nms_info", 7): [0, 1, 2],
}
_F64_POOLS = {("yolov8", 1): [16.0, 640.0, 0.0, -1.0, float("nan"), 1e7], ("yolov8", 2): [16.0, 640.0, 0.0, 1e300],
              ("nms_op", 1): [0.2, 0.0, 1.0, float("nan"), -1.0, 1e300], ("nms_op", 2): [0.7, 0.0, float("inf"), 2.0]}
_F32_POOLS = {("numeric", 2): [1 / 255, 0.1, 1.0, 0.0, -1.0, float("nan"), float("inf"), 1e-45, 3e38],
              ("numeric", 1): [0.0, 84.0, 127.5, float("nan"), -1e30]}


def _message(rng: np.random.Generator, mtype: str, depth: int, knobs: Dict[str, Any]) -> bytes:
    """A random message of schema type `mtype` (NumPy-driven: hypothesis draws the seed and the
    knobs; drawing every field through hypothesis is 100x slower for trees of this size)."""
    fields = SCHEMA[mtype]
    nums = [n for n in LIKELY.get(mtype, []) if rng.random() < knobs["p_likely"]]
    nums += [int(_pick(rng, sorted(fields))) for _ in range(int(rng.poisson(knobs["extra"])))]
    if depth > knobs["max_depth"]:  # keep the nesting finite (the reader caps it too)
        nums = [n for n in nums if fields[n] not in SCHEMA]
    parts = []
    for num in nums:
        kind = fields[num]
        if kind in SCHEMA:
            parts.append(w.ln(num, _message(rng, kind, depth + 1, knobs)))
        elif kind == U:
            pool = _U_POOLS.get((mtype, num)) or (_DIMS if mtype in ("base", "planes", "nms_info") else [0, 1, 2, 3, 10])
            parts.append(w.tag(num, 0) + w.enc_varint(int(_pick(rng, pool))))
        elif kind == S:
            r = rng.random()  # now and then an empty name or invalid UTF-8
            s = _pick(rng, _S_POOLS.get((mtype, num), NAMES)).encode() if r > 0.01 else (b"" if r < 0.005 else b"\xc3\x28")
            parts.append(w.ln(num, s))
        elif kind == F32:
            parts.append(w.tag(num, 5) + struct.pack("<f", _pick(rng, _F32_POOLS.get((mtype, num), F32S))))
        elif kind == F64:
            parts.append(w.tag(num, 1) + struct.pack("<d", _pick(rng, _F64_POOLS.get((mtype, num), F64S))))
        else:  # PF64: packed, or unpacked values
            vals = [_pick(rng, [0.0, 1.0, 0.5, 84.0, float("nan"), 1 / 255]) for _ in range(int(rng.integers(0, 6)))]
            if rng.random() < 0.5:
                parts.append(w.ln(num, struct.pack(f"<{len(vals)}d", *vals)))
            else:
                parts += [w.tag(num, 1) + struct.pack("<d", v) for v in vals]
    r = rng.random()
    if r < knobs["p_unknown"]:    # unknown fields of each wire type
        parts.append(w.uint(99, 5) + w.tag(98, 1) + b"\0" * 8 + w.tag(97, 5) + b"\0" * 4 + w.ln(96, b"zz"))
    elif r < knobs["p_unknown"] + knobs["p_wrong_wire"]:  # a field the reader asks for, with the wrong wire type
        num = int(_pick(rng, sorted(fields)))
        parts.append(w.uint(num, 7) if WIRE.get(fields[num], 2) != 0 else w.ln(num, b"\x08\x01"))
    if len(parts) > 1 and rng.random() < 0.2:
        parts = [parts[i] for i in rng.permutation(len(parts))]
    return b"".join(parts)


@st.composite
def hef_generated_specs(draw) -> Dict[str, Any]:
    knobs = dict(p_likely=draw(st.sampled_from([0.98, 0.95, 0.9, 0.8, 0.6])), extra=draw(st.sampled_from([0.1, 0.3, 0.8])),
                 max_depth=draw(st.sampled_from([12, 9, 6, 3])), p_unknown=draw(st.sampled_from([0.0, 0.05, 0.2])),
                 p_wrong_wire=draw(st.sampled_from([0.0, 0.01, 0.05])))
    return dict(kind="hef_gen", seed=draw(st.integers(0, 2**32 - 1)), knobs=knobs,
                version=draw(st.sampled_from([0, 1, 2, 3])), verify=draw(st.booleans()))


def build_generated(spec: Dict[str, Any]) -> bytes:
    proto = _message(np.random.default_rng(spec["seed"]), "hef", 0, spec["knobs"])
    if not proto:
        proto = b"\x08\x00"
    return w.wrap(proto, spec["version"])


# ------------------------------------------------------------------------------------------------
# Header fields
# ------------------------------------------------------------------------------------------------
@st.composite
def hef_header_specs(draw) -> Dict[str, Any]:
    return dict(kind="hef_header", base=draw(st.sampled_from(sorted(WRITER_BASES))),
                magic=draw(st.sampled_from(["ok", "ok", "ok", "lower", "zero"])),
                version=draw(st.sampled_from([None, None, 0, 1, 2, 3, 4, 2**32 - 1])),
                proto_size=draw(st.sampled_from([None, None, 0, 1, -1, 2**32 - 1, "+1", "-1"])),
                field=draw(st.sampled_from([None, 12, 16, 20, 28, 32, 40])),
                value=draw(st.sampled_from([0, 1, 2**31, 2**32 - 1, 2**63, 2**64 - 1])),
                tail=draw(st.sampled_from([0, 0, 1, -1, 16])), verify=draw(st.booleans()))


def build_header_case(spec: Dict[str, Any]) -> bytes:
    data = bytearray(WRITER_BASES[spec["base"]])
    if spec["magic"] == "lower":
        data[1:4] = b"hef"
    elif spec["magic"] == "zero":
        data[0:4] = b"\0\0\0\0"
    if spec["version"] is not None:
        struct.pack_into(">I", data, 4, spec["version"])
    ps = struct.unpack_from(">I", data, 8)[0]
    p = spec["proto_size"]
    if p is not None:
        new = {"+1": ps + 1, "-1": max(0, ps - 1), -1: 2**32 - 1}.get(p, p)
        struct.pack_into(">I", data, 8, int(new) & 0xFFFFFFFF)
    if spec["field"] is not None and spec["field"] + 8 <= len(data):
        struct.pack_into(">Q", data, spec["field"], spec["value"])
    t = spec["tail"]
    if t > 0:
        data += b"\0" * t
    elif t < 0:
        del data[t:]
    return bytes(data)


# ------------------------------------------------------------------------------------------------
# Tests
# ------------------------------------------------------------------------------------------------
def _need_real() -> List[str]:
    names = real_base_names()
    if not names:
        pytest.skip(f"real HEFs not found in {HEFS} (set HAILO_DECODE_HEFS)")
    return names


@fuzz_settings(250)
@given(st.data())
def test_fuzz_real_hef_mutations(data):
    """Structural and byte mutations of the five real HEFs."""
    names = _need_real()
    run_hef_spec(data.draw(hef_mutation_specs(names), label="spec"))


@fuzz_settings(400)
@given(hef_mutation_specs(writer_base_names()))
def test_fuzz_writer_hef_mutations(spec):
    """Structural and byte mutations of writer-built HEFs (YOLOv8 NMS op, padded layouts, ...),
    decoding with the config they give when one comes out."""
    run_hef_spec(spec)


@fuzz_settings(300)
@given(hef_generated_specs())
def test_fuzz_schema_generated_hef(spec):
    """Random protobufs shaped by the reader's schema, in every header version."""
    run_hef_spec(spec)


@fuzz_settings(150)
@given(hef_header_specs())
def test_fuzz_hef_header_fields(spec):
    run_hef_spec(spec)


def _boundaries(name: str, all_fields: bool) -> List[Tuple[int, Optional[Node]]]:
    nodes, _ = base_index(name)
    picked = [n for n in nodes if all_fields or n.depth == 0]
    return sorted({(n.tag, n.parent) for n in picked} | {(n.end, n.parent) for n in picked},
                  key=lambda t: t[0])


def _truncation_cases(name: str, all_fields: bool) -> int:
    data = base_bytes(name)
    version, header, proto, rest = split_hef(data)
    hs = len(header)
    n = 0
    for cut, parent in _boundaries(name, all_fields):
        # a short file: the header still declares the full size
        if hs + cut < len(data):
            with pytest.raises(HefError):
                read_hef(data[:hs + cut], verify_checksum=False)
        # a short protobuf behind a consistent header (checksum fixed): parsed as far as it goes
        check_hef(rewrap(header, proto[:cut], rest, True), verify=True, decode=False)
        if parent is not None:  # the enclosing message ends at the cut, its ancestors fixed
            check_hef(rewrap(header, splice(proto, cut, parent.end, b"", parent), rest, True), verify=True,
                      decode=False)
        n += 1
    return n


# Every field of these (one of each layout family); the top-level fields of the others.
_ALL_FIELDS = ("writer:yolov8_small_v0_ops", "writer:yolov8_small_v3_ops_partial", "writer:yolov8_small_v1_legacy",
               "writer:two_groups_mux")


@pytest.mark.parametrize("name", writer_base_names())
def test_writer_hef_truncated_at_field_boundaries(name):
    with watchdog():
        assert _truncation_cases(name, all_fields=name in _ALL_FIELDS) >= 3


def test_real_hef_truncated_at_every_top_level_boundary():
    names = _need_real()
    with watchdog():
        for name in names:
            assert _truncation_cases(name, all_fields=False) >= 3


def test_harness_catches_a_broken_reader(monkeypatch):
    """The harness is not vacuous: an exception other than HefError from read_hef fails it, and
    so does a TypeError from config_from_hef."""
    assert check_hef(WRITER_BASES["yolov8_small_v0_ops"]) == "decoded"

    def broken(*a, **k):
        raise IndexError("simulated reader bug")

    monkeypatch.setattr(sys.modules[__name__], "read_hef", broken)
    with pytest.raises(IndexError):
        check_hef(WRITER_BASES["yolov8_v1"])
    monkeypatch.undo()

    def broken_config(*a, **k):
        raise TypeError("simulated config bug")

    monkeypatch.setattr(sys.modules[__name__], "config_from_hef", broken_config)
    with pytest.raises(TypeError):
        check_hef(WRITER_BASES["yolov8_v1"])


def test_splice_keeps_enclosing_lengths_consistent():
    """A field changed deep inside gives a file the reader still parses up to the change."""
    name = "writer:yolov8_v1"
    _, header, proto, rest = split_hef(base_bytes(name))
    nodes, followed = base_index(name)
    deep = [n for n in followed if n.depth >= 6 and n.wt == 0]
    assert deep
    n = deep[0]
    mutated = splice(proto, n.start, n.end, w.enc_varint(2**40), n.parent)
    assert len(index_proto(mutated)) == len(nodes)
    read_hef(rewrap(header, mutated, rest, True))
