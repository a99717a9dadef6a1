"""Fuzzing pose and OBB heads (keypoint and angle outputs): strategies, runner and checks in
task_cases.py (read its docstring); scripts/fuzz.py runs the same harnesses for a given time."""

from __future__ import annotations

import pytest
from hypothesis import given

from .decoder_cases import fuzz_settings
from .task_cases import run_task_spec, task_specs

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


@fuzz_settings(150)
@given(task_specs(valid=True))
def test_fuzz_tasks_valid(spec):
    """Valid pose/OBB configs and buffers (extremes included): decoding succeeds, the results pass
    the checks, and layouts, batches, SIMD paths and threads agree bit for bit."""
    assert run_task_spec(spec) == "ok"


@fuzz_settings(150)
@given(task_specs(valid=False))
def test_fuzz_tasks_faults(spec):
    """One or two task faults: a clean ValueError/TypeError, or a result that passes the checks."""
    run_task_spec(spec)
