"""Speed of the head families of issue 13 (YOLOv5, YOLOX, end-to-end top-k) at yolov*n size:
640 x 640 input, strides 8/16/32, 80 classes, uint8, one frame, score threshold 0.2 (the top-k
at 0.001 too). Each row: our decode (timed in C++, GIL released), one read pass over every byte
of the head tensors (the floor of any decoder that reads them all; the objectness gate reads
less), and a plain vectorized NumPy decode of the same heads. Synthetic values with a realistic
sparsity: about 1 % of objectness values (YOLOv5/YOLOX) or class scores (end-to-end) high.

    python benchmarks/families.py [--budget SECONDS]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import hailo_decode as hd
from hailo_decode import _core

STRIDES = (8, 16, 32)
ANCHORS = {8: ((10, 13), (16, 30), (33, 23)), 16: ((30, 61), (62, 45), (59, 119)), 32: ((116, 90), (156, 198), (373, 326))}
NC = 80


def _sparse(rng, shape, rate):
    v = rng.integers(0, 40, size=shape)
    hit = rng.random(shape) < rate
    v[hit] = rng.integers(60, 256, size=int(hit.sum()))
    return v.astype(np.uint8)


def yolov5(rng):
    outputs, heads, raw = [], [], {}
    for s in STRIDES:
        g = 640 // s
        a = rng.integers(0, 256, size=(g, g, 3 * 85)).astype(np.uint8)
        a[..., 4::85] = _sparse(rng, (g, g, 3), 0.01)
        a[..., 5:] = 0
        for k in range(3):  # one likely class per anchor, the rest low
            a[..., k * 85 + 5:(k + 1) * 85] = rng.integers(0, 30, size=(g, g, 80))
            a[..., k * 85 + 5 + rng.integers(0, 80)] = rng.integers(100, 256, size=(g, g))
        outputs.append(hd.OutputInfo(f"v5/conv{s}", a.shape, zp=0, scale=1 / 255))
        heads.append(hd.AnchorHead(f"v5/conv{s}", ANCHORS[s], s))
        raw[f"v5/conv{s}"] = a
    return hd.DecoderConfig(outputs, heads, image_size=(640, 640), score_threshold=0.2), raw


def yolox(rng):
    outputs, heads, raw = [], [], {}
    for s in STRIDES:
        g = 640 // s
        parts = {f"x/reg{s}": rng.integers(0, 256, size=(g, g, 4)).astype(np.uint8),
                 f"x/obj{s}": _sparse(rng, (g, g, 1), 0.01),
                 f"x/cls{s}": rng.integers(0, 30, size=(g, g, NC)).astype(np.uint8)}
        parts[f"x/cls{s}"][..., int(rng.integers(0, NC))] = rng.integers(100, 256, size=(g, g))
        for n, a in parts.items():
            zp, scale = (128, 0.05) if "reg" in n else (0, 1 / 255)
            outputs.append(hd.OutputInfo(n, a.shape, zp=zp, scale=scale))
            raw[n] = a
        heads.append(hd.YoloxHead(f"x/reg{s}", f"x/obj{s}", f"x/cls{s}", s))
    return hd.DecoderConfig(outputs, heads, image_size=(640, 640), score_threshold=0.2), raw


def end2end(rng, bins, conf):
    outputs, heads, raw = [], [], {}
    for s in STRIDES:
        g = 640 // s
        box = rng.integers(0, 256, size=(g, g, 4 * bins)).astype(np.uint8)
        cls = _sparse(rng, (g, g, NC), 0.002)
        for n, a, q in ((f"e/box{s}", box, (0, 0.05) if bins == 1 else (128, 0.1)), (f"e/cls{s}", cls, (0, 1 / 255))):
            outputs.append(hd.OutputInfo(n, a.shape, zp=q[0], scale=q[1]))
            raw[n] = a
        heads.append(hd.Head(f"e/box{s}", f"e/cls{s}", s))
    cfg = hd.DecoderConfig(outputs, heads, image_size=(640, 640), semantics="ultralytics", class_activation="none",
                           end2end=True, score_threshold=conf)
    return cfg, raw


def numpy_decode(cfg, raw):
    """Vectorized NumPy: dequantize everything, gate, score, decode boxes, (top-k or) NMS."""
    f32 = np.float32
    if cfg.head_kind == "dfl":  # end-to-end: the two top-ks
        scores, boxes = [], []
        for h in cfg.heads:
            c = (raw[h.cls].astype(f32) - f32(cfg.output(h.cls).zp)) * f32(cfg.output(h.cls).scale)
            b = (raw[h.box].astype(f32) - f32(cfg.output(h.box).zp)) * f32(cfg.output(h.box).scale)
            if cfg.bins > 1:
                e = np.exp(b.reshape(*b.shape[:2], 4, cfg.bins))
                b = (e / e.sum(-1, keepdims=True) * np.arange(cfg.bins, dtype=f32)).sum(-1)
            scores.append(c.reshape(-1, NC))
            boxes.append(b.reshape(-1, 4))
        s = np.concatenate(scores)
        best = s.max(1)
        idx = np.argpartition(-best, 300)[:300]
        flat = s[idx].reshape(-1)
        sel = np.argpartition(-flat, 300)[:300]
        keep = flat[sel] > cfg.score_threshold
        return int(keep.sum()) + len(np.concatenate(boxes)[idx[sel // NC]])
    cands = []
    for h in cfg.heads:
        if cfg.head_kind == "yolov5":
            x = (raw[h.box].astype(f32) - f32(cfg.output(h.box).zp)) * f32(cfg.output(h.box).scale)
            x = x.reshape(*x.shape[:2], 3, 85)
            obj = x[..., 4]
            m = obj >= f32(0.2)
            v = x[m]
            sc = v[:, 5:] * v[:, 4:5]
            w = (2 * v[:, 2]) ** 2
            cands.append((np.column_stack([v[:, 0], v[:, 1], w, w]), sc))
        else:
            o = (raw[h.obj].astype(f32) - f32(cfg.output(h.obj).zp)) * f32(cfg.output(h.obj).scale)
            m = o[..., 0] >= f32(0.2)
            c = (raw[h.cls][m].astype(f32)) * f32(cfg.output(h.cls).scale) * o[m]
            r = (raw[h.box][m].astype(f32) - f32(128)) * f32(0.05)
            cands.append((np.column_stack([r[:, 0], r[:, 1], np.exp(r[:, 2]), np.exp(r[:, 3])]), c))
    boxes = np.concatenate([c[0] for c in cands])
    scores = np.concatenate([c[1] for c in cands])
    rows, cols = np.nonzero(scores >= f32(0.2))
    order = np.argsort(-scores[rows, cols], kind="stable")
    b = boxes[rows[order]]
    kept = 0
    alive = np.ones(len(b), bool)
    for i in range(len(b)):  # greedy NMS over the candidates
        if not alive[i]:
            continue
        kept += 1
        ov = np.minimum(b[i, 2], b[i + 1:, 2]) - np.maximum(b[i, 0], b[i + 1:, 0])
        alive[i + 1:] &= ~((ov > 0) & (cols[order][i + 1:] == cols[order][i]))
    return kept


def _median(fn, budget):
    """Median of the per-call times (the machine is shared: the median resists the other loads)."""
    times, t0 = [], time.perf_counter()
    while time.perf_counter() - t0 < budget or len(times) < 5:
        times.append(fn())
    return statistics.median(times)


def measure(name, cfg, raw, budget):
    dec = hd.Decoder(cfg)
    arrays = [np.ascontiguousarray(raw[o.name]) for o in cfg.outputs]
    dec(raw)  # warm
    ours = _median(lambda: statistics.median(dec._core.time_decode(arrays, 1, 20)), budget)
    floor = _median(lambda: statistics.median(_core.time_read_pass(arrays, 20)), budget)

    def np_once():
        t = time.perf_counter()
        numpy_decode(cfg, raw)
        return time.perf_counter() - t
    npt = _median(np_once, budget)
    nbytes = sum(a.nbytes for a in arrays)
    n = len(dec(raw))
    print(f"| {name} | {nbytes / 1e6:.2f} MB | {n} | {ours * 1e6:.1f} us | {floor * 1e6:.1f} us | {ours / floor:.2f}x "
          f"| {npt * 1e3:.2f} ms | {npt / ours:.0f}x |")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--budget", type=float, default=1.0)
    args = p.parse_args()
    rng = np.random.default_rng(0)
    print(f"SIMD: {_core.simd_info()['active']}")
    print("| workload | head bytes | rows | ours | read pass | ours / pass | NumPy | NumPy / ours |")
    print("|---|---|---|---|---|---|---|---|")
    measure("YOLOv5n-like, th 0.2 (hailort)", *yolov5(rng), args.budget)
    measure("YOLOX-nano-like, th 0.2 (hailort)", *yolox(rng), args.budget)
    measure("YOLO26n-like end-to-end, conf 0.2", *end2end(rng, 1, 0.2), args.budget)
    measure("YOLO26n-like end-to-end, conf 0.001", *end2end(rng, 1, 0.001), args.budget)
    measure("YOLOv10n-like end-to-end (16 bins), conf 0.001", *end2end(rng, 16, 0.001), args.budget)


if __name__ == "__main__":
    main()
