"""The decoder against the independent NumPy reference (reference_decoder.py) on randomized but
realistic frames (random_cases.py): every dtype, host and device order with padding, per-tensor
and per-channel quantization, 1..8 classes, 1 or 16 bins, both activations, and random NMS
settings (>= or >, multi-label or best class, agnostic, caps, HailoRT or stable ties, box format).
Every case runs on every kernel path this machine has; all must give the reference's output, in
the reference's order."""

from __future__ import annotations

import numpy as np
import pytest

import hailo_decode as hd
import random_cases as rc
import reference_decoder as ref
from hailo_decode import _core

PATHS = _core.simd_info()["available"]


def to_config(spec: dict) -> hd.DecoderConfig:
    outputs = []
    for name, o in spec["outputs"].items():
        device = o["layout"] == "device"
        outputs.append(hd.OutputInfo(name, tuple(o["shape"]), o["dtype"], o["order"], zp=o["zp"], scale=o["scale"],
                                     padded_shape=tuple(o["padded_shape"]) if device else None, device=device))
    heads = [hd.Head(h["box"], h["cls"], h["stride"]) for h in spec["heads"]]
    s = ref.resolve_spec(spec)
    th = s["score_threshold"]
    return hd.DecoderConfig(
        outputs, heads, image_size=tuple(s["image_size"]), class_activation=s["activation"],
        score_threshold=float(th) if np.ndim(th) == 0 else [float(v) for v in th], score_test=s["score_test"],
        iou_threshold=float(s["iou_threshold"]), iou_test=s["iou_test"], multi_label=bool(s["multi_label"]),
        agnostic=bool(s["agnostic"]), max_per_class=s["max_per_class"], max_total=s["max_total"],
        max_candidates=s["max_candidates"], tie_break=s["tie_break"],
        box_format=f"{s['box_order']}_{'normalized' if s['normalized'] else 'pixels'}")


def to_arrays(cfg: hd.DecoderConfig, outputs: dict) -> dict:
    """The generator's buffers in the shapes HailoRT hands out: shaped host arrays, raw device
    frames trimmed to the frame size HailoRT allocates (the generator may add trailing slack)."""
    arrays = {}
    for o in cfg.outputs:
        a = np.ascontiguousarray(outputs[o.name]).reshape(-1)
        if o.device:
            arrays[o.name] = np.ascontiguousarray(a[:o.frame_elements])
        else:
            h, w, c = o.shape
            arrays[o.name] = a.reshape((c, h, w) if o.order == "NCHW" else (h, w, c))
    return arrays


def check_case(outputs: dict, spec: dict) -> int:
    rb, rs, rc_ = ref.reference_decode(outputs, spec)
    cfg = to_config(spec)
    arrays = to_arrays(cfg, outputs)
    px = cfg.box_format.endswith("pixels")
    best = _core.simd_info()["active"]
    try:
        for path in PATHS:
            _core.select_simd(path)
            det = hd.Decoder(cfg)(arrays)
            assert len(det) == len(rs), f"{path}: {len(det)} detections, reference {len(rs)}"
            np.testing.assert_array_equal(det.class_ids, rc_, err_msg=path)
            np.testing.assert_allclose(det.scores, rs, rtol=2e-6, atol=0, err_msg=path)
            np.testing.assert_allclose(det.boxes, rb, rtol=0, atol=2e-3 if px else 5e-6, err_msg=path)
    finally:
        _core.select_simd(best)
    return len(rs)


COMBOS = [(dtype, layout, per_channel, activation)
          for dtype in ("uint8", "uint16", "float32")
          for layout in ("host", "device")
          for per_channel in (False, True)
          for activation in ("none", "sigmoid")]


@pytest.mark.parametrize("dtype, layout, per_channel, activation", COMBOS)
def test_matches_reference(dtype, layout, per_channel, activation):
    rng = np.random.default_rng(abs(hash((dtype, layout, per_channel, activation))) % 2**32)
    found = 0
    for i in range(6):
        outputs, spec = rc.make_case(rng, dtype=dtype, layout=layout, per_channel=per_channel, activation=activation,
                                     num_classes=[1, 3, 8][i % 3], bins=16 if i % 4 else 1)
        found += check_case(outputs, spec)
    assert found > 0  # the cases do produce detections


@pytest.mark.parametrize("seed", range(12))
def test_matches_reference_mixed_layouts(seed):
    """Box and class tensors in different dtypes, layouts and orders within one model."""
    rng = np.random.default_rng(1000 + seed)
    outputs, spec = rc.make_case(rng, dtype=rc.DTYPES, layout=("host", "device"), order=rc.RANDOM,
                                 per_channel=bool(seed % 2), activation=("none", "sigmoid")[seed % 2],
                                 num_classes=int(rng.integers(1, 9)))
    check_case(outputs, spec)


def test_hailort_ties_differ_from_stable():
    """On tied scores the two tie-breaks really give different outputs, and each matches its
    reference (std::sort through the oracle; stable)."""
    rng = np.random.default_rng(7)
    differ = 0
    for _ in range(20):
        outputs, spec = rc.make_case(rng, dtype="uint8", layout="host", tie_break="hailort", num_classes=1,
                                     multi_label=True, agnostic=False, max_candidates=None, max_per_class=None,
                                     max_total=None)
        check_case(outputs, spec)
        stable = dict(spec, tie_break="stable")
        check_case(outputs, stable)
        a = ref.reference_decode(outputs, spec)
        b = ref.reference_decode(outputs, stable)
        differ += len(a[0]) != len(b[0]) or not np.array_equal(a[0], b[0])
    assert differ > 0
