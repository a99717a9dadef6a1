"""Decoders and Python threads.

A Decoder is shareable across threads: any number of Python threads may call the same decoder.
Calls on one decoder are serialized by a per-decoder mutex, which is taken with the GIL released
(so a thread waiting for the decoder never blocks the rest of the program, and the decode itself
runs without the GIL). Results never depend on which thread decoded what, or on what ran at the
same time. For parallel decoding use one decoder per thread, or `Decoder(config, threads=N)`,
which decodes the frames of a batch on a persistent pool of N threads with the same results.

The frames are the real model outputs shipped in the package (5 uint8 frames of a 2-class
YOLOv8, see tests/fixtures/README.md) and the float heads of the same frames.
"""

from __future__ import annotations

import sys
import threading
import time

import numpy as np
import pytest

import hailo_decode as hd
from conftest import demo_config, float_config, float_frames, uint8_frames

N_FRAMES = 5


def _frames(batch):
    return [{k: v[i] for k, v in batch.items()} for i in range(N_FRAMES)]


def _tile(batch, times):
    return {k: np.ascontiguousarray(np.concatenate([v] * times)) for k, v in batch.items()}


def _mismatch(a, b):
    """None if two Detections are identical, else what differs."""
    for what in ("class_ids", "scores", "boxes"):
        x, y = getattr(a, what), getattr(b, what)
        if x.shape != y.shape or not np.array_equal(x, y):
            return f"{what}: {x!r} != {y!r}"
    if a.box_format != b.box_format:
        return f"box_format {a.box_format} != {b.box_format}"
    return None


def _run_threads(n, target):
    """Runs target(i) on n threads started together; re-raises the first exception."""
    barrier = threading.Barrier(n)
    errors = []

    def body(i):
        try:
            barrier.wait()
            target(i)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=body, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not any(t.is_alive() for t in threads), "a decoding thread hung"
    if errors:
        raise errors[0]


@pytest.mark.parametrize("threads,batch,calls", [(1, 1, 1000), (2, 2, 500)], ids=["single_frames", "pool_batches"])
def test_one_decoder_eight_threads(uint8_data, threads, batch, calls):
    """8 Python threads share one decoder, each decoding 1,000 frames (one at a time, or batches of
    2 on a threads=2 decoder), every thread at a different point of the 5-frame cycle: every
    result equals serial decoding."""
    data = uint8_frames(uint8_data)
    decoder = hd.Decoder(demo_config(uint8_data), threads=threads)
    singles = _frames(data)
    serial = [decoder(f) for f in singles]
    assert sum(len(d) for d in serial) == 9
    # A batch of `batch` consecutive frames of the cycle, starting at frame s.
    inputs = [{k: np.ascontiguousarray(np.stack([v[(s + j) % N_FRAMES] for j in range(batch)])) for k, v in data.items()}
              for s in range(N_FRAMES)]
    bad, counted = [], [0] * 8

    def work(t):
        for i in range(calls):
            s = (i + 3 * t) % N_FRAMES
            got = decoder(inputs[s] if batch > 1 else singles[s])
            got = got if isinstance(got, list) else [got]
            for j, d in enumerate(got):
                m = _mismatch(d, serial[(s + j) % N_FRAMES])
                if m:
                    bad.append((t, i, j, m))
                counted[t] += 1

    _run_threads(8, work)
    assert not bad, f"{len(bad)} results differ from serial decoding, first: {bad[0]}"
    assert counted == [1000] * 8


@pytest.mark.parametrize("pair", ["uint8_settings", "uint8_and_float"])
def test_two_decoders_two_threads(uint8_data, float_data, pair):
    """Two decoders with different settings (activation, thresholds, preset, box format, tensor
    types) decoding at the same time in two threads each give their own serial results."""
    a_cfg = demo_config(uint8_data)  # hailort preset, sigmoid, 0.25, yxyx normalized
    a_in = uint8_frames(uint8_data)
    if pair == "uint8_settings":  # same arrays, everything else different (preset, per-class thresholds, ...)
        b_cfg = demo_config(uint8_data, semantics="ultralytics", score_threshold=[0.05, 0.02],
                            box_format="xyxy_pixels", iou_threshold=0.5)
        b_in = a_in
    else:
        b_cfg = float_config(float_data, semantics="ultralytics", score_threshold=0.05)
        b_in = float_frames(float_data)
    decoders = [hd.Decoder(a_cfg), hd.Decoder(b_cfg)]
    inputs = [_frames(a_in), _frames(b_in)]
    serial = [[dec(f) for f in frames] for dec, frames in zip(decoders, inputs)]
    assert [sum(len(d) for d in s) for s in serial][0] == 9
    assert sum(len(d) for d in serial[1]) > 9  # a different result set
    bad = []

    def work(t):
        for i in range(1000):
            f = i % N_FRAMES
            m = _mismatch(decoders[t](inputs[t][f]), serial[t][f])
            if m:
                bad.append((t, i, m))

    _run_threads(2, work)
    assert not bad, f"{len(bad)} results differ, first: {bad[0]}"


@pytest.mark.parametrize("threads", [2, 3, 8])
@pytest.mark.parametrize("load", ["th0.25", "th0.0"])
def test_pool_threads_same_as_one(uint8_data, threads, load):
    """Decoder(cfg, threads=N) on a batch gives what threads=1 gives, frame by frame (batches of 5
    and 20 frames; at threshold 0 every cell is a candidate)."""
    kw = {} if load == "th0.25" else dict(score_threshold=0.0, max_per_class=None)
    cfg = demo_config(uint8_data, **kw)
    one, many = hd.Decoder(cfg), hd.Decoder(cfg, threads=threads)
    assert many.threads == threads
    for batch in (uint8_frames(uint8_data), _tile(uint8_frames(uint8_data), 4)):
        expected = one(batch)
        for _ in range(2):  # the pool is persistent: a second run on the same workers
            got = many(batch)
            assert len(got) == len(expected)
            for i, (g, e) in enumerate(zip(got, expected)):
                assert _mismatch(g, e) is None, f"frame {i}: {_mismatch(g, e)}"
    if load == "th0.0":
        assert min(len(d) for d in expected) > 1000


@pytest.mark.skipif(not getattr(sys, "_is_gil_enabled", lambda: True)(), reason="no GIL in this build")
def test_gil_released_while_decoding(uint8_data):
    """A pure-Python counter thread advances while the main thread is inside a long C++ decode.

    The switch interval is raised to 60 s for the test, so the interpreter never forces the main
    thread to hand over the GIL: the counter can only run when the main thread releases it. The
    counter sleeps briefly every 256 increments, so the main thread can take the GIL back when it
    wants it. The control: during as long a stretch of pure-Python work on the main thread the
    counter does not move at all."""
    decoder = hd.Decoder(demo_config(uint8_data, score_threshold=0.0, max_per_class=None))
    batch = _tile(uint8_frames(uint8_data), 2)  # 10 frames x ~5,000 detections each
    state = {"count": 0, "stop": False}
    started = threading.Event()

    def counter():
        started.set()
        while not state["stop"]:
            state["count"] += 1
            if state["count"] % 256 == 0:
                time.sleep(0.0005)  # lets the main thread take the GIL back when it waits for it

    old = sys.getswitchinterval()
    sys.setswitchinterval(60.0)
    t = threading.Thread(target=counter, daemon=True)
    try:
        t.start()
        assert started.wait(30)
        c0 = state["count"]
        dets = decoder(batch)  # C++ with the GIL released
        c1 = state["count"]
        busy = 0
        for i in range(300_000):  # pure Python: holds the GIL throughout
            busy += i & 7
        c2 = state["count"]
    finally:
        state["stop"] = True
        sys.setswitchinterval(old)
        t.join(30)
    assert not t.is_alive()
    assert len(dets) == 10 and min(len(d) for d in dets) > 1000
    assert c1 - c0 > 0, "the counter thread never ran while C++ decoded: the GIL was held"
    assert c2 - c1 == 0, "control failed: the counter ran while the main thread held the GIL"
