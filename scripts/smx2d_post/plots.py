"""The figures smx2d-plot draws from a result (matplotlib, Agg: no display).

Each draw_* function draws into a given Axes, so that the one-page summary
reuses them; figure() makes a lone figure. Depth (z, the beam direction) runs
horizontally, lateral position (x) vertically."""
import math
import textwrap
import warnings

import matplotlib

matplotlib.use("Agg")
import matplotlib.lines  # noqa: E402 (after the backend is chosen)
from matplotlib.figure import Figure  # noqa: E402

import numpy as np  # noqa: E402

from . import figures  # noqa: E402

ISODOSE_PERCENT = (10, 20, 50, 80, 90, 95)


def axis_label(text, width=48):
    """An axis label on lines of at most `width` characters: a dose's label says
    how many protons and which slab, too long for one line beside a plot."""
    return textwrap.fill(text, width)


def figure(size=(7.0, 4.5)):
    fig = Figure(figsize=size, layout="constrained")
    return fig, fig.add_subplot()


def map_size(d, width=8.0):
    """A figure size for a map of d drawn to scale (z across, x up), with room
    for labels and the colour bar."""
    ratio = (d.x_edges[-1] - d.x_edges[0]) / (d.z_edges[-1] - d.z_edges[0])
    return width, min(max(0.8 * width * ratio + 1.4, 3.0), 9.0)


def result_figures(res):
    """The figures of the depth dose (R80, R20, distal peak, maximum): the file's
    /summary values, or computed here the same way (on the dose in Gy) for a
    file without them."""
    f = figures.dose_figures(res.figure_dose if res.figure_dose is not None else res.dose)
    for k in f:
        if k in res.summary:
            f[k] = res.summary[k]
    return f


def draw_depth_dose(ax, res, figs):
    d = res.dose
    dd, units = figures.depth_curve(d)
    ax.plot(d.z, dd, color="C0", lw=1.5, label="laterally integrated")
    ax.set_xlabel("depth z (mm)")
    ax.set_ylabel(axis_label("laterally integrated %s (%s)" % (d.label().rsplit(" (", 1)[0], units)))
    ax.set_xlim(d.z_edges[0], d.z_edges[-1])
    ax.set_ylim(bottom=0)
    # The markers sit on the drawn curve (its value at their depth): the figures
    # are the dose's, which is this curve unless another quantity is drawn.
    def on_curve(z):
        return float(np.interp(z, d.z, dd))
    peak, top = figs["peak_depth_mm"], figs.get("maximum_depth_mm", math.nan)
    if math.isfinite(peak):
        ax.plot([peak], [on_curve(peak)], "v", color="C3",
                label="distal peak %.2f mm%s" % (peak, " (the maximum)" if peak == top else ""))
    else:
        ax.plot([], [], "v", color="C3", label="distal peak: not inside the grid")
    if math.isfinite(top) and top != peak:
        ax.plot([top], [on_curve(top)], "^", color="C1", label="maximum %.2f mm" % top)
    for key, level, style in (("R80_mm", 0.8, "--"), ("R20_mm", 0.2, ":")):
        r = figs[key]
        if math.isfinite(r):
            ax.axvline(r, color="C2", ls=style, lw=1,
                       label="%s %.2f mm (%d %% of the distal peak)" % (key[:3], r, round(100 * level)))
            ax.plot([r], [on_curve(r)], "o", color="C2", ms=4)
        else:
            ax.plot([], [], ls=style, color="C2", label="%s: not inside the grid" % key[:3])
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left", fontsize="small")
    return dd, units


def width_text(x, p):
    """A profile's widths for a legend: its rms and its Gaussian core's sigma."""
    rms, core = figures.rms_width(x, p), figures.core_sigma(x, p)
    return "rms %s, core sigma %s" % (_fmt(rms, "mm"), _fmt(core, "mm"))


def draw_profiles(ax, res, depths):
    d = res.dose
    rows = []
    for i, z in enumerate(depths):
        p = figures.profile_at(d, z)
        ax.plot(d.x, p, color="C%d" % (i % 10), lw=1.3, label="z = %.2f mm: %s" % (z, width_text(d.x, p)))
        rows.append(p)
    ax.set_xlabel("lateral position x (mm)")
    ax.set_ylabel(axis_label(d.label()))
    ax.set_xlim(d.x_edges[0], d.x_edges[-1])
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(loc="upper right", fontsize="small")
    return rows


def isodose_reference(res):
    """The isodose lines' 100 % (figures.reference_dose): the distal peak's, not
    the map's maximum. Returns (value, depth mm, words)."""
    return figures.reference_dose(res.dose, result_figures(res))


def isodose_title(res):
    ref, z, what = isodose_reference(res)
    return "isodose lines in %% of %.4g %s, %s (z = %.2f mm)" % (ref, res.dose.units, what, z)


def _isodose(ax, d, levels, top, cmap="autumn"):
    """Isodose lines at `levels` % of `top`, one colour each, named in a legend."""
    if not top > 0 or min(d.values.shape) < 2:
        return None
    levels = sorted(levels)
    colors = [matplotlib.colormaps[cmap](i / max(1, len(levels) - 1)) for i in range(len(levels))]
    with warnings.catch_warnings():   # a level the dose never crosses draws nothing, and says so
        warnings.simplefilter("ignore", UserWarning)
        cs = ax.contour(d.z, d.x, d.values.T, levels=[p / 100.0 * top for p in levels], colors=colors,
                        linewidths=0.9)
    handles = [matplotlib.lines.Line2D([], [], color=c, lw=1.2) for c in colors]
    ax.legend(handles, ["%g %%" % p for p in levels], loc="upper right", fontsize="x-small",
              title="isodose", title_fontsize="x-small", framealpha=0.7)
    return cs


def colorbar(fig, ax, mappable, label, **kw):
    """A colour bar beside the axes' drawn box (which an equal aspect may make
    narrower than the space it was given)."""
    cax = ax.inset_axes([1.02, 0.0, 0.03, 1.0])
    return fig.colorbar(mappable, cax=cax, label=label, **kw)


def map_axes(ax, d):
    """Depth across, x up, equal scales, the grid's extent: every map of both tools."""
    ax.set_xlabel("depth z (mm)")
    ax.set_ylabel("lateral position x (mm)")
    ax.set_xlim(d.z_edges[0], d.z_edges[-1])
    ax.set_ylim(d.x_edges[0], d.x_edges[-1])
    ax.set_aspect("equal", adjustable="box")


def draw_dose_map(fig, ax, res, levels=ISODOSE_PERCENT):
    d = res.dose
    m = ax.pcolormesh(d.z_edges, d.x_edges, d.values.T, cmap="viridis", shading="flat")
    colorbar(fig, ax, m, axis_label(d.label()))
    _isodose(ax, d, levels, isodose_reference(res)[0])
    map_axes(ax, d)
    ax.set_title(isodose_title(res), fontsize="small")
    return m


# LET where the dose is below this share of its maximum is left blank: there it
# averages a handful of particles of the deep tail or the halo's edge.
LET_DOSE_FLOOR = 0.01


def let_depth_curves(res):
    """Each row's LETd and LETt weighted by its dose (a broad beam's LET along depth)."""
    d = res.figure_dose.values
    w = d.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        ld = np.where(w > 0, (res.let_d.values * d).sum(axis=1) / w, np.nan)
        lt = np.where(w > 0, (res.let_t.values * d).sum(axis=1) / w, np.nan)
    ld[w < LET_DOSE_FLOOR * np.max(w)] = np.nan
    lt[w < LET_DOSE_FLOOR * np.max(w)] = np.nan
    return ld, lt


def draw_let_depth(ax, res):
    """LETd and LETt along depth, over the depth dose."""
    ld, lt = let_depth_curves(res)
    z = res.dose.z
    ax.plot(z, ld, color="C3", label="LETd")
    ax.plot(z, lt, color="C1", ls="--", label="LETt")
    ax.set_xlabel("depth z (mm)")
    ax.set_ylabel("LET of the primary protons (keV/um)")
    ax.set_xlim(res.dose.z_edges[0], res.dose.z_edges[-1])
    ax2 = ax.twinx()
    dd = res.figure_dose.values.sum(axis=1)
    ax2.plot(z, dd / np.max(dd) * 100.0, color="0.6", lw=0.9, label="depth dose")
    ax2.set_ylabel("depth dose (% of its maximum)")
    ax2.set_ylim(0, 110)
    lines = ax.get_lines() + ax2.get_lines()
    ax.legend(lines, [l.get_label() for l in lines], loc="upper left", fontsize="small")
    return ld, lt


def draw_let_map(fig, ax, res, levels=ISODOSE_PERCENT):
    """The LETd map (blank where the dose is below LET_DOSE_FLOOR of its maximum)
    with the dose's isodose lines."""
    d = res.figure_dose.values
    v = np.where(d >= LET_DOSE_FLOOR * np.max(d), res.let_d.values, np.nan)
    m = ax.pcolormesh(res.dose.z_edges, res.dose.x_edges, np.ma.masked_invalid(v).T, cmap="magma",
                      shading="flat")
    colorbar(fig, ax, m, "LETd (keV/um)")
    _isodose(ax, res.dose, levels, isodose_reference(res)[0], cmap="winter")
    map_axes(ax, res.dose)
    ax.set_title("LETd where the dose is above %g %% of its maximum; %s"
                 % (100 * LET_DOSE_FLOOR, isodose_title(res)), fontsize="small", wrap=True)
    return m


def draw_material(fig, ax, res, levels=ISODOSE_PERCENT):
    """The material map (categories with their names, or a continuous value with
    its units) with the dose's isodose lines over it."""
    mat, d = res.material, res.dose
    if mat.categorical:
        ids = np.unique(mat.values)
        lookup = {v: i for i, v in enumerate(ids)}
        idx = np.vectorize(lookup.get)(mat.values)
        m = ax.pcolormesh(d.z_edges, d.x_edges, idx.T, cmap="Pastel1" if len(ids) <= 9 else "tab20",
                          vmin=-0.5, vmax=len(ids) - 0.5, shading="flat")
        cb = colorbar(fig, ax, m, "material", ticks=range(len(ids)))
        cb.ax.set_yticklabels([mat.names[v] if 0 <= v < len(mat.names) else str(v) for v in ids])
    else:
        m = ax.pcolormesh(d.z_edges, d.x_edges, mat.values.T, cmap="Greys", shading="flat")
        name = mat.source.rsplit("/", 1)[-1].replace("_", " ")
        colorbar(fig, ax, m, "%s (%s)" % (name, mat.units) if mat.units else name)
    _isodose(ax, d, levels, isodose_reference(res)[0], cmap="winter")
    map_axes(ax, d)
    ref, z, _ = isodose_reference(res)
    ax.set_title("dose over %s; isodose lines in %% of %.4g %s at the distal peak's row (z = %.2f mm)"
                 % (mat.source.split(":", 1)[-1], ref, d.units, z), fontsize="small", wrap=True)


def _fmt(v, unit=""):
    if isinstance(v, float) and not math.isfinite(v):
        return "-"
    return ("%.4g %s" % (v, unit)).strip() if isinstance(v, float) else str(v)


def summary_lines(res, figs):
    a, s = res.attrs, res.summary
    beam = "-"
    if "spots_file" in a:
        beam = "spot map %s" % a["spots_file"]
    else:
        for line in res.plan_resolved.splitlines():
            if line.startswith("beam.energy_MeV:"):
                beam = line.split(":", 1)[1].split("#", 1)[0].strip() + " MeV"
    lines = [
        ("file", res.path),
        ("complete", "yes" if res.complete else "NO (complete = 0)"),
        ("code", "smx2d-sim %s (%s)" % (a.get("code_version", "?"), a.get("git_describe", "?"))),
        ("backend", "%s, %s" % (a.get("backend", "?"), a.get("device_name", "?"))),
        ("beam", beam),
        ("protons", _fmt(res.protons)),
        ("steps", "%s (%s)" % (a.get("n_steps", "?"), a.get("stop_reason", "?"))),
        ("R80 / R20", "%s / %s" % (_fmt(figs["R80_mm"], "mm"), _fmt(figs["R20_mm"], "mm"))),
        ("distal peak", _fmt(figs["peak_depth_mm"], "mm")),
        ("peak-to-entrance", _fmt(figs["peak_to_entrance"])),
        ("depth dose maximum", "%s (%s x the distal peak)" % (
            _fmt(figs.get("maximum_depth_mm", math.nan), "mm"), _fmt(figs.get("maximum_to_peak", math.nan)))),
        ("lateral rms at R80/2", _fmt(s.get("lateral_rms_at_half_R80_mm", float("nan")), "mm")),
        ("core sigma at R80/2", core_at_half_r80(res, figs)),
        ("maximum", _fmt(float(np.max(res.dose.values)), res.dose.units)),
        ("conservation", "%s violation(s), max rel. error %s" % (
            a.get("conservation_violations", "?"), _fmt(a.get("conservation_max_energy_rel_err", float("nan"))))),
        ("run", "%s to %s" % (a.get("utc_start", "?"), a.get("utc_end", "?"))),
    ]
    for w in res.warnings:   # what the grid cut off (/summary's attribute warnings)
        lines.append(("warning", w))
    return lines


def core_at_half_r80(res, figs):
    """The Gaussian core's sigma of the dose's profile at R80/2 (figures.core_sigma),
    beside /summary's rms, which the halo and the tails widen."""
    r80 = figs.get("R80_mm", math.nan)
    if not math.isfinite(r80):
        return "-"
    d = res.figure_dose if res.figure_dose is not None else res.dose
    return _fmt(figures.core_sigma(d.x, figures.profile_at(d, 0.5 * r80)), "mm") + \
        " (Gaussian fit within +-%g sigma)" % figures.CORE_SIGMAS


def draw_summary_text(ax, res, figs):
    ax.axis("off")
    lines = summary_lines(res, figs)
    y = 1.0
    for k, v in lines:
        small = k == "warning"   # a long sentence: wrapped here, so that the page's layout holds
        ax.text(0.0, y, k, transform=ax.transAxes, fontsize=9, fontweight="bold", va="top")
        ax.text(0.36, y, textwrap.fill(v, 70) if small else v, transform=ax.transAxes, fontsize=7 if small else 9,
                va="top", wrap=not small)
        y -= 1.0 / (len(lines) + 1)


def summary_figure(res, figs, depths, levels=ISODOSE_PERCENT):
    """One page: depth dose, dose map (or the dose over the material map), lateral profiles, figures."""
    fig = Figure(figsize=(11.69, 8.27), layout="constrained")  # A4 landscape
    axs = fig.subplots(2, 2)
    draw_depth_dose(axs[0, 0], res, figs)
    if res.material is not None:
        draw_material(fig, axs[0, 1], res, levels)
    else:
        draw_dose_map(fig, axs[0, 1], res, levels)
    draw_profiles(axs[1, 0], res, depths)
    draw_summary_text(axs[1, 1], res, figs)
    fig.suptitle("%s: %s" % (res.path, res.dose.label()))
    return fig
