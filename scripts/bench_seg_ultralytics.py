"""Times Ultralytics' own torch process_mask on CPU on the data benchmarks/seg_bench.py dumps
(--dump): the dequantized prototype tensor (32, 160, 160), the 20 kept detections' coefficients
and boxes. Run it in an environment with torch and ultralytics (never in the test run):

    python benchmarks/seg_bench.py --dump /tmp/seg_bench.npz
    /path/to/venv-with-ultralytics/bin/python scripts/bench_seg_ultralytics.py /tmp/seg_bench.npz
"""

import statistics
import sys
import time

import numpy as np
import torch
import ultralytics
from ultralytics.utils import ops


def median_us(fn, seconds=1.0):
    fn()
    times = []
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline or len(times) < 5:
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e6


def main(path):
    z = np.load(path)
    protos = torch.from_numpy(z["proto_chw"].astype(np.float32))
    coefs = torch.from_numpy(z["coefs"].astype(np.float32))
    boxes = torch.from_numpy(z["boxes"].astype(np.float32))
    print(f"ultralytics {ultralytics.__version__}, torch {torch.__version__}, {len(coefs)} detections")
    for threads in (1, torch.get_num_threads()):
        torch.set_num_threads(threads)
        with torch.inference_mode():
            up = median_us(lambda: ops.process_mask(protos, coefs, boxes.clone(), (640, 640), upsample=True))
            low = median_us(lambda: ops.process_mask(protos, coefs, boxes.clone(), (640, 640), upsample=False))
        print(f"  torch threads {threads}: process_mask upsample=True {up:.0f} us, upsample=False {low:.0f} us")
    if "ours_full_us" in z.files:
        print(f"  ours (full decode with input-size masks, from the dump): {float(z['ours_full_us']):.0f} us")


if __name__ == "__main__":
    main(sys.argv[1])
