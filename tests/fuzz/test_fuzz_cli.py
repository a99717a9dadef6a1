"""Fuzzing the `hailo-decode` command line (FUZZING.md, harness `cli_args`): main() runs in-process
on random argument lists built from the commands' own options, values of every sort (numbers out
of range, NaN, words, empty strings) and small files of every kind (a good HEF, recording and
ground truth; missing paths, folders, empty, text, random bytes, .npy, damaged .npz, JSON lists,
a HEF with a zero image side, truncated HEFs, places that cannot be written). Rule: status 0 or 2,
never a traceback; a refusal is one line naming the command (argparse's: usage and an error
line). bench's measuring is stubbed (tests/fuzz/cli_cases.py)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from .cli_cases import FILE_KINDS, check_outcome, make_files, run_cli
from .decoder_cases import fuzz_settings, watchdog

pytest.importorskip("pycocotools")

OPTIONS = {
    "demo": {"--semantics": "choice", "--threshold": "number", "--seconds": "seconds", "--task": "task",
             "--save": "dir"},
    "bench": {"--quick": None, "--json": "out", "--plot": "plot", "--tasks": None},
    "inspect": {"--json": None, "--network-group": "word", "--device-buffers": None, "--semantics": "choice",
                "--task": "task", "--frames": "file"},
    "eval": {"--hef": "file", "--demo-model": None, "--frames": "file", "--gt": "file", "--semantics": "choice",
             "--threshold": "number", "--iou": "number", "--category-ids": "category", "--batch": "int",
             "--json": "out"},
}
NUMBERS = ["0", "0.25", "1", "-0.5", "1.5", "nan", "inf", "-inf", "1e400", "x", "", "0.001"]
VALUES = {
    "choice": st.sampled_from(["hailort", "ultralytics", "torch", ""]),
    "number": st.sampled_from(NUMBERS),
    "seconds": st.sampled_from(["0", "0.001", "-1", "nan", "x"]),
    "task": st.sampled_from(["detect", "seg", "pose", "obb", "segment", ""]),
    "word": st.sampled_from(["yolov8n", "nope", "", "0"]),
    "category": st.sampled_from(["auto", "coco80", "plus1", "identity", "x"]),
    "int": st.sampled_from(["1", "32", "0", "-3", "1.5", "x"]),
    "file": st.sampled_from(FILE_KINDS),
    "dir": st.sampled_from(["folder", "text", "under_a_file", "out_in_missing_folder"]),
    "out": st.sampled_from(["out_file", "folder", "out_in_missing_folder", "under_a_file", ""]),
    "plot": st.sampled_from(["out_file.png", "out_file.nope", "folder", "out_in_missing_folder"]),
}


@st.composite
def command_lines(draw):
    command = draw(st.sampled_from(sorted(OPTIONS) + ["", "nope", "--version"]))
    argv = [command] if command else []
    options = OPTIONS.get(command, {})
    if command == "inspect":
        argv.append(draw(st.sampled_from(FILE_KINDS)))
    for option in draw(st.lists(st.sampled_from(sorted(options) + ["--nope"]), max_size=5, unique=True)):
        argv.append(option)
        kind = options.get(option)
        if kind is not None:
            argv.append(draw(VALUES[kind]))
    if command == "demo" and "--seconds" not in argv:
        argv += ["--seconds", "0"]  # a demo that runs does not time for a second
    return argv


def _resolve(argv, files):
    out = []
    for a in argv:
        base, dot, ext = a.partition(".")
        out.append(files[base] + dot + ext if base in files else a)
    return out


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    return make_files(tmp_path_factory.mktemp("cli_fuzz"))


@fuzz_settings(150)
@given(argv=command_lines())
def test_fuzz_cli_arguments(files, argv):
    argv = _resolve(argv, files)
    with watchdog():
        outcome = run_cli(argv)
    problems = check_outcome(argv, outcome)
    assert not problems, (argv, problems, outcome[2][-2000:])
