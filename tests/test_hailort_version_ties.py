"""`hailort_version`: the hailort preset reproduces the ops of the HailoRT it names, ties included.

From 5.0.1 HailoRT's YOLOv8 op lists a row's candidates class by class (row, class, column) and
its YOLOv5 op anchor by anchor (row, anchor, column) before the same unstable std::sort, and both
(and YOLOX's) pre-filter raw values on quantized thresholds. The references are NumPy models
written from each version's source (hailort_ops_v5.py, file and line cited there). Frames are built
so that many uint8 scores tie, across classes, anchors and rows; each test also checks that the
4.23 and 5.2 references really differ on its frame (so that it cannot pass by accident), and the
decoder runs on every SIMD path this machine has."""

from __future__ import annotations

import numpy as np
import pytest

import hailo_decode as hd
from hailo_decode import _core
from hailort_anchor_ops import to_device_nhcw
from hailort_ops_v5 import logit_v52, quantize_v52, yolov5_op, yolov8_op, yolox_op

PATHS = _core.simd_info()["available"]
VERSIONS = ("4.23", "5.2")


def _on_every_path(cfg, raw, check):
    best = _core.simd_info()["active"]
    try:
        for path in PATHS:
            _core.select_simd(path)
            check(hd.Decoder(cfg)(raw), path)
    finally:
        _core.select_simd(best)


def _same(got, ref, path, atol=0.0):
    boxes, scores, classes = ref
    assert len(got) == len(scores), f"{path}: {len(got)} detections, the op {len(scores)}"
    np.testing.assert_array_equal(got.class_ids, classes, err_msg=path)
    np.testing.assert_array_equal(got.scores, scores, err_msg=path)
    if atol:
        np.testing.assert_allclose(got.boxes, boxes, rtol=0, atol=atol, err_msg=path)
    else:
        np.testing.assert_array_equal(got.boxes, boxes, err_msg=path)


def _differ(a, b) -> bool:
    return len(a[1]) != len(b[1]) or not (np.array_equal(a[0], b[0]) and np.array_equal(a[2], b[2]))


# -- the setting ------------------------------------------------------------------------------


def test_default_is_4_23_and_the_setting_is_checked():
    outputs = [hd.OutputInfo("reg8", (8, 8, 64), "uint8", zp=128.0, scale=0.05),
               hd.OutputInfo("cls8", (8, 8, 3), "uint8", zp=0.0, scale=1 / 255)]
    heads = [hd.Head("reg8", "cls8", 8)]
    cfg = hd.DecoderConfig(outputs, heads, image_size=(64, 64))
    assert cfg.hailort_version == "4.23"
    five = cfg.replace(score_threshold=0.3, hailort_version="5.0.1")
    assert five.hailort_version == "5.0.1" and five.replace(iou_threshold=0.5).hailort_version == "5.0.1"
    with pytest.raises(ValueError, match=r'hailort_version must be a HailoRT version "X.Y" or "X.Y.Z" .* of '
                                         r'HailoRT 4 or 5, got "6.0"'):
        hd.DecoderConfig(outputs, heads, image_size=(64, 64), hailort_version="6.0")
    with pytest.raises(ValueError, match='got "5.2.x"'):
        hd.DecoderConfig(outputs, heads, image_size=(64, 64), hailort_version="5.2.x")
    with pytest.raises(TypeError, match="hailort_version must be .*, got 5.2"):
        hd.DecoderConfig(outputs, heads, image_size=(64, 64), hailort_version=5.2)


# -- YOLOv8 (DFL) ---------------------------------------------------------------------------


def _v8_case(seed, *, nc=3, levels=(0, 60, 120, 180, 240), grids=(8, 4), device=False):
    """Two heads (strides 8, 16 at 64x64) with uint8 class values from a few levels (many equal
    scores across classes, columns and rows) and DFL logits giving large, overlapping boxes."""
    rng = np.random.default_rng(seed)
    outputs, heads, raw, ref_heads, quant, strides = [], [], {}, [], [], []
    for g, stride in zip(grids, (8, 16)):
        reg = rng.integers(60, 200, size=(g, g, 64)).astype(np.uint8)
        cls = rng.choice(np.array(levels, np.uint8), size=(g, g, nc))
        rq, cq = (128.0, 0.05), (0.0, 1 / 255)
        names = (f"reg{stride}", f"cls{stride}")
        for name, arr, (zp, scale) in zip(names, (reg, cls), (rq, cq)):
            if device:
                padded = (g, g + 8, arr.shape[2])
                raw[name] = to_device_nhcw(arr, padded)
                outputs.append(hd.OutputInfo(name, arr.shape, "uint8", "NHCW", zp=zp, scale=scale, padded_shape=padded,
                                             device=True))
            else:
                raw[name] = arr
                outputs.append(hd.OutputInfo(name, arr.shape, "uint8", zp=zp, scale=scale))
        heads.append(hd.Head(*names, stride))
        ref_heads.append((reg, cls))
        quant.append((rq, cq))
        strides.append(stride)
    return outputs, heads, raw, ref_heads, quant, strides


@pytest.mark.parametrize("device", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_yolov8_ties_follow_each_versions_order(seed, device):
    outputs, heads, raw, ref_heads, quant, strides = _v8_case(seed, device=device)
    th, iou, mpc = 0.2, 0.5, 100
    ref = {v: yolov8_op(ref_heads, quant, strides, version=v, score_th=th, iou_th=iou, max_per_class=mpc,
                        image_hw=(64, 64)) for v in VERSIONS}
    assert len(ref["4.23"][1]) > 5
    assert _differ(ref["4.23"], ref["5.2"]), "the frame does not tell the two versions apart"
    for v in VERSIONS:
        cfg = hd.DecoderConfig(outputs, heads, image_size=(64, 64), score_threshold=th, iou_threshold=iou,
                               max_per_class=mpc, hailort_version=v)
        _on_every_path(cfg, raw, lambda got, path: _same(got, ref[v], f"{v} {path}", atol=2e-6))


def test_yolov8_5x_order_with_one_class_and_with_many():
    """One class (5.x order is then the scan order) and many classes."""
    for nc, grids in ((1, (8, 4)), (12, (8, 4))):
        outputs, heads, raw, ref_heads, quant, strides = _v8_case(7, nc=nc, grids=grids)
        ref = yolov8_op(ref_heads, quant, strides, version="5.2", score_th=0.2, iou_th=0.5, max_per_class=100,
                        image_hw=(64, 64))
        assert len(ref[1]) > 3
        cfg = hd.DecoderConfig(outputs, heads, image_size=(64, 64), iou_threshold=0.5, hailort_version="5.2")
        _on_every_path(cfg, raw, lambda got, path: _same(got, ref, path, atol=2e-6))


def test_version_is_read_only_under_hailort_ties():
    """tie_break="stable": scan order whatever the version (it names HailoRT's rules only)."""
    outputs, heads, raw, *_ = _v8_case(1)
    a = hd.Decoder(hd.DecoderConfig(outputs, heads, image_size=(64, 64), tie_break="stable"))(raw)
    b = hd.Decoder(hd.DecoderConfig(outputs, heads, image_size=(64, 64), tie_break="stable", hailort_version="5.2"))(raw)
    np.testing.assert_array_equal(a.boxes, b.boxes)
    np.testing.assert_array_equal(a.class_ids, b.class_ids)


# -- YOLOv5 -----------------------------------------------------------------------------------

V5_ANCHORS = {8: ((10, 13), (16, 30), (33, 23)), 16: ((30, 61), (62, 45), (59, 119))}


def _v5_case(seed, *, nc=2, levels=(0, 128, 255), obj_levels=(0, 170, 255), scale=1 / 255, zp=0.0,
             device=(True, False)):
    rng = np.random.default_rng(seed)
    tensors, quant, anchors, outputs, raw, heads = {}, {}, {}, [], {}, []
    for k, (stride, name) in enumerate(((8, "net/conv9"), (16, "net/conv10"))):
        g, e = 64 // stride, 5 + nc
        x = rng.choice(np.array(levels, np.uint8), size=(g, g, 3 * e))
        x[..., 4::e] = rng.choice(np.array(obj_levels, np.uint8), size=(g, g, 3))
        tensors[name], quant[name], anchors[name] = x, (zp, scale), V5_ANCHORS[stride]
        if device[k]:
            padded = (g, g + 8, 3 * e)
            raw[name] = to_device_nhcw(x, padded)
            outputs.append(hd.OutputInfo(name, x.shape, "uint8", "NHCW", zp=zp, scale=scale, padded_shape=padded,
                                         device=True))
        else:
            raw[name] = x
            outputs.append(hd.OutputInfo(name, x.shape, "uint8", zp=zp, scale=scale))
        heads.append(hd.AnchorHead(name, V5_ANCHORS[stride], stride))
    return tensors, quant, anchors, outputs, heads, raw


@pytest.mark.parametrize("seed", range(3))
def test_yolov5_ties_follow_each_versions_order(seed):
    tensors, quant, anchors, outputs, heads, raw = _v5_case(seed)
    th, iou, mpc = 0.2, 0.45, 100
    ref = {v: yolov5_op(tensors, quant, anchors, version=v, num_classes=2, score_th=th, iou_th=iou,
                        max_per_class=mpc, image_hw=(64, 64)) for v in VERSIONS}
    assert len(ref["4.23"][1]) > 5
    assert _differ(ref["4.23"], ref["5.2"]), "the frame does not tell the two versions apart"
    for v in VERSIONS:
        cfg = hd.DecoderConfig(outputs, heads, image_size=(64, 64), score_threshold=th, iou_threshold=iou,
                               max_per_class=mpc, hailort_version=v)
        _on_every_path(cfg, raw, lambda got, path: _same(got, ref[v], f"{v} {path}"))


def test_by_class_buffer_follows_each_versions_order():
    """HAILO_NMS_BY_CLASS packs each class's detections in the sorted order: the bytes differ
    between versions exactly as the op's would."""
    tensors, quant, anchors, outputs, heads, raw = _v5_case(0)
    bufs = {}
    for v in VERSIONS:
        ref = yolov5_op(tensors, quant, anchors, version=v, num_classes=2, score_th=0.2, iou_th=0.45,
                        max_per_class=100, image_hw=(64, 64))
        want = []
        for k in range(2):
            sel = ref[2] == k
            want += [np.float32(sel.sum())] + list(np.concatenate([ref[0][sel], ref[1][sel, None]], 1).reshape(-1))
        cfg = hd.DecoderConfig(outputs, heads, image_size=(64, 64), iou_threshold=0.45, hailort_version=v)
        bufs[v] = np.asarray(hd.Decoder(cfg).decode_to_hailo_nms(raw, format="by_class")).reshape(-1)
        np.testing.assert_array_equal(bufs[v][:len(want)], np.array(want, np.float32), err_msg=v)
    assert not np.array_equal(bufs["4.23"], bufs["5.2"])


def test_yolov5_class_prefilter_with_objectness_above_one():
    """A scale that dequantizes past 1 (255 / 200): class 0.18 x objectness 1.275 = 0.23 passes 0.2
    in 4.23's float test, but 5.x first drops the class byte 36 below quantize(0.2) = 40."""
    scale = 1 / 200
    assert quantize_v52(0.2, 0.0, scale, 255) == 40
    tensors, quant, anchors, outputs, heads, raw = _v5_case(3, levels=(36, 60), obj_levels=(0, 255), scale=scale,
                                                            device=(False, False))
    low = np.float32(np.float32(36) * np.float32(scale)) * np.float32(np.float32(255) * np.float32(scale))
    ref = {v: yolov5_op(tensors, quant, anchors, version=v, num_classes=2, score_th=0.2, iou_th=0.45,
                        max_per_class=100, image_hw=(64, 64)) for v in VERSIONS}
    assert (ref["4.23"][1] == low).any() and not (ref["5.2"][1] == low).any()
    for v in VERSIONS:
        cfg = hd.DecoderConfig(outputs, heads, image_size=(64, 64), iou_threshold=0.45, hailort_version=v)
        _on_every_path(cfg, raw, lambda got, path: _same(got, ref[v], f"{v} {path}"))


def test_yolov5_sigmoid_prefilter_on_the_clipped_logit():
    """class_activation="sigmoid" (as HailoRT's YOLOv5-seg op): 5.x pre-filters on
    quantize(logit(th)), the logit clipped at 1e-7. At th = 0.0 every sigmoid passes the float
    test, but raw values below quantize(logit(1e-7)) = quantize(-16.1) are dropped first."""
    zp, scale = 128.0, 0.2  # deq(0) = -25.6
    assert quantize_v52(logit_v52(0.0), zp, scale, 255) == 47  # rint(-16.118 / 0.2 + 128)
    rng = np.random.default_rng(5)
    x = rng.choice(np.array([40, 200], np.uint8), size=(4, 4, 7))  # 40: below 47, objectness and classes
    tensors, quant, anchors = {"v5": x}, {"v5": (zp, scale)}, {"v5": [(16, 16)]}
    ref = {v: yolov5_op(tensors, quant, anchors, version=v, num_classes=2, score_th=0.0, iou_th=0.7,
                        max_per_class=100, image_hw=(64, 64), sigmoid=True) for v in VERSIONS}
    assert len(ref["4.23"][1]) > len(ref["5.2"][1]) > 0
    outputs = [hd.OutputInfo("v5", x.shape, "uint8", zp=zp, scale=scale)]
    for v in VERSIONS:
        cfg = hd.DecoderConfig(outputs, [hd.AnchorHead("v5", [(16, 16)], 16)], image_size=(64, 64),
                               class_activation="sigmoid", score_threshold=0.0, hailort_version=v)
        _on_every_path(cfg, {"v5": x}, lambda got, path: _same(got, ref[v], f"{v} {path}"))


# -- YOLOX ------------------------------------------------------------------------------------


def _yolox_case(seed, *, nc=3, levels=(0, 128, 255), obj_levels=(0, 204, 255), q_scores=(0.0, 1 / 255)):
    rng = np.random.default_rng(seed)
    heads_raw, quant, outputs, raw, heads = [], [], [], {}, []
    for stride in (8, 16):
        g = 64 // stride
        reg = rng.integers(90, 170, size=(g, g, 4)).astype(np.uint8)
        obj = rng.choice(np.array(obj_levels, np.uint8), size=(g, g, 1))
        cls = rng.choice(np.array(levels, np.uint8), size=(g, g, nc))
        q = ((128.0, 0.02), q_scores, q_scores)
        names = (f"reg{stride}", f"obj{stride}", f"cls{stride}")
        for name, arr, (zp, scale) in zip(names, (reg, obj, cls), q):
            raw[name] = arr
            outputs.append(hd.OutputInfo(name, arr.shape, "uint8", zp=zp, scale=scale))
        heads.append(hd.YoloxHead(*names, stride))
        heads_raw.append((reg, obj, cls))
        quant.append(q)
    return heads_raw, quant, outputs, heads, raw


@pytest.mark.parametrize("seed", range(3))
def test_yolox_ties_are_the_same_in_both_versions(seed):
    """YOLOX's order did not change in 5.x (row, column, class; v5.2.0 yolox_post_process.hpp lines
    101-151): both references agree, and the decoder equals them under either version."""
    heads_raw, quant, outputs, heads, raw = _yolox_case(seed)
    ref = {v: yolox_op(heads_raw, quant, version=v, num_classes=3, score_th=0.2, iou_th=0.45, max_per_class=100)
           for v in VERSIONS}
    assert len(ref["4.23"][1]) > 16  # past std::sort's insertion sort: its ties depend on the order
    assert not _differ(ref["4.23"], ref["5.2"])
    for v in VERSIONS:
        cfg = hd.DecoderConfig(outputs, heads, image_size=(64, 64), iou_threshold=0.45, hailort_version=v)
        _on_every_path(cfg, raw, lambda got, path: _same(got, ref[v], f"{v} {path}"))


def test_yolov8_and_yolox_sigmoid_prefilter_on_the_clipped_logit():
    """The same rule where hailo_decode extends HailoRT's ops with class_activation="sigmoid"
    (YOLOv8 classes; YOLOX objectness and classes): at th = 0.0 values below quantize(logit(1e-7))
    go under 5.x only."""
    zp, scale = 128.0, 0.2
    rng = np.random.default_rng(9)
    reg = rng.integers(100, 150, size=(4, 4, 64)).astype(np.uint8)
    cls = rng.choice(np.array([40, 200], np.uint8), size=(4, 4, 2))
    outputs = [hd.OutputInfo("reg", reg.shape, "uint8", zp=128.0, scale=0.05),
               hd.OutputInfo("cls", cls.shape, "uint8", zp=zp, scale=scale)]
    ref = {v: yolov8_op([(reg, cls)], [((128.0, 0.05), (zp, scale))], [16], version=v, score_th=0.0, iou_th=0.7,
                        max_per_class=100, image_hw=(64, 64), sigmoid=True) for v in VERSIONS}
    assert len(ref["4.23"][1]) > len(ref["5.2"][1]) > 0
    for v in VERSIONS:
        cfg = hd.DecoderConfig(outputs, [hd.Head("reg", "cls", 16)], image_size=(64, 64), class_activation="sigmoid",
                               score_threshold=0.0, hailort_version=v)
        _on_every_path(cfg, {"reg": reg, "cls": cls}, lambda got, path: _same(got, ref[v], f"{v} {path}", atol=2e-6))
    heads_raw, quant, outputs, heads, raw = _yolox_case(4, levels=(40, 200), obj_levels=(40, 200), q_scores=(zp, scale))
    ref = {v: yolox_op(heads_raw, quant, version=v, num_classes=3, score_th=0.0, iou_th=0.7, max_per_class=100,
                       sigmoid=True) for v in VERSIONS}
    assert len(ref["4.23"][1]) > len(ref["5.2"][1]) > 0
    for v in VERSIONS:
        cfg = hd.DecoderConfig(outputs, heads, image_size=(64, 64), class_activation="sigmoid", score_threshold=0.0,
                               hailort_version=v)
        _on_every_path(cfg, raw, lambda got, path: _same(got, ref[v], f"{v} {path}"))


def test_prefilter_at_the_threshold_exactly():
    """A value that dequantizes exactly to the threshold passes both the 5.x pre-filter and the
    float test (quantize rounds it back to itself); the one below passes neither. rintf rounds
    half to even (th / scale = 2.5 -> 2, 3.5 -> 4); thresholds past the range saturate."""
    scale = 0.125
    assert quantize_v52(0.3125, 0.0, scale, 255) == 2 and quantize_v52(0.4375, 0.0, scale, 255) == 4
    assert quantize_v52(0.25, 0.0, scale, 255) == 2 and np.float32(2 * scale) == np.float32(0.25)
    assert quantize_v52(2.0, 0.0, 1 / 255, 255) == 255 and quantize_v52(-1.0, 3.0, 0.1, 255) == 0
    assert quantize_v52(np.float32(np.nan), 0.0, 0.1, 255) == 0
    cls = np.zeros((8, 8, 2), np.uint8)
    cls[1, 1, 0] = cls[5, 5, 1] = 2  # exactly 0.25
    cls[3, 3, 0] = 1                 # 0.125, below
    reg = np.full((8, 8, 64), 128, np.uint8)
    outputs = [hd.OutputInfo("reg8", reg.shape, "uint8", zp=128.0, scale=0.05),
               hd.OutputInfo("cls8", cls.shape, "uint8", zp=0.0, scale=scale)]
    for v in VERSIONS:
        ref = yolov8_op([(reg, cls)], [((128.0, 0.05), (0.0, scale))], [8], version=v, score_th=0.25, iou_th=0.5,
                        max_per_class=100, image_hw=(64, 64))
        cfg = hd.DecoderConfig(outputs, [hd.Head("reg8", "cls8", 8)], image_size=(64, 64), score_threshold=0.25,
                               hailort_version=v)
        got = hd.Decoder(cfg)({"reg8": reg, "cls8": cls})
        _same(got, ref, v, atol=2e-6)
        assert len(got) == 2
    # YOLOX: class x objectness exactly at the threshold (0.5 x 0.5 = 0.25; th / obj = 0.5 -> 128 at
    # scale 1/256), and the byte below it
    reg = np.full((4, 4, 4), 128, np.uint8)
    obj = np.zeros((4, 4, 1), np.uint8)
    obj[1, 2, 0] = obj[2, 1, 0] = 128
    cls = np.zeros((4, 4, 1), np.uint8)
    cls[1, 2, 0], cls[2, 1, 0] = 128, 127
    q = ((128.0, 0.02), (0.0, 1 / 256), (0.0, 1 / 256))
    assert quantize_v52(np.float32(0.25) / np.float32(0.5), 0.0, 1 / 256, 255) == 128
    outputs = [hd.OutputInfo(n, a.shape, "uint8", zp=zp, scale=s)
               for n, a, (zp, s) in zip(("reg", "obj", "cls"), (reg, obj, cls), q)]
    for v in VERSIONS:
        ref = yolox_op([(reg, obj, cls)], [q], version=v, num_classes=1, score_th=0.25, iou_th=0.5, max_per_class=100)
        cfg = hd.DecoderConfig(outputs, [hd.YoloxHead("reg", "obj", "cls", 16)], image_size=(64, 64),
                               score_threshold=0.25, hailort_version=v)
        got = hd.Decoder(cfg)({"reg": reg, "obj": obj, "cls": cls})
        _same(got, ref, v)
        assert len(got) == 1
