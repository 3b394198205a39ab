#!/usr/bin/env python3
"""How many GPU tiles of a run with media lie in one medium, from the medium
map a result file records: the count behind docs/bench/media.md, "Tiles of one
medium".

  python3 scripts/media-tiles.py RESULT.h5 [RESULT.h5 ...]

/geometry/medium_index is [z][x]. A tile is 32 consecutive columns (x0 = 32*k)
of one row z, as the one-pass kernels' aligned tiles; "uniform" when every cell of
it has the same medium, "reference" when that medium is 0 (the plan's own
material, whose energy step is the one-medium table's).
"""
import sys

import h5py
import numpy as np

TW = 32  # tile width (columns)


def census(path):
    with h5py.File(path, "r") as h:
        m = np.asarray(h["geometry/medium_index"])
    nz, nx = m.shape
    tiles = uniform = reference = 0
    for x0 in range(0, nx, TW):
        seg = m[:, x0:x0 + TW]
        same = (seg == seg[:, :1]).all(axis=1)
        tiles += nz
        uniform += int(same.sum())
        reference += int((same & (seg[:, 0] == 0)).sum())
    return nz, nx, len(np.unique(m)), tiles, uniform, reference, float((m == 0).mean())


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    for path in argv[1:]:
        nz, nx, media, tiles, uniform, reference, cells0 = census(path)
        print(f"{path}: {nz} x {nx} cells, {media} media; {tiles} tiles of {TW} columns: "
              f"one medium {uniform / tiles:.3f}, the reference medium {reference / tiles:.3f}; "
              f"cells of the reference medium {cells0:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
