#!/usr/bin/env bash
# The whole test suite on aarch64 under qemu-user (.ci/aarch64.sh runs this inside the arm64 root,
# the venv with the aarch64 wheel and its test extra active, in the repository). Every test file
# runs; under emulation (10-30x slower) the repetitions are trimmed, and three tests that compile
# large C++ trees are left to the steps that already run them (docs/development.md lists them):
# - every hypothesis test, the fuzz harnesses' included, at most HAILO_DECODE_TRIM_EXAMPLES (5)
#   examples, derandomized, no per-example deadline (tests/aarch64/aarch64_trim.py);
# - tests/test_cpp_core.py::test_cpp_unit_tests: compiles the whole core and its unit tests with
#   the root's g++ (some 20 minutes emulated); .ci/run's step 4 cross-compiles the same unit tests
#   and runs them under qemu, NEON and NEON dot product paths both;
# - the real-GStreamer tests, tests/test_gstreamer_*.py and their tests/gstreamer: they build TAPPAS'
#   GStreamer elements from source against GStreamer's and OpenCV's development packages (a Pi user
#   runs Hailo's prebuilt ones, which are not here); step 1 runs them on x86-64.
# - the tests of tests/test_tappas_yolov5seg.py that compare the plugin with TAPPAS' own
#   libyolov5seg_post.so (HAILO_DECODE_NO_TAPPAS_REFERENCE): that reference is compiled from TAPPAS'
#   source against xtensor and rapidjson, which a Pi does not need, for minutes under emulation;
#   step 1 runs the comparison on x86-64. The file's other tests (config errors, defaults, entry
#   point) run here against the aarch64 plugin.
# Two pytest processes, one per core, each with its own half; both must pass.
set -euo pipefail
export PYTHONPATH=tests/aarch64 HAILO_DECODE_TRIM_EXAMPLES="${HAILO_DECODE_TRIM_EXAMPLES:-5}" HAILO_DECODE_NO_TAPPAS_REFERENCE=1
# The fuzz harnesses' hang guard, scaled for emulation.
export HAILO_DECODE_FUZZ_DEADLINE=600 HAILO_DECODE_FUZZ_WATCHDOG=1800
common=(-q -p no:cacheprovider -p aarch64_trim --durations=15)
# Half A: the TAPPAS plugin's builds (session fixtures, built once per process) and their users.
half_a=(tests/test_tappas_plugin.py tests/test_tappas_yolov5seg.py tests/test_tappas_pkg_config.py tests/fuzz
  tests/test_cpp_package.py)
ignore=(--ignore-glob 'tests/test_gstreamer_*.py')
for p in "${half_a[@]}" tests/gstreamer; do ignore+=(--ignore "$p"); done
mkdir -p build/aarch64-pytest
python -u -m pytest "${common[@]}" "${half_a[@]}" > build/aarch64-pytest/a.log 2>&1 &
a=$!
python -u -m pytest "${common[@]}" tests "${ignore[@]}" \
  --deselect tests/test_cpp_core.py::test_cpp_unit_tests > build/aarch64-pytest/b.log 2>&1 &
b=$!
status=0
wait "$a" || status=1
wait "$b" || status=1
for half in a b; do echo "--- pytest half $half"; tail -40 "build/aarch64-pytest/$half.log"; done
exit "$status"
