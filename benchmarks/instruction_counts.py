"""Instructions per decode, counted by valgrind's callgrind: a trend that does not move with the
machine's load or state (the timed benchmarks' ratios do, by 10-40 % on a shared 2-core machine).

Each workload is the timed benchmarks' own (families.py's heads in its random order, seg_bench.py's
20-object frame, bench.py's yolov8n-like detection frame), decoded in a child process under
callgrind twice, n1 and n2 times; (I(n2) - I(n1)) / (n2 - n1) is the cost of one call with the
setup, imports and first-call warm-up taken out. Only the instructions of hailo_decode's own code
(the extension module's functions) are counted: the interpreter's share of a call moves by
thousands of instructions with the heap's layout (an activated venv's longer environment alone
moved a 20k row by half), the library's does not (the same count in either environment, run
after run). libc's memset and memcpy are left out with it. The detection and families rows run
the C++ decode as families.py times it (`time_decode`); the seg rows go through the Python API
(`masks_at_proto`'s C++ render counted, its output's zeroing not).

The SIMD level is forced (HAILO_DECODE_SIMD, default avx2 on x86-64 and neon on aarch64): valgrind
runs no AVX-512, and counts only compare on one path. Instruction counts are not time (a vector
instruction counts one), so compare a row with itself across commits, not rows with each other.

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
from typing import Callable, Dict

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
    frame = {k: _aligned(v) for k, v in frame.items()}
    dec = hd.Decoder(cfg)
    n = len(dec(frame))
    buf = np.zeros((n, 160, 160), np.bool_)
    if proto_masks:
        return lambda: dec(frame).masks_at_proto(out=buf)
    return lambda: dec(frame)


def _aligned(a):
    """A copy of `a` starting on a 64-byte boundary: the kernels' head and tail loops depend on
    where a row starts, so an array's placement (which moves with the environment's size: an
    activated venv alone moved a row by half) would otherwise move the count."""
    import numpy as np

    buf = np.empty(a.nbytes + 64, np.uint8)
    off = (-buf.ctypes.data) % 64
    out = buf[off:off + a.nbytes].view(a.dtype).reshape(a.shape)
    out[...] = a
    return out


def _in_cpp(cfg, raw) -> Callable[[], object]:
    """One decode timed in C++ as families.py times it (time_decode: no Python call, no
    Detections), so that the count holds the decode's own work only."""
    import numpy as np

    import hailo_decode as hd

    dec = hd.Decoder(cfg)
    arrays = [_aligned(np.ascontiguousarray(raw[o.name])) for o in cfg.outputs]
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
    """Instructions executed in hailo_decode's own code (the extension module's functions, self
    cost) by a child decoding n + 1 times: the interpreter's own share of a call moves by a few
    thousand instructions with the heap's layout (the environment's size alone moves it), the
    library's share not at all. libc's (memset, memcpy) is left out with the interpreter's."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cg.out")
        # The same count run after run: fixed string hashes, and no OpenBLAS threads spinning.
        env = dict(os.environ, HAILO_DECODE_SIMD=simd, PYTHONHASHSEED="0", OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
        cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable, __file__, "--child", name,
               str(n)]
        subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        report = subprocess.run(["callgrind_annotate", "--threshold=100", out], check=True, capture_output=True,
                                text=True).stdout
    total = 0
    for line in report.splitlines():  # "1,234 (0.01%)  file:function [object]"
        m = re.match(r"\s*([\d,]+) \(.*\[(.*)\]\s*$", line)
        if m and "hailo_decode" in m.group(2) and "_native" in m.group(2):
            total += int(m.group(1).replace(",", ""))
    if total == 0:
        raise RuntimeError(f"callgrind saw no instruction of hailo_decode's extension for {name}")
    return total


def per_call(name: str, n1: int, n2: int, simd: str) -> float:
    return (_instructions(name, n2, simd) - _instructions(name, n1, simd)) / (n2 - n1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", help="comma-separated workloads (default: all): " + ", ".join(WORKLOADS))
    ap.add_argument("--simd", default="neon" if platform.machine() in ("aarch64", "arm64") else "avx2")
    ap.add_argument("--n", default="1,21", help="the two call counts n1,n2")
    ap.add_argument("--child", nargs=2, metavar=("WORKLOAD", "N"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child[0], int(args.child[1]))
        # No interpreter teardown: how much freeing it does depends on where the heap's objects
        # happen to lie (the environment's size moves them), by some 200k instructions between
        # the two counts.
        sys.stdout.flush()
        os._exit(0)
    n1, n2 = (int(v) for v in args.n.split(","))
    names = args.only.split(",") if args.only else list(WORKLOADS)
    unknown = [n for n in names if n not in WORKLOADS]
    if unknown:
        ap.error(f"unknown workload(s) {unknown}; known: {list(WORKLOADS)}")
    print(f"instructions per call in hailo_decode's own code (callgrind, HAILO_DECODE_SIMD={args.simd}, "
          f"(I({n2}) - I({n1})) / {n2 - n1})")
    print("| workload | instructions per call |")
    print("|---|---|")
    for name in names:
        v = per_call(name, n1, n2, args.simd)
        print(f"| {WORKLOADS[name]} | {v:,.0f} |", flush=True)


if __name__ == "__main__":
    main()
