"""The Raspberry Pi 5 way to the TAPPAS headers: pkg-config `hailo-tappas-core`, as Hailo's packages
install it (tappas-facts.md section 1: `-I/usr/include/hailo/tappas -I/usr/include/hailo -std=c++17
-fconcepts -fvisibility=default`). A .pc file of that shape points at ../shared/tappas; both ways
in find the headers through it: `hailo-decode tappas build` with no --include, and the plugin's
CMakeLists.txt with no HAILO_DECODE_TAPPAS_INCLUDE. PKG_CONFIG_LIBDIR holds only that file, so a
real hailo-tappas-core on the machine cannot answer instead."""

from __future__ import annotations

import contextlib
import io
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tappas.plugin_host import ABI, SHARED, Built, host_env

VERSION = {"5.1": "5.1.0", "3.31": "3.31.0"}


def _pkg_config() -> Path:
    """pkg-config on PATH, else the one the test extra's `pkgconf` wheel put beside this Python."""
    found = shutil.which("pkg-config")
    if found:
        return Path(found)
    beside = Path(sys.executable).parent / "pkg-config"
    if not beside.is_file():
        pytest.fail("no pkg-config: the test extra installs it (pkgconf)")
    return beside


def _tappas_core_pc(folder: Path, line: str) -> Path:
    """A hailo-tappas-core.pc of the shape Hailo's package installs, for the headers of `line`."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "hailo-tappas-core.pc").write_text(
        f"prefix={SHARED / line}\n"
        "includedir=${prefix}\n\n"
        "Name: hailo-tappas-core\n"
        "Description: TAPPAS core (a stand-in over ../shared/tappas)\n"
        f"Version: {VERSION[line]}\n"
        "Cflags: -I${includedir}/tappas -I${includedir}/hailort -std=c++17 -fconcepts -fvisibility=default\n")
    return folder


@pytest.fixture
def pc_env(built: Built, tmp_path, monkeypatch):
    """The environment of a machine whose pkg-config knows hailo-tappas-core for `built`'s line."""
    tool = _pkg_config()
    if shutil.which("pkg-config") is None:  # appended, so that cmake and the compiler stay the ones found first
        monkeypatch.setenv("PATH", f"{host_env().get('PATH', '')}:{tool.parent}")
    monkeypatch.setenv("PKG_CONFIG_LIBDIR", str(_tappas_core_pc(tmp_path / "pc", built.line)))
    monkeypatch.delenv("PKG_CONFIG_PATH", raising=False)
    return tool


def test_the_build_command_finds_the_headers_with_pkg_config(built, pc_env, tmp_path):
    from hailo_decode.cli import main
    out = tmp_path / "out"
    printed, errors = io.StringIO(), io.StringIO()
    # The session's build folder for this line: the same headers give the same configuration, so
    # nothing is compiled again; a different folder or line would show in the ABI line printed.
    with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(errors):
        status = main(["tappas", "build", "--out", str(out), "--build-dir", str(built.plugin.parent / "build"),
                       "--jobs", "2"])
    assert status == 0, errors.getvalue()
    plugin = out / "libhailo_decode_tappas.so"
    assert printed.getvalue().splitlines()[0] == str(plugin.resolve())
    assert f"TAPPAS ABI line: {ABI[built.line]}" in printed.getvalue()
    assert plugin.read_bytes() == built.plugin.read_bytes()


def _configure_plugin(build: Path, pkg_config: Path) -> subprocess.CompletedProcess:
    """CMake on the plugin's sources as the wheel carries them, no HAILO_DECODE_TAPPAS_INCLUDE."""
    from hailo_decode import cmake_info
    from hailo_decode.cli.tappas import _cmake, plugin_sources
    return subprocess.run(
        [_cmake(), "-S", str(plugin_sources()), "-B", str(build), f"-Dhailo_decode_DIR={cmake_info.cmake_dir()}",
         "-DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF", f"-DPKG_CONFIG_EXECUTABLE={pkg_config}"],
        capture_output=True, text=True, env=host_env())


def test_cmake_finds_the_headers_with_pkg_config(built, pc_env, tmp_path):
    r = _configure_plugin(tmp_path / "build", pc_env)
    assert r.returncode == 0, r.stdout + r.stderr
    expected = (f"ABI line {ABI[built.line]}, headers from pkg-config hailo-tappas-core {VERSION[built.line]}: "
                f"{SHARED / built.line / 'tappas'};{SHARED / built.line / 'hailort'}")
    assert expected in r.stdout
    # Only the include folders are taken: the .pc's -fvisibility=default would export everything.
    flags = (tmp_path / "build" / "CMakeFiles").rglob("flags.make")
    assert not any("visibility=default" in f.read_text() or "-fconcepts" in f.read_text() for f in flags)


def test_without_hailo_tappas_core_both_say_what_to_install(built, pc_env, tmp_path, monkeypatch, capsys):
    from hailo_decode.cli import main
    monkeypatch.setenv("PKG_CONFIG_LIBDIR", str(tmp_path))  # no .pc here
    assert main(["tappas", "build", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pkg-config does not know hailo-tappas-core" in err and "--include" in err
    r = _configure_plugin(tmp_path / "build", pc_env)
    assert r.returncode != 0
    assert "TAPPAS headers not found: install Hailo's hailo-tappas-core" in r.stderr
