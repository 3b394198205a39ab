/* What the spectral tallies (physics/spectral_tally.h) give after a run:
 * the primaries' dose-averaged and track-averaged LET per cell, and the dose
 * to water from the dose to medium (docs/physics.md, "LET" and "Dose to
 * water"). Ratios of the dose's planes, the same for a field and for each of
 * its spots. */
#ifndef SMX_SPECTRAL_MAPS_H
#define SMX_SPECTRAL_MAPS_H

#include "base/error.h"
#include "physics/grid.h"
#include "physics/medium.h"
#include "physics/tables.h"

typedef struct spectral_maps {
    const grid *g;
    const medium_map *mm; /* NULL: medium 0 everywhere */
    /* Per medium, water's mass stopping-power ratio to it at
     * SPECTRAL_HALO_RATIO_MEV: the factor of a cell that only the halo's
     * secondaries reach (no primary's spectrum there). */
    double *ratio_no_primary;
} spectral_maps;

#define SPECTRAL_HALO_RATIO_MEV 100.0

/* mt[k]: the table of mm's material k (mm NULL: mt[0] alone); water: with
 * output.dose_to_water. */
int spectral_maps_init(spectral_maps *sm, const grid *g, const medium_map *mm,
                       const tables *const *mt, const tables *water, smx_error *err);
void spectral_maps_free(spectral_maps *sm);

/* planes: [g->dose_planes][nz][nx] as the run left them. let_d, let_t:
 * [nz][nx] keV/um (0 where no primary lost energy); let_t may be NULL. */
void spectral_let(const spectral_maps *sm, const double *planes, double *let_d, double *let_t);
/* dose_w[c] = planes[0][c] times the cell's water/medium factor. */
void spectral_dose_to_water(const spectral_maps *sm, const double *planes, double *dose_w);

#endif
