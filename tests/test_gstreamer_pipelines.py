"""The plugin inside real GStreamer 1.22 (tests/gstreamer: TAPPAS 5.1's own hailofilter and
hailooverlay, our hailonet stand-in attaching recorded outputs with HailoRT 4.23's tensor meta),
every task and form it decodes, read back through TAPPAS' `hailo` module by a hailo-apps style pad
probe and compared with the Python Decoder on the same recorded frames."""

from __future__ import annotations

import json
from pathlib import Path
from typing import List, Sequence, Tuple

import numpy as np
import pytest

import hailo_decode as hd
from gstreamer.harness import Gst, gst_session, inference, source, words, write_config
from hailo_decode.detections import rbox_corners
from tappas.plugin_host import Out, write_frames
from test_tappas_plugin import (EXAMPLES, STRIDES, _anchor_outputs, _demo, _labels, _python_frames, _yolo26_outputs,
                                _read_as_yolo_hailortpp, hd_coco)


@pytest.fixture(scope="module")
def gst(tmp_path_factory) -> Gst:
    return gst_session(tmp_path_factory)


def _run(gst: Gst, tmp: Path, outs: Sequence[Out], config, size: int = 640, function: str = "filter",
         hailonet_extra: str = "", overlay: bool = True) -> List[dict]:
    """The frames through stand-in hailonet ! hailofilter ! probe ! hailooverlay, one buffer a frame."""
    recording = write_frames(tmp / "recording", outs)
    cfg = write_config(tmp, config) if isinstance(config, dict) else config
    frames = outs[0].data.shape[0]
    pipeline = words(f"{source(frames, size, size)} !",
                     inference(gst, recording, cfg, function, hailonet_extra=f"width={size} height={size} {hailonet_extra}"),
                     "! identity name=probe !", "hailooverlay qos=false ! fakesink" if overlay else "fakesink")
    probed = gst.probe(pipeline, tmp)
    got = probed.frames
    assert len(got) == frames
    return probed.host_frames()


def _in_picture(d: hd.Detections) -> Tuple[np.ndarray, np.ndarray]:
    """The Decoder's boxes as the plugin hands them (issue #33's rule): [xmin, ymin, w, h] normalised
    to the picture, clipped to it; and which detections keep at least one pixel each way there, as
    hailooverlay sizes a mask, int(side x box side) (the others are dropped)."""
    b = np.clip(d.boxes_as("xyxy_normalized").astype(np.float32), 0, 1)
    w, h = b[:, 2] - b[:, 0], b[:, 3] - b[:, 1]
    H, W = d.image_size
    keep = (w * W >= 1) & (h * H >= 1)
    return np.stack([b[:, 0], b[:, 1], w, h], axis=1)[keep], keep


def _check_detections(frames: List[dict], expected: List[hd.Detections], labels: Sequence[str]) -> int:
    """The probe's detections are the Decoder's: classes, labels and confidences exactly, boxes
    (clipped to the picture) to float rounding."""
    assert len(frames) == len(expected)
    total = 0
    for frame, d in zip(frames, expected):
        dets = frame["objects"]
        boxes, keep = _in_picture(d)
        assert len(dets) == int(keep.sum())
        if not len(dets):
            continue
        np.testing.assert_allclose(np.float32([x["bbox"] for x in dets]), boxes, rtol=0, atol=1e-6)
        ids = d.class_ids[keep]
        np.testing.assert_array_equal([x["class_id"] for x in dets], ids + 1)
        assert [x["label"] for x in dets] == [labels[c + 1] if c + 1 < len(labels) else "" for c in ids]
        np.testing.assert_array_equal(np.float32([x["confidence"] for x in dets]), np.clip(d.scores[keep], 0, 1))
        total += len(dets)
    return total


def _subs(det: dict, kind: str) -> List[dict]:
    return [o for o in det["objects"] if o["type"] == kind]


def test_detection_equals_the_python_decoder(gst, tmp_path):
    outs, infos, names = _demo("fall_uint8.npz", None)
    settings = dict(class_activation="sigmoid", score_threshold=0.1, iou_threshold=0.6)
    labels = _labels(names)
    frames = _run(gst, tmp_path, outs, dict(labels=labels, **settings))
    assert _check_detections(frames, _python_frames(hd.DecoderConfig(infos, **settings), outs), labels) >= 5
    assert all(not d["objects"] for f in frames for d in f["objects"])


def test_pose_landmarks_equal_the_python_decoder(gst, tmp_path):
    outs, infos, names = _demo("pose_uint8.npz", "kpt")
    settings = dict(task="pose", semantics="ultralytics", score_threshold=0.25)
    expected = _python_frames(hd.DecoderConfig(infos, **settings), outs)
    frames = _run(gst, tmp_path, outs, dict(labels=_labels(names), **settings))
    assert _check_detections(frames, expected, _labels(names)) >= 3
    for frame, d in zip(frames, expected):
        H, W = d.image_size
        boxes, keep = _in_picture(d)
        for det, b, k in zip(frame["objects"], boxes, (d.keypoints / np.float32([W, H, 1]))[keep]):
            (lm,) = det["objects"]
            assert lm["type"] == "landmarks" and lm["name"] == "centerpose" and lm["threshold"] == 0.5
            pts = np.float32(lm["points"])
            xmin, ymin, w, h = b  # keypoints relative to the (clipped) box, as hailooverlay reads them
            np.testing.assert_allclose(pts[:, 0], (k[:, 0] - xmin) / w, rtol=0, atol=1e-5)
            np.testing.assert_allclose(pts[:, 1], (k[:, 1] - ymin) / h, rtol=0, atol=1e-5)
            np.testing.assert_array_equal(pts[:, 2], np.clip(k[:, 2], 0, 1))


def test_segmentation_masks_equal_the_python_decoder(gst, tmp_path):
    outs, infos, names = _demo("seg_uint8.npz", "mask", proto=True)
    settings = dict(semantics="ultralytics", score_threshold=0.25)
    expected = _python_frames(hd.DecoderConfig(infos, **settings), outs)
    frames = _run(gst, tmp_path, outs, dict(labels=_labels(names), **settings), size=320)
    assert _check_detections(frames, expected, _labels(names)) >= 5
    masks = 0
    for frame, d in zip(frames, expected):
        at_proto = d.masks_at_proto()  # the Python package's masks on the prototype grid
        ph, pw = at_proto.shape[1:]
        _, keep = _in_picture(d)
        for det, i in zip(frame["objects"], np.flatnonzero(keep)):
            box = np.clip(d.boxes_as("xyxy_normalized")[i], 0, 1)
            for m in _subs(det, "conf_class_mask"):
                values = np.float32(m["data"]).reshape(m["height"], m["width"])
                assert m["transparency"] == pytest.approx(0.3)
                # The mask covers the detection's box on the prototype grid: its cells above one
                # half are the Python mask's there (cells whose logit is ~0 may round either way).
                x0, y0 = int(np.ceil(box[0] * pw)) if box[0] > 0 else 0, int(np.ceil(box[1] * ph)) if box[1] > 0 else 0
                window = at_proto[i, y0:y0 + m["height"], x0:x0 + m["width"]]
                clear = np.abs(values - 0.5) > 1e-4
                np.testing.assert_array_equal((values > 0.5)[clear], window[clear])
                masks += 1
    assert masks >= 5


def test_obb_boxes_and_corners_equal_the_python_decoder(gst, tmp_path):
    outs, infos, names = _demo("obb_uint8.npz", "angle")
    settings = dict(task="obb", semantics="ultralytics", score_threshold=0.25)
    expected = _python_frames(hd.DecoderConfig(infos, **settings), outs)
    frames = _run(gst, tmp_path, outs, dict(labels=_labels(names), **settings), size=320)
    assert _check_detections(frames, expected, _labels(names)) >= 5
    for frame, d in zip(frames, expected):
        H, W = d.image_size
        corners = rbox_corners(d.rboxes) / np.float32([W, H])
        boxes, keep = _in_picture(d)
        for det, b, c in zip(frame["objects"], boxes, corners[keep]):
            (lm,) = _subs(det, "landmarks")
            assert lm["name"] == "obb" and lm["pairs"] == [[0, 1], [1, 2], [2, 3], [3, 0]]
            pts = np.float32(lm["points"])
            np.testing.assert_allclose(pts[:, 0] * b[2] + b[0], c[:, 0], rtol=0, atol=1e-5)
            np.testing.assert_allclose(pts[:, 1] * b[3] + b[1], c[:, 1], rtol=0, atol=1e-5)


@pytest.mark.parametrize("config", ["nms_op.json", None])
def test_an_nms_op_output_as_hailonet_delivers_it(gst, tmp_path, config):
    outs, infos, _ = _demo("fall_uint8.npz", None)
    dec = hd.Decoder(hd.DecoderConfig(infos, class_activation="sigmoid", score_threshold=0.05, max_per_class=20))
    n = outs[0].data.shape[0]
    flat = np.stack([dec.decode_to_hailo_nms({o.name: o.data[i] for o in outs}) for i in range(n)]).astype(np.float32)
    nms = [Out("yolov8n/yolov8_nms_postprocess", flat, "FLOAT32", nms=(2, 20))]
    path = None if config is None else EXAMPLES / config
    frames = _run(gst, tmp_path, nms, path)
    labels = json.loads(path.read_text())["labels"] if path else ["unlabeled", "person", "bicycle"]
    threshold = json.loads(path.read_text())["detection_threshold"] if path else None
    total = 0
    for frame, buf in zip(frames, flat):
        want = []
        for w in _read_as_yolo_hailortpp(buf, 2, 20, labels, threshold):
            x0, y0, bw, bh = w["bbox"]
            x0, y0, x1, y1 = np.clip(np.float32([x0, y0, x0 + bw, y0 + bh]), 0, 1)  # clipped to the picture
            if x1 > x0 and y1 > y0:
                want.append(dict(w, bbox=np.float32([x0, y0, x1 - x0, y1 - y0])))
        assert len(frame["objects"]) == len(want)
        for g, w in zip(frame["objects"], want):
            np.testing.assert_allclose(np.float32(g["bbox"]), w["bbox"], rtol=0, atol=1e-6)
            assert (g["class_id"], g["label"], np.float32(g["confidence"])) == (w["class_id"], w["label"], w["confidence"])
        total += len(want)
    assert total >= (1 if path else 3)


def test_float32_buffers_with_output_format_type(gst, tmp_path):
    """hailonet output-format-type=HAILO_FORMAT_TYPE_FLOAT32: the stand-in dequantizes the UINT8
    outputs as HailoRT does, the metadata still says UINT8; the config says FLOAT32."""
    outs, infos, names = _demo("fall_uint8.npz", None)
    settings = dict(class_activation="sigmoid", score_threshold=0.1)
    floats = [Out(o.name, ((o.data.astype(np.float32) - np.float32(o.zp)) * np.float32(o.scale)).astype(np.float32))
              for o in outs]
    float_infos = [hd.OutputInfo(o.name, o.data.shape[1:], "float32") for o in floats]
    expected = _python_frames(hd.DecoderConfig(float_infos, **settings), floats)
    labels = _labels(names)
    config = dict(json.loads((EXAMPLES / "float32_outputs.json").read_text()), labels=labels, **settings)
    frames = _run(gst, tmp_path, outs, config, hailonet_extra="output-format-type=HAILO_FORMAT_TYPE_FLOAT32")
    assert _check_detections(frames, expected, labels) >= 5
    # The stand-in's float32 buffers are read as such only when the config says so.
    as_meta = _run(gst, tmp_path / "as_meta", outs, dict(labels=labels, **settings),
                   hailonet_extra="output-format-type=HAILO_FORMAT_TYPE_FLOAT32")
    assert as_meta != frames


def test_yolov5_anchors_from_a_model_zoo_nms_json(gst, tmp_path):
    rng = np.random.default_rng(5)
    outs = _anchor_outputs(rng, [("yolov5s/conv55", 8), ("yolov5s/conv63", 16), ("yolov5s/conv70", 32)], [255] * 3, 640)
    infos = [hd.OutputInfo(o.name, o.data.shape[1:], "uint8", zp=o.zp, scale=o.scale) for o in outs]
    config = json.loads((EXAMPLES / "yolov5_anchors.json").read_text())
    nms_json = json.loads((EXAMPLES / config["nms_json"]).read_text())
    overrides = {k: v for k, v in config.items() if k != "nms_json"}
    expected = _python_frames(hd.DecoderConfig.from_nms_json(nms_json, infos, **overrides), outs)
    frames = _run(gst, tmp_path, outs, EXAMPLES / "yolov5_anchors.json")
    assert _check_detections(frames, expected, json.loads((EXAMPLES / "detect.json").read_text())["labels"]) >= 3


def test_yolox_from_an_inline_nms_json(gst, tmp_path):
    rng = np.random.default_rng(6)
    config = json.loads((EXAMPLES / "yolox.json").read_text())
    outs = []
    for dec in config["nms_json"]["bbox_decoders"]:
        s = dec["stride"]
        outs += _anchor_outputs(rng, [(dec["reg_layer"], s), (dec["objectness_layer"], s), (dec["cls_layer"], s)],
                                [4, 1, 80], 640)
    infos = [hd.OutputInfo(o.name, o.data.shape[1:], "uint8", zp=o.zp, scale=o.scale) for o in outs]
    overrides = {k: v for k, v in config.items() if k != "nms_json"}
    expected = _python_frames(hd.DecoderConfig.from_nms_json(config["nms_json"], infos, **overrides), outs)
    frames = _run(gst, tmp_path, outs, EXAMPLES / "yolox.json")
    assert _check_detections(frames, expected, ["unlabeled", *hd_coco()]) >= 1


def test_end2end_head_equals_the_python_decoder(gst, tmp_path):
    outs, infos, size, names = _yolo26_outputs()
    settings = dict(json.loads((EXAMPLES / "end2end.json").read_text()))
    heads = [hd.Head(f"yolo26n/box_{s}", f"yolo26n/cls_{s}", s) for s in STRIDES]
    expected = _python_frames(hd.DecoderConfig(infos, heads, image_size=(size, size), **settings), outs)
    settings["nms_json"] = {"image_dims": [size, size], "bbox_decoders": [
        {"name": f"head{s}", "stride": s, "reg_layer": f"box_{s}", "cls_layer": f"cls_{s}"} for s in STRIDES]}
    labels = _labels(names)
    frames = _run(gst, tmp_path, outs, dict(labels=labels, **settings), size=size)
    assert _check_detections(frames, expected, labels) >= 3


def test_filter_letterbox_without_a_letterbox_gives_filters_objects(gst, tmp_path):
    outs, _, names = _demo("pose_uint8.npz", "kpt")
    config = dict(labels=_labels(names), task="pose", semantics="ultralytics", score_threshold=0.25)
    plain = _run(gst, tmp_path / "plain", outs, config)
    letterbox = _run(gst, tmp_path / "lb", outs, config, function="filter_letterbox")
    assert plain == letterbox and sum(len(f["objects"]) for f in plain) >= 3


def test_two_filters_in_one_pipeline_each_give_their_own(gst, tmp_path):
    """Two hailonet ! hailofilter pairs in one process (one dlopen handle, two init()s): the second
    adds its objects beside the first's, each as alone."""
    outs, infos, names = _demo("fall_uint8.npz", None)
    settings = dict(class_activation="sigmoid", score_threshold=0.1)
    labels = _labels(names)
    rec = write_frames(tmp_path / "recording", outs)
    a = write_config(tmp_path, dict(labels=labels, **settings), "a.json")
    b = write_config(tmp_path, dict(labels=labels, score_threshold=0.5, class_activation="sigmoid"), "b.json")
    pipeline = words(f"{source(5)} !", inference(gst, rec, a, name="one"), "!", inference(gst, rec, b, name="two"),
                     "! identity name=probe ! hailooverlay ! fakesink")
    frames = gst.probe(pipeline, tmp_path).host_frames()
    first = _python_frames(hd.DecoderConfig(infos, **settings), outs)
    second = _python_frames(hd.DecoderConfig(infos, score_threshold=0.5, class_activation="sigmoid"), outs)
    for f, x, y in zip(frames, first, second):
        assert len(f["objects"]) == len(x) + len(y)
    _check_detections([{"objects": f["objects"][:len(x)]} for f, x in zip(frames, first)], first, labels)
    _check_detections([{"objects": f["objects"][len(x):]} for f, x in zip(frames, first)], second, labels)
