"""Fuzzing the pairing of outputs into heads (the C++ core's setup::pair_outputs, through
DecoderConfig): random output shape sets, most of them a model's (detection, pose, OBB,
segmentation, YOLOv5, YOLOX) with one or two things changed (an output dropped, added, renamed to
another's name, a channel count or grid changed), and head lists that are right, slightly wrong
(a name, a stride, a family, a missing task output) or random, with random task, bins,
keypoint_dims, proto, proto_stride and image_size. Every outcome is a ValueError/TypeError or a
config that holds together: every output in exactly one head, stride x grid = image size on every
head, the channel counts the decoder reads, and the core's Decoder accepting it."""

from __future__ import annotations

from typing import Any, Dict, List

import pytest
from hypothesis import given
from hypothesis import strategies as st

import hailo_decode as hd

from .decoder_cases import fuzz_settings, watchdog

FAMILIES = ("detect", "pose", "obb", "segment", "yolov5", "yolox", "random")
STRIDE_VALUES = (None, None, 8, 16, 32, 0, -8, 3, 2**40, 8.0, "8", [8])


def _model(draw, family: str) -> Dict[str, Any]:
    """Outputs [(name, (h, w, c))] and the heads that describe them ([(kind, fields)])."""
    n = draw(st.integers(1, 3))
    a, b = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    s0 = draw(st.sampled_from((8, 8, 4, 16, 1, 3)))
    nc = draw(st.sampled_from((1, 2, 3, 4, 15, 51, 64, 80)))
    box = 4 * draw(st.sampled_from((16, 16, 1, 4, 2)))
    kpt = draw(st.sampled_from((51, 15, 6, 3)))
    outs: List[Any] = []
    heads: List[Any] = []
    for k in range(n):
        g = (a * 2 ** (n - 1 - k), b * 2 ** (n - 1 - k))
        stride = s0 * 2 ** k
        if family == "yolov5":
            anchors = draw(st.integers(1, 4))
            outs.append((f"t{k}", g + (anchors * (5 + nc),)))
            heads.append(("yolov5", dict(box=f"t{k}", anchors=[(10 + k, 13 + k)] * anchors, stride=stride)))
            continue
        if family == "yolox":
            outs += [(f"reg{k}", g + (4,)), (f"obj{k}", g + (1,)), (f"cls{k}", g + (nc,))]
            heads.append(("yolox", dict(box=f"reg{k}", obj=f"obj{k}", cls=f"cls{k}", stride=stride)))
            continue
        outs += [(f"box{k}", g + (box,)), (f"cls{k}", g + (nc,))]
        fields: Dict[str, Any] = dict(box=f"box{k}", cls=f"cls{k}", stride=stride)
        if family == "pose":
            outs.append((f"kpt{k}", g + (kpt,)))
            fields["kpt"] = f"kpt{k}"
        elif family == "obb":
            outs.append((f"ang{k}", g + (1,)))
            fields["angle"] = f"ang{k}"
        elif family == "segment":
            outs.append((f"mask{k}", g + (32,)))
            fields["mask"] = f"mask{k}"
        heads.append(("dfl", fields))
    proto = None
    if family == "segment":
        proto = "proto"
        outs.append(("proto", (2 * a * 2 ** (n - 1), 2 * b * 2 ** (n - 1), 32)))
    # The prototype is twice as fine as the finest grid: image / proto grid = s0 / 2 (4 for s0 = 8).
    return dict(outputs=outs, heads=heads, proto=proto, image=(a * 2 ** (n - 1) * s0, b * 2 ** (n - 1) * s0),
                proto_stride=s0 // 2 if s0 % 2 == 0 else None)


@st.composite
def pairing_specs(draw):
    family = draw(st.sampled_from(FAMILIES))
    if family == "random":
        names = [f"o{i}" for i in range(draw(st.integers(1, 7)))]
        grids = draw(st.lists(st.tuples(st.integers(1, 8), st.integers(1, 8)), min_size=1, max_size=3))
        outs = [(nm, draw(st.sampled_from(grids)) + (draw(st.sampled_from((1, 4, 16, 32, 51, 64, 80, 85, 255))),))
                for nm in names]
        model = dict(outputs=outs, heads=[], proto=None, image=None, proto_stride=None)
    else:
        model = _model(draw, family)
    outs = [list(o) for o in model["outputs"]]
    changes = ("drop", "add", "rename", "channels", "grid", "shuffle")
    for change in draw(st.lists(st.sampled_from((None,) * 6 + changes), max_size=2)):
        if change == "drop" and len(outs) > 1:
            outs.pop(draw(st.integers(0, len(outs) - 1)))
        elif change == "add":
            outs.append([f"extra{len(outs)}", (draw(st.integers(1, 8)), draw(st.integers(1, 8)), draw(st.integers(1, 90)))])
        elif change == "rename" and len(outs) > 1:
            outs[1][0] = outs[0][0]  # two outputs of one name
        elif change == "channels":
            i = draw(st.integers(0, len(outs) - 1))
            outs[i][1] = outs[i][1][:2] + (draw(st.integers(1, 300)),)
        elif change == "grid":
            i = draw(st.integers(0, len(outs) - 1))
            outs[i][1] = (draw(st.integers(1, 16)), draw(st.integers(1, 16)), outs[i][1][2])
        elif change == "shuffle":
            outs = draw(st.permutations(outs))
    names = [o[0] for o in outs] + ["nope"]
    heads_mode = draw(st.sampled_from(("shape", "shape", "given", "given", "mutated", "random")))
    heads: Any = None
    if heads_mode in ("given", "mutated") and model["heads"]:
        heads = [[kind, dict(fields)] for kind, fields in model["heads"]]
        if heads_mode == "mutated":
            for _ in range(draw(st.integers(1, 2))):
                h = heads[draw(st.integers(0, len(heads) - 1))]
                what = draw(st.sampled_from(("name", "stride", "kind", "task_output", "drop", "anchors")))
                if what == "name":
                    h[1][draw(st.sampled_from(sorted(h[1].keys() - {"stride", "anchors"})))] = draw(st.sampled_from(names))
                elif what == "stride":
                    h[1]["stride"] = draw(st.sampled_from(STRIDE_VALUES))
                elif what == "kind":
                    h[0] = draw(st.sampled_from(("dfl", "yolov5", "yolox")))
                elif what == "task_output" and h[0] == "dfl":
                    h[1][draw(st.sampled_from(("kpt", "angle", "mask")))] = draw(st.sampled_from(names + [None]))
                elif what == "drop" and len(heads) > 1:
                    heads.remove(h)
                elif what == "anchors":
                    h[1]["anchors"] = draw(st.sampled_from(([], [(0, 1)], [(1, 1)] * 7, [(10, 13), (16, 30)])))
    elif heads_mode == "random":
        heads = [[draw(st.sampled_from(("dfl", "yolov5", "yolox"))),
                  dict(box=draw(st.sampled_from(names)), cls=draw(st.sampled_from(names)), obj=draw(st.sampled_from(names)),
                       stride=draw(st.sampled_from(STRIDE_VALUES)), anchors=[(10, 13)])]
                 for _ in range(draw(st.integers(0, 3)))]
    # Options: mostly what fits the model, sometimes one odd value.
    image = model["image"]
    opts: Dict[str, Any] = dict(image_size=draw(st.sampled_from((None, image))), task=None, bins=None, keypoint_dims=None,
                                proto=model["proto"] if draw(st.booleans()) else None,
                                proto_stride=draw(st.sampled_from((4, None, model["proto_stride"]))))
    if family in ("pose", "obb") and draw(st.booleans()):
        opts["task"] = family
    odd = draw(st.sampled_from((None,) * 4 + ("image_size", "task", "bins", "keypoint_dims", "proto", "proto_stride")))
    if odd:
        opts[odd] = draw(st.sampled_from(dict(
            image_size=(None, (2 * image[0], 2 * image[1]) if image else (64, 64), (0, 640), (640,), "ab", (1.5, 3.0),
                        (10**12, 8)),
            task=("detect", "segment", "pose", "obb", "keypoints"), bins=(1, 4, 16, 0, -1), keypoint_dims=(2, 3, 4),
            proto=("nope", outs[0][0]), proto_stride=(0, 2, 8, 3))[odd]))
    return dict(family=family, outputs=[(n, tuple(s)) for n, s in outs], heads=heads, **opts)


def _head_object(kind: str, f: Dict[str, Any]) -> hd.Head:
    if kind == "yolov5":
        return hd.AnchorHead(f["box"], f.get("anchors") or [(10, 13)], f.get("stride"))
    if kind == "yolox":
        return hd.YoloxHead(f["box"], f.get("obj") or "", f.get("cls") or "", f.get("stride"))
    return hd.Head(f["box"], f.get("cls") or "", f.get("stride"), f.get("mask"), f.get("kpt"), f.get("angle"))


def _check(cfg: hd.DecoderConfig) -> None:
    """What a config paired by the core must hold."""
    shapes = {o.name: o.shape for o in cfg.outputs}
    assert cfg.heads and cfg.num_classes > 0
    used = [n for h in cfg.heads for n in (h.outputs() if cfg.head_kind == "dfl" else
                                           (h.box,) if cfg.head_kind == "yolov5" else (h.box, h.obj, h.cls))]
    used += [cfg.proto] if cfg.proto else []
    assert sorted(used) == sorted(shapes), (used, list(shapes))
    ih, iw = cfg.image_size
    for h in cfg.heads:
        gh, gw, _ = shapes[h.box]
        assert h.stride * gh == ih and h.stride * gw == iw, (h, cfg.image_size)
    if cfg.head_kind == "dfl":
        assert all(shapes[h.box][2] == 4 * cfg.bins and shapes[h.cls][2] == cfg.num_classes for h in cfg.heads)
        assert cfg.task == ("pose" if cfg.heads[0].kpt else "obb" if cfg.heads[0].angle else
                            "segment" if cfg.heads[0].mask else "detect")
        if cfg.task == "pose":
            assert all(shapes[h.kpt][2] == cfg.num_keypoints * cfg.keypoint_dims for h in cfg.heads)
        if cfg.task == "obb":
            assert all(shapes[h.angle][2] == 1 for h in cfg.heads)
        if cfg.proto is not None and cfg.proto_stride is not None:
            assert shapes[cfg.proto][:2] == (ih // cfg.proto_stride, iw // cfg.proto_stride)
    elif cfg.head_kind == "yolov5":
        assert all(shapes[h.box][2] == len(h.anchors) * (5 + cfg.num_classes) for h in cfg.heads)
    else:
        assert all(shapes[h.box][2] == 4 and shapes[h.obj][2] == 1 for h in cfg.heads)
    hd.Decoder(cfg)  # the core's own checks agree


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@fuzz_settings(400)
@given(pairing_specs())
def test_fuzz_pairing(spec):
    with watchdog():
        try:
            outputs = [hd.OutputInfo(n, s, "float32") for n, s in spec["outputs"]]
            heads = None if spec["heads"] is None else [_head_object(k, f) for k, f in spec["heads"]]
            cfg = hd.DecoderConfig(outputs, heads, image_size=spec["image_size"], task=spec["task"], bins=spec["bins"],
                                   keypoint_dims=spec["keypoint_dims"], proto=spec["proto"],
                                   proto_stride=spec["proto_stride"])
        except (ValueError, TypeError):
            return
        _check(cfg)
        _check(cfg.replace())  # its own heads, strides and image size pair again


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@fuzz_settings(100)
@given(st.sampled_from(FAMILIES[:-1]), st.data())
def test_fuzz_models_pair(family, data):
    """The unchanged models the harness starts from are valid: with their heads given, and by shape
    whenever the shapes settle a reading (a config that holds together, if not the model's own
    reading: 16 classes and a 64-channel class output pair as 16 bins)."""
    m = _model(data.draw, family)
    outputs = [hd.OutputInfo(n, s, "float32") for n, s in m["outputs"]]
    with watchdog():
        cfg = hd.DecoderConfig(outputs, [_head_object(k, f) for k, f in m["heads"]], proto=m["proto"],
                               proto_stride=m["proto_stride"])
        _check(cfg)
        assert cfg.image_size == m["image"] and cfg.task == ("detect" if family in ("yolov5", "yolox") else family)
        task = family if family in ("pose", "obb") else None
        try:
            by_shape = hd.DecoderConfig(outputs, image_size=m["image"], task=task, proto_stride=m["proto_stride"])
        except ValueError:
            return
        _check(by_shape)
