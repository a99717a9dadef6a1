"""Frames for the TAPPAS plugin's benchmark (BENCHMARKS.md, session 14), in the test host's description
format (cpp/tappas/tests/host.cpp), with a config file each:

    python tests/tappas/bench_frames.py OUT_DIR
    hailo_decode_tappas_host --plugin libhailo_decode_tappas.so --config OUT_DIR/detect/config.json \\
        --frames OUT_DIR/detect/frames.txt --bench 200

detect: yolov8n 640, 80 classes, uint8, score threshold 0.2 (the package's bench workload,
hailo_decode.bench.yolov8n_like, 8 frames). segment: yolov8n-seg 640, 80 classes, uint8, 20 objects
a frame (4 frames), Ultralytics' settings (sigmoid, score > 0.25)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Dict, List, Tuple

import numpy as np

import hailo_decode as hd
from hailo_decode.bench import yolov8n_like


def _quantize(x: np.ndarray) -> Tuple[np.ndarray, float, float]:
    lo, hi = float(min(x.min(), 0.0)), float(max(x.max(), 1e-3))
    scale = (hi - lo) / 255
    zp = float(np.round(-lo / scale))
    return np.clip(np.round(x / scale + zp), 0, 255).astype(np.uint8), zp, scale


def write(folder: Path, outputs: List[Tuple[str, np.ndarray, float, float]], config: dict) -> None:
    """outputs: (name, uint8 (frames, H, W, C), zp, scale)."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = [f"outputs {len(outputs)}"]
    for i, (name, data, zp, scale) in enumerate(outputs):
        path = folder / f"out{i}.bin"
        np.ascontiguousarray(data).tofile(path)
        h, w, c = data.shape[1:]
        lines.append(f"{name} {h} {w} {c} UINT8 {float(zp)!r} {float(scale)!r} 0 0 0 {data[0].nbytes} {path}")
    lines.append(f"frames {outputs[0][1].shape[0]}")
    (folder / "frames.txt").write_text("\n".join(lines) + "\n")
    (folder / "config.json").write_text(json.dumps(config))


def segment_frames(frames: int = 4, objects: int = 20, seed: int = 0) -> Tuple[List[Tuple[str, np.ndarray, float, float]], Dict]:
    rng = np.random.default_rng(seed)
    size, nc = 640, 80
    raw: Dict[str, List[np.ndarray]] = {}
    for _ in range(frames):
        placed = 0
        for k, stride in enumerate((8, 16, 32)):
            g = size // stride
            cls = rng.normal(-7.0, 0.7, size=(g, g, nc)).astype(np.float32)
            box = rng.normal(0.0, 1.0, size=(g, g, 4, 16)).astype(np.float32)
            box[..., 3 + 2 * k] += 4.0  # sides of a few strides: boxes a tenth of the input or so
            here = objects // 3 + (1 if k < objects % 3 else 0)
            cells = rng.choice((g - 2) * (g - 2), size=here, replace=False)
            for cell in cells:
                cy, cx = 1 + cell // (g - 2), 1 + cell % (g - 2)
                cls[cy, cx, int(rng.integers(nc))] = rng.uniform(1.0, 4.0)
                placed += 1
            coef = rng.normal(0.0, 1.5, size=(g, g, 32)).astype(np.float32)
            for kind, x in (("box", box.reshape(g, g, 64)), ("cls", cls), ("mask", coef)):
                raw.setdefault(f"seg/{kind}{stride}", []).append(x)
        assert placed == objects
        raw.setdefault("seg/proto", []).append(rng.normal(0.0, 1.0, size=(160, 160, 32)).astype(np.float32))
    outputs = []
    for name, xs in raw.items():
        q, zp, scale = _quantize(np.stack(xs))
        outputs.append((name, q, zp, scale))
    return outputs, {"semantics": "ultralytics", "score_threshold": 0.25}


def main(out: Path) -> None:
    cfg, frames = yolov8n_like("uint8", batch=8)
    det = [(o.name, frames[o.name], float(np.ravel(o.zp)[0]), float(np.ravel(o.scale)[0])) for o in cfg.outputs]
    write(out / "detect", det, {"score_threshold": 0.2})
    seg, config = segment_frames()
    write(out / "segment", seg, config)
    # How many detections the Python decoder keeps a frame (the figures' context).
    for name, outs, settings in (("detect", det, {"score_threshold": 0.2}), ("segment", seg, config)):
        infos = [hd.OutputInfo(n, d.shape[1:], "uint8", zp=zp, scale=s) for n, d, zp, s in outs]
        dec = hd.Decoder(hd.DecoderConfig(infos, **settings))
        counts = [len(dec({n: d[i] for n, d, _, _ in outs})) for i in range(outs[0][1].shape[0])]
        print(f"{name}: {len(counts)} frames, detections per frame {counts}")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "build/tappas-bench"))
