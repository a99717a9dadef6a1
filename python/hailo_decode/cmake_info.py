"""Where the installed package keeps its C++ side: headers, the static core library and the CMake
package config, for C++ code that links hailo_decode::core (docs/cpp.md, "From C++").

    cmake -S app -B build -Dhailo_decode_DIR="$(python -m hailo_decode.cmake_info)"

Imports nothing of the package (only the standard library), so any layer, the CLI included, may
use it. The files are those `cmake --install` puts under a prefix, here inside the package
directory; an editable install keeps them elsewhere and these functions then raise.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Optional, Sequence, Union

_PACKAGE_DIR = Path(__file__).resolve().parent


def _existing(path: Path, what: str) -> str:
    if not path.is_dir():
        raise FileNotFoundError(
            f"hailo_decode's {what} is not installed at {path}: install the package with pip (not in "
            f"editable mode), or build it with CMake and `cmake --install` it (docs/cpp.md)")
    return str(path)


def cmake_dir() -> str:
    """The directory holding hailo_decodeConfig.cmake: CMake's hailo_decode_DIR for
    find_package(hailo_decode CONFIG) (or put prefix_dir() on CMAKE_PREFIX_PATH)."""
    return _existing(_PACKAGE_DIR / "lib" / "cmake" / "hailo_decode", "CMake package config")


def include_dir() -> str:
    """The directory to put on the include path: it holds hailo_decode/decoder.hpp and the other
    public headers."""
    return _existing(_PACKAGE_DIR / "include", "C++ headers directory")


def library_dir() -> str:
    """The directory holding the static core library (libhailo_decode_core.a); link it with the
    threads library (-pthread) after your own objects."""
    return _existing(_PACKAGE_DIR / "lib", "C++ library directory")


def prefix_dir() -> str:
    """The install prefix the three directories above are under: a CMAKE_PREFIX_PATH entry."""
    cmake_dir()  # raises when the C++ side is absent
    return str(_PACKAGE_DIR)


class _PrintCMakeDir(argparse.Action):
    """`--cmakedir`: prints cmake_dir() and exits, as `--version` does (before any subcommand is
    required); when the CMake files are not installed, one line naming the option and what to do,
    and exit status `missing_status`."""

    def __init__(self, *args: Any, missing_status: int = 1, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.missing_status = missing_status

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Union[str, Sequence[Any], None], option_string: Optional[str] = None) -> None:
        try:
            path = cmake_dir()
        except FileNotFoundError as e:
            parser.exit(self.missing_status, f"{parser.prog} {option_string}: {e}\n")
        print(path)
        parser.exit(0)


def add_cmakedir_argument(parser: argparse.ArgumentParser, missing_status: int = 1) -> None:
    """Adds `--cmakedir` (print the directory holding hailo_decodeConfig.cmake, then exit) to the
    CLI's top-level parser, as `pybind11 --cmakedir` does. missing_status: the exit status when the
    CMake files are not installed (the CLI's user-error status)."""
    parser.add_argument("--cmakedir", nargs=0, action=_PrintCMakeDir, missing_status=missing_status,
                        help="print the directory holding hailo_decodeConfig.cmake (for CMake's "
                             "hailo_decode_DIR) and exit")


_DIRS = {"cmake": cmake_dir, "include": include_dir, "lib": library_dir, "prefix": prefix_dir}


def main(argv: Optional[Sequence[str]] = None) -> int:
    """`python -m hailo_decode.cmake_info [cmake|include|lib|prefix]`: prints that directory."""
    parser = argparse.ArgumentParser(prog="python -m hailo_decode.cmake_info",
                                     description="Prints where the installed package keeps its C++ side.")
    parser.add_argument("which", nargs="?", choices=sorted(_DIRS), default="cmake",
                        help="which directory (default: cmake, the one holding hailo_decodeConfig.cmake)")
    args = parser.parse_args(argv)
    try:
        print(_DIRS[args.which]())
    except FileNotFoundError as e:
        parser.exit(1, f"{parser.prog}: {e}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
