#!/usr/bin/env bash
# The aarch64 Python check: a Raspberry Pi 5's software (Debian 12 arm64, Python 3.11) under
# qemu-user, on an x86-64 Debian 12 machine, as root: `bash .ci/aarch64.sh`, step 5 of .ci/run
# (its phases' times: docs/development.md). Exits non-zero on any failure (set -e; pytest exits 5
# when it runs no test; CI=true makes tests fail where they would skip for a missing package).
#   1. A fresh arm64 Debian 12 root (scripts/arm64_root.sh: debootstrap, python3 + python3-venv only).
#   2. The release artifacts, README's command (scripts/build_wheels.sh): sdist, x86-64 and aarch64 wheels.
#   3. In the bare root: README's Raspberry Pi commands, verbatim (the wheel from PIP_FIND_LINKS:
#      the package is not on PyPI yet); the NEON path with the dot product where the CPU has it,
#      plain NEON where not (QEMU_CPU=cortex-a72); `hailo-decode tappas build` through pkg-config
#      hailo-tappas-core, for both TAPPAS ABI lines.
#   4. The whole test suite in that venv (docs/development.md names what is trimmed under emulation).
#   5. From the sdist, with only the packages README lists: when ARM64_SDIST=1 (tens of minutes
#      of compiling under emulation: not in CI's budget).
# tests/test_pi_commands.py checks that README's and docs/hailort.md's Pi commands are this file's.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="${ARM64_ROOT:-build/ci-arm64-root}"
DIST="$PWD/build/ci-dist"
mkdir -p build
start=$SECONDS
# Each phase's end: the wall time since the start, and the CPU time (user, system) of every process
# this script has waited for so far (`times`' second line; qemu's emulated work included): on a
# shared machine the wall time grows with the others' load, the CPU time does not.
lap() {
  local cpu
  times > "$DIST.times"  # the builtin in this shell (a $(times) subshell would count only itself)
  cpu="$(tail -1 "$DIST.times")"
  printf '%s: %dm%02ds wall; CPU so far (user system): %s\n' "$1" $(((SECONDS - start) / 60)) \
    $(((SECONDS - start) % 60)) "$cpu"
}

if [ -z "${ARM64_KEEP_ROOT:-}" ]; then rm -rf "$ROOT"; fi
scripts/arm64_root.sh create "$ROOT"
lap "arm64 root"
rm -rf "$DIST"
ARM64_ROOT="$ROOT" WHEELS_BUILD=build/ci-wheels bash scripts/build_wheels.sh "$DIST"
lap "sdist and wheels"

in_root() { scripts/arm64_root.sh run "$ROOT" "$@"; }
repo="$PWD"
# The stand-in for hailo-all's hailo-tappas-core.pc (tests/test_tappas_pkg_config.py's shape), over
# ../shared/tappas, where Debian's pkg-config looks on arm64.
tappas_pc() {
  local line="$1" version="$2"
  mkdir -p "$ROOT/usr/lib/aarch64-linux-gnu/pkgconfig"
  cat > "$ROOT/usr/lib/aarch64-linux-gnu/pkgconfig/hailo-tappas-core.pc" <<EOF
prefix=$(cd "$repo/../shared/tappas/$line" && pwd)
includedir=\${prefix}

Name: hailo-tappas-core
Description: TAPPAS core (a stand-in over ../shared/tappas)
Version: $version
Cflags: -I\${includedir}/tappas -I\${includedir}/hailort -std=c++17 -fconcepts -fvisibility=default
EOF
}

# The bare root: python3 and python3-venv only, no compiler. README's Raspberry Pi commands, as a
# user at a shell types them (sudo: the root's user is root, and sudo is what the Pi user types).
in_root env PIP_FIND_LINKS="$DIST" PIP_DISABLE_PIP_VERSION_CHECK=1 bash -euxo pipefail -c '
  cd ~
  if command -v g++ || command -v cc; then echo "the root is not bare: it has a compiler"; exit 1; fi
  # pi:install
  python3 -m venv --system-site-packages ~/hailo-decode-venv
  . ~/hailo-decode-venv/bin/activate
  pip install hailo-decode
  hailo-decode demo
  # pi:end
  python -c "import hailo_decode as hd, sys; i = hd.simd_info(); print(i); sys.exit(i[\"active\"] != \"neondot\")"
  QEMU_CPU=cortex-a72 python -c "import hailo_decode as hd, sys; i = hd.simd_info(); print(i); sys.exit(i[\"active\"] != \"neon\")"
'
lap "the wheel on a bare root"

# ccache in the root, as the compiler launcher of every CMake build there (CMake reads
# CMAKE_CXX_COMPILER_LAUNCHER from the environment): the plugin's test host (the suite's
# `hailo-decode tappas build --host`) compiles the same plugin sources with the same flags as the
# commands below, and takes those objects from the cache instead of compiling them again under
# emulation. The commands themselves are README's, unchanged.
ccache=(CMAKE_CXX_COMPILER_LAUNCHER=ccache CCACHE_DIR=/root/.ccache)
tappas_pc 5.1 5.1.0
in_root env PIP_FIND_LINKS="$DIST" PIP_DISABLE_PIP_VERSION_CHECK=1 DEBIAN_FRONTEND=noninteractive "${ccache[@]}" \
  bash -euxo pipefail -c '
  cd ~
  apt-get update -qq && apt-get install -y -qq --no-install-recommends sudo ccache >/dev/null
  . ~/hailo-decode-venv/bin/activate
  # pi:plugin
  sudo apt install -y g++ cmake pkg-config
  hailo-decode tappas build --out ~/hailo-decode-plugin
  # pi:end
  test -f ~/hailo-decode-plugin/libhailo_decode_tappas.so
  file ~/hailo-decode-plugin/libhailo_decode_tappas.so 2>/dev/null || true
'
tappas_pc 3.31 3.31.0
in_root env "${ccache[@]}" bash -euxo pipefail -c '
  . ~/hailo-decode-venv/bin/activate
  hailo-decode tappas build --out ~/hailo-decode-plugin-3.31 | tee /tmp/build-3.31.txt
  grep -q "TAPPAS ABI line: 3" /tmp/build-3.31.txt
'
rm -f "$ROOT/usr/lib/aarch64-linux-gnu/pkgconfig/hailo-tappas-core.pc"
lap "the plugin, both ABI lines"

# The test extra (pip on aarch64 takes numpy and the rest from PyPI) and the suite.
CI=true in_root env PIP_FIND_LINKS="$DIST" PIP_DISABLE_PIP_VERSION_CHECK=1 "${ccache[@]}" bash -euo pipefail -c "
  . ~/hailo-decode-venv/bin/activate
  pip install -q 'hailo-decode[test]'
  cd '$repo'
  bash .ci/aarch64_pytest.sh
"
lap "the test suite"

if [ -n "${ARM64_SDIST:-}" ]; then
  in_root env PIP_FIND_LINKS="$DIST" PIP_DISABLE_PIP_VERSION_CHECK=1 bash -euxo pipefail -c '
    # pi:sdist
    sudo apt install -y python3-dev g++
    # pi:end
    python3 -m venv ~/sdist-venv
    . ~/sdist-venv/bin/activate
    pip install --no-binary hailo-decode hailo-decode
    hailo-decode demo
  '
  lap "from the sdist"
fi
