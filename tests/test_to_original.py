"""to_original follows Ultralytics 8.4's scale_boxes / scale_coords: LetterBox rounds each scaled
side, so x and y get their own gain and the padding comes from the rounded sides. Expected values
worked out by hand for an original of 480 x 641 (h x w) letterboxed into 640 x 640:
gain = min(640/480, 640/641) = 640/641; new sides round(480 * 640/641) = 479 and 640; gain_x =
640/641, gain_y = 479/480; pad_x = round(0/2 - 0.1) = 0, pad_y = round(161/2 - 0.1) = 80.
(Ultralytics 8.3 and older: one gain 640/641 for both axes, so y = (500 - 80) * 641/640 = 420.656.)"""

import numpy as np

import hailo_decode as hd

ORIGINAL = (480, 641)


def test_boxes_use_per_axis_gains():
    d = hd.Detections(np.array([[100, 100, 600, 500]], np.float32), np.array([0.9], np.float32),
                      np.array([0], np.int32), box_format="xyxy_pixels", image_size=(640, 640))
    got = d.to_original(ORIGINAL).boxes[0]
    want = [100 * 641 / 640, 20 * 480 / 479, 600 * 641 / 640, 420 * 480 / 479]  # 100.156, 20.042, 600.938, 420.877
    np.testing.assert_allclose(got, want, atol=1e-3)


def test_keypoints_use_per_axis_gains_and_clip():
    kpts = np.array([[[600, 500, 0.7], [700, 10, 0.2]]], np.float32)
    d = hd.Detections(np.array([[100, 100, 600, 500]], np.float32), np.array([0.9], np.float32),
                      np.array([0], np.int32), box_format="xyxy_pixels", image_size=(640, 640), keypoints=kpts)
    k = d.to_original(ORIGINAL).keypoints[0]
    np.testing.assert_allclose(k[0], [600 * 641 / 640, 420 * 480 / 479, 0.7], atol=1e-3)
    np.testing.assert_allclose(k[1], [641, 0, 0.2], atol=1e-3)  # clipped to the image, visibility kept


def test_rotated_boxes_use_per_axis_gains():
    r = np.array([[350, 300, 500, 400, 0.3]], np.float32)
    d = hd.Detections(np.array([[0, 0, 1, 1]], np.float32), np.array([0.9], np.float32), np.array([0], np.int32),
                      box_format="xyxy_pixels", image_size=(640, 640), rboxes=r)
    got = d.to_original(ORIGINAL).rboxes[0]
    want = [350 * 641 / 640, 220 * 480 / 479, 500 * 641 / 640, 400 * 480 / 479, 0.3]
    np.testing.assert_allclose(got, want, atol=1e-3)
