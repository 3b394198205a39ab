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
#   THREADS  OpenMP threads per rank (default 1; the CPU backend)
#   MPIRUN   the launcher (default mpirun; a dist tree's bin/mpirun)
# PLAIN_BINARY, when given, is also run alone (a build without MPI) with
# THREADS and with THREADS x MAX_RANKS threads, and MAX_RANKS copies of it at
# once (THREADS each, no MPI): how much parallel work this machine has room
# for at the moment, the ceiling of the ranks' speed-up.
# Prints one line per run: ranks, whole command, rank 0's per-spot block, the
# gather (waiting for the other ranks, then their rows), spots/s over the
# per-spot part (per-spot + gather), and the run's phases.
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
report() { # label ranks seconds
    ps=$(phase per-spot)
    ga=$(phase gather)
    awk -v l="$1" -v r="$2" -v w="$3" -v ps="$ps" -v ga="$ga" -v n="$n" 'BEGIN {
        printf "%-22s ranks %d  whole %7.2f s  per-spot %7.2f s  gather %6.3f s  %7.2f spots/s\n",
               l, r, w, ps, ga, n / (ps + ga) }'
    sed -n 's/.*wall time  *\(.*\)/    phases: \1/p' "$tmp/log"
}
run() { # label ranks cmd...
    label=$1 ranks=$2
    shift 2
    t0=$(now)
    "$@" "$tmp/field.yaml" $sets --set output.per_spot_dose=true --set output.file="$tmp/out.h5" --overwrite \
        > "$tmp/log" 2>&1 || { cat "$tmp/log" >&2; echo "mpi-bench: $label failed" >&2; exit 1; }
    t1=$(now)
    report "$label" "$ranks" "$(echo "$t1 - $t0" | bc)"
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
r=1
while [ "$r" -le "$max" ]; do
    OMP_NUM_THREADS=$threads run "mpirun -np $r" "$r" \
        "$mpirun" --oversubscribe --allow-run-as-root -x OMP_NUM_THREADS -np "$r" "$bin"
    r=$((r + 1))
done
