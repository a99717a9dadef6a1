"""Random but realistic YOLOv8/Hailo head tensors for comparison tests.

``make_case(rng, **options) -> (outputs, spec)`` builds one frame: 1 to 3 heads
with small grids, quantized (or float32) box and class tensors in host or padded
device layouts, and a ``spec`` dict in the format of ``reference_decoder``.

What the generated data looks like
----------------------------------
* Class tensors: mostly low background scores drawn from a small palette (so
  there are many exact ties, in uint8 and also in uint16), plus 1-4 "objects".
  An object lights up its centre cell and the neighbouring cells (Chebyshev
  radius 0-2) of one or more heads with scores from a small per-case palette of
  peak levels minus a palette of decrements, so equal scores appear in several
  cells and objects; some objects also light a second class.
* Box tensors: DFL logits peaked around the distance to the object's edges
  (neighbouring cells of one object therefore give strongly overlapping boxes
  and NMS has work to do), random peaked distances elsewhere. With ``bins=1``
  the tensor holds the distances directly (always > 0.2 stride).
* Quantization: per-tensor or per-channel (numpy arrays) zero points/scales in
  realistic ranges; zero points are sometimes non-integer. float32 tensors hold
  the float32 dequantized values of such a grid (the spec still carries the
  zp/scale, which a decoder must ignore for float32).
* Device layouts: padded (Hp >= H, Wp >= W, Cp >= C, Cp % 8 == 0 for F8CR) and
  the buffer is rounded up to 8 bytes plus sometimes a few extra elements. All
  padding is garbage, about a third of it the maximum code (which would be a
  top score / huge logit if ever read), so reading padding changes results.
  The packing is built with numpy pads/transposes, independently of the
  index formulas in ``reference_decoder``.

Why the thresholds are where they are (exactness)
-------------------------------------------------
The comparison must not depend on float rounding differences between NumPy and
C++ (``expf``, FMA, evaluation order). Therefore:

* activation "none": the score of a cell is exactly
  ``(float32(q) - zp) * scale`` in any correct implementation, so the score
  threshold is chosen EQUAL to one of the dequantized scores present in the
  data (rounded-trip exact float32). ``>=`` and ``>`` then give different,
  exactly defined answers.
* activation "sigmoid": a float32 sigmoid may differ by a few ulp between
  implementations, so the threshold is the MIDPOINT between two adjacent
  possible sigmoid values (over the whole code range of the channel(s) it
  applies to), and the case is rejected unless both neighbours are at least
  ``REL_SCORE_MARGIN`` (relative) away. All distinct candidate-relevant scores
  must also be ``REL_SCORE_MARGIN`` apart, so the sort order and the best-class
  argmax cannot flip either; equal logits give bit-equal scores everywhere.
* IoU threshold: chosen inside a gap of the pairwise IoUs of all candidate
  pairs that NMS could compare, at least ``IOU_MARGIN`` from every one of them
  (DFL softmax and box arithmetic differ by ~1e-7 between implementations).
  Occasionally it is exactly 1.0 when some candidates have bit-identical boxes
  (IoU exactly 1.0 in any implementation) and no IoU is in (1 - margin, 1):
  then ``>=`` suppresses duplicates and ``>`` does not.

Public API
----------
``make_case(rng, *, dtype, layout, order, per_channel, num_classes, bins,
activation, num_heads, image_size, multi_label, agnostic, score_test,
iou_test, tie_break, per_class_threshold, normalized, box_order,
max_candidates, max_per_class, max_total, max_attempts) -> (outputs, spec)``

Every option accepts ``RANDOM`` (the string "random"); ``dtype``, ``layout``
and ``order`` also accept a sequence of values to choose from independently
per tensor. ``case_problems(outputs, spec) -> list[str]`` re-checks a case's
exactness margins (empty list = robust). ``padding_mask(spec, name, size)``
says which elements of a device buffer are padding.
"""

from __future__ import annotations

import numpy as np

import reference_decoder as ref

__all__ = [
    "RANDOM",
    "REL_SCORE_MARGIN",
    "IOU_MARGIN",
    "DTYPES",
    "HOST_ORDERS",
    "DEVICE_ORDERS",
    "make_case",
    "case_problems",
    "padding_mask",
]

RANDOM = "random"
# Minimum relative distance between a sigmoid score and the threshold, and
# between two distinct candidate-relevant sigmoid scores (~30-60 float32 ulp).
REL_SCORE_MARGIN = 4e-6
# Minimum absolute distance between any relevant pairwise IoU and the IoU threshold.
IOU_MARGIN = 1e-3

DTYPES = ("uint8", "uint16", "float32")
HOST_ORDERS = ("NHWC", "FCR", "F8CR", "NCHW")
DEVICE_ORDERS = ("NHWC", "FCR", "NHCW", "F8CR")
_QMAX = {"uint8": 255, "uint16": 65535}


class _Reject(Exception):
    """The drawn case is not robust; draw another one."""


def _is_random(v) -> bool:
    return isinstance(v, str) and v == RANDOM


def _pick(rng, value, choices):
    """Resolve an option: RANDOM -> any of choices; sequence -> any of it; else value."""
    if _is_random(value):
        return choices[int(rng.integers(len(choices)))]
    if isinstance(value, (list, tuple)):
        return value[int(rng.integers(len(value)))]
    return value


def _f32(x) -> float:
    """Python float that is exactly representable in float32."""
    return float(np.float32(x))


# --------------------------------------------------------------------------
# Quantization parameters
# --------------------------------------------------------------------------

def _quant(rng, kind: str, grid: str, activation: str, bins: int, C: int, per_channel: bool):
    """(zp, scale) for a tensor quantized on ``grid`` ("uint8"/"uint16").

    kind: "cls" or "box". Returns zp, scale as float32 values: Python floats for
    per-tensor, float32 arrays of length C for per-channel.
    """
    qmax = _QMAX[grid]
    if kind == "cls" and activation == "none":
        # scores in [0, ~1]
        zp = 0.0 if rng.random() < 0.8 else float(rng.integers(1, 4))
        scale = rng.uniform(1.0, 1.05) / (qmax - zp)
    elif kind == "cls":
        # logits covering about [-11, 4.5]
        scale = rng.uniform(0.058, 0.075) if grid == "uint8" else rng.uniform(2.4e-4, 3.2e-4)
        zp = float(np.round(rng.uniform(10.0, 11.0) / scale))
    elif bins > 1:
        # DFL logits covering about [-8, 12]
        scale = rng.uniform(0.08, 0.12) if grid == "uint8" else rng.uniform(3.5e-4, 5e-4)
        zp = float(np.round(rng.uniform(8.0, 10.0) / scale))
    else:
        # direct distances in [0, ~10]
        scale = rng.uniform(0.04, 0.06) if grid == "uint8" else rng.uniform(1.6e-4, 2.2e-4)
        zp = float(rng.integers(0, 6 if grid == "uint8" else 50))
    if rng.random() < 0.1:
        zp += 0.5  # HailoRT zero points are floats; non-integer ones exist
    if not per_channel:
        return _f32(zp), _f32(scale)
    step = 1 if grid == "uint8" else 40
    zps = np.clip(zp + step * rng.integers(-3, 4, size=C), 0, qmax).astype(np.float32)
    scales = (scale * rng.uniform(0.85, 1.15, size=C)).astype(np.float32)
    return zps, scales


def _quantize(x: np.ndarray, zp, scale, grid: str) -> np.ndarray:
    """float (H, W, C) -> integer codes on the grid (round to nearest, clipped)."""
    zp = np.asarray(zp, dtype=np.float64)
    scale = np.asarray(scale, dtype=np.float64)
    q = np.rint(x / scale + zp)
    return np.clip(q, 0, _QMAX[grid]).astype(np.dtype(grid))


# --------------------------------------------------------------------------
# Content
# --------------------------------------------------------------------------

def _make_objects(rng, image_size, num_classes):
    H_img, W_img = image_size
    objects = []
    for _ in range(int(rng.integers(1, 5))):
        w = rng.uniform(10, 0.9 * W_img)
        h = rng.uniform(10, 0.9 * H_img)
        cx = rng.uniform(0, W_img)
        cy = rng.uniform(0, H_img)
        classes = [int(rng.integers(num_classes))]
        if num_classes > 1 and rng.random() < 0.3:
            other = int(rng.integers(num_classes - 1))
            classes.append(other if other < classes[0] else other + 1)
        objects.append(dict(box=(cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2),
                            size=max(w, h), classes=classes))
    return objects


def _class_levels(rng, grids, strides, objects, num_classes):
    """Per head (H, W, K) 'strength' in [0, 1] (mapped to scores/logits later),
    and per head a list of (rows, cols, object) painted regions for boxes."""
    bg_palette = rng.uniform(0.0, 1.0, size=int(rng.integers(3, 8)))
    continuous_bg = rng.random() < 0.4
    peak_palette = rng.uniform(0.55, 1.0, size=int(rng.integers(2, 5)))
    dec_palette = rng.choice([0.05, 0.08, 0.12, 0.2], size=2, replace=False)

    levels = []
    for (H, W) in grids:
        bg = rng.choice(bg_palette, size=(H, W, num_classes)) * 0.15
        if continuous_bg:
            noisy = rng.random((H, W, num_classes)) < 0.5
            bg = np.where(noisy, rng.uniform(0, 0.15, size=bg.shape), bg)
        levels.append(bg)

    painted = [[] for _ in grids]
    for obj in objects:
        fits = [i for i, s in enumerate(strides) if 1.5 <= obj["size"] / s <= 12]
        if not fits:
            fits = [int(np.argmin([abs(obj["size"] / s - 4) for s in strides]))]
        heads = set(fits[: int(rng.integers(1, len(fits) + 1))])
        if rng.random() < 0.3:
            heads.add(int(rng.integers(len(strides))))
        x1, y1, x2, y2 = obj["box"]
        for hi in sorted(heads):
            H, W = grids[hi]
            s = strides[hi]
            r0 = int(np.clip(((y1 + y2) / 2) // s, 0, H - 1))
            c0 = int(np.clip(((x1 + x2) / 2) // s, 0, W - 1))
            radius = int(rng.integers(0, 3))
            dec = float(rng.choice(dec_palette))
            for rank, k in enumerate(obj["classes"]):
                peak = float(rng.choice(peak_palette))
                if rank > 0:
                    peak -= float(rng.choice(dec_palette))
                for r in range(max(0, r0 - radius), min(H, r0 + radius + 1)):
                    for c in range(max(0, c0 - radius), min(W, c0 + radius + 1)):
                        d = max(abs(r - r0), abs(c - c0))
                        level = peak - dec * d
                        if rng.random() < 0.2:
                            level -= dec  # irregular but still on the palette grid
                        levels[hi][r, c, k] = max(levels[hi][r, c, k], level)
                        painted[hi].append((r, c, obj))
    return levels, painted


def _class_floats(level: np.ndarray, activation: str) -> np.ndarray:
    if activation == "none":
        return np.clip(level, 0.0, 0.98)  # scores
    return -10.0 + 13.5 * np.clip(level, 0.0, 1.0)  # logits in [-10, 3.5]


def _box_floats(rng, H, W, stride, bins, painted):
    """(H, W, 4*bins) float box tensor values (DFL logits or distances)."""
    dmax = max(bins - 1.5, 0.6) if bins > 1 else 8.0
    dist = rng.uniform(0.3, dmax, size=(H, W, 4))
    for (r, c, obj) in painted:
        x1, y1, x2, y2 = obj["box"]
        cx, cy = (c + 0.5) * stride, (r + 0.5) * stride
        target = np.array([cx - x1, cy - y1, x2 - cx, y2 - cy]) / stride
        dist[r, c] = target + rng.normal(0, 0.15, size=4)
    dist = np.clip(dist, 0.25, dmax)
    if bins == 1:
        return dist
    peak = rng.uniform(6.0, 10.0, size=(H, W, 4, 1))
    sharp = rng.uniform(0.8, 2.0, size=(H, W, 4, 1))
    i = np.arange(bins, dtype=np.float64)
    logits = peak - sharp * (i - dist[..., None]) ** 2 + rng.normal(0, 0.3, size=(H, W, 4, bins))
    return logits.reshape(H, W, 4 * bins)


# --------------------------------------------------------------------------
# Layout packing (numpy pads/transposes; independent of the index formulas)
# --------------------------------------------------------------------------

def _garbage(rng, n: int, dtype: str) -> np.ndarray:
    if dtype == "float32":
        g = rng.uniform(-50, 50, size=n).astype(np.float32)
        g[rng.random(n) < 0.35] = np.float32(1000.0)
        return g
    qmax = _QMAX[dtype]
    g = rng.integers(0, qmax + 1, size=n).astype(np.dtype(dtype))
    g[rng.random(n) < 0.35] = qmax
    return g


def _pack(rng, logical: np.ndarray, dtype: str, layout: str, order: str):
    """Return (array, padded_shape) holding ``logical`` (H, W, C) in the layout."""
    H, W, C = logical.shape
    if layout == "host":
        arr = logical.transpose(2, 0, 1) if order == "NCHW" else logical
        arr = np.ascontiguousarray(arr)
        if rng.random() < 0.3:
            arr = arr.reshape(-1)
        return arr, None

    Hp = H + int(rng.choice([0, 0, 0, 1, 2]))
    Wp = W + int(rng.choice([0, 0, 1, 2, 5]))
    if order == "F8CR":
        Cp = -(-C // 8) * 8 + int(rng.choice([0, 0, 8]))
    else:
        Cp = C + int(rng.choice([0, 0, 1, 3, 7]))
    if order in ("NHWC", "FCR"):
        P = _garbage(rng, Hp * Wp * Cp, dtype).reshape(Hp, Wp, Cp)
        P[:H, :W, :C] = logical
    elif order == "NHCW":
        P = _garbage(rng, Hp * Cp * Wp, dtype).reshape(Hp, Cp, Wp)
        P[:H, :C, :W] = logical.transpose(0, 2, 1)
    elif order == "F8CR":
        P = _garbage(rng, Hp * (Cp // 8) * Wp * 8, dtype).reshape(Hp, Cp // 8, Wp, 8)
        for g in range(-(-C // 8)):
            chans = list(range(8 * g, min(8 * g + 8, C)))
            P[:H, g, :W, : len(chans)] = logical[:, :, chans]
    else:
        raise ValueError(f"bad device order {order!r}")
    flat = P.reshape(-1)
    itemsize = np.dtype(dtype).itemsize
    nbytes = -(-(flat.size * itemsize) // 8) * 8
    extra = nbytes // itemsize - flat.size + int(rng.choice([0, 0, 0, 5]))
    if extra:
        flat = np.concatenate([flat, _garbage(rng, extra, dtype)])
    return flat, (Hp, Wp, Cp)


def padding_mask(spec: dict, name: str, size: int) -> np.ndarray:
    """Boolean mask over a device buffer of ``size`` elements: True = padding.

    Built with the same numpy transposes as the packer (not the index formulas).
    """
    info = spec["outputs"][name]
    H, W, C = info["shape"]
    Hp, Wp, Cp = info["padded_shape"]
    order = info["order"]
    mask = np.ones(size, dtype=bool)
    if order in ("NHWC", "FCR"):
        P = np.ones((Hp, Wp, Cp), bool)
        P[:H, :W, :C] = False
    elif order == "NHCW":
        P = np.ones((Hp, Cp, Wp), bool)
        P[:H, :C, :W] = False
    else:
        P = np.ones((Hp, Cp // 8, Wp, 8), bool)
        for g in range(-(-C // 8)):
            n = min(8, C - 8 * g)
            P[:H, g, :W, :n] = False
    mask[: P.size] = P.reshape(-1)
    return mask


# --------------------------------------------------------------------------
# Threshold selection
# --------------------------------------------------------------------------

def _sigmoid64(x) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.asarray(x, dtype=np.float64)))


def _code_grid(info: dict, grid: str, channels) -> np.ndarray:
    """float32 dequantized values of every code of ``grid`` for the channels."""
    C = info["shape"][2]
    q = np.arange(_QMAX[grid] + 1, dtype=np.float32)
    zp = np.broadcast_to(np.asarray(info["zp"], np.float32), (C,))
    sc = np.broadcast_to(np.asarray(info["scale"], np.float32), (C,))
    vals = [((q - zp[c]).astype(np.float32) * sc[c]).astype(np.float32) for c in channels]
    return np.concatenate(vals)


def _choose_count(rng) -> int:
    return int(rng.integers(1, 40)) if rng.random() < 0.75 else int(rng.integers(40, 400))


def _threshold_for(rng, values32: np.ndarray, activation: str, grid_values32, target_count: int):
    """Pick a float32-exact threshold for one group of class values.

    values32: float32 class values (scores for "none", logits for "sigmoid").
    grid_values32: all possible float32 logits (sigmoid only).
    """
    if activation == "none":
        u = np.unique(values32)[::-1]  # descending distinct present scores
        counts = np.array([(values32 >= v).sum() for v in u])
        j = max(0, int(np.searchsorted(counts, target_count, side="right")) - 1)
        return _f32(u[j])
    # sigmoid: midpoint between a present value and the next lower possible one
    present = _sigmoid64(np.unique(values32))[::-1]
    possible = _sigmoid64(np.unique(grid_values32))  # sorted: sigmoid is increasing
    all64 = _sigmoid64(values32)
    counts = np.array([(all64 >= v).sum() for v in present])
    j0 = max(0, int(np.searchsorted(counts, target_count, side="right")) - 1)
    for j in list(range(j0, len(present))) + list(range(j0 - 1, -1, -1)):
        upper = present[j]
        k = int(np.searchsorted(possible, upper, side="left"))
        if k == 0:
            continue
        lower = possible[k - 1]
        th = np.float32((upper + lower) / 2)
        margin = REL_SCORE_MARGIN * upper
        if upper - float(th) > margin and float(th) - lower > margin:
            return float(th)
    raise _Reject("no sigmoid threshold with enough margin")


def _pairwise_ious(cand: dict, agnostic: bool) -> np.ndarray:
    boxes = cand["boxes"]
    classes = cand["class_ids"]
    out = []
    for i in range(len(boxes) - 1):
        others = boxes[i + 1:]
        if not agnostic:
            others = others[classes[i + 1:] == classes[i]]
        if len(others):
            out.append(ref.iou32(boxes[i], others).astype(np.float64))
    return np.concatenate(out) if out else np.zeros(0)


def _choose_iou_threshold(rng, ious: np.ndarray) -> float:
    if rng.random() < 0.1 and np.any(ious == 1.0):
        near_one = (ious > 1.0 - IOU_MARGIN) & (ious < 1.0)
        if not near_one.any():
            return 1.0
    ious = np.unique(ious)
    for _ in range(30):
        t = round(float(rng.uniform(0.3, 0.9)), 4)
        if ious.size == 0 or np.min(np.abs(ious - t)) >= IOU_MARGIN:
            return t
        lo = ious[ious < t].max(initial=0.0)
        hi = ious[ious >= t].min(initial=1.0)
        if hi - lo >= 2 * IOU_MARGIN + 1e-6:
            return (lo + hi) / 2
    # fall back: widest gap inside [0.05, 0.999]
    edges = np.concatenate([[0.05], ious[(ious > 0.05) & (ious < 0.999)], [0.999]])
    gaps = np.diff(edges)
    g = int(np.argmax(gaps))
    if gaps[g] < 2 * IOU_MARGIN + 1e-6:
        raise _Reject("no IoU threshold with enough margin")
    return float((edges[g] + edges[g + 1]) / 2)


# --------------------------------------------------------------------------
# Robustness re-check
# --------------------------------------------------------------------------

def case_problems(outputs: dict, spec: dict) -> list:
    """Exactness problems of a case (empty list = robust). See module docstring."""
    spec = ref.resolve_spec(spec)
    problems = []
    if spec["activation"] == "sigmoid":
        cls = [ref.logical_float(outputs[h["cls"]], spec["outputs"][h["cls"]])
               for h in spec["heads"]]
        K = cls[0].shape[2]
        per_class = [np.concatenate([c[..., k].reshape(-1) for c in cls]) for k in range(K)]
        th = np.broadcast_to(np.asarray(spec["score_threshold"], np.float32), (K,)).astype(np.float64)
        for k in range(K):
            s = _sigmoid64(per_class[k])
            close = np.abs(s - th[k]) <= REL_SCORE_MARGIN * np.maximum(s, th[k])
            if close.any():
                problems.append(f"class {k}: sigmoid score within margin of threshold {th[k]}")
        allv = np.unique(np.concatenate(per_class))
        s = _sigmoid64(allv)
        relevant = s >= th.min() * (1 - 1e-3)
        s = s[relevant]
        if s.size > 1:
            gaps = np.diff(s)
            if np.any(gaps < REL_SCORE_MARGIN * s[1:]):
                problems.append("two distinct relevant sigmoid scores are too close")
    cand = ref.decode_candidates(outputs, spec)
    ious = _pairwise_ious(cand, spec["agnostic"])
    th = float(spec["iou_threshold"])
    if th == 1.0:
        bad = (ious > 1.0 - IOU_MARGIN) & (ious < 1.0)
    else:
        bad = np.abs(ious - th) < IOU_MARGIN
    if bad.any():
        problems.append(f"{int(bad.sum())} candidate IoUs within margin of iou_threshold {th}")
    return problems


# --------------------------------------------------------------------------
# The generator
# --------------------------------------------------------------------------

def make_case(rng, *, dtype="uint8", layout="host", order=RANDOM, per_channel=False,
              num_classes=3, bins=16, activation="none", num_heads=RANDOM, image_size=RANDOM,
              multi_label=RANDOM, agnostic=RANDOM, score_test=RANDOM, iou_test=RANDOM,
              tie_break=RANDOM, per_class_threshold=RANDOM, normalized=RANDOM,
              box_order=RANDOM, max_candidates=RANDOM, max_per_class=RANDOM,
              max_total=RANDOM, max_attempts=50):
    """One random frame: ``(outputs, spec)``.

    rng: ``np.random.Generator``. dtype/layout/order: a value, a sequence of
    values (chosen per tensor) or RANDOM (any valid value per tensor). Other
    options: a value or RANDOM. Caps: None, an int, or RANDOM. image_size is
    (H_img, W_img). Raises RuntimeError if no robust case is found within
    ``max_attempts`` draws (practically never).
    """
    last = None
    for _ in range(max_attempts):
        try:
            return _make_case_once(
                rng, dtype=dtype, layout=layout, order=order, per_channel=per_channel,
                num_classes=num_classes, bins=bins, activation=activation, num_heads=num_heads,
                image_size=image_size, multi_label=multi_label, agnostic=agnostic,
                score_test=score_test, iou_test=iou_test, tie_break=tie_break,
                per_class_threshold=per_class_threshold, normalized=normalized,
                box_order=box_order, max_candidates=max_candidates,
                max_per_class=max_per_class, max_total=max_total)
        except _Reject as exc:
            last = exc
    raise RuntimeError(f"make_case: no robust case in {max_attempts} attempts ({last})")


def _make_case_once(rng, *, dtype, layout, order, per_channel, num_classes, bins, activation,
                    num_heads, image_size, multi_label, agnostic, score_test, iou_test,
                    tie_break, per_class_threshold, normalized, box_order, max_candidates,
                    max_per_class, max_total):
    activation = _pick(rng, activation, ("none", "sigmoid"))
    num_classes = int(_pick(rng, num_classes, (1, 2, 3, 5, 8)))
    bins = int(_pick(rng, bins, (1, 4, 8, 16)))
    per_channel = bool(_pick(rng, per_channel, (False, True)))
    if _is_random(image_size):
        image_size = [(64, 64), (96, 64), (64, 96)][int(rng.integers(3))]
    H_img, W_img = (int(v) for v in image_size)
    n_heads = int(_pick(rng, num_heads, (1, 2, 3)))
    strides = sorted(int(s) for s in rng.choice([8, 16, 32], size=n_heads, replace=False))
    if rng.random() < 0.2:
        strides = [int(s) for s in rng.permutation(strides)]
    grids = [(H_img // s, W_img // s) for s in strides]

    objects = _make_objects(rng, (H_img, W_img), num_classes)
    levels, painted = _class_levels(rng, grids, strides, objects, num_classes)

    outputs, infos, heads, logical_q, grid_of = {}, {}, [], {}, {}
    for i, (s, (H, W)) in enumerate(zip(strides, grids)):
        box_name = f"yolov8/conv{40 + 10 * i}"
        cls_name = f"yolov8/conv{41 + 10 * i}"
        heads.append({"box": box_name, "cls": cls_name, "stride": s})
        floats = {
            box_name: ("box", _box_floats(rng, H, W, s, bins, painted[i])),
            cls_name: ("cls", _class_floats(levels[i], activation)),
        }
        for name, (kind, x) in floats.items():
            t_dtype = _pick(rng, dtype, DTYPES)
            t_layout = _pick(rng, layout, ("host", "device"))
            valid = HOST_ORDERS if t_layout == "host" else DEVICE_ORDERS
            if _is_random(order):
                t_order = valid[int(rng.integers(len(valid)))]
            elif isinstance(order, (list, tuple)):
                allowed = [o for o in order if o in valid]
                if not allowed:
                    raise ValueError(f"no order in {order} is valid for {t_layout} layout")
                t_order = allowed[int(rng.integers(len(allowed)))]
            else:
                t_order = order
            if t_order not in valid:
                raise ValueError(f"order {t_order!r} is not valid for {t_layout} layout")
            grid = t_dtype if t_dtype != "float32" else ("uint8" if rng.random() < 0.5 else "uint16")
            C = x.shape[2]
            zp, scale = _quant(rng, kind, grid, activation, bins, C, per_channel)
            q = _quantize(x, zp, scale, grid)
            info = {"shape": (H, W, C), "dtype": t_dtype, "layout": t_layout, "order": t_order,
                    "padded_shape": None, "zp": zp, "scale": scale}
            if t_dtype == "float32":
                logical = ref.dequantize(q, {**info, "dtype": grid})
            else:
                logical = q
            arr, padded = _pack(rng, logical, t_dtype, t_layout, t_order)
            info["padded_shape"] = padded
            outputs[name] = arr
            infos[name] = info
            logical_q[name] = logical
            grid_of[name] = grid

    # ---- score threshold(s) ------------------------------------------------
    def class_values(k=None):
        vals = []
        for h in heads:
            info = infos[h["cls"]]
            v = ref.dequantize(logical_q[h["cls"]], info) if info["dtype"] != "float32" \
                else logical_q[h["cls"]]
            vals.append((v if k is None else v[..., k]).reshape(-1))
        return np.concatenate(vals)

    def possible_logits(channels):
        return np.concatenate([_code_grid(infos[h["cls"]], grid_of[h["cls"]], channels)
                               for h in heads])

    use_per_class = bool(_pick(rng, per_class_threshold, (False, True)))
    target = _choose_count(rng)
    if use_per_class:
        th = np.array([
            _threshold_for(rng, class_values(k), activation,
                           possible_logits([k]) if activation == "sigmoid" else None,
                           max(1, target // num_classes))
            for k in range(num_classes)], dtype=np.float32)
        score_threshold = th
    else:
        score_threshold = _threshold_for(
            rng, class_values(), activation,
            possible_logits(range(num_classes)) if activation == "sigmoid" else None, target)

    spec = {
        "heads": heads,
        "outputs": infos,
        "image_size": (H_img, W_img),
        "activation": activation,
        "score_threshold": score_threshold,
        "score_test": _pick(rng, score_test, (">=", ">")),
        "multi_label": bool(_pick(rng, multi_label, (True, False))),
        "iou_threshold": 0.5,  # placeholder, chosen below
        "iou_test": _pick(rng, iou_test, (">=", ">")),
        "agnostic": bool(rng.random() < 0.3) if _is_random(agnostic) else bool(agnostic),
        "tie_break": _pick(rng, tie_break, ("stable", "hailort")),
        "max_candidates": None,
        "max_per_class": None,
        "max_total": None,
        "normalized": bool(_pick(rng, normalized, (False, True))),
        "box_order": _pick(rng, box_order, ("xyxy", "yxyx")),
    }

    # ---- IoU threshold and caps ---------------------------------------------
    cand = ref.decode_candidates(outputs, spec)
    spec["iou_threshold"] = _choose_iou_threshold(rng, _pairwise_ious(cand, spec["agnostic"]))
    n = len(cand["scores"])

    def cap(value, hi):
        if _is_random(value):
            return None if rng.random() < 0.6 else int(rng.integers(1, hi + 1))
        return value

    spec["max_candidates"] = cap(max_candidates, n + 2)
    spec["max_per_class"] = cap(max_per_class, 6)
    spec["max_total"] = cap(max_total, n + 2)

    problems = case_problems(outputs, spec)
    if problems:
        raise _Reject("; ".join(problems))
    return outputs, spec
