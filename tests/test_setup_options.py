"""The settings' rules live once, in the C++ core (hailo_decode/setup.hpp): DecoderConfig and the
core's read_options / read_nms_json (what the TAPPAS plugin calls) refuse the same mistake with the
same message and the same exception type."""

from __future__ import annotations

import json

import numpy as np
import pytest

import hailo_decode as hd
from hailo_decode import _core


def outputs(nc=3):
    q = dict(zp=0.0, scale=1 / 255)
    return [hd.OutputInfo("m/conv41", (8, 8, 64), **q), hd.OutputInfo("m/conv42", (8, 8, nc), **q),
            hd.OutputInfo("m/conv52", (4, 4, 64), **q), hd.OutputInfo("m/conv53", (4, 4, nc), **q)]


MISTAKES = [
    ("iou_threshold", -0.5, ValueError, r"iou_threshold must be a number in [0, 1], got -0.5"),
    ("iou_threshold", float("inf"), ValueError, "got Infinity"),
    ("iou_threshold", "0.5", TypeError, 'got "0.5"'),
    ("score_threshold", 1.5, ValueError, "score_threshold must be a number in [0, 1], got 1.5"),
    ("score_threshold", [0.1, float("nan"), 0.2], ValueError, "score_threshold[1] must be a number in [0, 1], got NaN"),
    ("score_threshold", [], ValueError, "got []"),
    ("score_test", "=>", ValueError, 'score_test must be one of ">=", ">", got "=>"'),
    ("class_activation", None, TypeError, "got null"),
    ("multi_label", 1, TypeError, "multi_label must be true or false, got 1"),
    ("agnostic", np.bool_(True), None, None),  # numpy booleans are booleans
    ("max_total", -1, ValueError, "max_total must be null (no cap) or an integer in [0, 1048576], got -1"),
    ("max_total", 2.0, ValueError, "got 2.0"),
    ("max_total", 10**30, ValueError, "got 1000000000000000000000000000000"),
    ("max_total", True, TypeError, "got true"),
    ("max_candidates", np.int64(5), None, None),
    ("rotated_class_offset", -1, ValueError, "rotated_class_offset must be a finite number >= 0"),
    ("rotated_class_offset", 1e39, ValueError, "got 1e+39"),
    ("box_format", "xywh", ValueError, 'box_format must be one of "yxyx_normalized", "xyxy_normalized"'),
    ("tie_break", "random", ValueError, "tie_break must be one of"),
    ("end2end", "yes", TypeError, 'end2end must be true or false, got "yes"'),
    ("end2end", 0, TypeError, "got 0"),
    ("semantics", "torch", ValueError, 'semantics must be one of "hailort", "ultralytics", got "torch"'),
    ("score_thresh", 0.3, TypeError, 'unknown key "score_thresh"; did you mean "score_threshold"?'),
    ("nms_iou_th", 0.3, TypeError, 'unknown key "nms_iou_th"; did you mean "iou_threshold"?'),
    ("task", "seg", ValueError, 'task must be one of "detect", "segment", "pose", "obb" (or null), got "seg"'),
    ("bins", 0, ValueError, "bins must be an integer in [1, 1048576] (or null), got 0"),
    ("keypoint_dims", 4, ValueError, "keypoint_dims must be 2 (x, y) or 3 (x, y, visibility), got 4"),
    ("keypoint_decode", "Pose26", ValueError, 'keypoint_decode must be one of "yolov8", "yolo26" (or null)'),
    ("angle_decode", 1, TypeError, 'angle_decode must be one of "sigmoid", "raw" (or null), got 1'),
    ("image_size", (0, 640), ValueError, "image_size must be [height, width], two integers in [1, 1048576], got [0, 640]"),
    ("image_size", (640.0, 640), ValueError, "got [640.0, 640]"),
    ("classes", [0, -1], ValueError, "classes[1] must be a class id, an integer in [0, 1048576], got -1"),
    ("classes", [0, 1j], TypeError, "classes[1]: a complex is not a JSON value"),
    ("proto_stride", 0, ValueError, "proto_stride must be a positive integer (at most 1048576), or null (not checked), got 0"),
    ("drop_empty_masks", 1, TypeError, "drop_empty_masks must be true or false, got 1"),
]


@pytest.mark.parametrize("key, value, kind, message", MISTAKES)
def test_decoder_config_and_the_core_give_the_same_message(key, value, kind, message):
    if kind is None:  # accepted by both
        _core.read_options({key: value})
        hd.DecoderConfig(outputs(), **{key: value})
        return
    with pytest.raises(kind) as core:
        _core.read_options({key: value})
    with pytest.raises(kind) as config:
        hd.DecoderConfig(outputs(), **{key: value})
    assert type(config.value) is type(core.value)
    assert str(config.value) == str(core.value)
    assert message in str(core.value)


NMS_SETTINGS = ("class_activation", "score_threshold", "score_test", "iou_threshold", "iou_test", "multi_label", "agnostic",
                "max_per_class", "max_total", "max_candidates", "tie_break")


@pytest.mark.parametrize("key, value, kind, message", [m for m in MISTAKES if m[0] in NMS_SETTINGS and m[2] is not None])
def test_decode_hailo_nms_bbox_only_gives_the_same_message(key, value, kind, message):
    """decode_hailo_nms(format="bbox_only") runs the Decoder's NMS with DecoderConfig's settings:
    the core checks them, with DecoderConfig's messages."""
    rows = np.array([[[0.1, 0.1, 0.5, 0.5, 0.9, 0.3, 0.2]]], np.float32)
    with pytest.raises(kind) as core:
        _core.read_options({key: value})
    with pytest.raises(kind) as bbox_only:
        hd.decode_hailo_nms(rows, format="bbox_only", **{key: value})
    assert str(bbox_only.value) == str(core.value)


def test_checks_that_need_the_class_count():
    opts = _core.read_options({"score_threshold": [0.1, 0.2], "classes": [0, 5]})
    with pytest.raises(ValueError, match=r"score_threshold must be a number or one per class \(3\), got 2 values"):
        _core.thresholds_per_class(opts, 3)
    with pytest.raises(ValueError, match=r"score_threshold must be a number or one per class \(3\), got 2 values"):
        hd.DecoderConfig(outputs(), score_threshold=[0.1, 0.2])
    with pytest.raises(ValueError, match=r"classes \[5\] out of range \[0, 3\)"):
        hd.DecoderConfig(outputs(), classes=range(0, 6, 5))  # any iterable of ids
    cfg = hd.DecoderConfig(outputs(1), score_threshold=[0.4])  # a list stays per class, even of one
    assert cfg.score_threshold == (0.4,) and cfg.thresholds_per_class() == (0.4,)


PLUGIN_ALIASES = [("detection_threshold", "score_threshold"), ("max_boxes", "max_total")]


def test_an_alias_is_read_and_checked_as_its_setting():
    """The TAPPAS plugin's libyolo_hailortpp_post.so names (read_options' aliases): the setting's
    value and rules, the alias in messages, both names at once refused."""
    opts = _core.read_options({"detection_threshold": 0.35, "max_boxes": 7}, "f.json", PLUGIN_ALIASES)
    assert (opts.score_threshold, opts.max_total) == ([0.35], 7)
    assert {"score_threshold", "max_total"} <= set(opts.explicit_settings)
    same = _core.read_options({"score_threshold": 0.35, "max_total": 7}, "f.json")
    assert (same.score_threshold, same.max_total) == (opts.score_threshold, opts.max_total)
    # Not given: the preset's, not explicit.
    default = _core.read_options({}, "", PLUGIN_ALIASES)
    assert default.max_total == _core.read_options({}).max_total
    assert "score_threshold" not in default.explicit_settings
    cases = [
        ({"detection_threshold": 1.5}, ValueError, "f.json: detection_threshold must be a number in [0, 1], got 1.5"),
        ({"detection_threshold": [0.2, 2]}, ValueError, "f.json: detection_threshold[1] must be a number in [0, 1], got 2"),
        ({"max_boxes": -1}, ValueError, "f.json: max_boxes must be null (no cap) or an integer in [0, 1048576], got -1"),
        ({"max_boxes": "ten"}, TypeError, "f.json: max_boxes must be null (no cap) or an integer"),
        ({"detection_threshold": 0.3, "score_threshold": 0.3}, ValueError,
         "f.json: detection_threshold and score_threshold: give one of them (both are names of score_threshold)"),
        ({"max_boxes": 3, "max_total": 3}, ValueError, "max_boxes and max_total: give one of them"),
        ({"max_boxs": 3}, TypeError, 'unknown key "max_boxs"; did you mean "max_boxes"?'),
    ]
    for doc, kind, message in cases:
        with pytest.raises(kind) as e:
            _core.read_options(doc, "f.json", PLUGIN_ALIASES)
        assert message in str(e.value), (doc, str(e.value))
    # Without the aliases they are unknown keys.
    with pytest.raises(TypeError, match="unknown key \"detection_threshold\""):
        _core.read_options({"detection_threshold": 0.3})


def test_presets_are_the_cores():
    assert hd.SEMANTICS == {name: _core.preset(name) for name in _core.preset_names()}
    assert list(hd.SEMANTICS["hailort"]) == _core.preset_setting_names()
    assert hd.SEMANTICS["ultralytics"]["rotated_class_offset"] == 7680.0 and hd.SEMANTICS["hailort"]["max_total"] is None
    for name, preset in hd.SEMANTICS.items():
        cfg = hd.DecoderConfig(outputs(), semantics=name)
        got = {k: getattr(cfg, k) for k in preset}
        assert got == preset, name
    assert hd.BOX_FORMATS == tuple(_core.choices("box_format"))


def test_numpy_and_python_values_reach_the_core_as_json():
    cfg = hd.DecoderConfig(outputs(), score_threshold=np.array([0.1, 0.2, 0.3], np.float32), max_total=np.int32(7),
                           iou_threshold=np.float64(0.5), classes=np.array([2, 0]), image_size=[64, 64])
    assert cfg.score_threshold == tuple(float(np.float32(v)) for v in (0.1, 0.2, 0.3))
    assert cfg.max_total == 7 and cfg.iou_threshold == 0.5 and cfg.classes == (2, 0) and cfg.image_size == (64, 64)
    assert cfg.replace(semantics="ultralytics").max_total == 7  # explicit settings survive a preset change
    with pytest.raises(TypeError, match="keys must be strings"):
        _core.read_options({1: 2})
    nested: list = []
    nested.append(nested)
    with pytest.raises(ValueError, match="deeper than 64"):
        _core.read_options({"classes": nested})


NMS_JSON = {"nms_scores_th": 0.3, "nms_iou_th": 0.6, "image_dims": [64, 64], "max_proposals_per_class": 50,
            "classes": 3, "regression_length": 16, "background_removal": False, "background_removal_index": 0,
            "bbox_decoders": [{"name": "bbox_decoder41", "stride": 8, "reg_layer": "conv41", "cls_layer": "conv42"},
                              {"name": "bbox_decoder52", "stride": 16, "reg_layer": "conv52", "cls_layer": "conv53"}]}


def _shapes():
    return [_core.OutputShape(o.name, *o.shape) for o in outputs()]


@pytest.mark.parametrize("edit, kind, message", [
    ({"nms_iou_thr": 0.5}, TypeError, 'NMS JSON: unknown key "nms_iou_thr"; did you mean "nms_iou_th"?'),
    ({"bbox_decoders": [{"stride": 8, "reg_layr": "conv41", "cls_layer": "conv42"}]}, TypeError,
     'NMS JSON: bbox_decoders[0]: unknown key "reg_layr"; did you mean "reg_layer"?'),
    ({"bbox_decoders": [{"stride": 8, "cls_layer": "conv42"}]}, ValueError, "NMS JSON: bbox_decoders[0] lacks 'reg_layer'"),
    ({"nms_scores_th": "0.3"}, TypeError, 'NMS JSON: nms_scores_th must be a number, got "0.3"'),
    ({"classes": 4}, ValueError, "NMS JSON says 4 classes, class outputs have 3 channels"),
    ({"background_removal": True}, ValueError, "NMS JSON: background_removal=true is not supported"),
])
def test_nms_json_errors_are_the_cores(edit, kind, message):
    doc = dict(NMS_JSON, **edit)
    with pytest.raises(kind) as core:
        _core.read_nms_json(doc, _shapes())
    with pytest.raises(kind) as config:
        hd.DecoderConfig.from_nms_json(doc, outputs())
    with pytest.raises(kind) as text:
        hd.DecoderConfig.from_nms_json(json.dumps(doc), outputs())
    assert str(config.value) == str(core.value) == str(text.value)
    assert message in str(core.value)


def test_nms_json_text_is_parsed_by_the_core(tmp_path):
    good = hd.DecoderConfig.from_nms_json(json.dumps(NMS_JSON), outputs())
    assert good.score_threshold == 0.3 and good.max_per_class == 50 and [h.stride for h in good.heads] == [8, 16]
    bad = '{\n  "nms_scores_th": 0.3,\n  "nms_scores_th": 0.4\n}'
    with pytest.raises(ValueError) as core:
        _core.parse_json(bad)
    assert str(core.value) == 'line 3, column 3: duplicate key "nms_scores_th"'
    with pytest.raises(ValueError, match='^NMS JSON: line 3, column 3: duplicate key "nms_scores_th"$'):
        hd.DecoderConfig.from_nms_json(bad, outputs())
    path = tmp_path / "nms.json"
    path.write_text('{"nms_iou_th": NaN}')
    with pytest.raises(ValueError, match=f"^{path}: line 1, column 16: NaN and Infinity are not JSON numbers$"):
        hd.DecoderConfig.from_nms_json(path, outputs())
    # An NMS JSON value is checked as the option it sets, under the document's name.
    with pytest.raises(ValueError, match=r"^NMS JSON: nms_iou_th must be a number in \[0, 1\], got 1.5$"):
        hd.DecoderConfig.from_nms_json(dict(NMS_JSON, nms_iou_th=1.5), outputs())
    with pytest.raises(TypeError, match=r"^NMS JSON: the document must be an object .*, got \[\{"):
        hd.DecoderConfig.from_nms_json(json.dumps([NMS_JSON]), outputs())  # pasted text, not a path
