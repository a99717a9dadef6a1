"""Benchmarks measured side by side in one run: our decoder (SIMD and scalar paths, 1 and 2
threads), the floor (one read pass over the class bytes), and two NumPy baselines (decode
everything; filter in the quantized domain first), on a yolov8n-like workload and the real frames.

Times are medians per frame. The decoder is timed in C++ (no Python call overhead) and separately
through the Python API."""

from __future__ import annotations

import functools
import json
import statistics
import sys
import time
from dataclasses import asdict, dataclass, field
from typing import Callable, Dict, List, Optional, Sequence, Tuple, Union, cast

import numpy as np

from . import _core
from ._install import install_hint
from .config import DecoderConfig, Head, OutputInfo
from .decoder import Decoder
from .detections import Detections
from .demo_data import demo_config, load_demo_frames

Frames = Dict[str, np.ndarray]

# --------------------------------------------------------------------------------------------
# Workloads


def _real_score_pool(data: Frames) -> np.ndarray:
    """Class scores of the real frames (sigmoid of the dequantized logits), pooled."""
    pool = []
    for key in ("cls_8", "cls_16", "cls_32"):
        q = data[key].astype(np.float32)
        x = (q - np.float32(data[f"zp_{key}"])) * np.float32(data[f"scale_{key}"])
        pool.append((1.0 / (1.0 + np.exp(-x))).ravel())
    return np.concatenate(pool)


def yolov8n_like(dtype: str = "uint8", batch: int = 8, seed: int = 0) -> Tuple[DecoderConfig, Frames]:
    """A yolov8n 640x640, 80-class model with sigmoid on chip (HailoRT's usual case).

    Background class scores are drawn value by value from the real frames' background scores
    (those below 0.01; the real frames' higher scores sit on the people in them). Each frame has 8
    to 12 objects; an object lights up a few neighbouring cells (as YOLOv8's task-aligned
    assignment trains it to) on its own scale with a peak of 0.3-0.95, on the next scale at 0.6 of
    that, with a weaker confusable class. Box tensors are the real frames' quantized box outputs."""
    rng = np.random.default_rng(seed)
    real = load_demo_frames()
    pool = _real_score_pool(real)
    pool = pool[pool < 0.01]
    strides = (8, 16, 32)
    grids = {s: 640 // s for s in strides}
    scores = {s: rng.choice(pool, size=(batch, grids[s], grids[s], 80)).astype(np.float32) for s in strides}
    for f in range(batch):
        for _ in range(int(rng.integers(8, 13))):
            cy, cx = rng.uniform(0.05, 0.95, size=2)  # object centre, fraction of the image
            main = int(rng.integers(3))
            cls, other = int(rng.integers(80)), int(rng.integers(80))
            peak = rng.uniform(0.3, 0.95)
            for k, s in enumerate(strides):
                level = {main: 1.0, main - 1: 0.6, main + 1: 0.6}.get(k)
                if level is None:
                    continue
                g = grids[s]
                radius = rng.uniform(0.8, 1.8)  # cells
                yy, xx = np.mgrid[0:g, 0:g]
                bump = level * peak * np.exp(-(((yy + 0.5 - cy * g) ** 2 + (xx + 0.5 - cx * g) ** 2) / radius ** 2))
                scores[s][f, :, :, cls] = np.maximum(scores[s][f, :, :, cls], bump)
                scores[s][f, :, :, other] = np.maximum(scores[s][f, :, :, other], 0.4 * bump)
    outputs, heads, frames = [], [], {}
    qmax = 255 if dtype == "uint8" else 65535
    cls_scale = np.float32(1.0 / qmax)
    for stride, box_key in zip(strides, ("box_8", "box_16", "box_32")):
        g = grids[stride]
        q = np.clip(np.rint(scores[stride] / cls_scale), 0, qmax).astype(dtype)
        box_q = np.stack([real[box_key][f % len(real[box_key])] for f in range(batch)])
        box_zp, box_scale = float(real[f"zp_{box_key}"]), float(real[f"scale_{box_key}"])
        if dtype == "uint16":
            box_q = box_q.astype(np.uint16) * np.uint16(257)
            box_zp, box_scale = box_zp * 257, box_scale / 257
        bname, cname = f"yolov8n/box{stride}", f"yolov8n/cls{stride}"
        outputs += [OutputInfo(bname, (g, g, 64), dtype, "FCR", zp=box_zp, scale=box_scale),
                    OutputInfo(cname, (g, g, 80), dtype, "NHWC", zp=0.0, scale=float(cls_scale))]
        heads.append(Head(bname, cname, stride))
        frames[bname] = np.ascontiguousarray(box_q)
        frames[cname] = np.ascontiguousarray(q)
    return DecoderConfig(outputs, heads, image_size=(640, 640)), frames


def real_frames() -> Tuple[DecoderConfig, Frames]:
    """The bundled real frames: 2 classes, logits (sigmoid on the host)."""
    data = load_demo_frames()
    cfg = demo_config(data)
    frames = {o.name: data[o.name.split("/", 1)[1]] for o in cfg.outputs}
    return cfg, frames


# --------------------------------------------------------------------------------------------
# NumPy baselines (what users write today)


def _dequant(q: np.ndarray, o: OutputInfo) -> np.ndarray:
    if o.dtype == "float32":
        return q
    return (q.astype(np.float32) - np.float32(_per_tensor(o.zp))) * np.float32(_per_tensor(o.scale))


def _per_tensor(value: Union[float, Tuple[float, ...]]) -> float:
    """The baselines' workloads are quantized per tensor."""
    if isinstance(value, tuple):
        raise ValueError("the NumPy baselines take per-tensor quantization only")
    return value


def _stride(h: Head) -> int:
    return cast(int, h.stride)  # DecoderConfig resolved every head's stride


def _activate(x: np.ndarray, sigmoid: bool) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x)) if sigmoid else x


def _dfl(box: np.ndarray) -> np.ndarray:
    n, c = box.shape
    b = box.reshape(n, 4, c // 4)
    e = np.exp(b - b.max(axis=2, keepdims=True))
    p = e / e.sum(axis=2, keepdims=True)
    return (p * np.arange(c // 4, dtype=np.float32)).sum(axis=2)


def _boxes(dist: np.ndarray, rows: np.ndarray, cols: np.ndarray, stride: int) -> np.ndarray:
    cx, cy = (cols + 0.5) * stride, (rows + 0.5) * stride
    return np.stack([cx - dist[:, 0] * stride, cy - dist[:, 1] * stride,
                     cx + dist[:, 2] * stride, cy + dist[:, 3] * stride], axis=1)


def greedy_nms(boxes: np.ndarray, scores: np.ndarray, iou_th: float, classes: Optional[np.ndarray] = None,
               suppress_equal: bool = True, class_offset: float = 8192.0) -> np.ndarray:
    """The NumPy baselines' greedy NMS, as NumPy code usually writes it: the best box against the
    rest vectorized, classes kept apart by offsetting each class's boxes (class_offset), a box
    suppressed at IoU >= iou_th (suppress_equal) or > iou_th. Indices kept, best first."""
    b = boxes if classes is None else boxes + classes[:, None].astype(np.float32) * np.float32(class_offset)
    area = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    order = np.argsort(-scores, kind="stable")
    keep = []
    while order.size:
        i = order[0]
        keep.append(i)
        rest = order[1:]
        w = np.clip(np.minimum(b[i, 2], b[rest, 2]) - np.maximum(b[i, 0], b[rest, 0]), 0, None)
        h = np.clip(np.minimum(b[i, 3], b[rest, 3]) - np.maximum(b[i, 1], b[rest, 1]), 0, None)
        inter = w * h
        iou = inter / (area[i] + area[rest] - inter)
        order = rest[iou < iou_th] if suppress_equal else rest[iou <= iou_th]
    return np.array(keep, dtype=np.int64)


def numpy_decode_all(cfg: DecoderConfig, frame: Frames, threshold: float) -> int:
    """Dequantize everything, activation everywhere, DFL at every cell, then filter and NMS."""
    sig = cfg.class_activation == "sigmoid"
    all_boxes, all_scores = [], []
    for h in cfg.heads:
        bo, co = cfg.output(h.box), cfg.output(h.cls)
        g_h, g_w = co.shape[:2]
        scores = _activate(_dequant(frame[h.cls], co), sig).reshape(g_h * g_w, -1)
        dist = _dfl(_dequant(frame[h.box], bo).reshape(g_h * g_w, -1))
        rows, cols = np.divmod(np.arange(g_h * g_w), g_w)
        all_boxes.append(_boxes(dist, rows, cols, _stride(h)))
        all_scores.append(scores)
    boxes, scores = np.concatenate(all_boxes), np.concatenate(all_scores)
    cell, cls = np.nonzero(scores >= threshold)
    return len(greedy_nms(boxes[cell], scores[cell, cls], cfg.iou_threshold, cls))


def numpy_filtered(cfg: DecoderConfig, frame: Frames, threshold: float) -> int:
    """Threshold in the quantized domain first; dequantize and DFL only the cells that pass."""
    sig = cfg.class_activation == "sigmoid"
    th = float(np.log(threshold / (1 - threshold))) if sig else threshold
    b_all, s_all, c_all = [], [], []
    for h in cfg.heads:
        bo, co = cfg.output(h.box), cfg.output(h.cls)
        g_w = co.shape[1]
        q = frame[h.cls]
        if co.dtype == "float32":
            qth = np.float32(th)
        else:  # the integer that first passes, compared in the array's own dtype (no float copy)
            zp, scale = _per_tensor(co.zp), _per_tensor(co.scale)
            qth = np.dtype(co.dtype).type(min(max(np.ceil(th / scale + zp), 0), np.iinfo(co.dtype).max))
        cell_r, cell_c, cls = np.nonzero(q >= qth)
        if not len(cls):
            continue
        scores = _activate(_dequant(q[cell_r, cell_c, cls], co), sig)
        uniq, inv = np.unique(cell_r * g_w + cell_c, return_inverse=True)
        rows, cols = np.divmod(uniq, g_w)
        dist = _dfl(_dequant(frame[h.box][rows, cols], bo))
        b_all.append(_boxes(dist, rows, cols, _stride(h))[inv])
        s_all.append(scores)
        c_all.append(cls)
    if not b_all:
        return 0
    return len(greedy_nms(np.concatenate(b_all), np.concatenate(s_all), cfg.iou_threshold, np.concatenate(c_all)))


# --------------------------------------------------------------------------------------------
# Measurement


def _median_time(fn: Callable[[], object], budget: float, min_runs: int = 3, max_runs: int = 2000) -> float:
    times: List[float] = []
    deadline = time.perf_counter() + budget
    while len(times) < max_runs and (len(times) < min_runs or time.perf_counter() < deadline):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
        if times[-1] > budget:  # a very slow baseline: one run is enough
            break
    return statistics.median(times)


def _side_by_side(series: Dict[str, Callable[[int], List[float]]], budget: float, rounds: int = 8) -> Dict[str, float]:
    """Median seconds per call of each series, measured in alternating rounds.

    Each series is a function of an iteration count returning that many timings (taken in C++).
    The machines here drift between a fast and a slow state over seconds, so timing one series
    after another would compare different states: every round runs each series for about
    budget / rounds, and the medians are over all rounds. Each round of a series starts with a
    few untimed calls (about 2 ms): the series before it has taken the caches, and a thread pool
    idle since its last round must wake (its first calls ran at 1.2x-1.5x instead of 1.7x-1.9x),
    while a stream of frames decodes back to back."""
    per_call = {name: max(min(fn(3)), 1e-7) for name, fn in series.items()}  # warm-up and sizing
    times: Dict[str, List[float]] = {name: [] for name in series}
    for _ in range(rounds):
        for name, fn in series.items():
            fn(int(min(200, max(2, 0.002 / per_call[name]))))
            times[name] += fn(int(min(2000, max(3, budget / rounds / per_call[name]))))
    return {name: statistics.median(t) for name, t in times.items()}


def _decode_series(dec: Decoder, arrays: Sequence[np.ndarray], n: int, simd: Optional[str] = None):
    """Timings of dec on the arrays, on the given kernel path (the active one if None)."""
    def run(iterations: int) -> List[float]:
        active = _core.simd_info()["active"]
        if simd is not None:
            _core.select_simd(simd)
        try:
            return dec._core.time_decode(list(arrays), n, iterations)
        finally:
            _core.select_simd(active)
    return run


@dataclass
class Row:
    workload: str
    dtype: str
    threshold: float
    batch: int
    candidates: int
    detections: int
    floor_us: float
    simd_us: float
    scalar_us: float
    simd_api_us: float
    simd_2threads_us: Optional[float]
    numpy_filtered_us: float
    numpy_all_us: float
    simd_path: str
    ratios: Dict[str, float] = field(default_factory=dict)
    # One frame at a time from memory (frames not in any cache), batch 1 of the yolov8n-like rows
    floor_memory_us: Optional[float] = None
    simd_memory_us: Optional[float] = None


def _from_memory(dec: Decoder, cfg: DecoderConfig, frames: Frames, rounds: int = 6,
                 cache_bytes: int = 64 << 20) -> Tuple[float, float]:
    """Median seconds of the floor and of one decode for frames that come from memory, as a
    frame DMA'd by the device does: distinct copies of the frames, more bytes than the last-level
    cache holds, each read once per pass (the floor's pass and the decode's in alternation)."""
    one = sum(frames[o.name][0].nbytes for o in cfg.outputs)
    n = len(next(iter(frames.values())))
    copies = [{o.name: np.array(frames[o.name][i % n:i % n + 1]) for o in cfg.outputs}
              for i in range(max(8, cache_bytes // one + 1))]
    arrays = [[c[o.name] for o in cfg.outputs] for c in copies]
    cls = [[c[h.cls] for h in cfg.heads] for c in copies]
    floor: List[float] = []
    ours: List[float] = []
    for _ in range(rounds):
        for a in cls:
            floor += _core.time_read_pass(a, 1)
        for a in arrays:
            ours += dec._core.time_decode(a, 1, 1)
    return statistics.median(floor), statistics.median(ours)


def measure(workload: str, cfg: DecoderConfig, frames: Frames, threshold: float, batch: int,
            budget: float = 0.3, numpy_budget: float = 1.0, progress: Callable[[str], None] = lambda s: None) -> Row:
    cfg = cfg.replace(score_threshold=threshold)
    batch_frames = {k: np.ascontiguousarray(v[:batch]) for k, v in frames.items()}
    dec = Decoder(cfg)
    arrays = [batch_frames[o.name] for o in cfg.outputs]
    cls_arrays = [batch_frames[h.cls] for h in cfg.heads]
    simd = _core.simd_info()["active"]
    dets = _frames_of(dec(batch_frames))
    n_dets = sum(len(d) for d in dets)
    counting = Decoder(cfg.replace(iou_threshold=1.0, iou_test=">", max_per_class=None, max_total=None,
                                   max_candidates=None))
    n_cand = sum(len(d) for d in _frames_of(counting(batch_frames)))

    progress("floor, ours (SIMD, scalar, 2 threads)")
    series = {
        "floor": lambda it: _core.time_read_pass(cls_arrays, it),
        "simd": _decode_series(dec, arrays, batch),
        "scalar": _decode_series(dec, arrays, batch, "scalar"),
    }
    if batch > 1:
        series["threads"] = _decode_series(Decoder(cfg, threads=2), arrays, batch)
    medians = _side_by_side(series, budget * len(series))
    floor, t_simd, t_scalar = medians["floor"], medians["simd"], medians["scalar"]
    t_threads = medians.get("threads")
    memory = None
    if batch == 1 and workload.startswith("yolov8n"):
        progress("from memory")
        memory = _from_memory(dec, cfg, frames)
    progress("Python API")
    t_api = _median_time(lambda: dec(batch_frames), budget)
    singles = [{k: v[i] for k, v in batch_frames.items()} for i in range(batch)]
    progress("numpy filtered")
    t_filt = _median_time(lambda: [numpy_filtered(cfg, f, threshold) for f in singles], numpy_budget)
    progress("numpy decode-all")
    t_all = _median_time(lambda: [numpy_decode_all(cfg, f, threshold) for f in singles], numpy_budget, min_runs=1)
    us = lambda t: t / batch * 1e6  # noqa: E731  per frame
    row = Row(workload, cfg.outputs[0].dtype, threshold, batch, n_cand, n_dets, us(floor), us(t_simd), us(t_scalar),
              us(t_api), None if t_threads is None else us(t_threads), us(t_filt), us(t_all), simd)
    row.ratios = {
        "simd / floor": row.simd_us / row.floor_us,
        "numpy_all / simd": row.numpy_all_us / row.simd_us,
        "numpy_filtered / simd": row.numpy_filtered_us / row.simd_us,
        "scalar / simd": row.scalar_us / row.simd_us,
    }
    if row.simd_2threads_us:
        row.ratios["throughput 2 threads / 1 thread"] = row.simd_us / row.simd_2threads_us
    if memory:
        row.floor_memory_us, row.simd_memory_us = us(memory[0]), us(memory[1])
        row.ratios["simd / floor, from memory"] = row.simd_memory_us / row.floor_memory_us
    return row


def _frames_of(result: Union[Detections, List[Detections]]) -> List[Detections]:
    return result if isinstance(result, list) else [result]


def run(quick: bool = False, out=sys.stderr) -> List[Row]:
    plan: List[Tuple[str, Callable[[], Tuple[DecoderConfig, Frames]]]] = []
    for dtype in ("uint8", "uint16"):
        plan.append(("yolov8n-like 640 x 80 classes", functools.partial(yolov8n_like, dtype)))
    plan.append(("real frames (2 classes, logits)", real_frames))
    thresholds = (0.2, 0.05, 0.001)
    batches = (1, 8)
    rows: List[Row] = []
    total = len(plan) * len(thresholds) * len(batches)
    done = 0
    for name, make in plan:
        cfg, frames = make()
        for th in thresholds:
            for batch in batches:
                if batch > len(next(iter(frames.values()))):
                    batch = len(next(iter(frames.values())))
                done += 1
                label = f"[{done}/{total}] {name} {cfg.outputs[0].dtype} th={th} batch={batch}"

                def progress(step: str, label=label) -> None:
                    print(f"\r{label}: {step:<18}", end="", file=out, flush=True)

                rows.append(measure(name, cfg, frames, th, batch, budget=0.1 if quick else 0.3,
                                    numpy_budget=0.3 if quick else 1.0, progress=progress))
                print(f"\r{label}: done{' ' * 14}", file=out, flush=True)
    return rows


def format_table(rows: Sequence[Row]) -> str:
    head = ("| workload | dtype | th | batch | cand. | dets | floor us | ours SIMD us | ours scalar us | "
            "Python API us | 2 threads us | NumPy filtered us | NumPy all us | SIMD/floor | NumPy all/ours | "
            "NumPy filt./ours | 2-thread speedup |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in rows:
        two = f"{r.simd_2threads_us:.1f}" if r.simd_2threads_us else "-"
        speed = f"{r.ratios.get('throughput 2 threads / 1 thread', 0):.2f}x" if r.simd_2threads_us else "-"
        lines.append(f"| {r.workload} | {r.dtype} | {r.threshold:g} | {r.batch} | {r.candidates} | {r.detections} | "
                     f"{r.floor_us:.1f} | {r.simd_us:.1f} | {r.scalar_us:.1f} | {r.simd_api_us:.1f} | {two} | "
                     f"{r.numpy_filtered_us:.0f} | {r.numpy_all_us:.0f} | {r.ratios['simd / floor']:.2f}x | "
                     f"{r.ratios['numpy_all / simd']:.0f}x | {r.ratios['numpy_filtered / simd']:.0f}x | {speed} |")
    memory = [r for r in rows if r.simd_memory_us]
    if memory:
        lines += ["", "Frames from memory (distinct copies, more than the last-level cache, each read once a pass):", "",
                  "| workload | dtype | th | floor us | ours SIMD us | SIMD/floor |", "|---|---|---|---|---|---|"]
        for r in memory:
            lines.append(f"| {r.workload} | {r.dtype} | {r.threshold:g} | {r.floor_memory_us:.1f} | {r.simd_memory_us:.1f} | "
                         f"{r.ratios['simd / floor, from memory']:.2f}x |")
    return "\n".join(lines)


# What the plot draws: (label, Row attribute, colour). Ours are solid, the floor dotted, the
# NumPy baselines dashed.
PLOT_SERIES = (("floor (read pass)", "floor_us", "0.5", ":"),
               ("ours SIMD", "simd_us", "tab:red", "-"),
               ("ours scalar", "scalar_us", "tab:orange", "-"),
               ("ours 2 threads", "simd_2threads_us", "tab:purple", "-"),
               ("NumPy filtered", "numpy_filtered_us", "tab:blue", "--"),
               ("NumPy decode-all", "numpy_all_us", "tab:green", "--"))
PLOT_SIZE_PX = (1400, 900)


def _need_matplotlib():
    try:
        import matplotlib
    except ImportError as e:
        raise ImportError(f"bench --plot needs the optional package 'matplotlib', which is not installed: "
                          f"{install_hint('plot')} ({e})") from e
    matplotlib.use("Agg")  # files only, no display
    import matplotlib.pyplot as plt

    return plt


def plot(rows: Sequence[Row], path: str, size_px: Tuple[int, int] = PLOT_SIZE_PX):
    """Time per frame against candidates per frame (the cells x classes that pass the score
    threshold, before NMS), for ours and the baselines: one panel per workload and dtype, a
    point per threshold, batch 1 (o) and batch 8 (s) as separate lines; log-log. Writes a PNG of
    size_px pixels and returns the figure."""
    plt = _need_matplotlib()
    panels: Dict[Tuple[str, str], List[Row]] = {}
    for r in rows:
        panels.setdefault((r.workload, r.dtype), []).append(r)
    dpi = 100
    fig, axes = plt.subplots(1, max(1, len(panels)), figsize=(size_px[0] / dpi, size_px[1] / dpi),
                             dpi=dpi, squeeze=False)
    for ax, ((workload, dtype), group) in zip(axes[0], panels.items()):
        for batch, marker in zip(sorted({r.batch for r in group}), "osD^v"):
            pts = sorted((r for r in group if r.batch == batch), key=lambda r: r.candidates / r.batch)
            for label, attr, colour, style in PLOT_SERIES:
                xy = [(r.candidates / r.batch, getattr(r, attr)) for r in pts if getattr(r, attr)]
                if xy:
                    ax.plot([x for x, _ in xy], [y for _, y in xy], marker=marker, color=colour,
                            linestyle=style, label=f"{label}, batch {batch}")
        ax.set_xscale("symlog", linthresh=1)  # a threshold can leave no candidate at all
        ax.set_yscale("log")
        ax.set_title(f"{workload}, {dtype}", fontsize=9)
        ax.set_xlabel("candidates per frame (before NMS)")
        ax.grid(True, which="both", alpha=0.3)
    axes[0][0].set_ylabel("microseconds per frame (median)")
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    return fig


def main(args) -> int:
    if args.plot:
        try:
            _need_matplotlib()  # before minutes of measuring, not after
        except ImportError as e:
            print(f"hailo-decode bench: {e}", file=sys.stderr)
            return 2
    rows = run(quick=args.quick)
    print(format_table(rows))
    info = _core.simd_info()
    print(f"\nkernel path: {info['active']} (available: {', '.join(info['available'])}); times per frame, median")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"simd": info, "rows": [asdict(r) for r in rows]}, f, indent=1)
        print(f"wrote {args.json}")
    if args.plot:
        plot(rows, args.plot)
        print(f"wrote {args.plot}")
    return 0
