"""Quantization and saturation report of recorded raw outputs (`Decoder.diagnose`,
`hailo-decode inspect --frames`): per output the share of values pinned at the quantized minimum
and maximum, the dequantized range, the score range after the configured activation, and
plain-words warnings."""

from __future__ import annotations

import math
from typing import Any, Dict, List, Mapping

import numpy as np

from .config import DecoderConfig, OutputInfo
from .outputs import check_array_dtype

__all__ = ["diagnose_outputs"]

_QMAX = {"uint8": 255, "uint16": 65535}
# Share of a class output's values at the quantized maximum above which scores are called saturated.
_SATURATION_SHARE = 1e-3
_CLIP_SHARE = 0.01


def _sigmoid(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def _logical(o: OutputInfo, a: np.ndarray) -> np.ndarray:
    """The output's elements as (frames, H, W, C), whatever layout the buffer has."""
    a = np.asarray(a)
    h, w, c = o.shape
    if not o.device:
        if o.order == "NCHW":
            return a.reshape(-1, c, h, w).transpose(0, 2, 3, 1)
        return a.reshape(-1, h, w, c)
    hp, wp, cp = o.memory_shape
    dense = hp * wp * cp
    if a.ndim == 0:
        raise ValueError(f"output {o.name!r}: expected an array of shape {o.frame_shapes[0]}, got a scalar")
    if a.shape in o.frame_shapes:
        frames = a.reshape(1, -1)
    else:  # (an explicit size: -1 cannot be inferred for an empty batch)
        frames = a.reshape(a.shape[0], int(np.prod(a.shape[1:], dtype=np.int64)))
    frames = frames[:, :dense]
    if o.order == "NHCW":
        t = frames.reshape(-1, hp, cp, wp).transpose(0, 1, 3, 2)
    elif o.order == "F8CR":
        t = frames.reshape(-1, hp, cp // 8, wp, 8).transpose(0, 1, 3, 2, 4).reshape(-1, hp, wp, cp)
    else:
        t = frames.reshape(-1, hp, wp, cp)
    return t[:, :h, :w, :c]


def _dequantize(o: OutputInfo, q: np.ndarray) -> np.ndarray:
    if o.dtype == "float32":
        return q.astype(np.float64)
    zp = np.asarray(o.zp, dtype=np.float64)
    scale = np.asarray(o.scale, dtype=np.float64)
    return ((q.astype(np.float64) - zp) * scale).astype(np.float32)


def diagnose_outputs(config: DecoderConfig, raw: Mapping[str, np.ndarray]) -> List[Dict[str, Any]]:
    """Per output of `config`, from recorded raw outputs ({name: array}, host or device layout,
    with or without a batch axis): role (box/cls/kpt/angle), the share of values at the quantized minimum
    (0) and maximum (255 or 65535), the dequantized range, for class outputs the score range after
    the configured activation, and plain-words warnings (class scores saturating, logits where
    scores were expected, clipped box logits). Each array must have its output's dtype, as for
    decoding (TypeError naming the output otherwise)."""
    roles = {}
    for h in config.heads:
        roles[h.box] = "box"
        roles[h.cls] = "cls"
        if h.kpt is not None:
            roles[h.kpt] = "kpt"
        if h.angle is not None:
            roles[h.angle] = "angle"
    report = []
    for o in config.outputs:
        if o.name not in raw:
            raise ValueError(f"no recorded values for output {o.name!r}; have {sorted(raw)}")
        a = np.asarray(raw[o.name])
        check_array_dtype(o, a)  # the Decoder's own check: what it would refuse to decode is not diagnosed
        try:
            q = _logical(o, a)
        except ValueError:
            raise ValueError(f"output {o.name!r}: array of shape {a.shape} does not hold frames of "
                             f"{o.frame_shapes}") from None
        role = roles.get(o.name, "other")
        n = int(q.size)
        entry: Dict[str, Any] = dict(name=o.name, role=role, dtype=o.dtype, frames=int(q.shape[0]), values=n)
        warnings: List[str] = []
        if o.dtype in _QMAX and n:
            qmax = _QMAX[o.dtype]
            at_min = float(np.count_nonzero(q == 0)) / n
            at_max = float(np.count_nonzero(q == qmax)) / n
            entry.update(quantized_min=int(q.min()), quantized_max=int(q.max()), share_at_min=at_min,
                         share_at_max=at_max, qmax=qmax)
        else:
            at_min = at_max = 0.0
            entry.update(quantized_min=None, quantized_max=None, share_at_min=None, share_at_max=None, qmax=None)
        values = _dequantize(o, q)
        lo = float(values.min()) if n else float("nan")
        hi = float(values.max()) if n else float("nan")
        entry.update(dequantized_min=lo, dequantized_max=hi)
        if role == "cls" and n:
            if config.class_activation == "sigmoid":
                smin, smax = _sigmoid(lo), _sigmoid(hi)
            else:
                smin, smax = lo, hi
            entry.update(score_min=smin, score_max=smax, activation=config.class_activation)
            if o.dtype in _QMAX and at_max > _SATURATION_SHARE:
                warnings.append(
                    f"class scores saturate: {at_max:.2%} of the values sit at the quantized maximum "
                    f"({_QMAX[o.dtype]}), i.e. score {smax:.4g}; those detections all tie at the same score and the "
                    f"true ranking is lost (recalibrate the model, or compile this output as 16-bit)")
            if config.class_activation == "none" and (lo < -1e-6 or hi > 1.0 + 1e-6):
                warnings.append(
                    f"class values range over [{lo:.4g}, {hi:.4g}], outside [0, 1]: they look like logits, not "
                    f"sigmoid scores; use class_activation='sigmoid'")
        elif role == "box" and o.dtype in _QMAX and n:
            for what, share in (("minimum (0)", at_min), (f"maximum ({_QMAX[o.dtype]})", at_max)):
                if share > _CLIP_SHARE:
                    warnings.append(f"{share:.2%} of the box values sit at the quantized {what}: the DFL logits clip, "
                                    f"so box sides are less precise")
        if n and lo == hi:
            warnings.append("the output is constant in the recorded frames")
        entry["warnings"] = warnings
        report.append(entry)
    return report
