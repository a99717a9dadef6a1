"""TAPPAS' own libyolov5seg_post.so, built from the unmodified source in ../shared/tappas/5.1
(core/hailo/libs/postprocesses/instance_segmentation/yolov5seg.cpp, as its meson.build builds it:
-pthread, xtensor and rapidjson headers) against one ABI line's headers: the reference the plugin's
YOLOv5-seg heads are compared with, and benchmarked against. Test-only: nothing of it reaches the
package. Needs Debian's libxtensor-dev and rapidjson-dev (CI installs them)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any, Dict

import pytest

from tappas.plugin_host import SHARED, host_env

SOURCE = SHARED / "5.1" / "src" / "core" / "hailo"
HEADERS = {"xtensor": Path("/usr/include/xtensor/xarray.hpp"), "rapidjson": Path("/usr/include/rapidjson/document.h")}

_BUILT: Dict[str, Path] = {}


def command(line: str, out: Path) -> list:
    post = SOURCE / "libs" / "postprocesses"
    return ["g++", "-std=c++17", "-fconcepts", "-O2", "-w", "-fPIC", "-shared", "-pthread",
            f"-I{SHARED / line / 'tappas'}", f"-I{SHARED / line / 'hailort'}", f"-I{SOURCE / 'general'}", f"-I{post}",
            str(post / "instance_segmentation" / "yolov5seg.cpp"), "-o", str(out)]


def build(line: str, tmp_path_factory: Any) -> Path:
    """The .so for `line`, once a session. Skips without the sources or the headers it needs (a
    failure under CI)."""
    if not (SOURCE / "libs" / "postprocesses" / "instance_segmentation" / "yolov5seg.cpp").is_file():
        pytest.skip(f"{SOURCE} holds no TAPPAS post-process sources")
    if os.environ.get("HAILO_DECODE_NO_TAPPAS_REFERENCE"):  # set by .ci/aarch64_pytest.sh only
        pytest.skip("TAPPAS' own libyolov5seg_post.so is not built under emulation (step 1 compares with it)")
    missing = [name for name, header in HEADERS.items() if not header.is_file()]
    if missing and not os.environ.get("CI"):
        packages = " and ".join("libxtensor-dev" if m == "xtensor" else "rapidjson-dev" for m in missing)
        pytest.skip(f"TAPPAS' yolov5seg needs Debian's {packages}")
    if shutil.which("g++") is None:
        pytest.skip("no g++")
    if line not in _BUILT:
        out = tmp_path_factory.mktemp(f"tappas_yolov5seg{line}") / "libyolov5seg_post.so"
        r = subprocess.run(command(line, out), capture_output=True, text=True, env=host_env(), timeout=900)
        assert r.returncode == 0, r.stderr[-4000:]
        _BUILT[line] = out
    return _BUILT[line]
