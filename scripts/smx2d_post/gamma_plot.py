"""The figure smx2d-compare writes: both doses, their difference and the gamma map."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.lines  # noqa: E402 (after the backend is chosen)
from matplotlib.figure import Figure  # noqa: E402

import numpy as np  # noqa: E402

from .plots import colorbar, map_axes  # noqa: E402

LEVELS = (20, 50, 80, 95)  # isodose lines of the two doses, % of the normalisation dose
GAMMA_SHOWN = 2.0          # the gamma map's colour scale ends here (larger values take its top colour)


def gamma_figure(ref, ev, ev_on_ref, g, criteria):
    """ref, ev: the Dose2D compared; ev_on_ref: ev resampled onto ref's grid;
    g: the GammaResult; criteria: the line naming DTA, dose difference and cutoff."""
    fig = Figure(figsize=(12.0, 8.5), layout="constrained")
    (a, b), (c, d) = fig.subplots(2, 2)
    norm = g.norm_dose
    unit = " %s" % ref.units if ref.units else ""

    m = a.pcolormesh(ref.z_edges, ref.x_edges, ref.values.T, cmap="viridis", shading="flat")
    colorbar(fig, a, m, "reference %s" % ref.label())
    if min(ref.values.shape) >= 2 and min(ev_on_ref.shape) >= 2:
        lv = [p / 100.0 * norm for p in LEVELS]
        colors = [matplotlib.colormaps["autumn"](i / (len(LEVELS) - 1)) for i in range(len(LEVELS))]
        a.contour(ref.z, ref.x, ref.values.T, levels=lv, colors=colors, linewidths=1.0)
        if np.isfinite(ev_on_ref).any():
            a.contour(ref.z, ref.x, np.ma.masked_invalid(ev_on_ref).T, levels=lv, colors=colors,
                      linewidths=1.0, linestyles="dashed")
        handles = [matplotlib.lines.Line2D([], [], color=col) for col in colors]
        handles += [matplotlib.lines.Line2D([], [], color="0.5"),
                    matplotlib.lines.Line2D([], [], color="0.5", ls="--")]
        a.legend(handles, ["%g %%" % p for p in LEVELS] + ["reference", "evaluated"], fontsize="x-small",
                 loc="upper right", framealpha=0.7)
    a.set_title("isodose lines in %% of %.4g%s" % (norm, unit), fontsize="small")
    map_axes(a, ref)

    diff = 100.0 * (ev_on_ref - ref.values) / norm
    shown = np.where(g.evaluated, diff, np.nan)
    lim = np.nanmax(np.abs(shown)) if np.isfinite(shown).any() else 1.0
    lim = lim if lim > 0 else 1.0
    cmap = matplotlib.colormaps["RdBu_r"].copy()
    cmap.set_bad("0.85")
    m = b.pcolormesh(ref.z_edges, ref.x_edges, np.ma.masked_invalid(shown).T, cmap=cmap, vmin=-lim, vmax=lim,
                     shading="flat")
    colorbar(fig, b, m, "evaluated - reference (%% of %.4g%s)" % (norm, unit))
    b.set_title("dose difference where gamma is evaluated (grey: not evaluated)", fontsize="small")
    map_axes(b, ref)

    cmap = matplotlib.colormaps["coolwarm"].copy()
    cmap.set_bad("0.85")
    m = c.pcolormesh(ref.z_edges, ref.x_edges, np.ma.masked_invalid(g.gamma).T, cmap=cmap, vmin=0.0,
                     vmax=GAMMA_SHOWN, shading="flat")
    colorbar(fig, c, m, "gamma (1)", extend="max")
    c.set_title("%s gamma, %s (grey: not evaluated)" % ("local" if g.local else "global", criteria),
                fontsize="small")
    map_axes(c, ref)

    v = g.values
    if len(v):
        top = max(float(v.max()), 1.0)
        d.hist(v, bins=np.linspace(0.0, top * 1.0001, 51), color="C0")
    d.axvline(1.0, color="C3", lw=1)
    d.set_xlabel("gamma (1)")
    d.set_ylabel("reference points")
    d.set_title("pass rate %.2f %% of %d points (gamma <= 1)" % (g.pass_rate, g.n) if g.n else
                "no points evaluated", fontsize="small")
    d.grid(alpha=0.3)
    fig.suptitle("reference %s\nevaluated %s" % (ref.source, ev.source), fontsize="medium")
    return fig
