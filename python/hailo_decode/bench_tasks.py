"""Benchmarks of pose and OBB heads (`hailo-decode bench --tasks`; BENCHMARKS.md):

- the task decode against the detection-only decode of the same box and class tensors (the
  extra cost of keypoints or angles, rotated boxes and rotated NMS), timed in C++ side by side;
- against a NumPy decoder that filters first (threshold in the quantized domain, then DFL,
  keypoints or angles only for the cells that pass, vectorized NMS);
- rotated NMS alone at 1,000 candidates.

Workloads: yolov8n-pose at 640 (box 64, class 1, keypoints 51 per cell at strides 8/16/32; the
bundled real yolo11n-pose heads, which have exactly that shape, when present) and a 15-class OBB
model at 1024 (synthetic: DOTA-like objects on a background, uint8)."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict, dataclass
from typing import Any, Dict, List, Tuple

import numpy as np

from . import _core
from .bench import _dequant, _dfl, _median_time, _per_tensor, _side_by_side, greedy_nms
from .config import DecoderConfig, Head, OutputInfo
from .decoder import Decoder
from .demo_data import load_task_demo, task_demo_config, task_demo_frames

Frames = Dict[str, np.ndarray]

__all__ = ["pose_workload", "obb_workload", "numpy_pose_filtered", "numpy_obb_filtered", "run", "main"]


# --------------------------------------------------------------------------------------------
# Workloads


def _quantize(x: np.ndarray) -> Tuple[np.ndarray, float, float]:
    lo, hi = float(min(x.min(), 0.0)), float(max(x.max(), 1e-3))
    scale = (hi - lo) / 255
    zp = float(np.round(-lo / scale))
    return np.clip(np.round(x / scale + zp), 0, 255).astype(np.uint8), zp, scale


def _synthetic(task: str, size: int, nc: int, extra_channels: int, objects: int, seed: int = 0) -> Tuple[DecoderConfig, Frames]:
    """uint8 heads of one frame: background logits around -7, `objects` objects that light a few
    neighbouring cells (peaked DFL distances pointing at their edges), noise elsewhere."""
    rng = np.random.default_rng(seed)
    outputs, heads, frames = [], [], {}
    extra = "kpt" if task == "pose" else "angle"
    for stride in (8, 16, 32):
        g = size // stride
        cls = rng.normal(-7.0, 0.7, size=(g, g, nc)).astype(np.float32)
        box = rng.normal(0.0, 1.0, size=(g, g, 4, 16)).astype(np.float32)
        box[..., 2] += 4.0
        for _ in range(objects // 3):
            cy, cx = rng.integers(1, g - 1, size=2)
            k = int(rng.integers(nc))
            peak = rng.uniform(0.5, 4.0)
            for dy in (-1, 0, 1):
                for dx in (-1, 0, 1):
                    cls[cy + dy, cx + dx, k] = peak - 1.5 * (abs(dy) + abs(dx))
        ext = rng.normal(0.0, 1.5, size=(g, g, extra_channels)).astype(np.float32)
        for kind, x, channels in (("box", box.reshape(g, g, 64), 64), ("cls", cls, nc), (extra, ext, extra_channels)):
            q, zp, scale = _quantize(x)
            name = f"{task}/{kind}{stride}"
            outputs.append(OutputInfo(name, (g, g, channels), "uint8", zp=zp, scale=scale))
            frames[name] = q
        heads.append(Head(f"{task}/box{stride}", f"{task}/cls{stride}", stride, **{extra: f"{task}/{extra}{stride}"}))
    cfg = DecoderConfig(outputs, heads, image_size=(size, size), semantics="ultralytics")
    return cfg, frames


def pose_workload() -> Tuple[str, DecoderConfig, Frames]:
    """yolov8n-pose 640 uint8: the bundled real yolo11n-pose heads (the same tensors), else synthetic."""
    try:
        data = load_task_demo("pose")
    except FileNotFoundError:
        cfg, frames = _synthetic("pose", 640, 1, 51, 12)
        return "yolov8n-pose 640 (synthetic)", cfg, frames
    cfg = task_demo_config(data, "pose", semantics="ultralytics")
    frames = {k: np.ascontiguousarray(v[0]) for k, v in task_demo_frames(data, "pose").items()}
    return "yolov8n-pose 640 (real yolo11n-pose heads)", cfg, frames


def obb_workload() -> Tuple[str, DecoderConfig, Frames]:
    cfg, frames = _synthetic("obb", 1024, 15, 1, 60)
    return "OBB 1024 x 15 classes (synthetic)", cfg, frames


def detection_only(cfg: DecoderConfig, frames: Frames) -> Tuple[DecoderConfig, Frames]:
    """The same box and class tensors and settings without the keypoint or angle outputs."""
    heads = [Head(h.box, h.cls, h.stride) for h in cfg.heads]
    names = {n for h in heads for n in (h.box, h.cls)}
    outs = [o for o in cfg.outputs if o.name in names]
    det = DecoderConfig(outs, heads, image_size=cfg.image_size, semantics=cfg.semantics,
                        score_threshold=cfg.score_threshold, iou_threshold=cfg.iou_threshold,
                        class_activation=cfg.class_activation)
    return det, {k: v for k, v in frames.items() if k in names}


# --------------------------------------------------------------------------------------------
# NumPy references that filter first (what a careful NumPy user writes)


def _candidates(cfg: DecoderConfig, frame: Frames, threshold: float):
    """Per head: (head, rows, cols, best class, score) of the cells whose best class passes,
    thresholded in the quantized domain first (the logit of the threshold, as an integer)."""
    logit = float(np.log(threshold / (1 - threshold)))
    out = []
    for h in cfg.heads:
        co = cfg.output(h.cls)
        q = frame[h.cls]
        zp, scale = _per_tensor(co.zp), _per_tensor(co.scale)
        qth = min(max(np.floor(logit / scale + zp) + 1, 0), 256)  # the first q whose logit passes (>)
        best = q.max(axis=2)
        rows, cols = np.nonzero(best >= qth)
        if not len(rows):
            continue
        cls = q[rows, cols].argmax(axis=1)
        scores = 1.0 / (1.0 + np.exp(-_dequant(q[rows, cols, cls], co)))
        keep = scores > threshold
        out.append((h, rows[keep], cols[keep], cls[keep], scores[keep]))
    return out


def numpy_pose_filtered(cfg: DecoderConfig, frame: Frames, threshold: float) -> np.ndarray:
    """Filter, DFL and boxes for the passing cells, greedy NMS, keypoints for the kept ones."""
    parts = []
    for h, rows, cols, cls, scores in _candidates(cfg, frame, threshold):
        st = float(h.stride)
        d = _dfl(_dequant(frame[h.box][rows, cols], cfg.output(h.box)))
        cx, cy = (cols + 0.5) * st, (rows + 0.5) * st
        b = np.stack([cx - d[:, 0] * st, cy - d[:, 1] * st, cx + d[:, 2] * st, cy + d[:, 3] * st], axis=1)
        parts.append((h, rows, cols, cls, scores, b))
    if not parts:
        return np.zeros((0, cfg.num_keypoints, 3), np.float32)
    boxes = np.concatenate([p[5] for p in parts])
    scores = np.concatenate([p[4] for p in parts])
    cls = np.concatenate([p[3] for p in parts])
    keep = greedy_nms(boxes, scores, cfg.iou_threshold, cls, suppress_equal=False, class_offset=7680.0)[:300]
    which = np.concatenate([np.full(len(p[1]), k) for k, p in enumerate(parts)])
    at = np.concatenate([np.arange(len(p[1])) for p in parts])
    kpts = []
    for i in keep:
        h, rows, cols = parts[which[i]][0], parts[which[i]][1], parts[which[i]][2]
        r, c, st = rows[at[i]], cols[at[i]], float(h.stride)
        k = _dequant(frame[h.kpt][r, c], cfg.output(h.kpt)).reshape(-1, 3)
        kpts.append(np.stack([(k[:, 0] * 2 + c) * st, (k[:, 1] * 2 + r) * st, 1 / (1 + np.exp(-k[:, 2]))], axis=1))
    return np.asarray(kpts, np.float32)


def _probiou(a: np.ndarray, b: np.ndarray, eps: float = 1e-7) -> np.ndarray:
    def cov(r):
        va, vb, t = r[:, 2] ** 2 / 12, r[:, 3] ** 2 / 12, r[:, 4]
        c, s = np.cos(t), np.sin(t)
        return va * c * c + vb * s * s, va * s * s + vb * c * c, (va - vb) * c * s

    a1, b1, c1 = (v[:, None] for v in cov(a))
    a2, b2, c2 = (v[None, :] for v in cov(b))
    dx, dy = a[:, None, 0] - b[None, :, 0], a[:, None, 1] - b[None, :, 1]
    A, B, C = a1 + a2, b1 + b2, c1 + c2
    D = A * B - C * C
    t = (A * dy * dy + B * dx * dx) / (D + eps) * 0.25 - (C * dx * dy) / (D + eps) * 0.5
    with np.errstate(all="ignore"):
        t3 = np.log(D / (4 * np.sqrt(np.clip(a1 * b1 - c1 * c1, 0, None) * np.clip(a2 * b2 - c2 * c2, 0, None)) + eps) + eps) * 0.5
    return 1 - np.sqrt(1 - np.exp(-np.clip(t + t3, eps, 100.0)) + eps)


def numpy_obb_filtered(cfg: DecoderConfig, frame: Frames, threshold: float) -> np.ndarray:
    """Filter, DFL, angle and rotated boxes for the passing cells, Fast-NMS on the probiou matrix."""
    rb, sc, cl = [], [], []
    for h, rows, cols, cls, scores in _candidates(cfg, frame, threshold):
        st = float(h.stride)
        d = _dfl(_dequant(frame[h.box][rows, cols], cfg.output(h.box)))
        t = (1 / (1 + np.exp(-_dequant(frame[h.angle][rows, cols, 0], cfg.output(h.angle)))) - 0.25) * np.pi
        xf, yf = (d[:, 2] - d[:, 0]) / 2, (d[:, 3] - d[:, 1]) / 2
        cos, sin = np.cos(t), np.sin(t)
        rb.append(np.stack([(xf * cos - yf * sin + cols + 0.5) * st, (xf * sin + yf * cos + rows + 0.5) * st,
                            (d[:, 0] + d[:, 2]) * st, (d[:, 1] + d[:, 3]) * st, t], axis=1))
        sc.append(scores)
        cl.append(cls)
    if not rb:
        return np.zeros((0, 5), np.float32)
    r, s, c = np.concatenate(rb), np.concatenate(sc), np.concatenate(cl)
    order = np.argsort(-s, kind="stable")
    r, c = r[order], c[order]
    shifted = r.copy()
    shifted[:, :2] += c[:, None] * 7680.0
    iou = np.triu(_probiou(shifted, shifted), k=1)
    keep = np.flatnonzero(~(iou > cfg.iou_threshold).any(axis=0))[:300]
    return r[keep].astype(np.float32)


# --------------------------------------------------------------------------------------------
# Measurement


@dataclass
class TaskRow:
    workload: str
    threshold: float
    candidates: int
    detections: int
    task_us: float
    detect_only_us: float
    numpy_filtered_us: float
    api_us: float
    ratio_to_detection: float
    numpy_over_ours: float


def _time_series(dec: Decoder, frames: Frames):
    arrays = [frames[o.name] for o in dec.config.outputs]
    return lambda it: dec._core.time_decode(arrays, 1, it)


def measure(name: str, cfg: DecoderConfig, frames: Frames, threshold: float, budget: float = 0.3) -> TaskRow:
    cfg = cfg.replace(score_threshold=threshold)
    det_cfg, det_frames = detection_only(cfg, frames)
    dec, det = Decoder(cfg), Decoder(det_cfg)
    n_dets = len(dec(frames))
    counting = Decoder(cfg.replace(iou_threshold=1.0, max_total=None, max_candidates=None))
    n_cand = len(counting(frames))
    med = _side_by_side({"task": _time_series(dec, frames), "detect": _time_series(det, det_frames)}, 2 * budget)
    numpy_fn = numpy_pose_filtered if cfg.task == "pose" else numpy_obb_filtered
    t_np = _median_time(lambda: numpy_fn(cfg, frames, threshold), budget)
    t_api = _median_time(lambda: dec(frames), budget)
    us = 1e6
    return TaskRow(name, threshold, n_cand, n_dets, med["task"] * us, med["detect"] * us, t_np * us, t_api * us,
                   med["task"] / med["detect"], t_np / med["task"])


def rotated_nms_cost(n: int = 1000, iterations: int = 30) -> List[Dict[str, Any]]:
    """Seconds of rotated NMS alone for n candidates: spread over a 1024 image (few overlaps, the
    worst case: nearly every pair is compared) or clustered (10 overlapping candidates an object)."""
    rng = np.random.default_rng(1)
    rows = []
    for layout in ("spread", "clustered"):
        if layout == "spread":
            centres = rng.uniform(0, 1024, (n, 2))
            sizes = rng.uniform(10, 60, (n, 2))
            angles = rng.uniform(-0.7, 2.3, n)
        else:
            objects = n // 10
            centres = np.repeat(rng.uniform(0, 1024, (objects, 2)), 10, axis=0) + rng.normal(0, 2, (n, 2))
            sizes = np.repeat(rng.uniform(20, 80, (objects, 2)), 10, axis=0) * rng.uniform(0.9, 1.1, (n, 2))
            angles = np.repeat(rng.uniform(-0.7, 2.3, objects), 10) + rng.normal(0, 0.05, n)
        r = np.column_stack([centres, sizes, angles]).astype(np.float32)
        for nc in (1, 15):
            cls = rng.integers(0, nc, n).astype(np.int32)
            times, kept = _core.time_rotated_nms(r, cls, nc, 0.7, False, 7680.0, iterations)
            rows.append(dict(layout=layout, classes=nc, candidates=n, kept=kept, us=float(np.median(times) * 1e6)))
    return rows


def run(quick: bool = False, out=sys.stderr) -> Tuple[List[TaskRow], List[Dict[str, Any]]]:
    rows = []
    for make in (pose_workload, obb_workload):
        name, cfg, frames = make()
        for th in (0.25, 0.05):
            print(f"\r{name} th={th}", end="", file=out, flush=True)
            rows.append(measure(name, cfg, frames, th, budget=0.1 if quick else 0.3))
    print(file=out)
    return rows, rotated_nms_cost(iterations=10 if quick else 30)


def format_tables(rows: List[TaskRow], nms: List[Dict[str, Any]]) -> str:
    lines = ["| workload | th | cand. | dets | task decode us | detection-only us | task / detection | "
             "Python API us | NumPy filtered us | NumPy / ours |", "|" + "---|" * 10]
    for r in rows:
        lines.append(f"| {r.workload} | {r.threshold:g} | {r.candidates} | {r.detections} | {r.task_us:.1f} | "
                     f"{r.detect_only_us:.1f} | {r.ratio_to_detection:.2f}x | {r.api_us:.1f} | "
                     f"{r.numpy_filtered_us:.0f} | {r.numpy_over_ours:.0f}x |")
    lines += ["", "| rotated NMS alone | classes | candidates | kept | us |", "|---|---|---|---|---|"]
    for n in nms:
        lines.append(f"| {n['layout']} | {n['classes']} | {n['candidates']} | {n['kept']} | {n['us']:.0f} |")
    return "\n".join(lines)


def main(args) -> int:
    rows, nms = run(quick=args.quick)
    print(format_tables(rows, nms))
    info = _core.simd_info()
    print(f"\nkernel path: {info['active']}; times per frame, median, one thread")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"simd": info, "rows": [asdict(r) for r in rows], "rotated_nms": nms}, f, indent=1)
        print(f"wrote {args.json}")
    return 0
