"""The Python package imports one way (pyproject.toml's import-linter contract): a module that
imports a layer above it, lazily inside a function included, fails this test."""

import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _lint_imports(config: pathlib.Path, cwd: pathlib.Path) -> subprocess.CompletedProcess:
    exe = shutil.which("lint-imports") or str(pathlib.Path(sys.executable).with_name("lint-imports"))
    # Run outside the source tree, so that the installed package (the one the tests use) is read.
    return subprocess.run([exe, str(config)], cwd=cwd, capture_output=True, text=True, timeout=120)


def test_package_imports_run_one_way(tmp_path):
    r = _lint_imports(ROOT / "pyproject.toml", tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "one-way house KEPT" in r.stdout


def test_the_contract_catches_an_upward_import(tmp_path):
    """The same contract with config placed above decoder: decoder imports config, so it breaks
    (a contract that cannot fail would pass this)."""
    text = (ROOT / "pyproject.toml").read_text()
    start = text.index("[tool.importlinter]")
    section = text[start:].split("\n[tool.", 1)[0] if "\n[tool." in text[start:] else text[start:]
    swapped = section.replace('"hailo_decode.config",', '"hailo_decode.CONFIG",')
    swapped = swapped.replace('"hailo_decode.decoder",', '"hailo_decode.config",\n  "hailo_decode.decoder",')
    swapped = swapped.replace('"hailo_decode.CONFIG",\n', "")
    assert swapped != section
    cfg = tmp_path / "contract.toml"
    cfg.write_text(swapped)
    r = _lint_imports(cfg, tmp_path)
    assert r.returncode != 0 and "BROKEN" in r.stdout, r.stdout + r.stderr
