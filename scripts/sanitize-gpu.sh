#!/bin/sh
# compute-sanitizer's four tools on the GPU tests' small cases (test_gpu quick:
# one case of each operator, two full steps of the one-pass and the two-pass
# fused step, a per-spot field; racecheck, much the slowest, runs the same
# without the per-spot field), on a
# short plan (tests/plans/tiny.yaml on the GPU) and on a field's per-spot
# doses with three spots side by side in the slots of one state (every tool). Exit 1 if any tool reports an
# error. Needs a GPU and compute-sanitizer (CUDA Toolkit) on the PATH.
#   sh scripts/sanitize-gpu.sh [TEST_GPU] [SMX2D_SIM]      (make sanitize-gpu)
# SANITIZE_TIMEOUT=SECONDS bounds each tool's run (default: none); a run cut
# off counts as a failure. SANITIZE_TOOLS="memcheck initcheck" runs only those
# tools (default: all four).
set -u
test_gpu=${1:-build/tests/test_gpu}
bin=${2:-build/smx2d-sim}
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
command -v compute-sanitizer >/dev/null 2>&1 || { echo "compute-sanitizer not found" >&2; exit 1; }
printf 'energy_MeV, x_mm, weight\n70, -5, 1\n72, 0, 1\n75, 5, 1\n' > "$tmp/spots.csv"
status=0
for tool in ${SANITIZE_TOOLS:-memcheck racecheck synccheck initcheck}; do
    for what in test plan spots; do
        if [ "$what" = test ] && [ "$tool" = racecheck ]; then
            set -- "$test_gpu" quick-steps   # racecheck is the slowest: the cases without whole runs
        elif [ "$what" = test ]; then
            set -- "$test_gpu" quick
        elif [ "$what" = plan ]; then
            set -- "$bin" "$root/tests/plans/tiny.yaml" --device cuda --overwrite --quiet \
                --set "output.file=$tmp/tiny.h5"
        else
            set -- "$bin" "$root/config/bench/field.yaml" --device cuda --overwrite --quiet \
                --set "beam.spots_file=$tmp/spots.csv" --set grid.space.nx=64 --set grid.space.nz=100 \
                --set grid.energy.E_max_MeV=80 --set output.per_spot_dose=true \
                --set "output.file=$tmp/spots.h5"
        fi
        timeout "${SANITIZE_TIMEOUT:-0}" compute-sanitizer --tool "$tool" --error-exitcode 99 "$@" >"$tmp/log" 2>&1
        rc=$?
        summary=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$tmp/log" | tail -1)
        printf '%-10s %-5s exit %3d  %s\n' "$tool" "$what" "$rc" "$summary"
        if [ "$rc" != 0 ]; then
            status=1
            grep -m 20 -E "^=========" "$tmp/log"
        fi
    done
done
exit $status
