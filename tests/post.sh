#!/bin/sh
# Runs one Python test of the post-processing tools with a python3 that has
# numpy, h5py and matplotlib: the one on PATH (which `#!/usr/bin/env python3`,
# the tools' first line, runs), else /usr/bin/python3 (where the Debian packages
# install them); exits 77 (skipped) when neither has them.
#   sh tests/post.sh test_NAME.py BUILD_DIR [ARG...]   (from the repository root)
set -u
for py in python3 /usr/bin/python3; do
    if command -v "$py" >/dev/null 2>&1 &&
       "$py" -c 'import numpy, h5py, matplotlib' >/dev/null 2>&1; then
        test=$1
        shift
        exec "$py" "tests/$test" "$@"
    fi
done
echo "SKIP: no python3 with numpy, h5py and matplotlib (make deps installs them)"
exit 77
