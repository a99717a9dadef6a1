"""Heads named as a config file names them (issue 33): DecoderConfig(heads=[{...}, ...]) takes the
dicts the TAPPAS plugin's "heads" key holds, read by the same C++ code (setup::read_heads), and
gives the heads the Head objects give. A one-class OBB model (its class and angle outputs both one
channel a cell) and a model with 64 classes and 16 DFL bins, which shapes cannot pair, decode
through them; each malformed description is refused in one line naming the key."""

from __future__ import annotations

import numpy as np
import pytest

import hailo_decode as hd
from hailo_decode import demo_data
from reference_tasks import reference_task_decode

STRIDES = (8, 16, 32)


def _one_class_obb():
    """The bundled OBB demo with its class tensors cut to their first class: outputs, frames, the
    dequantized heads for the NumPy reference."""
    try:
        data = demo_data.load_task_demo("obb")
    except FileNotFoundError as e:
        pytest.skip(str(e))
    cfg = demo_data.task_demo_config(data, "obb")
    frames = demo_data.task_demo_frames(data, "obb")
    outs, raw = [], {}
    for o in cfg.outputs:
        a = frames[o.name]
        if "/cls_" in o.name:
            a = np.ascontiguousarray(a[..., :1])
        raw[o.name] = a
        outs.append(hd.OutputInfo(o.name, a.shape[1:], "uint8", zp=float(np.ravel(o.zp)[0]), scale=float(np.ravel(o.scale)[0])))
    return outs, raw


def _dicts(prefix: str, extra: str = "angle"):
    return [{"box": f"{prefix}/box_{s}", "cls": f"{prefix}/cls_{s}", extra: f"{prefix}/{extra}_{s}", "stride": s}
            for s in STRIDES]


def test_one_class_obb_decodes_through_named_heads_as_the_numpy_reference():
    outs, raw = _one_class_obb()
    assert all(o.shape[2] == 1 for o in outs if "/cls_" in o.name or "/angle_" in o.name)
    # Shapes alone cannot tell the class output from the angle output.
    with pytest.raises(ValueError, match="ambiguous"):
        hd.DecoderConfig(outs, task="obb")
    cfg = hd.DecoderConfig(outs, _dicts("obb"), semantics="ultralytics", score_threshold=0.25)
    assert (cfg.task, cfg.num_classes, cfg.bins) == ("obb", 1, 16)
    assert cfg.heads == tuple(hd.Head(f"obb/box_{s}", f"obb/cls_{s}", s, angle=f"obb/angle_{s}") for s in STRIDES)
    dec = hd.Decoder(cfg)
    found = 0
    for f in range(raw["obb/box_8"].shape[0]):
        d = dec({k: v[f] for k, v in raw.items()})
        deq = []
        for s in STRIDES:
            h = {"stride": s}
            for role in ("box", "cls", "angle"):
                o = cfg.output(f"obb/{role}_{s}")
                h[role] = (raw[o.name][f].astype(np.float64) - float(np.ravel(o.zp)[0])) * float(np.ravel(o.scale)[0])
            deq.append(h)
        ref = reference_task_decode(deq, dict(conf=0.25, iou=0.7))
        assert len(d) == len(ref["scores"])
        np.testing.assert_allclose(d.rboxes[:, :4], ref["rboxes"][:, :4], rtol=0, atol=1e-3)
        np.testing.assert_allclose(d.angles, ref["rboxes"][:, 4], rtol=0, atol=1e-5)
        assert np.all(d.class_ids == 0)
        found += len(d)
    assert found >= 3


def test_64_classes_with_16_bins_pair_through_named_heads():
    outs = [hd.OutputInfo(f"m/{k}{s}", (640 // s, 640 // s, 64), "uint8", zp=0.0, scale=0.1)
            for s in STRIDES for k in ("box", "cls")]
    with pytest.raises(ValueError, match="cannot tell box from class output"):
        hd.DecoderConfig(outs)
    cfg = hd.DecoderConfig(outs, [{"box": f"m/box{s}", "cls": f"m/cls{s}"} for s in STRIDES])
    assert (cfg.num_classes, cfg.bins, cfg.image_size) == (64, 16, (640, 640))
    assert [h.stride for h in cfg.heads] == list(STRIDES)


def test_every_family_as_dicts_equals_the_head_objects():
    anchors = {8: [[10, 13], [16, 30], [33, 23]], 16: [[30, 61], [62, 45], [59, 119]], 32: [[116, 90], [156, 198], [373, 326]]}
    v5 = [hd.OutputInfo(f"v5/conv{s}", (640 // s, 640 // s, 255), "uint8", zp=0.0, scale=1.0) for s in STRIDES]
    a = hd.DecoderConfig(v5, [{"output": f"v5/conv{s}", "anchors": anchors[s], "stride": s} for s in STRIDES])
    b = hd.DecoderConfig(v5, [hd.AnchorHead(f"v5/conv{s}", anchors[s], s) for s in STRIDES])
    assert a.heads == b.heads and a.head_kind == "yolov5"
    x = [hd.OutputInfo(f"x/{k}{s}", (640 // s, 640 // s, c), "uint8", zp=0.0, scale=1.0)
         for s in STRIDES for k, c in (("reg", 4), ("obj", 1), ("cls", 80))]
    a = hd.DecoderConfig(x, [{"reg": f"x/reg{s}", "obj": f"x/obj{s}", "cls": f"x/cls{s}"} for s in STRIDES])
    b = hd.DecoderConfig(x, [hd.YoloxHead(f"x/reg{s}", f"x/obj{s}", f"x/cls{s}") for s in STRIDES])
    assert a.heads == b.heads and a.head_kind == "yolox"
    # A config's replace() keeps them (as Head objects).
    assert a.replace(score_threshold=0.5).heads == a.heads


BAD = [
    ("unknown key", [{"box": "m/box8", "clss": "m/cls8"}], TypeError, 'heads[0]: unknown key "clss"; did you mean "cls"?'),
    ("wrong type", [{"box": "m/box8", "cls": 8}], TypeError, "heads[0].cls must be an output name (a string), got 8"),
    ("missing name", [{"box": "m/box8"}], ValueError, 'heads[0]: "cls" (an output name) is missing'),
    ("not an output", [{"box": "m/box8", "cls": "m/cls_8"}], ValueError,
     "heads[0].cls: 'm/cls_8' is not among the outputs ['m/box8', 'm/cls8']; did you mean 'm/cls8'?"),
    ("two kinds in a head", [{"box": "m/box8", "reg": "m/cls8", "cls": "m/cls8"}], ValueError, "keys of different head kinds"),
    ("two kinds", [{"box": "m/box8", "cls": "m/cls8"}, {"reg": "a", "obj": "b", "cls": "c"}], ValueError,
     "heads[1] a YOLOX head"),
    ("two extras", [{"box": "m/box8", "cls": "m/cls8", "kpt": "a", "angle": "b"}], ValueError, "at most one of"),
    ("stride", [{"box": "m/box8", "cls": "m/cls8", "stride": 0}], ValueError, "heads[0].stride must be a positive integer"),
    ("not a dict", [{"box": "m/box8", "cls": "m/cls8"}, 3], TypeError, "all Head objects or all dicts"),
    ("empty", [], ValueError, "heads must not be empty"),
]


@pytest.mark.parametrize("what, heads, error, words", BAD, ids=[b[0] for b in BAD])
def test_a_malformed_head_description_is_one_line_naming_the_key(what, heads, error, words):
    outs = [hd.OutputInfo("m/box8", (80, 80, 64), "uint8", zp=0.0, scale=1.0),
            hd.OutputInfo("m/cls8", (80, 80, 2), "uint8", zp=0.0, scale=1.0)]
    with pytest.raises(error) as e:
        hd.DecoderConfig(outs, heads)
    assert words in str(e.value) and "\n" not in str(e.value)


def test_python_keeps_its_own_words_for_pairing_advice():
    # The plugin's messages name its config keys (tests/test_tappas_plugin.py); Python's name its API.
    outs, _ = _one_class_obb()
    with pytest.raises(ValueError) as e:
        hd.DecoderConfig(outs, task="obb")
    msg = str(e.value)
    assert "heads=[Head(" in msg and "DecoderConfig.from_nms_json" in msg
    assert "task=" not in msg  # given already: not asked for again
