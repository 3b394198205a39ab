#!/usr/bin/python3
"""accuracy-targets.py: measure issue 53's accuracy targets (item 4) for one
smx2d-sim binary on one device, and print one table: case, grid, measured,
reference, target, pass/fail.

    /usr/bin/python3 scripts/accuracy-targets.py --bin build/smx2d-sim --device cuda \
        [--cases range,lateral,slabs,halfplane,halo,noise] [--grids 0.5,1.0] \
        [--energies 70,150] [--out DIR] [--json FILE] [--ref-grid 0.25] [--set KEY=VALUE ...]

Every run is config/quickstart.yaml with --set keys (dx = dz = step = grid,
default physics unless said), written to --out (default accuracy-targets.out).
A run that exits non-zero stops the script (exit 2); exit 1 when a target fails.
The CPU takes hours for the whole set: there, choose cheap cases and grids.

Definitions (R = PSTAR's projected range in water, tests/reference/
pstar_water_ranges.txt, log-log between rows as tests/reference_data.h does):
 range     pencil in water at 70/100/150/200/230 MeV: /summary R80_mm (the
           laterally integrated depth dose) within 0.1 mm of R.
 lateral   pencil at 70/150/230 MeV, profiles at 50/80/95 % of R (linear
           between rows, smx2d_post.figures.profile_at). Reference: Fermi-Eyges
           with Highland's theta_0 (a port of tests/reference_models.h, water
           X0 = 36.08 g/cm2). Target 5 % at grids <= 0.5 mm, 8 % at 1 mm.
           core: smx2d_post.figures.core_sigma (the fit scripts/smx2d-plot
             uses: cell-integrated Gaussian within +-2.5 sigma, iterated) of the
             default-physics (nuclear halo) profile, against FE.
           rms: "plus the halo" is NOT added to the reference. The only halo
             figures independent of the code are Gottschalk's radius (R/3) and
             the Monte Carlo's share outside 3 sigma; neither gives the halo's
             second moment, and taking it from the code's own halo kernel
             would be circular. So the rms is measured with
             transport.nuclear=local (primaries only, as test_grid_convergence
             does) against the rms of the cell-integrated FE Gaussian, and the
             halo is judged on its own in case "halo"; the note gives the
             default-physics rms beside it.
 slabs     2 cm of bone_compact (1.85 g/cm3) and lung (0.26 g/cm3, inflated)
           at z = 20-40 mm (docs/geometry.md's slab), 150 MeV pencil: R80 within
           0.15 mm of R - t (WER - 1). WER = (1/t) int_slab rho S_m(E)/S_w(E) dz,
           E(z) from the slab material's CSDA range, entering at the energy
           left after 20 mm of water; tables data/materials/{water,KEY}.h5
           (total mass stopping power and CSDA range, power law between rows as
           src/physics/tables.c). Lung's table is computed, not PSTAR's. The
           note gives WET/t from the CSDA-range columns too: the tables' S and
           CSDA columns differ by 0.1 % there (bone: 1.7217 against 1.7197).
 halfplane issue 53's half plane (docs/physics.md, "Grid dependence"):
           bone_compact on x in [-40, 0] mm for the whole depth, water on x > 0,
           150 MeV spot of sigma 3 mm, x in +-40 mm, 170 mm deep. The grid's
           dose_Gy against the 0.25 mm dose_Gy as reference: smx2d_post's gamma
           (as smx2d-compare and bench/results/h200-halfplane-grids.txt: the
           reference's own points, evaluated dose linear over its triangles,
           global 1 %/1 mm of the reference maximum, cutoff 10 %): pass rate
           >= 95 %. The note gives the same gamma with the 0.25 mm dose first
           averaged over each coarse cell by mass (its energy summed).
           --ref-grid changes the reference grid (only to try it cheaply).
 halo      pencil at 70/120/150/230 MeV, default physics. "outside3s": the
           share of the profile at R/2 beyond 3 sigma of the core (sigma as in
           "lateral"), within 25 % of the issue's Monte Carlo figures (5.8,
           6.1, 7.1, 9.9 %); the note gives it also with test_halo.c's sigma
           (second moment of the cells above 1 % of the peak). "reach": as
           tests/test_halo.c, the furthest column whose energy over all depths
           exceeds 1e-4 of /tallies/halo_deposited_MeV, over PSTAR's CSDA
           range, within 25 % of Gottschalk 2015's ratio
           (tests/reference/gottschalk2015_halo.txt, R/3 at 177 MeV).
           The lateral grid spans +-(0.45 R_csda + 5 mm) for every pencil of
           the default physics (range, lateral core, halo share these runs).
 noise     100 MeV, sigma_x 8 mm (many noise columns), water whose density is
           1 + 0.002 k, k uniform on -10..10 per cell (mean 1, +-2 %, 21 media),
           as an HDF5 map (geometry.map_file, docs/geometry.md) written under
           --out: R80 - R20 within 5 % of the same beam in clean water.
"""
import argparse
import json
import math
import os
import subprocess
import sys
import time

import h5py
import numpy as np

HERE = os.path.dirname(os.path.realpath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from smx2d_post.figures import core_sigma, profile_at, rms_width  # noqa: E402
from smx2d_post.gamma import gamma_index  # noqa: E402
from smx2d_post.result import Dose2D, read_result  # noqa: E402

PROTON_MASS = 938.272088   # MeV, src/physics/tables.h
X0_WATER = 36.08           # g/cm2, Highland's radiation length of water (PDG)
FRACS = (0.5, 0.8, 0.95)
MC_OUTSIDE = {70: 5.8, 120: 6.1, 150: 7.1, 230: 9.9}   # issue 53, % outside 3 sigma at R/2
ENERGIES = {"range": (70, 100, 150, 200, 230), "lateral": (70, 150, 230), "halo": (70, 120, 150, 230)}
CASES = ("range", "lateral", "slabs", "halfplane", "halo", "noise")
SLABS = (("bone_compact", 1.85), ("lung", 0.26))
SLAB_Z = (20.0, 40.0)


# ---- references -----------------------------------------------------------
def read_columns(name, ncols):
    """A tests/reference/ file: numeric rows of ncols, '#' comments."""
    rows = []
    with open(os.path.join(ROOT, "tests", "reference", name)) as fh:
        for line in fh:
            if line.strip() and not line.lstrip().startswith("#"):
                v = [float(s) for s in line.split()]
                if len(v) != ncols:
                    raise ValueError("%s: want %d numbers: %s" % (name, ncols, line.strip()))
                rows.append(v)
    return np.array(rows)


def pstar_mm(E, col):
    """PSTAR's water range (mm) at E: log-log between the printed rows; col 2 CSDA, 3 projected."""
    t = read_columns("pstar_water_ranges.txt", 4)
    if not t[0, 0] <= E <= t[-1, 0]:
        raise ValueError("%g MeV is outside PSTAR's rows" % E)
    return 10.0 * math.exp(np.interp(math.log(E), np.log(t[:, 0]), np.log(t[:, col])))


class Table:
    """A material table (data/...h5): power-law interpolation between rows, as tables.c."""

    def __init__(self, path):
        with h5py.File(path, "r") as f:
            self.E = f["energy_MeV"][()]
            self.R = f["csda_range"][()]           # g/cm2
            self.S = f["stopping_power_total"][()]  # MeV cm2/g

    @staticmethod
    def _pl(x, y, v):
        return np.exp(np.interp(np.log(v), np.log(x), np.log(y)))

    def csda(self, E):
        return self._pl(self.E, self.R, E)

    def energy_at(self, R):
        return self._pl(self.R, self.E, R)

    def stopping(self, E):
        return self._pl(self.E, self.S, E)


def highland_theta0_sq(t, E0, L_mm, rho=1.0, X0=X0_WATER, n=400):
    """Highland's theta_0^2 (rad^2) after L mm (tests/reference_models.h)."""
    if L_mm <= 0.0:
        return 0.0
    h = L_mm / n
    E = t.energy_at(t.csda(E0) - (np.arange(n) + 0.5) * h * 0.1 * rho)
    pv = E * (E + 2.0 * PROTON_MASS) / (E + PROTON_MASS)
    c = 14.1 * (1.0 + math.log10(L_mm * 0.1 * rho / X0) / 9.0)
    return c * c * float(np.sum(h * 0.1 * rho / pv ** 2)) / X0


def fermi_eyges_mm(t, E0, z_mm, n=400):
    """sigma_x(z)^2 = 2 int_0^z (z - u) theta_0^2(u) du (tests/reference_models.h)."""
    h = z_mm / n
    u = (np.arange(n) + 0.5) * h
    return math.sqrt(2.0 * sum((z_mm - ui) * highland_theta0_sq(t, E0, ui) * h for ui in u))


def cell_rms(s, d):
    """The rms of a Gaussian of width s integrated over cells of width d (test_grid_convergence)."""
    k = np.arange(-int(8 * s / d) - 2, int(8 * s / d) + 3)
    erf = np.vectorize(math.erf)
    w = 0.5 * (erf((k * d + 0.5 * d) / (math.sqrt(2) * s)) - erf((k * d - 0.5 * d) / (math.sqrt(2) * s)))
    return math.sqrt(float(np.sum(w * (k * d) ** 2) / np.sum(w)))


def water_equivalent(key, rho, E, z0, t_mm, n=2000):
    """(WER, WER from the CSDA ranges, E_in) of t_mm of library material `key` at rho, entered after z0 mm of water."""
    w = Table(os.path.join(ROOT, "data", "materials", "water.h5"))
    m = Table(os.path.join(ROOT, "data", "materials", key + ".h5"))
    E_in = float(w.energy_at(w.csda(E) - 0.1 * z0))
    z = (np.arange(n) + 0.5) * t_mm / n
    Ez = m.energy_at(m.csda(E_in) - 0.1 * rho * z)
    E_out = m.energy_at(m.csda(E_in) - 0.1 * rho * t_mm)
    by_ranges = 10.0 * float(w.csda(E_in) - w.csda(E_out)) / t_mm   # the same from the CSDA columns
    return float(np.mean(rho * m.stopping(Ez) / w.stopping(Ez))), by_ranges, E_in


# ---- runs -----------------------------------------------------------------
class Runner:
    """Runs smx2d-sim once per distinct plan (a run shared by cases is reused),
    and charges its wall time to the case that first needed it."""

    def __init__(self, args):
        self.a = args
        self.done = {}
        self.wall = {}
        self.case = None
        self.water = Table(os.path.join(ROOT, "data", "pstar_water.h5"))   # the tests' FE table
        self.fe_cache = {}

    def fe(self, E, frac):
        """Fermi-Eyges/Highland (mm) at frac of PSTAR's projected range."""
        if (E, frac) not in self.fe_cache:
            self.fe_cache[(E, frac)] = fermi_eyges_mm(self.water, E, frac * pstar_mm(E, 3))
        return self.fe_cache[(E, frac)]

    def energies(self, case):
        return [E for E in ENERGIES[case] if not self.a.energies or E in self.a.energies]

    def run(self, name, sets):
        path = os.path.join(self.a.out, name + ".h5")
        if name in self.done:
            return self.done[name]
        cmd = [self.a.bin, os.path.join(ROOT, "config", "quickstart.yaml"), "--device", self.a.device,
               "--quiet", "--overwrite", "--output", path, "--set", "output.snapshot_steps=[]"]
        for k, v in sets.items():
            cmd += ["--set", "%s=%s" % (k, v)]
        for kv in self.a.set:   # the scheme or grid under study, on every run alike
            cmd += ["--set", kv]
        sys.stderr.write("run %-40s " % name)
        sys.stderr.flush()
        t0 = time.time()
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
        dt = time.time() - t0
        sys.stderr.write("%8.1f s\n" % dt)
        if p.returncode != 0:   # fail loudly: a target measured on a broken run means nothing
            raise RuntimeError("%s failed (exit %d):\n  %s\n%s%s" % (name, p.returncode, " ".join(cmd),
                                                                     p.stdout[-2000:], p.stderr[-4000:]))
        with h5py.File(path, "r") as f:   # a result the run did not finish is no result
            complete = int(f.attrs.get("complete", 0))
            warned = f["summary"].attrs.get("warnings", b"none") if "summary" in f else b"none"
        if complete != 1:
            raise RuntimeError("%s: %s is not complete" % (name, path))
        warned = warned.decode() if isinstance(warned, bytes) else str(warned)
        for line in ([] if warned == "none" else warned.splitlines()) + p.stderr.splitlines():
            sys.stderr.write("    %s: %s\n" % (name, line))   # what the grid cut off, say
        self.wall[self.case] = self.wall.get(self.case, 0.0) + dt
        self.done[name] = path
        return path


def grid_sets(E, d, nz_mm, half_x_mm, **extra):
    """--set keys of a run at energy E on a d mm grid (rows = columns = step), nz_mm deep,
    +-half_x_mm wide with an odd column count (a beam at x = 0 starts on a cell centre)."""
    s = {"beam.energy_MeV": E, "grid.energy.E_max_MeV": E, "grid.space.dx_mm": d, "grid.space.dz_mm": d,
         "transport.step_mm": d, "grid.space.nz": int(math.ceil(nz_mm / d)),
         "grid.space.nx": 2 * int(math.ceil(half_x_mm / d)) + 1}
    s.update(extra)
    return s


def pencil(r, E, d, nuclear="halo"):
    """A zero-width pencil in water. With the halo: +-(0.45 R_csda + 5 mm), where the halo's
    reach (about R/3) lands on the grid. Primaries only: +-(5 FE(95 %) + 3 mm)."""
    Rc = pstar_mm(E, 2)
    if nuclear == "halo":
        half = 0.45 * Rc + 5.0
    else:
        half = 5.0 * r.fe(E, FRACS[-1]) + 3.0
    sets = grid_sets(E, d, 1.05 * Rc + 10.0, half, **{"transport.nuclear": nuclear})
    return r.run("pencil_E%g_d%g_%s" % (E, d, nuclear), sets)


def summary(path, key):
    with h5py.File(path, "r") as f:
        return float(f["summary/" + key][()])


# ---- cases: each returns rows (case, grid, measured, reference, target, ok, note) ----
def row(case, d, measured, reference, target, ok, note=""):
    return {"case": case, "grid_mm": d, "measured": measured, "reference": reference, "target": target,
            "pass": bool(ok), "note": note}


def case_range(r, d):
    out = []
    for E in r.energies("range"):
        R = pstar_mm(E, 3)
        r80 = summary(pencil(r, E, d), "R80_mm")
        out.append(row("range %g MeV R80" % E, d, "%.3f mm" % r80, "%.3f mm" % R, "|diff| <= 0.1 mm",
                       abs(r80 - R) <= 0.1, "diff %+.3f mm" % (r80 - R)))
    return out


def case_lateral(r, d):
    tol = 0.05 if d <= 0.5 else 0.08
    out = []
    for E in r.energies("lateral"):
        R = pstar_mm(E, 3)
        halo = read_result(pencil(r, E, d), "energy_deposit_MeV").dose
        local = read_result(pencil(r, E, d, "local"), "energy_deposit_MeV").dose
        for f in FRACS:
            fe = r.fe(E, f)
            nr = " (FE below half a cell)" if fe < 0.5 * d else ""
            ph, pl = profile_at(halo, f * R), profile_at(local, f * R)
            core, rms, ref_rms = core_sigma(halo.x, ph), rms_width(local.x, pl), cell_rms(fe, d)
            out.append(row("lateral %g MeV core@%d%%" % (E, 100 * f), d, "%.3f mm" % core, "%.3f mm" % fe,
                           "%.0f %%" % (100 * tol), abs(core / fe - 1) <= tol,
                           "%+.1f %%%s" % (100 * (core / fe - 1), nr)))
            out.append(row("lateral %g MeV rms@%d%%" % (E, 100 * f), d, "%.3f mm" % rms, "%.3f mm" % ref_rms,
                           "%.0f %%" % (100 * tol), abs(rms / ref_rms - 1) <= tol,
                           "%+.1f %%, local; with halo %.3f mm%s" % (100 * (rms / ref_rms - 1),
                                                                    rms_width(halo.x, ph), nr)))
    return out


def case_slabs(r, d):
    E, (z0, z1) = 150.0, SLAB_Z
    Rc, R = pstar_mm(E, 2), pstar_mm(E, 3)
    out = []
    for key, rho in SLABS:
        wer, wer_r, E_in = water_equivalent(key, rho, E, z0, z1 - z0)
        expect = R - (z1 - z0) * (wer - 1.0)
        shape = "[{material: %s, z_mm: [%g, %g], density_g_cm3: %g}]" % (key, z0, z1, rho)
        sets = grid_sets(E, d, 1.05 * Rc + 10.0 + (z1 - z0), 0.45 * Rc + 5.0, **{"geometry.shapes": shape})
        r80 = summary(r.run("slab_%s_d%g" % (key, d), sets), "R80_mm")
        out.append(row("slabs 150 MeV 2 cm %s R80" % key, d, "%.3f mm" % r80, "%.3f mm" % expect,
                       "|diff| <= 0.15 mm", abs(r80 - expect) <= 0.15,
                       "diff %+.3f mm; WER %.4f (CSDA ranges: %.4f) from %.1f MeV"
                       % (r80 - expect, wer, wer_r, E_in)))
    return out


def halfplane(r, d):
    sets = grid_sets(150.0, d, 170.0, 40.0, **{
        "beam.sigma_x_mm": 3, "grid.space.nx": int(round(80.0 / d)),
        "geometry.shapes": "[{material: bone_compact, x_mm: [-40, 0], z_mm: [0, 170]}]"})
    return r.run("halfplane_d%g" % d, sets)


def block_dose(path, k):
    """The dose of a result averaged over k x k cells by mass: its energy summed over
    the coarse cell, over the coarse cell's mass (every cell has the same volume)."""
    with h5py.File(path, "r") as f:
        D = f["dose/dose_Gy"][()]
        rho = f["geometry/density_g_cm3"][()].astype(float) if "geometry/density_g_cm3" in f else np.ones_like(D)
        z, x = f["axes/z_centres_mm"][()], f["axes/x_centres_mm"][()]
    nz, nx = D.shape[0] // k, D.shape[1] // k

    def blocks(a):
        return a[:nz * k, :nx * k].reshape(nz, k, nx, k).sum(axis=(1, 3))
    return Dose2D(values=blocks(D * rho) / blocks(rho), z=z[:nz * k].reshape(nz, k).mean(axis=1),
                  x=x[:nx * k].reshape(nx, k).mean(axis=1), units="Gy", quantity="dose_Gy", source=path)


def case_halfplane(r, d):
    if d <= r.a.ref_grid:
        return []   # the reference itself
    ref_path, ev_path = halfplane(r, r.a.ref_grid), halfplane(r, d)
    ev = read_result(ev_path).dose
    g = gamma_index(read_result(ref_path).dose, ev, 1.0, 1.0, 10.0)
    gb = gamma_index(block_dose(ref_path, int(round(d / r.a.ref_grid))), ev, 1.0, 1.0, 10.0)
    return [row("halfplane 150 MeV gamma 1%/1mm", d, "%.2f %%" % g.pass_rate, "%g mm dose" % r.a.ref_grid, ">= 95 %",
                g.pass_rate >= 95.0, "%d points; mass-averaged onto %g mm: %.2f %%" % (g.n, d, gb.pass_rate))]


def halo_reach(path):
    """As tests/test_halo.c: the furthest column whose energy over all depths holds
    1e-4 of the halo's energy on the grid."""
    with h5py.File(path, "r") as f:
        E = f["dose/energy_deposit_MeV"][()]
        x = f["axes/x_centres_mm"][()]
        on_grid = float(f["tallies/halo_deposited_MeV"][()])
    cols = E.sum(axis=0) > 1e-4 * on_grid
    return float(np.max(np.abs(x[cols]))) if cols.any() else 0.0, float(np.max(np.abs(x)))


def case_halo(r, d):
    gott = read_columns("gottschalk2015_halo.txt", 2)
    E_g, ratio = gott[0]
    out = []
    for E in r.energies("halo"):
        path = pencil(r, E, d)
        dose = read_result(path, "energy_deposit_MeV").dose
        p = profile_at(dose, 0.5 * pstar_mm(E, 3))
        s = core_sigma(dose.x, p)
        share = 100.0 * float(np.sum(p[np.abs(dose.x) > 3.0 * s]) / np.sum(p))
        # test_halo.c's sigma: the second moment of the cells above 1 % of the peak,
        # which a core narrowed by the discrete directions moves less than the fit.
        top = p > 0.01 * np.max(p)
        s1 = math.sqrt(float(np.sum(p[top] * dose.x[top] ** 2) / np.sum(p[top])))
        share1 = 100.0 * float(np.sum(p[np.abs(dose.x) > 3.0 * s1]) / np.sum(p))
        mc = MC_OUTSIDE.get(int(E))
        if mc is not None:
            out.append(row("halo %g MeV outside 3 sigma at R/2" % E, d, "%.2f %%" % share, "%.1f %% (MC)" % mc,
                           "within 25 %", abs(share / mc - 1) <= 0.25,
                           "core sigma %.3f mm; test_halo's sigma %.3f mm: %.2f %%" % (s, s1, share1)))
        reach, edge = halo_reach(path)
        Rc = pstar_mm(E, 2)
        out.append(row("halo %g MeV reach / R_csda" % E, d, "%.3f" % (reach / Rc),
                       "%.4f (Gottschalk, %g MeV)" % (ratio, E_g), "within 25 %",
                       abs(reach / Rc / ratio - 1) <= 0.25,
                       "reach %.1f mm%s" % (reach, ", at the grid's edge" if reach >= edge else "")))
    return out


def noise_map(path, nz, nx, d, seed=53):
    """Water at 1 + 0.002 k, k uniform on -10..10 per cell: a map on the plan's grid."""
    k = np.random.default_rng(seed).integers(-10, 11, size=(nz, nx))
    with h5py.File(path, "w") as f:
        f.create_dataset("material_index", data=np.zeros((nz, nx), np.uint8))
        f.create_dataset("materials", data=np.array([b"water"]))
        f.create_dataset("density_g_cm3", data=1.0 + 0.002 * k)
        f.attrs["dx_mm"] = d
        f.attrs["dz_mm"] = d


def case_noise(r, d):
    E = 100.0
    sets = grid_sets(E, d, 1.05 * pstar_mm(E, 2) + 10.0, 30.0, **{"beam.sigma_x_mm": 8})
    clean = r.run("noise_clean_d%g" % d, sets)
    mp = os.path.abspath(os.path.join(r.a.out, "noise_map_d%g.h5" % d))
    noise_map(mp, sets["grid.space.nz"], sets["grid.space.nx"], d)
    sets["geometry.map_file"] = mp
    noisy = r.run("noise_2pc_d%g" % d, sets)
    fo = summary(noisy, "R20_mm") - summary(noisy, "R80_mm")
    fo0 = summary(clean, "R20_mm") - summary(clean, "R80_mm")
    return [row("noise 100 MeV +-2 % R80-R20", d, "%.3f mm" % fo, "%.3f mm (clean)" % fo0, "within 5 %",
                abs(fo / fo0 - 1) <= 0.05, "%+.1f %%; R80 %+.3f mm" % (
                    100 * (fo / fo0 - 1), summary(noisy, "R80_mm") - summary(clean, "R80_mm")))]


# ---- driver ---------------------------------------------------------------
def csv_list(kind, allowed=None):
    def parse(s):
        v = [x.strip() for x in s.split(",") if x.strip()]
        if allowed and any(x not in allowed for x in v):
            raise argparse.ArgumentTypeError("expected a comma list of %s" % ",".join(allowed))
        return v if kind is str else [kind(x) for x in v]
    return parse


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    p.add_argument("--bin", default=os.path.join(ROOT, "build", "smx2d-sim"), help="the smx2d-sim binary")
    p.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    p.add_argument("--cases", type=csv_list(str, CASES), default=list(CASES))
    p.add_argument("--grids", type=csv_list(float), default=[0.5, 1.0], help="mm, e.g. 0.25,0.5,1.0")
    p.add_argument("--energies", type=csv_list(float), help="only these energies of range, lateral, halo")
    p.add_argument("--ref-grid", type=float, default=0.25, help="the half plane's reference grid (mm; "
                   "the issue's 0.25; a coarser one only to try the script cheaply)")
    p.add_argument("--out", default="accuracy-targets.out", help="directory for plans' results")
    p.add_argument("--json", help="write the rows and wall times here")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="a plan key for every run (repeatable), e.g. transport.streaming_scheme=moments")
    return p.parse_args(argv)


def print_table(rows, wall):
    cols = ("case", "grid_mm", "measured", "reference", "target", "pass", "note")
    text = [[str(rw[c]) if c != "pass" else ("pass" if rw[c] else "FAIL") for c in cols] for rw in rows]
    width = [max(len(c), *(len(t[i]) for t in text)) if text else len(c) for i, c in enumerate(cols)]
    print("  ".join(c.ljust(w) for c, w in zip(cols, width)))
    for t in text:
        print("  ".join(v.ljust(w) for v, w in zip(t, width)))
    for case, s in wall.items():   # a run two cases share counts in the first
        print("wall time %-10s %8.1f s" % (case, s))


def main(argv):
    a = parse_args(argv)
    if not os.access(a.bin, os.X_OK):
        sys.exit("accuracy-targets: %s is not an executable (give --bin)" % a.bin)
    os.makedirs(a.out, exist_ok=True)
    r = Runner(a)
    rows = []
    try:
        for case in a.cases:
            r.case = case
            r.wall.setdefault(case, 0.0)
            for d in a.grids:
                rows += globals()["case_" + case](r, d)
    except RuntimeError as e:
        sys.stderr.write("accuracy-targets: %s\n" % e)
        return 2
    print_table(rows, r.wall)
    if a.json:
        with open(a.json, "w") as fh:
            json.dump({"binary": a.bin, "device": a.device, "rows": rows, "wall_s": r.wall}, fh, indent=1)
    return 0 if all(rw["pass"] for rw in rows) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
