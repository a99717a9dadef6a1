"""Fuzzing the core's setup readers through the binding (FUZZING.md, harness `setup`): JSON text,
random and mutated, to json::parse (`_core.parse_json`); random option objects to read_options,
directly and through DecoderConfig; mutated Model Zoo NMS JSONs to read_nms_json and
DecoderConfig.from_nms_json; mutated head lists ("heads") to read_heads and DecoderConfig(heads=).
Every outcome is a result or ValueError/TypeError, never a crash or
another exception; what is accepted is checked too (the parser agrees with Python's json module
on every document both accept; accepted options lie in their ranges; the same mistake gives the
same message through DecoderConfig as through the core)."""

from __future__ import annotations

import json
import math
import re
from typing import Any, Dict, List

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

import hailo_decode as hd
from hailo_decode import _core

from .decoder_cases import CLEAN, _log_case, fuzz_settings, watchdog

# -- JSON text ------------------------------------------------------------------------------------
_scalars = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70),
                     st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=8))
_json_values = st.recursive(_scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                              st.dictionaries(st.text(max_size=6), inner, max_size=4)),
                            max_leaves=20)
# Characters that matter to a JSON reader, for insertions and replacements.
_NOISE = list('{}[]:,"\\/ \t\n\r0123456789.eE+-tfnulNaIy') + ["\\u", "\\ud800", "\\udc00", "\x00", "\x1f", "é", "€",
                                                             "😀", "NaN", "Infinity", "1e400", "\ufeff"]


@st.composite
def json_texts(draw) -> Dict[str, Any]:
    """A document dumped by Python's json module (any indent), then 0 to 3 edits at random places:
    a deletion, an insertion of JSON-significant text, a duplicated slice, a cut; or free text."""
    if draw(st.integers(0, 9)) == 0:
        return {"kind": "json_text", "text": draw(st.text(max_size=40))}
    text = json.dumps(draw(_json_values), indent=draw(st.sampled_from([None, 0, 2, "\t"])),
                      ensure_ascii=draw(st.booleans()))
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(text)))
        op = draw(st.sampled_from(["delete", "insert", "duplicate", "cut"]))
        if op == "delete":
            text = text[:at] + text[at + 1:]
        elif op == "insert":
            text = text[:at] + draw(st.sampled_from(_NOISE)) + text[at:]
        elif op == "duplicate":
            end = draw(st.integers(at, len(text)))
            text = text[:end] + text[at:end] + text[end:]
        else:
            text = text[:at]
    return {"kind": "json_text", "text": text}


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON values: ints and floats compared by value, bools apart from numbers."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) and float(a) == float(b)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return isinstance(b, dict) and list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def run_json_text(spec: Dict[str, Any]) -> str:
    text = spec["text"]
    try:
        ours = _core.parse_json(text)
    except ValueError as e:
        assert str(e).startswith("line "), f"parse error without a position: {e}"
        return "rejected"
    theirs = json.loads(text)  # what the strict parser accepts, Python's reads the same
    assert _same(ours, theirs), (ours, theirs)
    return "parsed"


@fuzz_settings(400)
@given(spec=json_texts())
def test_fuzz_json_text(spec):
    _log_case(spec)
    with watchdog():
        run_json_text(spec)


# -- options --------------------------------------------------------------------------------------
_ODD = [None, True, False, 0, 1, -1, 2, 3, 0.5, 1.0, -0.5, 2.0, 1e30, 1e-45, float("nan"), float("inf"), 10**30,
        -(2**70), "", "x", "hailort", "ultralytics", "sigmoid", ">", "xyxy_pixels", "pose", "yolo26", "raw", "4.23",
        "5.0.1", "5.2", "6.0", "5.2.0.1", "4.", "99999.1", [], [0.5],
        [0, 1], [640, 640], [0.1, 0.2, 0.3], [[1]], {}, {"a": 1}, "np:f32", "np:i64", "np:bool", "np:array", "complex",
        "object", "set"]


def _value(v: Any) -> Any:
    """Pool names of values a JSON-able spec cannot hold: NumPy scalars and arrays, and objects no
    JSON holds."""
    return {"np:f32": np.float32(0.25), "np:i64": np.int64(2), "np:bool": np.bool_(True),
            "np:array": np.array([1, 0]), "complex": 1j, "object": object(), "set": {1}}.get(v, v) \
        if isinstance(v, str) else v


@st.composite
def option_specs(draw) -> Dict[str, Any]:
    keys = _core.option_names() + ["score_thresh", "nms_iou_th", "iou", "", "labels"]
    options = {}
    for key in draw(st.lists(st.sampled_from(keys), max_size=5, unique=True)):
        options[key] = draw(st.sampled_from(_ODD))
    return {"kind": "options", "options": options}


def _check_options(o: Any) -> None:
    assert o.semantics in _core.preset_names()
    assert all(0.0 <= v <= 1.0 for v in o.score_threshold) and len(o.score_threshold) >= 1
    assert 0.0 <= o.iou_threshold <= 1.0
    for cap in (o.max_per_class, o.max_total, o.max_candidates):
        assert cap == -1 or 0 <= cap <= 1 << 20
    assert math.isfinite(o.rotated_class_offset) and o.rotated_class_offset >= 0
    assert o.box_format in _core.choices("box_format") and o.task in ["", *_core.choices("task")]
    assert o.bins >= 0 and o.keypoint_dims in (0, 2, 3) and o.proto_stride >= 0
    assert all(0 <= c <= 1 << 20 for c in o.classes)
    assert re.fullmatch(r"[45]\.[0-9]{1,4}(\.[0-9]{1,4})?", o.hailort_version)


def _outputs() -> List[hd.OutputInfo]:
    q = dict(zp=0.0, scale=1 / 255)
    return [hd.OutputInfo("m/box", (4, 4, 64), **q), hd.OutputInfo("m/cls", (4, 4, 2), **q)]


_CONFIG_ARGS = ("semantics", "image_size", "classes", "bins", "proto", "proto_stride", "drop_empty_masks", "task",
                "keypoint_dims", "keypoint_decode", "angle_decode", "hailort_version")


def run_options(spec: Dict[str, Any]) -> str:
    given = {k: _value(v) for k, v in spec["options"].items()}
    # In DecoderConfig's order (its settings, then its named arguments): values JSON cannot hold are
    # met in that order, so two of them give the same first message either way.
    options = {k: v for k, v in given.items() if k not in _CONFIG_ARGS}
    options.update((k, given[k]) for k in _CONFIG_ARGS if k in given)
    try:
        _check_options(_core.read_options(options))
        core_error = None
    except CLEAN as e:
        core_error = e
    # DecoderConfig hands the same values to the core first: a refusal there is the same refusal.
    kwargs = {k: v for k, v in options.items() if k.isidentifier()}
    if core_error is not None and kwargs == options and not isinstance(options.get("classes"), set):
        try:
            hd.DecoderConfig(_outputs(), **kwargs)
        except CLEAN as e:
            assert type(e) is type(core_error) and str(e) == str(core_error), (e, core_error)
        else:
            raise AssertionError(f"the core refused {options!r} ({core_error}), DecoderConfig did not")
    return "rejected" if core_error else "read"


@fuzz_settings(400)
@given(spec=option_specs())
def test_fuzz_read_options(spec):
    _log_case(spec)
    with watchdog():
        run_options(spec)


# -- NMS JSON -------------------------------------------------------------------------------------
# hailo_model_zoo/cfg/postprocess_config/yolov8n_nms_config.json, at a 32x32 input.
_NMS = {"nms_scores_th": 0.2, "nms_iou_th": 0.7, "image_dims": [32, 32], "max_proposals_per_class": 100,
        "classes": 2, "regression_length": 16, "background_removal": False,
        "bbox_decoders": [{"name": "yolov8n/bbox_decoder41", "stride": 8, "reg_layer": "yolov8n/conv41",
                           "cls_layer": "yolov8n/conv42"},
                          {"name": "yolov8n/bbox_decoder52", "stride": 16, "reg_layer": "yolov8n/conv52",
                           "cls_layer": "yolov8n/conv53"}]}
_TOP_KEYS = list(_NMS) + ["background_removal_index", "centers_scale_factor", "proto", "nms_iou_thr", "meta_arch"]
_DECODER_KEYS = ["stride", "reg_layer", "cls_layer", "name", "encoded_layer", "w", "h", "objectness_layer", "obj_layer",
                 "combined_layer", "reg_layr"]
_NMS_ODD = [None, True, 0, -1, 8, 8.0, 8.5, 1e30, float("nan"), "conv41", "yolov8n/conv42", "", [], [8], [32, 32],
            [10, 16], {}, {"stride": 8}]


@st.composite
def nms_json_specs(draw) -> Dict[str, Any]:
    doc = json.loads(json.dumps(_NMS))
    for _ in range(draw(st.integers(0, 3))):
        where = draw(st.sampled_from(["top", "decoder"]))
        target = doc if where == "top" else doc["bbox_decoders"][draw(st.integers(0, 1))] \
            if isinstance(doc.get("bbox_decoders"), list) and len(doc["bbox_decoders"]) == 2 \
            and all(isinstance(d, dict) for d in doc["bbox_decoders"]) else doc
        key = draw(st.sampled_from(_TOP_KEYS if target is doc else _DECODER_KEYS))
        if draw(st.booleans()):
            target.pop(key, None)
        else:
            target[key] = draw(st.sampled_from(_NMS_ODD))
    return {"kind": "nms_json", "doc": doc, "form": draw(st.sampled_from(["dict", "text"]))}


def run_nms_json(spec: Dict[str, Any]) -> str:
    outs = [hd.OutputInfo(f"yolov8n/conv{n}", (g, g, c), zp=0.0, scale=1 / 255)
            for n, g, c in ((41, 4, 64), (42, 4, 2), (52, 2, 64), (53, 2, 2))]
    doc = spec["doc"]
    try:
        _core.read_nms_json(doc, [_core.OutputShape(o.name, *o.shape) for o in outs])
    except CLEAN:
        pass
    source = doc if spec["form"] == "dict" else json.dumps(doc)  # (NaN in the text: refused by the parser)
    try:
        cfg = hd.DecoderConfig.from_nms_json(source, outs)
    except CLEAN:
        return "rejected"
    hd.Decoder(cfg)
    return "configured"


@fuzz_settings(300)
@given(spec=nms_json_specs())
def test_fuzz_read_nms_json(spec):
    _log_case(spec)
    with watchdog():
        run_nms_json(spec)


def test_every_model_zoo_key_is_known():
    """The keys of the real Model Zoo files are accepted (the decoder skips the ones it has no use for)."""
    outs = [_core.OutputShape(f"yolov8n/conv{n}", g, g, c) for n, g, c in ((41, 4, 64), (42, 4, 2), (52, 2, 64), (53, 2, 2))]
    doc = dict(_NMS, background_removal_index=0, centers_scale_factor=10, bbox_dimensions_scale_factor=5,
               input_division_factor=4, max_total_proposals=100, number_of_detection_heads=2,
               proto=[{"number": 32, "stride": 4}])
    doc["bbox_decoders"] = [dict(d, combined_layer="", reg_layer_h="", reg_layer_w="") for d in _NMS["bbox_decoders"]]
    assert len(_core.read_nms_json(doc, outs).heads) == 2


# -- heads (a config's "heads", DecoderConfig(heads=[{...}])) ---------------------------------------
_HEADS = [{"box": "yolov8n/conv41", "cls": "yolov8n/conv42", "stride": 8},
          {"box": "yolov8n/conv52", "cls": "yolov8n/conv53", "stride": 16}]
_HEAD_KEYS = ["box", "cls", "stride", "angle", "kpt", "mask", "output", "anchors", "reg", "obj", "clss", "bxo", ""]
_HEAD_ODD = [None, True, 0, -1, 8, 8.0, 16, 2**21, float("nan"), "yolov8n/conv41", "yolov8n/conv42", "yolov8n/conv53",
             "conv41", "", "a\nb", [], [[10, 13]], [[10, 13], [16]], [[0, 5]], {}, {"box": "x"}]


@st.composite
def heads_specs(draw) -> Dict[str, Any]:
    heads: Any = json.loads(json.dumps(_HEADS))
    for _ in range(draw(st.integers(0, 3))):
        op = draw(st.sampled_from(["key", "key", "drop_head", "replace_head", "whole"]))
        if op == "whole":
            heads = draw(st.sampled_from([[], {}, "heads", None, [1], [[]]]))
            break
        if not isinstance(heads, list) or not heads:
            break
        i = draw(st.integers(0, len(heads) - 1))
        if op == "drop_head":
            heads.pop(i)
        elif op == "replace_head":
            heads[i] = draw(st.sampled_from(_HEAD_ODD))
        elif isinstance(heads[i], dict):
            key = draw(st.sampled_from(_HEAD_KEYS))
            if draw(st.booleans()):
                heads[i].pop(key, None)
            else:
                heads[i][key] = draw(st.sampled_from(_HEAD_ODD))
    return {"kind": "heads", "heads": heads}


def run_heads(spec: Dict[str, Any]) -> str:
    outs = [hd.OutputInfo(f"yolov8n/conv{n}", (g, g, c), zp=0.0, scale=1 / 255)
            for n, g, c in ((41, 4, 64), (42, 4, 2), (52, 2, 64), (53, 2, 2))]
    heads = spec["heads"]
    try:
        named = _core.read_heads(heads, "", [_core.OutputShape(o.name, *o.shape) for o in outs])
    except CLEAN as e:
        assert "\n" not in str(e), e  # one line, whatever the names hold
        core_error: Any = e
    else:
        core_error = None
        assert named and all(h.box and h.cls for h in named)
    if not isinstance(heads, list):
        return "rejected"
    try:
        cfg = hd.DecoderConfig(outs, heads)
    except CLEAN as e:
        assert "\n" not in str(e), e
        if core_error is not None and heads and all(isinstance(h, dict) for h in heads):
            # DecoderConfig reads the dicts with the same reader: the same refusal.
            assert type(e) is type(core_error) and str(e) == str(core_error), (e, core_error)
        return "rejected"
    assert core_error is None
    hd.Decoder(cfg)
    return "configured"


@fuzz_settings(300)
@given(spec=heads_specs())
def test_fuzz_read_heads(spec):
    _log_case(spec)
    with watchdog():
        run_heads(spec)
