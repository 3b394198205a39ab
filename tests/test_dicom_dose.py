"""From a real scanner's CT slice to a dose a clinic's tools open, end to end
(docs/dicom.md's worked example): pydicom's CT_small.dcm imported by
smx2d-import-ct, tests/plans/ct_small.yaml run on it by the built smx2d-sim,
its summary checked (the beam stops inside the grid, R80 where the
water-equivalent depth along the axis reaches PSTAR's range), and the dose
written by smx2d-export-dose as a DICOM RT Dose and a MetaImage, read back
with pydicom and numpy: value for value (the RT Dose within half its Dose Grid
Scaling, the MetaImage exactly), in the CT's frame of reference, on the very
patient points whose CT numbers the plan ran on. Also the robust scenarios'
doses, 16-bit values, the refusals, and docs/dicom.md's Python example run as
printed.

    python3 tests/test_dicom_dose.py BUILD_DIR"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

import h5py
import numpy as np
import pydicom
from scipy.ndimage import map_coordinates

import dicom_fixture
import post_fixture

PLAN = os.path.join(post_fixture.ROOT, "tests", "plans", "ct_small.yaml")
DOC = os.path.join(post_fixture.ROOT, "docs", "dicom.md")
# docs/dicom.md's import: a posterior beam (gantry 180; CT_small's patient lies
# feet first supine) on column x = -121.1 mm, entering at the image's lower edge.
IMPORT = ["--isocentre=-121.1,-125,-75.7", "--angle", "180", "--nz", "100", "--nx", "48", "--dz", "0.5",
          "--iso-depth", "30"]
E0 = 70.0
# R80 against the water-equivalent prediction along the axis (below): 0.7 mm, the
# bound tests/test_config_plans.py holds media to (a crossing's water-equivalent
# length is right within one 0.5 mm energy bin, and R80 is read between rows).
# Here every row is a medium of its own, and the 3 mm wide beam averages
# columns whose predictions differ by up to +-0.6 mm over +-3 mm (measured);
# the bound holds with 0.3 mm to spare.
R80_TOL_MM = 0.7
# A value read back from an RT Dose is stored * scaling, the stored integer the
# dose / scaling rounded: within scaling / 2, plus the float64 product's
# rounding (2 ulp of the largest dose).
def rt_bound(scaling, dmax):
    return 0.5 * scaling + 4.0 * np.finfo(float).eps * dmax


def setUpModule():
    global TMP, CT, RESULT, EXPORT
    TMP = tempfile.mkdtemp(prefix="smx2d-test-dicom-")
    CT = os.path.join(TMP, "ct_small.h5")
    r = dicom_fixture.import_ct(dicom_fixture.ct_small(), CT, *IMPORT)
    if r.returncode != 0:
        raise AssertionError("smx2d-import-ct failed: %s" % r.stderr)
    RESULT = post_fixture.simulate(os.path.join(TMP, "ct_small_run.h5"), "geometry.ct.file=" + CT, plan=PLAN)
    EXPORT = os.path.join(TMP, "ct_small_run_dose")
    r = post_fixture.tool("smx2d-export-dose", RESULT, "--out", EXPORT)
    if r.returncode != 0:
        raise AssertionError("smx2d-export-dose failed: %s" % r.stderr)
    print(r.stdout, end="")


def tearDownModule():
    shutil.rmtree(TMP, ignore_errors=True)


def log_interp(x, xs, ys):
    """Log-log interpolation, as the program reads its tables."""
    return float(np.exp(np.interp(np.log(x), np.log(xs), np.log(ys))))


def table(path):
    with h5py.File(path, "r") as f:
        return f["energy_MeV"][()], f["csda_range"][()]


def predicted_r80(res, E0, x0=0.0):
    """Depth (mm) where the water-equivalent depth along x0 reaches PSTAR's
    projected range of E0 plus half its detour (the 2-D model's mean range),
    walking the cells the result transported: each cell's water-equivalent
    thickness from its material's CSDA range table (tests/test_config_plans.py's
    walk, docs/model.md "Range"). None when the grid ends first."""
    d = np.loadtxt(os.path.join(post_fixture.ROOT, "tests", "reference", "pstar_water_ranges.txt"))
    csda, proj = (log_interp(E0, d[:, 0], d[:, c]) for c in (2, 3))
    target = 10.0 * (proj + 0.5 * (csda - proj))
    g = res["geometry"]
    tabs = [table(p.decode()) for p in g["material_tables"][()]]

    def rng(t, E):  # CSDA range (g/cm2) at E
        return log_interp(E, t[0], t[1])

    def energy(t, R):  # the energy whose CSDA range is R
        return 0.0 if R <= t[1][0] else log_interp(R, t[1], t[0])

    mat, rho = g["material_index"][()], g["density_g_cm3"][()]
    ix = int(np.argmin(np.abs(res["axes/x_centres_mm"][()] - x0)))
    dz = float(np.diff(res["axes/z_edges_mm"][()])[0])
    E, wet = E0, 0.0
    for iz in range(mat.shape[0]):
        t, r = tabs[mat[iz, ix]], float(rho[iz, ix])
        E_out = energy(t, rng(t, E) - r * dz * 0.1)
        cell = (rng(tabs[0], E) - (rng(tabs[0], E_out) if E_out > 0 else 0.0)) * 10.0
        path = dz if E_out > 0 else min(dz, rng(t, E) / (r * 0.1))
        if wet + cell >= target:
            return iz * dz + path * (target - wet) / cell
        wet, E = wet + cell, E_out
        if E <= 0:
            return None
    return None


def read_mhd(path):
    """A MetaImage header and its float64 data, read here without the tools' reader."""
    with open(path) as f:
        head = dict(line.split(" = ", 1) for line in f.read().splitlines())
    dims = [int(v) for v in head["DimSize"].split()]
    raw = os.path.join(os.path.dirname(path), head["ElementDataFile"])
    values = np.fromfile(raw, dtype="<f8").reshape(dims[2], dims[1], dims[0])
    return head, values


class EndToEnd(unittest.TestCase):
    def test_summary(self):
        with h5py.File(RESULT, "r") as f:
            s = f["summary"]
            r80, r20 = float(s["R80_mm"][()]), float(s["R20_mm"][()])
            warnings = s.attrs["warnings"]
            warnings = warnings.decode() if isinstance(warnings, bytes) else warnings
            depth = float(f["axes/z_edges_mm"][-1])
            expected = predicted_r80(f, E0)
            rule = f["geometry"].attrs["rule"]
            rule = rule.decode() if isinstance(rule, bytes) else rule
            n_media = int(f["geometry"].attrs["n_media"])
        print("CT_small, 70 MeV: R80 %.3f mm, R20 %.3f mm, predicted R80 %.3f mm, %d media; warnings: %s"
              % (r80, r20, expected, n_media, warnings))
        self.assertEqual(warnings, "none")            # nothing left the grid's far edge or sides
        self.assertLess(r20, depth - 5.0)             # the protons stop well inside the grid
        self.assertLessEqual(abs(r80 - expected), R80_TOL_MM)
        self.assertIn("CT %s" % CT, rule)
        self.assertGreater(n_media, 10)              # a real CT: many densities, several materials

    def test_rt_dose(self):
        ct = pydicom.dcmread(dicom_fixture.CT_SMALL)
        ds = pydicom.dcmread(os.path.join(EXPORT, "dose.dcm"))
        with h5py.File(RESULT, "r") as f:
            dose = f["dose/dose_Gy"][()]
        self.assertEqual((ds.SOPClassUID, ds.Modality, ds.DoseUnits, ds.DoseType, ds.DoseSummationType),
                         ("1.2.840.10008.5.1.4.1.1.481.2", "RTDOSE", "GY", "PHYSICAL", "PLAN"))
        self.assertEqual(ds.file_meta.TransferSyntaxUID, pydicom.uid.ExplicitVRLittleEndian)
        self.assertEqual((int(ds.NumberOfFrames), ds.Rows, ds.Columns), (1, 100, 48))
        # Filed with the CT: its frame of reference, study and patient.
        for k in ("FrameOfReferenceUID", "StudyInstanceUID", "PatientID", "PatientName"):
            self.assertEqual(str(ds[k].value), str(ct[k].value), k)
        s = float(ds.DoseGridScaling)
        back = ds.pixel_array.astype(float) * s
        err = float(np.max(np.abs(back - dose)))
        print("RT Dose: Dose Grid Scaling %.6g Gy (%.3g of the maximum), max |difference| %.3g Gy"
              % (s, s / dose.max(), err))
        self.assertLessEqual(err, rt_bound(s, dose.max()))
        # The whole 32-bit range is used: the largest dose is the largest integer
        # (the scaling, 11 digits rounded up, is at most 1e-10 above the exact one).
        self.assertEqual(int(ds.pixel_array.max()), 2 ** 32 - 1)

    def test_dose_on_the_ct(self):
        """Each dose pixel's patient position (the RT Dose's own position,
        orientation and spacing) is the point whose CT number the run's CT input
        holds for that cell: the CT's pixels interpolated there (SciPy) give it."""
        ds = pydicom.dcmread(os.path.join(EXPORT, "dose.dcm"))
        ct = pydicom.dcmread(dicom_fixture.CT_SMALL)
        hu = ct.pixel_array * float(ct.RescaleSlope) + float(ct.RescaleIntercept)
        ipp = np.array(ds.ImagePositionPatient, dtype=float)
        row_dir, col_dir = (np.array(ds.ImageOrientationPatient[i:i + 3], dtype=float) for i in (0, 3))
        dr, dc = (float(v) for v in ds.PixelSpacing)
        r, c = np.meshgrid(np.arange(ds.Rows), np.arange(ds.Columns), indexing="ij")
        p = ipp + c[..., None] * dc * row_dir + r[..., None] * dr * col_dir
        self.assertTrue(np.allclose(p[..., 2], float(ct.ImagePositionPatient[2])))  # in the CT slice's plane
        cipp, csp = np.array(ct.ImagePositionPatient, dtype=float), [float(v) for v in ct.PixelSpacing]
        want = map_coordinates(hu, [(p[..., 1] - cipp[1]) / csp[0], (p[..., 0] - cipp[0]) / csp[1]], order=1)
        with h5py.File(CT, "r") as f:
            got = f["hu"][()]
        # /hu is float32 (CT numbers up to 1200 HU round by 6e-5 HU); the RT Dose's
        # position and orientation are 16-character decimals (under 1e-9 mm here): 1e-3 HU.
        np.testing.assert_allclose(got, want, atol=1e-3, rtol=0)

    def test_metaimage(self):
        head, values = read_mhd(os.path.join(EXPORT, "dose.mhd"))
        ds = pydicom.dcmread(os.path.join(EXPORT, "dose.dcm"))
        with h5py.File(RESULT, "r") as f:
            dose = f["dose/dose_Gy"][()]
        np.testing.assert_array_equal(values[0], dose)  # float64: the values exactly
        np.testing.assert_allclose([float(v) for v in head["Offset"].split()],
                                   [float(v) for v in ds.ImagePositionPatient], atol=1e-6)
        m = [float(v) for v in head["TransformMatrix"].split()]
        np.testing.assert_allclose(m[:6], [float(v) for v in ds.ImageOrientationPatient], atol=1e-12)
        self.assertEqual(head["ElementSpacing"].split()[:2], ["0.5", "0.5"])

    def test_sixteen_bits(self):
        out = os.path.join(TMP, "bits16")
        r = post_fixture.tool("smx2d-export-dose", RESULT, "--out", out, "--bits", "16", "--format", "dicom")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(sorted(os.listdir(out)), ["dose.dcm"])
        ds = pydicom.dcmread(os.path.join(out, "dose.dcm"))
        with h5py.File(RESULT, "r") as f:
            dose = f["dose/dose_Gy"][()]
        s = float(ds.DoseGridScaling)
        self.assertEqual((ds.BitsAllocated, int(ds.pixel_array.max())), (16, 65535))
        err = float(np.max(np.abs(ds.pixel_array * s - dose)))
        print("16-bit RT Dose: max |difference| %.3g of the maximum" % (err / dose.max()))
        self.assertLessEqual(err, rt_bound(s, dose.max()))

    def test_doc_example(self):
        """docs/dicom.md's Python blocks, run as printed beside the files they
        name; its plan is this test's, and the figures it quotes this run's."""
        with open(DOC) as f:
            doc = f.read()
        blocks = re.findall(r"^```python\n(.*?)^```$", doc, flags=re.S | re.M)
        self.assertTrue(blocks, "no ```python block in docs/dicom.md")
        for b in blocks:
            r = subprocess.run([sys.executable, "-c", b], cwd=TMP, capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, "docs/dicom.md's example failed:\n%s%s" % (r.stdout, r.stderr))
            self.assertTrue(r.stdout.strip(), "docs/dicom.md's example printed nothing")
        # The page's plan is tests/plans/ct_small.yaml, the data files named bare.
        plan = re.findall(r"^```yaml\n(.*?)^```$", doc, flags=re.S | re.M)
        with open(PLAN) as f:
            ours = "".join(l for l in f if not l.startswith("#")).replace("../../data/", "")
        self.assertEqual(plan, [ours])
        quoted = re.search(r"R80 / R20 +([0-9.]+) / ([0-9.]+) mm", doc)
        with h5py.File(RESULT, "r") as f:
            run = ["%.3f" % float(f["summary/" + k][()]) for k in ("R80_mm", "R20_mm")]
        self.assertEqual(list(quoted.groups()), run, "docs/dicom.md quotes R80 / R20 of another run")


class Scenarios(unittest.TestCase):
    def test_each_scenario(self):
        """The small test plan on a water CT (a MetaImage of 0 HU) with two range
        errors: each scenario's dose in its own RT Dose and MetaImage."""
        water = dicom_fixture.write_mhd(os.path.join(TMP, "water.mhd"), np.zeros((1, 40, 40)), (1, 1, 1), (-20, -20, 0))
        ct = os.path.join(TMP, "water.h5")
        r = dicom_fixture.import_ct(water, ct, "--isocentre=0,0,0", "--angle", "0", "--nz", "24", "--nx", "21",
                                    "--dz", "0.5")
        self.assertEqual(r.returncode, 0, r.stderr)
        res = post_fixture.simulate(os.path.join(TMP, "scen.h5"), "geometry.ct.file=" + ct,
                                    "geometry.ct.calibration=" + os.path.join(post_fixture.ROOT, "data",
                                                                              "ct_schneider2000.csv"),
                                    "scenarios.range_error_percent=[-3, 3]")
        out = os.path.join(TMP, "scen_dose")
        r = post_fixture.tool("smx2d-export-dose", res, "--out", out, "--scenarios")
        self.assertEqual(r.returncode, 0, r.stderr)
        with h5py.File(res, "r") as f:
            doses = [f["scenarios/%03d/dose/dose_Gy" % i][()] for i in range(3)]
        self.assertFalse(np.array_equal(doses[1], doses[2]))
        for name, dose in zip(("dose", "scenario_001", "scenario_002"), doses):
            ds = pydicom.dcmread(os.path.join(out, name + ".dcm"))
            s = float(ds.DoseGridScaling)
            self.assertLessEqual(float(np.max(np.abs(ds.pixel_array * s - dose))), rt_bound(s, dose.max()), name)
            np.testing.assert_array_equal(read_mhd(os.path.join(out, name + ".mhd"))[1][0], dose)
        self.assertIn("range error +3 %", pydicom.dcmread(os.path.join(out, "scenario_002.dcm")).SeriesDescription)


class Refusals(unittest.TestCase):
    def refused(self, words, *args):
        out = os.path.join(TMP, "refused_out")
        r = post_fixture.tool("smx2d-export-dose", *args, "--out", out)
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        for w in words:
            self.assertIn(w, r.stderr)
        self.assertFalse(os.path.exists(out), "an output directory was made although refused")

    def test_no_ct(self):
        plain = post_fixture.simulate(os.path.join(TMP, "plain.h5"))
        self.refused(["plain.h5", "no geometry.ct.file", "--ct CT.h5"], plain)
        # A CT input that smx2d-import-ct did not write says nothing of the patient.
        shipped = os.path.join(post_fixture.ROOT, "data", "ct_phantom.h5")
        self.refused(["ct_phantom.h5", "not a CT input written by smx2d-import-ct"], plain, "--ct", shipped)

    def test_bad_result(self):
        self.refused(["nothing.h5", "no such file"], os.path.join(TMP, "nothing.h5"))
        self.refused(["--format pdf", "expected dicom, mhd"], RESULT, "--format", "pdf")
        self.refused(["no /scenarios"], RESULT, "--scenarios")


if __name__ == "__main__":
    post_fixture.main()
