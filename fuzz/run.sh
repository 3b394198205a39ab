#!/bin/sh
# Runs each libFuzzer target of fuzz/ for SECONDS and fails on any crash:
#   sh fuzz/run.sh BUILD_DIR SECONDS [TARGET...]      (make fuzz; docs/dev/testing.md)
# The seeds are made afresh from the repository's plans and tables; what the
# fuzzer adds is kept in BUILD_DIR/fuzz/corpus/TARGET, and a crashing input is
# written to BUILD_DIR/fuzz/crashes/ (rerun it: BUILD_DIR/fuzz/TARGET FILE).
# FUZZ_ARGS adds libFuzzer options (e.g. -runs=1000000 -max_total_time=0).
set -u
build=$1
seconds=$2
shift 2
targets=${*:-"fuzz_plan fuzz_tables"}
# fuzz_plan writes each input to files: on a memory file system it runs about
# five times as fast as on a disk.
if [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then
    export TMPDIR=/dev/shm
fi
work="$build/fuzz"
seeds="$work/seeds"
rm -rf "$seeds"
mkdir -p "$seeds/fuzz_plan" "$seeds/fuzz_tables" "$work/crashes"

# Plans, with the spot map they name appended after the "#%%" line and their
# spots_file pointed at it (fuzz/fuzz_plan.c). Plus one with --set overrides.
i=0
for plan in config/*.yaml tests/plans/*.yaml tests/plan_cases/*.yaml; do
    i=$((i + 1))
    out="$seeds/fuzz_plan/$i-$(basename "$plan")"
    spots=$(sed -n 's/^ *spots_file: *\([^ #]*\).*/\1/p' "$plan" | head -n 1)
    if [ -n "$spots" ] && [ -f "$(dirname "$plan")/$spots" ]; then
        sed 's/^\( *spots_file: *\)[^ #]*/\1spots.csv/' "$plan" > "$out"
        printf '#%%%%\n' >> "$out"
        cat "$(dirname "$plan")/$spots" >> "$out"
    else
        cp "$plan" "$out"
    fi
done
{ cat tests/plans/tiny.yaml; printf '#%%%%\n#%%%%\n'
  printf 'beam.energy_MeV=25\ngrid.space.nx=31\ntransport.operator_order=[stream,theta,energy]\n'; } \
    > "$seeds/fuzz_plan/sets.yaml"
# fuzz_tables reads a description of a table file (fuzz/fuzz_tables.c); the
# empty one is data/pstar_water.h5 as shipped, which it starts from.
: > "$seeds/fuzz_tables/shipped"

# A dictionary of the plan's words: key names, section names and choices.
dict="$work/plan.dict"
sed -n 's/^ *\([A-Za-z_][A-Za-z_0-9]*\):.*/"\1"/p; s/^ *# *\([A-Za-z_][A-Za-z_0-9]*\):.*/"\1"/p' \
    config/plan-reference.yaml | sort -u > "$dict"
sed -n 's/.*one of \(.*\);.*/\1/p' config/plan-reference.yaml | tr ',' '\n' |
    sed 's/^ *//; s/ *$//; /^$/d; s/.*/"&"/' | sort -u >> "$dict"
printf '"#%%%%\\x0a"\n"spots.csv"\n"energy_MeV"\n"x_mm"\n"weight"\n"sigma_x_mm"\n' >> "$dict"
printf '"shapes"\n"material"\n"z_mm"\n"density_g_cm3"\n"bone_compact"\n"lung"\n"- {"\n"[20, 40]"\n' >> "$dict"

failed=0
passed=0
for t in $targets; do
    corpus="$work/corpus/$t"
    mkdir -p "$corpus"
    set -- -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$work/crashes/$t-" ${FUZZ_ARGS:-}
    [ "$t" = fuzz_plan ] && set -- "$@" -dict="$dict"
    echo "fuzz: $t for $seconds s"
    if ! "$work/$t" "$@" "$corpus" "$seeds/$t" > "$work/$t.log" 2>&1; then
        tail -n 60 "$work/$t.log"
        echo "FAIL: $t crashed; the input is in $work/crashes/ (log: $work/$t.log)" >&2
        failed=$((failed + 1))
    else
        grep -E '^Done ' "$work/$t.log" | sed "s/^/  $t: /"
        passed=$((passed + 1))
    fi
done
echo "fuzz: $passed passed, $failed failed"
[ "$failed" = 0 ]
