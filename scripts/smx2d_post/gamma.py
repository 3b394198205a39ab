"""The 2-D gamma index (Low, Harms, Mutic and Purdy 1998, Med. Phys. 25, 656).

For each point r of the reference distribution,

    gamma(r) = min over r' of sqrt(|r' - r|^2 / DTA^2 + (De(r') - Dr(r))^2 / dD^2),

where De is the evaluated distribution between its grid points, DTA the
distance to agreement and dD the dose difference criterion: dd% of the
normalisation dose (global) or of Dr(r) (local). A point passes when gamma <= 1.

The evaluated distribution is interpolated linearly over triangles (each cell
between four grid centres is split into two), and the minimum over r' is taken
exactly: in the space (z/DTA, x/DTA, D/dD) gamma is the distance from the
reference point to that piecewise-planar surface, the smallest distance to any
of its triangles (Ju, Simpson, Deasy and Low 2008, Med. Phys. 35, 879). This
is what a search over an ever finer interpolation of De converges to, without
the search's discretisation error, and it is exact for a dose that is linear
across each cell. The two grids need not match: the reference points are the
reference grid's centres and the triangles are the evaluated grid's own.

Triangles are visited in square rings of cells around the cell that holds the
reference point; once a point's gamma is no larger than the distance to the
next ring over DTA it is final. The search stops at `search_mm`: a gamma at or
above search_mm/DTA is reported as that cap (the true value is at least the
cap), so whether a point passes is exact whenever the cap is at least 1."""
from dataclasses import dataclass

import numpy as np

# Upper bound on (points x cells) handled at once: bounds memory (some 60
# float64 temporaries of this size, ~130 MB) while keeping numpy's loops long.
PAIRS_PER_CHUNK = 1 << 18


@dataclass
class GammaResult:
    gamma: np.ndarray        # on the reference grid; NaN where not evaluated
    evaluated: np.ndarray    # bool mask of the points gamma was computed for
    below_cutoff: int        # reference points under the cutoff
    outside: int             # reference points above the cutoff but outside the evaluated grid
    norm_dose: float         # the global normalisation (reference maximum unless given)
    threshold: float         # the cutoff as a dose
    cap: float               # search_mm / DTA: the largest gamma reported
    local: bool

    @property
    def values(self):
        return self.gamma[self.evaluated]

    @property
    def n(self):
        return int(self.evaluated.sum())

    @property
    def pass_rate(self):
        v = self.values
        return 100.0 * float(np.count_nonzero(v <= 1.0)) / len(v) if len(v) else float("nan")


def _seg_d2(a, b):
    """Squared distance from the origin to the segment ab (a, b: tuples of 3 arrays)."""
    e = [b[k] - a[k] for k in range(3)]
    ee = e[0] * e[0] + e[1] * e[1] + e[2] * e[2]
    t = np.clip(-(a[0] * e[0] + a[1] * e[1] + a[2] * e[2]) / ee, 0.0, 1.0)
    q = [a[k] + t * e[k] for k in range(3)]
    return q[0] * q[0] + q[1] * q[1] + q[2] * q[2]


def _tri_d2(a, b, c):
    """Squared distance from the origin to the triangle abc: to its plane where the
    foot of the perpendicular lies inside it, else to the nearest of its edges."""
    e0 = [b[k] - a[k] for k in range(3)]
    e1 = [c[k] - a[k] for k in range(3)]
    d00 = e0[0] * e0[0] + e0[1] * e0[1] + e0[2] * e0[2]
    d01 = e0[0] * e1[0] + e0[1] * e1[1] + e0[2] * e1[2]
    d11 = e1[0] * e1[0] + e1[1] * e1[1] + e1[2] * e1[2]
    d20 = -(a[0] * e0[0] + a[1] * e0[1] + a[2] * e0[2])
    d21 = -(a[0] * e1[0] + a[1] * e1[1] + a[2] * e1[2])
    den = d00 * d11 - d01 * d01          # > 0: the triangle's (z, x) corners are never collinear
    s = (d11 * d20 - d01 * d21) / den
    t = (d00 * d21 - d01 * d20) / den
    q = [a[k] + s * e0[k] + t * e1[k] for k in range(3)]
    inside = (s >= 0.0) & (t >= 0.0) & (s + t <= 1.0)
    d2 = np.where(inside, q[0] * q[0] + q[1] * q[1] + q[2] * q[2], np.inf)
    return np.minimum(d2, np.minimum(_seg_d2(a, b), np.minimum(_seg_d2(a, c), _seg_d2(b, c))))


def _ring(k):
    """Cell offsets (di, dj) with max(|di|, |dj|) == k."""
    if k == 0:
        return np.zeros(1, int), np.zeros(1, int)
    r = np.arange(-k, k + 1)
    di = np.concatenate([np.full(2 * k + 1, -k), np.full(2 * k + 1, k), r[1:-1], r[1:-1]])
    dj = np.concatenate([r, r, np.full(2 * k - 1, -k), np.full(2 * k - 1, k)])
    return di, dj


def _min_d2_over_cells(ev, pz, px, pd, scale_d, cz, cx, di, dj, inv_dta):
    """For points (pz, px, pd) in cells (cz, cx) of the evaluated grid, the smallest
    squared scaled distance to the triangles of the cells at offsets (di, dj)."""
    nz, nx = ev.values.shape
    i = cz[:, None] + di[None, :]
    j = cx[:, None] + dj[None, :]
    ok = (i >= 0) & (i <= nz - 2) & (j >= 0) & (j <= nx - 2)
    i = np.clip(i, 0, nz - 2)
    j = np.clip(j, 0, nx - 2)
    # Corners relative to the point, scaled: (z, x) by 1/DTA, dose by 1/dD.
    z0 = (ev.z[i] - pz[:, None]) * inv_dta
    z1 = (ev.z[i + 1] - pz[:, None]) * inv_dta
    x0 = (ev.x[j] - px[:, None]) * inv_dta
    x1 = (ev.x[j + 1] - px[:, None]) * inv_dta
    s = scale_d[:, None]
    p = pd[:, None]
    V = ev.values
    d00 = (V[i, j] - p) * s
    d01 = (V[i, j + 1] - p) * s
    d10 = (V[i + 1, j] - p) * s
    d11 = (V[i + 1, j + 1] - p) * s
    c00, c01, c10, c11 = (z0, x0, d00), (z0, x1, d01), (z1, x0, d10), (z1, x1, d11)
    d2 = np.minimum(_tri_d2(c00, c01, c10), _tri_d2(c11, c10, c01))
    d2 = np.where(ok, d2, np.inf)
    return d2.min(axis=1)


def gamma_index(ref, ev, dta_mm, dd_percent, cutoff_percent=10.0, local=False, norm_dose=None, search_mm=None):
    """Gamma of `ev` (evaluated) against `ref` (reference), both Dose2D, on ref's grid.

    dta_mm: distance to agreement; dd_percent: dose difference in % of norm_dose
    (global; default the reference maximum) or of the reference dose at the point
    (local); cutoff_percent: reference points below this % of norm_dose are not
    evaluated (with local gamma, points of zero dose never are); search_mm: how
    far to look (default 3 DTA, at least DTA)."""
    if dta_mm <= 0 or dd_percent <= 0:
        raise ValueError("DTA and dose difference must be positive")
    if cutoff_percent < 0:
        raise ValueError("the cutoff must not be negative")
    search_mm = 3.0 * dta_mm if search_mm is None else float(search_mm)
    if search_mm < dta_mm:
        raise ValueError("the search radius must be at least the DTA")
    if min(ev.values.shape) < 2:
        raise ValueError("the evaluated distribution needs at least 2 x 2 points")
    norm = float(np.max(ref.values)) if norm_dose is None else float(norm_dose)
    if not norm > 0:
        raise ValueError("the normalisation dose is %g; it must be positive" % norm)
    threshold = cutoff_percent / 100.0 * norm
    R = ref.values
    above = R >= threshold
    if local:
        above &= R > 0
    Z, X = np.meshgrid(ref.z, ref.x, indexing="ij")
    # Covered: inside the hull of the evaluated grid's centres, where De is
    # defined (a relative 1e-9 of slack lets equal grids cover their own border).
    tz = 1e-9 * (ev.z[-1] - ev.z[0])
    tx = 1e-9 * (ev.x[-1] - ev.x[0])
    inside = (Z >= ev.z[0] - tz) & (Z <= ev.z[-1] + tz) & (X >= ev.x[0] - tx) & (X <= ev.x[-1] + tx)
    todo = above & inside
    pz, px, pd = Z[todo], X[todo], R[todo]
    dD = dd_percent / 100.0 * (pd if local else np.full_like(pd, norm))
    scale_d = 1.0 / dD
    inv_dta = 1.0 / dta_mm
    cz = np.clip(np.searchsorted(ev.z, pz, side="right") - 1, 0, len(ev.z) - 2)
    cx = np.clip(np.searchsorted(ev.x, px, side="right") - 1, 0, len(ev.x) - 2)
    h = min(np.min(np.diff(ev.z)), np.min(np.diff(ev.x)))
    cap = search_mm / dta_mm
    g2 = np.full(len(pz), np.inf)
    active = np.arange(len(pz))
    k = 0
    # Cells of ring k lie at least (k - 1) h from a point of the centre cell.
    while len(active) and (k - 1) * h < search_mm:
        di, dj = _ring(k)
        step = max(1, PAIRS_PER_CHUNK // len(di))
        for s in range(0, len(active), step):
            a = active[s:s + step]
            m = _min_d2_over_cells(ev, pz[a], px[a], pd[a], scale_d[a], cz[a], cx[a], di, dj, inv_dta)
            g2[a] = np.minimum(g2[a], m)
        # Final: no cell beyond ring k is nearer than k h.
        bound = k * h * inv_dta
        active = active[g2[active] > bound * bound]
        k += 1
    gamma = np.full(R.shape, np.nan)
    gamma[todo] = np.minimum(np.sqrt(g2), cap)
    return GammaResult(gamma=gamma, evaluated=todo, below_cutoff=int((~above).sum()),
                       outside=int((above & ~inside).sum()), norm_dose=norm, threshold=threshold,
                       cap=cap, local=local)
