"""The benchmark harness measures what it says: its counts come from the decoder, its timings are
positive and per frame, and the table shows every row. (Speed itself is measured by
`hailo-decode bench`, never asserted here.)"""

from __future__ import annotations

import numpy as np

import hailo_decode as hd
from hailo_decode import bench


def test_measure_counts_and_table():
    cfg, frames = bench.real_frames()
    row = bench.measure("real frames", cfg, frames, 0.25, 2, budget=0.01, numpy_budget=0.01)
    two = {k: np.ascontiguousarray(v[:2]) for k, v in frames.items()}
    dets = hd.Decoder(cfg.replace(score_threshold=0.25))(two)
    assert row.detections == sum(len(d) for d in dets)
    assert row.candidates >= row.detections > 0
    for t in (row.floor_us, row.simd_us, row.scalar_us, row.simd_api_us, row.simd_2threads_us,
              row.numpy_filtered_us, row.numpy_all_us):
        assert t is not None and t > 0
    assert row.simd_memory_us is None  # only the yolov8n-like rows read from memory
    assert abs(row.ratios["simd / floor"] - row.simd_us / row.floor_us) < 1e-9
    table = bench.format_table([row])
    assert "| real frames | uint8 | 0.25 | 2 |" in table and "From memory" not in table


def test_from_memory_reads_distinct_copies():
    cfg, frames = bench.real_frames()
    cfg = cfg.replace(score_threshold=0.25)
    one = sum(frames[o.name][0].nbytes for o in cfg.outputs)
    floor, ours = bench._from_memory(hd.Decoder(cfg), cfg, frames, rounds=1, cache_bytes=20 * one)
    assert floor > 0 and ours > 0


def test_side_by_side_takes_medians_of_every_round():
    calls = {"a": [], "b": []}

    def series(name, value, warm_up_value):
        # Every round starts with an untimed warm-up call: its (worse) timings must not count.
        def run(n):
            calls[name].append(n)
            first_of_round = len(calls[name]) % 2 == 0
            return [warm_up_value if first_of_round else value] * n
        return run

    # Calls of microseconds: the warm-up calls hold more timings than the timed ones, so counting
    # them would move the medians.
    medians = bench._side_by_side({"a": series("a", 1e-6, 5e-5), "b": series("b", 3e-6, 7e-5)}, budget=1e-4, rounds=4)
    assert medians == {"a": 1e-6, "b": 3e-6}
    # one sizing call, then a warm-up call and a timed call per round
    assert [len(c) for c in calls.values()] == [9, 9]
