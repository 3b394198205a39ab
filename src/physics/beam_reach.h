/* Where a beam goes, predicted before the run (the dry run): its CSDA range
 * along its straight path through the cells' media, and its lateral reach
 * (the spot's position plus three standard deviations of its width, with
 * multiple scattering after Fermi-Eyges over the tables' scattering power),
 * against the grid's far edge and sides. A prediction for warnings, not the
 * transport: no straggling, no nuclear removal. */
#ifndef SMX_REACH_H
#define SMX_REACH_H

#include "input/plan.h"
#include "physics/grid.h"
#include "physics/medium.h"
#include "physics/tables.h"

/* The dry run's lateral reach counts this many standard deviations: beyond it
 * 0.13 % of a Gaussian's weight lies on each side. */
#define REACH_SIGMAS 3.0

typedef struct beam_reach {
    double
        stop_mm; /* path length where the CSDA range runs out; NAN: the beam leaves the grid first */
    double stop_depth_mm; /* depth z of that point */
    double exit_MeV; /* energy where the path leaves the grid (0 when it stops inside) */
    double exit_residual_g_cm2; /* CSDA range left there, in the last cell's material */
    int exit_side; /* the path leaves through a side (x), not the far edge */
    double x_lo_mm, x_hi_mm; /* x +- `sigmas` sigma, extremes over the path inside the grid */
    double
        straggling_mm; /* 3 range-straggling widths at the stop (water's sigma_R ~ 0.012 R^0.935 cm of the path) */
} beam_reach;

/* One spot's path, its lateral reach `sigmas` standard deviations wide (the
 * dry run: REACH_SIGMAS; a spot's window, transport/window.c: from the
 * per-spot threshold). mt[k]: the tables of the map's material k; m NULL:
 * mt[0] at the grid's density everywhere. */
void beam_reach_of(const grid *g, const medium_map *m, const tables *const *mt, const plan_spot *s,
                   double sigmas, beam_reach *out);

#endif
