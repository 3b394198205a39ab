/* The beam: initial psi at the entrance plane (z row 0). */
#ifndef SMX_SOURCE_H
#define SMX_SOURCE_H

#include "base/error.h"
#include "input/plan.h"
#include "physics/grid.h"

/* The beam's weight profiles: energy wE times the joint direction-position
 * profile wthx (which sums to 1; direction depends on position when
 * beam.correlation is set), times the beam weight, is the initial psi in row
 * z = 0. wth and wx are the marginals of wthx. Exposed so tests can check each
 * beam key's effect. */
typedef struct beam_profile {
    double *wE; /* [ne] */
    /* Under the moments scheme a point energy goes whole to its nearest bin,
     * e_bin, at offset e_offset from the centre (bins of residual range,
     * numerics/moments.h); -1: none (an energy spread, or another scheme,
     * whose point energy is split between the two bracketing centres). */
    int e_bin;
    double e_offset;
    double *wth; /* [nth] */
    double *wx; /* [nx] */
    double *wthx; /* [nth][nx] */
} beam_profile;

int beam_profile_build(beam_profile *b, const plan *p, const grid *g, smx_error *err); /* spot 0 */
int beam_profile_build_spot(beam_profile *b, const plan *p, const plan_spot *s, const grid *g,
                            smx_error *err);
void beam_profile_free(beam_profile *b);

/* Fills row z = 0 of psi, which must be all zero already (calloc), with every
 * spot of the plan (plan_spot_at): a large grid is then never touched outside
 * the beam. Returns the weight and the energy
 * (MeV) actually written, summed in double from the stored floats, and, when
 * occupied is not NULL, per energy bin the smallest box holding its non-zero
 * values (occupied[ne]; empty for a bin without weight), so that the backends
 * need not search the whole of psi for them. */
int source_fill(float *psi, const plan *p, const grid *g, grid_box *occupied, double *weight,
                double *energy_MeV, smx_error *err);
/* The same with one spot of the field (plan_spot_at index), or every spot
 * when spot < 0: the per-spot dose runs each spot alone. Where e_moments is
 * not NULL, each spot's energy moments are added to it per bin (the
 * backends' upload reads them): [0, ne) the weight, [ne, 2 ne) the weight
 * times the offset from the bin's centre, [2 ne, 3 ne) times its square
 * (SOURCE_EMOM doubles; the caller zeroes it). */
#define SOURCE_EMOM(ne) (3 * (ne))
int source_fill_spot(float *psi, const plan *p, const grid *g, int spot, grid_box *occupied,
                     double *weight, double *energy_MeV, double *e_moments, smx_error *err);
/* A bin's mean offset and mean squared offset from e_moments (0 where it
 * holds no weight, or e_moments is NULL). */
void source_bin_moments(const double *e_moments, int ne, int ie, double *mean, double *square);
/* Zeroes the rows source_fill wrote (its occupied boxes), so that the buffer
 * is all zero again for the next spot without touching the rest. */
void source_clear(float *psi, const grid *g, const grid_box *occupied);

#endif
