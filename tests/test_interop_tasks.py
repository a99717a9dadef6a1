"""Masks and rotated boxes through interop on the real-model task fixtures (tests/fixtures:
Ultralytics' own seg and OBB results): supervision's mask and corners, COCO segmentation
scored by pycocotools."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from hailo_decode import interop

from conftest import optional_package

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def _load(name):
    path = FIXTURES / name
    if not path.exists():
        pytest.skip(f"{name} absent")
    with np.load(path, allow_pickle=False) as z:
        return {k: z[k] for k in z.files}


def _frames(data):
    return [i for i in range(100) if f"r{i}_boxes" in data]


def _masks(data, i):
    shape = tuple(int(v) for v in data[f"r{i}_masks_shape"])
    return np.unpackbits(data[f"r{i}_masks"], axis=-1, count=shape[-1]).astype(bool).reshape(shape)


def _dets(data, i, **extra):
    return SimpleNamespace(boxes=data[f"r{i}_boxes"], scores=data[f"r{i}_scores"], class_ids=data[f"r{i}_classes"],
                           box_format="xyxy_pixels", image_size=tuple(int(v) for v in data[f"img{i}_shape"][:2]),
                           **extra)


def test_seg_masks_to_supervision_and_segm_map():
    optional_package("supervision")
    optional_package("pycocotools")
    from pycocotools import mask as mask_utils

    data = _load("seg_transplant_yolo11n.npz")
    pairs, images, anns = {}, [], []
    for i in _frames(data):
        m = _masks(data, i)
        assert m.any()
        d = _dets(data, i, masks=m)
        s = interop.to_supervision(d)
        np.testing.assert_array_equal(s.mask, m)
        np.testing.assert_array_equal(s.area, m.sum(axis=(1, 2)))  # supervision's area is the mask's
        h, w = d.image_size
        images.append({"id": i + 1, "height": h, "width": w})
        for k in range(len(m)):
            rle = mask_utils.encode(np.asfortranarray(m[k].astype(np.uint8)))
            x, y, bw, bh = mask_utils.toBbox(rle).tolist()
            anns.append({"id": len(anns) + 1, "image_id": i + 1, "category_id": 1, "iscrowd": 0,
                         "segmentation": {"size": rle["size"], "counts": rle["counts"].decode()},
                         "area": float(mask_utils.area(rle)), "bbox": [x, y, bw, bh]})
        pairs[i + 1] = d
    gt = {"images": images, "annotations": anns, "categories": [{"id": 1, "name": "person"}]}
    assert interop.evaluate_coco(pairs, gt, category_ids=[1], iou_type="segm")["AP"] == pytest.approx(1.0)
    # every mask eroded to its left half: IoU about 0.5, the score drops
    halves = {}
    for image_id, d in pairs.items():
        m = d.masks.copy()
        for k in range(len(m)):
            cols = np.nonzero(m[k].any(axis=0))[0]
            m[k, :, (cols[0] + cols[-1]) // 2:] = False
        halves[image_id] = _dets(data, image_id - 1, masks=m)
    assert interop.evaluate_coco(halves, gt, category_ids=[1], iou_type="segm")["AP"] < 0.5


def test_obb_corners_enclose_to_ultralytics_boxes():
    """Ultralytics' OBB results give each rotated box (xywhr) and its enclosing xyxy box: the
    corners interop hands supervision span exactly that box."""
    optional_package("supervision")
    data = _load("obb_transplant_yolo11n.npz")
    for i in _frames(data):
        d = _dets(data, i, rboxes=data[f"r{i}_rboxes"])
        corners = interop.to_supervision(d).data["xyxyxyxy"]
        assert corners.shape == (len(d.scores), 4, 2)
        enclosing = np.concatenate([corners.min(axis=1), corners.max(axis=1)], axis=1)
        np.testing.assert_allclose(enclosing, data[f"r{i}_boxes"], rtol=0, atol=1e-3)
        # opposite corners average to the centre, sides are w and h
        np.testing.assert_allclose((corners[:, 0] + corners[:, 2]) / 2, d.rboxes[:, :2], atol=1e-3)
        np.testing.assert_allclose(np.linalg.norm(corners[:, 0] - corners[:, 3], axis=1), d.rboxes[:, 2], rtol=1e-5)
        np.testing.assert_allclose(np.linalg.norm(corners[:, 0] - corners[:, 1], axis=1), d.rboxes[:, 3], rtol=1e-5)
