"""/geometry in the result file, read back with h5py: a run of a plan with two
shapes writes the material index, density, media and materials of every cell,
and the XDMF sidecar lists the material map beside the dose; a run in one
material writes the uniform map, which smx2d-plot does not draw. The shipped
examples' dry runs list their media, and their data files are what
scripts/make_geometry_examples.py writes."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET

import h5py
import numpy as np

import post_fixture
from smx2d_post.result import read_result

LIBRARY = ("water", "air", "lung", "adipose", "muscle", "bone_compact", "bone_cortical", "pmma",
           "polyethylene", "aluminium", "titanium", "graphite")


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def setUpModule():
    global TMP, PLAN
    TMP = tempfile.mkdtemp(prefix="smx2d-test-geometry-")
    # Stand-in tables for the library keys (the map does not read them).
    os.mkdir(os.path.join(TMP, "materials"))
    water = os.path.join(post_fixture.ROOT, "data", "pstar_water.h5")
    for key in LIBRARY:
        os.symlink(water, os.path.join(TMP, "materials", key + ".h5"))
    # tests/plans/tiny.yaml's grid (24 x 21 cells of 0.5 mm: z 0..12, x -5.25..5.25) with a
    # bone slab over z [2, 4) and a lung block over z [6, 8), x [-1, 1).
    with open(post_fixture.TINY) as f:
        text = f.read().replace("../../data/pstar_water.h5", water)
    text += ("geometry:\n  shapes:\n    - {material: bone_compact, z_mm: [2, 4]}\n"
             "    - {material: lung, z_mm: [6, 8], x_mm: [-1, 1], density_g_cm3: 0.26}\n")
    PLAN = os.path.join(TMP, "shapes.yaml")
    with open(PLAN, "w") as f:
        f.write(text)


def tearDownModule():
    shutil.rmtree(TMP, ignore_errors=True)


class GeometryOutput(unittest.TestCase):
    def test_shapes_written(self):
        out = post_fixture.simulate(os.path.join(TMP, "shapes.h5"), plan=PLAN)
        with h5py.File(out, "r") as f:
            g = f["geometry"]
            z, x = f["axes/z_centres_mm"][()], f["axes/x_centres_mm"][()]
            index, density = g["material_index"][()], g["density_g_cm3"][()]
            self.assertEqual(index.dtype, np.uint8)
            self.assertEqual(density.dtype, np.float32)
            self.assertEqual(index.shape, f["dose/dose_Gy"].shape)
            names = [text(n) for n in g["materials"][()]]
            self.assertEqual(names, ["water", "bone_compact", "lung"])
            self.assertEqual(text(g["material_index"].attrs["names"]), "water,bone_compact,lung")
            zz, xx = np.meshgrid(z, x, indexing="ij")
            bone = (zz >= 2) & (zz < 4)
            lung = (zz >= 6) & (zz < 8) & (xx >= -1) & (xx < 1)
            want = np.where(bone, 1, np.where(lung, 2, 0))
            np.testing.assert_array_equal(index, want)
            want_rho = np.where(bone, 1.85, np.where(lung, 0.26, 1.0)).astype(np.float32)
            np.testing.assert_array_equal(density, want_rho)
            media = g["medium_index"][()]
            np.testing.assert_array_equal(g["medium_material"][()][media], index)
            np.testing.assert_array_equal(g["medium_density_g_cm3"][()][media].astype(np.float32), density)
            self.assertEqual(int(g.attrs["n_media"]), 3)
            self.assertIn("2 shapes on top", text(g.attrs["rule"]))
            tables = [text(t) for t in g["material_tables"][()]]
            self.assertTrue(tables[1].endswith("materials/bone_compact.h5"), tables)
            self.assertEqual(len(g["material_table_sha256"][()][1]), 64)
        xdmf = ET.parse(os.path.join(TMP, "shapes.xdmf")).getroot()
        items = {a.get("Name"): a.find("DataItem") for a in xdmf.iter("Attribute")}
        self.assertEqual(items["material_index"].text, "shapes.h5:/geometry/material_index")
        self.assertEqual(items["material_index"].get("NumberType"), "UChar")
        self.assertEqual(items["density_g_cm3"].get("Precision"), "4")
        # smx2d-plot finds the map and its names.
        res = read_result(out)
        self.assertEqual(res.material.names, ["water", "bone_compact", "lung"])

    def test_uniform_written_not_drawn(self):
        out = post_fixture.simulate(os.path.join(TMP, "uniform.h5"))
        with h5py.File(out, "r") as f:
            g = f["geometry"]
            self.assertEqual(text(g.attrs["rule"]), "uniform")
            self.assertFalse(g["material_index"][()].any())
            self.assertTrue((g["density_g_cm3"][()] == 1.0).all())
        self.assertIsNone(read_result(out).material)



class ShippedExamples(unittest.TestCase):
    def dry_run(self, name):
        env = dict(os.environ, SMX2D_DATA_DIR=TMP)  # the stand-in library tables
        r = subprocess.run([os.path.join(post_fixture.BUILD, "smx2d-sim"),
                            os.path.join(post_fixture.ROOT, "config", name + ".yaml"), "--dry-run"],
                           capture_output=True, text=True, env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        m = re.search(r"^media: +(\d+) medi(?:um|a) of (\d+) materials? \((.*)\)$", r.stdout, re.M)
        self.assertIsNotNone(m, r.stdout)
        return int(m.group(1)), int(m.group(2)), m.group(3), r.stdout

    def test_slab_bone(self):
        media, materials, rule, out = self.dry_run("slab_bone")
        self.assertEqual((media, materials), (2, 2))
        # 2 cm of bone on 0.5 mm cells: 40 rows of 81 cells.
        self.assertIn("medium 1: bone_compact at 1.85 g/cm3, 3240 cells", out)

    def test_phantom_map(self):
        media, materials, rule, out = self.dry_run("phantom_map")
        self.assertEqual((media, materials), (6, 6))
        self.assertIn("resampled", rule)
        # The 4 x 4 mm titanium pin on 0.5 mm cells.
        self.assertIn("medium 5: titanium at 4.54 g/cm3, 64 cells", out)

    def test_ct_phantom(self):
        media, materials, rule, out = self.dry_run("ct_phantom")
        self.assertLessEqual(media, 255)
        self.assertEqual(materials, 7)  # water (the background) and the calibration's six
        self.assertIn("densities quantised", rule)

    def test_data_files_regenerate(self):
        out = os.path.join(TMP, "regenerated")
        os.mkdir(out)
        r = subprocess.run([sys.executable, os.path.join(post_fixture.SCRIPTS, "make_geometry_examples.py"), out],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        for name in ("phantom_map.h5", "ct_phantom.h5"):
            with h5py.File(os.path.join(out, name), "r") as new, \
                    h5py.File(os.path.join(post_fixture.ROOT, "data", name), "r") as old:
                self.assertEqual(sorted(new), sorted(old), name)
                for k in new:
                    np.testing.assert_array_equal(new[k][()], old[k][()], err_msg="%s:%s: run "
                                                  "scripts/make_geometry_examples.py" % (name, k))
                self.assertEqual(dict(new.attrs), dict(old.attrs), name)


if __name__ == "__main__":
    post_fixture.main()
