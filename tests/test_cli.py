"""`hailo-decode demo` runs on the bundled real frames and prints their detections."""

from __future__ import annotations

import re
import subprocess
import sys

from hailo_decode.cli import main


def test_demo_prints_detections_and_time(capsys):
    assert main(["demo", "--seconds", "0.05"]) == 0
    out = capsys.readouterr().out
    frames = re.findall(r"^frame (\d+): .*: (\d+) detection", out, flags=re.M)
    assert [f for f, _ in frames] == ["0", "1", "2", "3", "4"]
    assert sum(int(n) for _, n in frames) == 9  # the model's own count at conf 0.25 (tests/fixtures)
    assert "Normal" in out and "Fall" in out
    assert re.search(r"time per frame .* median [\d.]+ us", out)


def test_console_script_entry_point():
    r = subprocess.run([sys.executable, "-m", "hailo_decode.cli", "demo", "--seconds", "0.01"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "frame 4:" in r.stdout
