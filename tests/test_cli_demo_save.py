"""`hailo-decode demo --save DIR`: a PNG per bundled frame, of the photograph's size, with the
detections drawn where they are in original-image pixels."""

from __future__ import annotations

import re
import sys

import numpy as np

import hailo_decode as hd
from hailo_decode import interop
from hailo_decode._install import install_hint
from hailo_decode.cli import main
from hailo_decode.demo_data import load_demo_images

from conftest import demo_config, optional_package, uint8_frames
from test_pictures import _png_header

Image = optional_package("PIL.Image")


def test_demo_images_are_the_frames_photographs(uint8_data):
    images = load_demo_images()
    assert len(images) == len(uint8_data["image_names"])
    for img, hw in zip(images, uint8_data["orig_hw"].tolist()):
        assert img.dtype == np.uint8 and img.shape == (hw[0], hw[1], 3)
    # camera.png and the same photograph turned a quarter clockwise (frames 1 and 2); JPEG leaves
    # them close, not equal
    diff = np.abs(np.rot90(images[1], k=-1).astype(int) - images[2].astype(int))
    assert diff.mean() < 3


def test_demo_save_writes_pictures(tmp_path, capsys, uint8_data):
    out_dir = tmp_path / "pictures"
    assert main(["demo", "--seconds", "0.01", "--save", str(out_dir)]) == 0
    printed = capsys.readouterr().out
    assert len(re.findall(r"wrote .*frame\d\.png", printed)) == 5
    dets = hd.Decoder(demo_config(uint8_data))(uint8_frames(uint8_data))
    for i, d in enumerate(dets):
        path = out_dir / f"frame{i}.png"
        oh, ow = (int(v) for v in uint8_data["orig_hw"][i])
        assert _png_header(path) == (ow, oh)
        pic = np.asarray(Image.open(path).convert("RGB"))
        orig = d.to_original((oh, ow))
        # the best box's left or right edge (inside the image) carries its class colour
        x1, y1, x2, y2 = np.rint(orig.boxes[0]).astype(int)
        colour = interop.class_colour(int(orig.class_ids[0]))
        x = x1 if x1 > 0 else min(x2, ow - 1) - 1
        ym = (y1 + y2) // 2
        assert tuple(pic[ym, x]) == colour, (i, ym, x, pic[ym, x])


def test_demo_save_without_pillow(monkeypatch, tmp_path, capsys):
    for name in ("PIL", "PIL.Image"):
        monkeypatch.setitem(sys.modules, name, None)
    assert main(["demo", "--seconds", "0.01", "--save", str(tmp_path / "x")]) == 2
    assert install_hint("pictures") in capsys.readouterr().err
    assert not (tmp_path / "x").exists()
