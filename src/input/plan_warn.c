/* Plans the reader accepts but whose grid costs accuracy a user may not
 * expect: warned at load, with what each does to the dose. The figures are
 * the CPU build's on config/quickstart.yaml (100 MeV in water, the default
 * shift scheme), varied one key at a time; docs/accuracy-and-speed.md has them
 * with the rest of the grid's trade-offs. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "input/plan_access.h"
#include "input/plan_internal.h"

static const char *num(double v, char *buf)
{
    plan_format_real(v, buf, 40);
    return buf;
}

/* A run loads its plan once per scenario (and a benchmark once per case):
 * each warning is said once per process. */
static void warn_once(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void warn_once(const char *fmt, ...)
{
    static char said[4][600];
    static int n_said;
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    for (int i = 0; i < n_said && i < 4; i++)
        if (!strcmp(said[i], msg))
            return;
    snprintf(said[n_said++ % 4], sizeof said[0], "%s", msg);
    smx_warn("%s", msg);
}

/* A step shorter than a row moves a fraction of a row per step; the shift
 * and bilinear schemes then spread the dose in depth (docs/physics.md, "Known
 * defects"); the moments scheme does not. A step longer than a row crosses
 * rows within a step, and on the range energy grid (one bin per step) the
 * depth dose is resolved to the step. */
static void warn_step(const plan *p)
{
    char a[40], b[40];
    if (p->step_mm < p->dz_mm * (1.0 - 1e-9) && p->streaming_scheme != STREAM_MOMENTS)
        warn_once(
            "transport.step_mm = %s mm is shorter than grid.space.dz_mm = %s mm: a step moves "
            "part of a row, which widens the distal fall-off under streaming_scheme: %s "
            "(100 MeV in water on 1 mm rows: R80-R20 2.12 mm with 0.5 mm steps, 1.43 mm "
            "with 1 mm steps); expected step_mm = dz_mm, or streaming_scheme: moments\n",
            num(p->step_mm, a), num(p->dz_mm, b),
            p->streaming_scheme == STREAM_SHIFT ? "shift" : "bilinear");
    else if (p->step_mm > p->dz_mm * (1.0 + 1e-9))
        warn_once("transport.step_mm = %s mm is longer than grid.space.dz_mm = %s mm: a step "
                  "crosses rows, and the depth dose is resolved to the step, not the row "
                  "(100 MeV in water on 0.5 mm rows with 1 mm steps: R80-R20 1.45 mm against "
                  "1.24 mm, the peak 5.37 times the entrance against 5.78); expected step_mm = "
                  "dz_mm\n",
                  num(p->step_mm, a), num(p->dz_mm, b));
}

/* A beam without divergence starts in the direction bins next to its
 * direction, split between the two nearest centres: off a centre (an even
 * bin count puts the window's centre on an edge) it starts with a spread it
 * does not have. */
static void warn_direction(const plan *p)
{
    if (p->angle_spacing == ANGLE_BEAM && p->angle_mode == ANGLE_WINDOW) {
        /* The bins are finest at the window's centre, a bin centre for odd n. */
        int off = 0, first = -1;
        for (int i = 0; i < plan_spot_count(p); i++) {
            double d = fmod(plan_spot_at(p, i).direction_deg - p->angle_centre_deg, 360.0);
            d = d > 180.0 ? d - 360.0 : d < -180.0 ? d + 360.0 : d;
            if (fabs(d) > 1e-9) {
                off++;
                first = first < 0 ? i : first;
            }
        }
        char a[40], b[40];
        if (off)
            warn_once("grid.angle.spacing: beam makes the bins finest at grid.angle.centre_deg = "
                      "%s, and %d spot%s (the first at %s deg) start%s off it, in wider bins; "
                      "expected spots along the window's centre\n",
                      num(p->angle_centre_deg, a), off, off == 1 ? "" : "s",
                      num(plan_spot_at(p, first).direction_deg, b), off == 1 ? "s" : "");
        else if (p->angle_bins % 2 == 0)
            warn_once("grid.angle.n_bins = %d: with spacing: beam an even count puts the window's "
                      "centre on an edge between its two finest bins; expected an odd n_bins\n",
                      p->angle_bins);
        return;
    }
    const int full = p->angle_mode == ANGLE_FULL;
    const double lo =
        full ? p->angle_centre_deg - 180.0 : p->angle_centre_deg - p->angle_half_width_deg;
    const double d = (full ? 360.0 : 2.0 * p->angle_half_width_deg) / p->angle_bins;
    int off = 0, first = -1;
    for (int i = 0; i < plan_spot_count(p); i++) {
        const plan_spot s = plan_spot_at(p, i);
        if (s.divergence_mrad > 0.0)
            continue;
        const double pos = fmod(fmod(s.direction_deg - lo, 360.0) + 360.0, 360.0) / d - 0.5;
        if (fabs(pos - round(pos)) > 1e-6) {
            off++;
            if (first < 0)
                first = i;
        }
    }
    if (!off)
        return;
    char a[40], b[40], c[40];
    const plan_spot s = plan_spot_at(p, first);
    char who[120];
    if (plan_spot_count(p) == 1)
        snprintf(who, sizeof who, "the beam's direction %s deg", num(s.direction_deg, a));
    else
        snprintf(who, sizeof who, "the direction of %d spots without divergence (the first %s deg)",
                 off, num(s.direction_deg, a));
    warn_once("grid.angle.n_bins = %d: %s lies between two direction bins (centres every %s deg "
              "from %s deg), so it starts split over both, a spread the beam does not have (100 "
              "MeV pencil in water: lateral rms at R80/2 1.43 mm with 40 bins against 1.40 mm with "
              "41); expected %s\n",
              p->angle_bins, who, num(d, b), num(lo + 0.5 * d, c),
              p->angle_bins % 2 == 0 ? "an odd n_bins, which puts centre_deg on a bin centre"
                                     : "a direction on a bin centre");
}

int plan_warn_grid = 1;

void plan_warn_accuracy(const plan *p)
{
    if (!plan_warn_grid)
        return;
    warn_step(p);
    warn_direction(p);
}
