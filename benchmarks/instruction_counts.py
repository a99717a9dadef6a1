"""Instructions per decode, counted by valgrind's callgrind: a trend that does not move with the
machine's load or state (the timed benchmarks' ratios do, by 10-40 % on a shared 2-core machine).

Each workload is the timed benchmarks' own (families.py's heads in its random order, seg_bench.py's
20-object frame, bench.py's yolov8n-like detection frame), decoded in a child process under
callgrind twice, n1 and n2 times; (I(n2) - I(n1)) / (n2 - n1) is the cost of one call with the
setup, imports and first-call warm-up taken out. The detection and families rows count the C++
decode as families.py times it (`time_decode`, one decode a call: no Python call, no Detections);
the seg rows go through the Python API (`masks_at_proto` is the API's work), so they also count
the Python call. Two runs of one workload differ by a few thousand instructions in all (imports),
a few hundred a call after the division.

The SIMD level is forced (HAILO_DECODE_SIMD, default avx2 on x86-64 and neon on aarch64): valgrind
runs no AVX-512, and counts only compare on one path. Instruction counts are not time (a vector
instruction counts one, and valgrind counts a `rep stosb` memset once per byte: most of seg_proto's
extra over seg_decode is the 512 KB output's zeroing), so compare a row with itself across commits,
not rows with each other.

    python benchmarks/instruction_counts.py [--only yolox,seg_proto] [--simd avx2] [--n 1,21]

Needs valgrind (Debian: valgrind). About 20 s a workload.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Callable, Dict, Tuple

HERE = Path(__file__).resolve().parent


def _families(name: str):
    sys.path.insert(0, str(HERE))
    import numpy as np

    import families as fam

    # families.py's main() draws the workloads from one generator in this order: replay the draws
    # before the one asked for, so each gets the very heads the timed table uses.
    order = [("yolov5", lambda r: fam.yolov5(r)), ("yolox", lambda r: fam.yolox(r)),
             ("yolo26_0.2", lambda r: fam.end2end(r, 1, 0.2)), ("yolo26_0.001", lambda r: fam.end2end(r, 1, 0.001)),
             ("yolov10_0.001", lambda r: fam.end2end(r, 16, 0.001)), ("yolox_real", lambda r: fam.yolox_real(r)),
             ("yolo26_real_0.2", lambda r: fam.end2end_real(r, 0.2)),
             ("yolo26_real_0.001", lambda r: fam.end2end_real(r, 0.001))]
    rng = np.random.default_rng(0)
    for key, make in order:
        cfg, raw = make(rng)
        if key == name:
            return cfg, raw
    raise KeyError(name)


def _seg(proto_masks: bool):
    sys.path.insert(0, str(HERE))
    import numpy as np

    import hailo_decode as hd
    import seg_bench

    cfg, frame, _ = seg_bench.workload()
    dec = hd.Decoder(cfg)
    n = len(dec(frame))
    buf = np.zeros((n, 160, 160), np.bool_)
    if proto_masks:
        return lambda: dec(frame).masks_at_proto(out=buf)
    return lambda: dec(frame)


def _in_cpp(cfg, raw) -> Callable[[], object]:
    """One decode timed in C++ as families.py times it (time_decode: no Python call, no
    Detections), so that the count holds the decode's own work only."""
    import numpy as np

    import hailo_decode as hd

    dec = hd.Decoder(cfg)
    arrays = [np.ascontiguousarray(raw[o.name]) for o in cfg.outputs]
    return lambda: dec._core.time_decode(arrays, 1, 1)


def _detection():
    from hailo_decode.bench import yolov8n_like

    cfg, frames = yolov8n_like("uint8", batch=1)
    return _in_cpp(cfg, {k: v[0] for k, v in frames.items()})


def _call_of(name: str) -> Callable[[], object]:
    if name == "seg_decode":
        return _seg(False)
    if name == "seg_proto":
        return _seg(True)
    if name == "yolov8_detection":
        return _detection()
    return _in_cpp(*_families(name))


WORKLOADS: Dict[str, str] = {
    "yolov8_detection": "bench.py yolov8n-like, uint8, one frame (default settings)",
    "yolov5": "families.py YOLOv5n-like, th 0.2 (hailort)",
    "yolox": "families.py YOLOX-nano-like, th 0.2 (hailort)",
    "yolo26_0.2": "families.py YOLO26n-like end-to-end, conf 0.2 (dense)",
    "yolo26_0.001": "families.py YOLO26n-like end-to-end, conf 0.001",
    "yolov10_0.001": "families.py YOLOv10n-like end-to-end (16 bins), conf 0.001",
    "yolox_real": "families.py real density: YOLOX-nano-like, th 0.2",
    "yolo26_real_0.2": "families.py real density: YOLO26n-like end-to-end, conf 0.2",
    "yolo26_real_0.001": "families.py real density: YOLO26n-like end-to-end, conf 0.001",
    "seg_decode": "seg_bench.py: decode with the 20 objects' window logits",
    "seg_proto": "seg_bench.py: decode + masks_at_proto(out=buf)",
}


def child(name: str, n: int) -> None:
    call = _call_of(name)
    call()  # first call: workspaces grow, tables fill
    # No collection inside the loop: a cyclic collection costs some 100k instructions, and where
    # one falls depends on everything allocated before (n1 and n2 would see different numbers).
    gc.collect()
    gc.disable()
    for _ in range(n):
        call()


def _instructions(name: str, n: int, simd: str) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cg.out")
        # The same count run after run: fixed string hashes, and no OpenBLAS threads spinning.
        env = dict(os.environ, HAILO_DECODE_SIMD=simd, PYTHONHASHSEED="0", OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
        cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable, __file__, "--child", name,
               str(n)]
        subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        text = Path(out).read_text()
    m = re.search(r"^(?:summary|totals):\s*(\d+)", text, re.M)
    if not m:
        raise RuntimeError(f"no instruction total in callgrind's output for {name}")
    return int(m.group(1))


def per_call(name: str, n1: int, n2: int, simd: str) -> Tuple[float, int, int]:
    a, b = _instructions(name, n1, simd), _instructions(name, n2, simd)
    return (b - a) / (n2 - n1), a, b


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", help="comma-separated workloads (default: all): " + ", ".join(WORKLOADS))
    ap.add_argument("--simd", default="neon" if platform.machine() in ("aarch64", "arm64") else "avx2")
    ap.add_argument("--n", default="1,21", help="the two call counts n1,n2")
    ap.add_argument("--child", nargs=2, metavar=("WORKLOAD", "N"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child[0], int(args.child[1]))
        return
    n1, n2 = (int(v) for v in args.n.split(","))
    names = args.only.split(",") if args.only else list(WORKLOADS)
    unknown = [n for n in names if n not in WORKLOADS]
    if unknown:
        ap.error(f"unknown workload(s) {unknown}; known: {list(WORKLOADS)}")
    print(f"instructions per call (callgrind, HAILO_DECODE_SIMD={args.simd}, (I({n2}) - I({n1})) / {n2 - n1})")
    print("| workload | instructions per call |")
    print("|---|---|")
    for name in names:
        v, _, _ = per_call(name, n1, n2, args.simd)
        print(f"| {WORKLOADS[name]} | {v:,.0f} |", flush=True)


if __name__ == "__main__":
    main()
