#!/bin/sh
# The Open MPI runtime of an MPI build (make MPI=1), bundled into a dist tree so
# that it runs where no MPI is installed (docs/mpi.md):
#   libexec/openmpi/orterun, orted   Open MPI's launcher and daemon, as built
#   bin/mpirun                       a wrapper: relocates Open MPI to this tree
#                                    (OPAL_PREFIX and the directories below) and runs orterun
#   lib/                             libmpi and the libraries of the launcher
#                                    and the components (beside the binary's)
#   lib/openmpi/                     the MCA components (shared memory, TCP, ...);
#                                    those that need a network fabric's libraries
#                                    (UCX, libfabric, verbs, PSM) or OpenSHMEM's are left out
#   lib/pmix/                        PMIx's components
#   share/openmpi/, etc/openmpi/     help texts and the default MCA parameters
# Usage: sh scripts/dist-mpi.sh BINARY DEST (called by make-dist.sh); appends
# "name path" of each bundled library to DEST/lib.list for the licence notices.
set -eu
bin=$1
dest=$2

libmpi=$(ldd "$bin" | awk '$1 ~ /^libmpi\.so/ {print $3}')
[ -n "$libmpi" ] || { echo "dist-mpi: $bin is not linked with MPI" >&2; exit 1; }
command -v orterun >/dev/null 2>&1 || { echo "dist-mpi: no orterun (apt-get install openmpi-bin)" >&2; exit 1; }
# Open MPI's libraries and components carry a RUNPATH into the build machine's
# Open MPI, which hides the binary's $ORIGIN/../lib from their own
# dependencies: every bundled library gets an $ORIGIN-relative one instead.
command -v patchelf >/dev/null 2>&1 || { echo "dist-mpi: no patchelf (apt-get install patchelf)" >&2; exit 1; }
orterun=$(readlink -f "$(command -v orterun)")
orted=$(readlink -f "$(command -v orted)")
# Where this Open MPI keeps its components and texts (ompi_info knows).
ompi_path() { ompi_info --path "$1" --parsable 2>/dev/null | sed -n "s/^path:$1:*//p"; }
pkglibdir=$(ompi_path pkglibdir)
pkgdatadir=$(ompi_path pkgdatadir)
sysconfdir=$(ompi_path sysconfdir)
[ -d "$pkglibdir" ] && [ -d "$pkgdatadir" ] || { echo "dist-mpi: ompi_info gives no component or help directory" >&2; exit 1; }
libpmix=$(ldd "$pkglibdir"/mca_pmix_*.so 2>/dev/null | awk '$1 ~ /^libpmix\.so/ {print $3; exit}')
# PMIx's components lie beside the file the library's name links to.
pmix_dir=$([ -n "$libpmix" ] && dirname "$(readlink -f "$libpmix")")/pmix

# Left to the target (make-dist.sh's list), and what no component here may need.
system_lib() {
    case "$1" in
    linux-vdso.so*|ld-linux*.so*|libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|\
    libresolv.so*|libutil.so*|libgcc_s.so*|libstdc++.so*|libcuda.so*|libnvidia-*) return 0 ;;
    esac
    return 1
}
fabric_lib() {
    case "$1" in
    libuc[pstm].so*|libfabric.so*|libibverbs.so*|librdmacm.so*|libpsm*|libinfinipath.so*|libefa.so*|\
    libnl-*|liboshmem.so*|libjvm.so*|libmca_common_ucx.so*|libmca_common_ofi.so*|\
    libmca_common_verbs.so*) return 0 ;;
    esac
    return 1
}
# bundle_deps FILE: copies the libraries FILE needs into lib/ (unless there already).
bundle_deps() {
    ldd "$1" | while read -r name arrow path rest; do
        [ "$arrow" = "=>" ] || continue
        system_lib "$name" && continue
        [ -e "$dest/lib/$name" ] && continue
        cp -L "$path" "$dest/lib/$name"
        echo "$name $path" >> "$dest/lib.list"
    done
}
# needs_fabric FILE: FILE needs a library of a network fabric, or one this machine lacks.
needs_fabric() {
    ldd "$1" | while read -r name arrow path rest; do
        [ "$arrow" = "=>" ] || continue
        if [ "$path" = "not" ] || fabric_lib "$name"; then echo "$name"; fi
    done | head -n 1
}

mkdir -p "$dest/libexec/openmpi" "$dest/lib/openmpi" "$dest/lib/pmix" "$dest/share/openmpi" "$dest/etc/openmpi"
cp "$orterun" "$dest/libexec/openmpi/orterun"
cp "$orted" "$dest/libexec/openmpi/orted"
bundle_deps "$bin"
bundle_deps "$orterun"
bundle_deps "$orted"
[ -n "$libpmix" ] && [ ! -e "$dest/lib/$(basename "$libpmix")" ] &&
    { cp -L "$libpmix" "$dest/lib/"; echo "$(basename "$libpmix") $libpmix" >> "$dest/lib.list"; }

left=""
for c in "$pkglibdir"/*.so; do
    why=$(needs_fabric "$c")
    if [ -n "$why" ]; then
        left="$left $(basename "$c" .so)"
        continue
    fi
    cp "$c" "$dest/lib/openmpi/"
    bundle_deps "$c"
done
echo "openmpi $pkglibdir/$(ls "$dest/lib/openmpi" | head -n 1)" >> "$dest/lib.list"
if [ -n "$libpmix" ] && [ -d "$pmix_dir" ]; then
    for c in "$pmix_dir"/*.so; do
        [ -n "$(needs_fabric "$c")" ] && continue
        cp "$c" "$dest/lib/pmix/"
        bundle_deps "$c"
    done
    echo "pmix $pmix_dir/$(ls "$dest/lib/pmix" | head -n 1)" >> "$dest/lib.list"
fi
cp -r "$pkgdatadir"/. "$dest/share/openmpi/"
[ -f "$sysconfdir/openmpi-mca-params.conf" ] && cp "$sysconfdir/openmpi-mca-params.conf" "$dest/etc/openmpi/"
echo "Components left out (they need a network fabric's or OpenSHMEM's libraries; ranks talk through" \
    "shared memory and TCP):" \
    > "$dest/lib/openmpi/LEFT_OUT.txt"
echo "$left" | tr ' ' '\n' | sed '/^$/d' >> "$dest/lib/openmpi/LEFT_OUT.txt"

# relocate DIR RUNPATH: every shared object in DIR searches RUNPATH (its own
# dependencies in the tree, wherever they are loaded from).
relocate() {
    for f in "$1"/*.so*; do
        [ -f "$f" ] && patchelf --set-rpath "$2" "$f"
    done
}
relocate "$dest/lib" '$ORIGIN'
relocate "$dest/lib/openmpi" '$ORIGIN/..'
relocate "$dest/lib/pmix" '$ORIGIN/..'
# The launcher and daemon (started by a lone smx2d-sim too): an RPATH, which,
# unlike RUNPATH, also serves their libraries' own dependencies.
for f in "$dest/libexec/openmpi/orterun" "$dest/libexec/openmpi/orted"; do
    patchelf --force-rpath --set-rpath '$ORIGIN/../../lib' "$f"
done

cat > "$dest/bin/mpirun" <<'SH'
#!/bin/sh
# Open MPI's mpirun from this tree, relocated here (docs/mpi.md): Open MPI and
# PMIx find their components, help texts and parameters under this tree, the
# launcher and the ranks their libraries in lib/. Use it as mpirun:
#   bin/mpirun -np 2 bin/smx2d-sim plan.yaml
here=$(cd "$(dirname "$0")/.." && pwd)
export OPAL_PREFIX="$here"
export OPAL_EXEC_PREFIX="$here"
export OPAL_BINDIR="$here/libexec/openmpi"
export OPAL_LIBDIR="$here/lib"
export OPAL_PKGLIBDIR="$here/lib/openmpi"
export OPAL_DATAROOTDIR="$here/share"
export OPAL_DATADIR="$here/share"
export OPAL_PKGDATADIR="$here/share/openmpi"
export OPAL_SYSCONFDIR="$here/etc/openmpi"
export OMPI_MCA_mca_base_component_path="$here/lib/openmpi"
export OMPI_MCA_mca_base_param_files="$here/etc/openmpi/openmpi-mca-params.conf"
export PMIX_MCA_mca_base_component_path="$here/lib/pmix"
export PMIX_INSTALL_PREFIX="$here"
export LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PATH="$here/bin:$here/libexec/openmpi${PATH:+:$PATH}"
exec "$here/libexec/openmpi/orterun" "$@"
SH
chmod 755 "$dest/bin/mpirun"
echo "dist-mpi: Open MPI runtime bundled ($(ls "$dest/lib/openmpi" | grep -c '\.so$') components;" \
     "left out:$(echo "$left" | wc -w))"
