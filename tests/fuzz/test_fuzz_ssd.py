"""Fuzzing the input kinds added for issue 34: SSD heads (SsdHead: reg A x 4, cls A x classes with
or without a background class, float anchors, the box coding) and the yolov5_bbox_only form
(written by decode_to_hailo_nms(format="bbox_only") for YOLOv5 heads, read by decode_hailo_nms(...,
bbox_op="yolov5")). Valid specs must decode and pass test_fuzz_families' checks (class ids in range,
finite scores passing their threshold, scores non-increasing, the caps, no two kept boxes of one
class overlapping past the IoU threshold), device NHCW and host buffers of the same values giving
the same rows, and the BY_CLASS frame read back giving the rows; faulty specs (channel counts, bad
anchors, a background in the middle, a broken coding) must give a ValueError/TypeError, never a
crash or a hang. The bbox-only form: its rows read back equal the Decoder's detections."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import hailo_decode as hd

from .decoder_cases import fuzz_settings, watchdog
from .test_fuzz_families import DTYPES, _check, _output, _values

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


@st.composite
def ssd_specs(draw):
    return dict(
        seed=draw(st.integers(0, 2**31 - 1)),
        dtype=draw(st.sampled_from(DTYPES)),
        nc=draw(st.sampled_from((1, 2, 5, 17))),
        background=draw(st.sampled_from(("none", "first", "last"))),
        anchors=draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)),
        grids=draw(st.lists(st.integers(1, 6), min_size=3, max_size=3)),
        th=draw(st.sampled_from((0.0, 1e-45, 0.001, 0.2, 0.5, 0.999, 1.0))),
        iou=draw(st.sampled_from((0.0, 0.45, 0.7, 1.0))),
        activation=draw(st.sampled_from(("none", "none", "sigmoid"))),
        multi_label=draw(st.booleans()),
        cap=draw(st.sampled_from((None, 0, 1, 5, 300))),
        device=draw(st.booleans()),
        scales=draw(st.sampled_from(((10.0, 5.0), (1.0, 1.0), (0.5, 100.0)))),
        order=draw(st.sampled_from(("yxhw", "xywh", "hwyx"))),
        box_format=draw(st.sampled_from(hd.BOX_FORMATS)),
        fault=draw(st.sampled_from((None,) * 6 + ("channels", "anchor", "bg_middle", "scale", "order"))),
    )


def build_ssd(spec):
    rng = np.random.default_rng(spec["seed"])
    nc, dtype, fault = spec["nc"], spec["dtype"], spec["fault"]
    per = nc + (0 if spec["background"] == "none" else 1)
    bg = {"none": None, "first": 0, "last": per - 1}[spec["background"]]
    if fault == "bg_middle":
        bg = per // 2 if per > 2 else per + 3
    outputs, heads, raw, host = [], [], {}, {}
    for k, (A, g) in enumerate(zip(spec["anchors"], spec["grids"])):
        names = []
        for role, c in (("reg", 4 * A), ("cls", A * per + (1 if fault == "channels" and k == 0 else 0))):
            a = _values(rng, (g, g, c), dtype)
            o, b = _output(f"s/{role}{k}", a, dtype, rng, spec["device"])
            outputs.append(o)
            raw[o.name], host[o.name] = b, a
            names.append(o.name)
        anchors = [(float(rng.uniform(0.01, 1.8)), float(rng.uniform(0.01, 1.8))) for _ in range(A)]
        if fault == "anchor" and k == 0:
            anchors[0] = (0.0, 0.5)
        cs, ds = spec["scales"]
        if fault == "scale":
            cs = 0.0
        order = "yyhw" if fault == "order" else spec["order"]
        heads.append((names, anchors, dict(centers_scale=cs, dims_scale=ds, reg_order=order, background=bg)))
    return outputs, heads, raw, host


@fuzz_settings(150)
@given(ssd_specs())
def test_fuzz_ssd_heads(spec):
    outputs, heads, raw, host = build_ssd(spec)
    kw = dict(image_size=(300, 300), class_activation=spec["activation"], score_threshold=spec["th"],
              iou_threshold=spec["iou"], multi_label=spec["multi_label"], max_per_class=spec["cap"],
              box_format=spec["box_format"])
    with watchdog():
        try:
            head_objs = [hd.SsdHead(n[0], n[1], a, **c) for n, a, c in heads]
            cfg = hd.DecoderConfig(outputs, head_objs, **kw)
            dec = hd.Decoder(cfg)
        except (ValueError, TypeError):
            if spec["fault"] is None:
                raise
            return
        # Every fault here must be refused, except one more class channel on a lone head of one
        # anchor: that is a valid head of one more class.
        assert spec["fault"] is None or (spec["fault"] == "channels" and len(heads) == 1 and spec["anchors"][0] == 1), spec
        d = dec(raw)
        _check(d, cfg)
        if spec["device"] and spec["dtype"] != "float32":  # the same values as dense host buffers
            host_outputs = [hd.OutputInfo(o.name, o.shape, o.dtype, zp=o.zp, scale=o.scale) for o in outputs]
            e = hd.Decoder(hd.DecoderConfig(host_outputs, head_objs, **kw))(host)
            np.testing.assert_array_equal(d.scores, e.scores)
            np.testing.assert_array_equal(d.boxes, e.boxes)
            np.testing.assert_array_equal(d.class_ids, e.class_ids)
        if spec["cap"] and spec["box_format"] == "yxyx_normalized" and len(d):  # BY_CLASS round trip
            frame = dec.decode_to_hailo_nms(raw)
            back = hd.decode_hailo_nms(frame, num_classes=cfg.num_classes, max_per_class=spec["cap"])
            assert len(back) == len(d)
            assert sorted(np.asarray(back.scores).tolist()) == sorted(np.asarray(d.scores).tolist())


@st.composite
def v5_bbox_specs(draw):
    return dict(
        seed=draw(st.integers(0, 2**31 - 1)),
        dtype=draw(st.sampled_from(DTYPES)),
        nc=draw(st.sampled_from((1, 2, 7))),
        anchors=draw(st.integers(1, 3)),
        grids=draw(st.lists(st.integers(1, 5), min_size=1, max_size=3)),
        th=draw(st.sampled_from((0.001, 0.2, 0.5, 0.999))),
        iou=draw(st.sampled_from((0.0, 0.45, 1.0))),
        device=draw(st.booleans()),
        frames=draw(st.sampled_from((None, 1, 2))),
    )


@fuzz_settings(100)
@given(v5_bbox_specs())
def test_fuzz_yolov5_bbox_only_form(spec):
    """Written rows read back with NMS here equal the Decoder's own detections (hailort preset);
    the same rows as float32 at any layout."""
    rng = np.random.default_rng(spec["seed"])
    nc, A = spec["nc"], spec["anchors"]
    outputs, heads, raw = [], [], {}
    image = 8 * int(np.lcm.reduce(spec["grids"]))
    for k, g in enumerate(spec["grids"]):
        a = _values(rng, (g, g, A * (5 + nc)), spec["dtype"])
        if spec["dtype"] == "float32":
            a = np.abs(a) / np.float32(10)  # (scores in [0, 1]: the op's inputs are sigmoid outputs)
        o, b = _output(f"n/v5_{k}", a, spec["dtype"], rng, spec["device"] and spec["frames"] is None)
        outputs.append(o)
        raw[o.name] = b if spec["frames"] is None else np.stack([b] * spec["frames"])
        heads.append(hd.AnchorHead(o.name, [(int(rng.integers(1, 300)), int(rng.integers(1, 300)))] * A, image // g))
    kw = dict(score_threshold=spec["th"], iou_threshold=spec["iou"], max_per_class=100)
    with watchdog():
        cfg = hd.DecoderConfig(outputs, heads, image_size=(image, image), **kw)
        dec = hd.Decoder(cfg)
        rows = dec.decode_to_hailo_nms(raw, format="bbox_only")
        assert rows.dtype == np.float32 and rows.shape[-1] == 5 + nc
        if not np.isfinite(rows).all():  # pow of a huge offset overflows in the op's float32 too
            with pytest.raises(ValueError, match="non-finite"):
                hd.decode_hailo_nms(rows, format="bbox_only", bbox_op="yolov5", **kw)
            return
        back = hd.decode_hailo_nms(rows, format="bbox_only", bbox_op="yolov5", **kw)
        direct = dec(raw)
        for b, d in zip(back if isinstance(back, list) else [back], direct if isinstance(direct, list) else [direct]):
            np.testing.assert_array_equal(b.scores, d.scores)
            np.testing.assert_array_equal(b.boxes, d.boxes)
            np.testing.assert_array_equal(b.class_ids, d.class_ids)
