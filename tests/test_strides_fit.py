"""Issue 28: stride x grid = image size on every head, however the config was made (heads given,
paired by shape, the NMS JSON's bbox_decoders, a HEF's NMS op, replace()). A stride that disagrees
with its grid and the image size used to place every box centre at (cell + 0.5) x the wrong
stride: boxes 2x off without a word. Now it is refused, naming the head, its grid, its stride and
the image size (the rule lives once, in the C++ core's pairing: cpp/src/setup/pairing_strides.cpp)."""

from __future__ import annotations

import pytest

import hailo_decode as hd
import hef_writer as w
from hailo_decode.hef import HefMismatchWarning, config_from_hef

STRIDES = (8, 16, 32)


def _outputs(nc=3, size=640):
    outs = []
    for s in STRIDES:
        g = size // s
        outs += [hd.OutputInfo(f"box{s}", (g, g, 64), "float32"), hd.OutputInfo(f"cls{s}", (g, g, nc), "float32")]
    return outs


def _heads(strides=STRIDES):
    return [hd.Head(f"box{s}", f"cls{s}", st) for s, st in zip(STRIDES, strides)]


def test_heads_given_with_fitting_strides():
    cfg = hd.DecoderConfig(_outputs(), _heads())
    assert cfg.image_size == (640, 640) and [h.stride for h in cfg.heads] == [8, 16, 32]
    assert hd.DecoderConfig(_outputs(), _heads(), image_size=(640, 640)).image_size == (640, 640)
    # Strides left out are derived from the others' image size.
    assert [h.stride for h in hd.DecoderConfig(_outputs(), _heads((None, 16, None))).heads] == [8, 16, 32]


def test_a_wrong_stride_is_refused_naming_head_grid_stride_and_size():
    with pytest.raises(ValueError) as e:
        hd.DecoderConfig(_outputs(), _heads((16, 16, 32)), image_size=(640, 640))
    msg = str(e.value)
    for words in ("head ('box8', 'cls8')", "stride 16", "grid (80, 80)", "(1280, 1280)", "not the image size (640, 640)",
                  "this head's stride would be 8"):
        assert words in msg, (words, msg)
    # Without image_size the first stride sets it, and the message says so.
    with pytest.raises(ValueError, match=r"head \('box16', 'cls16'\): stride 16 x grid \(40, 40\) is \(640, 640\), not the "
                                         r"image size \(1280, 1280\) \(from head \('box8', 'cls8'\)'s stride 16"):
        hd.DecoderConfig(_outputs(), _heads((16, 16, 32)))
    # Every stride right for another image size: refused against the one given.
    with pytest.raises(ValueError, match=r"stride 16 x grid \(80, 80\) is \(1280, 1280\), not the image size \(640, 640\)"):
        hd.DecoderConfig(_outputs(), _heads((16, 32, 64)), image_size=(640, 640))
    # A non-square image size no stride fits.
    with pytest.raises(ValueError, match=r"no stride fits grid \(80, 80\) in it"):
        hd.DecoderConfig(_outputs(), _heads(), image_size=(480, 640))


def test_derived_strides_need_a_size_every_grid_divides():
    with pytest.raises(ValueError, match=r"grid \(80, 80\) does not divide image_size \(100, 100\) into one stride"):
        hd.DecoderConfig(_outputs(), image_size=(100, 100))
    cfg = hd.DecoderConfig(_outputs(), image_size=(1280, 1280))  # by shape: strides from the size
    assert [h.stride for h in cfg.heads] == [16, 32, 64]


def test_replace_keeps_the_rule():
    cfg = hd.DecoderConfig(_outputs(), _heads())
    with pytest.raises(ValueError, match=r"not the image size \(320, 320\)"):
        cfg.replace(image_size=(320, 320))  # its heads keep their strides
    assert cfg.replace(heads=_heads((None,) * 3), image_size=(320, 320)).heads[0].stride == 4


def test_anchor_and_yolox_heads_too():
    v5 = [hd.OutputInfo(f"t{s}", (640 // s, 640 // s, 255), "float32") for s in STRIDES]
    anchors = ((10, 13), (16, 30), (33, 23))
    ok = hd.DecoderConfig(v5, [hd.AnchorHead(f"t{s}", anchors, s) for s in STRIDES])
    assert ok.image_size == (640, 640)
    with pytest.raises(ValueError, match=r"anchor head 't32': stride 16 x grid \(20, 20\) is \(320, 320\), not the image "
                                         r"size \(640, 640\)"):
        hd.DecoderConfig(v5, [hd.AnchorHead(f"t{s}", anchors, min(s, 16)) for s in STRIDES])
    yx = []
    for s in STRIDES:
        g = 640 // s
        yx += [hd.OutputInfo(f"reg{s}", (g, g, 4), "float32"), hd.OutputInfo(f"obj{s}", (g, g, 1), "float32"),
               hd.OutputInfo(f"cls{s}", (g, g, 80), "float32")]
    with pytest.raises(ValueError, match=r"YOLOX head \('reg8', 'obj8', 'cls8'\): stride 16 x grid \(80, 80\)"):
        hd.DecoderConfig(yx, [hd.YoloxHead(f"reg{s}", f"obj{s}", f"cls{s}", 2 * s) for s in STRIDES],
                         image_size=(640, 640))


def _nms_json(strides=STRIDES, image_dims=None):
    doc = {"bbox_decoders": [{"name": f"bbox_decoder{s}", "reg_layer": f"box{s}", "cls_layer": f"cls{s}", "stride": st}
                             for s, st in zip(STRIDES, strides)]}
    if image_dims is not None:
        doc["image_dims"] = list(image_dims)
    return doc


def test_nms_json_strides_and_image_dims():
    assert hd.DecoderConfig.from_nms_json(_nms_json(image_dims=(640, 640)), _outputs()).image_size == (640, 640)
    with pytest.raises(ValueError, match=r"head \('box16', 'cls16'\): stride 32 x grid \(40, 40\) is \(1280, 1280\), not "
                                         r"the image size \(640, 640\)"):
        hd.DecoderConfig.from_nms_json(_nms_json((8, 32, 32)), _outputs())
    with pytest.raises(ValueError, match=r"stride 8 x grid \(80, 80\) is \(640, 640\), not the image size \(320, 320\)"):
        hd.DecoderConfig.from_nms_json(_nms_json(image_dims=(320, 320)), _outputs())
    # The Model Zoo's YOLOv5 JSON (encoded_layer) goes through the same rule.
    v5 = [hd.OutputInfo(f"t{s}", (640 // s, 640 // s, 255), "float32") for s in STRIDES]
    doc = {"bbox_decoders": [{"w": [10, 16, 33], "h": [13, 30, 23], "stride": st, "encoded_layer": f"t{s}"}
                             for s, st in zip(STRIDES, (8, 16, 16))]}
    with pytest.raises(ValueError, match=r"anchor head 't32': stride 16 x grid \(20, 20\)"):
        hd.DecoderConfig.from_nms_json(doc, v5)


def test_from_hef_strides_and_op_image_size():
    cfg = config_from_hef(w.yolov8_hef(1, classes=4))
    assert cfg.image_size == (640, 640) and [h.stride for h in cfg.heads] == [8, 16, 32]
    # The op's strides do not fit its grids: refused (HailoRT would decode the 20x20 head at stride 16).
    with pytest.warns(HefMismatchWarning), pytest.raises(ValueError, match=r"stride 16 x grid \(20, 20\) is \(320, 320\)"):
        config_from_hef(w.yolov8_hef(1, classes=4, strides=(8, 16, 16)))
    # The op's image size is not the input's, which the grids fit: every preset takes the size the
    # strides x grids give (the input's) and warns; the op's size, said explicitly, is refused.
    wild = w.yolov8_hef(1, classes=4, input_size=320)
    with pytest.warns(HefMismatchWarning):
        assert config_from_hef(wild).image_size == (320, 320)
    with pytest.raises(ValueError, match=r"not the image size \(640, 640\)"):
        config_from_hef(wild, image_size=(640, 640))
    with pytest.warns(HefMismatchWarning):
        assert config_from_hef(wild, semantics="ultralytics").image_size == (320, 320)
    assert config_from_hef(wild, image_size=(320, 320)).image_size == (320, 320)
