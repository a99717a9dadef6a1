#!/usr/bin/env bash
# An arm64 Debian 12 (Raspberry Pi OS Bookworm's base) root on an x86-64 Debian machine, run
# under qemu-user through binfmt_misc. Needs root (debootstrap, chroot, mount).
#
#   scripts/arm64_root.sh create ROOT          debootstrap --arch=arm64 bookworm with only python3
#                                              and python3-venv (a bare Pi's Python); a no-op
#                                              when ROOT already holds such a root
#   scripts/arm64_root.sh run ROOT CMD...      CMD inside ROOT, as root, with /proc, /dev and the
#                                              repository's parent folder (so ../shared beside the
#                                              repository) mounted at the same path as outside
#
# The mounts live in a private mount namespace (unshare), so they go away with the command, even
# when it fails. Installs debootstrap and qemu-user-static (binfmt F flag: the interpreter is
# opened once at registration, so it runs inside the chroot) when they are absent.
set -euo pipefail

MIRROR="${ARM64_ROOT_MIRROR:-http://deb.debian.org/debian}"
SUITE=bookworm

die() { echo "arm64_root.sh: $*" >&2; exit 1; }

need_tools() {
  local missing=()
  command -v debootstrap >/dev/null || missing+=(debootstrap)
  [ -x /usr/libexec/qemu-binfmt/aarch64-binfmt-P ] || [ -x /usr/bin/qemu-aarch64-static ] || missing+=(qemu-user-static)
  command -v update-binfmts >/dev/null || missing+=(binfmt-support)
  if [ ${#missing[@]} -gt 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
  if [ ! -e /proc/sys/fs/binfmt_misc/register ]; then
    mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
  fi
  if [ ! -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]; then
    update-binfmts --enable qemu-aarch64 || true
  fi
  local entry
  entry="$(cat /proc/sys/fs/binfmt_misc/qemu-aarch64 2>/dev/null || true)"
  case "$entry" in
    *enabled*"flags: "*F*) ;;
    *) die "binfmt_misc has no enabled qemu-aarch64 entry with the F flag (qemu-user-static registers one): $entry" ;;
  esac
}

create() {
  local root="$1"
  need_tools
  if [ -x "$root/usr/bin/python3" ] && [ -f "$root/.arm64-root-complete" ]; then
    echo "arm64 root already at $root"
    return
  fi
  rm -rf "$root"
  mkdir -p "$(dirname "$root")"
  # minbase: essential packages and apt only; python3-venv brings ensurepip's pip and setuptools.
  debootstrap --arch=arm64 --variant=minbase --include=python3,python3-venv "$SUITE" "$root" "$MIRROR" \
    > "$root.debootstrap.log" 2>&1 || { tail -30 "$root.debootstrap.log"; die "debootstrap failed"; }
  [ "$(chroot "$root" uname -m)" = aarch64 ] || die "the root does not run as aarch64"
  touch "$root/.arm64-root-complete"
}

run() {
  local root="$1"; shift
  [ -f "$root/.arm64-root-complete" ] || die "no arm64 root at $root (scripts/arm64_root.sh create $root)"
  need_tools
  local share
  share="$(cd "$(dirname "$0")/../.." && pwd)"
  root="$(cd "$root" && pwd)"
  cp /etc/resolv.conf "$root/etc/resolv.conf"
  mkdir -p "$root$share" "$root/proc" "$root/dev"
  # Only these variables go in: CI (tests fail instead of skipping), QEMU_CPU (qemu-user's CPU model),
  # and the host's certificate authorities for pip (a network whose TLS proxy has its own CA:
  # the root trusts what the host trusts).
  local pass=() ca="${PIP_CERT:-${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}}"
  if [ -f "$ca" ]; then
    mkdir -p "$root/etc/ssl/certs"
    cp "$ca" "$root/etc/ssl/certs/host-ca.crt"
    pass+=(PIP_CERT=/etc/ssl/certs/host-ca.crt SSL_CERT_FILE=/etc/ssl/certs/host-ca.crt)
  fi
  [ -n "${CI:-}" ] && pass+=("CI=$CI")
  [ -n "${QEMU_CPU:-}" ] && pass+=("QEMU_CPU=$QEMU_CPU")
  # shellcheck disable=SC2016
  unshare --mount --propagation private -- bash -c '
    set -e
    root="$1"; share="$2"; shift 2
    mount -t proc proc "$root/proc"
    mount --rbind /dev "$root/dev"
    mount --bind "$share" "$root$share"
    exec chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
      LANG=C.UTF-8 "$@"
  ' _ "$root" "$share" ${pass[@]+"${pass[@]}"} "$@"
}

case "${1:-}" in
  create) [ $# -eq 2 ] || die "usage: $0 create ROOT"; create "$2" ;;
  run) [ $# -ge 3 ] || die "usage: $0 run ROOT CMD..."; root="$2"; shift 2; run "$root" "$@" ;;
  *) die "usage: $0 create ROOT | run ROOT CMD..." ;;
esac
