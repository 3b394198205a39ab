#!/bin/sh
# The C and CUDA sources in the style of .clang-format (`make check-format`, CI),
# or rewritten into it (`make format`). One clang-format version is pinned
# (14, Debian 12's): another version lays out some lines differently, and a
# check that passes on one machine must pass on every other.
#   sh scripts/check-format.sh            list the files that differ; exit 1 if any
#   sh scripts/check-format.sh --fix      rewrite them in place
set -eu
fix=0
case "${1:-}" in
"") ;;
--fix) fix=1 ;;
*) echo "usage: sh scripts/check-format.sh [--fix]" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.."
CF=${CLANG_FORMAT:-clang-format-14}
if ! command -v "$CF" >/dev/null 2>&1; then
    echo "check-format: $CF not found (make deps-format, or apt-get install clang-format-14)" >&2
    exit 1
fi
# The tracked sources, or every source under the tree outside git (a release tarball).
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    files=$(git ls-files '*.c' '*.h' '*.cu' '*.cuh')
else
    files=$(find src cuda tests fuzz scripts -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh')
fi
bad=0
for f in $files; do
    if [ "$fix" = 1 ]; then
        "$CF" -i "$f"
    elif ! "$CF" "$f" | cmp -s "$f" -; then
        echo "$f: not in the style of .clang-format (sh scripts/check-format.sh --fix; diff: $CF $f | diff $f -)"
        bad=$((bad + 1))
    fi
done
n=$(echo "$files" | wc -w)
if [ "$fix" = 0 ]; then
    [ "$bad" = 0 ] && echo "check-format: $n files in the style of .clang-format" ||
        echo "check-format: $bad of $n files differ"
fi
[ "$bad" = 0 ]
