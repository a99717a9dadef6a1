"""Anchor-based heads: YOLOv5/YOLOv7 (AnchorHead) and YOLOX (YoloxHead).

hailort preset: bit-exact against NumPy models of HailoRT 4.23's ops written from their source
(hailort_anchor_ops.py: float32 formulas, the C library's powf/expf, inputs in name order for
YOLOv5, libstdc++ std::sort ties, greedy NMS), on uint8/uint16 raw device (NHCW, padded) and host
buffers with many equal scores. ultralytics preset: the YOLOv5 / YOLOX repositories' decode (pixels,
by the stride) against a NumPy reference. Model Zoo NMS JSONs, HailoRT's output forms, bad input."""

from __future__ import annotations

import json

import numpy as np
import pytest

import hailo_decode as hd
from hailort_anchor_ops import deq, to_device_nhcw, yolov5_op, yolox_op
from reference_decoder import greedy_nms, sigmoid32

ANCHORS = {8: ((10, 13), (16, 30), (33, 23)), 16: ((30, 61), (62, 45), (59, 119)), 32: ((116, 90), (156, 198), (373, 326))}
# names whose std::map order (conv10 < conv11 < conv9) differs from the list order (stride 8, 16, 32)
V5_NAMES = {8: "net/conv9", 16: "net/conv10", 32: "net/conv11"}


def _v5_case(rng, *, nc, dtype="uint8", image=128, levels=8, device=(True, False, True), obj_rate=0.3):
    top = 255 if dtype == "uint8" else 65535
    tensors, quant, anchors, outputs, raw = {}, {}, {}, [], {}
    heads = []
    for k, stride in enumerate((8, 16, 32)):
        g = image // stride
        name = V5_NAMES[stride]
        e = 5 + nc
        x = rng.integers(0, levels, size=(g, g, 3 * e)) * (top // (levels - 1))
        obj = np.where(rng.random((g, g, 3)) < obj_rate, rng.integers(levels // 2, levels, (g, g, 3)), 0) * (top // (levels - 1))
        x[..., 4::e] = obj
        x = x.astype(np.uint8 if dtype == "uint8" else np.uint16)
        zp, scale = 0.0, 1.0 / top
        tensors[name], quant[name], anchors[name] = x, (zp, scale), ANCHORS[stride]
        if device[k]:
            padded = (g, g + 8, 3 * e)
            raw[name] = to_device_nhcw(x, padded)
            outputs.append(hd.OutputInfo(name, x.shape, dtype, "NHCW", zp=zp, scale=scale, padded_shape=padded, device=True))
        else:
            raw[name] = x
            outputs.append(hd.OutputInfo(name, x.shape, dtype, zp=zp, scale=scale))
        heads.append(hd.AnchorHead(name, ANCHORS[stride], stride))
    return tensors, quant, anchors, outputs, heads, raw


@pytest.mark.parametrize("dtype", ["uint8", "uint16"])
@pytest.mark.parametrize("seed", range(4))
def test_yolov5_hailort_preset_is_hailorts_op_bit_for_bit(dtype, seed):
    rng = np.random.default_rng(seed)
    nc = [1, 3, 5, 80][seed]
    tensors, quant, anchors, outputs, heads, raw = _v5_case(rng, nc=nc, dtype=dtype)
    th, iou, mpc = [0.2, 0.3, 0.25, 0.45][seed], [0.45, 0.6, 0.3, 0.7][seed], [100, 3, 100, 20][seed]
    cfg = hd.DecoderConfig(outputs, heads, image_size=(128, 128), score_threshold=th, iou_threshold=iou, max_per_class=mpc)
    assert cfg.head_kind == "yolov5" and cfg.num_classes == nc
    got = hd.Decoder(cfg)(raw)
    boxes, scores, classes = yolov5_op(tensors, quant, anchors, num_classes=nc, score_th=th, iou_th=iou,
                                       max_per_class=mpc, image_hw=(128, 128))
    assert len(scores) > 3
    np.testing.assert_array_equal(got.scores, scores)
    np.testing.assert_array_equal(got.class_ids, classes)
    np.testing.assert_array_equal(got.boxes, boxes)  # normalized yxyx, bit for bit


def test_yolov5_name_order_decides_ties():
    """The op's std::map visits inputs by name: with equal scores in different heads, the
    survivor among overlapping equal boxes depends on it. Listing the heads in another order
    changes nothing (we visit by name as HailoRT does)."""
    rng = np.random.default_rng(42)
    tensors, quant, anchors, outputs, heads, raw = _v5_case(rng, nc=2, levels=3, obj_rate=0.6)
    a = hd.Decoder(hd.DecoderConfig(outputs, heads, image_size=(128, 128)))(raw)
    b = hd.Decoder(hd.DecoderConfig(outputs, heads[::-1], image_size=(128, 128)))(raw)
    np.testing.assert_array_equal(a.boxes, b.boxes)
    np.testing.assert_array_equal(a.scores, b.scores)


def _v5_repo_reference(tensors, quant, heads, nc, conf, iou, max_det=300):
    """The YOLOv5 repository: models/yolo.py Detect (sigmoid outputs here: activation none),
    xy = (2 t + grid - 0.5) * stride, wh = (2 t)^2 * anchor; utils/general.py
    non_max_suppression: obj > conf, conf = obj * cls, best class > conf, sort by conf (stable),
    class-aware NMS suppressing IoU > iou, max_det."""
    rows = []
    for h in heads:
        x = deq(tensors[h.box], *quant[h.box])
        g, e = x.shape[0], 5 + nc
        for row in range(g):
            for col in range(x.shape[1]):
                for a, (aw, ah) in enumerate(h.anchors):
                    v = x[row, col, a * e:(a + 1) * e]
                    if not v[4] > np.float32(conf):
                        continue
                    xc = (v[0] * np.float32(2) + (np.float32(col) - np.float32(0.5))) * np.float32(h.stride)
                    yc = (v[1] * np.float32(2) + (np.float32(row) - np.float32(0.5))) * np.float32(h.stride)
                    w = (v[2] * np.float32(2)) ** 2 * np.float32(aw)
                    hh = (v[3] * np.float32(2)) ** 2 * np.float32(ah)
                    sc = v[5:] * v[4]
                    c = int(np.argmax(sc))
                    if sc[c] > np.float32(conf):
                        rows.append(([xc - w / 2, yc - hh / 2, xc + w / 2, yc + hh / 2], sc[c], c))
    boxes = np.array([r[0] for r in rows], np.float32).reshape(-1, 4)
    scores = np.array([r[1] for r in rows], np.float32)
    classes = np.array([r[2] for r in rows], np.int64)
    order = np.argsort(-scores, kind="stable")
    boxes, scores, classes = boxes[order], scores[order], classes[order]
    keep = greedy_nms(boxes, classes, iou, ">", False)[:max_det]
    return boxes[keep], scores[keep], classes[keep]


def test_yolov5_ultralytics_preset_is_the_repositorys_decode():
    rng = np.random.default_rng(9)
    tensors, quant, anchors, outputs, heads, raw = _v5_case(rng, nc=4)
    cfg = hd.DecoderConfig(outputs, heads, image_size=(128, 128), semantics="ultralytics", class_activation="none",
                           score_threshold=0.25, iou_threshold=0.45)
    got = hd.Decoder(cfg)(raw)
    boxes, scores, classes = _v5_repo_reference(tensors, quant, cfg.heads, 4, 0.25, 0.45)
    assert len(scores) > 3
    np.testing.assert_array_equal(got.scores, scores)
    np.testing.assert_array_equal(got.class_ids, classes)
    np.testing.assert_allclose(got.boxes, boxes, rtol=0, atol=1e-4)


def test_yolov5_host_sigmoid_for_logit_outputs():
    """A model compiled without the final sigmoid: class_activation="sigmoid" applies it to every
    channel, as YOLOv5's Detect does."""
    rng = np.random.default_rng(4)
    tensors, quant, anchors, outputs, heads, raw = _v5_case(rng, nc=3, device=(False, False, False))
    outs = [hd.OutputInfo(o.name, o.shape, o.dtype, zp=128, scale=0.05) for o in outputs]
    cfg = hd.DecoderConfig(outs, heads, image_size=(128, 128), class_activation="sigmoid", score_threshold=0.3)
    got = hd.Decoder(cfg)(raw)
    sig = {n: np.round(sigmoid32(deq(t, 128, 0.05)) * 65535).astype(np.uint16) for n, t in tensors.items()}
    # the same decode on the activated values (quantized finely: compare loosely)
    ref = yolov5_op(sig, {n: (0.0, 1 / 65535) for n in sig}, anchors, num_classes=3, score_th=0.3, iou_th=0.7,
                    max_per_class=100, image_hw=(128, 128))
    assert abs(len(got) - len(ref[1])) <= 2 and len(got) > 0


# --------------------------------------------------------------------------------------------
# YOLOX
# --------------------------------------------------------------------------------------------
def _yolox_case(rng, *, nc, dtype="uint8", image=128, device=False):
    top = 255 if dtype == "uint8" else 65535
    dt = np.uint8 if dtype == "uint8" else np.uint16
    heads_raw, quant, outputs, heads, raw = [], [], [], [], {}
    for stride in (8, 16, 32):
        g = image // stride
        reg = rng.integers(0, top + 1, size=(g, g, 4)).astype(dt)
        obj = (np.where(rng.random((g, g, 1)) < 0.4, rng.integers(4, 8, (g, g, 1)), 0) * (top // 7)).astype(dt)
        cls = (rng.integers(0, 8, size=(g, g, nc)) * (top // 7)).astype(dt)
        qr, qo, qc = (top / 2, 6.0 / top), (0.0, 1.0 / top), (0.0, 1.0 / top)
        names = [f"x/reg{stride}", f"x/obj{stride}", f"x/cls{stride}"]
        for n, a, q in zip(names, (reg, obj, cls), (qr, qo, qc)):
            if device:
                padded = (g, g + 8, max(8, a.shape[2]))
                raw[n] = to_device_nhcw(a, padded)
                outputs.append(hd.OutputInfo(n, a.shape, dtype, "NHCW", zp=q[0], scale=q[1], padded_shape=padded, device=True))
            else:
                raw[n] = a
                outputs.append(hd.OutputInfo(n, a.shape, dtype, zp=q[0], scale=q[1]))
        heads_raw.append((reg, obj, cls))
        quant.append((qr, qo, qc))
        heads.append(hd.YoloxHead(names[0], names[1], names[2], stride))
    return heads_raw, quant, outputs, heads, raw


@pytest.mark.parametrize("dtype", ["uint8", "uint16"])
@pytest.mark.parametrize("seed", range(3))
def test_yolox_hailort_preset_is_hailorts_op_bit_for_bit(dtype, seed):
    rng = np.random.default_rng(100 + seed)
    nc = [2, 7, 80][seed]
    heads_raw, quant, outputs, heads, raw = _yolox_case(rng, nc=nc, dtype=dtype, device=bool(seed % 2))
    cfg = hd.DecoderConfig(outputs, heads, image_size=(128, 128), score_threshold=0.2, iou_threshold=0.65)
    assert cfg.head_kind == "yolox"
    got = hd.Decoder(cfg)(raw)
    boxes, scores, classes = yolox_op(heads_raw, quant, num_classes=nc, score_th=0.2, iou_th=0.65, max_per_class=100)
    assert len(scores) > 3
    np.testing.assert_array_equal(got.scores, scores)
    np.testing.assert_array_equal(got.class_ids, classes)
    np.testing.assert_array_equal(got.boxes, boxes)


@pytest.mark.parametrize("nc", [1, 256, 300])
def test_yolox_uint8_paths_per_channel_reg_and_many_classes(nc):
    """The uint8 decode takes the class bytes of batches of passing cells from one kernel call,
    up to 256 classes (more: the general path), and its boxes' sizes from a table of each reg
    code made with the decoder (here reg with its own quantization per channel). Both against
    HailoRT's op, with equal scores across cells and batches (few levels, many passing cells)."""
    rng = np.random.default_rng(7 + nc)
    heads_raw, quant, outputs, heads, raw = [], [], [], [], {}
    qr = (np.array([120.0, 130.0, 128.0, 125.0]), np.array([0.02, 0.03, 0.04, 0.05]))
    for stride in (8, 16, 32):
        g = 128 // stride
        reg = rng.integers(0, 256, size=(g, g, 4)).astype(np.uint8)
        obj = (np.where(rng.random((g, g, 1)) < 0.5, rng.integers(4, 8, (g, g, 1)), 0) * 36).astype(np.uint8)
        cls = (rng.integers(0, 8, size=(g, g, nc)) * 36).astype(np.uint8)
        names = [f"x/reg{stride}", f"x/obj{stride}", f"x/cls{stride}"]
        for n, a, q in zip(names, (reg, obj, cls), (qr, (0.0, 1 / 255), (0.0, 1 / 255))):
            zp, scale = (tuple(float(v) for v in q[0]), tuple(float(v) for v in q[1])) if n.startswith("x/reg") else q
            outputs.append(hd.OutputInfo(n, a.shape, zp=zp, scale=scale))
            raw[n] = a
        heads_raw.append((reg, obj, cls))
        quant.append((qr, (0.0, 1 / 255), (0.0, 1 / 255)))
        heads.append(hd.YoloxHead(names[0], names[1], names[2], stride))
    cfg = hd.DecoderConfig(outputs, heads, image_size=(128, 128), score_threshold=0.2, iou_threshold=0.65,
                           max_per_class=1000)
    got = hd.Decoder(cfg)(raw)
    boxes, scores, classes = yolox_op(heads_raw, quant, num_classes=nc, score_th=0.2, iou_th=0.65, max_per_class=1000)
    assert len(scores) > 20 and len(np.unique(scores)) < len(scores)  # ties among the rows kept
    np.testing.assert_array_equal(got.scores, scores)
    np.testing.assert_array_equal(got.class_ids, classes)
    np.testing.assert_array_equal(got.boxes, boxes)


def test_yolox_expf_is_the_c_librarys():
    """HailoRT's exp on a float32 is the C library's expf; a correctly rounded exp (float64 then
    rounded) differs from it on a few inputs. The decoder follows expf: its boxes equal the model's
    (which calls libm expf) bit for bit above; here the share of inputs where the two exps differ
    is measured, so that the claim is checked rather than assumed."""
    from hailort_anchor_ops import expf
    x = ((np.arange(65536, dtype=np.float32) - np.float32(32767.5)) * np.float32(6.0 / 65535)).astype(np.float32)
    mine = expf(x)
    correctly_rounded = np.exp(x.astype(np.float64)).astype(np.float32)
    differ = int(np.count_nonzero(mine != correctly_rounded))
    assert differ < 65536 // 100  # glibc's expf is within an ulp: differences are rare
    assert np.all(np.abs(mine.view(np.int32) - correctly_rounded.view(np.int32)) <= 1)


def test_yolox_repository_decode_under_ultralytics_preset():
    rng = np.random.default_rng(3)
    heads_raw, quant, outputs, heads, raw = _yolox_case(rng, nc=3)
    cfg = hd.DecoderConfig(outputs, heads, image_size=(128, 128), semantics="ultralytics", class_activation="none",
                           score_threshold=0.2, score_test=">=", iou_threshold=0.65)
    got = hd.Decoder(cfg)(raw)
    rows = []
    for (reg_raw, obj_raw, cls_raw), (qr, qo, qc), h in zip(heads_raw, quant, cfg.heads):
        reg, obj, cls = deq(reg_raw, *qr), deq(obj_raw, *qo), deq(cls_raw, *qc)
        for row in range(reg.shape[0]):
            for col in range(reg.shape[1]):
                if not obj[row, col, 0] >= np.float32(0.2):
                    continue
                sc = cls[row, col] * obj[row, col, 0]
                c = int(np.argmax(sc))
                if sc[c] >= np.float32(0.2):
                    s = np.float32(h.stride)
                    xc, yc = (reg[row, col, 0] + col) * s, (reg[row, col, 1] + row) * s
                    w, hh = np.exp(reg[row, col, 2]) * s, np.exp(reg[row, col, 3]) * s
                    rows.append(([xc - w / 2, yc - hh / 2, xc + w / 2, yc + hh / 2], sc[c], c))
    boxes = np.array([r[0] for r in rows], np.float32)
    scores = np.array([r[1] for r in rows], np.float32)
    classes = np.array([r[2] for r in rows], np.int64)
    order = np.argsort(-scores, kind="stable")
    keep = greedy_nms(boxes[order], classes[order], 0.65, ">", False)[:300]
    np.testing.assert_array_equal(got.scores, scores[order][keep])
    np.testing.assert_array_equal(got.class_ids, classes[order][keep])
    np.testing.assert_allclose(got.boxes, boxes[order][keep], rtol=0, atol=1e-3)


# --------------------------------------------------------------------------------------------
# Model Zoo JSON, HailoRT output forms, bad input
# --------------------------------------------------------------------------------------------
YOLOV5_JSON = {
    "nms_scores_th": 0.2, "nms_iou_th": 0.6, "image_dims": [128, 128], "max_proposals_per_class": 80,
    "background_removal": False, "classes": 5,
    "bbox_decoders": [
        {"name": "bbox_decoder9", "w": [10, 16, 33], "h": [13, 30, 23], "stride": 8, "encoded_layer": "conv9"},
        {"name": "bbox_decoder10", "w": [30, 62, 59], "h": [61, 45, 119], "stride": 16, "encoded_layer": "conv10"},
        {"name": "bbox_decoder11", "w": [116, 156, 373], "h": [90, 198, 326], "stride": 32, "encoded_layer": "conv11"},
    ]}


def test_from_nms_json_yolov5_and_round_trip_through_hailo_nms():
    rng = np.random.default_rng(8)
    tensors, quant, anchors, outputs, heads, raw = _v5_case(rng, nc=5)
    cfg = hd.DecoderConfig.from_nms_json(json.dumps(YOLOV5_JSON), outputs)
    assert cfg.head_kind == "yolov5"
    assert [h.anchors for h in cfg.heads] == [ANCHORS[8], ANCHORS[16], ANCHORS[32]]
    assert (cfg.score_threshold, cfg.iou_threshold, cfg.max_per_class) == (0.2, 0.6, 80)
    dec = hd.Decoder(cfg)
    got = dec(raw)
    ref = yolov5_op(tensors, quant, anchors, num_classes=5, score_th=0.2, iou_th=0.6, max_per_class=80, image_hw=(128, 128))
    np.testing.assert_array_equal(got.scores, ref[1])
    # HAILO_NMS_BY_CLASS, as HailoRT's op would hand it out, read back: the same rows
    back = hd.decode_hailo_nms(dec.decode_to_hailo_nms(raw), num_classes=5, max_per_class=80)

    def rows(d):
        r = np.column_stack([np.asarray(d.class_ids, np.float64), np.asarray(d.scores, np.float64),
                             np.asarray(d.boxes, np.float64)])
        return r[np.lexsort(r.T[::-1])]
    np.testing.assert_array_equal(rows(back), rows(got))


def test_from_nms_json_yolox():
    rng = np.random.default_rng(2)
    heads_raw, quant, outputs, heads, raw = _yolox_case(rng, nc=3)
    doc = {"nms_scores_th": 0.2, "nms_iou_th": 0.65, "image_dims": [128, 128], "max_proposals_per_class": 100,
           "classes": 3, "bbox_decoders": [
               {"name": f"bbox_decoder_{s}", "stride": s, "reg_layer": f"reg{s}", "objectness_layer": f"obj{s}",
                "cls_layer": f"cls{s}"} for s in (8, 16, 32)]}
    cfg = hd.DecoderConfig.from_nms_json(doc, outputs)
    assert cfg.head_kind == "yolox" and [h.obj for h in cfg.heads] == ["x/obj8", "x/obj16", "x/obj32"]
    doc["bbox_decoders"][0] = dict(doc["bbox_decoders"][0], obj_layer="obj8")
    del doc["bbox_decoders"][0]["objectness_layer"]
    assert hd.DecoderConfig.from_nms_json(doc, outputs).heads == cfg.heads  # "obj_layer" too
    got = hd.Decoder(cfg)(raw)
    ref = yolox_op(heads_raw, quant, num_classes=3, score_th=0.2, iou_th=0.65, max_per_class=100)
    np.testing.assert_array_equal(got.boxes, ref[0])


def test_bad_anchor_heads_raise_clear_errors():
    rng = np.random.default_rng(0)
    _, _, _, outputs, heads, _ = _v5_case(rng, nc=3)
    with pytest.raises(ValueError, match=r"'net/conv9': 24 channels do not hold 5 anchors"):
        hd.DecoderConfig(outputs, [hd.AnchorHead("net/conv9", [(1, 1)] * 5, 8)] + heads[1:], image_size=(128, 128))
    with pytest.raises(ValueError, match="anchors must be positive whole pixels"):
        hd.AnchorHead("a", [(0, 3)])
    with pytest.raises(ValueError, match="anchors must be"):
        hd.AnchorHead("a", [(1, 2, 3)])
    with pytest.raises(ValueError, match="mix head families"):
        hd.DecoderConfig(outputs, [heads[0], hd.Head(heads[1].box, heads[2].box, 16)], image_size=(128, 128))
    with pytest.raises(ValueError, match="end2end selection is for DFL heads"):
        hd.DecoderConfig(outputs, heads, image_size=(128, 128), end2end=True)
    _, _, youts, yheads, _ = _yolox_case(rng, nc=3)
    with pytest.raises(ValueError, match="YOLOX objectness must have 1 channel"):
        hd.DecoderConfig(youts, [hd.YoloxHead(yheads[0].box, yheads[0].cls, yheads[0].obj, 8)] + list(yheads[1:]),
                         image_size=(128, 128))
    with pytest.raises(ValueError, match="outputs .* belong to no head"):
        hd.DecoderConfig(youts, yheads[:2], image_size=(128, 128))


# --------------------------------------------------------------------------------------------
# from_hef: the HEF's yolov5 / yolox NMS ops (written with tests/hef_writer.py's encoder)
# --------------------------------------------------------------------------------------------
def _anchor_hef(kind, outputs, pads):
    import hef_writer as w
    layers = [w.Layer("net/input_layer1", (128, 128, 3), output=False, limvals=(0.0, 255.0))]
    for o in outputs:
        padded = o.memory_shape if o.device else None
        layers.append(w.Layer(o.name, o.shape, "NHCW" if o.device else "NHWC", padded=padded,
                              data_bytes=1 if o.dtype == "uint8" else 2, zp=float(o.zp), scale=float(o.scale),
                              pad_index=pads[o.name]))
    if kind == "yolov5":
        decs = []
        for stride, name in V5_NAMES.items():
            hs = b"".join(w.enc_varint(a[1]) for a in ANCHORS[stride])
            ws = b"".join(w.enc_varint(a[0]) for a in ANCHORS[stride])
            # ProtoHEFYoloBboxDecoder: h 2 (packed), w 3 (packed), stride 4, pad_index 5
            decs.append(w.msg(4, w.ln(2, hs), w.ln(3, ws), w.uint(4, stride), w.uint(5, pads[name], keep_zero=True)))
        body = w.msg(7, w.f64(1, 128.0), w.f64(2, 128.0), w.uint(3, 1), *decs)
    else:
        decs = [w.msg(3, w.uint(1, s), w.uint(2, pads[f"x/reg{s}"], keep_zero=True),
                      w.uint(3, pads[f"x/cls{s}"], keep_zero=True), w.uint(4, pads[f"x/obj{s}"], keep_zero=True))
                for s in (8, 16, 32)]
        body = w.msg(8, w.f64(1, 128.0), w.f64(2, 128.0), *decs)
    nms = b"".join([w.f64(1, 0.25), w.f64(2, 0.5), w.uint(3, 50), w.uint(4, 5 if kind == "yolov5" else 3), body])
    op = b"".join([w.string(1, f"{kind}_nms_postprocess"), w.msg(3, w.pad(1000, f"net/{kind}_nms")), w.msg(5, nms)])
    group = w.network_group("net", layers) + w.msg(8, op)
    return w.wrap(w.hef_proto([group], extensions=(0, 3, 12, 13, 14, 15)))


def test_from_hef_reads_the_yolov5_op_and_round_trips(tmp_path):
    rng = np.random.default_rng(21)
    tensors, quant, anchors, outputs, heads, raw = _v5_case(rng, nc=5, device=(False, False, False))
    pads = {V5_NAMES[s]: 10 + k for k, s in enumerate((8, 16, 32))}
    p = tmp_path / "yolov5.hef"
    p.write_bytes(_anchor_hef("yolov5", outputs, pads))
    info = hd.read_hef(str(p))
    op = info.network_groups[0].anchor_op
    assert op is not None and op.kind == "yolov5" and [d.anchors for d in op.decoders] == [ANCHORS[8], ANCHORS[16], ANCHORS[32]]
    cfg = hd.DecoderConfig.from_hef(str(p))
    assert cfg.head_kind == "yolov5" and cfg.num_classes == 5 and cfg.image_size == (128, 128)
    assert (cfg.score_threshold, cfg.iou_threshold, cfg.max_per_class) == (0.25, 0.5, 50)
    assert cfg.class_activation == "none"  # quantized over [0, 1]: sigmoid on chip
    dec = hd.Decoder(cfg)
    got = dec(raw)
    ref = yolov5_op(tensors, quant, anchors, num_classes=5, score_th=0.25, iou_th=0.5, max_per_class=50, image_hw=(128, 128))
    np.testing.assert_array_equal(got.boxes, ref[0])
    want = sorted(map(tuple, np.asarray(got.boxes).tolist()))
    back = hd.decode_hailo_nms(dec.decode_to_hailo_nms(raw), num_classes=5, max_per_class=50)
    assert sorted(map(tuple, np.asarray(back.boxes).tolist())) == want
    by_score = dec.decode_to_hailo_nms(raw, format="by_score", max_bboxes_total=300)  # HAILO_NMS_BY_SCORE
    again = hd.decode_hailo_nms(by_score, format="by_score", num_classes=5, max_bboxes_total=300)
    # (4.23's BY_SCORE form does not apply max_proposals_per_class: it holds the capped rows and more)
    uncapped = hd.Decoder(cfg.replace(max_per_class=None))(raw)
    assert len(again) == min(300, len(uncapped)) > len(got)
    assert set(want) <= set(map(tuple, np.asarray(again.boxes, np.float32).tolist()))
    for tf in (False, True):  # pyhailort's per-class list and its tf_nms_format array
        form = got.to_hailo_nms(tf_format=tf, num_classes=5, max_per_class=50)
        again = hd.decode_hailo_nms(form, num_classes=5, max_per_class=50)
        assert sorted(map(tuple, np.asarray(again.boxes, np.float32).tolist())) == want


def test_from_hef_reads_the_yolox_op(tmp_path):
    rng = np.random.default_rng(22)
    heads_raw, quant, outputs, heads, raw = _yolox_case(rng, nc=3)
    pads = {o.name: 20 + k for k, o in enumerate(outputs)}
    p = tmp_path / "yolox.hef"
    p.write_bytes(_anchor_hef("yolox", outputs, pads))
    cfg = hd.DecoderConfig.from_hef(str(p))
    assert cfg.head_kind == "yolox" and [(h.box, h.obj, h.cls) for h in cfg.heads] == [
        (f"x/reg{s}", f"x/obj{s}", f"x/cls{s}") for s in (8, 16, 32)]
    got = hd.Decoder(cfg)(raw)
    ref = yolox_op(heads_raw, quant, num_classes=3, score_th=0.25, iou_th=0.5, max_per_class=50)
    np.testing.assert_array_equal(got.boxes, ref[0])
    np.testing.assert_array_equal(got.scores, ref[1])


def test_inspect_shows_the_yolov5_op_and_the_decoder_built_from_it(tmp_path, capsys):
    from hailo_decode.cli import main
    rng = np.random.default_rng(21)
    _, _, _, outputs, _, _ = _v5_case(rng, nc=5, device=(False, False, False))
    p = tmp_path / "yolov5.hef"
    p.write_bytes(_anchor_hef("yolov5", outputs, {V5_NAMES[s]: 10 + k for k, s in enumerate((8, 16, 32))}))
    assert main(["inspect", str(p)]) in (0, None)
    out = capsys.readouterr().out
    assert "Op YOLOV5" in out and "anchors [[10, 13], [16, 30], [33, 23]]" in out
    assert "5 classes, yolov5 heads" in out and "heads from the HEF's YOLOV5 NMS op" in out
    assert "not decoded by hailo-decode" not in out


def test_from_hef_with_yolox_heads_given(tmp_path):
    """heads= given to from_hef: the objectness outputs count as used too."""
    rng = np.random.default_rng(23)
    heads_raw, quant, outputs, heads, raw = _yolox_case(rng, nc=3)
    p = tmp_path / "yolox.hef"
    p.write_bytes(_anchor_hef("yolox", outputs, {o.name: 20 + k for k, o in enumerate(outputs)}))
    cfg = hd.DecoderConfig.from_hef(str(p), heads=heads[:2], image_size=(128, 128))
    assert [h.obj for h in cfg.heads] == ["x/obj8", "x/obj16"] and len(cfg.outputs) == 6


@pytest.mark.parametrize("family", ["yolov5", "yolox", "end2end"])
def test_batches_and_threads_give_the_frames_alone(family):
    """A batch of frames on 1 or 3 threads decodes each frame as it decodes alone."""
    rng = np.random.default_rng(77)
    frames = []
    for _ in range(5):
        if family == "yolov5":
            _, _, _, outputs, heads, raw = _v5_case(rng, nc=4, device=(False, False, False))
            cfg = hd.DecoderConfig(outputs, heads, image_size=(128, 128))
        elif family == "yolox":
            _, _, outputs, heads, raw = _yolox_case(rng, nc=4)
            cfg = hd.DecoderConfig(outputs, heads, image_size=(128, 128))
        else:
            import test_end2end as e
            outputs, heads, raw = e._synthetic(rng, bins=16, dtype="uint8", nc=4)
            cfg = hd.DecoderConfig(outputs, heads, image_size=(128, 128), end2end=True, score_threshold=0.1)
        frames.append(raw)
    batch = {n: np.stack([f[n] for f in frames]) for n in frames[0]}
    alone = [hd.Decoder(cfg)(f) for f in frames]
    for threads in (1, 3):
        got = hd.Decoder(cfg, threads=threads)(batch)
        assert len(got) == 5
        for g, a in zip(got, alone):
            np.testing.assert_array_equal(g.boxes, a.boxes)
            np.testing.assert_array_equal(g.scores, a.scores)
            np.testing.assert_array_equal(g.class_ids, a.class_ids)


@pytest.mark.parametrize("num_anchors", [3, 2, 1, 4])
def test_yolov5_gate_over_wide_rows_and_other_anchor_counts(num_anchors):
    """The objectness gate runs over blocks of 256 cells of a row: a head 264 cells wide (two
    blocks, the second short) with passing anchors on both sides of the block edge, and 1, 2 or 4
    anchors a cell (the general gate) as well as 3, against the NumPy model of HailoRT's op."""
    rng = np.random.default_rng(7)
    nc, gh, gw, stride = 2, 2, 264, 8
    e = 5 + nc
    x = rng.integers(0, 8, size=(gh, gw, num_anchors * e)) * (255 // 7)
    obj = np.zeros((gh, gw, num_anchors), np.int64)
    for col in (0, 100, 254, 255, 256, 257, 263):
        obj[rng.integers(0, gh), col, rng.integers(0, num_anchors)] = 255
    x[..., 4::e] = obj
    x = x.astype(np.uint8)
    name, zp, scale = "net/conv9", 0.0, 1.0 / 255
    anchors = (ANCHORS[8] + ((40, 50),))[:num_anchors]
    outputs = [hd.OutputInfo(name, x.shape, "uint8", zp=zp, scale=scale)]
    image = (gh * stride, gw * stride)
    cfg = hd.DecoderConfig(outputs, [hd.AnchorHead(name, anchors, stride)], image_size=image, score_threshold=0.2,
                           iou_threshold=0.45, max_per_class=100)
    got = hd.Decoder(cfg)({name: x})
    boxes, scores, classes = yolov5_op({name: x}, {name: (zp, scale)}, {name: anchors}, num_classes=nc, score_th=0.2,
                                       iou_th=0.45, max_per_class=100, image_hw=image)
    assert len(scores) >= 7
    np.testing.assert_array_equal(got.scores, scores)
    np.testing.assert_array_equal(got.class_ids, classes)
    np.testing.assert_array_equal(got.boxes, boxes)
