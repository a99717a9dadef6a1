"""pytest-benchmark: ours (SIMD and scalar paths, Python API), the floor (one read pass over the
class bytes) and the NumPy baselines, side by side, on the yolov8n-like workload (uint8 and
uint16) and the real frames. Run:

    pip install ".[bench]" && python -m pytest benchmarks --benchmark-only --benchmark-group-by=param:workload

`hailo-decode bench` measures the same things with C++-side timing and prints ratios
(BENCHMARKS.md)."""

from __future__ import annotations

import numpy as np
import pytest

import hailo_decode as hd
from hailo_decode import _core
from hailo_decode.bench import numpy_decode_all, numpy_filtered, real_frames, yolov8n_like

WORKLOADS = {
    "yolov8n-uint8-th0.2": (lambda: yolov8n_like("uint8", batch=1), 0.2),
    "yolov8n-uint16-th0.2": (lambda: yolov8n_like("uint16", batch=1), 0.2),
    "yolov8n-uint8-th0.001": (lambda: yolov8n_like("uint8", batch=1), 0.001),
    "real-uint8-th0.25": (real_frames, 0.25),
}


@pytest.fixture(scope="module", params=sorted(WORKLOADS))
def workload(request):
    make, th = WORKLOADS[request.param]
    cfg, frames = make()
    cfg = cfg.replace(score_threshold=th)
    frame = {k: np.ascontiguousarray(v[0]) for k, v in frames.items()}
    return request.param, cfg, frame, th


def test_floor_read_pass(benchmark, workload):
    _, cfg, frame, _ = workload
    cls = [frame[h.cls] for h in cfg.heads]
    benchmark(_core.time_read_pass, cls, 1)


@pytest.mark.parametrize("path", _core.simd_info()["available"])
def test_ours(benchmark, workload, path):
    _, cfg, frame, _ = workload
    best = _core.simd_info()["active"]
    _core.select_simd(path)
    try:
        dec = hd.Decoder(cfg)
        benchmark(dec, frame)
    finally:
        _core.select_simd(best)


def test_numpy_filtered(benchmark, workload):
    _, cfg, frame, th = workload
    benchmark(numpy_filtered, cfg, frame, th)


def test_numpy_decode_all(benchmark, workload):
    _, cfg, frame, th = workload
    benchmark.pedantic(numpy_decode_all, args=(cfg, frame, th), rounds=3, iterations=1)
