"""The `hailo-decode` command, the package's top floor (nothing imports it): one module a command,
each with add_parser(); errors.py holds how they report a user's mistake (UserError: one line,
exit status 2), caught once here."""

from __future__ import annotations

import argparse
import io
import os
import sys
from typing import Optional, Sequence

from .. import __version__, cmake_info
from . import bench, demo, eval, inspect, tappas
from .errors import EXIT_CLOSED_PIPE, EXIT_USER_ERROR, UserError

__all__ = ["main"]

_COMMANDS = (demo, bench, inspect, eval, tappas)

DESCRIPTION = """\
Decode raw YOLO outputs of Hailo accelerators on the host, without a device:
  demo     decode the sample model outputs that come with the package, and time it
  bench    measure the decoder against NumPy on synthetic outputs
  inspect  show what a .hef file holds and how hailo-decode would decode it
  eval     score recorded model outputs against COCO ground truth (mAP)
  tappas   build the TAPPAS hailofilter plugin for GStreamer pipelines (`tappas build`)
Run `hailo-decode COMMAND --help` for a command's options.

Exit status: 0 done; 2 a mistake in the command line or an input file (one line on stderr says
which and what to do); 141 the output was piped into a program that stopped reading it early
(e.g. `hailo-decode inspect model.hef | head`), as for other command-line tools."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="hailo-decode", description=DESCRIPTION,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    # `hailo-decode --cmakedir`, as `pybind11 --cmakedir`; not installed (an editable install): a user error.
    cmake_info.add_cmakedir_argument(parser, missing_status=EXIT_USER_ERROR)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in _COMMANDS:
        command.add_parser(sub)
    return parser


def _closed_pipe() -> int:
    """The reader of our output went away: end quietly. As Python's documentation advises (the
    signal module, "Note on SIGPIPE"), stdout is pointed at devnull first, so that the
    interpreter's last flush at exit does not fail on the closed pipe again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        pass  # stdout is not a file (captured in-process): nothing will flush into the pipe
    return EXIT_CLOSED_PIPE


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)  # a bad option: argparse prints the usage and exits with 2
    try:
        status = int(args.run(args))
        sys.stdout.flush()  # a closed pipe shows here, not at exit
        return status
    except UserError as e:
        print(f"{parser.prog} {args.command}: {e}", file=sys.stderr)
        return EXIT_USER_ERROR
    except BrokenPipeError:
        return _closed_pipe()


if __name__ == "__main__":
    sys.exit(main())
