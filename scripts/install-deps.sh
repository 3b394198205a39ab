#!/bin/sh
# Installs what the build needs (a C compiler, make, pkg-config, HDF5, libyaml and
# Nettle headers, CTest) with the system package manager, when it can.
#   --check-only: only report what is missing (exit 1 if anything is).
# Debian/Ubuntu (apt) is supported directly; elsewhere it prints what to install.
set -u
check_only=0
[ "${1:-}" = "--check-only" ] && check_only=1

missing=""
command -v cc >/dev/null 2>&1 || missing="$missing gcc"
command -v make >/dev/null 2>&1 || missing="$missing make"
command -v pkg-config >/dev/null 2>&1 || missing="$missing pkg-config"
command -v ctest >/dev/null 2>&1 || missing="$missing cmake"
if command -v pkg-config >/dev/null 2>&1; then
    pkg-config --exists hdf5 2>/dev/null || missing="$missing libhdf5-dev"
    pkg-config --exists yaml-0.1 2>/dev/null || missing="$missing libyaml-dev"
    pkg-config --exists nettle 2>/dev/null || missing="$missing nettle-dev"
else
    missing="$missing libhdf5-dev libyaml-dev nettle-dev"
fi

[ -z "$missing" ] && exit 0

if [ "$check_only" = 1 ]; then
    echo "smx2d-sim: missing build dependencies:$missing" >&2
    echo "  run 'make deps' (or: apt-get install$missing)" >&2
    exit 1
fi

if ! command -v apt-get >/dev/null 2>&1; then
    echo "smx2d-sim: missing build dependencies:$missing" >&2
    echo "  this is not an apt-based system: install the equivalents of" >&2
    echo "  gcc make pkg-config cmake HDF5 (serial, with headers) libyaml (with headers)" >&2
    echo "  Nettle (with headers; SHA-256)" >&2
    exit 1
fi

if [ "$(id -u)" = 0 ]; then
    SUDO=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    SUDO="sudo -n"
else
    echo "smx2d-sim: missing build dependencies:$missing" >&2
    echo "  install them with:" >&2
    echo "    sudo apt-get update && sudo apt-get install -y$missing" >&2
    exit 1
fi

echo "smx2d-sim: installing$missing"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq || exit 1
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing || exit 1
