"""Masks at the original image size (Detections.to_original(orig_hw).masks) against Ultralytics
8.4.190's retina_masks=True path, stored by scripts/make_retina_reference.py in
tests/fixtures/seg_retina_yolo11n.npz (ops.scale_boxes, then ops.process_mask_native, for the
transplant seg fixture's float heads at conf 0.05, for five original sizes letterboxed into the
640 x 640 input: 480x640 (process_mask_native samples the prototype grid once), 427x640 and
854x1280 (4x upsampling first, then the letterbox content cropped and resized to the original:
by 1 and by 2), 636x640 (2x first), 240x320 (once, upscaled)). Also against a plain NumPy
reference of the same steps (seg_reference.process_mask_native), which is itself checked against
the stored Ultralytics masks.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import hailo_decode as hd

from seg_reference import iou, process_mask_native

FIXTURES = Path(__file__).resolve().parent / "fixtures"
HEADS = FIXTURES / "seg_transplant_yolo11n.npz"
RETINA = FIXTURES / "seg_retina_yolo11n.npz"
pytestmark = pytest.mark.skipif(not (HEADS.exists() and RETINA.exists()), reason="seg fixtures absent")
STRIDES = (8, 16, 32)
SIZES = ["480x640", "427x640", "636x640", "854x1280", "240x320"]


@pytest.fixture(scope="module")
def data():
    fx, ref = dict(np.load(HEADS)), dict(np.load(RETINA))
    infos, raw = [], {}
    for s in STRIDES:
        for k in ("box", "cls", "mask"):
            raw[f"{k}{s}"] = fx[f"f0_{k}_{s}"]
            infos.append(hd.OutputInfo(f"{k}{s}", raw[f"{k}{s}"].shape, "float32"))
    raw["proto"] = fx["f0_proto"]
    infos.append(hd.OutputInfo("proto", raw["proto"].shape, "float32"))
    d = hd.Decoder(hd.DecoderConfig(infos, semantics="ultralytics", score_threshold=0.05))(raw)
    return d, ref, fx["f0_proto"]


def _ultra(ref, tag):
    h, w = (int(v) for v in ref[f"{tag}/orig_hw"])
    return (h, w), ref[f"{tag}/boxes"], np.unpackbits(ref[f"{tag}/masks"], axis=-1)[..., :w].astype(bool)


def test_same_detections_as_the_reference(data):
    d, ref, _ = data
    assert len(d) == len(ref["scores"]) == 6
    np.testing.assert_allclose(d.scores, ref["scores"], rtol=1e-5)
    np.testing.assert_allclose(d.boxes_as("xyxy_pixels"), ref["boxes_input"], atol=1e-3)


@pytest.mark.parametrize("tag", SIZES)
def test_numpy_reference_equals_ultralytics(data, tag):
    """The NumPy reference of process_mask_native reproduces Ultralytics' stored masks from the
    stored coefficients and boxes (so it can judge ours)."""
    _, ref, proto = data
    hw, boxes, masks = _ultra(ref, tag)
    want = process_mask_native(proto, ref["coefs"], boxes, hw)
    assert want.shape == masks.shape
    assert int(np.sum(want != masks)) == 0


@pytest.mark.parametrize("tag", SIZES)
def test_to_original_masks_equal_retina_masks(data, tag):
    d, ref, proto = data
    hw, boxes, masks = _ultra(ref, tag)
    o = d.to_original(hw)
    np.testing.assert_allclose(o.boxes, boxes, atol=2e-3)  # scale_boxes: per-axis gains, clipped
    assert o.masks.shape == masks.shape
    for got, want in zip(o.masks, masks):
        assert iou(got, want) >= 0.995
    differ = int(np.sum(o.masks != masks))
    assert differ == 0, f"{differ} pixels differ from Ultralytics' retina masks at {tag}"
    # And against the NumPy reference on our own boxes.
    np_ref = process_mask_native(proto, ref["coefs"], o.boxes, hw)
    assert int(np.sum(o.masks != np_ref)) == 0


def test_native_sampling_geometry():
    """process_mask_native's choices, worked by hand for a 160 x 160 prototype grid:
    480x640: pad 160 -> 160 | 80 = 240, gcd(4, 240) = 4, up 1; content rows 20..140 at scale 0.25.
    427x640: pad 213 -> 213 | 106 = 255, up 4; the 640 x 640 grid's rows 106..533, scale 1.
    636x640: pad 4 -> 4 | 2 = 6, up 2; the 320 x 320 grid's rows 1..319 (318), scale 0.5."""
    from hailo_decode import _core

    grid = (160, 160, 640, 640)
    fields = ("sx", "ox", "sy", "oy", "height", "width", "up", "top", "left", "src_h", "src_w")
    s = dict(zip(fields, _core.mask_sampling_native(grid, 480, 640)))
    assert (s["up"], s["top"], s["left"], s["src_h"], s["src_w"], s["sy"], s["sx"]) == (1, 20, 0, 120, 160, 0.25, 0.25)
    s = dict(zip(fields, _core.mask_sampling_native(grid, 427, 640)))
    assert (s["up"], s["top"], s["left"], s["src_h"], s["src_w"], s["sy"], s["sx"]) == (4, 106, 0, 427, 640, 1.0, 1.0)
    s = dict(zip(fields, _core.mask_sampling_native(grid, 636, 640)))
    assert (s["up"], s["top"], s["src_h"], s["src_w"], s["sy"]) == (2, 1, 318, 320, 0.5)
    with pytest.raises(ValueError, match="original size"):
        _core.mask_sampling_native(grid, 0, 640)
