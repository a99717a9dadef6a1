"""A Raspberry Pi 5 estimate (no Pi here): the instructions one frame executes on aarch64, counted
under qemu-user, turned into a time at the Pi 5's clock and a range of instructions per cycle.

For each workload (instruction_counts.py's: the same frames, the same child process), a child
decodes n1 and n2 times; (I(n2) - I(n1)) / (n2 - n1) is one frame's instructions, the imports, the
setup and the first call taken out. The whole process is counted on both sides (hailo_decode's
code, pybind11, the interpreter's share of the one call a frame, libc's memset and memcpy): what
a frame costs a Python user.
- aarch64: Debian 12 arm64's python3.11 with the aarch64 wheel (a venv in the arm64 root that
  .ci/aarch64.sh makes), run by the host's qemu-aarch64 with a TCG plugin counting every guest
  instruction (qemu_insn_count.c, built here with cc). The SIMD level is the one a Pi 5's
  Cortex-A76 gets: neondot (NEON with the dot product).
- x86-64, for comparison: this machine's Python and package under valgrind's callgrind (total Ir),
  the avx2 level (valgrind runs no AVX-512).
The time: t = I / (IPC x 2.4 GHz), IPC from 1.0 to 2.0 (BENCHMARKS.md says why). Instructions are
exact and repeatable; the IPC range is the estimate's uncertainty, and a frame that comes from
the Hailo device by DMA is not in the caches at first (not modelled: BENCHMARKS.md).

    python benchmarks/pi5_estimate.py --root build/ci-arm64-root [--n 1,21] [--only yolov8_detection]

Needs qemu-user (qemu-aarch64, not -static: plugins), cc, valgrind, and hailo-decode installed in
this Python (x86-64). About a minute a workload.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, Tuple

HERE = Path(__file__).resolve().parent
COUNTS = HERE / "instruction_counts.py"
CLOCK_HZ = 2.4e9  # Raspberry Pi 5: Broadcom BCM2712, 4x Cortex-A76 at 2.4 GHz
IPC = (1.0, 2.0)

WORKLOADS: Dict[str, str] = {
    "yolov8_detection": "yolov8n 640, 80 classes, uint8, threshold 0.2 (bench.py's frame; the C++ decode)",
    "seg_decode": "yolov8n-seg 640, 20 objects: decode with the window logits (seg_bench.py)",
    "seg_proto": "the same + masks_at_proto(out=buf) (20 masks at 160x160)",
}
# One decode thread, fixed hashes, no OpenBLAS threads: a deterministic single-threaded count
# (the plugin's add is not atomic).
ENV = {"PYTHONHASHSEED": "0", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}


def _plugin(work: Path) -> Path:
    lib = work / "libinsn_count.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-O2", "-o", str(lib), str(HERE / "qemu_insn_count.c")], check=True)
    return lib


def _site_packages(root: Path, venv: str) -> Path:
    found = sorted((root / venv.lstrip("/")).glob("lib/python3*/site-packages"))
    if not found or not (found[0] / "hailo_decode").is_dir():
        sys.exit(f"no hailo_decode in {root / venv.lstrip('/')} (.ci/aarch64.sh makes that venv)")
    return found[0]


def aarch64_instructions(root: Path, site: Path, plugin: Path, name: str, n: int) -> int:
    python = root / "usr" / "bin" / "python3.11"
    # -L: the guest's absolute paths are looked up in the root first (its loader, libc, libstdc++).
    env = dict(os.environ, **ENV, HAILO_DECODE_SIMD="neondot", PYTHONPATH=str(site), PYTHONNOUSERSITE="1")
    r = subprocess.run(["qemu-aarch64", "-L", str(root), "-plugin", str(plugin), str(python), str(COUNTS), "--child",
                        name, str(n)], env=env, capture_output=True, text=True)
    m = re.search(r"guest instructions: (\d+)", r.stderr)
    if r.returncode != 0 or not m:
        raise RuntimeError(f"the aarch64 child failed ({r.returncode}): {r.stderr[-2000:]}")
    return int(m.group(1))


def x86_instructions(name: str, n: int) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cg.out")
        env = dict(os.environ, **ENV, HAILO_DECODE_SIMD="avx2")
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable, str(COUNTS),
                        "--child", name, str(n)], check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        text = Path(out).read_text()
    m = re.search(r"^(?:summary|totals): (\d+)", text, re.M)
    if not m:
        raise RuntimeError("callgrind's output has no total")
    return int(m.group(1))


def per_frame(count, n1: int, n2: int) -> float:
    return (count(n2) - count(n1)) / (n2 - n1)


def estimate_us(instructions: float) -> Tuple[float, float]:
    """The Pi 5 time a frame in microseconds, at the IPC range's high and low ends."""
    return instructions / (IPC[1] * CLOCK_HZ) * 1e6, instructions / (IPC[0] * CLOCK_HZ) * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", required=True, type=Path, help="the arm64 root (scripts/arm64_root.sh)")
    ap.add_argument("--venv", default="/root/hailo-decode-venv", help="the venv inside the root holding hailo-decode")
    ap.add_argument("--n", default="1,21", help="the two frame counts n1,n2")
    ap.add_argument("--only", help="comma-separated workloads (default: all): " + ", ".join(WORKLOADS))
    args = ap.parse_args()
    n1, n2 = (int(v) for v in args.n.split(","))
    names = args.only.split(",") if args.only else list(WORKLOADS)
    root = args.root.resolve()
    site = _site_packages(root, args.venv)
    with tempfile.TemporaryDirectory() as tmp:
        plugin = _plugin(Path(tmp))
        print(f"instructions a frame, (I({n2}) - I({n1})) / {n2 - n1}, whole process; Pi 5 estimate = "
              f"aarch64 instructions / (IPC {IPC[0]}-{IPC[1]} x {CLOCK_HZ / 1e9} GHz)")
        print("| workload | x86-64 (avx2) | aarch64 (neondot) | aarch64 / x86-64 | Pi 5 estimate |")
        print("|---|---|---|---|---|")
        for name in names:
            arm = per_frame(lambda n: aarch64_instructions(root, site, plugin, name, n), n1, n2)
            x86 = per_frame(lambda n: x86_instructions(name, n), n1, n2)
            lo, hi = estimate_us(arm)
            print(f"| {WORKLOADS[name]} | {x86:,.0f} | {arm:,.0f} | {arm / x86:.2f} | {lo:.0f}-{hi:.0f} us |", flush=True)


if __name__ == "__main__":
    main()
