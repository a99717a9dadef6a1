"""Fuzz harnesses for instance segmentation (FUZZING.md, "Segmentation"): -seg configs and
buffers through DecoderConfig + Decoder + Detections.masks, HAILO_NMS_WITH_BYTE_MASK buffers
through decode_hailo_nms(format="byte_mask"), and the private mask rendering binding.

Specs are small JSON-able dicts; buffers come from the spec's seed. Every outcome is a result
that passes the checks or a ValueError/TypeError."""

from __future__ import annotations

import struct
from typing import Any, Dict, List, Tuple

import numpy as np
from hypothesis import strategies as st

import hailo_decode as hd
from hailo_decode import _core
from hailo_decode.formats import byte_mask

from .decoder_cases import HarnessFailure, watchdog

CLEAN = (ValueError, TypeError)
SEG_FAULTS = ["proto_channels", "proto_grid", "mask_grid", "proto_nan", "proto_missing", "mask_missing_proto",
              "proto_scale_zero", "proto_stride_odd"]


@st.composite
def seg_specs(draw, valid: bool = True) -> Dict[str, Any]:
    k = draw(st.integers(1, 3))
    spec: Dict[str, Any] = dict(
        kind="seg", seed=draw(st.integers(0, 2**31 - 1)), size=32 * k, nc=draw(st.sampled_from([1, 2, 3, 5])),
        C=draw(st.sampled_from([32, 32, 32, 8, 33])),
        dtypes=[draw(st.sampled_from(["uint8", "uint8", "uint16", "float32"])) for _ in range(10)],
        proto_layout=draw(st.sampled_from(["host", "host", "NHCW", "F8CR", "NCHW"])),
        per_channel=draw(st.booleans()), semantics=draw(st.sampled_from(["ultralytics", "hailort"])),
        threshold=draw(st.sampled_from([0.0, 0.05, 0.25, 0.5, 0.9, 1.0])),
        fill=draw(st.sampled_from(["random", "random", "zeros", "max", "extreme"])),
        frames=draw(st.sampled_from([None, 0, 1, 2, 3])), threads=draw(st.sampled_from([1, 1, 2])),
        drop=draw(st.sampled_from([None, True, False])), faults=[])
    spec["end2end"] = draw(st.booleans())  # the one-to-one top-k, then the rows' coefficients (issue 13)
    if not valid:
        spec["faults"] = draw(st.lists(st.sampled_from(SEG_FAULTS), min_size=1, max_size=2, unique=True))
    return spec


def _quant(rng: np.random.Generator, dtype: str, C: int, per_channel: bool):
    if dtype == "float32":
        return 0.0, 1.0
    top = 255 if dtype == "uint8" else 65535
    zp = [float(rng.integers(0, top + 1)) for _ in range(C)] if per_channel else float(rng.integers(0, top + 1))
    scale = [float(rng.uniform(1e-4, 0.1)) for _ in range(C)] if per_channel else float(rng.uniform(1e-4, 0.1))
    if dtype == "uint16":
        scale = [s / 256 for s in scale] if per_channel else scale / 256  # type: ignore[operator,union-attr]
    return zp, scale


def _fill(rng: np.random.Generator, shape, dtype: str, fill: str) -> np.ndarray:
    if dtype == "float32":
        if fill == "zeros":
            return np.zeros(shape, np.float32)
        if fill == "extreme":
            return rng.choice(np.array([0.0, -0.0, 1e-40, -1e30, 1e30, 3.4e38, -3.4e38], np.float32), size=shape)
        return rng.normal(0, 3 if fill == "random" else 30, shape).astype(np.float32)
    top = 255 if dtype == "uint8" else 65535
    if fill == "zeros":
        return np.zeros(shape, dtype)
    if fill == "max":
        return np.full(shape, top, dtype)
    return rng.integers(0, top + 1, shape).astype(dtype)


def build(spec: Dict[str, Any]):
    """(infos, heads, raw, kwargs) of a spec; faults applied to the config side."""
    rng = np.random.default_rng(spec["seed"])
    size, nc, C, F = spec["size"], spec["nc"], spec["C"], set(spec["faults"])
    infos: List[hd.OutputInfo] = []
    raw: Dict[str, np.ndarray] = {}
    heads = []
    n = spec["frames"]
    lead = () if n is None else (n,)
    for j, s in enumerate((8, 16, 32)):
        g = size // s
        for i, (kind, ch) in enumerate((("box", 64), ("cls", nc), ("mask", C))):
            dtype = spec["dtypes"][3 * j + i]
            gg = g + 1 if (kind == "mask" and "mask_grid" in F and s == 16) else g
            zp, scale = _quant(rng, dtype, ch, spec["per_channel"] and kind == "mask")
            name = f"s/{kind}{s}"
            infos.append(hd.OutputInfo(name, (gg, gg, ch), dtype, zp=zp, scale=scale))
            raw[name] = _fill(rng, lead + (gg, gg, ch), dtype, spec["fill"])
        heads.append(hd.Head(f"s/box{s}", f"s/cls{s}", s, f"s/mask{s}"))
    pc = C + 1 if "proto_channels" in F else C
    pg = size // 4 + (2 if "proto_grid" in F else 0)
    dtype = spec["dtypes"][9]
    zp, scale = _quant(rng, dtype, pc, spec["per_channel"])
    if "proto_scale_zero" in F and dtype != "float32":
        scale = 0.0
    layout = spec["proto_layout"]
    kw: Dict[str, Any] = {}
    try:
        if layout == "host":
            proto_info = hd.OutputInfo("s/proto", (pg, pg, pc), dtype, zp=zp, scale=scale)
            proto = _fill(rng, lead + (pg, pg, pc), dtype, spec["fill"])
        elif layout == "NCHW":
            proto_info = hd.OutputInfo("s/proto", (pg, pg, pc), dtype, "NCHW", zp=zp, scale=scale)
            proto = _fill(rng, lead + (pc, pg, pg), dtype, spec["fill"])
        else:
            cp = -(-pc // 8) * 8 + (8 if layout == "F8CR" else 3)
            proto_info = hd.OutputInfo("s/proto", (pg, pg, pc), dtype, layout, zp=zp, scale=scale,
                                       padded_shape=(pg, pg + 2, cp), device=True)
            proto = _fill(rng, lead + (pg, cp, pg + 2) if layout == "NHCW" else lead + (pg, pg + 2, cp), dtype,
                          spec["fill"])
    except CLEAN:
        raise
    if "proto_nan" in F and dtype == "float32":
        proto.reshape(-1)[:1] = np.nan
    infos.append(proto_info)
    raw["s/proto"] = proto
    if "proto_missing" in F:
        del raw["s/proto"]
    if "mask_missing_proto" in F:
        infos = infos[:-1]
        raw.pop("s/proto", None)
    else:
        kw["proto"] = "s/proto"
    if "proto_stride_odd" in F:
        kw["proto_stride"] = 3
    kw.update(semantics=spec["semantics"], score_threshold=spec["threshold"])
    if spec["semantics"] == "hailort":
        kw["class_activation"] = "sigmoid"
    if spec["drop"] is not None:
        kw["drop_empty_masks"] = spec["drop"]
    if spec.get("end2end"):
        kw["end2end"] = True
    return infos, heads, raw, kw


def _crop_ok(masks: np.ndarray, boxes: np.ndarray) -> bool:
    n, H, W = masks.shape
    cols = np.arange(W, dtype=np.float32)
    rows = np.arange(H, dtype=np.float32)
    for m, (x1, y1, x2, y2) in zip(masks, boxes.astype(np.float32)):
        inside = ((rows >= y1) & (rows < y2))[:, None] & ((cols >= x1) & (cols < x2))[None, :]
        if (m & ~inside).any():
            return False
    return True


def run_seg_spec(spec: Dict[str, Any]) -> str:
    F = set(spec["faults"])
    try:
        infos, heads, raw, kw = build(spec)
        cfg = hd.DecoderConfig(infos, heads, **kw)
        dec = hd.Decoder(cfg, threads=spec["threads"])
        result = dec(raw)
    except CLEAN:
        return "refused"
    # Faults that take effect: NaN only in a float32 prototype with frames to hold it, a zero scale
    # only on a quantized one (float32 outputs take no scale).
    applied = set(F)
    if spec["dtypes"][9] != "float32" or spec["frames"] == 0:
        applied.discard("proto_nan")
    if spec["dtypes"][9] == "float32":
        applied.discard("proto_scale_zero")
    must_refuse = applied
    if must_refuse:
        raise HarnessFailure(f"faults {sorted(must_refuse)} were accepted")
    frames = result if isinstance(result, list) else [result]
    H, W = cfg.image_size
    ph, pw = cfg.output("s/proto").shape[:2]
    fresh = {k: v.copy() for k, v in raw.items()}
    for a in raw.values():  # the caller's buffers are reused: the Detections must not care
        a[...] = 0
    for d in frames:
        m = d.masks
        if m is None or m.shape != (len(d), H, W) or m.dtype != np.bool_:
            raise HarnessFailure(f"masks of shape {None if m is None else m.shape}, expected {(len(d), H, W)}")
        if not _crop_ok(m, d.boxes_as("xyxy_pixels")):
            raise HarnessFailure("a mask pixel lies outside its box")
        if cfg.drop_empty_masks and len(d) and not m.reshape(len(d), -1).any(axis=1).all():
            raise HarnessFailure("an empty mask was kept under drop_empty_masks")
        if cfg.end2end and (len(d) > (300 if cfg.max_total is None else cfg.max_total) or np.any(np.diff(d.scores) > 0)):
            raise HarnessFailure("end-to-end rows exceed max_det or are not by score")
        p = d.masks_at_proto()
        if p.shape != (len(d), ph, pw):
            raise HarnessFailure(f"prototype masks of shape {p.shape}")
        need = sum(w * h for _, _, w, h in (byte_mask.mask_crop(b, (H, W)) for b in d.boxes_as("yxyx_normalized")))
        if need > 50_000_000:  # boxes far larger than the image: keep the case small
            continue
        version = ("4.23", "5.2")[len(d) % 2]  # both record layouts (HailoRT 5.2's: 46 bytes)
        buf = d.to_hailo_byte_mask(mask_budget=need + 16, hailort_version=version)
        back = hd.decode_hailo_nms(buf, format="byte_mask", image_size=(H, W), hailort_version=version)
        if len(back) != len(d) or (len(d) and not np.array_equal(back.masks, back.masks & m)):
            raise HarnessFailure("HAILO_NMS_WITH_BYTE_MASK round trip added pixels or lost detections")
    # Every SIMD path and a decode of copies give the same masks.
    want = [d.masks for d in frames]
    best = hd.simd_info()["available"][-1]
    try:
        for simd in hd.simd_info()["available"]:
            _core.select_simd(simd)
            again = hd.Decoder(cfg)(fresh)
            again_frames = again if isinstance(again, list) else [again]
            for a, b in zip(again_frames, want):
                if not np.array_equal(a.masks, b):
                    raise HarnessFailure(f"masks differ on the {simd} path (or after the caller's buffers changed)")
    finally:
        _core.select_simd(best)
    return "ok"


# -- HAILO_NMS_WITH_BYTE_MASK input ----------------------------------------------------------------
@st.composite
def byte_mask_specs(draw) -> Dict[str, Any]:
    recs = []
    for _ in range(draw(st.integers(0, 4))):
        box = [draw(st.sampled_from([0.0, 0.1, 0.5, 0.99, 1.0, 1.5, -0.5, 1e30, -1e30, float("nan"), float("inf")]))
               for _ in range(4)]
        recs.append(dict(box=box, score=draw(st.sampled_from([0.5, float("nan"), -1.0])),
                         cls=draw(st.integers(0, 65535)), size_delta=draw(st.sampled_from([0, 0, 0, 1, -1, 10**12]))))
    return dict(kind="byte_mask", seed=draw(st.integers(0, 2**31 - 1)), recs=recs,
                count_delta=draw(st.sampled_from([0, 0, 1, -1, 60000])), cut=draw(st.sampled_from([None, 0, 1, 2, 37, -1])),
                image=draw(st.sampled_from([(8, 8), (1, 1), (20, 30), (0, 5)])),
                dtype=draw(st.sampled_from(["uint8", "uint8", "int8", "float32", "list"])),
                nc=draw(st.sampled_from([None, 1, 70000])),
                # HailoRT 5.2's 46-byte records (a mask_offset, off by offset_delta), and the reader's
                # hailort_version / crop_opt (issue 36)
                layout=draw(st.sampled_from(["4.23", "5.2"])),
                offset_delta=draw(st.sampled_from([0, 0, 0, 1, -1, 2**63])),
                version=draw(st.sampled_from([None, None, "4.23", "5.2", "5.2.0", "5", "bogus"])),
                crop_opt=draw(st.booleans()))


def run_byte_mask_spec(spec: Dict[str, Any]) -> str:
    rng = np.random.default_rng(spec["seed"])
    H, W = spec["image"]
    parts = [struct.pack("<H", max(0, min(65535, len(spec["recs"]) + spec["count_delta"])))]
    pos = 2
    for r in spec["recs"]:
        with np.errstate(all="ignore"):
            x0, y0, w, h = (byte_mask.mask_crop(np.array(r["box"], np.float32), (max(H, 1), max(W, 1)),
                                                crop_opt=spec.get("crop_opt", False))
                            if all(np.isfinite(r["box"])) and max(abs(v) for v in r["box"]) < 1e6 else (0, 0, 1, 1))
        size = max(0, min(w * h, 10**6) + r["size_delta"])
        rec = struct.pack("<fffffHQQ", *r["box"][:4], r["score"], r["cls"], min(size, 2**64 - 1), 0)
        if spec.get("layout") == "5.2":
            rec += struct.pack("<Q", (pos + len(rec) + 8 + spec["offset_delta"]) % 2**64)
        mask = rng.integers(0, 3, min(size, 4096)).astype(np.uint8).tobytes()
        parts += [rec, mask]
        pos += len(rec) + len(mask)
    buf = np.frombuffer(b"".join(parts), np.uint8)
    if spec["cut"] is not None:
        buf = buf[:spec["cut"]] if spec["cut"] >= 0 else buf[:-1]
    arg: Any = buf
    if spec["dtype"] == "int8":
        arg = buf.view(np.int8)
    elif spec["dtype"] == "float32":
        arg = buf[: len(buf) // 4 * 4].view(np.float32)
    elif spec["dtype"] == "list":
        arg = buf.tolist()
    try:
        d = hd.decode_hailo_nms(arg, format="byte_mask", image_size=(H, W), num_classes=spec["nc"],
                                hailort_version=spec.get("version"), crop_opt=spec.get("crop_opt", False))
    except CLEAN:
        return "refused"
    if not isinstance(d, hd.Detections) or d.masks is None or d.masks.shape != (len(d), H, W):
        raise HarnessFailure("byte-mask reader returned an inconsistent result")
    if not (len(d.boxes) == len(d.scores) == len(d.class_ids)):
        raise HarnessFailure("arrays of different lengths")
    return "ok"


# -- the rendering binding -------------------------------------------------------------------------
@st.composite
def render_specs(draw) -> Dict[str, Any]:
    n = draw(st.integers(0, 3))
    ints = st.sampled_from([0, 1, 2, 5, -1, 7, 2**31 - 1, -(2**31)])
    return dict(kind="render", n=n, logits=draw(st.sampled_from([0, 1, 10, 100])),
                windows=[[draw(ints) for _ in range(4)] for _ in range(n)],
                offsets=[draw(st.sampled_from([0, 1, 50, -1, 2**62])) for _ in range(n)],
                crops=[[draw(st.sampled_from([0.0, 3.5, -1e30, 1e30, float("nan"), 7.0])) for _ in range(4)] for _ in range(n)],
                grid=draw(st.sampled_from([(4, 4, 16, 16), (10, 10, 40, 40), (0, 4, 16, 16), (4, 4, -1, 16),
                                         (10, 10, 40, 40, 1), (4, 4, 16, 16, 7)])),  # + MaskRule (YOLOv5's, a bad one)
                sampling=draw(st.sampled_from(["input", "proto", "native", "native_up", "odd", "huge", "source_out",
                                               "up_0", "short"])),
                native_hw=draw(st.sampled_from([(1, 1), (3, 5), (13, 16), (64, 48), (0, 4)])),
                out=draw(st.sampled_from([None, "fit", "garbage", "wrong_shape", "float32", "strided"])),
                crop_scale=draw(st.sampled_from([None, (0.25, 0.25), (1 / 3, 0.3), (0.0, -1.0), (float("nan"), 1e30),
                                                 (float("inf"), -float("inf"))])),
                proto_signs=draw(st.sampled_from([None, "as_drawn", "fitted"])))


def _out_buffer(kind: str, shape: Tuple[int, int, int], dtype: Any) -> np.ndarray:
    """An `out=` buffer for n masks of shape (n, H, W): one that fits (of dtype), one holding
    garbage (uint8 9s), one mask too many, float32, or a strided view."""
    n = shape[0]
    return {"fit": lambda: np.zeros(shape, dtype), "garbage": lambda: np.full(shape, 9, np.uint8),
            "wrong_shape": lambda: np.zeros((n + 1,) + shape[1:], dtype),
            "float32": lambda: np.zeros(shape, np.float32),
            "strided": lambda: np.zeros(shape[:2] + (2 * shape[2],), dtype)[:, :, ::2]}[kind]()


def _render_proto_too(spec: Dict[str, Any], logits: np.ndarray, windows: np.ndarray) -> None:
    """The sign-byte binding (render_proto_masks, behind masks_at_proto) on the same windows,
    offsets and boxes: refused cleanly, or the bytes render_masks gives with the prototype
    sampling and the boxes scaled to the grid (the decoder's signs are its logits > 0)."""
    n, grid = spec["n"], tuple(spec["grid"])
    signs = (logits > 0).astype(np.uint8)
    boxes = np.array(spec["crops"], np.float32).reshape(n, 4)
    offsets = np.array(spec["offsets"], np.int64).reshape(n)
    if spec["proto_signs"] == "fitted" and min(grid) > 0:  # the drawn numbers folded into windows that fit
        w = np.abs(windows) % (2**30)
        w[:, 0] %= grid[0]
        w[:, 1] %= grid[1]
        w[:, 2] %= grid[0] - w[:, 0] + 1
        w[:, 3] %= grid[1] - w[:, 1] + 1
        windows = w
        offsets = np.concatenate([[0], np.cumsum(w[:, 2] * w[:, 3])[:-1]]).astype(np.int64)[:n]
        logits = np.resize(logits if logits.size else np.float32([0.5]), int((w[:, 2] * w[:, 3]).sum()))
        signs = (logits > 0).astype(np.uint8)
    buf = None
    if spec["out"] is not None and len(grid) in (4, 5) and min(grid[:4]) > 0:
        shape = (n, grid[0], grid[1])
        buf = _out_buffer(spec["out"], shape, np.bool_)
    try:
        got = _core.render_proto_masks(signs, windows.astype(np.int32), offsets, boxes, grid, buf)
    except CLEAN:
        return
    if spec["out"] in ("wrong_shape", "float32") or (spec["out"] == "strided" and not buf.flags.c_contiguous):
        raise HarnessFailure(f"render_proto_masks accepted out={spec['out']}")
    scale = (np.float32(grid[1] / grid[3]), np.float32(grid[0] / grid[2]))  # the binding's float(double / double)
    want = _core.render_masks(logits, windows.astype(np.int32), offsets, boxes, grid, _core.mask_sampling_proto(grid),
                              None, (float(scale[0]), float(scale[1])))
    if got.shape != want.shape or not np.array_equal(got.view(np.uint8), want):
        raise HarnessFailure("render_proto_masks differs from render_masks at the prototype grid")


def run_render_spec(spec: Dict[str, Any]) -> str:
    n = spec["n"]
    logits = np.linspace(-1, 1, spec["logits"], dtype=np.float32)
    windows = np.array(spec["windows"], np.int64).reshape(n, 4)
    if (np.abs(windows) >= 2**31).any():
        windows = np.clip(windows, -(2**31), 2**31 - 1)
    if spec.get("proto_signs"):
        _render_proto_too(spec, logits, windows)
    try:
        grid = tuple(spec["grid"])
        if spec["sampling"] == "input":
            s = _core.mask_sampling_input(grid)
        elif spec["sampling"] == "proto":
            s = _core.mask_sampling_proto(grid)
        elif spec["sampling"] == "native":
            s = _core.mask_sampling_native(grid, *spec["native_hw"])
        elif spec["sampling"] == "native_up":  # a two-step sampling with odd scales
            s = (0.3, -0.5, 1.7, 2.0, 9, 7, 4, 1, 2, 3, 5)
        elif spec["sampling"] == "odd":
            s = (float("nan"), 1e30, -1.0, float("inf"), 8, 9, 2, 0, 0, 0, 0)
        elif spec["sampling"] == "huge":
            s = (1.0, -0.5, 1.0, -0.5, 1 << 20, 4, 1, 0, 0, 0, 0)
        elif spec["sampling"] == "source_out":  # the source past the upsampled grid
            s = (1.0, -0.5, 1.0, -0.5, 8, 8, 2, 7, 0, 2**31 - 1, 0)
        elif spec["sampling"] == "up_0":
            s = (1.0, -0.5, 1.0, -0.5, 8, 8, 0, 0, 0, 0, 0)
        else:
            s = (1.0, -0.5, 1.0, -0.5, 8, 8)  # the old six fields
        buf = None
        if spec["out"] is not None:
            shape = (n, int(s[4]), int(s[5]))
            buf = _out_buffer(spec["out"], shape, np.uint8)
        out = _core.render_masks(logits, windows.astype(np.int32), np.array(spec["offsets"], np.int64).reshape(n),
                                 np.array(spec["crops"], np.float32).reshape(n, 4), grid, s, buf,
                                 None if spec.get("crop_scale") is None else tuple(spec["crop_scale"]))
    except CLEAN:
        return "refused"
    if spec["out"] in ("wrong_shape", "float32") or (spec["out"] == "strided" and not buf.flags.c_contiguous):
        raise HarnessFailure(f"render_masks accepted out={spec['out']}")  # (numpy calls an empty or 1-wide view contiguous)
    if out.shape[0] != n or not np.isin(out, (0, 1)).all():  # also: a garbage buffer wholly overwritten
        raise HarnessFailure("render_masks gave an inconsistent result")
    return "ok"


def run_any(spec: Dict[str, Any]) -> str:
    runner = {"seg": run_seg_spec, "byte_mask": run_byte_mask_spec, "render": run_render_spec}[spec["kind"]]
    with watchdog():
        return runner(spec)
