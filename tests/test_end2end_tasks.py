"""End-to-end heads with task channels (issue 13): end2end=True on pose, OBB and segmentation
heads. The one-to-one head's rows are chosen by the same top-k as for detection; the keypoints,
angle (rotated box) or mask coefficients of the chosen anchors are read for those rows only.

Checked against
(1) Ultralytics 8.4.190's own results (tests/fixtures/README.md, "End-to-end task heads"):
    e2e_pose_transplant_yolo11n (Pose, 16 DFL bins, trained keypoints), and the YOLO26 heads
    e2e_transplant_yolo26n_{pose,obb,seg} (Pose26 / OBB26 / Segment26, 4-channel box tensors);
    from the float heads: the same rows in the same order (boxes and keypoints within 1e-3 px,
    angles within 1e-5 rad, masks IoU >= 0.995 with the differing pixels counted), within a run
    of equal scores as a set (torch.topk leaves their order unspecified); from the uint8 heads
    (quantized with the fixture's qp) the same rows as Ultralytics' decode of those uint8 values;
(2) the plain NumPy model end2end_tasks_reference.py (rows in hailo-decode's stated tie order:
    equal scores by stage-1 rank, i.e. anchor index ascending, then class), on the fixtures and
    on random float32/uint8/uint16 heads with 16 or 1 bins and both keypoint/angle decodes.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import hailo_decode as hd
from end2end_reference import tie_groups
from end2end_tasks_reference import end2end_task_decode
from hailo_decode.config import task_decode_choice
from seg_reference import iou, process_mask
from task_cases import make_task_case, quantize

FIXTURES = Path(__file__).resolve().parent / "fixtures"
STRIDES = (8, 16, 32)
# fixture -> (task, extra kind, image size, the decodes its head class uses)
CASES = {
    "e2e_pose_transplant_yolo11n": ("pose", "kpt", 640, dict(keypoint_decode="yolov8")),
    "e2e_transplant_yolo26n_pose": ("pose", "kpt", 320, dict(keypoint_decode="yolo26")),
    "e2e_transplant_yolo26n_obb": ("obb", "angle", 320, dict(angle_decode="raw")),
    "e2e_transplant_yolo26n_seg": ("segment", "mask", 320, {}),
}


def _load(name):
    path = FIXTURES / f"{name}.npz"
    if not path.exists():
        pytest.skip(f"{path.name} absent")
    with np.load(path, allow_pickle=False) as z:
        return {k: z[k] for k in z.files}


def _setup(fx, name, quant):
    """(config, raw arrays, dequantized heads for the NumPy reference)."""
    task, extra, size, _ = CASES[name]
    infos, raw, heads = [], {}, []
    for s in STRIDES:
        ref = {"stride": s}
        for kind in ("box", "cls", extra):
            x = fx[f"f0_{kind}_{s}"]
            n = f"{kind}_{s}"
            if quant:
                zp, sc = (float(v) for v in fx[f"qp_{kind}_{s}"])
                raw[n] = np.clip(np.round(x.astype(np.float64) / sc + zp), 0, 255).astype(np.uint8)
                infos.append(hd.OutputInfo(n, x.shape, "uint8", zp=zp, scale=sc))
                ref[kind] = (raw[n].astype(np.float32) - np.float32(zp)) * np.float32(sc)
            else:
                raw[n] = x
                infos.append(hd.OutputInfo(n, x.shape, "float32"))
                ref[kind] = x
        heads.append(ref)
    kw = {}
    if task == "segment":
        x = fx["f0_proto"]
        if quant:
            zp, sc = (float(v) for v in fx["qp_proto"])
            raw["proto"] = np.clip(np.round(x.astype(np.float64) / sc + zp), 0, 255).astype(np.uint8)
            infos.append(hd.OutputInfo("proto", x.shape, "uint8", zp=zp, scale=sc))
        else:
            raw["proto"] = x
            infos.append(hd.OutputInfo("proto", x.shape, "float32"))
        kw["proto"] = "proto"
    role = {"kpt": "kpt", "angle": "angle", "mask": "mask"}[extra]
    hs = [hd.Head(f"box_{s}", f"cls_{s}", s, **{role: f"{extra}_{s}"}) for s in STRIDES]
    cfg = hd.DecoderConfig(infos, hs, image_size=(size, size), semantics="ultralytics", end2end=True,
                           **CASES[name][3], **kw)
    return cfg, raw, heads


def _rows(d, task):
    """Per row, the numbers compared: box, score, class and the task's extra."""
    parts = [np.asarray(d.boxes, np.float64), np.asarray(d.scores, np.float64)[:, None],
             np.asarray(d.class_ids, np.float64)[:, None]]
    if task == "pose":
        parts.append(d.keypoints.reshape(len(d), -1).astype(np.float64))
    if task == "obb":
        parts.append(d.rboxes.astype(np.float64))
    return np.concatenate(parts, axis=1)


def _ultralytics_rows(fx, p, task, size):
    boxes = fx[p + "boxes_raw"] if task == "pose" else fx[p + "boxes"]
    parts = [boxes.astype(np.float64), fx[p + "scores"][:, None].astype(np.float64),
             fx[p + "classes"][:, None].astype(np.float64)]
    if task == "pose":
        parts.append(fx[p + "keypoints_raw"].reshape(len(boxes), -1).astype(np.float64))
    if task == "obb":
        parts.append(fx[p + "rboxes_raw"].astype(np.float64))
    return np.concatenate(parts, axis=1)


def _tolerances(task, width):
    """Per column: boxes 1e-3 px, scores 1e-6, classes exact, keypoints x, y 1e-3 px and visibility
    1e-6, rotated boxes 1e-3 px and angles 1e-5 rad."""
    tol = [1e-3] * 4 + [1e-6, 0.0]
    if task == "pose":
        tol += [1e-3, 1e-3, 1e-6] * ((width - 6) // 3)
    if task == "obb":
        tol += [1e-3] * 4 + [1e-5]
    return np.array(tol)


def _same_rows_up_to_ties(got, want, scores, tol):
    """The same rows in the same order; inside a run of equal reference scores, the same set."""
    assert got.shape == want.shape, (got.shape, want.shape)
    for g in tie_groups(np.asarray(scores)):
        a = got[g][np.lexsort(got[g][:, ::-1].T)] if len(g) > 1 else got[g]
        b = want[g][np.lexsort(want[g][:, ::-1].T)] if len(g) > 1 else want[g]
        assert np.all(np.abs(a - b) <= tol), (g, np.abs(a - b).max(axis=0))


@pytest.mark.parametrize("name", [n for n in CASES if CASES[n][0] != "segment"])
@pytest.mark.parametrize("prefix,conf", [("", 0.25), ("lo_", 0.05)])
def test_float_heads_give_ultralytics_rows(name, prefix, conf):
    fx = _load(name)
    task, _, size, decodes = CASES[name]
    cfg, raw, _ = _setup(fx, name, quant=False)
    kpt, angle, _ = task_decode_choice(cfg)  # what from_hef would pick from the box channels
    assert {"keypoint_decode": kpt, "angle_decode": angle}.items() >= decodes.items()
    got = hd.Decoder(cfg.replace(score_threshold=conf))(raw)
    want = _ultralytics_rows(fx, prefix + "r0_", task, size)
    assert len(got) > 0
    _same_rows_up_to_ties(_rows(got, task), want, fx[prefix + "r0_scores"], _tolerances(task, want.shape[1]))
    if task == "obb":  # and the enclosing boxes Results.obb.xyxy gives
        _same_rows_up_to_ties(np.asarray(got.boxes, np.float64), fx[prefix + "r0_boxes"].astype(np.float64),
                              fx[prefix + "r0_scores"], np.full(4, 1e-3))


@pytest.mark.parametrize("name", [n for n in CASES if CASES[n][0] != "segment"])
def test_hand_built_config_takes_the_forms_its_box_tensors_imply(name):
    """Without keypoint_decode/angle_decode a hand-built config decodes YOLO26 heads (4-channel box
    tensors) with YOLO26's forms and DFL heads with YOLOv8's: the same rows as the explicit forms
    (the fixtures' Ultralytics rows pin those). An explicit form still wins, and survives replace()."""
    fx = _load(name)
    task, _, _, decodes = CASES[name]
    cfg, raw, _ = _setup(fx, name, quant=True)
    implicit = hd.DecoderConfig(cfg.outputs, cfg.heads, image_size=cfg.image_size, semantics="ultralytics",
                                end2end=True, score_threshold=0.05)
    assert {"keypoint_decode": implicit.keypoint_decode, "angle_decode": implicit.angle_decode}.items() >= decodes.items()
    a, b = hd.Decoder(implicit)(raw), hd.Decoder(cfg.replace(score_threshold=0.05))(raw)
    assert len(a) == len(b) > 0
    np.testing.assert_array_equal(_rows(a, task), _rows(b, task))
    key, value = next(iter(decodes.items()))
    other = {"yolo26": "yolov8", "yolov8": "yolo26", "raw": "sigmoid"}[value]
    forced = implicit.replace(**{key: other}).replace(score_threshold=0.25)
    assert getattr(forced, key) == other


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("quant", [False, True])
def test_rows_in_the_stated_order_against_numpy(name, quant):
    """The NumPy model orders ties as stated (anchor index ascending): every row in that order."""
    fx = _load(name)
    task, _, size, decodes = CASES[name]
    cfg, raw, heads = _setup(fx, name, quant)
    cfg = cfg.replace(score_threshold=0.05)
    got = hd.Decoder(cfg)(raw)
    ref = end2end_task_decode(heads, dict(conf=0.05, keypoint_decode=cfg.keypoint_decode,
                                          angle_decode=cfg.angle_decode))
    assert len(got) == len(ref["scores"]) > 0
    # (NumPy's float32 sigmoid and the core's can differ by an ulp)
    np.testing.assert_allclose(got.scores, ref["scores"], rtol=0, atol=2.5e-7)
    np.testing.assert_array_equal(got.class_ids, ref["class_ids"])
    np.testing.assert_allclose(got.boxes, ref["boxes"], rtol=0, atol=1e-3)
    if task == "pose":
        np.testing.assert_allclose(got.keypoints[..., :2], ref["keypoints"][..., :2], rtol=0, atol=1e-3)
        np.testing.assert_allclose(got.keypoints[..., 2], ref["keypoints"][..., 2], rtol=0, atol=1e-6)
    if task == "obb":
        np.testing.assert_allclose(got.rboxes[:, :4], ref["rboxes"][:, :4], rtol=0, atol=1e-3)
        np.testing.assert_allclose(got.rboxes[:, 4], ref["rboxes"][:, 4], rtol=0, atol=1e-5)
    if task == "segment":
        proto = (raw["proto"] if not quant else
                 (raw["proto"].astype(np.float32) - np.float32(cfg.output("proto").zp))
                 * np.float32(cfg.output("proto").scale))
        want = process_mask(proto, ref["coefficients"].astype(np.float32), ref["boxes"].astype(np.float32),
                            (size, size), True)
        keep = want.any(axis=(1, 2))  # the predictor drops rows whose mask is empty
        assert got.masks.shape == want[keep].shape
        for a, b in zip(got.masks, want[keep]):
            assert iou(a, b) >= 0.995


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("prefix", ["", "lo_"])
def test_uint8_heads_give_ultralytics_uint8_rows(name, prefix):
    """The q_ references: Ultralytics' decode of the same uint8 values, dequantized."""
    fx = _load(name)
    task, _, size, _ = CASES[name]
    cfg, raw, _ = _setup(fx, name, quant=True)
    conf = 0.25 if prefix == "" else 0.05
    got = hd.Decoder(cfg.replace(score_threshold=conf))(raw)
    p = "q_" + prefix + "r0_"
    if task == "segment":
        assert len(got) == len(fx[p + "scores"])
        _same_rows_up_to_ties(np.concatenate([np.clip(got.boxes, 0, size), got.scores[:, None],
                                              got.class_ids[:, None]], axis=1).astype(np.float64),
                              np.concatenate([fx[p + "boxes"], fx[p + "scores"][:, None],
                                              fx[p + "classes"][:, None]], axis=1).astype(np.float64),
                              fx[p + "scores"], np.array([1e-3] * 4 + [1e-6, 0.0]))
        return
    want = _ultralytics_rows(fx, p, task, size)
    _same_rows_up_to_ties(_rows(got, task), want, fx[p + "scores"], _tolerances(task, want.shape[1]))


@pytest.mark.parametrize("prefix,conf", [("", 0.25), ("lo_", 0.05)])
def test_segment26_float_masks_equal_ultralytics(prefix, conf):
    """Segment26 (Proto26: the same (H/4, W/4, 32) prototype output), float heads: same rows, and
    each mask IoU >= 0.995 with Ultralytics' (differing pixels counted and bounded)."""
    name = "e2e_transplant_yolo26n_seg"
    fx = _load(name)
    cfg, raw, _ = _setup(fx, name, quant=False)
    got = hd.Decoder(cfg.replace(score_threshold=conf))(raw)
    p = prefix + "r0_"
    shape = tuple(fx[p + "masks_shape"])
    masks = np.unpackbits(fx[p + "masks"], axis=-1)[..., :shape[2]].astype(bool)
    want = np.concatenate([fx[p + "boxes"], fx[p + "scores"][:, None], fx[p + "classes"][:, None]], axis=1)
    mine = np.concatenate([np.clip(got.boxes, 0, 320), got.scores[:, None], got.class_ids[:, None]], axis=1)
    assert len(got) == len(want) > 0
    scores = fx[p + "scores"]
    assert all(len(g) == 1 for g in tie_groups(scores)) or prefix == "lo_"
    # rows up to ties, then masks paired through the rows
    _same_rows_up_to_ties(mine.astype(np.float64), want.astype(np.float64), scores, np.array([1e-3] * 4 + [1e-6, 0.0]))
    diff = 0
    for g in tie_groups(scores):
        for i in g:
            j = g[int(np.argmin(np.abs(mine[g, :4] - want[i, :4]).max(axis=1)))]
            assert iou(got.masks[j], masks[i]) >= 0.995
            diff += int(np.sum(got.masks[j] != masks[i]))
    assert diff <= SEG26_PIXELS_DIFFERING[prefix]


# Measured on this fixture: pixels that differ from Ultralytics' masks over all rows (a bound, so
# that a regression shows).
SEG26_PIXELS_DIFFERING = {"": 0, "lo_": 0}


def _one_bin(case, rng):
    """make_task_case's heads with 4-channel box tensors (YOLO26: the distances themselves)."""
    outputs, heads, raw, deq = case
    new_out = []
    for o in outputs:
        if not o.name.startswith("box"):
            new_out.append(o)
            continue
        g = o.shape[0]
        d = rng.uniform(0.2, 4.0, size=(g, g, 4)).astype(np.float32)
        h = int(o.name[3:])
        if o.dtype == "float32":
            raw[o.name], values = d, d
            new_out.append(hd.OutputInfo(o.name, d.shape, "float32"))
        else:
            q, zp, sc = quantize(d, o.dtype)
            raw[o.name] = q
            values = (q.astype(np.float32) - np.float32(zp)) * np.float32(sc)
            new_out.append(hd.OutputInfo(o.name, d.shape, o.dtype, zp=zp, scale=sc))
        deq[h]["box"] = values
    return new_out, heads, raw, deq


@pytest.mark.parametrize("task", ["pose", "obb"])
@pytest.mark.parametrize("dtype", ["float32", "uint8", "uint16"])
@pytest.mark.parametrize("bins", [16, 1])
@pytest.mark.parametrize("yolo26", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_random_heads_against_numpy(task, dtype, bins, yolo26, seed):
    """Random pose/OBB heads (tests/task_cases.py: objects over a background, so many anchors pass
    and several classes compete), every decode form, end to end: the NumPy model's rows, in order."""
    rng = np.random.default_rng(1000 + seed)
    case = make_task_case(rng, task, dtype=dtype, nc=3, num_keypoints=4, keypoint_dims=3 if seed != 2 else 2,
                          objects=6)
    if bins == 1:
        case = _one_bin(case, rng)
    outputs, heads, raw, deq = case
    decodes = dict(keypoint_decode="yolo26" if yolo26 else "yolov8", angle_decode="raw" if yolo26 else "sigmoid")
    conf = 0.3
    cfg = hd.DecoderConfig(outputs, heads, image_size=(64, 64), semantics="ultralytics", end2end=True,
                           score_threshold=conf, max_total=40 if seed == 1 else None,
                           keypoint_dims=3 if seed != 2 else 2, **decodes)
    got = hd.Decoder(cfg)(raw)
    ref = end2end_task_decode(deq, dict(conf=conf, max_det=40 if seed == 1 else 300,
                                        keypoint_dims=3 if seed != 2 else 2, **decodes))
    assert len(got) == len(ref["scores"]) > 0
    np.testing.assert_allclose(got.scores, ref["scores"], rtol=0, atol=2.5e-7)
    np.testing.assert_array_equal(got.class_ids, ref["class_ids"])
    np.testing.assert_allclose(got.boxes, ref["boxes"], rtol=0, atol=2e-3)
    if task == "pose":
        np.testing.assert_allclose(got.keypoints[..., :2], ref["keypoints"][..., :2], rtol=0, atol=1e-3)
        np.testing.assert_allclose(got.keypoints[..., 2], ref["keypoints"][..., 2], rtol=0, atol=1e-6)
    else:
        np.testing.assert_allclose(got.rboxes[:, :4], ref["rboxes"][:, :4], rtol=0, atol=2e-3)
        np.testing.assert_allclose(got.rboxes[:, 4], ref["rboxes"][:, 4], rtol=0, atol=1e-5)


def test_bad_decode_settings_name_the_setting():
    outputs, heads, _, _ = make_task_case(np.random.default_rng(5), "pose")
    with pytest.raises(ValueError, match=r'keypoint_decode must be one of "yolov8", "yolo26" \(or null\), got "Pose26"'):
        hd.DecoderConfig(outputs, heads, image_size=(64, 64), end2end=True, keypoint_decode="Pose26")
    with pytest.raises(TypeError, match=r'angle_decode must be one of "sigmoid", "raw" \(or null\), got 1'):
        hd.DecoderConfig(outputs, heads, image_size=(64, 64), end2end=True, angle_decode=1)
    cfg = hd.DecoderConfig(outputs, heads, image_size=(64, 64), end2end=True, keypoint_decode="yolo26")
    assert cfg.replace(score_threshold=0.5).keypoint_decode == "yolo26"  # kept by replace
    assert "keypoint_decode='yolo26'" in repr(cfg)
    # a task output on another grid is still refused end to end, naming the output
    bad = [hd.OutputInfo(o.name, (o.shape[0] + 1,) + o.shape[1:], o.dtype, zp=o.zp, scale=o.scale) if o.name == "kpt0" else o
           for o in outputs]
    with pytest.raises(ValueError, match="kpt output 'kpt0'"):
        hd.DecoderConfig(bad, heads, image_size=(64, 64), end2end=True)


@pytest.mark.parametrize("name", list(CASES))
def test_batches_and_threads_give_the_frames_alone(name):
    """A batch of 3 frames (the fixture frame, shifted copies) on 2 threads: each frame's rows,
    keypoints, rotated boxes and masks equal that frame decoded alone."""
    fx = _load(name)
    task = CASES[name][0]
    cfg, raw, _ = _setup(fx, name, quant=True)
    cfg = cfg.replace(score_threshold=0.05)
    frames = [raw, {k: np.roll(v, 1, axis=0) for k, v in raw.items()}, {k: np.roll(v, -1, axis=1) for k, v in raw.items()}]
    batch = {k: np.stack([f[k] for f in frames]) for k in raw}
    got = hd.Decoder(cfg, threads=2)(batch)
    one = hd.Decoder(cfg)
    for f, d in zip(frames, got):
        alone = one(f)
        for attr in ("boxes", "scores", "class_ids", "keypoints", "rboxes"):
            a, b = getattr(d, attr), getattr(alone, attr)
            assert (a is None) == (b is None) and (a is None or np.array_equal(a, b)), attr
        if task == "segment":
            assert np.array_equal(d.masks, alone.masks)
