#!/usr/bin/env python3
"""Soak test: decode the real frames shipped in the package (5 uint8 frames of a 2-class YOLOv8,
one at a time, as a live pipeline calls the decoder) for a long run, and watch resident memory and
the time per frame.

    python benchmarks/soak.py                      # 1,000,000 frames after a 20,000-frame warm-up
    python benchmarks/soak.py --frames 200000 --report-every 20000 --json soak.json

Reports the resident set size (RSS, from /proc/self/statm; ru_maxrss where there is no /proc) at
the start, after the warm-up, at every report and at the end; the time per frame (the whole
Python call: checks, C++ decode + NMS, result arrays) per report window (median, p99, max) and over
the run (median and p99 from a 0.1 us histogram). Every result is checked against the first
decode of its frame, so a soak that corrupts results fails too.

Exit status 1 when RSS grew by more than --max-growth-mib (default 1 MiB) between the end of the
warm-up and the end of the run, or when a result changed; 0 otherwise.

The bookkeeping allocates nothing per frame: its buffers are allocated and touched before the
first RSS reading.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import sys
import time
from typing import Dict, List, Optional

import numpy as np

import hailo_decode as hd
from hailo_decode.demo_data import demo_config, load_demo_frames

MIB = 1024 * 1024
BUCKET_NS = 100  # histogram resolution: 0.1 us
BUCKETS = 200_000  # up to 20 ms; slower calls land in the last bucket (and in max)
_HEADS = (("box_8", "cls_8"), ("box_16", "cls_16"), ("box_32", "cls_32"))


def rss_bytes() -> int:
    """Resident set size now (Linux: /proc/self/statm), else the peak (ru_maxrss)."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if sys.platform == "darwin" else peak * 1024


def peak_rss_bytes() -> int:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


def mib(n: float) -> str:
    return f"{n / MIB:.2f} MiB"


def signed_mib(n: float) -> str:
    return f"{n / MIB:+.3f} MiB"


def hist_quantile(hist: np.ndarray, total: int, q: float) -> float:
    """The q-quantile (0..1) of the histogram, in microseconds (bucket midpoint)."""
    target = max(1, int(np.ceil(q * total)))
    idx = int(np.searchsorted(np.cumsum(hist), target))
    return (idx + 0.5) * BUCKET_NS / 1000.0


def parse_args(argv: Optional[List[str]]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--frames", type=int, default=1_000_000, help="frames to decode after the warm-up (default 1,000,000)")
    p.add_argument("--report-every", type=int, default=100_000, help="frames per report window (default 100,000)")
    p.add_argument("--warmup", type=int, default=20_000, help="warm-up frames before the RSS baseline (default 20,000)")
    p.add_argument("--threshold", type=float, default=0.25, help="score threshold (default 0.25, the demo's)")
    p.add_argument("--threads", type=int, default=1, help="Decoder(threads=) (default 1; single frames use one)")
    p.add_argument("--max-growth-mib", type=float, default=1.0,
                   help="fail when RSS grows by more than this after the warm-up (default 1 MiB)")
    p.add_argument("--json", metavar="FILE", help="also write the numbers as JSON")
    args = p.parse_args(argv)
    if args.frames < 1 or args.report_every < 1 or args.warmup < 0:
        p.error("--frames and --report-every must be >= 1, --warmup >= 0")
    return args


def main(argv: Optional[List[str]] = None) -> int:
    args = parse_args(argv)
    rss_start = rss_bytes()

    data = load_demo_frames()
    decoder = hd.Decoder(demo_config(data, score_threshold=args.threshold), threads=args.threads)
    frames: List[Dict[str, np.ndarray]] = [
        {f"fall/{k}": np.ascontiguousarray(data[k][i]) for pair in _HEADS for k in pair}
        for i in range(len(data["image_names"]))]
    n_src = len(frames)
    expected = [decoder(f) for f in frames]
    counts = [len(d) for d in expected]

    # Bookkeeping, allocated and touched once.
    window = np.empty(args.report_every, dtype=np.int64)
    window.fill(0)
    index = np.empty(args.report_every, dtype=np.int64)
    index.fill(0)
    hist = np.zeros(BUCKETS, dtype=np.int64)
    hist.fill(0)
    reports: List[dict] = []
    mismatches = 0
    clock = time.perf_counter_ns

    print(f"hailo-decode {hd.__version__} soak: {args.frames:,} frames (+{args.warmup:,} warm-up), "
          f"cycling {n_src} real frames ({counts} detections at {args.threshold}), report every "
          f"{args.report_every:,}", flush=True)
    print(f"python {platform.python_version()}, numpy {np.__version__}, kernels {hd.simd_info()['active']}, "
          f"{platform.machine()}, threads={args.threads}", flush=True)
    print(f"rss at start: {mib(rss_start)} (before loading the frames and building the decoder)", flush=True)

    def decode(n: int, first: int) -> int:
        """Decodes n frames (frame numbers first, first + 1, ...) timing each into window[:n];
        returns how many results had the wrong count."""
        bad = 0
        for j in range(n):
            f = (first + j) % n_src
            t0 = clock()
            d = decoder(frames[f])
            window[j] = clock() - t0
            if len(d) != counts[f]:
                bad += 1
        # One full comparison per window: the last result is still identical to the first decode.
        ref = expected[f]
        if not (np.array_equal(d.boxes, ref.boxes) and np.array_equal(d.scores, ref.scores)
                and np.array_equal(d.class_ids, ref.class_ids)):
            bad += 1
        return bad

    def summarize(n: int) -> tuple:
        """(median, p99, max) of window[:n] in us; adds the window to the histogram."""
        w = window[:n]
        np.floor_divide(w, BUCKET_NS, out=index[:n])
        np.minimum(index[:n], BUCKETS - 1, out=index[:n])
        np.add.at(hist, index[:n], 1)
        w.sort()  # in place
        return w[n // 2] / 1000.0, w[min(n - 1, int(0.99 * (n - 1) + 0.5))] / 1000.0, w[-1] / 1000.0

    # Warm-up, through the very code the run uses (decode, statistics, report line), so the
    # workspaces reach their final size and every code page is in before the baseline.
    done = 0
    while done < args.warmup or done == 0:
        n = min(args.report_every, max(1, args.warmup - done))
        mismatches += decode(n, done)
        done += n
        med, p99, wmax = summarize(n)
        print(f"warm-up [{done}]  rss {mib(rss_bytes())}  window median {med:6.1f} us  p99 {p99:6.1f} us  "
              f"max {wmax:8.1f} us  mismatches {mismatches}", flush=True)
    hist.fill(0)
    rss_base = rss_bytes()
    print(f"rss after warm-up: {mib(rss_base)} (baseline for growth)", flush=True)

    t_run = time.perf_counter()
    done = 0
    slowest = 0
    width = len(str(args.frames))
    while done < args.frames:
        n = min(args.report_every, args.frames - done)
        mismatches += decode(n, done)
        done += n
        med, p99, wmax = summarize(n)
        slowest = max(slowest, int(window[n - 1]))
        rss = rss_bytes()
        elapsed = time.perf_counter() - t_run
        eta = elapsed / done * (args.frames - done)
        reports.append(dict(frames=done, rss_bytes=rss, growth_bytes=rss - rss_base, median_us=med, p99_us=p99,
                            max_us=wmax, elapsed_s=elapsed))
        print(f"[{done:>{width}}/{args.frames}] {100.0 * done / args.frames:5.1f}%  rss {mib(rss)} "
              f"({signed_mib(rss - rss_base)})  window median {med:6.1f} us  p99 {p99:6.1f} us  "
              f"max {wmax:8.1f} us  elapsed {elapsed:6.1f} s  eta {eta:5.0f} s  mismatches {mismatches}",
              flush=True)
    run_s = time.perf_counter() - t_run
    rss_end = rss_bytes()
    growth = rss_end - rss_base

    median = hist_quantile(hist, done, 0.5)
    p99 = hist_quantile(hist, done, 0.99)
    window_medians = [r["median_us"] for r in reports]
    ok_mem = growth <= args.max_growth_mib * MIB
    ok = ok_mem and mismatches == 0
    print()
    print(f"frames: {done:,} in {run_s:.1f} s ({done / run_s:,.0f} frames/s, {run_s / done * 1e6:.2f} us mean per "
          f"frame incl. timing)")
    print(f"time per frame: median {median:.1f} us, p99 {p99:.1f} us, max {slowest / 1000.0:.1f} us; window medians "
          f"{min(window_medians):.1f}..{max(window_medians):.1f} us")
    print(f"rss: start {mib(rss_start)}, after warm-up {mib(rss_base)}, end {mib(rss_end)}, peak {mib(peak_rss_bytes())}")
    print(f"rss growth after warm-up: {signed_mib(growth)} ({growth} bytes; target <= {args.max_growth_mib} MiB): "
          f"{'OK' if ok_mem else 'FAIL'}")
    print(f"results changed: {mismatches} {'(OK)' if mismatches == 0 else '(FAIL)'}")
    print("PASS" if ok else "FAIL")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(dict(frames=done, warmup=args.warmup, threshold=args.threshold, run_s=run_s, median_us=median,
                           p99_us=p99, max_us=slowest / 1000.0, rss_start_bytes=rss_start, rss_baseline_bytes=rss_base,
                           rss_end_bytes=rss_end, rss_peak_bytes=peak_rss_bytes(), growth_bytes=growth,
                           mismatches=mismatches, passed=ok, kernels=hd.simd_info()["active"], reports=reports),
                      f, indent=1)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
