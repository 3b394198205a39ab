"""The gamma index (scripts/smx2d_post/gamma.py) against cases with a known answer:
equal doses, shifted linear ramps (exact), scaled uniform and flat-topped
fields, shifted and scaled Gaussians against an independent minimisation of the
analytic functions, the search cap and grids that do not cover each other."""
import math
import unittest

import numpy as np

import post_fixture
from smx2d_post.gamma import gamma_index
from smx2d_post.resample import resample
from smx2d_post.result import Dose2D

# Floating-point rounding of the distance computation on values of order 1-100.
EXACT = 1e-9


def grid(z0, z1, dz, x0, x1, dx):
    return np.arange(z0, z1 + 0.5 * dz, dz), np.arange(x0, x1 + 0.5 * dx, dx)


def dose(f, z, x):
    Z, X = np.meshgrid(z, x, indexing="ij")
    return Dose2D(values=f(Z, X), z=z, x=x, units="Gy", quantity="dose", source="test")


class Gamma(unittest.TestCase):
    def test_identical_doses_give_zero(self):
        z, x = grid(0, 30, 0.5, -10, 10, 0.5)
        d = dose(lambda Z, X: np.exp(-X ** 2 / 8.0) * (1 + Z / 30.0), z, x)
        g = gamma_index(d, d, 2.0, 3.0, 10.0)
        self.assertGreater(g.n, 100)
        self.assertEqual(float(np.max(g.values)), 0.0)
        self.assertEqual(g.pass_rate, 100.0)
        gl = gamma_index(d, d, 2.0, 3.0, 10.0, local=True)
        self.assertEqual(float(np.max(gl.values)), 0.0)

    def _ramp_case(self, n, s, g_slope, dta, dd, ev_grid, norm_dose=None):
        """D = D0 + g n.r (D0 keeps it positive), evaluated D(r - s): gamma = |n.s| / sqrt(DTA^2 + (dD/g)^2)
        everywhere (the closest point of agreement lies along n), and linear
        interpolation is exact for a linear dose, so on any evaluated grid."""
        n = np.asarray(n, float) / np.hypot(*n)
        z, x = grid(0, 20, 0.5, -10, 10, 0.5)
        d0 = 10.0 + 30.0 * g_slope
        ref = dose(lambda Z, X: d0 + g_slope * (n[0] * Z + n[1] * X), z, x)
        ev = dose(lambda Z, X: d0 + g_slope * (n[0] * (Z - s[0]) + n[1] * (X - s[1])), *ev_grid)
        g = gamma_index(ref, ev, dta, dd, 0.0, norm_dose=norm_dose)
        dD = dd / 100.0 * (norm_dose or float(ref.values.max()))
        want = abs(n @ np.asarray(s)) / math.sqrt(dta ** 2 + (dD / g_slope) ** 2)
        # Away from the edges, where the point of agreement lies inside the evaluated grid.
        Z, X = np.meshgrid(z, x, indexing="ij")
        inner = g.evaluated & (Z > 4) & (Z < 16) & (X > -6) & (X < 6)
        self.assertGreater(int(inner.sum()), 300)
        err = np.max(np.abs(g.gamma[inner] - want))
        self.assertLess(err, EXACT, "gamma %g..%g, expected %g" % (g.gamma[inner].min(), g.gamma[inner].max(), want))
        return want

    def test_shifted_ramp_is_exact(self):
        same = grid(0, 20, 0.5, -10, 10, 0.5)
        # Steep (a dose criterion small against the change over DTA, here through
        # the normalisation dose): DTA decides, gamma -> d / DTA = 0.8 mm / 2 mm.
        want = self._ramp_case((0, 1), (0.0, 0.8), 50.0, 2.0, 3.0, same, norm_dose=1.0)
        self.assertAlmostEqual(want, 0.4, delta=0.4 * 1e-6)
        # Shallow: the dose difference shares the work.
        self._ramp_case((0, 1), (0.0, 0.8), 0.2, 2.0, 3.0, same)
        # Along depth, and a diagonal ramp shifted off its direction.
        self._ramp_case((1, 0), (-0.6, 0.0), 1.0, 2.0, 3.0, same)
        self._ramp_case((1, 2), (0.7, -0.4), 1.0, 2.0, 2.0, same)

    def test_shifted_ramp_on_other_grids(self):
        # Coarser and offset, and non-uniform: the evaluated dose is used on its own grid.
        self._ramp_case((1, 2), (0.7, -0.4), 1.0, 2.0, 2.0, grid(-1.13, 21.3, 0.7, -10.9, 10.9, 0.3))
        zn = np.cumsum(np.r_[-1.0, np.tile([0.3, 0.9, 0.5], 12)])
        xn = np.cumsum(np.r_[-11.0, np.tile([0.2, 0.7], 20)])
        self._ramp_case((2, -1), (0.3, 0.5), 2.0, 1.5, 3.0, (zn, xn))

    def test_scaled_uniform_dose(self):
        # No gradient: DTA cannot help, gamma = |s - 1| / dd, globally and locally.
        z, x = grid(0, 10, 0.5, -5, 5, 0.5)
        ref = dose(lambda Z, X: np.full_like(Z, 2.0), z, x)
        for s in (1.02, 0.95):
            ev = dose(lambda Z, X: np.full_like(Z, 2.0 * s), z, x)
            for local in (False, True):
                g = gamma_index(ref, ev, 3.0, 3.0, 10.0, local=local)
                self.assertEqual(g.n, ref.values.size)
                self.assertLess(np.max(np.abs(g.values - abs(s - 1) / 0.03)), EXACT)
        self.assertEqual(gamma_index(ref, dose(lambda Z, X: np.full_like(Z, 2.04), z, x), 3.0, 3.0).pass_rate,
                         100.0)  # gamma 0.667
        self.assertEqual(gamma_index(ref, dose(lambda Z, X: np.full_like(Z, 2.08), z, x), 3.0, 3.0).pass_rate,
                         0.0)    # gamma 1.333

    def test_scaled_flat_top_field(self):
        # A flat top with smooth penumbrae, scaled by s: inside the plateau,
        # farther than the search radius from where the dose changes, gamma = |s - 1| / dd.
        z, x = grid(0, 40, 0.5, -30, 30, 0.5)
        edge = lambda X: 0.5 * (np.tanh((X + 20) / 1.5) - np.tanh((X - 20) / 1.5))  # noqa: E731
        ref = dose(lambda Z, X: edge(X), z, x)
        s = 1.025
        ev = dose(lambda Z, X: s * edge(X), z, x)
        g = gamma_index(ref, ev, 2.0, 3.0, 10.0)
        X = np.broadcast_to(x, ref.shape)
        plateau = g.evaluated & (np.abs(X) < 20 - 6 - 8)   # 8 mm: tanh(8 / 1.5) = 1 - 5e-5
        self.assertGreater(int(plateau.sum()), 500)
        want = (s - 1) / 0.03
        self.assertLess(np.max(np.abs(g.gamma[plateau] - want)), 1e-4 * s / 0.03)  # the plateau is 1 within 1e-4
        # In the penumbrae DTA helps: never worse than the plateau.
        self.assertLessEqual(float(np.max(g.values)), want + EXACT)

    def test_gaussian_against_analytic_minimum(self):
        """Reference: a round Gaussian (sigma 6 mm) on a 0.5 mm grid; evaluated: the
        same, shifted by (0.8, -0.6) mm (1 mm < DTA) and scaled by 1.01, on a
        0.1 mm grid offset from it. The exact gamma of the analytic functions is a
        1-D minimisation along the line through the evaluated centre and the point
        (for a given distance from that centre, the nearest point lies on it)."""
        sigma, c, shift, k = 6.0, (15.0, 0.0), (0.8, -0.6), 1.01
        dta, dd = 2.0, 3.0
        f_ref = lambda Z, X: np.exp(-((Z - c[0]) ** 2 + (X - c[1]) ** 2) / (2 * sigma ** 2))  # noqa: E731
        ce = (c[0] + shift[0], c[1] + shift[1])
        z, x = grid(0, 30, 0.5, -15, 15, 0.5)
        ref = dose(f_ref, z, x)
        h = 0.1
        ev = dose(lambda Z, X: k * f_ref(Z - shift[0], X - shift[1]), *grid(-0.53, 30.6, h, -15.57, 15.6, h))
        for local, cutoff in ((False, 10.0), (True, 50.0)):
            g = gamma_index(ref, ev, dta, dd, cutoff, local=local)
            self.assertEqual(g.pass_rate, 100.0)
            Z, X = np.meshgrid(z, x, indexing="ij")
            idx = np.flatnonzero(g.evaluated)[::7]
            self.assertGreater(len(idx), 30)
            t = np.arange(-3 * dta, 3 * dta, 1e-4)
            worst = 0.0
            for i in idx:
                p = np.array([Z.flat[i], X.flat[i]])
                u = p - ce
                rho = np.hypot(*u)
                u = u / rho if rho > 0 else np.array([1.0, 0.0])
                r = rho + t                        # signed distance from ce along u
                De = k * np.exp(-r ** 2 / (2 * sigma ** 2))
                Dr = ref.values.flat[i]
                dD = dd / 100.0 * (Dr if local else 1.0)
                G2 = ((ce[0] + r * u[0] - p[0]) ** 2 + (ce[1] + r * u[1] - p[1]) ** 2) / dta ** 2 + \
                    (De - Dr) ** 2 / dD ** 2
                worst = max(worst, abs(g.gamma.flat[i] - math.sqrt(G2.min())))
            # Linear interpolation over a triangle with legs h errs by at most
            # M h^2 / 4 (M: the largest second derivative, k / sigma^2 here);
            # gamma moves by at most that over dD (the smallest dD for local).
            dD_min = dd / 100.0 * (cutoff / 100.0 if local else 1.0)
            bound = k / sigma ** 2 * h ** 2 / 4 / dD_min + 1e-6   # 1e-6: the 1e-4 mm sampling of t
            self.assertLess(worst, bound, "local=%s: worst deviation %g, bound %g" % (local, worst, bound))

    def test_search_cap_and_failures(self):
        z, x = grid(0, 10, 0.5, -5, 5, 0.5)
        ref = dose(lambda Z, X: 1.0 + 0.0 * Z, z, x)
        ev = dose(lambda Z, X: 0.0 * Z, z, x)     # no agreement anywhere: gamma 33 at best
        g = gamma_index(ref, ev, 1.0, 3.0, 0.0, search_mm=2.5)
        self.assertEqual(g.cap, 2.5)
        self.assertTrue(np.all(g.values == 2.5))
        self.assertEqual(g.pass_rate, 0.0)

    def test_cutoff_and_coverage(self):
        z, x = grid(0, 20, 0.5, -10, 10, 0.5)
        ref = dose(lambda Z, X: np.exp(-X ** 2 / 18.0), z, x)
        g = gamma_index(ref, ref, 2.0, 3.0, 20.0)
        self.assertEqual(g.n, int((ref.values >= 0.2).sum()))
        self.assertEqual(g.below_cutoff, int((ref.values < 0.2).sum()))
        # An evaluated grid covering only x <= 0 (and z <= 10): the rest is counted as outside, not evaluated.
        part = dose(lambda Z, X: np.exp(-X ** 2 / 18.0), np.arange(0, 10.01, 0.5), np.arange(-10, 0.01, 0.5))
        g = gamma_index(ref, part, 2.0, 3.0, 20.0)
        Z, X = np.meshgrid(z, x, indexing="ij")
        above = ref.values >= 0.2
        covered = (Z <= 10) & (X <= 0)
        self.assertEqual(g.n, int((above & covered).sum()))
        self.assertEqual(g.outside, int((above & ~covered).sum()))
        self.assertLess(float(np.max(g.values)), EXACT)
        # Local gamma never evaluates a zero reference dose, whatever the cutoff.
        ref0 = dose(lambda Z, X: np.where(X > 0, 1.0, 0.0), z, x)
        self.assertEqual(gamma_index(ref0, ref0, 2.0, 3.0, 0.0, local=True).n, int((ref0.values > 0).sum()))

    def test_resample_is_exact_for_bilinear_doses(self):
        z, x = grid(0, 10, 0.5, -5, 5, 0.5)
        d = dose(lambda Z, X: 1.0 + 0.3 * Z - 0.2 * X + 0.05 * Z * X, z, x)
        zq, xq = np.array([0.0, 0.1, 3.33, 10.0, 10.2]), np.array([-5.0, -0.26, 4.99, 5.3])
        out = resample(d, zq, xq)
        Z, X = np.meshgrid(zq, xq, indexing="ij")
        want = 1.0 + 0.3 * Z - 0.2 * X + 0.05 * Z * X
        ok = (Z <= 10) & (X <= 5)
        self.assertLess(np.max(np.abs(out[ok] - want[ok])), EXACT)
        self.assertTrue(np.all(np.isnan(out[~ok])))

    def test_bad_criteria(self):
        z, x = grid(0, 2, 0.5, -1, 1, 0.5)
        d = dose(lambda Z, X: 1.0 + Z, z, x)
        for kw in ({"dta_mm": 0.0}, {"dd_percent": -1.0}, {"search_mm": 1.0}):
            args = {"dta_mm": 2.0, "dd_percent": 3.0}
            args.update(kw)
            with self.assertRaises(ValueError):
                gamma_index(d, d, **args)
        with self.assertRaises(ValueError):
            gamma_index(dose(lambda Z, X: 0.0 * Z, z, x), d, 2.0, 3.0)


if __name__ == "__main__":
    post_fixture.main()
