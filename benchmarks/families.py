"""Speed of the head families of issue 13 (YOLOv5, YOLOX, end-to-end top-k) at yolov*n size:
640 x 640 input, strides 8/16/32, 80 classes, uint8, one frame, score threshold 0.2 (the top-k
at 0.001 too). Each row: our decode (timed in C++, GIL released); one read pass over
the bytes the family's decode must read (must_read below: the objectness bytes and the passing
anchors' values, or every class byte and the chosen anchors' boxes); one read pass over every byte
of the head tensors; and a competent vectorized NumPy decode of the same heads (numpy_decode: it
gates or ranks first, then decodes only what passes, with a class-aware NMS). Rounds alternate
the four (medians over the rounds). Synthetic values with a realistic
sparsity: about 1 % of objectness values (YOLOv5/YOLOX) or class scores (end-to-end) high: the
stress case. The "real density" rows take their person scores and boxes from a trained model's
outputs on a real frame (_pose_maps), so as many cells pass as a real detector gives.
"passing" counts the anchors or cells whose objectness (YOLOv5, YOLOX) or best class score
(end-to-end) passes the threshold.

    python benchmarks/families.py [--budget SECONDS]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import hailo_decode as hd
from hailo_decode import _core
from hailo_decode.bench import greedy_nms

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


# -- real density: score maps and boxes of a trained model on real photographs ---------------------
# The synthetic heads above are a stress case: about 1 % of objectness values (85 YOLOX cells) or
# 0.2 % of class values (about 1,300 end-to-end anchors) pass 0.2, far more than a trained head
# fires. The heads below take their per-cell person score and box from the bundled uint8 outputs
# of YOLO11n-pose (data/pose_uint8.npz: one real frame, a 2 x 2 mosaic of four photographs with
# four people; its one class is "person"): the score is the sigmoid of its dequantized class
# logit, the box its DFL-decoded distances (in strides). The other 79 classes are low noise as in
# the synthetic heads. It is a one-to-many (NMS) head, so it fires on a few cells per person: more
# than a one-to-one end-to-end head would, fewer than the synthetic heads.


def _pose_maps():
    """Per stride: the real person score of every cell (float, 0..1) and its (l, t, r, b) box
    distances in strides."""
    from hailo_decode.demo_data import load_task_demo

    z = load_task_demo("pose")
    maps = {}
    for s in STRIDES:
        q = z[f"cls_{s}"][0].astype(np.float32)
        logit = (q - np.float32(z[f"zp_cls_{s}"])) * np.float32(z[f"scale_cls_{s}"])
        score = 1 / (1 + np.exp(-logit[..., 0].astype(np.float64)))
        b = (z[f"box_{s}"][0].astype(np.float32) - np.float32(z[f"zp_box_{s}"])) * np.float32(z[f"scale_box_{s}"])
        b = b.reshape(b.shape[0], b.shape[1], 4, 16).astype(np.float64)
        e = np.exp(b - b.max(-1, keepdims=True))
        maps[s] = (score, (e * np.arange(16)).sum(-1) / e.sum(-1))
    return maps


def _q(x, zp, scale):
    return np.clip(np.round(x / scale + zp), 0, 255).astype(np.uint8)


def yolox_real(rng):
    """YOLOX-like heads whose objectness is the real person score and whose reg is the real box
    (center offset and log size); classes as in yolox(): one likely class, the rest low."""
    outputs, heads, raw = [], [], {}
    for s, (score, ltrb) in _pose_maps().items():
        g = 640 // s
        left, top, right, bottom = (ltrb[..., i] for i in range(4))
        reg = np.stack([0.5 + (right - left) / 2, 0.5 + (bottom - top) / 2, np.log(left + right), np.log(top + bottom)], -1)
        parts = {f"xr/reg{s}": _q(reg, 128, 0.05),
                 f"xr/obj{s}": _q(score[..., None], 0, 1 / 255),
                 f"xr/cls{s}": rng.integers(0, 30, size=(g, g, NC)).astype(np.uint8)}
        parts[f"xr/cls{s}"][..., 0] = rng.integers(100, 256, size=(g, g))
        for n, a in parts.items():
            zp, scale = (128, 0.05) if "reg" in n else (0, 1 / 255)
            outputs.append(hd.OutputInfo(n, a.shape, zp=zp, scale=scale))
            raw[n] = a
        heads.append(hd.YoloxHead(f"xr/reg{s}", f"xr/obj{s}", f"xr/cls{s}", s))
    return hd.DecoderConfig(outputs, heads, image_size=(640, 640), score_threshold=0.2), raw


def end2end_real(rng, conf):
    """YOLO26-like end-to-end heads (one box value per side): class 0 is the real person score, the
    other 79 classes low noise (0-39 of 255, the synthetic heads' background); boxes the real
    distances."""
    outputs, heads, raw = [], [], {}
    for s, (score, ltrb) in _pose_maps().items():
        g = 640 // s
        cls = rng.integers(0, 40, size=(g, g, NC)).astype(np.uint8)
        cls[..., 0] = _q(score, 0, 1 / 255)
        for n, a, q in ((f"er/box{s}", _q(ltrb, 0, 0.25), (0, 0.25)), (f"er/cls{s}", cls, (0, 1 / 255))):
            outputs.append(hd.OutputInfo(n, a.shape, zp=q[0], scale=q[1]))
            raw[n] = a
        heads.append(hd.Head(f"er/box{s}", f"er/cls{s}", s))
    cfg = hd.DecoderConfig(outputs, heads, image_size=(640, 640), semantics="ultralytics", class_activation="none",
                           end2end=True, score_threshold=conf)
    return cfg, raw


def _dequant(a, o):
    return (a.astype(np.float32) - np.float32(o.zp)) * np.float32(o.scale)


def numpy_decode(cfg, raw):
    """A competent vectorized NumPy decode of the same heads, doing the same job: the gate or the
    ranking on dequantized values, then only what passes dequantized and decoded (boxes with their
    grid, stride and anchors), then NMS (or the end-to-end top-k). Returns the rows kept."""
    f32 = np.float32
    if cfg.head_kind == "dfl":  # end-to-end: the two top-ks, boxes of the chosen anchors only
        k = 300
        scores = np.concatenate([_dequant(raw[h.cls], cfg.output(h.cls)).reshape(-1, NC) for h in cfg.heads])
        idx = np.argpartition(-scores.max(1), k - 1)[:k]
        flat = scores[idx].reshape(-1)
        sel = np.argpartition(-flat, k - 1)[:k]
        sel = sel[np.argsort(-flat[sel], kind="stable")]
        keep = sel[flat[sel] > f32(cfg.score_threshold)]
        anchor = idx[keep // NC]
        rows, starts = [], np.cumsum([0] + [(640 // h.stride) ** 2 for h in cfg.heads])
        for j, h in enumerate(cfg.heads):  # decode each head's chosen anchors
            local = anchor[(anchor >= starts[j]) & (anchor < starts[j + 1])] - starts[j]
            g = 640 // h.stride
            b = _dequant(raw[h.box].reshape(g * g, -1)[local], cfg.output(h.box))
            if cfg.bins > 1:
                e = np.exp(b.reshape(-1, 4, cfg.bins) - b.reshape(-1, 4, cfg.bins).max(-1, keepdims=True))
                b = (e * np.arange(cfg.bins, dtype=f32)).sum(-1) / e.sum(-1)
            cx, cy = local % g + f32(0.5), local // g + f32(0.5)
            rows.append(np.column_stack([cx - b[:, 0], cy - b[:, 1], cx + b[:, 2], cy + b[:, 3]]) * f32(h.stride))
        return len(np.concatenate(rows))
    boxes, scores = [], []
    for h in cfg.heads:
        if cfg.head_kind == "yolov5":
            o = cfg.output(h.box)
            g = raw[h.box].shape[0]
            v = raw[h.box].reshape(g, g, 3, NC + 5)
            row, col, a = np.nonzero(_dequant(v[..., 4], o) >= f32(0.2))  # the objectness gate
            x = _dequant(v[row, col, a], o)
            anc = np.asarray(h.anchors, f32)[a]
            xc, yc = (x[:, 0] * 2 + (col - f32(0.5))) * h.stride, (x[:, 1] * 2 + (row - f32(0.5))) * h.stride
            w, hh = (x[:, 2] * 2) ** 2 * anc[:, 0], (x[:, 3] * 2) ** 2 * anc[:, 1]
            sc = x[:, 5:] * x[:, 4:5]
        else:
            o = _dequant(raw[h.obj][..., 0], cfg.output(h.obj))
            row, col = np.nonzero(o >= f32(0.2))
            sc = _dequant(raw[h.cls][row, col], cfg.output(h.cls)) * o[row, col][:, None]
            r = _dequant(raw[h.box][row, col], cfg.output(h.box))
            xc, yc = (r[:, 0] + col) * h.stride, (r[:, 1] + row) * h.stride
            w, hh = np.exp(r[:, 2]) * h.stride, np.exp(r[:, 3]) * h.stride
        boxes.append(np.column_stack([xc - w / 2, yc - hh / 2, xc + w / 2, yc + hh / 2]))
        scores.append(sc)
    b, s = np.concatenate(boxes), np.concatenate(scores)
    cell, cls = np.nonzero(s >= f32(0.2))
    return len(greedy_nms(b[cell], s[cell, cls], 0.7, cls, class_offset=4096.0))


def must_read(cfg, raw):
    """The bytes a decoder of this family must read, as spans for _core.time_span_pass:
    YOLOv5: every anchor's objectness byte (85 bytes apart), then the records of the anchors that
    pass the gate; YOLOX: the objectness tensor, then the class and reg values of the cells that
    pass; end-to-end: every class byte (each cell's best class needs them all), then the box
    values of the anchors chosen."""
    f32 = np.float32
    spans = []
    if cfg.head_kind == "yolov5":
        for h in cfg.heads:
            a = raw[h.box]
            n = a.size // (NC + 5)
            spans.append((a, 4, NC + 5, n, 1))
            obj = _dequant(a.reshape(n, NC + 5)[:, 4], cfg.output(h.box))
            spans += [(a, int(i) * (NC + 5), 0, 1, NC + 5) for i in np.nonzero(obj >= f32(0.2))[0]]
    elif cfg.head_kind == "yolox":
        for h in cfg.heads:
            obj, cls, reg = raw[h.obj], raw[h.cls], raw[h.box]
            spans.append((obj, 0, 0, 1, obj.nbytes))
            for i in np.nonzero(_dequant(obj.reshape(-1), cfg.output(h.obj)) >= f32(0.2))[0]:
                spans += [(cls, int(i) * NC, 0, 1, NC), (reg, int(i) * 4, 0, 1, 4)]
    else:
        scores = [_dequant(raw[h.cls], cfg.output(h.cls)).reshape(-1, NC) for h in cfg.heads]
        best = np.concatenate([s.max(1) for s in scores])
        chosen = np.sort(np.argpartition(-best, 299)[:300])
        start = 0
        for h, s in zip(cfg.heads, scores):
            spans.append((raw[h.cls], 0, 0, 1, raw[h.cls].nbytes))
            per = raw[h.box].shape[-1]
            spans += [(raw[h.box], int(i - start) * per, 0, 1, per) for i in chosen[(chosen >= start) & (chosen < start + len(s))]]
            start += len(s)
    return spans


def passing(cfg, raw):
    """What passes the gate at the configured threshold: YOLOv5 anchors or YOLOX cells whose
    objectness passes, end-to-end anchors whose best class score passes."""
    f32, th = np.float32, np.float32(cfg.score_threshold)
    if cfg.head_kind == "yolov5":
        return sum(int((_dequant(raw[h.box][..., 4::NC + 5], cfg.output(h.box)) >= th).sum()) for h in cfg.heads)
    if cfg.head_kind == "yolox":
        return sum(int((_dequant(raw[h.obj], cfg.output(h.obj)) >= th).sum()) for h in cfg.heads)
    return sum(int((_dequant(raw[h.cls], cfg.output(h.cls)).max(-1) > f32(th)).sum()) for h in cfg.heads)


def measure(name, cfg, raw, budget):
    """Rounds alternating ours, the full read pass, the must-read pass and NumPy (the machine is
    shared: each round's figures are taken under the same load); medians over the rounds."""
    dec = hd.Decoder(cfg)
    arrays = [np.ascontiguousarray(raw[o.name]) for o in cfg.outputs]
    spans = must_read(cfg, {o.name: a for o, a in zip(cfg.outputs, arrays)})
    dec(raw)  # warm
    numpy_decode(cfg, raw)
    rounds = {"ours": [], "full": [], "must": [], "numpy": []}
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < budget or len(rounds["ours"]) < 5:
        rounds["ours"].append(statistics.median(dec._core.time_decode(arrays, 1, 20)))
        rounds["full"].append(statistics.median(_core.time_read_pass(arrays, 20)))
        rounds["must"].append(statistics.median(_core.time_span_pass(spans, 20)))
        t = time.perf_counter()
        numpy_decode(cfg, raw)
        rounds["numpy"].append(time.perf_counter() - t)
    ours, full, must, npt = (statistics.median(rounds[k]) for k in ("ours", "full", "must", "numpy"))
    nbytes = sum(a.nbytes for a in arrays)
    must_bytes = sum(s[3] * s[4] for s in spans)
    n = len(dec(raw))
    print(f"| {name} | {nbytes / 1e6:.2f} MB | {must_bytes / 1e6:.3f} MB | {passing(cfg, raw)} | {n} | {ours * 1e6:.1f} us | "
          f"{must * 1e6:.1f} us | {ours / must:.1f}x | {full * 1e6:.1f} us | {ours / full:.2f}x | "
          f"{npt * 1e3:.2f} ms | {npt / ours:.0f}x |")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--budget", type=float, default=1.0)
    args = p.parse_args()
    rng = np.random.default_rng(0)
    print(f"SIMD: {_core.simd_info()['active']}")
    print("| workload | head bytes | must read | passing | rows | ours | must-read pass | ours / it | full pass "
          "| ours / it | NumPy | NumPy / ours |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    measure("YOLOv5n-like, th 0.2 (hailort)", *yolov5(rng), args.budget)
    measure("YOLOX-nano-like, th 0.2 (hailort)", *yolox(rng), args.budget)
    measure("YOLO26n-like end-to-end, conf 0.2", *end2end(rng, 1, 0.2), args.budget)
    measure("YOLO26n-like end-to-end, conf 0.001", *end2end(rng, 1, 0.001), args.budget)
    measure("YOLOv10n-like end-to-end (16 bins), conf 0.001", *end2end(rng, 16, 0.001), args.budget)
    # Real density (the person scores and boxes of a trained model on a real frame, _pose_maps).
    measure("real density: YOLOX-nano-like, th 0.2 (hailort)", *yolox_real(rng), args.budget)
    measure("real density: YOLO26n-like end-to-end, conf 0.2", *end2end_real(rng, 0.2), args.budget)
    measure("real density: YOLO26n-like end-to-end, conf 0.001", *end2end_real(rng, 0.001), args.budget)


if __name__ == "__main__":
    main()
