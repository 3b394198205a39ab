#!/bin/sh
# Heterogeneous media against one medium on the GPU (BENCHMARKS.md,
# "Heterogeneous media"): the dense Production step and its pencil run with a
# map of real materials and with the CT phantom resampled onto the grid, then
# config/bench/pencil150.yaml and config/ct_phantom.yaml as whole commands;
# each with the default kernels and with backend.fused=false (one kernel per
# operator over the whole grid). Last, bench/ct_per_spot's per-spot field
# through the CT and in water, with the default kernels.
#   sh scripts/bench-media.sh [BINARY] [STEPS] [REPEAT]
set -u
bin=${1:-build/smx2d-sim}
steps=${2:-100}
repeat=${3:-2}
root=$(cd "$(dirname "$0")/.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# Production grid: x in [-15, 15] mm, z in [0, 60] mm.
prod_map='geometry.shapes=[{material: bone_compact, z_mm: [10, 20]}, {material: lung, z_mm: [25, 40], x_mm: [-15, 0], density_g_cm3: 0.26}, {material: adipose, z_mm: [40, 60], x_mm: [0, 15]}]'
pencil_map='geometry.shapes=[{material: bone_compact, z_mm: [20, 40]}, {material: lung, z_mm: [60, 80], x_mm: [-30.25, 0], density_g_cm3: 0.26}]'
ct_file="geometry.ct.file=$root/data/ct_phantom.h5"
ct_cal="geometry.ct.calibration=$root/data/ct_schneider2000.csv"

bench() { # LABEL [--set ...]
    label=$1
    shift
    echo "# production, $label"
    "$bin" --bench production --bench-steps "$steps" "$@" 2>&1 | grep -E "^production|^pencil run"
}
bench "one medium"
bench "one medium, fused=false" --set backend.fused=false
bench "shapes of bone, lung, adipose" --set "$prod_map"
bench "shapes of bone, lung, adipose, fused=false" --set "$prod_map" --set backend.fused=false
bench "CT phantom resampled" --set "$ct_file" --set "$ct_cal"
bench "CT phantom resampled, fused=false" --set "$ct_file" --set "$ct_cal" --set backend.fused=false

whole() { # LABEL PLAN [--set ...]
    label=$1 plan=$2
    shift 2
    i=1
    while [ "$i" -le "$repeat" ]; do
        t0=$(date +%s.%N)
        "$bin" "$root/$plan" --device cuda --overwrite --set "output.file=$out/r.h5" "$@" >"$out/log" 2>&1
        rc=$?
        t1=$(date +%s.%N)
        if [ "$rc" != 0 ]; then
            echo "$label: exit $rc" >&2
            tail -5 "$out/log" >&2
            return 1
        fi
        printf '%-44s run %d  whole command %6.3f s  %s\n' "$label" "$i" "$(awk "BEGIN { print $t1 - $t0 }")" \
            "$(sed -n 's/^  wall time *[0-9.]* s (\(.*\))$/\1/p' "$out/log")"
        i=$((i + 1))
    done
    grep -E "^  steps|^  R80 / R20" "$out/log"
}
whole "pencil150, one medium" config/bench/pencil150.yaml
whole "pencil150 through bone and lung" config/bench/pencil150.yaml --set "$pencil_map"
whole "pencil150 through bone and lung, fused=false" config/bench/pencil150.yaml --set "$pencil_map" \
    --set backend.fused=false
whole "ct_phantom" config/ct_phantom.yaml
whole "ct_phantom, fused=false" config/ct_phantom.yaml --set backend.fused=false
# Per-spot doses through the CT against the same field in water
# (docs/bench/media.md): the per-spot phases too.
perspot() { # LABEL PLAN
    whole "$@"
    grep -E "^  per-spot time" "$out/log"
}
perspot "per-spot, 187 spots through the CT" bench/ct_per_spot/plan.yaml
perspot "per-spot, 187 spots in water" bench/ct_per_spot/plan_water.yaml
