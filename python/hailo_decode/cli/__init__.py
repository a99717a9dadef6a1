"""The `hailo-decode` command, the package's top floor (nothing imports it): `demo` decodes real
model outputs shipped in the package; `bench` measures the decoder against NumPy baselines and a
read pass; `inspect` reads a .hef file; `eval` scores recorded raw outputs against COCO ground
truth. One module a command, each with add_parser()."""

from __future__ import annotations

import argparse
import sys
from typing import Optional, Sequence

from .. import cmake_info
from . import bench, demo, eval, inspect

__all__ = ["main"]

_COMMANDS = (demo, bench, inspect, eval)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="hailo-decode", description=__doc__)
    cmake_info.add_cmakedir_argument(parser)  # `hailo-decode --cmakedir`, as `pybind11 --cmakedir`
    sub = parser.add_subparsers(dest="command", required=True)
    for command in _COMMANDS:
        command.add_parser(sub)
    args = parser.parse_args(argv)
    return int(args.run(args))


if __name__ == "__main__":
    sys.exit(main())
