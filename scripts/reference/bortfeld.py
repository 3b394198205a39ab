#!/usr/bin/env python3
"""Bortfeld's analytic Bragg curve for the depth-dose tests.

Writes tests/reference/bortfeld_water.txt (the figures test_depth_dose reads,
on 0.5 mm rows), tests/reference/bortfeld_water_rows025.txt (the same figures
on 0.25 mm rows, for test_grid_convergence's finest grid) and
tests/reference/bortfeld_E<MeV>.txt (the curves, averaged over 0.5 mm rows,
for plotting). Run from the repository root:

    /usr/bin/python3 scripts/reference/bortfeld.py

Source: T. Bortfeld, "An analytical approximation of the Bragg curve for
therapeutic proton beams", Med. Phys. 24 (1997) 2024-2033:
  - eq. (29): the straggled depth dose of a monoenergetic beam through the
    parabolic cylinder functions D_-1/p and D_-1/p-1 (here scipy.special.pbdv),
    with p = 1.77 (water, sec. II.A), beta = 0.012 /cm (the fluence falling
    linearly through non-elastic interactions, sec. II.B), gamma = 0.6 (the
    share of the non-elastic energy absorbed locally, sec. II.B), epsilon = 0
    (no low-energy tail: the tests' beams are monoenergetic);
  - range straggling, eq. (17): sigma_mono^2 = alpha' int_0^R0 (1 - b^2/2) /
    (1 - b^2) (dE/dz)^-2 dz with alpha' = 0.087 MeV^2/cm (water), where b is
    the proton's velocity over c; his fit eq. (18), sigma_mono = 0.012 R0^0.935
    (cm), leaves out the relativistic factor (1 - b^2/2)/(1 - b^2).
R0 is the PSTAR CSDA range and dE/dz the PSTAR total stopping power
(tests/reference/pstar_water_ranges.txt and data/pstar_water.csv, the NIST
PSTAR tables, ICRU Report 49): Bortfeld's power law R0 = 0.0022 E^1.77 is
itself a fit to them, off by up to 1.5 mm over 70-230 MeV.

Straggling models in the output (column `sigma_model`):
  0  Bortfeld's fit, eq. (18), as published;
  1  eq. (17) with the relativistic factor kept (ICRU Report 49's Bohr
     variance with Uehling's factor), integrated over the PSTAR stopping
     powers: the physics the transport models (docs/physics.md, Straggling).
The figures are read off the curve averaged over rows of 0.5 mm starting at
the entrance, as the tests read the simulated dose (report/analysis.c:
distal_depth_mm interpolates linearly between row centres after the highest
row; peak-to-entrance is the highest row over the first).
"""
import os
import sys

import numpy as np
from scipy.special import gamma as Gamma
from scipy.special import pbdv

P = 1.77
BETA_CM = 0.012
GAMMA_LOCAL = 0.6
ALPHA_PRIME = 0.087  # MeV^2 / cm, water
M_P = 938.272  # MeV, proton rest energy
ENERGIES = (70.0, 150.0, 230.0)
ROW_MM = 0.5
FINE_ROW_MM = 0.25

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def pstar_table():
    """E (MeV), S_total (MeV cm2/g), CSDA range (g/cm2) from data/pstar_water.csv."""
    rows = []
    with open(os.path.join(ROOT, "data", "pstar_water.csv")) as f:
        for line in f:
            if line.startswith("#") or line.startswith("kinetic"):
                continue
            c = line.strip().split(",")
            rows.append((float(c[0]), float(c[3]), float(c[4])))
    return np.array(rows)


def loglog(x, xs, ys):
    return np.exp(np.interp(np.log(x), np.log(xs), np.log(ys)))


def sigma_relativistic_cm(E0, tab):
    """Eq. (17) with the relativistic factor: the integral over the path, in
    residual range r from R0 down to 0 (dz = -dr), by the midpoint rule on a
    fine mesh in log E (the integrand is smooth in E)."""
    E_lo = 1.0  # below PSTAR's first row; what is left is < 1e-4 of the integral
    n = 20000
    lnE = np.linspace(np.log(E_lo), np.log(E0), n + 1)
    Em = np.exp(0.5 * (lnE[1:] + lnE[:-1]))
    dE = np.diff(np.exp(lnE))
    S = loglog(Em, tab[:, 0], tab[:, 1])  # MeV/cm in water (rho = 1)
    g = 1.0 + Em / M_P
    b2 = 1.0 - 1.0 / (g * g)
    f = (1.0 - 0.5 * b2) / (1.0 - b2)
    # dz = dE / S: int f / S^2 dz = int f / S^3 dE
    return np.sqrt(ALPHA_PRIME * np.sum(f / S**3 * dE))


def sigma_fit_cm(R0):
    return 0.012 * R0**0.935


def dose_undisturbed(z, R0):
    """Eq. (8)'s form without straggling, in the units of dose_eq29."""
    r = R0 - z
    return (r ** (1.0 / P - 1.0) + (BETA_CM + GAMMA_LOCAL * BETA_CM * P) * r ** (1.0 / P)) / (
        P * (1.0 + BETA_CM * R0))


ZETA_FAR = 35.0  # beyond, eq. (29) is eq. (8) within 5e-4 and D_v overflows near 53


def dose_eq29(z, R0, sigma):
    """Eq. (29), arbitrary units (the common factor Phi0 / (rho alpha^(1/p))
    drops out of every figure); more than ZETA_FAR sigma before R0 the
    undisturbed curve, which eq. (29) tends to."""
    z = np.asarray(z, dtype=float)
    zeta = (R0 - z) / sigma
    far = zeta > ZETA_FAR
    out = np.empty_like(z)
    out[far] = dose_undisturbed(z[far], R0)
    zeta = zeta[~far]
    d1, _ = pbdv(-1.0 / P, -zeta)
    d2, _ = pbdv(-1.0 / P - 1.0, -zeta)
    pre = np.exp(-zeta * zeta / 4.0) * sigma ** (1.0 / P) * Gamma(1.0 / P)
    pre /= np.sqrt(2.0 * np.pi) * P * (1.0 + BETA_CM * R0)
    out[~far] = pre * (d1 / sigma + (BETA_CM / P + GAMMA_LOCAL * BETA_CM) * d2)
    return out


def dose_convolved(z, R0, sigma):
    """The same curve by direct convolution of the undisturbed eq. (8)-type
    curve with a Gaussian of ranges: a check of eq. (29)'s evaluation."""
    r = np.linspace(max(z, R0 - 8 * sigma), R0 + 8 * sigma, 400001)[1:]
    rr = r - z
    und = dose_undisturbed(z, r)  # R0 -> each range r of the spread
    und *= (1.0 + BETA_CM * r) / (1.0 + BETA_CM * R0)  # eq. (29) keeps R0's fluence
    g = np.exp(-0.5 * ((r - R0) / sigma) ** 2) / (sigma * np.sqrt(2 * np.pi))
    return np.trapz(und * g, r)


def rows(R0, sigma, nrows, row_mm=ROW_MM):
    """Row averages over [n, n+1) x row_mm, 16-point Gauss-Legendre per row."""
    x, w = np.polynomial.legendre.leggauss(16)
    out = np.empty(nrows)
    for n in range(nrows):
        a, b = n * row_mm * 0.1, (n + 1) * row_mm * 0.1
        zz = 0.5 * (b - a) * x + 0.5 * (a + b)
        out[n] = 0.5 * np.sum(w * dose_eq29(zz, R0, sigma))
    return out


def distal(dd, level, row_mm=ROW_MM):
    """report/analysis.c distal_depth_mm on rows of row_mm (centres (n + 1/2) row_mm)."""
    k = int(np.argmax(dd))
    thr = level * dd[k]
    for z in range(k, len(dd) - 1):
        if dd[z] >= thr and dd[z + 1] < thr:
            f = (dd[z] - thr) / (dd[z] - dd[z + 1])
            return (z + 0.5 + f) * row_mm
    return float("nan")


def write_figures(path, row_mm, figs):
    with open(path, "w") as f:
        f.write(
            "# Bortfeld's analytic Bragg curve for monoenergetic protons in water: T. Bortfeld,\n"
            "# \"An analytical approximation of the Bragg curve for therapeutic proton beams\",\n"
            "# Med. Phys. 24 (1997) 2024: eq. (29) with p = 1.77, beta = 0.012 /cm, gamma = 0.6,\n"
            "# epsilon = 0. R0: PSTAR CSDA range (ICRU 49). sigma_model 0: his fit eq. (18),\n"
            "# 0.012 R0^0.935; 1: eq. (17) with alpha' = 0.087 MeV^2/cm and the relativistic\n"
            "# factor kept, over the PSTAR stopping powers. Figures of the curve averaged over\n"
            f"# {row_mm:g} mm rows from the entrance, read as the tests read the dose (R80, R20 linear\n"
            "# between row centres; peak/entrance = highest row / first row).\n"
            "# Written by scripts/reference/bortfeld.py; do not edit by hand.\n"
            "# E_MeV R0_cm sigma_cm sigma_model R80_mm R20_mm falloff_mm peak_to_entrance\n")
        for l in figs:
            f.write("%g %.5f %.5f %d %.3f %.3f %.3f %.4f\n" % l)


def main():
    tab = pstar_table()
    out_dir = os.path.join(ROOT, "tests", "reference")
    lines = []
    fine = []
    for E in ENERGIES:
        R0 = float(loglog(E, tab[:, 0], tab[:, 2]))  # cm (rho = 1)
        for model, sigma in ((0, sigma_fit_cm(R0)), (1, sigma_relativistic_cm(E, tab))):
            # eq. (29) against the direct convolution at the peak's neighbourhood
            for z in (R0 - 3 * sigma, R0 - sigma, R0):
                a, b = float(dose_eq29(z, R0, sigma)), dose_convolved(z, R0, sigma)
                if abs(a / b - 1.0) > 2e-3:
                    sys.exit(f"eq. (29) and the convolution differ at {E} MeV, z {z}: {a} {b}")
            nrows = int(R0 * 10.0 / ROW_MM) + 40
            dd = rows(R0, sigma, nrows)
            r80, r20 = distal(dd, 0.8), distal(dd, 0.2)
            lines.append((E, R0, sigma, model, r80, r20, r20 - r80, dd.max() / dd[0]))
            nf = int(R0 * 10.0 / FINE_ROW_MM) + 80
            df = rows(R0, sigma, nf, FINE_ROW_MM)
            f80, f20 = distal(df, 0.8, FINE_ROW_MM), distal(df, 0.2, FINE_ROW_MM)
            fine.append((E, R0, sigma, model, f80, f20, f20 - f80, df.max() / df[0]))
            if model == 1:
                with open(os.path.join(out_dir, f"bortfeld_E{int(E):03d}.txt"), "w") as f:
                    f.write(f"# Bortfeld (1997) eq. (29), {E:g} MeV protons in water, "
                            f"R0 {R0:.4f} cm (PSTAR CSDA), sigma {sigma:.5f} cm (eq. 17 with the\n"
                            "# relativistic factor), averaged over rows of 0.5 mm from the "
                            "entrance; dose relative to the first row.\n"
                            "# Written by scripts/reference/bortfeld.py (its docstring cites "
                            "the paper's equations); do not edit by hand.\n"
                            "# row_centre_mm dose_rel\n")
                    for n, d in enumerate(dd):
                        f.write(f"{(n + 0.5) * ROW_MM:.2f} {d / dd[0]:.6f}\n")
    for name, row_mm, figs in (("bortfeld_water.txt", ROW_MM, lines),
                               ("bortfeld_water_rows025.txt", FINE_ROW_MM, fine)):
        write_figures(os.path.join(out_dir, name), row_mm, figs)
    for l in lines:
        print("%g MeV R0 %.4f cm sigma %.4f cm (%d): R80 %.3f R20 %.3f fall-off %.3f mm "
              "peak/entrance %.4f" % l)


if __name__ == "__main__":
    main()
