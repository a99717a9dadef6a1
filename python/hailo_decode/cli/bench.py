"""`hailo-decode bench`: ours vs NumPy baselines vs a read pass (hailo_decode.bench; BENCHMARKS.md)."""

from __future__ import annotations

import argparse

__all__ = ["add_parser"]


def add_parser(subparsers: "argparse._SubParsersAction") -> argparse.ArgumentParser:
    bench = subparsers.add_parser("bench", help="measure ours vs NumPy baselines vs a read pass (see BENCHMARKS.md)")
    bench.add_argument("--quick", action="store_true", help="shorter time budgets")
    bench.add_argument("--json", metavar="FILE", help="write the results as JSON")
    bench.add_argument("--plot", metavar="PNG", help="plot time per frame against candidates per frame (needs matplotlib)")
    bench.set_defaults(run=_run)
    return bench


def _run(args: argparse.Namespace) -> int:
    from .. import bench  # the workloads and NumPy baselines: loaded only when asked for

    return bench.main(args)
