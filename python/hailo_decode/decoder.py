"""Decoder: checks a frame's arrays once against the config, then hands them to the C++ core in
place (no copies) with the GIL released."""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Tuple, Union

import numpy as np

from . import _core
from .config import DecoderConfig, OutputInfo
from .detections import NMS_FORMATS, Detections, MaskLogits, hailo_max_per_class, hailo_nms_buffer_size
from .formats import by_score, byte_mask
from .diagnostics import diagnose_outputs
from .outputs import check_array_dtype

__all__ = ["Decoder"]

_CORE_DTYPE = {"uint8": _core.DType.U8, "uint16": _core.DType.U16, "float32": _core.DType.F32}
_CORE_ORDER = {"NHWC": _core.Order.NHWC, "FCR": _core.Order.NHWC, "F8CR": _core.Order.F8CR,
               "NHCW": _core.Order.NHCW, "NCHW": _core.Order.NCHW}

Frames = Mapping[str, np.ndarray]


def _tensor_spec(o: OutputInfo) -> "_core.TensorSpec":
    t = _core.TensorSpec()
    t.name = o.name
    t.dtype = _CORE_DTYPE[o.dtype]
    # Host buffers are dense channel-last whatever order is reported (F8CR and FCR included);
    # only raw device buffers keep their order's addressing.
    t.order = _CORE_ORDER[o.order] if (o.device or o.order == "NCHW") else _core.Order.NHWC
    t.height, t.width, t.channels = o.shape
    hp, wp, cp = o.memory_shape
    if o.order == "NCHW" and not o.device:
        hp, wp, cp = o.shape
    t.padded_height, t.padded_width, t.padded_channels = hp, wp, cp
    t.frame_stride = o.frame_elements
    t.zp = list(o.zp) if isinstance(o.zp, tuple) else [o.zp]
    t.scale = list(o.scale) if isinstance(o.scale, tuple) else [o.scale]
    return t


def _core_config(cfg: DecoderConfig) -> "_core.Config":
    # The core fills every setting from the checked options (setup::config_for_layout, make_config's
    # second half), on the heads DecoderConfig already paired.
    return _core.config_for_layout([_tensor_spec(o) for o in cfg.outputs], cfg._layout, cfg._options)


def _frames_in(o: OutputInfo, a: np.ndarray) -> Optional[int]:
    """Frames in `a` for output `o`: None if the array has no batch axis, else the batch size."""
    if a.shape in o.frame_shapes:
        return None
    if a.ndim >= 1 and (a.shape[1:] in o.batch_frame_shapes or (a.shape[0] <= 1 and a.shape[1:] in o.frame_shapes)):
        return a.shape[0]  # (with 0 or 1 frame, how frames are spaced does not matter)
    expected = " or ".join(str(s) for s in o.frame_shapes)
    batched = " or ".join("(N, " + ", ".join(str(v) for v in s) + ")" for s in o.batch_frame_shapes)
    raise ValueError(f"output {o.name!r}: expected shape {expected} (or {batched} for a batch), got {a.shape}")


class Decoder:
    """Decodes raw head outputs into Detections.

        decoder = Decoder(config)
        dets = decoder(raw)          # raw: {name: ndarray} as HailoRT hands it out

    Arrays without a batch axis give one Detections; arrays with one (InferVStreams) give a list.
    Arrays are read in place: they must be C-contiguous and of the declared dtype.
    A Decoder may be called from several threads; calls on one decoder run one at a time (use one
    decoder per thread for parallel decoding). threads > 1 decodes the frames of a batch on a
    persistent pool of that many threads; results do not depend on it.
    """

    def __init__(self, config: DecoderConfig, threads: int = 1) -> None:
        if not isinstance(config, DecoderConfig):
            raise TypeError(f"Decoder needs a DecoderConfig, got {type(config).__name__}")
        if isinstance(threads, bool) or not isinstance(threads, int) or not 1 <= threads <= 256:
            raise ValueError(f"threads must be an integer in [1, 256], got {threads!r}")
        self.config = config
        self.threads = threads
        self._core = _core.Decoder(_core_config(config), threads)
        self._outputs: Tuple[OutputInfo, ...] = config.outputs
        # The hot path's checks, precomputed: names, dtypes, and per output the one-frame shapes
        # and the per-frame shapes of a batch. Anything that fails them goes through _arrays,
        # which says exactly what is wrong.
        self._names = tuple(o.name for o in config.outputs)
        self._dtypes = tuple(np.dtype(o.dtype) for o in config.outputs)
        self._shapes = tuple((frozenset(o.frame_shapes), frozenset(o.batch_frame_shapes)) for o in config.outputs)
        # The common call (a dict of exactly the declared arrays, one frame) is checked in C++.
        self._core.set_one_frame(list(self._names), list(self._dtypes),
                                 [list(o.frame_shapes[-1]) for o in config.outputs])
        self._meta = dict(box_format=config.box_format, image_size=config.image_size,
                          num_classes=config.num_classes, max_per_class=config.max_per_class)
        if config.proto is not None:
            ph, pw = config.output(config.proto).shape[:2]
            ih, iw = config.image_size
            # (the core's mask rule appended when it is not Ultralytics': YOLOv5-seg's own process_mask)
            rule = self._core.mask_rule
            self._mask_grid: Optional[Tuple[int, ...]] = (ph, pw, ih, iw) + ((rule,) if rule else ())
        else:
            self._mask_grid = None
        self._uncapped: Optional["Decoder"] = None  # for HAILO_NMS_BY_SCORE, built on first use
        self._seg_ops: Dict[str, "Decoder"] = {}  # YOLOv5-seg's HailoRT byte-mask frames, per HailoRT version
        self._v5_bbox: Optional[Tuple[Any, Any]] = None  # the yolov5_bbox_only writer, built on first use

    def _arrays(self, raw: Frames) -> Tuple[List[np.ndarray], Optional[int]]:
        if not isinstance(raw, Mapping):
            raise TypeError(f"raw outputs must be a mapping name -> ndarray, got {type(raw).__name__}")
        names = set(self.config.output_names)
        missing = sorted(names - set(raw))
        extra = sorted(set(raw) - names)
        if missing or extra:
            raise ValueError(f"outputs do not match the config: missing {missing}, unexpected {extra}; "
                             f"expected {sorted(names)}")
        arrays, batch, first = [], None, None
        for o in self._outputs:
            a = raw[o.name]
            if not isinstance(a, np.ndarray):
                raise TypeError(f"output {o.name!r}: expected a numpy.ndarray, got {type(a).__name__}")
            check_array_dtype(o, a)
            if not a.flags.c_contiguous:
                raise ValueError(f"output {o.name!r}: array is not C-contiguous (it is read in place; "
                                 f"pass numpy.ascontiguousarray(...))")
            if not a.flags.aligned and a.size:
                raise ValueError(f"output {o.name!r}: array data is not aligned to its {a.dtype.itemsize}-byte "
                                 f"elements (it is read in place; pass numpy.require(a, requirements='CA'))")
            n = _frames_in(o, a)
            if first is None:
                first, batch = o.name, n
            elif n != batch:
                raise ValueError(f"output {o.name!r}: batch size {n} differs from output {first!r}: {batch} "
                                 f"(None = no batch axis)")
            arrays.append(a)
        return arrays, batch

    def _fast_arrays(self, raw: Frames) -> Optional[Tuple[List[np.ndarray], Optional[int]]]:
        """(arrays, batch) as _arrays gives them, if names, types, dtypes and shapes are as
        declared; else None. Contiguity and alignment are left to the core, which checks them
        before it reads (decode sends any error it raises through _arrays for the message)."""
        if type(raw) is not dict or len(raw) != len(self._names):
            return None
        try:
            arrays = [raw[name] for name in self._names]
        except KeyError:
            return None
        batch: Optional[int] = None
        for i, (a, dtype, (shapes, batch_shapes)) in enumerate(zip(arrays, self._dtypes, self._shapes)):
            if type(a) is not np.ndarray or (a.dtype is not dtype and a.dtype != dtype):
                return None
            shape = a.shape
            if shape in shapes:
                n = None
            elif shape[1:] in batch_shapes:
                n = shape[0]
            else:
                return None
            if i == 0:
                batch = n
            elif n != batch:
                return None
        return arrays, batch

    def __call__(self, raw: Frames) -> Union[Detections, List[Detections]]:
        return self.decode(raw)

    def decode(self, raw: Frames) -> Union[Detections, List[Detections]]:
        try:
            one = self._core.decode_one(raw)  # None unless raw is exactly the declared one frame
            if one is not None:
                return self._detections(one)
            fast = self._fast_arrays(raw)
            arrays, batch = fast if fast is not None else self._arrays(raw)
            frames = self._core.decode(arrays, 1 if batch is None else batch)
        except (TypeError, ValueError):
            # The core checks contiguity and alignment before it reads; the full checks say which
            # output and what to do.
            self._arrays(raw)
            raise
        dets = [self._detections(f) for f in frames]
        return dets[0] if batch is None else dets

    def _detections(self, f: Tuple[Any, ...]) -> Detections:
        """A frame's Detections from the core's tuple: (boxes, scores, class_ids), then (keypoints,
        rboxes) for pose and OBB heads, or the mask windows, offsets and logits for segmentation
        (copies, owned by the Detections)."""
        if self._mask_grid is None:
            return Detections._trusted(*f, meta=self._meta)
        return Detections._trusted(f[0], f[1], f[2], meta=self._meta,
                                   mask_logits=MaskLogits(f[3], f[4], f[5], self._mask_grid, f[6]))

    def decode_to_hailo_nms(self, raw: Frames, out: Optional[np.ndarray] = None, *, format: str = "by_class",  # noqa: A002
                            max_bboxes_total: Optional[int] = None, mask_budget: Optional[int] = None,
                            hailort_version: Optional[str] = None, mask_threshold: Optional[float] = None) -> np.ndarray:
        """Decode straight into one of HailoRT's NMS output layouts, written into `out` when given.

        format="by_class": the flat HAILO_NMS_BY_CLASS float32 buffer, shape (size,) for one
        frame, (N, size) for a batch, at most max_per_class boxes per class.
        format="by_score": the HAILO_NMS_BY_SCORE uint8 frame, 2 + 22 * max_bboxes_total bytes
        ((N, bytes) for a batch): every survivor of NMS (HailoRT applies no per-class cap to this
        form, so neither does this, whatever the config's max_per_class) in HailoRT's order, the
        first max_bboxes_total of them (default: num_classes x max_per_class, HailoRT's); where
        HailoRT 4.23 writes one record past its frame, this stays inside.
        format="byte_mask" (a -seg model): the HAILO_NMS_WITH_BYTE_MASK uint8 frame of
        2 + record * max_bboxes_total + mask_budget bytes ((N, bytes) for a batch; defaults: every
        detection, HailoRT's 2 * H * W), records of HailoRT `hailort_version` ("4.23": 38 bytes,
        every version before 5.2; "5.2": 46 bytes, 5.2.0+); default: the config's hailort_version
        (the HailoRT whose ops it follows), "4.23" when it has none.
        YOLOv5/YOLOv7-seg heads under the hailort preset: HailoRT's yolov5_seg op's own frame, byte
        for byte, of that hailort_version (4.x: 4.23's op; 5.0.1+: 5.x's candidates, 46-byte records
        from 5.2; hailo_decode/yolov5_seg.hpp): its NMS, its
        sigmoid, stb resize, inclusive crop and `> mask_threshold` (default: the HEF's, else 0.5),
        its count at max_bboxes_total (default: HailoRT's max_proposals_per_class x classes) and
        when a mask overflows mask_budget; each record's mask pointer points into `out`.
        format="bbox_only" (YOLOv5 heads): the yolov5_bbox_only op's float32 array, (1, proposals,
        5 + classes) for one frame, (N, 1, proposals, 5 + classes) for a batch: every anchor's
        {y_min, x_min, y_max, x_max} (normalized), objectness and class values, no NMS
        (`hd.decode_hailo_nms(..., format="bbox_only", bbox_op="yolov5")` reads it back)."""
        dtype: np.dtype
        if format not in NMS_FORMATS:
            raise ValueError(f"format must be 'by_class', 'by_score', 'byte_mask' or 'bbox_only', got {format!r}")
        if format == "byte_mask":
            if hailort_version is None:  # the HailoRT the config follows (from_hailo: the installed one)
                hailort_version = str(getattr(self.config, "hailort_version", None) or "4.23")
            if self._yolov5_seg_hailort():
                return self._hailort_seg_frames(raw, out, max_bboxes_total, mask_budget, mask_threshold,
                                                hailort_version)
            if mask_threshold is not None:
                raise TypeError("mask_threshold applies to YOLOv5-seg heads under the hailort preset (HailoRT's "
                                "yolov5_seg op) only")
            return self._decode_to_byte_mask(raw, out, max_bboxes_total, mask_budget, hailort_version)
        if mask_budget is not None or hailort_version is not None or mask_threshold is not None:
            raise TypeError("mask_budget, hailort_version and mask_threshold apply to format='byte_mask' only")
        if format == "bbox_only":
            if max_bboxes_total is not None:
                raise TypeError("max_bboxes_total applies to format='by_score' only")
            return self._yolov5_bbox_only(raw, out)
        cfg = self.config
        mpc = hailo_max_per_class(cfg.max_per_class)
        if format == "by_score":
            total = by_score.default_max_total(cfg.num_classes, mpc) if max_bboxes_total is None else max_bboxes_total
            size, dtype = by_score.buffer_size(total), np.dtype("uint8")
            if self._uncapped is None:
                self._uncapped = Decoder(cfg.replace(max_per_class=None, max_total=None), self.threads)
            dets = self._uncapped.decode(raw)
        else:
            if max_bboxes_total is not None:
                raise TypeError("max_bboxes_total applies to format='by_score' only")
            size, dtype = hailo_nms_buffer_size(cfg.num_classes, mpc), np.dtype("float32")
            dets = self.decode(raw)
        frames = [dets] if isinstance(dets, Detections) else dets
        shape: Tuple[int, ...] = (size,) if isinstance(dets, Detections) else (len(frames), size)
        if out is None:
            out = np.empty(shape, dtype=dtype)
        elif not isinstance(out, np.ndarray) or out.dtype != dtype or not out.flags.c_contiguous:
            raise TypeError(f"out must be a C-contiguous {dtype} ndarray for format={format!r}")
        elif out.size < int(np.prod(shape)):
            raise ValueError(f"out holds {out.size} {dtype} values, {len(frames)} frame(s) of "
                             f"HAILO_NMS_{format.upper()} need {int(np.prod(shape))}")
        flat = out.reshape(-1)
        for i, d in enumerate(frames):
            if format == "by_score":
                d.to_hailo_nms_by_score_buffer(flat[i * size:(i + 1) * size], max_bboxes_total=total)
            else:
                d.to_hailo_nms_buffer(flat[i * size:(i + 1) * size], max_per_class=mpc)
        flat[len(frames) * size:] = 0
        return out

    def _decode_to_byte_mask(self, raw: Frames, out: Optional[np.ndarray], max_total: Optional[int],
                             mask_budget: Optional[int], hailort_version: str) -> np.ndarray:
        layout = byte_mask.byte_mask_layout(hailort_version)
        dets = self.decode(raw)
        frames = [dets] if isinstance(dets, Detections) else dets
        if self.config.image_size is None or not all(d.has_masks for d in frames):
            raise ValueError("format='byte_mask' needs a segmentation config (proto=...) with an image_size")
        h, w = self.config.image_size
        total = max(len(d) for d in frames) if max_total is None else max_total
        size = byte_mask.byte_mask_frame_size(total, 2 * h * w if mask_budget is None else mask_budget,
                                              hailort_version=layout)
        shape: Tuple[int, ...] = (size,) if isinstance(dets, Detections) else (len(frames), size)
        out = _byte_mask_out(out, shape)
        flat = out.reshape(-1)
        flat[:] = 0
        for i, d in enumerate(frames):
            d.to_hailo_byte_mask(flat[i * size:(i + 1) * size], hailort_version=layout)
        return out

    def _yolov5_seg_hailort(self) -> bool:
        """Whether format='byte_mask' is HailoRT's yolov5_seg op itself (YOLOv5-seg heads, the
        hailort preset's decode)."""
        cfg = self.config
        return cfg.head_kind == "yolov5" and cfg.proto is not None and cfg.semantics == "hailort"

    def _hailort_seg_frames(self, raw: Frames, out: Optional[np.ndarray], max_total: Optional[int],
                            mask_budget: Optional[int], mask_threshold: Optional[float],
                            hailort_version: str) -> np.ndarray:
        cfg = self.config
        layout = byte_mask.byte_mask_layout(hailort_version)  # (refuses what is not a version)
        h, w = cfg.image_size
        if max_total is None:  # HailoRT's max_proposals_total: max_proposals_per_class x classes
            max_total = hailo_max_per_class(cfg.max_per_class) * cfg.num_classes
        if isinstance(max_total, bool) or not isinstance(max_total, (int, np.integer)) or not 0 <= max_total <= 65534:
            raise ValueError(f"max_bboxes_total must be an integer in [0, 65534], got {max_total!r}")
        if mask_threshold is None:
            mask_threshold = getattr(cfg, "mask_threshold", 0.5)
        if not isinstance(mask_threshold, (int, float, np.floating)) or not np.isfinite(mask_threshold):
            raise ValueError(f"mask_threshold must be a finite number, got {mask_threshold!r}")
        size = byte_mask.byte_mask_frame_size(int(max_total), 2 * h * w if mask_budget is None else mask_budget,
                                              hailort_version=layout)
        arrays, batch = self._arrays(raw)
        n = 1 if batch is None else batch
        shape: Tuple[int, ...] = (size,) if batch is None else (n, size)
        out = _byte_mask_out(out, shape)
        # The op's detections, per HailoRT version (5.0.1+'s candidates differ from 4.x's): uncapped
        # (the frame caps at max_total), yxyx normalized.
        op = self._seg_ops.get(hailort_version)
        if op is None:
            op = self._seg_ops[hailort_version] = Decoder(cfg.replace(
                max_per_class=None, max_total=None, box_format="yxyx_normalized", hailort_version=hailort_version))
        rows = out.reshape(-1)[:n * size].reshape(n, size)
        op._core.hailort_seg_frames(arrays, n, int(max_total), float(mask_threshold), rows,
                                    layout=1 if layout == "5.2" else 0)
        return out

    def _yolov5_bbox_only(self, raw: Frames, out: Optional[np.ndarray]) -> np.ndarray:
        if self.config.head_kind != "yolov5":
            raise ValueError(f"format='bbox_only' is the yolov5_bbox_only op's array, written for YOLOv5 heads; this "
                             f"config has {self.config.head_kind} heads")
        if self._v5_bbox is None:
            core_cfg = _core_config(self.config)
            self._v5_bbox = (core_cfg, _core.Yolov5BboxOnly(core_cfg))
        core_cfg, op = self._v5_bbox
        arrays, batch = self._arrays(raw)
        n = 1 if batch is None else batch
        shape = (1, op.proposals, op.row_floats) if batch is None else (n, 1, op.proposals, op.row_floats)
        if out is None:
            out = np.empty(shape, np.float32)
        elif not isinstance(out, np.ndarray) or out.dtype != np.float32 or not out.flags.c_contiguous:
            raise TypeError("out must be a C-contiguous float32 ndarray for format='bbox_only'")
        elif out.size < int(np.prod(shape)):
            raise ValueError(f"out holds {out.size} float32 values, {n} frame(s) of the yolov5_bbox_only form need "
                             f"{int(np.prod(shape))}")
        op.write(core_cfg, arrays, n, out.reshape(-1))
        return out

    # -- HailoRT integration: the work lives in hailo_decode.hailort (which imports hailo_platform lazily) --
    def decode_vstreams(self, output_vstreams) -> Detections:
        """Receive one frame from each OutputVStream (recv()) and decode it."""
        # Upward import (hailort sits above decoder): the HailoRT adapters wrap a Decoder.
        from .hailort import decode_vstreams
        return decode_vstreams(self, output_vstreams)

    def make_bindings(self, configured_infer_model, **kwargs):
        """Allocate each output array once and bind it to an InferModel; the returned object's
        decode() reads those arrays in place after run / run_async (hailort.make_bindings)."""
        # Upward import (hailort sits above decoder): the HailoRT adapters wrap a Decoder.
        from .hailort import make_bindings
        return make_bindings(self, configured_infer_model, **kwargs)

    def diagnose(self, raw: Frames) -> List[dict]:
        """Per output: share of values pinned at the quantized minimum and maximum, the dequantized
        range, and for class outputs the score range after activation, with plain-words warnings
        (for example class scores saturating at 1.0)."""
        return diagnose_outputs(self.config, raw)

    def __repr__(self) -> str:
        return f"Decoder({self.config!r})"


def _byte_mask_out(out: Optional[np.ndarray], shape: Tuple[int, ...]) -> np.ndarray:
    """`out` checked to hold frames of `shape` (one frame: (bytes,), a batch: (N, bytes)), or a new one."""
    if out is None:
        return np.zeros(shape, dtype=np.uint8)
    if not isinstance(out, np.ndarray) or out.dtype != np.uint8 or not out.flags.c_contiguous:
        raise TypeError("out must be a C-contiguous uint8 ndarray for format='byte_mask'")
    frames = shape[0] if len(shape) == 2 else 1
    if out.size < int(np.prod(shape)):
        raise ValueError(f"out holds {out.size} bytes, {frames} frame(s) of HAILO_NMS_WITH_BYTE_MASK need "
                         f"{int(np.prod(shape))}")
    return out
