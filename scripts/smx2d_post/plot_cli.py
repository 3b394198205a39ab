"""smx2d-plot: PNGs (and the curves as CSV) of one smx2d-sim result."""
import argparse
import csv
import math
import os
import sys

import numpy as np

from . import cli, figures, plots
from .result import QUANTITIES, InputError, protons_text, read_result

TOOL = "smx2d-plot"
FILES = ("summary.png", "depth_dose.png", "lateral_profiles.png", "dose_map.png", "material_map.png",
         "let_depth.png", "let_map.png", "depth_dose.csv", "lateral_profiles.csv", "let_depth.csv")

USAGE_EPILOG = """\
writes into DIR (default: RESULT's name without .h5, plus _plots, in the current directory):
  summary.png           one page: depth dose, dose map, lateral profiles and the run's figures
  depth_dose.png        laterally integrated depth dose with the distal peak, the maximum, R80 and R20 marked
  lateral_profiles.png  lateral profiles at the depths of --depths
  dose_map.png          the 2-D dose with isodose lines
  material_map.png      the dose over the material map (only when the file has /material)
  let_depth.png         LETd and LETt along depth, each row's weighted by its dose (only with /let)
  let_map.png           the LETd map where the dose is above 1 % of its maximum (only with /let)
  depth_dose.csv, lateral_profiles.csv, let_depth.csv   the plotted curves
Files of these names already in DIR are replaced (a name not written this time is removed).
exit codes: 0 ok, 1 bad command line, 2 bad input (file, output directory), 3 missing Python modules.
docs/postprocessing.md has more."""


def parser():
    p = cli.Parser(prog=TOOL, description="Plots of an smx2d-sim result file.", epilog=USAGE_EPILOG,
                   formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("result", metavar="RESULT.h5", help="a result file written by smx2d-sim")
    p.add_argument("--out", metavar="DIR", help="output directory (created if missing)")
    p.add_argument("--quantity", default="dose_Gy", choices=sorted(QUANTITIES),
                   help="which /dose dataset to plot (default dose_Gy)")
    p.add_argument("--depths", metavar="MM,...", type=cli.numbers("--depths"),
                   help="depths of the lateral profiles in mm (default: first row, R80/2, peak, R80)")
    p.add_argument("--isodose", metavar="PERCENT,...", type=cli.numbers("--isodose", positive=True),
                   default=list(plots.ISODOSE_PERCENT),
                   help="isodose levels in %% of the distal peak's dose (the maximum of its row; "
                        "past the first row when the peak is not inside the grid), not of the "
                        "map's maximum (default " + ",".join(map(str, plots.ISODOSE_PERCENT)) + ")")
    scale = p.add_mutually_exclusive_group()
    scale.add_argument("--protons", metavar="N", type=cli.number("--protons", positive=True),
                       help="plot the dose of N protons (the file's is of its beam's protons, "
                            "beam.weight; 1 unless the plan says otherwise)")
    scale.add_argument("--prescribe", metavar="GY", type=cli.number("--prescribe", positive=True),
                       help="scale the dose so that the isodose lines' 100 %% (the distal peak) "
                            "receives GY, and say how many protons that takes")
    p.add_argument("--dpi", type=cli.number("--dpi", positive=True), default=120.0, help="resolution (default 120)")
    p.add_argument("--quiet", action="store_true", help="print nothing but errors")
    return p


def default_out(result):
    base = os.path.basename(result)
    return (base[:-3] if base.endswith(".h5") else base) + "_plots"


def write_depth_csv(path, res, dd, units, figs):
    with open(path, "w", newline="") as fh:
        fh.write("# %s: laterally integrated depth curve of %s\n" % (res.path, res.dose.source))
        fh.write("# R80 %s mm, R20 %s mm, distal peak %s mm (figures of the dose in Gy)\n" % tuple(
            "%.4f" % figs[k] if math.isfinite(figs[k]) else "nan" for k in ("R80_mm", "R20_mm", "peak_depth_mm")))
        w = csv.writer(fh)
        w.writerow(["z_mm", "integrated_%s" % units.replace(" ", "_").replace("/", "_per_")])
        for z, v in zip(res.dose.z, dd):
            w.writerow(["%.6g" % z, "%.9g" % v])


def write_profiles_csv(path, res, depths, rows):
    with open(path, "w", newline="") as fh:
        fh.write("# %s: lateral profiles of %s (%s); columns: x_mm, then one per depth\n"
                 % (res.path, res.dose.source, res.dose.units or "no units"))
        w = csv.writer(fh)
        w.writerow(["x_mm"] + ["z=%.6g_mm" % z for z in depths])
        for i, x in enumerate(res.dose.x):
            w.writerow(["%.6g" % x] + ["%.9g" % r[i] for r in rows])


def write_let_csv(path, res, ld, lt):
    with open(path, "w", newline="") as fh:
        fh.write("# %s: the primaries' LETd and LETt of each row, weighted by the row's dose "
                 "(nan where the row's dose is below %g %% of the largest row's)\n"
                 % (res.path, 100 * plots.LET_DOSE_FLOOR))
        w = csv.writer(fh)
        w.writerow(["z_mm", "LETd_keV_um", "LETt_keV_um"])
        for z, a, b in zip(res.dose.z, ld, lt):
            w.writerow(["%.6g" % z, "%.9g" % a, "%.9g" % b])


def scale_dose(res, protons=None, prescribe=None):
    """Scales res's dose in place to `protons` protons or to `prescribe` Gy at
    the isodose reference (the figures, depths, do not change). Returns the
    protons the plotted dose is of."""
    d = res.dose
    if protons is None and prescribe is None:
        return res.protons
    if d.units != "Gy":
        raise InputError("--protons and --prescribe scale a dose in Gy; --quantity %s is %s"
                         % (d.quantity, QUANTITIES[d.quantity]))
    per_proton = d.quantity == "dose_Gy_per_proton"
    now = 1.0 if per_proton else res.protons
    if not (math.isfinite(now) and now > 0):
        raise InputError("%s: /dose/dose_Gy has no attribute protons: cannot scale it" % res.path)
    if protons is None:
        ref = plots.isodose_reference(res)[0]
        if not ref > 0:
            raise InputError("%s: the dose is zero: nothing to scale to %g Gy" % (res.path, prescribe))
        protons = now * prescribe / ref
    factor = protons / now
    d.values = d.values * factor
    slab = d.context.split(" in a ", 1)[1] if " in a " in d.context else ""
    d.context = " of %s%s" % (protons_text(protons), " in a " + slab if slab else "")
    if prescribe is not None:
        d.context += ", %g Gy at the distal peak" % prescribe
    if per_proton:   # no longer per proton: the dose of that many
        d.quantity = "dose_Gy"
    res.protons = protons   # what the summary page lists: the protons drawn
    return protons


def make_plots(res, outs, depths=None, isodose=plots.ISODOSE_PERCENT, dpi=120.0):
    """Draws every figure of `res` into `outs` (a cli.Outputs). Returns the depth
    dose figures used, the profile depths and the figures drawn, by file name."""
    figs = plots.result_figures(res)
    depths = depths or figures.default_depths(res.dose, figs)
    name = os.path.basename(res.path)
    drawn = {}

    fig, ax = plots.figure()
    dd, units = plots.draw_depth_dose(ax, res, figs)
    ax.set_title("%s: depth dose" % name, fontsize="medium")
    drawn["depth_dose.png"] = fig
    write_depth_csv(outs.path("depth_dose.csv"), res, dd, units, figs)

    fig, ax = plots.figure()
    rows = plots.draw_profiles(ax, res, depths)
    ax.set_title("%s: lateral profiles" % name, fontsize="medium")
    drawn["lateral_profiles.png"] = fig
    write_profiles_csv(outs.path("lateral_profiles.csv"), res, depths, rows)

    fig, ax = plots.figure(plots.map_size(res.dose))
    plots.draw_dose_map(fig, ax, res, isodose)
    drawn["dose_map.png"] = fig

    if res.material is not None:
        fig, ax = plots.figure(plots.map_size(res.dose))
        plots.draw_material(fig, ax, res, isodose)
        drawn["material_map.png"] = fig

    if res.let_d is not None and res.let_t is not None:
        fig, ax = plots.figure()
        ld, lt = plots.draw_let_depth(ax, res)
        ax.set_title("%s: LET along depth" % name, fontsize="medium")
        drawn["let_depth.png"] = fig
        write_let_csv(outs.path("let_depth.csv"), res, ld, lt)
        fig, ax = plots.figure(plots.map_size(res.dose))
        plots.draw_let_map(fig, ax, res, isodose)
        drawn["let_map.png"] = fig

    drawn["summary.png"] = plots.summary_figure(res, figs, depths, isodose)
    for fname, fig in drawn.items():
        fig.savefig(outs.path(fname), dpi=dpi, format="png")
    return figs, depths, drawn


def main(argv):
    a = parser().parse_args(argv)
    out = a.out or default_out(a.result)
    try:
        res = read_result(a.result, a.quantity)
        if not res.complete:
            sys.stderr.write("%s: warning: %s is incomplete (complete = 0): plotting what it holds\n"
                             % (TOOL, a.result))
        if not np.all(np.isfinite(res.dose.values)):
            raise InputError("%s: %s holds values that are not finite" % (a.result, res.dose.source))
        protons = scale_dose(res, a.protons, a.prescribe)
        z0, z1 = res.dose.z_edges[0], res.dose.z_edges[-1]
        for z in a.depths or ():
            if not z0 <= z <= z1:
                raise InputError("--depths %g: outside %s's depths, %g to %g mm" % (z, a.result, z0, z1))
        with cli.Outputs(out, FILES) as outs:
            figs, depths, _ = make_plots(res, outs, a.depths, a.isodose, a.dpi)
            written = outs.commit()
    except InputError as e:
        return cli.fail(TOOL, cli.EXIT_INPUT, str(e))
    except OSError as e:
        return cli.fail(TOOL, cli.EXIT_INPUT, str(e))
    if not a.quiet:
        f = lambda k: "%.2f mm" % figs[k] if math.isfinite(figs[k]) else "not inside the grid"  # noqa: E731
        for w in res.warnings:
            sys.stderr.write("%s: warning: %s: %s\n" % (TOOL, a.result, w))
        print("%s: R80 %s, R20 %s, distal peak %s; profiles at %s mm" % (
            a.result, f("R80_mm"), f("R20_mm"), ("at " if math.isfinite(figs["peak_depth_mm"]) else "") +
            f("peak_depth_mm"), ", ".join("%.2f" % z for z in depths)))
        if a.prescribe is not None:
            print("--prescribe %g: %g Gy at the distal peak takes %.4g protons" % (a.prescribe, a.prescribe, protons))
        print("wrote %s" % ", ".join(written))
    return 0
