#!/bin/sh
# Carriage returns in the run's output (src/base/progress.c, progress_terminal):
# the step log and the progress line redraw a line with '\r' only on a terminal
# and never in an MPI job, whose launcher forwards a rank's output (through a
# pty with Open MPI) into the user's terminal or log, where the redraws would
# join lines. script(1) gives the binary a pty; the launchers' variables say
# "MPI job" without an MPI build or mpirun.
#   sh tests/log_terminal.sh BUILD_DIR
# Skips (77) without script(1), or for an MPI build (the variables alone would
# make its MPI_Init look for a launcher that is not there).
set -u
build=$1
. "$(pwd)/tests/case_harness.sh"
command -v script >/dev/null 2>&1 || { echo "SKIP: no script(1) (util-linux)"; exit 77; }
"$bin" --version | grep -q '^ *MPI:' && { echo "SKIP: an MPI build"; exit 77; }
sed "s|../../data/|$root/data/|" "$root/tests/plans/tiny.yaml" > "$tmp/tiny.yaml"
cd "$tmp" || exit 1

# redraws FILE: true when FILE has a '\r' that does not end a line. A pty
# turns every "\n" into "\r\n" (onlcr), so only a '\r' before anything else
# is the program's own.
redraws() { awk '/\r./ { found = 1 } END { exit !found }' "$1"; }
# in_pty OUT ENV...: the tiny plan on a pty, with ENV (VAR=VALUE ...) set.
in_pty() {
    out=$1; shift
    env "$@" script -qec "'$bin' tiny.yaml --overwrite" /dev/null </dev/null >"$out" 2>&1 ||
        { cat "$out" >&2; fail "the run on a pty failed ($*)"; }
    grep -q 'R80' "$out" || { cat "$out" >&2; fail "no summary in the output on a pty ($*)"; }
}

# stdout a file: no '\r' at all.
"$bin" tiny.yaml --overwrite >plain.txt 2>&1 || { cat plain.txt >&2; fail "the run failed"; }
grep -q 'R80' plain.txt || fail "no summary in the output"
grep -q "$(printf '\r')" plain.txt && fail "a carriage return in output that is not a terminal"

# On a terminal outside MPI the step log's lines start with '\r' (a redrawn
# line may be under them): the check below can see a redraw.
in_pty tty.txt SMX2D_UNUSED=1
redraws tty.txt || fail "no carriage return on a terminal: this test no longer sees redraws"

# On a terminal inside an MPI job of each kind of launcher: none.
for var in OMPI_COMM_WORLD_SIZE=2 PMI_SIZE=2 PMIX_RANK=0; do
    in_pty mpi.txt "$var"
    redraws mpi.txt && { od -c mpi.txt | head -20 >&2; fail "a carriage return on a terminal under MPI ($var)"; }
done
echo "ok: no carriage returns in a file or under MPI; on a terminal outside MPI, redraws"
exit 0
