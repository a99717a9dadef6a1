"""SSD (ssd_mobilenet_v1's heads): hailo-decode against HailoRT 4.23's own ssd op, side by side.

The op is HailoRT's source itself (libhailort/src/net_flow/ops/ssd_post_process.cpp and
nms_post_process.cpp, from ../shared/hailort-src/v4.23.0), compiled here with g++ -O2 together with
benchmarks/hailort_op/ssd_op_bench.cpp (a driver) and benchmarks/hailort_op/stubs/ (no-op stand-ins
for its logger and the MemoryView members it calls); never part of the package. Both sides get the
same raw uint8 outputs of the Model Zoo's ssd_mobilenet_v1 shape (six reg/cls pairs from 19x19 to
1x1 at 300x300, 91 classes with the background, its anchors and scale factors; the op reads them as
NHCW device buffers, hailo-decode as the dense host arrays a vstream gives) with about N objects,
and their HAILO_NMS_BY_CLASS frames are compared byte for byte. Times are per frame, the median of
many: the op's execute() (timed in C++), hailo-decode's decode in C++ (`time_decode`) and its whole
Python call `decoder.decode_to_hailo_nms(raw, out)` (decode and the frame written).

    python benchmarks/ssd_bench.py [--hailort-src ../shared/hailort-src/v4.23.0] [--iterations 300]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import hailo_decode as hd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
from test_ssd import CLS, GRIDS, REG, ZOO_H, ZOO_W, zoo_json  # noqa: E402  (the Model Zoo decoders)

CLASSES = 91
RZP, RSCALE = 127.5, 8.0 / 255  # regression values in [-4, 4]
CZP, CSCALE = 0.0, 1.0 / 255    # class scores (sigmoid on chip) in [0, 1]


def make_case(rng: np.random.Generator, objects: int):
    """Class values below the threshold (0.3) everywhere but `objects` anchors, each with one class
    high (and a few neighbours of the same class, as a real detector gives)."""
    outs = {}
    for i, g in enumerate(GRIDS):
        a = len(ZOO_W[i])
        outs["ssd/" + REG[i]] = rng.integers(100, 156, size=(g, g, 4 * a)).astype(np.uint8)
        outs["ssd/" + CLS[i]] = rng.integers(0, 60, size=(g, g, a * CLASSES)).astype(np.uint8)
    for _ in range(objects):
        i = int(rng.choice(6, p=[0.4, 0.3, 0.15, 0.08, 0.05, 0.02]))
        g, a = GRIDS[i], len(ZOO_W[i])
        r, c, k = int(rng.integers(g)), int(rng.integers(g)), int(rng.integers(1, CLASSES))
        cls = outs["ssd/" + CLS[i]]
        for dr, dc in ((0, 0), (0, 1), (1, 0)):
            if r + dr < g and c + dc < g:
                cls[r + dr, c + dc, int(rng.integers(a)) * CLASSES + k] = int(rng.integers(120, 256))
    return outs


def write_case(directory: str, outs) -> None:
    lines = [f"{CLASSES} 0 0.3 0.6 20 10 5 1 {RZP!r} {RSCALE!r} {CZP!r} {CSCALE!r}"]
    for i, g in enumerate(GRIDS):
        anchors = " ".join(f"{w!r} {h!r}" for w, h in zip(ZOO_W[i], ZOO_H[i]))
        lines.append(f"ssd/{REG[i]} ssd/{CLS[i]} {g} {g} {len(ZOO_W[i])} {anchors}")
    Path(directory, "case.txt").write_text("\n".join(lines) + "\n")
    for name, x in outs.items():  # NHCW, as the op reads its device buffers
        Path(directory, name.replace("/", "_") + ".bin").write_bytes(np.ascontiguousarray(x.transpose(0, 2, 1)).tobytes())


def build(hailort_src: Path, binary: str) -> None:
    lib = hailort_src / "hailort" / "libhailort"
    ops = lib / "src" / "net_flow" / "ops"
    # -ffp-contract=off: the op's arithmetic as written, as the core computes it; GCC for aarch64
    # would fuse its multiply-adds (1-ulp different boxes than on x86-64, where it does not).
    subprocess.run(["g++", "-std=c++17", "-O2", "-ffp-contract=off", "-DNDEBUG", "-w", f"-I{HERE / 'hailort_op' / 'stubs'}",
                    f"-I{lib / 'include'}", f"-I{lib / 'src'}", f"-I{hailort_src / 'hailort'}",
                    f"-I{hailort_src / 'common' / 'include'}", str(HERE / "hailort_op" / "ssd_op_bench.cpp"),
                    str(HERE / "hailort_op" / "stubs" / "stubs.cpp"), str(ops / "ssd_post_process.cpp"),
                    str(ops / "nms_post_process.cpp"), "-o", binary], check=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hailort-src", default=str(HERE.parent.parent / "shared" / "hailort-src" / "v4.23.0"))
    ap.add_argument("--iterations", type=int, default=300)
    ap.add_argument("--objects", type=int, nargs="+", default=[0, 5, 20])
    args = ap.parse_args()
    src = Path(args.hailort_src)
    if not (src / "hailort" / "libhailort" / "src" / "net_flow" / "ops" / "ssd_post_process.cpp").exists():
        print(f"needs HailoRT 4.23's source at {src}", file=sys.stderr)
        return 2
    outputs = [hd.OutputInfo("ssd/" + REG[i], (g, g, 4 * len(ZOO_W[i])), "uint8", zp=RZP, scale=RSCALE)
               for i, g in enumerate(GRIDS)]
    outputs += [hd.OutputInfo("ssd/" + CLS[i], (g, g, CLASSES * len(ZOO_W[i])), "uint8", zp=CZP, scale=CSCALE)
                for i, g in enumerate(GRIDS)]
    dec = hd.Decoder(hd.DecoderConfig.from_nms_json(zoo_json(), outputs))
    rng = np.random.default_rng(0)
    print(f"{'objects':>8} {'detections':>10} {'HailoRT 4.23 op':>16} {'hd decode (C++)':>16} "
          f"{'hd decode_to_hailo_nms':>23} {'speed-up':>9}  frames equal")
    with tempfile.TemporaryDirectory() as tmp:
        binary = os.path.join(tmp, "ssd_op_bench")
        build(src, binary)
        for n in args.objects:
            outs = make_case(rng, n)
            write_case(tmp, outs)
            run = subprocess.run([binary, tmp, str(args.iterations)], capture_output=True, check=True, text=True)
            theirs = float(np.median([float(t) for t in run.stdout.split()]))
            op_frame = np.fromfile(os.path.join(tmp, "frame.bin"), np.float32)
            raw = {o.name: outs[o.name] for o in outputs}
            frame = dec.decode_to_hailo_nms(raw)
            equal = frame.tobytes() == op_frame.tobytes()
            arrays, _ = dec._arrays(raw)
            ours_cpp = float(np.median(dec._core.time_decode(arrays, 1, args.iterations)))
            out = np.empty_like(frame)
            times = []
            for _ in range(args.iterations):
                t0 = time.perf_counter()
                dec.decode_to_hailo_nms(raw, out)
                times.append(time.perf_counter() - t0)
            ours = float(np.median(times))
            print(f"{n:>8} {len(dec(raw)):>10} {theirs * 1e6:>13.1f} us {ours_cpp * 1e6:>13.1f} us "
                  f"{ours * 1e6:>20.1f} us {theirs / ours:>8.1f}x  {equal}")
            if not equal:
                print("  frames differ: hailo-decode's and the op's HAILO_NMS_BY_CLASS", file=sys.stderr)
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
