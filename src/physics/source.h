/* The beam: initial psi at the entrance plane (z row 0). */
#ifndef SMX_SOURCE_H
#define SMX_SOURCE_H

#include "base/error.h"
#include "input/plan_access.h"
#include "physics/grid.h"

/* The beam's weight profiles: energy wE times the joint direction-position
 * profile wthx (which sums to 1; direction depends on position when
 * beam.correlation is set), times the beam weight, is the initial psi in row
 * z = 0. wth and wx are the marginals of wthx. Exposed so tests can check each
 * beam key's effect. */
typedef struct beam_profile {
    double *wE; /* [ne] */
    double *wth; /* [nth] */
    double *wx; /* [nx] */
    double *wthx; /* [nth][nx] */
} beam_profile;

/* The profiles of spot 0 of the plan, or of spot s, index `spot` of the
 * field (plan_spot_at), which the reader checked (plan_spot_check: a caller
 * that changes a plan's spots afterwards checks them again). A spot the grid
 * cannot hold is an error at the spot (source_spot_fail). */
int beam_profile_build(beam_profile *b, const plan *p, const grid *g, smx_error *err);
int beam_profile_build_spot(beam_profile *b, const plan_spot *s, int spot, const grid *g,
                            smx_error *err);
void beam_profile_free(beam_profile *b);

/* A source's host buffer as source_fill fills it: psi, all zero before
 * (calloc); occupied[ne], where not NULL, per energy bin the smallest box
 * holding its non-zero values (empty for a bin without weight), so that the
 * backends need not search the whole of psi for them; and, filled in, the
 * weight and the energy (MeV) actually written, summed in double from the
 * stored floats. */
typedef struct source_buf {
    float *psi;
    grid_box *occupied;
    double weight, energy_MeV;
} source_buf;

/* Fills row z = 0 of s->psi with every spot of the plan (plan_spot_at): a
 * large grid is then never touched outside the beam. */
int source_fill(source_buf *s, const plan *p, const grid *g, smx_error *err);
/* The same with one spot of the field (plan_spot_at index), or every spot
 * when spot < 0: the per-spot dose runs each spot alone. */
int source_fill_spot(source_buf *s, const plan *p, const grid *g, int spot, smx_error *err);
/* An input error about column `column` (a beam.* key's name: "weight",
 * "sigma_x_mm") of spot `spot` of the field, at the key "beam.spots[SPOT].COLUMN":
 * the plan's owner words it at beam.COLUMN in the plan for the beam.* spot, at
 * the spot's line and column of the spot file otherwise (plan_word_error). */
int source_spot_fail(smx_error *err, int spot, const char *column, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Zeroes the rows source_fill wrote (its occupied boxes), so that the buffer
 * is all zero again for the next spot without touching the rest. */
void source_clear(float *psi, const grid *g, const grid_box *occupied);

#endif
