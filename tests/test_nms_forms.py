"""HailoRT's NMS output forms beyond HAILO_NMS_BY_CLASS (issue 14, item 2): HAILO_NMS_BY_SCORE and
the yolov8_bbox_only op's output, read and written. Expected buffers are built here with
struct.pack from hailort.h's description (uint16 count, then packed records {float32 y_min,
x_min, y_max, x_max, score; uint16 class_id}), and expected detections come from the independent
NumPy reference (reference_decoder.py), not from the code under test."""

from __future__ import annotations

import struct
from types import SimpleNamespace

import numpy as np
import pytest

import hailo_decode as hd
import hef_writer as w
import random_cases as rc
import reference_decoder as ref
from hailo_decode.formats import bbox_only, by_class, by_score
from hailo_decode.hef import hef_nms_output
from test_against_reference import to_arrays, to_config

# Three detections, score order, a tie, a class id above 255.
DETS = [((0.1, 0.2, 0.3, 0.4), 0.9, 3), ((0.0, 0.0, 1.0, 1.0), 0.5, 300), ((0.25, 0.5, 0.75, 0.95), 0.5, 0)]


def by_score_bytes(dets, max_total, *, count=None):
    """The HAILO_NMS_BY_SCORE frame as hailort.h describes it, zero-padded to 2 + 22 x max_total."""
    body = b"".join(struct.pack("<5fH", *box, score, cls) for box, score, cls in dets)
    frame = struct.pack("<H", len(dets) if count is None else count) + body
    return frame + b"\0" * (2 + 22 * max_total - len(frame))


def test_record_layout():
    assert by_score.RECORD.itemsize == 22 and struct.calcsize("<5fH") == 22
    assert by_score.buffer_size(0) == 2 and by_score.buffer_size(8000) == 176_002
    with pytest.raises(ValueError, match="65535"):
        by_score.buffer_size(65536)


def test_by_score_reads_a_buffer_built_from_the_header():
    buf = np.frombuffer(by_score_bytes(DETS, 5), np.uint8)
    det = hd.decode_hailo_nms(buf, format="by_score", num_classes=400, image_size=(480, 640))
    assert isinstance(det, hd.Detections) and len(det) == 3
    np.testing.assert_array_equal(det.boxes, np.array([d[0] for d in DETS], np.float32))
    np.testing.assert_array_equal(det.scores, np.float32([0.9, 0.5, 0.5]))
    assert det.class_ids.tolist() == [3, 300, 0]  # the frame's order, ties as written
    px = hd.decode_hailo_nms(bytes(buf), format="by_score", image_size=(480, 640), box_format="xyxy_pixels")
    np.testing.assert_allclose(px.boxes[0], [0.2 * 640, 0.1 * 480, 0.4 * 640, 0.3 * 480], rtol=1e-6)
    # A batch (2-D) and pyhailort's list of Detection objects give the same.
    batch = hd.decode_hailo_nms(np.stack([buf, buf]), format="by_score")
    assert len(batch) == 2 and batch[1].class_ids.tolist() == [3, 300, 0]
    objs = [SimpleNamespace(y_min=b[0], x_min=b[1], y_max=b[2], x_max=b[3], score=s, class_id=c) for b, s, c in DETS]
    from_objs = hd.decode_hailo_nms(objs, format="by_score")
    np.testing.assert_array_equal(from_objs.boxes, det.boxes)
    assert from_objs.class_ids.tolist() == [3, 300, 0]
    assert len(hd.decode_hailo_nms([objs, objs[:1]], format="by_score")[1]) == 1
    assert len(hd.decode_hailo_nms(objs, format="by_score", max_bboxes_total=1)) == 1  # found by the fuzzer
    with pytest.raises(ValueError, match="class id 300"):
        hd.decode_hailo_nms(buf, format="by_score", num_classes=80)


def test_a_normalized_box_that_overflows_in_pixels_is_refused():
    """Found by the fuzzer (by_score_input, run 25): a finite but absurd normalized value (3.4e38,
    a corrupt record) times the image size is inf in float32; the reader names the detection
    instead of handing out an infinite box. In normalized form the same record reads as written."""
    dets = [((0.1, 0.2, 0.3, 0.4), 0.9, 3), ((0.28, 0.92, 3.4e38, 0.33), 0.6, 4)]
    buf = np.frombuffer(by_score_bytes(dets, 3), np.uint8)
    with pytest.raises(ValueError, match=r"detection 1: .*not finite in xyxy_pixels for image_size \(480, 640\)"):
        hd.decode_hailo_nms(buf, format="by_score", image_size=(480, 640), box_format="xyxy_pixels")
    d = hd.decode_hailo_nms(buf, format="by_score", image_size=(480, 640))
    assert d.boxes[1, 2] == np.float32(3.4e38)
    rows = [np.zeros((0, 5), np.float32)] * 4 + [np.float32([[0.28, 0.92, 3.4e38, 0.33, 0.6]])]
    with pytest.raises(ValueError, match="detection 0: .*not finite in yxyx_pixels"):
        hd.decode_hailo_nms(rows, format="by_class", image_size=(480, 640), box_format="yxyx_pixels")


def test_by_score_writer_bytes_equal_the_header_layout():
    boxes = np.array([d[0] for d in DETS], np.float32)
    det = hd.Detections(boxes, [d[1] for d in DETS], [d[2] for d in DETS], num_classes=400, max_per_class=100)
    out = det.to_hailo_nms_by_score_buffer(max_bboxes_total=5)
    assert out.dtype == np.uint8 and out.shape == (2 + 22 * 5,)
    assert out.tobytes() == by_score_bytes(DETS, 5)
    # default total: classes x max_per_class, HailoRT's
    assert det.to_hailo_nms_by_score_buffer().size == 2 + 22 * 400 * 100
    # no per-class cap: three boxes of one class all go in
    same = hd.Detections(boxes, [0.9, 0.8, 0.7], [1, 1, 1], num_classes=2, max_per_class=1)
    assert np.frombuffer(same.to_hailo_nms_by_score_buffer().tobytes()[:2], "<u2")[0] == 2  # total 2 x 1 = 2
    assert np.frombuffer(same.to_hailo_nms_by_score_buffer(max_bboxes_total=3).tobytes()[:2], "<u2")[0] == 3
    # more detections than the total: the first ones, a count that says so, nothing past the frame
    guard = np.full(2 + 22 * 2 + 22, 0xAB, np.uint8)
    det.to_hailo_nms_by_score_buffer(guard[:2 + 22 * 2], max_bboxes_total=2)
    assert guard[:2 + 44].tobytes() == by_score_bytes(DETS[:2], 2) and (guard[2 + 44:] == 0xAB).all()
    # round trip
    back = hd.decode_hailo_nms(out, format="by_score")
    np.testing.assert_array_equal(back.boxes, det.boxes)
    assert back.class_ids.tolist() == det.class_ids.tolist()
    # unsorted user detections are sorted (stably) first
    shuffled = hd.Detections(boxes[::-1], [0.5, 0.5, 0.9], [0, 300, 3])
    assert shuffled.to_hailo_nms_by_score_buffer(max_bboxes_total=5).tobytes() == by_score_bytes(
        [DETS[0], DETS[2], DETS[1]], 5)
    with pytest.raises(TypeError, match="uint8"):
        det.to_hailo_nms_by_score_buffer(np.zeros(200, np.float32), max_bboxes_total=5)
    with pytest.raises(ValueError, match="needs 112"):
        det.to_hailo_nms_by_score_buffer(np.zeros(111, np.uint8), max_bboxes_total=5)
    with pytest.raises(ValueError, match="65535"):
        hd.Detections(boxes[:1], [0.5], [70000]).to_hailo_nms_by_score_buffer(max_bboxes_total=5)


def test_by_score_reader_never_reads_past_the_buffer():
    frame = by_score_bytes(DETS, 3)  # exactly three records
    # HailoRT 4.23's overflow: count 4 in a 3-record frame (its 4th record went past the end).
    det = hd.decode_hailo_nms(np.frombuffer(by_score_bytes(DETS, 3, count=4), np.uint8), format="by_score")
    assert len(det) == 3
    # A frame inside a larger buffer whose following bytes look like a record: max_bboxes_total
    # bounds the read, so the 4th "record" is never seen.
    extra = by_score_bytes(DETS, 3, count=4) + struct.pack("<5fH", 0.5, 0.5, 0.6, 0.6, 0.99, 7)
    assert len(hd.decode_hailo_nms(np.frombuffer(extra, np.uint8), format="by_score", max_bboxes_total=3)) == 3
    # A count far beyond what the bytes hold, and truncated frames: a clear error, no read.
    for bad, match in [(by_score_bytes(DETS, 3, count=1000), "claims 1000 detections"),
                       (frame[:1], "shorter than its 2-byte count"), (b"", "shorter"),
                       (frame[:2 + 22 * 2 + 5], "claims 3 detections")]:
        with pytest.raises(ValueError, match=match):
            hd.decode_hailo_nms(np.frombuffer(bad, np.uint8), format="by_score")
    # NaN in a record
    nan = by_score_bytes([((0.1, float("nan"), 0.3, 0.4), 0.9, 1)], 1)
    with pytest.raises(ValueError, match="record 0 holds a non-finite value"):
        hd.decode_hailo_nms(np.frombuffer(nan, np.uint8), format="by_score")
    with pytest.raises(TypeError, match="uint8"):
        hd.decode_hailo_nms(np.zeros(10, np.float32).view(np.uint16), format="by_score")
    with pytest.raises(TypeError, match="pass format=\"by_score\""):
        hd.decode_hailo_nms(np.frombuffer(frame, np.uint8), num_classes=3)


def _case(seed, **kw):
    rng = np.random.default_rng(seed)
    base = dict(dtype="uint8", layout="host", tie_break="hailort", multi_label=True, agnostic=False,
                max_candidates=None, normalized=True, box_order="yxyx", score_test=">=", iou_test=">=",
                max_per_class=None, max_total=None, activation="none", num_classes=3)
    base.update(kw)
    return rc.make_case(rng, **base)


@pytest.mark.parametrize("seed", range(6))
def test_decoder_by_score_equals_hailorts_bytes(seed):
    """Decoder.decode_to_hailo_nms(format="by_score") against HailoRT's op as its source reads:
    every NMS survivor (the reference's, HailoRT's std::sort order through the oracle), no
    per-class cap even though the config has one, the first max_bboxes_total written."""
    outputs, spec = _case(seed)
    rb, rs, rcls = ref.reference_decode(outputs, spec)
    cfg = to_config(spec).replace(max_per_class=1)  # BY_SCORE ignores it, as HailoRT does
    raw = to_arrays(cfg, outputs)
    dec = hd.Decoder(cfg)
    big = max(len(rs), 1)
    got = dec.decode_to_hailo_nms(raw, format="by_score", max_bboxes_total=big)
    assert got.dtype == np.uint8 and got.size == 2 + 22 * big
    # Parsed by hand: the reference's survivors in the reference's (std::sort) order; boxes to the
    # reference's float64-DFL precision.
    (count,) = struct.unpack_from("<H", got)
    recs = [struct.unpack_from("<5fH", got, 2 + 22 * i) for i in range(count)]
    assert count == len(rs) and [r[5] for r in recs] == rcls.tolist()
    np.testing.assert_array_equal(np.float32([r[4] for r in recs]), rs)
    np.testing.assert_allclose(np.float32([r[:4] for r in recs]).reshape(-1, 4), rb, atol=2e-6)
    # Byte for byte what HailoRT's loop writes for these same detections (every survivor, no
    # per-class cap), and with the default total (classes x max_per_class) only the first ones.
    every = hd.Decoder(cfg.replace(max_per_class=None))(raw)
    survivors = [(tuple(b), s, c) for b, s, c in zip(every.boxes.tolist(), every.scores.tolist(), every.class_ids.tolist())]
    assert got.tobytes() == by_score_bytes(survivors, big)
    total = cfg.num_classes * 1
    assert dec.decode_to_hailo_nms(raw, format="by_score").tobytes() == by_score_bytes(survivors[:total], total)
    # the by-class buffer of the same decoder still caps per class
    assert dec.decode_to_hailo_nms(raw).dtype == np.float32
    # batches: (N, bytes)
    batch = {k: np.stack([v, v]) for k, v in raw.items()}
    out = np.zeros((2, 2 + 22 * big), np.uint8)
    assert dec.decode_to_hailo_nms(batch, out, format="by_score", max_bboxes_total=big) is out
    assert out[1].tobytes() == by_score_bytes(survivors, big)
    with pytest.raises(ValueError, match="written for YOLOv5 heads"):  # (the yolov5_bbox_only op's array)
        dec.decode_to_hailo_nms(raw, format="bbox_only")


def _bbox_only_output(outputs, spec):
    """The yolov8_bbox_only tensor (1, proposals, 4 + classes) of a reference case, built as the
    op builds it: heads in order, rows, columns; the NMS op's box decode (normalized yxyx); the
    dequantized class values."""
    rows = []
    H, W = spec["image_size"]
    for h in spec["heads"]:
        box = ref.logical_float(outputs[h["box"]], spec["outputs"][h["box"]])
        cls = ref.logical_float(outputs[h["cls"]], spec["outputs"][h["cls"]])
        xyxy = ref.cell_boxes(ref.dfl_distances(box), h["stride"])
        norm = xyxy / np.array([W, H, W, H], np.float32)
        yxyx = norm[..., [1, 0, 3, 2]].reshape(-1, 4)
        rows.append(np.concatenate([yxyx, cls.reshape(-1, cls.shape[-1])], axis=1))
    return np.concatenate(rows).astype(np.float32)[None]


@pytest.mark.parametrize("seed", range(6))
def test_bbox_only_gives_the_detections_the_nms_op_would(seed):
    outputs, spec = _case(seed + 100, max_per_class=RANDOM_CAP[seed % 3])
    rb, rs, rcls = ref.reference_decode(outputs, spec)
    out = _bbox_only_output(outputs, spec)
    th = spec["score_threshold"]
    det = hd.decode_hailo_nms(out, format="bbox_only", score_threshold=th if np.ndim(th) == 0 else list(th),
                              iou_threshold=spec["iou_threshold"], max_per_class=spec["max_per_class"],
                              image_size=tuple(spec["image_size"]))
    np.testing.assert_allclose(det.boxes, rb, atol=2e-6)
    np.testing.assert_array_equal(det.scores, rs)
    assert det.class_ids.tolist() == rcls.tolist()
    # and the same as the raw path's Decoder on the heads
    cfg = to_config(spec)
    raw_det = hd.Decoder(cfg)(to_arrays(cfg, outputs))
    assert raw_det.class_ids.tolist() == det.class_ids.tolist()
    # split: the boxes and scores, no NMS
    boxes, scores = bbox_only.split(bbox_only.rows(out))
    assert boxes.shape == (out.shape[1], 4) and scores.shape == (out.shape[1], cfg.num_classes)


RANDOM_CAP = (None, 1, 2)


def test_bbox_only_hand_made_rows():
    # The C++ unit test's three rows: A and B overlap (IoU 0.9), C apart. Kept: A0, B1, C1.
    out = np.array([[[0.1, 0.1, 0.5, 0.5, 0.9, 0.3], [0.1, 0.1, 0.5, 0.46, 0.8, 0.85],
                     [0.6, 0.6, 0.9, 0.9, 0.1, 0.5]]], np.float32)
    det = hd.decode_hailo_nms(out, format="bbox_only")
    assert det.class_ids.tolist() == [0, 1, 1] and det.scores.tolist() == [np.float32(0.9), np.float32(0.85), 0.5]
    assert det.num_classes == 2
    # ultralytics preset: best class, > 0.25 on sigmoid(x): the values are taken as logits
    ul = hd.decode_hailo_nms(out, format="bbox_only", semantics="ultralytics")
    assert len(ul) >= 1
    # flat needs num_classes; a batch (N, 1, proposals, 6)
    assert len(hd.decode_hailo_nms(out.reshape(-1), format="bbox_only", num_classes=2)) == 3
    batch = hd.decode_hailo_nms(np.stack([out[:, :1], out[:, 2:]]), format="bbox_only")
    assert [len(d) for d in batch] == [2, 1]  # A0 and A1; C1
    bad = out.copy()
    bad[0, 1, 2] = np.nan
    with pytest.raises(ValueError, match="non-finite value nan at proposal 1, column 2"):
        hd.decode_hailo_nms(bad, format="bbox_only")
    with pytest.raises(TypeError, match="float32"):
        hd.decode_hailo_nms(out.astype(np.float64), format="bbox_only")
    with pytest.raises(ValueError, match="needs num_classes"):
        hd.decode_hailo_nms(out.reshape(-1), format="bbox_only")
    with pytest.raises(ValueError, match="rows of 4 \\+ 3"):
        hd.decode_hailo_nms(out, format="bbox_only", num_classes=3)
    with pytest.raises(TypeError, match="apply to format=\"bbox_only\" only"):
        hd.decode_hailo_nms(np.zeros(10, np.float32), num_classes=2, score_threshold=0.3)
    with pytest.raises(ValueError, match="format must be one of"):
        hd.decode_hailo_nms(out, format="nms")


def test_hef_nms_output_reads_each_form():
    bbox = hef_nms_output(w.yolov8_hef(1, classes=2, bbox_decoding_only=True, score_th=0.6))
    assert bbox.form == "bbox_only" and bbox.formats == ("bbox_only",) and bbox.proposals == 8400
    out = np.zeros((1, 8400, 6), np.float32)
    out[0, 0] = [0.1, 0.1, 0.5, 0.5, 0.7, 0.55]  # class 1 under the HEF's 0.6
    det = bbox.decode(out)
    assert det.class_ids.tolist() == [0] and det.image_size == (640, 640)
    nms = hef_nms_output(w.yolov8_hef(1, classes=4, max_per_class=7))
    assert nms.form == "by_class" and nms.formats == ("by_class", "by_score") and nms.max_bboxes_total == 28
    frame = np.frombuffer(by_score_bytes(DETS[:1], 28), np.uint8)
    assert nms.decode(frame, format="by_score").class_ids.tolist() == [3]
    flat = hd.Detections(np.array([DETS[0][0]], np.float32), [0.9], [3], num_classes=4).to_hailo_nms_buffer(max_per_class=7)
    assert nms.decode(flat).class_ids.tolist() == [3]
    with pytest.raises(ValueError, match=r"frame of 2004 float32 values does not fit num_classes=4, max_per_class=7"):
        nms.decode(np.zeros(4 * (1 + 5 * 100), np.float32))  # HailoRT's usual 100 a class: not this HEF's frame
    with pytest.raises(ValueError, match="not 'bbox_only'"):
        nms.decode(out, format="bbox_only")
    with pytest.raises(ValueError, match="no YOLOv8 NMS op"):
        hef_nms_output(w.yolov8_hef(1, classes=4, nms=False))


def test_by_class_functions_are_pure_arrays():
    boxes = np.array([[0.1, 0.1, 0.2, 0.2], [0.3, 0.3, 0.4, 0.4]], np.float32)
    flat = by_class.pack(boxes, np.float32([0.9, 0.8]), np.int32([1, 1]), 2, 3)
    assert flat.size == by_class.buffer_size(2, 3) == 2 * 16
    expected = np.zeros(32, np.float32)
    expected[0], expected[1] = 0, 2  # class 0: none; class 1: two boxes
    expected[2:7] = [0.1, 0.1, 0.2, 0.2, 0.9]
    expected[7:12] = [0.3, 0.3, 0.4, 0.4, 0.8]
    np.testing.assert_array_equal(flat, expected)
    rows = by_class.flat_to_rows(flat, 2)
    assert rows[0].shape == (0, 5) and rows[1].shape == (2, 5)
    assert by_class.flat_to_pyhailort(flat, 2)[0].dtype == np.float64
    tf = by_class.flat_to_tf(flat, 2, 3)
    assert tf.shape == (2, 5, 3) and [len(r) for r in by_class.tf_to_rows(tf)] == [0, 2]
    b, s, c = by_class.rows_to_arrays(rows)
    assert c.tolist() == [1, 1] and s.tolist() == [np.float32(0.9), np.float32(0.8)]
