"""The plugin's YOLOv5-seg filter() against TAPPAS' own libyolov5seg_post.so, side by side in one run.

Both .so files are loaded by the plugin's test host (cpp/tappas/tests/host.cpp, `--bench N
--against TAPPAS.so`), which per frame builds the ROI and its tensors outside the timing, then times
the plugin's filter(), the core's Decoder::decode alone and TAPPAS' filter() on the same ROI, the
three taking turns going first; medians per frame of wall time and of the process's CPU time.
TAPPAS' .so is built from the unmodified source in ../shared/tappas/5.1 with g++ -O2 (its meson
build's flags; test-only, never part of the package). It runs its three branches on std::async
threads: its wall time may use up to three cores, the plugin's one; the process CPU time charges
it for all of them. The same frames: a 640x640 yolov5n-seg (80 classes, grids 80/40/20, prototype
160x160x32), the branches uint16 and the prototype uint8 as that post-process reads them
(tests/tappas/yolov5seg_frames.py), N objects planted a frame (each with a weaker neighbour on
another anchor), its config file (score 0.3, IoU 0.5); the objects of both are the same
(tests/test_tappas_yolov5seg.py).

    python benchmarks/tappas_yolov5seg.py [--objects 5 20] [--rounds 100] [--out build/tappas-yolov5seg]

Needs the installed package with its C++ side, g++, Debian's libxtensor-dev and rapidjson-dev.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the frames and TAPPAS' build command, shared with the tests

from tappas import tappas_yolov5seg, yolov5seg_frames as v5  # noqa: E402
from tappas.plugin_host import SHARED, host_env, write_frames  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--objects", type=int, nargs="+", default=[5, 20])
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--frames", type=int, default=4)
    ap.add_argument("--out", type=Path, default=ROOT / "build" / "tappas-yolov5seg")
    args = ap.parse_args()
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)

    from hailo_decode.cli import main as cli
    include = f"{SHARED / '5.1' / 'tappas'};{SHARED / '5.1' / 'hailort'}"
    if cli(["tappas", "build", "--include", include, "--out", str(out), "--build-dir", str(out / "build"), "--host",
            "--jobs", "2"]) != 0:
        return 1
    tappas = out / "libyolov5seg_post.so"
    r = subprocess.run(tappas_yolov5seg.command("5.1", tappas), capture_output=True, text=True, env=host_env())
    if r.returncode != 0:
        print(r.stderr[-3000:], file=sys.stderr)
        return 1
    config = out / "yolov5n_seg.json"
    config.write_text(json.dumps(v5.config(score_threshold=0.3, iou_threshold=0.5)))
    for n in args.objects:
        desc = write_frames(out / f"frames{n}", v5.frames(count=args.frames, objects=n, seed=n))
        cmd = [str(out / "hailo_decode_tappas_host"), "--plugin", str(out / "libhailo_decode_tappas.so"), "--config",
               str(config), "--function", "filter", "--frames", str(desc), "--bench", str(args.rounds),
               "--against", str(tappas)]
        r = subprocess.run(cmd, capture_output=True, text=True, env=host_env())
        if r.returncode != 0:
            print(r.stderr[-3000:], file=sys.stderr)
            return 1
        res = json.loads(r.stdout)
        print(f"{n} objects: plugin filter() {res['filter_us']:.1f} us ({res['detections_per_frame']:.1f} detections), "
              f"Decoder::decode alone {res['decode_us']:.1f} us, TAPPAS libyolov5seg_post.so filter() "
              f"{res['against_us']:.1f} us ({res['against_detections_per_frame']:.1f} detections): "
              f"{res['against_us'] / res['filter_us']:.1f}x; process CPU time {res['filter_cpu_us']:.1f} us against "
              f"{res['against_cpu_us']:.1f} us: {res['against_cpu_us'] / res['filter_cpu_us']:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
