"""The result file's /summary and /dose/dose_Gy with media, and smx2d-plot's
markers, on small results made by the built binary (tests/plans/tiny.yaml, a
30 MeV pencil beam in 12 mm of water):
  - a 1 mm slab of 3 g/cm3 before the peak: /summary is the dose's figures
    (recomputed here from /dose/dose_Gy), not the energy's, whose maximum is
    the slab; dose_Gy's density_g_cm3 is NaN and the per-cell masses of
    /geometry/density_g_cm3 give dose_Gy_per_proton;
  - a 40 MeV beam (beyond the 12 mm grid): /summary's warnings say so, R80 is NaN;
  - smx2d-plot's markers lie on the curve it draws, for the dose and the energy;
  - a spread-out peak (synthetic): the distal peak, not the overshoot."""
import math
import os
import shutil
import tempfile
import unittest

import h5py
import numpy as np

import post_fixture
from smx2d_post import figures, plots
from smx2d_post.result import read_result

MEV_TO_J = 1.602176634e-13


def setUpModule():
    global TMP, SLAB, DEEP
    TMP = tempfile.mkdtemp(prefix="smx2d-test-summary-")
    plan = os.path.join(TMP, "slab.yaml")
    with open(post_fixture.TINY) as f:
        text = f.read().replace("../../data/", os.path.join(post_fixture.ROOT, "data") + "/")
    with open(plan, "w") as f:
        f.write(text + "geometry:\n  shapes:\n    - {material: water, z_mm: [3, 4], density_g_cm3: 3.0}\n")
    SLAB = post_fixture.simulate(os.path.join(TMP, "slab.h5"), plan=plan)
    DEEP = post_fixture.simulate(os.path.join(TMP, "deep.h5"), "beam.energy_MeV=40", "grid.energy.E_max_MeV=40")


def tearDownModule():
    shutil.rmtree(TMP, ignore_errors=True)


class Summary(unittest.TestCase):
    def test_media_figures_are_the_dose(self):
        with h5py.File(SLAB, "r") as f:
            gy, e = f["dose/dose_Gy"][()], f["dose/energy_deposit_MeV"][()]
            z, dx = f["axes/z_centres_mm"][()], np.diff(f["axes/x_edges_mm"][()])
            s = {k: float(f["summary"][k][()]) for k in f["summary"]}
            warn = f["summary"].attrs["warnings"]
        mine = figures.curve_figures(z, gy @ dx)
        for k in mine:   # the same algorithm on the written dose: rounding of Gy vs MeV x density ratio
            self.assertTrue(math.isclose(mine[k], s[k], rel_tol=1e-9), "%s: %r here, %r in /summary" % (k, mine[k], s[k]))
        self.assertGreater(s["peak_depth_mm"], 5.0)          # where the beam stops (6.75 mm), not the slab
        self.assertEqual(s["maximum_depth_mm"], s["peak_depth_mm"])
        energy = figures.curve_figures(z, e.sum(axis=1))
        self.assertTrue(3.0 < energy["maximum_depth_mm"] < 4.0, energy)   # the energy's maximum is the slab
        self.assertEqual(warn, "none")

    def test_media_dose_attributes(self):
        with h5py.File(SLAB, "r") as f:
            a = f["dose/dose_Gy"].attrs
            self.assertTrue(math.isnan(a["density_g_cm3"]))
            self.assertIn("/geometry/density_g_cm3", a["density"])
            rho = f["geometry/density_g_cm3"][()].astype(float)
            dz, dx = np.diff(f["axes/z_edges_mm"][()])[0], np.diff(f["axes/x_edges_mm"][()])[0]
            mass = rho * 1e3 * dx * dz * a["slab_thickness_mm"] * 1e-9
            want = f["dose/energy_deposit_MeV"][()] * MEV_TO_J / mass
            # The documented formula with each cell's mass; the density is float32 there (1 and 3 exactly).
            np.testing.assert_allclose(f["dose/dose_Gy_per_proton"][()], want, rtol=1e-12)
        with h5py.File(DEEP, "r") as f:   # one medium: the plan's density, as before
            self.assertEqual(f["dose/dose_Gy"].attrs["density_g_cm3"], 1.0)

    def test_beyond_the_grid(self):
        res = read_result(DEEP)
        self.assertTrue(math.isnan(res.summary["R80_mm"]) and math.isnan(res.summary["peak_depth_mm"]))
        self.assertEqual(len(res.warnings), 1)
        self.assertIn("the beam reaches the grid's far edge", res.warnings[0])
        self.assertIn("R80 is undefined", res.warnings[0])
        r = post_fixture.tool("smx2d-plot", DEEP, "--out", os.path.join(TMP, "deep_plots"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("warning: %s: the beam reaches the grid's far edge" % DEEP, r.stderr)
        self.assertIn("R80 not inside the grid", r.stdout)

    def test_markers_on_the_curve(self):
        for quantity in ("dose_Gy", "energy_deposit_MeV"):
            res = read_result(SLAB, quantity)
            fig, ax = plots.figure()
            figs = plots.result_figures(res)
            dd, _ = plots.draw_depth_dose(ax, res, figs)
            curve = ax.lines[0]
            marked = 0
            for line in ax.lines[1:]:
                if line.get_marker() in (None, "", "None"):
                    continue   # R80's and R20's vertical lines, in axes coordinates
                for x, y in zip(line.get_xdata(), line.get_ydata()):
                    # On the drawn polyline: its value at that depth (to float rounding).
                    self.assertAlmostEqual(y, float(np.interp(x, curve.get_xdata(), curve.get_ydata())),
                                           delta=1e-12 * float(np.max(dd)), msg="%s: %s" % (quantity, line.get_label()))
                    marked += 1
            self.assertGreaterEqual(marked, 3, quantity)   # the distal peak, R80, R20
            # The figures are the dose's whatever is drawn.
            self.assertEqual(figs["peak_depth_mm"], res.summary["peak_depth_mm"])

    def test_spread_out_peak(self):
        # A plateau from 80 to 110 mm with a +4.5 % overshoot at 77.75 mm and a Gaussian fall-off.
        z = (np.arange(260) + 0.5) * 0.5
        dd = np.where(z < 77.75, 0.5 + 0.545 * z / 77.75, 1.0)
        dd = np.where((z >= 77.75) & (z < 80.0), 1.045 - 0.045 * (z - 77.75) / 2.25, dd)
        dd = np.where(z > 109.25, np.exp(-0.5 * ((z - 109.25) / 1.5) ** 2), dd)
        f = figures.curve_figures(z, dd)
        self.assertEqual(f["maximum_depth_mm"], 77.75)
        self.assertEqual(f["peak_depth_mm"], 109.25)     # the flat plateau's distal end
        self.assertAlmostEqual(f["maximum_to_peak"], 1.045, delta=1e-12)
        # 80 % of the distal peak's dose on a 1.5 mm Gaussian: to the rows' linear interpolation (0.01 mm).
        self.assertAlmostEqual(f["R80_mm"], 109.25 + 1.5 * math.sqrt(2 * math.log(1.25)), delta=0.02)


if __name__ == "__main__":
    post_fixture.main()
