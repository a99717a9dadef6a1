#!/usr/bin/env python3
# Ratio of the C++ decode to the read-pass floor, alternating rounds in one process (yolov8n-like uint8).
import statistics, sys, numpy as np
from hailo_decode import bench, _core
from hailo_decode.decoder import Decoder
th = float(sys.argv[1]) if len(sys.argv) > 1 else 0.2
cfg, frames = bench.yolov8n_like("uint8", batch=1)
cfg = cfg.replace(score_threshold=th)
dec = Decoder(cfg)
arrays = [np.ascontiguousarray(frames[o.name][:1]) for o in cfg.outputs]
cls = [np.ascontiguousarray(frames[h.cls][:1]) for h in cfg.heads]
ratios, dts = [], []
for r in range(12):
    dec._core.time_decode(arrays, 1, 200); _core.time_read_pass(cls, 200)
    t = statistics.median(dec._core.time_decode(arrays, 1, 1500))
    f = statistics.median(_core.time_read_pass(cls, 1500))
    ratios.append(t / f); dts.append(t)
print(f"th {th}: decode/floor median {statistics.median(ratios):.3f} (min {min(ratios):.3f}), decode median {statistics.median(dts)*1e6:.2f}")
