"""Every shipped plan (config/*.yaml, config/bench/*.yaml on a reduced grid)
runs on the CPU, and its summary (/summary of the result file) agrees with an
independent prediction; then its result is compared with the stored expected
result in tests/regression/NAME/expected.txt (the SHA-256 of
/dose/energy_deposit_MeV, which is deterministic to the bit, and the summary's
figures). `make update-expected` rewrites those files (--update) and prints
what changed in each, but only for a plan whose independent checks (the R80
prediction, the SOBP's plateau, the warnings) pass: a stored result must never
bless a run that fails them. A reviewer reads the diff.

The prediction walks the beam's axis through the cells the result file records
(/geometry: each cell's material and density, each material's table): each
cell's water-equivalent thickness follows from the material's CSDA range table
(the energy after the cell, then the water range that energy difference spans),
and R80 is where the water-equivalent depth reaches PSTAR's published projected
range of the beam's energy (tests/reference/pstar_water_ranges.txt, read apart
from the simulator's table, so that an error in that table or its reading does
not cancel). Plans whose beam cannot stop inside the grid must say so
(/summary's warnings) instead of reporting a range.

    python3 tests/test_config_plans.py BUILD_DIR PLAN_NAME|all [--update]
"""
import hashlib
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = sys.argv[1]
NAME = sys.argv[2]
UPDATE = "--update" in sys.argv[3:]

# R80 against the prediction, in mm, per kind of plan. The prediction's target
# is PSTAR's projected range plus half its detour (CSDA - projected): a 2-D
# proton's depth falls behind its path through one projected angle, not two,
# so the model's detour is half a 3-D one (docs/model.md, "Range"; +0.1 mm at
# 150 MeV, +0.2 mm at 230 MeV). What is left:
# 0.5 mm rows and steps in water: the range grid stops a particle at its lowest
# bin centre and deposits its rest there (up to a quarter row, 0.12 mm), R80 is
# read between row centres, PSTAR prints 4 digits (0.03 mm at 150 MeV): 0.2 mm
# (tests/test_range.c's bound). A 0.5 mm range error fails it.
WATER = "water"
# Through other media on 0.5 mm steps, one energy bin more: outside the
# reference medium a step moves whole energy bins, so a crossing's
# water-equivalent length is right within one bin, 0.5 mm (docs/physics.md):
# 0.7 mm. A 0.5 mm error may pass where the crossing's own error has the
# other sign; tests/test_hetero.c's moments runs hold media to 0.3 mm.
MEDIA = "media"
# 1 mm rows and steps (the reduced bench_pencil230): the stopping rule's quarter
# row is 0.25 mm there, R80's reading between centres 1 mm apart: 0.3 mm.
COARSE = "coarse"
TOLERANCE_MM = {WATER: 0.2, MEDIA: 0.7, COARSE: 0.3}
# The spread-out peak's distal edge is its highest energy's fall-off, but its
# maximum holds the lower layers' dose too, so the 80 % level lies higher on
# that fall-off than the layer's own R80: shallower by up to half the layer's
# R80 - R20 (Bortfeld's curve at 123.4 MeV: 1.6 mm, half 0.8 mm), never
# deeper than the water tolerance.
SOBP_SHALLOWER_MM = 0.8

# name: (plan, --set overrides, beam energy MeV, beam x mm, what to expect, tolerance kind)
CASES = {
    "quickstart": ("config/quickstart.yaml", [], 100.0, 0.0, "stops", WATER),
    "plan_reference": ("config/plan-reference.yaml", [], None, 0.0, "stops", WATER),
    "slab_bone": ("config/slab_bone.yaml", [], 100.0, 0.0, "stops", MEDIA),
    # The beam straddles the lung insert (x < 0) and the bone block (x > 0),
    # then an air gap (|x| < 5 mm): the part through lung and air, x in
    # (-5, 0), stops deepest, so the distal edge is its own, predicted along
    # the middle of that band.
    "phantom_map": ("config/phantom_map.yaml", [], 100.0, -2.5, "stops", MEDIA),
    # The field's layers (20 energies, 70 to 230 MeV, equal weights) do not
    # form one distal edge: its depth dose falls only where a layer ends, so
    # its R80 must lie on one layer's predicted R80 (field_r80), and no
    # warning.

    # The CT phantom is 12 cm deep with 5 cm of lung: the 90 MeV beam stops in
    # the muscle behind the lung, about 2 cm before the far edge.
    "ct_phantom": ("config/ct_phantom.yaml", [], 90.0, 0.0, "stops", MEDIA),
    # The spread-out peak: its distal edge is the highest energy's range.
    "sobp": ("config/sobp.yaml", [], 123.4, 0.0, "sobp", WATER),
    "bench_pencil150": ("config/bench/pencil150.yaml", ["grid.space.nx=31", "grid.space.dx_mm=1"],
                        150.0, 0.0, "stops", WATER),
    "bench_pencil230": ("config/bench/pencil230.yaml",
                        ["grid.space.nx=61", "grid.space.nz=350", "grid.space.dx_mm=1", "grid.space.dz_mm=1",
                         "transport.step_mm=1"], 230.0, 0.0, "stops", COARSE),
    "bench_field": ("config/bench/field.yaml",
                    ["grid.space.nx=75", "grid.space.nz=170", "grid.space.dx_mm=2", "grid.space.dz_mm=2",
                     "transport.step_mm=2"], 230.0, None, "field", COARSE),
}


def table(path):
    with h5py.File(path, "r") as f:
        E = f["energy_MeV"][()]
        return E, f["csda_range"][()], f["projected_range"][()]


def range_of(tab, E):
    """CSDA range (g/cm2) at E, log-log interpolation as the program's tables."""
    Et, R, _ = tab
    return float(np.exp(np.interp(np.log(E), np.log(Et), np.log(R))))


def energy_at(tab, R):
    Et, Rt, _ = tab
    if R <= Rt[0]:
        return 0.0
    return float(np.exp(np.interp(np.log(R), np.log(Rt), np.log(Et))))


def pstar_2d_range_mm(E):
    """PSTAR's projected range plus half its detour (mm of water) at E, the 2-D
    model's mean range (above): from the printed rows of
    tests/reference/pstar_water_ranges.txt, log-log between two (as
    tests/reference_data.h reads them)."""
    d = np.loadtxt(os.path.join(ROOT, "tests", "reference", "pstar_water_ranges.txt"))
    if not d[0, 0] <= E <= d[-1, 0]:
        raise ValueError("%g MeV outside tests/reference/pstar_water_ranges.txt" % E)
    csda, proj = (float(np.exp(np.interp(np.log(E), np.log(d[:, 0]), np.log(d[:, c])))) for c in (2, 3))
    return 10.0 * (proj + 0.5 * (csda - proj))


def predicted_r80(res, E0, x0):
    """Depth (mm) at which the axis at x0 reaches the projected range of E0 in
    water-equivalent depth; None if the grid ends first."""
    g = res["geometry"]
    tabs = [table(p.decode()) for p in g["material_tables"][()]]
    water = tabs[0]
    mat = g["material_index"][()]
    rho = g["density_g_cm3"][()]
    x = res["axes/x_centres_mm"][()]
    dz = float(res["axes/z_centres_mm"][1] - res["axes/z_centres_mm"][0])
    ix = int(np.argmin(np.abs(x - x0)))
    target = pstar_2d_range_mm(E0)  # mm of water
    E, wet = E0, 0.0
    for iz in range(mat.shape[0]):
        t, r = tabs[mat[iz, ix]], rho[iz, ix]
        E_out = energy_at(t, range_of(t, E) - r * dz * 0.1)
        cell_wet = (range_of(water, E) - (range_of(water, E_out) if E_out > 0 else 0.0)) * 10.0
        # The length (mm) the beam travels in this cell: all of it, or, where
        # it stops inside, its residual range there (spreading the last
        # cell's WET over the whole cell put R80 up to a cell too deep).
        path = dz if E_out > 0 else min(dz, range_of(t, E) / (r * 0.1))
        if wet + cell_wet >= target:
            return iz * dz + path * (target - wet) / cell_wet
        wet, E = wet + cell_wet, E_out
        if E <= 0.0:
            break
    return None


# The field's R80 against the nearest layer's predicted R80: on 2 mm rows and
# steps the stopping rule's quarter row is 0.5 mm and R80 reads between row
# centres 2 mm apart: 0.6 mm; and as for the SOBP, the field's maximum holds
# the other layers' dose, so its 80 % level may lie shallower on the layer's
# fall-off, by up to half the widest layer's R80 - R20 (230 MeV, Bortfeld's
# curve: 4.5 mm): 2.3 mm. The layers' ranges lie 8 to 17 mm apart.
FIELD_TOL_MM = 0.6
FIELD_SHALLOWER_MM = 2.3
FIELD_SPOTS = os.path.join(ROOT, "config", "bench", "field_spots.csv")


def field_r80(res, r80, expected, x0):
    """Failures (a list) of the field's R80 against its layers' predicted R80s."""
    energies = sorted({float(l.split(",")[0]) for l in open(FIELD_SPOTS)
                       if l.strip() and not l.startswith("#") and not l.startswith("energy")})
    preds = [p for p in (predicted_r80(res, E, x0) for E in energies) if p is not None]
    if not preds or max(preds) != expected:
        return ["the layers' predictions do not end at the highest energy's %.3f mm" % expected]
    near = min(preds, key=lambda p: abs(p - r80))
    print("bench_field: the nearest layer's predicted R80 %.3f mm (layers %.1f .. %.1f mm)" %
          (near, min(preds), max(preds)))
    if not -FIELD_SHALLOWER_MM - FIELD_TOL_MM <= r80 - near <= FIELD_TOL_MM:
        return ["R80 %.3f mm not on a layer's fall-off: nearest predicted %.3f mm (-%.2f .. +%.2f)" %
                (r80, near, FIELD_SHALLOWER_MM + FIELD_TOL_MM, FIELD_TOL_MM)]
    return []


def tolerance(kind):
    return TOLERANCE_MM[kind]


# Under SMX_TEST_QUICK=1 (`make test-asan`, docs/dev/testing.md) only the short
# plans run: the sanitizers need their code paths, not every plan's minutes.
QUICK = ("quickstart", "plan_reference", "slab_bone")


# The stored result's figures, in the order written; the summary's names.
FIGURES = ("R80_mm", "R20_mm", "peak_depth_mm", "peak_to_entrance", "maximum_depth_mm",
           "lateral_rms_at_half_R80_mm")


def expected_path():
    return os.path.join(ROOT, "tests", "regression", NAME, "expected.txt")


def result_record(res, plan, sets):
    """The facts of a result that the stored file keeps, as text lines."""
    dep = np.ascontiguousarray(res["dose/energy_deposit_MeV"][()], dtype="<f8")
    s = res["summary"]
    rec = {"plan": plan, "set": " ".join(sets) if sets else "(none)",
           "energy_deposit_sha256": hashlib.sha256(dep.tobytes()).hexdigest(),
           "energy_deposit_shape": "%d x %d" % dep.shape}
    for k in FIGURES:
        rec[k] = "%.6f" % float(s[k][()]) if k in s else "absent"
    return rec


def read_expected():
    rec = {}
    with open(expected_path()) as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                k, _, v = line.partition(":")
                rec[k.strip()] = v.strip()
    return rec


def write_expected(rec):
    os.makedirs(os.path.dirname(expected_path()), exist_ok=True)
    with open(expected_path(), "w") as f:
        f.write("# The stored expected result of this case (tests/test_config_plans.py), run on the CPU.\n"
                "# Written by `make update-expected`: a change here is a change of the physics or the\n"
                "# numerics, to be read and explained in the commit that makes it.\n")
        for k, v in rec.items():
            f.write("%s: %s\n" % (k, v))


def changes(old, new):
    """'key: old -> new' for every key that differs."""
    return ["%s: %s -> %s" % (k, old.get(k, "(none)"), new.get(k, "(none)"))
            for k in sorted(set(old) | set(new)) if old.get(k) != new.get(k)]


def compare_expected(rec, failures):
    rel = os.path.relpath(expected_path(), ROOT)
    if UPDATE:
        if failures:
            failures.append("%s not written: an independent check failed (above); a stored result "
                            "must not bless a run that fails them" % rel)
            return
        diff = changes(read_expected() if os.path.exists(expected_path()) else {}, rec)
        if not diff:
            print("%s: unchanged" % rel)
            return
        write_expected(rec)
        print("wrote %s:\n    %s" % (rel, "\n    ".join(diff)))
        return
    if not os.path.exists(expected_path()):
        failures.append("no stored result %s (make update-expected)" % os.path.relpath(expected_path(), ROOT))
        return
    want = read_expected()
    # Every key must agree exactly: the run is deterministic to the bit on the
    # CPU (any thread count), and the figures are written from the same bits.
    diffs = ["%s: %s, stored %s" % (k, rec.get(k), want.get(k))
             for k in sorted(set(rec) | set(want)) if rec.get(k) != want.get(k)]
    if diffs:
        failures.append("differs from the stored result %s (if intended: make update-expected, and "
                        "explain the diff):\n    %s" % (os.path.relpath(expected_path(), ROOT), "\n    ".join(diffs)))
    else:
        print("stored result: identical (%s)" % rec["energy_deposit_sha256"][:16])


def main():
    plan, sets, E0, x0, expect, kind = CASES[NAME]
    if os.environ.get("SMX_TEST_QUICK") == "1" and NAME not in QUICK:
        print("SKIP: SMX_TEST_QUICK=1 runs only %s" % ", ".join(QUICK))
        return 77
    with tempfile.TemporaryDirectory(prefix="smx-config-") as scratch:
        return check(os.path.join(scratch, NAME + ".h5"), plan, sets, E0, x0, expect, kind)


def check(out, plan, sets, E0, x0, expect, kind):
    cmd = [os.path.join(BUILD, "smx2d-sim"), os.path.join(ROOT, plan), "--device", "cpu", "--quiet",
           "--set", "output.file=" + out, "--set", "output.snapshot_final=false",
           "--set", "output.snapshot_steps=[]"]
    for s in sets:
        cmd += ["--set", s]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        print("FAIL: %s exited %d:\n%s" % (" ".join(cmd), r.returncode, r.stderr))
        return 1
    failures = []
    with h5py.File(out, "r") as res:
        s = res["summary"]
        r80 = float(s["R80_mm"][()])
        warnings = s.attrs["warnings"]
        warnings = warnings.decode() if isinstance(warnings, bytes) else str(warnings)
        # (A step that broke conservation would have made the run exit 3.)
        if E0 is None:  # the plan's own beam energy, from the resolved plan
            for line in res["plan/resolved"][()].decode().splitlines():
                if line.startswith("beam.energy_MeV:"):
                    E0 = float(line.split(":")[1].split("#")[0])
        axis = 0.0 if x0 is None else x0
        expected = predicted_r80(res, E0, axis)
        print("%s: R80 %.3f mm, predicted %s mm, warnings: %s" %
              (NAME, r80, "none (leaves the grid)" if expected is None else "%.3f" % expected, warnings))
        if expect == "exits":
            if expected is not None:
                failures.append("the prediction stops inside the grid (%.3f mm): the case is wrong" % expected)
            if "far edge" not in warnings:
                failures.append("no far-edge warning in /summary: %r" % warnings)
            if np.isfinite(r80):
                failures.append("R80 %.3f mm reported for a beam that leaves the grid" % r80)
        else:
            if warnings != "none":
                failures.append("unexpected warnings: %s" % warnings)
            if expected is None:
                failures.append("the prediction leaves the grid")
            elif expect == "field":
                failures += field_r80(res, r80, expected, axis)
            elif expect == "sobp":
                if not -SOBP_SHALLOWER_MM - tolerance(kind) <= r80 - expected <= tolerance(kind):
                    failures.append("R80 %.3f mm vs the highest energy's %.3f mm: outside -%.2f .. +%.2f"
                                    % (r80, expected, SOBP_SHALLOWER_MM + tolerance(kind), tolerance(kind)))
            elif not abs(r80 - expected) <= tolerance(kind):
                failures.append("R80 %.3f mm vs predicted %.3f mm (tolerance %.2f)" %
                                (r80, expected, tolerance(kind)))
        if expect == "sobp":
            # The plateau the spot weights were fitted to: flat within +-2 % from
            # 80 to 110 mm (config/sobp.yaml), on the laterally integrated dose.
            dose = res["dose/dose_Gy"][()].sum(axis=1)
            z = res["axes/z_centres_mm"][()]
            plateau = dose[(z >= 80.0) & (z <= 110.0)]
            spread = plateau.max() / plateau.min()
            print("sobp plateau 80-110 mm: max/min %.4f" % spread)
            if not spread <= 1.02 / 0.98:
                failures.append("plateau max/min %.4f beyond +-2 %%" % spread)
            if not float(s["peak_depth_mm"][()]) > 100.0:
                failures.append("the distal peak at %.2f mm, not at the plateau's end" %
                                float(s["peak_depth_mm"][()]))
        compare_expected(result_record(res, plan, sets), failures)
    for f in failures:
        print("FAIL: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    if NAME == "all":  # make update-expected: every case in turn
        rcs = []
        for NAME in CASES:
            print("== " + NAME, flush=True)
            rcs.append(main())
        sys.exit(1 if any(rc not in (0, 77) for rc in rcs) else 0)
    sys.exit(main())
