"""`hailo-decode demo`: decode the real model outputs bundled with the package, print the
detections in original-image pixels and the time per frame; with --save DIR, write each frame's
photograph with its detections drawn as DIR/frame<i>.png (needs Pillow)."""

from __future__ import annotations

import argparse
import os
import statistics
import time
from typing import Callable, Dict, List, cast

import numpy as np

from .. import _core
from ..config import DecoderConfig
from ..decoder import Decoder
from ..detections import Detections
from ..demo_data import (TASK_DEMOS, demo_config, demo_frames, load_demo_frames, load_demo_images, load_seg_demo_frames,
                         load_task_demo, load_yolov5_seg_demo, seg_demo_config, seg_demo_frames, task_demo_config,
                         task_demo_frames, yolov5_seg_demo_config, yolov5_seg_demo_frames)
from ..interop import draw
from .._install import install_hint
from .errors import UserError, need_positive, refuse_unused, writable_dir

__all__ = ["add_parser", "run_demo"]

DESCRIPTION = """\
Decode raw outputs recorded from real models (they come with the package: no device, no HEF
needed), print each frame's detections in the original image's pixels, then time the decoder.

  --task detect  a YOLOv8 fall detector (2 classes) on five photographs (default)
  --task seg     instance masks of both -seg families: a yolo11n-seg trained on synthetic shapes
                 (YOLOv8/11-seg heads), then a COCO-trained YOLOv5s-seg on a photograph (anchor
                 heads, as a Model Zoo YOLOv5-seg HEF hands them out)
  --task pose    17 COCO keypoints per person of yolo11n-pose
  --task obb     rotated boxes of a yolo11n-obb trained on synthetic shapes"""


def add_parser(subparsers: "argparse._SubParsersAction") -> argparse.ArgumentParser:
    demo = subparsers.add_parser("demo", help="decode sample model outputs that come with the package",
                                 description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    demo.add_argument("--semantics", choices=("hailort", "ultralytics"), default="hailort",
                      help="whose post-processing to match: hailort (HailoRT's NMS op on the device; default) "
                           "or ultralytics (Ultralytics' predict on the original model)")
    demo.add_argument("--threshold", type=float, default=0.25, help="keep detections scoring at least this, "
                                                                    "0 to 1 (default 0.25)")
    demo.add_argument("--seconds", type=float, default=1.0, help="how long to time the decoder (default 1)")
    demo.add_argument("--task", choices=("detect", "seg", "pose", "obb"), default="detect",
                      help="which sample model (see above; default detect)")
    demo.add_argument("--save", metavar="DIR", help="--task detect only: also draw the detections on the "
                                                    "photographs, saved as DIR/frame0.png, ... (needs Pillow: "
                                                    f"{install_hint('pictures')})")
    demo.set_defaults(run=run_demo)
    return demo


def _median_us(fn: Callable[[], object], seconds: float) -> float:
    fn()  # warm-up
    times: List[float] = []
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline or not times:
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e6


def _iou(a: np.ndarray, b: np.ndarray) -> float:
    union = np.logical_or(a, b).sum()
    return 1.0 if union == 0 else float(np.logical_and(a, b).sum() / union)


def _nearest_box(boxes: np.ndarray, box: np.ndarray) -> int:
    """Index of the box in `boxes` (xyxy) that overlaps `box` most."""
    x1, y1 = np.maximum(boxes[:, 0], box[0]), np.maximum(boxes[:, 1], box[1])
    x2, y2 = np.minimum(boxes[:, 2], box[2]), np.minimum(boxes[:, 3], box[3])
    inter = np.clip(x2 - x1, 0, None) * np.clip(y2 - y1, 0, None)
    area = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1]) + (box[2] - box[0]) * (box[3] - box[1])
    return int(np.argmax(inter / (area - inter)))


def _drawn(data: Dict[str, np.ndarray], frame: int, names: List[str]) -> str:
    """What was drawn in a synthetic demo picture, '; 3 shape(s) drawn: 2 ellipse, 1 cross', or ''
    for files without a record of it (photographs)."""
    if "drawn_classes" not in data:
        return ""
    classes = data["drawn_classes"][data["drawn_frame"] == frame]
    counts = [f"{int((classes == c).sum())} {name}" for c, name in enumerate(names) if (classes == c).any()]
    return f"; {len(classes)} shape(s) drawn: {', '.join(counts)}"


def run_seg_demo(args: argparse.Namespace) -> int:
    data = load_seg_demo_frames()
    cfg = _from_options(lambda: seg_demo_config(data, semantics=args.semantics, score_threshold=args.threshold), args)
    decoder = Decoder(cfg)
    batch = seg_demo_frames(data)
    names = [str(n) for n in data["class_names"]]
    n_frames = len(data["image_names"])
    ph, pw = cfg.output(cfg.proto).shape[:2]  # type: ignore[arg-type]
    print(f"hailo-decode demo --task seg: {n_frames} frame(s), {data['model']}, on pictures it never saw")
    print(f"ten uint8 outputs: per stride 8/16/32 box (64), class ({cfg.num_classes}: {', '.join(names)}), "
          f"mask coefficients (32); prototypes ({ph}, {pw}, 32); input {cfg.image_size[1]}x{cfg.image_size[0]}")
    print(f"settings: {cfg.semantics} preset, score {cfg.score_test} {cfg.score_threshold}, "
          f"drop empty masks {cfg.drop_empty_masks}\n")
    compare = args.threshold == float(data["ref25_conf"])  # Ultralytics' masks are stored at that conf
    width = max(8, *(len(n) for n in names))
    frames = [{k: v[i] for k, v in batch.items()} for i in range(n_frames)]
    for f, frame in enumerate(frames):
        dets = cast(Detections, decoder(frame))  # one frame, no batch axis: one Detections
        masks = dets.masks
        assert masks is not None
        print(f"frame {f}: {data['image_names'][f]}: {len(dets)} detection(s), masks {masks.shape} at the input size, "
              f"{dets.masks_at_proto().shape} at the prototype grid{_drawn(data, f, names)}")
        rows = np.flatnonzero(data["ref25_frame"] == f)
        ref = np.unpackbits(data["ref25_masks"][rows], axis=-1)[..., :masks.shape[2]].astype(bool)
        for i, (box, score, cls) in enumerate(zip(dets.boxes_as("xyxy_pixels"), dets.scores, dets.class_ids)):
            x1, y1, x2, y2 = (float(v) for v in box)
            line = (f"    {names[cls]:<{width}} {score:.3f}  x1={x1:6.1f} y1={y1:6.1f} x2={x2:6.1f} y2={y2:6.1f}  "
                    f"mask {int(masks[i].sum()):6d} px")
            if compare and len(rows):
                j = _nearest_box(data["ref25_xyxy"][rows], box)  # scores tie in uint8: the order may differ
                line += f", IoU {_iou(masks[i], ref[j]):.3f} with Ultralytics' mask of that object (float heads)"
            print(line)
    frame = frames[0]
    t_decode = _median_us(lambda: decoder(frame), args.seconds / 3)
    t_proto = _median_us(lambda: cast(Detections, decoder(frame)).masks_at_proto(), args.seconds / 3)
    t_input = _median_us(lambda: cast(Detections, decoder(frame)).masks, args.seconds / 3)
    print(f"\ntime per frame (frame 0, one core, medians): decode + mask logits {t_decode:.0f} us; with masks at the "
          f"prototype grid {t_proto:.0f} us; with masks at the input size {t_input:.0f} us")
    return run_yolov5_seg_demo(args)


def run_yolov5_seg_demo(args: argparse.Namespace) -> int:
    """The second -seg family: YOLOv5-seg's anchor heads (data/yolov5seg_uint8.npz)."""
    data = load_yolov5_seg_demo()
    cfg = _from_options(lambda: yolov5_seg_demo_config(data, semantics=args.semantics, score_threshold=args.threshold,
                                                        iou_threshold=round(float(data["ref25_iou"]), 6)), args)
    decoder = Decoder(cfg)
    batch = yolov5_seg_demo_frames(data)
    frame = {k: v[0] for k, v in batch.items()}
    names = [str(n) for n in data["class_names"]]
    oh, ow = (int(v) for v in data["orig_hw"][0])
    heads = ", ".join(f"{o.name} {o.shape}" for o in cfg.outputs if o.name != cfg.proto)
    print(f"\nhailo-decode demo --task seg, YOLOv5-seg: {data['model']}, on a photograph")
    print(f"four uint8 outputs as a Model Zoo YOLOv5-seg HEF hands them out: {heads} "
          f"(3 anchors x (5 + {cfg.num_classes} + 32)); prototypes {cfg.proto} {cfg.output(cfg.proto).shape}")  # type: ignore[arg-type]
    print(f"settings: {cfg.semantics} preset, score {cfg.score_test} {cfg.score_threshold}, "
          f"IoU {cfg.iou_test} {cfg.iou_threshold}\n")
    dets = cast(Detections, decoder(frame))
    masks = dets.masks
    assert masks is not None
    print(f"frame 0: {data['image_names'][0]} ({ow}x{oh}): {len(dets)} detection(s), masks {masks.shape} at the "
          f"input size")
    compare = args.threshold == float(data["ref25_conf"])  # YOLOv5's own masks are stored at that conf
    ref = np.unpackbits(data["ref25_masks"], axis=-1)[..., :masks.shape[2]].astype(bool)
    orig = dets.to_original((oh, ow))
    width = max(len(names[c]) for c in dets.class_ids) if len(dets) else 8
    for i, (box, score, cls) in enumerate(zip(orig.boxes, orig.scores, orig.class_ids)):
        x1, y1, x2, y2 = (float(v) for v in box)
        line = (f"    {names[cls]:<{width}} {score:.3f}  x1={x1:6.1f} y1={y1:6.1f} x2={x2:6.1f} y2={y2:6.1f} (original "
                f"pixels)  mask {int(masks[i].sum()):5d} px")
        if compare and len(ref):
            j = _nearest_box(data["ref25_xyxy"], dets.boxes_as("xyxy_pixels")[i])
            line += f", IoU {_iou(masks[i], ref[j]):.3f} with YOLOv5's own mask of that object (float heads)"
        print(line)
    t_decode = _median_us(lambda: cast(Detections, decoder(frame)).masks, args.seconds / 2)
    line = f"\ntime per frame (one core, medians): decode with masks at the input size {t_decode:.0f} us"
    if cfg.semantics == "hailort":  # HailoRT's own output of a YOLOv5-seg HEF: the yolov5_seg op's frame
        nms = decoder.decode_to_hailo_nms(frame, format="byte_mask")
        count = int(np.frombuffer(nms[:2].tobytes(), "<u2")[0])
        t_frame = _median_us(lambda: decoder.decode_to_hailo_nms(frame, format="byte_mask"), args.seconds / 2)
        print(f"HailoRT's HAILO_NMS_WITH_BYTE_MASK frame of it (decode_to_hailo_nms(format='byte_mask'), the yolov5_seg "
              f"op's bytes): {nms.size} bytes, {count} record(s)")
        line += f"; the byte-mask frame {t_frame:.0f} us"
    print(line)
    return 0


def _time_per_frame(decoder: Decoder, batch, n_frames: int, seconds: float) -> str:
    """Median time of one frame at a time, as a live pipeline calls it."""
    singles = [{k: v[i] for k, v in batch.items()} for i in range(n_frames)]
    for s in singles:
        decoder(s)  # warm-up
    times: List[float] = []
    deadline = time.perf_counter() + seconds
    while not times or time.perf_counter() < deadline:
        for s in singles:
            t0 = time.perf_counter()
            decoder(s)
            times.append(time.perf_counter() - t0)
    med = statistics.median(times) * 1e6
    return f"time per frame (decode + NMS + Python call, one core): median {med:.1f} us over {len(times)} calls"


# COCO keypoint names in Ultralytics' (and COCO's) order: what the 17 keypoints of a pose model are.
COCO_KEYPOINTS = ("nose", "left_eye", "right_eye", "left_ear", "right_ear", "left_shoulder", "right_shoulder",
                  "left_elbow", "right_elbow", "left_wrist", "right_wrist", "left_hip", "right_hip", "left_knee",
                  "right_knee", "left_ankle", "right_ankle")


def run_task_demo(args: argparse.Namespace) -> int:
    try:
        data = load_task_demo(args.task)
    except FileNotFoundError as e:
        raise UserError(str(e)) from None
    cfg = _from_options(lambda: task_demo_config(data, args.task, semantics=args.semantics,
                                                 score_threshold=args.threshold), args)
    decoder = Decoder(cfg)
    batch = task_demo_frames(data, args.task)
    n_frames = len(data["image_names"])
    what = TASK_DEMOS[args.task][1]
    extra = (f"{cfg.num_keypoints} keypoints x {cfg.keypoint_dims}" if args.task == "pose"
             else "an angle per cell, rotated NMS (probiou, Fast-NMS)")
    print(f"hailo-decode demo --task {args.task}: {n_frames} frame(s) of {what}")
    print(f"nine uint8 outputs (box, class, {TASK_DEMOS[args.task][0]} at strides 8/16/32), {extra}, input "
          f"{cfg.image_size[1]}x{cfg.image_size[0]}; {cfg.semantics} preset, score {cfg.score_test} "
          f"{cfg.score_threshold}, IoU {cfg.iou_test} {cfg.iou_threshold}\n")
    results = decoder(batch)
    assert isinstance(results, list)
    names = [str(n) for n in data["class_names"]]
    compare = args.task == "obb" and args.threshold == float(data["ref25_conf"])
    width = max(8, *(len(n) for n in names))
    for i, dets in enumerate(results):
        oh, ow = (int(v) for v in data["orig_hw"][i])
        print(f"frame {i}: {data['image_names'][i]} ({ow}x{oh}): {len(dets)} detection(s){_drawn(data, i, names)}")
        orig = dets.to_original((oh, ow))
        # OBB: each rotated box against Ultralytics' rotated boxes of that frame (float heads, stored at that conf)
        ref_rboxes = data["ref25_rboxes"][data["ref25_frame"] == i] if compare else None
        for j in range(len(orig)):
            x1, y1, x2, y2 = (float(v) for v in orig.boxes[j])
            print(f"    {names[orig.class_ids[j]]:<{width}} {orig.scores[j]:.3f}  box x1={x1:6.1f} y1={y1:6.1f} "
                  f"x2={x2:6.1f} y2={y2:6.1f} (original pixels)")
            if orig.keypoints is not None:
                k = orig.keypoints[j]
                seen = [f"{COCO_KEYPOINTS[n] if len(k) == 17 else n}=({k[n, 0]:.0f},{k[n, 1]:.0f})"
                        for n in range(len(k)) if k[n, 2] >= 0.5]
                print(f"        {len(seen)}/{len(k)} keypoints with visibility >= 0.5: {', '.join(seen) or '-'}")
            if orig.rboxes is not None:
                cx, cy, w, h, a = (float(v) for v in orig.rboxes[j])
                line = f"        rotated box cx={cx:.1f} cy={cy:.1f} w={w:.1f} h={h:.1f} angle={a:.3f} rad"
                if ref_rboxes is not None and len(ref_rboxes) and dets.rboxes is not None:
                    best = float(_core.probiou(dets.rboxes[j:j + 1], ref_rboxes).max())
                    line += f", probiou {best:.3f} with Ultralytics' rotated box of that object (float heads)"
                print(line)
    print("\n" + _time_per_frame(decoder, batch, n_frames, args.seconds))
    return 0


def _from_options(build: Callable[[], DecoderConfig], args: argparse.Namespace) -> DecoderConfig:
    """The sample's config with the user's settings: what it refuses is one of those options."""
    try:
        return build()
    except ValueError as e:
        raise UserError(f"--threshold {args.threshold}, --semantics {args.semantics}: {e}") from None


def _save(images: List[np.ndarray], i: int, orig: Detections, names: List[str], folder: str) -> str:
    path = os.path.join(folder, f"frame{i}.png")
    try:
        draw(images[i], orig, names, path=path)
    except OSError as e:
        raise UserError(f"--save {folder}: cannot write {path} ({e.strerror or e})") from None
    return path


def run_demo(args: argparse.Namespace) -> int:
    task = getattr(args, "task", "detect")
    save = getattr(args, "save", None)
    if task != "detect":
        refuse_unused([("--save", save is not None)], f"--task {task} has no photographs to draw on (--task detect has)")
    need_positive("--seconds", args.seconds, zero=True)
    if task in ("pose", "obb"):
        return run_task_demo(args)
    if task == "seg":
        return run_seg_demo(args)
    images = None
    if save is not None:
        try:
            images = load_demo_images()  # before anything else: a missing Pillow stops here
        except ImportError as e:
            raise UserError(str(e)) from None
        writable_dir("--save", save)
    data = load_demo_frames()
    cfg = _from_options(lambda: demo_config(data, semantics=args.semantics, score_threshold=args.threshold), args)
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
        if images is not None and save is not None:
            print(f"    wrote {_save(images, i, orig, names, save)}")

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
