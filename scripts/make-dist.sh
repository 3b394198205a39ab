#!/bin/sh
# Builds a relocatable tree:
#   bin/smx2d-sim      the binary (rpath $ORIGIN/../lib)
#   bin/smx2d-plot, bin/smx2d-compare   the post-processing tools (Python 3 with
#                      numpy, h5py, matplotlib on the target), their package in
#                      share/smx2d-sim/python/smx2d_post
#   bin/smx2d-import-ct, bin/smx2d-import-spots, bin/smx2d-export-dose   DICOM CT
#                      and RT Ion Plan spots in, RT Dose out (numpy, h5py, pydicom),
#                      their package share/smx2d-sim/python/smx2d_dicom
#   lib/               every shared library it needs that is not part of the C
#                      runtime or the GPU driver (libyaml, HDF5 and theirs)
#   share/smx2d-sim/   data/ (tables), config/ (example plans), schemas/, README.md,
#                      LICENSE, and licenses/: the copyright file of every bundled
#                      library's package, indexed in licenses/THIRD_PARTY.txt
#   REQUIREMENTS.txt   what the target machine must provide (glibc, GPU driver, cuFFT),
#                      and the MPI the binary was built against
# A binary built with MPI=1 also gets Open MPI's runtime (bin/mpirun and its
# libraries, components and texts: scripts/dist-mpi.sh, docs/mpi.md).
# Copy the whole tree to a Linux GPU node (same or newer glibc) and run bin/smx2d-sim.
# cuFFT (286 MB) is not linked but loaded at run time where the CUDA backend may
# use it (cuda/cufft_loader.cu): from lib/, the build's CUDA lib64 (a second rpath
# entry, /usr/local/cuda/lib64 by default) or LD_LIBRARY_PATH; without it the
# CUDA backend uses its direct angular kernel. DIST_BUNDLE_CUDA=1 copies it into lib/.
set -eu
bin=$1
dest=$2
rm -rf "$dest"
mkdir -p "$dest/bin" "$dest/lib" "$dest/share/smx2d-sim"
cp "$bin" "$dest/bin/smx2d-sim"
# The tools find their package in ../share/smx2d-sim/python.
tools=$(dirname "$0")
for t in smx2d-plot smx2d-compare smx2d-import-ct smx2d-import-spots smx2d-export-dose; do
    cp "$tools/$t" "$dest/bin/"
    chmod 755 "$dest/bin/$t"
done
for pkg in smx2d_post smx2d_dicom; do
    mkdir -p "$dest/share/smx2d-sim/python/$pkg"
    cp "$tools/$pkg"/*.py "$dest/share/smx2d-sim/python/$pkg/"
done

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
# The loop runs in a subshell: its exit does not stop this script.
if ldd "$bin" | grep -q "not found"; then
    echo "make-dist: $bin needs libraries this machine lacks:" >&2
    ldd "$bin" | grep "not found" >&2
    exit 1
fi

# cuFFT, which the binary loads by this name at run time (ldd does not list it),
# and the directories of the binary's rpath after $ORIGIN/../lib (the build's CUDA lib64).
cufft=$(grep -a -o 'libcufft\.so\.[0-9][0-9]*' "$bin" | head -n 1)
rpath_dirs=$(readelf -d "$bin" | sed -n 's/.*(R[UN]*PATH).*\[\(.*\)\]/\1/p' | tr ':' '\n' | grep -v ORIGIN || true)
if [ "${DIST_BUNDLE_CUDA:-0}" = 1 ] && [ -n "$cufft" ]; then
    found=""
    # The binary's own search order: its rpath, then the loader's cache.
    for dir in $rpath_dirs; do
        if [ -f "$dir/$cufft" ]; then found="$dir/$cufft"; break; fi
    done
    [ -n "$found" ] || found=$(ldconfig -p 2>/dev/null | sed -n "s/^[[:space:]]*$cufft (.*=> //p" | head -n 1)
    if [ -z "$found" ]; then
        echo "make-dist: DIST_BUNDLE_CUDA=1, but $cufft is not on this machine" >&2
        exit 1
    fi
    cp -L "$found" "$dest/lib/$cufft"
    echo "$cufft $found" >> "$dest/lib.list"
fi

# An MPI build: Open MPI's launcher, libraries and components, relocatable with the tree.
mpi=$(sh -c '"$1" --version' sh "$bin" 2>/dev/null | sed -n 's/^  MPI: //p')
if [ -n "$mpi" ]; then
    sh "$tools/dist-mpi.sh" "$bin" "$dest"
fi

share="$dest/share/smx2d-sim"
mkdir -p "$share/data" "$share/config" "$share/schemas"
cp data/*.h5 data/*.csv data/README.md "$share/data/" 2>/dev/null || cp data/* "$share/data/"
mkdir -p "$share/data/materials"
cp data/materials/*.h5 "$share/data/materials/"
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
# The CUDA Toolkit's licence (EULA.txt at the top of an installation, or a pip
# wheel's licences) for a library taken from it.
cuda_licence() {
    d=$(dirname "$(readlink -f "$1")")
    for up in "$d/.." "$d/../.." "$d/../../.."; do
        if [ -f "$up/EULA.txt" ]; then echo "$up/EULA.txt"; return; fi
    done
    for f in "$d"/../dist-info/nvidia_cufft-*/licenses/*; do
        if [ -f "$f" ]; then echo "$f"; return; fi
    done
}

while read -r name path; do
    pkg=""
    case "$name" in
    libcufft*)
        eula=$(cuda_licence "$path")
        if [ -n "$eula" ]; then
            cp "$eula" "$lic/nvidia-cuda.copyright"
            echo "$name  from $path  licence nvidia-cuda.copyright" >> "$lic/THIRD_PARTY.txt"
            continue
        fi ;;
    esac
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

# What the target must provide: the libraries left out above, and the oldest
# glibc / libstdc++ that every file of the tree accepts.
newest() { # $1 = symbol version prefix: the newest one any file of the tree needs
    for f in "$dest/bin/smx2d-sim" "$dest"/lib/*; do
        [ -f "$f" ] && objdump -T "$f" 2>/dev/null
    done | grep -o "$1[0-9.]*" | sort -u -V | tail -n 1
}
glibc=$(newest GLIBC_)
glibcxx=$(newest GLIBCXX_)
nvcc=$(sh -c '"$1" --version' sh "$dest/bin/smx2d-sim" 2>/dev/null | sed -n 's/^  nvcc: //p')
{
    echo "$(sh -c '"$1" --version' sh "$dest/bin/smx2d-sim" 2>/dev/null | head -n 1): what the target machine must provide"
    echo
    echo "lib/ holds every library bin/smx2d-sim loads except these, which come from the target:"
    echo
    echo "- Linux x86-64 with glibc ${glibc#GLIBC_} or newer (the newest symbol version any file"
    if [ -n "$glibcxx" ]; then
        echo "  here uses) and the GCC runtime: libstdc++ ($glibcxx or newer), libgcc_s."
    else
        echo "  here uses) and the GCC runtime (libgcc_s)."
    fi
    if [ "${nvcc:-none}" != none ]; then
        echo "- For the CUDA backend (--device cuda, or auto): an NVIDIA GPU and driver (libcuda.so.1)"
        echo "  that supports CUDA ${nvcc#release }; the CUDA runtime is linked in. Without them the"
        echo "  CPU backend runs."
        if [ -n "$cufft" ]; then
            if [ -f "$dest/lib/$cufft" ]; then
                echo "- cuFFT ($cufft) for the FFT angular variant: bundled in lib/."
            else
                echo "- Optional: cuFFT ($cufft, CUDA ${nvcc#release }) for the FFT angular variant"
                echo "  (backend.angular: fft; auto times it against the direct kernel). It is looked up"
                echo "  in lib/, $(echo "$rpath_dirs" | tr '\n' ',' | sed 's/,/, /g')LD_LIBRARY_PATH and the system's library"
                echo "  path; SMX2D_CUFFT_LIBRARY=PATH names another file. Without it the CUDA backend"
                echo "  uses the direct angular kernel (and says so once); a plan with backend.angular: fft"
                echo "  is refused. DIST_BUNDLE_CUDA=1 make dist copies it into lib/ (~290 MB)."
            fi
        fi
    fi
    if [ -n "$mpi" ]; then
        echo "- MPI: built against $mpi"
        echo "  ($(mpirun --version 2>/dev/null | head -n 1)), bundled: bin/mpirun runs the bundled"
        echo "  Open MPI from wherever the tree lies (it sets OPAL_PREFIX and LD_LIBRARY_PATH); shared"
        echo "  memory and TCP between ranks (the components that need UCX, libfabric, verbs or PSM are"
        echo "  not bundled: lib/openmpi/LEFT_OUT.txt). On a cluster with its own Open MPI 4.x, its"
        echo "  mpirun or srun also starts bin/smx2d-sim (docs/mpi.md)."
    fi
    echo
    echo "bin/smx2d-sim --version shows the GPU and the cuFFT it finds${mpi:+, and the MPI library it loads}."
} > "$dest/REQUIREMENTS.txt"
echo "dist: $dest ($(du -sh "$dest" | cut -f1)); bundled: $(ls "$dest/lib" | tr '\n' ' ')"
