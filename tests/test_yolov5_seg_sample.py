"""The bundled YOLOv5-seg sample (data/yolov5seg_uint8.npz: a COCO-trained YOLOv5s-seg's real uint8
outputs on a photograph, laid out as a Model Zoo YOLOv5-seg HEF's) against references that are not
the code under test:

- ultralytics preset: YOLOv5's own segment predict (the yolov5 package's non_max_suppression with
  32 mask coefficients and process_mask), run on the same uint8 tensors by
  scripts/make_yolov5_seg_sample.py and stored in tests/fixtures/yolov5_seg_yolov5s.npz;
- hailort preset: the NumPy transliteration of HailoRT 4.23's and 5.2's yolov5_seg op (hailort_seg_op.py),
  byte for byte, on the sample's tensors.
"""

from __future__ import annotations

import hashlib
import json
import re
from importlib import resources
from pathlib import Path

import numpy as np
import pytest

import hailo_decode as hd
from hailo_decode.demo_data import YOLOV5_SEG_KEYS, load_yolov5_seg_demo, yolov5_seg_demo_config, yolov5_seg_demo_frames
from hailort_anchor_ops import deq
from hailort_seg_op import yolov5_seg_op
from seg_reference import process_mask_yolov5

FIXTURE = Path(__file__).parent / "fixtures" / "yolov5_seg_yolov5s.npz"
REF_SETS = {"": 0.25, "lo_": 0.05}  # the fixture's key prefix: YOLOv5's conf
MODEL_ZOO_ANCHORS = [[[10, 13], [16, 30], [33, 23]], [[30, 61], [62, 45], [59, 119]], [[116, 90], [156, 198], [373, 326]]]


@pytest.fixture(scope="module")
def sample():
    return load_yolov5_seg_demo()


@pytest.fixture(scope="module")
def ref():
    with np.load(FIXTURE) as z:
        return {k: z[k] for k in z.files}


def _frame(sample):
    return {k: v[0] for k, v in yolov5_seg_demo_frames(sample).items()}


def _masks(ref, key, n):
    return np.unpackbits(ref[key], axis=-1)[..., :n].astype(bool)


def test_the_sample_is_laid_out_as_a_model_zoo_yolov5_seg_hef(sample, ref):
    cfg = yolov5_seg_demo_config(sample)
    assert cfg.head_kind == "yolov5" and cfg.task == "segment" and cfg.num_classes == 80
    shapes = {o.name.split("/")[1]: (o.shape, o.dtype) for o in cfg.outputs}
    assert shapes == {"conv48": ((40, 40, 351), "uint8"), "conv55": ((20, 20, 351), "uint8"),
                      "conv61": ((10, 10, 351), "uint8"), "conv63": ((80, 80, 32), "uint8")}
    assert cfg.proto == "yolov5s_seg/conv63" and sample["anchors"].tolist() == MODEL_ZOO_ANCHORS
    # The fixture's expectations were made from exactly this file, by the weights it names.
    meta = json.loads(str(ref["meta"]))
    data = resources.files("hailo_decode").joinpath("data/yolov5seg_uint8.npz").read_bytes()
    assert meta["sample_sha256"] == hashlib.sha256(data).hexdigest()
    assert meta["weights"]["sha256"] == "78558867515e9d9654c52ed87c40c22d90a983bea63450c611cbd8c2b13e3aa2"
    assert meta["weights"]["head"] == "Segment" and meta["weights"]["nm"] == 32
    # The tensors are real: every channel kind varies, the prototype is not constant.
    for k in YOLOV5_SEG_KEYS + ("conv63",):
        assert np.unique(sample[k]).size > 100, k


def _tied(ref, q, i, box, cls):
    """Row i of YOLOv5's result may be either of two candidates of its class with the same score
    (torch's argsort is not stable: which one it sorts first is not defined). The index of the
    candidate whose box is `box`, if the reference's own row ties with it."""
    same = np.flatnonzero((ref[q + "r0_cand_scores"] == ref[q + "r0_scores"][i]) & (ref[q + "r0_cand_classes"] == cls))
    for j in same:
        if np.allclose(ref[q + "r0_cand_boxes"][j], box, rtol=0, atol=1e-4):
            return int(j)
    return None


@pytest.mark.parametrize("prefix", list(REF_SETS))
def test_ultralytics_preset_is_yolov5s_own_segment_predict_on_the_sample(sample, ref, prefix):
    """Rows: YOLOv5's own NMS (its order, boxes, scores, classes); masks: YOLOv5's own
    process_mask of those rows (sigmoid, crop at the prototype grid, upsampled, > 0.5), pixel for
    pixel."""
    conf = REF_SETS[prefix]
    cfg = yolov5_seg_demo_config(sample, semantics="ultralytics", score_threshold=conf, iou_threshold=0.45)
    got = hd.Decoder(cfg)(_frame(sample))
    q = f"q_{prefix}"
    boxes, scores, classes = ref[q + "r0_boxes"], ref[q + "r0_scores"], ref[q + "r0_classes"]
    assert len(got) == len(scores) >= (4 if conf == 0.25 else 12)
    np.testing.assert_array_equal(got.class_ids, classes)
    np.testing.assert_allclose(got.scores, scores, rtol=3e-7, atol=0)  # torch's sigmoid: an ulp either way
    masks = got.masks
    v5 = _masks(ref, q + "r0_masks_v5", 320)
    proto = deq(sample["conv63"][0], float(sample["zp_conv63"]), float(sample["scale_conv63"]))
    ties = 0
    for i in range(len(got)):
        if np.allclose(got.boxes[i], boxes[i], rtol=0, atol=1e-4):
            want = v5[i]
        else:  # the other of two equal scores: its box, and its mask from that candidate's coefficients
            j = _tied(ref, q, i, got.boxes[i], classes[i])
            assert j is not None, (i, got.boxes[i], boxes[i])
            ties += 1
            want = process_mask_yolov5(proto, ref[q + "r0_cand_coefs"][j:j + 1], ref[q + "r0_cand_boxes"][j:j + 1],
                                       (320, 320))[0]
        assert np.array_equal(masks[i], want), (i, (masks[i] != want).sum())
    assert ties == (1 if conf == 0.25 else 0)  # the bus: two candidates score 0.813672 (measured)


def test_the_masks_are_not_ultralytics_process_mask(sample, ref):
    """What the preset no longer computes for YOLOv5-seg: Ultralytics 8.4's process_mask (logits
    upsampled, > 0, cropped at the input size), stored beside YOLOv5's masks: the two differ on
    every object of the sample (the rows the decoder keeps are YOLOv5's)."""
    cfg = yolov5_seg_demo_config(sample, semantics="ultralytics", score_threshold=0.25, iou_threshold=0.45)
    got = hd.Decoder(cfg)(_frame(sample))
    u8, boxes = _masks(ref, "q_r0_masks_u8", 320), ref["q_r0_boxes"]
    same_box = [i for i in range(len(got)) if np.allclose(got.boxes[i], boxes[i], rtol=0, atol=1e-4)]
    assert len(same_box) == 3 and all((got.masks[i] != u8[i]).sum() > 50 for i in same_box)  # measured 91 .. 173


def _op_frame(sample, dec, *, th, iou, max_total, budget, mask_threshold=0.5, version="4.23"):
    frame = _frame(sample)
    names = [f"yolov5s_seg/{k}" for k in YOLOV5_SEG_KEYS]
    size = hd.formats.byte_mask.byte_mask_frame_size(max_total, budget, hailort_version=version)
    out = np.zeros(size, np.uint8)
    dec.decode_to_hailo_nms(frame, out, format="byte_mask", max_bboxes_total=max_total, mask_budget=budget,
                            mask_threshold=mask_threshold, hailort_version=version)
    want, facts = yolov5_seg_op(
        {n: frame[n] for n in names}, {n: (float(sample[f"zp_{k}"]), float(sample[f"scale_{k}"]))
                                       for n, k in zip(names, YOLOV5_SEG_KEYS)},
        {n: [tuple(int(v) for v in a) for a in sample["anchors"][i]] for i, n in enumerate(names)},
        frame["yolov5s_seg/conv63"], (float(sample["zp_conv63"]), float(sample["scale_conv63"])), num_classes=80,
        score_th=th, iou_th=iou, max_total=max_total, mask_threshold=mask_threshold, image_hw=(320, 320),
        buffer_size=size, buffer_address=out.ctypes.data,
        version=version)
    return out, want, facts


@pytest.mark.parametrize("th, max_total, budget, what", [
    (0.25, 100, 2 * 320 * 320, "all"),
    (0.05, 100, 4 * 320 * 320, "all"),
    (0.05, 3, 4 * 320 * 320, "count"),        # the count at max_bboxes_total
    (0.25, 100, 30_000, "overflow"),          # the masks overflow the budget (the bus's is 33k bytes)
])
@pytest.mark.parametrize("version", ["4.23", "5.2"])
def test_hailort_byte_mask_frame_is_the_yolov5_seg_ops_on_the_sample(sample, th, max_total, budget, what, version):
    cfg = yolov5_seg_demo_config(sample, score_threshold=th, iou_threshold=0.45)
    got, want, facts = _op_frame(sample, hd.Decoder(cfg), th=float(np.float32(th)), iou=0.45, max_total=max_total,
                                 budget=budget, version=version)
    if what == "all":
        assert facts["records"] == facts["kept"] >= (4 if th == 0.25 else 12), facts
    elif what == "count":
        assert facts["kept"] > 3 and facts["records"] == 3 and facts["count"] == 4, facts
    else:
        assert 0 < facts["records"] < facts["kept"] and facts["count"] == facts["records"] + 1, facts
    if not np.array_equal(got, want):
        diff = np.flatnonzero(got != want)
        raise AssertionError(f"{diff.size} bytes differ, first at {diff[:10].tolist()}")


def test_hailort_preset_finds_yolov5s_objects(sample, ref):
    """HailoRT's op and YOLOv5 filter differently, but on this frame they find the same four
    objects at 0.25; the op's masks (sigmoid > 0.5 at the input size) match YOLOv5's closely."""
    cfg = yolov5_seg_demo_config(sample, score_threshold=0.25, iou_threshold=0.45)
    got = hd.Decoder(cfg)(_frame(sample))
    boxes, classes = ref["q_r0_boxes"], ref["q_r0_classes"]
    assert sorted(got.class_ids.tolist()) == sorted(classes.tolist())
    px = got.boxes_as("xyxy_pixels")
    for box, cls in zip(px, got.class_ids):
        x1, y1 = np.maximum(box[:2], boxes[:, :2]).T
        x2, y2 = np.minimum(box[2:], boxes[:, 2:]).T
        inter = np.clip(x2 - x1, 0, None) * np.clip(y2 - y1, 0, None)
        iou = inter / ((box[2] - box[0]) * (box[3] - box[1]) + np.prod(boxes[:, 2:] - boxes[:, :2], 1) - inter)
        assert iou[classes == cls].max() > 0.95  # the bus: the other of its two tied candidates (IoU 0.963)


def test_demo_task_seg_shows_the_yolov5_seg_family(capsys, sample):
    from hailo_decode.cli import main
    assert main(["demo", "--task", "seg", "--seconds", "0.05"]) == 0
    out = capsys.readouterr().out
    part = out[out.index("YOLOv5-seg:"):]
    assert "(40, 40, 351)" in part and "(80, 80, 32)" in part
    n = re.search(r"^frame 0: ultralytics/assets/bus.jpg \(810x1080\): (\d+) detection\(s\)", part, flags=re.M)
    assert n and int(n.group(1)) == len(sample["ref25_scores"]) == 4
    ious = [float(v) for v in re.findall(r"IoU ([01]\.\d+) with YOLOv5's own mask of that object", part)]
    assert len(ious) == 4 and min(ious) >= 0.92  # measured 0.930 .. 0.989 (uint8 vs float heads, and the masks' rule)
    assert re.search(r"HAILO_NMS_WITH_BYTE_MASK frame .*: \d+ bytes, 4 record\(s\)", part)
    assert re.search(r"the byte-mask frame \d+ us", part)
