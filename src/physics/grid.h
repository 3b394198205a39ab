/* Phase-space axes: energy, direction, lateral x and depth z (centres and edges).
 * psi[iE][ith][iz][ix] is float32 with x fastest; every flat index is 64-bit. */
#ifndef SMX_GRID_H
#define SMX_GRID_H

#include <stdint.h>

#include "base/error.h"
#include "base/plan_choices.h"
#include "physics/tables.h"

/* The plan (input/plan.h) is only passed through here. */
typedef struct plan plan;

typedef struct axis {
    int n;
    double *centres; /* n */
    double *edges; /* n + 1, ascending */
} axis;

/* Copies axis src's cells a .. a + n - 1 (and their n + 1 edges) into dst,
 * allocated (freed with the grid that holds it). -1: out of memory. */
int axis_part(axis *dst, const axis *src, int a, int n);

typedef struct grid {
    axis E; /* MeV */
    axis theta; /* rad, from +x towards +z (90 deg = depth) */
    axis x, z; /* mm; x centred on 0, z from 0 (entrance plane) */
    int energy_kind; /* enum energy_grid_kind */
    int angle_mode; /* enum angle_mode */
    int angle_spacing; /* enum angle_spacing */
    /* rad. Uniform bins: their width. spacing: beam: d0, the scale of the
     * map theta = centre + theta_c sinh(u dtheta / theta_c) of a uniform u
     * (angle_map_sinh), whose bins are dtheta wide at the centre and
     * dtheta sqrt(1 + (theta / theta_c)^2) elsewhere. */
    double dtheta;
    double theta_c; /* rad; spacing: beam only (0 otherwise) */
    double dx, dz; /* mm */
    double ds; /* step length, mm */
    double density; /* g/cm3 */
    double E_stop; /* MeV: particles whose energy after a step falls below this stop */
    int64_t ne, nth, nz, nx;
    int64_t slice; /* nz * nx: one (E, theta) plane */
    int64_t cells; /* ne * nth * nz * nx */
    /* Components of the state per cell: 1, or under the moments scheme 4
     * (the weight and its moments, numerics/moments.h), each a block of cells. */
    int ncomp;
    /* Planes of the dose map, each [nz][nx]: the dose (plane 0), then the
     * spectral tallies (physics/spectral_tally.h), which each step adds from
     * psi as it finds the cells:
     *  - under transport.nuclear: halo, planes 1 .. halo_bands: the energy
     *    released to secondary protons in each band of the primary's energy
     *    (physics/nuclear_halo.h);
     *  - with output.let or output.dose_to_water, plane_edep: the primaries'
     *    energy loss (MeV), the weight of the averages below;
     *  - with output.let, plane_let_edep: that loss times the step's
     *    dose-averaged LET (MeV keV/um), and plane_track: the track length (mm);
     *  - with output.dose_to_water, plane_water: the loss times the
     *    water-to-medium mass stopping-power ratio (MeV).
     * A plane index of 0 means the tally is not kept. */
    int dose_planes;
    int halo_bands;
    int plane_edep, plane_let_edep, plane_track, plane_water;
    /* Columns of one slot, 0 = nx (no slots): a state holding several spots
     * side by side (docs/model.md, "Windows") has nx = slots * slot_nx, and
     * each slot is a domain of its own: weight that would move out of its
     * slot leaves the grid (SPATIAL_LEAK), as it would leave a window of
     * slot_nx columns. */
    int64_t slot_nx;
} grid;

/* Whether a particle of energy E (after a step) is still transported, i.e. not
 * below g->E_stop. On a range grid E is the next lower centre, computed
 * through the range table; its round trip may land a few ulps below the
 * lowest centre, which is E_stop, and the bin above it would then stop a
 * whole step early (one step's range short, all its energy in one row).
 * NAN (below the table) stops. */
static inline int grid_keeps(const grid *g, double E)
{
    return E >= g->E_stop * (1.0 - 1e-9);
}

/* Whether a step from bin i to energy E keeps the particle: as grid_keeps,
 * and where the grid's lowest centre is the stop, a step from a higher bin
 * to within half a bin below that centre lands on it (rounded to the
 * nearest, not down). Rounded down, a particle in a medium a hair denser
 * than the reference stopped one step early and lost that step's range:
 * 0.15-0.18 mm of R80 in water of nine media at densities 1 +- 0.0002
 * (tests/test_hetero.c). The lowest bin itself stops as before: kept, it
 * would never stop in a light medium (lung, air), whose step moves it less
 * than half a bin. */
static inline int grid_keeps_from(const grid *g, int i, double E)
{
    if (grid_keeps(g, E))
        return 1;
    const double *Ec = g->E.centres;
    return i > 0 && g->ne > 1 && g->E_stop == Ec[0] && E >= Ec[0] - 0.5 * (Ec[1] - Ec[0]);
}

/* The columns of one slot of g (nx where g has no slots). */
static inline int64_t grid_slot_nx(const grid *g)
{
    return g->slot_nx > 0 && g->slot_nx < g->nx ? g->slot_nx : g->nx;
}

/* The first column of the slot holding column x. */
static inline int grid_slot_lo(const grid *g, int x)
{
    const int w = (int)grid_slot_nx(g);
    return x - x % w;
}

/* The layout of g's row z = 0 alone (nz = 1; a view sharing g's axes, never
 * grid_free'd): a source fills that row only (physics/source.h), so a buffer
 * of this layout holds any source of g without the grid's other rows. */
static inline grid grid_row0(const grid *g)
{
    grid r = *g;
    r.nz = 1;
    r.slice = r.nx;
    r.cells = r.ne * r.nth * r.nx;
    return r;
}

/* Cells z0..z1 x x0..x1 of a slice (inclusive; empty when z0 > z1): where an
 * energy bin of psi may hold weight. */
typedef struct grid_box {
    int z0, z1, x0, x1;
} grid_box;

static inline int64_t psi_index(const grid *g, int64_t ie, int64_t ith, int64_t iz, int64_t ix)
{
    return ((ie * g->nth + ith) * g->nz + iz) * g->nx + ix;
}

/* Builds the axes from a validated plan and its tables. A range grid derives its
 * bin count from E_min, E_max and step_mm; errors name the plan key at fault. */
int grid_build(grid *g, const plan *p, const tables *t, smx_error *err);
void grid_free(grid *g);
/* dst: g with its lowest ne energy bins alone (1 <= ne <= g->ne; every
 * other axis the same), its axes its own (grid_free). For sources that
 * occupy no higher bin: no weight ever rises in energy (physics/lut_energy.h),
 * so the bins above stay empty. -1: out of memory. */
int grid_energy_prefix(grid *dst, const grid *g, int64_t ne);

#endif
