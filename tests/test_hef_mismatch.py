"""HEFs that disagree with themselves (issue 14, item 6), built with the test HEF writer: an NMS op
whose image size is not the input's (the YOLOv8n found in the wild: 320x320 input, 40/20/10 grids,
op saying 640x640), strides that do not fit the grids, and the bbox-only op's recognition."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import hailo_decode as hd
import hef_writer as w
from hailo_decode.hef import HefMismatchWarning, bbox_only_proposals, config_from_hef, hef_mismatches, read_hef
from hailo_decode.cli import main as cli_main

IN_THE_WILD = dict(classes=4, input_size=320)  # op image_hw stays the writer's (640, 640)


def _quiet(data, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("error", HefMismatchWarning)
        return config_from_hef(data, **kw)


def _one_hot_frame(cfg, row, col, cls):
    """Host buffers: stride-8 class output zero but one cell's class at 255; every box logit at its
    zero point (DFL over 16 equal logits: each side 7.5 bins); other heads' classes 0."""
    raw = {}
    for o in cfg.outputs:
        a = np.zeros(o.frame_shapes[0], o.dtype)
        if o.name.endswith(("conv41", "conv52", "conv62")):
            zp = np.asarray(o.zp, np.float64)
            a[...] = np.broadcast_to(np.round(zp).astype(a.dtype), a.shape)
        raw[o.name] = a
    raw["yolov8n/conv42"][row, col, cls] = 255
    return raw


def test_op_image_size_disagreeing_with_the_input_decodes_by_the_input_and_says_how_hailort_differs():
    data = w.yolov8_hef(1, **IN_THE_WILD)
    ng = read_hef(data).network_groups[0]
    assert ng.inputs[0].shape[:2] == (320, 320) and ng.output("yolov8n/conv41").shape[:2] == (40, 40)
    # HailoRT normalizes by the op's 640x640 with the op's strides: boxes half their size. Stride x
    # grid must equal the image size (issue 28), and the op's strides 8/16/32 x grids 40/20/10 give
    # the input's 320x320: every preset decodes by it, and the warning says HailoRT's op differs.
    for semantics in ("hailort", "ultralytics"):
        with pytest.warns(HefMismatchWarning) as rec:
            cfg = config_from_hef(data, semantics=semantics)
        assert cfg.image_size == (320, 320) and [h.stride for h in cfg.heads] == [8, 16, 32]
        (msg,) = [str(r.message) for r in rec]
        assert "says image 640x640" in msg and "is 320x320" in msg and "grids agree with the input" in msg
        assert "normalizes by the input's 320x320" in msg and "differ from the boxes of HailoRT's own op" in msg
        # The same string as the report and `inspect` give.
        assert hef_mismatches(ng, semantics) == [msg]

    # Boxes: cell (row 3, col 5) of the stride-8 head, all four DFL distances 7.5: centre
    # (5.5 x 8, 3.5 x 8) = (44, 28), sides 60 px, normalized by 320 (HailoRT's op: by 640).
    cfg = _quiet(data, image_size=(320, 320))  # said explicitly: no warning
    det320 = hd.Decoder(cfg)(_one_hot_frame(cfg, 3, 5, 2))
    assert len(det320) == 1 and det320.class_ids[0] == 2
    expected = np.array([(28 - 60) / 320, (44 - 60) / 320, (28 + 60) / 320, (44 + 60) / 320], np.float32)
    np.testing.assert_allclose(det320.boxes[0], expected, atol=1e-6)
    # HailoRT's normalization cannot be had with these strides: 8 x 40 is not 640.
    with pytest.raises(ValueError, match=r"stride 8 x grid \(40, 40\) is \(320, 320\), not the image size \(640, 640\)"):
        _quiet(data, image_size=(640, 640))


def test_op_and_its_strides_agreeing_against_the_input_follow_hailort():
    # Op 1280 with strides 16/32/64 on 80/40/20 grids (1280), input 640: the strides describe the
    # op's size, so the hailort preset normalizes by it, as HailoRT does, and says how to change it.
    data = w.yolov8_hef(1, classes=4, strides=(16, 32, 64), image_hw=(1280.0, 1280.0))
    with pytest.warns(HefMismatchWarning, match=r"normalizes by 1280x1280 too, as HailoRT does.*image_size=\(640, 640\)"):
        cfg = config_from_hef(data)
    assert cfg.image_size == (1280, 1280)


def test_strides_that_do_not_fit_the_grids():
    data = w.yolov8_hef(1, classes=4, strides=(8, 16, 16))  # the 20x20 head would need stride 32
    # HailoRT decodes with the op's strides; stride x grid = image size (issue 28) refuses them.
    with pytest.warns(HefMismatchWarning, match="strides do not fit the output grids") as rec, pytest.raises(
            ValueError, match=r"stride 16 x grid \(20, 20\) is \(320, 320\), not the image size \(640, 640\)"):
        config_from_hef(data)
    msg = str(rec[0].message)
    assert "stride 16 x grid 20x20 = 320x320" in msg and "gives strides 8, 16, 32" in msg
    # The fix the warning names: heads with the input's strides, and no warning.
    ng = read_hef(data).network_groups[0]
    heads = [hd.Head(d.reg_layer, d.cls_layer, st) for d, st in zip(ng.nms.bbox_decoders, (8, 16, 32))]
    assert [h.stride for h in _quiet(data, heads=heads).heads] == [8, 16, 32]


def test_strides_times_grids_disagreeing_with_input_and_op():
    data = w.yolov8_hef(1, classes=4, strides=(16, 32, 64))  # op and input 640, heads say 1280
    (msg,) = hef_mismatches(read_hef(data).network_groups[0])
    assert "give 1280x1280" in msg and "input 'yolov8n/input_layer1' is 640x640" in msg and "stride = 640x640 / grid" in msg
    # Op and its strides agree (1280), the input does not.
    data = w.yolov8_hef(1, classes=4, strides=(16, 32, 64), image_hw=(1280.0, 1280.0))
    (msg,) = hef_mismatches(read_hef(data).network_groups[0])
    assert "says image 1280x1280" in msg and "input disagrees with both" in msg


def test_consistent_hef_gives_no_warning():
    cfg = _quiet(w.yolov8_hef(1, classes=4))
    assert cfg.image_size == (640, 640)
    assert _quiet(w.yolov8_hef(1, classes=4, input_size=320, image_hw=(320.0, 320.0))).image_size == (320, 320)
    assert hef_mismatches(read_hef(w.yolov8_hef(1, classes=4, nms=False)).network_groups[0]) == []


def test_inspect_prints_the_warning(tmp_path, capsys):
    path = tmp_path / "wild.hef"
    path.write_bytes(w.yolov8_hef(1, **IN_THE_WILD))
    with warnings.catch_warnings():
        warnings.simplefilter("error", HefMismatchWarning)  # inspect prints it instead of warning
        assert cli_main(["inspect", str(path)]) == 0
    out = capsys.readouterr().out
    (msg,) = hef_mismatches(read_hef(path).network_groups[0])
    assert f"warning: {msg}" in out
    assert cli_main(["inspect", str(path), "--json"]) == 0
    import json
    rep = json.loads(capsys.readouterr().out)
    assert rep["network_groups"][0]["mismatches"] == [msg]


def test_bbox_only_op_is_recognised():
    plain = read_hef(w.yolov8_hef(1, classes=4)).network_groups[0]
    assert plain.nms.output_form == "by_class" and not plain.nms.bbox_decoding_only
    data = w.yolov8_hef(1, classes=4, bbox_decoding_only=True, score_th=0.0, iou_th=0.0)
    ng = read_hef(data).network_groups[0]
    assert ng.nms.bbox_decoding_only and ng.nms.output_form == "bbox_only"
    assert bbox_only_proposals(ng) == 80 * 80 + 40 * 40 + 20 * 20
    cfg = _quiet(data)
    # zero thresholds in a bbox-only op are "not set" (HailoRT never reads them): the preset's stand
    assert cfg.score_threshold == 0.2 and cfg.iou_threshold == 0.7
    assert [h.stride for h in cfg.heads] == [8, 16, 32]
    # a bbox-only op that does carry thresholds keeps them
    cfg = _quiet(w.yolov8_hef(1, classes=4, bbox_decoding_only=True, score_th=0.3))
    assert cfg.score_threshold == float(np.float32(0.3))


def test_inspect_shows_the_bbox_only_output(tmp_path, capsys):
    path = tmp_path / "bbox.hef"
    path.write_bytes(w.yolov8_hef(1, classes=4, bbox_decoding_only=True))
    assert cli_main(["inspect", str(path)]) == 0
    out = capsys.readouterr().out
    assert "NHWC(1x8400x8)" in out and "bbox decoding only" in out and "HAILO NMS BY CLASS" not in out
    path.write_bytes(w.yolov8_hef(1, classes=4))
    assert cli_main(["inspect", str(path)]) == 0
    assert "HAILO NMS BY SCORE, UINT8, 8802 bytes" in capsys.readouterr().out  # 2 + 22 x 4 classes x 100
