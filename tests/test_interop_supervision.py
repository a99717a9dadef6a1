"""Detections -> the real supervision package: sv.Detections and sv.KeyPoints, with expected
values worked out by hand (not by the code under test)."""

from __future__ import annotations

import re
import sys
from types import SimpleNamespace

import numpy as np
import pytest

import hailo_decode as hd
from hailo_decode import interop
from hailo_decode._install import install_hint

from conftest import optional_package

sv = optional_package("supervision")

# One box [ymin, xmin, ymax, xmax] normalized on a 480 x 640 (H x W) image, and one in pixels:
# x1 = 0.2 * 640 = 128, y1 = 0.1 * 480 = 48, x2 = 0.6 * 640 = 384, y2 = 0.5 * 480 = 240.
YXYX_NORM = [[0.1, 0.2, 0.5, 0.6], [0.5, 0.25, 1.0, 0.5]]
XYXY_PX = [[128.0, 48.0, 384.0, 240.0], [160.0, 240.0, 320.0, 480.0]]


def _dets(**extra):
    d = hd.Detections(np.array(YXYX_NORM), [0.9, 0.4], [3, 0], image_size=(480, 640), num_classes=4)
    ns = SimpleNamespace(boxes=d.boxes, scores=d.scores, class_ids=d.class_ids, box_format=d.box_format,
                         image_size=d.image_size)
    for k, v in extra.items():
        setattr(ns, k, v)
    return ns


@pytest.mark.parametrize("box_format", hd.BOX_FORMATS)
def test_boxes_in_pixels_whatever_the_format(box_format):
    d = hd.Detections(np.array(YXYX_NORM), [0.9, 0.4], [3, 0], image_size=(480, 640))
    d = hd.Detections(d.boxes_as(box_format), d.scores, d.class_ids, box_format=box_format, image_size=(480, 640))
    s = d.to_supervision()
    assert isinstance(s, sv.Detections)
    np.testing.assert_allclose(s.xyxy, XYXY_PX, rtol=0, atol=1e-4)
    np.testing.assert_array_equal(s.confidence, np.float32([0.9, 0.4]))
    np.testing.assert_array_equal(s.class_id, [3, 0])
    assert s.mask is None and len(s) == 2


def test_supervision_operations_work_on_the_result():
    s = interop.to_supervision(_dets(), class_names=["a", "b", "c", "person"])
    np.testing.assert_allclose(s.area, [256 * 192, 160 * 240], rtol=1e-6)
    kept = s[s.confidence > 0.5]
    assert len(kept) == 1 and kept.class_id.tolist() == [3]
    assert kept.data["class_name"].tolist() == ["person"]
    assert s.data["class_name"].tolist() == ["person", "a"]
    merged = sv.Detections.merge([s, kept])
    assert len(merged) == 3


def test_empty_detections():
    d = hd.Detections(np.zeros((0, 4)), [], [], image_size=(480, 640))
    s = interop.to_supervision(d)
    assert len(s) == 0 and s.xyxy.shape == (0, 4)


def test_normalized_boxes_without_image_size():
    d = hd.Detections(np.array(YXYX_NORM), [0.9, 0.4], [3, 0])
    with pytest.raises(ValueError, match="image_size"):
        interop.to_supervision(d)


def test_masks_become_the_supervision_mask():
    masks = np.zeros((2, 480, 640), bool)
    masks[0, 48:240, 128:384] = True
    s = interop.to_supervision(_dets(masks=masks))
    assert s.mask is not None and s.mask.shape == (2, 480, 640) and s.mask.dtype == bool
    assert s.mask[0].sum() == 192 * 256 and s.mask[1].sum() == 0


def test_masks_of_another_size_are_refused():
    with pytest.raises(ValueError, match="160x120"):
        interop.to_supervision(_dets(masks=np.zeros((2, 120, 160), bool)))
    with pytest.raises(ValueError, match="one entry per detection"):
        interop.to_supervision(_dets(masks=np.zeros((3, 480, 640), bool)))


def test_rotated_boxes_as_corners():
    # Centre (100, 50), w 40, h 20, turned a quarter (pi/2): the long side now runs along y.
    rb = np.array([[100, 50, 40, 20, np.pi / 2], [10, 10, 4, 2, 0.0]], np.float32)
    d = hd.Detections(np.array(XYXY_PX), [0.9, 0.4], [3, 0], box_format="xyxy_pixels", image_size=(480, 640))
    ns = SimpleNamespace(boxes=d.boxes, scores=d.scores, class_ids=d.class_ids, box_format=d.box_format,
                         image_size=d.image_size, rboxes=rb)
    s = interop.to_supervision(ns)
    corners = s.data["xyxyxyxy"]
    assert corners.shape == (2, 4, 2)
    # Ultralytics' order: c + w/2 (cos, sin) + h/2 (-sin, cos), c + w/2.. - h/2.., c - .. - .., c - .. + ..
    np.testing.assert_allclose(corners[0], [[90, 70], [110, 70], [110, 30], [90, 30]], atol=1e-4)
    np.testing.assert_allclose(corners[1], [[12, 11], [12, 9], [8, 9], [8, 11]], atol=1e-5)


def test_keypoints_become_supervision_keypoints():
    # Normalized like the boxes: (0.5, 0.25) -> (320, 120) pixels on the 640 x 480 image.
    k = np.array([[[0.5, 0.25, 0.9], [0.0, 1.0, 0.1]], [[1.0, 0.5, 1.0], [0.25, 0.75, 0.0]]], np.float32)
    kp = interop.to_supervision_keypoints(_dets(keypoints=k), class_names=["a", "b", "c", "person"])
    assert isinstance(kp, sv.KeyPoints) and len(kp) == 2
    np.testing.assert_allclose(kp.xy, [[[320, 120], [0, 480]], [[640, 240], [160, 360]]], atol=1e-4)
    conf = kp.keypoint_confidence if hasattr(kp, "keypoint_confidence") else kp.confidence
    np.testing.assert_allclose(conf, [[0.9, 0.1], [1.0, 0.0]])
    np.testing.assert_array_equal(kp.class_id, [3, 0])
    assert kp.data["class_name"].tolist() == ["person", "a"]
    # the detections themselves still convert, keypoints or not
    assert len(interop.to_supervision(_dets(keypoints=k))) == 2


def test_keypoints_missing_or_misshapen():
    with pytest.raises(ValueError, match="no keypoints"):
        interop.to_supervision_keypoints(_dets())
    with pytest.raises(ValueError, match=r"\(n, K, 3\)"):
        interop.to_supervision_keypoints(_dets(keypoints=np.zeros((2, 17))))
    with pytest.raises(ValueError, match="one entry per detection"):
        interop.to_supervision_keypoints(_dets(keypoints=np.zeros((1, 17, 3))))


def test_class_names_too_short():
    with pytest.raises(ValueError, match="class id 3 has no name"):
        interop.to_supervision(_dets(), class_names=["a"])


def test_not_a_detections_object():
    with pytest.raises((TypeError, AttributeError)):
        interop.to_supervision(SimpleNamespace(boxes=np.zeros((0, 4)), scores=[], class_ids=[]))


def test_real_frames_round_trip(uint8_data):
    from conftest import demo_config, uint8_frames

    dets = hd.Decoder(demo_config(uint8_data))(uint8_frames(uint8_data))
    for i, d in enumerate(dets):
        oh, ow = (int(v) for v in uint8_data["orig_hw"][i])
        orig = d.to_original((oh, ow))
        s = interop.to_supervision(orig)
        np.testing.assert_array_equal(s.xyxy, orig.boxes)  # already xyxy pixels: unchanged
        np.testing.assert_array_equal(s.class_id, orig.class_ids)
        # and from the network input's normalized yxyx boxes: x = xmin * 640 etc.
        s_in = interop.to_supervision(d)
        np.testing.assert_allclose(s_in.xyxy, d.boxes[:, [1, 0, 3, 2]] * 640, rtol=1e-6, atol=1e-4)


def test_missing_supervision_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "supervision", None)  # import supervision -> ImportError
    with pytest.raises(ImportError, match=re.escape(install_hint("supervision"))):
        interop.to_supervision(_dets())


def test_non_finite_or_odd_arrays_are_refused():
    with pytest.raises(ValueError, match="non-finite"):
        interop.to_supervision(_dets(boxes=np.array([[0, 0, np.nan, 1], [0, 0, 1, 1]], np.float32)))
    with pytest.raises(ValueError, match="non-finite"):
        interop.to_coco(_dets(scores=np.float32([np.inf, 0.5])), 1)
    with pytest.raises(TypeError, match="whole numbers"):
        interop.to_supervision(_dets(class_ids=np.array([0.5, 1.0])))
    with pytest.raises(ValueError, match=r"\(n, 4\)"):
        interop.to_supervision(_dets(boxes=np.zeros((2, 3), np.float32)))
    with pytest.raises(ValueError, match="image_size"):
        interop.to_supervision(_dets(image_size=(0, 640)))
    with pytest.raises(ValueError, match="differ in length"):
        interop.to_supervision_keypoints(_dets(boxes=np.zeros((3, 4), np.float32), keypoints=np.zeros((2, 1, 3))))
