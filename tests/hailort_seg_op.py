"""A NumPy transliteration of HailoRT 4.23's yolov5_seg op, written from its source (not from
hailo-decode's C++), for the tests: the whole HAILO_NMS_WITH_BYTE_MASK frame it writes.

Sources (hailort/libhailort/src/net_flow/ops/ of v4.23.0):

* yolov5_post_process.hpp, extract_detections / decode_bbox / decode_classes_scores /
  check_threshold_and_add_detection (lines 52-161): inputs in name order (execute iterates a
  std::map; the proto input is skipped, yolov5_seg_post_process.cpp lines 134-168), then row,
  column, anchor; every value sigmoid(dequantize) (should_sigmoid() is true for this op,
  yolov5_seg_post_process.hpp line 32); skip when objectness < th; box from decode()
  (yolov5_post_process.cpp lines 101-113, powf); per class score = conf * objectness kept when
  >= th, with mask coefficients dequantize(coef) * objectness (yolov5_post_process.hpp lines 70-89).
* nms_post_process.cpp remove_overlapping_boxes (lines 114-143): libstdc++ std::sort by score (the
  compiled oracle of reference_decoder), then per class IoU >= th removes the later box.
* yolov5_seg_post_process.cpp fill_nms_with_byte_mask_format (lines 272-307): the count is
  incremented before the max_proposals_total test and before the fit test
  (copy_detection_to_result_buffer, lines 244-270: offset + 38 + mask_size < buffer size).
* mult_mask_vector_and_proto_matrix (lines 182-196): Eigen's gemv of the negated coefficients with
  the proto (32 x H*W), summed in k order, then 1 / (1 + exp(.)) with Eigen 3.4.0's pexp_float
  (GenericPacketMathFunctions.h) on whole SSE packets and std::exp on the last H*W % 4 cells.
* crop_and_copy_mask (lines 198-232): stb_image_resize's stbir_resize_float_generic to the input
  size (STBIR_FILTER_TRIANGLE, STBIR_EDGE_CLAMP; stb_image_resize.h stbir__calculate_filters,
  stbir__calculate_sample_range_upsample, stbir__calculate_coefficients_upsample lines 1014-1095,
  stbir__resample_horizontal_upsample lines 1455-1480, stbir__resample_vertical_upsample lines
  1875-1915), then rows ceil(y_min H) ..= min(ceil(y_max H), H) and columns alike (inclusive), byte
  (i - y0) * box_width + (j - x0) = resized[i * W + j] > mask_threshold. Reads past the resized
  buffer (row H) are garbage in the op; 0 here.

HailoRT 5.x (`version`; v5.2.0's yolov5_seg_post_process.cpp with HAILORT_YOLOV5_SEG_PP_CROP_OPT
and HAILORT_YOLOV5_SEG_NN_RESIZE unset, their default): the mask work, crop, count and fit rule
are 4.23's; from 5.0.1 the candidates are 5.x's YOLOv5 op's (yolov5_post_process.hpp lines
120-211: row, anchor, column order; objectness and each class first compared raw with
quantize(logit(th)), should_sigmoid() being true for this op; hailort_ops_v5.py); from 5.2.0 each
record is 46 bytes, its mask_offset = buffer_offset + 46 (copy_detection_to_result_buffer, lines
343-390), the fit test with 46 in place of 38.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import math
import struct
from typing import Dict, List, Mapping, Sequence, Tuple

import numpy as np

from hailort_ops_v5 import logit_v52, quantize_v52
from reference_decoder import greedy_nms, hailort_sort_permutation

F = np.float32


@functools.lru_cache(maxsize=None)
def _libm():
    lib = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
    for name in ("expf", "powf"):
        getattr(lib, name).restype = ctypes.c_float
    lib.expf.argtypes = [ctypes.c_float]
    lib.powf.argtypes = [ctypes.c_float, ctypes.c_float]
    return lib


def expf(v: float) -> F:
    return F(_libm().expf(float(v)))


def powf(v: float, e: float) -> F:
    return F(_libm().powf(float(v), float(e)))


def sigmoid(x: F) -> F:
    return F(F(1.0) / F(F(1.0) + expf(-x)))


def deq(q, zp: float, scale: float) -> F:
    return F((F(q) - F(zp)) * F(scale))


def eigen_pexp(x: np.ndarray) -> np.ndarray:
    """Eigen 3.4.0 pexp_float lane by lane (float32 ops, pmadd = multiply then add: SSE2, no FMA)."""
    x0 = np.asarray(x, F)
    with np.errstate(over="ignore", under="ignore"):
        x = np.maximum(np.minimum(x0, F(88.723)), F(-88.723))
        m = np.floor(x * F(1.44269504088896341) + F(0.5)).astype(F)
        r = m * F(-0.693359375) + x
        r = m * F(2.12194440e-4) + r
        r2 = r * r
        r3 = r2 * r
        y = F(1.9875691500E-4) * r + F(1.3981999507E-3)
        y1 = F(4.1665795894E-2) * r + F(1.6666665459E-1)
        y2 = r + F(1.0)
        y = y * r + F(8.3334519073E-3)
        y1 = y1 * r + F(5.0000001201E-1)
        y = y * r3 + y1
        y = y * r2 + y2
        return np.maximum(np.ldexp(y, m.astype(np.int32)).astype(F), x0)


def stb_filters(in_size: int, out_size: int) -> List[Tuple[int, int, List[F]]]:
    """stbir__calculate_filters, upsampling, triangle filter: per output pixel (n0, n1, weights)."""
    scale = F(F(out_size) / F(in_size))
    radius = F(F(1.0) * scale)  # stbir__support_one(1/scale) * scale
    out = []
    for n in range(out_size):
        centre = F(F(n) + F(0.5))
        lower = F(F(centre - radius) / scale)
        upper = F(F(centre + radius) / scale)
        in_centre = F(centre / scale)
        first = int(math.floor(float(lower) + 0.5))
        last = int(math.floor(float(upper) - 0.5))
        n0, n1 = first, last
        c: List[F] = [F(0)] * 8
        total = F(0)
        i = 0
        while i <= last - first:
            x = F(abs(float(F(in_centre - F(F(i + first) + F(0.5))))))
            c[i] = F(F(1) - x) if x <= F(1.0) else F(0)
            if i == 0 and not c[i]:
                first += 1
                n0 = first
                continue
            total = F(total + c[i])
            i += 1
        fs = F(F(1) / total)
        for i in range(last - first + 1):
            c[i] = F(c[i] * fs)
        for i in range(last - first, -1, -1):
            if c[i]:
                break
            n1 = n0 + i - 1
        out.append((n0, n1, c[:n1 - n0 + 1]))
    return out


def stb_resize(src: np.ndarray, out_h: int, out_w: int) -> np.ndarray:
    """stbir_resize_float_generic of a (h, w) float32 image, 1 channel, triangle, edge clamp."""
    h, w = src.shape
    hf, vf = stb_filters(w, out_w), stb_filters(h, out_h)
    # Horizontal pass of every input row (the ring buffer's entries), output column by column.
    horiz = np.zeros((h, out_w), F)
    for x, (n0, n1, c) in enumerate(hf):
        acc = np.zeros(h, F)
        for k in range(n0, n1 + 1):
            acc = (acc + src[:, min(max(k, 0), w - 1)] * c[k - n0]).astype(F)
        horiz[:, x] = acc
    out = np.zeros((out_h, out_w), F)
    for y, (n0, n1, c) in enumerate(vf):
        acc = np.zeros(out_w, F)
        for k in range(n0, n1 + 1):
            acc = (acc + horiz[min(max(k, 0), h - 1)] * c[k - n0]).astype(F)
        out[y] = acc
    return out


def _ceil_u32(v: F) -> int:
    v = float(np.ceil(F(v)))
    return int(v) if v > 0 else 0


def yolov5_seg_op(tensors: Mapping[str, np.ndarray], quant: Mapping[str, Tuple[float, float]],
                  anchors: Mapping[str, Sequence[Tuple[int, int]]], proto: np.ndarray,
                  proto_quant: Tuple[float, float], *, num_classes: int, score_th: float, iou_th: float,
                  max_total: int, mask_threshold: float, image_hw: Tuple[int, int], buffer_size: int,
                  buffer_address: int = 0, version: str = "4.23") -> Tuple[np.ndarray, Dict[str, object]]:
    """tensors: name -> logical (H, W, A * (5 + nc + 32)) raw values of the anchor heads; proto:
    (ph, pw, 32) raw. Returns (the frame's bytes, starting from zeros, as a uint8 array of
    buffer_size; facts: records, count). buffer_address: the buffer's address, for the records'
    mask pointers. version: the HailoRT whose op this is, "X.Y" or "X.Y.Z" (module docstring)."""
    numbers = tuple(int(v) for v in (version.split(".") + ["0"])[:3])
    v5 = numbers >= (5, 0, 1)
    record = 46 if numbers >= (5, 2, 0) else 38
    th = F(score_th)
    ih, iw = F(image_hw[0]), F(image_hw[1])
    H, W = image_hw
    e = 5 + num_classes + 32
    cands = []
    for name in sorted(tensors):
        zp, scale = quant[name]
        raw = tensors[name]
        gh, gw, _ = raw.shape
        limit = quantize_v52(logit_v52(th), zp, scale, int(np.iinfo(raw.dtype).max)) if v5 else 0
        na = len(anchors[name])
        cells = ([(row, col, a) for row in range(gh) for a in range(na) for col in range(gw)] if v5 else
                 [(row, col, a) for row in range(gh) for col in range(gw) for a in range(na)])
        for row, col, a in cells:
            aw, ah = anchors[name][a]
            v = raw[row, col, a * e:(a + 1) * e]
            if v5 and int(v[4]) < limit:
                continue
            obj = sigmoid(deq(v[4], zp, scale))
            if obj < th:
                continue
            tx, ty, tw, tht = (sigmoid(deq(v[k], zp, scale)) for k in range(4))
            w = F(F(powf(F(2.0) * tw, 2.0) * F(aw)) / iw)
            h = F(F(powf(F(2.0) * tht, 2.0) * F(ah)) / ih)
            xc = F(F(tx * F(2.0) - F(0.5) + F(col)) / F(gw))
            yc = F(F(ty * F(2.0) - F(0.5) + F(row)) / F(gh))
            x_min = F(xc - F(w / F(2.0)))
            y_min = F(yc - F(h / F(2.0)))
            box = np.array([y_min, x_min, F(y_min + h), F(x_min + w)], F)
            coefs = np.array([F(deq(v[5 + num_classes + k], zp, scale) * obj) for k in range(32)], F)
            for c in range(num_classes):
                if v5 and int(v[5 + c]) < limit:
                    continue
                score = F(sigmoid(deq(v[5 + c], zp, scale)) * obj)
                if score >= th:
                    cands.append((box, score, c, coefs))
    # remove_overlapping_boxes
    if cands:
        order = hailort_sort_permutation(np.array([c[1] for c in cands], F))
        cands = [cands[i] for i in order]
        boxes = np.array([c[0] for c in cands], F)
        keep = greedy_nms(boxes[:, [1, 0, 3, 2]], np.array([c[2] for c in cands]), F(iou_th), ">=", False)
        kept = [cands[i] for i in keep]
    else:
        kept = []
    # The proto as the op transforms it: (32, ph * pw) dequantized.
    ph, pw, _ = proto.shape
    P = ((proto.astype(F) - F(proto_quant[0])) * F(proto_quant[1])).astype(F).reshape(ph * pw, 32).T
    n_cells = ph * pw
    vector_end = n_cells - n_cells % 4
    buf = np.zeros(buffer_size, np.uint8)
    count = 0
    records = 0
    resized_all = []  # each record's resized mask values (for tests that need one)
    offset = 2
    for box, score, c, coefs in kept:
        count += 1
        if count > max_total:
            break
        y_min, x_min, y_max, x_max = box
        bw = _ceil_u32(F(F(x_max - x_min) * iw))
        bh = _ceil_u32(F(F(y_max - y_min) * ih))
        mask_size = bw * bh
        if not offset + record + mask_size < buffer_size:
            break
        fields = [*(float(v) for v in box), float(score), c, mask_size, buffer_address + offset + record]
        if record == 46:
            fields.append(offset + record)  # mask_offset: from the buffer's start
        buf[offset:offset + record] = np.frombuffer(struct.pack("<5fHQQ" + "Q" * (record == 46), *fields), np.uint8)
        offset += record
        # mult_mask_vector_and_proto_matrix
        s = np.zeros(n_cells, F)
        for k in range(32):
            s = (s + F(-coefs[k]) * P[k]).astype(F)
        ex = eigen_pexp(s)
        ex[vector_end:] = [expf(v) for v in s[vector_end:]]
        sig = (F(1.0) / (F(1.0) + ex)).astype(F).reshape(ph, pw)
        resized = np.concatenate([stb_resize(sig, H, W).reshape(-1), np.zeros(2 * W + 2, F)])
        resized_all.append(resized[:H * W].reshape(H, W))
        # crop_and_copy_mask
        x0 = _ceil_u32(max(F(np.ceil(F(x_min * iw))), F(0.0)))
        x1 = _ceil_u32(min(F(np.ceil(F(x_max * iw))), iw))
        y0 = _ceil_u32(max(F(np.ceil(F(y_min * ih))), F(0.0)))
        y1 = _ceil_u32(min(F(np.ceil(F(y_max * ih))), ih))
        for i in range(y0, y1 + 1):
            for j in range(x0, x1 + 1):
                at = offset + (i - y0) * bw + (j - x0)
                if at < buffer_size:
                    buf[at] = 1 if float(resized[i * W + j]) > mask_threshold else 0
        offset += mask_size
        records += 1
    buf[:2] = np.frombuffer(struct.pack("<H", count), np.uint8)
    return buf, dict(records=records, count=count, kept=len(kept), resized=resized_all)
