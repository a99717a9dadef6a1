"""YOLOv5/YOLOv7-seg heads (AnchorHead + DecoderConfig(proto=...)).

hailort preset: decode_to_hailo_nms(format="byte_mask") against a NumPy transliteration of HailoRT
4.23's and 5.x's yolov5_seg op (hailort_seg_op.py, written from the ops' source), whole frames byte for byte:
uint8 and uint16, raw device (NHCW, padded) and host buffers, boxes across the image's edges, the
count at max_bboxes_total and when masks overflow the mask budget, the mask pointers.
ultralytics preset: YOLOv5's segment predict (its NMS, then process_mask at the input size) against
the NumPy references of test_anchor_heads and seg_reference."""

from __future__ import annotations

import struct

import numpy as np
import pytest

import hailo_decode as hd
from hailort_anchor_ops import deq, to_device_nhcw
from hailort_seg_op import yolov5_seg_op
from reference_decoder import greedy_nms
from seg_reference import process_mask_yolov5

ANCHORS = {8: ((10, 13), (16, 30), (33, 23)), 16: ((30, 61), (62, 45), (59, 119)), 32: ((116, 90), (156, 198), (373, 326))}
NAMES = {8: "seg/conv48", 16: "seg/conv55", 32: "seg/conv61"}  # std::map order: conv48 < conv55 < conv61
PROTO = "seg/conv63"


def _case(rng, *, nc=3, dtype="uint8", image=64, obj_rate=0.15, device=(False, False, False), proto_device=False,
          scale_anchors=1.0):
    """Raw logits (the op applies the sigmoid): values spread over about [-4, 4]."""
    top = 255 if dtype == "uint8" else 65535
    np_dtype = np.uint8 if dtype == "uint8" else np.uint16
    zp, scale = (top + 1) / 2, 8.0 / (top + 1)
    tensors, quant, anchors, outputs, raw, heads = {}, {}, {}, [], {}, []
    e = 5 + nc + 32
    for k, stride in enumerate((8, 16, 32)):
        g = image // stride
        name = NAMES[stride]
        x = rng.integers(0, top + 1, size=(g, g, 3 * e))
        # objectness: mostly low, some high (logit > 1.5)
        obj = np.where(rng.random((g, g, 3)) < obj_rate, rng.integers(int(zp + 1.5 / scale), top + 1, (g, g, 3)),
                       rng.integers(0, int(zp - 1.0 / scale), (g, g, 3)))
        x[..., 4::e] = obj
        x = x.astype(np_dtype)
        anc = tuple((max(1, int(w * scale_anchors)), max(1, int(h * scale_anchors))) for w, h in ANCHORS[stride])
        tensors[name], quant[name], anchors[name] = x, (zp, scale), anc
        if device[k]:
            padded = (g, g + 8, 3 * e)
            raw[name] = to_device_nhcw(x, padded)
            outputs.append(hd.OutputInfo(name, x.shape, dtype, "NHCW", zp=zp, scale=scale, padded_shape=padded, device=True))
        else:
            raw[name] = x
            outputs.append(hd.OutputInfo(name, x.shape, dtype, zp=zp, scale=scale))
        heads.append(hd.AnchorHead(name, anc, stride))
    pg = image // 4
    p = rng.integers(0, top + 1, size=(pg, pg, 32)).astype(np_dtype)
    pzp, pscale = zp, 4.0 / (top + 1)
    if proto_device:
        padded = (pg, pg + 8, 32)
        raw[PROTO] = to_device_nhcw(p, padded)
        outputs.append(hd.OutputInfo(PROTO, p.shape, dtype, "NHCW", zp=pzp, scale=pscale, padded_shape=padded, device=True))
    else:
        raw[PROTO] = p
        outputs.append(hd.OutputInfo(PROTO, p.shape, dtype, zp=pzp, scale=pscale))
    return dict(tensors=tensors, quant=quant, anchors=anchors, outputs=outputs, raw=raw, heads=heads, proto=p,
                proto_quant=(pzp, pscale), nc=nc, image=image)


def _frames(c, *, th=0.3, iou=0.5, max_total=100, mask_threshold=0.5, budget=None, version=None, **settings):
    """The frame decode_to_hailo_nms writes and the op's (hailort_seg_op.py) on case c. version:
    the call's hailort_version (None: the config's, 4.23 unless settings name another)."""
    image = c["image"]
    cfg = hd.DecoderConfig(c["outputs"], c["heads"], proto=PROTO, image_size=(image, image), score_threshold=th,
                           iou_threshold=iou, **settings)
    assert cfg.head_kind == "yolov5" and cfg.proto == PROTO and cfg.num_classes == c["nc"]
    dec = hd.Decoder(cfg)
    op_version = version or cfg.hailort_version
    size = hd.formats.byte_mask.byte_mask_frame_size(max_total, 2 * image * image if budget is None else budget,
                                                     hailort_version=op_version)
    out = np.zeros(size, np.uint8)
    got = dec.decode_to_hailo_nms(c["raw"], out, format="byte_mask", max_bboxes_total=max_total,
                                  mask_budget=budget, mask_threshold=mask_threshold, hailort_version=version)
    assert got is out
    want, facts = yolov5_seg_op(c["tensors"], c["quant"], c["anchors"], c["proto"], c["proto_quant"], num_classes=c["nc"],
                                score_th=th, iou_th=iou, max_total=max_total, mask_threshold=mask_threshold,
                                image_hw=(image, image), buffer_size=size, buffer_address=out.ctypes.data,
                                version=op_version)
    return out, want, facts, dec


def _records(frame):
    """The (y_min, x_min, y_max, x_max, score, class) of the records written (the count field may
    say one more: the op's count at its caps)."""
    out, pos = [], 2
    while pos + 38 <= frame.size and len(out) < struct.unpack_from("<H", frame)[0]:
        rec = struct.unpack_from("<5fHQQ", frame, pos)
        if pos + 38 + rec[6] > frame.size or rec[7] != frame.ctypes.data + pos + 38:
            break  # not a record: the count's extra one
        out.append(rec[:6])
        pos += 38 + rec[6]
    return np.array(out, np.float64).reshape(-1, 6)


def _assert_same(got, want):
    if not np.array_equal(got, want):
        diff = np.flatnonzero(got != want)
        raise AssertionError(f"{diff.size} bytes differ, first at {diff[:10].tolist()}: got {got[diff[:10]].tolist()}, "
                             f"want {want[diff[:10]].tolist()}")


@pytest.mark.parametrize("dtype", ["uint8", "uint16"])
@pytest.mark.parametrize("seed", range(3))
def test_byte_mask_frame_is_hailorts_yolov5_seg_op_byte_for_byte(dtype, seed):
    rng = np.random.default_rng(seed)
    c = _case(rng, nc=[1, 3, 5][seed], dtype=dtype, device=[(False,) * 3, (True, False, True), (True,) * 3][seed],
              proto_device=seed == 2)
    got, want, facts, _ = _frames(c, th=[0.3, 0.25, 0.4][seed], iou=[0.5, 0.6, 0.3][seed],
                                  mask_threshold=[0.5, 0.3, 0.62][seed])
    assert facts["records"] >= 3, facts  # the case has detections to compare
    _assert_same(got, want)


def test_boxes_across_every_edge_and_the_inclusive_crop():
    # Large anchors on a small input: most boxes cross the image's edges (the op's clamps, its
    # column past the box reading the next row, its row past the box spilling into the next record).
    rng = np.random.default_rng(7)
    c = _case(rng, nc=2, scale_anchors=2.5, obj_rate=0.2)
    got, want, facts, _ = _frames(c, th=0.3, iou=0.7, max_total=300, budget=2_000_000)
    recs = _records(got)
    assert len(recs) == facts["records"] > 10
    assert (recs[:, 0] < 0).any() and (recs[:, 1] < 0).any() and (recs[:, 2] > 1).any() and (recs[:, 3] > 1).any()
    _assert_same(got, want)


def test_count_at_max_bboxes_total_is_one_more_than_the_records():
    rng = np.random.default_rng(3)
    c = _case(rng, nc=3, obj_rate=0.3)
    got, want, facts, _ = _frames(c, th=0.2, iou=0.8, max_total=4)
    assert facts["kept"] > 4 and facts["records"] == 4 and facts["count"] == 5
    assert struct.unpack_from("<H", got)[0] == 5
    _assert_same(got, want)
    # Read back: the four records, not a fifth of zeros (the op's count quirk), in either layout.
    for version in ("4.23", "5.2"):
        frame, _, _, _ = _frames(c, th=0.2, iou=0.8, max_total=4, version=version)
        boxes, scores, _, _ = hd.formats.byte_mask.read_byte_mask(frame, (64, 64), hailort_version=version)
        assert len(scores) == 4 and (scores > 0).all()


def test_count_when_masks_overflow_the_budget():
    rng = np.random.default_rng(4)
    c = _case(rng, nc=3, obj_rate=0.3)
    got, want, facts, _ = _frames(c, th=0.2, iou=0.8, max_total=50, budget=900)
    assert 0 < facts["records"] < facts["kept"] and facts["count"] == facts["records"] + 1
    _assert_same(got, want)


def test_mask_threshold_compares_in_double_as_the_op():
    # The op compares float values with its double mask_threshold: a threshold a hair below a value
    # that occurs (not a float itself) keeps that pixel; rounded to float first it would not.
    rng = np.random.default_rng(8)
    c = _case(rng, nc=2)
    _, _, facts, _ = _frames(c)
    values = facts["resized"][0]
    recs = _frames(c)[0]
    y0n, x0n = struct.unpack_from("<2f", recs, 2)
    y1n, x1n = struct.unpack_from("<2f", recs, 10)
    y, x = max(0, int(np.ceil(np.float32(y0n) * 64))) + 1, max(0, int(np.ceil(np.float32(x0n) * 64))) + 1
    v = float(values[y, x])
    th = v - abs(v) * 1e-12
    assert np.float32(th) == np.float32(v)  # the same float: only a double comparison keeps the pixel
    got, want, _, _ = _frames(c, mask_threshold=th)
    _assert_same(got, want)
    bw = int(np.ceil(np.float32(np.float32(x1n) - np.float32(x0n)) * 64))
    y0, x0 = max(0, int(np.ceil(np.float32(y0n) * 64))), max(0, int(np.ceil(np.float32(x0n) * 64)))
    assert got[2 + 38 + (y - y0) * bw + (x - x0)] == 1


def test_mask_pointers_point_into_the_returned_buffer():
    rng = np.random.default_rng(5)
    c = _case(rng, nc=2)
    got, want, facts, dec = _frames(c)
    _assert_same(got, want)
    pos, base = 2, got.ctypes.data
    for _ in range(facts["records"]):
        size, ptr = struct.unpack_from("<QQ", got, pos + 22)
        assert ptr == base + pos + 38
        pos += 38 + size
    # A new buffer (out not given): its own address.
    fresh = dec.decode_to_hailo_nms(c["raw"], format="byte_mask", max_bboxes_total=100)
    assert struct.unpack_from("<Q", fresh, 2 + 30)[0] == fresh.ctypes.data + 2 + 38


def test_byte_mask_frame_at_640_with_a_160_prototype():
    rng = np.random.default_rng(11)
    c = _case(rng, nc=2, image=640, obj_rate=0.002, scale_anchors=1.0)
    got, want, facts, _ = _frames(c, th=0.3, iou=0.45, max_total=20)
    assert facts["records"] >= 2
    _assert_same(got, want)


def test_batches_give_each_frame_alone():
    rng = np.random.default_rng(12)
    c1, c2 = _case(rng, nc=2), _case(rng, nc=2)
    cfg = hd.DecoderConfig(c1["outputs"], c1["heads"], proto=PROTO, image_size=(64, 64), score_threshold=0.3)
    dec = hd.Decoder(cfg)
    batch = {k: np.stack([c1["raw"][k], c2["raw"][k]]) for k in c1["raw"]}
    frames = dec.decode_to_hailo_nms(batch, format="byte_mask", max_bboxes_total=30)
    assert frames.shape[0] == 2
    for i, c in enumerate((c1, c2)):
        one = dec.decode_to_hailo_nms(c["raw"], format="byte_mask", max_bboxes_total=30)
        # the mask pointers differ (each buffer's own addresses): compare the rest
        a, b = hd.formats.byte_mask.read_byte_mask(frames[i], (64, 64)), hd.formats.byte_mask.read_byte_mask(one, (64, 64))
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)


def test_detections_under_the_hailort_preset():
    rng = np.random.default_rng(13)
    c = _case(rng, nc=3)
    cfg = hd.DecoderConfig(c["outputs"], c["heads"], proto=PROTO, image_size=(64, 64), score_threshold=0.3,
                           iou_threshold=0.5, max_per_class=None)
    d = hd.Decoder(cfg)(c["raw"])
    frame = hd.Decoder(cfg).decode_to_hailo_nms(c["raw"], format="byte_mask", max_bboxes_total=500,
                                                mask_budget=4_000_000)
    recs = _records(frame)
    assert len(recs) == len(d) > 5 and struct.unpack_from("<H", frame)[0] == len(d)
    # The same detections in the same order as the op's records.
    np.testing.assert_array_equal(d.boxes, recs[:, :4].astype(np.float32))
    np.testing.assert_array_equal(d.scores, recs[:, 4].astype(np.float32))
    np.testing.assert_array_equal(d.class_ids, recs[:, 5].astype(np.int32))
    assert d.masks is not None and d.masks.shape == (len(d), 64, 64)


# -- ultralytics preset: YOLOv5's segment predict ------------------------------------------------

def _yolov5_predict(c, conf, iou, max_det=300, mask_objectness=True):
    """YOLOv5 (segment/predict.py): models/yolo.py Segment -> xy = (2 sigmoid(t) + grid - 0.5) * stride,
    wh = (2 sigmoid(t))^2 * anchor, conf and classes sigmoid, coefficients raw; utils/general.py
    non_max_suppression(nm=32): obj > conf, scores obj * cls, best class > conf, sort by score,
    class-aware NMS suppressing IoU > iou, max_det (x[:, 5:] *= obj: the mask coefficients too); then
    its own process_mask(proto, coefs, boxes, input size, upsample=True) (seg_reference.process_mask_yolov5)."""
    nc, rows = c["nc"], []
    e = 5 + nc + 32
    for stride in (8, 16, 32):
        name = NAMES[stride]
        x = deq(c["tensors"][name], *c["quant"][name])
        s = (np.float32(1) / (np.float32(1) + np.exp(-x))).astype(np.float32)  # torch.sigmoid, float32
        g = x.shape[0]
        for row in range(g):
            for col in range(x.shape[1]):
                for a, (aw, ah) in enumerate(c["anchors"][name]):
                    v, raw_v = s[row, col, a * e:(a + 1) * e], x[row, col, a * e:(a + 1) * e]
                    if not v[4] > np.float32(conf):
                        continue
                    xc = (v[0] * np.float32(2) + (np.float32(col) - np.float32(0.5))) * np.float32(stride)
                    yc = (v[1] * np.float32(2) + (np.float32(row) - np.float32(0.5))) * np.float32(stride)
                    w = (v[2] * np.float32(2)) ** 2 * np.float32(aw)
                    hh = (v[3] * np.float32(2)) ** 2 * np.float32(ah)
                    sc = v[5:5 + nc] * v[4]
                    k = int(np.argmax(sc))
                    if sc[k] > np.float32(conf):
                        rows.append(([xc - w / 2, yc - hh / 2, xc + w / 2, yc + hh / 2], sc[k], k,
                                     raw_v[5 + nc:] * v[4] if mask_objectness else raw_v[5 + nc:]))
    boxes = np.array([r[0] for r in rows], np.float32).reshape(-1, 4)
    scores = np.array([r[1] for r in rows], np.float32)
    classes = np.array([r[2] for r in rows], np.int64)
    coefs = np.array([r[3] for r in rows], np.float32).reshape(-1, 32)
    order = np.argsort(-scores, kind="stable")
    boxes, scores, classes, coefs = boxes[order], scores[order], classes[order], coefs[order]
    keep = greedy_nms(boxes, classes, iou, ">", False)[:max_det]
    proto = deq(c["proto"], *c["proto_quant"])
    masks = process_mask_yolov5(proto, coefs[keep], boxes[keep], (c["image"], c["image"]))
    return boxes[keep], scores[keep], classes[keep], masks


@pytest.mark.parametrize("dtype", ["uint8", "uint16"])
def test_ultralytics_preset_is_yolov5s_segment_predict(dtype):
    rng = np.random.default_rng(21)
    c = _case(rng, nc=3, dtype=dtype, device=(True, False, False))
    cfg = hd.DecoderConfig(c["outputs"], c["heads"], proto=PROTO, image_size=(64, 64), semantics="ultralytics",
                           score_threshold=0.25, iou_threshold=0.45)
    got = hd.Decoder(cfg)(c["raw"])
    boxes, scores, classes, masks = _yolov5_predict(c, 0.25, 0.45)
    assert len(scores) >= 3
    # (PyTorch's sigmoid is not bit-defined: an ulp either way)
    np.testing.assert_allclose(got.scores, scores, rtol=3e-7, atol=0)
    np.testing.assert_array_equal(got.class_ids, classes)
    np.testing.assert_allclose(got.boxes, boxes, rtol=0, atol=1e-4)
    # Masks: YOLOv5's own process_mask, pixel for pixel.
    assert got.masks is not None and got.masks.shape == masks.shape
    assert np.array_equal(got.masks, masks), (got.masks != masks).sum()


def test_mask_objectness_false_takes_the_raw_coefficients():
    """mask_objectness=False (TAPPAS' libyolov5seg_post.so's masks): the same detections, masks from
    the coefficients as the head gives them, not times the objectness; the default multiplies."""
    rng = np.random.default_rng(22)
    c = _case(rng, nc=3, dtype="uint8", device=(True, False, False))
    kw = dict(proto=PROTO, image_size=(64, 64), semantics="ultralytics", score_threshold=0.25, iou_threshold=0.45)
    raw_cfg = hd.DecoderConfig(c["outputs"], c["heads"], mask_objectness=False, **kw)
    got = hd.Decoder(raw_cfg)(c["raw"])
    boxes, scores, classes, masks = _yolov5_predict(c, 0.25, 0.45, mask_objectness=False)
    np.testing.assert_array_equal(got.class_ids, classes)
    np.testing.assert_allclose(got.boxes, boxes, rtol=0, atol=1e-4)
    assert np.array_equal(got.masks, masks), (got.masks != masks).sum()
    default = hd.Decoder(hd.DecoderConfig(c["outputs"], c["heads"], **kw))(c["raw"])
    assert not np.array_equal(default.masks, got.masks)  # the objectness does change them here


@pytest.mark.parametrize("dtype", ["uint8", "uint16", "float32"])
@pytest.mark.parametrize("seed, scale_anchors", [(0, 0.08), (1, 0.3), (2, 1.0), (3, 2.5)])
def test_ultralytics_preset_masks_are_yolov5s_own_process_mask(dtype, seed, scale_anchors):
    """Random YOLOv5-seg heads, from boxes of a pixel or two (small anchors) to boxes across every
    edge of the input (large ones): the masks are YOLOv5 v7.0's process_mask pixel for pixel --
    the coefficients times the objectness, sigmoid, crop at the prototype grid, upsampled, > 0.5,
    pixels just outside the box included."""
    rng = np.random.default_rng(300 + seed)
    c = _case(rng, nc=3, dtype="uint8" if dtype == "float32" else dtype, obj_rate=0.3, scale_anchors=scale_anchors)
    raw, outputs = c["raw"], c["outputs"]
    if dtype == "float32":  # the same values, dequantized, as float32 heads
        raw = {**{n: deq(t, *c["quant"][n]) for n, t in c["tensors"].items()}, PROTO: deq(c["proto"], *c["proto_quant"])}
        outputs = [hd.OutputInfo(o.name, o.shape, "float32") for o in outputs]
    cfg = hd.DecoderConfig(outputs, c["heads"], proto=PROTO, image_size=(64, 64), semantics="ultralytics",
                           score_threshold=0.25, iou_threshold=0.45)
    got = hd.Decoder(cfg)(raw)
    boxes, scores, classes, masks = _yolov5_predict(c, 0.25, 0.45)
    assert len(scores) >= 3
    np.testing.assert_array_equal(got.class_ids, classes)
    np.testing.assert_allclose(got.boxes, boxes, rtol=0, atol=1e-4)
    assert got.masks is not None and got.masks.shape == masks.shape and masks.any()
    assert np.array_equal(got.masks, masks), (got.masks != masks).sum()
    side = np.minimum(boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1])
    if seed == 0:
        assert side.min() < 4  # tiny boxes (a prototype cell or less)
    if seed == 3:
        assert (boxes[:, :2] < 0).any() and (boxes[:, 2:] > 64).any()  # boxes across the edges
    # YOLOv5 crops at the prototype grid only: some mask pixels lie outside their box (measured).
    yy, xx = np.mgrid[:64, :64]
    outside = [(m & ~((xx >= b[0]) & (xx < b[2]) & (yy >= b[1]) & (yy < b[3]))).sum() for m, b in zip(masks, boxes)]
    assert seed == 0 or sum(outside) > 0


# -- configuration ---------------------------------------------------------------------------------

def test_the_prototype_is_the_one_output_no_head_takes():
    c = _case(np.random.default_rng(1))
    cfg = hd.DecoderConfig(c["outputs"], c["heads"], image_size=(64, 64))
    assert cfg.proto == PROTO and cfg.task == "segment" and cfg.num_classes == 3


def test_errors_name_what_configures_a_yolov5_seg_head():
    c = _case(np.random.default_rng(1))
    extra = c["outputs"] + [hd.OutputInfo("other", (4, 4, 7), "uint8", zp=0, scale=1)]
    with pytest.raises(ValueError, match="proto="):
        hd.DecoderConfig(extra, c["heads"], image_size=(64, 64), task="segment")
    short = [o if o.name != NAMES[8] else hd.OutputInfo(o.name, (8, 8, 3 * 37), "uint8", zp=0, scale=1)
             for o in c["outputs"]]
    with pytest.raises(ValueError, match="32 mask coefficients"):
        hd.DecoderConfig(short, c["heads"], proto=PROTO, image_size=(64, 64))
    with pytest.raises(ValueError, match="proto_stride"):
        hd.DecoderConfig(c["outputs"], c["heads"], proto=PROTO, image_size=(64, 64), proto_stride=8)


# -- from the HEF's yolov5_seg op and the Model Zoo's NMS JSON ------------------------------------

def _seg_hef(c, pads, mask_threshold=0.45):
    """A HEF with a yolov5_seg op (ProtoHEFNmsOp field 11: ProtoHEFYoloSegNmsOp image_height 1,
    image_width 2, bbox_decoders 3, proto_info 4 {number 1, stride 2, proto_layer 3}, mask_threshold 5)."""
    import hef_writer as w
    image = c["image"]
    layers = [w.Layer("seg/input_layer1", (image, image, 3), output=False, limvals=(0.0, 255.0))]
    for o in c["outputs"]:
        layers.append(w.Layer(o.name, o.shape, "NHWC", data_bytes=1, zp=float(o.zp), scale=float(o.scale),
                              pad_index=pads[o.name]))
    decs = []
    for stride, name in NAMES.items():
        hs = b"".join(w.enc_varint(a[1]) for a in ANCHORS[stride])
        ws = b"".join(w.enc_varint(a[0]) for a in ANCHORS[stride])
        decs.append(w.msg(3, w.ln(2, hs), w.ln(3, ws), w.uint(4, stride), w.uint(5, pads[name], keep_zero=True)))
    info = w.msg(4, w.uint(1, 32), w.uint(2, 4), w.string(3, PROTO))
    body = w.msg(11, w.f64(1, float(image)), w.f64(2, float(image)), *decs, info, w.f64(5, mask_threshold))
    nms = b"".join([w.f64(1, 0.3), w.f64(2, 0.5), w.uint(3, 40), w.uint(4, c["nc"]), body])
    op = b"".join([w.string(1, "yolov5_seg_nms_postprocess"), w.msg(3, w.pad(1000, "seg/yolov5_seg_nms")), w.msg(5, nms)])
    group = w.network_group("seg", layers) + w.msg(8, op)
    return w.wrap(w.hef_proto([group], extensions=(0, 3, 12, 13, 24)))


def test_from_hef_reads_the_yolov5_seg_op(tmp_path):
    c = _case(np.random.default_rng(31), nc=3)
    pads = {o.name: 10 + k for k, o in enumerate(c["outputs"])}
    p = tmp_path / "yolov5_seg.hef"
    p.write_bytes(_seg_hef(c, pads, mask_threshold=0.45))
    op = hd.read_hef(str(p)).network_groups[0].anchor_op
    assert op is not None and op.kind == "yolov5_seg" and op.proto_layer == PROTO
    assert op.mask_threshold == float(np.float32(0.45))
    cfg = hd.DecoderConfig.from_hef(str(p))
    assert cfg.head_kind == "yolov5" and cfg.proto == PROTO and cfg.num_classes == 3 and cfg.image_size == (64, 64)
    assert (cfg.score_threshold, cfg.iou_threshold, cfg.max_per_class) == (np.float32(0.3), 0.5, 40)
    dec = hd.Decoder(cfg)
    size = hd.formats.byte_mask.byte_mask_frame_size(120, 2 * 64 * 64)
    out = np.zeros(size, np.uint8)
    # defaults from the HEF: mask_threshold, max_bboxes_total = max_proposals_per_class x classes
    dec.decode_to_hailo_nms(c["raw"], out, format="byte_mask")
    want, _ = yolov5_seg_op(c["tensors"], c["quant"], c["anchors"], c["proto"], c["proto_quant"], num_classes=3,
                            score_th=float(np.float32(0.3)), iou_th=0.5, max_total=120,
                            mask_threshold=float(np.float32(0.45)), image_hw=(64, 64), buffer_size=size,
                            buffer_address=out.ctypes.data)
    _assert_same(out, want)


def test_from_nms_json_of_the_model_zoos_yolov5_seg():
    c = _case(np.random.default_rng(32), nc=3)
    doc = {"nms_scores_th": 0.2, "nms_iou_th": 0.6, "image_dims": [64, 64], "max_proposals_per_class": 100,
           "classes": 3, "background_removal": False, "background_removal_index": 0, "max_total_proposals": 100,
           "bbox_decoders": [{"name": f"bbox_decoder_{s}", "w": [a[0] for a in ANCHORS[s]], "h": [a[1] for a in ANCHORS[s]],
                              "stride": s, "encoded_layer": NAMES[s].split("/")[-1]} for s in (8, 16, 32)],
           "proto": [{"number": 32, "stride": 4}]}
    cfg = hd.DecoderConfig.from_nms_json(doc, c["outputs"])
    assert cfg.head_kind == "yolov5" and cfg.proto == PROTO and cfg.task == "segment" and cfg.num_classes == 3
    d = hd.Decoder(cfg)(c["raw"])
    assert d.masks is not None and len(d) > 0
    with pytest.raises(ValueError, match="proto"):
        hd.DecoderConfig.from_nms_json(dict(doc, proto=[{"number": 32}]), c["outputs"])


@pytest.mark.parametrize("version", ["4.23.0", "4.20"])
def test_any_hailort_4_version_is_the_ops_frame(version):
    """hailort_version names HailoRT 4.x in any spelling: still the yolov5_seg op's frame (it fell
    to the generic byte-mask writer for anything but the exact text "4.23")."""
    rng = np.random.default_rng(5)
    c = _case(rng, nc=2)
    _, want, facts, dec = _frames(c)
    assert facts["records"] >= 1
    got = dec.decode_to_hailo_nms(c["raw"], format="byte_mask", max_bboxes_total=100, hailort_version=version)
    ref = dec.decode_to_hailo_nms(c["raw"], format="byte_mask", max_bboxes_total=100, hailort_version="4.23")
    a, b = hd.formats.byte_mask.read_byte_mask(got, (64, 64)), hd.formats.byte_mask.read_byte_mask(ref, (64, 64))
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
    assert struct.unpack_from("<Q", got, 2 + 30)[0] == got.ctypes.data + 2 + 38  # the op's pointer, into `got`


@pytest.mark.parametrize("dtype", ["uint8", "uint16"])
@pytest.mark.parametrize("version", ["5.2", "5.2.0", "5.1", "5.0.1"])
def test_hailort_5_yolov5_seg_frame_is_that_ops_byte_for_byte(version, dtype):
    """HailoRT 5.x's yolov5_seg op (v5.2.0's source, its opt-in crop and nearest-resize variants
    off): 5.x's YOLOv5 candidates (row, anchor, column; quantized pre-filters), 4.23's masks, and
    from 5.2.0 46-byte records whose mask_offset is the mask's offset in the frame. Asked by the
    call's hailort_version of a 4.23 config, and by the config's own."""
    rng = np.random.default_rng(11)
    c = _case(rng, nc=2, dtype=dtype, device=(True, False, True), obj_rate=0.3)
    got, want, facts, _ = _frames(c, th=0.3, iou=0.45, max_total=60, budget=500_000, version=version)
    assert facts["records"] >= 5, facts
    _assert_same(got, want)
    own, want_own, _, _ = _frames(c, th=0.3, iou=0.45, max_total=60, budget=500_000, hailort_version=version)
    _assert_same(own, want_own)
    record = 46 if version.startswith("5.2") else 38
    assert struct.unpack_from("<Q", got, 2 + 30)[0] == got.ctypes.data + 2 + record  # the pointer, into `got`
    if record == 46:
        assert struct.unpack_from("<Q", got, 2 + 38)[0] == 2 + 46  # mask_offset, from the frame's start
    read = hd.formats.byte_mask.read_byte_mask(got, (64, 64), hailort_version=version)
    assert len(read[0]) == facts["records"]


def test_hailort_5_and_4_frames_differ_where_the_ops_do():
    """Scores tie often on uint8 heads (equal quantized values); 5.x's op lists its candidates in
    another order than 4.23's, so std::sort leaves the tied ones in another order: the frames of
    the two versions differ, and each equals its own op."""
    rng = np.random.default_rng(3)
    c = _case(rng, nc=1, obj_rate=0.5)
    old, want_old, facts, _ = _frames(c, th=0.2, iou=0.9, max_total=200, budget=400_000, version="4.23")
    new, want_new, _, _ = _frames(c, th=0.2, iou=0.9, max_total=200, budget=400_000, version="5.1")
    _assert_same(old, want_old)
    _assert_same(new, want_new)
    assert facts["records"] > 20
    assert not np.array_equal(old, new)


def test_hailort_52_records_need_the_5x_ops_decoder():
    """The writer refuses 5.2's records from a decoder of 4.x's ops (their candidates differ)."""
    rng = np.random.default_rng(5)
    c = _case(rng, nc=2)
    cfg = hd.DecoderConfig(c["outputs"], c["heads"], proto=PROTO, image_size=(64, 64), score_threshold=0.3,
                           max_per_class=None, max_total=None, box_format="yxyx_normalized")
    dec = hd.Decoder(cfg)
    arrays, _ = dec._arrays(c["raw"])
    rows = np.zeros((1, 100_000), np.uint8)
    with pytest.raises(ValueError, match="HailoRT 5.x's ops"):
        dec._core.hailort_seg_frames(arrays, 1, 10, 0.5, rows, layout=1)
