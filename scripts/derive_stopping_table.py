#!/usr/bin/env python3
"""Stopping-power tables that are not plain PSTAR transcriptions.

    derive_stopping_table.py KEY > data/materials/KEY.csv

1. Lung, cortical bone, polyethylene: derived from the PSTAR table of a material
   of similar composition (the "reference"), as below.
2. Titanium, graphite: the only transcription found has 3 significant digits
   (data/materials/raw/KEY_pstar_3digit.csv). Its range columns, rounded to 3
   digits, are not consistent with its stopping powers segment by segment (up
   to 6 % in one 5 MeV step, while the transport takes the energy lost in a
   step from the range table), so the CSDA range is recomputed as the integral
   of 1/S_total from the first energy, and the projected range as that times
   the transcribed detour factor. The stopping powers are kept as transcribed.

The derivation, for every energy E of the reference table:

  electronic  S_X(E) = S_ref(E) * [(Z/A)_X L(E, I_X)] / [(Z/A)_ref L(E, I_ref)]
              L = ln(2 m c^2 b^2 g^2 W_max / I^2) / 2 - b^2, the Bethe stopping
              number without corrections: the shell, Barkas, Bloch and density
              corrections are those of the reference, which is why it is chosen
              close in composition and I.
  nuclear     S_n,X(E) = S_n,ref(E) * sum(w Z^2/A)_X / sum(w Z^2/A)_ref
              (leading order of elastic Coulomb scattering on the nuclei; the
              nuclear share is below 0.1 % of the total above 1 MeV).
  total       the sum of the two (each rounded to 4 digits first, like PSTAR).
  CSDA range  R(E_0) = R_ref(E_0) S_ref,tot(E_0) / S_X,tot(E_0) at the first
              energy, then R(E) = R(E_0) + the integral of dE / S_X,tot done
              exactly for the log-log interpolant of S_X,tot.
  projected   CSDA range times the reference's detour factor.

Nothing is fitted: the only inputs are the reference table and the two
materials' Z/A, I and composition (NIST, the same numbers as
src/physics/material.c; tests/test_materials.c recomputes the electronic
column from material.c's constants and fails if the two drift apart).
"""
import math
import os
import sys

K = 0.307075          # MeV cm2/mol
ME = 0.51099895       # MeV
MP = 938.272088       # MeV
HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "data", "materials")

# Atomic weights (as in src/physics/material.c).
A = {1: 1.00794, 6: 12.0107, 7: 14.0067, 8: 15.9994, 11: 22.98977, 12: 24.305,
     15: 30.973761, 16: 32.065, 17: 35.453, 19: 39.0983, 20: 40.078, 26: 55.845,
     30: 65.409}

# NIST compositions (mass fractions) and I of the materials involved.
MATERIALS = {
    "muscle": (75.3, {1: 0.100637, 6: 0.107830, 7: 0.027680, 8: 0.754773, 11: 0.000750,
                      12: 0.000190, 15: 0.001800, 16: 0.002410, 17: 0.000790, 19: 0.003020,
                      20: 0.000030, 26: 0.000040, 30: 0.000050}),
    "lung": (75.3, {1: 0.101278, 6: 0.102310, 7: 0.028650, 8: 0.757072, 11: 0.001840,
                    12: 0.000730, 15: 0.000800, 16: 0.002250, 17: 0.002660, 19: 0.001940,
                    20: 0.000090, 26: 0.000370, 30: 0.000010}),
    "bone_compact": (91.9, {1: 0.063984, 6: 0.278000, 7: 0.027000, 8: 0.410016, 12: 0.002000,
                            15: 0.070000, 16: 0.002000, 20: 0.147000}),
    "bone_cortical": (106.4, {1: 0.047234, 6: 0.144330, 7: 0.041990, 8: 0.446096, 12: 0.002200,
                              15: 0.104970, 16: 0.003150, 20: 0.209930, 30: 0.000100}),
    "adipose": (63.2, {1: 0.119477, 6: 0.637240, 7: 0.007970, 8: 0.232333, 11: 0.000500,
                       12: 0.000020, 15: 0.000160, 16: 0.000730, 17: 0.001190, 19: 0.000320,
                       20: 0.000020, 26: 0.000020, 30: 0.000020}),
    "polyethylene": (57.4, {1: 0.143711, 6: 0.856289}),
}

# Derived material -> (reference key, PSTAR's name of the reference, why).
DERIVED = {
    "lung": ("muscle", "MUSCLE, SKELETAL (ICRP)",
             "PSTAR has no lung; ICRP lung and ICRP skeletal muscle have the same I (75.3 eV) and "
             "nearly the same composition"),
    "bone_cortical": ("bone_compact", "BONE, COMPACT (ICRU)",
                      "no PSTAR transcription of BONE, CORTICAL (ICRP) was found"),
    "polyethylene": ("adipose", "ADIPOSE TISSUE (ICRP)",
                     "no PSTAR transcription of POLYETHYLENE was found; adipose tissue is the "
                     "hydrocarbon-rich PSTAR material closest in I (63.2 vs 57.4 eV)"),
}


def z_over_a(comp):
    return sum(w * z / A[z] for z, w in comp.items())


def z2_over_a(comp):
    return sum(w * z * z / A[z] for z, w in comp.items())


def stopping_number(E, I_eV):
    g = 1.0 + E / MP
    b2 = 1.0 - 1.0 / (g * g)
    bg2 = b2 * g * g
    wmax = 2.0 * ME * bg2 / (1.0 + 2.0 * g * ME / MP + (ME / MP) ** 2)
    return 0.5 * math.log(2.0 * ME * bg2 * wmax / (I_eV * 1e-6) ** 2) - b2


def r4(x):
    """Rounds to 4 significant digits, as PSTAR prints."""
    return float("%.3E" % x)


def read_csv(path):
    rows = []
    with open(path) as f:
        comment = f.readline()
        header = f.readline().strip()
        for line in f:
            rows.append([float(v) for v in line.split(",")])
    return comment, header, rows


def segment_integral(E0, E1, S0, S1):
    """Integral of dE / S over [E0, E1] for S a power law through the two points."""
    p = math.log(S1 / S0) / math.log(E1 / E0)
    if abs(1.0 - p) < 1e-12:
        return E0 / S0 * math.log(E1 / E0)
    return E0 / (S0 * (1.0 - p)) * ((E1 / E0) ** (1.0 - p) - 1.0)


def recompute_ranges(key):
    raw = os.path.join(DATA, "raw", key + "_pstar_3digit.csv")
    with open(raw) as f:
        comment = f.readline()[2:].strip()
        header = f.readline().strip()
        text = [line.strip().split(",") for line in f if line.strip()]
    rows = [[float(v) for v in r] for r in text]
    R = rows[0][4]
    lines = ["# " + comment + " RANGES RECOMPUTED: CSDA range = transcribed R(1 MeV) + the "
             "integral of dE/S_total (log-log) of the transcribed total stopping power, projected "
             "range = that times the transcribed detour factor (scripts/derive_stopping_table.py; "
             "the transcription's 3-digit ranges are inconsistent with its stopping powers by up "
             "to 6 %% within a segment); they agree with the transcribed ranges to %s.",
             header]
    worst = 0.0
    for i, (r, t) in enumerate(zip(rows, text)):
        if i > 0:
            R += segment_integral(rows[i - 1][0], r[0], rows[i - 1][3], r[3])
        worst = max(worst, abs(r4(R) / r[4] - 1.0))
        lines.append(",".join(t[:4] + ["%.3E" % R, "%.3E" % (R * r[6]), t[6]]))
    lines[0] = lines[0].replace("%s", "%.2f %%" % (100 * worst)).replace("%%", "%")
    return "\n".join(lines) + "\n"


def derive(key):
    ref_key, ref_name, why = DERIVED[key]
    I_x, comp_x = MATERIALS[key]
    I_r, comp_r = MATERIALS[ref_key]
    _, header, rows = read_csv(os.path.join(DATA, ref_key + ".csv"))
    za_ratio = z_over_a(comp_x) / z_over_a(comp_r)
    nuc_ratio = z2_over_a(comp_x) / z2_over_a(comp_r)
    out = []
    for E, se, sn, st, csda, proj, detour in rows:
        se_x = r4(se * za_ratio * stopping_number(E, I_x) / stopping_number(E, I_r))
        sn_x = r4(sn * nuc_ratio)
        out.append([E, se_x, sn_x, r4(se_x + sn_x), st, detour])
    # CSDA range: the reference's residual range below the first energy scaled by
    # the stopping-power ratio there, then the exact integral of the interpolant.
    R = rows[0][4] * rows[0][3] / out[0][3]
    table = []
    for i, (E, se_x, sn_x, st_x, st_ref, detour) in enumerate(out):
        if i > 0:
            R += segment_integral(out[i - 1][0], E, out[i - 1][3], st_x)
        table.append((E, se_x, sn_x, st_x, r4(R), r4(R * detour), detour))
    src = ("COMPUTED, not a PSTAR transcription: %s. Derived from the PSTAR table of %s "
           "(data/materials/%s.csv) by scripts/derive_stopping_table.py: electronic stopping "
           "power times the ratio of the uncorrected Bethe formula of the two materials "
           "((Z/A) L(E, I); I = %.1f eV here, %.1f eV for the reference; NIST compositions, "
           "ICRU 49 I-values), nuclear stopping power times the ratio of sum(w Z^2/A), CSDA "
           "range by integrating 1/S_total (log-log), projected range with the reference's "
           "detour factor. The same method applied between PSTAR materials reproduces their "
           "electronic stopping power to within 0.5 %% (1-300 MeV; docs/materials.md)."
           % (why, ref_name, ref_key, I_x, I_r))
    lines = ["# " + src, header]
    for E, se, sn, st, R, P, d in table:
        lines.append("%.3E,%.3E,%.3E,%.3E,%.3E,%.3E,%.4f" % (E, se, sn, st, R, P, d))
    return "\n".join(lines) + "\n"


RECOMPUTED = ("titanium", "graphite")

if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in tuple(DERIVED) + RECOMPUTED:
        sys.stderr.write("usage: derive_stopping_table.py {%s}\n"
                         % ",".join(sorted(tuple(DERIVED) + RECOMPUTED)))
        sys.exit(1)
    key = sys.argv[1]
    sys.stdout.write(recompute_ranges(key) if key in RECOMPUTED else derive(key))
