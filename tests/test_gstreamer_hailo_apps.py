"""The plugin in hailo-apps' own pipeline shapes, in real GStreamer (tests/gstreamer): the letterbox
wrapper (INFERENCE_PIPELINE_WRAPPER: hailocropper with the whole_buffer cropper and use-letterbox,
hailoaggregator) around hailonet ! hailofilter function-name=filter_letterbox, then hailotracker
and hailooverlay drawing, and a callback reading every object through TAPPAS' `hailo` module as
hailo-apps callbacks do. Also what a real pipeline does that the imitation host never did: a
second element (the tracker) adding to our detections, hailooverlay drawing masks and landmarks,
callbacks walking get_objects() with get_type(), the elements disposed while a callback still
holds detections, bad configs while the pipeline keeps running."""

from __future__ import annotations

from pathlib import Path
from typing import List

import numpy as np
import pytest

import hailo_decode as hd
from gstreamer.harness import Gst, gst_session, inference, letterbox_wrapper, source, words, write_config
from tappas.plugin_host import Out, write_frames
from test_tappas_plugin import _demo, _labels, _python_frames


@pytest.fixture(scope="module")
def gst(tmp_path_factory) -> Gst:
    return gst_session(tmp_path_factory)


TRACKER = ("hailotracker name=hailo_tracker class-id=-1 kalman-dist-thr=0.8 iou-thr=0.9 init-iou-thr=0.7 "
           "keep-new-frames=2 keep-tracked-frames=15 keep-lost-frames=2 keep-past-metadata=false qos=false")


def _app(gst: Gst, tmp: Path, outs, config: dict, size: int, picture: tuple, tracker: bool = False,
         hold: bool = False):
    """hailo-apps' detection app's pipeline: source (picture = width, height) ! wrapper(inference) !
    tracker ! callback (identity) ! hailooverlay ! sink."""
    recording = write_frames(tmp / "recording", outs)
    cfg = write_config(tmp, config)
    inner = inference(gst, recording, cfg, "filter_letterbox", hailonet_extra=f"width={size} height={size}")
    pipeline = words(f"{source(outs[0].data.shape[0], *picture)} !", letterbox_wrapper(gst, inner), "!",
                     f"{TRACKER} ! queue !" if tracker else "", "identity name=probe ! queue !",
                     "hailooverlay name=hailo_overlay qos=false ! videoconvert ! fakesink sync=false")
    return gst.probe(pipeline, tmp, hold=hold)


def _letterboxed(d: hd.Detections, picture: tuple) -> tuple:
    """The Decoder's detections mapped to the original picture (Detections.to_original: the
    letterbox undone, clipped, those without area there dropped), boxes [xmin, ymin, w, h]
    normalised to it, and their scores; those under a pixel either way dropped too, as the plugin
    drops them (the tests' pictures have the network's scale: their pixels are the letterboxed
    picture's)."""
    w, h = picture
    o = d.to_original((h, w))
    px = o.boxes_as("xyxy_pixels")
    keep = (px[:, 2] - px[:, 0] >= 1) & (px[:, 3] - px[:, 1] >= 1)
    b = px / np.float32([w, h, w, h])
    return np.stack([b[:, 0], b[:, 1], b[:, 2] - b[:, 0], b[:, 3] - b[:, 1]], axis=1)[keep], o.scores[keep]


def _detections(frame: dict) -> List[dict]:
    return frame["detections"]


def _of_type(det: dict, kind: str) -> List[dict]:
    return [o for o in det["objects"] if o["type"] == kind]


def test_the_letterbox_wrapper_with_tracker_and_overlay_gives_the_decoders_boxes_on_the_picture(gst, tmp_path):
    outs, infos, names = _demo("pose_uint8.npz", "kpt")
    settings = dict(task="pose", semantics="ultralytics", score_threshold=0.25)
    expected = _python_frames(hd.DecoderConfig(infos, **settings), outs)
    picture = (640, 480)  # letterboxed into the 640 x 640 input: 80 rows of padding above and below
    frames = _app(gst, tmp_path, outs, dict(labels=_labels(names), **settings), 640, picture).frames
    total = 0  # (hailotracker's own effect: test_hailotracker_tracks_our_detections_frame_after_frame)
    for frame, d in zip(frames, expected):
        boxes, scores = _letterboxed(d, picture)
        dets = _detections(frame)
        assert len(dets) == len(scores)
        assert frame["scaling_bbox"] == [0, 0, 1, 1]  # cleared by filter_letterbox
        np.testing.assert_allclose(np.float32([x["bbox"] for x in dets]), boxes, rtol=0, atol=2e-6)
        np.testing.assert_array_equal([x["confidence"] for x in dets], np.float32(np.clip(scores, 0, 1)))
        for det in dets:
            assert det["class"] == "HailoDetection" and det["label"] == "person"
            (lm,) = _of_type(det, "landmarks")
            assert len(lm["points"]) == 17
        total += len(dets)
    assert total >= 3


def test_hailotracker_tracks_our_detections_frame_after_frame(gst, tmp_path):
    """hailotracker takes our detections out of the ROI, keeps them in its tracks across frames
    (the plugin's pooled detections outlive their frame there), adds a HailoUniqueID to each and
    puts the tracked ones back: every frame after the first, the same people with the same ids,
    one id and one set of landmarks each (nothing left over from the frames before)."""
    outs, infos, names = _demo("pose_uint8.npz", "kpt")
    repeats = 6
    still = [Out(o.name, np.repeat(o.data, repeats, axis=0), o.meta_type, o.zp, o.scale) for o in outs]
    settings = dict(task="pose", semantics="ultralytics", score_threshold=0.25)
    (expected,) = _python_frames(hd.DecoderConfig(infos, **settings), outs)
    picture = (640, 640)
    frames = _app(gst, tmp_path, still, dict(labels=_labels(names), **settings), 640, picture, tracker=True).frames
    assert len(frames) == repeats
    boxes, scores = _letterboxed(expected, picture)
    ids = None
    for frame in frames[2:]:  # keep-new-frames=2: a track is reported once it has been seen again
        dets = sorted(_detections(frame), key=lambda d: d["bbox"][0])
        assert len(dets) == len(scores) >= 3
        tracked = [_of_type(d, "unique_id") for d in dets]
        assert all(len(t) == 1 for t in tracked), [d["objects"] for d in dets]
        assert all(len(_of_type(d, "landmarks")) == 1 and len(d["objects"]) == 2 for d in dets)
        now = [t[0]["id"] for t in tracked]
        assert len(set(now)) == len(now) and (ids is None or now == ids)
        ids = now
        np.testing.assert_allclose(sorted(x["confidence"] for x in dets), sorted(np.float32(scores)))


def test_a_segmentation_app_with_boxes_in_the_padding_keeps_running(gst, tmp_path):
    """Issue #33 item 2: a wide picture letterboxed into the square input leaves most of the input
    as padding; detections there must not reach hailooverlay with a zero-pixel mask (it threw
    cv::Exception out of its transform and the process aborted, exit 134)."""
    outs, infos, names = _demo("seg_uint8.npz", "mask", proto=True)
    settings = dict(semantics="ultralytics", score_threshold=0.25)
    expected = _python_frames(hd.DecoderConfig(infos, **settings), outs)
    picture = (320, 64)
    probed = _app(gst, tmp_path, outs, dict(labels=_labels(names), **settings), 320, picture)
    frames = probed.frames  # exit status 0, EOS, no error
    outside = 0
    for frame, d in zip(frames, expected):
        boxes, scores = _letterboxed(d, picture)
        outside += len(d) - len(scores)
        dets = _detections(frame)
        assert len(dets) <= len(scores)
        for det in dets:
            x, y, w, h = det["bbox"]
            assert 0 <= x and 0 <= y and x + w <= 1 + 1e-6 and y + h <= 1 + 1e-6
            # as hailooverlay sizes the mask: at least one pixel of the picture each way
            assert int(w * picture[0]) >= 1 and int(h * picture[1]) >= 1
            for m in _of_type(det, "conf_class_mask"):
                assert m["width"] >= 1 and m["height"] >= 1 and len(m["data"]) == m["width"] * m["height"]
    assert outside >= 1  # the case is there


def test_obb_objects_answer_get_type_for_a_callback_walking_them(gst, tmp_path):
    """Issue #33 item 3: TAPPAS 5.1's HailoUserMeta binding has no get_type(); a callback walking
    det.get_objects() (hailo-apps' examples) raised AttributeError on our OBB detections. By default
    they carry the enclosing box and the 4 corners only."""
    outs, infos, names = _demo("obb_uint8.npz", "angle")
    settings = dict(task="obb", semantics="ultralytics", score_threshold=0.25)
    frames = _app(gst, tmp_path, outs, dict(labels=_labels(names), **settings), 320, (320, 320)).frames
    dets = [d for f in frames for d in _detections(f)]
    assert len(dets) >= 5
    for det in dets:
        assert all(o["type"] is not None for o in det["objects"]), det["objects"]
        (lm,) = _of_type(det, "landmarks")
        assert lm["name"] == "obb" and len(lm["points"]) == 4


def test_obb_user_meta_on_request(gst, tmp_path):
    """"obb_user_meta": true attaches the exact rotated box as before (for callbacks that read it
    with get_objects_typed(hailo.HAILO_USER_META)); walking get_objects() then meets TAPPAS' binding
    without get_type()."""
    outs, infos, names = _demo("obb_uint8.npz", "angle")
    settings = dict(task="obb", semantics="ultralytics", score_threshold=0.25)
    frames = _app(gst, tmp_path, outs, dict(labels=_labels(names), obb_user_meta=True, **settings), 320,
                  (320, 320)).frames
    dets = [d for f in frames for d in _detections(f)]
    assert dets and all(any(o["type"] is None and "get_type" in o["error"] for o in d["objects"]) for d in dets)


def test_a_one_class_obb_model_decodes_with_heads_named_in_the_config(gst, tmp_path):
    """Issue #33 item 1: one class, so the class and angle outputs both have one channel; the
    config's "heads" names them as the Python API's Head does."""
    outs, infos, names = _demo("obb_uint8.npz", "angle")
    one = [Out(o.name, np.ascontiguousarray(o.data[..., :1]), o.meta_type, o.zp, o.scale) if "/cls_" in o.name else o
           for o in outs]
    one_infos = [hd.OutputInfo(o.name, o.data.shape[1:], "uint8", zp=o.zp, scale=o.scale) for o in one]
    heads = [hd.Head(f"model/box_{s}", f"model/cls_{s}", s, angle=f"model/angle_{s}") for s in (8, 16, 32)]
    settings = dict(task="obb", semantics="ultralytics", score_threshold=0.25)
    expected = _python_frames(hd.DecoderConfig(one_infos, heads, **settings), one)
    config = dict(labels=_labels(names[:1]), heads=[
        {"box": f"model/box_{s}", "cls": f"model/cls_{s}", "angle": f"model/angle_{s}", "stride": s} for s in (8, 16, 32)],
        **settings)
    recording = write_frames(tmp_path / "recording", one)
    pipeline = words(f"{source(3, 320, 320)} !", inference(gst, recording, write_config(tmp_path, config),
                                                           hailonet_extra="width=320 height=320"),
                     "! identity name=probe ! hailooverlay ! fakesink")
    probed = gst.probe(pipeline, tmp_path)
    frames = probed.frames
    assert "heads" not in probed.stderr and "do not match" not in probed.stderr, probed.stderr
    total = 0
    for frame, d in zip(frames, expected):
        b = np.clip(d.boxes_as("xyxy_normalized"), 0, 1)
        dets = _detections(frame)
        assert len(dets) == len(d)
        np.testing.assert_allclose([x["bbox"][0] for x in dets], b[:, 0], rtol=0, atol=1e-6)
        np.testing.assert_allclose([x["bbox"][1] for x in dets], b[:, 1], rtol=0, atol=1e-6)
        total += len(dets)
    assert total >= 3


@pytest.mark.parametrize("demo, role, size, settings", [
    ("fall_uint8.npz", None, 640, dict(class_activation="sigmoid")),  # 5 frames: held while later ones decode
    ("pose_uint8.npz", "kpt", 640, dict(task="pose")),
    ("seg_uint8.npz", "mask", 320, dict()),
    ("obb_uint8.npz", "angle", 320, dict(task="obb")),
])
def test_detections_a_callback_holds_outlive_the_disposed_pipeline(gst, tmp_path, demo, role, size, settings):
    """The callback keeps each frame's ROI and detections; the pipeline is set to NULL and dropped
    (hailofilter's dispose: free_resources, dlclose) before it reads them: the same numbers."""
    outs, _, names = _demo(demo, role, proto=role == "mask")
    config = dict(labels=_labels(names), semantics="ultralytics", score_threshold=0.25, **settings)
    now = _app(gst, tmp_path / "now", outs, config, size, (size, size)).frames
    later = _app(gst, tmp_path / "later", outs, config, size, (size, size), hold=True).frames
    assert later == now
    assert sum(len(_detections(f)) for f in now) >= 3


BAD_CONFIGS = [
    ("unknown key", {"score_treshold": 0.3}, "score_treshold"),
    ("out of range", {"iou_threshold": 2}, "iou_threshold"),
    ("tensors that do not match", {"task": "pose"}, "do not match"),
]


@pytest.mark.parametrize("what, config, word", BAD_CONFIGS, ids=[c[0] for c in BAD_CONFIGS])
def test_a_bad_config_prints_one_line_and_the_pipeline_runs_on(gst, tmp_path, what, config, word):
    outs, _, _ = _demo("fall_uint8.npz", None)
    probed = _app(gst, tmp_path, outs, config, 640, (640, 640))
    frames = probed.frames  # EOS reached, exit 0
    assert len(frames) == 5 and all(not _detections(f) for f in frames)
    lines = [line for line in probed.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and word in lines[0], probed.stderr


def test_a_callback_sees_only_detections_at_the_roi(gst, tmp_path):
    """A callback that walks roi.get_objects() (not typed) meets our detections and nothing else:
    the tensors are gone (hailofilter remove-tensors), no stray objects at the top."""
    outs, _, names = _demo("pose_uint8.npz", "kpt")
    config = dict(labels=_labels(names), task="pose", semantics="ultralytics", score_threshold=0.25)
    frames = _app(gst, tmp_path, outs, config, 640, (640, 480), tracker=False).frames
    for f in frames:
        assert f["types"] == ["hailo_object_t.HAILO_DETECTION"] * len(_detections(f))


def test_a_cascade_decodes_inside_our_detections(gst, tmp_path):
    """A second element treating our objects as its input: hailocropper (TAPPAS' all_detections
    cropper) crops each detection of a first network, a second hailonet ! hailofilter (pose) runs
    on every crop with that detection as its ROI, and hailoaggregator puts the crops' objects back:
    each first-stage detection then holds the pose model's detections, normalised to it."""
    outs, infos, names = _demo("fall_uint8.npz", None)
    first_settings = dict(class_activation="sigmoid", score_threshold=0.1)
    first = _python_frames(hd.DecoderConfig(infos, **first_settings), outs)
    pose_outs, pose_infos, pose_names = _demo("pose_uint8.npz", "kpt")  # one frame: every crop gets it
    pose_settings = dict(task="pose", semantics="ultralytics", score_threshold=0.25)
    (pose,) = _python_frames(hd.DecoderConfig(pose_infos, **pose_settings), pose_outs)
    stage1 = inference(gst, write_frames(tmp_path / "r1", outs),
                       write_config(tmp_path, dict(labels=_labels(names), **first_settings)), name="one")
    stage2 = inference(gst, write_frames(tmp_path / "r2", pose_outs),
                       write_config(tmp_path, dict(labels=_labels(pose_names), **pose_settings)), name="two")
    q = "queue leaky=no max-size-buffers=20 max-size-bytes=0 max-size-time=0"
    pipeline = words(f"{source(5)} ! {stage1} !",
                     f"hailocropper name=crop so-path={gst.detection_croppers} function-name=all_detections",
                     "internal-offset=true hailoaggregator name=agg",
                     f"crop. ! {q} ! agg.sink_0 crop. ! {stage2} ! agg.sink_1",
                     "agg. ! identity name=probe ! hailooverlay qos=false ! fakesink")
    frames = gst.probe(pipeline, tmp_path).frames
    b = np.clip(pose.boxes_as("xyxy_normalized").astype(np.float32), 0, 1)
    want = np.stack([b[:, 0], b[:, 1], b[:, 2] - b[:, 0], b[:, 3] - b[:, 1]], axis=1)
    outer = 0
    for frame, d in zip(frames, first):
        dets = _detections(frame)
        assert len(dets) == len(d)
        for det in dets:
            inner = _of_type(det, "detection")
            assert len(inner) == len(pose)
            np.testing.assert_allclose(np.float32([x["bbox"] for x in inner]), want, rtol=0, atol=1e-6)
            assert all(x["label"] == "person" and len(_of_type(x, "landmarks")) == 1 for x in inner)
            outer += 1
    assert outer >= 5


def test_a_pipeline_restarted_decodes_the_same(gst, tmp_path):
    """PLAYING, EOS, NULL, PLAYING again (an app that restarts its pipeline): hailofilter's start
    dlopens and calls init() again without free_resources (TAPPAS' stop does nothing); the second
    run's objects are the first's."""
    outs, _, names = _demo("seg_uint8.npz", "mask", proto=True)
    config = write_config(tmp_path, dict(labels=_labels(names), semantics="ultralytics", score_threshold=0.25))
    inner = inference(gst, write_frames(tmp_path / "recording", outs), config, hailonet_extra="width=320 height=320")
    frames = gst.probe(words(f"{source(3, 320, 320)} ! {inner} ! identity name=probe ! hailooverlay ! fakesink"),
                       tmp_path, runs=2).frames
    assert len(frames) == 6 and frames[:3] == frames[3:]
    assert sum(len(f["detections"]) for f in frames[:3]) >= 5


def _documented_callback() -> str:
    """docs/gstreamer.md's callback example ("What callbacks see"), as written."""
    text = (Path(__file__).resolve().parents[1] / "docs" / "gstreamer.md").read_text()
    section = text.split("## What callbacks see", 1)[1]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


@pytest.mark.parametrize("demo, role, size, settings, printed", [
    ("obb_uint8.npz", "angle", 320, dict(task="obb", obb_user_meta=True), ("rotated box", "obb [(")),
    ("obb_uint8.npz", "angle", 320, dict(task="obb"), ("obb [(",)),
    ("pose_uint8.npz", "kpt", 640, dict(task="pose"), ("centerpose [(",)),
    ("seg_uint8.npz", "mask", 320, dict(), ("mask (",)),
])
def test_the_documented_callback_runs_in_a_real_pipeline(gst, tmp_path, demo, role, size, settings, printed):
    import subprocess
    from gstreamer.harness import HERE, SYSTEM_PYTHON
    outs, _, names = _demo(demo, role, proto=role == "mask")
    config = write_config(tmp_path, dict(labels=_labels(names), semantics="ultralytics", score_threshold=0.25,
                                         **settings))
    inner = inference(gst, write_frames(tmp_path / "recording", outs), config, "filter_letterbox",
                      hailonet_extra=f"width={size} height={size}")
    pipeline = words(f"{source(outs[0].data.shape[0], size, size)} !", letterbox_wrapper(gst, inner),
                     "! identity name=probe ! hailooverlay ! fakesink")
    callback = tmp_path / "callback.py"
    callback.write_text(_documented_callback())
    r = subprocess.run([str(SYSTEM_PYTHON), str(HERE / "run_callback.py"), str(callback), pipeline],
                       capture_output=True, text=True, env=gst.env(), timeout=120)
    assert r.returncode == 0, r.stderr[-3000:]
    assert f"calls {outs[0].data.shape[0]}" in r.stdout
    for word in printed:
        assert word in r.stdout, r.stdout[-2000:]
