"""HailoRT's HAILO_NMS_WITH_BYTE_MASK output (include/hailo/hailort.h, the yolov5_seg op), both
ways, as array functions, in both of HailoRT's record layouts.

Layout, packed, little-endian: uint16 detection count, then per detection a record {float32
y_min, x_min, y_max, x_max (normalized), float32 score, uint16 class_id, uint64 mask_size, uint64
mask pointer} followed by mask_size bytes. HailoRT 5.2.0 appended a `size_t mask_offset` (the
mask's offset from the buffer's start, set to the byte right after the record:
yolov5_seg_post_process.cpp, copy_detection_to_result_buffer), so a record is 38 bytes before
5.2 and 46 from 5.2.0 on (`hailort_version`; hailort.h at 5.1.1, commit 19b04439, still ends the
record with the pointer). The mask is cropped to the box at the input size,
width ceil((x_max - x_min) * W), height ceil((y_max - y_min) * H) (float32), its first byte the
pixel (max(ceil(y_min * H), 0), max(ceil(x_min * W), 0)). A frame is
2 + record * max_bboxes_total + max_accumulated_mask_size bytes (HailoRT's default mask budget:
2 * H * W).

HailoRT 5.x's opt-in variants of the op (environment variables read by the op at creation,
yolov5_post_process.hpp): HAILORT_YOLOV5_SEG_PP_CROP_OPT=1 crops the masks differently (first
pixel at floor(x_min * W), floor(y_min * H), up to min(ceil(x_max * W), W), min(ceil(y_max * H),
H)): read such frames with crop_opt=True; HAILORT_YOLOV5_SEG_NN_RESIZE=1 resizes the masks
nearest-neighbour instead of bilinear (same layout, other pixels: read as any frame, not written
here).
"""

from __future__ import annotations

import re
from typing import Optional, Tuple, Union

import numpy as np

from .. import _core

__all__ = ["RECORD_BYTES", "RECORD_BYTES_52", "RECORD_DTYPE", "RECORD_DTYPE_52", "LAYOUTS", "byte_mask_layout",
           "record_bytes", "byte_mask_frame_size", "read_byte_mask", "write_byte_mask", "mask_crop"]

RECORD_BYTES = 38     # HailoRT before 5.2
RECORD_BYTES_52 = 46  # HailoRT 5.2.0+
RECORD_DTYPE = np.dtype([("y_min", "<f4"), ("x_min", "<f4"), ("y_max", "<f4"), ("x_max", "<f4"), ("score", "<f4"),
                         ("class_id", "<u2"), ("mask_size", "<u8"), ("mask", "<u8")])
RECORD_DTYPE_52 = np.dtype(RECORD_DTYPE.descr + [("mask_offset", "<u8")])
assert RECORD_DTYPE.itemsize == RECORD_BYTES and RECORD_DTYPE_52.itemsize == RECORD_BYTES_52
assert _core.BYTE_MASK_RECORD_BYTES == RECORD_BYTES and _core.BYTE_MASK_RECORD_BYTES_52 == RECORD_BYTES_52

# The two layouts by the HailoRT version that writes them: "4.23" (every version before 5.2) and "5.2".
LAYOUTS = {"4.23": (RECORD_DTYPE, 0), "5.2": (RECORD_DTYPE_52, 1)}
_VERSION = re.compile(r"^(\d+)\.(\d+)(?:\.(\d+))?$")


def byte_mask_layout(hailort_version: Union[str, Tuple[int, ...]]) -> str:
    """"4.23" or "5.2": the record layout HailoRT `hailort_version` ("X.Y" or "X.Y.Z", e.g. "4.23",
    "5.1.1", "5.2.0") writes: 46-byte records from 5.2.0, 38-byte ones before."""
    text = ".".join(str(v) for v in hailort_version) if isinstance(hailort_version, tuple) else hailort_version
    m = _VERSION.match(text) if isinstance(text, str) else None
    if m is None:
        raise ValueError(f"hailort_version must be a HailoRT version \"X.Y\" or \"X.Y.Z\" (e.g. \"4.23\", \"5.2.0\"), "
                         f"got {hailort_version!r}")
    return "5.2" if (int(m.group(1)), int(m.group(2))) >= (5, 2) else "4.23"


def record_bytes(hailort_version: str = "4.23") -> int:
    """Bytes of one detection record as HailoRT `hailort_version` writes it: 38, or 46 from 5.2.0."""
    return LAYOUTS[byte_mask_layout(hailort_version)][0].itemsize


def byte_mask_frame_size(max_total: int, mask_budget: int, *, hailort_version: str = "4.23") -> int:
    """Bytes of one frame: 2 + record * max_total + mask_budget (record: 38, 46 from HailoRT 5.2)."""
    if max_total < 0 or mask_budget < 0:
        raise ValueError(f"max_total and mask_budget must be >= 0, got {max_total}, {mask_budget}")
    return 2 + record_bytes(hailort_version) * int(max_total) + int(mask_budget)


def _u32(v: np.float32) -> int:
    """uint32(v) as HailoRT's static_cast gives it for values in range; NaN and negatives 0, values
    past the range clamped (as the writer in cpp/src/pack_byte_mask.cpp does)."""
    if not v > 0:
        return 0
    return int(min(v, np.float32(4294967040.0)))


def mask_crop(box_yxyx: np.ndarray, image_size: Tuple[int, int], *, crop_opt: bool = False) -> Tuple[int, int, int, int]:
    """(x0, y0, width, height) of a normalized box's mask, with HailoRT's float32 rounding.
    crop_opt=True: HailoRT 5.x's HAILORT_YOLOV5_SEG_PP_CROP_OPT crop (nms_post_process.hpp,
    DetectionBbox::get_bbox_x_min / get_bbox_width with is_crop_optimization_on): from
    floor(min * size) to min(ceil(max * size), size); a crop that ends before it starts is empty."""
    h, w = np.float32(image_size[0]), np.float32(image_size[1])
    y0n, x0n, y1n, x1n = (np.float32(v) for v in box_yxyx)
    with np.errstate(over="ignore", invalid="ignore"):
        if crop_opt:
            x0, y0 = _u32(np.floor(x0n * w)), _u32(np.floor(y0n * h))
            x1, y1 = min(_u32(np.ceil(x1n * w)), int(w)), min(_u32(np.ceil(y1n * h)), int(h))
            return x0, y0, max(x1 - x0, 0), max(y1 - y0, 0)
        return (_u32(np.ceil(x0n * w)), _u32(np.ceil(y0n * h)), _u32(np.ceil(np.float32(x1n - x0n) * w)),
                _u32(np.ceil(np.float32(y1n - y0n) * h)))


def _read(b: np.ndarray, H: int, W: int, layout: str, crop_opt: bool
          ) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    dtype = LAYOUTS[layout][0]
    rec_bytes = dtype.itemsize
    what = f"HAILO_NMS_WITH_BYTE_MASK buffer read as HailoRT {layout}'s {rec_bytes}-byte records"
    n = int(b[:2].view("<u2")[0])
    boxes = np.zeros((n, 4), np.float32)
    scores = np.zeros(n, np.float32)
    classes = np.zeros(n, np.int32)
    masks = np.zeros((n, H, W), np.bool_)
    pos = 2
    for i in range(n):
        if pos + rec_bytes > b.size:
            raise ValueError(f"{what}: detection {i} of {n} starts past the end ({b.size} bytes)")
        if i == n - 1 and int(b[pos:pos + rec_bytes].max()) <= 1:
            # The yolov5_seg op's count: it counts a detection before its max_bboxes_total and fit
            # tests, so a frame it cut short says one more than it wrote. The slot after its last
            # mask then holds that mask's spilled last row (bytes 0 and 1) and what the buffer held
            # (zeros in a fresh or hailo-decode's buffer): a record of 0 and 1 bytes only (its
            # score 0 or subnormal, below any detection's) is that, not a detection.
            return boxes[:i], scores[:i], classes[:i], masks[:i]
        rec = b[pos:pos + rec_bytes].view(dtype)[0]
        pos += rec_bytes
        box = np.array([rec["y_min"], rec["x_min"], rec["y_max"], rec["x_max"]], np.float32)
        size = int(rec["mask_size"])
        if layout == "5.2" and int(rec["mask_offset"]) != pos:
            # HailoRT 5.2 writes mask_offset = the byte after the record, always.
            raise ValueError(f"{what}: detection {i} has mask_offset {int(rec['mask_offset'])}, HailoRT 5.2 writes "
                             f"{pos} (the byte after its record): not a 5.2 frame (hailort_version right?)")
        x0, y0, w, h = mask_crop(box, (H, W), crop_opt=crop_opt)
        if size != w * h:
            hint = ("; a HailoRT 5.x frame written under HAILORT_YOLOV5_SEG_PP_CROP_OPT=1 needs crop_opt=True"
                    if not crop_opt else "")
            raise ValueError(f"{what}: detection {i} has mask_size {size}, its box's crop is {w} x {h} = {w * h} "
                             f"bytes (image_size {(H, W)} and hailort_version right?{hint})")
        if pos + size > b.size:
            raise ValueError(f"{what}: detection {i}'s mask of {size} bytes runs past the end")
        crop = b[pos:pos + size].reshape(h, w)
        pos += size
        ye, xe = min(y0 + h, H), min(x0 + w, W)
        if ye > y0 and xe > x0:
            masks[i, y0:ye, x0:xe] = crop[:ye - y0, :xe - x0] != 0
        boxes[i], scores[i], classes[i] = box, rec["score"], rec["class_id"]
    return boxes, scores, classes, masks


def read_byte_mask(buffer: np.ndarray, image_size: Tuple[int, int], *, hailort_version: Optional[str] = None,
                   crop_opt: bool = False) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One frame -> (boxes (n, 4) float32 normalized [ymin, xmin, ymax, xmax], scores (n,) float32,
    class_ids (n,) int32, masks (n, H, W) bool at the input size). Every size is checked against
    the buffer's end and each mask_size against the box's crop (and, for 5.2 records, each
    mask_offset against the record's end); nothing is read past the buffer.

    hailort_version: the HailoRT that wrote the frame ("X.Y" or "X.Y.Z"): 38-byte records before
    5.2, 46-byte ones from 5.2.0. None: the frame is read both ways and must fit exactly one (or
    both with the same result, e.g. no detections); a frame both layouts read differently (a 5.2
    frame with one detection can look like a 4.23 one) is refused: pass hailort_version.
    crop_opt=True: the masks are cropped as HAILORT_YOLOV5_SEG_PP_CROP_OPT=1 makes HailoRT 5.x
    crop them (mask_crop).
    The yolov5_seg op's frames say one detection more than they hold when it stopped at
    max_bboxes_total or at a mask that did not fit: a last record of 0 and 1 bytes only (what
    follows the last mask in a zeroed buffer: its spill, zeros) is not read as a detection. In a reused buffer that slot
    holds an earlier frame's bytes, which cannot be told from a record."""
    b = np.asarray(buffer)
    if b.dtype != np.uint8:
        b = b.view(np.uint8) if b.flags.c_contiguous else np.ascontiguousarray(b).view(np.uint8)
    b = b.reshape(-1)
    H, W = int(image_size[0]), int(image_size[1])
    if H <= 0 or W <= 0:
        raise ValueError(f"image_size must be a positive (height, width), got {image_size!r}")
    if b.size < 2:
        raise ValueError(f"HAILO_NMS_WITH_BYTE_MASK buffer of {b.size} bytes has no detection count")
    if hailort_version is not None:
        return _read(b, H, W, byte_mask_layout(hailort_version), crop_opt)
    results, errors = {}, {}
    for layout in LAYOUTS:
        try:
            results[layout] = _read(b, H, W, layout, crop_opt)
        except ValueError as e:
            errors[layout] = e
    if not results:
        raise ValueError("HAILO_NMS_WITH_BYTE_MASK buffer fits neither record layout: "
                         + "; ".join(str(e) for e in errors.values()))
    if len(results) == 2:
        a, c = results["4.23"], results["5.2"]
        if not all(x.shape == y.shape and np.array_equal(x, y) for x, y in zip(a, c)):
            raise ValueError(f"HAILO_NMS_WITH_BYTE_MASK buffer reads as either record layout ({len(a[1])} detections "
                             f"as HailoRT 4.23's 38-byte records, {len(c[1])} as 5.2's 46-byte ones), with different "
                             f"results: pass hailort_version= (the HailoRT that wrote it, e.g. \"4.23\" or \"5.2\")")
    return next(iter(results.values()))


def write_byte_mask(boxes_yxyx: np.ndarray, scores: np.ndarray, class_ids: np.ndarray, masks: np.ndarray,
                    out: Optional[np.ndarray] = None, *, max_total: Optional[int] = None,
                    mask_budget: Optional[int] = None, hailort_version: str = "4.23") -> Tuple[np.ndarray, int]:
    """Detections with (n, H, W) masks at the input size -> (buffer, detections written). The
    buffer is `out` (uint8, C-contiguous) or a new one of byte_mask_frame_size(max_total or n,
    mask_budget or 2 H W) bytes, zero-filled. Detections that do not fit are left out, as HailoRT does.
    hailort_version: whose records to write ("4.23": 38 bytes, HailoRT before 5.2; "5.2": 46)."""
    layout = byte_mask_layout(hailort_version)
    m = np.asarray(masks)
    if m.ndim != 3:
        raise ValueError(f"masks must be (n, H, W), got shape {m.shape}")
    n = len(m)
    if out is None:
        size = byte_mask_frame_size(n if max_total is None else max_total,
                                    2 * m.shape[1] * m.shape[2] if mask_budget is None else mask_budget,
                                    hailort_version=layout)
        out = np.zeros(size, np.uint8)
    elif not isinstance(out, np.ndarray) or out.dtype != np.uint8 or not out.flags.c_contiguous:
        raise TypeError("out must be a C-contiguous uint8 ndarray")
    written, _, _ = _core.pack_byte_mask_from_masks(
        np.ascontiguousarray(boxes_yxyx, np.float32).reshape(-1, 4), np.ascontiguousarray(scores, np.float32),
        np.ascontiguousarray(class_ids, np.int32), np.ascontiguousarray(m, np.uint8), out, LAYOUTS[layout][1])
    return out, int(written)
