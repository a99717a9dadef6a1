"""Integrity of the real-model task fixtures (scripts/make_task_fixtures.py).

These check only that each file holds what tests/fixtures/README.md and the
agreed format promise (keys, shapes, dtypes, meta); the decoder is tested
against them elsewhere.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import numpy as np
import pytest

FIXTURES = Path(__file__).parent / "fixtures"
DEMO_DATA = Path(__file__).parent.parent / "python" / "hailo_decode" / "data"

# fixture file -> (task, demo file of the same model)
TASK_FILES = {
    "pose_yolo11n.npz": ("pose", "pose_uint8.npz"),
    "seg_transplant_yolo11n.npz": ("segment", None),
    "obb_transplant_yolo11n.npz": ("obb", None),
    "e2e_transplant_yolo11n.npz": ("detect", None),
    "e2e_pose_transplant_yolo11n.npz": ("pose", None),
    "e2e_transplant_yolo26n_pose.npz": ("pose", None),
    "e2e_transplant_yolo26n_obb.npz": ("obb", None),
    "e2e_transplant_yolo26n_seg.npz": ("segment", None),
    "seg_synthetic_yolo11n.npz": ("segment", "seg_uint8.npz"),
    "obb_synthetic_yolo11n.npz": ("obb", "obb_uint8.npz"),
    "e2e_synthetic_yolo26n.npz": ("detect", None),
}
TRAINED_FILES = ["seg_synthetic_yolo11n.npz", "obb_synthetic_yolo11n.npz", "e2e_synthetic_yolo26n.npz"]

EXTRA_KIND = {"pose": "kpt", "obb": "angle", "segment": "mask", "detect": None}
META_FIELDS = {
    "model_file", "wheel", "wheel_version", "weights_sha256", "ultralytics", "torch",
    "task", "imgsz", "strides", "nc", "names", "reg_max", "conf", "iou", "max_det",
    "agnostic", "end2end", "capture", "frames", "ref_sets",
}


def _load(name: str) -> dict[str, np.ndarray]:
    path = FIXTURES / name
    if not path.exists():
        pytest.skip(f"{path} not present")
    return _read(path)


@functools.cache
def _read(path: Path) -> dict[str, np.ndarray]:
    with np.load(path) as z:
        return {k: z[k] for k in z.files}


def _meta(z: dict[str, np.ndarray]) -> dict:
    assert z["meta"].dtype.kind == "U" and z["meta"].shape == ()
    return json.loads(str(z["meta"]))


def _frames(z: dict[str, np.ndarray]) -> list[int]:
    n = len(_meta(z)["frames"])
    assert n >= 1
    return list(range(n))


def _channels(meta: dict, kind: str) -> int:
    if kind == "box":
        return 4 * meta["reg_max"]
    if kind == "cls":
        return meta["nc"]
    if kind == "kpt":
        return meta["kpt_shape"][0] * meta["kpt_shape"][1]
    if kind == "angle":
        return 1
    if kind == "mask":
        return meta["nm"]
    raise AssertionError(kind)


def _kinds(meta: dict) -> list[str]:
    extra = EXTRA_KIND[meta["task"]]
    return ["box", "cls"] + ([extra] if extra else [])


@pytest.mark.parametrize("name", sorted(TASK_FILES))
def test_meta(name: str) -> None:
    z = _load(name)
    meta = _meta(z)
    assert META_FIELDS <= set(meta), META_FIELDS - set(meta)
    assert meta["task"] == TASK_FILES[name][0]
    assert meta["end2end"] == name.startswith("e2e_")
    if meta.get("transplant"):  # not a trained model of this task: say what is trained
        assert {"trained", "untrained_modules", "yaml"} <= set(meta["transplant"])
    if meta.get("trained"):  # trained on synthetic shapes: how, and which weights
        assert {"epochs", "n_train", "imgsz", "sha256", "tensor_digest", "metrics"} <= set(meta["trained"])
        assert meta["trained"]["sha256"] == meta["weights_sha256"]
    assert len(meta["weights_sha256"]) == 64
    assert meta["strides"] == [8, 16, 32]
    assert meta["nc"] == len(meta["names"]) >= 1
    assert meta["imgsz"] in (320, 640, 1024)  # 320: the YOLO26 end-to-end files, kept small
    assert 0 < meta["conf"] < 1 and 0 < meta["iou"] < 1
    if meta["task"] == "pose":
        assert meta["kpt_shape"][1] in (2, 3) and meta["kpt_shape"][0] >= 1
    for prefix_info in meta["ref_sets"].values():
        assert 0 < prefix_info["conf"] < 1


@pytest.mark.parametrize("name", sorted(TASK_FILES))
def test_heads(name: str) -> None:
    z = _load(name)
    meta = _meta(z)
    size = meta["imgsz"]
    for i in _frames(z):
        shape = tuple(z[f"img{i}_shape"]) if f"img{i}_shape" in z else z[f"img{i}"].shape
        assert shape == (size, size, 3)
        for kind in _kinds(meta):
            for s in meta["strides"]:
                a = z[f"f{i}_{kind}_{s}"]
                assert a.dtype == np.float32, (kind, s, a.dtype)
                assert a.shape == (size // s, size // s, _channels(meta, kind)), (kind, s, a.shape)
                assert np.isfinite(a).all()
                # captured through float16 (see meta["capture"]): lossless round trip
                assert np.array_equal(a.astype(np.float16).astype(np.float32), a)
        if meta["task"] == "segment":
            p = z[f"f{i}_proto"]
            assert p.dtype == np.float32 and p.shape == (size // 4, size // 4, meta["nm"])


@pytest.mark.parametrize("name", sorted(TASK_FILES))
def test_quantization_params(name: str) -> None:
    z = _load(name)
    meta = _meta(z)
    keys = [f"{k}_{s}" for k in _kinds(meta) for s in meta["strides"]]
    keys += ["proto"] if meta["task"] == "segment" else []
    for key in keys:
        qp = z[f"qp_{key}"]
        assert qp.dtype == np.float64 and qp.shape == (2,)
        zp, scale = qp
        assert 0 <= zp <= 255 and zp == np.round(zp) and scale > 0
        # the range covers every frame: quantizing clips nothing beyond half a step
        for i in _frames(z):
            x = z[f"f{i}_{key}"].astype(np.float64)
            q = x / scale + zp
            assert q.min() >= -0.5 and q.max() <= 255.5, (key, q.min(), q.max())


@pytest.mark.parametrize("name", sorted(TASK_FILES))
def test_results(name: str) -> None:
    z = _load(name)
    meta = _meta(z)
    size = meta["imgsz"]
    # float-head references, and the same decode of the uint8-quantized heads (q_ prefix)
    sets = [(q + info["key_prefix"], info) for info in meta["ref_sets"].values() for q in ("", "q_")]
    for p, info in sets:
        for i in _frames(z):
            boxes = z[f"{p}r{i}_boxes"]
            scores = z[f"{p}r{i}_scores"]
            classes = z[f"{p}r{i}_classes"]
            n = len(scores)
            assert boxes.dtype == scores.dtype == np.float32 and classes.dtype == np.int32
            assert boxes.shape == (n, 4) and classes.shape == (n,)
            assert n <= meta["max_det"]
            assert (scores > info["conf"]).all() and (scores <= 1).all()
            assert ((classes >= 0) & (classes < meta["nc"])).all()
            assert (boxes[:, 2:] >= boxes[:, :2]).all()
            if meta["task"] != "obb":
                # Ultralytics clips xyxy results to the input image (OBB xywhr is not clipped)
                assert (boxes >= 0).all() and (boxes <= size).all()
            if meta["task"] != "segment":
                # NMS and top-k both hand rows out by descending score
                assert (np.diff(scores) <= 0).all()
            if meta["task"] == "pose":
                k, d = meta["kpt_shape"]
                kp = z[f"{p}r{i}_keypoints"]
                raw = z[f"{p}r{i}_keypoints_raw"]
                assert kp.dtype == raw.dtype == np.float32
                assert kp.shape == raw.shape == (n, k, d)
                assert (kp[..., :2] >= 0).all() and (kp[..., :2] <= size).all()
                if d == 3:
                    assert ((kp[..., 2] >= 0) & (kp[..., 2] <= 1)).all()
                    assert np.array_equal(kp[..., 2], raw[..., 2])
                assert np.array_equal(np.clip(raw[..., :2], 0, size), kp[..., :2])
            if meta["task"] != "segment":
                key = "rboxes_raw" if meta["task"] == "obb" else "boxes_raw"
                assert z[f"{p}r{i}_{key}"].shape == (n, 5 if meta["task"] == "obb" else 4)
            if meta["task"] == "obb":
                rb = z[f"{p}r{i}_rboxes"]
                assert rb.dtype == np.float32 and rb.shape == (n, 5)
                assert np.array_equal(rb, z[f"{p}r{i}_rboxes_raw"])  # predict does not clip them
                if meta.get("head") != "OBB26":  # OBB26 angles are the raw values, any range
                    assert ((rb[:, 4] >= -np.pi / 4) & (rb[:, 4] < 3 * np.pi / 4)).all()
            if meta["task"] == "segment":
                shape = tuple(z[f"{p}r{i}_masks_shape"])
                assert shape == (n, size, size)
                packed = z[f"{p}r{i}_masks"]
                assert packed.dtype == np.uint8 and packed.shape == (n, size, (size + 7) // 8)
                masks = np.unpackbits(packed, axis=-1, count=size).astype(bool)
                assert masks.reshape(n, -1).any(axis=1).all()  # Ultralytics drops empty masks


@pytest.mark.parametrize("name", sorted(n for n, (_, demo) in TASK_FILES.items() if demo is not None))
def test_demo_data(name: str) -> None:
    task, demo_name = TASK_FILES[name]
    assert demo_name is not None
    path = DEMO_DATA / demo_name
    assert path.exists(), f"{path}: the demo data ships in the repository"
    meta = _meta(_load(name))
    with np.load(path) as d:
        z = {k: d[k] for k in d.files}
    n_frames = len(z["image_names"])
    if "meta" in z:  # its own frames (the trained synthetic models at their training size): its own record
        own = _meta(z)
        assert own["weights_sha256"] == meta["weights_sha256"]  # the model the fixture tests
        assert own["trained"] == meta["trained"] and own["task"] == task
        assert [f["name"] for f in own["frames"]] == list(z["image_names"])
        meta = own
        drawn = z["drawn_frame"]
        assert drawn.shape == z["drawn_classes"].shape and set(drawn.tolist()) == set(range(n_frames))
        assert ((0 <= z["drawn_classes"]) & (z["drawn_classes"] < meta["nc"])).all()
    size = meta["imgsz"]
    assert tuple(z["input_hw"]) == (size, size)
    assert list(z["class_names"]) == meta["names"]
    for kind in _kinds(meta):
        for s in meta["strides"]:
            key = f"{kind}_{s}"
            assert z[key].dtype == np.uint8
            assert z[key].shape == (n_frames, size // s, size // s, _channels(meta, kind))
            assert z[f"scale_{key}"].dtype == np.float32 and z[f"scale_{key}"] > 0
            assert 0 <= z[f"zp_{key}"] <= 255
    refs = [k for k in z if k.startswith("ref") and k.endswith("_xyxy")]
    assert len(refs) == 1
    tag = refs[0][: -len("_xyxy")]
    n = len(z[f"{tag}_scores"])
    assert z[f"{tag}_xyxy"].shape == (n, 4)
    assert z[f"{tag}_frame"].shape == (n,) and (z[f"{tag}_frame"] < n_frames).all()
    if task == "pose":
        assert z[f"{tag}_keypoints"].shape == (n, *meta["kpt_shape"])
    if task == "obb":
        assert z[f"{tag}_rboxes"].shape == (n, 5)
    if task == "segment":
        assert z["proto"].shape == (n_frames, size // 4, size // 4, meta["nm"])
        assert z["proto"].dtype == np.uint8
        assert z[f"{tag}_masks"].shape == (n, size, (size + 7) // 8)
    assert path.stat().st_size < 1_300_000  # a demo frame, not a data set


# ---------------------------------------------------------------------------------------------
# The trained synthetic-shape models see the shapes drawn in their (unseen) test pictures: the
# drawn truth is in meta["frames"][i]["synthetic"]; Ultralytics' results at conf 0.25 against
# it, in NumPy. This is the models' competence, which makes the fixtures' masks smooth and their
# angles meaningful -- not a test of the decoder.
# ---------------------------------------------------------------------------------------------
def _fill_polygon(poly: np.ndarray, size: int) -> np.ndarray:
    """Pixels whose centre lies inside the polygon (even-odd rule)."""
    yy, xx = np.mgrid[0:size, 0:size] + 0.5
    inside = np.zeros((size, size), bool)
    for (x0, y0), (x1, y1) in zip(poly, np.roll(poly, -1, axis=0)):
        if y0 == y1:
            continue
        cross = ((y0 <= yy) != (y1 <= yy)) & (xx < x0 + (yy - y0) * (x1 - x0) / (y1 - y0))
        inside ^= cross
    return inside


def _truth(name: str):
    z = _load(name)
    meta = _meta(z)
    for i in _frames(z):
        synth = meta["frames"][i]["synthetic"]
        yield z, meta, i, synth["shapes_bottom_to_top"]


def test_trained_seg_model_finds_the_drawn_shapes() -> None:
    """A drawn shape's visible pixels against the result masks of its class. Measured on the
    frame (12 shapes, 17 results at 0.25): 10 found at mask IoU >= 0.5 (median best IoU 0.83;
    a triangle and a cross are missed: best 0.02 and 0.004); 7 results match no shape at 0.5
    (several are a second detection of a shape with another class)."""
    for z, meta, i, shapes in _truth("seg_synthetic_yolo11n.npz"):
        size = meta["imgsz"]
        fills = [_fill_polygon(np.asarray(s["polygon_clipped"]), size) if len(s["polygon_clipped"]) >= 3
                 else np.zeros((size, size), bool) for s in shapes]
        # what is visible of each shape: the shapes drawn later lie on top
        visible = [f & ~np.any(fills[k + 1:], axis=0) if k + 1 < len(fills) else f for k, f in enumerate(fills)]
        n = len(z[f"r{i}_scores"])
        masks = np.unpackbits(z[f"r{i}_masks"], axis=-1, count=size).astype(bool)
        classes = z[f"r{i}_classes"]
        iou = np.array([[(v & m).sum() / max((v | m).sum(), 1) if c == s["class"] else 0.0
                         for m, c in zip(masks, classes)] for v, s in zip(visible, shapes)]).reshape(len(shapes), n)
        assert len(shapes) >= 6
        best = iou.max(axis=1)
        assert np.median(best) >= 0.8, best
        assert (best >= 0.5).mean() >= 0.8, best  # most drawn shapes are found
        assert (iou.max(axis=0) < 0.5).sum() <= 7, iou.max(axis=0)


def _xywhr_from_corners(c: np.ndarray) -> np.ndarray:
    """(cx, cy, long side, short side, angle of the long side in [0, pi))."""
    e1, e2 = c[1] - c[0], c[2] - c[1]
    l1, l2 = np.linalg.norm(e1), np.linalg.norm(e2)
    e = e1 if l1 >= l2 else e2
    return np.array([*c.mean(axis=0), max(l1, l2), min(l1, l2), np.arctan2(e[1], e[0]) % np.pi])


def test_trained_obb_model_finds_the_drawn_shapes_and_their_angles() -> None:
    """A drawn shape is found when a result of its class has its centre within 0.15 of its long
    side and sides within 20 % (long) / 25 % (short). Measured on the two frames: 18 of 24 found;
    angle error of the long side, modulo pi: ellipses and rectangles <= 0.047 rad, crosses <= 0.16;
    triangles are not held to an angle (their minimum-area rectangle is nearly square or
    ambiguous); 4 and 3 results match no drawn shape of their class."""
    found = total = 0
    tolerance = {"ellipse": 0.07, "rectangle": 0.07, "cross": 0.2}
    for z, _meta, i, shapes in _truth("obb_synthetic_yolo11n.npz"):
        rb = z[f"r{i}_rboxes"].astype(np.float64)
        # results as (cx, cy, long, short, angle of the long side mod pi)
        res = np.array([[x, y, max(w, h), min(w, h), (r if w >= h else r + np.pi / 2) % np.pi]
                        for x, y, w, h, r in rb]).reshape(-1, 5)
        used: set[int] = set()
        for s in shapes:
            t = _xywhr_from_corners(np.asarray(s["rbox_corners"]))
            total += 1
            ok = [k for k in range(len(res)) if z[f"r{i}_classes"][k] == s["class"] and k not in used
                  and np.hypot(*(res[k, :2] - t[:2])) < 0.15 * t[2]
                  and abs(res[k, 2] / t[2] - 1) < 0.2 and abs(res[k, 3] / t[3] - 1) < 0.25]
            if not ok:
                continue
            k = ok[0]
            used.add(k)
            found += 1
            if s["name"] in tolerance and t[2] >= 1.2 * t[3]:  # elongated: a meaningful angle
                d = abs((res[k, 4] - t[4] + np.pi / 2) % np.pi - np.pi / 2)
                assert d < tolerance[s["name"]], (i, s["name"], d)
        assert len(res) - len(used) <= 4, (i, len(res), len(used))
    assert total >= 20 and found >= 0.7 * total, (found, total)


def test_trained_one_to_one_head_finds_each_drawn_shape_once() -> None:
    """YOLO26n's one-to-one head (no NMS) on its three unseen pictures at conf 0.25: a drawn shape
    is found when a result of its class has box IoU >= 0.5 with the box of its clipped outline; a
    result that matches no drawn shape counts as extra; a shape matched by two results at once is
    what a one-to-one head is trained not to give. Measured: 15 of 30 shapes found (3 of 12, 6 of
    7, 6 of 11; a short CPU training, one-to-one validation mAP50 0.651), 6 of 23 results extra,
    2 shapes with two results of IoU >= 0.5 each. A model's competence, not the decoder's."""
    found = total = extra = twice = 0
    for z, meta, i, shapes in _truth("e2e_synthetic_yolo26n.npz"):
        assert meta["head"] == "Detect" and meta["end2end"] and meta["reg_max"] == 1
        boxes, classes = z[f"r{i}_boxes"].astype(np.float64), z[f"r{i}_classes"]
        truth = np.array([np.concatenate([np.min(s["polygon_clipped"], axis=0), np.max(s["polygon_clipped"], axis=0)])
                          for s in shapes])
        lt = np.maximum(truth[:, None, :2], boxes[None, :, :2])
        rb = np.minimum(truth[:, None, 2:], boxes[None, :, 2:])
        inter = np.prod(np.clip(rb - lt, 0, None), axis=2)
        area = lambda b: np.prod(b[:, 2:] - b[:, :2], axis=1)  # noqa: E731
        iou = inter / (area(truth)[:, None] + area(boxes)[None, :] - inter)
        iou = np.where(np.array([[s["class"] == c for c in classes] for s in shapes]).reshape(iou.shape), iou, 0)
        total += len(shapes)
        found += int((iou.max(axis=1, initial=0) >= 0.5).sum())
        extra += int((iou.max(axis=0, initial=0) < 0.5).sum())
        twice += int(((iou >= 0.5).sum(axis=1) > 1).sum())
    assert total >= 18
    assert found >= 0.45 * total, (found, total)
    assert extra <= 7, extra
    assert twice <= 2, twice
