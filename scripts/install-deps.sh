#!/bin/sh
# Installs what the build needs (a C compiler, make, pkg-config, HDF5, libyaml,
# Nettle and cJSON headers, CTest) with the system package manager, when it can, and the Python
# modules of the post-processing tools (scripts/smx2d-plot, scripts/smx2d-compare:
# numpy, h5py, matplotlib), of the DICOM tools (scripts/smx2d-import-ct,
# smx2d-import-spots, smx2d-export-dose: pydicom) and of the per-spot dose test (scipy.sparse
# reads the matrix as a user would).
#   --check-only: only report what the build is missing (exit 1 if anything is);
#                 the Python modules are not needed to build and are not checked.
#   --fuzz: also what `make fuzz` needs: clang with libFuzzer and the sanitizer
#           runtimes, and LLVM's OpenMP runtime.
#   --format: also clang-format 14 (Debian 12's), which `make check-format`
#           and `make format` use (.clang-format).
#   --mpi:  also what `make MPI=1` needs: Open MPI's headers, mpicc and mpirun
#           (libopenmpi-dev, openmpi-bin; docs/mpi.md), and patchelf for the
#           Open MPI runtime that `make dist MPI=1` bundles.
#   --tests: everything `make test` runs, for CI: the Python modules above
#           become required (a python3 that imports all five, else exit 1),
#           and the programs the shell tests call (script, flock, unshare,
#           mount, hostname, readelf) are checked and installed.
# Debian/Ubuntu (apt) is supported directly; elsewhere it prints what to install.
# Without --tests, missing Python modules never fail this script: the tools
# then say what to install, and the tests that need them skip, which
# `make test` reports as a failure naming them (tests/allowed-skips.txt).
set -u
check_only=0
fuzz=0
mpi=0
format=0
tests=0
for arg in "$@"; do
    case "$arg" in
    --check-only) check_only=1 ;;
    --fuzz) fuzz=1 ;;
    --mpi) mpi=1 ;;
    --format) format=1 ;;
    --tests) tests=1 ;;
    esac
done

missing=""
command -v cc >/dev/null 2>&1 || missing="$missing gcc"
command -v make >/dev/null 2>&1 || missing="$missing make"
command -v pkg-config >/dev/null 2>&1 || missing="$missing pkg-config"
command -v ctest >/dev/null 2>&1 || missing="$missing cmake"
if command -v pkg-config >/dev/null 2>&1; then
    pkg-config --exists hdf5 2>/dev/null || missing="$missing libhdf5-dev"
    pkg-config --exists yaml-0.1 2>/dev/null || missing="$missing libyaml-dev"
    pkg-config --exists nettle 2>/dev/null || missing="$missing nettle-dev"
    pkg-config --exists libcjson 2>/dev/null || missing="$missing libcjson-dev"
    pkg-config --exists zlib 2>/dev/null || missing="$missing zlib1g-dev"
else
    missing="$missing libhdf5-dev libyaml-dev nettle-dev libcjson-dev zlib1g-dev"
fi

if [ "$tests" = 1 ]; then
    # What the shell tests (tests/*.sh) call beyond the build's tools; most
    # are Essential in Debian, but a slim image may lack mount or hostname.
    command -v script >/dev/null 2>&1 || missing="$missing bsdutils"
    command -v flock >/dev/null 2>&1 && command -v unshare >/dev/null 2>&1 || missing="$missing util-linux"
    command -v mount >/dev/null 2>&1 || missing="$missing mount"
    command -v hostname >/dev/null 2>&1 || missing="$missing hostname"
    command -v readelf >/dev/null 2>&1 || missing="$missing binutils"
fi

if [ "$mpi" = 1 ]; then
    # mpicc --showme (the Makefile's flags) needs the headers it names.
    if ! command -v mpicc >/dev/null 2>&1 || ! mpicc --showme:compile >/dev/null 2>&1 ||
            [ ! -f "$(mpicc --showme:incdirs 2>/dev/null | cut -d' ' -f1)/mpi.h" ]; then
        missing="$missing libopenmpi-dev"
    fi
    command -v mpirun >/dev/null 2>&1 || missing="$missing openmpi-bin"
    # make dist bundles Open MPI's runtime with $ORIGIN-relative search paths (scripts/dist-mpi.sh).
    command -v patchelf >/dev/null 2>&1 || missing="$missing patchelf"
fi

# The tools start with `#!/usr/bin/env python3` and, when that python3 lacks the
# modules, run again under /usr/bin/python3 (where Debian's packages put them):
# they work when either interpreter has them all.
py_modules="numpy h5py matplotlib scipy pydicom"
py_has_modules() {
    command -v "$1" >/dev/null 2>&1 && "$1" -c "import numpy, h5py, matplotlib, scipy, pydicom" >/dev/null 2>&1
}
py_missing=""
if { [ "$check_only" = 0 ] || [ "$tests" = 1 ]; } && ! py_has_modules python3 && ! py_has_modules /usr/bin/python3; then
    command -v /usr/bin/python3 >/dev/null 2>&1 || py_missing=" python3"
    for m in $py_modules; do
        /usr/bin/python3 -c "import $m" >/dev/null 2>&1 || py_missing="$py_missing python3-$m"
    done
fi

if [ "$format" = 1 ]; then
    # The formatting check pins one version: another clang-format formats differently.
    command -v clang-format-14 >/dev/null 2>&1 || missing="$missing clang-format-14"
fi

if [ "$fuzz" = 1 ]; then
    # One probe for all three: clang, its fuzzer/sanitizer runtimes, libomp.
    probe=$(mktemp -d)
    printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { (void)d; return (int)n * 0; }\n' \
        > "$probe/probe.c"
    if ! command -v clang >/dev/null 2>&1; then
        missing="$missing clang libclang-rt-dev libomp-dev"
    elif ! clang -fsanitize=fuzzer,address,undefined -fopenmp "$probe/probe.c" \
            -o "$probe/probe" >/dev/null 2>&1; then
        missing="$missing libclang-rt-dev libomp-dev"
    fi
    rm -rf "$probe"
fi

[ -z "$missing" ] && [ -z "$py_missing" ] && exit 0

if [ "$check_only" = 1 ]; then
    echo "smx2d-sim: missing dependencies:$missing$py_missing" >&2
    echo "  run 'make deps' (or: apt-get install$missing$py_missing)" >&2
    exit 1
fi

# py_note WHY: the tools' modules are missing and were not installed because
# WHY; with --tests that fails this script (the caller's status).
py_note() {
    if [ "$tests" = 1 ]; then
        echo "smx2d-sim: error: the tests need Python 3 with $py_modules," >&2
        echo "  not installed ($1): apt-get install$py_missing" >&2
        return 1
    fi
    echo "smx2d-sim: note: the Python tools (smx2d-plot, smx2d-compare and the DICOM tools," >&2
    echo "  docs/dicom.md) need Python 3 with $py_modules," >&2
    echo "  not installed ($1): apt-get install$py_missing, or pip install $py_modules;" >&2
    echo "  the build and the simulator do not need them (their tests skip, and make test" >&2
    echo "  fails naming them)" >&2
    return 0
}

if ! command -v apt-get >/dev/null 2>&1; then
    if [ -n "$missing" ]; then
        echo "smx2d-sim: missing build dependencies:$missing" >&2
        echo "  this is not an apt-based system: install the equivalents of" >&2
        echo "  gcc make pkg-config cmake HDF5 (serial, with headers) libyaml (with headers)" >&2
        echo "  Nettle (with headers; SHA-256) cJSON (with headers; the benchmark's JSON)" >&2
        [ "$mpi" = 1 ] && echo "  and Open MPI (headers, mpicc, mpirun)" >&2
        [ "$fuzz" = 1 ] && echo "  and clang with libFuzzer, the sanitizer runtimes and libomp" >&2
        [ "$format" = 1 ] && echo "  and clang-format 14" >&2
    fi
    if [ -n "$py_missing" ]; then py_note "this is not an apt-based system" || exit 1; fi
    [ -z "$missing" ]
    exit
fi

if [ "$(id -u)" = 0 ]; then
    SUDO=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    SUDO="sudo -n"
else
    if [ -n "$missing" ]; then
        echo "smx2d-sim: missing build dependencies:$missing" >&2
        echo "  install them with:" >&2
        echo "    sudo apt-get update && sudo apt-get install -y$missing" >&2
    fi
    if [ -n "$py_missing" ]; then py_note "that needs root or sudo" || exit 1; fi
    [ -z "$missing" ]
    exit
fi

export DEBIAN_FRONTEND=noninteractive
echo "smx2d-sim: installing$missing$py_missing"
$SUDO apt-get update -qq || exit 1
if [ -n "$missing" ]; then
    # shellcheck disable=SC2086
    $SUDO apt-get install -y -qq --no-install-recommends $missing || exit 1
fi
if [ -n "$py_missing" ]; then
    # shellcheck disable=SC2086
    $SUDO apt-get install -y -qq --no-install-recommends $py_missing || { py_note "apt-get failed" || exit 1; }
fi
if [ "$tests" = 1 ] && ! py_has_modules python3 && ! py_has_modules /usr/bin/python3; then
    echo "smx2d-sim: error: installed$py_missing, but no python3 imports $py_modules" >&2
    exit 1
fi
exit 0
