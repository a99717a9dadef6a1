"""`hailo-decode demo --task pose|obb` on the bundled pose and OBB heads (uint8), and those
bundled heads against Ultralytics' own results stored beside them (ref25_*)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import hailo_decode as hd
from hailo_decode.cli import main
from hailo_decode.demo_data import load_task_demo, task_demo_config, task_demo_frames


def _data(task):
    try:
        return load_task_demo(task)
    except FileNotFoundError:
        pytest.skip(f"no bundled {task} data")


@pytest.mark.parametrize("task, extra", [("pose", "keypoints with visibility"), ("obb", "rotated box cx=")])
def test_task_demo_prints_a_summary(capsys, task, extra):
    data = _data(task)
    assert main(["demo", "--task", task, "--semantics", "ultralytics", "--seconds", "0.05"]) == 0
    out = capsys.readouterr().out
    frames = re.findall(r"^frame (\d+): .*: (\d+) detection", out, flags=re.M)
    assert sum(int(n) for _, n in frames) == len(data["ref25_scores"])  # Ultralytics' own count at conf 0.25
    assert out.count(extra) == len(data["ref25_scores"])
    if task == "obb":  # each rotated box beside its probiou with Ultralytics' rotated box of that object
        overlaps = [float(v) for v in re.findall(r"probiou ([01]\.\d+) with Ultralytics' rotated box", out)]
        assert len(overlaps) == len(data["ref25_scores"]) and min(overlaps) > 0.98
    assert re.search(r"time per frame .* median [\d.]+ us", out)


@pytest.mark.parametrize("task", ["pose", "obb"])
def test_bundled_uint8_heads_find_ultralytics_objects(task):
    data = _data(task)
    cfg = task_demo_config(data, task, semantics="ultralytics", score_threshold=float(data["ref25_conf"]),
                           iou_threshold=float(data["ref25_iou"]))
    dets = hd.Decoder(cfg)(task_demo_frames(data, task))
    assert isinstance(dets, list)
    got = [(f, d) for f, d in enumerate(dets) for _ in range(len(d))]
    assert len(got) == len(data["ref25_scores"])
    for f, d in enumerate(dets):
        if task == "obb":  # rotated boxes: probiou with Ultralytics' (uint8 quantization moves them a little;
            # measured on the trained synthetic-shape model's frames: min 0.988)
            overlap = hd._core.probiou(d.rboxes, data["ref25_rboxes"][data["ref25_frame"] == f])
            assert np.all(overlap.max(axis=1) > 0.98)
            continue
        ref = data["ref25_xyxy"][data["ref25_frame"] == f]
        for box in d.boxes:  # every detection has its Ultralytics counterpart (IoU > 0.8)
            x1 = np.maximum(box[0], ref[:, 0])
            y1 = np.maximum(box[1], ref[:, 1])
            x2 = np.minimum(box[2], ref[:, 2])
            y2 = np.minimum(box[3], ref[:, 3])
            inter = np.clip(x2 - x1, 0, None) * np.clip(y2 - y1, 0, None)
            union = (box[2] - box[0]) * (box[3] - box[1]) + (ref[:, 2] - ref[:, 0]) * (ref[:, 3] - ref[:, 1]) - inter
            assert (inter / union).max() > 0.8


def test_unknown_demo_task_is_refused(capsys):
    with pytest.raises(SystemExit):
        main(["demo", "--task", "segment"])
