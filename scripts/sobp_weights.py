#!/usr/bin/env python3
"""Spot weights for a spread-out Bragg peak (SOBP): writes a spot map for beam.spots_file.

Usage: scripts/sobp_weights.py PLAN.yaml --from MM --to MM [--spacing MM] [--out spots.csv]
                               [--smx2d-sim PATH]

For energies whose PSTAR projected ranges lie every --spacing mm from a little
short of --from to a little beyond --to, the plan is run once per energy as a
single pencil beam (a one-spot file at x = 0, the plan's own grid and
physics; the reference energy of the scattering power is then each spot's own) and the laterally integrated depth dose of each is read from the
result file. The weights w >= 0 minimise the squared deviation of the summed
depth dose from a constant over [--from, --to] (multiplicative updates for
non-negative least squares, Lee and Seung 2001), normalised to a total of 1.
The laterally integrated depth dose of the field equals the central depth
dose of a field laterally much wider than the beam, which is what "flat" means
here. Needs Python 3 with numpy and h5py.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np


def pstar_energy_for_range(table, range_mm):
    """The energy whose PSTAR projected range is range_mm (water, from the table file)."""
    with h5py.File(table, "r") as f:
        E = f["energy_MeV"][()]
        R = f["projected_range"][()] * 10.0  # g/cm2 -> mm of water (1 g/cm3)
    return float(np.interp(range_mm, R, E))


def depth_dose(sim, plan, energy, workdir):
    out = os.path.join(workdir, "E%.3f.h5" % energy)
    spot = os.path.join(workdir, "E%.3f.csv" % energy)
    with open(spot, "w") as f:
        f.write("energy_MeV, x_mm, weight\n%.4f, 0, 1\n" % energy)
    subprocess.run([sim, plan, "--quiet", "--overwrite", "--output", out, "--set", "beam.spots_file=" + spot],
                   check=True)
    with h5py.File(out, "r") as f:
        dose = f["dose/energy_deposit_MeV"][()]
        z = f["axes/z_centres_mm"][()]
    return z, dose.sum(axis=1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("plan")
    ap.add_argument("--from", dest="z0", type=float, required=True, help="proximal end of the plateau, mm")
    ap.add_argument("--to", dest="z1", type=float, required=True, help="distal end of the plateau, mm")
    ap.add_argument("--spacing", type=float, default=2.0, help="range spacing of the energies, mm")
    ap.add_argument("--out", default="sobp_spots.csv")
    ap.add_argument("--table", default=os.path.join(os.path.dirname(__file__), "..", "data", "pstar_water.h5"))
    ap.add_argument("--smx2d-sim", dest="sim", default=os.path.join(os.path.dirname(__file__), "..", "build",
                                                                   "smx2d-sim"))
    a = ap.parse_args()
    # From one spacing short of the plateau to one beyond it: the deepest peak
    # must lie past --to, whose R80 would otherwise be the plateau's end.
    ranges = np.arange(a.z0 - a.spacing, a.z1 + 1.5 * a.spacing, a.spacing)
    energies = [pstar_energy_for_range(a.table, r) for r in ranges]
    with tempfile.TemporaryDirectory() as work:
        curves = [depth_dose(a.sim, a.plan, E, work) for E in energies]
    z = curves[0][0]
    A = np.stack([c[1] for c in curves], axis=1)  # [nz][n_energies]
    inside = (z >= a.z0) & (z <= a.z1)
    M = A[inside]
    w = np.ones(len(energies))
    for _ in range(20000):  # min |M w - 1|^2, w >= 0
        w *= (M.T @ np.ones(M.shape[0])) / np.maximum(M.T @ (M @ w), 1e-300)
    total = A @ w
    flat = total[inside] / total[inside].mean()
    w /= w.sum()
    with open(a.out, "w") as f:
        f.write("# SOBP over %g to %g mm, written by scripts/sobp_weights.py from %s\n" % (a.z0, a.z1, a.plan))
        f.write("# laterally integrated depth dose within %+.2f / %+.2f %% of its mean there\n"
                % (100 * (flat.min() - 1), 100 * (flat.max() - 1)))
        f.write("energy_MeV, x_mm, weight\n")
        for E, wk in zip(energies, w):
            f.write("%.4f, 0, %.6g\n" % (E, wk))
    print("%s: %d energies %.2f to %.2f MeV; plateau %+.2f / %+.2f %%" %
          (a.out, len(energies), energies[0], energies[-1], 100 * (flat.min() - 1), 100 * (flat.max() - 1)))


if __name__ == "__main__":
    sys.exit(main())
