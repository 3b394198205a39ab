"""smx2d-compare from the command line, on a result made by the built binary
against itself, against its own dose written as a CSV matrix on a shifted
grid and as a plain HDF5 array, scaled; its JSON, its exit codes and bad input."""
import json
import os
import shutil
import tempfile
import unittest

import h5py
import numpy as np

import post_fixture
from smx2d_post import compare_cli


def setUpModule():
    global TMP, RESULT, DOSE, Z, X
    TMP = tempfile.mkdtemp(prefix="smx2d-test-compare-")
    RESULT = post_fixture.simulate(os.path.join(TMP, "pencil.h5"))
    with h5py.File(RESULT, "r") as f:
        DOSE = f["dose/dose_Gy"][()]
        Z = f["axes/z_centres_mm"][()]
        X = f["axes/x_centres_mm"][()]


def tearDownModule():
    shutil.rmtree(TMP, ignore_errors=True)


def write_csv(path, dose, z, x, header="z_mm \\ x_mm"):
    with open(path, "w") as f:
        f.write("# dose in Gy on a shifted grid\n")
        f.write(",".join([header] + ["%.17g" % v for v in x]) + "\n")
        for zi, row in zip(z, dose):
            f.write(",".join(["%.17g" % zi] + ["%.17g" % v for v in row]) + "\n")
    return path


def compare(*args, program=False):
    """Runs smx2d-compare (in this process unless `program`) into a directory of its
    own; returns the run and the JSON it wrote (None if none)."""
    out = os.path.join(TMP, "out_%d" % compare.n)
    compare.n += 1
    if program:
        r = post_fixture.tool("smx2d-compare", *args, "--out", out)
    else:
        r = post_fixture.call(compare_cli.main, *args, "--out", out)
    info = None
    if os.path.exists(os.path.join(out, "gamma.json")):
        with open(os.path.join(out, "gamma.json")) as f:
            info = json.load(f)
        post_fixture.png_size(os.path.join(out, "gamma.png"))
    return r, info


compare.n = 0


class Compare(unittest.TestCase):
    def test_result_against_itself(self):
        r, info = compare(RESULT, RESULT, program=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("pass rate 100.00 %", r.stdout)
        g = info["gamma"]
        self.assertEqual((g["pass_rate_percent"], g["max"], g["failed"]), (100.0, 0.0, 0))
        self.assertEqual(info["criteria"]["norm_dose"], float(DOSE.max()))
        self.assertEqual(info["points"]["evaluated"], int((DOSE >= 0.1 * DOSE.max()).sum()))
        self.assertEqual(info["points"]["evaluated"] + info["points"]["below_cutoff"], DOSE.size)
        self.assertEqual(info["reference"]["units"], "Gy")

    def test_shifted_csv(self):
        # The same values on a grid moved by s = (-0.2, +0.3) mm: at each reference
        # point the evaluated grid point r + s holds the same dose, so gamma <= |s| / DTA.
        s = np.array([-0.2, 0.3])
        csv = write_csv(os.path.join(TMP, "shifted.csv"), DOSE, Z + s[0], X + s[1])
        r, info = compare(RESULT, csv, "--dta", "1", "--dd", "2", "--cutoff", "5")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(info["evaluated"]["shape"], list(DOSE.shape))
        self.assertEqual(info["gamma"]["pass_rate_percent"], 100.0)
        self.assertLessEqual(info["gamma"]["max"], np.hypot(*s) / 1.0 + 1e-9)  # rounding
        self.assertGreater(info["gamma"]["max"], 0.0)
        # Reference points beyond the evaluated grid's last row or first column are counted, not evaluated.
        zz, xx = np.meshgrid(Z, X, indexing="ij")
        above = DOSE >= 0.05 * DOSE.max()
        outside = above & ((zz > Z[-1] + s[0]) | (xx < X[0] + s[1]))
        self.assertEqual(info["points"]["outside_evaluated_grid"], int(outside.sum()))
        self.assertEqual(info["points"]["evaluated"], int((above & ~outside).sum()))
        # Descending coordinates are read the same way.
        csv2 = write_csv(os.path.join(TMP, "reversed.csv"), DOSE[::-1, ::-1], (Z + s[0])[::-1], (X + s[1])[::-1])
        r2, info2 = compare(RESULT, csv2, "--dta", "1", "--dd", "2", "--cutoff", "5")
        self.assertEqual(r2.returncode, 0, r2.stderr)
        self.assertEqual(info2["gamma"], info["gamma"])

    def test_plain_hdf5_scaled(self):
        # The dose scaled by 1.02 in a plain HDF5 file with z_mm and x_mm. With a
        # DTA far below the cell size no other point can help: global gamma is
        # 0.02 D / (dd Dmax), 0.667 at the maximum for 3 %; local gamma is 0.02 / dd
        # everywhere, 1.333 for 1.5 %, failing every point. (Gamma is the distance
        # to the interpolated surface, which slopes by at most (Dmax / dD)(DTA / dx)
        # = 1.3e-3 in the scaled space for DTA = 1e-6 mm, dD >= 1.5 % of 10 % of
        # Dmax: a relative change of at most slope^2 / 2 < 1e-6.)
        path = os.path.join(TMP, "plain.h5")
        with h5py.File(path, "w") as f:
            f.create_dataset("dose", data=1.02 * DOSE).attrs["units"] = "Gy"
            f["z_mm"], f["x_mm"] = Z, X
        r, info = compare(RESULT, path, "--dta", "1e-6")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(info["evaluated"]["source"], path + ":/dose")
        self.assertEqual(info["gamma"]["pass_rate_percent"], 100.0)
        self.assertAlmostEqual(info["gamma"]["max"], 0.02 / 0.03, delta=1e-6)
        self.assertAlmostEqual(info["dose_difference_percent"]["max"], 2.0, delta=1e-9)
        r, info = compare(RESULT, path, "--dta", "1e-6", "--local", "--dd", "1.5", "--min-pass", "99")
        self.assertEqual(r.returncode, 4, r.stdout + r.stderr)
        self.assertIn("below --min-pass 99", r.stderr)
        self.assertEqual(info["criteria"]["type"], "local")
        self.assertEqual(info["gamma"]["pass_rate_percent"], 0.0)
        self.assertAlmostEqual(info["gamma"]["mean"], 0.02 / 0.015, delta=1e-6)
        self.assertAlmostEqual(info["gamma"]["max"], 0.02 / 0.015, delta=1e-6)
        # Another quantity in the same file (via its dimension scales): units must agree.
        r, _ = compare(RESULT, RESULT + ":/dose/energy_deposit_MeV")
        self.assertEqual(r.returncode, 2)
        self.assertIn("is in Gy but %s:/dose/energy_deposit_MeV in MeV" % RESULT, r.stderr)
        r, info = compare(RESULT, RESULT + ":/dose/energy_deposit_MeV", "--normalise")
        self.assertEqual(r.returncode, 0, r.stderr)
        # The same shape (dose is energy over a constant mass), up to the rounding of the two divisions.
        self.assertLess(info["gamma"]["max"], 1e-9)

    def test_help(self):
        r = post_fixture.tool("smx2d-compare", "--help")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("exit codes: 0 ok", r.stdout)

    def test_bad_input(self):
        r, _ = compare(RESULT, os.path.join(TMP, "nothing.csv"))
        self.assertEqual(r.returncode, 2)
        self.assertIn("nothing.csv: cannot be read", r.stderr)
        bad = os.path.join(TMP, "bad.csv")
        with open(bad, "w") as f:
            f.write("label, -1, 0, 1\n0.25, 1, 2, 3\n0.75, 1, oops, 3\n")
        r, info = compare(RESULT, bad)
        self.assertEqual(r.returncode, 2)
        self.assertIn("bad.csv:3:3: dose 'oops' is not a number", r.stderr)
        self.assertIsNone(info)
        r, _ = compare(RESULT, RESULT, "--dta", "2", "--search", "1")
        self.assertEqual(r.returncode, 1)
        self.assertIn("--search 1 is below --dta 2", r.stderr)
        r, _ = compare(RESULT, RESULT, "--dd", "-3")
        self.assertEqual(r.returncode, 1)
        two = os.path.join(TMP, "two.h5")
        with h5py.File(two, "w") as f:
            f["a"], f["b"] = DOSE, DOSE
        r, _ = compare(RESULT, two)
        self.assertEqual(r.returncode, 2)
        self.assertIn("several 2-D datasets (/a, /b); name it as %s:/path/to/dataset" % two, r.stderr)
        r, _ = compare(RESULT, two + ":/a")
        self.assertEqual(r.returncode, 2)
        self.assertIn("no coordinates for dimension 0", r.stderr)


if __name__ == "__main__":
    post_fixture.main()
