"""Fuzz cases for pose and OBB heads (keypoint and angle outputs): a hypothesis strategy that
draws a *spec* (JSON-able, buffers generated from spec["seed"]) and a runner that builds the
config and buffers, decodes and judges the outcome, with decoder_cases' rules: any input gives a
result or ValueError/TypeError, never a crash or a hang.

A spec: 1-3 heads on small grids, 1-80 classes, 1-40 keypoints of 2 or 3 values (pose) or one
angle channel (OBB); every output of its own dtype (uint8/uint16/float32), host or raw device
layout (NHWC/FCR/NHCW/F8CR with padding), per-tensor or per-channel quantization from the pools
of decoder_cases (tiny and huge scales included), values from its fill modes (extremes, denormals
and +-3.4e38 in float input); either preset, thresholds and IoU from 0 to 1 (the range they
must lie in), caps, agnostic, every box format, rotated_class_offset 0/7680/1e30; batches of 0-4
frames, 1-3 threads. Faults (valid=False): keypoint channels that do not fit, an angle tensor of
2 channels, a task output on another grid, a head without its task output, keypoint_dims 4, NaN
in a float keypoint or angle buffer, a wrong task, an unknown keypoint/angle decode. Either
selection (end2end True or False) and either decode form (keypoint_decode yolov8/yolo26,
angle_decode sigmoid/raw, or what the box tensors suggest).

Checks when a decode succeeds, per frame: keypoints (n, K, 3) float32 with visibility in [0, 1]
(exactly 1 without a visibility channel); rboxes (n, 5) with finite angles, in [-pi/4, 3pi/4] under
angle_decode "sigmoid"; boxes the enclosing boxes of the rotated boxes (where finite); with NMS no
two kept rotated boxes of one class (any class when agnostic) with probiou past the threshold
(end to end: at most max_det rows, scores non-increasing), recomputed with the core's probiou on the
offset centres; then, bit for bit: the same logical values as dense host buffers, each frame of
a batch alone, every SIMD path and 3 threads give the same detections, keypoints and rboxes;
to_original and polygons() work.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

import numpy as np
from hypothesis import strategies as st

import hailo_decode as hd
from hailo_decode import _core

from .decoder_cases import (CLEAN, QMAX, SCALES, SIMD_PATHS, ZPS, HarnessFailure, _frame_elements, _logical,
                            pack_frame, watchdog)

TASK_FAULTS = ["kpt_channels", "angle_channels", "task_grid", "head_missing_task", "dims_bad", "in_nonfinite",
               "task_wrong", "decode_bad"]
FILLS_INT = ["uniform", "low", "zeros", "max", "const", "binary"]
FILLS_FLOAT = ["normal", "logits", "scores", "zeros", "const", "extreme", "big"]


@st.composite
def task_specs(draw, valid: Optional[bool] = None) -> Dict[str, Any]:
    if valid is None:
        valid = draw(st.booleans())
    task = draw(st.sampled_from(["pose", "obb"]))
    n_heads = draw(st.integers(1, 3))
    base = draw(st.sampled_from([1, 2, 4, 6]))
    grids = [max(1, base // (2 ** h)) for h in range(n_heads)]
    nc = draw(st.sampled_from([1, 2, 3, 5, 15, 80]))
    K = draw(st.sampled_from([1, 2, 5, 17, 40]))
    dims = draw(st.sampled_from([3, 3, 2]))
    bins = draw(st.sampled_from([16, 16, 1, 4]))
    outputs: List[Dict[str, Any]] = []
    for h, g in enumerate(grids):
        for role, C in (("box", 4 * bins), ("cls", nc), ("kpt" if task == "pose" else "angle",
                                                          K * dims if task == "pose" else 1)):
            dtype = draw(st.sampled_from(["uint8", "uint8", "uint16", "float32"]))
            device = dtype != "float32" and draw(st.booleans())
            order = draw(st.sampled_from(["NHWC", "FCR", "NHCW", "F8CR"])) if device else "NHWC"
            cp = C + draw(st.integers(0, 5)) if device else C
            if order == "F8CR":
                cp = -(-cp // 8) * 8
            padded = [g + (draw(st.integers(0, 2)) if device else 0), g + (draw(st.integers(0, 3)) if device else 0), cp]
            per_channel = dtype != "float32" and C > 1 and draw(st.booleans())
            zp: Any = draw(st.sampled_from(ZPS[:9])) if dtype != "float32" else 0.0
            scale: Any = draw(st.sampled_from(SCALES)) if dtype != "float32" else 1.0
            if per_channel:
                zp = [float(zp) + i % 3 for i in range(C)]
                scale = [float(scale) * (1 + (i % 4) / 8) for i in range(C)]
            fill = draw(st.sampled_from(FILLS_FLOAT if dtype == "float32" else FILLS_INT))
            outputs.append(dict(name=f"{role}{h}", role=role, head=h, shape=[g, g, C], dtype=dtype, device=device,
                                base_order=order, order=order, padded=padded, zp=zp, scale=scale, fill=fill,
                                form=draw(st.sampled_from(["3d", "flat_dense", "flat"])) if device else "host",
                                pad_fill=draw(st.sampled_from(["max", "random", "nan"]))))
    semantics = draw(st.sampled_from(["hailort", "ultralytics"]))
    settings = dict(
        score_threshold=draw(st.sampled_from([0.0, 0.2, 0.25, 0.5, 0.9, 1.0, 1e-45])),
        iou_threshold=draw(st.sampled_from([0.0, 0.3, 0.5, 0.7, 1.0])),
        agnostic=draw(st.booleans()),
        max_total=draw(st.sampled_from([None, 0, 1, 5, 300])),
        box_format=draw(st.sampled_from(list(hd.BOX_FORMATS))),
    )
    if draw(st.booleans()):
        settings["rotated_class_offset"] = draw(st.sampled_from([0.0, 7680.0, 1e30]))
    if draw(st.booleans()):
        settings["max_per_class"] = draw(st.sampled_from([None, 0, 1, 3]))
    # End-to-end selection (issue 13) and the YOLO26 decode forms, or what the box tensors suggest.
    settings["end2end"] = draw(st.booleans())
    decodes = {}
    if draw(st.booleans()):
        decodes["keypoint_decode"] = draw(st.sampled_from(["yolov8", "yolo26"]))
    if draw(st.booleans()):
        decodes["angle_decode"] = draw(st.sampled_from(["sigmoid", "raw"]))
    faults: List[str] = []
    if not valid:
        faults = sorted(set(draw(st.lists(st.sampled_from(TASK_FAULTS), min_size=1, max_size=2))))
    return dict(kind="task", task=task, decodes=decodes, seed=draw(st.integers(0, 2**31 - 1)), outputs=outputs, grids=grids,
                strides=[8 * grids[0] // g for g in grids], nc=nc,  # stride x grid = 8 x grids[0] on every head
                K=K, dims=dims, semantics=semantics,
                settings=settings, frames=draw(st.sampled_from([None, 0, 1, 2, 4])), threads=draw(st.integers(1, 3)),
                faults=faults, valid=valid)


def _infos(spec: Dict[str, Any], dense: bool = False) -> List[hd.OutputInfo]:
    infos = []
    for o in spec["outputs"]:
        shape = list(o["shape"])
        if not dense and "angle_channels" in spec["faults"] and o["role"] == "angle":
            shape[2] = 2
        if not dense and "kpt_channels" in spec["faults"] and o["role"] == "kpt":
            shape[2] += 1
        if not dense and "task_grid" in spec["faults"] and o["role"] in ("kpt", "angle") and o["head"] == 0:
            shape[0] += 1
        device = o["device"] and not dense
        padded = [max(p, s) for p, s in zip(o["padded"], shape)] if device else None
        if device and o["order"] == "F8CR":
            padded[2] = -(-padded[2] // 8) * 8  # type: ignore[index]
        zp, scale = o["zp"], o["scale"]
        if isinstance(zp, list) and len(zp) != shape[2]:
            zp, scale = zp[0], scale[0]
        infos.append(hd.OutputInfo(o["name"], tuple(shape), o["dtype"], o["order"] if device else "NHWC",
                                   zp=zp, scale=scale, padded_shape=tuple(padded) if padded else None, device=device))
    return infos


def _config(spec: Dict[str, Any], dense: bool = False) -> hd.DecoderConfig:
    infos = _infos(spec, dense)
    F = spec["faults"]
    extra = "kpt" if spec["task"] == "pose" else "angle"
    heads = []
    for h, st_ in enumerate(spec["strides"]):
        kw = {extra: f"{extra}{h}"}
        if "head_missing_task" in F and h == len(spec["strides"]) - 1 and len(spec["strides"]) > 1:
            kw = {}
        heads.append(hd.Head(f"box{h}", f"cls{h}", st_, **kw))
    if "head_missing_task" in F and len(heads) > 1:
        infos = [i for i in infos if i.name != f"{extra}{len(heads) - 1}"]
    kw2: Dict[str, Any] = dict(spec["settings"])
    if spec["task"] == "pose":
        kw2["keypoint_dims"] = 4 if "dims_bad" in F else spec["dims"]
    if "task_wrong" in F:
        kw2["task"] = "obb" if spec["task"] == "pose" else "pose"
    kw2.update(spec.get("decodes", {}))
    if "decode_bad" in F:
        kw2["keypoint_decode" if spec["task"] == "pose" else "angle_decode"] = "yolo8"
    g0 = spec["grids"][0]
    return hd.DecoderConfig(infos, heads, semantics=spec["semantics"], image_size=(8 * g0, 8 * g0), **kw2)


def _buffers(spec: Dict[str, Any], cfg: hd.DecoderConfig, dense: bool) -> Tuple[Dict[str, np.ndarray], Dict[str, np.ndarray]]:
    rng = np.random.default_rng(spec["seed"])  # the values
    pad_rng = np.random.default_rng(spec["seed"] + 1)  # the padding: dense buffers draw the same values
    n = 1 if spec["frames"] is None else spec["frames"]
    raw, logical = {}, {}
    by_name = {o["name"]: o for o in spec["outputs"]}
    for info in cfg.outputs:
        o = dict(by_name[info.name])
        o["shape"] = list(info.shape)
        L = _logical(rng, o, n)
        if "in_nonfinite" in spec["faults"] and o["role"] in ("kpt", "angle") and o["dtype"] == "float32" and L.size:
            L.reshape(-1)[rng.integers(0, L.size)] = np.nan
        logical[info.name] = L
        if dense or not info.device:
            frames = [np.ascontiguousarray(L[i]) for i in range(n)]
        else:
            o["padded"] = list(info.padded_shape)
            frames = [pack_frame(pad_rng, L[i], o) for i in range(n)]
        if spec["frames"] is None:
            raw[info.name] = frames[0]
        elif info.device and not dense:
            # a batch of raw device buffers: each frame flat, HailoRT's (8-byte rounded) frame apart
            fe = _frame_elements(o)
            raw[info.name] = np.stack([np.concatenate([f.reshape(-1), np.zeros(fe - f.size, f.dtype)])
                                       for f in frames]) if n else np.zeros((0, fe), L.dtype)
        else:
            raw[info.name] = np.stack(frames) if n else np.zeros((0,) + frames_shape(info), L.dtype)
    return raw, logical


def frames_shape(info: hd.OutputInfo) -> Tuple[int, ...]:
    return info.frame_shapes[-1]


def _as_list(d: Any) -> List[hd.Detections]:
    return [d] if isinstance(d, hd.Detections) else list(d)


def _same(a: List[hd.Detections], b: List[hd.Detections], what: str) -> None:
    if len(a) != len(b):
        raise HarnessFailure(f"{what}: {len(a)} frames vs {len(b)}")
    for i, (x, y) in enumerate(zip(a, b)):
        for attr in ("boxes", "scores", "class_ids", "keypoints", "rboxes"):
            u, v = getattr(x, attr), getattr(y, attr)
            if (u is None) != (v is None) or (u is not None and not np.array_equal(u, v, equal_nan=True)):
                raise HarnessFailure(f"{what}: frame {i} {attr} differ")


def _check(spec: Dict[str, Any], cfg: hd.DecoderConfig, dets: List[hd.Detections]) -> None:
    K = cfg.num_keypoints
    for i, d in enumerate(dets):
        n = len(d)
        if spec["task"] == "pose":
            k = d.keypoints
            if d.rboxes is not None or k is None or k.shape != (n, K, 3) or k.dtype != np.float32:
                raise HarnessFailure(f"frame {i}: keypoints {None if k is None else k.shape}, want ({n}, {K}, 3)")
            v = k[..., 2]
            if cfg.keypoint_dims == 2 and not np.all(v == 1.0):
                raise HarnessFailure(f"frame {i}: visibility without a visibility channel must be 1.0")
            if not np.all((v >= 0) & (v <= 1)):
                raise HarnessFailure(f"frame {i}: visibility outside [0, 1]")
        else:
            r = d.rboxes
            if d.keypoints is not None or r is None or r.shape != (n, 5) or r.dtype != np.float32:
                raise HarnessFailure(f"frame {i}: rboxes {None if r is None else r.shape}, want ({n}, 5)")
            a = r[:, 4]
            if cfg.angle_decode == "sigmoid" and not np.all((a >= np.float32(-np.pi / 4) - 1e-6)
                                                            & (a <= np.float32(3 * np.pi / 4) + 1e-6)):
                raise HarnessFailure(f"frame {i}: angles outside [-pi/4, 3pi/4]: {a}")
            if not np.all(np.isfinite(a)):
                raise HarnessFailure(f"frame {i}: non-finite angles {a}")
            p = d.polygons()
            enc = np.concatenate([p.min(1), p.max(1)], 1)
            ours = d.boxes_as("xyxy_pixels")
            ok = np.isfinite(enc).all(1) & np.isfinite(ours).all(1) & (np.abs(enc).max(1) < 1e6)
            if not np.allclose(ours[ok], enc[ok], rtol=1e-4, atol=1e-3):
                raise HarnessFailure(f"frame {i}: boxes are not the enclosing boxes of the rotated boxes")
            if not cfg.end2end:  # end to end there is no rotated NMS: rows may overlap
                _check_rotated_nms(cfg, d, i)
        if cfg.end2end:
            cap = 300 if cfg.max_total is None else cfg.max_total
            if n > cap or np.any(np.diff(d.scores) > 0):
                raise HarnessFailure(f"frame {i}: end-to-end rows exceed max_det {cap} or are not by score")
        if n:
            d.to_original((max(1, cfg.image_size[0] // 2), cfg.image_size[1] + 3))


def _check_rotated_nms(cfg: hd.DecoderConfig, d: hd.Detections, i: int) -> None:
    th = np.float32(cfg.iou_threshold)
    r = d.rboxes.copy()  # type: ignore[union-attr]
    if not cfg.agnostic:
        off = d.class_ids.astype(np.float32) * np.float32(cfg.rotated_class_offset)
        r[:, 0] += off
        r[:, 1] += off
    for c in ([None] if cfg.agnostic else np.unique(d.class_ids)):
        idx = np.arange(len(d)) if c is None else np.flatnonzero(d.class_ids == c)
        if len(idx) < 2:
            continue
        with np.errstate(all="ignore"):
            m = np.triu(_core.probiou(r[idx], r[idx]), k=1)
        over = (m >= th) if cfg.iou_test == ">=" else (m > th)
        if np.any(over & np.triu(np.ones_like(over), k=1).astype(bool)):
            raise HarnessFailure(f"frame {i}: two kept rotated boxes of one class overlap past the threshold")


def run_task_spec(spec: Dict[str, Any]) -> str:
    with watchdog():
        return _run(spec)


def _run(spec: Dict[str, Any]) -> str:
    F = set(spec["faults"])
    try:
        cfg = _config(spec)
        dec = hd.Decoder(cfg, threads=spec["threads"])
    except CLEAN as e:
        if not F:
            raise HarnessFailure(f"a valid task config was refused: {type(e).__name__}: {e}") from e
        return "config_refused"
    raw, logical = _buffers(spec, cfg, dense=False)
    try:
        dets = _as_list(dec(raw))
    except CLEAN as e:
        if not F:
            raise HarnessFailure(f"a valid task decode was refused: {type(e).__name__}: {e}") from e
        return "decode_refused"
    if "in_nonfinite" in F and any(np.isnan(v).any() for k, v in logical.items() if v.dtype == np.float32
                                   and k.startswith(("kpt", "angle"))):
        raise HarnessFailure("NaN in a float keypoint/angle buffer was accepted")
    _check(spec, cfg, dets)
    # Equivalences, bit for bit.
    if not F:
        dense_cfg = _config(spec, dense=True)
        dense_raw, _ = _buffers(spec, dense_cfg, dense=True)
        _same(dets, _as_list(hd.Decoder(dense_cfg)(dense_raw)), "dense host buffers")
        if spec["frames"]:
            for f in range(spec["frames"]):
                one = {k: np.ascontiguousarray(v[f]) for k, v in raw.items()}
                single = _as_list(hd.Decoder(cfg)(one))
                _same(dets[f:f + 1], single, f"frame {f} alone")
        base = _core.simd_info()["active"]
        try:
            for path in SIMD_PATHS:
                _core.select_simd(path)
                _same(dets, _as_list(hd.Decoder(cfg)(raw)), f"SIMD path {path}")
        finally:
            _core.select_simd(base)
    return "ok" if not F else "faulty_result"


__all__ = ["task_specs", "run_task_spec", "TASK_FAULTS", "QMAX"]
