"""smx2d-plot on small results made by the built binary (a pencil beam and a
two-spot field): the files it writes, their axes and units, the plotted values
against the HDF5 data, the material map when a file has one, and bad input."""
import csv
import os
import shutil
import tempfile
import unittest

import h5py
import numpy as np

import post_fixture
from smx2d_post import cli, figures, plot_cli, plots
from smx2d_post.plot_cli import make_plots
from smx2d_post.result import read_result

PNGS = ("summary.png", "depth_dose.png", "lateral_profiles.png", "dose_map.png")
# The CSVs are written with 9 significant digits.
CSV_REL = 1e-8


def setUpModule():
    global TMP, PENCIL, FIELD
    TMP = tempfile.mkdtemp(prefix="smx2d-test-plot-")
    PENCIL = post_fixture.simulate(os.path.join(TMP, "pencil.h5"))
    spots = os.path.join(TMP, "spots.csv")
    with open(spots, "w") as f:
        f.write("energy_MeV, x_mm, weight\n25, -2, 2e8\n30, 2, 1e8\n")
    FIELD = post_fixture.simulate(os.path.join(TMP, "field.h5"), "beam.spots_file=" + spots)


def tearDownModule():
    shutil.rmtree(TMP, ignore_errors=True)


def read_h5(path):
    with h5py.File(path, "r") as f:
        return {k: f[k][()] for k in ("dose/dose_Gy", "axes/z_centres_mm", "axes/x_centres_mm",
                                      "axes/x_edges_mm", "summary/R80_mm", "summary/R20_mm",
                                      "summary/peak_depth_mm")}


def read_csv(path):
    with open(path) as f:
        rows = [r for r in csv.reader(l for l in f if not l.startswith("#"))]
    return rows[0], np.array(rows[1:], dtype=float)


def with_units(label):
    return "(" in label and label.rstrip().endswith(")")


class Plot(unittest.TestCase):
    def check_outputs(self, result, out):
        for name in PNGS:
            w, h = post_fixture.png_size(os.path.join(out, name))
            self.assertGreater(min(w, h), 200, name)
        self.assertFalse([n for n in os.listdir(out) if "partial" in n], "temporary files left")
        h5 = read_h5(result)
        dose, dx = h5["dose/dose_Gy"], np.diff(h5["axes/x_edges_mm"])
        head, dd = read_csv(os.path.join(out, "depth_dose.csv"))
        self.assertEqual(head, ["z_mm", "integrated_Gy_mm"])
        np.testing.assert_allclose(dd[:, 0], h5["axes/z_centres_mm"], rtol=CSV_REL)
        np.testing.assert_allclose(dd[:, 1], dose @ dx, rtol=CSV_REL)
        head, prof = read_csv(os.path.join(out, "lateral_profiles.csv"))
        np.testing.assert_allclose(prof[:, 0], h5["axes/x_centres_mm"], rtol=CSV_REL)
        self.assertEqual(head[1], "z=%.6g_mm" % h5["axes/z_centres_mm"][0])  # the first row, by default
        np.testing.assert_allclose(prof[:, 1], dose[0], rtol=CSV_REL)

    def test_pencil_command(self):
        out = os.path.join(TMP, "pencil_out")
        r = post_fixture.tool("smx2d-plot", PENCIL, "--out", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("R80 %.2f mm" % read_h5(PENCIL)["summary/R80_mm"], r.stdout)
        self.check_outputs(PENCIL, out)
        self.assertFalse(os.path.exists(os.path.join(out, "material_map.png")))

    def test_field_command_default_directory(self):
        r = post_fixture.tool("smx2d-plot", FIELD, "--quiet", cwd=TMP)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, "")
        self.check_outputs(FIELD, os.path.join(TMP, "field_plots"))

    def test_figures_show_the_file_values(self):
        res = read_result(PENCIL)
        h5 = read_h5(PENCIL)
        z, dose = h5["axes/z_centres_mm"], h5["dose/dose_Gy"]
        depths = [float(z[3]), 0.5 * float(z[5] + z[6])]   # a row centre and halfway between two
        with cli.Outputs(os.path.join(TMP, "inproc")) as outs:
            figs, used, drawn = make_plots(res, outs, depths=depths)
        self.assertEqual(used, depths)
        self.assertEqual(sorted(drawn), sorted(PNGS))
        for name, fig in drawn.items():  # every plot's axes name their quantity and units
            for ax in fig.axes:
                if ax.axison:
                    self.assertTrue(with_units(ax.get_xlabel()), "%s: x label '%s'" % (name, ax.get_xlabel()))
                    self.assertTrue(with_units(ax.get_ylabel()), "%s: y label '%s'" % (name, ax.get_ylabel()))
                for cax in ax.child_axes:   # colour bars
                    self.assertTrue(with_units(cax.get_ylabel()), "%s: colour bar '%s'" % (name, cax.get_ylabel()))

        ax = drawn["depth_dose.png"].axes[0]
        # The dose says what it is of: the beam's protons (beam.weight, 1 here) and the slab of y.
        self.assertEqual(ax.get_ylabel().replace("\n", " "),
                         "laterally integrated absorbed dose of 1 proton in a 1 mm slab (Gy mm)")
        np.testing.assert_array_equal(ax.lines[0].get_xdata(), z)
        np.testing.assert_allclose(ax.lines[0].get_ydata(), dose @ np.diff(h5["axes/x_edges_mm"]), rtol=1e-12)
        marks = {l.get_label().split()[0]: l.get_xdata()[0] for l in ax.lines if l.get_label()[:3] in ("R80", "R20")}
        self.assertEqual(marks["R80"], h5["summary/R80_mm"])
        self.assertEqual(marks["R20"], h5["summary/R20_mm"])
        # The figures computed here agree with the program's /summary (the same algorithm).
        mine = figures.dose_figures(res.dose)
        for k in ("R80_mm", "R20_mm", "peak_depth_mm"):
            self.assertAlmostEqual(mine[k], float(h5["summary/" + k]), delta=1e-9, msg=k)

        ax = drawn["lateral_profiles.png"].axes[0]
        self.assertEqual(ax.get_ylabel().replace("\n", " "), "absorbed dose of 1 proton in a 1 mm slab (Gy)")
        self.assertIn("rms ", ax.lines[0].get_label())
        self.assertIn("core sigma ", ax.lines[0].get_label())
        np.testing.assert_array_equal(ax.lines[0].get_xdata(), h5["axes/x_centres_mm"])
        np.testing.assert_array_equal(ax.lines[0].get_ydata(), dose[3])
        np.testing.assert_allclose(ax.lines[1].get_ydata(), 0.5 * (dose[5] + dose[6]), rtol=1e-12)

        ax = drawn["dose_map.png"].axes[0]
        mesh = ax.collections[0]
        np.testing.assert_array_equal(np.asarray(mesh.get_array()).reshape(dose.T.shape), dose.T)
        self.assertEqual(ax.child_axes[0].get_ylabel().replace("\n", " "),
                         "absorbed dose of 1 proton in a 1 mm slab (Gy)")
        # Isodose lines in % of the distal peak's dose (the maximum of its row),
        # not of the map's maximum, which a narrow 2-D pencil has at its entrance.
        ipeak = int(np.argmin(np.abs(z - h5["summary/peak_depth_mm"])))
        ref = float(np.max(dose[ipeak]))
        self.assertLess(ref, float(np.max(dose)))
        self.assertEqual(plots.isodose_reference(res)[0], ref)
        self.assertIn("isodose lines in %% of %.4g Gy, the maximum of the distal peak's row" % ref, ax.get_title())
        fig, ax = plots.figure()
        cs = plots._isodose(ax, res.dose, plots.ISODOSE_PERCENT, ref)
        np.testing.assert_allclose(cs.levels, [p / 100.0 * ref for p in sorted(plots.ISODOSE_PERCENT)], rtol=1e-12)

        texts = [t.get_text() for t in drawn["summary.png"].axes[3].texts]
        self.assertIn("core sigma at R80/2", texts)
        self.assertIn("%.4g mm / %.4g mm" % (h5["summary/R80_mm"], h5["summary/R20_mm"]), texts)
        self.assertIn("30 MeV", texts)

    def test_scaled_dose(self):
        # --protons: the dose of that many protons; --prescribe: GY at the distal peak.
        h5 = read_h5(PENCIL)
        dose, dx = h5["dose/dose_Gy"], np.diff(h5["axes/x_edges_mm"])
        out = os.path.join(TMP, "protons_out")
        r = post_fixture.call(plot_cli.main, PENCIL, "--out", out, "--quiet", "--protons", "1e9")
        self.assertEqual(r.returncode, 0, r.stderr)
        _, dd = read_csv(os.path.join(out, "depth_dose.csv"))
        np.testing.assert_allclose(dd[:, 1], 1e9 * (dose @ dx), rtol=CSV_REL)
        res = read_result(PENCIL)
        plot_cli.scale_dose(res, protons=1e9)
        self.assertEqual(res.dose.label(), "absorbed dose of 1e+09 protons in a 1 mm slab (Gy)")
        out = os.path.join(TMP, "prescribe_out")
        r = post_fixture.call(plot_cli.main, PENCIL, "--out", out, "--prescribe", "2")
        self.assertEqual(r.returncode, 0, r.stderr)
        res = read_result(PENCIL)
        n = plot_cli.scale_dose(res, prescribe=2.0)
        self.assertAlmostEqual(plots.isodose_reference(res)[0], 2.0, delta=1e-12)
        ipeak = int(np.argmin(np.abs(h5["axes/z_centres_mm"] - h5["summary/peak_depth_mm"])))
        self.assertAlmostEqual(n, 2.0 / float(np.max(dose[ipeak])), delta=1e-9 * n)
        self.assertIn("--prescribe 2: 2 Gy at the distal peak takes %.4g protons" % n, r.stdout)
        self.assertIn(", 2 Gy at the distal peak (Gy)", res.dose.label())
        # Only a dose in Gy scales; the two options exclude each other.
        r = post_fixture.call(plot_cli.main, PENCIL, "--quantity", "energy_deposit_MeV", "--protons", "10",
                              "--out", os.path.join(TMP, "no"))
        self.assertEqual(r.returncode, 2)
        self.assertIn("--protons and --prescribe scale a dose in Gy", r.stderr)
        r = post_fixture.call(plot_cli.main, PENCIL, "--protons", "10", "--prescribe", "2")
        self.assertEqual(r.returncode, 1)

    def test_core_sigma(self):
        # A Gaussian core (sigma 2 mm) under a wide halo (sigma 12 mm, 10 % of the
        # weight): the rms follows the halo, the core's fit the core (the halo
        # inside +-2.5 sigma adds 2 %).
        x = np.arange(-60.0, 60.0, 0.5) + 0.25
        g = lambda s: np.exp(-0.5 * (x / s) ** 2) / s  # noqa: E731
        p = 0.9 * g(2.0) + 0.1 * g(12.0)
        self.assertGreater(figures.rms_width(x, p), 4.0)
        self.assertAlmostEqual(figures.core_sigma(x, p), 2.0, delta=0.05)
        self.assertAlmostEqual(figures.core_sigma(x, g(3.0)), 3.0, delta=0.01)
        # The fit is of cell means: a core narrower than a cell comes out right.
        cells = figures._cell_gaussian(x - 0.25, x + 0.25, 0.1, 0.4)
        self.assertAlmostEqual(figures.core_sigma(x, cells), 0.4, delta=0.002)
        self.assertTrue(np.isnan(figures.core_sigma(x, np.zeros_like(x))))

    def test_energy_deposit_quantity(self):
        res = read_result(PENCIL, "energy_deposit_MeV")
        with h5py.File(PENCIL, "r") as f:
            e, dz = f["dose/energy_deposit_MeV"][()], np.diff(f["axes/z_edges_mm"][()])
        fig, ax = plots.figure()
        dd, units = plots.draw_depth_dose(ax, res, plots.result_figures(res))
        self.assertEqual(units, "MeV/mm")
        np.testing.assert_allclose(dd, e.sum(axis=1) / dz, rtol=1e-12)
        self.assertIn("(MeV/mm)", ax.get_ylabel())

    def test_material_map(self):
        # No result has a material map yet: one is added as /material/index with names.
        path = os.path.join(TMP, "material.h5")
        shutil.copy(PENCIL, path)
        with h5py.File(path, "r+") as f:
            nz, nx = f["dose/dose_Gy"].shape
            idx = np.zeros((nz, nx), np.int32)
            idx[nz // 2:] = 1
            g = f.create_group("material")
            g.attrs["names"] = "water,bone"
            g.create_dataset("index", data=idx)
        out = os.path.join(TMP, "material_out")
        r = post_fixture.call(plot_cli.main, path, "--out", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        post_fixture.png_size(os.path.join(out, "material_map.png"))
        res = read_result(path)
        self.assertEqual(res.material.names, ["water", "bone"])
        fig, ax = plots.figure()
        plots.draw_material(fig, ax, res)
        self.assertEqual([t.get_text() for t in ax.child_axes[0].get_yticklabels()], ["water", "bone"])
        # A continuous map, a dataset at /material itself.
        with h5py.File(path, "r+") as f:
            del f["material"]
            f.create_dataset("material", data=np.where(idx == 1, 1.85, 1.0)).attrs["units"] = "g/cm3"
        res = read_result(path)
        self.assertFalse(res.material.categorical)
        fig, ax = plots.figure()
        plots.draw_material(fig, ax, res)
        self.assertEqual(ax.child_axes[0].get_ylabel(), "material (g/cm3)")
        # A result without one, plotted into the same directory: no stale material map.
        r = post_fixture.call(plot_cli.main, PENCIL, "--out", out, "--quiet")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertFalse(os.path.exists(os.path.join(out, "material_map.png")))

    def test_let(self):
        # output.let: LETd and LETt along depth (each row weighted by its dose) and the LETd map.
        path = post_fixture.simulate(os.path.join(TMP, "let.h5"), "output.let=true")
        out = os.path.join(TMP, "let_out")
        r = post_fixture.call(plot_cli.main, path, "--out", out, "--quiet")
        self.assertEqual(r.returncode, 0, r.stderr)
        for name in ("let_depth.png", "let_map.png"):
            post_fixture.png_size(os.path.join(out, name))
        with h5py.File(path, "r") as f:
            d, ld, lt = (f[k][()] for k in ("dose/dose_Gy", "let/dose_averaged_keV_um",
                                            "let/track_averaged_keV_um"))
        head, rows = read_csv(os.path.join(out, "let_depth.csv"))
        self.assertEqual(head, ["z_mm", "LETd_keV_um", "LETt_keV_um"])
        w = d.sum(axis=1)
        keep = w >= plots.LET_DOSE_FLOOR * w.max()
        np.testing.assert_allclose(rows[keep, 1], (ld * d).sum(axis=1)[keep] / w[keep], rtol=CSV_REL)
        np.testing.assert_allclose(rows[keep, 2], (lt * d).sum(axis=1)[keep] / w[keep], rtol=CSV_REL)
        self.assertTrue(np.all(np.isnan(rows[~keep, 1])))
        # The LET rises along the depth to beyond the peak (physics in test_let).
        self.assertGreater(np.nanmax(rows[:, 1]), 3 * rows[0, 1])
        # A result without /let into the same directory: no stale LET figures.
        r = post_fixture.call(plot_cli.main, PENCIL, "--out", out, "--quiet")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertFalse(os.path.exists(os.path.join(out, "let_map.png")))

    def test_help(self):
        r = post_fixture.tool("smx2d-plot", "--help")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("exit codes: 0 ok", r.stdout)

    def test_bad_input(self):
        r = post_fixture.call(plot_cli.main, os.path.join(TMP, "missing.h5"))
        self.assertEqual(r.returncode, 2)
        self.assertIn("missing.h5: no such file", r.stderr)
        table = os.path.join(post_fixture.ROOT, "data", "pstar_water.h5")
        r = post_fixture.call(plot_cli.main, table, "--out", os.path.join(TMP, "no"))
        self.assertEqual(r.returncode, 2)
        self.assertIn("not an smx2d-sim result", r.stderr)
        self.assertFalse(os.path.exists(os.path.join(TMP, "no", "summary.png")))
        r = post_fixture.call(plot_cli.main, PENCIL, "--depths", "3,x")
        self.assertEqual(r.returncode, 1)
        self.assertIn("--depths: 'x' is not a number", r.stderr)
        r = post_fixture.call(plot_cli.main, PENCIL, "--depths", "3,12.5", "--out", os.path.join(TMP, "no"))
        self.assertEqual(r.returncode, 2)
        self.assertIn("--depths 12.5: outside %s's depths, 0 to 12 mm" % PENCIL, r.stderr)
        # An incomplete result without /summary (what a failed run may keep): drawn, with a
        # warning, its figures computed here as the program would have; then one without its dose.
        broken = os.path.join(TMP, "broken.h5")
        shutil.copy(PENCIL, broken)
        with h5py.File(broken, "r+") as f:
            f.attrs["complete"] = np.int32(0)
            del f["summary"]
        r = post_fixture.call(plot_cli.main, broken, "--out", os.path.join(TMP, "broken_out"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("incomplete (complete = 0)", r.stderr)
        self.assertIn("R80 %.2f mm" % read_h5(PENCIL)["summary/R80_mm"], r.stdout)
        with h5py.File(broken, "r+") as f:
            del f["dose"]
        r = post_fixture.call(plot_cli.main, broken, "--out", os.path.join(TMP, "broken_out"))
        self.assertEqual(r.returncode, 2)
        self.assertIn("no /dose/dose_Gy (complete = 0: the run stopped before the dose was written)", r.stderr)


if __name__ == "__main__":
    post_fixture.main()
