"""Fuzzing the interop calls (to_supervision, to_supervision_keypoints, to_coco, draw) with
Detections-like objects of every shape and kind: each call returns a consistent result or raises
ValueError/TypeError (FUZZING.md, harness `interop`). The spec is JSON-able; its arrays come from
its seed, so a failing case prints and replays (`python scripts/fuzz.py --replay SPEC`); the same
harness runs for a given time with `python scripts/fuzz.py --target interop`."""

from __future__ import annotations

import json
import warnings
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import hailo_decode as hd
from hailo_decode import interop

from conftest import optional_package

from .decoder_cases import _log_case, fuzz_settings, watchdog

optional_package("supervision")
optional_package("PIL.Image")

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning", "ignore::numpy.exceptions.ComplexWarning")

SIZES = [None, [24, 40], [1, 1], [0, 5], [-3, 4], ["a", 2], [3], [2 ** 40, 2]]
BOXES = ["ok", "normalized", "nan", "inf", "huge", "negative", "n3", "strings", "short", "flat"]
SCORES = ["ok", "nan", "short", "strings", "int"]
IDS = ["ok", "negative", "huge", "fraction", "float_whole", "strings", "short", "bool", "nan"]
KPTS = [None, "ok", "xy", "n_k", "nan", "short", "huge"]
MASKS = [None, "ok", "small", "float", "short", "flat"]
RBOXES = [None, "ok", "huge", "n4", "short", "nan"]
CATS = [None, "list", "short_list", "dict", "coco80"]


@st.composite
def interop_specs(draw):
    return {"kind": "interop", "n": draw(st.integers(0, 5)), "seed": draw(st.integers(0, 2 ** 31 - 1)),
            "box_format": draw(st.sampled_from(list(hd.BOX_FORMATS) + ["bad", None])),
            "image_size": draw(st.sampled_from(SIZES)), "boxes": draw(st.sampled_from(BOXES)),
            "scores": draw(st.sampled_from(SCORES)), "ids": draw(st.sampled_from(IDS)),
            "keypoints": draw(st.sampled_from(KPTS)), "masks": draw(st.sampled_from(MASKS)),
            "rboxes": draw(st.sampled_from(RBOXES)), "cats": draw(st.sampled_from(CATS)),
            "line_width": draw(st.sampled_from([None, 1, 3, 0, 10 ** 6]))}


def _hw(spec):
    size = spec["image_size"]
    ok = isinstance(size, list) and len(size) == 2 and all(isinstance(v, int) and 0 < v < 4096 for v in size)
    return tuple(size) if ok else (24, 40)


def _make(spec):
    rng = np.random.default_rng(spec["seed"])
    n = spec["n"]
    h, w = _hw(spec)
    kind = spec["boxes"]
    xy = np.sort(rng.uniform(-5, max(h, w) + 5, size=(n, 2, 2)), axis=1).reshape(n, 4)
    boxes = {"ok": xy, "normalized": xy / max(h, w), "nan": np.where(rng.random((n, 4)) < 0.5, np.nan, xy),
             "inf": np.full((n, 4), np.inf), "huge": xy * 1e30, "negative": -xy, "n3": xy[:, :3],
             "strings": np.array([["a"] * 4] * n), "short": xy[:-1], "flat": xy.reshape(-1)}[kind]
    scores = {"ok": rng.random(n), "nan": np.full(n, np.nan), "short": rng.random(max(n - 1, 0)),
              "strings": np.array(["x"] * n), "int": np.ones(n, int)}[spec["scores"]]
    ids = {"ok": rng.integers(0, 3, n), "negative": -rng.integers(1, 3, n), "huge": np.full(n, 2 ** 40),
           "fraction": rng.random(n) + 0.5, "float_whole": rng.integers(0, 3, n).astype(float),
           "strings": np.array(["c"] * n), "short": rng.integers(0, 3, max(n - 1, 0)),
           "bool": rng.random(n) < 0.5, "nan": np.full(n, np.nan)}[spec["ids"]]
    ns = SimpleNamespace(boxes=boxes, scores=scores, class_ids=ids, box_format=spec["box_format"],
                         image_size=spec["image_size"])
    k = spec["keypoints"]
    if k is not None:
        pts = np.concatenate([rng.uniform(0, max(h, w), (n, 4, 2)), rng.random((n, 4, 1))], axis=2)
        ns.keypoints = {"ok": pts, "xy": pts[..., :2], "n_k": pts[..., 0], "nan": pts * np.nan,
                        "short": pts[:-1], "huge": pts * 1e35}[k]
    m = spec["masks"]
    if m is not None:
        mk = rng.random((n, h, w)) < 0.3
        ns.masks = {"ok": mk, "small": mk[:, ::2, ::2], "float": mk.astype(float), "short": mk[:-1],
                    "flat": mk.reshape(n, h * w)}[m]
    r = spec["rboxes"]
    if r is not None:
        rb = np.concatenate([rng.uniform(0, max(h, w), (n, 4)), rng.uniform(-3, 3, (n, 1))], axis=1)
        ns.rboxes = {"ok": rb, "huge": rb * 1e30, "n4": rb[:, :4], "short": rb[:-1], "nan": rb * np.nan}[r]
    cats = {None: None, "list": [1, 2, 3], "short_list": [1], "dict": {0: 5, 1: 6, 2: 7},
            "coco80": interop.COCO80_TO_COCO91}[spec["cats"]]
    return ns, cats, (h, w)


def _call(fn, *args, **kw):
    try:
        return fn(*args, **kw), None
    except (ValueError, TypeError) as e:
        return None, e


@fuzz_settings(300)
@given(interop_specs())
def test_fuzz_interop(spec):
    run_interop_spec(spec)


def run_interop_spec(spec):
    """Runs one spec; returns an outcome label (which calls gave a result), raises on a bug."""
    _log_case(spec)
    with watchdog():
        return _run(spec)


def _run(spec):
    dets, cats, (h, w) = _make(spec)
    n = spec["n"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s, _ = _call(interop.to_supervision, dets, class_names=["a", "b", "c"])
        if s is not None:
            assert len(s) == n and s.xyxy.shape == (n, 4) and np.isfinite(s.xyxy).all()
            assert s.class_id.tolist() == np.asarray(dets.class_ids).astype(np.int64).tolist()
        kp, _ = _call(interop.to_supervision_keypoints, dets)
        if kp is not None:
            assert len(kp) == n and kp.xy.shape[0] == n
        recs, _ = _call(interop.to_coco, dets, 1, cats)
        if recs is not None:
            assert len(recs) == n
            json.dumps(recs, allow_nan=False)  # valid JSON: no NaN or inf
            assert all(r["bbox"][2] >= 0 or spec["boxes"] == "negative" for r in recs)
        img = np.full((h, w, 3), 50, np.uint8)
        out, _ = _call(interop.draw, img, dets, ["a", "b", "c"], line_width=spec["line_width"])
        if out is not None:
            assert out.shape == (h, w, 3) and out.dtype == np.uint8
        # a well-formed spec must not be refused
        well_formed = (spec["boxes"] in ("ok", "negative") and spec["scores"] in ("ok", "int")
                       and spec["ids"] in ("ok", "float_whole", "bool")
                       and spec["box_format"] in ("xyxy_pixels", "yxyx_pixels")
                       and spec["keypoints"] in (None, "ok", "xy") and spec["masks"] in (None, "ok")
                       and spec["rboxes"] in (None, "ok") and spec["image_size"] in (None, [24, 40], [1, 1]))
        if well_formed:
            assert s is not None
            assert recs is not None or (spec["cats"] == "short_list" and n > 0)
            assert out is not None or spec["line_width"] == 0
    return "ok:" + "".join("1" if r is not None else "0" for r in (s, kp, recs, out))
