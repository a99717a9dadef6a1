"""The benchmark harness measures what it says: its counts come from the decoder, its timings are
positive and per frame, and the table shows every row. (Speed itself is measured by
`hailo-decode bench`, never asserted here.)"""

from __future__ import annotations

import numpy as np
import pytest

import hailo_decode as hd
from hailo_decode import bench
from hailo_decode._install import install_hint

from conftest import optional_package


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


def _row(workload, dtype, th, batch, cand, simd):
    return bench.Row(workload, dtype, th, batch, cand * batch, 3, floor_us=simd / 2, simd_us=simd, scalar_us=simd * 2,
                     simd_api_us=simd + 5, simd_2threads_us=simd / 1.8 if batch > 1 else None,
                     numpy_filtered_us=simd * 20, numpy_all_us=simd * 300, simd_path="avx2")


def test_plot_time_against_candidates(tmp_path):
    optional_package("matplotlib")
    from test_pictures import _png_header

    rows = [_row("yolov8n-like", "uint8", th, b, cand, us) for b in (1, 8)
            for th, cand, us in ((0.2, 40, 30.0), (0.05, 0, 25.0), (0.001, 900, 80.0))]
    rows += [_row("real frames", "uint8", 0.2, 1, 12, 20.0)]
    path = tmp_path / "bench.png"
    fig = bench.plot(rows, str(path), size_px=(900, 500))
    assert path.exists() and _png_header(path) == (900, 500)
    ax, ax_real = fig.axes
    lines = {ln.get_label(): ln for ln in ax.get_lines()}
    # one line per series and batch (2 threads only for batch 8), candidates per frame on x, in order
    assert len(lines) == 11 and "ours 2 threads, batch 1" not in lines
    simd1 = lines["ours SIMD, batch 1"]
    assert list(simd1.get_xdata()) == [0, 40, 900] and list(simd1.get_ydata()) == [25.0, 30.0, 80.0]
    assert list(lines["NumPy decode-all, batch 8"].get_ydata()) == [7500.0, 9000.0, 24000.0]
    assert list(lines["ours 2 threads, batch 8"].get_xdata()) == [0, 40, 900]
    assert [ln.get_label() for ln in ax_real.get_lines()][1] == "ours SIMD, batch 1"
    assert ax.get_xlabel().startswith("candidates per frame") and "per frame" in ax.get_ylabel()


def test_plot_without_matplotlib_stops_before_measuring(monkeypatch, capsys):
    import sys
    from types import SimpleNamespace

    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setattr(bench, "run", lambda **kw: pytest.fail("measured without a way to plot"))
    assert bench.main(SimpleNamespace(plot="x.png", quick=True, json=None)) == 2
    assert install_hint("plot") in capsys.readouterr().err


def test_span_pass_times_only_spans_inside_their_arrays():
    """_core.time_span_pass (benchmarks/families.py's must-read pass) reads only inside its arrays:
    a span reaching past the end, by its offset, length, stride or count (overflowing sizes
    included), is refused with the array's size named."""
    from hailo_decode import _core

    a = np.arange(100, dtype=np.uint8)
    times = _core.time_span_pass([(a, 4, 10, 10, 1), (a, 0, 0, 1, 100), (a, 90, 5, 2, 5)], 3)
    assert len(times) == 3 and all(t >= 0 for t in times)
    for bad in ((a, 4, 10, 11, 1), (a, 0, 0, 1, 101), (a, 100, 0, 1, 1), (a, 91, 5, 2, 5), (a, 0, 2**62, 5, 1),
                (a, 2**64 - 1, 0, 1, 2)):
        with pytest.raises(ValueError, match="100 bytes"):
            _core.time_span_pass([bad], 1)
    assert _core.time_span_pass([(a, 10**6, 1, 0, 1)], 1)  # count 0 reads nothing
