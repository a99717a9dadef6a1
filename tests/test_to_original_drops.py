"""to_original drops a detection with no area left in the original image (issue 33): its box,
clipped to the image as Ultralytics' scale_boxes clips it, is 0 wide or high (it lay in the
letterbox padding or beyond the edge). Its keypoints, rotated box and mask go with it, and the
others keep theirs. The TAPPAS plugin drops such detections on filter_letterbox too."""

import numpy as np

import hailo_decode as hd
from hailo_decode.detections import MaskLogits

# 640 x 640 input, original 480 x 640: gain 1, pad_y 80 (rows 0-80 and 560-640 are padding).
ORIGINAL = (480, 640)
BOXES = np.float32([[100, 100, 300, 300],    # inside
                    [100, 10, 300, 70],      # wholly in the top padding: dropped
                    [400, 60, 500, 200],     # partly: clipped to y 0
                    [-50, 300, -10, 400],    # beyond the left edge: dropped
                    [200, 560, 300, 620]])   # wholly in the bottom padding (y 480 after mapping): dropped


def _dets(**extra):
    n = len(BOXES)
    return hd.Detections(BOXES, np.linspace(0.9, 0.5, n, dtype=np.float32), np.arange(n, dtype=np.int32),
                         box_format="xyxy_pixels", image_size=(640, 640), **extra)


def test_boxes_with_no_area_left_are_dropped_the_others_clipped():
    o = _dets().to_original(ORIGINAL)
    np.testing.assert_array_equal(o.class_ids, [0, 2])
    np.testing.assert_allclose(o.boxes, [[100, 20, 300, 220], [400, 0, 500, 120]])
    np.testing.assert_array_equal(o.scores, _dets().scores[[0, 2]])


def test_keypoints_go_with_their_detection():
    k = np.zeros((len(BOXES), 2, 3), np.float32)
    k[:, :, 0] = np.arange(len(BOXES))[:, None] * 10 + 5
    k[:, :, 1] = 150
    o = _dets(keypoints=k).to_original(ORIGINAL)
    np.testing.assert_allclose(o.keypoints[:, 0, 0], [5, 25])


def test_rotated_boxes_decide_by_their_enclosing_box_clipped():
    r = np.float32([[200, 200, 100, 50, 0.2],     # inside
                    [200, 30, 100, 20, 0.0],      # in the top padding: its enclosing box maps above the image
                    [320, 600, 60, 30, 0.5]])     # in the bottom padding
    d = hd.Detections(np.zeros((3, 4), np.float32), np.float32([0.9, 0.8, 0.7]), np.int32([0, 1, 2]),
                      box_format="xyxy_pixels", image_size=(640, 640), rboxes=r)
    o = d.to_original(ORIGINAL)
    np.testing.assert_array_equal(o.class_ids, [0])
    np.testing.assert_allclose(o.rboxes[0], [200, 120, 100, 50, 0.2], atol=1e-4)


def test_masks_go_with_their_detection():
    # Each detection's prototype window is a constant patch; mask j must be detection j's.
    n = len(BOXES)
    grid = (160, 160, 640, 640)
    windows = np.int32([[0, 0, 160, 160]] * n)
    offsets = np.arange(n, dtype=np.int64) * 160 * 160
    logits = np.concatenate([np.full(160 * 160, 1.0 if i % 2 == 0 else -1.0, np.float32) for i in range(n)])
    d = _dets()
    d._mask_logits = MaskLogits(windows, offsets.astype(np.int32), logits, grid)
    o = d.to_original(ORIGINAL)
    m = o.masks
    assert m.shape == (2, 480, 640)
    # Detection 0 (logit +1): set over its box; detection 2 (logit +1 too): set over its clipped box.
    assert m[0, 20:220, 100:300].all() and m[0].sum() == 200 * 200
    assert m[1, 0:120, 400:500].all() and m[1].sum() == 100 * 120
    # Rendered masks equal the ones kept: the same bytes again.
    np.testing.assert_array_equal(o.render_masks(), m)


def test_nothing_left_is_an_empty_detections():
    d = hd.Detections(BOXES[[1, 3]], np.float32([0.9, 0.8]), np.int32([0, 1]), box_format="xyxy_pixels",
                      image_size=(640, 640))
    o = d.to_original(ORIGINAL)
    assert len(o) == 0 and o.boxes.shape == (0, 4)
