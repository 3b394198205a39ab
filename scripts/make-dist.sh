#!/bin/sh
# Builds a relocatable tree:
#   bin/smx2d-sim      the binary (rpath $ORIGIN/../lib)
#   bin/smx2d-plot, bin/smx2d-compare   the post-processing tools (Python 3 with
#                      numpy, h5py, matplotlib on the target), their package in
#                      share/smx2d-sim/python/smx2d_post
#   lib/               every shared library it needs that is not part of the C
#                      runtime or the GPU driver (libyaml, HDF5 and theirs)
#   share/smx2d-sim/   data/ (tables), config/ (example plans), schemas/, README.md,
#                      LICENSE, and licenses/: the copyright file of every bundled
#                      library's package, indexed in licenses/THIRD_PARTY.txt
# Copy the whole tree to a Linux GPU node (same or newer glibc) and run bin/smx2d-sim.
# CUDA toolkit libraries (cuFFT: 286 MB) are left to the node's CUDA installation,
# found through a second rpath entry (the build's CUDA lib64, /usr/local/cuda/lib64
# by default) or LD_LIBRARY_PATH; DIST_BUNDLE_CUDA=1 copies them into lib/ too.
set -eu
bin=$1
dest=$2
rm -rf "$dest"
mkdir -p "$dest/bin" "$dest/lib" "$dest/share/smx2d-sim"
cp "$bin" "$dest/bin/smx2d-sim"
# The tools find their package in ../share/smx2d-sim/python.
tools=$(dirname "$0")
cp "$tools/smx2d-plot" "$tools/smx2d-compare" "$dest/bin/"
chmod 755 "$dest/bin/smx2d-plot" "$dest/bin/smx2d-compare"
mkdir -p "$dest/share/smx2d-sim/python/smx2d_post"
cp "$tools"/smx2d_post/*.py "$dest/share/smx2d-sim/python/smx2d_post/"

# Libraries every Linux system has (glibc family, gcc runtime) and the GPU driver,
# which must come from the target machine itself.
system_lib() {
    case "$1" in
    linux-vdso.so*|ld-linux*.so*|libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|\
    libresolv.so*|libutil.so*|libgcc_s.so*|libstdc++.so*|libcuda.so*|libnvidia-*) return 0 ;;
    esac
    return 1
}

ldd "$bin" | while read -r name arrow path rest; do
    [ "$arrow" = "=>" ] || continue
    if [ "$path" = "not" ]; then
        echo "make-dist: $name is not found on this machine" >&2
        exit 1
    fi
    system_lib "$name" && continue
    case "$name" in
    libcufft*|libcudart*|libcublas*|libnvJitLink*)
        [ "${DIST_BUNDLE_CUDA:-0}" = 1 ] || continue ;;
    esac
    cp -L "$path" "$dest/lib/$name"
    echo "$name $path" >> "$dest/lib.list"
done

share="$dest/share/smx2d-sim"
mkdir -p "$share/data" "$share/config" "$share/schemas"
cp data/*.h5 data/*.csv data/README.md "$share/data/" 2>/dev/null || cp data/* "$share/data/"
cp config/*.yaml config/*.csv "$share/config/"
cp schemas/* "$share/schemas/"
cp README.md LICENSE "$share/"

# Third-party notices: each bundled library's package and its copyright file
# (Debian and Ubuntu keep it in /usr/share/doc/PACKAGE/copyright).
lic="$share/licenses"
mkdir -p "$lic"
{
    echo "Libraries bundled in lib/, the package each came from, and its licence file here."
    echo "smx2d-sim itself: ../LICENSE (BSD 3-Clause)."
    echo
} > "$lic/THIRD_PARTY.txt"
while read -r name path; do
    pkg=""
    if command -v dpkg >/dev/null 2>&1; then
        for p in "$path" "$(readlink -f "$path")" "/usr$path"; do
            pkg=$(dpkg -S "$p" 2>/dev/null | head -n 1 | cut -d: -f1) && [ -n "$pkg" ] && break
        done
    fi
    if [ -n "$pkg" ] && [ -f "/usr/share/doc/$pkg/copyright" ]; then
        cp "/usr/share/doc/$pkg/copyright" "$lic/$pkg.copyright"
        ver=$(dpkg-query -W -f '${Version}' "$pkg" 2>/dev/null || echo "?")
        echo "$name  package $pkg $ver  licence $pkg.copyright" >> "$lic/THIRD_PARTY.txt"
    else
        echo "make-dist: no licence file found for $name ($path): add its notice to $lic by hand" >&2
        echo "$name  from $path  licence NOT FOUND on the build machine" >> "$lic/THIRD_PARTY.txt"
    fi
done < "$dest/lib.list"
rm -f "$dest/lib.list"
echo "dist: $dest ($(du -sh "$dest" | cut -f1)); bundled: $(ls "$dest/lib" | tr '\n' ' ')"
