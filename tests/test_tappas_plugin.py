"""The TAPPAS hailofilter plugin (cpp/tappas, docs/gstreamer.md), built for both ABI lines against
the headers in ../shared/tappas (5.1: hailo_tensor_metadata_t, 3.31: hailo_vstream_info_t) and the
installed package's static core, exactly as `hailo-decode tappas build` builds it, and run by its
test host, which does to it what hailofilter does (dlopen, init, dlsym, per frame an ROI with every
output tensor added, the call, the tensors cleared, free_resources) and prints the objects it
added. The plugin's objects must be the Python Decoder's for the same tensors and settings."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
import pytest

import hailo_decode as hd
from hailo_decode.detections import rbox_corners
from tappas.plugin_host import ABI, Out, host_env as _env
from tappas.plugin_host import run_host as _run_host, write_frames as _write_frames

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "python" / "hailo_decode" / "data"
FIXTURES = ROOT / "tests" / "fixtures"
EXAMPLES = ROOT / "examples" / "tappas"
STRIDES = (8, 16, 32)
EXPORTS = {"init", "free_resources", "filter", "filter_letterbox", "yolov5seg", "hailo_decode_tappas_abi"}


# ---------------------------------------------------------------------------------------------
# Running the host (the `built` fixture, tests/conftest.py, builds it once per line and session)
# ---------------------------------------------------------------------------------------------
def _detections(frame: dict) -> List[dict]:
    assert all(o["type"] == "detection" for o in frame["objects"])
    return frame["objects"]


def _subs(det: dict, kind: str) -> List[dict]:
    return [o for o in det["objects"] if o["type"] == kind]


# ---------------------------------------------------------------------------------------------
# The models: real outputs the package ships, as hailonet would hand them
# ---------------------------------------------------------------------------------------------
def _demo(name: str, extra: Optional[str], proto: bool = False):
    """A demo file (python/hailo_decode/data): its outputs (all frames) and OutputInfos."""
    path = DATA / name
    if not path.exists():
        pytest.skip(f"{path} is absent")
    z = dict(np.load(path))
    outs, infos = [], []
    kinds = ["box", "cls"] + ([extra] if extra else [])
    keys = [f"{k}_{s}" for s in STRIDES for k in kinds] + (["proto"] if proto else [])
    for key in keys:
        a = z[key]
        zp, scale = float(z[f"zp_{key}"]), float(z[f"scale_{key}"])
        name_ = f"model/{key}"
        outs.append(Out(name_, a, "UINT8", zp, scale))
        infos.append(hd.OutputInfo(name_, a.shape[1:], "uint8", zp=zp, scale=scale))
    return outs, infos, [str(n) for n in z["class_names"]]


def _python_frames(cfg: hd.DecoderConfig, outs: Sequence[Out]) -> List[hd.Detections]:
    dec = hd.Decoder(cfg)
    n = outs[0].data.shape[0]
    return [dec({o.name: o.data[i] for o in outs}) for i in range(n)]


def _clipped(d: hd.Detections) -> Tuple[np.ndarray, np.ndarray]:
    """The plugin's rule for `filter` (docs/gstreamer.md, "Boxes in the picture"), written out
    here: each box (normalised to the input, float32) clipped to [0, 1]; a detection kept when its
    clipped box is at least one input pixel wide and high (input side x box side >= 1 in float32,
    as hailooverlay sizes a mask). (kept indices, clipped xyxy boxes of those)."""
    b = d.boxes_as("yxyx_normalized").astype(np.float32)[:, [1, 0, 3, 2]].clip(np.float32(0), np.float32(1))
    H, W = d.image_size
    w, h = b[:, 2] - b[:, 0], b[:, 3] - b[:, 1]
    keep = np.flatnonzero((w > 0) & (h > 0) & (np.float32(W) * w >= 1) & (np.float32(H) * h >= 1))
    return keep, b[keep]


def _normalized(d: hd.Detections) -> np.ndarray:
    """HailoDetection's bbox [xmin, ymin, w, h] as the plugin computes it (clipped; only the kept
    detections), float32."""
    _, b = _clipped(d)
    xmin, ymin, xmax, ymax = b[:, 0], b[:, 1], b[:, 2], b[:, 3]
    return np.stack([xmin, ymin, xmax - xmin, ymax - ymin], axis=1).astype(np.float32)


def _check_detections(frames: List[dict], expected: List[hd.Detections], labels: Sequence[str]) -> int:
    assert len(frames) == len(expected)
    total = 0
    for frame, d in zip(frames, expected):
        dets = _detections(frame)
        keep, _ = _clipped(d)
        assert len(dets) == len(keep)
        if not len(keep):
            continue
        ids, scores = d.class_ids[keep], d.scores[keep]
        np.testing.assert_array_equal(np.float32([x["bbox"] for x in dets]), _normalized(d))
        np.testing.assert_array_equal([x["class_id"] for x in dets], ids + 1)
        assert [x["label"] for x in dets] == [labels[c + 1] if c + 1 < len(labels) else "" for c in ids]
        np.testing.assert_array_equal(np.float32([x["confidence"] for x in dets]), np.clip(scores, 0, 1))
        total += len(keep)
    return total


def _labels(names: Sequence[str]) -> List[str]:
    return ["unlabeled", *names]


# ---------------------------------------------------------------------------------------------
# The build and its exports
# ---------------------------------------------------------------------------------------------
def test_the_build_says_the_abi_line_and_prints_a_pipeline(built):
    assert built.plugin.is_file() and built.host.is_file()
    assert ABI[built.line] in built.stdout
    assert f"hailofilter so-path={built.plugin.resolve()}" in built.stdout
    assert "gst-launch-1.0" in built.stdout and "hailooverlay" in built.stdout
    assert "nms-score-threshold=" not in built.stdout.split("gst-launch-1.0", 1)[1]
    r = subprocess.run([str(built.host), "--plugin", str(built.plugin), "--abi"], capture_output=True, text=True,
                       env=_env())
    assert r.returncode == 0 and r.stdout.splitlines() == [ABI[built.line]] * 2


def test_only_the_entry_points_are_exported(built):
    nm = shutil.which("nm")
    if nm is None:
        pytest.skip("nm (binutils) not found")
    r = subprocess.run([nm, "-D", "--defined-only", str(built.plugin)], capture_output=True, text=True, check=True)
    exported = {line.split()[-1] for line in r.stdout.splitlines() if line.strip()}
    assert exported == EXPORTS
    # Links nothing of Hailo's (TAPPAS' headers are header-only).
    ldd = shutil.which("ldd")
    if ldd:
        deps = subprocess.run([ldd, str(built.plugin)], capture_output=True, text=True, env=_env()).stdout
        assert "hailo" not in deps.replace(str(built.plugin), "")


# ---------------------------------------------------------------------------------------------
# Every task: the plugin's objects are the Python Decoder's
# ---------------------------------------------------------------------------------------------
def test_detection_dfl_equals_the_python_decoder(built, tmp_path):
    outs, infos, names = _demo("fall_uint8.npz", None)
    settings = dict(class_activation="sigmoid", score_threshold=0.1, iou_threshold=0.6)  # the model's logits
    expected = _python_frames(hd.DecoderConfig(infos, **settings), outs)
    labels = _labels(names)
    frames, err = _run_host(built, _write_frames(tmp_path, outs), dict(labels=labels, **settings), tmp=tmp_path)
    assert _check_detections(frames, expected, labels) >= 5
    assert err == ""
    for frame in frames:
        assert frame["scaling_bbox"] == [0, 0, 1, 1]
        assert all(not d["objects"] for d in frame["objects"])


def test_without_a_config_file_labels_are_cocos(built, tmp_path):
    outs, infos, _ = _demo("fall_uint8.npz", None)
    expected = _python_frames(hd.DecoderConfig(infos), outs)
    frames, err = _run_host(built, _write_frames(tmp_path, outs), None)
    coco = ["unlabeled", "person", "bicycle"]
    assert _check_detections(frames, expected, coco) >= 1
    assert err == ""


def _plugin_and_python(built, tmp_path, demo: str, role: str, settings: dict, at_least: int, proto: bool = False):
    """The plugin's frames and the Python Decoder's on one bundled demo with the same settings (and
    the demo's labels), their detections checked equal, at least `at_least` of them."""
    outs, infos, names = _demo(demo, role, proto=proto)
    expected = _python_frames(hd.DecoderConfig(infos, **{k: v for k, v in settings.items() if k != "obb_user_meta"}), outs)
    labels = _labels(names)
    frames, _ = _run_host(built, _write_frames(tmp_path, outs), dict(labels=labels, **settings), tmp=tmp_path)
    assert _check_detections(frames, expected, labels) >= at_least
    return frames, expected


def test_pose_landmarks_equal_the_python_decoder(built, tmp_path):
    frames, expected = _plugin_and_python(built, tmp_path, "pose_uint8.npz", "kpt",
                                          dict(task="pose", semantics="ultralytics", score_threshold=0.25), 3)
    skeleton = [[0, 1], [1, 3], [0, 2], [2, 4], [5, 6], [5, 7], [7, 9], [6, 8], [8, 10], [5, 11], [6, 12], [11, 12],
                [11, 13], [12, 14], [13, 15], [14, 16]]
    for frame, d in zip(frames, expected):
        box = _normalized(d)
        H, W = d.image_size  # ultralytics' box format is xyxy_pixels: keypoints in pixels too
        keep, _ = _clipped(d)
        for det, b, k in zip(_detections(frame), box, d.keypoints[keep] / np.float32([W, H, 1])):
            (lm,) = _subs(det, "landmarks")
            assert lm["name"] == "centerpose" and lm["pairs"] == skeleton and lm["threshold"] == 0.5
            pts = np.float32(lm["points"])
            xmin, ymin, w, h = b
            np.testing.assert_array_equal(pts[:, 0], (k[:, 0] - xmin) / w)
            np.testing.assert_array_equal(pts[:, 1], (k[:, 1] - ymin) / h)
            np.testing.assert_array_equal(pts[:, 2], np.clip(k[:, 2], 0, 1))


def _crop(a: np.float32, b: np.float32, n: int) -> Tuple[int, int]:
    def cell(v):
        return 0 if not v > 0 else n if v >= n else int(np.ceil(v))
    lo = cell(a)
    return lo, max(lo, cell(b))


def test_segmentation_masks_equal_the_python_decoder(built, tmp_path):
    frames, expected = _plugin_and_python(built, tmp_path, "seg_uint8.npz", "mask",
                                          dict(semantics="ultralytics", score_threshold=0.25), 5, proto=True)
    masks = 0
    for frame, d in zip(frames, expected):
        ml = d._mask_logits
        ph, pw, H, W = ml.grid
        sx, sy = np.float32(pw / W), np.float32(ph / H)
        at_proto = d.masks_at_proto()
        keep, _ = _clipped(d)
        for i, det in zip(keep, _detections(frame)):
            box = d.boxes_as("xyxy_pixels")[i]
            x0, x1 = _crop(box[0] * sx, box[2] * sx, pw)
            y0, y1 = _crop(box[1] * sy, box[3] * sy, ph)
            found = _subs(det, "conf_class_mask")
            if x0 == x1 or y0 == y1:
                assert not found
                continue
            (m,) = found
            assert (m["width"], m["height"]) == (x1 - x0, y1 - y0)
            assert m["class_id"] == det["class_id"] and m["transparency"] == pytest.approx(0.3)
            r0, c0, rows, cols = (int(v) for v in ml.windows[i])
            logits = ml.logits[int(ml.offsets[i]):int(ml.offsets[i]) + rows * cols].reshape(rows, cols)
            crop = logits[y0 - r0:y1 - r0, x0 - c0:x1 - c0].astype(np.float32)
            values = np.float32(m["data"]).reshape(y1 - y0, x1 - x0)
            np.testing.assert_allclose(values, 1 / (1 + np.exp(-crop.astype(np.float64))), rtol=0, atol=1e-6)
            # Above one half exactly where the Python package's prototype-grid mask is set.
            clear = np.abs(crop) > 1e-5
            np.testing.assert_array_equal((values > 0.5)[clear], at_proto[i, y0:y1, x0:x1][clear])
            masks += 1
    assert masks >= 5


def test_obb_reads_back_exactly_and_draws_its_outline(built, tmp_path):
    # The exact rotated box (a HailoUserMeta) only with "obb_user_meta": true (issue 33).
    frames, expected = _plugin_and_python(built, tmp_path, "obb_uint8.npz", "angle",
                                          dict(task="obb", semantics="ultralytics", score_threshold=0.25,
                                               obb_user_meta=True), 5)
    for frame, d in zip(frames, expected):
        H, W = d.image_size
        keep, _ = _clipped(d)
        corners = rbox_corners(d.rboxes[keep]) / np.float32([W, H])
        for det, b, r, c in zip(_detections(frame), _normalized(d), d.rboxes[keep], corners):
            (meta,) = _subs(det, "user_meta")
            words = meta["string"].split()
            assert words[0] == "hailo_decode.obb" and len(words) == 8
            np.testing.assert_array_equal(np.float32([float(w) for w in words[1:6]]), r)  # exact
            assert (float(words[6]), float(words[7])) == (W, H)
            assert meta["int"] == det["class_id"] and np.float32(meta["float"]) == r[4]
            (lm,) = _subs(det, "landmarks")
            assert lm["name"] == "obb" and lm["pairs"] == [[0, 1], [1, 2], [2, 3], [3, 0]]
            pts = np.float32(lm["points"])
            np.testing.assert_allclose(pts[:, 0] * b[2] + b[0], c[:, 0], rtol=0, atol=1e-5)
            np.testing.assert_allclose(pts[:, 1] * b[3] + b[1], c[:, 1], rtol=0, atol=1e-5)
            if np.all(c >= 0) and np.all(c <= 1):  # inside the picture: inside the enclosing box too
                assert np.all(pts[:, :2] > -1e-4) and np.all(pts[:, :2] < 1 + 1e-4)
            np.testing.assert_array_equal(pts[:, 2], 1)


def test_obb_detections_carry_no_user_meta_unless_asked(built, tmp_path):
    """Issue 33: TAPPAS' Python module binds HailoUserMeta without get_type() (5.1's
    hailo_python_api.cpp, and hailo-ai/tappas' 3.x source), so a callback that walks
    det.get_objects() and asks each object its type failed on OBB detections. By default an OBB
    detection holds only objects every binding gives get_type(): its landmarks."""
    outs, _, names = _demo("obb_uint8.npz", "angle")
    desc = _write_frames(tmp_path, outs)
    config = dict(labels=_labels(names), task="obb", semantics="ultralytics", score_threshold=0.25)
    frames, _ = _run_host(built, desc, config, tmp=tmp_path)
    dets = [d for f in frames for d in _detections(f)]
    assert len(dets) >= 5
    assert all([o["type"] for o in d["objects"]] == ["landmarks"] for d in dets)
    opted, _ = _run_host(built, desc, dict(config, obb_user_meta=True), tmp=tmp_path)
    assert all([o["type"] for o in d["objects"]] == ["landmarks", "user_meta"] for f in opted for d in _detections(f))


def _one_class_obb() -> Tuple[List[Out], List[hd.OutputInfo], List[dict]]:
    """The OBB demo with its class tensors cut to the first class: class and angle outputs both
    one channel a cell, which pairing by shape cannot tell apart; and the heads naming them."""
    outs, infos, _ = _demo("obb_uint8.npz", "angle")
    cut = [Out(o.name, np.ascontiguousarray(o.data[..., :1]) if "/cls_" in o.name else o.data, o.meta_type, o.zp, o.scale)
           for o in outs]
    infos = [hd.OutputInfo(o.name, o.data.shape[1:], "uint8", zp=o.zp, scale=o.scale) for o in cut]
    heads = [{"box": f"model/box_{s}", "cls": f"model/cls_{s}", "angle": f"model/angle_{s}", "stride": s} for s in STRIDES]
    return cut, infos, heads


# Words of Python's API that a config file's reader cannot act on.
PYTHON_WORDS = ("Head(", "heads=", "from_nms_json", "from_hef", "DecoderConfig", "task=", "bins=", "proto=",
                "keypoint_dims=", "end2end=")


def test_one_class_obb_with_heads_in_the_config_equals_the_python_decoder(built, tmp_path):
    outs, infos, heads = _one_class_obb()
    settings = dict(task="obb", semantics="ultralytics", score_threshold=0.25)
    expected = _python_frames(hd.DecoderConfig(infos, heads, **settings), outs)
    labels = ["unlabeled", "plane"]
    desc = _write_frames(tmp_path, outs)
    frames, err = _run_host(built, desc, dict(labels=labels, heads=heads, **settings), tmp=tmp_path)
    assert err == ""
    assert _check_detections(frames, expected, labels) >= 3
    # Without the heads: named once, pointing at the config's keys, never at a Python call.
    frames, err = _run_host(built, desc, dict(labels=labels, **settings), tmp=tmp_path)
    assert all(not f["objects"] for f in frames)
    (line,) = err.splitlines()
    assert "ambiguous" in line and '"heads": [{"box": ...' in line and '"nms_json"' in line
    assert not [w for w in PYTHON_WORDS if w in line], line


def test_64_classes_with_16_bins_through_heads_in_the_config(built, tmp_path):
    rng = np.random.default_rng(64)
    outs = []
    for s in STRIDES:
        g = 320 // s
        box = rng.integers(0, 256, size=(2, g, g, 64), dtype=np.uint8)
        cls = rng.integers(0, 60, size=(2, g, g, 64), dtype=np.uint8)
        hot = rng.random(size=cls.shape) < 0.003
        cls[hot] = rng.integers(200, 256, size=int(hot.sum()), dtype=np.uint8)
        outs += [Out(f"m/box{s}", box, "UINT8", 128.0, 0.1), Out(f"m/cls{s}", cls, "UINT8", 100.0, 0.05)]
    infos = [hd.OutputInfo(o.name, o.data.shape[1:], "uint8", zp=o.zp, scale=o.scale) for o in outs]
    heads = [{"box": f"m/box{s}", "cls": f"m/cls{s}"} for s in STRIDES]
    settings = dict(class_activation="sigmoid", score_threshold=0.5)
    expected = _python_frames(hd.DecoderConfig(infos, heads, **settings), outs)
    labels = ["unlabeled", *[f"c{k}" for k in range(64)]]
    desc = _write_frames(tmp_path, outs)
    frames, err = _run_host(built, desc, dict(labels=labels, heads=heads, **settings), tmp=tmp_path)
    assert err == "" and _check_detections(frames, expected, labels) >= 5
    _, err = _run_host(built, desc, dict(labels=labels, **settings), tmp=tmp_path)
    assert "cannot tell box from class output" in err and '"heads"' in err and '"bins"' in err
    assert not [w for w in PYTHON_WORDS if w in err], err


PAIRING_ERRORS = [
    # (what, outputs, config, words the line must hold)
    ("a pose config on a detection model", "fall", {"task": "pose"}, ['"task": "pose"']),
    ("a mask head without its prototype", "seg",
     {"heads": [{"box": f"model/box_{s}", "cls": f"model/cls_{s}", "mask": f"model/mask_{s}"} for s in STRIDES]},
     ['"proto"']),
    ("heads that miss an output", "fall", {"heads": [{"box": "model/box_8", "cls": "model/cls_8"}]}, ['"heads"']),
    ("a head naming no output", "fall", {"heads": [{"box": "model/box_8", "cls": "model/cls8"}]},
     ["heads[0].cls: 'model/cls8' is not among the outputs", "did you mean 'model/cls_8'?"]),
    ("detection heads with a task", "fall", {"task": "obb"}, ['"task"', '"heads"']),
]


@pytest.mark.parametrize("what, model, config, words", PAIRING_ERRORS, ids=[c[0] for c in PAIRING_ERRORS])
def test_pairing_errors_name_the_config_key_that_fixes_them(built, tmp_path, what, model, config, words):
    outs, _, _ = _demo(f"{model}_uint8.npz", "mask" if model == "seg" else None, proto=model == "seg")
    frames, err = _run_host(built, _write_frames(tmp_path, outs), config, extra=["--repeat", "2"], tmp=tmp_path)
    assert all(not f["objects"] for f in frames)
    (line,) = err.splitlines()
    assert "do not match" in line and all(w in line for w in words), line
    assert not [w for w in PYTHON_WORDS if w in line], line


def _fixture(name: str) -> Dict[str, np.ndarray]:
    path = FIXTURES / name
    if not path.exists():
        pytest.skip(f"{path} is absent")
    return dict(np.load(path))


def _yolo26_outputs() -> Tuple[List[Out], List[hd.OutputInfo], int, List[str]]:
    """The synthetic YOLO26n fixture's frames quantized to uint8, as the plugin's tensors and as the
    Python Decoder's outputs, its input size and class names."""
    z = _fixture("e2e_synthetic_yolo26n.npz")
    meta = json.loads(str(z["meta"]))
    n = len(meta["frames"])
    outs, infos = [], []
    for kind in ("box", "cls"):
        for s in STRIDES:
            x = np.stack([z[f"f{i}_{kind}_{s}"] for i in range(n)]).astype(np.float64)
            zp, sc = (float(v) for v in z[f"qp_{kind}_{s}"])
            q = np.clip(np.round(x / sc + zp), 0, 255).astype(np.uint8)
            outs.append(Out(f"yolo26n/{kind}_{s}", q, "UINT8", zp, sc))
            infos.append(hd.OutputInfo(f"yolo26n/{kind}_{s}", q.shape[1:], "uint8", zp=zp, scale=sc))
    return outs, infos, int(meta["imgsz"]), list(meta["names"])


def test_end2end_yolo26_equals_the_python_decoder(built, tmp_path):
    outs, infos, size, names = _yolo26_outputs()
    # Box and class tensors both have 4 channels here (4 classes): shapes cannot tell them apart, so
    # the heads are named, in Python by Head and in the plugin by an NMS JSON's bbox_decoders.
    settings = dict(json.loads((EXAMPLES / "end2end.json").read_text()))
    assert settings["end2end"] is True
    heads = [hd.Head(f"yolo26n/box_{s}", f"yolo26n/cls_{s}", s) for s in STRIDES]
    expected = _python_frames(hd.DecoderConfig(infos, heads, image_size=(size, size), **settings), outs)
    settings["nms_json"] = {"image_dims": [size, size], "bbox_decoders": [
        {"name": f"head{s}", "stride": s, "reg_layer": f"box_{s}", "cls_layer": f"cls_{s}"} for s in STRIDES]}
    labels = _labels(names)
    frames, _ = _run_host(built, _write_frames(tmp_path, outs), dict(labels=labels, **settings), tmp=tmp_path)
    assert _check_detections(frames, expected, labels) >= 3


def test_float32_outputs_with_output_format_type(built, tmp_path):
    """hailonet's output-format-type=HAILO_FORMAT_TYPE_FLOAT32: float32 data, metadata still UINT8."""
    z = _fixture("fall_float.npz")
    outs, infos = [], []
    for kind in ("box", "cls"):
        for s in STRIDES:
            x = z[f"{kind}_{s}"].astype(np.float32)
            outs.append(Out(f"fall/{kind}_{s}", x, "UINT8", 3.0, 0.05))
            infos.append(hd.OutputInfo(f"fall/{kind}_{s}", x.shape[1:], "float32"))
    settings = dict(class_activation="sigmoid", score_threshold=0.25)
    expected = _python_frames(hd.DecoderConfig(infos, **settings), outs)
    labels = _labels([str(c) for c in z["class_names"]])
    # The example config, with the activation these logits need.
    config = dict(json.loads((EXAMPLES / "float32_outputs.json").read_text()), labels=labels, **settings)
    assert config["output_format_type"] == "HAILO_FORMAT_TYPE_FLOAT32"
    desc = _write_frames(tmp_path, outs)
    frames, _ = _run_host(built, desc, config, tmp=tmp_path)
    assert _check_detections(frames, expected, labels) >= 5
    # Without it the plugin reads the buffers as the metadata says (uint8): other numbers (hailonet's
    # pitfall, docs/gstreamer.md), not these detections. (The buffers are 4x the bytes that reads.)
    as_meta, _ = _run_host(built, desc, dict(labels=labels, **settings), tmp=tmp_path)
    assert as_meta != frames


def _anchor_outputs(rng, names: Sequence[Tuple[str, int]], channels: Sequence[int], size: int) -> List[Out]:
    outs = []
    for (name, stride), c in zip(names, channels):
        g = size // stride
        q = rng.integers(0, 40, size=(2, g, g, c), dtype=np.uint8)
        hot = rng.random(size=q.shape) < 0.002
        q[hot] = rng.integers(180, 256, size=int(hot.sum()), dtype=np.uint8)
        outs.append(Out(name, q, "UINT8", 0.0, 1 / 255))
    return outs


def test_yolov5_anchors_from_a_model_zoo_nms_json(built, tmp_path):
    rng = np.random.default_rng(5)
    names = [("yolov5s/conv55", 8), ("yolov5s/conv63", 16), ("yolov5s/conv70", 32)]
    outs = _anchor_outputs(rng, names, [255] * 3, 640)
    infos = [hd.OutputInfo(o.name, o.data.shape[1:], "uint8", zp=o.zp, scale=o.scale) for o in outs]
    config = json.loads((EXAMPLES / "yolov5_anchors.json").read_text())
    nms_json = json.loads((EXAMPLES / config["nms_json"]).read_text())
    overrides = {k: v for k, v in config.items() if k != "nms_json"}
    expected = _python_frames(hd.DecoderConfig.from_nms_json(nms_json, infos, **overrides), outs)
    frames, err = _run_host(built, _write_frames(tmp_path, outs), EXAMPLES / "yolov5_anchors.json")
    coco = json.loads((EXAMPLES / "detect.json").read_text())["labels"]
    assert _check_detections(frames, expected, coco) >= 3
    assert err == ""


def test_yolox_from_an_inline_nms_json(built, tmp_path):
    rng = np.random.default_rng(6)
    config = json.loads((EXAMPLES / "yolox.json").read_text())
    outs = []
    for dec in config["nms_json"]["bbox_decoders"]:
        s = dec["stride"]
        outs += _anchor_outputs(rng, [(dec["reg_layer"], s), (dec["objectness_layer"], s), (dec["cls_layer"], s)],
                                [4, 1, 80], 640)
    infos = [hd.OutputInfo(o.name, o.data.shape[1:], "uint8", zp=o.zp, scale=o.scale) for o in outs]
    overrides = {k: v for k, v in config.items() if k != "nms_json"}
    expected = _python_frames(hd.DecoderConfig.from_nms_json(config["nms_json"], infos, **overrides), outs)
    frames, err = _run_host(built, _write_frames(tmp_path, outs), EXAMPLES / "yolox.json")
    assert _check_detections(frames, expected, ["unlabeled", *hd_coco()]) >= 1
    assert err == ""


def test_ssd_heads_from_an_inline_model_zoo_nms_json(built, tmp_path):
    """SSD raw heads (ssd_mobilenet_v1's six reg/cls pairs, 91 classes with the background) read by
    the plugin from the Model Zoo's SSD NMS JSON inline: the Python Decoder's detections, TAPPAS
    class ids 1..90 (the background removed, as COCO's 91-id labels have them)."""
    from test_ssd import CLS, GRIDS, REG, ZOO_W, zoo_json
    rng = np.random.default_rng(7)
    doc = zoo_json(score_th=0.5)
    outs = []
    for i, g in enumerate(GRIDS):
        a = len(ZOO_W[i])
        outs.append(Out("ssd/" + REG[i], rng.integers(100, 156, size=(2, g, g, 4 * a), dtype=np.uint8), "UINT8",
                        127.5, 8.0 / 255))
        outs += _anchor_outputs(rng, [("ssd/" + CLS[i], 1)], [91 * a], g)
    infos = [hd.OutputInfo(o.name, o.data.shape[1:], "uint8", zp=o.zp, scale=o.scale) for o in outs]
    expected = _python_frames(hd.DecoderConfig.from_nms_json(doc, infos), outs)
    labels = _labels([f"c{k}" for k in range(1, 91)])
    frames, err = _run_host(built, _write_frames(tmp_path, outs), dict(nms_json=doc, labels=labels), tmp=tmp_path)
    assert _check_detections(frames, expected, labels) >= 3
    assert err == ""


def hd_coco() -> List[str]:
    return json.loads((EXAMPLES / "detect.json").read_text())["labels"][1:]


# ---------------------------------------------------------------------------------------------
# An NMS op's own output, read as libyolo_hailortpp_post.so reads it
# ---------------------------------------------------------------------------------------------
def _read_as_yolo_hailortpp(flat: np.ndarray, classes: int, mpc: int, labels: Sequence[str],
                            threshold: Optional[float]) -> List[dict]:
    """TAPPAS hailo_nms_decode.hpp, float32: class by class a count, then {ymin, xmin, ymax, xmax,
    score} records; class_id = class + 1, label labels[class + 1], confidence clamped, kept when
    score > threshold (when one is given)."""
    out, at = [], 0
    for k in range(classes):
        count = flat[at]
        at += 1
        assert count <= mpc
        for _ in range(int(count)):
            y0, x0, y1, x1, s = flat[at:at + 5]
            at += 5
            if threshold is None or s > threshold:
                out.append(dict(bbox=np.float32([x0, y0, x1 - x0, y1 - y0]), xyxy=(x0, y0, x1, y1), class_id=k + 1,
                                label=labels[k + 1] if k + 1 < len(labels) else "", confidence=np.clip(s, 0, 1)))
    return out


def _in_the_input(records: List[dict]) -> List[dict]:
    """The plugin's one difference from libyolo_hailortpp_post.so: boxes clipped to the input,
    those with nothing left dropped (docs/gstreamer.md, "Boxes in the picture")."""
    out = []
    for r in records:
        x0c, y0c, x1c, y1c = (np.clip(np.float32(v), np.float32(0), np.float32(1)) for v in r["xyxy"])
        if x1c > x0c and y1c > y0c:
            out.append(dict(r, bbox=np.float32([x0c, y0c, x1c - x0c, y1c - y0c])))
    return out


@pytest.mark.parametrize("config", ["nms_op.json", None])
def test_an_nms_op_output_is_read_as_yolo_hailortpp_reads_it(built, tmp_path, config):
    outs, infos, _ = _demo("fall_uint8.npz", None)
    dec = hd.Decoder(hd.DecoderConfig(infos, class_activation="sigmoid", score_threshold=0.05, max_per_class=20))
    n = outs[0].data.shape[0]
    flat = np.stack([dec.decode_to_hailo_nms({o.name: o.data[i] for o in outs}) for i in range(n)])
    classes, mpc = 2, 20
    assert flat.shape == (n, classes * (1 + 5 * mpc))
    # A raw tensor beside it is ignored, as libyolo_hailortpp_post.so ignores every other tensor.
    nms_outs = [Out("yolov8n/yolov8_nms_postprocess", flat.astype(np.float32), "FLOAT32", nms=(classes, mpc)),
                outs[0]]
    path = None if config is None else EXAMPLES / config
    frames, _ = _run_host(built, _write_frames(tmp_path, nms_outs), path)
    labels = json.loads(path.read_text())["labels"] if path else ["unlabeled", "person", "bicycle"]
    threshold = json.loads(path.read_text())["detection_threshold"] if path else None
    total = 0
    for frame, buf in zip(frames, flat):
        want = _in_the_input(_read_as_yolo_hailortpp(buf, classes, mpc, labels, threshold))
        got = _detections(frame)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(np.float32(g["bbox"]), w["bbox"])
            assert (g["class_id"], g["label"]) == (w["class_id"], w["label"])
            assert np.float32(g["confidence"]) == w["confidence"]
        total += len(want)
    assert total >= (1 if path else 3)


NMS_FILTERS = [
    # libyolo_hailortpp_post.so's names: the best 3 of those with score > 0.35, in buffer order
    (dict(max_boxes=3, detection_threshold=0.35), [(1, 0.9), (2, 0.95), (3, 0.99)]),
    # the same settings under DecoderConfig's names
    (dict(max_total=3, score_threshold=0.35), [(1, 0.9), (2, 0.95), (3, 0.99)]),
    # one threshold per class
    (dict(score_threshold=[0.95, 0.5, 0.95]), [(2, 0.95), (3, 0.99)]),
    # an allow-list of class indices (0-based, as DecoderConfig's): class id 3 only
    (dict(classes=[2]), [(3, 0.5), (3, 0.4), (3, 0.99)]),
    # a cap of 0: nothing
    (dict(max_boxes=0), []),
    # none of them: every record, as the op wrote them
    (dict(), [(1, 0.9), (1, 0.3), (2, 0.95), (3, 0.5), (3, 0.4), (3, 0.99)]),
]


@pytest.mark.parametrize("config, want", NMS_FILTERS, ids=[json.dumps(c) for c, _ in NMS_FILTERS])
def test_an_nms_output_is_filtered_by_the_files_settings(built, tmp_path, config, want):
    classes, mpc = 3, 4
    flat = np.zeros(classes * (1 + 5 * mpc), np.float32)
    records = {0: [0.9, 0.3], 1: [0.95], 2: [0.5, 0.4, 0.99]}
    at = 0
    for k in range(classes):
        flat[at] = len(records[k])
        at += 1
        for j, s in enumerate(records[k]):
            flat[at:at + 5] = [0.1 * j, 0.1 * k, 0.1 * j + 0.2, 0.1 * k + 0.3, s]
            at += 5
    outs = [Out("model/nms_postprocess", flat[None], "FLOAT32", nms=(classes, mpc))]
    frames, err = _run_host(built, _write_frames(tmp_path, outs), config, tmp=tmp_path)
    got = [(d["class_id"], round(d["confidence"], 6)) for d in _detections(frames[0])]
    assert got == want and not err


def test_a_bad_nms_count_is_named_once_and_the_frame_gets_nothing(built, tmp_path):
    flat = np.zeros((3, 2 * (1 + 5 * 2)), np.float32)
    flat[:, 0] = 7  # more than max_bboxes_per_class
    outs = [Out("model/yolov8_nms_postprocess", flat, "FLOAT32", nms=(2, 2))]
    frames, err = _run_host(built, _write_frames(tmp_path, outs), None)
    assert all(not f["objects"] for f in frames)
    assert len(err.splitlines()) == 1 and "model/yolov8_nms_postprocess" in err and "max_bboxes_per_class" in err


def test_nms_counts_that_lie_differently_each_frame_are_named_once(built, tmp_path):
    """Found by tests/fuzz/test_fuzz_tappas.py: the message holds the class and the count, which
    differ from frame to frame; it was printed once a frame."""
    flat = np.zeros((4, 3 * (1 + 5 * 2)), np.float32)
    for f, (at, count) in enumerate([(0, 7), (11, -1), (22, 2.5), (0, np.nan)]):
        flat[f, at] = count
    outs = [Out("model/yolov8_nms_postprocess", flat, "FLOAT32", nms=(3, 2))]
    frames, err = _run_host(built, _write_frames(tmp_path, outs), None)
    assert all(not f["objects"] for f in frames)
    assert len(err.splitlines()) == 1, err
    assert "model/yolov8_nms_postprocess" in err and "class 0 has a box count of 7" in err


def test_an_nms_box_that_is_not_finite_is_named_once_and_the_frame_gets_nothing(built, tmp_path):
    flat = np.zeros((3, 2 * (1 + 5 * 2)), np.float32)
    flat[:, 0] = 1
    flat[:, 1:6] = [0.1, 0.1, 0.5, 0.5, 0.9]
    flat[0, 3], flat[1, 5], flat[2, 2] = np.nan, np.inf, -np.inf  # y_max, score, x_min
    good = np.zeros((1, flat.shape[1]), np.float32)
    good[0, 0], good[0, 1:6] = 1, [0.1, 0.1, 0.5, 0.5, 0.9]
    outs = [Out("model/yolov8_nms_postprocess", np.concatenate([flat, good]), "FLOAT32", nms=(2, 2))]
    frames, err = _run_host(built, _write_frames(tmp_path, outs), None)
    assert [len(f["objects"]) for f in frames] == [0, 0, 0, 1]
    assert len(err.splitlines()) == 1, err
    assert "model/yolov8_nms_postprocess" in err and "class 0 has a box with a value that is not finite" in err


def test_a_nan_in_float_outputs_is_named_once(built, tmp_path):
    """Found by tests/fuzz/test_fuzz_tappas.py: the core names the NaN's cell, which differs from
    frame to frame (FLOAT32 via output_format_type on UINT8 bytes, hailonet's pitfall the other
    way, gives such values); the message was printed once a frame."""
    outs, infos, _ = _demo("fall_uint8.npz", None)
    outs = [Out(o.name, o.data.astype(np.float32) * o.scale, "UINT8", o.zp, o.scale) for o in outs]
    for f in range(outs[0].data.shape[0]):
        outs[0].data[f, f % outs[0].data.shape[1], 0, f] = np.nan
    desc = _write_frames(tmp_path, outs)
    config = dict(output_format_type="HAILO_FORMAT_TYPE_FLOAT32")
    frames, err = _run_host(built, desc, config, extra=["--repeat", "2"], tmp=tmp_path)
    assert all(not f["objects"] for f in frames)
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert outs[0].name in lines[0] and "later ones are not reported" in lines[0]


# ---------------------------------------------------------------------------------------------
# filter_letterbox
# ---------------------------------------------------------------------------------------------
def _letterboxed(plain_bbox: Sequence[float], scaling: np.ndarray, size: Tuple[int, int]) -> Optional[np.ndarray]:
    """The plugin's rule for filter_letterbox (docs/gstreamer.md, "Boxes in the picture"), written
    out here: a box normalised to the input, clipped to where the picture lies in it, mapped to the
    picture (TAPPAS' create_flattened_bbox) and kept when at least one pixel wide and high at the
    network's scale of the picture; None when dropped. (The ROI is the whole frame.)"""
    f32 = np.float32
    x, y, w, h = (f32(v) for v in scaling)
    H, W = size
    bx, by, bw, bh = (f32(v) for v in plain_bbox)
    p = [f32(-x) / w, f32(-y) / h, (f32(1) - x) / w, (f32(1) - y) / h]  # the picture in the input
    x0, y0 = max(bx, p[0]), max(by, p[1])
    x1, y1 = min(f32(bx + bw), p[2]), min(f32(by + bh), p[3])
    if not (x1 > x0 and y1 > y0):
        return None
    m = [min(max(v, f32(0)), f32(1)) for v in (x0 * w + x, y0 * h + y, x1 * w + x, y1 * h + y)]
    out = np.float32([m[0], m[1], m[2] - m[0], m[3] - m[1]])
    px_w, px_h = f32(np.floor((p[2] - p[0]) * f32(W) + 0.5)), f32(np.floor((p[3] - p[1]) * f32(H) + 0.5))  # std::round
    return out if px_w * out[2] >= 1 and px_h * out[3] >= 1 else None


def test_filter_letterbox_maps_boxes_through_the_scaling_bbox_and_clears_it(built, tmp_path):
    outs, infos, names = _demo("pose_uint8.npz", "kpt")
    settings = dict(task="pose", semantics="ultralytics", score_threshold=0.25)
    desc = _write_frames(tmp_path, outs)
    config = dict(labels=_labels(names), **settings)
    plain, _ = _run_host(built, desc, config, tmp=tmp_path)
    scaling = np.float32([0.0, -0.125, 1.0, 1.25])  # a 4:5 picture letterboxed into the square input
    mapped, _ = _run_host(built, desc, config, function="filter_letterbox", scaling=scaling, tmp=tmp_path)
    assert mapped[0]["scaling_bbox"] == [0, 0, 1, 1]
    assert plain[0]["scaling_bbox"] == [0, 0, 1, 1]
    size = tuple(int(v) for v in np.load(DATA / "pose_uint8.npz")["input_hw"])
    for frame_plain, frame_mapped in zip(plain, mapped):
        want = [(p, _letterboxed(p["bbox"], scaling, size)) for p in _detections(frame_plain)]
        kept = [(p, b) for p, b in want if b is not None]
        assert len(_detections(frame_mapped)) == len(kept)
        for (p, b), m in zip(kept, _detections(frame_mapped)):
            np.testing.assert_allclose(np.float32(m["bbox"]), b, rtol=0, atol=2e-7)
            if np.float32(p["bbox"][1]) >= 0.1 and np.float32(p["bbox"][1] + p["bbox"][3]) <= 0.9:
                # Not clipped: the landmarks, relative to the detection's box, are unchanged.
                assert _subs(m, "landmarks") == _subs(p, "landmarks")
    assert sum(len(_detections(f)) for f in mapped) >= 3
    # Without a scaling bbox (no letterbox), filter_letterbox gives filter's objects.
    same, _ = _run_host(built, desc, config, function="filter_letterbox", tmp=tmp_path)
    assert same == plain


def _mask_cells(box_px: np.ndarray, grid: Tuple[int, int, int, int]) -> Tuple[int, int, int, int]:
    ph, pw, H, W = grid
    sx, sy = np.float32(pw / W), np.float32(ph / H)
    x0, x1 = _crop(box_px[0] * sx, box_px[2] * sx, pw)
    y0, y1 = _crop(box_px[1] * sy, box_px[3] * sy, ph)
    return x0, x1, y0, y1


@pytest.mark.parametrize("scaling", [(0.0, -0.5, 1.0, 2.0), (-0.6, 0.0, 2.0, 1.0), (0.0, -3.0, 1.0, 4.0)],
                         ids=["tall picture", "wide picture", "thin picture"])
def test_letterbox_clips_to_the_picture_and_drops_what_lies_in_the_padding(built, tmp_path, scaling):
    """Issue 33: hailo-apps' segmentation pipeline died when a detection wholly in the letterbox
    padding reached hailooverlay, which resized its mask to 0 pixels. Boxes are clipped to the
    picture, those with less than a pixel left dropped, masks cropped to the clipped box (never
    0 cells), landmarks re-expressed for it."""
    outs, infos, names = _demo("seg_uint8.npz", "mask", proto=True)
    settings = dict(semantics="ultralytics", score_threshold=0.25)
    expected = _python_frames(hd.DecoderConfig(infos, **settings), outs)
    desc = _write_frames(tmp_path, outs)
    config = dict(labels=_labels(names), **settings)
    scaling = np.float32(scaling)
    frames, err = _run_host(built, desc, config, function="filter_letterbox", scaling=scaling, tmp=tmp_path)
    assert err == ""
    x, y, w, h = scaling
    dropped = clipped = 0
    for frame, d in zip(frames, expected):
        H, W = d.image_size
        ml = d._mask_logits
        px = d.boxes_as("xyxy_pixels")
        f32 = np.float32  # as the plugin computes it: the picture in the input, then pixels
        picture_px = np.float32([f32(-x / w) * f32(W), f32(-y / h) * f32(H), f32((f32(1) - x) / w) * f32(W),
                                 f32((f32(1) - y) / h) * f32(H)])
        dets = _detections(frame)
        got = iter(dets)
        for i, nb in enumerate(_normalized_all(d)):
            b = _letterboxed(nb, scaling, (H, W))
            if b is None:
                dropped += 1
                continue
            det = next(got)
            np.testing.assert_allclose(np.float32(det["bbox"]), b, rtol=0, atol=2e-7)
            assert det["class_id"] == d.class_ids[i] + 1
            clip_px = np.clip(px[i], picture_px[[0, 1, 0, 1]], picture_px[[2, 3, 2, 3]]).astype(np.float32)
            clipped += int(not np.array_equal(clip_px, px[i]))
            x0, x1, y0, y1 = _mask_cells(clip_px, ml.grid)
            found = _subs(det, "conf_class_mask")
            if x0 == x1 or y0 == y1:
                assert not found
                continue
            (m,) = found
            assert (m["width"], m["height"]) == (x1 - x0, y1 - y0) and m["width"] >= 1 and m["height"] >= 1
        assert next(got, None) is None
        for det in dets:  # inside the picture, at least a pixel of it at the network's scale
            bx, by, bw, bh = det["bbox"]
            assert 0 <= bx and 0 <= by and bx + bw <= 1 + 1e-6 and by + bh <= 1 + 1e-6
    assert dropped >= 1 and clipped >= 1, (dropped, clipped)


@pytest.mark.parametrize("inside_px", [0.5, 1.5])
def test_a_box_with_less_than_a_pixel_in_the_picture_is_dropped(built, tmp_path, inside_px):
    """The picture's top edge placed `inside_px` network pixels above a detection's bottom edge:
    half a pixel left inside it is dropped (hailooverlay would size its mask int(rows x 0.5 / rows)
    = 0 pixels on a frame of the network's scale), a pixel and a half is kept."""
    outs, infos, names = _demo("fall_uint8.npz", None)
    settings = dict(class_activation="sigmoid", score_threshold=0.1, iou_threshold=0.6)
    (d, *_) = _python_frames(hd.DecoderConfig(infos, **settings), outs)
    H, W = d.image_size
    boxes = _normalized_all(d)
    bottoms = boxes[:, 1] + boxes[:, 3]
    target = int(np.argmax(np.where(bottoms < 0.9, bottoms, -1)))  # the lowest bottom edge well inside the input
    bottom = float(boxes[target, 1] + boxes[target, 3])
    p0 = bottom - inside_px / H  # the picture spans input rows p0..1
    scaling = np.float32([0.0, -p0 / (1 - p0), 1.0, 1 / (1 - p0)])
    frames, _ = _run_host(built, _write_frames(tmp_path, [Out(o.name, o.data[:1], o.meta_type, o.zp, o.scale) for o in outs]),
                          dict(labels=_labels(names), **settings), function="filter_letterbox", scaling=scaling, tmp=tmp_path)
    kept = [_letterboxed(b, scaling, (H, W)) for b in boxes]
    assert (kept[target] is None) == (inside_px < 1)
    got = _detections(frames[0])
    assert len(got) == sum(b is not None for b in kept)
    assert any(x["class_id"] == d.class_ids[target] + 1 and x["confidence"] == pytest.approx(float(d.scores[target]))
               for x in got) == (inside_px >= 1)


def _normalized_all(d: hd.Detections) -> np.ndarray:
    """Every detection's box normalised to the input, clipped to it, [xmin, ymin, w, h] float32:
    what `filter` would give before a letterbox maps it."""
    b = d.boxes_as("yxyx_normalized").astype(np.float32)[:, [1, 0, 3, 2]].clip(np.float32(0), np.float32(1))
    return np.stack([b[:, 0], b[:, 1], b[:, 2] - b[:, 0], b[:, 3] - b[:, 1]], axis=1).astype(np.float32)


def test_filter_keeps_boxes_inside_the_input_and_drops_specks(built, tmp_path):
    """`filter`: boxes normalised to the network input lie in [0, 1]; a box that clips to less
    than one input pixel is dropped (the plugin's rule, written out in _clipped)."""
    outs, infos, names = _demo("fall_uint8.npz", None)
    settings = dict(class_activation="sigmoid", score_threshold=0.02, iou_threshold=0.9)  # many, edges too
    expected = _python_frames(hd.DecoderConfig(infos, **settings), outs)
    frames, _ = _run_host(built, _write_frames(tmp_path, outs), dict(labels=_labels(names), **settings), tmp=tmp_path)
    _check_detections(frames, expected, _labels(names))
    raw = np.concatenate([d.boxes_as("yxyx_normalized") for d in expected])
    assert np.any(raw < 0) or np.any(raw > 1)  # the frames hold boxes beyond the input's edge
    for f in frames:
        for det in _detections(f):
            bx, by, bw, bh = det["bbox"]
            assert bx >= 0 and by >= 0 and bx + bw <= 1 + 1e-7 and by + bh <= 1 + 1e-7 and bw > 0 and bh > 0


# ---------------------------------------------------------------------------------------------
# Never take a pipeline down
# ---------------------------------------------------------------------------------------------
BAD_CONFIGS = [
    ("not json", "{\"labels\": [", "not valid JSON"),
    ("unknown key", {"score_treshold": 0.3}, "score_treshold"),
    ("wrong type", {"iou_threshold": "high"}, "iou_threshold"),
    ("out of range", {"iou_threshold": 2}, "iou_threshold"),
    ("labels", {"labels": ["unlabeled", 3]}, "labels"),
    ("detection_threshold", {"detection_threshold": 1.5}, "detection_threshold"),
    ("max_boxes", {"max_boxes": -1}, "max_boxes"),
    ("max_boxes not a number", {"max_boxes": "200"}, "max_boxes"),
    ("output_format_type", {"output_format_type": "FLOAT32"}, "output_format_type"),
    ("nms_json", {"nms_json": "missing.json"}, "nms_json"),
    ("both thresholds", {"detection_threshold": 0.3, "score_threshold": 0.3}, "detection_threshold"),
    ("both caps", {"max_boxes": 3, "max_total": 3}, "max_boxes"),
    ("not an object", "[1, 2]", "config file"),
    ("heads unknown key", {"heads": [{"box": "a", "clss": "b"}]}, 'heads[0]: unknown key "clss"; did you mean "cls"?'),
    ("heads not a list", {"heads": {"box": "a", "cls": "b"}}, "heads must be a list"),
    ("heads of two kinds", {"heads": [{"box": "a", "cls": "b"}, {"output": "c", "anchors": [[1, 2]]}]}, "heads[1]"),
    ("heads missing a name", {"heads": [{"reg": "a", "cls": "b"}]}, '"obj"'),
    ("heads and nms_json", {"heads": [{"box": "a", "cls": "b"}], "nms_json": {"bbox_decoders": []}}, "heads and nms_json"),
    ("obb_user_meta", {"obb_user_meta": 1}, "obb_user_meta"),
]


@pytest.mark.parametrize("what,content,key", BAD_CONFIGS, ids=[c[0] for c in BAD_CONFIGS])
def test_a_bad_config_prints_one_line_and_frames_get_nothing(built, tmp_path, what, content, key):
    outs, _, _ = _demo("fall_uint8.npz", None)
    path = tmp_path / "bad config.json"
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    frames, err = _run_host(built, _write_frames(tmp_path, outs), path, extra=["--repeat", "2"])
    assert len(frames) == 5 and all(not f["objects"] for f in frames)
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert str(path) in lines[0] and key in lines[0], lines[0]


def test_a_config_path_that_names_no_file_says_so_and_uses_the_defaults(built, tmp_path):
    outs, infos, _ = _demo("fall_uint8.npz", None)
    frames, err = _run_host(built, _write_frames(tmp_path, outs), tmp_path / "typo.json")
    _check_detections(frames, _python_frames(hd.DecoderConfig(infos), outs), ["unlabeled", "person", "bicycle"])
    assert len(err.splitlines()) == 1 and "typo.json" in err


@pytest.mark.parametrize("config", [{"task": "pose"}, {"image_size": [100, 100]}, {"score_threshold": [0.2, 0.3, 0.4]}])
def test_tensors_that_do_not_match_are_named_once(built, tmp_path, config):
    outs, _, _ = _demo("fall_uint8.npz", None)
    frames, err = _run_host(built, _write_frames(tmp_path, outs), config, extra=["--repeat", "3"], tmp=tmp_path)
    assert all(not f["objects"] for f in frames)
    lines = err.splitlines()
    assert len(lines) == 1, err  # five frames, three times: said once
    assert "model/box_8" in lines[0] and "do not match" in lines[0]


def test_two_elements_in_threads_give_the_results_of_one(built, tmp_path):
    outs, _, names = _demo("seg_uint8.npz", "mask", proto=True)
    desc = _write_frames(tmp_path, outs)
    config = dict(labels=_labels(names), semantics="ultralytics")
    _run_host(built, desc, config, extra=["--threads", "2", "--repeat", "3", "--quiet"], tmp=tmp_path)
    _run_host(built, None, None, extra=["--threads", "3", "--repeat", "2", "--quiet"])


@pytest.mark.parametrize("demo, role, settings", [
    ("pose_uint8.npz", "kpt", dict(task="pose")),
    ("seg_uint8.npz", "mask", dict()),
    ("obb_uint8.npz", "angle", dict(task="obb")),
])
def test_objects_a_callback_kept_outlive_the_element(built, tmp_path, demo, role, settings):
    # hailofilter dlcloses the plugin when its element goes; objects kept past it (by a Python
    # callback, a tracker) are read and released only after that (the host's --dlclose), and are
    # still the same. The host also checks every object is of TAPPAS' class itself, not a subclass
    # (TAPPAS' Python module would hand one over as a bare HailoObject).
    outs, _, names = _demo(demo, role, proto=role == "mask")
    desc = _write_frames(tmp_path, outs)
    config = dict(labels=_labels(names), semantics="ultralytics", score_threshold=0.25, **settings)
    frames, _ = _run_host(built, desc, config, tmp=tmp_path)
    after, _ = _run_host(built, desc, config, extra=["--dlclose"], tmp=tmp_path)
    assert after == frames
    assert sum(len(_subs(d, t)) for f in frames for d in _detections(f)
               for t in ("landmarks", "conf_class_mask", "user_meta")) >= 3


# ---------------------------------------------------------------------------------------------
# The example configs (examples/tappas), each on a model it fits
# ---------------------------------------------------------------------------------------------
def test_example_detect_json_on_a_yolov8n_like_model(built, tmp_path):
    from hailo_decode.bench import yolov8n_like
    cfg, raw = yolov8n_like("uint8", batch=2)
    outs = [Out(o.name, raw[o.name], "UINT8", float(np.ravel(o.zp)[0]), float(np.ravel(o.scale)[0]))
            for o in cfg.outputs]
    config = json.loads((EXAMPLES / "detect.json").read_text())
    py_cfg = hd.DecoderConfig(cfg.outputs, **{k: v for k, v in config.items() if k != "labels"})
    expected = _python_frames(py_cfg, outs)
    frames, err = _run_host(built, _write_frames(tmp_path, outs), EXAMPLES / "detect.json")
    assert _check_detections(frames, expected, config["labels"]) >= 10
    assert err == ""


@pytest.mark.parametrize("example,data,extra,proto,sub", [
    ("segment.json", "seg_uint8.npz", "mask", True, "conf_class_mask"),
    ("pose.json", "pose_uint8.npz", "kpt", False, "landmarks"),
    ("obb.json", "obb_uint8.npz", "angle", False, "landmarks"),
])
def test_task_examples_load_and_decode(built, tmp_path, example, data, extra, proto, sub):
    outs, infos, _ = _demo(data, extra, proto)
    frames, err = _run_host(built, _write_frames(tmp_path, outs), EXAMPLES / example)
    dets = [d for f in frames for d in _detections(f)]
    assert dets and all(_subs(d, sub) for d in dets if sub != "conf_class_mask")
    assert any(_subs(d, sub) for d in dets)
    # No config error; at most the note that the example's labels are for another class count.
    assert all("labels has" in line for line in err.splitlines())


def test_every_example_config_is_exercised():
    exercised = {"detect.json", "segment.json", "pose.json", "obb.json", "yolov5_anchors.json", "yolov5s_nms_config.json",
                 "nms_op.json", "yolox.json", "end2end.json", "float32_outputs.json",
                 "yolov5seg.json"}  # test_tappas_yolov5seg.py
    assert {p.name for p in EXAMPLES.glob("*.json")} == exercised


# ---------------------------------------------------------------------------------------------
# The command
# ---------------------------------------------------------------------------------------------
def test_build_command_user_errors_are_one_line(tmp_path, capsys):
    from hailo_decode.cli import main
    assert main(["tappas", "build", "--include", str(tmp_path / "nowhere"), "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nowhere" in err and "Traceback" not in err
    assert err.startswith("hailo-decode tappas: ")
    assert main(["tappas", "build", "--include", str(tmp_path), "--out", str(tmp_path)]) == 2
    assert "hailo_objects.hpp" in capsys.readouterr().err


def test_relative_header_folders_are_taken_from_the_working_directory(tmp_path, monkeypatch):
    # CMake would read them relative to the plugin's sources (the first BENCHMARKS.md command failed so).
    from hailo_decode.cli.tappas import _header_dirs
    (tmp_path / "tappas").mkdir()
    (tmp_path / "tappas" / "hailo_objects.hpp").write_text("")
    (tmp_path / "hailort").mkdir()
    monkeypatch.chdir(tmp_path)
    assert _header_dirs("tappas;./hailort") == [str(tmp_path.resolve() / "tappas"), str(tmp_path.resolve() / "hailort")]


def test_the_wheel_carries_the_plugin_sources():
    from hailo_decode.cli.tappas import plugin_sources
    shipped = plugin_sources()
    ours = ROOT / "cpp" / "tappas"
    for path in ours.rglob("*"):
        if path.is_file():
            assert (shipped / path.relative_to(ours)).read_bytes() == path.read_bytes(), path
