#!/usr/bin/env python3
"""The LET of a proton pencil beam in water by Wilkens and Oelfke's analytical
model, for tests/test_let.c. Writes tests/reference/wilkens_let_150MeV.txt.
Run from anywhere:

    /usr/bin/python3 scripts/reference/wilkens_let.py

Source: J. J. Wilkens and U. Oelfke, "Analytical linear energy transfer
calculations for proton therapy", Med. Phys. 30 (2003) 806-815: the primary
protons' track-averaged (fluence-weighted) LET and dose-averaged LET at depth
z are averages of the stopping power S over the protons present there,

    LET_t(z) = int phi(r, z) S(r) dr / int phi(r, z) dr,
    LET_d(z) = int phi(r, z) S(r)^2 dr / int phi(r, z) S(r) dr,

r the residual range, with the residual ranges of a monoenergetic beam
spread by range straggling as a Gaussian in the initial range (mean R0, the
CSDA range; sigma = 0.012 R0^0.935 cm, Bortfeld, Med. Phys. 24 (1997) 2024,
eq. 18), so that phi(r, z) is that Gaussian at R' = z + r. Non-elastic losses
scale the fluence at a depth alike for every r and drop out of both ratios.
S(r): the NIST PSTAR total stopping power of liquid water (ICRU Report 49) at
the energy of residual CSDA range r, log-log interpolated in PSTAR's rows from
1 keV (data/pstar_water.csv from 1 MeV, tests/reference/pstar_water_low_energy.txt
below it): the stopping power passes its maximum, 826 MeV cm2/g at 80 keV,
within the last micrometre of residual range, which weighs on LETd.
The depth dose for the positions (the peak, the distal 80, 50 and 20 %) is the
same model's, D(z) = int phi S dr (the primaries' electronic dose; the
non-elastic build-down moves the positions by under 0.05 mm).
"""
import os

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
E0 = 150.0


def main():
    d = np.genfromtxt(os.path.join(ROOT, "data", "pstar_water.csv"), delimiter=",", skip_header=2)
    low = np.loadtxt(os.path.join(ROOT, "tests", "reference", "pstar_water_low_energy.txt"))
    E = np.concatenate([low[:, 0], d[:, 0]])  # MeV
    S = np.concatenate([low[:, 3], d[:, 3]])  # MeV cm2/g
    R = np.concatenate([low[:, 4], d[:, 4]]) * 10.0  # mm
    R0 = float(np.exp(np.interp(np.log(E0), np.log(E), np.log(R))))  # mm
    sigma = 0.012 * (R0 / 10.0) ** 0.935 * 10.0  # mm

    def S_of_r(r):  # below PSTAR's first row (1 keV, 0.06 um) its value
        return np.exp(np.interp(np.log(np.maximum(r, R[0])), np.log(R), np.log(S)))

    # residual ranges: log-spaced near 0 (S peaks there), then linear
    r = np.concatenate([np.geomspace(R[0], 1.0, 4000), np.linspace(1.0 + 1e-3, R0 + 8 * sigma, 20000)])
    w = np.gradient(r)  # quadrature weights
    Sr = S_of_r(r)

    def at(z):
        g = np.exp(-0.5 * ((z + r - R0) / sigma) ** 2) * w
        n, s1, s2 = g.sum(), (g * Sr).sum(), (g * Sr * Sr).sum()
        return s1, s1 / n, s2 / s1  # dose (arb.), LET_t, LET_d in MeV cm2/g

    zs = np.arange(R0 - 6 * sigma, R0 + 6 * sigma, 0.002)
    D = np.array([at(z)[0] for z in zs])
    ip = int(np.argmax(D))
    zpk, Dpk = zs[ip], D[ip]

    def distal(level):
        j = ip + int(np.argmax(D[ip:] < level * Dpk))
        return zs[j - 1] + (zs[j] - zs[j - 1]) * (D[j - 1] - level * Dpk) / (D[j - 1] - D[j])

    r80 = distal(0.8)
    rows = [("half_range", 0.0, 0.5 * r80), ("peak", 1.0, zpk), ("distal_80", 0.8, r80),
            ("distal_50", 0.5, distal(0.5)), ("distal_20", 0.2, distal(0.2))]
    out = os.path.join(ROOT, "tests", "reference", "wilkens_let_150MeV.txt")
    with open(out, "w") as f:
        f.write(
            "# LET of the primary protons of a 150 MeV pencil beam in water (no energy spread) by\n"
            "# the analytical model of J. J. Wilkens and U. Oelfke, \"Analytical linear energy\n"
            "# transfer calculations for proton therapy\", Med. Phys. 30 (2003) 806: track- (LETt)\n"
            "# and dose-averaged (LETd) stopping power over a Gaussian spread of residual ranges,\n"
            "# R0 %.2f mm (PSTAR CSDA), sigma %.3f mm (Bortfeld 1997, 0.012 R0^0.935), NIST PSTAR\n"
            "# stopping powers from 1 keV (ICRU 49). Written by scripts/reference/wilkens_let.py (its docstring\n"
            "# gives the formulas); do not edit by hand.\n"
            "# level: 0 half the model's R80, 1 the peak, else the distal dose level.\n"
            "# level depth_mm LETt_keV_um LETd_keV_um\n" % (R0, sigma))
        for name, level, z in rows:
            _, lt, ld = at(z)
            f.write("%.1f %.3f %.4f %.4f\n" % (level, z, lt / 10.0, ld / 10.0))
            print("%-11s z %8.3f mm  LETt %.4f  LETd %.4f keV/um" % (name, z, lt / 10.0, ld / 10.0))


if __name__ == "__main__":
    main()
