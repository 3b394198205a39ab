# What the binary's shell tests share, sourced after their argument handling:
#   . tests/case_harness.sh    (from the repository root, with $build set)
# bin: the built binary; hooks: the same program with its test seams
# (tests/hooks_main.c: SMX2D_TEST_PAUSE_AT and the others); root: the
# repository; tmp: a scratch folder removed on exit; fail MSG: the test's
# failure, to stderr, exit 1.
bin="$(cd "$build" && pwd)/smx2d-sim"  # absolute: a test may change directory
hooks="$(cd "$build" && pwd)/tests/smx2d-sim-hooks"
root=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
