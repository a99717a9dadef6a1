"""Combinations the decoder does not build are refused, in the config and in the core: YOLOv5/YOLOX
heads give detections only, with no keypoints, angles or masks gathered after them (a silent result
without them would look like a bug in the model). The end-to-end selection takes task outputs."""

import numpy as np
import pytest

import hailo_decode as hd
from hailo_decode import _core
from hailo_decode.decoder import _core_config
from task_cases import make_task_case


@pytest.mark.parametrize("task", ["pose", "obb"])
def test_end2end_with_task_outputs_is_built_by_the_config_and_the_core(task):
    """Since issue 13 the end-to-end selection gathers the task outputs of its rows (the results
    are checked in test_end2end_tasks.py); both the config and a C++ caller's Config build it."""
    outputs, heads, raw, _ = make_task_case(np.random.default_rng(0), task)
    cfg = hd.DecoderConfig(outputs, heads, image_size=(64, 64), end2end=True, score_threshold=0.5)
    d = hd.Decoder(cfg)(raw)
    assert len(d) > 0
    assert (d.keypoints if task == "pose" else d.rboxes) is not None
    core = _core_config(hd.DecoderConfig(outputs, heads, image_size=(64, 64)))
    core.settings.end2end = True
    _core.Decoder(core)


def test_anchor_heads_take_no_task_outputs():
    outputs = [hd.OutputInfo("v5/conv8", (8, 8, 3 * 6), "uint8", zp=0.0, scale=1 / 255)]
    heads = [hd.AnchorHead("v5/conv8", [(10, 13), (16, 30), (33, 23)], 8)]
    hd.DecoderConfig(outputs, heads, image_size=(64, 64))
    with pytest.raises(ValueError, match="task='pose'"):
        hd.DecoderConfig(outputs, heads, image_size=(64, 64), task="pose")
    core = _core_config(hd.DecoderConfig(outputs, heads, image_size=(64, 64)))
    h = core.heads[0]
    h.kpt_output = 0  # a keypoint output on an anchor head, as a C++ caller could set it
    core.heads = [h]
    core.num_keypoints = 1
    with pytest.raises(ValueError, match="keypoint and angle outputs need DFL heads"):
        _core.Decoder(core)


def test_core_refuses_a_threshold_count_that_fits_no_class_count():
    """Anchor heads indexed the per-class thresholds before any check (ASan: heap overflow)."""
    outputs = [hd.OutputInfo("v5/conv8", (8, 8, 3 * 7), "uint8", zp=0.0, scale=1 / 255)]
    heads = [hd.AnchorHead("v5/conv8", [(10, 13), (16, 30), (33, 23)], 8)]
    core = _core_config(hd.DecoderConfig(outputs, heads, image_size=(64, 64), score_threshold=[0.2, 0.3]))
    core.num_classes = 3  # two thresholds for three classes, as a C++ caller could pass them
    with pytest.raises(ValueError, match="one per class"):
        _core.Decoder(core)
    core.num_classes = 2
    s = core.settings
    s.score_threshold = []
    core.settings = s
    with pytest.raises(ValueError, match="one per class"):
        _core.Decoder(core)
