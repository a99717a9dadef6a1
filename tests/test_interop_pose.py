"""Keypoints through interop on a real pose model's results (tests/fixtures/pose_yolo11n.npz:
Ultralytics' own yolo11n-pose results on real photographs, from the float heads and from the
uint8-quantized ones): supervision.KeyPoints, COCO keypoint records scored by pycocotools' OKS,
and the pictures."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from hailo_decode import interop

from conftest import optional_package

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "pose_yolo11n.npz"
if not FIXTURE.exists():
    pytest.skip("pose fixture absent", allow_module_level=True)


@pytest.fixture(scope="module")
def pose():
    with np.load(FIXTURE, allow_pickle=False) as z:
        data = {k: z[k] for k in z.files}
    frames = 0
    while f"r{frames}_boxes" in data:
        frames += 1
    return data, frames


def _dets(data, prefix, i):
    return SimpleNamespace(boxes=data[f"{prefix}r{i}_boxes"], scores=data[f"{prefix}r{i}_scores"],
                           class_ids=data[f"{prefix}r{i}_classes"], keypoints=data[f"{prefix}r{i}_keypoints"],
                           box_format="xyxy_pixels", image_size=tuple(int(v) for v in data[f"img{i}_shape"][:2]))


def _ground_truth(data, frames):
    """The float model's results as COCO person-keypoint ground truth (visibility 2 where
    Ultralytics' keypoint confidence is above 0.5, else 0)."""
    images, anns = [], []
    for i in range(frames):
        h, w = (int(v) for v in data[f"img{i}_shape"][:2])
        images.append({"id": i + 1, "height": h, "width": w})
        for box, k in zip(data[f"r{i}_boxes"].tolist(), data[f"r{i}_keypoints"]):
            vis = np.where(k[:, 2] > 0.5, 2, 0)
            flat = np.stack([k[:, 0], k[:, 1], vis], axis=1).reshape(-1).tolist()
            bw, bh = box[2] - box[0], box[3] - box[1]
            anns.append({"id": len(anns) + 1, "image_id": i + 1, "category_id": 1, "iscrowd": 0,
                         "bbox": [box[0], box[1], bw, bh], "area": bw * bh, "keypoints": flat,
                         "num_keypoints": int((vis > 0).sum())})
    return {"images": images, "annotations": anns, "categories": [{"id": 1, "name": "person"}]}


def test_keypoints_to_supervision(pose):
    optional_package("supervision")
    data, frames = pose
    for i in range(frames):
        kp = interop.to_supervision_keypoints(_dets(data, "", i))
        np.testing.assert_array_equal(kp.xy, data[f"r{i}_keypoints"][..., :2])
        conf = kp.keypoint_confidence if hasattr(kp, "keypoint_confidence") else kp.confidence
        np.testing.assert_array_equal(conf, data[f"r{i}_keypoints"][..., 2])
        assert len(kp) == len(data[f"r{i}_scores"]) > 0


def test_keypoint_map_float_vs_quantized(pose):
    optional_package("pycocotools")
    data, frames = pose
    gt = _ground_truth(data, frames)
    same = interop.evaluate_coco({i + 1: _dets(data, "", i) for i in range(frames)}, gt,
                                 category_ids=[1], iou_type="keypoints")
    assert same["AP"] == pytest.approx(1.0)
    quantized = interop.evaluate_coco({i + 1: _dets(data, "q_", i) for i in range(frames)}, gt,
                                      category_ids=[1], iou_type="keypoints")
    assert quantized["AP"] > 0.9  # the uint8 heads' keypoints stay within COCO's OKS tolerance (1.0 here)
    # keypoints shifted by 10% of each person's box: OKS far below the strict thresholds
    shifted = {}
    for i in range(frames):
        d = _dets(data, "", i)
        k = d.keypoints.copy()
        k[..., 0] += 0.1 * (d.boxes[:, 2:3] - d.boxes[:, 0:1])
        d.keypoints = k
        shifted[i + 1] = d
    moved = interop.evaluate_coco(shifted, gt, category_ids=[1], iou_type="keypoints")
    assert moved["AP"] < 0.9 and moved["AP"] < quantized["AP"]
    # bbox scoring of the same records still sees perfect boxes
    assert interop.evaluate_coco(shifted, gt, category_ids=[1])["AP"] == pytest.approx(1.0)


def test_keypoints_drawn(pose):
    optional_package("PIL.Image")
    data, _ = pose
    d = _dets(data, "", 0)
    h, w = d.image_size
    out = interop.draw(np.zeros((h, w, 3), np.uint8), d, ["person"], line_width=2)
    colour = interop.class_colour(0)
    for x, y, v in d.keypoints[0].tolist():
        if v >= 0.5:
            assert tuple(out[int(round(y)), int(round(x))]) == colour
