"""`hailo-decode eval`: score recorded raw outputs against COCO-format ground truth with
pycocotools, without a device, so that what quantization, thresholds and the preset do to mAP
can be measured on a desk.

The recording is an .npz holding one array per output of the model, keyed by the output's name
(as the HEF names it), frames on the first axis, as HailoRT hands them out; and `image_ids`, the
COCO image id of each frame. Boxes are undone from the network input to each image's size in
the ground truth (its width and height) as an Ultralytics letterbox: scaled by the smaller
ratio, centred with padding."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from ..config import DecoderConfig
from ..decoder import Decoder
from ..demo_data import demo_config, load_demo_frames
from ..interop import COCO80_TO_COCO91, evaluate_coco

__all__ = ["add_parser", "run_eval", "category_map"]

CATEGORY_CHOICES = ("auto", "coco80", "plus1", "identity")


def add_parser(subparsers: "argparse._SubParsersAction") -> argparse.ArgumentParser:
    p = subparsers.add_parser("eval", help="score recorded raw outputs against COCO ground truth (pycocotools)",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    model = p.add_mutually_exclusive_group(required=True)
    model.add_argument("--hef", metavar="FILE", help="the model's .hef: outputs, quantization and NMS settings")
    model.add_argument("--demo-model", action="store_true",
                       help="the bundled demo model's outputs (fall/box_8, fall/cls_8, ...)")
    p.add_argument("--frames", required=True, metavar="NPZ", help="the recorded outputs and image_ids")
    p.add_argument("--gt", required=True, metavar="JSON", help="COCO-format ground truth (instances JSON)")
    p.add_argument("--semantics", choices=("hailort", "ultralytics"), help="decoding preset (default: the config's)")
    p.add_argument("--threshold", type=float, help="score threshold (default: the HEF's; mAP is usually "
                                                   "measured at a low one, e.g. 0.001)")
    p.add_argument("--iou", type=float, help="NMS IoU threshold (default: the HEF's)")
    p.add_argument("--category-ids", choices=CATEGORY_CHOICES, default="auto",
                   help="class id -> COCO category id: coco80 (COCO80_TO_COCO91), plus1 (id + 1), identity; "
                        "auto picks the one the ground truth's categories fit")
    p.add_argument("--batch", type=int, default=32, help="frames decoded per call (default 32)")
    p.add_argument("--json", metavar="FILE", help="write the stats as JSON")
    p.set_defaults(run=run_eval)
    return p


def category_map(choice: str, num_classes: int, gt_category_ids: Sequence[int]) -> Optional[Sequence[int]]:
    """The class id -> category id list for a --category-ids choice (None: identity)."""
    gt = sorted(int(c) for c in gt_category_ids)
    if choice == "auto":
        if num_classes == 80 and gt == sorted(COCO80_TO_COCO91):
            choice = "coco80"
        elif gt == list(range(1, num_classes + 1)):
            choice = "plus1"
        elif gt == list(range(num_classes)):
            choice = "identity"
        else:
            shown = gt if len(gt) <= 12 else gt[:12] + ["..."]
            raise ValueError(f"cannot tell how {num_classes} class ids map to the ground truth's category ids "
                             f"{shown}: pass --category-ids coco80, plus1 or identity")
    if choice == "coco80":
        if num_classes != 80:
            raise ValueError(f"--category-ids coco80 is for 80-class models, this one has {num_classes} classes")
        return COCO80_TO_COCO91
    if choice == "plus1":
        return list(range(1, num_classes + 1))
    if choice == "identity":
        return None
    raise ValueError(f"--category-ids must be one of {CATEGORY_CHOICES}, got {choice!r}")


def _config(args: argparse.Namespace) -> DecoderConfig:
    settings: Dict[str, Any] = {}
    if args.semantics:
        settings["semantics"] = args.semantics
    if args.threshold is not None:
        settings["score_threshold"] = args.threshold
    if args.iou is not None:
        settings["iou_threshold"] = args.iou
    if args.demo_model:
        return demo_config(load_demo_frames(), **settings)
    return DecoderConfig.from_hef(args.hef, **settings)


def _recording(path: str, cfg: DecoderConfig) -> Tuple[Dict[str, np.ndarray], List[Union[int, str]]]:
    with np.load(path, allow_pickle=False) as z:
        if "image_ids" not in z.files:
            raise ValueError(f"{path} has no 'image_ids' array (the COCO image id of each frame); it holds "
                             f"{sorted(z.files)}")
        missing = [n for n in cfg.output_names if n not in z.files]
        if missing:
            raise ValueError(f"{path} has no array for output(s) {missing}; it holds {sorted(z.files)}")
        ids = z["image_ids"]
        arrays = {n: np.ascontiguousarray(z[n]) for n in cfg.output_names}
    if ids.ndim != 1:
        raise ValueError(f"image_ids must be 1-D (one id a frame), got shape {ids.shape}")
    for name, a in arrays.items():
        if a.ndim == 0 or a.shape[0] != len(ids):
            raise ValueError(f"output {name!r} holds {a.shape[0] if a.ndim else 0} frames, image_ids {len(ids)}")
    image_ids = [str(i) if ids.dtype.kind in "US" else int(i) for i in ids]
    return arrays, image_ids


def run_eval(args: argparse.Namespace) -> int:
    try:
        import pycocotools.cocoeval  # noqa: F401  (before decoding anything)
    except ImportError as e:
        print(f"hailo-decode eval needs the optional package 'pycocotools', which is not installed: "
              f"pip install 'hailo-decode[coco]' ({e})", file=sys.stderr)
        return 2
    if args.batch < 1:
        print(f"hailo-decode eval: --batch must be >= 1, got {args.batch}", file=sys.stderr)
        return 2
    try:
        cfg = _config(args)
        arrays, image_ids = _recording(args.frames, cfg)
        with open(args.gt, encoding="utf-8") as f:
            gt = json.load(f)
        sizes = {img["id"]: (int(img["height"]), int(img["width"])) for img in gt.get("images", [])}
        unknown = [i for i in image_ids if i not in sizes]
        if unknown:
            raise ValueError(f"image ids {unknown[:10]} of the recording are not in {args.gt}")
        cats = category_map(args.category_ids, cfg.num_classes, [c["id"] for c in gt.get("categories", [])])
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"hailo-decode eval: {e}", file=sys.stderr)
        return 2

    decoder = Decoder(cfg)
    pairs = []
    for start in range(0, len(image_ids), args.batch):
        chunk = {n: a[start:start + args.batch] for n, a in arrays.items()}
        results = decoder(chunk)
        for image_id, dets in zip(image_ids[start:start + args.batch], results if isinstance(results, list) else [results]):
            pairs.append((image_id, dets.to_original(sizes[image_id])))
    n_dets = sum(len(d) for _, d in pairs)
    print(f"hailo-decode eval: {len(pairs)} frames, {n_dets} detections ({cfg.semantics} preset, score "
          f"{cfg.score_test} {cfg.score_threshold}, IoU {cfg.iou_test} {cfg.iou_threshold}) against {args.gt}\n")
    stats = evaluate_coco(pairs, gt, category_ids=cats, verbose=True)
    print(f"\nmAP@[.5:.95] {stats['AP']:.4f}   mAP@.5 {stats['AP50']:.4f}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"frames": len(pairs), "detections": n_dets, "semantics": cfg.semantics,
                       "score_threshold": cfg.score_threshold, "iou_threshold": cfg.iou_threshold,
                       "stats": stats}, f, indent=1)
        print(f"wrote {args.json}")
    return 0
