#!/bin/sh
# Prints the Python interpreter of the tests, which the Makefile writes into
# the generated CTestTestfile as SMX_PYTHON (tests/*.cmake pass it to every
# test that runs Python; tests/python.sh reads it):
#   sh scripts/find-python.sh [PYTHON]
# PYTHON (make TEST_PYTHON=...) when given; else the first of python3 on PATH
# and /usr/bin/python3 that imports numpy, h5py, matplotlib, scipy and pydicom, as an
# absolute path. When neither does, the first that exists, with a note on
# stderr: its tests then skip, naming the modules it lacks, and `make test`
# fails naming them (tests/allowed-skips.txt does not list a missing module).
set -u
modules="numpy, h5py, matplotlib, scipy, pydicom"
if [ -n "${1:-}" ]; then
    command -v "$1" 2>/dev/null || echo "$1"
    exit 0
fi
for py in python3 /usr/bin/python3; do
    if command -v "$py" >/dev/null 2>&1 && "$py" -c "import $modules" >/dev/null 2>&1; then
        command -v "$py"
        exit 0
    fi
done
for py in python3 /usr/bin/python3; do
    if command -v "$py" >/dev/null 2>&1; then
        echo "smx2d-sim: note: no python3 imports $modules; the Python tests will skip and" \
            "make test fail (make deps installs them)" >&2
        command -v "$py"
        exit 0
    fi
done
echo "smx2d-sim: note: no python3; the Python tests will skip and make test fail (make deps installs it)" >&2
echo python3
