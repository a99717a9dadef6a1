"""`hailo-decode eval`: recorded raw outputs scored against COCO ground truth. The ground truth is
the model's own detections on the same photographs (tests/fixtures), so the score is what the
bundled uint8 quantization costs; the CLI must give what the API gives, whatever the frame order."""

from __future__ import annotations

import json

import numpy as np
import pytest

import hailo_decode as hd
from hailo_decode import interop
from hailo_decode.cli import main
from hailo_decode.cli.eval import category_map

from conftest import demo_config, optional_package, uint8_frames
from test_interop_coco import _ground_truth_from_model

optional_package("pycocotools")


@pytest.fixture
def recording(tmp_path, uint8_data, float_data):
    gt = tmp_path / "gt.json"
    gt.write_text(json.dumps(_ground_truth_from_model(float_data, "ref25")))
    frames = tmp_path / "rec.npz"
    order = [3, 0, 4, 1, 2]  # recorded in another order than the ground truth's image ids
    np.savez(frames, image_ids=np.array([i + 1 for i in order]),
             **{k: v[order] for k, v in uint8_frames(uint8_data).items()})
    return frames, gt


def _api_stats(uint8_data, float_data):
    dets = hd.Decoder(demo_config(uint8_data, semantics="ultralytics", score_threshold=0.25, iou_threshold=0.7))(
        uint8_frames(uint8_data))
    pairs = [(i + 1, d.to_original(tuple(int(v) for v in uint8_data["orig_hw"][i]))) for i, d in enumerate(dets)]
    return interop.evaluate_coco(pairs, _ground_truth_from_model(float_data, "ref25"), category_ids=[1, 2])


def test_eval_scores_the_recording(recording, uint8_data, float_data, tmp_path, capsys):
    frames, gt = recording
    out = tmp_path / "stats.json"
    rc = main(["eval", "--demo-model", "--frames", str(frames), "--gt", str(gt), "--semantics", "ultralytics",
               "--threshold", "0.25", "--iou", "0.7", "--batch", "2", "--json", str(out)])
    assert rc == 0
    text = capsys.readouterr().out
    assert "5 frames" in text and "Average Precision" in text and "mAP@[.5:.95]" in text
    got = json.loads(out.read_text())
    assert got["frames"] == 5 and got["semantics"] == "ultralytics"
    expected = _api_stats(uint8_data, float_data)
    assert got["stats"] == pytest.approx(expected)
    assert 0.9 < got["stats"]["AP"] < 1.0 and got["stats"]["AP50"] == pytest.approx(1.0)


def test_eval_errors(recording, tmp_path, capsys):
    frames, gt = recording
    no_ids = tmp_path / "no_ids.npz"
    with np.load(frames) as z:
        np.savez(no_ids, **{k: z[k] for k in z.files if k != "image_ids"})
    assert main(["eval", "--demo-model", "--frames", str(no_ids), "--gt", str(gt)]) == 2
    assert "no 'image_ids'" in capsys.readouterr().err
    partial = tmp_path / "partial.npz"
    with np.load(frames) as z:
        np.savez(partial, **{k: z[k] for k in z.files if k != "fall/cls_16"})
    assert main(["eval", "--demo-model", "--frames", str(partial), "--gt", str(gt)]) == 2
    assert "fall/cls_16" in capsys.readouterr().err
    other = json.loads(gt.read_text())
    other["images"] = other["images"][:2]
    (tmp_path / "small.json").write_text(json.dumps(other))
    assert main(["eval", "--demo-model", "--frames", str(frames), "--gt", str(tmp_path / "small.json")]) == 2
    assert "not in" in capsys.readouterr().err


def test_category_map():
    assert category_map("auto", 80, interop.COCO80_TO_COCO91) == interop.COCO80_TO_COCO91
    assert category_map("auto", 2, [2, 1]) == [1, 2]
    assert category_map("auto", 2, [0, 1]) is None
    with pytest.raises(ValueError, match="--category-ids"):
        category_map("auto", 2, [5, 9])
    with pytest.raises(ValueError, match="80-class"):
        category_map("coco80", 2, [1, 2])


def test_eval_from_a_hef(tmp_path, capsys):
    """The --hef route on a HEF from the test writer (six raw outputs in FCR/F8CR/NHCW, uint8 and
    uint16, per-feature quantization, names with '/'): the ground truth is the decoder's own
    output undone to 640x480 images, so a perfect score says the recording, the names, the
    letterbox and the COCO80 category map all line up; a higher threshold then loses objects."""
    import hef_writer as w

    hef = tmp_path / "yolov8n.hef"
    hef.write_bytes(w.yolov8_hef(1))
    cfg = hd.DecoderConfig.from_hef(str(hef))
    rng = np.random.default_rng(7)
    n = 3
    rec = {}
    for o in cfg.outputs:
        top = np.iinfo(o.dtype).max
        if any(h.cls == o.name for h in cfg.heads):
            a = rng.integers(0, top // 50, size=(n,) + o.shape, dtype=o.dtype)
            a.reshape(n, -1)[:, rng.integers(0, a[0].size, 4)] = top  # a few confident cells a frame
        else:
            a = rng.integers(0, top, size=(n,) + o.shape, dtype=o.dtype)
        rec[o.name] = a
    dets = hd.Decoder(cfg)(rec)
    images, anns = [], []
    for i, d in enumerate(dets):
        images.append({"id": 100 + i, "height": 480, "width": 640})
        for r in d.to_original((480, 640)).to_coco(100 + i, interop.COCO80_TO_COCO91):
            anns.append({"id": len(anns) + 1, "image_id": r["image_id"], "category_id": r["category_id"],
                         "bbox": r["bbox"], "area": r["bbox"][2] * r["bbox"][3], "iscrowd": 0})
    assert len(anns) >= n
    gt = tmp_path / "gt.json"
    gt.write_text(json.dumps({"images": images, "annotations": anns,
                              "categories": [{"id": c, "name": str(c)} for c in interop.COCO80_TO_COCO91]}))
    frames = tmp_path / "rec.npz"
    np.savez(frames, image_ids=np.arange(100, 100 + n), **rec)
    out = tmp_path / "stats.json"
    assert main(["eval", "--hef", str(hef), "--frames", str(frames), "--gt", str(gt), "--json", str(out)]) == 0
    assert json.loads(out.read_text())["stats"]["AP"] == pytest.approx(1.0)
    scores = sorted(float(s) for d in dets for s in d.scores)
    cut = scores[len(scores) // 2]  # drop the weaker half
    assert main(["eval", "--hef", str(hef), "--frames", str(frames), "--gt", str(gt), "--json", str(out),
                 "--threshold", str(min(cut + 1e-6, 1.0))]) == 0
    stats = json.loads(out.read_text())["stats"]
    assert stats["AR100"] < 1.0
    capsys.readouterr()
