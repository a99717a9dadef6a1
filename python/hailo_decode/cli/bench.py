"""`hailo-decode bench`: ours vs NumPy baselines vs a read pass (hailo_decode.bench; BENCHMARKS.md)."""

from __future__ import annotations

import argparse
import os

from .errors import UserError, refuse_unused, writable_file

__all__ = ["add_parser"]

DESCRIPTION = """\
Measure how long hailo-decode takes per frame on synthetic YOLOv8 outputs (80 classes at 640x640,
uint8 and uint16, at several score thresholds) and on the sample model's real frames, against
two NumPy decoders and a pass that only reads the arrays. Takes a few minutes (--quick: under one).

With --tasks: pose and oriented-box (OBB) heads instead, against decoding their boxes alone,
NumPy, and rotated NMS on its own."""


def add_parser(subparsers: "argparse._SubParsersAction") -> argparse.ArgumentParser:
    bench = subparsers.add_parser("bench", help="measure the decoder's time per frame against NumPy",
                                  description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    bench.add_argument("--quick", action="store_true", help="shorter timing runs (less precise)")
    bench.add_argument("--json", metavar="FILE", help="also write the results to FILE as JSON")
    bench.add_argument("--plot", metavar="PNG", help="also draw time per frame against candidates per frame into "
                                                     "an image (needs matplotlib; not with --tasks)")
    bench.add_argument("--tasks", action="store_true",
                       help="measure pose and OBB heads instead of detection")
    bench.set_defaults(run=_run)
    return bench


def _check_plot(path: str) -> None:
    """--plot needs matplotlib and a file type it writes: found before minutes of measuring."""
    from .. import bench  # matplotlib's check lives with the plot

    try:
        plt = bench._need_matplotlib()
    except ImportError as e:
        raise UserError(str(e)) from None
    ext = os.path.splitext(path)[1][1:].lower()
    fig = plt.figure()
    try:
        kinds = fig.canvas.get_supported_filetypes()
    finally:
        plt.close(fig)
    if ext and ext not in kinds:
        raise UserError(f"--plot {path}: matplotlib cannot write .{ext} files; use .png (or {', '.join(sorted(kinds))})")


def _run(args: argparse.Namespace) -> int:
    if args.tasks:
        refuse_unused([("--plot", args.plot is not None)], "--tasks measures pose and OBB heads, which have no plot")
    writable_file("--json", args.json)
    writable_file("--plot", args.plot)
    if args.plot is not None:
        _check_plot(args.plot)
    if args.tasks:
        from .. import bench_tasks

        return bench_tasks.main(args)
    from .. import bench  # the workloads and NumPy baselines: loaded only when asked for

    return bench.main(args)
