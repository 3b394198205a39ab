#!/bin/sh
# Runs one Python test (the post-processing tools', the config plans') with
# the interpreter the build found (SMX_PYTHON, tests/python.sh); exits 77
# (skipped), naming what that interpreter lacks, when it cannot import the
# modules the test needs.
#   sh tests/post.sh test_NAME.py BUILD_DIR [ARG...]   (from the repository root)
set -u
test=$1
shift
. "$(pwd)/tests/python.sh"
case "$test" in
# The plans' runs read back with h5py alone (tests/test_config_plans.py).
test_config_plans.py) need_python numpy h5py ;;
# The DICOM tools' tests read DICOM with pydicom and check resampling with SciPy.
test_import_ct.py | test_dicom_dose.py | test_import_spots.py) need_python numpy h5py scipy pydicom ;;
# The tools' tests import smx2d_post, whose plots need matplotlib.
*) need_python numpy h5py matplotlib ;;
esac
exec "$py" "tests/$test" "$@"
