"""smx2d-compare: the gamma index of one 2-D dose against a reference."""
import argparse
import json
import math
import os
import sys

import numpy as np

from . import cli
from .gamma import gamma_index
from .gamma_plot import gamma_figure
from .resample import resample
from .result import QUANTITIES, Dose2D, InputError, load_dose, split_spec

TOOL = "smx2d-compare"
EXIT_BELOW = 4  # the pass rate is below --min-pass

EPILOG = """\
A and B are each a result file of smx2d-sim (its /dose/QUANTITY), an HDF5 file
with a 2-D dataset [nz][nx] and its cell-centre coordinates in mm (FILE.h5, or
FILE.h5:/path/to/dataset when it holds several), or a CSV matrix (first row: a
label, then the x centres in mm; each further row: a z centre in mm, then the
doses). A is the reference: gamma is computed at A's grid points, B is
interpolated between its own (the grids may differ; B is resampled onto A's
grid for the dose difference map).

writes into DIR (default: A_vs_B in the current directory):
  gamma.png   both doses with isodose lines, their difference, the gamma map, its histogram
  gamma.json  criteria, point counts, pass rate and gamma statistics
exit codes: 0 ok, 1 bad command line, 2 bad input, 3 missing Python modules,
4 pass rate below --min-pass. docs/postprocessing.md has more."""


def parser():
    p = cli.Parser(prog=TOOL, description="Gamma index of dose B against reference dose A.", epilog=EPILOG,
                   formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("a", metavar="A", help="the reference dose")
    p.add_argument("b", metavar="B", help="the evaluated dose")
    p.add_argument("--dta", metavar="MM", type=cli.number("--dta", positive=True), default=2.0,
                   help="distance to agreement in mm (default 2)")
    p.add_argument("--dd", metavar="PERCENT", type=cli.number("--dd", positive=True), default=3.0,
                   help="dose difference in %% of the normalisation dose, or of the local dose with "
                        "--local (default 3)")
    p.add_argument("--cutoff", metavar="PERCENT", type=cli.number("--cutoff", minimum=0.0), default=10.0,
                   help="reference points below this %% of the normalisation dose are not evaluated (default 10)")
    p.add_argument("--local", action="store_true", help="local gamma (dose difference relative to the "
                                                         "reference dose at each point) instead of global")
    p.add_argument("--norm-dose", metavar="DOSE", type=cli.number("--norm-dose", positive=True),
                   help="normalisation dose in A's units (default: A's maximum)")
    p.add_argument("--search", metavar="MM", type=cli.number("--search", positive=True),
                   help="search radius in mm, at least DTA (default 3 x DTA); larger gammas are reported "
                        "as search/DTA")
    p.add_argument("--quantity", default="dose_Gy", choices=sorted(QUANTITIES),
                   help="which /dose dataset of a result file (default dose_Gy)")
    p.add_argument("--normalise", action="store_true",
                   help="divide each dose by its own maximum first (relative doses, e.g. a measurement "
                        "in arbitrary units)")
    p.add_argument("--out", metavar="DIR", help="output directory (created if missing)")
    p.add_argument("--min-pass", metavar="PERCENT", type=cli.number("--min-pass", minimum=0.0),
                   help="exit 4 when the pass rate is below this")
    p.add_argument("--dpi", type=cli.number("--dpi", positive=True), default=110.0, help="resolution (default 110)")
    p.add_argument("--quiet", action="store_true", help="print nothing but errors")
    return p


def _stem(spec):
    base = os.path.basename(split_spec(spec)[0])
    return os.path.splitext(base)[0]


def _finite(v):
    return float(v) if v is not None and math.isfinite(v) else None


def _describe(d):
    return {"source": d.source, "quantity": d.quantity, "units": d.units, "shape": list(d.shape),
            "z_mm": [float(d.z[0]), float(d.z[-1])], "x_mm": [float(d.x[0]), float(d.x[-1])],
            "max": float(np.max(d.values))}


def summary(ref, ev, g, a, diff):
    v = g.values
    stats = {
        "pass_rate_percent": _finite(g.pass_rate),
        "passed": int(np.count_nonzero(v <= 1.0)),
        "failed": int(np.count_nonzero(v > 1.0)),
        "mean": _finite(float(v.mean())) if len(v) else None,
        "median": _finite(float(np.median(v))) if len(v) else None,
        "p95": _finite(float(np.percentile(v, 95))) if len(v) else None,
        "max": _finite(float(v.max())) if len(v) else None,
        "at_cap": int(np.count_nonzero(v >= g.cap)),
    }
    dv = diff[g.evaluated]
    return {
        "tool": TOOL,
        "reference": _describe(ref),
        "evaluated": _describe(ev),
        "criteria": {
            "type": "local" if g.local else "global",
            "dta_mm": a.dta, "dd_percent": a.dd, "cutoff_percent": a.cutoff,
            "norm_dose": g.norm_dose, "norm_dose_is": "given" if a.norm_dose else "reference maximum",
            "units": ref.units, "normalised": bool(a.normalise),
            "search_mm": g.cap * a.dta, "gamma_cap": g.cap,
            "interpolation": "evaluated dose linear over triangles of its grid, minimum found exactly",
        },
        "points": {"reference": int(ref.values.size), "evaluated": g.n, "below_cutoff": g.below_cutoff,
                   "outside_evaluated_grid": g.outside},
        "gamma": stats,
        "dose_difference_percent": {
            "of": "norm_dose, evaluated minus reference, at the evaluated points",
            "mean": _finite(float(dv.mean())) if len(dv) else None,
            "min": _finite(float(dv.min())) if len(dv) else None,
            "max": _finite(float(dv.max())) if len(dv) else None,
        },
    }


def _normalised(d):
    top = float(np.max(d.values))
    if not top > 0:
        raise InputError("%s: the maximum is %g; --normalise needs a positive maximum" % (d.source, top))
    return Dose2D(values=d.values / top, z=d.z, x=d.x, units="1",
                  quantity="relative " + QUANTITIES.get(d.quantity, d.quantity.replace("_", " ")),
                  source=d.source, z_edges=d.z_edges, x_edges=d.x_edges)


def load_pair(a):
    ref = load_dose(a.a, a.quantity)
    ev = load_dose(a.b, a.quantity)
    for d in (ref, ev):
        if not np.all(np.isfinite(d.values)):
            raise InputError("%s: holds values that are not finite" % d.source)
        if min(d.shape) < 2:
            raise InputError("%s: a %d x %d map; gamma needs at least 2 x 2 points" % ((d.source,) + d.shape))
    if a.normalise:
        ref, ev = _normalised(ref), _normalised(ev)
    elif ref.units and ev.units and ref.units != ev.units:
        raise InputError("%s is in %s but %s in %s: compare the same quantity, or use --normalise"
                         % (ref.source, ref.units, ev.source, ev.units))
    elif ref.units != ev.units:
        unit = ref.units or ev.units
        ref.units = ev.units = unit
    return ref, ev


def main(argv):
    a = parser().parse_args(argv)
    if a.search is not None and a.search < a.dta:
        return cli.fail(TOOL, cli.EXIT_USAGE, "--search %g is below --dta %g: the search must reach the DTA"
                        % (a.search, a.dta))
    out = a.out or "%s_vs_%s" % (_stem(a.a), _stem(a.b))
    try:
        ref, ev = load_pair(a)
        if not np.max(ref.values) > 0 and a.norm_dose is None:
            raise InputError("%s: the reference is zero everywhere; give --norm-dose" % ref.source)
        g = gamma_index(ref, ev, a.dta, a.dd, a.cutoff, local=a.local, norm_dose=a.norm_dose, search_mm=a.search)
        if g.n == 0:
            raise InputError("no reference point to evaluate: %d below the %g %% cutoff, %d outside %s's grid"
                             % (g.below_cutoff, a.cutoff, g.outside, ev.source))
        ev_on_ref = resample(ev, ref.z, ref.x)
        diff = 100.0 * (ev_on_ref - ref.values) / g.norm_dose
        crit = "%g %% / %g mm, cutoff %g %%" % (a.dd, a.dta, a.cutoff)
        info = summary(ref, ev, g, a, diff)
        with cli.Outputs(out) as outs:
            gamma_figure(ref, ev, ev_on_ref, g, crit).savefig(outs.path("gamma.png"), dpi=a.dpi, format="png")
            with open(outs.path("gamma.json"), "w") as fh:
                json.dump(info, fh, indent=2, allow_nan=False)
                fh.write("\n")
            written = outs.commit()
    except InputError as e:
        return cli.fail(TOOL, cli.EXIT_INPUT, str(e))
    except OSError as e:
        return cli.fail(TOOL, cli.EXIT_INPUT, str(e))
    s = info["gamma"]
    if not a.quiet:
        unit = " " + ref.units if ref.units else ""
        print("reference  %s (%d x %d)" % ((ref.source,) + ref.shape))
        print("evaluated  %s (%d x %d)" % ((ev.source,) + ev.shape))
        print("criteria   %s gamma, %s of %.4g%s (%s)" % (
            "local" if a.local else "global", crit, g.norm_dose, unit,
            "given" if a.norm_dose else "the reference maximum"))
        print("points     %d evaluated, %d below the cutoff, %d outside the evaluated grid"
              % (g.n, g.below_cutoff, g.outside))
        print("gamma      pass rate %.2f %% (gamma <= 1); mean %.3f, 95th percentile %.3f, max %.3f%s" % (
            s["pass_rate_percent"], s["mean"], s["p95"], s["max"],
            " (capped at %g: search %g mm)" % (g.cap, g.cap * a.dta) if s["at_cap"] else ""))
        print("wrote      %s" % ", ".join(written))
    if a.min_pass is not None and s["pass_rate_percent"] < a.min_pass:
        sys.stderr.write("%s: pass rate %.2f %% is below --min-pass %g %%\n"
                         % (TOOL, s["pass_rate_percent"], a.min_pass))
        return EXIT_BELOW
    return 0
