"""The photographs behind the fixtures and the demo data: images shipped inside PyPI packages
(scikit-image, matplotlib), each checked by sha256 so that every run sees the same pixels. Used by
scripts/make_fixtures.py (the model's head outputs on them) and scripts/make_demo_images.py (the
pictures `hailo-decode demo --save` draws on)."""

from __future__ import annotations

import hashlib
import io
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image


@dataclass(frozen=True)
class ImageSpec:
    name: str  # stored in image_names
    package: str  # PyPI distribution that ships the file (for messages)
    relpath: str  # path relative to the package's data directory
    sha256: str  # of the file, so a rerun sees exactly the same pixels
    rot90_cw: bool = False  # rotate a clockwise quarter turn (a "lying" person)


# Chosen so the set covers: several people frames, both classes, overlapping
# boxes of different classes (class-aware NMS), portrait and landscape
# letterbox padding and a grayscale source. Each frame adds ~1 MB to
# fall_float.npz, hence only five.
IMAGES = [
    ImageSpec("skimage/astronaut.png", "scikit-image", "astronaut.png",
              "88431cd9653ccd539741b555fb0a46b61558b301d4110412b5bc28b5e3ea6cb5"),
    ImageSpec("skimage/camera.png", "scikit-image", "camera.png",
              "b0793d2adda0fa6ae899c03989482bff9a42d3d5690fc7e3648f2795d730c23a"),
    ImageSpec("skimage/camera.png (rotated 90 deg clockwise)", "scikit-image", "camera.png",
              "b0793d2adda0fa6ae899c03989482bff9a42d3d5690fc7e3648f2795d730c23a", rot90_cw=True),
    ImageSpec("matplotlib/grace_hopper.jpg", "matplotlib", "sample_data/grace_hopper.jpg",
              "a8ca6d734765703b09728ab47fe59f473d93ae3967fc24c7c0288c3c7adb7130"),
    ImageSpec("skimage/coffee.png", "scikit-image", "coffee.png",
              "cc02f8ca188b167c775a7101b5d767d1e71792cf762c33d6fa15a4599b5a8de7"),
]


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def package_data_dir(package: str) -> Path:
    if package == "scikit-image":
        import skimage.data  # the bundled (non-pooch) images live next to it

        return Path(skimage.data.__file__).parent
    if package == "matplotlib":
        import matplotlib

        return Path(matplotlib.get_data_path())
    raise ValueError(package)


def load_image(spec: ImageSpec) -> np.ndarray:
    """Return the image as uint8 RGB (H, W, 3)."""
    path = package_data_dir(spec.package) / spec.relpath
    data = path.read_bytes()
    got = sha256_bytes(data)
    if got != spec.sha256:
        sys.exit(f"ERROR: {path} has sha256 {got}, expected {spec.sha256}; "
                 f"this {spec.package} version ships a different image "
                 f"(fixtures were made with the versions in tests/fixtures/README.md)")
    img = np.asarray(Image.open(io.BytesIO(data)))
    if img.ndim == 2:  # grayscale -> 3 identical channels
        img = np.stack([img] * 3, axis=-1)
    img = img[..., :3]  # drop alpha if any
    if spec.rot90_cw:
        img = np.rot90(img, k=-1)
    return np.ascontiguousarray(img, dtype=np.uint8)
