"""Fuzzing the head families added for issue 13: YOLOv5/YOLOv7 (AnchorHead), YOLOX (YoloxHead)
and end-to-end selection (end2end=True on DFL heads). Each example is a small spec (seed and
shape choices); buffers come from the seed. Valid specs must decode and pass the checks (class ids
in range, finite scores that pass their class's threshold, scores non-increasing, the caps, no two
kept boxes of one class overlapping past the IoU threshold under NMS, at most max_det rows
end-to-end; device NHCW and host buffers of the same values giving the same rows); faulty specs
(bad anchors, channel counts, objectness tensors, end2end on anchor heads, odd thresholds) must
give a result that passes the same checks or a ValueError/TypeError, never a crash or a hang."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import hailo_decode as hd
from reference_decoder import iou32

from .decoder_cases import fuzz_settings, watchdog

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

DTYPES = ("uint8", "uint16", "float32")


@st.composite
def family_specs(draw):
    return dict(
        kind=draw(st.sampled_from(("yolov5", "yolox", "end2end"))),
        seed=draw(st.integers(0, 2**31 - 1)),
        dtype=draw(st.sampled_from(DTYPES)),
        nc=draw(st.sampled_from((1, 2, 3, 17, 80))),
        anchors=draw(st.integers(1, 4)),
        grids=draw(st.lists(st.integers(1, 6), min_size=1, max_size=3)),  # small: NMS without suppression is quadratic
        th=draw(st.sampled_from((0.0, 1e-45, 0.001, 0.2, 0.5, 0.999, 1.0))),
        iou=draw(st.sampled_from((0.0, 0.45, 0.7, 1.0))),
        semantics=draw(st.sampled_from(("hailort", "ultralytics"))),
        activation=draw(st.sampled_from(("none", "sigmoid"))),
        multi_label=draw(st.booleans()),
        agnostic=draw(st.booleans()),
        cap=draw(st.sampled_from((None, 0, 1, 5, 300))),
        device=draw(st.booleans()),
        box_format=draw(st.sampled_from(hd.BOX_FORMATS)),
        fault=draw(st.sampled_from((None,) * 6 + ("anchors", "channels", "objectness", "end2end", "zero_anchor"))),
    )


def _values(rng, shape, dtype):
    if dtype == "float32":
        v = rng.normal(0, 3, size=shape).astype(np.float32)
        v[rng.random(shape) < 0.05] = 0.0
        return v
    top = 255 if dtype == "uint8" else 65535
    v = rng.integers(0, top + 1, size=shape)
    v[rng.random(shape) < 0.3] = top  # saturated objectness/class values: many candidates and ties
    return v.astype(np.dtype(dtype))


def _output(name, a, dtype, rng, device):
    zp = 0.0 if dtype == "float32" else float(rng.integers(0, 4))
    scale = 1.0 if dtype == "float32" else float(rng.choice([1 / 255, 1 / 65535, 0.05, 1e-3]))
    if device and dtype != "float32":
        H, W, C = a.shape
        padded = (H, W + int(rng.integers(0, 5)), C)
        buf = np.zeros((padded[0], padded[2], padded[1]), a.dtype)
        buf[:H, :C, :W] = a.transpose(0, 2, 1)
        return hd.OutputInfo(name, a.shape, dtype, "NHCW", zp=zp, scale=scale, padded_shape=padded, device=True), buf.reshape(-1)
    return hd.OutputInfo(name, a.shape, dtype, zp=zp, scale=scale), a


def build(spec):
    rng = np.random.default_rng(spec["seed"])
    nc, dtype, fault = spec["nc"], spec["dtype"], spec["fault"]
    outputs, heads, raw, host = [], [], {}, {}
    image = 8 * math.lcm(*spec["grids"])  # every grid divides it: stride x grid = image size on every head
    for k, g in enumerate(spec["grids"]):
        stride = image // g
        if spec["kind"] == "yolov5":
            A = spec["anchors"]
            anchors = [(int(rng.integers(1, 400)), int(rng.integers(1, 400))) for _ in range(A)]
            if fault == "zero_anchor" and k == 0:
                anchors[0] = (0, 5)
            C = A * (5 + nc) + (1 if fault == "channels" and k == 0 else 0)
            a = _values(rng, (g, g, C), dtype)
            o, b = _output(f"n/v5_{k}", a, dtype, rng, spec["device"])
            outputs.append(o)
            raw[o.name], host[o.name] = b, a
            n_anchors = A + 1 if fault == "anchors" and k == 0 else A
            heads.append((hd.AnchorHead, (o.name, anchors[:1] * n_anchors if fault == "anchors" else anchors, stride)))
        else:
            box_c = 4 if spec["kind"] == "yolox" or spec["anchors"] % 2 else 64
            parts = [("reg" if spec["kind"] == "yolox" else "box", box_c)]
            if spec["kind"] == "yolox":
                parts.append(("obj", 2 if fault == "objectness" and k == 0 else 1))
            parts.append(("cls", nc))
            names = []
            for role, c in parts:
                a = _values(rng, (g, g, c), dtype)
                o, b = _output(f"n/{role}{k}", a, dtype, rng, spec["device"])
                outputs.append(o)
                raw[o.name], host[o.name] = b, a
                names.append(o.name)
            if spec["kind"] == "yolox":
                heads.append((hd.YoloxHead, (names[0], names[1], names[2], stride)))
            else:
                heads.append((hd.Head, (names[0], names[1], stride)))
    return outputs, heads, raw, host


def _check(d, cfg):
    n = len(d)
    scores = np.asarray(d.scores)
    classes = np.asarray(d.class_ids)
    assert np.all(np.isfinite(scores))
    if cfg.head_kind == "dfl":
        assert np.all(np.isfinite(np.asarray(d.boxes)))
    # (anchor heads compute boxes in HailoRT's float32 arithmetic: exp/pow of a huge offset
    # overflow to inf there as in HailoRT's op; such rows are still returned, never a crash)
    assert np.all((classes >= 0) & (classes < cfg.num_classes))
    assert np.all(np.diff(scores) <= 0)
    th = np.asarray(cfg.thresholds_per_class(), np.float32)[classes]
    assert np.all(scores >= th if cfg.score_test == ">=" else scores > th)
    if cfg.end2end:
        assert n <= (300 if cfg.max_total is None else cfg.max_total)
        return
    if cfg.max_total is not None:
        assert n <= cfg.max_total
    if cfg.max_per_class is not None and n:
        assert np.bincount(classes).max() <= cfg.max_per_class
    boxes = np.asarray(d.boxes, np.float32)
    if not np.all(np.isfinite(boxes)):
        return  # IoU of an overflowed box is not defined (NaN never suppresses)
    if cfg.box_format.startswith("yxyx"):
        boxes = boxes[:, [1, 0, 3, 2]]
    for i in range(n):
        same = np.arange(i + 1, n) if cfg.agnostic else np.flatnonzero(classes[i + 1:] == classes[i]) + i + 1
        if same.size:
            iou = iou32(boxes[i], boxes[same]).astype(np.float64)
            assert not np.any(iou >= cfg.iou_threshold if cfg.iou_test == ">=" else iou > cfg.iou_threshold)


def _yolov5_heads_valid(outputs, heads) -> bool:
    """What the API documents as a valid YOLOv5 head set: positive anchors, A x (5 + nc) channels
    with nc >= 1, one nc for every head."""
    by_name = {o.name: o for o in outputs}
    classes = set()
    for h in heads:
        C, A = by_name[h.box].channels, len(h.anchors)
        if C % A or C // A < 6 or min(min(a) for a in h.anchors) <= 0:
            return False
        classes.add(C // A - 5)
    return len(classes) == 1


@fuzz_settings(150)
@given(family_specs())
def test_fuzz_head_families(spec):
    outputs, heads, raw, host = build(spec)
    kw = dict(semantics=spec["semantics"], class_activation=spec["activation"], score_threshold=spec["th"],
              iou_threshold=spec["iou"], multi_label=spec["multi_label"], agnostic=spec["agnostic"],
              max_per_class=spec["cap"], box_format=spec["box_format"])
    if spec["kind"] == "end2end" or spec["fault"] == "end2end":
        kw.update(end2end=True, max_total=spec["cap"])
    with watchdog():
        try:
            head_objs = [cls(*args) for cls, args in heads]
            cfg = hd.DecoderConfig(outputs, head_objs, **kw)
            dec = hd.Decoder(cfg)
        except (ValueError, TypeError):
            return
        # a fault in the config that must have been refused
        if spec["kind"] == "yolov5":  # a fault may still leave a valid head (an extra channel = one more class)
            assert _yolov5_heads_valid(outputs, head_objs), spec
        assert not (spec["kind"] == "yolox" and spec["fault"] == "objectness"), spec
        assert not (spec["kind"] != "end2end" and spec["fault"] == "end2end"), spec
        d = dec(raw)
        _check(d, cfg)
        if spec["device"] and spec["dtype"] != "float32":  # the same values as dense host buffers
            host_outputs = [hd.OutputInfo(o.name, o.shape, o.dtype, zp=o.zp, scale=o.scale) for o in outputs]
            e = hd.Decoder(hd.DecoderConfig(host_outputs, head_objs, **kw))(host)
            np.testing.assert_array_equal(d.scores, e.scores)
            np.testing.assert_array_equal(d.boxes, e.boxes)
            np.testing.assert_array_equal(d.class_ids, e.class_ids)


def _three_classes_one_threshold(core) -> None:
    """A class count the tensor's channels do not fit, with a threshold count that fits any."""
    core.num_classes = 3
    settings = core.settings
    settings.score_threshold = [0.2]
    core.settings = settings


def test_core_refuses_bad_anchor_specs():
    """The C++ validation (not only Python's) refuses inconsistent anchor-head specs."""
    from hailo_decode import _core
    from hailo_decode.decoder import _core_config
    rng = np.random.default_rng(0)
    a = _values(rng, (4, 4, 3 * 7), "uint8")
    cfg = hd.DecoderConfig([hd.OutputInfo("t", a.shape, zp=0.0, scale=1.0)], [hd.AnchorHead("t", [(1, 2)] * 3, 8)])
    for mutate, msg in ((lambda c: setattr(c.heads[0], "anchors", [1, 2, 3]), "pairs"),
                        (lambda c: setattr(c.heads[0], "anchors", [1, -2] * 3), "positive"),
                        (_three_classes_one_threshold, "channels must be anchors"),
                        (lambda c: setattr(c.settings, "end2end", True), "end2end")):
        core = _core_config(cfg)
        if msg in ("pairs", "positive"):  # pybind11 hands out copies of list elements: set them back
            h = core.heads[0]
            h.anchors = [1, 2, 3] if msg == "pairs" else [1, -2] * 3
            core.heads = [h]
        else:
            mutate(core)
        with pytest.raises(ValueError, match=msg):
            _core.Decoder(core, 1)
