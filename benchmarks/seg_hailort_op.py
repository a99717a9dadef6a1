"""YOLOv5-seg byte-mask frames: hailo-decode against HailoRT 4.23's own yolov5_seg op, side by side.

The op is rebuilt outside HailoRT by benchmarks/hailort_yolov5_seg_op.cpp (its mask work on Eigen
3.4 and HailoRT's own stb_image_resize.h, #included from the HailoRT source tree; never part of the
package), compiled here with g++ -O2 and fed the same raw uint8 outputs of a 640x640 YOLOv5n-seg
shaped model (80 classes, grids 80/40/20, prototype 160x160x32) with exactly N objects. Each frame
of each side is timed whole (decode, NMS, masks, frame): the median wall time of many, and the
mean thread CPU time (what a busy machine cannot inflate); both frames are then
compared byte for byte (the records' mask pointers aside: each points into its own buffer).

    python benchmarks/seg_hailort_op.py [--hailort-src ../shared/hailort-src/v4.23.0] [--iterations 200]

Needs g++ and Eigen 3.4 headers (Debian: libeigen3-dev).
"""

from __future__ import annotations

import argparse
import os
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import hailo_decode as hd

HERE = Path(__file__).resolve().parent
ANCHORS = {8: ((10, 13), (16, 30), (33, 23)), 16: ((30, 61), (62, 45), (59, 119)), 32: ((116, 90), (156, 198), (373, 326))}
NAMES = {8: "yolov5n_seg/conv48", 16: "yolov5n_seg/conv55", 32: "yolov5n_seg/conv61"}
PROTO = "yolov5n_seg/conv63"
NC, IMAGE = 80, 640
ZP, SCALE = 128.0, 8.0 / 256  # raw logits in about [-4, 4]


def make_case(rng: np.random.Generator, objects: int):
    """Outputs with `objects` well-separated anchors passing (one class each), the rest below the threshold."""
    e = 5 + NC + 32
    q = lambda v: int(np.clip(round(v / SCALE + ZP), 0, 255))  # noqa: E731
    tensors = {}
    for stride in (8, 16, 32):
        g = IMAGE // stride
        x = rng.integers(0, 256, size=(g, g, 3 * e)).astype(np.uint8)
        x[..., 4::e] = q(-4.0)  # objectness low everywhere
        for a in range(3):
            x[..., a * e + 5:a * e + 5 + NC] = rng.integers(0, q(-3.0), size=(g, g, NC))
        tensors[NAMES[stride]] = x
    placed = 0
    used = set()
    while placed < objects:
        stride = int(rng.choice([8, 16, 32], p=[0.5, 0.35, 0.15]))
        g = IMAGE // stride
        r, c, a = int(rng.integers(1, g - 1)), int(rng.integers(1, g - 1)), int(rng.integers(0, 3))
        if (stride, r // 2, c // 2) in used:
            continue
        used.add((stride, r // 2, c // 2))
        x = tensors[NAMES[stride]]
        x[r, c, a * e + 4] = q(3.0)
        for k in range(4):  # centre anywhere in the cell, size about the anchor's (a real model's boxes)
            x[r, c, a * e + k] = q(float(rng.uniform(-1.0, 1.0) if k < 2 else rng.uniform(-0.5, 0.5)))
        x[r, c, a * e + 5 + int(rng.integers(0, NC))] = q(3.0)
        placed += 1
    proto = rng.integers(0, 256, size=(IMAGE // 4, IMAGE // 4, 32)).astype(np.uint8)
    return tensors, proto


def config():
    outputs = [hd.OutputInfo(NAMES[s], (IMAGE // s, IMAGE // s, 3 * (5 + NC + 32)), "uint8", zp=ZP, scale=SCALE)
               for s in (8, 16, 32)]
    outputs.append(hd.OutputInfo(PROTO, (IMAGE // 4, IMAGE // 4, 32), "uint8", zp=ZP, scale=4.0 / 256))
    heads = [hd.AnchorHead(NAMES[s], ANCHORS[s], s) for s in (8, 16, 32)]
    return hd.DecoderConfig(outputs, heads, proto=PROTO, image_size=(IMAGE, IMAGE), score_threshold=0.25,
                            iou_threshold=0.6)


def nhcw(x: np.ndarray) -> bytes:
    return np.ascontiguousarray(x.transpose(0, 2, 1)).tobytes()


def reference_input(tensors, proto, max_total: int, size: int, iterations: int) -> bytes:
    parts = [struct.pack("<4I", NC, IMAGE, IMAGE, 3)]
    for name in sorted(tensors):  # the op's std::map order
        x = tensors[name]
        stride = IMAGE // x.shape[0]
        parts.append(struct.pack("<4I", x.shape[0], x.shape[1], 3, 0))
        parts.append(struct.pack("<6i", *(v for a in ANCHORS[stride] for v in a)))
        parts.append(struct.pack("<2f", ZP, SCALE) + nhcw(x))
    parts.append(struct.pack("<3I2f", proto.shape[0], proto.shape[1], 0, ZP, 4.0 / 256) + nhcw(proto))
    parts.append(struct.pack("<2fd3I", 0.25, 0.6, 0.5, max_total, size, iterations))
    return b"".join(parts)


def without_pointers(frame: np.ndarray) -> np.ndarray:
    f = frame.copy()
    n = struct.unpack_from("<H", f)[0]
    pos = 2
    for _ in range(n):
        if pos + 38 > f.size:
            break
        size = struct.unpack_from("<Q", f, pos + 22)[0]
        f[pos + 30:pos + 38] = 0
        pos += 38 + size
    return f


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hailort-src", default=str(HERE.parent.parent / "shared" / "hailort-src" / "v4.23.0"))
    ap.add_argument("--eigen", default="/usr/include/eigen3")
    ap.add_argument("--iterations", type=int, default=200)
    ap.add_argument("--objects", type=int, nargs="+", default=[5, 20])
    args = ap.parse_args()
    ops_dir = Path(args.hailort_src) / "hailort" / "libhailort" / "src" / "net_flow" / "ops"
    if not (ops_dir / "stb_image_resize.h").exists() or not (Path(args.eigen) / "Eigen" / "Dense").exists():
        print(f"needs HailoRT 4.23's source ({ops_dir}) and Eigen 3.4 ({args.eigen})", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        binary = os.path.join(tmp, "hailort_yolov5_seg_op")
        subprocess.run(["g++", "-O2", "-std=c++17", "-w", f"-I{args.eigen}", f"-I{ops_dir}",
                        str(HERE / "hailort_yolov5_seg_op.cpp"), "-o", binary], check=True)
        cfg = config()
        dec = hd.Decoder(cfg)
        rng = np.random.default_rng(0)
        max_total = 100
        size = hd.formats.byte_mask.byte_mask_frame_size(max_total, 2 * IMAGE * IMAGE)
        print(f"{'objects':>8} {'hailo-decode':>14} {'HailoRT 4.23 op':>16} {'speed-up':>9}  frames equal")
        for n in args.objects:
            tensors, proto = make_case(rng, n)
            raw = dict(tensors, **{PROTO: proto})
            out = dec.decode_to_hailo_nms(raw, format="byte_mask", max_bboxes_total=max_total)  # warm, builds the op decoder
            records = struct.unpack_from("<H", out)[0]
            arrays, _ = dec._arrays(raw)
            rows = out.reshape(1, -1)
            c0 = time.thread_time()
            _, times = dec._seg_ops[dec.config.hailort_version]._core.hailort_seg_frames(arrays, 1, max_total, 0.5, rows, args.iterations)
            ours_cpu = (time.thread_time() - c0) / args.iterations
            ours = float(np.median(times))
            run = subprocess.run([binary], input=reference_input(tensors, proto, max_total, size, args.iterations),
                                 capture_output=True, check=True)
            lines = [line.split() for line in run.stderr.decode().splitlines() if line.startswith("seconds")]
            theirs = float(np.median([float(w[1]) for w in lines]))
            theirs_cpu = float(np.mean([float(w[3]) for w in lines]))
            ref = np.frombuffer(run.stdout, np.uint8)
            equal = np.array_equal(without_pointers(out), without_pointers(ref))
            diff = int((without_pointers(out) != without_pointers(ref)).sum())
            print(f"{n:>8} {ours * 1e6:>11.1f} us {theirs * 1e6:>13.1f} us {theirs / ours:>8.1f}x  "
                  f"{'yes' if equal else f'NO ({diff} bytes differ)'} ({records} records); thread CPU time "
                  f"{ours_cpu * 1e6:.1f} us vs {theirs_cpu * 1e6:.1f} us: {theirs_cpu / ours_cpu:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
