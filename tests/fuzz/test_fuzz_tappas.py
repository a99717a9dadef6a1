"""Fuzzing the TAPPAS hailofilter plugin (FUZZING.md, harness `tappas`) through its test host
(cpp/tappas/tests/host.cpp), built for both ABI lines as tests/test_tappas_plugin.py builds it
(tests/tappas/plugin_host.py; skipped without ../shared/tappas). Its two input kinds:

- `tappas_config`: the config file. The examples (examples/tappas/*.json) mutated: keys dropped,
  renamed to near misses, set to values of the wrong type or out of range, to numbers written as
  text JSON does not have (NaN, Infinity, 1e400, hex), to deep nesting; the text edited (bytes
  deleted, inserted, cut, non-UTF-8 bytes, a BOM); nms_json pointing at a missing file, a folder,
  garbage, a JSON list; an empty file, a folder, a missing path or NULL as config-path.
- `tappas_tensors`: the tensors hailofilter hands the plugin, from small models of every kind the
  plugin decodes (at a 64x64 input), changed: tensors dropped, added, renamed (to a near miss or to
  another's name), reshaped (0, 1, one more, 40000), another element type (AUTO, UINT8, UINT16,
  FLOAT32, a number no format has), quantization 0, negative, NaN, inf, 1e-45, 3.5e38, an NMS flag on
  a feature map, HAILO_NMS_BY_CLASS buffers whose counts lie (over max_bboxes_per_class, negative,
  NaN, inf, fractional, differently in every frame), hold a NaN or inf box value, or whose NMS shape
  is not the one written;
  output_format_type FLOAT32 on UINT8 bytes; NaN and inf in float input.

Every buffer the host gets holds the bytes its metadata (or output_format_type) declares, and more:
4 bytes an element whatever the type, and the whole HAILO_NMS_BY_CLASS size; the test never makes
the plugin read out of bounds. Each case runs 3 frames. What must hold, for every case: the host
exits 0; stderr holds only the plugin's one-line messages (each starting with "hailo_decode"), at
most one a distinct problem over the frames (a bad config, tensors that do not match, a bad NMS
tensor: named once, not once a frame); an element with a bad config adds nothing to any frame, nor
does one whose tensors do not match. Configs the core's own readers (`_core.parse_json`,
`_core.read_options`) and the plugin's key rules refuse must be refused, once; the ones they accept
must not be.

Examples: 60 a property and ABI line, derandomized; $HAILO_DECODE_FUZZ_EXAMPLES for more (fresh
randomness), e.g. HAILO_DECODE_FUZZ_EXAMPLES=1000 python -m pytest tests/fuzz/test_fuzz_tappas.py."""

from __future__ import annotations

import json
import math
import re
import subprocess
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import numpy as np
from hypothesis import HealthCheck, given
from hypothesis import strategies as st

from hailo_decode import _core
from tappas.plugin_host import ABI, Built, build, host_command, host_env, output_line

from .decoder_cases import CLEAN, OUTCOMES, _log_case, fuzz_settings, spec_json

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "tappas"
FRAMES = 3
IMAGE = 64
TIMEOUT = 60  # seconds a host run may take: a case is milliseconds, more is a hang
# libyolov5seg_post.so's keys (setup::read_yolov5seg_json) are the plugin's too.
YOLOV5SEG_KEYS = ("outputs_size", "outputs_name", "anchors", "input_shape", "strides")
PLUGIN_KEYS = ("labels", "output_format_type", "nms_json", "keypoint_threshold", "heads", "obb_user_meta") + YOLOV5SEG_KEYS
ALIASES = [("detection_threshold", "score_threshold"), ("max_boxes", "max_total")]  # plugin_config.cpp's
FORMATS = ("HAILO_FORMAT_TYPE_AUTO", "HAILO_FORMAT_TYPE_UINT8", "HAILO_FORMAT_TYPE_UINT16", "HAILO_FORMAT_TYPE_FLOAT32")
SETTINGS = fuzz_settings(60, suppress_health_check=list(HealthCheck))


# ------------------------------------------------------------------------------------------------
# The models: (name, (h, w, c)) per tensor, or (name, ("nms", classes, max_per_class)); 64x64 input
# ------------------------------------------------------------------------------------------------
def _v8(prefix: str, classes: int, extra: Optional[Tuple[str, int]] = None) -> List[Tuple[str, tuple]]:
    outs = []
    for s in (8, 16, 32):
        g = IMAGE // s
        outs += [(f"{prefix}/box_{s}", (g, g, 64)), (f"{prefix}/cls_{s}", (g, g, classes))]
        if extra:
            outs.append((f"{prefix}/{extra[0]}_{s}", (g, g, extra[1])))
    return outs


MODELS: Dict[str, List[Tuple[str, tuple]]] = {
    "det": _v8("m", 80),
    "pose": _v8("pose", 1, ("kpt", 51)),
    "obb": _v8("obb", 15, ("angle", 1)),
    "seg": _v8("seg", 80, ("mask", 32)) + [("seg/proto", (16, 16, 32))],
    "yolov5": [(f"yolov5s/conv{n}", (IMAGE // s, IMAGE // s, 255)) for n, s in ((55, 8), (63, 16), (70, 32))],
    "yolox": [(f"yolox/conv{n + k}", (IMAGE // s, IMAGE // s, c)) for n, s in ((54, 8), (68, 16), (81, 32))
              for k, c in ((0, 80), (1, 4), (2, 1))],
    "nms": [("m/yolov8_nms_postprocess", ("nms", 80, 100))],
    # yolov5n-seg as TAPPAS' libyolov5seg_post.so config names it (examples/tappas/yolov5seg.json)
    "yolov5seg": [("yolov5n_seg/conv63", (IMAGE // 4, IMAGE // 4, 32))] +
                 [(f"yolov5n_seg/conv{n}", (IMAGE // s, IMAGE // s, 3 * (5 + 80 + 32))) for n, s in ((48, 8), (55, 16), (61, 32))],
}
# The example each model goes with (the config property's base).
BASES = {"detect.json": "det", "end2end.json": "det", "float32_outputs.json": "det", "pose.json": "pose",
         "obb.json": "obb", "segment.json": "seg", "yolov5_anchors.json": "yolov5", "yolox.json": "yolox",
         "nms_op.json": "nms", "yolov5seg.json": "yolov5seg"}
NMS_FILE = "yolov5s_nms_config.json"


def _base_doc(example: str) -> Dict[str, Any]:
    """The example, its NMS JSON's image at the models' 64x64."""
    doc = json.loads((EXAMPLES / example).read_text())
    if isinstance(doc.get("nms_json"), dict):
        doc["nms_json"]["image_dims"] = [IMAGE, IMAGE]
    if "outputs_size" in doc:  # libyolov5seg_post.so's: grids and input at 64
        doc["outputs_size"], doc["input_shape"] = [IMAGE // s for s in doc["strides"]], [IMAGE, IMAGE]
    return doc


# ------------------------------------------------------------------------------------------------
# Config files
# ------------------------------------------------------------------------------------------------
_OPTION_NAMES = sorted(_core.option_names())
_KEYS = sorted(set(PLUGIN_KEYS) | set(_OPTION_NAMES)) + ["nms_scores_th", "image_dims", "classes", ""]
_ODD = [None, True, False, 0, 1, -1, 2, 0.5, 1.5, -0.5, 1e30, 10**30, -(2**70), 1e-45, "", "x", "0.5", "sigmoid",
        "hailort", "ultralytics", "pose", "HAILO_FORMAT_TYPE_FLOAT32", "HAILO_FORMAT_TYPE_UINT16", "hailo_format_type_uint8",
        "FLOAT32", [], [0.5], [0.1, 0.2], [64, 64], ["unlabeled", 3], ["unlabeled", "a\nb", "\u0000", "é" * 300],
        ["x"] * 2000, {}, {"a": 1}, {"bbox_decoders": []}, "missing.json", "garbage.json", "list.json", ".", "/dev/null",
        NMS_FILE, "/",
        # "heads": the det model's, one of them, a wrong kind, names that are not outputs, two families
        [{"box": f"m/box_{s}", "cls": f"m/cls_{s}", "stride": s} for s in (8, 16, 32)],
        [{"box": "m/box_8", "cls": "m/cls_8"}], [{"box": "m/box_8"}], [{"bxo": "m/box_8", "cls": "m/cls_8"}],
        [{"box": "m/box_8", "cls": "m/cls_8"}, {"reg": "a", "obj": "b", "cls": "c"}],
        [{"output": "yolov5s/conv55", "anchors": [[10, 13]]}], [{"box": 8, "cls": "x"}], [{}],
        # libyolov5seg_post.so's keys: a branch short, odd anchors, names that are not outputs, 16.0
        [8, 16], [2, 4, 8], [8, 4, 2], [[10, 13, 16, 30]] * 3, [[10, 13, 16]] * 3, [[10, 13], [16, 30, 33, 23], [1, 2]],
        ["a", "b", "c", "d"], ["yolov5n_seg/conv63", "yolov5n_seg/conv48", "yolov5n_seg/conv55"], [16.0, 32, 8],
        [0, 4, 8], [64, 64, 3], [65537, 1]]
# Numbers (and such) JSON does not have, or has at the edge of a double, written into the text.
_RAW = ["NaN", "-NaN", "Infinity", "-Infinity", "1e400", "-1e400", "1e-400", "-0", "0x10", ".5", "1.", "01", "+1",
        "9223372036854775808", "18446744073709551616", "1" * 400, "nan", "inf", "True", "None", "'x'",
        "\"\\ud800\"", "\"\\u0000\""]
_NOISE = list('{}[]:,"\\ \n0123456789.eE+-') + ["\\u", "\ufeff", "é", "NaN", "1e400", "//", "/*"]
_BYTES = [b"\xff", b"\xfe", b"\xc3", b"\xc3\x28", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\x80", b"\x00",
          b"\xef\xbb\xbf"]


def _near_misses(key: str) -> List[str]:
    return [key[:-1], key + "s", key.upper(), key.replace("_", "-"), key.replace("threshold", "treshold"), " " + key,
            key + " ", key.replace("_", "")]


@st.composite
def config_specs(draw) -> Dict[str, Any]:
    example = draw(st.sampled_from(sorted(BASES)))
    form = draw(st.sampled_from(["file"] * 12 + ["empty", "whitespace", "dir", "missing", "NULL", "devnull"]))
    edits: List[List[Any]] = []
    for _ in range(draw(st.integers(0 if form == "file" else 0, 3))):
        op = draw(st.sampled_from(["drop", "rename", "set", "set", "raw", "deep", "nms_json"]))
        if op == "nms_json":
            edits.append([op, draw(st.sampled_from(["missing.json", "garbage.json", "list.json", "empty.json", ".",
                                                    "", "/dev/null", NMS_FILE, "sub/../" + NMS_FILE, "nested"]))])
        elif op == "set":
            edits.append([op, draw(st.sampled_from(_KEYS)), draw(st.integers(0, len(_ODD) - 1))])
        elif op == "raw":
            edits.append([op, draw(st.sampled_from(_KEYS)), draw(st.sampled_from(_RAW))])
        elif op == "deep":
            edits.append([op, draw(st.sampled_from(_KEYS)), draw(st.sampled_from([1, 30, 500, 5000, 100000])),
                          draw(st.sampled_from(["[", "{\"a\":"]))])
        else:
            edits.append([op, draw(st.integers(0, 50)), draw(st.integers(0, 7))])
    texts: List[List[Any]] = []
    for _ in range(draw(st.sampled_from([0, 0, 0, 1, 2]))):
        texts.append([draw(st.sampled_from(["delete", "insert", "cut", "duplicate", "bytes"])),
                      draw(st.floats(0, 1)), draw(st.integers(0, 20))])
    model = BASES[example] if draw(st.integers(0, 4)) else draw(st.sampled_from(sorted(MODELS)))
    return {"kind": "tappas_config", "example": example, "form": form, "edits": edits, "texts": texts,
            "model": model, "seed": draw(st.integers(0, 2**31 - 1))}


def _config_bytes(spec: Dict[str, Any]) -> bytes:
    doc = _base_doc(spec["example"])
    raws: Dict[str, str] = {}
    for edit in spec["edits"]:
        op = edit[0]
        keys = list(doc)
        if op == "drop" and keys:
            doc.pop(keys[edit[1] % len(keys)])
        elif op == "rename" and keys:
            key = keys[edit[1] % len(keys)]
            doc[_near_misses(key)[edit[2]]] = doc.pop(key)
        elif op == "set":
            doc[edit[1]] = _ODD[edit[2]]
        elif op == "raw":
            raws[f"@@raw{len(raws)}@@"] = edit[2]
            doc[edit[1]] = list(raws)[-1]
        elif op == "deep":
            depth, opener = edit[2], edit[3]
            closer = "]" if opener == "[" else "}"
            raws[f"@@raw{len(raws)}@@"] = opener * depth + "1" + closer * depth
            doc[edit[1]] = list(raws)[-1]
        elif op == "nms_json":
            doc["nms_json"] = edit[1] if edit[1] != "nested" else {"nms_json": {"nms_json": NMS_FILE}}
    text = json.dumps(doc, indent=2)
    for token, raw in raws.items():
        text = text.replace(json.dumps(token), raw)
    data = text.encode("utf-8")
    rng = np.random.default_rng(spec["seed"])
    for op, where, n in spec["texts"]:
        at = int(where * len(data))
        if op == "delete":
            data = data[:at] + data[at + 1 + n % 3:]
        elif op == "insert":
            data = data[:at] + _NOISE[n % len(_NOISE)].encode("utf-8") + data[at:]
        elif op == "cut":
            data = data[:at]
        elif op == "duplicate":
            end = min(len(data), at + 1 + n)
            data = data[:end] + data[at:end] + data[end:]
        else:
            data = data[:at] + _BYTES[int(rng.integers(len(_BYTES)))] + data[at:]
    return data


def _support_files(folder: Path) -> None:
    """What nms_json may name, beside the config file."""
    nms = json.loads((EXAMPLES / NMS_FILE).read_text())
    nms["image_dims"] = [IMAGE, IMAGE]
    (folder / NMS_FILE).write_text(json.dumps(nms))
    (folder / "garbage.json").write_bytes(b"\x00\xffnot json {[")
    (folder / "list.json").write_text("[1, 2]")
    (folder / "empty.json").write_bytes(b"")
    (folder / "sub").mkdir()


def _json_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _yolov5seg_ok(doc: Dict[str, Any]) -> bool:
    """libyolov5seg_post.so's keys as docs/gstreamer.md states their rules (absent: its defaults)."""
    def whole(v: Any) -> bool:
        return _json_number(v) and math.isfinite(v) and float(v).is_integer() and 1 <= v <= 65536

    def wholes(v: Any) -> bool:
        return isinstance(v, list) and bool(v) and all(whole(x) for x in v)

    strides = doc.get("strides", [32, 16, 8])
    sizes = doc.get("outputs_size", [20, 40, 80])
    shape = doc.get("input_shape", [640, 640])
    names = doc.get("outputs_name", ["p", "a", "b", "c"])
    anchors = doc.get("anchors", [[1, 1]] * 3)
    if not (wholes(strides) and wholes(sizes) and len(sizes) == len(strides) and wholes(shape) and len(shape) == 2):
        return False
    if not (isinstance(names, list) and len(names) == len(strides) + 1 and all(isinstance(n, str) and n for n in names)):
        return False
    if not (isinstance(anchors, list) and len(anchors) == len(strides) and all(wholes(a) for a in anchors)):
        return False
    return all(len(a) % 2 == 0 and len(a) == len(anchors[0]) for a in anchors)


def _expected_config(data: bytes, folder: Path) -> Optional[bool]:
    """True: the plugin must take the file; False: it must refuse it; None: the harness does not
    know (bytes that are not UTF-8, duplicate keys). The core's own parser and option reader, and
    the plugin's rules for its keys (plugin_config.cpp)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    try:
        doc = _core.parse_json(text)
    except CLEAN:
        return False
    if not isinstance(doc, dict):
        return False
    try:
        pairs = json.loads(text, object_pairs_hook=lambda p: p)
        if len({k for k, _ in pairs}) != len(pairs):
            return None
    except ValueError:
        return None
    for key, v in doc.items():
        if key == "keypoint_threshold":
            if not (_json_number(v) and 0.0 <= v <= 1.0):
                return False
        elif key == "labels":
            if not (isinstance(v, list) and all(isinstance(x, str) for x in v)):
                return False
        elif key == "output_format_type":
            if v not in FORMATS:
                return False
        elif key == "obb_user_meta":
            if not isinstance(v, bool):
                return False
        elif key == "heads":
            try:
                _core.read_heads(v)
            except CLEAN:
                return False
        elif key == "nms_json" and not isinstance(v, dict):
            if not isinstance(v, str) or not v:
                return False
            path = Path(v) if v.startswith("/") else folder / v
            if not path.is_file():
                return False
            try:
                nms = _core.parse_json(path.read_bytes().decode("utf-8"))
            except (UnicodeDecodeError, *CLEAN):
                return False
            if not isinstance(nms, dict):
                return False
    if any(alias in doc and setting in doc for alias, setting in ALIASES):
        return False
    if "heads" in doc and "nms_json" in doc:
        return False
    if any(k in doc for k in YOLOV5SEG_KEYS) and ("heads" in doc or "nms_json" in doc or not _yolov5seg_ok(doc)):
        return False
    try:
        _core.read_options({k: v for k, v in doc.items() if k not in PLUGIN_KEYS}, "", ALIASES)
    except CLEAN:
        return False
    return True


# ------------------------------------------------------------------------------------------------
# Tensor sets
# ------------------------------------------------------------------------------------------------
_TYPES = ["AUTO", "UINT8", "UINT16", "FLOAT32", "7"]
_QUANT = [0.0, -0.0, -1.0, 1e-45, 1e-30, 255.5, 1e30, 3.5e38, float("nan"), float("inf"), float("-inf")]
_COUNT_LIES = ["none", "over", "negative", "nan", "inf", "fraction", "huge", "random", "box"]  # box: a NaN/inf value


def _tensor(name: str, shape: tuple) -> Dict[str, Any]:
    if shape[0] == "nms":
        return dict(name=name, shape=[0, 0, 0], type="FLOAT32", zp=0.0, scale=1.0, nms=[shape[1], shape[2]],
                    written=[shape[1], shape[2]], lies=["none"] * FRAMES)
    q = 1 / 255 if shape[2] != 64 else 0.1
    return dict(name=name, shape=list(shape), type="UINT8", zp=0.0, scale=q, nms=None, written=None,
                lies=["none"] * FRAMES)


@st.composite
def tensor_specs(draw) -> Dict[str, Any]:
    model = draw(st.sampled_from(sorted(MODELS)))
    tensors = [_tensor(n, s) for n, s in MODELS[model]]
    example = {v: k for k, v in BASES.items()}[model]
    config = _base_doc(example) if draw(st.booleans()) else {}
    if model == "yolov5" and "nms_json" not in config:
        config = _base_doc("yolov5_anchors.json")
    if model == "yolox" and "nms_json" not in config:
        config = _base_doc("yolox.json")
    if model in ("det", "pose", "obb", "seg") and draw(st.booleans()):
        # The heads named ("heads"), as a config does when shapes cannot pair them.
        prefix = MODELS[model][0][0].split("/")[0]
        extra = {"pose": "kpt", "obb": "angle", "seg": "mask"}.get(model)
        config["heads"] = [dict({"box": f"{prefix}/box_{s}", "cls": f"{prefix}/cls_{s}", "stride": s},
                                **({extra: f"{prefix}/{extra}_{s}"} if extra else {})) for s in (8, 16, 32)]
        config.pop("nms_json", None)
        if model == "seg":
            config["proto"] = "seg/proto"
    if model == "obb" and draw(st.booleans()):
        config["obb_user_meta"] = True
    fmt = draw(st.sampled_from([None, None, None, *FORMATS]))
    if fmt:
        config["output_format_type"] = fmt
    for _ in range(draw(st.integers(0, 3))):
        op = draw(st.sampled_from(["drop", "extra", "rename", "reshape", "type", "zp", "scale", "nms_flag",
                                   "nms_shape", "lie", "lie"]))
        i = draw(st.integers(0, len(tensors) - 1)) if tensors else 0
        t = tensors[i] if tensors else None
        if op == "drop" and tensors:
            tensors.pop(i)
        elif op == "extra":
            tensors.append(_tensor(draw(st.sampled_from(["m/extra", "extra", "x" * 200, "m/box_8", "m/cls_8"])),
                                   tuple(draw(st.lists(st.sampled_from([0, 1, 2, 4, 8, 64]), min_size=3, max_size=3)))))
        elif op == "rename" and t:
            others = [u["name"] for u in tensors] + ["x" * 200, "conv55", t["name"] + "_"]
            t["name"] = draw(st.sampled_from(others + _near_misses(t["name"])[:3])).replace(" ", "_") or "_"
        elif op == "reshape" and t and not t["nms"]:
            axis = draw(st.integers(0, 2))
            t["shape"][axis] = draw(st.sampled_from([0, 1, t["shape"][axis] + 1, max(1, t["shape"][axis] - 1), 40000]))
            if t["shape"][axis] == 40000:
                t["shape"] = [1, 40000, 1] if axis else [40000, 1, 1]
        elif op == "type" and t:
            t["type"] = draw(st.sampled_from(_TYPES))
        elif op in ("zp", "scale") and t:
            t[op] = draw(st.sampled_from(_QUANT))
        elif op == "nms_flag" and t and not t["nms"]:
            t["nms"] = [draw(st.sampled_from([0, 1, 3, 80])), draw(st.sampled_from([0, 1, 2, 100]))]
        elif op == "nms_shape" and t and t["nms"]:
            t["nms"] = [draw(st.sampled_from([0, 1, 79, 81, 1000])), draw(st.sampled_from([0, 1, 99, 101, 2000]))]
        elif op == "lie" and t and t["nms"]:
            t["lies"] = draw(st.lists(st.sampled_from(_COUNT_LIES), min_size=FRAMES, max_size=FRAMES))
    return {"kind": "tappas_tensors", "model": model, "tensors": tensors, "config": config,
            "nan_input": draw(st.sampled_from([False, False, False, True])), "u8_bytes": draw(st.booleans()),
            "seed": draw(st.integers(0, 2**31 - 1))}


def _read_dtype(t: Dict[str, Any], fmt: Optional[str]) -> str:
    """The element type the plugin reads a feature map as (tensor_specs.cpp)."""
    by_format = {"HAILO_FORMAT_TYPE_UINT8": "u1", "HAILO_FORMAT_TYPE_UINT16": "u2", "HAILO_FORMAT_TYPE_FLOAT32": "f4"}
    if fmt in by_format:
        return by_format[fmt]
    return {"UINT16": "u2", "FLOAT32": "f4"}.get(t["type"], "u1")


def _nms_frame(rng: np.random.Generator, classes: int, mpc: int, lie: str, floats: int) -> np.ndarray:
    """A HAILO_NMS_BY_CLASS frame of `classes` x `mpc` (its counts maybe lying), in `floats` floats."""
    out = np.zeros(floats, np.float32)
    at = 0
    for k in range(classes):
        if at >= floats:
            break
        n = int(rng.integers(0, min(mpc, 3) + 1)) if k < 6 else 0
        if lie == "box" and k == 0:
            n = max(n, min(mpc, 1))
        out[at] = n
        rec = rng.random((n, 5), dtype=np.float32)
        rec[:, 2:4] = np.maximum(rec[:, 2:4], rec[:, 0:2])
        if lie == "box" and k == 0 and n:
            rec[0, int(rng.integers(0, 5))] = [np.nan, np.inf, -np.inf][int(rng.integers(0, 3))]
        end = min(floats, at + 1 + 5 * n)
        out[at + 1:end] = rec.ravel()[:end - at - 1]
        at += 1 + 5 * n
    if lie not in ("none", "box") and classes:
        k = int(rng.integers(0, classes))
        value = {"over": mpc + 1 + int(rng.integers(0, 1000)), "negative": -1 - float(rng.integers(0, 5)),
                 "nan": np.nan, "inf": np.inf, "fraction": 0.5 + float(rng.integers(0, 3)), "huge": 1e30,
                 "random": float(rng.normal() * 1e6)}[lie]
        at = 0
        for _ in range(k):  # class k's count, after the records as written
            if at >= floats:
                break
            at += 1 + 5 * int(out[at]) if np.isfinite(out[at]) and 0 <= out[at] <= mpc else 1
        if at < floats:
            out[at] = value
    return out


def _write_tensor_frames(folder: Path, spec: Dict[str, Any], fmt: Optional[str]) -> Path:
    rng = np.random.default_rng(spec["seed"])
    lines = [f"outputs {len(spec['tensors'])}"]
    for i, t in enumerate(spec["tensors"]):
        h, w, c = t["shape"]
        elements = h * w * c
        classes, mpc = t["nms"] or (0, 0)
        declared = max(4 * elements, 4 * classes * (1 + 5 * mpc), 4)  # 4 bytes an element, whatever the type
        frames = []
        for f in range(FRAMES):
            buf = np.zeros(declared, np.uint8)
            if t["nms"]:
                wc, wm = t["written"] or t["nms"]
                buf[:] = _nms_frame(rng, wc, wm, t["lies"][f], declared // 4).view(np.uint8)
                # The counts as the metadata's shape sees them lie too when the shape is not the one written.
            else:
                dt = _read_dtype(t, fmt)
                if dt == "f4":
                    x = (rng.normal(size=elements) * 3 - 2).astype(np.float32)
                    if spec["nan_input"] and elements:
                        x[rng.integers(0, elements, size=2)] = [np.nan, np.inf][f % 2]
                    if t["type"] in ("UINT8", "AUTO") and fmt == "HAILO_FORMAT_TYPE_FLOAT32" and spec["u8_bytes"]:
                        # hailonet's pitfall the other way: UINT8 bytes where FLOAT32 is declared.
                        x = rng.integers(0, 256, size=4 * elements, dtype=np.uint8).view(np.float32)
                    raw = x.view(np.uint8)
                elif dt == "u2":
                    raw = rng.integers(0, 65536, size=elements, dtype=np.uint16).view(np.uint8)
                else:
                    q = rng.integers(0, 40, size=elements, dtype=np.uint8)
                    hot = rng.random(elements) < 0.01
                    q[hot] = rng.integers(180, 256, size=int(hot.sum()), dtype=np.uint8)
                    raw = q
                buf[:raw.size] = raw
                if raw.size < declared:  # what follows the declared bytes: garbage, never read
                    buf[raw.size:] = rng.integers(0, 256, size=declared - raw.size, dtype=np.uint8)
            frames.append(buf)
        path = folder / f"out{i}.bin"
        np.concatenate(frames).tofile(path)
        nms = tuple(t["nms"]) if t["nms"] else None
        lines.append(output_line(t["name"], t["shape"], t["type"], t["zp"], t["scale"], nms, declared, path))
    lines.append(f"frames {FRAMES}")
    desc = folder / "frames.txt"
    desc.write_text("\n".join(lines) + "\n")
    return desc


def _model_frames(folder: Path, model: str, seed: int, fmt: Optional[str] = None) -> Path:
    tensors = [_tensor(n, s) for n, s in MODELS[model]]
    return _write_tensor_frames(folder, {"tensors": tensors, "seed": seed, "nan_input": False, "u8_bytes": False}, fmt)


# ------------------------------------------------------------------------------------------------
# Running and checking
# ------------------------------------------------------------------------------------------------
CATEGORIES = [
    ("config", re.compile(r"\(this element adds nothing to any frame\)$")),
    ("notice", re.compile(r"is not a file: using the defaults")),
    ("labels", re.compile(r": labels has \d+ names, the model")),
    ("mismatch", re.compile(r": the outputs do not match the settings, frames get nothing: ")),
    ("nms", re.compile(r"; such frames get nothing$|: an NMS output in an order other than")),
]


def _run(built: Built, desc: Path, config: str) -> Tuple[List[dict], List[str]]:
    cmd = host_command(built, desc, config, extra=[])
    try:
        r = subprocess.run(cmd, capture_output=True, env=host_env(), timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"the host hung (over {TIMEOUT} s): {' '.join(cmd)}") from None
    err = r.stderr.decode("utf-8", "replace")
    assert r.returncode == 0, f"host exit {r.returncode}: {' '.join(cmd)}\n{err[-3000:]}"
    doc = json.loads(r.stdout.decode("utf-8", "surrogateescape"))
    assert doc["abi"] == ABI[built.line]
    assert len(doc["frames"]) == FRAMES
    return doc["frames"], err.splitlines()


def _check_lines(lines: List[str], nms_tensors: int) -> Dict[str, List[str]]:
    """Only the plugin's one-line messages, each said once, at most one a problem."""
    by: Dict[str, List[str]] = {}
    for line in lines:
        assert line.startswith("hailo_decode"), f"stderr holds a line not the plugin's: {line!r}"
        kind = next((k for k, rx in CATEGORIES if rx.search(line)), "other")
        by.setdefault(kind, []).append(line)
    assert len(set(lines)) == len(lines), "a message repeated:\n" + "\n".join(lines)
    for kind, found in by.items():
        most = max(1, nms_tensors) if kind == "nms" else 1
        assert len(found) <= most, f"{len(found)} {kind} lines over {FRAMES} frames:\n" + "\n".join(found)
    if "config" in by:
        assert set(by) == {"config"}, "a bad config, and more said:\n" + "\n".join(lines)
    return by


def _check_objects(frames: List[dict], decoded: bool, finite_boxes: bool = True, user_meta: bool = False) -> int:
    n = 0
    for frame in frames:
        assert frame["scaling_bbox"] == [0, 0, 1, 1]
        for d in frame["objects"]:
            assert d["type"] == "detection" and d["class_id"] >= 1
            if decoded:  # the core's detections (an NMS op's records are passed on as they are)
                assert 0.0 <= d["confidence"] <= 1.0, d
                # Anchor heads' boxes may be inf where exp(offset) overflows, as in HailoRT's op.
                assert all(math.isfinite(v) for v in d["bbox"]) or not finite_boxes, d
            else:  # an NMS op's records, as written; a non-finite one refuses its frame
                assert all(math.isfinite(v) for v in d["bbox"]) and math.isfinite(d["confidence"]), d
            # Boxes in the picture (issue 33): clipped to [0, 1], never empty; masks never 0 cells;
            # a HailoUserMeta (no get_type() in TAPPAS' Python module) only when asked for.
            x, y, w, h = d["bbox"]
            assert w > 0 and h > 0 and x >= 0 and y >= 0 and x + w <= 1 + 1e-6 and y + h <= 1 + 1e-6, d
            for o in d.get("objects", []):
                assert o["type"] != "conf_class_mask" or (o["width"] >= 1 and o["height"] >= 1), o
                assert o["type"] != "user_meta" or user_meta, o
            n += 1
    return n


def run_config_spec(built: Built, spec: Dict[str, Any]) -> str:
    with tempfile.TemporaryDirectory(prefix="tappas-fuzz-") as tmp:
        folder = Path(tmp)
        _support_files(folder)
        path = folder / "config dir" / "config.json"  # a space in the path, as users have
        path.parent.mkdir()
        _support_files(path.parent)
        data = _config_bytes(spec)
        form = spec["form"]
        expected: Optional[bool]
        if form == "file":
            path.write_bytes(data)
            expected = _expected_config(data, path.parent)
        elif form in ("empty", "whitespace"):
            path.write_bytes(b"" if form == "empty" else b" \n\t")
            expected = False
        elif form == "dir":
            path = path.parent
            expected = True  # not a file: the defaults, with a notice
        elif form == "devnull":
            path = Path("/dev/null")
            expected = True
        else:
            path = folder / "nowhere.json" if form == "missing" else Path("NULL")
            expected = True
        fmt = None
        if expected and form == "file":
            fmt = json.loads(data.decode("utf-8")).get("output_format_type")
        desc = _model_frames(folder, spec["model"], spec["seed"], fmt)
        frames, lines = _run(built, desc, str(path))
        by = _check_lines(lines, 1)
        n = _check_objects(frames, spec["model"] != "nms", finite_boxes=spec["model"] not in ("yolov5", "yolox"),
                           user_meta=b"obb_user_meta" in data)
        if "config" in by:
            assert n == 0, f"a bad config, and {n} objects added"
            # It names the file: the config, or the NMS JSON its nms_json names (beside it).
            assert str(path.parent) in by["config"][0] or form != "file", by["config"]
        if expected is False:
            assert "config" in by, f"a config the core refuses was taken: {data[:300]!r}\n" + "\n".join(lines)
        if expected is True:
            assert "config" not in by, f"a config the core takes was refused: {data[:300]!r}\n" + "\n".join(lines)
            if form in ("dir", "missing"):
                assert "notice" in by
        if "mismatch" in by:
            assert n == 0
        return "refused" if "config" in by else f"taken, {'objects' if n else 'no objects'}"


def run_tensor_spec(built: Built, spec: Dict[str, Any]) -> str:
    with tempfile.TemporaryDirectory(prefix="tappas-fuzz-") as tmp:
        folder = Path(tmp)
        _support_files(folder)
        path = folder / "config.json"
        path.write_text(json.dumps(spec["config"]))
        fmt = spec["config"].get("output_format_type")
        desc = _write_tensor_frames(folder, spec, fmt)
        frames, lines = _run(built, desc, str(path))
        nms_tensors = sum(1 for t in spec["tensors"] if t["nms"])
        by = _check_lines(lines, nms_tensors)
        assert "config" not in by, lines
        n = _check_objects(frames, nms_tensors == 0, finite_boxes="nms_json" not in spec["config"],
                           user_meta=spec["config"].get("obb_user_meta") is True)
        if "mismatch" in by:
            assert n == 0, f"tensors that do not match, and {n} objects added"
        return "mismatch" if "mismatch" in by else "nms-refused" if "nms" in by else \
            f"decoded, {'objects' if n else 'no objects'}"


@SETTINGS
@given(spec=config_specs())
def test_fuzz_tappas_config(built, spec):
    _log_case(spec)
    OUTCOMES[f"tappas_config:{run_config_spec(built, spec)}"] += 1


@SETTINGS
@given(spec=tensor_specs())
def test_fuzz_tappas_tensors(built, spec):
    _log_case(spec)
    OUTCOMES[f"tappas_tensors:{run_tensor_spec(built, spec)}"] += 1


def test_unchanged_models_decode(built, tmp_path):
    """The harness's models and examples as they are: taken, and most of them find objects (so the
    properties above are not vacuous)."""
    found = 0
    for example, model in sorted(BASES.items()):
        spec = {"kind": "tappas_config", "example": example, "form": "file", "edits": [], "texts": [],
                "model": model, "seed": 1}
        outcome = run_config_spec(built, spec)
        assert outcome.startswith("taken"), (example, outcome)
        found += outcome.endswith(" objects") and "no" not in outcome
    assert found >= 6, found


def replay(spec_json_text: str, line: str = "5.1") -> str:
    """For a failure's spec (printed by hypothesis): run it again outside pytest's fixtures."""
    spec = json.loads(spec_json_text)

    class _Factory:
        @staticmethod
        def mktemp(name: str) -> Path:
            return Path(tempfile.mkdtemp(prefix=name))
    built_ = build(line, _Factory)
    run = run_config_spec if spec["kind"] == "tappas_config" else run_tensor_spec
    return run(built_, spec)


__all__ = ["config_specs", "tensor_specs", "run_config_spec", "run_tensor_spec", "replay", "spec_json"]


def test_zz_outcomes():
    """Prints what the properties above ran into (pytest -s), as scripts/fuzz.py does for the others."""
    print({k: v for k, v in sorted(OUTCOMES.items()) if k.startswith("tappas_")})
