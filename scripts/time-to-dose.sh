#!/bin/sh
# Time to dose: the whole command as a user runs it, for the benchmark plans
# of config/bench/ (BENCHMARKS.md). Each plan runs REPEAT times (default 3);
# every run prints its wall time measured around the process and the phases
# the program reports (input, tables, setup, steps, download, per-spot, output).
#   sh scripts/time-to-dose.sh [BINARY] [DEVICE] [REPEAT]
# BINARY defaults to build/smx2d-sim, DEVICE to auto. One plan only:
#   TTD_ONLY=NAME TTD_PLAN=PLAN TTD_SETS="--set KEY=VALUE ..." sh scripts/time-to-dose.sh ...
set -u
bin=${1:-build/smx2d-sim}
device=${2:-auto}
repeat=${3:-3}
root=$(cd "$(dirname "$0")/.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
now() { date +%s.%N; }

run() { # NAME PLAN [--set ...]
    name=$1 plan=$2
    shift 2
    i=1
    while [ "$i" -le "$repeat" ]; do
        t0=$(now)
        "$bin" "$root/$plan" --device "$device" --overwrite --set "output.file=$out/$name.h5" "$@" \
            >"$out/log" 2>&1
        rc=$?
        t1=$(now)
        if [ "$rc" != 0 ]; then
            echo "$name: exit $rc" >&2
            tail -5 "$out/log" >&2
            return 1
        fi
        wall=$(awk "BEGIN { print $t1 - $t0 }")
        phases=$(sed -n 's/^  wall time *[0-9.]* s (\(.*\))$/\1/p' "$out/log")
        size=$(du -m "$out/$name.h5" | cut -f1)
        spots=$(sed -n 's/^  spot \([0-9]*\)\/\1 .* \([0-9.]*\) spots\/s .*/\2 spots\/s/p' "$out/log")
        printf '%-16s run %d  whole command %6.3f s  file %5s MB  phases: %s %s\n' "$name" "$i" "$wall" "$size" \
            "$phases" "$spots"
        i=$((i + 1))
    done
}

echo "time to dose: $("$bin" --version | head -1), device $device"
[ -n "${TTD_ONLY:-}" ] && { run "$TTD_ONLY" "$TTD_PLAN" $TTD_SETS; exit; }
run quickstart config/quickstart.yaml
run pencil150 config/bench/pencil150.yaml
run pencil230 config/bench/pencil230.yaml
run field config/bench/field.yaml
run field-per-spot config/bench/field.yaml --set output.per_spot_dose=true
