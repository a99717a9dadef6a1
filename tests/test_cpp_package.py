"""The C++ package the wheel carries (headers, the static core, the CMake package config), and the
C++ example (examples/cpp) built against it with find_package, run, and its HAILO_NMS_BY_CLASS
file read back with the Python reader. (.ci/run builds the example against `cmake --install`.)"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import hailo_decode as hd
from hailo_decode import cmake_info

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "cpp"
PACKAGE_DIR = Path(hd.__file__).resolve().parent


def test_the_wheel_carries_the_cpp_package():
    cmake_dir = Path(cmake_info.cmake_dir())
    assert cmake_dir == PACKAGE_DIR / "lib" / "cmake" / "hailo_decode"
    for name in ("hailo_decodeConfig.cmake", "hailo_decodeConfigVersion.cmake", "hailo_decodeTargets.cmake"):
        assert (cmake_dir / name).is_file(), name
    assert "hailo_decode::core" in (cmake_dir / "hailo_decodeTargets.cmake").read_text()
    assert "find_dependency(Threads)" in (cmake_dir / "hailo_decodeConfig.cmake").read_text()
    # Every public header of the source tree, as it is there, and no other.
    include = Path(cmake_info.include_dir())
    ours = {p.name: p.read_bytes() for p in (ROOT / "cpp" / "include" / "hailo_decode").glob("*.hpp")}
    shipped = {p.name: p.read_bytes() for p in (include / "hailo_decode").glob("*.hpp")}
    assert ours and shipped == ours
    library = Path(cmake_info.library_dir()) / "libhailo_decode_core.a"
    assert library.read_bytes()[:8] == b"!<arch>\n"  # a static archive
    assert Path(cmake_info.prefix_dir()) == PACKAGE_DIR


def test_the_package_config_has_the_package_version():
    text = (Path(cmake_info.cmake_dir()) / "hailo_decodeConfigVersion.cmake").read_text()
    found = re.search(r'set\(PACKAGE_VERSION "([^"]+)"\)', text)
    assert found is not None, text[:500]
    assert found.group(1) == importlib.metadata.version("hailo-decode") == hd.__version__


def test_cmake_info_command_line(capsys):
    assert cmake_info.main([]) == 0
    assert capsys.readouterr().out == cmake_info.cmake_dir() + "\n"
    assert cmake_info.main(["include"]) == 0
    assert capsys.readouterr().out == cmake_info.include_dir() + "\n"
    # --cmakedir on a parser whose subcommand is required: prints and exits 0 before that check.
    parser = argparse.ArgumentParser(prog="hailo-decode")
    parser.add_subparsers(dest="command", required=True).add_parser("demo")
    cmake_info.add_cmakedir_argument(parser)
    with pytest.raises(SystemExit) as exit_:
        parser.parse_args(["--cmakedir"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out == cmake_info.cmake_dir() + "\n"


def test_the_documented_module_command_prints_only_the_path():
    # docs/cpp.md: -Dhailo_decode_DIR="$(python -m hailo_decode.cmake_info)"; the package's import
    # must not have imported the module first (runpy's RuntimeWarning on stderr, seen by every user).
    for args, expected in (([], cmake_info.cmake_dir()), (["include"], cmake_info.include_dir())):
        r = subprocess.run([sys.executable, "-W", "error", "-m", "hailo_decode.cmake_info", *args],
                           capture_output=True, text=True)
        assert (r.returncode, r.stdout, r.stderr) == (0, expected + "\n", "")
    assert hd.cmake_dir() == cmake_info.cmake_dir()


def test_a_package_without_its_cpp_side_says_where_it_looked(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(cmake_info, "_PACKAGE_DIR", tmp_path)
    for get in (cmake_info.cmake_dir, cmake_info.include_dir, cmake_info.library_dir, cmake_info.prefix_dir):
        with pytest.raises(FileNotFoundError, match=re.escape(str(tmp_path))):
            get()
    parser = argparse.ArgumentParser(prog="hailo-decode")
    cmake_info.add_cmakedir_argument(parser)
    with pytest.raises(SystemExit) as exit_:
        parser.parse_args(["--cmakedir"])
    assert exit_.value.code == 1
    assert "CMake package config is not installed at " + str(tmp_path) in capsys.readouterr().err


def _run(cmd, **kw):
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)
    assert r.returncode == 0, f"{' '.join(map(str, cmd))}\n{r.stdout}\n{r.stderr}"
    return r


def test_the_cpp_example_builds_against_the_wheel_and_decodes(tmp_path):
    cmake = shutil.which("cmake")
    if cmake is None:
        pytest.fail("cmake not found: install the test extra (pip install .[test])")
    # The build tools run without the sanitizer runtime CI preloads into Python; a sanitized core
    # brings its own runtime into the example's link.
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    build = tmp_path / "build"
    configure = _run([cmake, "-S", EXAMPLE, "-B", build, "-DCMAKE_BUILD_TYPE=Release",
          f"-Dhailo_decode_DIR={cmake_info.cmake_dir()}",
          "-DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF"], env=env)
    # What find_package found (the example prints it): the package inside the installed wheel.
    assert f"hailo_decode {hd.__version__} from {cmake_info.cmake_dir()}" in configure.stdout
    _run([cmake, "--build", build, "-j2"], env=env)
    out = tmp_path / "nms_by_class.bin"
    run = _run([build / "decode_frame", out], env=env, timeout=60)
    assert "all checks passed" in run.stdout

    # The file is HailoRT's flat HAILO_NMS_BY_CLASS buffer: 3 classes x (1 + 5 x 100) float32.
    flat = np.fromfile(out, dtype=np.float32)
    assert flat.shape == (3 * (1 + 5 * 100),)
    dets = hd.decode_hailo_nms(flat, num_classes=3)
    # The frame examples/cpp/synthetic_frame.hpp builds, on a 64x64 input: a person (230/255) and
    # a bicycle (80/255) on the stride-8 cell (3, 2), centre (20, 28), sides (1, 3, 1, 3) strides;
    # a dog (210/255) on the stride-16 cell (2, 2), centre (40, 40), one stride each side.
    person = np.array([28 - 24, 20 - 8, 28 + 24, 20 + 8]) / 64
    dog = np.array([40 - 16, 40 - 16, 40 + 16, 40 + 16]) / 64
    np.testing.assert_array_equal(dets.class_ids, [0, 2, 1])
    np.testing.assert_allclose(dets.scores, np.array([230, 210, 80]) / 255, rtol=0, atol=1e-6)
    np.testing.assert_allclose(dets.boxes, [person, dog, person], rtol=0, atol=1e-6)
