"""Figures of a dose map computed the way the program computes them
(src/report/analysis.c, schemas/output.md's /summary): the laterally
integrated depth dose, its distal peak and maximum, and its distal depths at a
fraction of the distal peak, interpolated linearly between row centres; and
the lateral profile at any depth. The program computes them on the dose (Gy),
not the energy per cell, so that a dense slab does not look like a peak."""
import math

import numpy as np


def depth_curve(d):
    """The laterally integrated depth curve of a Dose2D and its units.

    A dose (Gy, a density per mass) is integrated over x: sum of D dx, in Gy mm.
    An energy deposit (MeV per cell) is summed over the row and divided by the
    row's thickness, giving MeV/mm (the energy lost per unit depth). Either way
    the curve is proportional to the row sums analysis.c uses in one medium.
    Where densities differ, only the dose is: the program's figures are the
    dose's."""
    if d.units == "MeV":
        return d.values.sum(axis=1) / np.diff(d.z_edges), "MeV/mm"
    return d.values @ np.diff(d.x_edges), ("%s mm" % d.units) if d.units else "mm"


def peak_index(dd):
    return int(np.argmax(dd))  # first maximum, as analysis.c


def _last_fall(dd, thr):
    """The deepest row i with dd[i] >= thr, every row beyond it below thr; -1 when
    the last row is not below thr."""
    if not dd[-1] < thr:
        return -1
    rows = np.nonzero(dd[:-1] >= thr)[0]
    return int(rows[-1]) if len(rows) else -1


def _fall_depth(z, dd, thr):
    i = _last_fall(dd, thr)
    if i < 0:
        return math.nan
    f = (dd[i] - thr) / (dd[i] - dd[i + 1])
    return float(z[i] + f * (z[i + 1] - z[i]))


def distal_peak_index(dd):
    """The distal peak: from the deepest fall through half the maximum, up the
    fall-off to the first maximum (a flat top: its deepest row, a plateau's
    distal end, unless it is at the maximum's value: then the maximum's row).
    -1 when the curve does not fall below half its maximum inside the grid."""
    k = peak_index(dd)
    top = dd[k]
    i = _last_fall(dd, 0.5 * top) if top > 0 else -1
    if i < 0:
        return -1
    while i > 0 and dd[i - 1] > dd[i]:
        i -= 1
    return k if dd[i] == top else i


def curve_figures(z, dd):
    """The /summary figures of a depth curve dd at row centres z."""
    k = peak_index(dd)
    f = {"R80_mm": math.nan, "R20_mm": math.nan, "peak_depth_mm": math.nan, "peak_to_entrance": math.nan,
         "maximum_depth_mm": float(z[k]), "maximum_to_peak": math.nan}
    d = distal_peak_index(dd)
    if d >= 0:
        peak = dd[d]
        f.update({"R80_mm": _fall_depth(z, dd, 0.8 * peak), "R20_mm": _fall_depth(z, dd, 0.2 * peak),
                  "peak_depth_mm": float(z[d]), "maximum_to_peak": float(dd[k] / peak),
                  "peak_to_entrance": float(peak / dd[0]) if dd[0] > 0 else math.nan})
    return f


def dose_figures(d):
    """R80, R20 (mm), the distal peak's depth (mm) and its ratio to the entrance,
    the maximum's depth and its ratio to the distal peak, of a Dose2D's depth
    curve. The program's figures are those of its dose (Gy): give the dose."""
    dd, _ = depth_curve(d)
    return curve_figures(d.z, dd)


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


def reference_dose(d, figs):
    """The dose a physicist calls 100 %: the largest dose in the distal peak's
    row (the Bragg peak; for a spread-out peak its distal end), or, where the
    depth dose has no distal peak inside the grid, the largest dose past the
    first row. Not the map's maximum, which for a narrow 2-D beam is its
    entrance (the beam is narrowest there) or the starting cell's deposit.
    Returns (value, depth in mm, what it is, in words)."""
    peak = figs.get("peak_depth_mm", math.nan)
    if math.isfinite(peak):
        i = int(np.argmin(np.abs(d.z - peak)))
        return float(np.max(d.values[i])), float(d.z[i]), "the maximum of the distal peak's row"
    rows = d.values[1:] if d.values.shape[0] > 1 else d.values
    i = int(np.argmax(np.max(rows, axis=1)))
    return float(np.max(rows[i])), float(d.z[i + (1 if d.values.shape[0] > 1 else 0)]), \
        "the maximum past the first row"


def rms_width(x, p):
    """The rms width (mm) of a lateral profile about its mean; nan without weight."""
    w = float(np.sum(p))
    if not w > 0:
        return math.nan
    m = float(np.sum(p * x)) / w
    return math.sqrt(max(float(np.sum(p * (x - m) ** 2)) / w, 0.0))


# The core is fitted within this many of its sigmas of its centre (and over at
# least CORE_MIN_POINTS cells), as docs/physics.md's grid study fits it.
CORE_SIGMAS = 2.5
CORE_MIN_POINTS = 5


def _cell_gaussian(lo, hi, mu, s):
    """A unit Gaussian's mean over each cell [lo, hi)."""
    erf = np.vectorize(math.erf)
    a = erf((lo - mu) / (s * math.sqrt(2.0)))
    b = erf((hi - mu) / (s * math.sqrt(2.0)))
    return 0.5 * (b - a) / (hi - lo)


def core_sigma(x, p):
    """The sigma (mm) of the Gaussian core of a lateral profile: a least-squares
    fit of a cell-integrated Gaussian (free height, centred on the region's
    centroid) to the cells within CORE_SIGMAS sigmas of the centre, repeated
    until sigma settles. The rms counts the nuclear halo and the scattered
    tails, which carry a few per cent of the weight far out and can dominate
    it; the core is the width a beam model or a measured profile is fitted
    with. nan for a profile without weight or fewer than three cells."""
    p = np.asarray(p, dtype=float)
    x = np.asarray(x, dtype=float)
    if len(p) < 3 or not np.max(p) > 0:
        return math.nan
    edges = edges_from_centres(x)
    lo, hi = edges[:-1], edges[1:]
    k = int(np.argmax(p))
    dx = float(hi[k] - lo[k])
    sigma = max(rms_width(x, p), dx)
    for _ in range(30):
        near = np.argsort(np.abs(x - x[k]))[:CORE_MIN_POINTS]
        keep = np.abs(x - x[k]) <= CORE_SIGMAS * sigma
        keep[near] = True
        w = p[keep]
        mu = float(np.sum(w * x[keep]) / np.sum(w))

        def sse(s):
            m = _cell_gaussian(lo[keep], hi[keep], mu, s)
            a = float(m @ w) / float(m @ m)
            return float(np.sum((w - a * m) ** 2))
        a, b = 0.02 * dx, 4.0 * sigma
        g = 0.5 * (math.sqrt(5.0) - 1.0)
        for _ in range(60):   # golden section on [a, b]
            c, d = b - g * (b - a), a + g * (b - a)
            if sse(c) < sse(d):
                b = d
            else:
                a = c
        new = 0.5 * (a + b)
        done = abs(new - sigma) <= 1e-4 * sigma
        sigma = new
        if done:
            break
    return sigma


def edges_from_centres(c):
    c = np.asarray(c, dtype=float)
    if len(c) == 1:
        return np.array([c[0] - 0.5, c[0] + 0.5])
    mid = 0.5 * (c[1:] + c[:-1])
    return np.concatenate(([c[0] - (mid[0] - c[0])], mid, [c[-1] + (c[-1] - mid[-1])]))
