"""The figures the user documents quote from a run of the quickstart plan agree
with this build's run, to the digits they print, so that they cannot go stale
(scripts/doc-figures.sh prints them all, to regenerate a table):

  docs/model.md               "Choosing the grid": the 100 MeV, 0.5 mm, shift row;
                              "The direction window": the default row
  docs/accuracy-and-speed.md  its grid table's and its step table's 0.5 mm rows
  docs/postprocessing.md      the smx2d-compare example (the quickstart against 99.7 MeV)
  README.md                   the excerpt of config/sobp_spots.csv

    python3 tests/test_doc_figures.py BUILD_DIR"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

import h5py

import post_fixture

ROOT = post_fixture.ROOT
PSTAR_100_MM = 77.07   # PSTAR's projected range at 100 MeV, as docs/model.md quotes it


def read(rel):
    with open(os.path.join(ROOT, rel)) as f:
        return f.read()


def quickstart(path, *sets):
    cmd = [os.path.join(post_fixture.BUILD, "smx2d-sim"), os.path.join(ROOT, "config", "quickstart.yaml"),
           "--device", "cpu", "--quiet", "--overwrite", "--output", path, "--set", "output.snapshot_steps=[]"]
    for s in sets:
        cmd += ["--set", s]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        raise AssertionError("%s exited %d: %s" % (" ".join(cmd), r.returncode, r.stderr))
    return path


def setUpModule():
    global TMP, RUN
    TMP = tempfile.mkdtemp(prefix="smx2d-test-doc-figures-")
    RUN = {}
    with h5py.File(quickstart(os.path.join(TMP, "quickstart.h5")), "r") as f:
        s = f["summary"]
        RUN = {k: float(s[k][()]) for k in ("R80_mm", "R20_mm", "peak_to_entrance", "lateral_rms_at_half_R80_mm")}
        names = f["tallies"].attrs["channel_names"]
        names = (names.decode() if isinstance(names, bytes) else names).split(",")
        RUN["theta_boundary"] = float(f["tallies/cumulative_weight"][()][names.index("theta_boundary")])


def tearDownModule():
    shutil.rmtree(TMP, ignore_errors=True)


def number(text):
    """A printed figure and half a unit of its last digit: ('+0.08 mm') -> (0.08, 0.005)."""
    m = re.search(r"([-+−]?\d+(?:\.(\d+))?(?:e([-+]?\d+))?)", text)
    if not m:
        raise AssertionError("no number in %r" % text)
    v = float(m.group(1).replace("−", "-"))
    digits = len(m.group(2) or "")
    exp = int(m.group(3) or 0)
    return v, 0.5 * 10.0 ** (exp - digits)


def cells(line):
    return [c.strip() for c in line.strip().strip("|").split("|")]


class DocFigures(unittest.TestCase):
    def agree(self, where, text, value):
        doc, half = number(text)
        self.assertLessEqual(abs(doc - value), half * 1.0001 + 1e-12,
                             "%s: the document says %s, this build's run gives %.6g "
                             "(sh scripts/doc-figures.sh prints the current figures)" % (where, text, value))

    def test_model_grid_row(self):
        beam = None
        for line in read("docs/model.md").splitlines():
            c = cells(line) if line.startswith("|") else []
            if len(c) >= 8 and c[0]:
                beam = c[0]
            if len(c) >= 8 and beam == "100 MeV" and c[1] == "0.5" and c[3] == "shift":
                where = "docs/model.md, Choosing the grid, 100 MeV 0.5 mm shift"
                self.agree(where + ", R80 - PSTAR", c[4], RUN["R80_mm"] - PSTAR_100_MM)
                self.agree(where + ", R80 - R20", c[5], RUN["R20_mm"] - RUN["R80_mm"])
                self.agree(where + ", peak/entrance", c[6], RUN["peak_to_entrance"])
                self.agree(where + ", lateral rms", c[7], RUN["lateral_rms_at_half_R80_mm"])
                return
        self.fail("docs/model.md: no 100 MeV, 0.5 mm, shift row")

    def test_model_window_row(self):
        rows = [cells(l) for l in read("docs/model.md").splitlines() if l.startswith("| 41 over ±20° (default)")]
        self.assertEqual(len(rows), 1, "docs/model.md: the direction window's default row")
        c = rows[0]
        where = "docs/model.md, The direction window, default row"
        self.agree(where + ", theta_boundary", c[2], RUN["theta_boundary"])
        self.agree(where + ", peak/entrance", c[3], RUN["peak_to_entrance"])
        self.agree(where + ", lateral rms", c[4], RUN["lateral_rms_at_half_R80_mm"])

    def test_accuracy_page(self):
        text = read("docs/accuracy-and-speed.md").splitlines()
        grid = [cells(l) for l in text if l.startswith("| 0.5 mm, 170 × 81 | shift")]
        self.assertEqual(len(grid), 1)
        where = "docs/accuracy-and-speed.md, the grid table's 0.5 mm shift row"
        self.agree(where + ", R80 - PSTAR", grid[0][2], RUN["R80_mm"] - PSTAR_100_MM)
        self.agree(where + ", R80 - R20", grid[0][3], RUN["R20_mm"] - RUN["R80_mm"])
        self.agree(where + ", peak/entrance", grid[0][4], RUN["peak_to_entrance"])
        self.agree(where + ", lateral rms", grid[0][5], RUN["lateral_rms_at_half_R80_mm"])
        step = [cells(l) for l in text if l.startswith("| 0.5 mm | 0.5 mm |")]
        self.assertEqual(len(step), 1)
        where = "docs/accuracy-and-speed.md, the step table's 0.5 mm row"
        self.agree(where + ", R80 - R20", step[0][2], RUN["R20_mm"] - RUN["R80_mm"])
        self.agree(where + ", peak/entrance", step[0][3], RUN["peak_to_entrance"])

    def test_compare_example(self):
        doc = read("docs/postprocessing.md")
        m = re.search(r"^    scripts/smx2d-compare quickstart.h5 q997.h5\n((?:    .*\n)+)", doc, flags=re.M)
        self.assertIsNotNone(m, "docs/postprocessing.md: the smx2d-compare example")
        shown = [l.strip() for l in m.group(1).splitlines()]
        quickstart(os.path.join(TMP, "q997.h5"), "beam.energy_MeV=99.7")
        r = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "smx2d-compare"), "quickstart.h5",
                            "q997.h5"], capture_output=True, text=True, cwd=TMP)
        self.assertEqual(r.returncode, 0, r.stderr)
        got = [l.strip() for l in r.stdout.splitlines()]
        self.assertEqual(shown, got, "docs/postprocessing.md's example is not what smx2d-compare prints now "
                                     "(sh scripts/doc-figures.sh build compare)")

    def test_readme_csv_excerpt(self):
        m = re.search(r"^    # config/sobp_spots.csv\n    (.*)\n    (.*)\n", read("README.md"), flags=re.M)
        self.assertIsNotNone(m)
        rows = [l for l in read("config/sobp_spots.csv").splitlines() if l and not l.startswith("#")]
        self.assertEqual([m.group(1), m.group(2)], rows[:2])


if __name__ == "__main__":
    post_fixture.main()
