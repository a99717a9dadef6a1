"""Detections -> COCO results accepted by the real pycocotools, and COCOeval scores: perfect
detections give AP 1.0, a shifted box less, the bundled real frames against the model's own
detections (tests/fixtures/README.md) what quantization costs."""

from __future__ import annotations

import json
import re
import sys
from types import SimpleNamespace

import numpy as np
import pytest

import hailo_decode as hd
from hailo_decode import interop
from hailo_decode._install import install_hint

from conftest import (
    demo_config,
    float_config,
    float_frames,
    optional_package,
    reference_set,
    uint8_frames,
)

optional_package("pycocotools")
from pycocotools.coco import COCO  # noqa: E402


def _gt():
    """Two 100 x 80 images: image 1 holds a cat (category 17) and a dog (18), image 2 a cat."""
    anns = [(1, 17, [10, 20, 30, 40]), (1, 18, [50, 10, 40, 30]), (2, 17, [0, 0, 60, 50])]
    return {
        "images": [{"id": 1, "width": 100, "height": 80}, {"id": 2, "width": 100, "height": 80}],
        "categories": [{"id": 17, "name": "cat"}, {"id": 18, "name": "dog"}],
        "annotations": [{"id": k + 1, "image_id": im, "category_id": c, "bbox": b, "area": b[2] * b[3],
                         "iscrowd": 0} for k, (im, c, b) in enumerate(anns)],
    }


def _px(xyxy, scores, classes, **extra):
    return SimpleNamespace(boxes=np.array(xyxy, np.float32).reshape(-1, 4), scores=np.array(scores, np.float32),
                           class_ids=np.array(classes), box_format="xyxy_pixels", image_size=(80, 100), **extra)


# class 0 = cat (17), class 1 = dog (18)
CATS = [17, 18]
PERFECT = {1: _px([[10, 20, 40, 60], [50, 10, 90, 40]], [0.9, 0.8], [0, 1]), 2: _px([[0, 0, 60, 50]], [0.7], [0])}


def test_coco80_to_coco91():
    ids = interop.COCO80_TO_COCO91
    assert len(ids) == 80 and len(set(ids)) == 80
    assert ids[:12] == (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13)  # 12 (street sign) is unused
    assert ids[-1] == 90 and 83 not in ids and 84 in ids


def test_records_by_hand():
    d = hd.Detections(np.array([[0.1, 0.2, 0.5, 0.6]]), [0.875], [11], image_size=(480, 640))
    recs = d.to_coco(7, category_ids=interop.COCO80_TO_COCO91)
    assert recs == [{"image_id": 7, "category_id": 13, "bbox": [128.0, 48.0, 256.0, 192.0], "score": 0.875}]
    json.dumps(recs)  # plain JSON types
    assert interop.to_coco(d, 7)[0]["category_id"] == 11  # no mapping: the class id
    assert interop.to_coco(d, 7, category_ids={11: 5})[0]["category_id"] == 5


def test_record_errors():
    d = _px([[1, 2, 3, 4]], [0.5], [2])
    with pytest.raises(ValueError, match="class id 2 has no COCO category"):
        interop.to_coco(d, 1, category_ids=CATS)
    with pytest.raises(ValueError, match="class id 2 has no COCO category"):
        interop.to_coco(d, 1, category_ids={0: 1})
    with pytest.raises(TypeError, match="image_id"):
        interop.to_coco(d, 1.5)


def test_load_res_accepts_the_records():
    gt = COCO()
    gt.dataset = _gt()
    gt.createIndex()
    recs = []
    for image_id, d in PERFECT.items():
        recs += interop.to_coco(d, image_id, CATS)
    res = gt.loadRes(json.loads(json.dumps(recs)))
    assert len(res.getAnnIds()) == 3
    ann = res.loadAnns(res.getAnnIds(imgIds=[1], catIds=[18]))[0]
    assert ann["bbox"] == [50.0, 10.0, 40.0, 30.0] and ann["area"] == 1200.0


def test_perfect_detections_score_one():
    stats = interop.evaluate_coco(PERFECT, _gt(), category_ids=CATS)
    assert stats["AP"] == pytest.approx(1.0) and stats["AP50"] == pytest.approx(1.0)
    assert stats["AR100"] == pytest.approx(1.0)
    assert set(stats) == set(interop.COCO_STATS)


def test_a_shifted_box_scores_lower():
    # The dog moved right by 8 of its 40 pixels: IoU = 32*30 / (2*1200 - 960) = 2/3.
    shifted = {**PERFECT, 1: _px([[10, 20, 40, 60], [58, 10, 98, 40]], [0.9, 0.8], [0, 1])}
    stats = interop.evaluate_coco(shifted, _gt(), category_ids=CATS)
    assert stats["AP50"] == pytest.approx(1.0)  # IoU 2/3 still matches at 0.5
    assert stats["AP75"] == pytest.approx(0.5)  # the dog is missed there, the cat is not
    # per category: cat 1.0, dog matched at IoU thresholds 0.5..0.65 (4 of 10): AP = (1 + 0.4) / 2
    assert stats["AP"] == pytest.approx(0.7, abs=1e-6)


def test_missed_images_and_no_detections():
    # image 2 given with no detection: its cat counts as missed. Cat: precision 1 up to recall 0.5,
    # then nothing: 51 of COCO's 101 recall points (0, 0.01, .. 0.5); dog 1.0.
    stats = interop.evaluate_coco([(1, PERFECT[1]), (2, _px([], [], []))], _gt(), category_ids=CATS)
    assert stats["AP"] == pytest.approx((51 / 101 + 1) / 2, abs=1e-6)
    # scoring image 1 only leaves image 2 out
    assert interop.evaluate_coco({1: PERFECT[1]}, _gt(), category_ids=CATS)["AP"] == pytest.approx(1.0)
    # nothing detected anywhere: AP 0, not an error
    empty = interop.evaluate_coco({1: _px([], [], []), 2: _px([], [], [])}, _gt(), category_ids=CATS)
    assert empty["AP"] == 0.0


def test_evaluate_errors(tmp_path):
    with pytest.raises(ValueError, match="category_ids="):  # 0-based class ids against 17/18
        interop.evaluate_coco(PERFECT, _gt())
    with pytest.raises(ValueError, match=r"image ids \[3\]"):
        interop.evaluate_coco({3: PERFECT[2]}, _gt(), category_ids=CATS)
    with pytest.raises(ValueError, match="iou_type"):
        interop.evaluate_coco(PERFECT, _gt(), category_ids=CATS, iou_type="boxes")
    with pytest.raises(ValueError, match="needs detections with masks"):
        interop.evaluate_coco(PERFECT, _gt(), category_ids=CATS, iou_type="segm")
    with pytest.raises(ValueError, match="'annotations'"):
        interop.evaluate_coco(PERFECT, {"images": [], "categories": []})
    path = tmp_path / "gt.json"
    path.write_text(json.dumps(_gt()))
    assert interop.evaluate_coco(PERFECT, str(path), category_ids=CATS)["AP"] == pytest.approx(1.0)


def test_masks_score_segm():
    from pycocotools import mask as mask_utils

    def rect(x, y, w, h):
        m = np.zeros((80, 100), bool)
        m[y:y + h, x:x + w] = True
        return m

    gt = _gt()
    for a in gt["annotations"]:
        rle = mask_utils.encode(np.asfortranarray(rect(*a["bbox"]).astype(np.uint8)))
        a["segmentation"] = {"size": rle["size"], "counts": rle["counts"].decode()}
    masks1 = np.stack([rect(10, 20, 30, 40), rect(50, 10, 40, 30)])
    dets = {1: _px([[10, 20, 40, 60], [50, 10, 90, 40]], [0.9, 0.8], [0, 1], masks=masks1),
            2: _px([[0, 0, 60, 50]], [0.7], [0], masks=rect(0, 0, 60, 50)[None])}
    assert interop.evaluate_coco(dets, gt, category_ids=CATS, iou_type="segm")["AP"] == pytest.approx(1.0)
    # the dog's mask keeps 23 of its 40 columns: IoU 0.575 -> matched at thresholds 0.5 and 0.55
    half = masks1.copy()
    half[1, :, 73:] = False
    dets[1] = _px([[10, 20, 40, 60], [50, 10, 90, 40]], [0.9, 0.8], [0, 1], masks=half)
    assert interop.evaluate_coco(dets, gt, category_ids=CATS, iou_type="segm")["AP"] == pytest.approx(0.6, abs=1e-6)


def test_keypoints_in_records():
    k = np.array([[[12.5, 30.0, 1.0], [20.0, 40.0, 0.0]]], np.float32)
    rec = interop.to_coco(_px([[10, 20, 40, 60]], [0.9], [0], keypoints=k), 1, CATS)[0]
    assert rec["keypoints"] == [12.5, 30.0, 1.0, 20.0, 40.0, 0.0]


def _ground_truth_from_model(float_data, ref):
    """The model's own detections (its output0 with Ultralytics NMS) as COCO ground truth in
    original-image pixels: original = (input - pad) / gain, with the letterbox the fixture
    script recorded, clipped to the image (as Ultralytics' scale_boxes does)."""
    images, anns = [], []
    for i, (oh, ow) in enumerate(float_data["orig_hw"].tolist()):
        images.append({"id": i + 1, "height": oh, "width": ow})
        boxes, _, classes = reference_set(float_data, ref, i)
        pad = np.tile(float_data["pad_xy"][i], 2)
        orig = ((boxes - pad) / float_data["gain"][i]).clip(0, [ow, oh, ow, oh])
        for b, c in zip(orig.tolist(), classes.tolist()):
            w, h = b[2] - b[0], b[3] - b[1]
            anns.append({"id": len(anns) + 1, "image_id": i + 1, "category_id": c + 1, "bbox": [b[0], b[1], w, h],
                         "area": w * h, "iscrowd": 0})
    cats = [{"id": k + 1, "name": str(n)} for k, n in enumerate(float_data["class_names"])]
    return {"images": images, "annotations": anns, "categories": cats}


def _score(dets, data, gt):
    pairs = [(i + 1, d.to_original(tuple(int(v) for v in data["orig_hw"][i]))) for i, d in enumerate(dets)]
    return interop.evaluate_coco(pairs, gt, category_ids=[1, 2])


def test_real_frames_float_heads_reproduce_the_model(float_data):
    gt = _ground_truth_from_model(float_data, "ref25")
    assert len(gt["annotations"]) == 9
    dets = hd.Decoder(float_config(float_data, semantics="ultralytics", score_threshold=0.25, iou_threshold=0.7))(
        float_frames(float_data))
    stats = _score(dets, float_data, gt)
    assert stats["AP"] == pytest.approx(1.0) and stats["AR100"] == pytest.approx(1.0)


def test_real_frames_quantized_heads_cost_some_ap(float_data, uint8_data):
    gt = _ground_truth_from_model(float_data, "ref25")
    dets = hd.Decoder(demo_config(uint8_data, semantics="ultralytics", score_threshold=0.25, iou_threshold=0.7))(
        uint8_frames(uint8_data))
    stats = _score(dets, uint8_data, gt)
    assert stats["AP50"] == pytest.approx(1.0)  # every object found (README: IoU mostly > 0.95)
    assert 0.9 < stats["AP"] < 1.0  # but not every one at the strictest IoU thresholds (0.978 here)


def test_missing_pycocotools_names_the_extra(monkeypatch):
    for name in ("pycocotools", "pycocotools.coco", "pycocotools.cocoeval"):
        monkeypatch.setitem(sys.modules, name, None)
    with pytest.raises(ImportError, match=re.escape(install_hint("coco"))):
        interop.evaluate_coco(PERFECT, _gt(), category_ids=CATS)
