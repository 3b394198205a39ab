"""Bilinear resampling of a dose map onto another rectilinear grid."""
import numpy as np


def _weights(c, at):
    """Index of the left neighbour and the weight of the right one, for each of
    `at` on ascending centres `c`; `inside` is False beyond the first/last centre."""
    tol = 1e-9 * (c[-1] - c[0]) if len(c) > 1 else 0.0
    inside = (at >= c[0] - tol) & (at <= c[-1] + tol)
    if len(c) == 1:
        return np.zeros(len(at), int), np.zeros(len(at)), inside
    i = np.clip(np.searchsorted(c, at, side="right") - 1, 0, len(c) - 2)
    f = np.clip((at - c[i]) / (c[i + 1] - c[i]), 0.0, 1.0)
    return i, f, inside


def resample(d, z, x):
    """d's values at the grid z x (centres, mm): bilinear between d's centres,
    NaN outside their hull."""
    iz, fz, oz = _weights(d.z, np.asarray(z, float))
    ix, fx, ox = _weights(d.x, np.asarray(x, float))
    V = d.values
    iz1 = np.minimum(iz + 1, len(d.z) - 1)
    ix1 = np.minimum(ix + 1, len(d.x) - 1)
    fz, fx = fz[:, None], fx[None, :]
    out = ((1 - fz) * ((1 - fx) * V[np.ix_(iz, ix)] + fx * V[np.ix_(iz, ix1)]) +
           fz * ((1 - fx) * V[np.ix_(iz1, ix)] + fx * V[np.ix_(iz1, ix1)]))
    out[~(oz[:, None] & ox[None, :])] = np.nan
    return out
