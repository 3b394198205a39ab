#!/bin/sh
# Command-line behaviour of the smx2d-sim binary, one case per CTest test:
#   sh tests/cli.sh CASE BUILD_DIR
# Runs from the repository root; every case works in its own temporary directory.
set -u
case_name=$1
build=$2
. "$(pwd)/tests/case_harness.sh"
. "$root/tests/python.sh"
# expect CODE CMD...: runs CMD, captures stdout/stderr into $tmp/out, checks the exit code.
expect() {
    want=$1; shift
    "$@" >"$tmp/out" 2>&1
    got=$?
    [ "$got" = "$want" ] || { cat "$tmp/out" >&2; fail "exit $got, expected $want: $*"; }
}
tiny() { cp "$root/tests/plans/tiny.yaml" "$tmp/plans/tiny.yaml"; }
mkdir -p "$tmp/plans"
# tiny.yaml finds its table as ../../data relative to itself.
mkdir -p "$tmp/data" && cp "$root/data/pstar_water.h5" "$tmp/data/"
mkdir -p "$tmp/run/plans" && tiny
cp "$tmp/plans/tiny.yaml" "$tmp/run/plans/tiny.yaml"
sed -i 's|../../data/|../../data/|' "$tmp/run/plans/tiny.yaml"
plan="$tmp/run/plans/tiny.yaml"
cp -r "$tmp/data" "$tmp/run/../data" 2>/dev/null || true
# nothing_left NAME: no result, sidecar or temporary file of NAME.h5 in the
# current directory.
nothing_left() {
    [ ! -e "$1.h5" ] || fail "a result was left under the final name $1.h5"
    [ ! -e "$1.xdmf" ] || fail "a sidecar $1.xdmf was left"
    ls | grep -q "^$1.h5.partial" && fail "temporary file left behind: $(ls)"
    return 0
}
# paused_run PHASE ARGS...: starts the tiny plan in the background with the
# test pause at PHASE (the program with its test seams, tests/hooks_main.c)
# and returns once it has paused there; its pid is $pid, its stderr $tmp/err.
paused_run() {
    phase=$1; shift
    # Emptied here, not only by the background run's redirection, which may
    # come after the first grep: the last run's "paused at" would match.
    : >"$tmp/err"
    SMX2D_TEST_PAUSE_AT=$phase "$hooks" plans/tiny.yaml --quiet "$@" 2>"$tmp/err" & pid=$!
    n=0
    until grep -q "paused at $phase" "$tmp/err"; do
        kill -0 $pid 2>/dev/null || { wait $pid; fail "exit $? before the pause at $phase: $(cat "$tmp/err")"; }
        n=$((n + 1))
        [ $n -lt 1200 ] || { kill -KILL $pid; fail "no pause at $phase within 60 s"; }
        sleep 0.05
    done
}

case "$case_name" in
usage)
    expect 0 "$bin" --help
    grep -q "exit codes" "$tmp/out" || fail "--help lacks the exit codes"
    expect 0 "$bin" --version
    grep -q "smx2d-sim 0" "$tmp/out" || fail "--version lacks the version"
    expect 1 "$bin"
    expect 1 "$bin" "$plan" --no-such-option
    grep -q "unknown option '--no-such-option'" "$tmp/out" || fail "unknown option not named"
    expect 1 "$bin" "$plan" --set
    grep -q "\-\-set needs a value" "$tmp/out" || fail "missing value not named: $(cat "$tmp/out")"
    # A --set without KEY=VALUE is a bad command line (1), not bad input.
    expect 1 "$bin" "$plan" --dry-run --set beam.energy_MeV
    grep -q "^smx2d-sim: --set beam.energy_MeV: missing '='; expected --set key.path=value" "$tmp/out" ||
        fail "--set without '=' not explained: $(cat "$tmp/out")"
    expect 1 "$bin" "$plan" --dry-run --set =5
    grep -q "no key before '='" "$tmp/out" || fail "--set without a key not explained: $(cat "$tmp/out")"
    # A misspelt option: the nearest one suggested.
    expect 1 "$bin" "$plan" --dryrun
    grep -q "unknown option '--dryrun'; did you mean --dry-run?" "$tmp/out" || fail "no suggestion: $(cat "$tmp/out")"
    expect 1 "$bin" "$plan" --outptu=x.h5
    grep -q "unknown option '--outptu=x.h5'; did you mean --output?" "$tmp/out" || fail "no suggestion: $(cat "$tmp/out")"
    # The errors of an option that stands for a key name the option as typed.
    expect 2 "$bin" "$plan" --dry-run --output missing/x.h5
    grep -q "^smx2d-sim: error: --output missing/x.h5: output.file: missing/x.h5: output directory missing" "$tmp/out" ||
        fail "--output error does not name --output: $(cat "$tmp/out")"
    expect 2 "$bin" "$plan" --dry-run --threads=many
    grep -q "^smx2d-sim: error: --threads many: backend.threads: 'many' is not an integer" "$tmp/out" ||
        fail "--threads error does not name --threads: $(cat "$tmp/out")"
    expect 2 "$bin" "$plan" --dry-run --device gpu
    grep -q "^smx2d-sim: error: --device gpu: backend.device: 'gpu' is not allowed" "$tmp/out" ||
        fail "--device error does not name --device: $(cat "$tmp/out")"
    # Every option also takes the --opt=value form; options may follow the plan.
    expect 0 "$bin" "$plan" --dry-run --set=beam.energy_MeV=25 --device=cpu --threads=1
    grep -q "(valid)" "$tmp/out" || fail "--opt=value forms not accepted: $(cat "$tmp/out")"
    expect 2 "$bin" --set=beam.energy_MeV=500 "$plan" --dry-run
    grep -q "^smx2d-sim: error: --set beam.energy_MeV=500" "$tmp/out" || fail "--set=KEY=VALUE not applied: $(cat "$tmp/out")"
    expect 1 "$bin" --bench-steps=0 --bench small
    grep -q "positive number, got '0'" "$tmp/out" || fail "bad --bench-steps not named"
    expect 1 "$bin" --bench small,huge
    grep -q "unknown grid 'huge'" "$tmp/out" || fail "unknown bench grid not named"
    expect 1 "$bin" "$plan" "$plan"
    grep -q "more than one plan" "$tmp/out" || fail "second plan not refused"
    ;;
bad_input)
    printf 'grid:\n  energy:\n    E_max_MeV: abc\n' > "$tmp/bad.yaml"
    expect 2 "$bin" "$tmp/bad.yaml"
    grep -q "bad.yaml:3:16: grid.energy.E_max_MeV: 'abc' is not a number" "$tmp/out" ||
        fail "message lacks file:line:col and key: $(cat "$tmp/out")"
    expect 2 "$bin" "$plan" --set beam.energy_MeV=500
    grep -q "beam.energy_MeV" "$tmp/out" || fail "--set error does not name the key"
    expect 2 "$bin" "$tmp/missing.yaml"
    # A corrupt table file: named, with the plan key that points at it.
    printf 'not hdf5\n' > "$tmp/data/pstar_water.h5"
    expect 2 "$bin" "$plan" --dry-run
    grep -q "material.table_file" "$tmp/out" || fail "bad table error lacks the key: $(cat "$tmp/out")"
    grep -q "pstar_water.h5" "$tmp/out" || fail "bad table error lacks the file"
    ;;
dry_run)
    cd "$tmp/run"
    expect 0 "$bin" plans/tiny.yaml --dry-run
    for k in "plan:" "energy:" "angle:" "space:" "memory:" "output:"; do
        grep -q "^$k" "$tmp/out" || fail "--dry-run output lacks '$k'"
    done
    [ ! -e tiny.h5 ] || fail "--dry-run wrote a result"
    # A grid that cannot fit in memory is refused before any work, saying how much it needs.
    expect 2 "$bin" plans/tiny.yaml --dry-run --set grid.space.nx=100000 --set grid.space.nz=100000
    grep -q "needs .* GB" "$tmp/out" || fail "memory error lacks the amount: $(cat "$tmp/out")"
    # Memory is refused up front only below what any run needs (the source's
    # rows and the snapshots); above it the CPU backend runs and stops cleanly
    # when the beam's rows would pass backend.host_memory_bytes, leaving no file.
    expect 2 "$bin" plans/tiny.yaml --dry-run --device cpu --set backend.host_memory_bytes=5e5
    grep -q "needs at least .* GB.*backend.host_memory_bytes" "$tmp/out" || fail "limit not named: $(cat "$tmp/out")"
    expect 0 "$bin" plans/tiny.yaml --dry-run --device cpu --set backend.host_memory_bytes=7e5
    grep -q "this run may use 0.0007 GB" "$tmp/out" || fail "dry run does not show the limit: $(cat "$tmp/out")"
    expect 3 "$bin" plans/tiny.yaml --device cpu --set backend.host_memory_bytes=7e5
    grep -q "more than the 0.0007 GB this run may use (backend.host_memory_bytes" "$tmp/out" ||
        fail "the stop does not say why: $(cat "$tmp/out")"
    [ ! -e tiny.h5 ] || fail "a run stopped for memory left a result"
    # The dry run writes nothing, so an existing result is no error: it says
    # that the run would refuse it. A missing directory is an error naming
    # output.file, as in the run.
    : > tiny.h5
    expect 0 "$bin" plans/tiny.yaml --dry-run
    grep -q "warning: tiny.h5 exists: the run will refuse to replace it" "$tmp/out" || fail "dry run does not say the result exists: $(cat "$tmp/out")"
    [ ! -s tiny.h5 ] || fail "the dry run touched the existing result"
    expect 0 "$bin" plans/tiny.yaml --dry-run --overwrite
    ! grep -q "exists: the run will refuse" "$tmp/out" || fail "dry run with --overwrite warns: $(cat "$tmp/out")"
    rm tiny.h5
    expect 2 "$bin" plans/tiny.yaml --dry-run --output missing/tiny.h5
    grep -q "output.file: missing/tiny.h5: output directory missing" "$tmp/out" || fail "dry run accepted a missing directory: $(cat "$tmp/out")"
    ;;
snapshots)
    cd "$tmp/run"
    # A snapshot taken during the steps is written during the steps: nothing
    # but the final state's write follows the last step line.
    expect 0 "$bin" plans/tiny.yaml --device cpu --set 'output.snapshot_steps=[0, 5]'
    tr -d '\r' < "$tmp/out" > "$tmp/log"
    last=$(grep -n '^ *[0-9][0-9]* ' "$tmp/log" | tail -n 1 | cut -d: -f1)
    sed -n "$((last + 1)),\$p" "$tmp/log" | grep "writing psi" > "$tmp/after"
    [ "$(cat "$tmp/after")" = "writing psi of step 21 (0.000575 GB uncompressed)" ] ||
        fail "writes announced after the last step line: $(cat "$tmp/out")"
    grep -q "step_000005" tiny.h5 || fail "the snapshot of step 5 is missing"
    # A listed step that is the last one is the final state, written once.
    expect 0 "$bin" plans/tiny.yaml --device cpu --overwrite --set 'output.snapshot_steps=[0, 21]'
    [ "$(grep -c "writing psi of step 21" "$tmp/out")" = 1 ] || fail "the last step written twice: $(cat "$tmp/out")"
    "$build/tests/test_result_file" tiny.h5 --cpu-run >/dev/null || fail "result file incomplete"
    # The dry run counts snapshots the same way, in words without them.
    expect 0 "$bin" plans/tiny.yaml --dry-run --overwrite --set 'output.snapshot_steps=[0, 22]'
    grep -q "^output: .* 2 psi snapshots of" "$tmp/out" || fail "snapshot count: $(cat "$tmp/out")"
    expect 0 "$bin" plans/tiny.yaml --dry-run --overwrite --set 'output.snapshot_steps=[]' \
        --set output.snapshot_final=false
    grep -q "^output: .*, no psi snapshots, XDMF sidecar" "$tmp/out" || fail "no snapshots: $(cat "$tmp/out")"
    ;;
plurals)
    cd "$tmp/run"
    # Counts in messages agree with their nouns: one step.
    paused_run steps
    kill -INT $pid; wait $pid; rc=$?
    [ "$rc" = 130 ] || fail "exit $rc, expected 130: $(cat "$tmp/err")"
    grep -q "^smx2d-sim: error: interrupted after 1 step$" "$tmp/err" || fail "plural: $(cat "$tmp/err")"
    ;;
tables_dry_run)
    cd "$tmp/run"
    # What the run builds before its first step, the dry run builds too: a
    # window too narrow for one step's scattering is refused by both, with
    # the same message (the key and the value that would work) and exit code.
    set -- --set grid.angle.half_width_deg=0.35 --overwrite
    expect 2 "$bin" plans/tiny.yaml --dry-run "$@"
    cp "$tmp/out" "$tmp/dry"
    grep -q "^smx2d-sim: error: --set grid.angle.half_width_deg=0.35: grid.angle.half_width_deg: 0.35 deg is too narrow for the scattering: .* grid.angle.n_bins = 15 bins .*; expected half_width_deg >= 1.89" "$tmp/dry" ||
        fail "dry run: $(cat "$tmp/dry")"
    expect 2 "$bin" plans/tiny.yaml "$@"
    grep "error:" "$tmp/out" | cmp -s - "$tmp/dry" || fail "the run's error differs: $(cat "$tmp/out")"
    nothing_left tiny
    expect 0 "$bin" plans/tiny.yaml --dry-run --set grid.angle.half_width_deg=1.89 --overwrite
    # The energy-loss table's errors, at the plan's key.
    set -- --set grid.energy.kind=uniform --set grid.energy.n_bins=2000 --overwrite
    expect 2 "$bin" plans/tiny.yaml --dry-run "$@"
    grep -q "^smx2d-sim: error: plans/tiny.yaml: transport.straggling: one step's energy straggling" "$tmp/out" ||
        fail "straggling: $(cat "$tmp/out")"
    ;;
backend_line)
    cd "$tmp/run"
    # Which backend runs is said on screen, by the run and the dry run, and
    # why the CPU when auto finds no GPU (CUDA_VISIBLE_DEVICES='' hides every GPU).
    expect 0 "$bin" plans/tiny.yaml --dry-run --device cpu --threads 1
    grep -q "^backend:   cpu (OpenMP, 1 thread; backend.device: cpu)$" "$tmp/out" || fail "dry run: $(cat "$tmp/out")"
    expect 0 env CUDA_VISIBLE_DEVICES= "$bin" plans/tiny.yaml --threads 2
    grep -q "^backend: cpu (OpenMP, 2 threads; " "$tmp/out" || fail "run: $(cat "$tmp/out")"
    expect 0 env CUDA_VISIBLE_DEVICES= "$bin" --version
    grep -qi "insufficient" "$tmp/out" && fail "--version misleads: $(cat "$tmp/out")"
    if grep -q "^  nvcc: none" "$tmp/out"; then
        why="built without CUDA (make CUDA=0)"
    else
        # A CUDA build: no device visible, with or without a driver.
        grep -q "^  GPU: no NVIDIA \(GPU found\|driver found\)" "$tmp/out" || fail "--version: $(cat "$tmp/out")"
        why="no CUDA device: no NVIDIA"
    fi
    expect 0 env CUDA_VISIBLE_DEVICES= "$bin" plans/tiny.yaml --dry-run --overwrite --threads 2
    grep -q "^backend:   cpu (OpenMP, 2 threads; $why" "$tmp/out" || fail "auto's fallback not explained: $(cat "$tmp/out")"
    # Asked for, a GPU that is not there is a device error (exit 3), not bad input.
    expect 3 env CUDA_VISIBLE_DEVICES= "$bin" plans/tiny.yaml --dry-run --overwrite --device cuda
    grep -q "backend.device: cuda was asked for, but " "$tmp/out" || fail "--device cuda without a GPU: $(cat "$tmp/out")"
    ;;
grid_warnings)
    cd "$tmp/run"
    # Grids that cost accuracy are accepted with a warning that says what
    # they do to the dose; the shipped plans' grids raise none.
    expect 0 "$bin" plans/tiny.yaml --dry-run
    grep -q "warning" "$tmp/out" && fail "tiny.yaml warned: $(cat "$tmp/out")"
    expect 0 "$bin" plans/tiny.yaml --dry-run --set grid.space.dz_mm=1 --set grid.space.nz=12
    grep -q "warning: transport.step_mm = 0.5 mm is shorter than grid.space.dz_mm = 1 mm: .*fall-off" "$tmp/out" ||
        fail "step < dz: $(cat "$tmp/out")"
    expect 0 "$bin" plans/tiny.yaml --dry-run --set grid.space.dz_mm=1 --set grid.space.nz=12 \
        --set transport.streaming_scheme=moments
    grep -q "warning" "$tmp/out" && fail "step < dz under moments warned: $(cat "$tmp/out")"
    expect 0 "$bin" plans/tiny.yaml --dry-run --set transport.step_mm=1
    grep -q "warning: transport.step_mm = 1 mm is longer than grid.space.dz_mm = 0.5 mm: .*resolved to the step" "$tmp/out" ||
        fail "step > dz: $(cat "$tmp/out")"
    expect 0 "$bin" plans/tiny.yaml --dry-run --set grid.angle.n_bins=14
    grep -q "warning: grid.angle.n_bins = 14: the beam's direction 90 deg lies between two direction bins.*expected an odd n_bins" "$tmp/out" ||
        fail "even n_bins: $(cat "$tmp/out")"
    [ "$(grep -c warning "$tmp/out")" = 1 ] || fail "said more than once: $(cat "$tmp/out")"
    # Every shipped plan, the benchmarks' own (bench/*/, BENCHMARKS.md)
    # included: valid as shipped, and without these warnings.
    for p in "$root"/config/*.yaml "$root"/config/bench/*.yaml "$root"/bench/*/*.yaml; do
        expect 0 "$bin" "$p" --dry-run --device cpu --overwrite --output "$tmp/x.h5"
        grep -q "warning: \(transport.step_mm\|grid.angle.n_bins\)" "$tmp/out" && fail "$p warned: $(cat "$tmp/out")"
    done
    ;;
overwrite)
    cd "$tmp/run"
    expect 0 "$bin" plans/tiny.yaml --quiet
    [ -f tiny.h5 ] && [ -f tiny.xdmf ] || fail "result or sidecar missing"
    cp tiny.h5 first.h5
    expect 2 "$bin" plans/tiny.yaml --quiet
    grep -q "refusing to overwrite" "$tmp/out" || fail "no refusal message"
    cmp -s tiny.h5 first.h5 || fail "the earlier result was modified"
    expect 0 "$bin" plans/tiny.yaml --quiet --overwrite
    ls | grep -q partial && fail "temporary file left behind"
    "$build/tests/test_result_file" tiny.h5 || fail "result file incomplete"
    ;;
interrupt)
    cd "$tmp/run"
    # SIGINT or SIGTERM in every phase of a run: reading the input (nothing
    # written yet), setup (the temporary file holds the axes), the steps, and
    # writing the result. Each exits 130 and leaves nothing.
    for case in input:INT setup:TERM steps:INT writing:TERM setup:INT writing:INT; do
        phase=${case%:*} sig=${case#*:}
        paused_run "$phase"
        kill -"$sig" $pid; wait $pid; rc=$?
        [ "$rc" = 130 ] || fail "SIG$sig at $phase: exit $rc, expected 130: $(cat "$tmp/err")"
        grep -q "^smx2d-sim: error: interrupted" "$tmp/err" || fail "SIG$sig at $phase: no message: $(cat "$tmp/err")"
        nothing_left tiny
    done
    # The product has no test seams: the same setting does not stop it.
    expect 0 env SMX2D_TEST_PAUSE_AT=steps SMX2D_TEST_FAIL_RANK=0 timeout 60 "$bin" plans/tiny.yaml --quiet
    grep -q "paused\|test:" "$tmp/out" && fail "the product read a test setting: $(cat "$tmp/out")"
    rm -f tiny.h5 tiny.xdmf
    # With keep_partial, an interrupt while writing keeps what was written, marked incomplete.
    paused_run writing --set output.keep_partial=true
    kill -TERM $pid; wait $pid; rc=$?
    [ "$rc" = 130 ] || fail "keep_partial run exited $rc, expected 130"
    [ -f tiny.incomplete.h5 ] || fail "keep_partial kept nothing: $(ls)"
    nothing_left tiny
    rm tiny.incomplete.h5
    # A real signal at an unknown point, without the pause:
    # Ten million steps: still running when the signal comes after 1 s on any
    # backend (the beam stops early and a GPU replays empty steps in microseconds).
    set -- --set grid.angle.mode=full --set grid.angle.n_bins=64 --set transport.steps=10000000 \
           --set grid.space.nz=400 --set grid.space.nx=101 --set output.snapshot_steps=[] --quiet
    "$bin" plans/tiny.yaml "$@" & pid=$!
    sleep 1; kill -INT $pid; wait $pid; rc=$?
    [ "$rc" = 130 ] || fail "interrupted run exited $rc, expected 130"
    [ ! -e tiny.h5 ] || fail "an interrupted run left a result under the final name"
    ls | grep -q partial && fail "temporary file left behind"
    "$bin" plans/tiny.yaml "$@" --set output.keep_partial=true & pid=$!
    sleep 1; kill -INT $pid; wait $pid; rc=$?
    [ "$rc" = 130 ] || fail "interrupted run exited $rc, expected 130"
    [ -f tiny.incomplete.h5 ] || fail "keep_partial kept nothing"
    [ ! -e tiny.h5 ] || fail "a partial result took the final name"
    rm tiny.incomplete.h5
    # A second signal ends the run at once (the shell sees that signal),
    # removes the temporary file and says so. Two signals of different kinds,
    # since a second SIGINT sent before the first is delivered merges with it.
    "$bin" plans/tiny.yaml "$@" 2>"$tmp/err" & pid=$!
    sleep 1; kill -INT $pid; kill -TERM $pid; wait $pid; rc=$?
    # Either may be the second one delivered: 130 (SIGINT) or 143 (SIGTERM).
    [ "$rc" = 130 ] || [ "$rc" = 143 ] || fail "twice interrupted run exited $rc, expected 130 or 143: $(cat "$tmp/err")"
    grep -q "interrupted again: stopping at once" "$tmp/err" || fail "no word of the second interrupt: $(cat "$tmp/err")"
    ! ls | grep -q partial || fail "the second interrupt left a temporary file: $(ls)"
    [ ! -e tiny.h5 ] || fail "a twice interrupted run left a result"
    ;;
stale)
    cd "$tmp/run"
    # A run killed outright leaves its temporary file; the next run says so,
    # and removes it with --overwrite.
    paused_run steps
    kill -KILL $pid; wait $pid
    left=$(ls | grep '^tiny.h5.partial-') || fail "the killed run left no temporary file"
    # Not stale: a live process's file, and a file someone holds locked as HDF5
    # does while writing (a run on another machine sharing the directory).
    : > tiny.h5.partial-$$
    sh -c 'exit 0' & dead=$!; wait $dead
    : > tiny.h5.partial-$dead
    exec 9>>tiny.h5.partial-$dead
    flock -x 9 || fail "cannot lock a file here"
    expect 0 "$bin" plans/tiny.yaml --quiet
    grep -q "warning: $left: left by a run that did not finish (process [0-9]* is gone); remove it, or pass --overwrite" "$tmp/out" ||
        fail "the stale file was not reported: $(cat "$tmp/out")"
    [ -f "$left" ] || fail "the stale file was removed without --overwrite"
    grep -q "partial-$$\|partial-$dead" "$tmp/out" && fail "a file in use was reported: $(cat "$tmp/out")"
    "$build/tests/test_result_file" tiny.h5 || fail "result incomplete"
    expect 0 "$bin" plans/tiny.yaml --quiet --overwrite
    grep -q "warning: $left: removed (left by a run that did not finish" "$tmp/out" ||
        fail "the stale file was not removed: $(cat "$tmp/out")"
    [ ! -e "$left" ] || fail "--overwrite left the stale file"
    [ -e tiny.h5.partial-$$ ] && [ -e tiny.h5.partial-$dead ] || fail "a file in use was removed"
    exec 9>&-
    # Given a directory, the messages name the file the same way.
    mkdir out && : > out/tiny.h5.partial-$dead
    expect 0 "$bin" plans/tiny.yaml --quiet --output out/tiny.h5
    grep -q "warning: out/tiny.h5.partial-$dead: left by a run" "$tmp/out" || fail "not reported in a directory: $(cat "$tmp/out")"
    ;;
disk_full)
    cd "$tmp/run"
    # A file-size limit (SIGXFSZ ignored, so that the write fails with EFBIG
    # instead of killing the run) hit while writing the setup, and further on
    # (snapshots, result; where exactly depends on HDF5's caching): exit 3,
    # HDF5's cause named, nothing left. The tiny result is about 100 kB.
    for kb in 8:/ 40:/ 80:/; do
        (trap '' XFSZ; ulimit -f ${kb%:*}; exec "$bin" plans/tiny.yaml --quiet) >"$tmp/out" 2>&1; rc=$?
        [ "$rc" = 3 ] || fail "file-size limit ${kb%:*} kB: exit $rc, expected 3: $(cat "$tmp/out")"
        grep -q "^smx2d-sim: error: tiny.h5: cannot write dataset ${kb#*:}.* (in tiny.h5.partial-[0-9]*): File too large$" "$tmp/out" ||
            fail "file-size limit ${kb%:*} kB: message: $(cat "$tmp/out")"
        nothing_left tiny
    done
    # A full disk: a small tmpfs in a mount namespace of our own, where the
    # machine allows one (root, or user namespaces).
    mkdir full
    if unshare -m -r sh -c "mount -t tmpfs -o size=8k tmpfs full" 2>/dev/null ||
       unshare -m sh -c "mount -t tmpfs -o size=8k tmpfs full" 2>/dev/null; then
        u="unshare -m"; unshare -m -r true 2>/dev/null && u="unshare -m -r"
        for size in 8:"cannot write dataset /plan/.*: No space left on device" \
                    28:"cannot write dataset /psi/.*: No space left on device" \
                    40:"cannot write .*: No space left on device" \
                    100:"not enough disk space to finish full/tiny.h5.partial-[0-9]* (.* MB free, .* MB needed)"; do
            $u sh -c "mount -t tmpfs -o size=${size%%:*}k tmpfs full && { \"$bin\" plans/tiny.yaml --quiet --output full/tiny.h5; echo \"rc \$?\"; ls -A full; }" >"$tmp/out" 2>&1
            grep -q "^rc 3$" "$tmp/out" || fail "tmpfs of ${size%%:*} kB: expected exit 3: $(cat "$tmp/out")"
            grep -q "^smx2d-sim: error: full/tiny.h5: ${size#*:}" "$tmp/out" || fail "tmpfs of ${size%%:*} kB: message: $(cat "$tmp/out")"
            [ "$(sed -n '/^rc /,$p' "$tmp/out" | wc -l)" = 1 ] || fail "tmpfs of ${size%%:*} kB: files left: $(cat "$tmp/out")"
        done
    else
        # A container without CAP_SYS_ADMIN, or a kernel without user namespaces.
        echo "SKIP: no mount namespace here (unshare -m): the file-size part passed, the full-disk part did not run"
        exit 77
    fi
    ;;
quickstart)
    cd "$tmp/run"
    cp "$root/config/quickstart.yaml" plans/quickstart.yaml
    expect 0 "$bin" plans/quickstart.yaml
    grep -q "0 violation" "$tmp/out" || fail "conservation not clean"
    "$build/tests/test_result_file" quickstart.h5 || fail "quickstart result incomplete"
    grep -q 'quickstart.h5:/dose/dose_Gy' quickstart.xdmf || fail "sidecar does not point at the dose"
    # The range the README's first run prints is PSTAR's: a 100 MeV pencil in
    # water stops where the depth reaches the projected range (CSDA range times
    # the detour factor, data/pstar_water.csv, log-log interpolated as the
    # program's tables), within the water bound of tests/test_config_plans.py,
    # max(0.5 mm, 0.5 %): PSTAR's own uncertainty and the pencil's detour.
    grep -qE "^  energy_MeV: 100(\.0*)? *(#.*)?$" plans/quickstart.yaml || fail "the quickstart's beam is no longer 100 MeV: update this case"
    r80=$(sed -n 's|^  R80 / R20  *\([0-9.]*\) / [0-9.]* mm.*|\1|p' "$tmp/out")
    [ -n "$r80" ] || fail "no R80 / R20 line in the summary: $(cat "$tmp/out")"
    awk -F, -v E=100 -v r80="$r80" '
        /^[0-9]/ { e[n] = $1 + 0; r[n] = $6 + 0; n++ }
        END {
            for (i = 1; i < n && e[i] < E; i++) {}
            t = (log(E) - log(e[i - 1])) / (log(e[i]) - log(e[i - 1]))
            want = 10 * exp(log(r[i - 1]) + t * (log(r[i]) - log(r[i - 1])))
            tol = 0.005 * want > 0.5 ? 0.005 * want : 0.5
            printf "quickstart: R80 %.3f mm, PSTAR projected range %.3f mm (tolerance %.2f mm)\n", r80, want, tol
            exit !(r80 - want <= tol && want - r80 <= tol)
        }' "$root/data/pstar_water.csv" || fail "the quickstart's R80 is not PSTAR's range: $(cat "$tmp/out")"
    ;;
paraview)
    # The sidecar as a ParaView user sees it: both XDMF readers, the default
    # representation and camera, rendered to a PNG (tests/paraview_sidecar.py).
    # ParaView is large and not among CI's dependencies: without pvpython
    # (Debian: paraview python3-paraview) this skips, as it does without X.
    command -v pvpython >/dev/null 2>&1 ||
        { echo "SKIP: no pvpython (apt-get install paraview python3-paraview)"; exit 77; }
    # Debian's ParaView renders through GLX only (its offscreen mode crashes
    # without X): without a display, a private Xvfb. -noreset: ParaView probes
    # OpenGL with a window it closes, and a server resetting after its last
    # client refuses the next one for a while (on a loaded machine, long
    # enough to abort pvpython with "bad X server connection").
    if [ -z "${DISPLAY:-}" ] && ! command -v xvfb-run >/dev/null 2>&1; then
        echo "SKIP: no X display and no xvfb-run (apt-get install xvfb xauth)"; exit 77
    fi
    pv() {
        if [ -n "${DISPLAY:-}" ]; then pvpython "$@"
        else xvfb-run -a -s "-noreset -screen 0 640x480x24" pvpython "$@"; fi
    }
    cd "$tmp/run"
    expect 0 "$bin" plans/tiny.yaml --device cpu --quiet
    for reader in xdmf2 xdmf3; do
        # Absolute paths: the Xdmf3 reader resolves the HDF5 name wrongly
        # against a sidecar path without a directory.
        pv "$root/tests/paraview_sidecar.py" "$tmp/run/tiny.xdmf" "$tmp/run/tiny.h5" \
            "$reader" "$tmp/$reader.png" >"$tmp/out" 2>&1
        rc=$?
        grep -E "^(xdmf|FAIL|SKIP)" "$tmp/out"
        [ "$rc" = 77 ] && exit 77
        [ "$rc" = 0 ] || { tail -n 30 "$tmp/out" >&2; fail "ParaView ($reader) does not show the dose map"; }
    done
    ;;
no_cufft)
    # The binary does not link cuFFT (cuda/cufft_loader.cu loads it only where
    # the CUDA backend may use it), so it starts and runs on the CPU without it.
    if command -v readelf >/dev/null 2>&1; then
        readelf -d "$bin" | grep NEEDED | grep -i cufft &&
            fail "the binary links cuFFT (NEEDED above): it would not start without it"
    fi
    expect 0 env SMX2D_CUFFT_LIBRARY=/nonexistent/libcufft.so.12 "$bin" --version
    grep -q "^  cuFFT: none (" "$tmp/out" || fail "--version does not say cuFFT is missing: $(cat "$tmp/out")"
    cd "$tmp/run"
    expect 0 env SMX2D_CUFFT_LIBRARY=/nonexistent/libcufft.so.12 "$bin" plans/tiny.yaml --device cpu --quiet
    "$build/tests/test_result_file" tiny.h5 || fail "result file incomplete"
    ;;
gpu_no_cufft)
    # On a GPU: without cuFFT the CUDA backend runs the direct angular kernel
    # and says so once; a plan that asks for the FFT is refused, naming the key.
    cd "$tmp/run"
    "$bin" plans/tiny.yaml --device cuda --dry-run >"$tmp/out" 2>&1 ||
        { echo "SKIP: no usable CUDA device: $(cat "$tmp/out")"; exit 77; }
    full="--set grid.angle.mode=full --set grid.angle.n_bins=32"
    # shellcheck disable=SC2086
    expect 0 env SMX2D_CUFFT_LIBRARY=none "$bin" plans/tiny.yaml --device cuda $full --quiet --overwrite
    [ "$(grep -c "cuFFT is unavailable (SMX2D_CUFFT_LIBRARY=none): the angular operator uses the direct kernel" "$tmp/out")" = 1 ] ||
        fail "the fallback is not reported exactly once: $(cat "$tmp/out")"
    "$build/tests/test_result_file" tiny.h5 || fail "result file incomplete"
    # shellcheck disable=SC2086
    expect 2 env SMX2D_CUFFT_LIBRARY=none "$bin" plans/tiny.yaml --device cuda $full --set backend.angular=fft --overwrite
    grep -q "backend.angular: fft needs cuFFT, which cannot be loaded: SMX2D_CUFFT_LIBRARY=none" "$tmp/out" ||
        fail "the refusal does not say why: $(cat "$tmp/out")"
    # With cuFFT where the loader finds it, the FFT runs and nothing is said.
    # shellcheck disable=SC2086
    expect 0 "$bin" plans/tiny.yaml --device cuda $full --set backend.angular=fft --quiet --overwrite
    grep -q "cuFFT" "$tmp/out" && fail "cuFFT reported missing although installed: $(cat "$tmp/out")"
    ;;
dist)
    sh "$root/scripts/make-dist.sh" "$bin" "$tmp/dist" >/dev/null || fail "make-dist failed"
    d="$tmp/dist"
    [ -x "$d/bin/smx2d-sim" ] || fail "no bin/smx2d-sim"
    for lib in libyaml libhdf5 libnettle; do
        ls "$d/lib" | grep -q "^$lib" || fail "$lib not bundled"
        # The bundled copy, not the system's, must be the one that loads.
        ldd "$d/bin/smx2d-sim" | grep "^.$lib" | grep -q "=> $d/" || fail "$lib not loaded from the bundle"
    done
    # Every non-system library resolves inside the bundle.
    ldd "$d/bin/smx2d-sim" | grep "=> /" | grep -v "=> $d/" |
        grep -v -E 'libc\.so|libm\.so|libgcc_s|libstdc\+\+|libpthread|libdl\.so|librt\.so|ld-linux|libresolv|libcufft' &&
        fail "libraries above come from the system, not the bundle"
    # The tree says what the target must provide.
    grep -q "glibc [0-9][0-9.]* or newer" "$d/REQUIREMENTS.txt" || fail "REQUIREMENTS.txt lacks the glibc version"
    if readelf -d "$bin" | grep -q "RPATH.*cuda"; then
        grep -q "cuFFT (libcufft.so.[0-9]*" "$d/REQUIREMENTS.txt" || fail "REQUIREMENTS.txt does not name cuFFT"
    fi
    # The project's licence and every bundled library's notice ship with the tree.
    [ -f "$d/share/smx2d-sim/LICENSE" ] || fail "no LICENSE in the bundle"
    for f in $(ls "$d/lib"); do
        notice=$(grep "^$f " "$d/share/smx2d-sim/licenses/THIRD_PARTY.txt" | sed -n 's/.*licence \([^ ]*\.copyright\)$/\1/p')
        [ -n "$notice" ] && [ -s "$d/share/smx2d-sim/licenses/$notice" ] || fail "no licence notice for bundled $f"
    done
    # The post-processing tools, which find their package in share/smx2d-sim/python,
    # started with the tests' interpreter. Where it lacks their modules the
    # other checks still run, and the case then skips, saying so.
    for t in smx2d-plot smx2d-compare smx2d-import-ct smx2d-import-spots smx2d-export-dose; do
        [ -x "$d/bin/$t" ] || fail "no bin/$t"
    done
    [ -f "$d/share/smx2d-sim/python/smx2d_post/gamma.py" ] || fail "the tools' package is not in share/smx2d-sim/python"
    [ -f "$d/share/smx2d-sim/python/smx2d_dicom/rtdose.py" ] || fail "the DICOM tools' package is not in share/smx2d-sim/python"
    tools_skip=""
    if (need_python numpy h5py matplotlib) >"$tmp/need"; then
        "$py" "$d/bin/smx2d-plot" --help >"$tmp/out" 2>&1 || fail "bin/smx2d-plot does not start: $(cat "$tmp/out")"
    else
        tools_skip="$(cat "$tmp/need"): bin/smx2d-plot was not started"
    fi
    if (need_python numpy h5py pydicom) >"$tmp/need"; then
        for t in smx2d-import-ct smx2d-import-spots smx2d-export-dose; do
            "$py" "$d/bin/$t" --help >"$tmp/out" 2>&1 || fail "bin/$t does not start: $(cat "$tmp/out")"
        done
    else
        tools_skip="$(cat "$tmp/need"): bin/smx2d-import-ct was not started"
    fi
    # Starts with a clean environment, from another directory, and runs a shipped plan.
    cd "$tmp"
    env -i "$d/bin/smx2d-sim" --version >"$tmp/out" 2>&1 || { cat "$tmp/out"; fail "bundled binary does not start"; }
    env -i "$d/bin/smx2d-sim" "$d/share/smx2d-sim/config/quickstart.yaml" --dry-run >"$tmp/out" 2>&1 ||
        { cat "$tmp/out"; fail "bundled binary cannot dry-run its own example plan"; }
    grep -q "share/smx2d-sim/config/../data/pstar_water.h5" "$tmp/out" || fail "table not found in the bundle"
    env -i "$d/bin/smx2d-sim" "$d/share/smx2d-sim/config/sobp.yaml" --dry-run >"$tmp/out" 2>&1 ||
        fail "the SOBP example's dry run failed in the bundle: $(cat "$tmp/out")"
    grep -q "18 spots from .*share/smx2d-sim/config/sobp_spots.csv" "$tmp/out" || fail "spot map not found in the bundle"
    if [ -n "$tools_skip" ]; then
        echo "$tools_skip"
        exit 77
    fi
    ;;
bench)
    # The harness on the CPU, on a grid made small with --set (it applies to
    # every case): each case reports the grid it ran, and fewer timed steps
    # than the warm-up's five are fine. Without the Production grid there is
    # no whole pencil run (it is a Production-grid measurement).
    cd "$tmp"
    expect 0 "$bin" --bench small --bench-steps 2 --device cpu --set grid.space.nz=24 \
        --set grid.space.nx=40 --bench-json "$tmp/bench.json"
    [ "$(grep -c '^small ' "$tmp/out")" = 2 ] || fail "expected a pencil and a dense row: $(cat "$tmp/out")"
    grep -q "pencil run" "$tmp/out" && fail "a pencil run without the Production grid"
    tr -d ' \t\n' < "$tmp/bench.json" > "$tmp/bench.min"
    [ "$(grep -o '"Nz":24,"Nx":40,"timed_steps":2,' "$tmp/bench.min" | wc -l)" = 2 ] ||
        fail "the JSON does not report the grid that ran: $(cat "$tmp/bench.json")"
    grep -q '"pencil_run":null' "$tmp/bench.min" || fail "pencil_run not null in the JSON"
    [ "$(grep -o '"kernel_variants":"[a-z]' "$tmp/bench.min" | wc -l)" = 2 ] ||
        fail "the JSON does not name each case's kernels: $(cat "$tmp/bench.json")"
    need_python json
    "$py" -c 'import json, sys; json.load(open(sys.argv[1]))' "$tmp/bench.json" || fail "the JSON does not parse"
    expect 1 "$bin" --bench small --bench-steps 0
    grep -q "bench-steps needs a positive number" "$tmp/out" || fail "bad --bench-steps not named"
    ;;
per_spot)
    # A field of three spots with its dose-influence matrix, read the way
    # schemas/output.md says, with h5py, numpy and scipy.sparse alone, in both
    # encodings (output.per_spot_precision): the spots' protons times the
    # matrix give the field's dose (within what the threshold drops, float
    # rounding of the separate runs and, under uint16, the values' rounding).
    need_python numpy h5py scipy.sparse
    printf 'energy_MeV, x_mm, weight\n30, -2, 2e9\n25, 0, 1e9\n28, 2.5, 1.5e9\n' > "$tmp/run/plans/spots.csv"
    cd "$tmp/run/plans"
    expect 0 "$bin" tiny.yaml --set beam.spots_file=spots.csv --set output.per_spot_dose=true \
        --set output.snapshot_final=false --set output.snapshot_steps=[] --set output.file=field.h5
    grep -q "per-spot dose: 3 spots" "$tmp/out" || fail "no per-spot progress: $(cat "$tmp/out")"
    grep -q "^  per-spot kernels  *[a-z]" "$tmp/out" || fail "no per-spot kernels line: $(cat "$tmp/out")"
    # On a longer grid the spots' windows move (the summary counts them): the
    # per-spot time line reports their host time, a part of the steps' time.
    expect 0 "$bin" tiny.yaml --set beam.spots_file=spots.csv --set output.per_spot_dose=true \
        --set output.snapshot_final=false --set output.snapshot_steps=[] --set grid.space.nz=80 \
        --set output.file=moves.h5
    moved=$(sed -n 's/^  per-spot dose  .* moved \([0-9]*\) times.*/\1/p' "$tmp/out")
    parts=$(sed -n 's/^  per-spot time: .* steps \([0-9.]*\) s ([1-9][0-9]* in [1-9][0-9]* batch[a-z]*; of them \([0-9.]*\) s on the host moving the windows).*/\1 \2/p' "$tmp/out")
    [ -n "$moved" ] && [ "$moved" -gt 0 ] && [ -n "$parts" ] &&
        echo "$parts" | awk '{ exit !($2 <= $1) }' ||
        fail "per-spot window moves: moved '$moved', steps and moves '$parts': $(cat "$tmp/out")"
    expect 0 "$bin" tiny.yaml --set beam.spots_file=spots.csv --set output.per_spot_dose=true \
        --set output.snapshot_final=false --set output.snapshot_steps=[] --set output.file=field32.h5 \
        --set output.per_spot_precision=float32
    "$py" - field.h5 field32.h5 <<'PY' || fail "the per-spot matrix does not reproduce the field"
import sys, h5py, numpy as np, scipy.sparse as sp
for path, encoding in zip(sys.argv[1:], ("uint16 per-row scale", "float32")):
    with h5py.File(path, "r") as f:
        g = f["/dose/per_spot"]
        data, indices, indptr = g["data"][()], g["indices"][()], g["indptr"][()]
        if "scale" in g:   # encoding "uint16 per-row scale"; float32 groups have none
            data = data * np.repeat(g["scale"][()], np.diff(indptr))
        m = sp.csr_matrix((data, indices, indptr), shape=tuple(g["shape"][()]))
        protons, peak, thr = g["protons"][()], g["peak_Gy"][()], g.attrs["threshold"]
        # the spots' early exit, tied to the cut: 1e-7 (the ratio's default) x 1e-4;
        # 1e-20 is far above the product's double rounding (1e-27) and far below 1e-12
        assert abs(g.attrs["early_exit_threshold"] - 1e-11) < 1e-20, g.attrs["early_exit_threshold"]
        half_scale = g["scale"][()] / 2 if "scale" in g else np.zeros(len(protons))
        assert g.attrs["encoding"] == encoding, (path, g.attrs["encoding"])
        dose = f["/dose/dose_Gy"][()]
        units = f["/dose/dose_Gy"].attrs["units"]
        version = f.attrs["code_version"]
        spot_kernels = f.attrs["spot_kernel_variants"]
    assert isinstance(units, str) and units == "Gy", repr(units)   # h5py gives str, not bytes
    assert isinstance(spot_kernels, str) and "stream=" in spot_kernels, repr(spot_kernels)
    assert isinstance(version, str), repr(version)
    assert m.shape == (3, dose.size), m.shape
    assert list(protons) == [2e9, 1e9, 1.5e9], protons
    field = protons @ m
    # float32 values and separate runs: 1e-5 of the maximum; plus what each spot drops
    # per cell; plus, under uint16, each stored value's rounding (half its row's scale).
    bound = 1e-5 * dose.max() + thr * (protons * peak).sum() + (protons * half_scale).sum()
    err = np.abs(np.asarray(field).ravel() - dose.ravel()).max()
    print("per-spot matrix (%s): nnz %d, max |protons @ M - dose_Gy| %.3e Gy (bound %.3e, max dose %.3e)"
          % (encoding, m.nnz, err, bound, dose.max()))
    assert err <= bound, err
PY
    ;;
per_spot_precision)
    # output.per_spot_precision on one field with per-spot LET: the uint16 rows
    # against the float32 rows, for /dose/per_spot and /let/per_spot_let_dose
    # (each with its own scale): the same cells (indices, indptr) bit for bit and
    # every value within half its row's scale; smx2d_post.result.read_per_spot
    # reads both, and names an encoding it does not know; data and indices are
    # chunked, shuffled and deflated.
    need_python numpy h5py scipy.sparse
    printf 'energy_MeV, x_mm, weight\n30, -2, 2e9\n25, 0, 1e9\n28, 2.5, 1.5e9\n' > "$tmp/run/plans/spots.csv"
    cd "$tmp/run/plans"
    for precision in uint16 float32; do
        expect 0 "$bin" tiny.yaml --set beam.spots_file=spots.csv --set output.per_spot_dose=true \
            --set output.let=true --set output.per_spot_let=true --set output.per_spot_precision=$precision \
            --set output.snapshot_final=false --set output.snapshot_steps=[] --set output.file=$precision.h5
    done
    "$py" - uint16.h5 float32.h5 "$root/scripts" <<'PY' || fail "the uint16 rows are not the float32 rows"
import shutil, sys, h5py, numpy as np
sys.path.insert(0, sys.argv[3])
from smx2d_post.result import InputError, read_per_spot
with h5py.File(sys.argv[1], "r") as a, h5py.File(sys.argv[2], "r") as b:
    for path, peak_name in (("/dose/per_spot", "peak_Gy"), ("/let/per_spot_let_dose", "peak_Gy_keV_um")):
        u, f = a[path], b[path]
        assert (u.attrs["encoding"], f.attrs["encoding"]) == ("uint16 per-row scale", "float32"), path
        assert u["data"].dtype == np.uint16 and f["data"].dtype == np.float32, path
        assert "scale" not in f, path
        for name in ("indices", "indptr", "shape", peak_name):
            assert np.array_equal(u[name][()], f[name][()]), (path, name)
        indptr, scale = u["indptr"][()], u["scale"][()]
        assert np.array_equal(scale, f[peak_name][()] / 65535), path
        row_scale = np.repeat(scale, np.diff(indptr))
        value, exact = u["data"][()] * row_scale, f["data"][()].astype(np.float64)
        # Rounded to the nearest integer of the scale: within half of it; the
        # double division and product round at 1e-16, so 1e-12 of the scale covers them.
        err = np.abs(value - exact)
        worst = (err / row_scale).max()
        assert (err <= row_scale * (0.5 + 1e-12)).all(), (path, worst)
        assert all(u["data"][i:j].max() == 65535 for i, j in zip(indptr[:-1], indptr[1:])), path
        mu, mf = read_per_spot(u), read_per_spot(f)
        assert np.array_equal(mu.indices, u["indices"][()]) and np.array_equal(mu.indptr, indptr), path
        assert np.array_equal(mu.data, value) and np.array_equal(mf.data, exact), path
        assert mu.shape == mf.shape == tuple(u["shape"][()]), path
        for g in (u, f):
            for name in ("data", "indices"):
                d = g[name]
                assert d.chunks and d.compression == "gzip" and d.shuffle, (path, name, d.chunks, d.compression)
        assert u["data"].id.get_storage_size() < f["data"].id.get_storage_size(), path
        print("%s: %d values, max |uint16 - float32| %.4f of the row's scale (bound 0.5), data %d bytes "
              "(float32 %d), indices %d bytes" % (path, len(value), worst, u["data"].id.get_storage_size(),
                                                  f["data"].id.get_storage_size(), u["indices"].id.get_storage_size()))
shutil.copy(sys.argv[1], "odd.h5")
with h5py.File("odd.h5", "r+") as f:
    f["/dose/per_spot"].attrs["encoding"] = "int8"
    try:
        read_per_spot(f["/dose/per_spot"])
        raise SystemExit("an unknown encoding was read")
    except InputError as e:
        assert "odd.h5:/dose/per_spot: encoding 'int8': expected 'uint16 per-row scale' or 'float32'" in str(e), e
PY
    ;;
scenarios)
    # A field's robust scenarios read the way schemas/output.md says: every
    # scenario alike through /scenarios/NNN (000 links to the nominal), each
    # one's rows times the protons giving its own dose_Gy (the per_spot case's
    # bound); a plan without scenarios has no /scenarios; a bad list is exit 2
    # and leaves no file.
    need_python numpy h5py scipy.sparse
    printf 'energy_MeV, x_mm, weight\n30, -2, 2e9\n25, 0, 1e9\n' > "$tmp/run/plans/spots.csv"
    cd "$tmp/run/plans"
    expect 2 "$bin" tiny.yaml --set 'scenarios.range_error_percent=[3, 4]' --set scenarios.combine=pairs \
        --set output.file=bad.h5
    grep -q "expected lists of equal length" "$tmp/out" || fail "unequal pairs not named: $(cat "$tmp/out")"
    [ ! -e bad.h5 ] || fail "a refused plan left bad.h5"
    expect 0 "$bin" tiny.yaml --set beam.spots_file=spots.csv --set output.per_spot_dose=true \
        --set output.snapshot_final=false --set output.snapshot_steps=[] --set output.file=scen.h5 \
        --set 'scenarios.range_error_percent=[-5, 5]' --set 'scenarios.shift_mm=[1]' \
        --set scenarios.combine=all
    grep -q "scenarios (6, combine all" "$tmp/out" || fail "no scenario summary: $(cat "$tmp/out")"
    expect 0 "$bin" tiny.yaml --set beam.spots_file=spots.csv --set output.per_spot_dose=true \
        --set output.snapshot_final=false --set output.snapshot_steps=[] --set output.file=plain.h5
    "$py" - scen.h5 plain.h5 <<'PY' || fail "the scenarios do not read back"
import sys, h5py, numpy as np, scipy.sparse as sp
with h5py.File(sys.argv[2], "r") as f:
    assert "scenarios" not in f, "a plan without scenarios wrote /scenarios"
    plain = {k: f[k][()] for k in ("/dose/dose_Gy", "/dose/energy_deposit_MeV", "/dose/per_spot/data",
                                   "/dose/per_spot/indices", "/dose/per_spot/scale", "/summary/R80_mm")}
with h5py.File(sys.argv[1], "r") as f:
    # The nominal of a plan with scenarios is the plan alone, bit for bit.
    for k, v in plain.items():
        assert np.array_equal(f[k][()], v), k
    s = f["/scenarios"]
    r, x = s["range_error_percent"][()], s["shift_mm"][()]
    assert list(r) == [0, 0, -5, -5, 5, 5] and list(x) == [0, 1, 0, 1, 0, 1], (r, x)
    assert f["/scenarios/000/dose"] == f["/dose"], "000/dose is not /dose"
    r80 = []
    for i in range(len(r)):
        g = s["%03d" % i]
        dose = g["dose/dose_Gy"][()]
        ps = g["per_spot"]
        data, indptr = ps["data"][()], ps["indptr"][()]
        data = data * np.repeat(ps["scale"][()], np.diff(indptr))   # encoding "uint16 per-row scale"
        m = sp.csr_matrix((data, ps["indices"][()], indptr), shape=tuple(ps["shape"][()]))
        protons, peak, thr = ps["protons"][()], ps["peak_Gy"][()], ps.attrs["threshold"]
        assert np.allclose(ps["x_mm"][()], np.array([-2, 0]) + x[i]), ps["x_mm"][()]
        err = np.abs(np.asarray(protons @ m).ravel() - dose.ravel()).max()
        # the per_spot case's bound, uint16 rounding included
        bound = 1e-5 * dose.max() + thr * (protons * peak).sum() + (protons * ps["scale"][()]).sum() / 2
        assert err <= bound, (i, err, bound)
        depth = dose.sum(axis=1)
        r80.append(np.nonzero(depth >= 0.8 * depth.max())[0][-1])
    # Longer range, deeper distal 80 % row (rows of the tiny plan's grid).
    assert r80[2] <= r80[0] <= r80[4], r80
print("scenarios: %d read back, distal 80 %% rows %s" % (len(r), r80))
PY
    ;;
progress)
    # One progress count over a robust plan's (scenario, spot) pairs: 3
    # scenarios of 3 spots print pair counts that never go backwards, end each
    # scenario's spots at 3, 6 and 9, and reach 9/9 once, on the last line; a
    # field without scenarios counts its spots alone, as it always has.
    printf 'energy_MeV, x_mm, weight\n30, -2, 2e9\n25, 0, 1e9\n28, 2.5, 1.5e9\n' > "$tmp/run/plans/spots.csv"
    cd "$tmp/run/plans"
    expect 0 "$bin" tiny.yaml --set beam.spots_file=spots.csv --set output.per_spot_dose=true \
        --set output.snapshot_final=false --set output.snapshot_steps=[] --set output.file=scen.h5 \
        --set 'scenarios.range_error_percent=[-5, 5]'
    grep -E '^  scenario [0-2] of 2, spot [1-3]/3: pairs [0-9]+/9 \([0-9.]+ %\)  [0-9.]+ s  [0-9.]+ pairs/s  eta [0-9.]+ s$' \
        "$tmp/out" > "$tmp/pairs" || fail "no pair counts: $(cat "$tmp/out")"
    grep -q '^  spot [0-9]' "$tmp/out" && fail "a spots-only line in a run with scenarios: $(cat "$tmp/out")"
    awk '{ split($8, p, "/"); n = p[1] + 0
           if (n < last) { print "pairs went back from " last " to " n; bad = 1 }
           if ($6 == "3/3:") ends = ends " " n
           if (n == 9) nine++
           last = n }
         END { if (ends != " 3 6 9") { print "scenario ends at" ends; bad = 1 }
               if (nine != 1 || last != 9) { print nine + 0 " lines of 9/9, the last at " last; bad = 1 }
               exit bad }' "$tmp/pairs" > "$tmp/why" || fail "$(cat "$tmp/why"): $(cat "$tmp/pairs")"
    expect 0 "$bin" tiny.yaml --set beam.spots_file=spots.csv --set output.per_spot_dose=true \
        --set output.snapshot_final=false --set output.snapshot_steps=[] --set output.file=plain.h5
    grep -Eq '^  spot 3/3  [0-9.]+ s  [0-9.]+ spots/s  eta 0\.0 s$' "$tmp/out" ||
        fail "no spot count without scenarios: $(cat "$tmp/out")"
    grep -q 'pairs' "$tmp/out" && fail "a pair count without scenarios: $(cat "$tmp/out")"
    ;;
*)
    fail "unknown case $case_name"
    ;;
esac
echo "cli $case_name: ok"
