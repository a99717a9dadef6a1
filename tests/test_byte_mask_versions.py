"""HAILO_NMS_WITH_BYTE_MASK in both of HailoRT's record layouts (issue 36): 38-byte records before
5.2, 46-byte ones from 5.2.0 (include/hailo/hailort.h at v5.2.0, hailo_detection_with_byte_mask_t:
a size_t mask_offset after the deprecated pointer, set by yolov5_seg_post_process.cpp's
copy_detection_to_result_buffer to the byte right after the record), read, written (Python and the
C++ packer) and refused when a frame is not the layout it is said to be; the 5.x crop variant
(HAILORT_YOLOV5_SEG_PP_CROP_OPT) read. The expected bytes come from struct.pack and hailort.h's
description, never from the code under test."""

from __future__ import annotations

import struct

import numpy as np
import pytest

import hailo_decode as hd
from hailo_decode.formats import byte_mask

from seg_reference import make_seg_case

H, W = 40, 60


def _crop(box, crop_opt=False):
    """The mask's (x0, y0, w, h) as HailoRT computes it (float32), written out here from
    nms_post_process.hpp (DetectionBbox) and hailort.h."""
    y0, x0, y1, x1 = (np.float32(v) for v in box)
    if crop_opt:  # get_bbox_x_min: floor, clamped at 0; get_bbox_x_max: ceil, clamped at the size
        cx0, cy0 = max(int(np.floor(x0 * np.float32(W))), 0), max(int(np.floor(y0 * np.float32(H))), 0)
        cx1, cy1 = min(int(np.ceil(x1 * np.float32(W))), W), min(int(np.ceil(y1 * np.float32(H))), H)
        return cx0, cy0, cx1 - cx0, cy1 - cy0
    return (max(int(np.ceil(x0 * np.float32(W))), 0), max(int(np.ceil(y0 * np.float32(H))), 0),
            int(np.ceil(np.float32(x1 - x0) * np.float32(W))), int(np.ceil(np.float32(y1 - y0) * np.float32(H))))


def _frame(dets, version, crop_opt=False, pointer=0x7F0012345678):
    """An independent frame: struct.pack of hailort.h's record, per version."""
    parts = [struct.pack("<H", len(dets))]
    offset = 2
    for box, score, cls, mask in dets:
        _, _, w, h = _crop(box, crop_opt)
        rec = struct.pack("<fffffHQQ", *(np.float32(v) for v in box), score, cls, w * h, pointer)
        if version == "5.2":
            rec += struct.pack("<Q", offset + len(rec) + 8)  # mask_offset: the byte after the record
        parts.append(rec)
        parts.append(np.asarray(mask, np.uint8).reshape(h, w).tobytes())
        offset += len(rec) + w * h
    return np.frombuffer(b"".join(parts), np.uint8)


def _dets(n, rng, crop_opt=False):
    # Edges between pixels (x * 60, y * 40 not whole): the default and the crop_opt crops differ.
    boxes = [(0.11, 0.26, 0.37, 0.53), (0.51, 0.05, 0.93, 0.45), (0.01, 0.61, 0.33, 0.97)][:n]
    out = []
    for k, b in enumerate(boxes):
        _, _, w, h = _crop(b, crop_opt)
        out.append((b, 0.9 - 0.1 * k, 3 + k, rng.integers(0, 2, (h, w))))
    return out


def _expected_masks(dets, crop_opt=False):
    masks = np.zeros((len(dets), H, W), bool)
    for i, (box, _, _, m) in enumerate(dets):
        x0, y0, w, h = _crop(box, crop_opt)
        masks[i, y0:y0 + h, x0:x0 + w] = (np.asarray(m) != 0)[:H - y0, :W - x0]
    return masks


@pytest.mark.parametrize("version", ["4.23", "5.2"])
def test_each_layout_reads_an_independent_frame(version):
    dets = _dets(3, np.random.default_rng(1))
    buf = _frame(dets, version)
    for given in (version, None, {"4.23": "5.1.1", "5.2": "5.2.0"}[version]):
        d = hd.decode_hailo_nms(buf, format="byte_mask", image_size=(H, W), hailort_version=given)
        assert d.class_ids.tolist() == [3, 4, 5]
        np.testing.assert_array_equal(d.scores, np.float32([0.9, 0.8, 0.7]))
        np.testing.assert_array_equal(d.masks, _expected_masks(dets))
        np.testing.assert_array_equal(d.boxes, np.float32([b for b, *_ in dets]))


@pytest.mark.parametrize("version,other", [("4.23", "5.2"), ("5.2", "4.23")])
def test_a_frame_of_the_other_layout_is_refused(version, other):
    buf = _frame(_dets(3, np.random.default_rng(2)), version)
    with pytest.raises(ValueError, match=f"HailoRT {other}'s"):
        hd.decode_hailo_nms(buf, format="byte_mask", image_size=(H, W), hailort_version=other)


def test_a_52_frame_with_a_wrong_mask_offset_is_refused():
    buf = _frame(_dets(1, np.random.default_rng(3)), "5.2").copy()
    buf[2 + 38:2 + 46] = np.frombuffer(struct.pack("<Q", 47), np.uint8)
    with pytest.raises(ValueError, match="mask_offset 47, HailoRT 5.2 writes 48"):
        hd.decode_hailo_nms(buf, format="byte_mask", image_size=(H, W), hailort_version="5.2")


def test_one_detection_reads_both_ways_so_the_version_must_be_given():
    """A 5.2 frame with one detection also parses as a 4.23 one (its mask read 8 bytes early):
    without hailort_version it is refused, never misread."""
    dets = _dets(1, np.random.default_rng(4))
    buf = _frame(dets, "5.2")
    as_423 = hd.decode_hailo_nms(buf, format="byte_mask", image_size=(H, W), hailort_version="4.23")
    assert not np.array_equal(as_423.masks, _expected_masks(dets))  # the premise: it reads, wrongly
    with pytest.raises(ValueError, match="pass hailort_version="):
        hd.decode_hailo_nms(buf, format="byte_mask", image_size=(H, W))
    d = hd.decode_hailo_nms(buf, format="byte_mask", image_size=(H, W), hailort_version="5.2")
    np.testing.assert_array_equal(d.masks, _expected_masks(dets))
    # No detections: both layouts read the same (nothing), no version needed.
    assert len(hd.decode_hailo_nms(np.zeros(100, np.uint8), format="byte_mask", image_size=(H, W))) == 0


def test_crop_opt_frames():
    """HAILORT_YOLOV5_SEG_PP_CROP_OPT=1 (5.x): masks from floor(min * size) to min(ceil(max *
    size), size). Read with crop_opt=True; without it the sizes do not fit and the message says so."""
    rng = np.random.default_rng(5)
    dets = _dets(3, rng, crop_opt=True)
    buf = _frame(dets, "5.2", crop_opt=True)
    d = hd.decode_hailo_nms(buf, format="byte_mask", image_size=(H, W), hailort_version="5.2", crop_opt=True)
    np.testing.assert_array_equal(d.masks, _expected_masks(dets, crop_opt=True))
    with pytest.raises(ValueError, match="HAILORT_YOLOV5_SEG_PP_CROP_OPT=1 needs crop_opt=True"):
        hd.decode_hailo_nms(buf, format="byte_mask", image_size=(H, W), hailort_version="5.2")
    assert byte_mask.mask_crop(np.float32([0.1, 0.25, 0.35, 0.5]), (H, W), crop_opt=True) == \
        _crop((0.1, 0.25, 0.35, 0.5), crop_opt=True)


@pytest.mark.parametrize("version", ["4.23", "5.2"])
def test_writers_give_the_independent_bytes(version):
    """write_byte_mask (C++ from masks) and Detections.to_hailo_byte_mask give exactly the frame
    struct.pack makes (mask pointer 0, as the writers document)."""
    rng = np.random.default_rng(6)
    dets = _dets(3, rng)
    masks = _expected_masks(dets)
    want = _frame([(b, s, c, masks[i][_crop(b)[1]:, _crop(b)[0]:][:_crop(b)[3], :_crop(b)[2]])
                   for i, (b, s, c, _) in enumerate(dets)], version, pointer=0)
    boxes = np.float32([b for b, *_ in dets])
    scores, classes = np.float32([s for _, s, _, _ in dets]), np.int32([c for _, _, c, _ in dets])
    buf, n = byte_mask.write_byte_mask(boxes, scores, classes, masks, hailort_version=version)
    assert n == 3
    np.testing.assert_array_equal(buf[:want.size], want)
    assert buf.size == byte_mask.byte_mask_frame_size(3, 2 * H * W, hailort_version=version)
    assert buf.size == 2 + {"4.23": 38, "5.2": 46}[version] * 3 + 2 * H * W
    d = hd.Detections(boxes, scores, classes, box_format="yxyx_normalized", image_size=(H, W), masks=masks)
    np.testing.assert_array_equal(d.to_hailo_byte_mask(hailort_version=version), buf)


def test_decode_to_hailo_nms_byte_mask_both_versions():
    """Decoder.decode_to_hailo_nms(format="byte_mask", hailort_version=...): the masks the decoder
    renders, in the records of that version; read back the same."""
    case = make_seg_case(np.random.default_rng(11), [(8, 10, 12, 0), (16, 4, 15, 1), (32, 7, 2, 2)])
    cfg = hd.DecoderConfig(case["infos"], semantics="ultralytics")
    dec = hd.Decoder(cfg)
    d = dec(case["outputs"])
    assert len(d) >= 1
    budget = 8 * 320 * 320  # a box here reaches past the image: more than HailoRT's default 2 H W
    old = dec.decode_to_hailo_nms(case["outputs"], format="byte_mask", mask_budget=budget)
    new = dec.decode_to_hailo_nms(case["outputs"], format="byte_mask", mask_budget=budget, hailort_version="5.2.0")
    assert new.size == old.size + 8 * len(d)
    for buf, v in ((old, "4.23"), (new, "5.2")):
        back = hd.decode_hailo_nms(buf, format="byte_mask", image_size=cfg.image_size, hailort_version=v)
        np.testing.assert_array_equal(back.class_ids, d.class_ids)
        np.testing.assert_array_equal(back.masks, hd.decode_hailo_nms(old, format="byte_mask",
                                                                      image_size=cfg.image_size,
                                                                      hailort_version="4.23").masks)


def test_decode_to_hailo_nms_byte_mask_follows_the_config():
    """Without hailort_version the byte-mask records are those of the HailoRT the config follows
    (its hailort_version: from_hailo sets the installed one), 4.23's when it names none."""
    case = make_seg_case(np.random.default_rng(11), [(8, 10, 12, 0), (16, 4, 15, 1), (32, 7, 2, 2)])
    cfg = hd.DecoderConfig(case["infos"], semantics="ultralytics")
    budget = 8 * 320 * 320
    n = len(hd.Decoder(cfg)(case["outputs"]))
    sizes = {}
    for version in (None, "4.23", "5.2"):
        if version is not None:
            cfg.hailort_version = version  # as DecoderConfig(..., hailort_version=...) holds it
        frame = hd.Decoder(cfg).decode_to_hailo_nms(case["outputs"], format="byte_mask", mask_budget=budget)
        sizes[version] = frame.size
    default = getattr(hd.DecoderConfig(case["infos"], semantics="ultralytics"), "hailort_version", "4.23")
    assert sizes[None] == sizes[byte_mask.byte_mask_layout(default)]
    assert sizes["5.2"] == sizes["4.23"] + 8 * n


@pytest.mark.parametrize("bad", ["5", "v5.2", "5.2.x", "", 5.2, None])
def test_version_spelling(bad):
    if bad is None:  # the writers' default is 4.23's layout
        assert byte_mask.record_bytes() == 38
        return
    with pytest.raises(ValueError, match="hailort_version must be"):
        byte_mask.byte_mask_layout(bad)
    with pytest.raises(ValueError, match="hailort_version must be"):
        hd.decode_hailo_nms(np.zeros(4, np.uint8), format="byte_mask", image_size=(H, W), hailort_version=bad)


def test_versions_map_to_layouts():
    assert [byte_mask.byte_mask_layout(v) for v in ("4.18", "4.23.0", "5.0.0", "5.1.1", "5.2", "5.2.0", "5.3.1",
                                                    "6.0")] == ["4.23"] * 4 + ["5.2"] * 4
    with pytest.raises(TypeError, match="apply to format=\"byte_mask\" only"):
        hd.decode_hailo_nms(np.zeros(10, np.float32), num_classes=2, hailort_version="5.2")
