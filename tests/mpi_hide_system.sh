#!/bin/sh
# Runs a command where this machine's own copies of what a dist tree bundles
# cannot be used, to show that the tree needs none of them (tests/mpi.sh dist):
#   sh tests/mpi_hide_system.sh DIST_TREE CMD...
# In a private mount namespace (unshare -m; root): an empty file is bound over
# every system library of the name of one in DIST_TREE/lib, over Open MPI's
# launcher and daemon, and an empty directory over Open MPI's and PMIx's
# component and text directories. Nothing outside the namespace changes.
set -eu
dist=$1
shift
if [ "${SMX_HIDDEN:-}" != 1 ]; then
    exec env SMX_HIDDEN=1 unshare -m --propagation private sh "$0" "$dist" "$@"
fi
empty=$(mktemp)
dirs="$(ompi_info --path pkglibdir --parsable | cut -d: -f3) $(ompi_info --path pkgdatadir --parsable | cut -d: -f3)
      $(ompi_info --path sysconfdir --parsable | cut -d: -f3)"
for f in /usr/lib/x86_64-linux-gnu/libpmix.so.*; do
    [ -e "$f" ] && dirs="$dirs $(dirname "$(readlink -f "$f")")/pmix"
done
for d in $dirs; do
    [ -d "$d" ] && mount -t tmpfs none "$d"
done
hidden=0
for name in $(ls "$dist/lib") orterun orted mpirun.openmpi; do
    for f in /usr/lib/x86_64-linux-gnu/"$name" /usr/bin/"$name"; do
        [ -f "$f" ] || continue
        mount --bind "$empty" "$(readlink -f "$f")"
        hidden=$((hidden + 1))
    done
done
echo "hidden: $hidden files and $(echo $dirs | wc -w) directories of this machine"
exec "$@"
