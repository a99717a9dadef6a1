"""`hailo-decode eval`: score recorded raw outputs against COCO-format ground truth with
pycocotools, without a device, so that what quantization, thresholds and the preset do to mAP
can be measured on a desk."""

from __future__ import annotations

import argparse
import functools
import json
import warnings
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from ..config import DecoderConfig
from ..decoder import Decoder
from ..demo_data import demo_config, load_demo_frames
from ..hef import config_from_hef
from ..interop import COCO80_TO_COCO91, evaluate_coco
from .._install import install_hint
from .errors import UserError, load_hef, load_npz, readable_file, writable_file

__all__ = ["add_parser", "run_eval", "category_map"]

CATEGORY_CHOICES = ("auto", "coco80", "plus1", "identity")

DESCRIPTION = """\
Score recorded model outputs against COCO-format ground truth (mAP, with pycocotools), without a
device: measure on a desk what quantization, thresholds and the preset do to accuracy.

The recording (--frames) is an .npz (numpy.savez) holding one array per output of the model,
keyed by the output's name as the HEF names it, frames on the first axis, as HailoRT hands them
out; and `image_ids`, the COCO image id of each frame. Boxes are taken back from the network
input to each image's size in the ground truth as an Ultralytics letterbox (scaled by the smaller
ratio, centred with padding)."""


def add_parser(subparsers: "argparse._SubParsersAction") -> argparse.ArgumentParser:
    p = subparsers.add_parser("eval", help="score recorded model outputs against COCO ground truth (mAP)",
                              description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    model = p.add_mutually_exclusive_group(required=True)
    model.add_argument("--hef", metavar="FILE", help="the compiled model (.hef) the outputs come from: its outputs, "
                                                     "quantization and NMS settings")
    model.add_argument("--demo-model", action="store_true",
                       help="the outputs are the sample model's (the one `hailo-decode demo` decodes: fall/box_8, "
                            "fall/cls_8, ...)")
    p.add_argument("--frames", required=True, metavar="NPZ", help="the recorded outputs and image_ids (see above)")
    p.add_argument("--gt", required=True, metavar="JSON", help="COCO-format ground truth (an instances_*.json)")
    p.add_argument("--semantics", choices=("hailort", "ultralytics"),
                   help="whose post-processing to match: hailort (HailoRT's NMS op) or ultralytics (Ultralytics' "
                        "predict); default hailort")
    p.add_argument("--threshold", type=float, help="keep detections scoring at least this, 0 to 1 (default: the "
                                                   "HEF's; mAP is usually measured at a low one, e.g. 0.001)")
    p.add_argument("--iou", type=float, help="NMS IoU threshold, 0 to 1 (default: the HEF's)")
    p.add_argument("--category-ids", choices=CATEGORY_CHOICES, default="auto",
                   help="how class ids map to the ground truth's category ids: coco80 (an 80-class COCO model: "
                        "COCO's 91 ids), plus1 (id + 1), identity; auto (default) picks the one the ground truth's "
                        "categories fit")
    p.add_argument("--batch", type=int, default=32, help="frames decoded per call (default 32)")
    p.add_argument("--json", metavar="FILE", help="also write the scores to FILE as JSON")
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
    """The model's config with the options' settings: a file that gives none names --hef, a setting
    it refuses names the options."""
    settings: Dict[str, Any] = {}
    if args.semantics:
        settings["semantics"] = args.semantics
    if args.threshold is not None:
        settings["score_threshold"] = args.threshold
    if args.iou is not None:
        settings["iou_threshold"] = args.iou
    if args.demo_model:
        build = functools.partial(demo_config, load_demo_frames())
    else:
        info = load_hef("--hef", args.hef)
        try:
            with warnings.catch_warnings():  # shown once, below
                warnings.simplefilter("ignore")
                config_from_hef(info)
        except ValueError as e:
            raise UserError(f"--hef {args.hef}: {e}") from None
        build = functools.partial(config_from_hef, info)
    try:
        return build(**settings)
    except ValueError as e:
        given = {"--semantics": args.semantics, "--threshold": args.threshold, "--iou": args.iou}
        raise UserError(f"{', '.join(f'{k} {v}' for k, v in given.items() if v is not None)}: {e}") from None


def _recording(path: str, cfg: DecoderConfig) -> Tuple[Dict[str, np.ndarray], List[Union[int, str]]]:
    z = load_npz("--frames", path)
    if "image_ids" not in z:
        raise UserError(f"--frames {path}: no 'image_ids' array (the COCO image id of each frame); it holds {sorted(z)}")
    missing = [n for n in cfg.output_names if n not in z]
    if missing:
        raise UserError(f"--frames {path}: no array for output(s) {missing}; it holds {sorted(z)}")
    ids = z["image_ids"]
    arrays = {n: np.ascontiguousarray(z[n]) for n in cfg.output_names}
    if ids.ndim != 1 or ids.dtype.kind not in "iuUS":
        raise UserError(f"--frames {path}: image_ids must be 1-D integers or strings (one COCO image id a frame), "
                        f"got {ids.dtype} of shape {ids.shape}")
    for name, a in arrays.items():
        if a.ndim == 0 or a.shape[0] != len(ids):
            raise UserError(f"--frames {path}: output {name!r} holds {a.shape[0] if a.ndim else 0} frames, "
                            f"image_ids {len(ids)}")
    image_ids = [str(i) if ids.dtype.kind in "US" else int(i) for i in ids]
    return arrays, image_ids


def _records(gt: Dict[str, Any], key: str, fields: Sequence[str], path: str) -> List[Dict[str, Any]]:
    """gt[key]: a list of objects, each with `fields`."""
    items = gt.get(key, [])
    if not isinstance(items, list):
        raise UserError(f"--gt {path}: {key!r} must be a list, got {type(items).__name__}")
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise UserError(f"--gt {path}: {key}[{i}] must be an object, got {type(item).__name__}")
        lacking = [f for f in fields if f not in item]
        if lacking:
            raise UserError(f"--gt {path}: {key}[{i}] has no {', '.join(map(repr, lacking))}")
    return items


def _ground_truth(path: str) -> Tuple[Dict[str, Any], Dict[Any, Tuple[int, int]], List[Any]]:
    """The COCO ground truth: (the loaded JSON, each image's (height, width), the category ids),
    with what pycocotools reads checked first."""
    readable_file("--gt", path)
    try:
        with open(path, encoding="utf-8") as f:
            gt = json.load(f)
    except (ValueError, UnicodeDecodeError) as e:
        raise UserError(f"--gt {path}: not a JSON file ({e})") from None
    if not isinstance(gt, dict):
        raise UserError(f"--gt {path}: a COCO ground truth is a JSON object with 'images', 'annotations' and "
                        f"'categories'; this one is a {type(gt).__name__}")
    sizes = {}
    for i, img in enumerate(_records(gt, "images", ("id", "height", "width"), path)):
        try:
            h, w = int(img["height"]), int(img["width"])
        except (TypeError, ValueError):
            h = w = 0
        if h <= 0 or w <= 0:
            raise UserError(f"--gt {path}: images[{i}] has height {img['height']!r} and width {img['width']!r}, "
                            f"not a size in pixels")
        sizes[img["id"]] = (h, w)
    for i, ann in enumerate(_records(gt, "annotations", ("image_id", "category_id", "bbox", "area"), path)):
        bbox = ann["bbox"]
        if not (isinstance(bbox, list) and len(bbox) == 4 and all(isinstance(v, (int, float)) for v in bbox)):
            raise UserError(f"--gt {path}: annotations[{i}] has bbox {bbox!r}, not [x, y, width, height]")
    cats = [c["id"] for c in _records(gt, "categories", ("id",), path)]
    return gt, sizes, cats


def run_eval(args: argparse.Namespace) -> int:
    try:
        import pycocotools.cocoeval  # noqa: F401  (before decoding anything)
    except ImportError as e:
        raise UserError(f"eval needs the optional package 'pycocotools', which is not installed: "
                        f"{install_hint('coco')} ({e})") from None
    if args.batch < 1:
        raise UserError(f"--batch must be >= 1, got {args.batch}")
    writable_file("--json", args.json)
    cfg = _config(args)
    arrays, image_ids = _recording(args.frames, cfg)
    gt, sizes, gt_categories = _ground_truth(args.gt)
    unknown = [i for i in image_ids if i not in sizes]
    if unknown:
        raise UserError(f"--frames {args.frames}: image ids {unknown[:10]} of the recording are not in --gt {args.gt}")
    try:
        cats = category_map(args.category_ids, cfg.num_classes, gt_categories)
    except ValueError as e:
        raise UserError(str(e)) from None

    decoder = Decoder(cfg)
    pairs = []
    for start in range(0, len(image_ids), args.batch):
        chunk = {n: a[start:start + args.batch] for n, a in arrays.items()}
        try:
            results = decoder(chunk)
        except (ValueError, TypeError) as e:  # the Decoder's checks of the arrays: what is wrong, and where
            raise UserError(f"--frames {args.frames}: {e}") from None
        for image_id, dets in zip(image_ids[start:start + args.batch], results if isinstance(results, list) else [results]):
            pairs.append((image_id, dets.to_original(sizes[image_id])))
    n_dets = sum(len(d) for _, d in pairs)
    print(f"hailo-decode eval: {len(pairs)} frames, {n_dets} detections ({cfg.semantics} preset, score "
          f"{cfg.score_test} {cfg.score_threshold}, IoU {cfg.iou_test} {cfg.iou_threshold}) against {args.gt}\n")
    try:
        stats = evaluate_coco(pairs, gt, category_ids=cats, verbose=True)
    except ValueError as e:  # what the ground truth and the detections disagree on (category ids)
        raise UserError(f"--gt {args.gt}: {e}") from None
    print(f"\nmAP@[.5:.95] {stats['AP']:.4f}   mAP@.5 {stats['AP50']:.4f}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"frames": len(pairs), "detections": n_dets, "semantics": cfg.semantics,
                       "score_threshold": cfg.score_threshold, "iou_threshold": cfg.iou_threshold,
                       "stats": stats}, f, indent=1)
        print(f"wrote {args.json}")
    return 0
