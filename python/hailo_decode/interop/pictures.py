"""Pictures of detections: boxes with labels (and rotated boxes, keypoints, masks when present)
drawn onto an RGB image, saved as PNG. Pillow is imported only when called (pip extra `pictures`)."""

from __future__ import annotations

import os
from types import ModuleType
from typing import Any, List, Optional, Sequence, Tuple, Union

import numpy as np

from hailo_decode.interop import _common  # the sibling module, not the package (no package-level cycle)

__all__ = ["PALETTE", "class_colour", "draw", "save_png"]

# Distinct, saturated colours (RGB) that read on photographs; class k gets PALETTE[k % len].
PALETTE: Tuple[Tuple[int, int, int], ...] = (
    (255, 56, 56), (50, 205, 50), (30, 144, 255), (255, 157, 0), (207, 61, 255), (0, 212, 212),
    (255, 221, 0), (255, 105, 180), (140, 90, 255), (0, 160, 120), (255, 120, 80), (120, 200, 255),
)
# COCO's 17-keypoint skeleton (0-based keypoint pairs), drawn when a pose has 17 keypoints.
COCO_SKELETON = ((15, 13), (13, 11), (16, 14), (14, 12), (11, 12), (5, 11), (6, 12), (5, 6), (5, 7), (6, 8),
                 (7, 9), (8, 10), (1, 2), (0, 1), (0, 2), (1, 3), (2, 4), (3, 5), (4, 6))
MASK_ALPHA = 0.45


def class_colour(class_id: int) -> Tuple[int, int, int]:
    return PALETTE[int(class_id) % len(PALETTE)]


def _pil() -> Tuple[ModuleType, ModuleType, ModuleType]:
    image = _common.optional_import("PIL.Image", "pictures", "drawing detections")
    draw = _common.optional_import("PIL.ImageDraw", "pictures", "drawing detections")
    font = _common.optional_import("PIL.ImageFont", "pictures", "drawing detections")
    return image, draw, font


def _rgb(image: Any) -> np.ndarray:
    a = np.asarray(image)
    if a.ndim == 2:
        a = np.stack([a] * 3, axis=-1)
    if a.ndim != 3 or a.shape[2] not in (3, 4):
        raise ValueError(f"image must be (H, W, 3) RGB (or (H, W) gray, (H, W, 4) RGBA), got shape {a.shape}")
    if a.dtype != np.uint8:
        raise TypeError(f"image must be uint8, got {a.dtype}")
    return np.ascontiguousarray(a[..., :3])


def _font(font_mod: ModuleType, size: int) -> Any:
    try:
        return font_mod.load_default(size=size)  # Pillow >= 10.1: a scalable font
    except TypeError:
        return font_mod.load_default()


def draw(image: Any, dets: Any, class_names: Optional[Sequence[str]] = None, *,
         path: Union[None, str, "os.PathLike[str]"] = None, line_width: Optional[int] = None,
         keypoint_threshold: float = 0.5) -> np.ndarray:
    """Draw the detections onto a copy of `image` ((H, W, 3) uint8 RGB) and return it; with
    `path`, also save it as PNG.

    Boxes in the class colour (class_colour) with a "name score" label; rotated boxes (`rboxes`)
    as polygons; masks (`masks`, (n, H, W) of the image) blended in; keypoints (`keypoints`) as
    dots where visibility >= keypoint_threshold, joined by COCO's skeleton for 17 keypoints.
    The detections must be in this image's pixels: for a letterboxed input, draw
    `dets.to_original((H, W))` on the original image (ValueError when image_size says otherwise)."""
    pil_image, pil_draw, pil_font = _pil()
    rgb = _rgb(image)
    h, w = rgb.shape[:2]
    hw = _common.image_hw(dets)
    if hw is not None and hw != (h, w):
        raise ValueError(f"the detections are in a {hw[1]}x{hw[0]} image, the picture is {w}x{h}: "
                         f"for a letterboxed input draw dets.to_original(({h}, {w}))")
    # Far-off coordinates clipped to just outside the picture: nothing drawn there, no overflow.
    margin = np.float32(4 * max(h, w))
    boxes = _common.xyxy_pixels(dets).clip(-margin, margin)
    scores = _common.scores(dets)
    ids = _common.class_ids(dets)
    names = [str(n) for n in class_names] if class_names is not None else None
    lw = int(line_width) if line_width is not None else max(2, round(min(h, w) / 200))
    if lw < 1:
        raise ValueError(f"line_width must be >= 1, got {line_width}")
    lw = min(lw, max(h, w))

    masks = _common.masks(dets)
    if masks is not None and masks.shape[1:] != (h, w):
        raise ValueError(f"masks are {masks.shape[2]}x{masks.shape[1]} (W x H), the picture is {w}x{h}")
    if masks is not None and len(masks):
        out = rgb.astype(np.float32)
        for m, c in zip(masks, ids):
            out[m] = out[m] * (1 - MASK_ALPHA) + np.float32(MASK_ALPHA) * np.array(class_colour(c), np.float32)
        rgb = np.rint(out).astype(np.uint8)

    canvas = pil_image.fromarray(rgb)
    pen = pil_draw.Draw(canvas)
    font = _font(pil_font, max(10, round(min(h, w) / 40)))
    rboxes = _common.rboxes_pixels(dets)
    corners = _common.rbox_corners(rboxes).clip(-margin, margin) if rboxes is not None else None
    # Labels are placed best first: one that would cover a better one's label moves down (inside
    # its box) until it does not. Boxes and labels are then drawn worst first, the best on top.
    placed: List[Tuple[float, float, float, float]] = []
    labels = []
    for i in range(len(scores)):
        x1, y1 = (float(v) for v in boxes[i, :2])
        name = names[ids[i]] if names is not None and ids[i] < len(names) else str(int(ids[i]))
        text = f"{name} {scores[i]:.2f}"
        left, top, right, bottom = pen.textbbox((0, 0), text, font=font)
        tw, th = right - left + 2 * lw, bottom - top + 2 * lw
        ty = y1 - th if y1 - th >= 0 else y1  # above the box, or inside it at the top of the image
        for _ in range(len(placed)):
            hit = [p for p in placed if x1 < p[2] and p[0] < x1 + tw and ty < p[3] and p[1] < ty + th]
            if not hit:
                break
            ty = max(p[3] for p in hit)
        placed.append((x1, ty, x1 + tw, ty + th))
        labels.append((text, x1, ty, tw, th, left, top))
    for i in reversed(range(len(scores))):
        colour = class_colour(ids[i])
        x1, y1, x2, y2 = (float(v) for v in boxes[i])
        if corners is not None:
            pen.polygon([tuple(p) for p in corners[i].tolist()], outline=colour, width=lw)
        else:
            pen.rectangle([x1, y1, max(x1, x2), max(y1, y2)], outline=colour, width=lw)
    for i in reversed(range(len(scores))):
        text, x1, ty, tw, th, left, top = labels[i]
        pen.rectangle([x1, ty, x1 + tw, ty + th], fill=class_colour(ids[i]))
        pen.text((x1 + lw - left, ty + lw - top), text, fill=(255, 255, 255), font=font)

    kpts = _common.keypoints_pixels(dets)
    if kpts is not None:
        kpts[..., :2] = kpts[..., :2].clip(-margin, margin)
        r = max(2, lw + 1)
        for i in reversed(range(len(kpts))):
            colour = class_colour(ids[i])
            seen = kpts[i, :, 2] >= keypoint_threshold
            if kpts.shape[1] == 17:
                for a, b in COCO_SKELETON:
                    if seen[a] and seen[b]:
                        pen.line([tuple(kpts[i, a, :2].tolist()), tuple(kpts[i, b, :2].tolist())], fill=colour,
                                 width=max(1, lw - 1))
            for x, y, _ in kpts[i][seen].tolist():
                pen.ellipse([x - r, y - r, x + r, y + r], fill=colour, outline=(255, 255, 255))

    out_arr = np.asarray(canvas, dtype=np.uint8).copy()
    if path is not None:
        save_png(out_arr, path)
    return out_arr


def save_png(image: Any, path: Union[str, "os.PathLike[str]"]) -> None:
    """Save an (H, W, 3) uint8 RGB array as a PNG file."""
    pil_image, _, _ = _pil()
    pil_image.fromarray(_rgb(image)).save(os.fspath(path), format="PNG")
