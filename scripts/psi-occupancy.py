#!/usr/bin/env python3
"""Where a beam's phase space is: for each psi snapshot of a result file, the
cells a step would visit under five ways of bounding them, at several
thresholds. Used to size the per-spot runs' work against what a spot
occupies (docs/bench/per-spot-slots.md, "Where a spot's cells are").

  python3 scripts/psi-occupancy.py RESULT.h5

For each snapshot /psi/step_N ([E][theta][z][x]) and each threshold (values
above it count as occupied: any non-zero value, 1e-12 absolute, and 1e-8,
1e-6, 1e-4 of the snapshot's largest value) it prints, in millions of cells:
  box          the smallest box of rows x columns x bins x every direction
               holding every occupied value (one box for the whole state);
  per-bin      the sum over bins of each bin's rows x columns box, times the
               directions;
  per-bin-dir  the sum over (bin, direction) of each one's rows x columns box;
  per-row      the sum over (bin, direction, row) of each row's column span;
  count        the occupied values themselves;
and `below`, the share of the snapshot's weight in values at or below the
threshold."""
import sys

import h5py
import numpy as np


def spans(m):
    """Rows x columns box of a boolean plane [z][x], and its per-row spans."""
    rows = np.where(m.any(axis=1))[0]
    cols = np.where(m.any(axis=0))[0]
    box = (rows[-1] - rows[0] + 1) * (cols[-1] - cols[0] + 1)
    r = m[rows[0]:rows[-1] + 1]
    has = r.any(axis=1)
    first = np.argmax(r, axis=1)
    last = m.shape[1] - 1 - np.argmax(r[:, ::-1], axis=1)
    return box, int(((last - first + 1) * has).sum()), (rows[0], rows[-1], cols[0], cols[-1])


def occupancy(d):
    ne, nth = d.shape[0], d.shape[1]
    filled = [e for e in range(ne) if d[e].any()]
    peak = max(float(d[e].max()) for e in filled)
    total = sum(float(d[e].sum(dtype=np.float64)) for e in filled)
    out = []
    for label, thr in (("non-zero", 0.0), ("1e-12", 1e-12), ("1e-8 max", 1e-8 * peak),
                       ("1e-6 max", 1e-6 * peak), ("1e-4 max", 1e-4 * peak)):
        lo = [1 << 30] * 3
        hi = [-1] * 3
        per_bin = per_dir = per_row = count = 0
        below = 0.0
        for e in filled:
            a = d[e]
            m = a > thr
            below += float(a[~m].sum(dtype=np.float64))
            if not m.any():
                continue
            count += int(m.sum())
            b, _, (z0, z1, x0, x1) = spans(m.any(axis=0))
            per_bin += b * nth
            for v, (l, h) in enumerate(((e, e), (z0, z1), (x0, x1))):
                lo[v] = min(lo[v], l)
                hi[v] = max(hi[v], h)
            for t in range(nth):
                if m[t].any():
                    bt, rt, _ = spans(m[t])
                    per_dir += bt
                    per_row += rt
        dims = [hi[v] - lo[v] + 1 for v in range(3)]
        box = dims[0] * dims[1] * dims[2] * nth if count else 0
        out.append((label, box, dims, per_bin, per_dir, per_row, count, below / total))
    return peak, total, nth, out


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    with h5py.File(sys.argv[1], "r") as f:
        for name in sorted(f["psi"].keys()):
            peak, total, nth, rows = occupancy(f["psi"][name])
            print(f"{name}: largest value {peak:.3e}, weight {total:.4f}")
            print(f"  {'threshold':9s} {'box':>9s} {'(bins x rows x cols)':>22s} {'per-bin':>9s} "
                  f"{'per-bin-dir':>11s} {'per-row':>9s} {'count':>9s} {'below':>9s}")
            for label, box, dims, pb, pd, pr, c, below in rows:
                shape = f"{dims[0]} x {dims[1]} x {dims[2]}" if c else "-"
                print(f"  {label:9s} {box / 1e6:8.2f}M {shape:>22s} {pb / 1e6:8.2f}M "
                      f"{pd / 1e6:10.2f}M {pr / 1e6:8.2f}M {c / 1e6:8.3f}M {below:9.2e}")


if __name__ == "__main__":
    main()
