#!/usr/bin/env python3
"""Are /dose and everything under it (the per-spot matrix) byte for byte the
same in every result file? (tests/mpi.sh; scripts/mpi-gpu-check.sh)

    /usr/bin/python3 tests/same_dose.py [--group /G]... REFERENCE.h5 OTHER.h5...

--group compares the groups named (each as a whole, e.g. /scenarios, /let)
instead of /dose; a group missing from every file is no difference, from some
of them is.

Prints the datasets compared and exits 0 when all are identical; otherwise
names the files and datasets that differ (with the largest difference) and
exits 1. Needs h5py and numpy."""
import sys

import h5py
import numpy as np


def datasets(path, groups):
    out = {}
    with h5py.File(path, "r") as f:
        for g in groups:
            if g not in f:
                continue
            prefix = "" if groups == ["/dose"] else g.strip("/") + "/"
            f[g].visititems(lambda name, obj: out.__setitem__(prefix + name, obj[()])
                            if isinstance(obj, h5py.Dataset) else None)
    return out


def main(args):
    groups, paths = [], []
    while args:
        if args[0] == "--group" and len(args) > 1:
            groups.append(args[1])
            args = args[2:]
        else:
            paths.append(args[0])
            args = args[1:]
    groups = groups or ["/dose"]
    if len(paths) < 2:
        sys.exit(__doc__)
    ref = datasets(paths[0], groups)
    bad = 0
    for path in paths[1:]:
        got = datasets(path, groups)
        if sorted(got) != sorted(ref):
            print("%s: datasets %s, %s has %s" % (path, sorted(got), paths[0], sorted(ref)))
            bad += 1
            continue
        for name in sorted(ref):
            a, b = ref[name], got[name]
            if a.shape != b.shape or a.dtype != b.dtype or a.tobytes() != b.tobytes():
                diff = ""
                if a.shape == b.shape and a.dtype.kind in "fiu":
                    diff = ", largest difference %.3e" % np.max(np.abs(a.astype(float) - b.astype(float)))
                where = "/dose/" + name if groups == ["/dose"] else "/" + name
                print("%s: %s differs from %s's%s" % (path, where, paths[0], diff))
                bad += 1
    if bad:
        return 1
    print("identical %s (%d datasets: %s) in %s" % (" ".join(groups), len(ref), ", ".join(sorted(ref)),
                                                   " ".join(paths)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
