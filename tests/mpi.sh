#!/bin/sh
# An MPI build's job as a user starts it (docs/mpi.md), one case per CTest test:
#   sh tests/mpi.sh CASE BUILD_DIR
#   field       mpirun -np 1, 2, 3 on a small field with per-spot doses: /dose and
#               every /dose/per_spot dataset byte for byte the single process's
#               (the build without MPI in build/, where there is one, and this
#               binary run alone), also through a medium map; /mpi names each
#               rank's block; one run log
#   scenarios   a robust plan (scenarios.*) with per-spot doses and per-spot LET
#               rows on 1 to 4 ranks: /dose, /scenarios (every scenario's dose
#               and rows) and /let byte for byte the single process's; /mpi's
#               (scenario, spot) blocks contiguous and covering; a rank failing
#               in a scenario's rows; the LET rows of a field without scenarios
#   total_only  a field without per-spot doses on 2 ranks: the same dose, the log
#               says the other rank has nothing to do; one dry run
#   fail        a rank made to fail (SMX2D_TEST_FAIL_RANK) or a bad plan on every
#               rank: exit code, one error line naming the rank and host, no file
#   dist        the dist tree with Open MPI's runtime (make dist MPI=1): everything
#               resolves inside it, and with a clean environment (and, where a
#               private mount namespace can be made, this machine's Open MPI and
#               bundled libraries hidden) its mpirun on 2 ranks and the binary
#               alone give the same bytes as this build
# Skips (77), saying why, when BUILD_DIR's binary has no MPI, or mpirun,
# patchelf (dist) or the test interpreter's h5py (tests/python.sh) is missing.
# Runs from the repository root; each case works in its own temporary directory.
set -u
case_name=$1
build=$2
bin="$(cd "$build" && pwd)/smx2d-sim"
hooks="$(cd "$build" && pwd)/tests/smx2d-sim-hooks" # with the test seams (tests/hooks_main.c)
root=$(pwd)
. "$root/tests/python.sh"
"$bin" --version 2>/dev/null | grep -q "^  MPI: " || { echo "SKIP: $bin was built without MPI (make MPI=1)"; exit 77; }
command -v mpirun >/dev/null 2>&1 || { echo "SKIP: no mpirun (apt-get install openmpi-bin)"; exit 77; }
need_python h5py numpy
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# CI runs as root, which Open MPI refuses without these; more ranks than the
# 2 cores of CI; the CPU backend on one thread per rank; no ptrace-based
# single copy between ranks (containers often forbid it); ranks not bound to
# one core each (`--bind-to none`, as docs/mpi.md advises: bound, a rank warns).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_hwloc_base_binding_policy=none
# mpi N ARGS...: the binary on N ranks (a deadlock fails the test after 120 s).
mpi() {
    n=$1; shift
    timeout 120 mpirun --oversubscribe -np "$n" "$bin" "$@"
}
# expect CODE CMD...: runs CMD, stdout and stderr into $tmp/out and $tmp/err, checks the exit code.
expect() {
    want=$1; shift
    "$@" >"$tmp/out" 2>"$tmp/err"
    got=$?
    [ "$got" = "$want" ] || { cat "$tmp/out" "$tmp/err" >&2; fail "exit $got, expected $want: $*"; }
}

# The field: five spots of a 30 MeV-class pencil on the command-line tests' tiny grid.
mkdir -p "$tmp/run/plans" "$tmp/data"
cp "$root/data/pstar_water.h5" "$tmp/data/"
cp "$root/tests/plans/tiny.yaml" "$tmp/run/plans/"
cd "$tmp/run/plans"
printf 'energy_MeV, x_mm, weight\n30, -2, 2e9\n25, 0, 1e9\n28, 2.5, 1.5e9\n27, 1, 1e9\n29, -1, 1e9\n' > spots.csv
unset SMX2D_TEST_FAIL_RANK
field="--set beam.spots_file=spots.csv --set output.snapshot_final=false --set output.snapshot_steps=[]"
spots="$field --set output.per_spot_dose=true"

# same_dose REF FILE...: /dose and everything under it (per_spot) byte for byte REF's.
same_dose() {
    "$py" "$root/tests/same_dose.py" "$@" || fail "the results differ: $*"
}
# ranks_are FILE N SPOTS: /mpi of FILE records N ranks whose blocks of rows
# are contiguous, in rank order, and cover SPOTS rows (0: none).
ranks_are() {
    "$py" - "$@" <<'PY' || fail "/mpi of $1 is not what the job was"
import sys, h5py
path, n, spots = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with h5py.File(path, "r") as f:
    g = f["/mpi"]
    assert g.attrs["ranks"] == n, g.attrs["ranks"]
    assert g.attrs["library"].startswith("Open MPI"), g.attrs["library"]
    first, count = [int(v) for v in g["spot_first"][()]], [int(v) for v in g["spot_count"][()]]
    assert len(first) == n and first[0] == 0 and min(count) >= 0, (first, count)
    assert all(first[r + 1] == first[r] + count[r] for r in range(n - 1)), (first, count)
    assert first[-1] + count[-1] == spots, (first, count)
    if "per_spot" in f["/dose"]:
        assert f["/dose/per_spot/shape"][0] == spots
    assert all(h for h in g["host"].asstr()[()]) and len(g["host"]) == n
    devices = list(g["device"].asstr()[()])
    assert len(devices) == n and all(d.startswith(("cpu: ", "cuda device ", "none")) for d in devices), devices
PY
}

case "$case_name" in
field)
    # The reference: the build without MPI where one is there (CI builds build/ first).
    plain="$root/build/smx2d-sim"
    refs=""
    if [ -x "$plain" ] && ! "$plain" --version | grep -q "^  MPI: "; then
        expect 0 "$plain" tiny.yaml $spots --set output.file=plain.h5 --quiet
        refs="plain.h5"
    else
        echo "note: no build without MPI at $plain; the reference is this binary run alone"
    fi
    expect 0 "$bin" tiny.yaml $spots --set output.file=alone.h5 --quiet
    refs="$refs alone.h5"
    for n in 1 2 3; do
        expect 0 mpi $n tiny.yaml $spots --set output.file=np$n.h5
        # Rank 0 alone logs: one start line, one summary.
        [ "$(grep -c '^smx2d-sim .*-> np' "$tmp/out")" = 1 ] || fail "np $n: not one run log: $(cat "$tmp/out")"
        [ "$(grep -c '^summary' "$tmp/out")" = 1 ] || fail "np $n: not one summary"
        [ ! -s "$tmp/err" ] || fail "np $n wrote to stderr: $(cat "$tmp/err")"
        if [ $n -gt 1 ]; then
            grep -q "^MPI: $n ranks; rank 0 runs the field's total dose" "$tmp/out" || fail "np $n: no MPI line"
        fi
    done
    grep -q "per-spot dose: spots 1-[0-9]* of 5 here" "$tmp/out" || fail "np 3: rank 0's block not logged"
    # Bound to one core (mpirun's default for -np 2 or less) on a host of
    # more: the warning that names the way out, once; the same dose.
    if [ "$(getconf _NPROCESSORS_ONLN)" -gt 1 ]; then
        expect 0 env OMPI_MCA_hwloc_base_binding_policy=core \
            sh -c 'timeout 120 mpirun --oversubscribe -np 1 "$@"' sh "$bin" tiny.yaml $spots \
            --set output.file=bound.h5
        [ "$(grep -c 'bind-to none' "$tmp/err")" = 1 ] || fail "bound to one core, no warning: $(cat "$tmp/err")"
        same_dose np1.h5 bound.h5
    fi
    # Every rank's own log with SMX2D_RANK_LOGS=1 (docs/mpi.md): two start
    # lines, each rank's block, the same dose.
    expect 0 env SMX2D_RANK_LOGS=1 sh -c 'timeout 120 mpirun --oversubscribe -x SMX2D_RANK_LOGS -np 2 "$@"' \
        sh "$bin" tiny.yaml $spots --set output.file=ranklogs.h5
    [ "$(grep -c '^smx2d-sim .*-> ranklogs' "$tmp/out")" = 2 ] || fail "SMX2D_RANK_LOGS=1: not two logs: $(cat "$tmp/out")"
    [ "$(grep -c 'per-spot dose: spots [0-9-]* of 5 here' "$tmp/out")" = 2 ] || fail "SMX2D_RANK_LOGS=1: not two blocks logged"
    same_dose np1.h5 ranklogs.h5
    set -- $refs
    same_dose "$@" np1.h5 np2.h5 np3.h5
    ranks_are alone.h5 1 5
    ranks_are np1.h5 1 5
    ranks_are np2.h5 2 5
    ranks_are np3.h5 3 5
    # Through a medium map (a bone slab over part of the width): the same on 2 ranks.
    { cat tiny.yaml; printf 'geometry:\n  shapes:\n    - {material: bone_compact, z_mm: [3, 5], x_mm: [-5, 1]}\n'; } \
        > media.yaml
    expect 0 "$bin" media.yaml $spots --set output.file=media1.h5 --quiet
    expect 0 mpi 2 media.yaml $spots --set output.file=media2.h5
    same_dose media1.h5 media2.h5
    ls | grep -q "partial" && fail "temporary files left: $(ls)"
    ;;
scenarios)
    # Two range errors and two shifts, each alone: 5 scenarios of 5 spots, 25
    # rows; with LET and its per-spot rows (gathered like the dose's).
    robust="$spots --set output.let=true --set output.per_spot_let=true
        --set scenarios.range_error_percent=[-3.5,3.5] --set scenarios.shift_mm=[-1,1]"
    plain="$root/build/smx2d-sim"
    refs=""
    if [ -x "$plain" ] && ! "$plain" --version | grep -q "^  MPI: "; then
        expect 0 "$plain" tiny.yaml $robust --set output.file=plain.h5 --quiet
        refs="plain.h5"
    fi
    expect 0 "$bin" tiny.yaml $robust --set output.file=alone.h5 --quiet
    refs="$refs alone.h5"
    for n in 1 2 3 4; do
        expect 0 mpi $n tiny.yaml $robust --set output.file=np$n.h5
        [ "$(grep -c '^summary' "$tmp/out")" = 1 ] || fail "np $n: not one summary"
        [ ! -s "$tmp/err" ] || fail "np $n wrote to stderr: $(cat "$tmp/err")"
        [ "$(grep -c '^  00[0-4]  range' "$tmp/out")" = 5 ] || fail "np $n: not five scenario lines"
        if [ $n -gt 1 ]; then
            grep -q "^MPI: $n ranks; rank 0 runs the total dose of each of the 5 scenarios; their 25 per-spot rows" \
                "$tmp/out" || fail "np $n: no MPI line: $(cat "$tmp/out")"
        fi
    done
    set -- $refs
    same_dose "$@" np1.h5 np2.h5 np3.h5 np4.h5
    "$py" "$root/tests/same_dose.py" --group /scenarios --group /let "$@" np1.h5 np2.h5 np3.h5 np4.h5 ||
        fail "the scenarios or the LET differ"
    "$py" - alone.h5 np4.h5 <<'PY' || fail "the files lack the scenarios' rows or the LET rows"
import sys, h5py
for path in sys.argv[1:]:
    with h5py.File(path, "r") as f:
        assert f["/let/per_spot_let_dose/shape"][0] == 5, path
        for k in range(5):
            assert f["/scenarios/%03d/per_spot/shape" % k][0] == 5, (path, k)
PY
    for n in 1 2 3 4; do
        ranks_are np$n.h5 $n 5
        "$py" - np$n.h5 $n <<'PY' || fail "/mpi of np$n.h5: the (scenario, spot) blocks are not the job's"
import sys, h5py
path, n = sys.argv[1], int(sys.argv[2])
with h5py.File(path, "r") as f:
    g = f["/mpi"]
    assert g.attrs["scenarios"] == 5 and g.attrs["spots"] == 5, dict(g.attrs)
    first, count = [int(v) for v in g["pair_first"][()]], [int(v) for v in g["pair_count"][()]]
    assert first[0] == 0 and min(count) >= 0, (first, count)
    assert all(first[r + 1] == first[r] + count[r] for r in range(n - 1)), (first, count)
    assert first[-1] + count[-1] == 25, (first, count)
    # The nominal's rows (spot_first, spot_count) are each block clipped to scenario 0.
    for r in range(n):
        a, b = min(max(first[r], 0), 5), min(max(first[r] + count[r], 0), 5)
        assert (g["spot_first"][r], g["spot_count"][r]) == (a, b - a), (r, first, count)
    if n > 1:
        # Rank 0 pays for five totals: the last rank's block lies in the last scenarios.
        assert count[0] < count[-1] and first[-1] >= 5, (first, count)
PY
    done
    # A rank that fails in a scenario's rows: on 3 ranks rank 2 has no row of
    # the nominal (its block is in scenarios 3 and 4), so it fails there.
    expect 3 env SMX2D_TEST_FAIL_RANK=2 sh -c 'timeout 120 mpirun --oversubscribe -np 3 -x SMX2D_TEST_FAIL_RANK "$@"' \
        sh "$hooks" tiny.yaml $robust --set output.file=failed.h5
    grep -q "^smx2d-sim: error: rank 2 of 3 on $(hostname): scenario 3 (range +0 %, shift -1 mm): test: failing at per-spot as SMX2D_TEST_FAIL_RANK=2 asks$" \
        "$tmp/err" || fail "a scenario's failing rank: $(cat "$tmp/err")"
    [ "$(grep -c 'smx2d-sim: error' "$tmp/err")" = 1 ] || fail "not one error line: $(cat "$tmp/err")"
    ls | grep -q "^failed" && fail "a failed scenario left files: $(ls)"
    # The LET rows of a field without scenarios: the same on 2 ranks.
    let="$spots --set output.let=true --set output.per_spot_let=true"
    expect 0 "$bin" tiny.yaml $let --set output.file=let1.h5 --quiet
    expect 0 mpi 2 tiny.yaml $let --set output.file=let2.h5
    "$py" "$root/tests/same_dose.py" --group /dose --group /let let1.h5 let2.h5 || fail "the LET rows differ"
    ls | grep -q "partial" && fail "temporary files left: $(ls)"
    ;;
total_only)
    expect 0 "$bin" tiny.yaml $field --set output.file=alone.h5 --quiet
    expect 0 mpi 2 tiny.yaml $field --set output.file=np2.h5
    grep -q "^MPI: 2 ranks; this field has no per-spot dose (output.per_spot_dose), so rank 0 runs it alone" \
        "$tmp/out" || fail "the log does not say rank 1 has nothing to do: $(cat "$tmp/out")"
    same_dose alone.h5 np2.h5
    ranks_are np2.h5 2 0
    "$py" -c 'import sys, h5py; d = list(h5py.File(sys.argv[1])["/mpi/device"].asstr()[()]); assert d[1].startswith("none"), d' \
        np2.h5 || fail "rank 1 is recorded with a device"
    # The dry run: rank 0 alone prints it.
    expect 0 mpi 2 tiny.yaml $field --set output.file=dry.h5 --dry-run
    [ "$(grep -c '^plan: ' "$tmp/out")" = 1 ] || fail "not one dry run: $(cat "$tmp/out")"
    [ ! -e dry.h5 ] || fail "the dry run wrote a file"
    ;;
fail)
    host=$(hostname)
    # fails N R: N ranks with rank R failing in its per-spot runs.
    fails() {
        expect 3 env SMX2D_TEST_FAIL_RANK=$2 sh -c 'mpi() { n=$1; shift; timeout 120 mpirun --oversubscribe -np "$n" -x SMX2D_TEST_FAIL_RANK "$@"; }; mpi "$@"' \
            sh "$1" "$hooks" tiny.yaml $spots --set output.file=failed.h5
        msg="smx2d-sim: error: rank $2 of $1 on $host: test: failing at per-spot as SMX2D_TEST_FAIL_RANK=$2 asks"
        grep -qxF "$msg" "$tmp/err" || fail "np $1, rank $2: the message is not there: $(cat "$tmp/err")"
        [ "$(grep -c 'smx2d-sim: error' "$tmp/err")" = 1 ] || fail "np $1: not one error line: $(cat "$tmp/err")"
        ls | grep -q "^failed" && fail "np $1, rank $2 failing left files: $(ls)"
        return 0
    }
    fails 2 1
    fails 3 0
    fails 3 2
    # The same bad plan on every rank: one line, rank 0's message and the others named.
    expect 2 mpi 2 tiny.yaml --set grid.space.nx=-3 --set output.file=failed.h5
    grep -q "^smx2d-sim: error: rank 0 of 2 on $host: --set grid.space.nx=-3: .* (also rank 1)$" "$tmp/err" ||
        fail "bad input: $(cat "$tmp/err")"
    [ "$(grep -c 'smx2d-sim: error' "$tmp/err")" = 1 ] || fail "bad input: not one error line"
    ls | grep -q "^failed" && fail "bad input left files: $(ls)"
    ;;
dist)
    command -v patchelf >/dev/null 2>&1 || { echo "SKIP: no patchelf (make deps MPI=1)"; exit 77; }
    expect 0 "$bin" tiny.yaml $spots --set output.file=alone.h5 --quiet
    expect 0 sh -c 'cd "$1" && sh scripts/make-dist.sh "$2" "$3"' sh "$root" "$bin" "$tmp/dist"
    d="$tmp/dist"
    for f in bin/mpirun libexec/openmpi/orterun libexec/openmpi/orted share/openmpi/help-mpi-runtime.txt \
             lib/openmpi/mca_btl_vader.so lib/openmpi/mca_btl_tcp.so; do
        [ -e "$d/$f" ] || fail "the tree has no $f"
    done
    grep -q "^- MPI: built against Open MPI" "$d/REQUIREMENTS.txt" || fail "REQUIREMENTS.txt does not name the MPI"
    # Every library of the binary, the launcher and the components resolves inside the tree.
    for f in "$d/bin/smx2d-sim" "$d"/libexec/openmpi/* "$d"/lib/openmpi/*.so "$d"/lib/pmix/*.so; do
        ldd "$f" | grep -E "=> /|not found" | grep -v "=> $d/" |
            grep -v -E 'libc\.so|libm\.so|libgcc_s|libstdc\+\+|libpthread|libdl\.so|librt\.so|ld-linux|libresolv' |
            sed "s|^|$f: |" | grep . && fail "the libraries above are not the tree's"
    done
    # Runs with a clean environment from the tree (CI runs as root: Open MPI's consent).
    run_tree() {
        env -i PATH=/usr/bin:/bin HOME="$tmp" OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
            OMP_NUM_THREADS=1 OMPI_MCA_btl_vader_single_copy_mechanism=none "$@"
    }
    expect 0 run_tree timeout 120 "$d/bin/mpirun" --oversubscribe -np 2 "$d/bin/smx2d-sim" tiny.yaml $spots \
        --set output.file=tree2.h5
    expect 0 run_tree "$d/bin/smx2d-sim" tiny.yaml $spots --set output.file=tree1.h5 --quiet
    same_dose alone.h5 tree1.h5 tree2.h5
    ranks_are tree2.h5 2 5
    if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
        hide="$root/tests/mpi_hide_system.sh"
        expect 0 sh "$hide" "$d" sh -c 'run() { h=$1; shift; env -i PATH=/usr/bin:/bin HOME="$h" OMPI_ALLOW_RUN_AS_ROOT=1 \
            OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 OMPI_MCA_btl_vader_single_copy_mechanism=none "$@"; }
            d=$1; shift; mpirun --version >/dev/null 2>&1 && { echo "the system mpirun still runs"; exit 1; }
            run "$d" timeout 120 "$d/bin/mpirun" --oversubscribe -np 2 "$d/bin/smx2d-sim" "$@" --set output.file=hidden2.h5 &&
            run "$d" "$d/bin/smx2d-sim" "$@" --set output.file=hidden1.h5 --quiet' sh "$d" tiny.yaml $spots
        # Something of this machine's was hidden, or the runs below prove nothing.
        grep "^hidden:" "$tmp/out"
        grep -q "^hidden: [1-9][0-9]* files" "$tmp/out" || fail "nothing of this machine's Open MPI was hidden"
        same_dose alone.h5 hidden1.h5 hidden2.h5
    else
        echo "SKIP: no private mount namespace here (needs root and unshare -m): the tree ran, but with the system's Open MPI visible"
        exit 77
    fi
    ;;
*)
    fail "unknown case $case_name"
    ;;
esac
echo "mpi $case_name: ok"
