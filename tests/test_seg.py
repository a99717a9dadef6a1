"""Instance segmentation (YOLOv8/YOLO11 -seg heads): configuration, masks against the NumPy
reference (tests/seg_reference.py), every SIMD path, ownership, edge cases, the byte-mask form."""

from __future__ import annotations

import re
import struct

import numpy as np
import pytest

import hailo_decode as hd
from hailo_decode.detections import MaskLogits
from hailo_decode.formats import byte_mask

from seg_reference import iou, make_seg_case, process_mask, process_mask_native, quantize_case

OBJECTS = [(8, 10, 12, 0), (8, 30, 5, 1), (16, 4, 15, 2), (32, 7, 2, 3), (8, 39, 39, 0), (16, 0, 0, 1)]


def _decode(case, **kw):
    cfg = hd.DecoderConfig(case["infos"], **kw)
    dets = hd.Decoder(cfg).decode(case["outputs"])
    return cfg, dets


def _coefs_of(case, dets, cfg):
    """Each detection's coefficients, from its class (one passing cell per class in OBJECTS-like
    cases) via the object list: the reference needs no help from the decoder."""
    src = case.get("dequantized", case["outputs"])
    out = []
    for k in dets.class_ids:
        matches = [o for o in case["objects"] if o[3] == k]
        assert len(matches) >= 1
        s, r, c, _ = matches[0]
        out.append(src[f"seg/mask{s}"][r, c])
    return np.array(out, np.float32).reshape(-1, 32)


def _proto(case):
    return case.get("dequantized", case["outputs"])["seg/proto"]


def _unique_class_objects():
    return [(8, 10, 12, 0), (16, 4, 15, 1), (32, 7, 2, 2), (8, 39, 39, 3)]


# -- configuration --------------------------------------------------------------------------------
def test_config_finds_proto_and_pairs_heads():
    case = make_seg_case(np.random.default_rng(0), _unique_class_objects())
    cfg = hd.DecoderConfig(case["infos"])
    assert cfg.proto == "seg/proto" and cfg.task == "segment"
    assert [(h.box, h.cls, h.mask, h.stride) for h in cfg.heads] == [
        (f"seg/box{s}", f"seg/cls{s}", f"seg/mask{s}", s) for s in (8, 16, 32)]
    assert cfg.image_size == (320, 320)
    assert cfg.drop_empty_masks is False
    assert hd.DecoderConfig(case["infos"], semantics="ultralytics").drop_empty_masks is True
    assert cfg.replace(score_threshold=0.3).proto == "seg/proto"


def test_config_errors_name_the_output():
    case = make_seg_case(np.random.default_rng(0), _unique_class_objects())
    infos = case["infos"]
    bad_c = [hd.OutputInfo(o.name, o.shape[:2] + (16,), "float32") if o.name == "seg/mask16" else o for o in infos]
    heads = [hd.Head(f"seg/box{s}", f"seg/cls{s}", s, f"seg/mask{s}") for s in (8, 16, 32)]
    with pytest.raises(ValueError, match=r"'seg/mask16': 16 mask coefficients, but the prototype output 'seg/proto' has 32"):
        hd.DecoderConfig(bad_c, heads, proto="seg/proto")
    bad_grid = [hd.OutputInfo(o.name, (40, 40, 32), "float32") if o.name == "seg/proto" else o for o in infos]
    with pytest.raises(ValueError, match=r"'seg/proto': prototype grid \(40, 40\) is not image_size / 4 = \(80, 80\)"):
        hd.DecoderConfig(bad_grid, heads, proto="seg/proto")
    assert hd.DecoderConfig(bad_grid, heads, proto="seg/proto", proto_stride=None).proto == "seg/proto"
    with pytest.raises(ValueError, match="needs the prototype output"):
        hd.DecoderConfig(infos[:-1], heads)
    with pytest.raises(ValueError, match="every head needs its mask coefficient output"):
        hd.DecoderConfig(infos, [hd.Head("seg/box8", "seg/cls8", 8, "seg/mask8"), hd.Head("seg/box16", "seg/cls16", 16),
                                 hd.Head("seg/box32", "seg/cls32", 32, "seg/mask32")], proto="seg/proto")
    with pytest.raises(ValueError, match="proto output 'nope'"):
        hd.DecoderConfig(infos, heads, proto="nope")
    # nc == 32: the class output cannot be told from the coefficients by shape.
    amb = [hd.OutputInfo(o.name, o.shape[:2] + (32,), "float32") if "cls" in o.name else o for o in infos]
    with pytest.raises(ValueError, match="cannot tell the mask coefficient output"):
        hd.DecoderConfig(amb)


# -- masks against the reference -------------------------------------------------------------------
def test_masks_exact_on_integer_valued_outputs():
    """Integer prototypes and coefficients: every logit exact, so the masks must equal the
    reference pixel for pixel, at the input size and at the prototype grid, on every SIMD path."""
    case = make_seg_case(np.random.default_rng(1), _unique_class_objects(), integer_valued=True)
    for simd in hd.simd_info()["available"]:
        hd._core.select_simd(simd)
        try:
            cfg, dets = _decode(case, semantics="ultralytics")
            assert len(dets) == 4
            coefs = _coefs_of(case, dets, cfg)
            boxes = dets.boxes_as("xyxy_pixels")
            ref = process_mask(_proto(case), coefs, boxes, (320, 320), upsample=True)
            assert dets.masks.shape == (4, 320, 320) and dets.masks.dtype == np.bool_
            assert np.array_equal(dets.masks, ref), simd
            ref_p = process_mask(_proto(case), coefs, boxes, (320, 320), upsample=False)
            assert np.array_equal(dets.masks_at_proto(), ref_p), simd
            assert all(m.any() for m in dets.masks)
        finally:
            hd._core.select_simd(hd.simd_info()["available"][-1])


@pytest.mark.parametrize("semantics", ["ultralytics", "hailort"])
def test_masks_float_and_uint8_against_reference(semantics):
    rng = np.random.default_rng(2)
    case = make_seg_case(rng, _unique_class_objects())
    for c in (case, quantize_case(case)):
        kw = dict(semantics=semantics)
        if semantics == "hailort":
            kw["class_activation"] = "sigmoid"
        cfg, dets = _decode(c, **kw)
        assert len(dets) == 4
        coefs = _coefs_of(c, dets, cfg)
        ref = process_mask(_proto(c), coefs, dets.boxes_as("xyxy_pixels"), (320, 320), upsample=True)
        for got, want in zip(dets.masks, ref):
            # Summation order differs (float32 tree vs float64): only logits within rounding of 0 may flip.
            assert iou(got, want) >= 0.999 and np.sum(got != want) <= 8


def test_uint8_masks_follow_float_masks():
    """A HEF's uint8 outputs give the same objects with nearly the same masks as the float heads
    (the issue's bar for quantized outputs: IoU >= 0.97)."""
    case = make_seg_case(np.random.default_rng(3), _unique_class_objects())
    _, fd = _decode(case, semantics="ultralytics")
    _, qd = _decode(quantize_case(case), semantics="ultralytics")
    assert np.array_equal(fd.class_ids, qd.class_ids)
    for a, b in zip(fd.masks, qd.masks):
        assert iou(a, b) >= 0.97


def test_decode_owns_its_masks():
    """Masks are rendered after decode (lazily) from logits the Detections owns: overwriting the
    caller's buffers (HailoRT reuses them) after decode changes nothing."""
    case = quantize_case(make_seg_case(np.random.default_rng(4), _unique_class_objects()))
    dec = hd.Decoder(hd.DecoderConfig(case["infos"], semantics="ultralytics"))
    first = dec.decode(case["outputs"])
    reference = dec.decode({k: v.copy() for k, v in case["outputs"].items()}).masks.copy()
    for a in case["outputs"].values():
        a[...] = 0
    dec.decode(case["outputs"])  # the decoder's own lists are reused by the next frame too
    assert np.array_equal(first.masks, reference)
    assert first.masks_at_proto().shape == (4, 80, 80)


def test_ultralytics_drops_empty_masks_hailort_keeps_them():
    objs = _unique_class_objects()
    case = make_seg_case(np.random.default_rng(5), objs, empty=(1,))
    _, u = _decode(case, semantics="ultralytics")
    _, h = _decode(case, semantics="hailort", class_activation="sigmoid", score_threshold=0.25)
    assert sorted(u.class_ids.tolist()) == [0, 2, 3]
    assert sorted(h.class_ids.tolist()) == [0, 1, 2, 3]
    k = int(np.flatnonzero(h.class_ids == 1)[0])
    assert not h.masks[k].any()
    _, kept = _decode(case, semantics="ultralytics", drop_empty_masks=False)
    assert len(kept) == 4


def test_no_detections_and_border_and_tiny_boxes():
    case = make_seg_case(np.random.default_rng(6), [])
    _, d = _decode(case, semantics="ultralytics")
    assert len(d) == 0 and d.masks.shape == (0, 320, 320) and d.masks_at_proto().shape == (0, 80, 80)
    # Boxes over the image border (corner cells, 3 bins a side) and boxes narrower than one
    # prototype cell (4 input pixels): DFL expectation 0.1 bin a side at strides 8 and 16.
    objs = [(8, 0, 0, 0), (8, 39, 39, 1), (8, 20, 20, 2), (16, 5, 5, 3)]
    case = make_seg_case(np.random.default_rng(7), objs)
    for s_, r, c, k in objs:
        box = np.full(64, -20.0, np.float32)
        if k < 2:
            box[3::16] = 10.0
        else:
            box[0::16] = 10.0
            box[1::16] = 10.0 + np.float32(np.log(0.1 / 0.9))  # p1 = 0.1
        case["outputs"][f"seg/box{s_}"][r, c] = box
    cfg, d = _decode(case, semantics="hailort", class_activation="sigmoid", score_threshold=0.25)
    assert len(d) == 4
    coefs = _coefs_of(case, d, cfg)
    b = d.boxes_as("xyxy_pixels")
    ref = process_mask(_proto(case), coefs, b, (320, 320), upsample=True)
    for got, want in zip(d.masks, ref):
        assert iou(got, want) >= 0.999 and np.sum(got != want) <= 4
    big = d.class_ids < 2
    assert b[big].min() < 0 and b[big].max() > 320
    assert ((b[~big, 2] - b[~big, 0]) < 4).all()
    ref_p = process_mask(_proto(case), coefs, b, (320, 320), upsample=False)
    assert np.array_equal(d.masks_at_proto(), ref_p) or all(
        np.sum(x != y) <= 2 for x, y in zip(d.masks_at_proto(), ref_p))


def test_300_detections():
    """Ultralytics' max_det: 320 passing cells, 300 kept, every one with its mask."""
    rng = np.random.default_rng(8)
    objs = [(8, r, c, 0) for r in range(0, 40, 2) for c in range(0, 40, 2)][:320]
    case = make_seg_case(rng, objs, nc=1)
    logit = {}
    for i, (_, r, c, _) in enumerate(objs):  # distinct scores, to find each detection's cell again
        logit[(r, c)] = np.float32(0.2 + 0.01 * i)
        case["outputs"]["seg/cls8"][r, c, 0] = logit[(r, c)]
    cfg, d = _decode(case, semantics="ultralytics", iou_threshold=1.0, drop_empty_masks=False)
    assert len(d) == 300
    m = d.masks
    assert m.shape == (300, 320, 320)
    cells = list(logit)
    sig = 1 / (1 + np.exp(-np.array([logit[k] for k in cells], np.float64)))
    b = d.boxes_as("xyxy_pixels")
    for i in range(0, 300, 23):
        r, c = cells[int(np.argmin(np.abs(sig - d.scores[i])))]
        coef = case["outputs"]["seg/mask8"][r, c][None]
        ref = process_mask(_proto(case), coef, b[i:i + 1], (320, 320), upsample=True)[0]
        assert iou(m[i], ref) >= 0.999


def test_to_original_masks():
    """Masks at the original image size are Ultralytics' retina masks (process_mask_native; see
    tests/test_seg_retina.py for Ultralytics' own): here 240 x 320 letterboxed into 320 x 320, so
    the 80 x 80 prototype grid's letterbox content, rows 10..70, is resized to 240 x 320."""
    case = make_seg_case(np.random.default_rng(9), _unique_class_objects())
    cfg, d = _decode(case, semantics="ultralytics")
    orig = (240, 320)
    o = d.to_original(orig)
    # One of the four lies wholly in the padding (input rows 0..40 or 280..320): no area left in
    # the original, dropped with its mask (issue 33).
    y = d.boxes_as("xyxy_pixels")[:, [1, 3]]
    keep = np.flatnonzero((y[:, 1] > 40) & (y[:, 0] < 280))
    assert len(keep) == 3 and o.masks.shape == (3, 240, 320)
    np.testing.assert_array_equal(o.scores, d.scores[keep])
    want = process_mask_native(_proto(case), _coefs_of(case, d, cfg)[keep], o.boxes, orig)
    for a, b in zip(o.masks, want):
        assert iou(a, b) >= 0.999 and np.sum(a != b) <= 8  # float32 sums against float64: rounding near 0


def test_masks_into_a_reused_buffer():
    """out=: every element written (a buffer holding the last frame's masks, or garbage, ends up
    with exactly this frame's), for the prototype grid, the input size and after to_original, on
    every SIMD path; wrong buffers refused by name."""
    case = quantize_case(make_seg_case(np.random.default_rng(4), _unique_class_objects()))
    cfg, d = _decode(case, semantics="ultralytics", drop_empty_masks=False)
    coefs = _coefs_of(case, d, cfg)
    boxes = d.boxes_as("xyxy_pixels")
    ref_p = process_mask(_proto(case), coefs, boxes, (320, 320), upsample=False)
    ref_i = process_mask(_proto(case), coefs, boxes, (320, 320), upsample=True)
    for simd in hd.simd_info()["available"]:
        hd._core.select_simd(simd)
        try:
            buf = np.ones((len(d), 80, 80), np.bool_)
            assert d.masks_at_proto(out=buf) is buf
            assert np.array_equal(buf, d.masks_at_proto())
            assert min(iou(a, b) for a, b in zip(buf, ref_p)) >= 0.999
            big = np.full((len(d), 320, 320), 7, np.uint8)
            d.render_masks(out=big)
            assert set(np.unique(big)) <= {0, 1}
            assert np.array_equal(big.astype(bool), d.masks)
            assert min(iou(a, b) for a, b in zip(big.astype(bool), ref_i)) >= 0.999
            o = d.to_original((240, 320))
            ob = np.ones((len(d), 240, 320), np.bool_)
            assert np.array_equal(o.render_masks(out=ob), o.masks)
        finally:
            hd._core.select_simd(hd.simd_info()["available"][-1])
    with pytest.raises(ValueError, match="shape"):
        d.masks_at_proto(out=np.zeros((len(d), 80, 81), np.bool_))
    with pytest.raises(TypeError, match="C-contiguous bool or uint8"):
        d.masks_at_proto(out=np.zeros((len(d), 80, 80), np.float32))
    with pytest.raises(TypeError, match="C-contiguous"):
        d.masks_at_proto(out=np.zeros((len(d), 80, 160), np.bool_)[:, :, ::2])
    with pytest.raises(TypeError, match="got list"):  # not converted to a temporary array
        d.masks_at_proto(out=np.zeros((len(d), 80, 80), np.bool_).tolist())
    read_only = np.zeros((len(d), 80, 80), np.bool_)
    read_only.flags.writeable = False
    with pytest.raises(TypeError, match="writeable"):
        d.masks_at_proto(out=read_only)
    assert not read_only.any()


def test_render_crop_scale_is_float32_crops_times_the_ratios():
    """render_masks(crop_scale=(sx, sy)) crops with x1 y1 x2 y2 times (sx, sy) rounded to float32
    and multiplied in float32, as NumPy does with a float32 ratio array (masks_at_proto's crop):
    equal masks for ratios that are not exact in float32, crop edges falling between cells."""
    case = quantize_case(make_seg_case(np.random.default_rng(4), _unique_class_objects()))
    cfg, d = _decode(case, semantics="ultralytics", drop_empty_masks=False)
    ml = d._mask_logits
    samp = hd._core.mask_sampling_proto(ml.grid)
    rng = np.random.default_rng(9)
    for sx, sy in [(0.25, 0.25), (1 / 3, 0.3), (0.2499999, 0.7)]:
        crops = (d.boxes_as("xyxy_pixels") + rng.uniform(-3, 3, (len(d), 4))).astype(np.float32)
        want = hd._core.render_masks(ml.logits, ml.windows, ml.offsets,
                                     crops * np.array([sx, sy, sx, sy], dtype=np.float32), ml.grid, samp)
        have = hd._core.render_masks(ml.logits, ml.windows, ml.offsets, crops, ml.grid, samp, None, (sx, sy))
        assert want.any() and np.array_equal(have, want), (sx, sy)
        into = np.full_like(want, 7)
        hd._core.render_masks(ml.logits, ml.windows, ml.offsets, crops, ml.grid, samp, into, (sx, sy))
        assert np.array_equal(into, want), (sx, sy)


def test_proto_masks_from_sign_bytes():
    """masks_at_proto copies the decoder's sign bytes (render_proto_masks): the bytes render_masks
    gives from the logits with the prototype sampling (crops times (pw / iw, ph / ih) in float32),
    the signs equal logits > 0, a MaskLogits made without signs computes them; bad arguments are
    refused with a clear error."""
    case = quantize_case(make_seg_case(np.random.default_rng(4), _unique_class_objects()))
    cfg, d = _decode(case, semantics="ultralytics", drop_empty_masks=False)
    ml = d._mask_logits
    assert ml.signs.dtype == np.uint8 and np.array_equal(ml.signs, (ml.logits > 0).astype(np.uint8))
    ph, pw, ih, iw = ml.grid
    boxes = d.boxes_as("xyxy_pixels")
    want = hd._core.render_masks(ml.logits, ml.windows, ml.offsets, boxes, ml.grid, hd._core.mask_sampling_proto(ml.grid),
                                 None, (pw / iw, ph / ih)).view(np.bool_)
    assert want.any() and np.array_equal(d.masks_at_proto(), want)
    rebuilt = MaskLogits(ml.windows, ml.offsets, ml.logits, ml.grid)  # signs computed from the logits
    assert np.array_equal(rebuilt.signs, ml.signs)
    got = hd._core.render_proto_masks(rebuilt.signs, ml.windows, ml.offsets, boxes, ml.grid, np.full(want.shape, 7, np.uint8))
    assert np.array_equal(got, want)
    with pytest.raises(ValueError, match="outside the prototype grid or the logits"):
        hd._core.render_proto_masks(ml.signs[:10], ml.windows, ml.offsets, boxes, ml.grid)
    with pytest.raises(ValueError, match="boxes must be"):
        hd._core.render_proto_masks(ml.signs, ml.windows, ml.offsets, boxes[:-1], ml.grid)
    with pytest.raises(ValueError, match="signs must be 1-D"):
        hd._core.render_proto_masks(ml.signs.reshape(1, -1), ml.windows, ml.offsets, boxes, ml.grid)


# -- HAILO_NMS_WITH_BYTE_MASK ------------------------------------------------------------------
def _independent_buffer(dets, image_size):
    """A buffer built from hailort.h's description alone (struct.pack, no project code)."""
    H, W = image_size
    parts = [struct.pack("<H", len(dets))]
    for box, score, cls, mask in dets:
        y0, x0, y1, x1 = (np.float32(v) for v in box)
        w = int(np.ceil(np.float32(x1 - x0) * np.float32(W)))
        h = int(np.ceil(np.float32(y1 - y0) * np.float32(H)))
        parts.append(struct.pack("<fffffHQQ", y0, x0, y1, x1, score, cls, w * h, 0))
        parts.append(mask.astype(np.uint8).reshape(h, w).tobytes())
    return np.frombuffer(b"".join(parts), np.uint8)


def test_byte_mask_reads_an_independent_buffer():
    H, W = 40, 60
    rng = np.random.default_rng(10)
    # Box 1: x 0.25..0.5 (15..30 -> 15 columns), y 0.1..0.35 (4..14 -> ceil(0.25 * 40) = 10 rows).
    m1 = rng.integers(0, 2, (10, 15))
    m2 = rng.integers(0, 2, (int(np.ceil(np.float32(0.5) * 40)), int(np.ceil(np.float32(np.float32(1.1) - np.float32(0.8)) * 60))))
    buf = _independent_buffer([((0.1, 0.25, 0.35, 0.5), 0.9, 7, m1), ((0.6, 0.8, 1.1, 1.1), 0.5, 2, m2)], (H, W))
    d = hd.decode_hailo_nms(buf, format="byte_mask", image_size=(H, W))
    assert len(d) == 2 and d.class_ids.tolist() == [7, 2]
    assert np.allclose(d.scores, [0.9, 0.5])
    want = np.zeros((H, W), bool)
    want[4:14, 15:30] = m1 != 0
    assert np.array_equal(d.masks[0], want)
    # Box 2 reaches past the image: the part inside lands at (ceil(0.6 * 40), ceil(0.8 * 60)).
    y0, x0 = int(np.ceil(np.float32(0.6) * 40)), int(np.ceil(np.float32(0.8) * 60))
    want2 = np.zeros((H, W), bool)
    want2[y0:, x0:] = (m2 != 0)[:H - y0, :W - x0]
    assert np.array_equal(d.masks[1], want2)
    with pytest.raises(ValueError, match="runs past the end"):
        hd.decode_hailo_nms(buf[:-3], format="byte_mask", image_size=(H, W))
    with pytest.raises(ValueError, match="mask_size"):
        hd.decode_hailo_nms(buf, format="byte_mask", image_size=(H + 20, W))
    with pytest.raises(ValueError, match="image_size"):
        hd.decode_hailo_nms(buf, format="byte_mask")


def test_byte_mask_round_trip_and_sizes():
    case = make_seg_case(np.random.default_rng(11), _unique_class_objects())
    _, d = _decode(case, semantics="hailort", class_activation="sigmoid", score_threshold=0.25)
    buf = d.to_hailo_byte_mask()
    assert buf.size == byte_mask.byte_mask_frame_size(len(d), 2 * 320 * 320)
    back = hd.decode_hailo_nms(buf, format="byte_mask", image_size=(320, 320))
    assert np.array_equal(back.boxes, d.boxes) and np.array_equal(back.class_ids, d.class_ids)
    # The byte masks are the masks inside HailoRT's crop of each box (which holds the box's pixels).
    for i in range(len(d)):
        x0, y0, w, h = byte_mask.mask_crop(d.boxes[i], (320, 320))
        inside = np.zeros((320, 320), bool)
        inside[y0:y0 + h, x0:x0 + w] = True
        assert np.array_equal(back.masks[i], d.masks[i] & inside)
        assert iou(back.masks[i], d.masks[i]) >= 0.99
    # The same bytes from masks alone (no logits), e.g. after decode_hailo_nms.
    again = back.to_hailo_byte_mask()
    assert np.array_equal(again, buf)
    # A buffer too small for every detection: HailoRT's rule keeps the first that fit.
    small = np.zeros(2 + 38 + 10, np.uint8)
    d.to_hailo_byte_mask(out=small)
    assert small[:2].view("<u2")[0] < len(d)


def test_byte_mask_from_logits_crops_with_the_decoded_pixel_box():
    """FUZZING.md run 14: a box decoded in pixels whose left edge lies one float32 ulp past a
    column (52.000004) comes back from its normalized form (52.000004 / 96 * 96) as 52.0 exactly.
    The masks leave column 52 out (Ultralytics keeps x when x1 <= x); the byte mask written from
    the logits must hold those masks, not a mask re-cropped with the rounded box."""
    H = W = 96
    x1 = np.nextafter(np.float32(52), np.float32(100))
    assert np.float32(x1 / np.float32(W)) * np.float32(W) == 52.0  # the premise of the case
    # One box inside the image and one reaching past it (as in the fuzz case), every logit positive.
    boxes = np.array([[x1, 60, 90, 80], [x1, 60, 196, 132.00134]], np.float32)
    grid = (24, 24, H, W)
    windows = np.array([[0, 0, 24, 24]] * 2, np.int32)
    offsets = np.array([0, 0], np.int64)
    logits = np.ones(24 * 24, np.float32)
    meta = dict(box_format="xyxy_pixels", image_size=(H, W), num_classes=1, max_per_class=None)
    d = hd.Detections._trusted(boxes, np.array([0.9, 0.8], np.float32), np.zeros(2, np.int32), meta=meta,
                               mask_logits=MaskLogits(windows, offsets, logits, grid))
    # The reference: pixel (y, x) is in when x1 <= x < x2 and y1 <= y < y2 (a positive logit everywhere).
    ys, xs = np.mgrid[0:H, 0:W].astype(np.float32)
    want = np.stack([(xs >= b[0]) & (xs < b[2]) & (ys >= b[1]) & (ys < b[3]) for b in boxes])
    assert not want[:, :, 52].any() and want[:, 60, 53].all()
    assert np.array_equal(d.masks, want)
    buf = d.to_hailo_byte_mask()
    back = hd.decode_hailo_nms(buf, format="byte_mask", image_size=(H, W))
    assert len(back) == 2
    # HailoRT's crops start at column ceil(0.5416667 * 96) = 52 and reach the image's edge: every
    # mask pixel is inside them, so the masks come back whole and column 52 stays empty.
    assert [byte_mask.mask_crop(b, (H, W))[0] for b in back.boxes] == [52, 52]
    assert np.array_equal(back.masks, want)
    # The same bytes as written from the masks themselves.
    from_masks, _ = byte_mask.write_byte_mask(d.boxes_as("yxyx_normalized"), d.scores, d.class_ids, want)
    assert np.array_equal(buf, from_masks)


def test_byte_mask_batch_and_bad_format():
    case = make_seg_case(np.random.default_rng(12), _unique_class_objects())
    _, d = _decode(case, semantics="ultralytics")
    buf = d.to_hailo_byte_mask(max_total=5, mask_budget=16 * 320 * 320)  # these boxes are large
    frames = hd.decode_hailo_nms(np.stack([buf, buf]), format="byte_mask", image_size=(320, 320))
    assert isinstance(frames, list) and len(frames) == 2 and len(frames[1]) == len(d)
    with pytest.raises(ValueError, match="format must be"):
        hd.decode_hailo_nms(buf, format="nope")


# -- from a HEF, inspect -----------------------------------------------------------------------------
def _seg_hef(classes=80):
    import hef_writer as w
    layers = [w.Layer("yolov8n_seg/input_layer1", (640, 640, 3), "NHWC", output=False, limvals=(0.0, 255.0))]
    pad = 10
    for s in (8, 16, 32):
        g = 640 // s
        for kind, c, zp, scale in (("box", 64, 90.0, 0.08), ("cls", classes, 200.0, 0.06), ("mask", 32, 120.0, 0.03)):
            layers.append(w.Layer(f"yolov8n_seg/{kind}{s}", (g, g, c), "FCR", zp=zp, scale=scale, pad_index=pad))
            pad += 1
    layers.append(w.Layer("yolov8n_seg/proto", (160, 160, 32), "NHCW", padded=(160, 160, 32), zp=30.0, scale=0.02,
                          pad_index=pad))
    ng = w.network_group("yolov8n_seg", layers, sorted_outputs=[layer.name for layer in layers if layer.output])
    return w.wrap(w.hef_proto([ng], extensions=[0, 3, 12, 13, 27]), 1)


def test_from_hef_finds_the_prototype_and_pairs_coefficients(tmp_path):
    path = tmp_path / "yolov8n_seg.hef"
    path.write_bytes(_seg_hef())
    cfg = hd.DecoderConfig.from_hef(str(path), semantics="ultralytics")
    assert cfg.task == "segment" and cfg.proto == "yolov8n_seg/proto" and cfg.image_size == (640, 640)
    assert [(h.box, h.cls, h.mask, h.stride) for h in cfg.heads] == [
        (f"yolov8n_seg/box{s}", f"yolov8n_seg/cls{s}", f"yolov8n_seg/mask{s}", s) for s in (8, 16, 32)]
    assert cfg.class_activation == "sigmoid"  # class outputs quantized over logits
    # Given heads (with their mask outputs) and the prototype: the same outputs are kept.
    heads = [hd.Head(h.box, h.cls, h.stride, h.mask) for h in cfg.heads]
    again = hd.DecoderConfig.from_hef(str(path), heads=heads, proto="yolov8n_seg/proto")
    assert again.proto == cfg.proto and len(again.outputs) == 10
    # A decode of zeros: no detections, well-formed masks.
    dec = hd.Decoder(cfg)
    raw = {o.name: np.zeros(o.shape, np.uint8) for o in cfg.outputs}
    d = dec(raw)
    assert len(d) == 0 and d.masks.shape == (0, 640, 640)
    from hailo_decode.cli.inspect import format_report, inspect_report
    text = format_report(inspect_report(hd.read_hef(str(path))))
    assert "task segment" in text and "prototypes yolov8n_seg/proto" in text and "mask coefficients yolov8n_seg/mask8" in text


def test_from_hef_unpairable_seg_outputs_say_so(tmp_path):
    path = tmp_path / "seg80x32.hef"
    path.write_bytes(_seg_hef(classes=32))  # 32 classes: class and coefficient outputs look alike
    with pytest.raises(ValueError, match="cannot tell the mask coefficient output"):
        hd.DecoderConfig.from_hef(str(path))


# -- demo ------------------------------------------------------------------------------------------
def test_demo_task_seg(capsys):
    """The demo's frames (a yolo11n-seg trained on synthetic shapes, 320 x 320): from the uint8
    heads, per frame as many objects as Ultralytics found on the float heads (stored beside them),
    each mask printed with its IoU against Ultralytics' mask of that object."""
    from hailo_decode.cli import main
    data = hd.demo_data.load_seg_demo_frames()
    assert main(["demo", "--task", "seg", "--semantics", "ultralytics", "--seconds", "0.05"]) == 0
    out = capsys.readouterr().out
    ih, iw = (int(v) for v in data["input_hw"])
    frames = re.findall(r"^frame (\d+): .*: (\d+) detection\(s\), masks \((\d+), (\d+), (\d+)\) at the input size, "
                        r"\((\d+), (\d+), (\d+)\) at the prototype grid", out, flags=re.M)
    assert len(frames) == len(data["image_names"]) >= 2
    for f, n, *shapes in frames:
        want = int((data["ref25_frame"] == int(f)).sum())  # Ultralytics' count for that frame
        assert [int(n)] + [int(v) for v in shapes] == [want, want, ih, iw, want, ih // 4, iw // 4]
    names = "|".join(str(n) for n in data["class_names"])
    ious = re.findall(rf"^    (?:{names}) .* mask +\d+ px, IoU ([01]\.\d+) with Ultralytics' mask of that object",
                      out, flags=re.M)
    assert len(ious) == len(data["ref25_scores"])
    assert min(float(v) for v in ious) >= 0.97  # trained masks: uint8 moves only their edges (measured: min 0.976)
    assert re.search(r"with masks at the input size \d+ us", out)


def test_from_hailo_seg_model(hp):
    """DecoderConfig.from_hailo on a -seg model (the hailo_platform test double): the prototype
    found by shape, coefficients paired per stride; decoding its frames gives masks."""
    from hailo_platform import _fake_device as fd
    data = hd.demo_data.load_seg_demo_frames()
    cfg0 = hd.demo_data.seg_demo_config(data)
    frames = hd.demo_data.seg_demo_frames(data)
    outs = [fd.FakeOutput(o.name, o.shape, "uint8", "FCR" if "box" in o.name else "NHWC", zp=o.zp, scale=o.scale)
            for o in cfg0.outputs]
    ih, iw = (int(v) for v in data["input_hw"])
    model = fd.FakeModel("seg", outs, frames=[{k: v[0] for k, v in frames.items()}], input_shape=(ih, iw, 3))
    path = fd.register(model)
    im = hp.VDevice().create_infer_model(path)
    cfg = hd.DecoderConfig.from_hailo(im, semantics="ultralytics", class_activation="sigmoid")
    assert cfg.proto == "seg/proto" and cfg.task == "segment"
    assert [(h.mask, h.stride) for h in cfg.heads] == [(f"seg/mask_{s}", s) for s in (8, 16, 32)]
    d = hd.Decoder(cfg)({k: v[0] for k, v in frames.items()})
    n = int((data["ref25_frame"] == 0).sum())  # Ultralytics' count on frame 0 at conf 0.25
    assert n >= 2 and len(d) == n and d.masks.shape == (n, ih, iw) and all(m.any() for m in d.masks)
