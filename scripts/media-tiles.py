#!/usr/bin/env python3
"""How many GPU tiles of a run with media lie in one medium, and how many
media a tile holds, from the medium map a result file records: the counts
behind docs/bench/media.md, "Tiles of one medium".

  python3 scripts/media-tiles.py RESULT.h5 [RESULT.h5 ...]

/geometry/medium_index is [z][x]. A tile is 32 consecutive columns (x0 = 32*k)
of one row z, as the one-pass kernels' aligned tiles; "uniform" when every cell of
it has the same medium, "reference" when that medium is 0 (the plan's own
material, whose energy step is the one-medium table's). "At most k media": the
share of tiles whose cells hold k distinct media or fewer (the one pass stages
a bin's records of a tile's media in shared memory: cuda/energy_media.cuh).
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
    distinct = []  # media per tile
    for x0 in range(0, nx, TW):
        seg = m[:, x0:x0 + TW]
        same = (seg == seg[:, :1]).all(axis=1)
        tiles += nz
        uniform += int(same.sum())
        reference += int((same & (seg[:, 0] == 0)).sum())
        distinct += [len(np.unique(row)) for row in seg]
    return (nz, nx, len(np.unique(m)), tiles, uniform, reference, float((m == 0).mean()),
            np.array(distinct))


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    for path in argv[1:]:
        nz, nx, media, tiles, uniform, reference, cells0, distinct = census(path)
        print(f"{path}: {nz} x {nx} cells, {media} media; {tiles} tiles of {TW} columns: "
              f"one medium {uniform / tiles:.3f}, the reference medium {reference / tiles:.3f}; "
              f"cells of the reference medium {cells0:.3f}")
        shares = ", ".join(f"{k} {(distinct <= k).mean():.3f}" for k in (2, 4, 8, 16))
        print(f"  media a tile holds: median {np.median(distinct):g}, most {distinct.max()}; "
              f"at most k media: {shares}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
