"""Fuzzing the decoder: DecoderConfig + Decoder (decode, __call__, decode_to_hailo_nms, diagnose),
Detections' conversions, decode_hailo_nms, DecoderConfig.from_nms_json and the private
_core.Decoder. The strategies, the runners and the checks live in decoder_cases.py (read its
docstring); scripts/fuzz.py runs the same harnesses for a given time.

Every decode runs in this process: a crash takes pytest down, which CI sees; a hang ends the
process through the watchdog (decoder_cases.watchdog), a slow example fails its deadline.

The KB tests at the end pin the fixes of the bugs the fuzzing found (FUZZING.md): each reproduces
its bug's input and asserts the clean outcome.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import given

import hailo_decode as hd

from .decoder_cases import (CLEAN, KNOWN, HarnessFailure, _Ctx, check_frame, core_specs, decode_specs,
                            fuzz_settings, make_decode_spec, nms_input_specs, nms_json_specs, run_spec)
from .nms_forms_cases import bbox_only_specs, by_score_specs

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning", "ignore::numpy.exceptions.ComplexWarning")


# ------------------------------------------------------------------------------------------------
# The harnesses
# ------------------------------------------------------------------------------------------------
@fuzz_settings(300)
@given(decode_specs(valid=True))
def test_fuzz_decode_valid(spec):
    """Documented-valid configs and buffers (extremes included): decoding succeeds and the result
    passes every check (thresholds, caps, NMS, layout/batch/SIMD/thread equivalence, HailoRT forms)."""
    run_spec(spec)


@fuzz_settings(250)
@given(decode_specs(valid=False))
def test_fuzz_decode_faults(spec):
    """One or two deliberate faults (a bad setting, NaN in a float buffer, a wrong shape, an odd
    `out`, ...): a result that passes the checks, or ValueError/TypeError."""
    run_spec(spec)


@fuzz_settings(250)
@given(nms_input_specs())
def test_fuzz_decode_hailo_nms(spec):
    run_spec(spec)


@fuzz_settings(150)
@given(nms_json_specs())
def test_fuzz_from_nms_json(spec):
    run_spec(spec)


@fuzz_settings(250)
@given(by_score_specs())
def test_fuzz_decode_by_score(spec):
    """HAILO_NMS_BY_SCORE frames with lying counts, truncations, NaNs and odd containers: the reader
    never returns what lies past its frame (nms_forms_cases.py)."""
    run_spec(spec)


@fuzz_settings(200)
@given(bbox_only_specs())
def test_fuzz_decode_bbox_only(spec):
    """yolov8_bbox_only outputs with NaNs, odd shapes and dtypes and random NMS settings."""
    run_spec(spec)


@fuzz_settings(150)
@given(core_specs())
def test_fuzz_core_decoder(spec):
    """The C++ core's own validation (the last guard of every read) with inconsistent specs."""
    run_spec(spec)


# ------------------------------------------------------------------------------------------------
# Edge cases pinned by hand (whatever hypothesis draws)
# ------------------------------------------------------------------------------------------------
EDGE = {
    "1000 classes, 1x1 grid, threshold 0, no caps": dict(  # (IoU > 1 never holds: no suppression either)
        C=1000, grids=((1, 1),), settings_=dict(score_threshold=0.0, max_per_class=None, iou_threshold=1.0,
                                                iou_test=">")),
    "threshold 0 everywhere, 3 heads": dict(
        C=5, grids=((8, 8), (4, 4), (2, 2)), strides=(8, 16, 32), settings_=dict(score_threshold=0.0)),
    "thresholds 0 and 1 per class": dict(
        C=2, settings_=dict(score_threshold=[0.0, 1.0])),
    "bins 1, float32 denormals and -0.0": dict(bins=1, dtype="float32", fill="extreme"),
    "bins 4, uint16, per-channel non-integer zero points": dict(
        bins=4, dtype="uint16", zp=[0.5 * k for k in range(16)], scale=[1e-4] * 16,
        settings_=dict(class_activation="sigmoid")),
    "device NHCW with padding, batch 3, flat frames": dict(
        device=True, order="NHCW", pad=(1, 2, 3), batch=3, form="flat_rounded"),
    "device F8CR with padding, ultralytics": dict(
        device=True, order="F8CR", pad=(0, 1, 5), settings_=dict(semantics="ultralytics")),
    "host NCHW, agnostic, iou 0": dict(order="NCHW", settings_=dict(agnostic=True, iou_threshold=0.0)),
    "tiny and huge (finite) scales": dict(C=4, scale=[1e-44, 1e-30, 1e10, 1e30], zp=[0, 3.5, 255, 1e4]),
    "decode_to_hailo_nms, batch 2, caps 0 and 1": dict(
        api="to_nms", batch=2, settings_=dict(max_per_class=1, max_total=0)),
    "empty batch": dict(batch=0, api="to_nms"),
}


@pytest.mark.parametrize("name", list(EDGE))
def test_edge_case(name):
    assert run_spec(make_decode_spec(**EDGE[name])).startswith("decoded")


@pytest.mark.parametrize("fault,expected", [
    ("in_nonfinite", "input-rejected"), ("iou_bad", "config-rejected"), ("threshold_bad", "config-rejected"),
])
def test_edge_case_faults(fault, expected):
    settings = {"iou_bad": dict(iou_threshold=float("nan")), "threshold_bad": dict(score_threshold=float("inf"))}
    spec = make_decode_spec(dtype="float32", faults=[fault], settings_=settings.get(fault, {}))
    assert run_spec(spec) == expected


def test_harness_catches_a_wrong_result():
    """The checks are not vacuous: tampered detections fail them."""
    cfg = hd.DecoderConfig([hd.OutputInfo("b", (2, 2, 4), zp=0.0, scale=1.0), hd.OutputInfo("c", (2, 2, 2), scale=1 / 255, zp=0.0)],
                           [hd.Head("b", "c", 8)], bins=1, score_threshold=0.5)
    raw = {"b": np.full((2, 2, 4), 2, np.uint8), "c": np.zeros((2, 2, 2), np.uint8)}
    raw["c"][0, 0, 1] = 200
    ctx = _Ctx({}, cfg)
    d = hd.Decoder(cfg)(raw)
    assert len(d) == 1 and check_frame(ctx, d, raw) == []
    bad = [hd.Detections(d.boxes, d.scores * 0.5, d.class_ids, num_classes=2, max_per_class=100),  # below threshold
           hd.Detections(d.boxes, d.scores, d.class_ids + 1, num_classes=2, max_per_class=100),    # class out of range
           hd.Detections(np.vstack([d.boxes, d.boxes]), np.r_[d.scores, d.scores], np.r_[d.class_ids, d.class_ids],
                         num_classes=2, max_per_class=100)]                                         # NMS / candidates
    for b in bad:
        with pytest.raises(HarnessFailure):
            check_frame(ctx, b, raw)


# ------------------------------------------------------------------------------------------------
# Bugs the fuzzing found (FUZZING.md), fixed: each test pins the fix.
# ------------------------------------------------------------------------------------------------
def _small_config(**settings):
    outs = [hd.OutputInfo("box", (1, 1, 4), "uint8", "NHWC", zp=0.0, scale=1.0), hd.OutputInfo("cls", (1, 1, 2), "uint8", "NHWC",
                                                                            scale=1 / 255, zp=0.0)]
    return hd.DecoderConfig(outs, [hd.Head("box", "cls", 8)], bins=1, **settings)


_SMALL_RAW = {"box": np.full((1, 1, 4), 2, np.uint8), "cls": np.array([[[0, 255]]], np.uint8)}


@pytest.mark.parametrize("call", ["decode_to_hailo_nms", "to_hailo_nms_buffer"])
def test_kb1_nms_buffer_size_overflow_is_a_clean_error(call):
    """Run in a child process: it used to die with SIGSEGV (std::fill from past the end of a
    0-float buffer). Now such a cap is refused when the config is built."""
    code = textwrap.dedent(f"""
        import numpy as np, hailo_decode as hd
        mpc = (2**64 - 1) // 5          # 1 + 5 * mpc == 2**64: hailo_nms_by_class_floats wraps to 0
        outs = [hd.OutputInfo("box", (1, 1, 4), zp=0.0, scale=1.0), hd.OutputInfo("cls", (1, 1, 2), zp=0.0, scale=1 / 255)]
        raw = {{"box": np.full((1, 1, 4), 2, np.uint8), "cls": np.array([[[0, 255]]], np.uint8)}}
        try:
            cfg = hd.DecoderConfig(outs, [hd.Head("box", "cls", 8)], bins=1, max_per_class=mpc)
            if {call!r} == "decode_to_hailo_nms":
                hd.Decoder(cfg).decode_to_hailo_nms(raw)
            else:
                hd.Decoder(cfg)(raw).to_hailo_nms_buffer()
        except (ValueError, TypeError):
            print("CLEAN")
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "CLEAN" in r.stdout, f"exit {r.returncode}: {r.stderr[-500:]}"


@pytest.mark.parametrize("hp", [4, 1])
def test_kb2_batched_3d_device_buffers(hp):
    """uint8 raw device buffers padded to (hp, 1, 5): 5 * hp bytes a frame, which HailoRT rounds up
    to a multiple of 8 and spaces frames by. A (N, hp, 1, 5) array spaces them by 5 * hp: refused
    with a message naming the raw batch shape; the (N, frame_elements) form decodes each frame as
    decoding it alone does."""
    box = hd.OutputInfo("box", (1, 1, 4), "uint8", "NHWC", device=True, padded_shape=(hp, 1, 5), zp=0.0, scale=1.0)
    cls = hd.OutputInfo("cls", (1, 1, 1), "uint8", "NHWC", device=True, padded_shape=(hp, 1, 5), scale=1 / 255, zp=0.0)
    dec = hd.Decoder(hd.DecoderConfig([box, cls], [hd.Head("box", "cls", 8)], bins=1, score_threshold=0.5))
    b = np.zeros((2, hp, 1, 5), np.uint8)
    b[:, 0, 0, :4] = 2
    c = np.zeros((2, hp, 1, 5), np.uint8)
    c[1, 0, 0, 0] = 255
    alone = [len(dec({"box": b[i], "cls": c[i]})) for i in range(2)]
    assert alone == [0, 1]
    stride = box.frame_elements
    with pytest.raises(ValueError, match=rf"\(N, {stride}\) for a batch"):
        dec({"box": b, "cls": c})
    raw = {}
    for name, a in (("box", b), ("cls", c)):
        flat = np.zeros((2, stride), np.uint8)
        flat[:, :5 * hp] = a.reshape(2, -1)
        raw[name] = flat
    assert [len(d) for d in dec(raw)] == alone


def test_kb3_infinite_count_in_flat_nms_buffer():
    with pytest.raises(ValueError):  # -inf, NaN, -1 and 1.5 already raise ValueError
        hd.decode_hailo_nms(np.array([np.inf, 0, 0, 0, 0, 0], np.float32), num_classes=1)


def test_kb4_dequantized_range_overflowing_float32():
    try:
        outs = [hd.OutputInfo("box", (1, 1, 4), zp=0.0, scale=1.0),
                hd.OutputInfo("cls", (1, 1, 2), scale=2e36, zp=0.0)]  # 255 * 2e36 > 3.4e38
        cfg = hd.DecoderConfig(outs, [hd.Head("box", "cls", 8)], bins=1, classes=[0], score_threshold=0.5)
        d = hd.Decoder(cfg)(_SMALL_RAW)
    except ValueError:
        return  # refusing such a scale would be a fix too
    assert np.all(np.isfinite(d.scores)), f"scores {d.scores}"
    assert set(d.class_ids.tolist()) <= {0}, f"class {d.class_ids} detected outside the allow-list [0]"


@pytest.mark.parametrize("size", [(0, 640), (480, 0)])
def test_kb5_to_original_with_zero_size(size):
    d = hd.Decoder(_small_config(score_threshold=0.5))(_SMALL_RAW)
    with pytest.raises(ValueError):
        d.to_original(size)


@pytest.mark.parametrize("call", ["decode_to_hailo_nms", "to_hailo_nms_buffer"])
def test_kb6_absurd_max_per_class(call):
    # 2 * (1 + 5e15) float32 = 4e16 bytes: more than any address space, so NumPy fails at once
    with pytest.raises(ValueError):  # refused when the config is built
        dec = hd.Decoder(_small_config(max_per_class=10**15))
        if call == "decode_to_hailo_nms":
            dec.decode_to_hailo_nms(_SMALL_RAW)
        else:
            dec(_SMALL_RAW).to_hailo_nms_buffer()


@pytest.mark.parametrize("output", ["empty_class_as_list", "frame_of_lists", "deep"])
def test_kb7_decode_hailo_nms_nested_lists(output):
    if output == "empty_class_as_list":  # one frame, class 0 empty as [] (today: ValueError, misread as a batch)
        d = hd.decode_hailo_nms([[], np.array([[0.1, 0.1, 0.2, 0.2, 0.9]], np.float32)], num_classes=2)
        assert isinstance(d, hd.Detections) and d.class_ids.tolist() == [1]
    elif output == "frame_of_lists":  # a batch of one frame, its two classes given as Python lists
        res = hd.decode_hailo_nms([[[], [[0.1, 0.1, 0.2, 0.2, 0.9]]]])
        assert isinstance(res, list) and all(isinstance(d, hd.Detections) for d in res), repr(res)
        assert len(res) == 1 and len(res[0]) == 1
    else:
        x: list = []
        for _ in range(5000):
            x = [x]
        with pytest.raises((ValueError, TypeError)):
            hd.decode_hailo_nms(x)


@pytest.mark.parametrize("patch", [dict(stride=float("inf")), dict(image_dims=[]), dict(image_dims={}),
                                   dict(max_proposals_per_class=float("inf"))])
def test_kb8_from_nms_json_odd_numbers(patch):
    outs = [hd.OutputInfo("n/box", (2, 2, 64), zp=0.0, scale=1.0), hd.OutputInfo("n/cls", (2, 2, 3), zp=0.0, scale=1.0)]
    doc = {"bbox_decoders": [{"reg_layer": "box", "cls_layer": "cls", "stride": patch.get("stride", 8)}]}
    doc.update({k: v for k, v in patch.items() if k != "stride"})
    with pytest.raises(ValueError):
        hd.DecoderConfig.from_nms_json(doc, outputs=outs)


@pytest.mark.parametrize("value", [np.array(5, np.uint8), "abc"])
def test_kb9_diagnose_zero_d_device_buffer(value):
    box = hd.OutputInfo("b", (1, 1, 4), device=True, padded_shape=(1, 1, 8), zp=0.0, scale=1.0)
    cfg = hd.DecoderConfig([box, hd.OutputInfo("c", (1, 1, 1), zp=0.0, scale=1.0)], [hd.Head("b", "c", 8)], bins=1)
    with pytest.raises((ValueError, TypeError)):
        hd.Decoder(cfg).diagnose({"b": value, "c": np.zeros((1, 1, 1), np.uint8)})


def test_clean_exceptions_are_what_the_rule_says():
    assert CLEAN == (ValueError, TypeError) and issubclass(hd.HefError, ValueError)
