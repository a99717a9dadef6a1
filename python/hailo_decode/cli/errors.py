"""How the `hailo-decode` commands report a user's mistake: they raise UserError with one line that
names the file, key or option and says what to do; main() prints it after the command's name and
exits with status 2 (as argparse does for a bad option). Anything else is a bug in hailo-decode
and keeps its traceback. The helpers below turn the mistakes of each kind of input into a
UserError where that input enters: options that do not apply, files to read, places to write."""

from __future__ import annotations

import os
import zipfile
from typing import Dict, Iterable, Optional, Tuple

import numpy as np

from ..hef import HefError, HefInfo, read_hef

__all__ = ["UserError", "EXIT_USER_ERROR", "EXIT_CLOSED_PIPE", "refuse_unused", "need_positive", "readable_file",
           "load_npz", "load_hef", "writable_file", "writable_dir"]

EXIT_USER_ERROR = 2
# Output piped into a reader that stopped early (`hailo-decode inspect x.hef | head -1`): the
# status a shell gives a process ended by SIGPIPE (128 + 13), as `cat` or `yes` end there.
EXIT_CLOSED_PIPE = 141


class UserError(Exception):
    """A mistake in what the user gave a command: one line naming the culprit and the fix."""


def refuse_unused(given: Iterable[Tuple[str, bool]], why: str) -> None:
    """Options that do nothing in this mode are refused, not ignored: `given` is (option, was it
    given) pairs; `why` says what the mode is ("--tasks measures pose and OBB heads")."""
    used = [option for option, on in given if on]
    if used:
        raise UserError(f"{' and '.join(used)} {'does' if len(used) == 1 else 'do'} nothing here: {why}; "
                        f"drop {'it' if len(used) == 1 else 'them'}")


def need_positive(option: str, value: float, *, zero: bool = False) -> None:
    """A number option that must be > 0 (>= 0 with zero=True) and finite."""
    ok = np.isfinite(value) and (value >= 0 if zero else value > 0)
    if not ok:
        raise UserError(f"{option} must be a number {'>= 0' if zero else '> 0'}, got {value}")


def readable_file(option: str, path: str) -> None:
    """`path` (given with `option`, "" for a positional argument) is a file this process can read."""
    what = f"{option} {path}" if option else path
    if os.path.isdir(path):
        raise UserError(f"{what}: is a folder, not a file")
    if not os.path.exists(path):
        raise UserError(f"{what}: no such file")
    try:
        with open(path, "rb"):
            pass
    except OSError as e:
        raise UserError(f"{what}: cannot be read ({e.strerror or e})") from None


_ZIP_MAGIC = b"PK\x03\x04"
_NPY_MAGIC = b"\x93NUMPY"


def load_npz(option: str, path: str) -> Dict[str, np.ndarray]:
    """Every array of the .npz archive at `path`, read now (a corrupt member fails here, named)."""
    readable_file(option, path)
    with open(path, "rb") as f:
        head = f.read(6)
    if head.startswith(_NPY_MAGIC):
        raise UserError(f"{option} {path}: holds one unnamed array (.npy); it needs an .npz archive of arrays keyed "
                        f"by output name: numpy.savez(path, **{{name: array}})")
    if not head.startswith(_ZIP_MAGIC):
        raise UserError(f"{option} {path}: not an .npz archive (numpy.savez writes one: arrays keyed by output name)")
    try:
        with np.load(path, allow_pickle=False) as z:
            return {k: z[k] for k in z.files}
    except (ValueError, EOFError, OSError, zipfile.BadZipFile) as e:
        raise UserError(f"{option} {path}: cannot read the .npz archive: {e}") from None


def load_hef(option: str, path: str) -> HefInfo:
    """The .hef file at `path` (given with `option`, "" for a positional argument), read."""
    readable_file(option, path)
    try:
        return read_hef(path)
    except HefError as e:
        raise UserError(f"{f'{option} {path}' if option else path}: {e}") from None


def writable_file(option: str, path: Optional[str]) -> None:
    """A file `option` will write: its folder exists and is writable, and it is not a folder.
    Checked before the work that produces it, not after."""
    if path is None:
        return
    if not path:
        raise UserError(f"{option} needs a file name")
    if os.path.isdir(path):
        raise UserError(f"{option} {path}: is a folder; give a file name")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise UserError(f"{option} {path}: the folder {folder} does not exist")
    if not os.access(folder, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        raise UserError(f"{option} {path}: not writable (permission denied)")


def writable_dir(option: str, path: str) -> None:
    """A folder `option` will write files into: created if missing, and writable."""
    if not path:
        raise UserError(f"{option} needs a folder name")
    if os.path.exists(path) and not os.path.isdir(path):
        raise UserError(f"{option} {path}: is a file, not a folder")
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as e:
        raise UserError(f"{option} {path}: cannot create the folder ({e.strerror})") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise UserError(f"{option} {path}: the folder is not writable (permission denied)")
