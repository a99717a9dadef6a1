"""Ultralytics' own retina masks (retina_masks=True) for a seg fixture, at original image sizes whose
letterbox is the fixture's 640 x 640 input: tests/fixtures/seg_retina_yolo11n.npz.

Run in an environment with torch and Ultralytics 8.4.190 (never in the test run):

    python scripts/make_retina_reference.py [tests/fixtures/seg_transplant_yolo11n.npz] \
        [--out tests/fixtures/seg_retina_yolo11n.npz] [--prefix lo_]

From the fixture's stored float heads (f0_box_*, f0_cls_*, f0_mask_*, f0_proto), Ultralytics' own
decode (the Segment head's _inference) and non_max_suppression at the fixture's reference set
(`--prefix`: "" conf 0.25, "lo_" conf 0.05) give the kept rows (box xyxy in input pixels, score,
class, 32 coefficients); checked equal to the fixture's stored reference boxes. Then, for each
original size, what SegmentationPredictor.construct_result does with retina_masks=True:

    boxes = ops.scale_boxes(img.shape[2:], pred[:, :4], orig.shape)
    masks = ops.process_mask_native(proto, pred[:, 6:], boxes, orig.shape[:2])

The letterbox geometry is checked first: Ultralytics' LetterBox (auto=False, centred) puts an
original of that size into exactly the 640 x 640 input with the padding scale_boxes assumes.

Stored per size tag t ("480x640", ...): t/orig_hw, t/boxes (scaled, clipped, float32),
t/masks (np.packbits of the (n, h, w) uint8 masks along the last axis), t/up (the upsampling
factor process_mask_native chose); and once: boxes_input (n, 4) float32 (NMS boxes, input pixels,
unclipped), coefs (n, 32) float32, scores, classes; meta (JSON).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
from pathlib import Path

import numpy as np

SIZES = [(480, 640), (427, 640), (636, 640), (854, 1280), (240, 320)]
INPUT = 640


def head_rows(fx: dict, meta: dict, conf: float, iou: float, max_det: int):
    """Ultralytics' decode + NMS of the stored heads: (rows (n, 6 + 32) float32, proto (32, mh, mw))."""
    import torch
    from ultralytics.nn.tasks import SegmentationModel
    from ultralytics.utils import nms

    strides = meta["strides"]
    model = SegmentationModel("yolo11n-seg.yaml", nc=int(meta["nc"]), verbose=False).eval()
    head = model.model[-1]

    def cat(kind):
        return torch.cat([torch.from_numpy(fx[f"f0_{kind}_{s}"]).permute(2, 0, 1).reshape(
            1, fx[f"f0_{kind}_{s}"].shape[-1], -1) for s in strides], dim=2)

    feats = [torch.zeros(1, 1, *fx[f"f0_box_{s}"].shape[:2]) for s in strides]
    d = {"boxes": cat("box"), "scores": cat("cls"), "feats": feats, "mask_coefficient": cat("mask")}
    with torch.no_grad():
        y = head._inference(d)
        rows = nms.non_max_suppression(y, conf, iou, None, False, max_det=max_det, nc=int(meta["nc"]))[0]
    proto = torch.from_numpy(fx["f0_proto"]).permute(2, 0, 1).contiguous()
    return rows, proto


def letterbox_check(h: int, w: int) -> dict:
    """Ultralytics' LetterBox on an (h, w) image: the content's rows and columns in the input."""
    from ultralytics.data.augment import LetterBox

    img = np.full((h, w, 3), 7, np.uint8)
    out = LetterBox(new_shape=(INPUT, INPUT), auto=False, scale_fill=False, scaleup=True, center=True)(image=img)
    assert out.shape[:2] == (INPUT, INPUT), out.shape
    content = out[..., 0] != 114
    rows, cols = np.where(content.any(axis=1))[0], np.where(content.any(axis=0))[0]
    top, left = int(rows[0]), int(cols[0])
    new_h, new_w = int(rows[-1]) - top + 1, int(cols[-1]) - left + 1
    # What scale_boxes (and hailo_decode's to_original) assume for this size.
    gain = min(INPUT / h, INPUT / w)
    want_h, want_w = max(round(h * gain), 1), max(round(w * gain), 1)
    want_top, want_left = round((INPUT - want_h) / 2 - 0.1), round((INPUT - want_w) / 2 - 0.1)
    assert (top, left, new_h, new_w) == (want_top, want_left, want_h, want_w), \
        f"LetterBox of {h}x{w}: content at {(top, left, new_h, new_w)}, scale_boxes assumes {(want_top, want_left, want_h, want_w)}"
    return {"top": top, "left": left, "content_hw": [new_h, new_w]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("fixture", nargs="?", default="tests/fixtures/seg_transplant_yolo11n.npz")
    ap.add_argument("--out", default="tests/fixtures/seg_retina_yolo11n.npz")
    ap.add_argument("--prefix", default="lo_", help="the fixture's reference set (its r0 rows are checked)")
    args = ap.parse_args()

    import torch
    import ultralytics
    from ultralytics.utils import ops

    src = Path(args.fixture)
    fx = dict(np.load(src))
    meta = json.loads(str(fx["meta"]))
    ref = meta["ref_sets"]["(none)" if args.prefix == "" else args.prefix]
    rows, proto = head_rows(fx, meta, float(ref["conf"]), float(ref["iou"]), int(ref["max_det"]))
    # The same detections as the fixture's reference (predict clips boxes to the 640 x 640 image).
    want = fx[args.prefix + "r0_boxes"]
    got = rows[:, :4].numpy().clip(0, INPUT)
    assert got.shape == want.shape and np.abs(got - want).max() < 1e-3, (got, want)

    out = {
        "boxes_input": rows[:, :4].numpy().astype(np.float32),
        "scores": rows[:, 4].numpy().astype(np.float32),
        "classes": rows[:, 5].numpy().astype(np.int32),
        "coefs": rows[:, 6:].numpy().astype(np.float32),
    }
    sizes = {}
    for h, w in SIZES:
        tag = f"{h}x{w}"
        lb = letterbox_check(h, w)
        mh, mw = proto.shape[1:]
        gain = min(4 * mh / h, 4 * mw / w)
        pad = (4 * mh - max(round(h * gain), 1)) | (4 * mw - max(round(w * gain), 1))
        up = 4 // math.gcd(4, pad | pad // 2)  # process_mask_native's own choice, recorded
        pred = rows.clone()
        with torch.no_grad():
            boxes = ops.scale_boxes((INPUT, INPUT), pred[:, :4], (h, w, 3))
            masks = ops.process_mask_native(proto, pred[:, 6:], boxes, (h, w)).numpy().astype(np.uint8)
        assert masks.shape == (len(rows), h, w)
        out[f"{tag}/orig_hw"] = np.array([h, w], np.int64)
        out[f"{tag}/boxes"] = boxes.numpy().astype(np.float32)
        out[f"{tag}/masks"] = np.packbits(masks, axis=-1)
        out[f"{tag}/up"] = np.array(up, np.int64)
        sizes[tag] = dict(lb, up=up, mask_pixels=[int(m.sum()) for m in masks])
        print(f"{tag}: letterbox {lb}, process_mask_native upsamples {up}x, mask pixels {sizes[tag]['mask_pixels']}")
    out["meta"] = np.array(json.dumps({
        "source_fixture": src.name, "source_sha256": hashlib.sha256(src.read_bytes()).hexdigest(),
        "ref_set": args.prefix or "(none)", "conf": ref["conf"], "iou": ref["iou"], "max_det": ref["max_det"],
        "ultralytics": ultralytics.__version__, "torch": torch.__version__, "input": [INPUT, INPUT],
        "path": "SegmentationPredictor.construct_result with retina_masks=True: ops.scale_boxes then "
                "ops.process_mask_native (empty masks kept here; predict would drop them)",
        "sizes": sizes,
    }))
    np.savez_compressed(args.out, **out)
    print(f"wrote {args.out} ({Path(args.out).stat().st_size} bytes), {len(rows)} detections")


if __name__ == "__main__":
    main()
