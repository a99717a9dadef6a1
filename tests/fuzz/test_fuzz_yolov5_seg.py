"""Fuzzing YOLOv5/YOLOv7-seg heads (FUZZING.md): random small configs (input 32..128, 1-4 classes,
uint8/uint16, host and raw device layouts, 1-3 anchors, thresholds, caps and mask budgets from 0,
mask thresholds beyond [0, 1], HailoRT 4.23, 5.1 and 5.2); the op's byte-mask frame must equal the NumPy
transliteration of the op of that version byte for byte (tests/hailort_seg_op.py), whatever the boxes do at the edges; Detections
come out under both presets; broken configs give ValueError/TypeError."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import hailo_decode as hd
from hailort_anchor_ops import to_device_nhcw
from hailort_seg_op import yolov5_seg_op

from .decoder_cases import fuzz_settings

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


@st.composite
def yolov5_seg_specs(draw):
    return dict(seed=draw(st.integers(0, 2**31 - 1)), image=draw(st.sampled_from([32, 64, 96, 128])),
                nc=draw(st.integers(1, 4)), dtype=draw(st.sampled_from(["uint8", "uint16"])),
                anchors=draw(st.integers(1, 3)), device=draw(st.lists(st.booleans(), min_size=4, max_size=4)),
                obj_rate=draw(st.sampled_from([0.0, 0.05, 0.3, 1.0])), th=draw(st.sampled_from([0.0, 0.2, 0.5, 0.95])),
                iou=draw(st.sampled_from([0.0, 0.45, 1.0])), max_total=draw(st.integers(0, 30)),
                budget=draw(st.sampled_from([0, 1, 50, 2000, None])),
                mask_threshold=draw(st.sampled_from([-1.0, 0.0, 0.5, 0.999, 2.0])),
                anchor_scale=draw(st.sampled_from([0.2, 1.0, 4.0])),
                version=draw(st.sampled_from(["4.23", "5.1", "5.2"])))


def _build(spec):
    rng = np.random.default_rng(spec["seed"])
    image, nc, A = spec["image"], spec["nc"], spec["anchors"]
    top = 255 if spec["dtype"] == "uint8" else 65535
    npd = np.uint8 if spec["dtype"] == "uint8" else np.uint16
    zp, scale = (top + 1) / 2, 10.0 / (top + 1)
    e = 5 + nc + 32
    tensors, quant, anchors, outputs, raw, heads = {}, {}, {}, [], {}, []
    for k, stride in enumerate((8, 16, 32)):
        g = image // stride
        name = f"s/conv{60 - k}"  # map order differs from stride order
        x = rng.integers(0, top + 1, size=(g, g, A * e))
        obj = np.where(rng.random((g, g, A)) < spec["obj_rate"], top, rng.integers(0, int(zp), (g, g, A)))
        x[..., 4::e] = obj
        x = x.astype(npd)
        anc = [(max(1, int(rng.integers(4, 40) * spec["anchor_scale"])), max(1, int(rng.integers(4, 40) * spec["anchor_scale"])))
               for _ in range(A)]
        tensors[name], quant[name], anchors[name] = x, (zp, scale), anc
        if spec["device"][k]:
            padded = (g, g + 8, A * e)
            raw[name] = to_device_nhcw(x, padded)
            outputs.append(hd.OutputInfo(name, x.shape, spec["dtype"], "NHCW", zp=zp, scale=scale, padded_shape=padded,
                                         device=True))
        else:
            raw[name] = x
            outputs.append(hd.OutputInfo(name, x.shape, spec["dtype"], zp=zp, scale=scale))
        heads.append(hd.AnchorHead(name, anc, stride))
    pg = image // 4
    p = rng.integers(0, top + 1, size=(pg, pg, 32)).astype(npd)
    if spec["device"][3]:
        padded = (pg, pg + 8, 32)
        raw["s/proto"] = to_device_nhcw(p, padded)
        outputs.append(hd.OutputInfo("s/proto", p.shape, spec["dtype"], "NHCW", zp=zp, scale=scale / 2,
                                     padded_shape=padded, device=True))
    else:
        raw["s/proto"] = p
        outputs.append(hd.OutputInfo("s/proto", p.shape, spec["dtype"], zp=zp, scale=scale / 2))
    return tensors, quant, anchors, outputs, raw, heads, p, (zp, scale / 2)


@fuzz_settings(25)
@given(yolov5_seg_specs())
# Found by a random run: a box across the bottom edge (its last row H read past the op's buffer)
# with mask_threshold < 0, where the writer put byte 0 and the op's model compares the value 0.0.
@example(dict(seed=0, image=32, nc=4, dtype="uint8", anchors=1, device=[False] * 4, obj_rate=0.0, th=0.0, iou=0.0,
              max_total=3, budget=0, mask_threshold=-1.0, anchor_scale=0.2))
def test_fuzz_yolov5_seg_frames_equal_the_op(spec):
    tensors, quant, anchors, outputs, raw, heads, proto, pq = _build(spec)
    image = spec["image"]
    cfg = hd.DecoderConfig(outputs, heads, proto="s/proto", image_size=(image, image), score_threshold=spec["th"],
                           iou_threshold=spec["iou"])
    dec = hd.Decoder(cfg)
    budget = 2 * image * image if spec["budget"] is None else spec["budget"]
    version = spec.get("version", "4.23")
    size = hd.formats.byte_mask.byte_mask_frame_size(spec["max_total"], budget, hailort_version=version)
    out = np.zeros(size, np.uint8)
    dec.decode_to_hailo_nms(raw, out, format="byte_mask", max_bboxes_total=spec["max_total"], mask_budget=budget,
                            mask_threshold=spec["mask_threshold"], hailort_version=version)
    want, _ = yolov5_seg_op(tensors, quant, anchors, proto, pq, num_classes=spec["nc"], score_th=spec["th"],
                            iou_th=spec["iou"], max_total=spec["max_total"], mask_threshold=spec["mask_threshold"],
                            image_hw=(image, image), buffer_size=size, buffer_address=out.ctypes.data,
                            version=version)
    assert np.array_equal(out, want), int((out != want).sum())
    # Detections under both presets: masks inside the input, one per detection.
    for semantics in ("hailort", "ultralytics"):
        d = hd.Decoder(cfg.replace(semantics=semantics))(raw)
        assert d.masks is not None and d.masks.shape == (len(d), image, image)


@fuzz_settings(40)
@given(yolov5_seg_specs(), st.sampled_from(["channels", "proto_channels", "proto_grid", "nan", "budget", "max_total",
                                            "threshold"]))
def test_fuzz_yolov5_seg_faults(spec, fault):
    tensors, quant, anchors, outputs, raw, heads, proto, pq = _build(spec)
    image = spec["image"]
    kw = {}
    if fault == "channels":
        o = outputs[0]
        outputs[0] = hd.OutputInfo(o.name, (o.shape[0], o.shape[1], o.shape[2] - 1), "uint8", zp=0, scale=1)
    elif fault == "proto_channels":
        o = outputs[-1]
        outputs[-1] = hd.OutputInfo(o.name, (o.shape[0], o.shape[1], 16), "uint8", zp=0, scale=1)
    elif fault == "proto_grid":
        o = outputs[-1]
        outputs[-1] = hd.OutputInfo(o.name, (o.shape[0] + 1, o.shape[1], 32), "uint8", zp=0, scale=1)
    elif fault == "nan":
        outputs = [hd.OutputInfo(o.name, o.shape, "float32") for o in outputs]
        raw = {k: np.full(o.shape, np.nan, np.float32) for k, o in zip(raw, outputs)}
    elif fault == "budget":
        kw["mask_budget"] = -1
    elif fault == "max_total":
        kw["max_bboxes_total"] = 70000
    else:
        kw["mask_threshold"] = float("nan")
    try:
        cfg = hd.DecoderConfig(outputs, heads, proto="s/proto", image_size=(image, image))
        hd.Decoder(cfg).decode_to_hailo_nms(raw, format="byte_mask", **kw)
    except (ValueError, TypeError):
        return
    raise AssertionError(f"fault {fault!r} was not refused")
