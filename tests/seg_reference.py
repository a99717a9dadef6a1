"""Plain NumPy reference for instance masks, written from Ultralytics 8.4's ops.process_mask and
PyTorch's F.interpolate(mode="bilinear", align_corners=False), plus synthetic -seg model outputs.

process_mask(protos (C, mh, mw), masks_in (n, C), bboxes (n, 4) xyxy input pixels, shape, upsample):
logits = masks_in @ protos; upsample=True: the whole logit map resized to `shape` bilinearly,
then > 0, then crop_mask with the input-pixel boxes; upsample=False: > 0 and crop_mask with the
boxes times (mw / W, mh / H). crop_mask keeps column x where x >= x1 and x < x2 (rows alike).
PyTorch's source coordinate for output index d over an axis of n cells: max(scale * (d + 0.5) -
0.5, 0) with scale = n_in / n_out (float32), i0 = min(floor(src), n - 1), i1 = i0 + 1 unless at
the last cell, weights 1 - l and l with l = src - i0; the height pair is the outer one.
process_mask_yolov5: YOLOv5 v7.0's own process_mask (the ultralytics preset's rule for YOLOv5/YOLOv7-seg).
"""

from __future__ import annotations

from typing import Dict, List, Tuple

import numpy as np

import hailo_decode as hd


def _axis(n_in: int, n_out: int, scale: np.float32, offset: np.float32):
    d = np.arange(n_out, dtype=np.float32)
    src = (scale * (d + np.float32(0.5)) + offset).astype(np.float32)
    src = np.maximum(src, np.float32(0))
    i0 = np.minimum(np.floor(src).astype(np.int64), n_in - 1)
    i1 = np.where(i0 < n_in - 1, i0 + 1, i0)
    l1 = np.clip(src - i0.astype(np.float32), 0, 1).astype(np.float32)
    return i0, i1, (np.float32(1) - l1).astype(np.float32), l1


def bilinear(logits: np.ndarray, out_hw: Tuple[int, int], scale=None, offset=(-0.5, -0.5)) -> np.ndarray:
    """(n, h, w) float32 -> (n, H, W) float32, PyTorch's bilinear with align_corners=False
    (scale (sy, sx) defaults to in / out, as F.interpolate(size=...) computes it)."""
    n, h, w = logits.shape
    H, W = out_hw
    sy, sx = (np.float32(h) / np.float32(H), np.float32(w) / np.float32(W)) if scale is None else scale
    y0, y1, hy0, hy1 = _axis(h, H, np.float32(sy), np.float32(offset[0]))
    x0, x1, wx0, wx1 = _axis(w, W, np.float32(sx), np.float32(offset[1]))
    L = logits.astype(np.float32)
    top = L[:, y0][:, :, x0] * wx0 + L[:, y0][:, :, x1] * wx1
    bot = L[:, y1][:, :, x0] * wx0 + L[:, y1][:, :, x1] * wx1
    return (top * hy0[:, None] + bot * hy1[:, None]).astype(np.float32)


def crop(masks: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    n, H, W = masks.shape
    cols = np.arange(W, dtype=np.float32)[None, None, :]
    rows = np.arange(H, dtype=np.float32)[None, :, None]
    b = boxes.astype(np.float32)
    x1, y1, x2, y2 = (b[:, k][:, None, None] for k in range(4))
    return masks & (cols >= x1) & (cols < x2) & (rows >= y1) & (rows < y2)


def mask_logits(proto_hwc: np.ndarray, coefs: np.ndarray) -> np.ndarray:
    """(n, mh, mw) float32 logits, summed in float64 then rounded (an order-free reference)."""
    mh, mw, c = proto_hwc.shape
    return (coefs.astype(np.float64) @ proto_hwc.reshape(-1, c).T.astype(np.float64)).astype(np.float32).reshape(-1, mh, mw)


def process_mask(proto_hwc: np.ndarray, coefs: np.ndarray, boxes_xyxy: np.ndarray, shape: Tuple[int, int],
                 upsample: bool) -> np.ndarray:
    mh, mw, _ = proto_hwc.shape
    if len(coefs) == 0:
        return np.zeros((0,) + (tuple(shape) if upsample else (mh, mw)), np.bool_)
    L = mask_logits(proto_hwc, coefs)
    if upsample:
        return crop(bilinear(L, shape) > 0, boxes_xyxy)
    ratio = np.array([mw / shape[1], mh / shape[0], mw / shape[1], mh / shape[0]], np.float32)
    return crop(L > 0, boxes_xyxy.astype(np.float32) * ratio)


def process_mask_yolov5(proto_hwc: np.ndarray, coefs: np.ndarray, boxes_xyxy: np.ndarray,
                        shape: Tuple[int, int]) -> np.ndarray:
    """YOLOv5 v7.0's own utils/segment/general.py process_mask(upsample=True), written from its
    source: (coefs @ protos).sigmoid() in float32 (coefs as its non_max_suppression leaves them:
    times the objectness), crop_mask at the prototype grid with the boxes times (mw / iw, mh / ih)
    in float32 (cell c kept when c >= x1 and c < x2), those probabilities resized bilinearly to
    `shape`, then > 0.5; no crop at `shape`."""
    mh, mw, _ = proto_hwc.shape
    if len(coefs) == 0:
        return np.zeros((0,) + tuple(shape), np.bool_)
    L = mask_logits(proto_hwc, coefs)
    P = (np.float32(1) / (np.float32(1) + np.exp(-L))).astype(np.float32)
    ratio = np.array([mw / shape[1], mh / shape[0], mw / shape[1], mh / shape[0]], np.float32)
    P = np.where(crop(np.ones_like(P, np.bool_), boxes_xyxy.astype(np.float32) * ratio), P, np.float32(0))
    return bilinear(P, shape) > np.float32(0.5)


def iou(a: np.ndarray, b: np.ndarray) -> float:
    union = np.logical_or(a, b).sum()
    return 1.0 if union == 0 else float(np.logical_and(a, b).sum() / union)


# -- synthetic -seg outputs --------------------------------------------------------------------
STRIDES = (8, 16, 32)


def make_seg_case(rng: np.random.Generator, objects: List[Tuple[int, int, int, int]], size: int = 320,
                  nc: int = 4, integer_valued: bool = False, empty: Tuple[int, ...] = ()) -> Dict[str, object]:
    """Float32 raw outputs of a -seg model with one passing cell per object: objects are
    (stride, row, col, class). Returns outputs {name: array}, infos (OutputInfo list) and, per
    object, its coefficient vector. integer_valued: every prototype value and coefficient a small
    integer, so that every logit is exact in any summation order. Objects listed in `empty` get
    coefficients that make every logit negative (an empty mask)."""
    C = 32
    ph = pw = size // 4
    outs: Dict[str, np.ndarray] = {}
    infos = []
    yy, xx = np.mgrid[0:ph, 0:pw].astype(np.float32)
    proto = np.empty((ph, pw, C), np.float32)
    for k in range(C):  # smooth blobs and ramps, so masks have shape and edges
        cy, cx, r = rng.uniform(0, ph), rng.uniform(0, pw), rng.uniform(ph / 8, ph / 3)
        proto[..., k] = np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / (2 * r * r)) * 4 - 1 + rng.normal(0, 0.3, (ph, pw))
    if integer_valued:
        proto = np.round(proto * 2)
    proto = proto.astype(np.float32)
    coefs = {}
    for s in STRIDES:
        g = size // s
        box = rng.normal(0, 1, (g, g, 64)).astype(np.float32)
        cls = np.full((g, g, nc), -8.0, np.float32)
        mask = rng.normal(0, 1, (g, g, C)).astype(np.float32)
        if integer_valued:
            mask = np.round(mask * 2).astype(np.float32)
        for i, (os_, r, c, k) in enumerate(objects):
            if os_ != s:
                continue
            cls[r, c, k] = 2.0 + 0.1 * i
            box[r, c] = rng.normal(0, 1, 64) + np.tile(np.eye(16)[rng.integers(2, 9)] * 6, 4)
            # The object's logit at its own centre positive, so that its mask is not empty.
            py, px = min(int((r + 0.5) * s / 4), ph - 1), min(int((c + 0.5) * s / 4), pw - 1)
            if float(mask[r, c] @ proto[py, px]) <= 0:
                mask[r, c] = -mask[r, c]
            if i in empty:
                mask[r, c] = 0
                mask[r, c, 0] = -1
            coefs[i] = mask[r, c].copy()
        for kind, arr in (("box", box), ("cls", cls), ("mask", mask)):
            name = f"seg/{kind}{s}"
            outs[name] = arr
            infos.append(hd.OutputInfo(name, arr.shape, "float32"))
    if empty:
        # Prototype channel 0 positive everywhere: coefficient -1 on it alone -> every logit < 0.
        proto[..., 0] = np.abs(proto[..., 0]) + 1
    outs["seg/proto"] = proto
    infos.append(hd.OutputInfo("seg/proto", proto.shape, "float32"))
    return dict(outputs=outs, infos=infos, coefs=coefs, objects=objects, size=size, nc=nc)


def quantize_case(case: Dict[str, object]) -> Dict[str, object]:
    """The same outputs quantized to uint8 per tensor (zp, scale over the tensor's range), as a HEF
    hands them out; the dequantized floats are what the reference then sees."""
    outs, infos, deq = {}, [], {}
    for info in case["infos"]:  # type: ignore[union-attr]
        x = case["outputs"][info.name]  # type: ignore[index]
        lo, hi = float(min(x.min(), 0)), float(max(x.max(), 0))
        scale = (hi - lo) / 255 or 1.0
        zp = float(np.clip(np.round(-lo / scale), 0, 255))
        q = np.clip(np.round(x / scale + zp), 0, 255).astype(np.uint8)
        outs[info.name] = q
        infos.append(hd.OutputInfo(info.name, info.shape, "uint8", zp=zp, scale=scale))
        deq[info.name] = ((q.astype(np.float32) - np.float32(zp)) * np.float32(scale)).astype(np.float32)
    return dict(case, outputs=outs, infos=infos, dequantized=deq)


def process_mask_native(proto_hwc: np.ndarray, coefs: np.ndarray, boxes_xyxy: np.ndarray,
                        shape: Tuple[int, int]) -> np.ndarray:
    """Ultralytics 8.4's process_mask_native (retina_masks=True), written from its source: the
    logits upsampled by f (the smallest of 1, 2, 4 that puts the letterbox padding, pad = total
    padding of both axes OR'ed, on whole cells: 4 // gcd(4, pad | pad // 2)), then scale_masks:
    the letterbox content of that grid (gain min(grid / shape), sides max(round(side * gain), 1),
    top/left round(pad / 2 - 0.1)) cropped and resized bilinearly to `shape` (skipped when the
    grid already is `shape`), > 0, crop_mask with the boxes in original pixels."""
    import math

    mh, mw, _ = proto_hwc.shape
    h, w = shape
    if len(coefs) == 0:
        return np.zeros((0, h, w), np.bool_)
    L = mask_logits(proto_hwc, coefs)
    gain = min(4 * mh / h, 4 * mw / w)
    pad = (4 * mh - max(round(h * gain), 1)) | (4 * mw - max(round(w * gain), 1))
    f = 4 // math.gcd(4, pad | pad // 2)
    if f > 1:
        inv = np.float32(1.0 / f)
        L = bilinear(L, (f * mh, f * mw), scale=(inv, inv))
    ih, iw = L.shape[1:]
    if (ih, iw) != (h, w):
        g = min(ih / h, iw / w)
        new_h, new_w = max(round(h * g), 1), max(round(w * g), 1)
        top, left = round((ih - new_h) / 2 - 0.1), round((iw - new_w) / 2 - 0.1)
        L = bilinear(L[:, top:top + new_h, left:left + new_w], (h, w))
    return crop(L > 0, boxes_xyxy)
