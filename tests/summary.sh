#!/bin/sh
# The binary's summary and its warnings about what the grid cuts off, on
# tests/plans/tiny.yaml (a 30 MeV pencil beam in 12 mm of water), one case per
# CTest test:
#   sh tests/summary.sh CASE BUILD_DIR      (from the repository root)
# beyond_depth  a 40 MeV beam (range 14.9 mm): the dry run predicts it, the run warns
# beyond_side   the beam near a side: the dry run predicts it, the run warns
# inside        the plan as it is: no warning from either
# media         a dense slab before the peak: the summary's peak is the dose's, not the slab
# The /summary group (figures and warnings) is checked by tests/test_summary_file.py.
set -u
case_name=$1
build=$2
. "$(pwd)/tests/case_harness.sh"
sed "s|../../data/|$root/data/|" "$root/tests/plans/tiny.yaml" >"$tmp/tiny.yaml"
# run ARGS...: the tiny plan on the CPU without snapshots; stdout and stderr in $tmp/out.
run() {
    "$bin" "$tmp/tiny.yaml" --device cpu --overwrite --output "$tmp/r.h5" \
        --set output.snapshot_steps=[] --set output.snapshot_final=false "$@" >"$tmp/out" 2>&1 ||
        { cat "$tmp/out" >&2; fail "exit $?: $*"; }
}
has() { grep -q -- "$1" "$tmp/out" || { cat "$tmp/out" >&2; fail "no '$1' in the output of the $2"; }; }
lacks() { ! grep -q -- "$1" "$tmp/out" || { cat "$tmp/out" >&2; fail "'$1' in the output of the $2"; }; }

case "$case_name" in
beyond_depth)
    set -- --set beam.energy_MeV=40 --set grid.energy.E_max_MeV=40
    run --dry-run "$@"
    has "warning: .*the beam will not stop inside the grid: it leaves the far edge (12 mm)" "dry run"
    has "^reach: .*the beam leaves the grid at" "dry run"
    run "$@"
    has "warning: the beam reaches the grid's far edge: the depth dose there is" "run"
    has "of the protons left the grid through its edges (escape tally spatial_leak); R80 is undefined" "run"
    # Not "nan" alone: the reason.
    has "R80 / R20  *undefined: the depth dose does not fall below half its maximum inside the grid" "run"
    lacks " nan" "run"
    # The prediction comes first, before the step log (the summary's warning
    # comes after it).
    first=$(grep -n "will not stop inside the grid" "$tmp/out" | head -1 | cut -d: -f1)
    step=$(grep -n "^ *step " "$tmp/out" | head -1 | cut -d: -f1)
    [ -n "$first" ] && [ -n "$step" ] && [ "$first" -lt "$step" ] ||
        { cat "$tmp/out" >&2; fail "the run does not say first that the beam leaves the grid"; }
    # output.beyond_grid: fail refuses the plan before any work, and the dry run too.
    "$bin" "$tmp/tiny.yaml" --device cpu --overwrite --output "$tmp/f.h5" \
        --set output.beyond_grid=fail "$@" >"$tmp/out" 2>&1
    rc=$?
    [ $rc = 2 ] || { cat "$tmp/out" >&2; fail "beyond_grid=fail: exit $rc, expected 2"; }
    has "output.beyond_grid: fail: the beam reaches beyond the grid" "refused run"
    [ ! -e "$tmp/f.h5" ] || fail "a refused run left a result"
    "$bin" "$tmp/tiny.yaml" --device cpu --dry-run --output "$tmp/f.h5" \
        --set output.beyond_grid=fail "$@" >"$tmp/out" 2>&1
    rc=$?
    [ $rc = 2 ] || { cat "$tmp/out" >&2; fail "beyond_grid=fail dry run: exit $rc, expected 2"; }
    ;;
beyond_side)
    set -- --set beam.x_mm=4.9
    run --dry-run "$@"
    has "warning: .*the beam reaches beyond the grid's sides" "dry run"
    run "$@"
    has "warning: the beam reaches the grid's sides" "run"
    # Spots: the verb agrees with how many of them reach a side.
    printf 'energy_MeV, x_mm, weight\n30, 4.9, 1\n30, -4.9, 1\n30, 0, 1\n' >"$tmp/two.csv"
    run --dry-run --set "beam.spots_file=$tmp/two.csv"
    has "warning: .*2 of the 3 spots (the first: spot 1, 30 MeV at x = 4.9 mm) reach beyond the grid's sides" "dry run of spots"
    printf 'energy_MeV, x_mm, weight\n30, 0, 1\n30, 4.9, 1\n' >"$tmp/one.csv"
    run --dry-run --set "beam.spots_file=$tmp/one.csv"
    has "warning: .*1 of the 2 spots (the first: spot 2, 30 MeV at x = 4.9 mm) reaches beyond the grid's sides" "dry run of spots"
    ;;
inside)
    run --dry-run
    has "^reach: *CSDA range 8.8.* mm along the beam's path, the grid 12 mm deep" "dry run"
    lacks "warning" "dry run"
    run
    lacks "warning" "run"
    has "distal peak (the maximum)" "run"
    ;;
media)
    # A 1 mm slab at 3 g/cm3 from 3 to 4 mm: its energy per cell is three
    # times its dose, more than the peak's; the peak is where the beam stops.
    printf 'geometry:\n  shapes:\n    - {material: water, z_mm: [3, 4], density_g_cm3: 3.0}\n' >>"$tmp/tiny.yaml"
    run
    peak=$(sed -n 's/^  distal peak (the maximum) *\([0-9.]*\) mm.*/\1/p' "$tmp/out")
    [ -n "$peak" ] || { cat "$tmp/out" >&2; fail "no distal peak line"; }
    awk -v p="$peak" 'BEGIN { exit !(p > 5.0) }' ||
        fail "the distal peak at $peak mm: in or next to the slab (3-4 mm), not where the beam stops"
    lacks "warning" "run"
    ;;
*)
    fail "unknown case $case_name"
    ;;
esac
echo "ok: $case_name"
