#!/bin/sh
# Runs the plans behind the figures the user documents quote and prints them
# in the documents' own table forms, so that a figure can be regenerated
# rather than carried over from an older build:
#   sh scripts/doc-figures.sh BUILD_DIR [SECTION...]
# SECTION: grid (docs/model.md, "Choosing the grid": the 100 MeV rows),
# grid_all (the same table's every row: 70, 100 and 150 MeV, both schemes),
# window (docs/model.md, "The direction window"), warnings (the plan warnings'
# figures, src/input/plan_warn.c and docs/accuracy-and-speed.md), compare
# (docs/postprocessing.md's smx2d-compare example), csv (the README's excerpt
# of config/sobp_spots.csv). Default: all. CPU backend, 2 threads; the wall
# times of a loaded machine are not the documents' (they quote an idle one).
# tests/test_doc_figures.py checks the default rows against a run.
set -eu
build=${1:?usage: sh scripts/doc-figures.sh BUILD_DIR [grid|window|warnings|compare|csv]...}
shift
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$(cd "$build" && pwd)/smx2d-sim
py=python3
python3 -c 'import h5py, numpy' 2>/dev/null || py=/usr/bin/python3
tmp=$(mktemp -d /tmp/smx-doc-figures-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
sections=${*:-grid window warnings compare csv}

# row E D NZ NX PSTAR_MM: one beam energy on one grid, both schemes.
row() {
    for scheme in shift moments; do
        run "r$1_$2_$scheme" --set beam.energy_MeV=$1 --set grid.energy.E_max_MeV=$1 \
            --set grid.space.nz=$3 --set grid.space.nx=$4 --set grid.space.dx_mm=$2 \
            --set grid.space.dz_mm=$2 --set transport.step_mm=$2 \
            --set transport.streaming_scheme=$scheme
        echo "$1 MeV, $2 mm, $3 x $4, $scheme: $(figures "r$1_$2_$scheme" $5)"
    done
}

# run NAME --set ...: the quickstart plan with the sets, CPU, no snapshots.
run() {
    name=$1
    shift
    start=$(date +%s.%N)
    "$bin" "$root/config/quickstart.yaml" --device cpu --threads 2 --quiet --overwrite \
        --output "$tmp/$name.h5" --set output.snapshot_steps=[] "$@"
    echo "$name $(awk "BEGIN { print $(date +%s.%N) - $start }")" >> "$tmp/wall"
}

# figures NAME PSTAR_MM: R80 - PSTAR, R80 - R20, peak/entrance, lateral rms
# and core sigma at R80/2, theta_boundary, the wall time.
figures() {
    "$py" - "$tmp/$1.h5" "$2" "$(grep "^$1 " "$tmp/wall" | cut -d' ' -f2)" "$root/scripts" <<'PY'
import sys
import h5py
import numpy as np
sys.path.insert(0, sys.argv[4])
from smx2d_post import figures
f = h5py.File(sys.argv[1], "r")
s = f["summary"]
r80, r20 = float(s["R80_mm"][()]), float(s["R20_mm"][()])
d = f["dose/dose_Gy"][()]
z, x = f["axes/z_centres_mm"][()], f["axes/x_centres_mm"][()]
class D: pass
dd = D(); dd.values, dd.z = d, z
core = figures.core_sigma(x, figures.profile_at(dd, 0.5 * r80))
t = f["tallies"]
names = t.attrs["channel_names"]
names = (names.decode() if isinstance(names, bytes) else names).split(",")
tb = float(t["cumulative_weight"][()][names.index("theta_boundary")])
print("R80-PSTAR %+.2f mm | R80-R20 %.2f mm | peak/entrance %.2f | rms %.2f mm | core %.2f mm | "
      "theta_boundary %.1e | wall %.2f s" % (r80 - float(sys.argv[2]), r20 - r80, float(s["peak_to_entrance"][()]),
      float(s["lateral_rms_at_half_R80_mm"][()]), core, tb, float(sys.argv[3])))
PY
}

for section in $sections; do
case $section in
grid)
    echo "== docs/model.md, Choosing the grid: 100 MeV (PSTAR projected range 77.07 mm)"
    run g100_1 --set grid.space.nx=41 --set grid.space.nz=85 --set grid.space.dx_mm=1 \
        --set grid.space.dz_mm=1 --set transport.step_mm=1
    echo "1.0 mm, 85 x 41, shift: $(figures g100_1 77.07)"
    run g100_1m --set grid.space.nx=41 --set grid.space.nz=85 --set grid.space.dx_mm=1 \
        --set grid.space.dz_mm=1 --set transport.step_mm=1 --set transport.streaming_scheme=moments
    echo "1.0 mm, 85 x 41, moments: $(figures g100_1m 77.07)"
    run g100_05
    echo "0.5 mm, 170 x 81, shift (the quickstart plan): $(figures g100_05 77.07)"
    run g100_05m --set transport.streaming_scheme=moments
    echo "0.5 mm, 170 x 81, moments: $(figures g100_05m 77.07)"
    ;;
grid_all)
    echo "== docs/model.md, Choosing the grid: every row (PSTAR projected ranges)"
    row 70 1.0 50 31 40.75
    row 70 0.5 100 61 40.75
    row 70 0.25 200 121 40.75
    row 100 1.0 85 41 77.07
    row 100 0.5 170 81 77.07
    row 150 1.0 170 41 157.60
    row 150 0.5 340 81 157.60
    ;;
window)
    echo "== docs/model.md, The direction window: 100 MeV, 0.5 mm"
    for w in "41 20" "21 20" "81 20" "41 10" "11 5"; do
        set -- $w
        run "w$1_$2" --set grid.angle.n_bins=$1 --set grid.angle.half_width_deg=$2
        echo "$1 over +-$2 deg: $(figures "w$1_$2" 77.07)"
    done
    ;;
warnings)
    echo "== the plan warnings (src/input/plan_warn.c): 100 MeV in water"
    run s1 --set grid.space.nz=85 --set grid.space.dz_mm=1 --set transport.step_mm=1
    echo "dz 1, step 1: $(figures s1 77.07)"
    run s05 --set grid.space.nz=85 --set grid.space.dz_mm=1 --set transport.step_mm=0.5
    echo "dz 1, step 0.5: $(figures s05 77.07)"
    run ref
    echo "dz 0.5, step 0.5: $(figures ref 77.07)"
    run l1 --set transport.step_mm=1
    echo "dz 0.5, step 1: $(figures l1 77.07)"
    run b40 --set grid.angle.n_bins=40
    echo "40 directions: $(figures b40 77.07)"
    ;;
compare)
    echo "== docs/postprocessing.md, smx2d-compare: the quickstart against 99.7 MeV"
    run quickstart
    run q997 --set beam.energy_MeV=99.7
    (cd "$tmp" && "$py" "$root/scripts/smx2d-compare" quickstart.h5 q997.h5) | sed 's/^/    /'
    ;;
csv)
    echo "== README.md, the excerpt of config/sobp_spots.csv"
    grep -v '^#' "$root/config/sobp_spots.csv" | head -2 | sed 's/^/    /'
    ;;
*)
    echo "doc-figures: unknown section '$section'" >&2
    exit 1
    ;;
esac
done
