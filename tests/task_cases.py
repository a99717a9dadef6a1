"""Random pose and OBB head tensors for comparison tests (and the fuzz harness).

``make_task_case(rng, task, dtype=..., ...) -> (outputs, heads, dequantized)``:
``outputs`` the OutputInfo list, ``heads`` the Head list, ``raw`` {name: array} as a Hailo device
hands them (uint8/uint16 quantized per tensor, or float32), and ``dequantized`` the per-head
float32 arrays the NumPy reference reads (reference_tasks), dequantized exactly as a HEF's
(q - zp) * scale is in float32.

Objects light a centre cell and its neighbours on one or two heads with class logits in [2, 6]
over a background in [-8, -3], so neighbouring cells give overlapping boxes and NMS has work;
logits stay within +-8 so that float32 sigmoid keeps distinct logits distinct (no ties that a
float64 reference would not see). Box logits are peaked DFL distributions; keypoints and angles
are normal noise.
"""

from __future__ import annotations

from typing import Dict, List, Tuple

import numpy as np

from hailo_decode import Head, OutputInfo

__all__ = ["make_task_case", "quantize"]


def quantize(x: np.ndarray, dtype: str) -> Tuple[np.ndarray, float, float]:
    """Per-tensor quantization over the tensor's range: (q, zp, scale) with zp in the code range."""
    qmax = 255 if dtype == "uint8" else 65535
    lo, hi = float(min(x.min(), 0.0)), float(max(x.max(), 1e-3))
    scale = (hi - lo) / qmax
    zp = float(np.round(-lo / scale))
    q = np.clip(np.round(x / scale + zp), 0, qmax).astype(dtype)
    return q, zp, scale


def _dequant(q: np.ndarray, zp: float, scale: float) -> np.ndarray:
    return ((q.astype(np.float32) - np.float32(zp)) * np.float32(scale)).astype(np.float32)


def make_task_case(rng: np.random.Generator, task: str, *, dtype: str = "float32", nc: int = 3,
                   num_keypoints: int = 5, keypoint_dims: int = 3, image: int = 64, num_heads: int = 3,
                   objects: int = 4) -> Tuple[List[OutputInfo], List[Head], Dict[str, np.ndarray], List[Dict]]:
    strides = [8, 16, 32][:num_heads]
    grids = [image // s for s in strides]
    tensors: List[Tuple[str, int, np.ndarray]] = []  # (name, head, float values)
    for h, g in enumerate(grids):
        cls = rng.uniform(-8, -3, size=(g, g, nc)).astype(np.float32)
        box = rng.normal(0, 1, size=(g, g, 4, 16)).astype(np.float32)
        peaks = rng.integers(0, 5, size=(g, g, 4))
        np.put_along_axis(box, peaks[..., None], rng.uniform(3, 6, size=(g, g, 4, 1)).astype(np.float32), axis=-1)
        tensors.append((f"box{h}", h, box.reshape(g, g, 64)))
        tensors.append((f"cls{h}", h, cls))
        if task == "pose":
            tensors.append((f"kpt{h}", h, rng.normal(0, 1.5, size=(g, g, num_keypoints * keypoint_dims)).astype(np.float32)))
        else:
            tensors.append((f"angle{h}", h, rng.normal(0, 1.5, size=(g, g, 1)).astype(np.float32)))
    for _ in range(objects):
        k = int(rng.integers(0, nc))
        for h in rng.choice(num_heads, size=int(rng.integers(1, min(2, num_heads) + 1)), replace=False):
            g = grids[h]
            cy, cx = rng.integers(0, g, size=2)
            cls = tensors[3 * h + 1][2]
            for dy in (-1, 0, 1):
                for dx in (-1, 0, 1):
                    y, x = cy + dy, cx + dx
                    if 0 <= y < g and 0 <= x < g:
                        cls[y, x, k] = max(cls[y, x, k], rng.uniform(2, 6) - 2.5 * (abs(dx) + abs(dy)))
    outputs, raw, deq = [], {}, []
    for name, h, x in tensors:
        if dtype == "float32":
            outputs.append(OutputInfo(name, x.shape, "float32"))
            raw[name] = np.ascontiguousarray(x)
            values = x
        else:
            q, zp, scale = quantize(x, dtype)
            outputs.append(OutputInfo(name, x.shape, dtype, zp=zp, scale=scale))
            raw[name] = q
            values = _dequant(q, zp, scale)
        if len(deq) <= h:
            deq.append({"stride": strides[h]})
        role = "".join(ch for ch in name if ch.isalpha())
        deq[h][role] = values
    extra = "kpt" if task == "pose" else "angle"
    heads = [Head(f"box{h}", f"cls{h}", strides[h], **{extra: f"{extra}{h}"}) for h in range(num_heads)]
    return outputs, heads, raw, deq
