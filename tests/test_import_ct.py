"""smx2d-import-ct on the CT slice pydicom ships (a real scanner's image that
nobody here wrote) and on MetaImage volumes this test writes: the CT numbers
it puts in each plan cell against the image's own pixels (exactly where the
grid sits on the pixel centres, against SciPy's bilinear interpolation along an
oblique beam), the beam's direction for each patient position against IEC
61217 worked out by hand, the geometry it records; and its refusals (a
truncated file, an MR image, a missing tag, a gantry tilt, uneven slices,
compressed pixel data it cannot decode), each with the file, what is wrong and
what was expected, a non-zero exit and no output file.

    python3 tests/test_import_ct.py BUILD_DIR"""
import os
import shutil
import tempfile
import unittest

import h5py
import numpy as np
import pydicom
from pydicom.encaps import encapsulate
from scipy.ndimage import map_coordinates

import dicom_fixture
import post_fixture
from smx2d_dicom.beam_frame import beam_frame

# HU written as float32 from float64 sums of four weighted pixels, whose weights
# are 0 or 1 only up to the rounding of positions (1e-13 of a pixel): 1e-3 HU.
HU_TOL = 1e-3


def setUpModule():
    global TMP, SRC, PIX, HU
    TMP = tempfile.mkdtemp(prefix="smx2d-test-import-")
    SRC = pydicom.dcmread(dicom_fixture.ct_small())
    PIX = SRC.pixel_array.astype(float)
    HU = PIX * float(SRC.RescaleSlope) + float(SRC.RescaleIntercept)


def tearDownModule():
    shutil.rmtree(TMP, ignore_errors=True)


def attrs(path):
    with h5py.File(path, "r") as f:
        return f["hu"][()], {k: (v.decode() if isinstance(v, bytes) else v) for k, v in f.attrs.items()}


def pixel_centre(r, c):
    """Patient (x, y) of CT_small's pixel row r, column c (its rows and columns run along +y and +x)."""
    ipp, sp = np.array(SRC.ImagePositionPatient, dtype=float), [float(v) for v in SRC.PixelSpacing]
    return ipp[0] + c * sp[1], ipp[1] + r * sp[0]


class Frame(unittest.TestCase):
    def test_iec_directions(self):
        # Worked out by hand from IEC 61217 (gantry 0: the beam comes down from the
        # ceiling; 90: the source at the right of someone at the couch's foot looking
        # at the gantry), in DICOM's LPS patient axes: supine, down is posterior (+y);
        # prone, anterior (-y). At 90: head first supine, the source is at the
        # patient's left, so the beam goes right (-x); feet first supine, the other way.
        cases = {("HFS", 0): (0, 1), ("HFS", 90): (-1, 0), ("HFS", 180): (0, -1), ("HFS", 270): (1, 0),
                 ("FFS", 0): (0, 1), ("FFS", 90): (1, 0), ("HFP", 0): (0, -1), ("HFP", 90): (1, 0),
                 ("FFP", 0): (0, -1), ("FFP", 90): (-1, 0)}
        for (pos, angle), d in cases.items():
            f = beam_frame(angle, pos, (1.0, 2.0, 3.0), 10.0)
            np.testing.assert_allclose(f.depth_dir, d + (0,), atol=1e-15, err_msg="%s %d" % (pos, angle))
            # The lateral axis is the beam's eye view's x (IEC gantry X): at gantry 0,
            # head first supine, the patient's left (+x); it turns with the gantry.
            self.assertAlmostEqual(float(np.dot(f.depth_dir, f.lateral_dir)), 0.0, places=15)
            np.testing.assert_allclose(f.to_patient(10.0, 0.0), (1.0, 2.0, 3.0), atol=1e-12)
        np.testing.assert_allclose(beam_frame(0, "HFS", (0, 0, 0), 0).lateral_dir, (1, 0, 0), atol=1e-15)
        np.testing.assert_allclose(beam_frame(90, "HFS", (0, 0, 0), 0).lateral_dir, (0, 1, 0), atol=1e-15)
        with self.assertRaises(ValueError):
            beam_frame(0, "HFDL", (0, 0, 0), 0)


class CTSmall(unittest.TestCase):
    def test_grid_on_pixel_centres(self):
        """At gantry 90 (feet first supine: the beam along +x, the plan's x along
        +y) on cells of the pixel size, each cell is a pixel: its HU exactly."""
        sp = float(SRC.PixelSpacing[0])
        r0, c0, nz, nx = 60, 40, 60, 41
        iso = pixel_centre(r0, c0) + (float(SRC.ImagePositionPatient[2]),)
        out = os.path.join(TMP, "aligned.h5")
        r = dicom_fixture.import_ct(dicom_fixture.CT_SMALL, out, "--isocentre=%.17g,%.17g,%.17g" % iso,
                                    "--angle", "90", "--nz", str(nz), "--nx", str(nx), "--dz", repr(sp),
                                    "--iso-depth", repr(30.5 * sp))
        self.assertEqual(r.returncode, 0, r.stderr)
        hu, a = attrs(out)
        want = HU[r0 - 20:r0 + 21, c0 - 30:c0 + 30].T  # [iz][ix]: depth along columns, lateral along rows
        self.assertEqual(hu.shape, (nz, nx))
        np.testing.assert_allclose(hu, want, atol=HU_TOL, rtol=0)
        # The geometry it records.
        self.assertEqual(a["frame_of_reference_uid"], SRC.FrameOfReferenceUID)
        self.assertEqual(a["dicom_StudyInstanceUID"], SRC.StudyInstanceUID)
        self.assertEqual(a["slice_position_mm"], float(SRC.ImagePositionPatient[2]))
        np.testing.assert_array_equal(a["pixel_spacing_mm"], [float(v) for v in SRC.PixelSpacing])
        self.assertEqual(a["beam_angle_deg"], 90.0)
        self.assertEqual(a["patient_position"], "FFS")
        np.testing.assert_array_equal(a["isocentre_mm"], iso)
        self.assertEqual(a["source_file"], os.path.abspath(dicom_fixture.CT_SMALL))
        self.assertEqual(a["source_format"], "DICOM CT")
        np.testing.assert_allclose(a["beam_direction"], (1, 0, 0), atol=1e-15)
        np.testing.assert_allclose(a["lateral_direction"], (0, 1, 0), atol=1e-15)
        self.assertEqual((a["dz_mm"], a["dx_mm"], a["z0_mm"], a["x0_mm"]), (sp, sp, 0.0, -0.5 * nx * sp))
        self.assertEqual((a["rescale_slope"], a["rescale_intercept"]), (1.0, -1024.0))
        self.assertEqual(a["cells_outside"], 0)
        self.assertIn("slice 1 of 1, at z = -75.7 mm", r.stdout)
        self.assertIn("grid.space: {nz: 60, nx: 41", r.stdout)

    def test_oblique_beam(self):
        """Gantry 30, feet first supine: the beam along (sin 30, cos 30) in the
        patient's (x, y); every cell against SciPy's bilinear interpolation of the
        pixels at its centre, worked out here from that direction alone."""
        iso = (-116.0, -137.0, -75.7)
        nz, nx, dz, dx, depth = 80, 30, 0.5, 0.7, 20.0
        out = os.path.join(TMP, "oblique.h5")
        r = dicom_fixture.import_ct(dicom_fixture.CT_SMALL, out, "--isocentre=-116,-137,-75.7", "--angle", "30",
                                    "--nz", str(nz), "--nx", str(nx), "--dz", str(dz), "--dx", str(dx),
                                    "--iso-depth", str(depth))
        self.assertEqual(r.returncode, 0, r.stderr)
        hu, a = attrs(out)
        s, c = np.sin(np.radians(30)), np.cos(np.radians(30))
        # The plan's x is IEC gantry X: feet first supine, at gantry 0 the
        # patient's right (-x), turning with the gantry to the floor (+y) at 90.
        d, u = np.array([s, c]), np.array([-c, s])
        z = (np.arange(nz) + 0.5) * dz - depth
        x = -0.5 * nx * dx + (np.arange(nx) + 0.5) * dx
        p = np.array(iso[:2]) + z[:, None, None] * d + x[None, :, None] * u
        ipp, sp = np.array(SRC.ImagePositionPatient, dtype=float), [float(v) for v in SRC.PixelSpacing]
        rows, cols = (p[..., 1] - ipp[1]) / sp[0], (p[..., 0] - ipp[0]) / sp[1]
        self.assertTrue(rows.min() > 0 and cols.min() > 0 and rows.max() < 127 and cols.max() < 127)
        want = map_coordinates(HU, [rows, cols], order=1)
        np.testing.assert_allclose(hu, want, atol=HU_TOL, rtol=0)
        np.testing.assert_allclose(a["lateral_direction"][:2], u, atol=1e-15)

    def test_outside_the_image(self):
        """Cells beyond the image get --outside-hu, and are counted."""
        out = os.path.join(TMP, "outside.h5")
        r = dicom_fixture.import_ct(dicom_fixture.CT_SMALL, out, "--isocentre=-116,-137,-75.7", "--angle", "90",
                                    "--nz", "200", "--nx", "10", "--dz", "0.5", "--outside-hu", "-1010")
        self.assertEqual(r.returncode, 0, r.stderr)
        hu, a = attrs(out)
        # The grid's depth reaches 50 mm either side of the isocentre along +x;
        # the image spans x = -158.5 .. -73.8 mm (pixel edges): rows past it are air.
        z = (np.arange(200) + 0.5) * 0.5 - 50.0 - 116.0  # patient x of each row
        beyond = (z < -158.1358 - 0.5 * 0.661468) | (z > -158.1358 + 127.5 * 0.661468)
        self.assertTrue(np.all(hu[beyond] == -1010.0) and np.all(hu[~beyond] > -1000.0))
        self.assertEqual(a["cells_outside"], 10 * int(beyond.sum()))


class MetaImage(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # Three slices 2.5 mm apart at z = -10, -7.5, -5 mm, 30 x 40 pixels of
        # 1 x 0.8 mm (columns x rows); each pixel's HU says where it is.
        k, j, i = np.meshgrid(np.arange(3), np.arange(40), np.arange(30), indexing="ij")
        cls.values = (1000 * k + 20 * j + i - 500).astype(np.int16)
        cls.offset = (-15.0, -20.0, -10.0)

    def volume(self, name, **kw):
        return dicom_fixture.write_mhd(os.path.join(TMP, name), self.values, (1.0, 0.8, 2.5), self.offset, **kw)

    def test_slice_and_directions(self):
        """The slice nearest the isocentre's z; head first supine by default
        (MetaImage records no position): gantry 0 runs the beam along +y, the
        image's rows, and the plan's x along +x, its columns."""
        for src in (self.volume("vol.mhd"), self.volume("vol.mha", local=True, compressed=True)):
            out = os.path.join(TMP, os.path.basename(src) + ".h5")
            # Isocentre on pixel (j = 20, i = 15) of the middle slice, cells of 0.8 x 1 mm.
            r = dicom_fixture.import_ct(src, out, "--isocentre=0,-4,-7.2", "--angle", "0", "--nz", "30",
                                        "--nx", "21", "--dz", "0.8", "--dx", "1", "--iso-depth", str(15.5 * 0.8))
            self.assertEqual(r.returncode, 0, r.stderr)
            hu, a = attrs(out)
            want = self.values[1, 5:35, 5:26].astype(float)
            np.testing.assert_allclose(hu, want, atol=HU_TOL, rtol=0)
            self.assertEqual((a["slice_position_mm"], a["slice_index"], a["n_slices"]), (-7.5, 1, 3))
            self.assertEqual((a["patient_position"], a["source_format"], a["frame_of_reference_uid"]),
                             ("HFS", "MetaImage", ""))

    def test_refusals(self):
        cases = {
            "truncated": (dict(), lambda p: _cut(p[:-4] + ".raw", 1000), ["truncated", "bytes of data, expected"]),
            "tilted": (dict(matrix=(1, 0, 0, 0, 0.94, 0.34, 0, -0.34, 0.94)), None, ["not axial"]),
            "two_d": (dict(), lambda p: _edit(p, "NDims = 3", "NDims = 2"), ["NDims", "expected 3"]),
            "no_spacing": (dict(), lambda p: _edit(p, "ElementSpacing", "ElementSpasing"), ["ElementSpacing"]),
        }
        for name, (kw, spoil, words) in cases.items():
            src = self.volume("bad_%s.mhd" % name, **kw)
            if spoil:
                spoil(src)
            refused(self, src, words)
        refused(self, self.volume("far.mhd"), ["no slice at z = -75.7 mm", "-10 .. -5 mm"])


def _cut(path, n):
    with open(path, "rb") as f:
        data = f.read()
    with open(path, "wb") as f:
        f.write(data[:n])


def _edit(path, old, new):
    with open(path) as f:
        text = f.read()
    with open(path, "w") as f:
        f.write(text.replace(old, new))


def refused(test, src, words, *extra):
    """src is refused: exit 2, every word in the message, which names the input,
    and no output file nor a partial one."""
    out = os.path.join(TMP, "refused", os.path.basename(src) + ".h5")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    r = dicom_fixture.import_ct(src, out, "--isocentre=-116,-137,-75.7", "--angle", "90", "--nz", "40",
                                "--nx", "20", "--dz", "0.5", *extra)
    test.assertEqual(r.returncode, 2, "%s: %s%s" % (src, r.stdout, r.stderr))
    msg = r.stderr
    test.assertTrue(msg.startswith("smx2d-import-ct: error: "), msg)
    test.assertIn(os.path.basename(src), msg)
    for w in words:
        test.assertIn(w, msg)
    test.assertFalse(os.path.exists(out), "%s written although refused" % out)
    test.assertEqual(dicom_fixture.leftovers(os.path.dirname(out)), [])
    return msg


def dicom_copy(name, edit=None, **tags):
    """CT_small with some tags changed (or deleted: None), written under TMP/name."""
    ds = pydicom.dcmread(dicom_fixture.CT_SMALL)
    for k, v in tags.items():
        if v is None:
            delattr(ds, k)
        else:
            setattr(ds, k, v)
    if edit:
        edit(ds)
    path = os.path.join(TMP, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    ds.save_as(path)
    return path


class Refusals(unittest.TestCase):
    def test_truncated(self):
        with open(dicom_fixture.CT_SMALL, "rb") as f:
            data = f.read()
        for n, words in ((20000, ["truncated", "pixel data has", "expected 32768"]),
                         (4000, ["truncated"]), (100, ["not a DICOM file"])):
            path = os.path.join(TMP, "cut_%d.dcm" % n)
            with open(path, "wb") as f:
                f.write(data[:n])
            refused(self, path, words)

    def test_mr(self):
        # pydicom's own MR slice, and the CT slice relabelled as MR.
        mr = os.path.join(os.path.dirname(dicom_fixture.CT_SMALL), "MR_small.dcm")
        if os.path.isfile(mr):
            shutil.copy(mr, os.path.join(TMP, "MR_small.dcm"))
            refused(self, os.path.join(TMP, "MR_small.dcm"), ["modality MR", "expected CT"])
        refused(self, dicom_copy("as_mr.dcm", Modality="MR", SOPClassUID="1.2.840.10008.5.1.4.1.1.4"),
                ["modality MR", "MR Image Storage", "expected CT"])

    def test_missing_tags(self):
        for tag, code in (("PixelSpacing", "(0028,0030)"), ("RescaleIntercept", "(0028,1052)"),
                          ("ImagePositionPatient", "(0020,0032)"), ("FrameOfReferenceUID", "(0020,0052)")):
            refused(self, dicom_copy("no_%s.dcm" % tag, **{tag: None}), ["missing tag %s %s" % (tag, code)])
        refused(self, dicom_copy("no_position.dcm", PatientPosition=None), ["missing tag PatientPosition"])

    def test_geometry(self):
        refused(self, dicom_copy("tilt.dcm", GantryDetectorTilt="15"), ["gantry tilt 15 deg", "expected 0"])
        refused(self, dicom_copy("coronal.dcm", ImageOrientationPatient=[1, 0, 0, 0, 0, -1]), ["not axial"])
        refused(self, dicom_copy("far.dcm"), ["no slice at z = -60 mm", "-75.7"], "--isocentre=-116,-137,-60")

    def test_series(self):
        """A directory: one slice missing (uneven spacing), sheared slices, no CT at all."""
        def stack(name, zs, xs=None):
            for n, z in enumerate(zs):
                x = float(SRC.ImagePositionPatient[0]) if xs is None else xs[n]
                dicom_copy(os.path.join(name, "s%d.dcm" % n), SOPInstanceUID=pydicom.uid.generate_uid(),
                           ImagePositionPatient=[x, float(SRC.ImagePositionPatient[1]), z])
            return os.path.join(TMP, name)
        refused(self, stack("uneven", [-80.7, -75.7, -70.7, -60.7]),
                ["non-uniform slice spacing", "10 mm between z = -70.7 and -60.7", "expected even spacing"])
        refused(self, stack("sheared", [-80.7, -75.7, -70.7], [-160.0, -158.0, -156.0]),
                ["x, y positions move by up to 4 mm", "gantry tilt"])
        ok = stack("even", [-80.7, -75.7, -70.7])
        out = os.path.join(TMP, "series.h5")
        r = dicom_fixture.import_ct(ok, out, "--isocentre=-116,-137,-74", "--angle", "90", "--nz", "20",
                                    "--nx", "10", "--dz", "0.5")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual((attrs(out)[1]["slice_index"], attrs(out)[1]["slice_position_mm"]), (1, -75.7))
        mr_only = os.path.join(TMP, "mr_only")
        dicom_copy(os.path.join("mr_only", "a.dcm"), Modality="MR")
        with open(os.path.join(mr_only, "README"), "w") as f:
            f.write("not DICOM\n")
        refused(self, mr_only, ["no CT image among its files", "1 MR image", "expected a CT series"])

    def test_compressed_without_decoder(self):
        """JPEG-LS pixel data, which pydicom decodes only with a plug-in
        (gdcm, pylibjpeg or jpeg_ls) that is not installed here; where one is,
        these bytes are not JPEG-LS and it fails as well: refused either way."""
        def jpeg_ls(ds):
            ds.file_meta.TransferSyntaxUID = "1.2.840.10008.1.2.4.80"
            ds.PixelData = encapsulate([b"\xff\xd8\xff\xf7 not a JPEG-LS stream"])
            ds["PixelData"].VR = "OB"
            ds["PixelData"].is_undefined_length = True
        msg = refused(self, dicom_copy("jpegls.dcm", jpeg_ls), ["compressed pixel data", "JPEG-LS Lossless",
                                                                "1.2.840.10008.1.2.4.80"])
        self.assertIn("expected uncompressed data, or a decoder", msg)

    def test_existing_output(self):
        out = os.path.join(TMP, "exists.h5")
        with open(out, "w") as f:
            f.write("keep me")
        r = dicom_fixture.import_ct(dicom_fixture.CT_SMALL, out, "--isocentre=-116,-137,-75.7", "--angle", "90",
                                    "--nz", "20", "--nx", "10", "--dz", "0.5")
        self.assertEqual(r.returncode, 2)
        self.assertIn("exists; --overwrite replaces it", r.stderr)
        with open(out) as f:
            self.assertEqual(f.read(), "keep me")


if __name__ == "__main__":
    post_fixture.main()
