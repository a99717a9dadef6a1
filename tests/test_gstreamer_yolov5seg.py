"""The plugin in place of TAPPAS' libyolov5seg_post.so in a real GStreamer pipeline (tests/gstreamer:
TAPPAS 5.1's hailofilter and hailooverlay, our hailonet stand-in), the same recorded YOLOv5-seg
frames through each: a hailo-apps style pad probe reads the detections and their masks through
TAPPAS' `hailo` module, and they must be equal (TAPPAS' boxes clipped by the plugin's rule first,
tests/tappas/yolov5seg_frames.py). TAPPAS' .so is built from ../shared/tappas
(tests/tappas/tappas_yolov5seg.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gstreamer.harness import Gst, gst_session, inference, source, words, write_config
from tappas import tappas_yolov5seg, yolov5seg_frames as v5
from tappas.plugin_host import write_frames
from test_tappas_yolov5seg import _compare


@pytest.fixture(scope="module")
def gst(tmp_path_factory) -> Gst:
    return gst_session(tmp_path_factory)


def _probe(gst: Gst, tmp: Path, plugin: Path, recording: Path, config: Path, frames: int, function: str):
    pipeline = words(f"{source(frames)} !",
                     inference(Gst(gst.plugins, gst.python, gst.whole_buffer, gst.detection_croppers, plugin),
                               recording, config, function, hailonet_extra="width=640 height=640"),
                     "! identity name=probe ! hailooverlay qos=false ! fakesink")
    tmp.mkdir(parents=True, exist_ok=True)
    probed = gst.probe(pipeline, tmp)
    assert len(probed.frames) == frames
    for f in probed.frames:  # what a hailo-apps callback asks of each object
        for d in f["detections"]:
            assert d["class"] == "HailoDetection"
            assert [o["type"] for o in d["objects"]] == ["conf_class_mask"]
            assert len(d["objects"][0]["data"]) == d["objects"][0]["width"] * d["objects"][0]["height"]
    return probed.host_frames()


@pytest.mark.parametrize("function", ["yolov5seg", "filter"])
def test_yolov5seg_pipeline_with_hailooverlay_equals_tappas_own(gst, tmp_path, tmp_path_factory, function):
    reference = tappas_yolov5seg.build("5.1", tmp_path_factory)
    outs = v5.frames(count=3, objects=20, seed=5)
    recording = write_frames(tmp_path / "recording", outs)
    config = write_config(tmp_path, v5.config(score_threshold=0.3, iou_threshold=0.5), "yolov5n_seg.json")
    ours = _probe(gst, tmp_path / "ours", gst.plugin, recording, config, 3, function)
    theirs = _probe(gst, tmp_path / "theirs", reference, recording, config, 3, function)
    assert _compare(ours, theirs) >= 40
