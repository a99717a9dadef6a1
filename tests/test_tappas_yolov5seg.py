"""The plugin as a drop-in for TAPPAS' libyolov5seg_post.so (docs/gstreamer.md, "YOLOv5-seg"):
the same config file, the same entry points, and the objects that post-process gives, compared with
TAPPAS' own .so built from ../shared/tappas/5.1 (tests/tappas/tappas_yolov5seg.py) run by the test
host on the same tensors; the plugin on both ABI lines, TAPPAS' .so on 5.1 (its source's line).
The plugin's rule for boxes (clipped to the picture, a detection with less than a pixel left
dropped) is applied to TAPPAS' boxes before they are compared; everything else must be equal."""

from __future__ import annotations

import json
from pathlib import Path
from typing import List

import numpy as np
import pytest

from tappas import tappas_yolov5seg, yolov5seg_frames as v5
from tappas.plugin_host import run_host, write_frames

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def reference(tappas_builds, tmp_path_factory):
    """Runs TAPPAS' own .so. Its source is 5.1's (3.31's HailoTensor has no quant_info()), so it is
    built and run on the 5.1 line whichever line the plugin is built for: the objects must not
    depend on the line."""
    host = tappas_builds("5.1")
    so = tappas_yolov5seg.build("5.1", tmp_path_factory)
    return lambda desc, config, function: run_host(host, desc, config, function, plugin=so)[0]


def _objects(frame: dict) -> List[dict]:
    assert all(o["type"] == "detection" for o in frame["objects"])
    return sorted(frame["objects"], key=lambda d: (-d["confidence"], d["bbox"][0], d["bbox"][1]))


def _masks(det: dict) -> List[dict]:
    return [o for o in det["objects"] if o["type"] == "conf_class_mask"]


def _compare(ours: List[dict], theirs: List[dict]) -> int:
    """Frame by frame, detection by detection (by confidence): the same kinds and values."""
    assert len(ours) == len(theirs)
    compared = 0
    for a, b in zip(ours, theirs):
        want = [d for d in _objects(b) if v5.clipped(d["bbox"]) is not None]
        got = _objects(a)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert (g["class_id"], g["label"]) == (w["class_id"], w["label"])
            assert g["confidence"] == pytest.approx(w["confidence"], rel=2e-6, abs=1e-7)
            np.testing.assert_allclose(g["bbox"], v5.clipped(w["bbox"]), rtol=0, atol=2e-6)
            (wm,) = _masks(w)  # one mask, nothing else
            assert len(w["objects"]) == 1
            if wm["width"] == 0 or wm["height"] == 0:  # TAPPAS' empty mask: the plugin attaches none
                assert g["objects"] == []
                continue
            (gm,) = _masks(g)
            assert len(g["objects"]) == 1
            assert (gm["width"], gm["height"]) == (wm["width"], wm["height"])
            assert gm.get("class_id") == wm.get("class_id")  # the host shows it; the `hailo` module does not
            assert gm["transparency"] == pytest.approx(wm["transparency"])
            np.testing.assert_allclose(gm["data"], wm["data"], rtol=0, atol=2e-6)
            compared += 1
    return compared


@pytest.mark.parametrize("function", ["yolov5seg", "filter"])
def test_objects_equal_tappas_libyolov5seg_post(built, reference, tmp_path, function):
    outs = v5.frames(count=3, objects=20, seed=1)
    desc = write_frames(tmp_path / "frames", outs)
    config = tmp_path / "yolov5n_seg.json"
    config.write_text(json.dumps(v5.config(score_threshold=0.3, iou_threshold=0.5)))
    ours, errors = run_host(built, desc, config, function)
    assert errors == ""
    theirs = reference(desc, config, function)
    assert _compare(ours, theirs) >= 40
    # Some of TAPPAS' boxes cross the edges (clipped here) and NMS removed some neighbours.
    raw = [d for f in theirs for d in f["objects"]]
    assert any(d["bbox"][0] < 0 or d["bbox"][0] + d["bbox"][2] > 1 for d in raw)
    assert len(raw) < 2 * 60


def test_tappas_defaults_without_a_config_file(built, reference, tmp_path):
    """No config file: libyolov5seg_post.so's defaults (yolov5n-seg's names at 640, 0.25 / 0.6)."""
    outs = v5.frames(count=2, objects=12, seed=2)
    desc = write_frames(tmp_path / "frames", outs)
    ours, errors = run_host(built, desc, tmp_path / "absent.json", "yolov5seg")
    assert "libyolov5seg_post.so's defaults" in errors
    theirs = reference(desc, tmp_path / "absent.json", "yolov5seg")
    assert _compare(ours, theirs) >= 12


def test_every_decoder_setting_applies_on_top(built, tmp_path):
    """A DecoderConfig setting in the same file: classes (an allow-list) and max_total."""
    outs = v5.frames(count=2, objects=20, seed=3)
    desc = write_frames(tmp_path / "frames", outs)
    base = v5.config(score_threshold=0.3)
    plain, _ = run_host(built, desc, base, "filter", tmp=tmp_path)
    capped, errors = run_host(built, desc, {**base, "max_total": 3}, "filter", tmp=tmp_path)
    assert errors == ""
    for a, b in zip(plain, capped):
        assert len(b["objects"]) == min(3, len(a["objects"]))
        assert [d["confidence"] for d in _objects(b)] == [d["confidence"] for d in _objects(a)][:3]
    keep = sorted({d["class_id"] - 1 for d in plain[0]["objects"]})[:2]
    only, _ = run_host(built, desc, {**base, "classes": keep}, "filter", tmp=tmp_path)
    for a, b in zip(plain, only):
        assert [d for d in _objects(a) if d["class_id"] - 1 in keep] == _objects(b)


def test_entry_points_are_exported(built):
    import subprocess
    out = subprocess.run(["nm", "-D", "--defined-only", str(built.plugin)], capture_output=True, text=True).stdout
    assert "yolov5seg" in {line.split()[-1] for line in out.splitlines() if line.strip()}


@pytest.mark.parametrize("change, words", [
    (dict(outputs_name=["yolov5n_seg/conv63", "yolov5n_seg/conv48", "yolov5n_seg/conv55"]),
     "outputs_name must be a list of 4 output names"),
    (dict(outputs_name=["p", "yolov5n_seg/conv48", "yolov5n_seg/conv55", "yolov5n_seg/conv61"]),
     'outputs_name: "p" is not among the outputs'),
    (dict(outputs_size=[20, 40, 40]), 'outputs_size: output "yolov5n_seg/conv48" is 80x80'),
    (dict(anchors=[[116, 90, 156, 198], [30, 61, 62, 45, 59, 119], [10, 13, 16, 30, 33, 23]]), "anchors must be"),
    (dict(strides=[32, 16]), "outputs_size must be 2 grid sizes"),
    (dict(input_shape=[640]), "input_shape must be [width, height]"),
    (dict(heads=[{"output": "yolov5n_seg/conv48", "anchors": [[10, 13]], "stride": 8}]),
     "heads and libyolov5seg_post.so's keys"),
    (dict(score_threshold="high"), "score_threshold"),
])
def test_config_errors_name_the_key(built, tmp_path, change, words):
    outs = v5.frames(count=1, objects=3, seed=4)
    desc = write_frames(tmp_path / "frames", outs)
    frames, errors = run_host(built, desc, {**v5.config(), **change}, "yolov5seg", tmp=tmp_path)
    assert words in errors, errors
    assert "DecoderConfig" not in errors and "hd." not in errors
    assert all(not f["objects"] for f in frames)


def test_entry_point_name_with_heads_says_which_function_to_use(built, tmp_path):
    """function-name yolov5seg with only `heads` (none of TAPPAS' keys): the message names the entry
    point, not keys the file does not have."""
    desc = write_frames(tmp_path / "frames", v5.frames(count=1, objects=3, seed=4))
    heads = [{"output": "yolov5n_seg/conv48", "anchors": [[10, 13], [16, 30], [33, 23]], "stride": 8}]
    _, errors = run_host(built, desc, {"heads": heads}, "yolov5seg", tmp=tmp_path)
    assert "function-name yolov5seg reads libyolov5seg_post.so's keys" in errors, errors
    assert "use function-name filter with heads" in errors


def test_the_example_is_the_documented_config_and_tappas_defaults(built, reference, tmp_path):
    """examples/tappas/yolov5seg.json: docs/gstreamer.md's block, libyolov5seg_post.so's defaults."""
    example = ROOT / "examples" / "tappas" / "yolov5seg.json"
    doc = (ROOT / "docs" / "gstreamer.md").read_text()
    section = doc[doc.index("## YOLOv5-seg"):]
    block = section[section.index("```json") + len("```json"):section.index("```", section.index("```json") + 7)]
    assert json.loads(block) == json.loads(example.read_text()) == v5.config(score_threshold=0.25, iou_threshold=0.6)
    desc = write_frames(tmp_path / "frames", v5.frames(count=2, objects=10, seed=6))
    ours, errors = run_host(built, desc, example, "filter")
    assert errors == ""
    assert _compare(ours, reference(desc, example, "filter")) >= 10
