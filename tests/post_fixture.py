"""What the tests of the post-processing tools share: the smx2d_post package on
sys.path, small results made by the built binary, running a tool with this
interpreter, and reading a PNG's size."""
import contextlib
import io
import os
import struct
import subprocess
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPTS = os.path.join(ROOT, "scripts")
sys.path.insert(0, SCRIPTS)
BUILD = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build")
# tests/plans/tiny.yaml: a 30 MeV pencil beam in 12 mm of water, 24 x 21 cells of 0.5 mm.
TINY = os.path.join(ROOT, "tests", "plans", "tiny.yaml")


def simulate(path, *sets, plan=TINY):
    """Runs the built smx2d-sim on `plan` (CPU, no psi snapshots) writing `path`."""
    cmd = [os.path.join(BUILD, "smx2d-sim"), plan, "--device", "cpu", "--quiet", "--overwrite",
           "--output", path, "--set", "output.snapshot_steps=[]", "--set", "output.snapshot_final=false"]
    for s in sets:
        cmd += ["--set", s]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise AssertionError("%s exited %d: %s" % (" ".join(cmd), r.returncode, r.stderr))
    return path


def tool(name, *args, cwd=None):
    """Runs scripts/NAME as a program with this interpreter; returns the CompletedProcess (text)."""
    return subprocess.run([sys.executable, os.path.join(SCRIPTS, name)] + list(args),
                          capture_output=True, text=True, cwd=cwd)


class Run:
    """What a tool run in this process returned and printed (as subprocess.CompletedProcess)."""

    def __init__(self, returncode, stdout, stderr):
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


def call(main, *args):
    """Runs a tool's main(argv) in this process (no interpreter start-up nor imports
    to pay again), capturing its output and its exit code."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main(list(args))
        except SystemExit as e:   # argparse's exits
            rc = e.code
    return Run(rc, out.getvalue(), err.getvalue())


def png_size(path):
    """(width, height) of a PNG file, after checking its signature and header chunk."""
    with open(path, "rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        raise AssertionError("%s is not a PNG file" % path)
    return struct.unpack(">II", head[16:24])


def main():
    """unittest's main, leaving our own argument (the build directory) alone."""
    unittest.main(argv=sys.argv[:1], verbosity=2)
