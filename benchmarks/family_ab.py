#!/usr/bin/env python3
"""One families.py workload's C++ decode time, for A/B runs of two builds: install each in its
own venv and run this alternately under both (the machine drifts; alternate process by process).

    python benchmarks/family_ab.py LABEL [WORKLOAD] [SIMD]

WORKLOAD: yolox (default; families.py's dense synthetic frame), yolox_real, yolov5, e2e, e2e_low.
SIMD: a level to force (hd.simd_info()['available']). Prints the median of 80 rounds of 30 calls.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import families as F  # noqa: E402

import hailo_decode as hd  # noqa: E402
from hailo_decode import _core  # noqa: E402


def workload(name: str):
    rng = np.random.default_rng(0)  # families.py's order of draws, so the same frames as its rows
    v5 = F.yolov5(rng)
    x = F.yolox(rng)
    e2e = F.end2end(rng, 1, 0.2)
    e2e_low = F.end2end(rng, 1, 0.001)
    F.end2end(rng, 16, 0.001)
    x_real = F.yolox_real(rng)
    return {"yolov5": v5, "yolox": x, "e2e": e2e, "e2e_low": e2e_low, "yolox_real": x_real}[name]


def main() -> None:
    label = sys.argv[1] if len(sys.argv) > 1 else "build"
    name = sys.argv[2] if len(sys.argv) > 2 else "yolox"
    if len(sys.argv) > 3:
        if sys.argv[3] not in hd.simd_info()["available"]:
            raise SystemExit(f"SIMD level {sys.argv[3]!r} not available: {hd.simd_info()['available']}")
        _core.select_simd(sys.argv[3])
    cfg, raw = workload(name)
    dec = hd.Decoder(cfg)
    arrays = [np.ascontiguousarray(raw[o.name]) for o in cfg.outputs]
    rows = len(dec(raw))
    t = [statistics.median(dec._core.time_decode(arrays, 1, 30)) for _ in range(80)]
    print(f"{label} {name} ({_core.simd_info()['active']}): {statistics.median(t) * 1e6:.3f} us, {rows} rows")


if __name__ == "__main__":
    main()
