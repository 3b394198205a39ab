"""Figures of a dose map computed the way the program computes them
(src/report/analysis.c): the laterally integrated depth dose, its peak and its
distal depths at a fraction of the peak, interpolated linearly between row
centres; and the lateral profile at any depth."""
import math

import numpy as np


def depth_curve(d):
    """The laterally integrated depth curve of a Dose2D and its units.

    A dose (Gy, a density per mass) is integrated over x: sum of D dx, in Gy mm.
    An energy deposit (MeV per cell) is summed over the row and divided by the
    row's thickness, giving MeV/mm (the energy lost per unit depth). Either way
    the curve is proportional to the row sums analysis.c uses, so the depths of
    its peak, R80 and R20 are the same."""
    if d.units == "MeV":
        return d.values.sum(axis=1) / np.diff(d.z_edges), "MeV/mm"
    return d.values @ np.diff(d.x_edges), ("%s mm" % d.units) if d.units else "mm"


def peak_index(dd):
    return int(np.argmax(dd))  # first maximum, as analysis.c


def distal_depth(z, dd, level):
    """Depth beyond the peak where dd falls below level x its maximum (NaN if not inside)."""
    k = peak_index(dd)
    thr = level * dd[k]
    for i in range(k, len(dd) - 1):
        if dd[i] >= thr and dd[i + 1] < thr:
            f = (dd[i] - thr) / (dd[i] - dd[i + 1])
            return float(z[i] + f * (z[i + 1] - z[i]))
    return math.nan


def dose_figures(d):
    """R80, R20 (mm), peak depth (mm) and peak-to-entrance of a Dose2D's depth curve."""
    dd, _ = depth_curve(d)
    k = peak_index(dd)
    return {
        "R80_mm": distal_depth(d.z, dd, 0.8),
        "R20_mm": distal_depth(d.z, dd, 0.2),
        "peak_depth_mm": float(d.z[k]),
        "peak_to_entrance": float(dd[k] / dd[0]) if dd[0] > 0 else math.nan,
    }


def profile_at(d, z_mm):
    """The lateral profile at depth z_mm: linear between the two nearest row
    centres, the first or last row beyond them."""
    z = d.z
    if z_mm <= z[0] or len(z) == 1:
        return d.values[0].copy()
    if z_mm >= z[-1]:
        return d.values[-1].copy()
    i = int(np.searchsorted(z, z_mm, side="right")) - 1
    f = (z_mm - z[i]) / (z[i + 1] - z[i])
    return (1.0 - f) * d.values[i] + f * d.values[i + 1]


def default_depths(d, figs):
    """Where lateral profiles are drawn when none are asked for: the first row,
    half the range (R80/2), the peak and R80; a quarter, half and three quarters
    of the grid when the dose has no distal fall-off inside it."""
    r80, peak = figs.get("R80_mm", math.nan), figs.get("peak_depth_mm", math.nan)
    if math.isfinite(r80):
        depths = [float(d.z[0]), 0.5 * r80, peak, r80]
    else:
        depths = [float(d.z[0])] + [float(d.z_edges[0] + q * (d.z_edges[-1] - d.z_edges[0])) for q in (0.25, 0.5, 0.75)]
    out = []
    for z in depths:  # a peak at the first row would repeat it
        if math.isfinite(z) and all(abs(z - o) > 1e-9 for o in out):
            out.append(z)
    return out
