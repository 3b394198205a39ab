#!/bin/sh
# MPI on one GPU (docs/mpi.md): a field's total and per-spot doses from 1 and
# 2 ranks sharing the GPU, against the plain run. Run on the GPU machine from
# the repository root, with the dist tree of `make dist MPI=1` and, for the
# plain run, a binary of the build without MPI (its own dist tree's, or one
# copied into the MPI tree's bin/, whose lib/ holds every library it needs;
# without it the MPI binary run alone is the reference):
#   sh scripts/mpi-gpu-check.sh MPI_TREE [PLAIN_BINARY] OUTDIR
# then, where h5py is (this script does it when the GPU machine has h5py):
#   /usr/bin/python3 tests/same_dose.py OUTDIR/plain.h5 OUTDIR/alone.h5 OUTDIR/np1.h5 OUTDIR/np2.h5
# The field: config/bench/field.yaml's spot map, every EVERY-th spot (default
# 21: 40 spots, 70-230 MeV) on a 1 mm grid with 1 mm steps and two spots at
# once per rank (backend.per_spot_lanes=2, so that two ranks' states fit on
# one GPU; SETS="" gives the plan's 0.5 mm grid and each rank its own choice),
# --device cuda, output.per_spot_dose. Prints each run's summary line and the
# job's /mpi record via the log; runs as root too.
set -eu
mpi_tree=$1
if [ $# -ge 3 ]; then plain=$2; out=$3; else plain=""; out=$2; fi
every=${EVERY:-21}
sets=${SETS-"--set grid.space.dx_mm=1 --set grid.space.dz_mm=1 --set grid.space.nx=150 --set grid.space.nz=340 --set transport.step_mm=1 --set backend.per_spot_lanes=2"}
mkdir -p "$out"
out=$(cd "$out" && pwd)
root=$(pwd)
awk -v k="$every" '/^#/ || /^energy/ { print; next } { if (n++ % k == 0) print }' \
    config/bench/field_spots.csv > "$out/spots.csv"
sed "s#../../data/#$root/data/#; s#field_spots.csv#$out/spots.csv#" config/bench/field.yaml > "$out/field.yaml"
# As root too; no ptrace-based single copy between ranks (containers often forbid it).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
args="$out/field.yaml --device cuda $sets --set output.per_spot_dose=true --overwrite"
# run NAME CMD...: the run's log in OUTDIR/NAME.log, its wall time and phases printed.
run() {
    name=$1
    shift
    t0=$(date +%s.%N)
    if ! "$@" $args --set output.file="$out/$name.h5" > "$out/$name.log" 2>&1; then
        cat "$out/$name.log"
        echo "mpi-gpu-check: $name failed (exit code above)" >&2
        exit 1
    fi
    t1=$(date +%s.%N)
    printf '%-6s %6.2f s whole;%s\n' "$name" "$(awk "BEGIN { print $t1 - $t0 }")" \
        "$(sed -n 's/.*wall time  *[0-9.]* s\(.*\)/\1/p' "$out/$name.log")"
    grep '^MPI: ' "$out/$name.log" | sed 's/^/       /' || true
}
"$mpi_tree/bin/smx2d-sim" --version
[ -n "$plain" ] && run plain "$plain"
run alone "$mpi_tree/bin/smx2d-sim"
run np1 "$mpi_tree/bin/mpirun" --bind-to none -np 1 "$mpi_tree/bin/smx2d-sim"
run np2 "$mpi_tree/bin/mpirun" --bind-to none -np 2 "$mpi_tree/bin/smx2d-sim"
files="$out/alone.h5 $out/np1.h5 $out/np2.h5"
[ -n "$plain" ] && files="$out/plain.h5 $files"
if /usr/bin/python3 -c 'import h5py, numpy' 2>/dev/null; then
    /usr/bin/python3 tests/same_dose.py $files
else
    echo "no h5py here: compare the files elsewhere with"
    echo "  /usr/bin/python3 tests/same_dose.py $files"
fi
