"""A hailo-apps style callback, run by Debian's /usr/bin/python3 (its gi and GStreamer, TAPPAS'
`hailo` module built by tests/gstreamer): runs a pipeline and, in a pad probe on the element named
`probe` (an identity, as hailo-apps' USER_CALLBACK_PIPELINE), reads every number of every object
of each frame through `hailo` the way callbacks do: hailo.get_roi_from_buffer, get_objects_typed,
get_bbox, get_label, get_confidence, and det.get_objects() walked calling get_type() on each
object. Writes JSON (tests compare it with the Python Decoder; the test's venv Python has no gi).

    python3 probe.py SPEC.json      SPEC: {"pipeline": str, "out": path, "hold": bool, "timeout": s,
                                           "runs": n}

hold: the callback only keeps the frames' detections; they are read after the pipeline has been
set to NULL and dropped (hailofilter's dispose dlcloses the post-process), as a callback that keeps
detections across frames (a tracker, a queue to another thread) reads them later.
"""

from __future__ import annotations

import gc
import json
import sys

import gi

gi.require_version("Gst", "1.0")
from gi.repository import Gst  # noqa: E402

import hailo  # noqa: E402


def _bbox(b) -> list:
    return [b.xmin(), b.ymin(), b.width(), b.height()]


def _object(obj) -> dict:
    """One object under a detection, read as a callback reads it: get_type() first."""
    try:
        kind = obj.get_type()
    except Exception as e:  # noqa: BLE001 - the failure is what the test reads
        return {"type": None, "error": f"{type(e).__name__}: {e}", "class": type(obj).__name__}
    if kind == hailo.HAILO_LANDMARKS:
        return {"type": "landmarks", "name": obj.get_landmarks_type(), "threshold": obj.get_threshold(),
                "pairs": [list(p) for p in obj.get_pairs()],
                "points": [[p.x(), p.y(), p.confidence()] for p in obj.get_points()]}
    if kind == hailo.HAILO_CONF_CLASS_MASK:
        return {"type": "conf_class_mask", "width": obj.get_width(), "height": obj.get_height(),
                "transparency": obj.get_transparency(), "data": list(obj.get_data())}
    if kind == hailo.HAILO_UNIQUE_ID:
        return {"type": "unique_id", "id": obj.get_id(), "mode": int(obj.get_mode())}
    if kind == hailo.HAILO_CLASSIFICATION:
        return {"type": "classification", "label": obj.get_label(), "class_id": obj.get_class_id(),
                "confidence": obj.get_confidence()}
    if kind == hailo.HAILO_USER_META:
        return {"type": "user_meta", "int": obj.get_user_int(), "string": obj.get_user_string(),
                "float": obj.get_user_float()}
    if kind == hailo.HAILO_DETECTION:
        return {"type": "detection", **_detection(obj)}
    return {"type": str(kind)}


def _detection(det) -> dict:
    return {"bbox": _bbox(det.get_bbox()), "label": det.get_label(), "class_id": det.get_class_id(),
            "confidence": det.get_confidence(), "class": type(det).__name__,
            "objects": [_object(o) for o in det.get_objects()]}


def _frame(roi, detections) -> dict:
    return {"bbox": _bbox(roi.get_bbox()), "scaling_bbox": _bbox(roi.get_scaling_bbox()),
            "detections": [_detection(d) for d in detections],
            # every object the ROI holds, by type: a detection-only callback sees only these
            "types": [str(o.get_type()) for o in roi.get_objects()]}


def main() -> int:
    spec = json.loads(open(sys.argv[1]).read())
    Gst.init(None)
    pipeline = Gst.parse_launch(spec["pipeline"])
    frames: list = []
    held: list = []
    errors: list = []

    def on_buffer(pad, info):
        buffer = info.get_buffer()
        try:
            roi = hailo.get_roi_from_buffer(buffer)
            detections = roi.get_objects_typed(hailo.HAILO_DETECTION)
            if spec.get("hold"):
                held.append((roi, detections))
            else:
                frames.append(_frame(roi, detections))
        except Exception as e:  # noqa: BLE001 - reported in the JSON, the pipeline goes on
            errors.append(f"callback: {type(e).__name__}: {e}")
        return Gst.PadProbeReturn.OK

    probe = pipeline.get_by_name(spec.get("probe", "probe"))
    probe.get_static_pad("src").add_probe(Gst.PadProbeType.BUFFER, on_buffer)
    bus = pipeline.get_bus()
    eos = True
    for _ in range(int(spec.get("runs", 1))):  # runs > 1: played to EOS, set to NULL, played again
        pipeline.set_state(Gst.State.PLAYING)
        msg = bus.timed_pop_filtered(int(spec.get("timeout", 60)) * Gst.SECOND,
                                     Gst.MessageType.EOS | Gst.MessageType.ERROR)
        eos = eos and msg is not None and msg.type == Gst.MessageType.EOS
        if msg is not None and msg.type == Gst.MessageType.ERROR:
            err, debug = msg.parse_error()
            errors.append(f"{msg.src.get_name()}: {err.message}")
        elif msg is None:
            errors.append("timeout")
        pipeline.set_state(Gst.State.NULL)
    del probe, bus, msg, pipeline
    gc.collect()
    if spec.get("hold"):
        # The elements are gone (hailofilter's dispose: free_resources and dlclose); read now.
        frames = [_frame(roi, dets) for roi, dets in held]
        held.clear()
    with open(spec["out"], "w") as f:
        json.dump({"frames": frames, "errors": errors, "eos": eos}, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
