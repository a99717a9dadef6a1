"""Pose heads from a HEF without an NMS op (tests/hef_writer builds it): DecoderConfig.from_hef
pairs box, class and keypoint outputs per grid when told the task, refuses to guess without it,
and `inspect` shows the task it found."""

from __future__ import annotations

import numpy as np
import pytest

import hailo_decode as hd
import hef_writer as w
from hailo_decode.cli.inspect import format_report, inspect_report
from hailo_decode.hef import read_hef


def _pose_hef(extra_channels: int = 51, onnx_names: bool = False, box_channels: int = 64) -> bytes:
    """Nine outputs (box, class, keypoints or angle per stride), no NMS op; onnx_names: each layer
    carries its Ultralytics ONNX node name as its original name, as the DFC keeps them."""
    layers = [w.Layer("pose/input_layer1", (640, 640, 3), "NHWC", output=False, limvals=(0.0, 255.0))]
    pad = 10
    for i, g in enumerate((80, 40, 20)):
        names = [[f"/model.23/cv{k}.{i}/cv{k}.{i}.2/Conv"] if onnx_names else [] for k in (2, 3, 4)]
        layers += [
            w.Layer(f"pose/conv_box{g}", (g, g, box_channels), "FCR", zp=90.0, scale=0.08, pad_index=pad,
                    original_names=names[0]),
            w.Layer(f"pose/conv_cls{g}", (g, g, 1), "NHCW", padded=(g, g + 8, 1), zp=128.0, scale=0.05, pad_index=pad + 1,
                    original_names=names[1]),
            w.Layer(f"pose/conv_kpt{g}", (g, g, extra_channels), "F8CR", padded=(g, g, -(-extra_channels // 8) * 8),
                    zp=120.0, scale=0.04, pad_index=pad + 2, original_names=names[2]),
        ]
        pad += 3
    ng = w.network_group("pose", layers, sorted_outputs=[la.name for la in layers if la.output][::-1])
    return w.wrap(w.hef_proto([ng], extensions=[0, 3, 12, 13, 27]), 1)


def test_from_hef_pairs_pose_outputs_with_the_task():
    data = _pose_hef()
    with pytest.raises(ValueError, match="ambiguous.*task='pose'"):
        hd.DecoderConfig.from_hef(data)
    for device in (False, True):
        cfg = hd.DecoderConfig.from_hef(data, task="pose", device_buffers=device, semantics="ultralytics")
        assert cfg.task == "pose" and (cfg.num_keypoints, cfg.keypoint_dims) == (17, 3)
        assert [(h.box, h.cls, h.kpt, h.stride) for h in cfg.heads] == [
            (f"pose/conv_box{g}", f"pose/conv_cls{g}", f"pose/conv_kpt{g}", 640 // g) for g in (80, 40, 20)]
        assert cfg.image_size == (640, 640)
        # and it decodes: zeros everywhere (logit (0 - 128) * 0.05 = -6.4: nothing passes) but one cell
        rng = np.random.default_rng(0)
        dec = hd.Decoder(cfg)
        raw = {}
        for o in cfg.outputs:
            shape = (o.frame_elements,) if o.device else o.shape
            raw[o.name] = rng.integers(0, 256, size=shape).astype(np.uint8) if "box" in o.name else \
                np.zeros(shape, np.uint8) + (0 if "cls" in o.name else 120)
        if device:
            assert len(dec(raw)) == 0
            continue
        raw["pose/conv_cls80"][10, 12, 0] = 255  # logit (255 - 128) * 0.05 = 6.35: one person at (row 10, col 12)
        d = dec(raw)
        assert len(d) == 1 and d.keypoints.shape == (1, 17, 3)
        # keypoint codes 120 = the zero point: raw 0, so x = (0 * 2 + 12) * 8 = 96, y = 80, visibility 0.5
        np.testing.assert_array_equal(d.keypoints[0], np.tile([96.0, 80.0, 0.5], (17, 1)).astype(np.float32))


def test_inspect_shows_the_task():
    info = read_hef(_pose_hef())
    rep = inspect_report(info, task="pose")
    text = format_report(rep)
    assert "task: pose (17 keypoints x 3)" in text
    assert "kpt pose/conv_kpt80" in text
    no_task = format_report(inspect_report(info))
    assert "ambiguous" in no_task


def test_original_layer_names_settle_the_pairing():
    """Ultralytics' head convs keep their ONNX names (cv2 box, cv3 class, cv4 keypoints or angle)
    as the HEF's original layer names: those pair the outputs where the shapes cannot (1 class and
    51 channels: pose or a 51-class OBB; 1 class and 1 angle channel: which is which)."""
    pose = hd.DecoderConfig.from_hef(_pose_hef(onnx_names=True))
    assert pose.task == "pose" and pose.num_keypoints == 17
    assert [(h.box, h.cls, h.kpt) for h in pose.heads] == [
        (f"pose/conv_box{g}", f"pose/conv_cls{g}", f"pose/conv_kpt{g}") for g in (80, 40, 20)]
    obb = hd.DecoderConfig.from_hef(_pose_hef(extra_channels=1, onnx_names=True))
    assert obb.task == "obb" and obb.num_classes == 1
    assert [h.angle for h in obb.heads] == [f"pose/conv_kpt{g}" for g in (80, 40, 20)]
    with pytest.raises(ValueError, match="ambiguous"):  # the same file without the names
        hd.DecoderConfig.from_hef(_pose_hef(extra_channels=1))
    # a task given that the names contradict is refused, naming both
    with pytest.raises(ValueError, match="task='obb' needs an angle output"):
        hd.DecoderConfig.from_hef(_pose_hef(onnx_names=True), task="obb")


def test_yolo26_task_hef_is_end_to_end_with_yolo26_decodes():
    """4-channel box outputs (reg_max 1) are YOLO26's: from_hef selects end to end and decodes
    keypoints as Pose26 and angles as OBB26; inspect says which and why; both can be overridden."""
    data = _pose_hef(box_channels=4)
    cfg = hd.DecoderConfig.from_hef(data, task="pose", semantics="ultralytics")
    assert (cfg.bins, cfg.end2end, cfg.keypoint_decode) == (1, True, "yolo26")
    dec = hd.Decoder(cfg)
    raw = {o.name: np.zeros(o.shape, np.uint8) + (90 if "box" in o.name else 0 if "cls" in o.name else 120)
           for o in cfg.outputs}
    raw["pose/conv_cls80"][10, 12, 0] = 255
    d = dec(raw)
    # keypoint codes 120 = the zero point: raw 0, so x = (0 + 12.5) * 8 = 100, y = (0 + 10.5) * 8 = 84
    assert len(d) == 1
    np.testing.assert_array_equal(d.keypoints[0], np.tile([100.0, 84.0, 0.5], (17, 1)).astype(np.float32))
    v8 = hd.DecoderConfig.from_hef(data, task="pose", semantics="ultralytics", keypoint_decode="yolov8", end2end=False)
    assert (v8.end2end, v8.keypoint_decode) == (False, "yolov8")
    np.testing.assert_array_equal(hd.Decoder(v8)(raw).keypoints[0],
                                  np.tile([96.0, 80.0, 0.5], (17, 1)).astype(np.float32))
    text = format_report(inspect_report(read_hef(data), task="pose", semantics="ultralytics"))
    assert "selection: end-to-end top-k (no NMS): box tensors have 4 channels" in text
    assert "end to end: each selected row's keypoints, read after the top-k" in text
    assert "task decode: keypoint_decode 'yolo26': box tensors have 4 channels" in text
    obb = hd.DecoderConfig.from_hef(_pose_hef(extra_channels=1, onnx_names=True, box_channels=4))
    assert (obb.task, obb.end2end, obb.angle_decode) == ("obb", True, "raw")
    rep = inspect_report(read_hef(_pose_hef(extra_channels=1, onnx_names=True, box_channels=4)))
    dec_rep = rep["network_groups"][0]["decoder"]
    assert dec_rep["angle_decode"] == "raw" and dec_rep["end2end"] is True
    assert dec_rep["task_decode"].startswith("angle_decode 'raw': box tensors have 4 channels")
    dfl = inspect_report(read_hef(_pose_hef(extra_channels=1, onnx_names=True)))["network_groups"][0]["decoder"]
    assert dfl["angle_decode"] == "sigmoid" and dfl["end2end"] is False
    assert dfl["task_decode"].startswith("angle_decode 'sigmoid': box tensors have 64 channels")


def test_task_decode_settings_are_checked():
    data = _pose_hef(box_channels=4)
    with pytest.raises(ValueError, match="keypoint_decode must be one of"):
        hd.DecoderConfig.from_hef(data, task="pose", keypoint_decode="pose26")
    with pytest.raises(TypeError, match="angle_decode must be one of"):  # a bool is no decode name
        hd.DecoderConfig.from_hef(data, task="pose", angle_decode=True)
