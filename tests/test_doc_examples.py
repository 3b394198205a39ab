"""The Python examples of docs/postprocessing.md run as pasted: each ```python
block is taken out of the markdown and run with this interpreter (the one
tests/post.sh picks: /usr/bin/python3 with Debian's h5py where the PATH's has
none) in a directory holding the files it opens, made by the built binary on
the small test plan: quickstart.h5 (its psi snapshot at step 75, as the
quickstart plan's) and field.h5 (two spots, output.per_spot_dose). A block
that fails, or prints nothing where it should, fails the test with its
output; a block whose imports this interpreter lacks (scipy) is skipped.
Each block also runs as a reader pastes it into the interactive interpreter
(`python3 -i` reading it line by line), where a blank line inside a block
ends the block: the line after it then fails with an IndentationError.

    python3 tests/test_doc_examples.py BUILD_DIR"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

import post_fixture

DOC = os.path.join(post_fixture.ROOT, "docs", "postprocessing.md")


def python_blocks(path):
    """The ```python blocks of a markdown file, in order, as text."""
    with open(path) as f:
        return re.findall(r"^```python\n(.*?)^```$", f.read(), flags=re.S | re.M)


def setUpModule():
    global TMP
    TMP = tempfile.mkdtemp(prefix="smx2d-test-doc-")
    # The tiny plan's 30 MeV beam stops in about 20 steps; 75 steps keep it
    # running to the quickstart plan's snapshot step.
    post_fixture.simulate(os.path.join(TMP, "quickstart.h5"), "transport.steps=75",
                          "output.snapshot_steps=[75]")
    spots = os.path.join(TMP, "spots.csv")
    with open(spots, "w") as f:
        f.write("energy_MeV, x_mm, weight\n25, -2, 1\n30, 2, 1\n")
    post_fixture.simulate(os.path.join(TMP, "field.h5"), "beam.spots_file=" + spots,
                          "output.per_spot_dose=true")


def tearDownModule():
    shutil.rmtree(TMP, ignore_errors=True)


class DocExamples(unittest.TestCase):
    def need_imports(self, code):
        imports = set(re.findall(r"^\s*import (\w+)", code, flags=re.M))
        for m in sorted(imports):
            if subprocess.run([sys.executable, "-c", "import " + m], capture_output=True).returncode:
                self.skipTest("%s has no %s" % (sys.executable, m))

    def run_block(self, code):
        self.need_imports(code)
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=TMP)
        self.assertEqual(r.returncode, 0, "the example failed:\n%s\n%s" % (code, r.stderr))
        return r

    def paste_block(self, code):
        """The block pasted into the interactive interpreter; it exits 0 whatever
        fails, so its error output is what tells."""
        self.need_imports(code)
        r = subprocess.run([sys.executable, "-i", "-q"], input=code + "\n", capture_output=True,
                           text=True, cwd=TMP)
        self.assertNotRegex(r.stderr, r"Traceback|Error", "the example fails pasted into %s -i:\n%s"
                            % (sys.executable, r.stderr))
        return r

    def test_blocks_found(self):
        self.assertGreaterEqual(len(python_blocks(DOC)), 2)

    def test_reading_the_result(self):
        block = [b for b in python_blocks(DOC) if "quickstart.h5" in b]
        self.assertEqual(len(block), 1)
        # What the block computes, printed after it has run.
        r = self.run_block(block[0] + "\nprint('depth_dose', depth_dose.shape, 'figures', sorted(figures)[:1],"
                                      " 'lost', len(lost), 'weight', weight.shape)\n")
        self.assertIn("step_000075", r.stdout)
        self.assertIn("depth_dose (24,)", r.stdout)
        self.assertIn("weight (24, 21)", r.stdout)

    def test_blocks_pasted(self):
        for code in python_blocks(DOC):
            with self.subTest(code=code.splitlines()[-1]):
                self.paste_block(code)

    def test_per_spot_matrix(self):
        block = [b for b in python_blocks(DOC) if "field.h5" in b]
        self.assertEqual(len(block), 1)
        r = self.run_block(block[0] + "\nprint('field', field.shape, float(field.max()) > 0)\n")
        self.assertIn("field (24, 21) True", r.stdout)


if __name__ == "__main__":
    post_fixture.main()
