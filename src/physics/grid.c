#include "physics/grid.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "input/plan.h"
#include "numerics/moments.h"
#include "physics/lut_angle.h"
#include "physics/nuclear_halo.h"

static int axis_alloc(axis *a, int n)
{
    a->n = n;
    a->centres = calloc((size_t)n, sizeof *a->centres);
    a->edges = calloc((size_t)n + 1, sizeof *a->edges);
    return a->centres && a->edges ? 0 : -1;
}

static void axis_free(axis *a)
{
    free(a->centres);
    free(a->edges);
    a->centres = a->edges = NULL;
    a->n = 0;
}

static void axis_uniform(axis *a, double lo, double width)
{
    for (int i = 0; i <= a->n; i++)
        a->edges[i] = lo + width * i;
    for (int i = 0; i < a->n; i++)
        a->centres[i] = lo + width * (i + 0.5);
}

/* Range grid: bins uniform in residual range (the transport's, the in-plane
 * path range of physics/out_of_plane.h) with spacing ds, so that one
 * step moves a particle from one bin centre exactly onto the next lower one.
 * The top bin is added until its centre reaches E_max, so that any beam
 * energy up to E_max lies between two centres. */
static int energy_axis_range(grid *g, const plan *p, const tables *t, smx_error *err)
{
    double ds_g = p->step_mm * 0.1 * p->density_g_cm3; /* g/cm2 per step */
    double R_lo = tables_path_range(t, p->E_min_MeV);
    double R_hi = tables_path_range(t, p->E_max_MeV);
    int n = (int)ceil((R_hi - R_lo) / ds_g + 0.5 - 1e-9);
    if (n < 2)
        return smx_fail_key(err, SMX_EXIT_INPUT, "transport.step_mm",
                            "%g mm spans the whole energy range in %d bin%s; expected a step "
                            "shorter than the CSDA range of E_max (%.4g mm)",
                            p->step_mm, n, n == 1 ? "" : "s",
                            (R_hi - R_lo) * 10.0 / p->density_g_cm3);
    if (n > 100000)
        return smx_fail_key(err, SMX_EXIT_INPUT, "transport.step_mm",
                            "%g mm gives %d range bins; expected at most 100000", p->step_mm, n);
    double R_top = R_lo + n * ds_g;
    if (!(R_top <= tables_path_range(t, t->E_MeV[t->n - 1])))
        return smx_fail_key(err, SMX_EXIT_INPUT, "grid.energy.E_max_MeV",
                            "%g MeV: the range grid's top edge (%.6g g/cm2) is beyond the table "
                            "'%s' (max %.6g MeV); expected a lower E_max or a longer table",
                            p->E_max_MeV, R_top, t->path, t->E_MeV[t->n - 1]);
    if (axis_alloc(&g->E, n))
        return smx_fail(err, SMX_EXIT_RUNTIME, "out of memory building the energy axis");
    for (int i = 0; i <= n; i++)
        g->E.edges[i] = tables_energy_at_path_range(t, R_lo + ds_g * i);
    g->E.edges[0] = p->E_min_MeV; /* exact, not a round trip through R */
    for (int i = 0; i < n; i++)
        g->E.centres[i] = tables_energy_at_path_range(t, R_lo + ds_g * (i + 0.5));
    return 0;
}

/* spacing: beam: n bins over centre +- W whose edges are the map
 * theta_c sinh(u d0 / theta_c) of u = -n/2 .. n/2 in steps of 1, d0 such that
 * the outer edges fall on +-W, and whose centres are the map of the
 * half-integers (for odd n the window's centre is the middle bin's). */
static int theta_axis_beam(grid *g, const plan *p, smx_error *err)
{
    const double deg = M_PI / 180.0, tc = p->angle_theta_c_deg * deg;
    const double W = p->angle_half_width_deg * deg, mid = p->angle_centre_deg * deg;
    const int n = p->angle_bins;
    if (!(tc > 0.0) || !isfinite(tc))
        return smx_fail_key(err, SMX_EXIT_INPUT, "grid.angle.spacing",
                            "beam needs theta_c from the beam, and none was worked out (%g deg); "
                            "expected uniform",
                            p->angle_theta_c_deg);
    const double d0 = tc * asinh(W / tc) / (0.5 * n), tcb = tc / d0;
    g->dtheta = d0;
    g->theta_c = tc;
    for (int i = 0; i <= n; i++)
        g->theta.edges[i] = mid + d0 * angle_map_sinh(tcb, i - 0.5 * n);
    g->theta.edges[0] = mid - W; /* exact, not a round trip through asinh */
    g->theta.edges[n] = mid + W;
    for (int i = 0; i < n; i++)
        g->theta.centres[i] = mid + d0 * angle_map_sinh(tcb, i + 0.5 - 0.5 * n);
    return 0;
}

/* The dose's planes (grid.h): the dose, the halo's bands, then the LET's
 * and the dose to water's tallies, each only when the plan asks for it. */
static void grid_plane_layout(grid *g, const plan *p)
{
    int n = 1;
    g->halo_bands = p->nuclear == NUCLEAR_HALO ? SMX_HALO_BANDS : 0;
    n += g->halo_bands;
    g->plane_edep = g->plane_let_edep = g->plane_track = g->plane_water = 0;
    if (p->let || p->dose_to_water)
        g->plane_edep = n++;
    if (p->let) {
        g->plane_let_edep = n++;
        g->plane_track = n++;
    }
    if (p->dose_to_water)
        g->plane_water = n++;
    g->dose_planes = n;
}

int grid_build(grid *g, const plan *p, const tables *t, smx_error *err)
{
    *g = (grid){ 0 };
    double tmin = t->E_MeV[0], tmax = t->E_MeV[t->n - 1];
    if (p->E_min_MeV < tmin)
        return smx_fail_key(err, SMX_EXIT_INPUT, "grid.energy.E_min_MeV",
                            "%g MeV is below the table '%s' (%g to %g MeV); expected E_min >= %g",
                            p->E_min_MeV, t->path, tmin, tmax, tmin);
    if (p->E_max_MeV > tmax)
        return smx_fail_key(err, SMX_EXIT_INPUT, "grid.energy.E_max_MeV",
                            "%g MeV is above the table '%s' (%g to %g MeV); expected E_max <= %g",
                            p->E_max_MeV, t->path, tmin, tmax, tmax);

    g->energy_kind = p->energy_kind;
    g->angle_mode = p->angle_mode;
    g->angle_spacing = p->angle_mode == ANGLE_WINDOW ? p->angle_spacing : ANGLE_UNIFORM;
    g->dx = p->dx_mm;
    g->dz = p->dz_mm;
    g->ds = p->step_mm;
    g->density = p->density_g_cm3;
    g->ncomp = p->streaming_scheme == STREAM_MOMENTS ? SMX_MOM_COMPONENTS : 1;
    grid_plane_layout(g, p);

    int rc;
    if (p->energy_kind == EGRID_RANGE) {
        if ((rc = energy_axis_range(g, p, t, err)))
            goto fail;
    } else {
        if (axis_alloc(&g->E, p->energy_bins)) {
            rc = smx_fail(err, SMX_EXIT_RUNTIME, "out of memory building the energy axis");
            goto fail;
        }
        axis_uniform(&g->E, p->E_min_MeV, (p->E_max_MeV - p->E_min_MeV) / p->energy_bins);
    }
    /* Below the lowest centre a particle cannot be split between two centres
     * with its mean energy kept, so it stops there at the latest. */
    g->E_stop = fmax(p->E_cutoff_MeV, g->E.centres[0]);

    const double deg = M_PI / 180.0;
    if (axis_alloc(&g->theta, p->angle_bins)) {
        rc = smx_fail(err, SMX_EXIT_RUNTIME, "out of memory building the angle axis");
        goto fail;
    }
    if (p->angle_mode == ANGLE_WINDOW && p->angle_spacing == ANGLE_BEAM) {
        if ((rc = theta_axis_beam(g, p, err)))
            goto fail;
    } else if (p->angle_mode == ANGLE_WINDOW) {
        g->dtheta = 2.0 * p->angle_half_width_deg * deg / p->angle_bins;
        axis_uniform(&g->theta, (p->angle_centre_deg - p->angle_half_width_deg) * deg, g->dtheta);
    } else {
        /* Full circle, laid out so that the centre angle is a bin centre for odd n. */
        g->dtheta = 2.0 * M_PI / p->angle_bins;
        axis_uniform(&g->theta, p->angle_centre_deg * deg - M_PI, g->dtheta);
    }

    if (axis_alloc(&g->x, p->nx) || axis_alloc(&g->z, p->nz)) {
        rc = smx_fail(err, SMX_EXIT_RUNTIME, "out of memory building the space axes");
        goto fail;
    }
    axis_uniform(&g->x, -0.5 * p->nx * p->dx_mm, p->dx_mm);
    axis_uniform(&g->z, 0.0, p->dz_mm);

    g->ne = g->E.n;
    g->nth = g->theta.n;
    g->nz = p->nz;
    g->nx = p->nx;
    g->slice = g->nz * g->nx;
    g->cells = g->ne * g->nth * g->slice;
    return 0;
fail:
    grid_free(g);
    return rc;
}

int axis_part(axis *dst, const axis *src, int a, int n)
{
    dst->n = n;
    dst->centres = malloc((size_t)n * sizeof *dst->centres);
    dst->edges = malloc(((size_t)n + 1) * sizeof *dst->edges);
    if (!dst->centres || !dst->edges)
        return -1;
    memcpy(dst->centres, src->centres + a, (size_t)n * sizeof *dst->centres);
    memcpy(dst->edges, src->edges + a, ((size_t)n + 1) * sizeof *dst->edges);
    return 0;
}

int grid_energy_prefix(grid *dst, const grid *g, int64_t ne)
{
    *dst = *g;
    dst->E = dst->theta = dst->x = dst->z = (axis){ 0 };
    dst->ne = ne < 1 ? 1 : ne > g->ne ? g->ne : ne;
    dst->cells = dst->ne * dst->nth * dst->slice;
    if (axis_part(&dst->E, &g->E, 0, (int)dst->ne) ||
        axis_part(&dst->theta, &g->theta, 0, g->theta.n) || axis_part(&dst->x, &g->x, 0, g->x.n) ||
        axis_part(&dst->z, &g->z, 0, g->z.n)) {
        grid_free(dst);
        return -1;
    }
    return 0;
}

void grid_free(grid *g)
{
    axis_free(&g->E);
    axis_free(&g->theta);
    axis_free(&g->x);
    axis_free(&g->z);
}
