"""Seeded synthetic pictures of simple shapes with exact segmentation and OBB labels.

Used by scripts/train_synthetic_models.py (the training set) and by
scripts/make_task_fixtures.py (test frames from seeds the training never saw).
NumPy + OpenCV only; the same (seed, size, kind) gives the same pixels and labels.

Each picture: a textured, noisy background and 1..max_shapes shapes of four
classes (ellipse, rectangle, triangle, cross), each rotated, at varied sizes and
aspect ratios. Shapes are painted largest first, so a smaller shape lies on top of
a larger one it overlaps -- the order in which Ultralytics' overlap masks
(``polygons2masks_overlap``: area-descending, later wins) rebuild the visible
masks from full polygons, so the polygon labels are exact. Every shape keeps at
least MIN_VISIBLE of its area visible.

- kind "seg": shapes may run over the picture's border; labels are the shapes'
  polygons clipped to the picture.
- kind "obb": shapes lie wholly inside; labels are the four corners of the shape's
  minimum-area rotated rectangle (for an ellipse: its axes' rectangle).
- kind "detect": drawn as for "seg" (shapes may run over the border) from its own seed
  stream; labels are the axis-aligned boxes of the shapes' polygons clipped to the picture
  (the whole outline's box, also where a smaller shape covers part of it).
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

CLASS_NAMES = ("ellipse", "rectangle", "triangle", "cross")
KINDS = ("seg", "obb", "detect")  # the index is part of the seed: one picture stream per kind
MIN_VISIBLE = 0.4  # fraction of a shape's pixels that stay uncovered
ELLIPSE_POINTS = 64


@dataclass
class Shape:
    cls: int
    polygon: np.ndarray  # (N, 2) float64 pixel (x, y), the full outline, not clipped
    rbox: np.ndarray  # (4, 2) float64 corners of its rotated rectangle


def _rotate(points: np.ndarray, angle: float, centre: np.ndarray) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    return points @ np.array([[c, s], [-s, c]]) + centre


def _outline(cls: int, rng: np.random.Generator, long_side: float) -> tuple[np.ndarray, np.ndarray]:
    """Centred outline of a class (unrotated) and its rectangle's half sizes."""
    aspect = rng.uniform(1.3, 3.0)
    a, b = long_side / 2, long_side / 2 / aspect
    if cls == 0:  # ellipse
        t = np.linspace(0, 2 * np.pi, ELLIPSE_POINTS, endpoint=False)
        return np.stack([a * np.cos(t), b * np.sin(t)], 1), np.array([a, b])
    if cls == 1:  # rectangle
        return np.array([[-a, -b], [a, -b], [a, b], [-a, b]]), np.array([a, b])
    if cls == 2:  # triangle: base on the long side, apex anywhere above it
        apex = rng.uniform(-a, a)
        pts = np.array([[-a, b], [a, b], [apex, -b]])
        return pts, np.array([a, b])
    # cross: two bars of different lengths, the vertical one shifted up or down
    w1, w2 = b * rng.uniform(0.35, 0.6), a * rng.uniform(0.2, 0.35)
    off = rng.uniform(-0.3, 0.3) * a * 0.5
    pts = np.array([[-a, -w1], [-w2, -w1], [-w2, -b], [w2, -b], [w2, -w1], [a, -w1],
                    [a, w1], [w2, w1], [w2, b], [-w2, b], [-w2, w1], [-a, w1]])
    pts[[1, 2, 3, 4, 7, 8, 9, 10], 0] += off
    return pts, np.array([a, b])


def clip_polygon(poly: np.ndarray, w: float, h: float) -> np.ndarray:
    """Sutherland-Hodgman clip of a polygon to the rectangle [0, w] x [0, h]."""
    out = poly
    for axis, limit, keep_below in ((0, 0.0, False), (0, w, True), (1, 0.0, False), (1, h, True)):
        if len(out) == 0:
            break
        res = []
        prev = out[-1]
        for cur in out:
            cin = cur[axis] <= limit if keep_below else cur[axis] >= limit
            pin = prev[axis] <= limit if keep_below else prev[axis] >= limit
            if cin != pin:
                t = (limit - prev[axis]) / (cur[axis] - prev[axis])
                res.append(prev + t * (cur - prev))
            if cin:
                res.append(cur)
            prev = cur
        out = np.array(res).reshape(-1, 2)
    return out


def _fill(poly: np.ndarray, h: int, w: int) -> np.ndarray:
    m = np.zeros((h, w), np.uint8)
    if len(poly) < 3:  # wholly outside the picture
        return m.astype(bool)
    cv2.fillPoly(m, [np.round(poly * 16).astype(np.int32)], 1, lineType=cv2.LINE_8, shift=4)
    return m.astype(bool)


def _background(rng: np.random.Generator, h: int, w: int) -> np.ndarray:
    """Smooth colour gradient + blotchy low-frequency texture + optional stripes."""
    yy, xx = np.mgrid[0:h, 0:w] / max(h, w)
    c0, c1 = rng.uniform(30, 225, 3), rng.uniform(30, 225, 3)
    g = rng.uniform(-1, 1, 2)
    t = np.clip(0.5 + g[0] * (xx - 0.5) + g[1] * (yy - 0.5), 0, 1)[..., None]
    img = c0 * (1 - t) + c1 * t
    for cells in (4, 16):
        grid = rng.normal(0, rng.uniform(5, 25), (cells, cells, 3)).astype(np.float32)
        img += cv2.resize(grid, (w, h), interpolation=cv2.INTER_CUBIC)
    if rng.random() < 0.4:
        period, ang = rng.uniform(6, 40), rng.uniform(0, np.pi)
        img += rng.uniform(5, 20) * np.sin(2 * np.pi * (xx * np.cos(ang) + yy * np.sin(ang))
                                          * max(h, w) / period)[..., None]
    return img


def make_picture(seed: int, size: int, kind: str, max_shapes: int = 8, min_side: float = 20,
                 max_side: float = 200, min_shapes: int = 1) -> tuple[np.ndarray, list[Shape]]:
    """One (size x size) RGB uint8 picture and its shapes, bottom to top."""
    if kind not in KINDS:
        raise ValueError(kind)
    rng = np.random.default_rng([seed, size, KINDS.index(kind)])
    h = w = size
    img = _background(rng, h, w)
    want = int(rng.integers(min_shapes, max_shapes + 1))
    shapes: list[Shape] = []
    masks: list[np.ndarray] = []
    for _ in range(want * 20):  # tries
        if len(shapes) == want:
            break
        cls = int(rng.integers(0, len(CLASS_NAMES)))
        long_side = float(np.exp(rng.uniform(np.log(min_side), np.log(max_side))))
        pts, (a, b) = _outline(cls, rng, long_side)
        angle = rng.uniform(0, np.pi)
        margin = long_side / 2 if kind == "obb" else -0.3 * long_side
        centre = rng.uniform(margin, size - margin, 2)
        poly = _rotate(pts, angle, centre)
        rbox = _rotate(np.array([[-a, -b], [a, -b], [a, b], [-a, b]]), angle, centre)
        if cls in (2, 3):  # the rectangle that hugs it tightest, not the drawing frame
            (cx, cy), (rw, rh), deg = cv2.minAreaRect(poly.astype(np.float32))
            rbox = cv2.boxPoints(((cx, cy), (rw, rh), deg)).astype(np.float64)
        if kind == "obb" and (rbox.min() < 0 or rbox.max() > size or poly.min() < 0
                              or poly.max() > size):
            continue
        m = _fill(clip_polygon(poly, w, h), h, w)
        area = int(m.sum())
        if area < 0.5 * min_side * min_side / 3:
            continue
        # largest first: this shape covers only shapes already larger than it
        cand = shapes + [Shape(cls, poly, rbox)]
        cand_masks = masks + [m]
        order = np.argsort([-mm.sum() for mm in cand_masks], kind="stable")
        ok = True
        for i in range(len(order)):
            cover = np.zeros((h, w), bool)
            for j in order[i + 1:]:
                cover |= cand_masks[j]
            mi = cand_masks[order[i]]
            if (mi & ~cover).sum() < MIN_VISIBLE * mi.sum():
                ok = False
                break
        if ok:
            shapes = [cand[i] for i in order]
            masks = [cand_masks[i] for i in order]
    for m in masks:
        base = rng.uniform(0, 255, 3)
        # a shape colour that differs from the background under it
        under = img[m].mean(0)
        if np.abs(base - under).max() < 60:
            base = np.where(under > 127, under - rng.uniform(60, 120, 3), under + rng.uniform(60, 120, 3))
        yy, xx = np.nonzero(m)
        grad = rng.uniform(-0.4, 0.4, 2)
        shade = 1 + grad[0] * (xx - xx.mean()) / size + grad[1] * (yy - yy.mean()) / size
        img[yy, xx] = base[None] * shade[:, None]
    img = img + rng.normal(0, rng.uniform(2, 12), img.shape)
    if rng.random() < 0.3:
        img = cv2.GaussianBlur(img.astype(np.float32), (0, 0), rng.uniform(0.5, 1.2))
    return np.clip(np.round(img), 0, 255).astype(np.uint8), shapes


def label_lines(shapes: list[Shape], size: int, kind: str) -> list[str]:
    """Ultralytics label lines: seg 'cls x y x y ...' (clipped polygon), obb 'cls x1 y1 .. x4 y4',
    detect 'cls xc yc w h' (the clipped polygon's axis-aligned box)."""
    lines = []
    for s in shapes:
        if kind == "detect":
            vals = axis_box(s, size) / size
            vals = np.array([(vals[0] + vals[2]) / 2, (vals[1] + vals[3]) / 2,
                             vals[2] - vals[0], vals[3] - vals[1]])
        else:
            pts = clip_polygon(s.polygon, size, size) if kind == "seg" else s.rbox
            vals = np.clip(pts / size, 0, 1).reshape(-1)
        lines.append(" ".join([str(s.cls)] + [f"{v:.6f}" for v in vals]))
    return lines


def axis_box(shape: Shape, size: int) -> np.ndarray:
    """x1, y1, x2, y2 pixels: the box of the shape's outline clipped to the picture."""
    pts = clip_polygon(shape.polygon, size, size)
    return np.concatenate([pts.min(0), pts.max(0)])
