#!/usr/bin/env python3
"""Write the photographs of the bundled demo frames, for `hailo-decode demo --save DIR`:
python/hailo_decode/data/fall_images.npz.

The same images, in the same order, as scripts/make_fixtures.py feeds the model (its
fall_uint8.npz holds the model's head outputs on them, letterboxed), at their original size, so
that detections undone to the original image (Detections.to_original) land on them. Stored as
JPEG bytes (quality 90) to keep the package small: `jpeg{i}` uint8 arrays, with `image_names`
and `orig_hw` to check against fall_uint8.npz.

Needs: numpy, pillow, scikit-image, matplotlib (the packages that ship the images).
Usage:  python scripts/make_demo_images.py [--out PATH]
"""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path

import numpy as np
from PIL import Image

from fixture_images import IMAGES, load_image

REPO_ROOT = Path(__file__).resolve().parent.parent
JPEG_QUALITY = 90


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=REPO_ROOT / "python/hailo_decode/data/fall_images.npz")
    args = ap.parse_args()
    frames = REPO_ROOT / "python/hailo_decode/data/fall_uint8.npz"
    with np.load(frames, allow_pickle=False) as z:
        names, orig_hw = z["image_names"].tolist(), z["orig_hw"]
    if names != [s.name for s in IMAGES]:
        sys.exit(f"ERROR: {frames} holds images {names}, scripts/fixture_images.py lists "
                 f"{[s.name for s in IMAGES]}")
    out = {"image_names": np.array(names, dtype=str), "orig_hw": np.asarray(orig_hw, dtype=np.int32)}
    for i, spec in enumerate(IMAGES):
        img = load_image(spec)
        if img.shape[:2] != tuple(orig_hw[i]):
            sys.exit(f"ERROR: {spec.name} is {img.shape[:2]}, fall_uint8.npz says {tuple(orig_hw[i])}")
        buf = io.BytesIO()
        Image.fromarray(img).save(buf, format="JPEG", quality=JPEG_QUALITY)
        out[f"jpeg{i}"] = np.frombuffer(buf.getvalue(), dtype=np.uint8)
        print(f"{spec.name}: {img.shape[1]}x{img.shape[0]}, {len(buf.getvalue())} bytes of JPEG")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    np.savez(args.out, **out)  # JPEG does not compress further
    print(f"wrote {args.out} ({args.out.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
