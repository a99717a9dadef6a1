"""Pose (keypoints) and oriented-box (OBB) heads: the C++ decoder against Ultralytics' own results
on real model outputs (tests/fixtures, made by scripts/make_task_fixtures.py), against the NumPy
reference (reference_tasks) on random heads, probiou's properties, the config's pairing and
errors, and the Detections API for keypoints and rotated boxes."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hailo_decode as hd
from hailo_decode import _core
from reference_tasks import probiou64, reference_task_decode
from task_cases import make_task_case

FIXTURES = Path(__file__).parent / "fixtures"
STRIDES = (8, 16, 32)


# ---------------------------------------------------------------------------------------------
# Real models
# ---------------------------------------------------------------------------------------------
def _fixture(name):
    path = FIXTURES / name
    if not path.exists():
        pytest.skip(f"{path} is absent")
    return np.load(path)


def _fixture_decoder(z, extra, dtype, conf, threads=1):
    """A decoder for frame-independent quantization from the fixture's qparams; returns
    (decoder, frames(i) -> raw dict)."""
    meta = json.loads(str(z["meta"]))
    outs, heads = [], []
    for s in STRIDES:
        for kind in ("box", "cls", extra):
            shape = z[f"f0_{kind}_{s}"].shape
            if dtype == "float32":
                outs.append(hd.OutputInfo(f"{kind}{s}", shape, "float32"))
            else:
                zp, scale = z[f"qp_{kind}_{s}"]
                outs.append(hd.OutputInfo(f"{kind}{s}", shape, "uint8", zp=float(zp), scale=float(scale)))
        heads.append(hd.Head(f"box{s}", f"cls{s}", s, **{extra: f"{extra}{s}"}))
    size = int(meta["imgsz"])
    cfg = hd.DecoderConfig(outs, heads, semantics="ultralytics", score_threshold=conf,
                           iou_threshold=float(meta["iou"]), image_size=(size, size))
    assert cfg.task == ("pose" if extra == "kpt" else "obb")

    def frames(i):
        raw = {}
        for s in STRIDES:
            for kind in ("box", "cls", extra):
                x = np.ascontiguousarray(z[f"f{i}_{kind}_{s}"], dtype=np.float32)
                if dtype != "float32":
                    zp, scale = z[f"qp_{kind}_{s}"]
                    x = np.clip(np.round(x / scale + zp), 0, 255).astype(np.uint8)
                raw[f"{kind}{s}"] = x
        return raw

    return hd.Decoder(cfg, threads=threads), frames, meta


def _frame_count(z):
    return len([k for k in z.files if k.startswith("f") and k.endswith("_box_8")])


@pytest.mark.parametrize("prefix", ["", "lo_"])
def test_pose_float_heads_match_ultralytics(prefix):
    """yolo11n-pose (a real trained model) on real photographs: the same detections as
    Ultralytics' predict, in the same order; boxes and keypoints within 1e-3 px, visibility 1e-5."""
    z = _fixture("pose_yolo11n.npz")
    meta = json.loads(str(z["meta"]))
    conf = float(meta["ref_sets"]["lo_" if prefix else "(none)"]["conf"])
    dec, frames, meta = _fixture_decoder(z, "kpt", "float32", conf)
    total = 0
    for i in range(_frame_count(z)):
        d = dec(frames(i))
        boxes, scores = z[f"{prefix}r{i}_boxes_raw"], z[f"{prefix}r{i}_scores"]
        kpts = z[f"{prefix}r{i}_keypoints_raw"]
        assert len(d) == len(scores), f"frame {i}"
        np.testing.assert_array_equal(d.class_ids, z[f"{prefix}r{i}_classes"])
        np.testing.assert_allclose(d.scores, scores, rtol=0, atol=1e-6)
        np.testing.assert_allclose(d.boxes, boxes, rtol=0, atol=1e-3)
        assert d.keypoints is not None and d.keypoints.shape == (len(d), 17, 3)
        np.testing.assert_allclose(d.keypoints[..., :2], kpts[..., :2], rtol=0, atol=1e-3)
        np.testing.assert_allclose(d.keypoints[..., 2], kpts[..., 2], rtol=0, atol=1e-5)
        # predict's own results are clipped to the image (scale_boxes / scale_coords): to_original
        # onto the same size does the same.
        o = d.to_original((640, 640))
        np.testing.assert_allclose(o.boxes, z[f"{prefix}r{i}_boxes"], rtol=0, atol=1e-3)
        np.testing.assert_allclose(o.keypoints, z[f"{prefix}r{i}_keypoints"], rtol=0, atol=1e-3)
        total += len(d)
    assert total >= 5  # the fixture holds several people: the comparison is not vacuous


# transplant: Ultralytics' OBB module under a trained yolo11n-pose body, untrained angle convs, at
# 1024 on photographs; synthetic: yolo11n-obb trained on synthetic shapes (4 classes), at 640
OBB_FIXTURES = ["obb_transplant_yolo11n.npz", "obb_synthetic_yolo11n.npz"]


@pytest.mark.parametrize("name", OBB_FIXTURES)
def test_obb_float_heads_match_ultralytics(name):
    """An OBB head (see the fixture's meta): the same rotated boxes as Ultralytics' predict in the
    same order, within 1e-3 px, angles within 1e-5 rad; the axis-aligned boxes are
    Results.obb.xyxy."""
    z = _fixture(name)
    for prefix, key in (("", "(none)"), ("lo_", "lo_")):
        meta = json.loads(str(z["meta"]))
        dec, frames, meta = _fixture_decoder(z, "angle", "float32", float(meta["ref_sets"][key]["conf"]))
        for i in range(_frame_count(z)):
            d = dec(frames(i))
            rboxes, scores = z[f"{prefix}r{i}_rboxes"], z[f"{prefix}r{i}_scores"]
            assert len(d) == len(scores) >= 3
            np.testing.assert_array_equal(d.class_ids, z[f"{prefix}r{i}_classes"])
            np.testing.assert_allclose(d.scores, scores, rtol=0, atol=1e-6)
            np.testing.assert_allclose(d.rboxes[:, :4], rboxes[:, :4], rtol=0, atol=1e-3)
            np.testing.assert_allclose(d.angles, rboxes[:, 4], rtol=0, atol=1e-5)
            np.testing.assert_allclose(d.boxes, z[f"{prefix}r{i}_boxes"], rtol=0, atol=1e-3)


def _match_one_to_one(overlap, classes_a, classes_b, min_overlap):
    """True when every detection of a pairs with one of b of its class with overlap >= min."""
    used = set()
    for i in range(overlap.shape[0]):
        cand = [j for j in np.argsort(-overlap[i]) if j not in used and classes_b[j] == classes_a[i]
                and overlap[i, j] >= min_overlap]
        if not cand:
            return False
        used.add(cand[0])
    return len(used) == overlap.shape[1]


def _box_iou(a, b):
    x1 = np.maximum(a[:, None, 0], b[None, :, 0])
    y1 = np.maximum(a[:, None, 1], b[None, :, 1])
    x2 = np.minimum(a[:, None, 2], b[None, :, 2])
    y2 = np.minimum(a[:, None, 3], b[None, :, 3])
    inter = np.clip(x2 - x1, 0, None) * np.clip(y2 - y1, 0, None)
    area = lambda q: (q[:, 2] - q[:, 0]) * (q[:, 3] - q[:, 1])  # noqa: E731
    return inter / (area(a)[:, None] + area(b)[None, :] - inter)


def test_pose_uint8_heads_find_the_same_people():
    """The same heads quantized per tensor to uint8, as a HEF hands them: the same set of objects
    (order may differ: quantization makes scores tie or swap), keypoints near Ultralytics'."""
    z = _fixture("pose_yolo11n.npz")
    dec, frames, meta = _fixture_decoder(z, "kpt", "uint8", float(meta_conf(z)))
    for i in range(_frame_count(z)):
        d = dec(frames(i))
        ref = z[f"r{i}_boxes_raw"]
        assert len(d) == len(ref), f"frame {i}"
        iou = _box_iou(d.boxes, ref)
        assert _match_one_to_one(iou, d.class_ids, z[f"r{i}_classes"], 0.85), f"frame {i}"
        # each matched person's keypoints: the median error is a few pixels of a 640 input
        j = iou.argmax(axis=1)
        err = np.abs(d.keypoints[..., :2] - z[f"r{i}_keypoints_raw"][j][..., :2])
        assert np.median(err) < 4.0


def meta_conf(z):
    return json.loads(str(z["meta"]))["conf"]


# A uint8 score can land on the other side of the threshold from its float score (a float 0.248
# scored 0.252 from uint8 in obb_synthetic_yolo11n.npz): for the trained fixture, detections
# whose float score is within SCORE_BAND of conf are allowed to appear or vanish; the transplant
# (no score within the band) keeps the strict count.
SCORE_BAND = {"obb_transplant_yolo11n.npz": 0.0, "obb_synthetic_yolo11n.npz": 0.01}


def _pairs_up_to_band(z, name, i, d, conf, min_overlap):
    """(uint8 index, float row) pairs; every float result clear of the band has a uint8 partner
    of its class with probiou >= min_overlap, and every uint8 detection is such a partner of a
    float result (at conf - band, from the fixture's low-conf set)."""
    band = SCORE_BAND[name]
    lo = z[f"lo_r{i}_scores"] > conf - band if band else z[f"r{i}_scores"] > -1
    pool = {k: z[f"lo_r{i}_{k}"][lo] if band else z[f"r{i}_{k}"]
            for k in ("rboxes", "classes", "scores")}
    assert len(d) >= int((pool["scores"] > conf + band).sum())
    overlap = _core.probiou(d.rboxes, pool["rboxes"]) if len(d) else np.zeros((0, len(pool["scores"])))
    pairs, used = [], set()
    for a in range(len(d)):
        cand = [j for j in np.argsort(-overlap[a]) if j not in used
                and pool["classes"][j] == d.class_ids[a] and overlap[a, j] >= min_overlap]
        assert cand, f"frame {i}: uint8 detection {a} has no float partner"
        used.add(cand[0])
        pairs.append((a, cand[0]))
    clear = {j for j in range(len(pool["scores"])) if pool["scores"][j] > conf + band}
    assert clear <= used, f"frame {i}: float results {sorted(clear - used)} not found from uint8"
    if not band:
        assert len(d) == len(pool["scores"])
    return pairs, pool


@pytest.mark.parametrize("name", OBB_FIXTURES)
def test_obb_uint8_heads_find_the_same_objects(name):
    """From the uint8 heads, the same objects as Ultralytics' float results (one to one, same
    class, probiou >= 0.8; up to SCORE_BAND at the threshold)."""
    z = _fixture(name)
    conf = float(meta_conf(z))
    dec, frames, meta = _fixture_decoder(z, "angle", "uint8", conf)
    n = 0
    for i in range(_frame_count(z)):
        d = dec(frames(i))
        pairs, _ = _pairs_up_to_band(z, name, i, d, conf, 0.8)
        n += len(pairs)
    assert n >= 3


def test_obb_uint8_trained_angles_match_ultralytics_float():
    """On the trained OBB model (meaningful angles): each uint8 detection's rotated box against
    its float partner. Measured: centre within 1.5 px, sides within 1 % but for one side of 9.6 %
    (a DFL side on a uint8 step), angle within 0.017 rad modulo pi (a rotated box is the same box
    turned by pi), probiou >= 0.936; asserted with some room."""
    name = "obb_synthetic_yolo11n.npz"
    z = _fixture(name)
    conf = float(meta_conf(z))
    dec, frames, meta = _fixture_decoder(z, "angle", "uint8", conf)
    n = 0
    for i in range(_frame_count(z)):
        d = dec(frames(i))
        pairs, pool = _pairs_up_to_band(z, name, i, d, conf, 0.8)
        a, j = (np.array(v, int) for v in zip(*pairs))
        got, r = d.rboxes[a], pool["rboxes"][j]
        assert np.abs(got[:, :2] - r[:, :2]).max() < 2.0
        side = np.abs(got[:, 2:4] / r[:, 2:4] - 1)
        assert side.max() < 0.12 and np.median(side) < 0.01, side
        dang = np.abs((got[:, 4] - r[:, 4] + np.pi / 2) % np.pi - np.pi / 2)
        assert dang.max() < 0.03, dang
        assert _core.probiou(got, r).diagonal().min() >= 0.9
        n += len(pairs)
    assert n >= 20


def test_fixture_decode_with_threads_and_batches_is_the_same():
    z = _fixture("pose_yolo11n.npz")
    dec1, frames, _ = _fixture_decoder(z, "kpt", "uint8", 0.05)
    dec2, _, _ = _fixture_decoder(z, "kpt", "uint8", 0.05, threads=2)
    n = _frame_count(z)
    batch = {k: np.stack([frames(i)[k] for i in range(n)]) for k in frames(0)}
    one = [dec1(frames(i)) for i in range(n)]
    for many in (dec1(batch), dec2(batch)):
        for a, b in zip(one, many):
            np.testing.assert_array_equal(a.boxes, b.boxes)
            np.testing.assert_array_equal(a.keypoints, b.keypoints)


# ---------------------------------------------------------------------------------------------
# Random heads against the NumPy reference
# ---------------------------------------------------------------------------------------------
def _compare(d, ref, task):
    assert len(d) == len(ref["scores"])
    np.testing.assert_array_equal(d.class_ids, ref["class_ids"])
    np.testing.assert_allclose(d.scores, ref["scores"], rtol=0, atol=1e-6)
    np.testing.assert_allclose(d.boxes, ref["boxes"], rtol=0, atol=1e-3)
    if task == "pose":
        assert d.rboxes is None
        np.testing.assert_allclose(d.keypoints[..., :2], ref["keypoints"][..., :2], rtol=0, atol=1e-3)
        np.testing.assert_allclose(d.keypoints[..., 2], ref["keypoints"][..., 2], rtol=0, atol=1e-5)
    else:
        assert d.keypoints is None
        np.testing.assert_allclose(d.rboxes[:, :4], ref["rboxes"][:, :4], rtol=0, atol=1e-3)
        np.testing.assert_allclose(d.angles, ref["rboxes"][:, 4], rtol=0, atol=1e-5)


@pytest.mark.parametrize("task", ["pose", "obb"])
@pytest.mark.parametrize("dtype", ["float32", "uint8", "uint16"])
@pytest.mark.parametrize("seed", range(6))
def test_random_heads_match_reference(task, dtype, seed):
    rng = np.random.default_rng(1000 * seed + (7 if task == "obb" else 3))
    agnostic = seed % 3 == 2
    outs, heads, raw, deq = make_task_case(rng, task, dtype=dtype, nc=int(rng.integers(1, 5)),
                                           num_keypoints=int(rng.integers(1, 18)), objects=int(rng.integers(2, 8)))
    conf, iou = float(rng.choice([0.1, 0.25, 0.4])), float(rng.choice([0.3, 0.5, 0.7]))
    cfg = hd.DecoderConfig(outs, heads, semantics="ultralytics", image_size=(64, 64), score_threshold=conf,
                           iou_threshold=iou, agnostic=agnostic)
    d = hd.Decoder(cfg)(raw)
    ref = reference_task_decode(deq, dict(conf=conf, iou=iou, agnostic=agnostic))
    assert len(ref["scores"]) > 0
    _compare(d, ref, task)


def test_keypoints_without_visibility_and_max_det():
    rng = np.random.default_rng(5)
    outs, heads, raw, deq = make_task_case(rng, "pose", num_keypoints=4, keypoint_dims=2, objects=6)
    cfg = hd.DecoderConfig(outs, heads, semantics="ultralytics", image_size=(64, 64), keypoint_dims=2,
                           score_threshold=0.1, max_total=3)
    assert (cfg.num_keypoints, cfg.keypoint_dims) == (4, 2)
    d = hd.Decoder(cfg)(raw)
    ref = reference_task_decode(deq, dict(conf=0.1, iou=0.7, keypoint_dims=2, max_det=3))
    assert len(d) == 3
    _compare(d, ref, "pose")
    assert np.all(d.keypoints[..., 2] == 1.0)


def test_fast_nms_differs_from_greedy_and_matches_reference():
    """Three oriented boxes in a chain (A overlaps B, B overlaps C, A and C apart): Ultralytics'
    Fast-NMS keeps A only, because B, though dropped, still suppresses C."""
    # One 1x3 grid, stride 8, bins 1: distances (l, t, r, b) per cell, centres at x = 4, 12, 20.
    box = np.zeros((1, 3, 4), np.float32)
    box[0, :] = [1.0, 0.5, 1.0, 0.5]  # 16 x 8 boxes; neighbours 8 px apart overlap (probiou 0.53)
    cls = np.array([[[3.0], [2.0], [1.0]]], np.float32)
    angle = np.full((1, 3, 1), -1.0986123, np.float32)  # sigmoid = 0.25: angle 0
    outs = [hd.OutputInfo("box", box.shape, "float32"), hd.OutputInfo("cls", cls.shape, "float32"),
            hd.OutputInfo("angle", angle.shape, "float32")]
    cfg = hd.DecoderConfig(outs, [hd.Head("box", "cls", 8, angle="angle")], semantics="ultralytics",
                           image_size=(8, 24), iou_threshold=0.3, angle_decode="sigmoid")  # bins 1, YOLOv8 OBB angle
    d = hd.Decoder(cfg)({"box": box, "cls": cls, "angle": angle})
    assert len(d) == 1 and d.rboxes[0, 0] == pytest.approx(4.0, abs=1e-5)
    pair = probiou64(np.array([[4, 4, 16, 8, 0]]), np.array([[12, 4, 16, 8, 0], [20, 4, 16, 8, 0]]))[0]
    assert pair[0] > 0.3 > pair[1]  # a greedy NMS would have kept C


def test_hailort_preset_gives_normalized_keypoints_and_pixel_rboxes():
    rng = np.random.default_rng(11)
    for task in ("pose", "obb"):
        outs, heads, raw, _ = make_task_case(rng, task)
        ul = hd.DecoderConfig(outs, heads, semantics="ultralytics", image_size=(64, 64))
        norm = ul.replace(box_format="yxyx_normalized")
        a, b = hd.Decoder(ul)(raw), hd.Decoder(norm)(raw)
        assert len(a) == len(b) > 0
        np.testing.assert_allclose(b.boxes_as("xyxy_pixels"), a.boxes, atol=1e-4)
        if task == "pose":
            np.testing.assert_allclose(b.keypoints[..., :2] * 64, a.keypoints[..., :2], atol=1e-4)
            np.testing.assert_array_equal(b.keypoints[..., 2], a.keypoints[..., 2])
        else:
            np.testing.assert_array_equal(b.rboxes, a.rboxes)  # always input pixels
        hr = hd.DecoderConfig(outs, heads, semantics="hailort", image_size=(64, 64))
        assert hr.rotated_class_offset == 0.0 and ul.rotated_class_offset == 7680.0
        assert len(hd.Decoder(hr)(raw)) >= 0


# ---------------------------------------------------------------------------------------------
# probiou
# ---------------------------------------------------------------------------------------------
_coord = st.floats(-500, 500, allow_nan=False, width=32)
_side = st.floats(1, 300, allow_nan=False, width=32)
_angle = st.floats(-0.75, 2.25, allow_nan=False, width=32)
_rbox = st.tuples(_coord, _coord, _side, _side, _angle)


@settings(max_examples=300, deadline=None)
@given(_rbox, _rbox)
def test_probiou_is_symmetric_and_bounded(a, b):
    ab = _core.probiou(np.array([a], np.float32), np.array([b], np.float32))[0, 0]
    ba = _core.probiou(np.array([b], np.float32), np.array([a], np.float32))[0, 0]
    assert ab == ba  # bit for bit
    assert -1e-6 <= ab <= 1.0


@settings(max_examples=200, deadline=None)
@given(_rbox)
def test_probiou_of_a_box_with_itself_is_one(a):
    v = _core.probiou(np.array([a], np.float32), np.array([a], np.float32))[0, 0]
    # 1 up to Ultralytics' eps: bd clamps at 1e-7, so 1 - sqrt(1 - exp(-1e-7) + 1e-7) = 1 - 4.7e-4
    assert v == pytest.approx(1.0, abs=6e-4)


@settings(max_examples=200, deadline=None)
@given(_rbox, st.floats(2000, 5000), st.floats(0, 2 * np.pi))
def test_probiou_is_zero_far_apart(a, dist, direction):
    b = (a[0] + dist * np.cos(direction), a[1] + dist * np.sin(direction), a[2], a[3], a[4])
    v = _core.probiou(np.array([a], np.float32), np.array([b], np.float32))[0, 0]
    assert abs(v) < 1e-6


def test_probiou_matches_the_numpy_reference():
    rng = np.random.default_rng(2)
    a = np.column_stack([rng.uniform(0, 100, (200, 2)), rng.uniform(5, 60, (200, 2)), rng.uniform(-0.8, 2.4, 200)])
    b = a + np.column_stack([rng.normal(0, 8, (200, 2)), rng.normal(0, 3, (200, 2)), rng.normal(0, 0.3, 200)])
    b[:, 2:4] = np.abs(b[:, 2:4]) + 1
    got = _core.probiou(a.astype(np.float32), b.astype(np.float32))
    want = probiou64(a.astype(np.float32), b.astype(np.float32))
    np.testing.assert_allclose(got, want, atol=2e-5)
    assert (np.diag(want) > 0.3).sum() > 50  # real overlaps were compared, not just zeros


def test_probiou_rejects_bad_shapes():
    with pytest.raises(ValueError, match=r"\(n, 5\)"):
        _core.probiou(np.zeros((2, 4), np.float32), np.zeros((2, 5), np.float32))


# ---------------------------------------------------------------------------------------------
# Config: pairing and errors
# ---------------------------------------------------------------------------------------------
def _outs(kind_channels, grids=((8, 8), (4, 4), (2, 2))):
    return [hd.OutputInfo(f"{k}{i}", (g[0], g[1], c), "uint8", zp=0.0, scale=1.0)
            for i, g in enumerate(grids) for k, c in kind_channels]


def test_pairing_by_shape_with_a_task():
    outs = _outs([("box", 64), ("cls", 1), ("kpt", 51)])
    cfg = hd.DecoderConfig(outs, task="pose")
    assert cfg.task == "pose" and cfg.num_keypoints == 17 and cfg.keypoint_dims == 3
    assert [(h.box, h.cls, h.kpt, h.stride) for h in cfg.heads] == [
        ("box0", "cls0", "kpt0", 8), ("box1", "cls1", "kpt1", 16), ("box2", "cls2", "kpt2", 32)]
    obb = hd.DecoderConfig(_outs([("box", 64), ("cls", 15), ("angle", 1)]), task="obb")
    assert obb.task == "obb" and obb.num_classes == 15 and [h.angle for h in obb.heads] == ["angle0", "angle1", "angle2"]
    # 80 classes and one 1-channel output fit only OBB: no task needed.
    auto = hd.DecoderConfig(_outs([("box", 64), ("cls", 80), ("angle", 1)]))
    assert auto.task == "obb" and auto.num_classes == 80
    # Output order does not matter.
    shuffled = hd.DecoderConfig(list(reversed(outs)), task="pose")
    assert {(h.box, h.cls, h.kpt) for h in shuffled.heads} == {(h.box, h.cls, h.kpt) for h in cfg.heads}
    # Detection configs are unchanged.
    det = hd.DecoderConfig(_outs([("box", 64), ("cls", 80)]))
    assert det.task == "detect" and det.num_keypoints == 0 and all(h.kpt is None and h.angle is None for h in det.heads)


def test_pairing_refuses_to_guess():
    # 1 class + 51 channels: pose (17 keypoints) or a 51-class OBB? Both fit.
    with pytest.raises(ValueError, match=r"ambiguous: obb with 51 classes; pose with 1 class and 51 kpt channels.*task='pose'"):
        hd.DecoderConfig(_outs([("box", 64), ("cls", 1), ("kpt", 51)]))
    # 3 classes and 51 keypoint channels: either could be the keypoints.
    with pytest.raises(ValueError, match="ambiguous"):
        hd.DecoderConfig(_outs([("box", 64), ("cls", 3), ("kpt", 51)]), task="pose")
    # one-class OBB: two 1-channel outputs
    with pytest.raises(ValueError, match="ambiguous"):
        hd.DecoderConfig(_outs([("box", 64), ("cls", 1), ("angle", 1)]), task="obb")
    with pytest.raises(ValueError, match="each grid needs three"):
        hd.DecoderConfig(_outs([("box", 64), ("cls", 80)]), task="pose")
    with pytest.raises(ValueError, match="no reading"):
        hd.DecoderConfig(_outs([("box", 64), ("cls", 80), ("kpt", 50)]), task="pose")


def _pose_outs(kpt_channels=51, kpt_grid=None, angle=False):
    outs = [hd.OutputInfo("box", (4, 4, 64), zp=0.0, scale=1.0), hd.OutputInfo("cls", (4, 4, 1), zp=0.0, scale=1.0)]
    outs.append(hd.OutputInfo("extra", kpt_grid + (kpt_channels,) if kpt_grid else (4, 4, kpt_channels), zp=0.0, scale=1.0))
    head = hd.Head("box", "cls", 8, **({"angle": "extra"} if angle else {"kpt": "extra"}))
    return outs, [head]


@pytest.mark.parametrize("make, message", [
    (lambda: hd.DecoderConfig(*_pose_outs(50)), r"kpt output 'extra': 50 channels is not a multiple of 3 "
                                                r"\(x, y, visibility per keypoint\); pass keypoint_dims=2"),
    (lambda: hd.DecoderConfig(*_pose_outs(51), keypoint_dims=2), r"kpt output 'extra': 51 channels is not a multiple of 2"),
    (lambda: hd.DecoderConfig(*_pose_outs(2, angle=True)), r"angle output 'extra': expected 1 channel .*got 2"),
    (lambda: hd.DecoderConfig(*_pose_outs(51, kpt_grid=(2, 4))), r"kpt output 'extra': grid \(2, 4\) differs from "
                                                                 r"its head's box output 'box' grid \(4, 4\)"),
    (lambda: hd.DecoderConfig(*_pose_outs(1, kpt_grid=(4, 2), angle=True)), r"angle output 'extra': grid \(4, 2\)"),
    (lambda: hd.DecoderConfig(*_pose_outs(51), task="obb"), r"task='obb' needs an angle output"),
    (lambda: hd.DecoderConfig(*_pose_outs(51), keypoint_dims=4), r"keypoint_dims must be 2 .* or 3"),
    (lambda: hd.DecoderConfig(*_pose_outs(51), task="keypoints"), r"task must be one of"),
    (lambda: hd.DecoderConfig(_pose_outs(51)[0], [hd.Head("box", "cls", 8, kpt="nope")]), r"kpt output 'nope' is not among"),
    (lambda: hd.DecoderConfig(*_pose_outs(51), rotated_class_offset=-1.0), r"rotated_class_offset must be"),
])
def test_bad_task_configs_name_the_output(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_every_head_or_none_has_the_task_output():
    outs = _outs([("box", 64), ("cls", 1), ("kpt", 51)], grids=((8, 8), (4, 4)))
    heads = [hd.Head("box0", "cls0", 8, kpt="kpt0"), hd.Head("box1", "cls1", 16)]
    with pytest.raises(ValueError, match=r"every head needs a kpt output.*\['box1'\]"):
        hd.DecoderConfig(outs, heads)
    same = _outs([("box", 64), ("cls", 1), ("kpt", 51)], grids=((4, 4), (4, 4)))
    with pytest.raises(ValueError, match=r"an output is used by more than one head"):
        hd.DecoderConfig(same, [hd.Head("box0", "cls0", 8, kpt="kpt0"), hd.Head("box1", "cls1", 8, kpt="kpt0")])
    with pytest.raises(ValueError, match=r"outputs \['box1', 'cls1', 'kpt1'\] belong to no head"):
        hd.DecoderConfig(same, [hd.Head("box0", "cls0", 8, kpt="kpt0")])


def test_replace_keeps_the_task():
    cfg = hd.DecoderConfig(_outs([("box", 64), ("cls", 1), ("kpt", 34)]), task="pose", keypoint_dims=2)
    assert (cfg.num_keypoints, cfg.keypoint_dims) == (17, 2)
    r = cfg.replace(semantics="ultralytics")
    assert (r.task, r.num_keypoints, r.keypoint_dims, r.rotated_class_offset) == ("pose", 17, 2, 7680.0)
    assert "task='pose'" in repr(cfg) and "keypoints=17x2" in repr(cfg)


# ---------------------------------------------------------------------------------------------
# Detections
# ---------------------------------------------------------------------------------------------
def test_detections_polygons_angles_and_enclosing_boxes():
    rng = np.random.default_rng(4)
    outs, heads, raw, _ = make_task_case(rng, "obb", objects=5)
    d = hd.Decoder(hd.DecoderConfig(outs, heads, semantics="ultralytics", image_size=(64, 64)))(raw)
    assert len(d) > 0
    p = d.polygons()
    assert p.shape == (len(d), 4, 2) and p.dtype == np.float32
    np.testing.assert_allclose(p.mean(axis=1), d.rboxes[:, :2], atol=1e-4)  # the centre
    np.testing.assert_allclose(np.linalg.norm(p[:, 0] - p[:, 1], axis=1), d.rboxes[:, 3], rtol=1e-5)  # side h
    np.testing.assert_allclose(np.linalg.norm(p[:, 1] - p[:, 2], axis=1), d.rboxes[:, 2], rtol=1e-5)  # side w
    np.testing.assert_allclose(np.concatenate([p.min(1), p.max(1)], 1), d.boxes, atol=1e-4)
    assert np.all((d.angles >= -np.pi / 4 - 1e-6) & (d.angles < 3 * np.pi / 4))
    assert "rotated" in repr(d)


def test_detections_for_plain_detection_have_no_task_outputs():
    rng = np.random.default_rng(4)
    outs, heads, raw, _ = make_task_case(rng, "obb")
    det_outs = [o for o in outs if not o.name.startswith("angle")]
    d = hd.Decoder(hd.DecoderConfig(det_outs, [hd.Head(h.box, h.cls, h.stride) for h in heads]))(
        {k: v for k, v in raw.items() if not k.startswith("angle")})
    assert d.keypoints is None and d.rboxes is None and d.angles is None
    with pytest.raises(ValueError, match="polygons"):
        d.polygons()


def test_to_original_maps_keypoints_and_rotated_boxes():
    # A 64x64 input letterboxed from a 128x96 (h x w) image: gain 0.5, pad_x 8.
    k = np.array([[[8.0, 0.0, 0.9], [40.0, 80.0, 0.1]]], np.float32)  # the second lies off the image
    r = np.array([[30.0, 20.0, 10.0, 4.0, 0.5]], np.float32)
    d = hd.Detections(np.array([[20, 10, 40, 30]], np.float32), [0.9], [0], box_format="xyxy_pixels",
                      image_size=(64, 64), keypoints=k, rboxes=r)
    o = d.to_original((128, 96))
    np.testing.assert_allclose(o.keypoints[0, 0], [0.0, 0.0, 0.9])
    np.testing.assert_allclose(o.keypoints[0, 1], [64.0, 128.0, 0.1])  # (64, 160) clipped to the image
    np.testing.assert_allclose(o.rboxes[0], [44.0, 40.0, 20.0, 8.0, 0.5])
    np.testing.assert_allclose(o.boxes, np.concatenate([o.polygons().min(1), o.polygons().max(1)], 1), atol=1e-5)
    # normalized keypoints go to pixels first
    n = hd.Detections(d.boxes / 64, [0.9], [0], box_format="xyxy_normalized", image_size=(64, 64),
                      keypoints=k * np.array([1 / 64, 1 / 64, 1], np.float32))
    np.testing.assert_allclose(n.to_original((128, 96)).keypoints, o.keypoints, atol=1e-5)


def test_detections_check_task_shapes():
    with pytest.raises(ValueError, match=r"keypoints must have shape \(1, K, 3\)"):
        hd.Detections(np.zeros((1, 4)), [0.5], [0], keypoints=np.zeros((1, 17, 2)))
    with pytest.raises(ValueError, match=r"rboxes must have shape \(1, 5\)"):
        hd.Detections(np.zeros((1, 4)), [0.5], [0], rboxes=np.zeros((2, 5)))


def test_diagnose_names_the_task_outputs():
    rng = np.random.default_rng(8)
    for task, role in (("pose", "kpt"), ("obb", "angle")):
        outs, heads, raw, _ = make_task_case(rng, task, dtype="uint8")
        report = hd.Decoder(hd.DecoderConfig(outs, heads, image_size=(64, 64))).diagnose(raw)
        roles = {d["name"]: d["role"] for d in report}
        assert roles[f"{role}0"] == role and roles["box0"] == "box" and roles["cls0"] == "cls"
