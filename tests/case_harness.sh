# What the binary's shell tests share, sourced after their argument handling:
#   . tests/case_harness.sh    (from the repository root, with $build set)
# bin: the built binary; root: the repository; tmp: a scratch folder removed
# on exit; fail MSG: the test's failure, to stderr, exit 1.
bin="$(cd "$build" && pwd)/smx2d-sim"  # absolute: a test may change directory
root=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
