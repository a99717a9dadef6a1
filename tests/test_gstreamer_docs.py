"""The gst-launch-1.0 lines of README.md and docs/gstreamer.md, run as written in real GStreamer
(tests/gstreamer): read from the docs (a line that drifts from what runs fails here), with only
its paths substituted: the video (an MJPEG file decodebin plays, made here), the HEF (our hailonet
stand-in reads a recording of a yolov8n-like model's outputs in its place), the plugin and config
paths (the built plugin, examples/tappas/detect.json)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import List

import numpy as np
import pytest

from gstreamer.harness import Gst, gst_session
from tappas.plugin_host import Out, write_frames

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", ROOT / "docs" / "gstreamer.md"]
# What each documented line names, and what stands in for it here.
PLACEHOLDERS = ("location=video.mp4", "hef-path=yolov8n.hef", "so-path=/home/pi/hailo-decode-plugin/libhailo_decode_tappas.so",
                "config-path=/home/pi/detect.json")


def _launch_lines(path: Path) -> List[str]:
    """Every gst-launch-1.0 command in the file's code blocks, continuation lines joined."""
    lines, blocks = [], re.findall(r"```[a-z]*\n(.*?)```", path.read_text(), flags=re.S)
    for block in blocks:
        joined = block.replace("\\\n", " ")
        lines += [" ".join(line.split()) for line in joined.splitlines() if line.strip().startswith("gst-launch-1.0")]
    return lines


@pytest.fixture(scope="module")
def gst(tmp_path_factory) -> Gst:
    return gst_session(tmp_path_factory)


@pytest.fixture(scope="module")
def stand_ins(gst, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("docs")
    video = tmp / "video.mp4"  # MJPEG in AVI: decodebin finds it by its content
    r = gst.launch(f"videotestsrc num-buffers=3 ! video/x-raw,width=800,height=600 ! jpegenc ! avimux ! "
                   f"filesink location={video}")
    assert r.returncode == 0, r.stderr
    from hailo_decode.bench import yolov8n_like
    cfg, raw = yolov8n_like("uint8", batch=3)
    outs = [Out(o.name, raw[o.name], "UINT8", float(np.ravel(o.zp)[0]), float(np.ravel(o.scale)[0])) for o in cfg.outputs]
    recording = write_frames(tmp / "recording", outs)
    return {"location=video.mp4": f"location={video}", "hef-path=yolov8n.hef": f"hef-path={recording}",
            "so-path=/home/pi/hailo-decode-plugin/libhailo_decode_tappas.so": f"so-path={gst.plugin}",
            "config-path=/home/pi/detect.json": f"config-path={ROOT / 'examples' / 'tappas' / 'detect.json'}"}


def test_the_docs_have_gst_launch_lines():
    for path in DOCS:
        assert _launch_lines(path), f"{path} has no gst-launch-1.0 line"


@pytest.mark.parametrize("doc", DOCS, ids=[p.name for p in DOCS])
def test_the_documented_gst_launch_lines_run(gst, stand_ins, tmp_path, doc):
    for line in _launch_lines(doc):
        for placeholder in PLACEHOLDERS:
            assert placeholder in line, f"{doc.name}: the line no longer names {placeholder}: {line}"
            line = line.replace(placeholder, stand_ins[placeholder])
        words = shlex.split(line)
        assert words[0] == "gst-launch-1.0"
        r = gst.launch(" ".join(words[1:]))
        assert r.returncode == 0 and r.stderr == "", f"{line}\n{r.stdout[-2000:]}\n{r.stderr[-3000:]}"
        # The same line with a hailo-apps callback before hailooverlay: the detections are there.
        probed = gst.probe(" ".join(words[1:]).replace("! hailooverlay", "! identity name=probe ! hailooverlay"), tmp_path)
        frames = probed.frames
        assert len(frames) == 3 and all(len(f["detections"]) >= 5 for f in frames), frames
        for f in frames:
            for d in f["detections"]:
                x, y, w, h = d["bbox"]
                assert d["class"] == "HailoDetection" and 1 <= d["class_id"] <= 80 and d["label"]
                assert 0 <= x and 0 <= y and w > 0 and h > 0 and x + w <= 1 + 1e-6 and y + h <= 1 + 1e-6
