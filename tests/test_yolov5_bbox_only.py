"""The yolov5_bbox_only op's output: written by decode_to_hailo_nms(raw, format="bbox_only") for
YOLOv5 heads, equal to HailoRT 4.23's op transliterated from its source (hailort_ssd_ops.
yolov5_bbox_only_op), and read by decode_hailo_nms(..., format="bbox_only", bbox_op="yolov5") with
NMS here: the detections HailoRT's YOLOv5 NMS op gives (hailort_anchor_ops.yolov5_op)."""

from __future__ import annotations

import numpy as np
import pytest

import hailo_decode as hd
from hailort_anchor_ops import to_device_nhcw, yolov5_op
from hailort_ssd_ops import yolov5_bbox_only_op

ANCHORS = {8: ((10, 13), (16, 30), (33, 23)), 16: ((30, 61), (62, 45), (59, 119)), 32: ((116, 90), (156, 198), (373, 326))}
NAMES = {8: "net/conv9", 16: "net/conv10", 32: "net/conv11"}  # std::map order differs from the list's


def v5_case(rng, *, nc, dtype="uint8", image=128, device=(False, True, False), levels=8, obj_rate=0.3, frames=None):
    top = 255 if dtype == "uint8" else 65535
    tensors, quant, anchors, outputs, raw, heads = {}, {}, {}, [], {}, []
    for k, stride in enumerate((8, 16, 32)):
        g, e, name = image // stride, 5 + nc, NAMES[stride]
        shape = (g, g, 3 * e) if frames is None else (frames, g, g, 3 * e)
        x = rng.integers(0, levels, size=shape) * (top // (levels - 1))
        obj = np.where(rng.random(shape[:-1] + (3,)) < obj_rate, rng.integers(levels // 2, levels, shape[:-1] + (3,)), 0)
        x[..., 4::e] = obj * (top // (levels - 1))
        x = x.astype(np.uint8 if dtype == "uint8" else np.uint16)
        zp, scale = 3.0, 1.0 / (top - 3)
        tensors[name], quant[name], anchors[name] = x, (zp, scale), ANCHORS[stride]
        if device[k]:
            padded = (g, g + 8, 3 * e)
            raw[name] = (to_device_nhcw(x, padded) if frames is None
                         else np.stack([to_device_nhcw(f, padded) for f in x]))
            outputs.append(hd.OutputInfo(name, (g, g, 3 * e), dtype, "NHCW", zp=zp, scale=scale, padded_shape=padded,
                                         device=True))
        else:
            raw[name] = x
            outputs.append(hd.OutputInfo(name, (g, g, 3 * e), dtype, zp=zp, scale=scale))
        heads.append(hd.AnchorHead(name, ANCHORS[stride], stride))
    return tensors, quant, anchors, outputs, heads, raw


@pytest.mark.parametrize("dtype", ["uint8", "uint16"])
def test_written_form_is_the_ops_array(dtype):
    rng = np.random.default_rng(31 + (dtype == "uint16"))
    tensors, quant, anchors, outputs, heads, raw = v5_case(rng, nc=4, dtype=dtype)
    cfg = hd.DecoderConfig(outputs, heads, image_size=(128, 128))
    got = hd.Decoder(cfg).decode_to_hailo_nms(raw, format="bbox_only")
    want = yolov5_bbox_only_op(tensors, quant, anchors, num_classes=4, image_hw=(128, 128))
    assert got.shape == want.shape == (1, 3 * (16 * 16 + 8 * 8 + 4 * 4), 9)
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))  # bit for bit
    assert (got[0, :, 1] < 0).any() and (got[0, :, 3] > 1).any()  # boxes past the border, unclipped


def test_batch_and_out():
    rng = np.random.default_rng(33)
    tensors, quant, anchors, outputs, heads, raw = v5_case(rng, nc=2, frames=3, device=(False, False, False))
    dec = hd.Decoder(hd.DecoderConfig(outputs, heads, image_size=(128, 128)))
    out = np.full((3, 1, 3 * 336, 7), np.nan, np.float32)
    assert dec.decode_to_hailo_nms(raw, out, format="bbox_only") is out
    for f in range(3):
        want = yolov5_bbox_only_op({n: t[f] for n, t in tensors.items()}, quant, anchors, num_classes=2, image_hw=(128, 128))
        np.testing.assert_array_equal(out[f], want)
    with pytest.raises(ValueError, match="need"):
        dec.decode_to_hailo_nms(raw, np.empty(10, np.float32), format="bbox_only")
    with pytest.raises(TypeError, match="float32"):
        dec.decode_to_hailo_nms(raw, np.empty(out.shape, np.float64), format="bbox_only")


@pytest.mark.parametrize("dtype", ["uint8", "uint16"])
@pytest.mark.parametrize("seed", range(3))
def test_read_back_gives_hailorts_yolov5_nms(dtype, seed):
    """decode_hailo_nms on the op's array, NMS on the host with HailoRT's rules and the op's settings:
    the YOLOv5 NMS op's detections (its candidate order is the rows' order, so its ties too)."""
    rng = np.random.default_rng(40 + seed)
    nc = [1, 3, 80][seed]
    tensors, quant, anchors, outputs, heads, raw = v5_case(rng, nc=nc, dtype=dtype, levels=[8, 4, 8][seed])
    th, iou, mpc = [0.2, 0.3, 0.25][seed], [0.45, 0.6, 0.3][seed], [100, 3, 20][seed]
    cfg = hd.DecoderConfig(outputs, heads, image_size=(128, 128), score_threshold=th, iou_threshold=iou, max_per_class=mpc)
    rows = yolov5_bbox_only_op(tensors, quant, anchors, num_classes=nc, image_hw=(128, 128))
    got = hd.decode_hailo_nms(rows, format="bbox_only", bbox_op="yolov5", score_threshold=th, iou_threshold=iou,
                              max_per_class=mpc)
    boxes, scores, classes = yolov5_op(tensors, quant, anchors, num_classes=nc, score_th=th, iou_th=iou,
                                       max_per_class=mpc, image_hw=(128, 128))
    assert len(scores) > 3
    np.testing.assert_array_equal(got.scores, scores)
    np.testing.assert_array_equal(got.class_ids, classes)
    np.testing.assert_array_equal(got.boxes, boxes)
    direct = hd.Decoder(cfg)(raw)
    np.testing.assert_array_equal(direct.boxes, got.boxes)
    flat = hd.decode_hailo_nms(rows.reshape(-1), format="bbox_only", bbox_op="yolov5", num_classes=nc,
                               score_threshold=th, iou_threshold=iou, max_per_class=mpc)
    np.testing.assert_array_equal(flat.boxes, got.boxes)


def test_objectness_gates_the_proposal():
    """A proposal whose objectness fails the threshold gives no detection, whatever its class
    values (the op skips it before scoring); class x objectness is the score."""
    rows = np.zeros((1, 2, 7), np.float32)
    rows[0, 0, :4] = rows[0, 1, :4] = [0.1, 0.1, 0.3, 0.3]
    rows[0, 0, 4:] = [0.1, 5.0, 0.2]  # objectness 0.1 < 0.2: out, though 0.1 x 5.0 = 0.5
    rows[0, 1, 4:] = [0.5, 0.2, 0.9]  # 0.5 x 0.9 = 0.45 (class 1) passes, 0.1 (class 0) does not
    d = hd.decode_hailo_nms(rows, format="bbox_only", bbox_op="yolov5", score_threshold=0.2)
    assert d.class_ids.tolist() == [1] and d.scores.tolist() == [np.float32(0.9) * np.float32(0.5)]


def test_errors():
    rng = np.random.default_rng(1)
    tensors, quant, anchors, outputs, heads, raw = v5_case(rng, nc=2)
    with pytest.raises(ValueError, match="bbox_op must be one of"):
        hd.decode_hailo_nms(np.zeros((1, 3, 7), np.float32), format="bbox_only", bbox_op="yolov7")
    with pytest.raises(TypeError, match="bbox_op applies to format=\"bbox_only\" only"):
        hd.decode_hailo_nms(np.zeros(10, np.float32), bbox_op="yolov5", num_classes=2)
    with pytest.raises(ValueError, match="non-finite"):
        hd.decode_hailo_nms(np.full((1, 3, 7), np.nan, np.float32), format="bbox_only", bbox_op="yolov5")
    with pytest.raises(ValueError, match="at least one class"):
        hd.decode_hailo_nms(np.zeros((1, 3, 5), np.float32), format="bbox_only", bbox_op="yolov5")
    dfl = hd.DecoderConfig([hd.OutputInfo("b", (8, 8, 64), "uint8", zp=0.0, scale=1.0),
                            hd.OutputInfo("c", (8, 8, 3), "uint8", zp=0.0, scale=1.0)])
    with pytest.raises(ValueError, match="written for YOLOv5 heads"):
        hd.Decoder(dfl).decode_to_hailo_nms({"b": np.zeros((8, 8, 64), np.uint8), "c": np.zeros((8, 8, 3), np.uint8)},
                                            format="bbox_only")
