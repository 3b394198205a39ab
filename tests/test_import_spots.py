"""smx2d-import-spots on RT Ion Plans this test writes with pydicom, for the
beam docs/dicom.md imports pydicom's CT slice for (gantry 180, feet first
supine): the spots in the slice's plane, with their energies, lateral
positions, weights in MU times protons per MU and sigmas, against what the plan
says; the spot map loads in smx2d-sim's dry run; and the plans it refuses (a
gantry, isocentre, frame or couch angle other than the CT input's, no spot in
the plane, a range shifter, not a scanned beam, not an RT Ion Plan).

    python3 tests/test_import_spots.py BUILD_DIR"""
import os
import shutil
import subprocess
import tempfile
import unittest

import numpy as np
import pydicom
from pydicom.dataset import Dataset, FileDataset, FileMetaDataset
from pydicom.uid import ExplicitVRLittleEndian, generate_uid

import dicom_fixture
import post_fixture

ISO = (-121.1, -125.0, -75.7)
IMPORT = ["--isocentre=-121.1,-125,-75.7", "--angle", "180", "--nz", "100", "--nx", "48", "--dz", "0.5",
          "--iso-depth", "30"]
# Two layers; per layer a 3 x 3 grid of spots 4 mm apart in X and 5 mm in Y.
# Feet first, IEC Y points to the feet: Y = +5 lies at z = -80.7, outside the
# 5 mm slice at -75.7 (half its thickness is the default tolerance).
LAYERS = (70.0, 65.0)
XS, YS = (-4.0, 0.0, 4.0), (-5.0, 0.0, 5.0)
FWHM_MM = 6.0
BEAM_MU = 12.5


def setUpModule():
    global TMP, CT, FRAME
    TMP = tempfile.mkdtemp(prefix="smx2d-test-spots-")
    CT = os.path.join(TMP, "ct_small.h5")
    r = dicom_fixture.import_ct(dicom_fixture.ct_small(), CT, *IMPORT)
    if r.returncode != 0:
        raise AssertionError("smx2d-import-ct failed: %s" % r.stderr)
    FRAME = str(pydicom.dcmread(dicom_fixture.CT_SMALL).FrameOfReferenceUID)


def tearDownModule():
    shutil.rmtree(TMP, ignore_errors=True)


def weight(layer, ix, iy):
    return 0.1 * (1 + ix + 3 * iy) * (1 + layer)


def ion_beam(number, gantry=180.0, iso=ISO, couch=0.0, shifters=0, scan="MODULATED", ys=YS):
    b = Dataset()
    b.BeamNumber, b.BeamName, b.BeamType, b.RadiationType = number, "B%d" % number, "STATIC", "PROTON"
    b.TreatmentDeliveryType, b.ScanMode, b.NumberOfRangeShifters = "TREATMENT", scan, shifters
    b.ReferencedPatientSetupNumber = 1
    cps, total = [], 0.0
    for layer, energy in enumerate(LAYERS):
        pos = [v for y in ys for x in XS for v in (x, y)]
        w = [weight(layer, ix, iy) for iy in range(len(ys)) for ix in range(len(XS))]
        for k, ws in enumerate((w, [0.0] * len(w))):  # a layer: its spots, then a control point closing it
            cp = Dataset()
            cp.ControlPointIndex, cp.NominalBeamEnergy, cp.CumulativeMetersetWeight = len(cps), energy, total
            cp.NumberOfScanSpotPositions, cp.ScanSpotPositionMap, cp.ScanSpotMetersetWeights = len(w), pos, ws
            cp.ScanningSpotSize = [FWHM_MM, FWHM_MM]
            if not cps:
                cp.GantryAngle, cp.PatientSupportAngle, cp.BeamLimitingDeviceAngle = gantry, couch, 0.0
                cp.IsocenterPosition = list(iso)
            cps.append(cp)
            total += sum(ws)
    b.IonControlPointSequence = cps
    b.NumberOfControlPoints, b.FinalCumulativeMetersetWeight = len(cps), total
    return b


def write_plan(name, beams=None, frame=None, position="FFS", sop="1.2.840.10008.5.1.4.1.1.481.8"):
    meta = FileMetaDataset()
    meta.MediaStorageSOPClassUID, meta.MediaStorageSOPInstanceUID = sop, generate_uid()
    meta.TransferSyntaxUID = ExplicitVRLittleEndian
    ds = FileDataset(None, {}, file_meta=meta, preamble=b"\0" * 128)
    ds.is_little_endian, ds.is_implicit_VR = True, False
    ds.SOPClassUID, ds.SOPInstanceUID, ds.Modality = sop, meta.MediaStorageSOPInstanceUID, "RTPLAN"
    ds.FrameOfReferenceUID = FRAME if frame is None else frame
    setup = Dataset()
    setup.PatientSetupNumber, setup.PatientPosition = 1, position
    ds.PatientSetupSequence = [setup]
    beams = beams or [ion_beam(1)]
    ds.IonBeamSequence = beams
    fg = Dataset()
    refs = []
    for b in beams:
        rb = Dataset()
        rb.ReferencedBeamNumber, rb.BeamMeterset = b.BeamNumber, BEAM_MU
        refs.append(rb)
    fg.ReferencedBeamSequence = refs
    ds.FractionGroupSequence = [fg]
    path = os.path.join(TMP, name)
    ds.save_as(path, write_like_original=False)
    return path


def import_spots(plan, out, *args):
    return post_fixture.tool("smx2d-import-spots", plan, "--ct", CT, "--out", out, *args)


def read_csv(path):
    with open(path) as f:
        lines = [l for l in f if not l.startswith("#")]
    return lines[0].strip(), np.loadtxt(lines[1:], delimiter=",", ndmin=2)


class Spots(unittest.TestCase):
    def test_in_plane(self):
        out = os.path.join(TMP, "spots.csv")
        r = import_spots(write_plan("plan.dcm"), out, "--protons-per-mu", "1e9")
        self.assertEqual(r.returncode, 0, r.stderr)
        header, rows = read_csv(out)
        self.assertEqual(header, "energy_MeV, x_mm, weight, sigma_x_mm")
        total = sum(weight(l, ix, iy) for l in range(2) for ix in range(3) for iy in range(3))
        # The middle row (Y = 0) of each layer: the spots in the plane; their MU the
        # beam's 12.5 MU shared by meterset weight.
        want = [(E, x, weight(l, ix, 1) / total * BEAM_MU * 1e9, FWHM_MM / 2.354820045)
                for l, E in enumerate(LAYERS) for ix, x in enumerate(XS)]
        # The plan holds spot weights as 32-bit floats (VR FL, 6e-8 relative) and
        # the map writes 10 digits (5e-10): 1e-7.
        np.testing.assert_allclose(rows, np.array(want), rtol=1e-7, atol=0)
        self.assertIn("6 spots within 2.5 mm of z = -75.7 mm, 2 energies from 65 to 70 MeV", r.stdout)
        # The spot map is a plan's: the dry run of the docs' plan reads it.
        plan = os.path.join(post_fixture.ROOT, "tests", "plans", "ct_small.yaml")
        d = subprocess.run([os.path.join(post_fixture.BUILD, "smx2d-sim"), plan, "--dry-run", "--device", "cpu",
                            "--set", "geometry.ct.file=" + CT, "--set", "beam.spots_file=" + out,
                            "--output", os.path.join(TMP, "field.h5")], capture_output=True, text=True)
        self.assertEqual(d.returncode, 0, d.stdout + d.stderr)
        self.assertIn("6 spots from", d.stdout)
        # A wider plane takes the neighbouring rows too.
        r = import_spots(write_plan("plan_wide.dcm"), os.path.join(TMP, "wide.csv"), "--plane-tolerance", "5.5")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(read_csv(os.path.join(TMP, "wide.csv"))[1].shape, (18, 4))

    def test_choose_beam(self):
        plan = write_plan("two.dcm", [ion_beam(1, gantry=90.0), ion_beam(2)])
        refused(self, plan, ["2 treatment beams", "1 'B1', 2 'B2'", "--beam"])
        r = import_spots(plan, os.path.join(TMP, "beam2.csv"), "--beam", "B2")
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_refusals(self):
        refused(self, write_plan("gantry.dcm", [ion_beam(1, gantry=90.0)]),
                ["gantry 90 deg", "imported at 180 deg", "--angle 90"])
        refused(self, write_plan("iso.dcm", [ion_beam(1, iso=(-100.0, -125.0, -75.7))]),
                ["isocentre (-100, -125, -75.7)", "--isocentre=-100,-125,-75.7"])
        refused(self, write_plan("frame.dcm", frame="1.2.3.4"), ["frame of reference 1.2.3.4", "expected the same"])
        refused(self, write_plan("hfs.dcm", position="HFS"), ["patient position HFS", "imported FFS"])
        refused(self, write_plan("couch.dcm", [ion_beam(1, couch=10.0)]), ["couch (patient support) angle 10"])
        refused(self, write_plan("shifter.dcm", [ion_beam(1, shifters=1)]), ["range shifter"])
        refused(self, write_plan("uniform.dcm", [ion_beam(1, scan="UNIFORM")]), ["scan mode UNIFORM",
                                                                                 "expected MODULATED"])
        refused(self, write_plan("off_plane.dcm", [ion_beam(1, ys=(10.0, 20.0))]),
                ["none of its 12 spots lies within 2.5 mm of the slice at z = -75.7 mm", "-95.7, -85.7"])
        refused(self, dicom_fixture.CT_SMALL, ["SOP class CT Image Storage", "expected an RT Ion Plan"])
        beam = ion_beam(1)
        del beam.IonControlPointSequence[0].GantryAngle
        refused(self, write_plan("no_gantry.dcm", [beam]), ["missing tag GantryAngle (300A,011E)"])
        arc = ion_beam(1)
        arc.IonControlPointSequence[2].GantryAngle = 185.0
        refused(self, write_plan("arc.dcm", [arc]), ["the gantry turns"])


def refused(test, plan, words):
    out = os.path.join(TMP, "refused", "spots.csv")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    r = import_spots(plan, out)
    test.assertEqual(r.returncode, 2, "%s: %s%s" % (plan, r.stdout, r.stderr))
    test.assertTrue(r.stderr.startswith("smx2d-import-spots: error: %s" % plan), r.stderr)
    for w in words:
        test.assertIn(w, r.stderr)
    test.assertFalse(os.path.exists(out))
    test.assertEqual(dicom_fixture.leftovers(os.path.dirname(out)), [])


if __name__ == "__main__":
    post_fixture.main()
