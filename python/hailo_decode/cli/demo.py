"""`hailo-decode demo`: decode the real model outputs bundled with the package, print the
detections in original-image pixels and the time per frame; with --save DIR, write each frame's
photograph with its detections drawn as DIR/frame<i>.png (needs Pillow)."""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from typing import List

from ..decoder import Decoder
from ..demo_data import demo_config, demo_frames, load_demo_frames, load_demo_images
from ..interop import draw

__all__ = ["add_parser", "run_demo"]


def add_parser(subparsers: "argparse._SubParsersAction") -> argparse.ArgumentParser:
    demo = subparsers.add_parser("demo", help="decode the real model outputs bundled with the package")
    demo.add_argument("--semantics", choices=("hailort", "ultralytics"), default="hailort")
    demo.add_argument("--threshold", type=float, default=0.25, help="score threshold (default 0.25)")
    demo.add_argument("--seconds", type=float, default=1.0, help="how long to time (default 1 s)")
    demo.add_argument("--save", metavar="DIR", help="write the frames with their detections drawn as DIR/frame<i>.png "
                                                    "(needs Pillow: pip install 'hailo-decode[pictures]')")
    demo.set_defaults(run=run_demo)
    return demo


def run_demo(args: argparse.Namespace) -> int:
    images = None
    if args.save:
        try:
            images = load_demo_images()  # before anything else: a missing Pillow stops here
        except ImportError as e:
            print(f"hailo-decode demo: {e}", file=sys.stderr)
            return 2
    data = load_demo_frames()
    cfg = demo_config(data, semantics=args.semantics, score_threshold=args.threshold)
    decoder = Decoder(cfg)
    batch = demo_frames(data)
    names = [str(n) for n in data["class_names"]]
    n_frames = len(data["image_names"])
    print(f"hailo-decode demo: {n_frames} real frames, YOLOv8 with {cfg.num_classes} classes {names}, "
          f"six uint8 outputs (strides 8/16/32, 16 DFL bins), input {cfg.image_size[1]}x{cfg.image_size[0]}")
    print(f"settings: {cfg.semantics} preset, sigmoid on class logits, score {cfg.score_test} {cfg.score_threshold}, "
          f"IoU {cfg.iou_test} {cfg.iou_threshold}\n")
    results = decoder(batch)
    assert isinstance(results, list)  # a batch axis gives one Detections per frame
    for i, dets in enumerate(results):
        oh, ow = (int(v) for v in data["orig_hw"][i])
        print(f"frame {i}: {data['image_names'][i]} ({ow}x{oh}): {len(dets)} detection(s)")
        orig = dets.to_original((oh, ow))
        for box, score, cls in zip(orig.boxes, orig.scores, orig.class_ids):
            x1, y1, x2, y2 = (float(v) for v in box)
            print(f"    {names[cls]:<8} {score:.3f}  x1={x1:6.1f} y1={y1:6.1f} x2={x2:6.1f} y2={y2:6.1f} (original pixels)")
        if images is not None:
            os.makedirs(args.save, exist_ok=True)
            path = os.path.join(args.save, f"frame{i}.png")
            draw(images[i], orig, names, path=path)
            print(f"    wrote {path}")

    # Time per frame: one frame at a time, as a live pipeline calls it.
    singles = [{k: v[i] for k, v in batch.items()} for i in range(n_frames)]
    for s in singles:
        decoder(s)  # warm-up
    times: List[float] = []
    deadline = time.perf_counter() + args.seconds
    while not times or time.perf_counter() < deadline:
        for s in singles:
            t0 = time.perf_counter()
            decoder(s)
            times.append(time.perf_counter() - t0)
    med = statistics.median(times) * 1e6
    print(f"\ntime per frame (decode + NMS + Python call, one core): median {med:.1f} us over {len(times)} calls")
    return 0
