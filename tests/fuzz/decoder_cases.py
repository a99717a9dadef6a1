"""Fuzz cases for the decoder: hypothesis strategies that draw a *spec* (a small JSON-able dict),
and runners that build the config and buffers from it, decode, and judge the outcome.

The package's rule: any input gives a result or a clean ValueError/TypeError (HefError for HEF
files), never another exception, a crash or a hang. The runners enforce it and, when a decode
succeeds, sanity-check the result.

Structure
---------
A spec is plain data (ints, floats, strings, lists, dicts; NaN allowed), so a failing case can be
printed, logged before it runs (scripts/fuzz.py does, to report a crash that kills the process)
and replayed:  ``run_spec(spec)``. Buffers are not stored in the spec: they are generated from
``spec["seed"]`` by NumPy, deterministically. Three kinds of spec:

* ``decode``: a config (1-3 heads, every dtype, host and device orders with padding, per-tensor and
  per-channel quantization, presets and settings) and a frame or batch of buffers, decoded with
  ``Decoder.decode``, ``Decoder.__call__`` or ``Decoder.decode_to_hailo_nms``. ``spec["valid"]``:
  every value was drawn from what the API documents as valid (extremes included: 1x1 grids, 1000
  classes, thresholds from 0 to 1 (beyond: faults), tiny and huge scales, denormals and -0.0 in
  float input, unaligned/read-only arrays, ...), so decoding must succeed. Otherwise ``spec["faults"]`` lists
  the deliberately wrong things (a bad setting, NaN in a float buffer, a wrong shape, ...); the
  outcome may then be a result or ValueError/TypeError.
* ``nms_input``: ``decode_hailo_nms`` on garbage: flat buffers with broken counts, lists of odd
  arrays and objects, tf arrays of odd shapes and dtypes, odd keyword values.
* ``core``: the private ``_core.Decoder`` fed inconsistent specs directly (the C++ validation is
  the last guard that keeps reads in bounds, whatever Python lets through).

What is checked when a decode succeeds
--------------------------------------
Per frame: types and shapes; class ids in range and in the allow-list; scores pass their class's
threshold (float32, with the configured test); sigmoid scores in [0, 1]; scores non-increasing;
finite scores; the caps (max_per_class, max_total, max_candidates). With class_activation "none"
the candidates are known exactly from the buffers: every score must be the score of a passing cell
of that class (the best class of its cell without multi_label), and there are no more detections
than candidates. NMS: no two kept boxes of one class (any class if agnostic) overlap past the IoU
threshold, recomputed in float32 as the core does. Then equivalences, bit for bit: the same
logical data as dense host NHWC buffers gives the same detections (padding is never read,
layouts address the same elements); each frame of a batch decoded alone gives that frame's
detections; every SIMD kernel path gives the same detections; decode_to_hailo_nms equals
Detections.to_hailo_nms_buffer and decode_hailo_nms reads it back.

The bugs fuzzing found (KB1-KB9, see FUZZING.md) are all fixed, each pinned by a test in
test_fuzz_decoder.py. Their ``KNOWN`` predicates stay as regression detectors: a case they
recognize (label "known:KBn") now fails, naming the bug that came back.
"""

from __future__ import annotations

import collections
import contextlib
import faulthandler
import json
import math
import os
import sys
import types
from datetime import timedelta
from typing import Any, Dict, List, Optional

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

import hailo_decode as hd
from hailo_decode import _core

CLEAN = (ValueError, TypeError)
QMAX = {"uint8": 255, "uint16": 65535}
HOST_ORDERS = ("NHWC", "FCR", "F8CR", "NCHW")
DEVICE_ORDERS = ("NHWC", "FCR", "NHCW", "F8CR")
BOX_FORMATS = hd.BOX_FORMATS
# Worst case bound: cells x classes summed over heads. With threshold 0 every one is a candidate
# and NMS is quadratic in the candidates of a class; 3000 keeps any example in milliseconds.
MAX_CELLS_X_CLASSES = 3000
MAX_NMS_FLOATS = 2_000_000    # HAILO_NMS_BY_CLASS buffers the harness lets a case allocate
SIMD_PATHS = tuple(_core.simd_info()["available"])

# The bugs fuzzing found, all fixed: id -> one line. The predicates below recognize them narrowly,
# and run_spec fails a case they recognize (the bug came back).
KNOWN = {
    "KB1": "hailo_nms_by_class_floats overflows size_t for max_per_class near 2**64/5: to_hailo_nms_buffer / "
           "decode_to_hailo_nms write past a (near) empty buffer -> SIGSEGV",
    "KB2": "batched raw device buffers given as (N, Hp, Wp, Cp) / (N, Hp, Cp, Wp) arrays are read with the "
           "rounded-up frame stride, not the array's: frames >= 1 are read from the wrong offset (padding and "
           "the next frame taken for data: wrong detections, NaN in the data missed or NaN padding reported) "
           "or the batch is refused",
    "KB3": "decode_hailo_nms: a +inf class count in a flat HAILO_NMS_BY_CLASS buffer raises OverflowError",
    "KB4": "quantization whose dequantized range overflows float32 ((qmax - zp) * scale > 3.4e38) is "
           "accepted: infinite scores, detections of classes outside the `classes` allow-list, and (box "
           "outputs) NaN boxes on which the scalar and SIMD kernel paths disagree",
    "KB5": "Detections.to_original with a 0 height or width raises ZeroDivisionError",
    "KB6": "an absurd max_per_class (say 10**12) makes decode_to_hailo_nms / to_hailo_nms_buffer raise "
           "MemoryError (or exhaust memory for sizes that fit) instead of a ValueError",
    "KB7": "decode_hailo_nms takes any list whose first item is a list for a batch: a per-class list whose "
           "first class is an empty Python list ([]) is misread (ValueError, or [Detections, []] back), a "
           "batch of such frames gives lists of lists, deep nesting -> RecursionError",
    "KB8": "DecoderConfig.from_nms_json: Infinity (or 1e400) where an integer is read (stride, image_dims, "
           "max_proposals_per_class, classes, regression_length) raises OverflowError; image_dims that is not a "
           "list of two ([], {}, \"8\") raises IndexError/KeyError",
    "KB9": "Decoder.diagnose: a 0-d array (or a non-array value) for a raw device output raises IndexError",
}


class HarnessFailure(AssertionError):
    """A rule of the package was broken (the message says which)."""


# ------------------------------------------------------------------------------------------------
# Budget, hypothesis settings, hang guard, case log
# ------------------------------------------------------------------------------------------------
def example_budget(default: int) -> int:
    """Examples per fuzz test: `default`, or $HAILO_DECODE_FUZZ_EXAMPLES."""
    env = os.environ.get("HAILO_DECODE_FUZZ_EXAMPLES")
    return max(1, int(env)) if env else default


# Generous for slow machines (an example takes milliseconds), but finite.
DEADLINE = timedelta(seconds=float(os.environ.get("HAILO_DECODE_FUZZ_DEADLINE", "10")))
# A true hang never returns to hypothesis: the watchdog ends the process with every thread's stack.
WATCHDOG_SECONDS = float(os.environ.get("HAILO_DECODE_FUZZ_WATCHDOG", "120"))


def fuzz_settings(default_examples: int, **kw: Any) -> settings:
    """CI: a fixed example count, derandomized (the same examples every run). With
    $HAILO_DECODE_FUZZ_EXAMPLES set: that many, with fresh randomness."""
    explore = "HAILO_DECODE_FUZZ_EXAMPLES" in os.environ
    base = dict(max_examples=example_budget(default_examples), deadline=DEADLINE, database=None,
                derandomize=not explore, print_blob=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.filter_too_much, HealthCheck.large_base_example])
    base.update(kw)
    return settings(**base)


@contextlib.contextmanager
def watchdog(seconds: float = WATCHDOG_SECONDS):
    """Ends the process (printing every thread's stack) if the body runs longer than `seconds`:
    a hang in C++ never comes back to Python, so a hypothesis deadline alone cannot catch it."""
    faulthandler.dump_traceback_later(seconds, exit=True)
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()


OUTCOMES: "collections.Counter[str]" = collections.Counter()


def _log_case(spec: Dict[str, Any]) -> None:
    """With $HAILO_DECODE_FUZZ_CASE_LOG set, writes the spec there before it runs: if the process
    dies (a crash), the file holds the case that killed it."""
    path = os.environ.get("HAILO_DECODE_FUZZ_CASE_LOG")
    if path:
        with open(path, "w", encoding="utf-8") as f:
            f.write(spec_json(spec))


def spec_json(spec: Dict[str, Any]) -> str:
    return json.dumps(spec, sort_keys=True, default=_json_default)


def _json_default(x: Any) -> Any:
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, np.ndarray):
        return x.tolist()
    return repr(x)


def run_spec(spec: Dict[str, Any]) -> str:
    """Runs one spec of any kind; returns an outcome label, raises HarnessFailure (or whatever
    unexpected exception) on a bug."""
    _log_case(spec)
    if spec["kind"] in ("by_score_input", "bbox_only_input"):  # HailoRT's other NMS forms: nms_forms_cases.py
        from . import nms_forms_cases as nf

        runner = nf.run_by_score_spec if spec["kind"] == "by_score_input" else nf.run_bbox_only_spec
    else:
        runner = {"decode": run_decode_spec, "nms_input": run_nms_input_spec, "core": run_core_spec,
                  "nms_json": run_nms_json_spec}[spec["kind"]]
    with watchdog():
        label = runner(spec)
    OUTCOMES[f"{spec['kind']}:{label}"] += 1
    if label.startswith("known:"):
        bug = label.split(":", 1)[1]
        raise HarnessFailure(f"fixed bug {bug} is back: {KNOWN.get(bug, '?')}")
    return label


# ------------------------------------------------------------------------------------------------
# Value pools
# ------------------------------------------------------------------------------------------------
CLASS_COUNTS = [1, 1, 2, 3, 4, 5, 7, 8, 13, 16, 64, 80, 1000]
BINS = [1, 4, 16, 16]
RARE_BINS = [2, 3, 8, 17]
ZPS = [0, 0.0, 84, 128, 127.5, 0.3, 255, -3.7, 265.0, 1e4, -1e4, 30000.25, 65535, 1e-30]
SCALES = [1 / 255, 0.089, 1 / 65535, 1.0, 0.5, 1e-3, 1e-30, 1e-38, 1e-44, 10.0, 1e10, 1e30]
# Thresholds and IoU lie in [0, 1] (issue 28); the values beyond are the faults' (threshold_bad, iou_bad).
THRESHOLDS = [0, 0.0, 1, 1.0, 0.2, 0.25, 0.5, 0.999, 1e-45, -0.0, "np32:0.3", "np64:0.7"]
IOUS = [0, 0.0, 1, 1.0, 0.5, 0.7, 0.45, "np32:0.6", 1e-45]
CAPS_PER_CLASS = [None, 0, 1, 2, 3, 10, 100, "np64:5"]
CAPS_TOTAL = [None, 0, 1, 2, 5, 300, 10**6, "np32:7"]
CAPS_CAND = [None, 0, 1, 3, 30000, 10**6]
NAME_STYLES = ["net/conv{}", "o{}", "a/b/c{}", "输出{}", "name with spaces {}", "{}"]

FAULTS = [
    # config
    "zp_nonfinite", "scale_bad", "scale_overflow", "quant_len", "box_channels", "grid_mismatch",
    "class_count_mismatch", "pad_small", "host_padded", "f8cr_pad", "order_bad", "dtype_bad", "name_dup",
    "name_bad", "unused_output", "head_unknown", "heads_empty", "head_reuse", "head_not_head", "stride_bad",
    "stride_derivation", "image_size_bad", "bins_kw_wrong", "setting_bad", "unknown_key", "semantics_bad",
    "threshold_bad", "iou_bad", "iou_f32_overflow", "caps_bad", "classes_bad", "threads_bad", "pairing",
    "outputs_bad", "stride_huge", "stride_misfit",
    # buffers
    "in_nonfinite", "in_dtype", "in_noncontig", "in_fortran", "in_shape", "in_missing", "in_extra",
    "in_not_array", "in_not_mapping", "in_batch_disagree", "in_byteswap", "in_zero_d", "in_none",
    "in_wrong_config", "out_bad",
]
INPUT_FAULTS = [f for f in FAULTS if f.startswith(("in_", "out_"))]
CONFIG_FAULTS = [f for f in FAULTS if f not in INPUT_FAULTS]


def _num(v: Any) -> Any:
    """Pool values "np32:x" / "np64:x" stand for NumPy scalars (kept JSON-able in the spec)."""
    if isinstance(v, str) and v[:5] in ("np32:", "np64:"):
        x = float(v[5:])
        if v.startswith("np32:"):
            return np.int32(int(x)) if x == int(x) and "." not in v[5:] else np.float32(x)
        return np.int64(int(x)) if x == int(x) and "." not in v[5:] else np.float64(x)
    return v


def _ceil8(n: int) -> int:
    return -(-n // 8) * 8


# ------------------------------------------------------------------------------------------------
# decode specs
# ------------------------------------------------------------------------------------------------
@st.composite
def decode_specs(draw, valid: Optional[bool] = None) -> Dict[str, Any]:
    """A decode spec; valid=None draws both families (about 60 % valid)."""
    if valid is None:
        valid = draw(st.integers(0, 9)) < 6
    faults: List[str] = []
    if not valid:  # one or two config faults, or one buffer fault (so that it meets a working decoder)
        if draw(st.booleans()):
            faults = draw(st.lists(st.sampled_from(CONFIG_FAULTS), min_size=1, max_size=2, unique=True))
        else:
            faults = [draw(st.sampled_from(INPUT_FAULTS))]
    F = set(faults)
    spec: Dict[str, Any] = dict(kind="decode", valid=valid, faults=faults, seed=draw(st.integers(0, 2**32 - 1)))

    C = draw(st.sampled_from(CLASS_COUNTS) | st.integers(1, 40))
    bins = draw(st.sampled_from(BINS) | st.sampled_from(RARE_BINS)) if draw(st.integers(0, 9)) else 16
    budget = max(1, MAX_CELLS_X_CLASSES // C)
    n_heads = min(draw(st.integers(1, 3)), budget)
    style = draw(st.sampled_from(["pyramid", "pyramid", "random", "ones"]))
    if style == "pyramid":
        a, b = draw(st.integers(1, 6)), draw(st.integers(1, 6))
        grids = [(a * 2 ** (n_heads - 1 - k), b * 2 ** (n_heads - 1 - k)) for k in range(n_heads)]
        s0 = draw(st.sampled_from([8, 8, 1, 2, 4, 32]))
        strides = [s0 * 2 ** k for k in range(n_heads)]
        if sum(h * w for h, w in grids) > budget:
            style = "ones"
    if style == "random":
        # Grids of one aspect, (a x m, b x m) in any order, and strides L / m: stride x grid is the
        # image size (a x L, b x L) on every head, as it must be; the strides are any integers.
        a, b = draw(st.integers(1, 4)), draw(st.integers(1, 4))
        mults = [draw(st.integers(1, 4)) for _ in range(n_heads)]
        L = math.lcm(*mults) * draw(st.integers(1, 5))
        grids = [(a * m, b * m) for m in mults]
        strides = [L // m for m in mults]
        if sum(h * w for h, w in grids) > budget:
            style = "ones"
    if style == "ones":
        grids = [(1, 1)] * n_heads
        strides = [draw(st.integers(1, 64))] * n_heads  # one grid, one image size: one stride
    spec.update(C=C, bins=bins, style=style)

    # -- heads and how they are given ----------------------------------------------------------
    distinct = len(set(grids)) == len(grids)
    modes = ["explicit", "explicit", "explicit"]
    if style == "pyramid":
        modes.append("strides")       # Head(box, cls) without strides: derived from image_size
        if distinct and C != 4 * bins:
            modes.append("pair")      # heads=None, paired from shapes (with bins=...)
    if "pairing" in F:
        modes = ["pair"]
    if "stride_derivation" in F:
        modes = ["strides"]
    heads_mode = draw(st.sampled_from(modes))
    spec["heads_mode"] = heads_mode
    image_size: Any = None
    if heads_mode == "explicit" and draw(st.booleans()):
        image_size = [grids[0][0] * strides[0], grids[0][1] * strides[0]]
    elif heads_mode in ("strides", "pair") and draw(st.booleans()):
        image_size = [grids[0][0] * strides[0], grids[0][1] * strides[0]]
        if image_size == [grids[0][0] * 8, grids[0][1] * 8] and draw(st.booleans()):
            image_size = None
    elif heads_mode in ("strides", "pair") and strides[0] != 8:
        image_size = [grids[0][0] * strides[0], grids[0][1] * strides[0]]
    if "stride_derivation" in F:
        image_size = [grids[0][0] * strides[0] + 1, grids[0][1] * strides[0]]
    if "image_size_bad" in F:
        image_size = draw(st.sampled_from([[0, 640], [-1, 8], [640], [1, 2, 3], "ab", [float("nan"), 3]]))
    if "stride_misfit" in F and heads_mode == "explicit":  # strides given: stride x grid != image size
        image_size = [2 * grids[0][0] * strides[0], grids[0][1] * strides[0] + draw(st.sampled_from([0, 1]))]
    spec["image_size"] = image_size
    head_order = list(range(n_heads))
    if draw(st.booleans()):
        head_order = draw(st.permutations(head_order))
    spec["heads"] = [dict(grid=list(grids[k]), stride=strides[k]) for k in range(n_heads)]
    spec["head_order"] = list(head_order)
    if "stride_bad" in F:
        spec["heads"][0]["stride"] = draw(st.sampled_from([0, -8]))
        spec["heads_mode"] = "explicit"
    if "stride_huge" in F:  # beyond the core's int (image size derived from it too)
        spec["heads"][0]["stride"] = draw(st.sampled_from([2**31 - 1, 2**31, 10**12]))
        spec["heads_mode"] = "explicit"

    # -- outputs -------------------------------------------------------------------------------
    same_dtype = draw(st.booleans())
    dtype0 = draw(st.sampled_from(["uint8", "uint16", "float32"]))
    style_name = draw(st.sampled_from(NAME_STYLES))
    outputs = []
    for k in range(n_heads):
        for role in ("box", "cls"):
            idx = len(outputs)
            H, W = grids[k]
            ch = 4 * bins if role == "box" else C
            dtype = dtype0 if same_dtype else draw(st.sampled_from(["uint8", "uint16", "float32"]))
            device = draw(st.integers(0, 9)) < 4
            if device:
                order = draw(st.sampled_from(DEVICE_ORDERS + ("nhcw", "HAILO_FORMAT_ORDER_F8CR")))
            else:
                order = draw(st.sampled_from(HOST_ORDERS + ("fcr", "HAILO_FORMAT_ORDER_NHWC", "FormatOrder.FCR")))
            base = order.upper().replace("HAILO_FORMAT_ORDER_", "").replace("FORMATORDER.", "")
            pad = [0, 0, 0]
            if device:
                pad = [draw(st.sampled_from([0, 0, 0, 1, 2, 5])) for _ in range(3)]
            padded = [H + pad[0], W + pad[1], ch + pad[2]]
            if device and base == "F8CR":
                padded[2] = _ceil8(padded[2])
            per_channel = draw(st.integers(0, 9)) < 3
            zp: Any = draw(st.sampled_from(ZPS))
            scale: Any = draw(st.sampled_from(SCALES))
            if per_channel:
                zp_mode = draw(st.sampled_from(["same", "ramp", "mixed"]))
                if zp_mode == "same":
                    zp = [zp] * ch
                elif zp_mode == "ramp":
                    zp = [float(zp) + 0.5 * c for c in range(ch)]
                else:
                    zp = [ZPS[(c * 7 + 3) % len(ZPS)] for c in range(ch)]
                scale = [float(scale) * (1 + 0.01 * (c % 13)) for c in range(ch)]
            form = draw(st.sampled_from(["flat_rounded", "flat_dense", "3d"])) if device else "natural"
            fill = draw(st.sampled_from(["uniform", "low", "zeros", "max", "const", "binary"]) if dtype != "float32"
                        else st.sampled_from(["normal", "logits", "scores", "zeros", "const", "extreme", "big"]))
            outputs.append(dict(name=style_name.format(idx), role=role, head=k, dtype=dtype, device=device,
                                order=order, base_order=base, shape=[H, W, ch], padded=padded,
                                give_padded=device or draw(st.integers(0, 9)) == 0,
                                zp=zp, scale=scale, form=form, fill=fill,
                                pad_fill=draw(st.sampled_from(["max", "random", "nan"]))))
    spec["outputs"] = outputs
    if "in_nonfinite" in F and not any(o["dtype"] == "float32" for o in outputs):
        outputs[draw(st.integers(0, len(outputs) - 1))]["dtype"] = "float32"
    _apply_output_faults(draw, spec, F)
    spec["config_order"] = list(draw(st.permutations(range(len(outputs))))) if draw(st.booleans()) \
        else list(range(len(outputs)))
    spec["bins_kw"] = (bins if heads_mode == "pair" or draw(st.integers(0, 4)) == 0 else None)
    if "bins_kw_wrong" in F:
        spec["bins_kw"] = bins + 1

    # -- settings ------------------------------------------------------------------------------
    s: Dict[str, Any] = {}
    if draw(st.integers(0, 3)):
        s["semantics"] = draw(st.sampled_from(["hailort", "ultralytics"]))
    for key, pool in (("class_activation", ["none", "sigmoid"]), ("score_test", [">=", ">"]),
                      ("iou_test", [">=", ">"]), ("multi_label", [True, False]),
                      ("agnostic", [False, True]), ("tie_break", ["hailort", "stable"]),
                      ("box_format", list(BOX_FORMATS)), ("iou_threshold", IOUS),
                      ("max_per_class", CAPS_PER_CLASS), ("max_total", CAPS_TOTAL),
                      ("max_candidates", CAPS_CAND)):
        if draw(st.booleans()):
            s[key] = draw(st.sampled_from(pool))
    if draw(st.booleans()):
        if draw(st.integers(0, 2)):
            s["score_threshold"] = draw(st.sampled_from(THRESHOLDS))
        else:
            container = draw(st.sampled_from(["list", "tuple", "array"]))
            vals = draw(st.lists(st.sampled_from([t for t in THRESHOLDS if not isinstance(t, str)]),
                                 min_size=min(C, 8), max_size=min(C, 8)))
            s["score_threshold"] = dict(per_class=[vals[c % len(vals)] for c in range(C)], container=container)
    if draw(st.integers(0, 3)) == 0:
        s["classes"] = sorted(draw(st.sets(st.integers(0, C - 1), max_size=min(C, 6))))
    if C > 100 and s.get("max_per_class") not in (None, 0, 1, 2, 3, "np64:5"):
        s["max_per_class"] = 10
    _apply_setting_faults(draw, s, F, C)
    spec["settings"] = s
    spec["threads"] = draw(st.sampled_from([1, 1, 1, 2, 3, 4]))
    if "threads_bad" in F:
        spec["threads"] = draw(st.sampled_from([0, 257, True, 1.5, "2", -1]))

    # -- frames and the call --------------------------------------------------------------------
    spec["batch"] = draw(st.sampled_from([None, None, None, 1, 2, 3, 0, 17]))
    if spec["batch"] == 17 and sum(h * w for h, w in grids) * C > 300:
        spec["batch"] = 2
    spec["api"] = "to_nms" if "out_bad" in F else draw(st.sampled_from(["decode", "decode", "call", "to_nms"]))
    spec["out"] = None
    if spec["api"] == "to_nms":
        spec["out"] = draw(st.sampled_from([None, None, "exact", "bigger", "2d", "flat"]))
        if "out_bad" in F:
            spec["out"] = draw(st.sampled_from(["smaller", "float64", "noncontig", "readonly", "list", "int32",
                                                "zero_d"]))
    spec["mapping"] = draw(st.sampled_from(["dict", "dict", "proxy", "ordered", "custom"]))
    spec["unaligned"] = sorted(draw(st.sets(st.integers(0, len(outputs) - 1), max_size=2))) \
        if draw(st.integers(0, 4)) == 0 else []
    spec["readonly"] = draw(st.integers(0, 5)) == 0
    spec["views"] = draw(st.integers(0, 5)) == 0
    spec["simd"] = draw(st.sampled_from((None,) + SIMD_PATHS))
    spec["fault_target"] = draw(st.integers(0, len(outputs) - 1))
    spec["original_size"] = [draw(st.integers(1, 3000)), draw(st.integers(1, 3000))]
    spec["diagnose"] = draw(st.integers(0, 3)) == 0
    spec["concurrent"] = draw(st.integers(0, 7)) == 0
    if spec["valid"]:
        _make_batch_forms_valid(spec)
    return spec


def _apply_output_faults(draw, spec: Dict[str, Any], F: set) -> None:
    outs = spec["outputs"]
    t = draw(st.integers(0, len(outs) - 1))
    o = outs[t]
    C = spec["C"]
    if "zp_nonfinite" in F:
        o["zp"] = draw(st.sampled_from([float("nan"), float("inf"), float("-inf")]))
    if "scale_bad" in F:
        o["scale"] = draw(st.sampled_from([0.0, -1.0, float("nan"), float("inf"), 1e-50, -1e-30, [0.1, float("nan")]]))
    if "scale_overflow" in F:
        # (qmax - zp) * scale beyond float32's range: finite, valid-looking parameters
        cls = [x for x in outs if x["role"] == "cls"]
        for x in draw(st.sampled_from([cls, outs])):
            x["scale"] = draw(st.sampled_from([1e37, 3e38, 2e36, 1e38]))
            x["zp"] = draw(st.sampled_from([0.0, 3.0, 200.0]))
    if "quant_len" in F:
        n = o["shape"][2]
        which = draw(st.sampled_from(["zp", "scale"]))
        o[which] = draw(st.sampled_from([[1.0] * (n + 1), [], [[1.0, 2.0]], [0.5] * (n + 3)]))
    if "box_channels" in F:
        for x in outs:
            if x["role"] == "box":
                x["shape"][2] += 1
                x["padded"][2] = _ceil8(x["padded"][2] + 1) if x["device"] and x["base_order"] == "F8CR" \
                    else x["padded"][2] + 1
    if "grid_mismatch" in F:
        x = next(x for x in outs if x["role"] == "cls")
        x["shape"][0] += 1
        x["padded"][0] += 1
    if "class_count_mismatch" in F and len(outs) > 2:
        x = outs[3]
        x["shape"][2] += 1
        x["padded"][2] = _ceil8(x["padded"][2] + 1) if x["device"] and x["base_order"] == "F8CR" else x["padded"][2] + 1
        if isinstance(x["zp"], list):
            x["zp"] = x["zp"][0]
        if isinstance(x["scale"], list):
            x["scale"] = x["scale"][0]
    if "pad_small" in F:
        o["device"] = True
        o["give_padded"] = True
        o["order"] = o["base_order"] = "NHWC"
        o["padded"] = [o["shape"][0], o["shape"][1], o["shape"][2] - 1] if o["shape"][2] > 1 else \
            [o["shape"][0] - 1, o["shape"][1], o["shape"][2]]
        o["form"] = "flat_rounded"
    if "host_padded" in F:
        o["device"] = False
        o["order"] = o["base_order"] = "NHWC"
        o["give_padded"] = True
        o["padded"] = [o["shape"][0] + 1, o["shape"][1], o["shape"][2]]
        o["form"] = "natural"
    if "f8cr_pad" in F:
        o["device"] = True
        o["give_padded"] = True
        o["order"] = o["base_order"] = "F8CR"
        o["padded"] = [o["shape"][0], o["shape"][1], _ceil8(o["shape"][2]) + 3]
        o["form"] = "flat_rounded"
    if "order_bad" in F:
        o["order"] = draw(st.sampled_from(["NCHW", "XYZ", "", "NC"])) if o["device"] else \
            draw(st.sampled_from(["NHCW", "XYZ", "", "NC", "HAILO_NMS_BY_CLASS"]))
        o["base_order"] = "NHWC"
    if "dtype_bad" in F:
        o["dtype"] = draw(st.sampled_from(["int8", "float64", "float16", "bogus", None, 3, "uint32"]))
    if "name_dup" in F and len(outs) > 1:
        outs[1]["name"] = outs[0]["name"]
    if "name_bad" in F:
        o["name"] = draw(st.sampled_from(["", None, 5, b"bytes"]))
    if "unused_output" in F:
        outs.append(dict(outs[-1], name="unused/extra", head=-1))


def _apply_setting_faults(draw, s: Dict[str, Any], F: set, C: int) -> None:
    if "setting_bad" in F:
        key, val = draw(st.sampled_from([("class_activation", "relu"), ("class_activation", None), ("score_test", "<"),
                                         ("iou_test", "=>"), ("tie_break", "x"), ("box_format", "xywh"),
                                         ("box_format", None), ("score_test", 1), ("multi_label", 0),
                                         ("multi_label", 1), ("agnostic", 0)]))
        s[key] = val
    if "unknown_key" in F:
        s[draw(st.sampled_from(["iou", "threshold", "nms", "semantic"]))] = 0.5
    if "semantics_bad" in F:
        s["semantics"] = draw(st.sampled_from(["tf", "", "HAILORT", None]))
    if "threshold_bad" in F:
        s["score_threshold"] = draw(st.sampled_from([
            float("nan"), float("inf"), float("-inf"), [0.5] * (C + 1), [[0.5]], "abc", None, -0.5, -1e30, 1e30,
            1e300, -1e300, 5,
            dict(per_class=[float("nan")] * C, container="list"), dict(per_class=[0.1] * C + [0.2], container="array")]))
    if "iou_bad" in F:
        s["iou_threshold"] = draw(st.sampled_from([float("nan"), float("inf"), float("-inf"), "0.5", True, None, [0.5],
                                                   -1.0, 2.0, 1e30]))
    if "iou_f32_overflow" in F:
        s["iou_threshold"] = draw(st.sampled_from([1e300, -1e300, 3.5e38]))
    if "caps_bad" in F:
        key = draw(st.sampled_from(["max_per_class", "max_total", "max_candidates"]))
        s[key] = draw(st.sampled_from([-1, 1.5, True, "3", "np64:2.5", -(2**70), 2**70, 10**9, 2**62,
                                       (2**64 - 1) // 5 if key != "max_per_class" else 10**12]))
    if "classes_bad" in F:
        s["classes"] = draw(st.sampled_from([[C], [-1], ["a"], [None], [C + 100, 0], 5]))


def _make_batch_forms_valid(spec: Dict[str, Any]) -> None:
    """A flat buffer of dense frames (N, Hp*Wp*Cp) with a batch axis is refused by design when
    HailoRT would space the frames by the rounded-up size: valid specs use the rounded flat form
    there. (The 3-D form is left in: see KB2.)"""
    if spec["batch"] is None or spec["batch"] < 1:
        return
    for o in spec["outputs"]:
        if o["device"] and o["form"] == "flat_dense" and _dense(o) != _frame_elements(o):
            o["form"] = "flat_rounded"


def _dense(o: Dict[str, Any]) -> int:
    hp, wp, cp = o["padded"]
    return hp * wp * cp


def _frame_elements(o: Dict[str, Any]) -> int:
    n = _dense(o)
    item = np.dtype(o["dtype"]).itemsize
    return -(-n * item // 8) * 8 // item


# ------------------------------------------------------------------------------------------------
# decode: building the config and the buffers
# ------------------------------------------------------------------------------------------------
def _quant_value(v: Any, container_seed: int) -> Any:
    if isinstance(v, list) and container_seed % 3 == 1:
        return tuple(v)
    if isinstance(v, list) and container_seed % 3 == 2:
        try:
            return np.asarray(v, dtype=np.float64)
        except (TypeError, ValueError):
            return v
    return v


def build_config(spec: Dict[str, Any]) -> "hd.DecoderConfig":
    infos = []
    for i, o in enumerate(spec["outputs"]):
        padded = o["padded"] if o["give_padded"] else None
        infos.append(hd.OutputInfo(o["name"], tuple(o["shape"]), o["dtype"], o["order"],
                                   zp=_quant_value(o["zp"], i), scale=_quant_value(o["scale"], i + 1),
                                   padded_shape=padded, device=o["device"]))
    infos = [infos[i] for i in spec["config_order"]]
    F = set(spec["faults"])
    heads: Any = None
    by_head: Dict[int, Dict[str, str]] = collections.defaultdict(dict)
    for o in spec["outputs"]:
        if o.get("head", -1) >= 0:
            by_head[o["head"]].setdefault(o["role"], o["name"])
    mode = spec["heads_mode"]
    if mode != "pair":
        heads = []
        for k in spec["head_order"]:
            h = spec["heads"][k]
            stride = h["stride"] if mode == "explicit" else None
            heads.append(hd.Head(by_head[k]["box"], by_head[k]["cls"], stride))
        if "head_unknown" in F:
            heads[0] = hd.Head("no/such/output", heads[0].cls, heads[0].stride)
        if "heads_empty" in F:
            heads = []
        if "head_reuse" in F and heads:
            heads.append(heads[0])
        if "head_not_head" in F and heads:  # (with heads_empty there is no head to replace)
            heads[0] = (heads[0].box, heads[0].cls, heads[0].stride)
    kw: Dict[str, Any] = {}
    for key, v in spec["settings"].items():
        if key == "score_threshold" and isinstance(v, dict):
            vals = v["per_class"]
            v = {"list": list, "tuple": tuple, "array": lambda x: np.asarray(x, dtype=np.float64)}[v["container"]](vals)
        elif isinstance(v, list):
            v = list(v)
        kw[key] = _num(v)
    if spec["image_size"] is not None:
        kw["image_size"] = spec["image_size"] if not isinstance(spec["image_size"], list) else tuple(spec["image_size"])
    if spec["bins_kw"] is not None:
        kw["bins"] = spec["bins_kw"]
    outputs: Any = infos
    if "outputs_bad" in F:
        outputs = [] if spec["seed"] % 2 else infos + ["not an OutputInfo"]
    return hd.DecoderConfig(outputs, heads, **kw)


def _logical(rng: np.random.Generator, o: Dict[str, Any], n_frames: int) -> np.ndarray:
    """(n_frames, H, W, C) values in the output's dtype, by its fill mode."""
    H, W, C = o["shape"]
    shape = (n_frames, H, W, C)
    mode = o["fill"]
    if o["dtype"] in QMAX:
        q = QMAX[o["dtype"]]
        dt = np.dtype(o["dtype"])
        if mode == "uniform":
            return rng.integers(0, q + 1, size=shape, dtype=np.int64).astype(dt)
        if mode == "low":
            a = rng.integers(0, max(1, q // 8), size=shape, dtype=np.int64)
            hot = rng.random(shape) < 0.05
            a[hot] = rng.integers(q * 3 // 4, q + 1, size=int(hot.sum()), dtype=np.int64)
            return a.astype(dt)
        if mode == "zeros":
            return np.zeros(shape, dt)
        if mode == "max":
            return np.full(shape, q, dt)
        if mode == "const":
            return np.full(shape, int(rng.integers(0, q + 1)), dt)
        return (rng.integers(0, 2, size=shape, dtype=np.int64) * q).astype(dt)  # binary
    f = np.float32
    if mode == "normal":
        return (rng.normal(0, 1, shape) * rng.choice([1.0, 10.0, 1e3])).astype(f)
    if mode == "logits":
        a = np.full(shape, -8.0) + rng.normal(0, 0.5, shape)
        hot = rng.random(shape) < 0.05
        a[hot] = rng.normal(3, 2, int(hot.sum()))
        return a.astype(f)
    if mode == "scores":
        return rng.random(shape).astype(f)
    if mode == "zeros":
        return np.zeros(shape, f)
    if mode == "const":
        return np.full(shape, rng.normal(0, 3), f)
    specials = np.array([0.0, -0.0, 1e-45, -1e-45, 1e-40, -1e-38, 3.4e38, -3.4e38, 1e30, -1e30, 0.5, 1.0, -1.0],
                        dtype=f)
    if mode == "extreme":
        return rng.choice(specials, size=shape)
    return (rng.normal(0, 1, shape) * 1e37).astype(f)  # big


def _garbage(rng: np.random.Generator, n: int, o: Dict[str, Any]) -> np.ndarray:
    dt = np.dtype(o["dtype"])
    if o["dtype"] in QMAX:
        q = QMAX[o["dtype"]]
        if o["pad_fill"] == "max":
            return np.full(n, q, dt)
        return rng.integers(0, q + 1, size=n, dtype=np.int64).astype(dt)
    if o["pad_fill"] == "nan":
        return np.full(n, np.nan, np.float32)
    if o["pad_fill"] == "max":
        return np.full(n, 3.4e38, np.float32)
    return rng.normal(0, 1e6, n).astype(np.float32)


def pack_frame(rng: np.random.Generator, L: np.ndarray, o: Dict[str, Any]) -> np.ndarray:
    """One frame of logical (H, W, C) values in the output's memory layout and array form."""
    H, W, C = L.shape
    if not o["device"]:
        return np.ascontiguousarray(L.transpose(2, 0, 1)) if o["base_order"] == "NCHW" else L.copy()
    hp, wp, cp = o["padded"]
    order = o["base_order"]
    if order in ("NHWC", "FCR"):
        buf = _garbage(rng, hp * wp * cp, o).reshape(hp, wp, cp)
        buf[:H, :W, :C] = L
        shape3 = (hp, wp, cp)
    elif order == "NHCW":
        buf = _garbage(rng, hp * cp * wp, o).reshape(hp, cp, wp)
        buf[:H, :C, :W] = L.transpose(0, 2, 1)
        shape3 = (hp, cp, wp)
    else:  # F8CR: h*Wp*Cp + (c - c%8)*Wp + w*8 + c%8
        buf = _garbage(rng, hp * wp * cp, o).reshape(hp, cp // 8, wp, 8)
        lp = _garbage(rng, H * W * cp, o).reshape(H, W, cp)
        lp[:, :, :C] = L
        buf[:H, :, :W, :] = lp.reshape(H, W, cp // 8, 8).transpose(0, 2, 1, 3)
        shape3 = (hp, wp, cp)
    flat = buf.reshape(-1)
    form = o["form"]
    if form == "3d":
        return flat.reshape(shape3)
    if form == "flat_dense":
        return flat
    tail = _frame_elements(o) - flat.size
    return np.concatenate([flat, _garbage(rng, tail, o)]) if tail else flat


def _unaligned_copy(a: np.ndarray) -> np.ndarray:
    raw = np.empty(a.nbytes + 1, np.uint8)
    out = np.frombuffer(raw.data, dtype=a.dtype, count=a.size, offset=1).reshape(a.shape)
    out[...] = a
    return out


def _view_copy(a: np.ndarray) -> np.ndarray:
    """The same values as a C-contiguous view into a larger buffer (a non-zero offset)."""
    big = np.zeros(a.size + 11, a.dtype)
    v = big[5:5 + a.size].reshape(a.shape)
    v[...] = a
    return v


class _CustomMapping(collections.abc.Mapping):
    def __init__(self, d):
        self._d = d

    def __getitem__(self, k):
        return self._d[k]

    def __iter__(self):
        return iter(self._d)

    def __len__(self):
        return len(self._d)


def _mapping(kind: str, d: Dict[str, Any]) -> Any:
    if kind == "proxy":
        return types.MappingProxyType(d)
    if kind == "ordered":
        return collections.OrderedDict(d)
    if kind == "custom":
        return _CustomMapping(d)
    return d


# ------------------------------------------------------------------------------------------------
# decode: running and judging
# ------------------------------------------------------------------------------------------------
def _f32(x: Any) -> np.float32:
    with np.errstate(over="ignore"):
        return np.float32(x)


def _quant32(v: Any, C: int) -> np.ndarray:
    a = np.asarray(v, dtype=np.float64).reshape(-1)
    with np.errstate(over="ignore"):
        a32 = a.astype(np.float32)
    return np.broadcast_to(a32, (C,)) if a32.size == 1 else a32


class _Ctx:
    """What the checks need to know about a successfully built config."""

    def __init__(self, spec: Dict[str, Any], cfg: "hd.DecoderConfig") -> None:
        self.spec = spec
        self.cfg = cfg
        self.C = cfg.num_classes
        with np.errstate(over="ignore"):
            self.th32 = np.asarray(cfg.thresholds_per_class(), dtype=np.float64).astype(np.float32)
        self.allowed = None if cfg.classes is None else set(cfg.classes)
        self.sigmoid = cfg.class_activation == "sigmoid"
        self.inclusive = cfg.score_test == ">="
        self.deq = {}      # class output name -> (zp32, scale32) or None for float32
        self.overflow = False  # KB4: a class output's dequantized range overflows float32
        self.box_overflow = False  # KB4 on a box output: inf - inf in the DFL, NaN boxes
        for h in cfg.heads:
            b = cfg.output(h.box)
            if b.dtype != "float32":
                zp, sc = _quant32(b.zp, b.channels), _quant32(b.scale, b.channels)
                with np.errstate(over="ignore", invalid="ignore"):
                    ends = (np.float32([0, QMAX[b.dtype]])[:, None] - zp[None, :]) * sc[None, :]
                self.box_overflow |= not bool(np.all(np.isfinite(ends)))
            o = cfg.output(h.cls)
            if o.dtype == "float32":
                self.deq[o.name] = None
                continue
            zp, sc = _quant32(o.zp, o.channels), _quant32(o.scale, o.channels)
            self.deq[o.name] = (zp, sc)
            with np.errstate(over="ignore", invalid="ignore"):
                ends = (np.float32([0, QMAX[o.dtype]])[:, None] - zp[None, :]) * sc[None, :]
            if not np.all(np.isfinite(ends)):
                self.overflow = True

    def scores(self, name: str, L: np.ndarray) -> np.ndarray:
        """Class values of one frame (H, W, C) -> float32 scores before activation, (cells, C)."""
        flat = L.reshape(-1, L.shape[-1])
        q = self.deq[name]
        if q is None:
            return flat.astype(np.float32)
        with np.errstate(over="ignore", invalid="ignore"):
            return (flat.astype(np.float32) - q[0]) * q[1]


def _passes(ctx: _Ctx, s: np.ndarray, th: np.ndarray) -> np.ndarray:
    return s >= th if ctx.inclusive else s > th


def run_decode_spec(spec: Dict[str, Any]) -> str:
    F = set(spec["faults"])
    valid = spec["valid"]
    try:
        cfg = build_config(spec)
        dec = hd.Decoder(cfg, threads=spec["threads"])
    except CLEAN as e:
        if valid:
            raise HarnessFailure(f"a valid config was rejected: {type(e).__name__}: {e}") from e
        return "config-rejected"
    if "stride_misfit" in F and spec["heads_mode"] == "explicit":
        raise HarnessFailure(f"strides that do not fit the grids and image size {cfg.image_size} were accepted")
    ctx = _Ctx(spec, cfg)
    rng = np.random.default_rng(spec["seed"])
    batch = spec["batch"]
    n = 1 if batch is None else batch
    logical = {o["name"]: _logical(rng, o, n) for o in spec["outputs"] if o.get("head", -1) >= 0}
    if "in_nonfinite" in F:
        floats = [o for o in spec["outputs"] if o["dtype"] == "float32" and o["name"] in logical]
        if floats and n:
            L = logical[floats[spec["fault_target"] % len(floats)]["name"]]
            L.reshape(-1)[rng.integers(0, L.size)] = rng.choice([np.nan, np.inf, -np.inf])
    arrays: Dict[str, Any] = {}
    for o in spec["outputs"]:
        if o["name"] not in logical:
            continue
        frames = [pack_frame(rng, logical[o["name"]][k], o) for k in range(n)]
        if batch is None:
            a = frames[0]
        elif frames:
            a = np.stack(frames)
        else:
            one = pack_frame(rng, np.zeros(tuple(o["shape"]), np.dtype(o["dtype"])), o)
            a = np.empty((0,) + one.shape, one.dtype)
        arrays[o["name"]] = a
    pristine = {k: v.copy() for k, v in arrays.items()}
    for i, o in enumerate(spec["outputs"]):
        if o["name"] in arrays and i in spec["unaligned"]:
            arrays[o["name"]] = _unaligned_copy(arrays[o["name"]])
        elif o["name"] in arrays and spec["views"]:
            arrays[o["name"]] = _view_copy(arrays[o["name"]])
        if o["name"] in arrays and spec["readonly"]:
            arrays[o["name"]].flags.writeable = False
    raw = _apply_input_faults(spec, arrays, F, rng)
    input_faulted = bool(F & {f for f in FAULTS if f.startswith("in_")})
    must_reject = _must_reject(spec, F, arrays, logical, n)
    # Arrays are read in place: a non-empty uint16/float32 array off its element alignment is refused.
    if any(not a.flags.aligned and a.size for a in arrays.values()):
        must_reject, valid = True, False

    known_kb2 = _kb2(spec)
    labels: List[str] = []
    if spec.get("diagnose"):
        labels += _run_diagnose(spec, dec, raw)
    repr(dec)
    try:
        other = "ultralytics" if cfg.semantics == "hailort" else "hailort"
        cfg.replace(semantics=other)
    except CLEAN as e:
        if valid:
            raise HarnessFailure(f"replace(semantics={other!r}) of a valid config failed: {e!r}") from e
    previous = _core.simd_info()["active"]
    try:
        if spec["simd"]:
            _core.select_simd(spec["simd"])
        try:
            result = _call(spec, dec, raw)
        except CLEAN as e:
            if known_kb2:  # such a batch refused (a fix may do just that), or padding read as frame 1 held a NaN
                return "kb2-refused"
            if valid:
                raise HarnessFailure(f"valid buffers were rejected: {type(e).__name__}: {e}") from e
            return "input-rejected"
        if spec["api"] == "to_nms":
            dets = dec.decode(raw)
            _check_to_nms(spec, ctx, dec, result, dets)
        else:
            dets = result
        frames = [dets] if isinstance(dets, hd.Detections) else list(dets)
        expect = 1 if batch is None else batch
        if (batch is None) != isinstance(dets, hd.Detections) or len(frames) != expect:
            raise HarnessFailure(f"expected {'one Detections' if batch is None else f'a list of {batch}'}, got "
                                 f"{type(dets).__name__} of {len(frames)}")
        for k, d in enumerate(frames):
            if known_kb2 and k >= 1:  # frames >= 1 are read from the wrong offset: structure only
                labels += ["known:KB2"] + check_frame(ctx, d, None)
                continue
            labels += check_frame(ctx, d, {name: L[k] for name, L in logical.items()})
        if must_reject and not known_kb2:
            raise HarnessFailure(f"buffers with fault {sorted(F)} were decoded instead of refused")
        if input_faulted:  # a fault that still decoded (a trivially contiguous "fortran" array, ...)
            return "known:KB2" if known_kb2 and "known:KB2" in labels else "faulty-decoded"
        labels += _equivalences(spec, cfg, dec, raw, pristine, frames, logical, known_kb2)
        if frames:
            _check_conversions(spec, frames[0])
    finally:
        _core.select_simd(previous)
    known = sorted({lab for lab in labels if lab.startswith("known:")})
    if known:
        return known[0]
    return "decoded" if sum(len(f) for f in frames) else "decoded-empty"


def _run_diagnose(spec, dec, raw) -> List[str]:
    """Decoder.diagnose on the same buffers: a report per output, or ValueError/TypeError."""
    try:
        report = dec.diagnose(raw)
    except CLEAN:
        return []  # a diagnosis tool may refuse what it cannot read (an empty batch of raw buffers)
    except IndexError:
        if any(isinstance(v, np.ndarray) and v.ndim == 0 or not isinstance(v, np.ndarray)
               for v in (raw.values() if isinstance(raw, collections.abc.Mapping) else [])):
            return ["known:KB9"]
        raise
    if not isinstance(report, list) or len(report) != len(dec.config.outputs):
        raise HarnessFailure(f"diagnose gave {type(report).__name__} of {len(report)} entries")
    return []


def _must_reject(spec, F, arrays, logical, n) -> bool:
    """Whether the buffer fault of this spec leaves nothing a decoder may accept."""
    always = {"in_missing", "in_extra", "in_not_array", "in_none", "in_not_mapping", "in_zero_d", "in_wrong_config",
              "in_dtype"}
    if F & always:
        return True
    if "in_batch_disagree" in F:
        return spec["batch"] != 0
    if "in_byteswap" in F:
        name = list(arrays)[spec["fault_target"] % len(arrays)]
        return arrays[name].dtype.itemsize > 1
    if "in_nonfinite" in F:  # a NaN/inf was written into the values of a float output (always read)
        return n > 0 and any(L.dtype == np.float32 and not np.all(np.isfinite(L)) for L in logical.values())
    return False


def _kb2(spec: Dict[str, Any]) -> bool:
    """A batch of 3-D raw device frames whose size is not the rounded-up raw frame size."""
    b = spec["batch"]
    return b is not None and b >= 1 and any(o["device"] and o["form"] == "3d" and _dense(o) != _frame_elements(o)
                                            for o in spec["outputs"])


def _apply_input_faults(spec, arrays, F, rng):
    if not (F & {f for f in FAULTS if f.startswith("in_")}):
        return _mapping(spec["mapping"], arrays)
    names = list(arrays)
    raw = dict(arrays)
    name = names[spec["fault_target"] % len(names)]
    a = raw[name]
    if "in_dtype" in F:
        raw[name] = a.astype(rng.choice([d for d in ["uint8", "uint16", "float32", "float64", "int16", "bool"]
                                         if np.dtype(d) != a.dtype]))
    if "in_noncontig" in F:
        big = np.repeat(a.reshape(-1), 2).reshape(a.shape[:-1] + (a.shape[-1] * 2,)) if a.ndim else a
        raw[name] = big[..., ::2] if a.ndim else a
    if "in_fortran" in F:
        raw[name] = np.asfortranarray(a)
    if "in_shape" in F and a.ndim:
        shape = list(a.shape)
        k = int(rng.integers(0, len(shape)))
        shape[k] = max(1, shape[k] + int(rng.choice([-1, 1, 7])))
        raw[name] = np.resize(a, shape)
    if "in_missing" in F:
        del raw[name]
    if "in_extra" in F:
        raw["extra/output"] = a
    if "in_not_array" in F:
        raw[name] = a.tolist()
    if "in_none" in F:
        raw[name] = None
    if "in_batch_disagree" in F:
        raw[name] = a[None] if spec["batch"] is None else np.concatenate([a, a])
    if "in_byteswap" in F and a.dtype.itemsize > 1:
        raw[name] = a.astype(a.dtype.newbyteorder(">"))
    if "in_zero_d" in F:
        raw[name] = np.array(5, a.dtype)
    if "in_wrong_config" in F:
        raw = {f"other{k}": v for k, v in enumerate(raw.values())}
    if "in_not_mapping" in F:
        return list(raw.values())
    return _mapping(spec["mapping"], raw)


def _make_out(spec, size: int, frames: Optional[int]) -> Any:
    kind = spec["out"]
    n = 1 if frames is None else frames
    if kind is None:
        return None
    if kind == "exact":
        return np.empty((size,) if frames is None else (n, size), np.float32)
    if kind == "bigger":
        return np.full(n * size + 7, 5.0, np.float32)
    if kind == "2d":
        return np.empty((n, size), np.float32)
    if kind == "flat":
        return np.empty(n * size, np.float32)
    if kind == "smaller":
        return np.empty(max(0, n * size - 1), np.float32)
    if kind == "float64":
        return np.empty(n * size, np.float64)
    if kind == "noncontig":
        return np.empty(2 * n * size, np.float32)[::2]
    if kind == "readonly":
        a = np.empty(n * size, np.float32)
        a.flags.writeable = False
        return a
    if kind == "list":
        return [0.0] * (n * size)
    if kind == "int32":
        return np.empty(n * size, np.int32)
    return np.array(1.0, np.float32)  # zero_d


def _nms_floats(num_classes: int, max_per_class: int) -> int:
    """HAILO_NMS_BY_CLASS size in Python integers (the package's own helper overflowed: KB1)."""
    return int(num_classes) * (1 + 5 * int(max_per_class))


def _nms_size(cfg) -> int:
    mpc = 100 if cfg.max_per_class is None else cfg.max_per_class
    return _nms_floats(cfg.num_classes, mpc)


def _call(spec, dec, raw):
    api = spec["api"]
    if api == "call":
        return dec(raw)
    if api == "decode":
        return dec.decode(raw)
    if _nms_size(dec.config) * max(1, spec["batch"] or 1) > MAX_NMS_FLOATS:
        return dec.decode(raw)  # a buffer too large for the harness; the decode is still checked
    out = _make_out(spec, _nms_size(dec.config), spec["batch"])
    buf = dec.decode_to_hailo_nms(raw, out=out)
    if out is not None and buf is not out:
        raise HarnessFailure("decode_to_hailo_nms did not return the `out` it was given")
    return ("to_nms", buf)


def _check_to_nms(spec, ctx, dec, result, dets) -> None:
    if not (isinstance(result, tuple) and result and result[0] == "to_nms"):
        return
    buf = result[1]
    cfg = dec.config
    mpc = 100 if cfg.max_per_class is None else cfg.max_per_class
    size = _nms_size(cfg)
    frames = [dets] if isinstance(dets, hd.Detections) else list(dets)
    if not isinstance(buf, np.ndarray) or buf.dtype != np.float32:
        raise HarnessFailure(f"decode_to_hailo_nms returned {type(buf).__name__}")
    flat = buf.reshape(-1)
    if flat.size < len(frames) * size:
        raise HarnessFailure(f"decode_to_hailo_nms buffer of {flat.size} floats for {len(frames)} x {size}")
    if np.any(flat[len(frames) * size:] != 0):
        raise HarnessFailure("decode_to_hailo_nms left the tail of `out` non-zero")
    for k, d in enumerate(frames):
        seg = flat[k * size:(k + 1) * size]
        want = d.to_hailo_nms_buffer(max_per_class=mpc)
        if not np.array_equal(seg.view(np.uint32), want.view(np.uint32)):
            raise HarnessFailure(f"frame {k}: decode_to_hailo_nms differs from Detections.to_hailo_nms_buffer")
        back = hd.decode_hailo_nms(seg, num_classes=cfg.num_classes)
        yxyx = d.boxes_as("yxyx_normalized")
        for c in range(cfg.num_classes):
            mine = np.nonzero(d.class_ids == c)[0][:mpc]
            theirs = np.nonzero(back.class_ids == c)[0]
            if len(mine) != len(theirs):
                raise HarnessFailure(f"frame {k} class {c}: {len(mine)} detections, {len(theirs)} read back")
            if not (np.array_equal(np.sort(d.scores[mine]), np.sort(back.scores[theirs]))
                    and np.array_equal(np.sort(yxyx[mine], axis=0), np.sort(back.boxes[theirs], axis=0),
                                       equal_nan=True)):
                raise HarnessFailure(f"frame {k} class {c}: decode_hailo_nms does not read back what was written")


def check_frame(ctx: _Ctx, d: Any, logical: Optional[Dict[str, np.ndarray]]) -> List[str]:
    """Sanity checks of one frame's detections (`logical`: the frame's values per output, None to
    skip the checks against them); returns the known-bug labels met."""
    cfg = ctx.cfg
    labels: List[str] = []
    if not isinstance(d, hd.Detections):
        raise HarnessFailure(f"a frame is {type(d).__name__}, not Detections")
    b, s, c = d.boxes, d.scores, d.class_ids
    n = len(s)
    if b.dtype != np.float32 or s.dtype != np.float32 or c.dtype != np.int32:
        raise HarnessFailure(f"dtypes {b.dtype}, {s.dtype}, {c.dtype}")
    if b.shape != (n, 4) or c.shape != (n,) or s.shape != (n,):
        raise HarnessFailure(f"shapes {b.shape}, {s.shape}, {c.shape}")
    if d.box_format != cfg.box_format or d.num_classes != cfg.num_classes:
        raise HarnessFailure(f"Detections says {d.box_format}/{d.num_classes}")
    if n == 0:
        return labels
    if c.min() < 0 or c.max() >= ctx.C:
        raise HarnessFailure(f"class ids {c.min()}..{c.max()} outside [0, {ctx.C})")
    nonfinite = ~np.isfinite(s)
    if nonfinite.any():
        if ctx.overflow and not np.isnan(s).any():
            labels.append("known:KB4")
        else:
            raise HarnessFailure(f"non-finite scores {s[nonfinite][:5]}")
    if ctx.allowed is not None:
        outside = np.array([int(k) not in ctx.allowed for k in c])
        if outside.any():
            if ctx.overflow and np.all(s[outside] == np.inf):
                labels.append("known:KB4")
            else:
                raise HarnessFailure(f"classes {sorted(set(c[outside].tolist()))} outside the allow-list "
                                     f"{sorted(ctx.allowed)} detected")
    th = ctx.th32[c]
    if not np.all(_passes(ctx, s, th)):
        bad = np.nonzero(~_passes(ctx, s, th))[0][:5]
        raise HarnessFailure(f"scores {s[bad]} of classes {c[bad]} do not pass their thresholds {th[bad]} "
                             f"({cfg.score_test})")
    if ctx.sigmoid and (np.any(s < 0) or np.any(s > 1)):
        raise HarnessFailure(f"sigmoid scores outside [0, 1]: {s.min()}..{s.max()}")
    if np.any(s[:-1] < s[1:]):
        raise HarnessFailure("scores are not in descending order")
    counts = np.bincount(c, minlength=ctx.C)
    if cfg.max_per_class is not None and counts.max() > cfg.max_per_class:
        raise HarnessFailure(f"{counts.max()} detections of a class, max_per_class={cfg.max_per_class}")
    if cfg.max_total is not None and n > cfg.max_total:
        raise HarnessFailure(f"{n} detections, max_total={cfg.max_total}")
    if cfg.max_candidates is not None and n > cfg.max_candidates:
        raise HarnessFailure(f"{n} detections from at most max_candidates={cfg.max_candidates} candidates")
    if logical is not None:
        _check_candidates(ctx, s, c, logical)
    _check_nms(ctx, b, c)
    return labels


def _check_candidates(ctx: _Ctx, s: np.ndarray, c: np.ndarray, logical: Dict[str, np.ndarray]) -> None:
    cfg = ctx.cfg
    cells = sum(int(np.prod(cfg.output(h.cls).shape[:2])) for h in cfg.heads)
    bound = cells * ctx.C if cfg.multi_label else cells
    if len(s) > bound:
        raise HarnessFailure(f"{len(s)} detections from {bound} possible candidates")
    if ctx.sigmoid:
        return  # expf may differ from NumPy's exp by an ulp: no exact candidate set
    per_class: Dict[int, List[np.ndarray]] = collections.defaultdict(list)
    total = 0
    for h in cfg.heads:
        sc = ctx.scores(h.cls, logical[h.cls])
        ok = _passes(ctx, sc, ctx.th32[None, :])
        if cfg.multi_label:
            for k in np.unique(c):
                per_class[int(k)].append(sc[ok[:, k], k])
            total += int(ok.sum())
        else:
            best = np.argmax(sc, axis=1)
            bs = sc[np.arange(len(sc)), best]
            keep = ok[np.arange(len(sc)), best]
            for k in np.unique(c):
                per_class[int(k)].append(bs[keep & (best == k)])
            total += int(keep.sum())
    if len(s) > total:
        raise HarnessFailure(f"{len(s)} detections from {total} candidates passing the threshold")
    for k in np.unique(c):
        pool = np.concatenate(per_class[int(k)]) if per_class[int(k)] else np.zeros(0, np.float32)
        mine = s[c == k]
        if not np.all(np.isin(mine, pool)):
            raise HarnessFailure(f"class {k}: scores {mine[~np.isin(mine, pool)][:5]} are not scores of any "
                                 f"passing {'cell' if cfg.multi_label else 'best class of a cell'}")


def _check_nms(ctx: _Ctx, b: np.ndarray, c: np.ndarray) -> None:
    """No two kept boxes of a class (any class if agnostic) overlap past the threshold, with IoU
    computed in float32 as the core computes it (kept box first)."""
    cfg = ctx.cfg
    if len(b) < 2 or not np.all(np.isfinite(b)):
        return
    canon = b if cfg.box_format.startswith("yxyx") else b[:, [1, 0, 3, 2]]
    y0, x0, y1, x1 = (canon[:, k].astype(np.float32) for k in range(4))
    area = (y1 - y0) * (x1 - x0)
    th = _f32(cfg.iou_threshold)
    groups = [np.arange(len(b))] if cfg.agnostic else [np.nonzero(c == k)[0] for k in np.unique(c)]
    with np.errstate(all="ignore"):
        for idx in groups:
            if len(idx) < 2:
                continue
            J = idx[None, :]
            for start in range(0, len(idx), 256):
                I = idx[start:start + 256][:, None]
                ow = np.minimum(x1[I], x1[J]) - np.maximum(x0[I], x0[J])
                oh = np.minimum(y1[I], y1[J]) - np.maximum(y0[I], y0[J])
                valid = (ow > 0) & (oh > 0)
                inter = ow * oh
                iou = np.where(valid, inter / ((area[I] + area[J]) - inter), np.float32(0))
                hit = (iou >= th) if cfg.iou_test == ">=" else (iou > th)
                hit &= J > I
                if hit.any():
                    i, j = np.argwhere(hit)[0]
                    raise HarnessFailure(f"kept boxes {int(I[i, 0])} and {int(J[0, j])} overlap with IoU "
                                         f"{iou[i, j]} {cfg.iou_test} {th}")


def _same(a: "hd.Detections", b: "hd.Detections") -> bool:
    return (len(a) == len(b) and np.array_equal(a.boxes.view(np.uint32), b.boxes.view(np.uint32))
            and np.array_equal(a.scores.view(np.uint32), b.scores.view(np.uint32))
            and np.array_equal(a.class_ids, b.class_ids))


def _host_twin(cfg) -> "hd.DecoderConfig":
    """The same decoder over dense host NHWC buffers (threads 1)."""
    outs = [hd.OutputInfo(o.name, o.shape, o.dtype, "NHWC", zp=o.zp, scale=o.scale) for o in cfg.outputs]
    kw = dict(class_activation=cfg.class_activation, score_threshold=cfg.score_threshold,
              score_test=cfg.score_test, iou_threshold=cfg.iou_threshold, iou_test=cfg.iou_test,
              multi_label=cfg.multi_label, agnostic=cfg.agnostic, max_per_class=cfg.max_per_class,
              max_total=cfg.max_total, max_candidates=cfg.max_candidates, tie_break=cfg.tie_break,
              box_format=cfg.box_format)
    return hd.DecoderConfig(outs, cfg.heads, image_size=cfg.image_size, semantics=cfg.semantics, classes=cfg.classes,
                            **kw)


def _equivalences(spec, cfg, dec, raw, pristine, frames, logical, known_kb2) -> List[str]:
    labels: List[str] = []
    nan_boxes = _Ctx(spec, cfg).box_overflow
    batch = spec["batch"]
    # 1. layouts: dense host NHWC buffers of the same logical values
    twin = hd.Decoder(_host_twin(cfg))
    host = {name: (L if batch is not None else L[0]) for name, L in logical.items()}
    got = twin.decode(host)
    got = [got] if isinstance(got, hd.Detections) else got
    for k, (a, b) in enumerate(zip(frames, got)):
        if not _same(a, b):
            if known_kb2 and k >= 1:
                labels.append("known:KB2")
                continue
            raise HarnessFailure(f"frame {k}: {len(a)} detections from the spec's layouts, {len(b)} from the same "
                                 f"values as dense host NHWC buffers (or they differ)")
    # 2. each frame of a batch alone
    if batch:
        for k in range(batch):
            alone = dec.decode({name: a[k] for name, a in pristine.items()})
            if not _same(alone, frames[k]):
                if known_kb2 and k >= 1:
                    labels.append("known:KB2")
                    continue
                raise HarnessFailure(f"frame {k} of the batch decodes differently alone")
    # 3. the same decoder called from several Python threads at once
    if spec.get("concurrent"):
        import threading
        results: Dict[int, Any] = {}
        errors: List[BaseException] = []

        def work(i: int) -> None:
            try:
                for _ in range(3):
                    results[i] = dec.decode(pristine)
            except BaseException as e:  # noqa: BLE001 - reported below
                errors.append(e)

        threads = [threading.Thread(target=work, args=(i,)) for i in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            raise HarnessFailure(f"concurrent decode raised {errors[0]!r}")
        for r in results.values():
            r = [r] if isinstance(r, hd.Detections) else r
            if not all(_same(a, b) for a, b in zip(frames, r)):
                raise HarnessFailure("concurrent calls of one decoder gave different detections")
    # 4. every SIMD path
    for path in SIMD_PATHS:
        _core.select_simd(path)
        again = dec.decode(pristine)
        again = [again] if isinstance(again, hd.Detections) else again
        if not all(_same(a, b) for a, b in zip(frames, again)):
            if nan_boxes:  # NaN boxes: min/max and comparisons differ between scalar and SIMD code
                labels.append("known:KB4")
                continue
            raise HarnessFailure(f"kernel path {path!r} gives different detections")
    return labels


def _check_conversions(spec, d: "hd.Detections") -> None:
    """Detections' HailoRT forms and box conversions on a decoded frame."""
    nc = d.num_classes
    mpc = 100 if d.max_per_class is None else d.max_per_class
    if _nms_floats(nc, mpc) <= MAX_NMS_FLOATS:
        lst = d.to_hailo_nms()
        kept = sum(min(mpc, int(v)) for v in np.bincount(d.class_ids, minlength=nc))
        if len(lst) != nc or sum(len(x) for x in lst) != kept:
            raise HarnessFailure("to_hailo_nms lost or invented detections")
        tf = d.to_hailo_nms(tf_format=True)
        if tf.shape != (nc, 5, mpc):
            raise HarnessFailure(f"tf form shape {tf.shape}")
    for fmt in BOX_FORMATS:
        if d.boxes_as(fmt).shape != (len(d), 4):
            raise HarnessFailure("boxes_as changed the count")
    oh, ow = (int(v) for v in spec["original_size"])
    o = d.to_original((oh, ow))
    # It drops detections with no area left in the image (issue 33), and only those.
    if len(o) > len(d):
        raise HarnessFailure("to_original invented detections")
    b = o.boxes
    inside = np.stack([b[:, 0].clip(0, ow), b[:, 1].clip(0, oh), b[:, 2].clip(0, ow), b[:, 3].clip(0, oh)], axis=1)
    if len(o) and not np.all((inside[:, 2] > inside[:, 0]) & (inside[:, 3] > inside[:, 1])):
        raise HarnessFailure("to_original kept a detection with no area in the image")
    if (o.keypoints is not None and len(o.keypoints) != len(o)) or (o.rboxes is not None and len(o.rboxes) != len(o)):
        raise HarnessFailure("to_original's keypoints or rotated boxes lost their detections")
    if not set(map(float, o.scores)) <= set(map(float, d.scores)):
        raise HarnessFailure("to_original invented scores")


# ------------------------------------------------------------------------------------------------
# nms_input: decode_hailo_nms on garbage
# ------------------------------------------------------------------------------------------------
_ROW_VALUES = [0.0, 0.5, 1.0, -1.0, 1e30, float("nan"), float("inf"), float("-inf"), 1e-45, -0.0, 0.25]


@st.composite
def nms_input_specs(draw) -> Dict[str, Any]:
    form = draw(st.sampled_from(["flat", "flat", "flat_batch", "list", "list", "list_batch", "tf", "tf_batch",
                                 "other"]))
    nc = draw(st.integers(0, 6))
    counts = [draw(st.integers(0, 4)) for _ in range(nc)]
    spec = dict(kind="nms_input", form=form, seed=draw(st.integers(0, 2**32 - 1)), nc=nc, counts=counts,
                corrupt=draw(st.lists(st.sampled_from(["count_nan", "count_inf", "count_neg", "count_frac",
                                                       "count_huge", "truncate", "append", "values"]), max_size=2)
                             | st.just([])),
                dtype=draw(st.sampled_from(["float32"] * 6 + ["float64", "float16", "int32", "complex64", "object",
                                                              "bool"])),
                elements=draw(st.lists(st.sampled_from(["rows"] * 8 + ["empty", "empty0", "rows4", "vec5", "none",
                                                                     "str", "dict", "nested", "ragged", "objarr",
                                                                     "ints"]), min_size=0, max_size=5)),
                tf_shape=[draw(st.integers(0, 4)), draw(st.sampled_from([5, 5, 4, 0])), draw(st.integers(0, 5))],
                other=draw(st.sampled_from(["none", "scalar", "str", "bytes", "dict", "zero_d", "five_d", "gen",
                                            "empty_list", "empty_tuple", "list_of_empty", "deep"])),
                num_classes=draw(st.sampled_from(["right"] * 8 + [None, "minus", "plus", 0, -1, 10**9, 2.5, "3",
                                                                  True])),
                max_per_class=draw(st.sampled_from([None, None, None, 0, 3, 100, -1, "x"])),
                image_size=draw(st.sampled_from([None] * 4 + [[640, 480]] * 4 + [[0, 0], "ab", 5, [1, 2, 3]])),
                box_format=draw(st.sampled_from(list(BOX_FORMATS) + ["yxyx_normalized"] * 3 + ["bad"])))
    return spec


def _nms_rows(rng: np.random.Generator, n: int, finite: bool = False) -> np.ndarray:
    vals = np.array(_ROW_VALUES[:5] + _ROW_VALUES[8:] if finite else _ROW_VALUES)
    r = rng.random((n, 5)).astype(np.float32)
    mask = rng.random((n, 5)) < 0.15
    r[mask] = rng.choice(vals, size=int(mask.sum()))
    return r


def _build_nms_input(spec: Dict[str, Any], rng: np.random.Generator) -> Any:
    form = spec["form"]
    nc, counts = spec["nc"], spec["counts"]

    def flat_one() -> np.ndarray:
        parts = []
        for n in counts:
            parts.append(np.float32([n]))
            parts.append(_nms_rows(rng, n).reshape(-1))
        f = np.concatenate(parts) if parts else np.zeros(0, np.float32)
        f = np.concatenate([f, np.zeros(int(rng.integers(0, 6)), np.float32)])
        count_pos = np.cumsum([0] + [1 + 5 * n for n in counts[:-1]]).astype(int) if counts else np.zeros(0, int)
        for op in spec["corrupt"]:
            count_pos = count_pos[count_pos < f.size]
            if op.startswith("count_") and len(count_pos):
                p = int(rng.choice(count_pos))
                f[p] = {"count_nan": np.nan, "count_inf": rng.choice([np.inf, -np.inf]), "count_neg": -1.0,
                        "count_frac": 1.5, "count_huge": 1e30}[op]
            elif op == "truncate" and f.size:
                f = f[:int(rng.integers(0, f.size))]
            elif op == "append":
                f = np.concatenate([f, rng.random(int(rng.integers(1, 9))).astype(np.float32)])
            elif op == "values" and f.size:
                f[int(rng.integers(0, f.size))] = rng.choice(_ROW_VALUES)
        return f

    def cast(a: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            if spec["dtype"] == "object":
                return a.astype(object)
            return a.astype(spec["dtype"])

    def list_one() -> List[Any]:
        out: List[Any] = []
        elements = spec["elements"] or ["rows"] * nc
        for k, e in enumerate(elements):
            n = counts[k % len(counts)] if counts else 1
            out.append({
                "rows": lambda: cast(_nms_rows(rng, n)),
                "empty": lambda: [],
                "empty0": lambda: np.empty((0, 5)),
                "rows4": lambda: _nms_rows(rng, max(1, n))[:, :4],
                "vec5": lambda: _nms_rows(rng, 1)[0],
                "none": lambda: None,
                "str": lambda: "rows",
                "dict": lambda: {"a": 1},
                "nested": lambda: [[0.1, 0.2, 0.3, 0.4, 0.5]],
                "ragged": lambda: [[0.1, 0.2], [0.3]],
                "objarr": lambda: np.array([None, 1.0, "x", 2, 3], dtype=object).reshape(1, 5),
                "ints": lambda: np.arange(5 * n, dtype=np.int64).reshape(n, 5),
            }[e]())
        return out

    if form == "flat":
        return cast(flat_one())
    if form == "flat_batch":
        a, b = flat_one(), flat_one()
        m = min(a.size, b.size)
        return cast(np.stack([a[:m], b[:m]]))
    if form == "list":
        return list_one()
    if form == "list_batch":
        return [list_one(), list_one()] if rng.random() < 0.7 else (list_one(), list_one())
    if form in ("tf", "tf_batch"):
        k, five, m = spec["tf_shape"]
        tf = np.zeros((k, five, m), np.float32)
        for c in range(k):
            n = int(rng.integers(0, m + 1))
            if n and five:
                tf[c, :, :n] = _nms_rows(rng, n)[:, :five].T
        return cast(tf if form == "tf" else np.stack([tf, tf[::-1].copy()]))
    other = spec["other"]
    return {"none": None, "scalar": 3.5, "str": "nms", "bytes": b"\x00\x01", "dict": {"a": np.zeros(5)},
            "zero_d": np.float32(1.0), "five_d": np.zeros((1, 1, 1, 1, 5), np.float32),
            "gen": (x for x in range(3)), "empty_list": [], "empty_tuple": (), "list_of_empty": [[]],
            "deep": _deep_list(3000)}[other]


def _deep_list(depth: int) -> List[Any]:
    x: List[Any] = []
    for _ in range(depth):
        x = [x]
    return x


def run_nms_input_spec(spec: Dict[str, Any]) -> str:
    rng = np.random.default_rng(spec["seed"])
    output = _build_nms_input(spec, rng)
    nc_spec = spec["num_classes"]
    nc = {"right": spec["nc"], "minus": spec["nc"] - 1, "plus": spec["nc"] + 1}.get(nc_spec, nc_spec) \
        if isinstance(nc_spec, str) and nc_spec in ("right", "minus", "plus") else nc_spec
    kw = dict(num_classes=nc, max_per_class=spec["max_per_class"],
              image_size=None if spec["image_size"] is None else
              (tuple(spec["image_size"]) if isinstance(spec["image_size"], list) else spec["image_size"]),
              box_format=spec["box_format"])
    has_inf = isinstance(output, np.ndarray) and output.dtype.kind == "f" and bool(np.isinf(output).any())
    # decode_hailo_nms takes a list whose first item is a list or tuple for a batch (KB7)
    nested = isinstance(output, (list, tuple)) and bool(output) and isinstance(output[0], (list, tuple))
    try:
        res = hd.decode_hailo_nms(output, **kw)
    except CLEAN:
        return "rejected"
    except OverflowError as e:
        if has_inf and "infinity" in str(e):
            return "known:KB3"
        raise
    except RecursionError:
        if _list_depth(output) >= 3:
            return "known:KB7"
        raise
    frames = res if isinstance(res, list) else [res]
    label = "decoded"
    if any(isinstance(d, list) for d in frames) and nested:
        label = "known:KB7"  # lists of lists of Detections
        frames = _flatten(frames)
    for d in frames:
        if not isinstance(d, hd.Detections):
            raise HarnessFailure(f"decode_hailo_nms gave {type(d).__name__}")
        n = len(d)
        if d.boxes.shape != (n, 4) or d.class_ids.shape != (n,) or d.scores.shape != (n,):
            raise HarnessFailure("inconsistent Detections")
        if n and (d.class_ids.min() < 0 or (d.num_classes is not None and d.class_ids.max() >= d.num_classes)):
            raise HarnessFailure(f"class ids {d.class_ids.min()}..{d.class_ids.max()} outside [0, {d.num_classes})")
        s = d.scores[~np.isnan(d.scores)]
        if np.any(s[:-1] < s[1:]):
            raise HarnessFailure("decode_hailo_nms scores are not in descending order")
        if (d.box_format == "yxyx_normalized" and n and d.num_classes and np.all(np.isfinite(d.boxes))
                and np.all(np.isfinite(d.scores))):
            mpc = int(np.bincount(d.class_ids, minlength=d.num_classes).max())
            if _nms_floats(d.num_classes, mpc) <= MAX_NMS_FLOATS:
                flat = d.to_hailo_nms_buffer(max_per_class=mpc)
                back = hd.decode_hailo_nms(flat, num_classes=d.num_classes)
                if not (np.array_equal(np.sort(back.scores), np.sort(d.scores))
                        and np.array_equal(np.bincount(back.class_ids, minlength=d.num_classes),
                                           np.bincount(d.class_ids, minlength=d.num_classes))):
                    raise HarnessFailure("to_hailo_nms_buffer -> decode_hailo_nms does not round-trip")
    return label


def _list_depth(x: Any, limit: int = 50) -> int:
    depth = 0
    while isinstance(x, (list, tuple)) and x and depth < limit:
        x = x[0]
        depth += 1
    return depth + (1 if isinstance(x, (list, tuple)) and depth < limit else 0)


def _flatten(x: Any) -> List[Any]:
    out: List[Any] = []
    for v in x:
        out.extend(_flatten(v) if isinstance(v, list) else [v])
    return out


# ------------------------------------------------------------------------------------------------
# core: the private _core.Decoder with inconsistent specs
# ------------------------------------------------------------------------------------------------
CORE_PERTURB = ["dims_zero", "dims_negative", "dims_huge", "padded_small", "f8cr_unaligned", "stride_small",
                 "stride_huge", "zp_len", "scale_len", "zp_nan", "scale_zero", "scale_inf", "head_index", "head_stride",
                 "no_heads", "num_classes", "bins", "box_channels", "grid", "thresholds_len", "threshold_nan",
                 "iou_nan", "image_zero", "threads", "elements_short", "array_dtype", "arrays_count", "caps"]


@st.composite
def core_specs(draw) -> Dict[str, Any]:
    """A consistent _core.Config (like the Python layer builds), then 0-3 perturbations of it."""
    C = draw(st.sampled_from([1, 2, 3, 8, 13]))
    bins = draw(st.sampled_from([1, 4, 16]))
    n_heads = draw(st.integers(1, 2))
    outs, heads = [], []
    for k in range(n_heads):
        h, w = draw(st.integers(1, 5)), draw(st.integers(1, 5))
        for ch in (4 * bins, C):
            order = draw(st.sampled_from(["NHWC", "NHCW", "F8CR", "NCHW"]))
            pad = [draw(st.sampled_from([0, 0, 1, 3])) for _ in range(3)] if order != "NCHW" else [0, 0, 0]
            per_channel = draw(st.booleans())
            outs.append(dict(dtype=draw(st.sampled_from(["U8", "U16", "F32"])), order=order, shape=[h, w, ch],
                             pad=pad, stride_delta=draw(st.sampled_from([0, 0, 0, 8])),
                             zp=[0.5 * c for c in range(ch)] if per_channel else [draw(st.sampled_from([0.0, 84.0, 3.5]))],
                             scale=[0.01 * (1 + c) for c in range(ch)] if per_channel else [draw(st.sampled_from([1.0, 0.01, 1 / 255]))],
                             elements_delta=0, array_dtype="same"))
        heads.append(dict(box=2 * k, cls=2 * k + 1, stride=draw(st.sampled_from([8, 16, 32, 1]))))
    spec = dict(kind="core", seed=draw(st.integers(0, 2**32 - 1)), outputs=outs, heads=heads, num_classes=C,
                bins=bins, thresholds=draw(st.sampled_from([[0.0], [0.5], [-1.0], "per_class"])),
                iou=draw(st.sampled_from([0.5, 0.0, 1.0, -1.0, 2.0])),
                caps=[draw(st.sampled_from([-1, -1, 0, 1, 5])) for _ in range(3)],
                image=[draw(st.sampled_from([640, 1, 33])), draw(st.sampled_from([640, 3]))],
                flags=[draw(st.booleans()) for _ in range(7)], threads=draw(st.sampled_from([1, 1, 2, 3])),
                n_frames=draw(st.integers(0, 3)), n_arrays_delta=0)
    perturb = draw(st.lists(st.sampled_from(CORE_PERTURB), max_size=3, unique=True))
    spec["perturb"] = perturb
    o = outs[draw(st.integers(0, len(outs) - 1))]
    for p in perturb:
        if p == "dims_zero":
            o["shape"][draw(st.integers(0, 2))] = 0
        elif p == "dims_negative":
            o["shape"][draw(st.integers(0, 2))] = -1
        elif p == "dims_huge":
            o["shape"][draw(st.integers(0, 1))] = draw(st.sampled_from([32769, 2**31 - 1]))
        elif p == "padded_small":
            o["pad"][draw(st.integers(0, 2))] = -1
        elif p == "f8cr_unaligned":
            o["order"], o["pad"][2] = "F8CR", -(o["shape"][2] % 8) + 9 if o["shape"][2] % 8 else 1
            o["no_align"] = True
        elif p == "stride_small":
            o["stride_delta"] = draw(st.sampled_from([-1, -1000]))
        elif p == "stride_huge":
            o["stride_delta"] = 2**40
        elif p == "zp_len":
            o["zp"] = draw(st.sampled_from([[], [0.0] * (o["shape"][2] + 1)]))
        elif p == "scale_len":
            o["scale"] = draw(st.sampled_from([[], [1.0] * (o["shape"][2] + 2)]))
        elif p == "zp_nan":
            o["zp"] = [float("nan")]
        elif p == "scale_zero":
            o["scale"] = [draw(st.sampled_from([0.0, -1.0, 1e-50]))]
        elif p == "scale_inf":
            o["scale"] = [float("inf")]
        elif p == "head_index":
            heads[0][draw(st.sampled_from(["box", "cls"]))] = draw(st.sampled_from([-1, len(outs), 2**31 - 1]))
        elif p == "head_stride":
            heads[0]["stride"] = draw(st.sampled_from([0, -8, 2**31 - 1]))
        elif p == "no_heads":
            spec["heads"] = []
        elif p == "num_classes":
            spec["num_classes"] = draw(st.sampled_from([0, -1, C + 1]))
        elif p == "bins":
            spec["bins"] = draw(st.sampled_from([0, -1, bins + 1]))
        elif p == "box_channels":
            outs[0]["shape"][2] += 1
        elif p == "grid":
            outs[1]["shape"][0] += 1
        elif p == "thresholds_len":
            spec["thresholds"] = draw(st.sampled_from([[], [0.1] * (C + 1)]))
        elif p == "threshold_nan":
            spec["thresholds"] = [float("nan")]
        elif p == "iou_nan":
            spec["iou"] = draw(st.sampled_from([float("nan"), float("inf")]))
        elif p == "image_zero":
            spec["image"] = [draw(st.sampled_from([0, -5])), 640]
        elif p == "threads":
            spec["threads"] = draw(st.sampled_from([0, 257, -1]))
        elif p == "elements_short":
            o["elements_delta"] = draw(st.sampled_from([-1, "zero"]))
        elif p == "array_dtype":
            o["array_dtype"] = "other"
        elif p == "arrays_count":
            spec["n_arrays_delta"] = draw(st.sampled_from([-1, 1]))
        elif p == "caps":
            spec["caps"][draw(st.integers(0, 2))] = draw(st.sampled_from([-7, 2**62, 2**63 - 1]))
    return spec


_CORE_DT = {"U8": np.uint8, "U16": np.uint16, "F32": np.float32}


def run_core_spec(spec: Dict[str, Any]) -> str:
    rng = np.random.default_rng(spec["seed"])
    try:
        cfg = _core.Config()
        tensors = []
        sizes = []
        for o in spec["outputs"]:
            t = _core.TensorSpec()
            t.name = "t"
            t.dtype = getattr(_core.DType, o["dtype"])
            t.order = getattr(_core.Order, o["order"])
            h, w, c = o["shape"]
            t.height, t.width, t.channels = h, w, c
            hp, wp, cp = h + o["pad"][0], w + o["pad"][1], c + o["pad"][2]
            if o["order"] == "F8CR" and cp > 0 and o["pad"][2] >= 0 and not o.get("no_align"):
                cp = _ceil8(cp)
            t.padded_height, t.padded_width, t.padded_channels = hp, wp, cp
            frame = max(0, hp) * max(0, wp) * max(0, cp)
            t.frame_stride = max(0, frame + o["stride_delta"])
            cc = max(c, 0)
            t.zp = [0.5 * k for k in range(cc)] if o["zp"] == "per_channel" else o["zp"]
            t.scale = [0.1] * cc if o["scale"] == "per_channel" else o["scale"]
            tensors.append(t)
            sizes.append(frame)
        cfg.outputs = tensors
        heads = []
        for h in spec["heads"]:
            hs = _core.HeadSpec()
            hs.box_output, hs.cls_output, hs.stride = h["box"], h["cls"], h["stride"]
            heads.append(hs)
        cfg.heads = heads
        cfg.num_classes = spec["num_classes"]
        cfg.bins = spec["bins"]
        s = _core.Settings()
        nc = max(spec["num_classes"], 0)
        s.score_threshold = [0.3] * nc if spec["thresholds"] == "per_class" else spec["thresholds"]
        s.iou_threshold = spec["iou"]
        s.max_per_class, s.max_total, s.max_candidates = spec["caps"]
        s.image_height, s.image_width = spec["image"]
        (s.sigmoid, s.score_inclusive, s.iou_inclusive, s.multi_label, s.agnostic, s.hailort_sort,
         s.normalized) = spec["flags"]
        cfg.settings = s
        dec = _core.Decoder(cfg, spec["threads"])
    except CLEAN:
        return "config-rejected"
    n_frames = spec["n_frames"]
    arrays = []
    for o, t, frame in zip(spec["outputs"], tensors, sizes):
        need = 0 if n_frames == 0 else (n_frames - 1) * t.frame_stride + frame
        d = o["elements_delta"]
        count = 0 if d == "zero" else max(0, need + d)
        if count > 50_000_000:
            return "too-large"
        dt = _CORE_DT[o["dtype"]]
        if o["array_dtype"] == "other":
            dt = np.float64 if dt is not np.float64 else np.uint8
        a = (rng.random(count) * 300).astype(dt)
        arrays.append(a)
    delta = spec["n_arrays_delta"]
    arrays = arrays[:len(arrays) + delta] if delta < 0 else arrays + [np.zeros(4, np.uint8)] * delta
    try:
        frames = dec.decode(arrays, n_frames)
    except CLEAN:
        return "input-rejected"
    if len(frames) != n_frames:
        raise HarnessFailure(f"{len(frames)} frames for n_frames={n_frames}")
    for boxes, scores, classes in frames:
        if boxes.shape != (len(scores), 4) or classes.shape != scores.shape:
            raise HarnessFailure("inconsistent frame")
        if len(classes) and (classes.min() < 0 or classes.max() >= spec["num_classes"]):
            raise HarnessFailure(f"class ids {classes.min()}..{classes.max()} outside [0, {spec['num_classes']})")
    return "decoded"


# ------------------------------------------------------------------------------------------------
# nms_json: DecoderConfig.from_nms_json on odd documents
# ------------------------------------------------------------------------------------------------
_JSON_GARBAGE = [None, "x", "8", [], {}, [1], [1, 2, 3], True, False, float("nan"), float("inf"), float("-inf"), -1, 0,
                 10**30, 2.5, -0.0, 1e-300, "Infinity"]
_JSON_KEYS = ["nms_scores_th", "nms_iou_th", "image_dims", "max_proposals_per_class", "classes", "regression_length",
              "background_removal", "bbox_decoders"]


@st.composite
def nms_json_specs(draw) -> Dict[str, Any]:
    n_heads = draw(st.integers(1, 3))
    C = draw(st.sampled_from([1, 3, 80]))
    bins = draw(st.sampled_from([16, 4, 1]))
    a = draw(st.integers(1, 3))
    heads = [dict(grid=a * 2 ** (n_heads - 1 - k), stride=8 * 2 ** k) for k in range(n_heads)]
    names = [[f"net/conv{10 * k + 1}", f"net/conv{10 * k + 2}"] for k in range(n_heads)]
    decoders = [dict(reg_layer=names[k][0] if draw(st.booleans()) else names[k][0].split("/")[-1],
                     cls_layer=names[k][1] if draw(st.booleans()) else names[k][1].split("/")[-1],
                     stride=heads[k]["stride"]) for k in range(n_heads)]
    doc: Dict[str, Any] = dict(nms_scores_th=draw(st.sampled_from([0.2, 0.0, 1.0, 0.25])),
                               nms_iou_th=draw(st.sampled_from([0.7, 0.45, 1.0])),
                               image_dims=[heads[0]["grid"] * 8, heads[0]["grid"] * 8],
                               max_proposals_per_class=draw(st.sampled_from([100, 1, 0, 30])), classes=C,
                               regression_length=draw(st.sampled_from([bins, bins - 1])), background_removal=False,
                               background_removal_index=0, bbox_decoders=decoders)
    for key in draw(st.lists(st.sampled_from(_JSON_KEYS), max_size=3, unique=True)):
        op = draw(st.sampled_from(["garbage", "garbage", "delete"]))
        if op == "delete":
            doc.pop(key, None)
        else:
            doc[key] = draw(st.sampled_from(_JSON_GARBAGE))
    if draw(st.integers(0, 3)) == 0 and isinstance(doc.get("bbox_decoders"), list) and doc["bbox_decoders"] \
            and isinstance(doc["bbox_decoders"][0], dict):
        d = dict(doc["bbox_decoders"][0])
        op = draw(st.sampled_from(["missing", "value", "name", "suffix_ambiguous", "duplicate", "not_dict"]))
        if op == "missing":
            d.pop(draw(st.sampled_from(["reg_layer", "cls_layer", "stride"])))
        elif op == "value":
            d[draw(st.sampled_from(["reg_layer", "cls_layer", "stride"]))] = draw(st.sampled_from(_JSON_GARBAGE))
        elif op == "name":
            d["reg_layer"] = "nope"
        elif op == "suffix_ambiguous":
            d["reg_layer"] = "conv1"  # matches nothing exactly; "other/conv1" is added below
        doc["bbox_decoders"] = ([d] + doc["bbox_decoders"][1:] if op != "duplicate" else doc["bbox_decoders"] * 2)
        if op == "not_dict":
            doc["bbox_decoders"] = [draw(st.sampled_from([1, "reg", None, [1, 2]]))]
    return dict(kind="nms_json", seed=draw(st.integers(0, 2**32 - 1)), C=C, bins=bins, heads=heads, names=names,
                doc=doc, ambiguous=draw(st.integers(0, 5)) == 0,
                form=draw(st.sampled_from(["dict", "text", "text_ws"])),
                settings=draw(st.sampled_from([{}, {}, {"semantics": "ultralytics"}, {"score_threshold": 0.5},
                                               {"class_activation": "sigmoid"}, {"max_per_class": None}])))


def _has_inf(x: Any) -> bool:
    if isinstance(x, float):
        return math.isinf(x)
    if isinstance(x, dict):
        return any(_has_inf(v) for v in x.values())
    if isinstance(x, list):
        return any(_has_inf(v) for v in x)
    return False


def run_nms_json_spec(spec: Dict[str, Any]) -> str:
    rng = np.random.default_rng(spec["seed"])
    C, bins = spec["C"], spec["bins"]
    outs = []
    for h, (box, cls) in zip(spec["heads"], spec["names"]):
        g = h["grid"]
        outs += [hd.OutputInfo(box, (g, g, 4 * bins), "uint8", "FCR", zp=84.0, scale=0.09),
                 hd.OutputInfo(cls, (g, g, C), "uint8", "NHWC", zp=0.0, scale=1 / 255)]
    if spec["ambiguous"]:
        outs.append(hd.OutputInfo("other/conv1", (1, 1, C), "uint8", "NHWC", zp=0.0, scale=1.0))
        outs.append(hd.OutputInfo("more/conv1", (1, 1, C), "uint8", "NHWC", zp=0.0, scale=1.0))
    doc = spec["doc"]
    source: Any = doc
    if spec["form"] != "dict":
        source = (" \n " if spec["form"] == "text_ws" else "") + json.dumps(doc)
    try:
        cfg = hd.DecoderConfig.from_nms_json(source, outputs=outs, **spec["settings"])
        dec = hd.Decoder(cfg)
    except CLEAN:
        return "rejected"
    except OverflowError as e:
        if _has_inf(doc) and "infinity" in str(e):
            return "known:KB8"
        raise
    except (IndexError, KeyError):
        dims = doc.get("image_dims")
        if not (isinstance(dims, list) and len(dims) >= 2):
            return "known:KB8"
        raise
    raw = {o.name: rng.integers(0, 256, o.shape, dtype=np.int64).astype(np.uint8) for o in cfg.outputs}
    d = dec.decode(raw)
    labels = check_frame(_Ctx({}, cfg), d, raw)
    return labels[0] if labels else "decoded"


# ------------------------------------------------------------------------------------------------
# Hand-written specs (edge cases the tests pin, whatever hypothesis draws)
# ------------------------------------------------------------------------------------------------
def make_decode_spec(*, C: int = 3, bins: int = 16, grids=((2, 2),), strides=(8,), dtype="uint8", order="NHWC",
                     device: bool = False, pad=(0, 0, 0), form: str = "flat_rounded", zp: Any = 0.0,
                     scale: Any = 1 / 255, fill: Optional[str] = None, settings_: Optional[Dict[str, Any]] = None,
                     batch: Optional[int] = None, api: str = "decode", seed: int = 0, faults=(), **extra: Any
                     ) -> Dict[str, Any]:
    """A decode spec built by hand: every output alike (dtype, order, device padding, quantization)."""
    def fit(v: Any, ch: int) -> Any:  # per-channel lists apply to the outputs with that many channels
        return v if not isinstance(v, (list, tuple)) or len(v) == ch else v[0]

    outputs = []
    for k, (H, W) in enumerate(grids):
        for role in ("box", "cls"):
            ch = 4 * bins if role == "box" else C
            base = order.upper()
            padded = [H + pad[0], W + pad[1], ch + pad[2]]
            if device and base == "F8CR":
                padded[2] = _ceil8(padded[2])
            outputs.append(dict(name=f"n/{role}{k}", role=role, head=k, dtype=dtype, device=device, order=order,
                                base_order=base, shape=[H, W, ch], padded=padded, give_padded=device, zp=fit(zp, ch),
                                scale=fit(scale, ch), form=form if device else "natural",
                                fill=fill or ("uniform" if dtype != "float32" else "normal"), pad_fill="max"))
    spec = dict(kind="decode", valid=not faults, faults=list(faults), seed=seed, C=C, bins=bins, style="hand",
                heads_mode="explicit", image_size=None,
                heads=[dict(grid=list(g), stride=s) for g, s in zip(grids, strides)],
                head_order=list(range(len(grids))), outputs=outputs, config_order=list(range(len(outputs))),
                bins_kw=None, settings=dict(settings_ or {}), threads=1, batch=batch, api=api, out=None,
                mapping="dict", unaligned=[], readonly=False, views=False, simd=None, fault_target=0,
                original_size=[480, 640], diagnose=True, concurrent=False)
    spec.update(extra)
    return spec


# ------------------------------------------------------------------------------------------------
# For scripts/fuzz.py and the tests
# ------------------------------------------------------------------------------------------------
STRATEGIES = {
    "decode": lambda: decode_specs(),
    "nms_input": lambda: nms_input_specs(),
    "core": lambda: core_specs(),
    "nms_json": lambda: nms_json_specs(),
}


def describe(spec: Dict[str, Any]) -> str:
    """A replayable reproducer for a spec."""
    return ("import json, sys; sys.path.insert(0, 'tests')\n"
            "from fuzz.decoder_cases import run_spec\n"
            f"run_spec(json.loads({spec_json(spec)!r}))")


if __name__ == "__main__":  # python tests/fuzz/decoder_cases.py '<spec json>' replays one case
    print(run_spec(json.loads(sys.argv[1])))
