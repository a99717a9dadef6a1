"""Decoder.diagnose: per-output saturation and ranges, with plain-words warnings."""

from __future__ import annotations

import numpy as np

import hailo_decode as hd
from conftest import demo_config, uint8_frames


def test_diagnose_real_frames(uint8_data):
    dec = hd.Decoder(demo_config(uint8_data))
    report = dec.diagnose({k: v[0] for k, v in uint8_frames(uint8_data).items()})
    by_name = {r["name"]: r for r in report}
    assert set(by_name) == set(dec.config.output_names)
    cls = by_name["fall/cls_8"]
    q = uint8_data["cls_8"][0]
    # the real cls_8 head's zero point is clipped to 255 (all-negative logits): many values sit at the maximum
    assert np.isclose(cls["share_at_max"], float((q == 255).mean()))
    assert np.isclose(cls["share_at_min"], float((q == 0).mean()))


def test_diagnose_warns_on_saturated_scores():
    """Logits treated with a sigmoid that all read ~1.0: the report says so in words."""
    outs = [hd.OutputInfo("b", (4, 4, 64), "uint8", zp=100, scale=0.1),
            hd.OutputInfo("c", (4, 4, 2), "uint8", zp=0, scale=0.5)]
    dec = hd.Decoder(hd.DecoderConfig(outs, [hd.Head("b", "c", 8)], class_activation="sigmoid"))
    raw = {"b": np.full((4, 4, 64), 100, np.uint8), "c": np.full((4, 4, 2), 255, np.uint8)}
    report = {r["name"]: r for r in dec.diagnose(raw)}
    text = " ".join(str(w) for w in report["c"].get("warnings", []))
    assert "satur" in text.lower()


def test_diagnose_empty_batches_as_decode_does():
    """An empty batch, host or raw device layout, is a report of zero frames (decode gives []),
    not an error."""
    for device in (False, True):
        kw = dict(order="NHCW", padded_shape=(4, 8, 64), device=True) if device else {}
        ckw = dict(order="NHCW", padded_shape=(4, 8, 8), device=True) if device else {}
        outs = [hd.OutputInfo("b", (4, 4, 64), "uint8", zp=100, scale=0.1, **kw),
                hd.OutputInfo("c", (4, 4, 2), "uint8", zp=0, scale=0.5, **ckw)]
        dec = hd.Decoder(hd.DecoderConfig(outs, [hd.Head("b", "c", 8)]))
        raw = {o.name: np.zeros((0,) + o.frame_shapes[-1], np.uint8) for o in outs}
        assert dec(raw) == []
        report = dec.diagnose(raw)
        assert [(r["name"], r["frames"], r["values"]) for r in report] == [("b", 0, 0), ("c", 0, 0)]
