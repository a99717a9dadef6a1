"""A pytest plugin for the test suite under qemu (.ci/aarch64_pytest.sh): every hypothesis test,
the fuzz harnesses' included, runs at most $HAILO_DECODE_TRIM_EXAMPLES examples (derandomized:
the same ones every run) and without a per-example deadline (emulation is 10-30x slower than the
machine it runs on). Every test still runs; only the repetitions are fewer. Nothing else changes.

    python -m pytest -p aarch64_trim   (with tests/aarch64 on PYTHONPATH)
"""

from __future__ import annotations

import os

from hypothesis import settings


def pytest_collection_modifyitems(config, items):
    cap = int(os.environ.get("HAILO_DECODE_TRIM_EXAMPLES", "10"))
    trimmed = 0
    for item in items:
        test = getattr(item, "obj", None)
        # @given(...) wraps the test; its settings (@settings or the profile's) are read from this
        # attribute when the test is called, so replacing it here takes effect.
        own = getattr(test, "_hypothesis_internal_use_settings", None)
        if own is None or not hasattr(test, "hypothesis"):
            continue
        test._hypothesis_internal_use_settings = settings(
            own, max_examples=min(own.max_examples, cap), derandomize=True, deadline=None)
        trimmed += 1
    config._aarch64_trimmed = (trimmed, cap)


def pytest_report_header(config):
    return f"aarch64_trim: hypothesis tests at most {os.environ.get('HAILO_DECODE_TRIM_EXAMPLES', '10')} examples each"


def pytest_terminal_summary(terminalreporter, config):
    trimmed, cap = getattr(config, "_aarch64_trimmed", (0, 0))
    terminalreporter.write_line(f"aarch64_trim: {trimmed} hypothesis tests capped at {cap} examples")
