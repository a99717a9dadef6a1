"""Decoder.decode's two ways in: the one-frame dict checked in C++ (`decode_one`) and Python's
checks for everything else (batches, other mappings, arrays in another form). Both must give the
same detections; decode_one must hand anything unusual to Python rather than read it."""

from __future__ import annotations

import collections

import numpy as np
import pytest

import hailo_decode as hd
from hailo_decode.demo_data import demo_config, demo_frames, load_demo_frames


@pytest.fixture(scope="module")
def case():
    """The bundled real frames' first one (a trained YOLOv8's uint8 heads)."""
    data = load_demo_frames()
    raw = {k: np.ascontiguousarray(v[0]) for k, v in demo_frames(data).items()}
    return hd.Decoder(demo_config(data)), raw


def _rows(d):
    return np.concatenate([d.boxes, d.scores[:, None], d.class_ids[:, None].astype(np.float32)], axis=1)


def test_decode_one_takes_exactly_the_declared_frame(case):
    dec, raw = case
    assert dec._core.decode_one(dict(raw)) is not None
    first = next(iter(raw))
    others = {
        "another mapping": collections.OrderedDict(raw),
        "a batch of one": {k: v[None] for k, v in raw.items()},
        "a missing output": {k: v for k, v in raw.items() if k != first},
        "an extra key": {**raw, "extra": np.zeros(1, np.uint8)},
        "another dtype": {**raw, first: raw[first].astype(np.float32)},
        "another shape": {**raw, first: raw[first].reshape(-1)},
        "an ndarray subclass": {**raw, first: raw[first].view(np.recarray)},
        "not an array": {**raw, first: raw[first].tolist()},
        "not a dict": list(raw.values()),
    }
    for what, r in others.items():
        assert dec._core.decode_one(r) is None, what


def test_both_ways_give_the_same_detections(case):
    dec, raw = case
    one = dec(dict(raw))
    assert len(one) > 0
    np.testing.assert_array_equal(_rows(dec(collections.OrderedDict(raw))), _rows(one))
    batch = dec({k: np.stack([v, v]) for k, v in raw.items()})
    for d in batch:
        np.testing.assert_array_equal(_rows(d), _rows(one))


def test_the_core_refuses_what_it_cannot_read_in_place(case):
    dec, raw = case
    first = next(iter(raw))
    a = raw[first]
    strided = np.repeat(a, 2, axis=-1)[..., ::2]  # the declared shape and dtype, not contiguous
    assert strided.shape == a.shape and not strided.flags.c_contiguous
    with pytest.raises(ValueError, match=rf"'{first}': array is not C-contiguous \(it is read in place"):
        dec({**raw, first: strided})
