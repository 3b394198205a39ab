"""What smx2d-export-dose takes from a result file: its dose planes (the
nominal /dose and, when asked, each robust scenario's) and the CT input its
plan named, found as the simulator found it."""
import math
import os
from dataclasses import dataclass

import h5py
import numpy as np

from smx2d_post.result import InputError, read_result, text


@dataclass
class Plane:
    name: str           # file stem: dose, scenario_001, ...
    values: np.ndarray  # Gy [nz][nx]
    description: str    # what it is, for the files' comments
    protons: float


def read_planes(path, scenarios=False):
    """(the result as smx2d_post reads it, the slab thickness in mm, [Plane]):
    /dose/dose_Gy first, then /scenarios/NNN/dose/dose_Gy from NNN = 001 when
    `scenarios` is set."""
    res = read_result(path)
    if not res.complete:
        raise InputError("%s: complete = 0: an incomplete run's dose is not exported" % path)
    d = res.dose
    # The simulator writes centres as edge + (i + 1/2) d: equal steps to rounding (1e-9 relative).
    for axis, c in (("z", d.z), ("x", d.x)):
        if len(c) > 1 and np.ptp(np.diff(c)) > 1e-9 * max(1.0, abs(c[-1])):
            raise InputError("%s: /axes/%s_centres_mm are unevenly spaced; expected the simulator's uniform grid"
                             % (path, axis))
    planes = [Plane("dose", d.values, "nominal plan", res.protons)]
    with h5py.File(path, "r") as f:
        slab = float(f["dose/dose_Gy"].attrs.get("slab_thickness_mm", math.nan))
        if scenarios:
            if "scenarios" not in f:
                raise InputError("%s: no /scenarios: the plan has no robust scenarios (scenarios.* keys)" % path)
            s = f["scenarios"]
            for i in range(1, int(s.attrs["count"])):
                g = s["%03d" % i]
                v = g["dose/dose_Gy"][()]
                if v.shape != d.values.shape:
                    raise InputError("%s: /scenarios/%03d/dose/dose_Gy has shape %s, /dose/dose_Gy %s"
                                     % (path, i, v.shape, d.values.shape))
                what = "scenario %d: range error %+g %%, shift %+g mm" % (
                    i, float(g.attrs["range_error_percent"]), float(g.attrs["shift_mm"]))
                planes.append(Plane("scenario_%03d" % i, np.asarray(v, dtype=float), what,
                                    float(g["dose/dose_Gy"].attrs.get("protons", math.nan))))
    return res, slab, planes


def _yaml_scalar(v):
    """A value of /plan/resolved as the simulator writes it: plain, or double-quoted
    with \\" \\\\ \\n \\t \\xHH escapes; a trailing '# comment' dropped."""
    v = v.strip()
    if not v.startswith('"'):
        return v.split(" #")[0].strip()
    out, i = [], 1
    while i < len(v) and v[i] != '"':
        if v[i] == "\\" and i + 1 < len(v):
            e = v[i + 1]
            if e == "x":
                out.append(chr(int(v[i + 2:i + 4], 16)))
                i += 4
                continue
            out.append({"n": "\n", "t": "\t"}.get(e, e))
            i += 2
            continue
        out.append(v[i])
        i += 1
    return "".join(out)


def plan_ct_file(res):
    """geometry.ct.file as the result's resolved plan gives it ('' for none)."""
    for line in res.plan_resolved.splitlines():
        if line.startswith("geometry.ct.file:"):
            return _yaml_scalar(line.split(":", 1)[1])
    return ""


def find_ct(path, res, explicit):
    """The CT input to place the dose with: `explicit` when given, else the
    plan's geometry.ct.file, looked up as the simulator looked it up: next to
    the plan (the result's plan_file, relative to this directory or to the
    result's), then in $SMX2D_DATA_DIR. Returns (path, how it was found)."""
    named = plan_ct_file(res)
    if explicit:
        return explicit, "--ct" + ("" if named else " (the result's plan has no geometry.ct.file)")
    if not named:
        raise InputError("%s: its plan has no geometry.ct.file, so nothing says where its grid lies in a patient; "
                         "expected a run on a CT input written by smx2d-import-ct, or --ct CT.h5 naming one" % path)
    plan = res.attrs.get("plan_file", "")
    tried = []
    if os.path.isabs(named):
        tried.append(named)
    else:
        for base in (os.path.dirname(plan), os.path.join(os.path.dirname(path), os.path.dirname(plan))):
            tried.append(os.path.normpath(os.path.join(base, named)))
        if os.environ.get("SMX2D_DATA_DIR"):
            tried.append(os.path.join(os.environ["SMX2D_DATA_DIR"], named))
    for t in tried:
        if os.path.isfile(t):
            return t, "the plan's geometry.ct.file"
    raise InputError("%s: its plan's geometry.ct.file %s is not found (tried %s); expected the CT input the run "
                     "read: give it with --ct CT.h5" % (path, text(named), ", ".join(tried)))
