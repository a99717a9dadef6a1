"""The `hailo-decode` command run in-process on argument lists and small files, for
tests/test_no_silent_mistakes.py and the `cli_args` fuzz harness (tests/fuzz/test_fuzz_cli.py).

Rule (issue 28): any command line ends with status 0 (done) or 2 (a mistake in it), never with a
Python traceback; a mistake prints one line on stderr after "hailo-decode COMMAND: " (argparse's
own refusals: the usage, then one "error:" line). The work behind `bench` (minutes of measuring)
is replaced by a stub: what is checked is the command line and the files, which bench checks
before it measures."""

from __future__ import annotations

import contextlib
import io
import json
import sys
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

import numpy as np

from hailo_decode import bench as bench_module
from hailo_decode import bench_tasks
from hailo_decode.cli import main
from hailo_decode.demo_data import demo_frames, load_demo_frames

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: hef_writer
import hef_writer as w  # noqa: E402

__all__ = ["make_files", "run_cli", "check_outcome", "FILE_KINDS", "Outcome"]

Outcome = Tuple[int, str, str]

# Kinds of file a command line may name: the good ones, and garbage of every sort.
FILE_KINDS = ("hef", "recording", "gt", "missing", "folder", "empty", "text", "random", "npy", "npz_garbage",
              "npz_truncated", "npz_object", "npz_floats", "json_list", "json_bad", "gt_no_sizes", "hef_zero_side",
              "hef_truncated", "out_file", "out_in_missing_folder", "under_a_file")


def make_files(root: Path) -> Dict[str, str]:
    """One file (or path) of each FILE_KINDS kind under `root`."""
    root.mkdir(parents=True, exist_ok=True)
    p: Dict[str, Path] = {k: root / k for k in FILE_KINDS}
    hef = w.yolov8_hef(1)
    p["hef"] = root / "model.hef"
    p["hef"].write_bytes(hef)
    data = load_demo_frames()
    frames = {k: v[:2] for k, v in demo_frames(data).items()}
    p["recording"] = root / "rec.npz"
    np.savez(p["recording"], image_ids=np.array([1, 2]), **frames)
    p["npz_floats"] = root / "floats.npz"
    np.savez(p["npz_floats"], image_ids=np.array([1, 2]), **{k: v.astype(np.float32) for k, v in frames.items()})
    gt = {"images": [{"id": 1, "height": 480, "width": 640}, {"id": 2, "height": 480, "width": 640}],
          "annotations": [{"id": 1, "image_id": 1, "category_id": 1, "bbox": [10, 10, 50, 80], "area": 4000,
                           "iscrowd": 0}],
          "categories": [{"id": 1, "name": "Normal"}, {"id": 2, "name": "Fall"}]}
    p["gt"] = root / "gt.json"
    p["gt"].write_text(json.dumps(gt))
    p["gt_no_sizes"].write_text(json.dumps({**gt, "images": [{"id": 1}, {"id": 2}]}))
    p["folder"].mkdir(exist_ok=True)
    p["empty"].write_bytes(b"")
    p["text"].write_text("hello, not a model\n")
    p["random"].write_bytes(np.random.default_rng(0).bytes(300))
    p["npy"] = root / "one.npy"
    np.save(p["npy"], np.zeros(3))
    p["npz_garbage"].write_bytes(b"PK\x03\x04" + b"\x00" * 60)
    p["npz_truncated"].write_bytes(p["recording"].read_bytes()[:200])
    np.savez(root / "object.npz", a=np.array([{}], dtype=object))
    p["npz_object"] = root / "object.npz"
    p["json_list"].write_text("[1, 2, 3]")
    p["json_bad"].write_text("{\"images\": [")
    p["hef_zero_side"] = root / "zero.hef"
    p["hef_zero_side"].write_bytes(w.yolov8_hef(1, image_hw=(0.25, 640.0)))
    p["hef_truncated"].write_bytes(hef[:len(hef) // 2])
    p["out_file"] = root / "out.json"
    p["out_in_missing_folder"] = root / "no_such_folder" / "out.json"
    p["under_a_file"] = p["text"] / "sub"
    return {k: str(v) for k, v in p.items()}


def _stub_bench(args) -> int:
    print("bench: stub (the command line was accepted)")
    return 0


def run_cli(argv: Sequence[str]) -> Outcome:
    """main(argv) in-process: (status, stdout, stderr). argparse's SystemExit is a status; any
    other exception escapes (a traceback: the test fails)."""
    out, err = io.StringIO(), io.StringIO()
    saved = bench_module.main, bench_tasks.main
    bench_module.main = bench_tasks.main = _stub_bench  # type: ignore[assignment]
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                rc = main(list(argv))
            except SystemExit as e:
                rc = e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
    finally:
        bench_module.main, bench_tasks.main = saved
    return int(rc), out.getvalue(), err.getvalue()


def check_outcome(argv: Sequence[str], outcome: Outcome) -> List[str]:
    """The problems with an outcome (empty: it keeps the rule)."""
    rc, _, err = outcome
    problems = []
    if rc not in (0, 2):
        problems.append(f"exit status {rc}")
    if "Traceback" in err:
        problems.append("a traceback on stderr")
    if rc == 2:
        lines = [ln for ln in err.splitlines() if ln.strip()]
        if not lines:
            problems.append("status 2 with nothing on stderr")
        elif lines[0].startswith("usage:"):
            if not lines[-1].startswith("hailo-decode") or ": error: " not in lines[-1]:
                problems.append(f"argparse's refusal without its error line: {err!r}")
        elif len(lines) != 1 or not lines[0].startswith("hailo-decode "):
            problems.append(f"not one line naming the command: {err!r}")
    return problems
