# Type stubs of the C++ extension module hailo_decode._core._native (cpp/bindings/module.cpp).
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

class DType:
    U8: DType
    U16: DType
    F32: DType

class Order:
    NHWC: Order
    NHCW: Order
    F8CR: Order
    NCHW: Order

class HeadKind:
    DFL: HeadKind
    YOLOV5: HeadKind
    YOLOX: HeadKind
    SSD: HeadKind

class KeypointDecode:
    YOLOV8: KeypointDecode
    YOLO26: KeypointDecode

class AngleDecode:
    SIGMOID: AngleDecode
    RAW: AngleDecode

class TensorSpec:
    name: str
    dtype: DType
    order: Order
    height: int
    width: int
    channels: int
    padded_height: int
    padded_width: int
    padded_channels: int
    frame_stride: int
    zp: List[float]
    scale: List[float]
    def __init__(self) -> None: ...

class HeadSpec:
    box_output: int
    cls_output: int
    stride: int
    kpt_output: int
    angle_output: int
    mask_output: int
    obj_output: int
    anchors: List[int]
    def __init__(self) -> None: ...

class Settings:
    sigmoid: bool
    score_threshold: List[float]
    score_inclusive: bool
    iou_threshold: float
    iou_inclusive: bool
    multi_label: bool
    agnostic: bool
    max_per_class: int
    max_total: int
    max_candidates: int
    hailort_sort: bool
    hailort_v5: bool
    normalized: bool
    yxyx: bool
    image_height: int
    image_width: int
    class_offset: float
    end2end: bool
    hailort_decode: bool
    def __init__(self) -> None: ...

class Config:
    outputs: List[TensorSpec]
    heads: List[HeadSpec]
    num_classes: int
    bins: int
    kind: HeadKind
    settings: Settings
    num_keypoints: int
    keypoint_dims: int
    proto_output: int
    drop_empty_masks: bool
    mask_objectness: bool
    keypoint_decode: KeypointDecode
    angle_decode: AngleDecode
    def __init__(self) -> None: ...

class Decoder:
    threads: int
    mask_rule: int
    def __init__(self, config: Config, threads: int = 1) -> None: ...
    def time_decode(self, arrays: Sequence[np.ndarray], n_frames: int, iterations: int) -> List[float]: ...
    # (boxes, scores, class_ids); then (keypoints or None, rboxes or None) for pose/OBB heads, or
    # (windows, offsets, logits) when the config has a prototype output
    def decode(self, arrays: Sequence[np.ndarray], n_frames: int) -> List[Tuple[Any, ...]]: ...
    def hailort_seg_frames(self, arrays: Sequence[np.ndarray], n_frames: int, max_total: int, mask_threshold: float,
                           out: np.ndarray, iterations: int = 1,
                           layout: int = 0) -> Tuple[List[Tuple[int, int, int, bool]], List[float]]: ...
    def set_one_frame(self, names: Sequence[str], dtypes: Sequence[np.dtype], shapes: Sequence[Sequence[int]]) -> None: ...
    # decode's tuple for one frame, or None unless raw is a dict of exactly the declared arrays
    def decode_one(self, raw: object) -> Optional[Tuple[Any, ...]]: ...

def pack_hailo_nms_by_class(boxes_yxyx: np.ndarray, scores: np.ndarray, class_ids: np.ndarray,
                            num_classes: int, max_per_class: int, out: np.ndarray) -> None: ...
def probiou(a: np.ndarray, b: np.ndarray) -> np.ndarray: ...
def time_rotated_nms(rboxes: np.ndarray, classes: np.ndarray, num_classes: int, iou_threshold: float,
                     agnostic: bool, class_offset: float, iterations: int) -> Tuple[List[float], int]: ...
def pack_hailo_nms_by_score(boxes_yxyx: np.ndarray, scores: np.ndarray, class_ids: np.ndarray,
                            max_bboxes_total: int, out: np.ndarray) -> None: ...
def hailo_nms_by_score_bytes(max_bboxes_total: int) -> int: ...
class Yolov5BboxOnly:
    """HailoRT's yolov5_bbox_only op's rows for YOLOv5 heads (hailo_decode/yolov5_bbox_only.hpp)."""
    def __init__(self, config: Config) -> None: ...
    @property
    def proposals(self) -> int: ...
    @property
    def row_floats(self) -> int: ...
    def write(self, config: Config, arrays: Sequence[np.ndarray], n_frames: int, out: np.ndarray) -> None: ...

def decode_bbox_only(rows: np.ndarray, proposals: int, num_classes: int,
                     settings: Settings) -> Tuple[np.ndarray, np.ndarray, np.ndarray]: ...
def simd_info() -> dict: ...
def select_simd(name: str) -> None: ...
def time_read_pass(arrays: Sequence[np.ndarray], iterations: int) -> List[float]: ...
def time_span_pass(spans: Sequence[Tuple[np.ndarray, int, int, int, int]], iterations: int) -> List[float]: ...

# (proto_h, proto_w, input_h, input_w[, rule]): hailo_decode/masks.hpp's MaskGrid (rule 1: YOLOv5's process_mask)
Grid = Tuple[int, ...]
# (sx, ox, sy, oy, height, width, up, top, left, src_h, src_w): hailo_decode/masks.hpp's MaskSampling
Sampling = Tuple[float, float, float, float, int, int, int, int, int, int, int]
BYTE_MASK_RECORD_BYTES: int
def render_masks(logits: np.ndarray, windows: np.ndarray, offsets: np.ndarray, crops: np.ndarray,
                 grid: Grid, sampling: Sampling, out: Optional[np.ndarray] = None,
                 crop_scale: Optional[Tuple[float, float]] = None) -> np.ndarray: ...
def render_proto_masks(signs: np.ndarray, windows: np.ndarray, offsets: np.ndarray, boxes_xyxy: np.ndarray,
                       grid: Grid, out: Optional[np.ndarray] = None) -> np.ndarray: ...
def mask_sampling_input(grid: Grid) -> Sampling: ...
def mask_sampling_proto(grid: Grid) -> Sampling: ...
def mask_sampling_native(grid: Grid, height: int, width: int) -> Sampling: ...
def pack_byte_mask(boxes_yxyx: np.ndarray, crops: np.ndarray, scores: np.ndarray, class_ids: np.ndarray,
                   windows: np.ndarray, offsets: np.ndarray, logits: np.ndarray, grid: Grid,
                   out: np.ndarray, layout: int = 0) -> Tuple[int, int, bool]: ...
def pack_byte_mask_from_masks(boxes_yxyx: np.ndarray, scores: np.ndarray, class_ids: np.ndarray,
                              masks: np.ndarray, out: np.ndarray, layout: int = 0) -> Tuple[int, int, bool]: ...
def byte_mask_frame_bytes(max_total: int, mask_budget: int, layout: int = 0) -> int: ...
BYTE_MASK_RECORD_BYTES_52: int

# Pairing (cpp/bindings/pairing.cpp, hailo_decode/setup.hpp's pair_outputs).
class SsdCoding:
    centers_scale: float
    dims_scale: float
    ty_index: int
    tx_index: int
    th_index: int
    tw_index: int
    background_class: int  # -1: none
    def __init__(self) -> None: ...

class NamedHead:
    kind: HeadKind
    box: str  # "" : none (every output name below likewise)
    cls: str
    mask: str
    kpt: str
    angle: str
    obj: str
    stride: int  # 0: derived
    anchors: List[Tuple[int, int]]
    box_anchors: List[Tuple[float, float]]  # SSD
    ssd: SsdCoding
    def __init__(self) -> None: ...

class Layout:
    kind: HeadKind
    heads: List[NamedHead]
    image_height: int
    image_width: int
    task: str
    num_classes: int
    bins: int
    num_keypoints: int
    keypoint_dims: int
    proto: str
    ssd: SsdCoding

# heads: dicts of kind ("dfl" | "yolov5" | "yolox"), box, cls, mask, kpt, angle, obj, stride, anchors
# options: read_options' (the model options task, bins, keypoint_dims, proto, proto_stride, image_size)
def pair_outputs(outputs: Sequence[Tuple[str, int, int, int]], options: Options,
                 heads: Optional[Sequence[Dict[str, Any]]] = None) -> Layout: ...

# Setup (cpp/bindings/setup.cpp, hailo_decode/setup.hpp): settings, presets, checks, NMS JSON.
# A value of the wrong kind or an unknown key raises TypeError, every other refusal ValueError.
class OutputShape:
    name: str
    height: int
    width: int
    channels: int
    def __init__(self, name: str, height: int, width: int, channels: int) -> None: ...

class Options:
    """Checked options (read_options), read-only. "" / 0 / -1: not given (caps: None)."""
    semantics: str
    class_activation: str
    score_threshold: List[float]
    score_threshold_per_class: bool
    score_test: str
    iou_threshold: float
    iou_test: str
    multi_label: bool
    agnostic: bool
    max_per_class: int
    max_total: int
    max_candidates: int
    tie_break: str
    box_format: str
    rotated_class_offset: float
    end2end: bool
    explicit_settings: List[str]
    task: str
    bins: int
    keypoint_dims: int
    keypoint_decode: str
    angle_decode: str
    image_height: int
    image_width: int
    has_classes: bool
    classes: List[int]
    proto: str
    proto_stride: int
    drop_empty_masks: int
    mask_objectness: int
    hailort_version: str

class NmsJson:
    heads: List[NamedHead]
    settings: Dict[str, Any]
    classes: int
    regression_length: int

def parse_json(text: str) -> Any: ...
def preset_setting_names() -> List[str]: ...
def preset_names() -> List[str]: ...
def option_names() -> List[str]: ...
def preset(name: str) -> Dict[str, Any]: ...
def choices(key: str) -> List[str]: ...
def closest_name(name: str, known: Sequence[str]) -> str: ...
def read_options(options: Any, where: str = "", aliases: Sequence[Tuple[str, str]] = ...) -> Options: ...
def read_nms_json(doc: Any, outputs: Sequence[OutputShape], where: str = "") -> NmsJson: ...
def read_heads(heads: Any, where: str = "", outputs: Optional[Sequence[OutputShape]] = None) -> List[NamedHead]: ...
def thresholds_per_class(options: Options, num_classes: int) -> List[float]: ...
def keypoint_decode(options: Options, bins: int) -> str: ...
def angle_decode(options: Options, bins: int) -> str: ...
def drop_empty_masks(options: Options) -> bool: ...
def make_settings(layout: Layout, options: Options) -> Settings: ...
def config_for_layout(outputs: Sequence[TensorSpec], layout: Layout, options: Options) -> Config: ...
def make_config(outputs: Sequence[TensorSpec], options: Options, heads: Optional[Sequence[NamedHead]] = None) -> Config: ...
