"""Builds the C++ core's unit tests (cpp/tests) with CMake and runs them through ctest."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_cpp_unit_tests():
    cmake = shutil.which("cmake")
    ctest = shutil.which("ctest")
    if cmake is None or ctest is None:
        pytest.fail("cmake/ctest not found: install the test extra (pip install .[test])")
    build = ROOT / "tests" / ".cache" / "cpp-build"
    build.mkdir(parents=True, exist_ok=True)
    subprocess.run([cmake, "-S", str(ROOT), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
                    "-DHAILO_DECODE_BUILD_PYTHON=OFF", "-DHAILO_DECODE_BUILD_TESTS=ON"],
                   check=True, capture_output=True, text=True)
    b = subprocess.run([cmake, "--build", str(build), "-j2"], capture_output=True, text=True)
    assert b.returncode == 0, b.stdout + b.stderr
    r = subprocess.run([ctest, "--test-dir", str(build), "--output-on-failure"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "100% tests passed" in r.stdout
