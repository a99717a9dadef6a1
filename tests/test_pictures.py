"""Pictures: PNG files that exist, are valid PNGs of the image's size, and carry the box colour on
the box edges and the untouched image far inside the boxes."""

from __future__ import annotations

import struct
import re
import sys
import zlib
from types import SimpleNamespace

import numpy as np
import pytest

import hailo_decode as hd
from hailo_decode import interop
from hailo_decode._install import install_hint

from conftest import optional_package

Image = optional_package("PIL.Image")

GREY = 90


def _png_header(path):
    """(width, height) from the PNG signature and IHDR chunk, read by hand (CRC checked)."""
    raw = path.read_bytes()
    assert raw[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG signature"
    length, kind = struct.unpack(">I4s", raw[8:16])
    assert kind == b"IHDR" and length == 13
    body = raw[16:29]
    assert struct.unpack(">I", raw[29:33])[0] == zlib.crc32(kind + body)
    assert raw.endswith(b"IEND\xaeB`\x82")
    w, h = struct.unpack(">II", body[:8])
    return w, h


def _dets(boxes, classes, scores=None, image_size=(120, 200), **extra):
    b = np.array(boxes, np.float32).reshape(-1, 4)
    return SimpleNamespace(boxes=b, scores=np.float32(scores if scores is not None else [0.9] * len(b)),
                           class_ids=np.array(classes), box_format="xyxy_pixels", image_size=image_size, **extra)


def _edge_and_inside(img, box, colour, lw):
    x1, y1, x2, y2 = box
    ym, xm = (y1 + y2) // 2, (x1 + x2) // 2
    # left, right and bottom edges (the label sits on the top one), a line width thick, inside the box
    for y, x in ((ym, x1), (ym, x1 + lw - 1), (ym, x2), (ym, x2 - lw + 1), (y2, xm), (y2 - lw + 1, xm)):
        assert tuple(img[y, x]) == colour, (y, x, img[y, x])
    # far from every edge and from the label: the image as it was
    inner = img[ym - 5:ym + 6, xm - 5:xm + 6]
    assert (inner == GREY).all()
    # just outside the left and right edges: untouched too
    assert (img[ym, x1 - 2] == GREY).all() and (img[ym, x2 + 2] == GREY).all()


def test_boxes_drawn_where_they_are(tmp_path):
    img = np.full((120, 200, 3), GREY, np.uint8)
    boxes = [[20, 40, 90, 110], [120, 30, 180, 100]]
    path = tmp_path / "out.png"
    out = interop.draw(img, _dets(boxes, [0, 1]), ["person", "dog"], path=path, line_width=3)
    assert (img == GREY).all(), "the input image must not be drawn on"
    assert path.exists() and _png_header(path) == (200, 120)
    saved = np.asarray(Image.open(path).convert("RGB"))
    np.testing.assert_array_equal(saved, out)
    for box, cls in zip(boxes, (0, 1)):
        _edge_and_inside(saved, box, interop.class_colour(cls), 3)
    # the label: a filled patch of the class colour just above the first box (white text on it)
    patch = saved[26:40, 20:60].reshape(-1, 3)
    assert (patch == interop.class_colour(0)).all(axis=1).mean() > 0.4
    assert (patch[:, 1] > 150).any()  # (the colour's green is 56; anti-aliased white text is above)
    assert (saved[10:20, 20:60] == GREY).all()  # nothing above the label
    # the two colours differ, so the pixels above say which box is which
    assert interop.class_colour(0) != interop.class_colour(1)


def test_normalized_boxes_and_real_detections(uint8_data, tmp_path):
    from conftest import demo_config, uint8_frames

    d = hd.Decoder(demo_config(uint8_data))(uint8_frames(uint8_data))[0]
    assert len(d) > 0 and d.box_format == "yxyx_normalized"
    img = np.full((640, 640, 3), GREY, np.uint8)
    out = interop.draw(img, d, ["Normal", "Fall"], path=tmp_path / "f.png", line_width=2)
    assert _png_header(tmp_path / "f.png") == (640, 640)
    x1, y1, x2, y2 = np.rint(d.boxes[0, [1, 0, 3, 2]] * 640).astype(int)  # the best box, in pixels
    ym = (y1 + y2) // 2
    assert tuple(out[ym, x1]) == interop.class_colour(int(d.class_ids[0]))


def test_masks_keypoints_rboxes(tmp_path):
    img = np.full((120, 200, 3), GREY, np.uint8)
    masks = np.zeros((1, 120, 200), bool)
    masks[0, 60:70, 30:40] = True
    kpts = np.array([[[150, 20, 1.0], [160, 20, 0.1]]], np.float32)  # the second is not visible
    out = interop.draw(img, _dets([[20, 40, 90, 110]], [2], masks=masks, keypoints=kpts), line_width=2)
    colour = np.array(interop.class_colour(2), np.float32)
    blended = np.rint(GREY * (1 - 0.45) + 0.45 * colour).astype(np.uint8)
    np.testing.assert_array_equal(out[65, 35], blended)
    assert (out[80, 70] == GREY).all()  # inside the box, off the mask
    assert tuple(out[20, 150]) == tuple(interop.class_colour(2))  # a visible keypoint
    assert (out[20, 160] == GREY).all()  # an invisible one is not drawn
    # a rotated box: a polygon instead of the axis-aligned rectangle
    rb = np.array([[100, 60, 60, 20, np.pi / 4]], np.float32)
    out = interop.draw(img, _dets([[65, 25, 135, 95]], [0], rboxes=rb), line_width=2)
    assert (out[60, 100] == GREY).all()  # the centre
    assert (out[60, 66] == GREY).all()  # the axis-aligned box's left edge is not drawn
    c, s = np.cos(np.pi / 4), np.sin(np.pi / 4)
    x, y = round(100 + 30 * c - 10 * s), round(60 + 30 * s + 10 * c)  # centre + w/2 (c, s) + h/2 (-s, c)
    assert (out[y - 1:y + 2, x - 1:x + 2] == interop.class_colour(0)).all(axis=2).any()


def test_gray_and_rgba_images():
    out = interop.draw(np.full((50, 60), 7, np.uint8), _dets([[5, 5, 40, 40]], [0], image_size=(50, 60)))
    assert out.shape == (50, 60, 3)
    out = interop.draw(np.full((50, 60, 4), 7, np.uint8), _dets([], [], image_size=(50, 60)))
    assert out.shape == (50, 60, 3) and (out == 7).all()


def test_bad_inputs(tmp_path):
    d = _dets([[1, 1, 5, 5]], [0])
    with pytest.raises(ValueError, match="to_original"):
        interop.draw(np.zeros((240, 400, 3), np.uint8), d)  # the detections are in a 200 x 120 image
    with pytest.raises(TypeError, match="uint8"):
        interop.draw(np.zeros((120, 200, 3), np.float32), d)
    with pytest.raises(ValueError, match=r"\(H, W, 3\)"):
        interop.draw(np.zeros((120, 200, 2), np.uint8), d)
    with pytest.raises(ValueError, match="line_width"):
        interop.draw(np.zeros((120, 200, 3), np.uint8), d, line_width=0)


def test_missing_pillow_names_the_extra(monkeypatch):
    for name in ("PIL", "PIL.Image", "PIL.ImageDraw", "PIL.ImageFont"):
        monkeypatch.setitem(sys.modules, name, None)
    with pytest.raises(ImportError, match=re.escape(install_hint("pictures"))):
        interop.draw(np.zeros((120, 200, 3), np.uint8), _dets([], []))


def test_labels_do_not_cover_each_other():
    # Two boxes from the same corner: the better one's label sits above it, the other's moves
    # below that one instead of covering it.
    img = np.full((120, 200, 3), GREY, np.uint8)
    d = _dets([[20, 40, 150, 110], [20, 40, 120, 100]], [0, 1], scores=[0.9, 0.5])
    out = interop.draw(img, d, ["a", "b"], line_width=2)
    c0, c1 = interop.class_colour(0), interop.class_colour(1)
    above = out[24:40, 21:40]  # label 0: above the boxes, in its colour with white text
    assert (above == c0).all(axis=2).mean() > 0.3 and (above > 150).all(axis=2).any()
    below = out[42:54, 21:40]  # label 1: just inside the boxes, in its colour with white text
    assert (below == c1).all(axis=2).mean() > 0.3 and (below > 150).all(axis=2).any()
