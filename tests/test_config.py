"""DecoderConfig: presets, overrides, the DFC NMS JSON, pairing heads from shapes."""

from __future__ import annotations

import json

import numpy as np
import pytest

import hailo_decode as hd


def yolo_outputs(nc=80, prefix="yolov8n/", dtype="uint8", orders=("FCR", "NHWC"), size=640):
    """Six outputs named like a DFC-compiled yolov8n: box conv41/52/62, class conv42/53/63."""
    names = [("conv41", "conv42"), ("conv52", "conv53"), ("conv62", "conv63")]
    out = []
    for (b, c), s in zip(names, (8, 16, 32)):
        g = size // s
        out.append(hd.OutputInfo(prefix + b, (g, g, 64), dtype, orders[0], zp=84.0, scale=0.089))
        out.append(hd.OutputInfo(prefix + c, (g, g, nc), dtype, orders[1], zp=0.0, scale=1 / 255))
    return out


NMS_JSON = {"nms_scores_th": 0.3, "nms_iou_th": 0.6, "image_dims": [640, 640], "max_proposals_per_class": 50,
            "classes": 80, "regression_length": 16, "background_removal": False, "background_removal_index": 0,
            "bbox_decoders": [{"name": "bbox_decoder41", "stride": 8, "reg_layer": "conv41", "cls_layer": "conv42"},
                              {"name": "bbox_decoder52", "stride": 16, "reg_layer": "conv52", "cls_layer": "conv53"},
                              {"name": "bbox_decoder62", "stride": 32, "reg_layer": "conv62", "cls_layer": "conv63"}]}


def test_hailort_preset_defaults():
    cfg = hd.DecoderConfig(yolo_outputs())
    assert (cfg.semantics, cfg.class_activation, cfg.score_test, cfg.iou_test) == ("hailort", "none", ">=", ">=")
    assert cfg.multi_label and not cfg.agnostic and cfg.max_per_class == 100 and cfg.max_total is None
    assert cfg.tie_break == "hailort" and cfg.box_format == "yxyx_normalized"
    assert (cfg.num_classes, cfg.bins, cfg.image_size) == (80, 16, (640, 640))
    assert [(h.box, h.cls, h.stride) for h in cfg.heads] == [
        ("yolov8n/conv41", "yolov8n/conv42", 8), ("yolov8n/conv52", "yolov8n/conv53", 16),
        ("yolov8n/conv62", "yolov8n/conv63", 32)]


def test_ultralytics_preset_and_overrides():
    cfg = hd.DecoderConfig(yolo_outputs(), semantics="ultralytics", score_threshold=0.5, multi_label=True)
    assert cfg.class_activation == "sigmoid" and cfg.score_test == ">" and cfg.iou_test == ">"
    assert cfg.max_total == 300 and cfg.max_candidates == 30000 and cfg.box_format == "xyxy_pixels"
    assert cfg.score_threshold == 0.5 and cfg.multi_label  # explicit settings win over the preset
    again = cfg.replace(semantics="hailort")
    assert again.score_test == ">=" and again.score_threshold == 0.5 and again.multi_label


@pytest.mark.parametrize("form", ["dict", "file", "text"])
def test_from_nms_json(tmp_path, form):
    src = NMS_JSON
    if form == "file":
        src = tmp_path / "nms.json"
        src.write_text(json.dumps(NMS_JSON))
    elif form == "text":
        src = json.dumps(NMS_JSON, indent=1)
    outs = list(reversed(yolo_outputs()))  # order of outputs does not matter
    cfg = hd.DecoderConfig.from_nms_json(src, outputs=outs)
    assert cfg.score_threshold == 0.3 and cfg.iou_threshold == 0.6 and cfg.max_per_class == 50
    assert [h.box for h in cfg.heads] == ["yolov8n/conv41", "yolov8n/conv52", "yolov8n/conv62"]
    assert [h.stride for h in cfg.heads] == [8, 16, 32]
    cfg2 = hd.DecoderConfig.from_nms_json(src, outputs=outs, semantics="ultralytics", score_threshold=0.1,
                                          class_activation="sigmoid")
    assert cfg2.score_threshold == 0.1 and cfg2.iou_threshold == 0.6 and cfg2.score_test == ">"


def test_from_nms_json_non_square_and_bins():
    doc = dict(NMS_JSON, image_dims=[384, 640], regression_length=15)  # [height, width]; reg_max-1 style
    outs = []
    for (b, c), s in zip([("conv41", "conv42"), ("conv52", "conv53"), ("conv62", "conv63")], (8, 16, 32)):
        outs += [hd.OutputInfo("m/" + b, (384 // s, 640 // s, 64), zp=0.0, scale=1.0),
                 hd.OutputInfo("m/" + c, (384 // s, 640 // s, 80), zp=0.0, scale=1.0)]
    cfg = hd.DecoderConfig.from_nms_json(doc, outputs=outs)
    assert cfg.image_size == (384, 640) and cfg.bins == 16
    with pytest.raises(ValueError, match="regression_length 8"):
        hd.DecoderConfig.from_nms_json(dict(doc, regression_length=8), outputs=outs)
    with pytest.raises(ValueError, match="says 81 classes"):
        hd.DecoderConfig.from_nms_json(dict(doc, classes=81), outputs=outs)


def test_from_nms_json_layer_matching_errors():
    outs = yolo_outputs()
    bad = json.loads(json.dumps(NMS_JSON))
    bad["bbox_decoders"][0]["reg_layer"] = "conv99"
    with pytest.raises(ValueError, match="'conv99' matches no output"):
        hd.DecoderConfig.from_nms_json(bad, outputs=outs)
    with pytest.raises(ValueError, match="background_removal"):
        hd.DecoderConfig.from_nms_json(dict(NMS_JSON, background_removal=True), outputs=outs)
    twice = outs + [hd.OutputInfo("other/conv41", (80, 80, 64), zp=0.0, scale=1.0)]
    with pytest.raises(ValueError, match="matches several outputs"):
        hd.DecoderConfig.from_nms_json(NMS_JSON, outputs=twice)


def test_pairing_from_shapes_and_strides():
    cfg = hd.DecoderConfig(yolo_outputs(nc=2, size=320))
    assert cfg.image_size == (320, 320) and [h.stride for h in cfg.heads] == [8, 16, 32]
    cfg = hd.DecoderConfig(yolo_outputs(nc=2, size=320), image_size=(640, 640))
    assert [h.stride for h in cfg.heads] == [16, 32, 64]
    cfg = hd.DecoderConfig(yolo_outputs(nc=2), bins=16)
    assert cfg.bins == 16


def test_pairing_ambiguous_raises_with_advice():
    with pytest.raises(ValueError, match=r"cannot tell box from class output.*pass heads=\[Head"):
        hd.DecoderConfig(yolo_outputs(nc=64))
    # 64 classes with 16 bins: the explicit mapping resolves it.
    outs = yolo_outputs(nc=64)
    heads = [hd.Head(outs[i].name, outs[i + 1].name) for i in (0, 2, 4)]
    cfg = hd.DecoderConfig(outs, heads)
    assert cfg.num_classes == 64 and [h.stride for h in cfg.heads] == [8, 16, 32]


def test_classes_allow_list_and_per_class_thresholds():
    cfg = hd.DecoderConfig(yolo_outputs(nc=3), classes=[0, 2], score_threshold=[0.1, 0.2, 0.3])
    assert cfg.thresholds_per_class() == (0.1, np.inf, 0.3)
    with pytest.raises(ValueError, match="one per class"):
        hd.DecoderConfig(yolo_outputs(nc=3), score_threshold=[0.1, 0.2])
    with pytest.raises(ValueError, match=r"classes \[3\] out of range"):
        hd.DecoderConfig(yolo_outputs(nc=3), classes=[3])


def test_output_info_normalizes():
    o = hd.OutputInfo("a", [4, 5, 6], np.uint16, "hailo_format_order_fcr", zp=np.float32(3), scale=[1, 2, 3, 4, 5, 6])
    assert o.shape == (4, 5, 6) and o.dtype == "uint16" and o.order == "FCR" and o.scale == (1, 2, 3, 4, 5, 6)
    d = hd.OutputInfo("b", (4, 5, 6), "uint8", "NHCW", device=True, padded_shape=(4, 5, 8), zp=0.0, scale=1.0)
    assert d.frame_elements == 160 and (160,) in d.frame_shapes and (4, 8, 5) in d.frame_shapes
    odd = hd.OutputInfo("c", (1, 3, 1), "uint8", "NHWC", device=True, zp=0.0, scale=1.0)
    assert odd.frame_elements == 8  # a raw frame is rounded up to 8 bytes
