#!/bin/sh
# Per-spot doses per second against the number of MPI ranks (docs/mpi.md,
# BENCHMARKS.md): the `field` benchmark's spot map (config/bench/field.yaml),
# run with output.per_spot_dose on 1 .. MAX_RANKS ranks, each once, timed
# around the whole command.
#   sh scripts/mpi-bench.sh MPI_BINARY [MAX_RANKS [PLAIN_BINARY]]
# Environment:
#   EVERY    take every EVERY-th spot of the map (default 21: 40 spots, all 20
#            energies); 1 = all 820
#   SETS     --set arguments for the plan (default: a 2 mm grid, 2 mm steps and
#            21 directions, small enough for a CPU; "" = the plan's 0.5 mm grid)
#   THREADS  OpenMP threads per rank (default 1; the CPU backend). On GPUs
#            give each rank its share of the host's cores: a field's per-spot
#            rows are made on the host's threads. The ranks run unbound
#            (--bind-to none; docs/mpi.md).
#   MPIRUN   the launcher (default mpirun; a dist tree's bin/mpirun)
#   RANKS    the rank counts to run (default 1 .. MAX_RANKS), e.g. "1 2 4"
#   KEEP     a folder that keeps each run's log and result file (npR.log,
#            npR.h5); the results are then compared with tests/same_dose.py
#            where h5py is (/dose and every per-spot dataset, byte for byte)
# PLAIN_BINARY, when given, is also run alone (a build without MPI) with
# THREADS and with THREADS x MAX_RANKS threads, and MAX_RANKS copies of it at
# once (THREADS each, no MPI): how much parallel work this machine has room
# for at the moment, the ceiling of the ranks' speed-up.
# Prints one line per run: ranks, whole command, the transport (rank 0's
# total-dose steps, its per-spot block and the gather: waiting for the other
# ranks, which start their blocks while rank 0 runs the total, then their
# rows), spots/s over rank 0's per-spot part (per-spot + gather), the parallel
# efficiency of the transport against the first MPI run's (its time x its
# ranks over this run's time x ranks), the run's phases and its MPI lines (the
# division; the gather's wait, bytes and time).
set -eu
bin=$1
max=${2:-2}
plain=${3:-}
root=$(cd "$(dirname "$0")/.." && pwd)
every=${EVERY:-21}
sets=${SETS-"--set grid.space.dx_mm=2 --set grid.space.dz_mm=2 --set grid.space.nx=75 --set grid.space.nz=170 --set transport.step_mm=2 --set grid.angle.n_bins=21"}
threads=${THREADS:-1}
mpirun=${MPIRUN:-mpirun}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
awk -v k="$every" '/^#/ || /^energy/ { print; next } { if (n++ % k == 0) print }' \
    "$root/config/bench/field_spots.csv" > "$tmp/spots.csv"
n=$(grep -c '^[0-9]' "$tmp/spots.csv")
sed "s#../../data/#$root/data/#; s#field_spots.csv#$tmp/spots.csv#" "$root/config/bench/field.yaml" > "$tmp/field.yaml"
echo "mpi-bench: $n spots (every $every of config/bench/field_spots.csv), sets: ${sets:-none}; $threads thread(s) per rank"
echo "host $(hostname), $(nproc) cores; $("$bin" --version | sed -n 's/^  MPI: //p' | cut -d, -f1)"
echo "load average before the runs: $(cut -d" " -f1-3 /proc/loadavg) (other work on this machine slows every run)"

now() { date +%s.%N; }
# phase NAME: seconds of phase NAME in the summary's wall-time line (0 when absent).
phase() { sed -n "s/.*wall time .*[(,] $1 \([0-9.]*\).*/\1/p" "$tmp/log" | head -n 1 | grep . || echo 0; }
base=""  # the first MPI run's transport time (total steps + per-spot + gather) times its ranks
report() { # label ranks seconds
    st=$(phase steps)
    ps=$(phase per-spot)
    ga=$(phase gather)
    awk -v l="$1" -v r="$2" -v w="$3" -v st="$st" -v ps="$ps" -v ga="$ga" -v n="$n" -v b="$base" 'BEGIN {
        e = (b == "") ? "" : sprintf("  efficiency %.2f", b / (r * (st + ps + ga)))
        printf "%-22s ranks %d  whole %7.2f s  transport %7.2f s (per-spot %.2f, gather %.3f)  %7.2f spots/s%s\n",
               l, r, w, st + ps + ga, ps, ga, n / (ps + ga), e }'
    sed -n 's/.*wall time  *\(.*\)/    phases: \1/p' "$tmp/log"
    grep '^MPI: ' "$tmp/log" | sed 's/^/    /' || true
}
run() { # label ranks cmd...
    label=$1 ranks=$2
    shift 2
    t0=$(now)
    "$@" "$tmp/field.yaml" $sets --set output.per_spot_dose=true --set output.file="$tmp/out.h5" --overwrite \
        > "$tmp/log" 2>&1 || { cat "$tmp/log" >&2; echo "mpi-bench: $label failed" >&2; exit 1; }
    t1=$(now)
    report "$label" "$ranks" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')"
}

if [ -n "$plain" ]; then
    OMP_NUM_THREADS=$threads run "plain, $threads thread(s)" 1 "$plain"
    all=$((threads * max))
    OMP_NUM_THREADS=$all run "plain, $all thread(s)" 1 "$plain"
    # The control: MAX_RANKS independent copies at once, each timed on its own.
    t0=$(now)
    c=1
    while [ "$c" -le "$max" ]; do
        ( OMP_NUM_THREADS=$threads "$plain" "$tmp/field.yaml" $sets --set output.per_spot_dose=true \
              --set output.file="$tmp/copy$c.h5" --overwrite > "$tmp/copy$c.log" 2>&1
          echo "$(now)" > "$tmp/copy$c.end" ) &
        c=$((c + 1))
    done
    wait
    c=1
    while [ "$c" -le "$max" ]; do
        awk -v l="$max copies at once: #$c" -v t0="$t0" -v t1="$(cat "$tmp/copy$c.end")" -v n="$n" 'BEGIN {
            printf "%-22s ranks -  whole %7.2f s  (%.2f spots/s for its %d spots, %.2f for all copies)\n",
                   l, t1 - t0, n / (t1 - t0), n, 0 }' | sed 's/, 0.00 for all copies//'
        c=$((c + 1))
    done
fi
ranks=${RANKS:-$(seq 1 "$max")}
[ -n "${KEEP:-}" ] && mkdir -p "$KEEP"
kept=""
for r in $ranks; do
    OMP_NUM_THREADS=$threads run "mpirun -np $r" "$r" \
        "$mpirun" --oversubscribe --allow-run-as-root --bind-to none -x OMP_NUM_THREADS -np "$r" "$bin"
    if [ -z "$base" ]; then
        base=$(awk -v r="$r" -v st="$(phase steps)" -v ps="$(phase per-spot)" -v ga="$(phase gather)" \
            'BEGIN { print r * (st + ps + ga) }')
    fi
    if [ -n "${KEEP:-}" ]; then
        cp "$tmp/log" "$KEEP/np$r.log"
        cp "$tmp/out.h5" "$KEEP/np$r.h5"
        kept="$kept $KEEP/np$r.h5"
    fi
done
if [ -n "$kept" ]; then
    if /usr/bin/python3 -c 'import h5py, numpy' 2>/dev/null; then
        /usr/bin/python3 "$root/tests/same_dose.py" $kept
    elif python3 -c 'import h5py, numpy' 2>/dev/null; then
        python3 "$root/tests/same_dose.py" $kept
    else
        echo "no h5py here: compare the files elsewhere with tests/same_dose.py$kept"
    fi
fi
