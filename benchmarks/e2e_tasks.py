"""What end-to-end task heads (issue 13) cost over the end-to-end detection decode of the same box
and class tensors: YOLO26n-pose/-obb/-seg-sized uint8 heads (640 x 640, strides 8/16/32, box 4
channels; pose 1 class + 17 x 3 keypoints, OBB 15 classes + 1 angle, seg 80 classes + 32 mask
coefficients and a (160, 160, 32) prototype tensor), about 0.5 % of class values high. Each round
times the task decoder and the detection-only decoder alternately (one frame, medians of per-call
times, `Decoder.__call__` from Python); the ratio is the round's task / detection.

    python benchmarks/e2e_tasks.py [--rounds 5] [--calls 200]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import hailo_decode as hd

STRIDES = (8, 16, 32)
TASKS = {"pose": (1, "kpt", 51), "obb": (15, "angle", 1), "seg": (80, "mask", 32)}


def _case(task: str, rng: np.random.Generator):
    nc, role, channels = TASKS[task]
    outputs, heads, raw = [], [], {}
    for s in STRIDES:
        g = 640 // s
        cls = rng.integers(0, 40, size=(g, g, nc)).astype(np.uint8)
        hit = rng.random(cls.shape) < 0.005
        cls[hit] = rng.integers(100, 256, size=int(hit.sum())).astype(np.uint8)
        arrays = {f"box{s}": rng.integers(0, 256, size=(g, g, 4)).astype(np.uint8), f"cls{s}": cls,
                  f"{role}{s}": rng.integers(0, 256, size=(g, g, channels)).astype(np.uint8)}
        for name, a in arrays.items():
            outputs.append(hd.OutputInfo(name, a.shape, "uint8", zp=128.0, scale=0.05 if name.startswith("cls") else 0.02))
            raw[name] = a
        heads.append(hd.Head(f"box{s}", f"cls{s}", s, **{role: f"{role}{s}"}))
    kw = {}
    if task == "seg":
        raw["proto"] = rng.integers(0, 256, size=(160, 160, 32)).astype(np.uint8)
        outputs.append(hd.OutputInfo("proto", (160, 160, 32), "uint8", zp=128.0, scale=0.02))
        kw["proto"] = "proto"
    task_cfg = hd.DecoderConfig(outputs, heads, image_size=(640, 640), semantics="ultralytics", end2end=True,
                                score_threshold=0.25, keypoint_decode="yolo26", angle_decode="raw", **kw)
    det_outputs = [o for o in outputs if o.name.startswith(("box", "cls"))]
    det_cfg = hd.DecoderConfig(det_outputs, [hd.Head(h.box, h.cls, h.stride) for h in heads], image_size=(640, 640),
                               semantics="ultralytics", end2end=True, score_threshold=0.25)
    det_raw = {o.name: raw[o.name] for o in det_outputs}
    return hd.Decoder(task_cfg), raw, hd.Decoder(det_cfg), det_raw


def _median_us(dec, raw, calls: int) -> float:
    times = []
    for _ in range(calls):
        t = time.perf_counter()
        dec(raw)
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--calls", type=int, default=200)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    print("| head | rows | task e2e | detection e2e | task / detection |")
    print("|---|---|---|---|---|")
    for task in TASKS:
        dec, raw, det, det_raw = _case(task, rng)
        rows = len(dec(raw))
        ratios, ts, ds = [], [], []
        for _ in range(args.rounds):
            t = _median_us(dec, raw, args.calls)
            d = _median_us(det, det_raw, args.calls)
            ratios.append(t / d)
            ts.append(t)
            ds.append(d)
        print(f"| {task} | {rows} | {min(ts):.0f}-{max(ts):.0f} us | {min(ds):.0f}-{max(ds):.0f} us | "
              f"{min(ratios):.2f}-{max(ratios):.2f}x |")


if __name__ == "__main__":
    main()
