"""YOLOv5-seg outputs as hailonet hands them to TAPPAS' libyolov5seg_post.so, for the plugin's
tests against that post-process built from ../shared/tappas (tests/test_tappas_yolov5seg.py,
tests/test_gstreamer_yolov5seg.py) and the side-by-side benchmark (benchmarks/tappas_yolov5seg.py).

That post-process reads its three branches as uint16 and the prototype as uint8 whatever the
tensors say (common::get_xtensor_uint16 / get_xtensor), as the Model Zoo's yolov5*-seg HEFs give
them: so do these. Objects are planted at chosen cells (objectness and one class high, the rest
low), with a neighbour each so that NMS has work, boxes of a few strides, some across the edges."""

from __future__ import annotations

from typing import Dict, List, Tuple

import numpy as np

from tappas.plugin_host import Out

STRIDES = (8, 16, 32)
ANCHORS = {8: (10, 13, 16, 30, 33, 23), 16: (30, 61, 62, 45, 59, 119), 32: (116, 90, 156, 198, 373, 326)}
NAMES = {"proto": "yolov5n_seg/conv63", 8: "yolov5n_seg/conv48", 16: "yolov5n_seg/conv55", 32: "yolov5n_seg/conv61"}
HEAD_ZP, HEAD_SCALE = 32768.0, 0.0005   # uint16 heads: [-16.4, 16.4]
PROTO_ZP, PROTO_SCALE = 128.0, 0.025    # uint8 prototype


def config(score_threshold: float = 0.3, iou_threshold: float = 0.5, size: int = 640) -> dict:
    """libyolov5seg_post.so's config file (its keys, TAPPAS' order: strides from the coarsest)."""
    return {
        "iou_threshold": iou_threshold,
        "score_threshold": score_threshold,
        "outputs_size": [size // 32, size // 16, size // 8],
        "outputs_name": [NAMES["proto"], NAMES[8], NAMES[16], NAMES[32]],
        "anchors": [list(ANCHORS[32]), list(ANCHORS[16]), list(ANCHORS[8])],
        "input_shape": [size, size],
        "strides": [32, 16, 8],
    }


def _q16(x: np.ndarray) -> np.ndarray:
    return np.clip(np.round(x / HEAD_SCALE + HEAD_ZP), 0, 65535).astype(np.uint16)


def frames(count: int = 3, objects: int = 20, seed: int = 0, size: int = 640, classes: int = 80,
           edges: bool = True) -> List[Out]:
    """`count` frames of `objects` planted objects each (and a weaker neighbour each)."""
    rng = np.random.default_rng(seed)
    per = 5 + classes + 32
    heads: Dict[int, List[np.ndarray]] = {s: [] for s in STRIDES}
    protos = []
    for _ in range(count):
        planted = 0
        for k, stride in enumerate(STRIDES):
            g = size // stride
            x = rng.normal(0.0, 0.6, size=(g, g, 3, per)).astype(np.float32)
            x[..., 4] = rng.normal(-9.0, 1.0, size=(g, g, 3))          # objectness: nothing
            x[..., 5:5 + classes] = rng.normal(-6.0, 1.0, size=(g, g, 3, classes))
            x[..., 5 + classes:] = rng.normal(0.0, 1.2, size=(g, g, 3, 32))  # mask coefficients
            here = objects // 3 + (1 if k < objects % 3 else 0)
            cells = rng.choice(g * g, size=here, replace=False)
            for cell in cells:
                cy, cx = divmod(int(cell), g)
                if not edges:
                    cy, cx = min(max(cy, 2), g - 3), min(max(cx, 2), g - 3)
                a, c = int(rng.integers(3)), int(rng.integers(classes))
                x[cy, cx, a, 4] = rng.uniform(0.5, 5.0)
                x[cy, cx, a, 5 + c] = rng.uniform(0.0, 4.0)
                x[cy, cx, a, 2:4] = rng.uniform(-0.3, 0.6, size=2)     # sides about the anchor's
                # A neighbour on the same object, weaker, slightly shifted: NMS keeps one of them.
                b = (a + 1) % 3
                x[cy, cx, b, 4] = x[cy, cx, a, 4] - rng.uniform(0.2, 1.0)
                x[cy, cx, b, 5 + c] = x[cy, cx, a, 5 + c]
                x[cy, cx, b, 0:2] = x[cy, cx, a, 0:2] + rng.uniform(-0.1, 0.1, size=2)
                planted += 1
            heads[stride].append(_q16(x.reshape(g, g, 3 * per)))
        assert planted == objects
        p = rng.normal(0.0, 1.0, size=(size // 4, size // 4, 32)).astype(np.float32)
        protos.append(np.clip(np.round(p / PROTO_SCALE + PROTO_ZP), 0, 255).astype(np.uint8))
    outs = [Out(NAMES["proto"], np.stack(protos), "UINT8", PROTO_ZP, PROTO_SCALE)]
    outs += [Out(NAMES[s], np.stack(heads[s]), "UINT16", HEAD_ZP, HEAD_SCALE) for s in STRIDES]
    return outs


def clipped(bbox: List[float], size: Tuple[int, int] = (640, 640)):
    """The plugin's rule for `filter` (docs/gstreamer.md, "Boxes in the picture") applied to a
    box [xmin, ymin, w, h] TAPPAS' post-process gives unclipped: clipped to [0, 1] (float32), None
    when less than one input pixel of it is left."""
    xmin, ymin, w, h = (np.float32(v) for v in bbox)
    one, zero = np.float32(1), np.float32(0)
    x0, y0 = min(max(xmin, zero), one), min(max(ymin, zero), one)
    x1, y1 = min(max(np.float32(xmin + w), zero), one), min(max(np.float32(ymin + h), zero), one)
    W, H = size
    if not (x1 - x0 > 0 and y1 - y0 > 0 and np.float32(W) * (x1 - x0) >= 1 and np.float32(H) * (y1 - y0) >= 1):
        return None
    return [float(x0), float(y0), float(x1 - x0), float(y1 - y0)]
