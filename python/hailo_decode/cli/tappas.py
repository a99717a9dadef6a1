"""`hailo-decode tappas build`: builds the TAPPAS hailofilter plugin libhailo_decode_tappas.so
(docs/gstreamer.md) from the sources this package carries (hailo_decode/tappas), against its own
static C++ core (hailo_decode.cmake_dir()) and the TAPPAS headers of this machine (pkg-config
hailo-tappas-core, as Hailo's packages install them on a Raspberry Pi 5, or --include). Prints the
.so's path and a ready gst-launch-1.0 line. Needs cmake (pip install cmake) and a C++17 compiler."""

from __future__ import annotations

import argparse
import importlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Union

from .. import cmake_info
from .errors import UserError

__all__ = ["add_parser", "run_tappas", "plugin_sources", "TappasBuildError", "PLUGIN_NAME"]

PLUGIN_NAME = "libhailo_decode_tappas.so"
HOST_NAME = "hailo_decode_tappas_host"
_PACKAGE_DIR = Path(__file__).resolve().parents[1]


class TappasBuildError(UserError):
    """A reason the plugin cannot be built here, in one line that says what to do (main() prints
    it after the command's name and exits with status 2)."""


def add_parser(subparsers: "argparse._SubParsersAction") -> argparse.ArgumentParser:
    """Registers `tappas` (subcommand `build`) on the `hailo-decode` command's subparsers."""
    p = subparsers.add_parser("tappas", help="build the TAPPAS hailofilter plugin (GStreamer pipelines, hailo-apps)",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    actions = p.add_subparsers(dest="tappas_action", required=True, metavar="ACTION")
    b = actions.add_parser("build", help="build libhailo_decode_tappas.so against this machine's TAPPAS headers",
                           description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    b.add_argument("--include", metavar="DIR;DIR", default=None,
                   help="the TAPPAS and HailoRT header folders, ';'-separated (default: pkg-config hailo-tappas-core)")
    b.add_argument("--out", metavar="DIR", default=".", help="where to put the .so (default: the current folder)")
    b.add_argument("--build-dir", metavar="DIR", default=None,
                   help="CMake's build folder, kept (default: a temporary one, removed afterwards)")
    b.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="parallel compile jobs")
    b.add_argument("--host", action="store_true",
                   help="also build the test host (tests/host.cpp: runs the plugin as hailofilter does)")
    b.add_argument("--verbose", action="store_true", help="show CMake's and the compiler's output")
    p.set_defaults(run=run_tappas)
    return p


def plugin_sources() -> Path:
    """The plugin's sources: those the wheel carries, else (a source checkout) the repository's."""
    for candidate in (_PACKAGE_DIR / "tappas", _PACKAGE_DIR.parents[1] / "cpp" / "tappas"):
        if (candidate / "CMakeLists.txt").is_file() and (candidate / "entry_points.cpp").is_file():
            return candidate
    raise TappasBuildError(f"the plugin's sources are not installed at {_PACKAGE_DIR / 'tappas'}: install hailo-decode "
                           "with pip (not in editable mode)")


def _tool_env() -> Dict[str, str]:
    # A sanitizer runtime preloaded into this Python (CI) is not for cmake and the compiler.
    return {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}


def _cmake() -> str:
    found = shutil.which("cmake")
    if found:
        return found
    try:  # the cmake wheel (pip install cmake) keeps its binary in its package
        bin_dir = getattr(importlib.import_module("cmake"), "CMAKE_BIN_DIR", None)
        if bin_dir and (Path(bin_dir) / "cmake").is_file():
            return str(Path(bin_dir) / "cmake")
    except ImportError:
        pass
    raise TappasBuildError("cmake not found: install it (pip install cmake, or sudo apt install cmake)")


def _pkg_config_dirs() -> List[str]:
    pkg_config = shutil.which("pkg-config")
    hint = ("give --include \"<tappas headers>;<hailort headers>\", or install Hailo's TAPPAS core (on a Raspberry Pi 5: "
            "sudo apt install hailo-all)")
    if pkg_config is None:
        raise TappasBuildError(f"pkg-config not found, so the TAPPAS headers cannot be looked up: {hint}")
    r = subprocess.run([pkg_config, "--cflags-only-I", "hailo-tappas-core"], capture_output=True, text=True,
                       env=_tool_env())
    if r.returncode != 0:
        raise TappasBuildError(f"pkg-config does not know hailo-tappas-core: {hint}")
    return [flag[2:] for flag in shlex.split(r.stdout) if flag.startswith("-I")]


def _header_dirs(include: Optional[str]) -> List[str]:
    dirs = [d for d in include.split(";") if d] if include is not None else _pkg_config_dirs()
    if not dirs:
        raise TappasBuildError("no header folders: give --include \"<tappas headers>;<hailort headers>\"")
    for d in dirs:
        if not Path(d).is_dir():
            raise TappasBuildError(f"header folder {d} does not exist")
    # Absolute: CMake would take a relative folder as relative to the plugin's sources, not to here.
    dirs = [str(Path(d).resolve()) for d in dirs]
    if not any((Path(d) / "hailo_objects.hpp").is_file() for d in dirs):
        raise TappasBuildError(f"no hailo_objects.hpp (TAPPAS) in {';'.join(dirs)}: give the TAPPAS header folder too")
    return dirs


def _run(cmd: Sequence[Union[str, Path]], verbose: bool, what: str) -> str:
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, env=_tool_env())
    output = r.stdout + r.stderr
    if verbose:
        sys.stderr.write(output)
    if r.returncode != 0:
        if not verbose:
            sys.stderr.write(output[-6000:])
        raise TappasBuildError(f"{what} failed (its output is above)")
    return output


def build_plugin(include: Optional[str], out: Path, build_dir: Path, jobs: int = 2, host: bool = False,
                 verbose: bool = False) -> Dict[str, str]:
    """Configures and builds the plugin (and the test host when asked) in build_dir, copies them into
    `out`; returns {"plugin": path, "abi": line, ["host": path]}. Raises TappasBuildError."""
    sources = plugin_sources()
    try:
        package = cmake_info.cmake_dir()
    except FileNotFoundError as e:
        raise TappasBuildError(str(e)) from None
    dirs = _header_dirs(include)
    cmake = _cmake()
    configure = _run([cmake, "-S", sources, "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release",
                      f"-Dhailo_decode_DIR={package}", "-DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF",
                      f"-DHAILO_DECODE_TAPPAS_INCLUDE={';'.join(dirs)}",
                      f"-DHAILO_DECODE_TAPPAS_HOST={'ON' if host else 'OFF'}"], verbose, "configuring the plugin (cmake)")
    found = re.search(r"ABI line (\d\.x: \w+)", configure)
    targets = ["hailo_decode_tappas"] + ([HOST_NAME] if host else [])
    _run([cmake, "--build", build_dir, "-j", str(max(1, jobs)), "--target", *targets], verbose,
         "building the plugin (cmake --build)")
    out.mkdir(parents=True, exist_ok=True)
    result = {"abi": found.group(1) if found else "unknown"}
    built = {"plugin": PLUGIN_NAME, "host": HOST_NAME} if host else {"plugin": PLUGIN_NAME}
    for key, name in built.items():
        matches = sorted(Path(build_dir).rglob(name))
        if not matches:
            raise TappasBuildError(f"the build made no {name} under {build_dir}")
        target = out / name
        shutil.copy2(matches[0], target)
        result[key] = str(target.resolve())
    return result


def pipeline_line(plugin: str) -> str:
    """A gst-launch-1.0 line for a raw HEF (no NMS op): hailonet without NMS properties, then the
    plugin, then hailooverlay. The frame is scaled to the network input (640x640 here)."""
    return ("gst-launch-1.0 filesrc location=VIDEO.mp4 ! decodebin ! videoconvert ! videoscale ! "
            "video/x-raw,format=RGB,width=640,height=640 ! hailonet hef-path=MODEL.hef batch-size=1 ! queue ! "
            f"hailofilter so-path={plugin} config-path=CONFIG.json function-name=filter qos=false ! queue ! "
            "hailooverlay ! videoconvert ! autovideosink sync=false")


def run_tappas(args: argparse.Namespace) -> int:
    if args.jobs < 1:
        raise TappasBuildError(f"--jobs must be >= 1, got {args.jobs}")
    out = Path(args.out)
    try:
        if args.build_dir is not None:
            built = build_plugin(args.include, out, Path(args.build_dir), args.jobs, args.host, args.verbose)
        else:
            with tempfile.TemporaryDirectory(prefix="hailo_decode_tappas_") as tmp:
                built = build_plugin(args.include, out, Path(tmp), args.jobs, args.host, args.verbose)
    except OSError as e:
        raise TappasBuildError(f"{e.filename or args.out}: {e.strerror or e}") from None
    print(f"{built['plugin']}")
    print(f"  TAPPAS ABI line: {built['abi']} (built against these headers: use it with that TAPPAS only)")
    if "host" in built:
        print(f"  test host: {built['host']}")
    print("A pipeline for a raw HEF (hailonet without nms-score-threshold, nms-iou-threshold or output-format-type;"
          " config keys: docs/gstreamer.md):")
    print("  " + pipeline_line(built["plugin"]))
    return 0
