"""Pairing by shape refuses outputs that are not DFL heads it can configure; its error says what
the shapes look like (YOLOv5/YOLOv7 anchor heads, YOLOX heads, YOLO26's end-to-end OBB head) and
names the API that configures them. Each remedy the message names is then tried and must work."""

from __future__ import annotations

import pytest

import hailo_decode as hd

GRIDS = ((80, 8), (40, 16), (20, 32))
ANCHORS = {8: ((10, 13), (16, 30), (33, 23)), 16: ((30, 61), (62, 45), (59, 119)), 32: ((116, 90), (156, 198), (373, 326))}


def _v5_outputs(channels=255):
    return [hd.OutputInfo(f"yolov5s/conv{s}", (g, g, channels), "uint8", zp=0.0, scale=1.0) for g, s in GRIDS]


def _yolox_outputs(nc=80):
    outs = []
    for g, s in GRIDS:
        outs += [hd.OutputInfo(f"yolox/reg{s}", (g, g, 4), "uint8", zp=0.0, scale=1.0),
                 hd.OutputInfo(f"yolox/obj{s}", (g, g, 1), "uint8", zp=0.0, scale=1.0),
                 hd.OutputInfo(f"yolox/cls{s}", (g, g, nc), "uint8", zp=0.0, scale=1.0)]
    return outs


def _message(outputs, **kw):
    with pytest.raises(ValueError) as e:
        hd.DecoderConfig(outputs, **kw)
    return str(e.value)


def test_yolov5_shapes_are_named_with_their_remedies():
    msg = _message(_v5_outputs())
    assert msg.startswith("cannot pair outputs by shape")
    for words in ("YOLOv5/YOLOv7 anchor heads", "3 anchors x (5 + 80 classes) = 255 channels",
                  "anchors are not in the tensors", "DecoderConfig.from_nms_json(", "Model Zoo JSON",
                  "DecoderConfig.from_hef(", "AnchorHead(", "yolov5s/conv8 (255 ch)"):
        assert words in msg, (words, msg)
    assert "each grid needs two" not in msg
    # The named API configures them.
    cfg = hd.DecoderConfig(_v5_outputs(), [hd.AnchorHead(f"yolov5s/conv{s}", ANCHORS[s], s) for _, s in GRIDS])
    assert cfg.head_kind == "yolov5" and cfg.num_classes == 80


def test_anchor_reading_of_other_channel_counts():
    # 3 x (5 + 2) = 21: a 2-class YOLOv5; 85 is not 3 x (5 + n): one anchor x (5 + 80).
    assert "3 anchors x (5 + 2 classes) = 21 channels" in _message(_v5_outputs(21))
    assert "1 anchor x (5 + 80 classes) = 85 channels" in _message(_v5_outputs(85))
    # Too few channels for any anchor head, or one tensor per grid of different sizes: the plain message.
    assert "each grid needs two (box, class) or three" in _message(_v5_outputs(4))
    mixed = [hd.OutputInfo("a", (8, 8, 255), zp=0.0, scale=1.0), hd.OutputInfo("b", (4, 4, 30), zp=0.0, scale=1.0)]
    msg = _message(mixed)
    assert "each grid needs two (box, class) or three" in msg and "YOLOv5" not in msg


def test_yolox_shapes_name_yolox_and_the_yolo26_obb_reading():
    msg = _message(_yolox_outputs())
    assert msg.startswith("cannot pair outputs by shape")
    for words in ("YOLOX heads", "80 classes", "DecoderConfig.from_nms_json(", "DecoderConfig.from_hef(", "YoloxHead(",
                  "YOLO26's end-to-end OBB head", "a 4-channel box, 80 classes, a 1-channel angle", "task='obb', bins=1",
                  "end2end=True", "angle_decode='raw'", "Head(box, cls, angle=...)"):
        assert words in msg, (words, msg)
    assert "obb with 4 classes" not in msg  # the old, misleading reading (the 80-channel tensor as the box)
    # task='obb' alone was ambiguous before too: the same advice.
    assert "YOLOX heads" in _message(_yolox_outputs(), task="obb")
    # Both named remedies work: YOLOX heads ...
    heads = [hd.YoloxHead(f"yolox/reg{s}", f"yolox/obj{s}", f"yolox/cls{s}", s) for _, s in GRIDS]
    cfg = hd.DecoderConfig(_yolox_outputs(), heads)
    assert cfg.head_kind == "yolox" and cfg.num_classes == 80
    # ... and the YOLO26 end-to-end OBB reading with exactly the settings the message gives.
    obb = hd.DecoderConfig(_yolox_outputs(), task="obb", bins=1, end2end=True, angle_decode="raw")
    assert obb.task == "obb" and obb.num_classes == 80 and obb.bins == 1 and obb.end2end
    assert [(h.box, h.cls, h.angle) for h in obb.heads] == [(f"yolox/reg{s}", f"yolox/cls{s}", f"yolox/obj{s}")
                                                           for _, s in GRIDS]


def test_yolox_shapes_under_task_detect_name_yolox_only():
    msg = _message(_yolox_outputs(), task="detect")
    assert "YOLOX heads" in msg and "YoloxHead(" in msg and "from_nms_json" in msg
    assert "YOLO26" not in msg and "each grid needs" not in msg


def test_yolox_shapes_with_4_or_1_classes_do_not_offer_task_obb():
    # With 4 (or 1) classes two outputs could each be the box (or the angle): task='obb', bins=1
    # stays ambiguous, so the message offers explicit heads only.
    for nc in (4, 1):
        msg = _message(_yolox_outputs(nc))
        assert "YOLOX heads" in msg and "Head(box, cls, angle=...)" in msg, msg
        assert "task='obb', bins=1" not in msg
        with pytest.raises(ValueError, match="cannot pair"):
            hd.DecoderConfig(_yolox_outputs(nc), task="obb", bins=1)


def test_what_paired_before_still_pairs():
    # (4, 1, 5): one reading only (a 5-class OBB with a 4-channel box), paired as before.
    cfg = hd.DecoderConfig(_yolox_outputs(5))
    assert cfg.task == "obb" and cfg.num_classes == 5 and cfg.bins == 1
    # Pose's ambiguity is unchanged (no 4/1 triple).
    outs = [hd.OutputInfo("box", (4, 4, 64), zp=0.0, scale=1.0), hd.OutputInfo("cls", (4, 4, 1), zp=0.0, scale=1.0),
            hd.OutputInfo("kpt", (4, 4, 51), zp=0.0, scale=1.0)]
    with pytest.raises(ValueError, match="ambiguous: obb with 51 classes; pose with 1 class"):
        hd.DecoderConfig(outs)
    # Under task='pose' the YOLOX shapes keep the pose message.
    msg = _message(_yolox_outputs(), task="pose")
    assert "no reading" in msg and "YOLOX" not in msg
