/* A field's per-spot doses (output.per_spot_dose): every spot on a window of
 * its own, many side by side in the slots of one state, batched by energy on
 * the energy bins a batch reaches (docs/model.md, "Spots side by side"). */
#ifndef SMX_PER_SPOT_H
#define SMX_PER_SPOT_H

#include "transport/halo_dose.h"
#include "transport/spectral_maps.h"
#include "transport/stepper.h"

/* Spots first .. first + n - 1 of the plan (n > 0) into r->per_spot (rows
 * in spot order, the steps' conservation figures into r's). proto: the
 * run's stepper settings (plan, grid, backend, collect interval; no state);
 * st: the run's tables; t, media: what they were built from; mt: the
 * materials' tables; host, occupied: an all-zero psi of the run's grid's
 * row 0 (grid_row0) and its boxes (all zero again on return); halo: the run's
 * nuclear halo, added to each spot's dose; smaps: its LET maps
 * (output.per_spot_let: rows into r->per_spot_let); dose:
 * [g->dose_planes][g->slice] scratch. */
int per_spot_runs(const stepper *proto, const sim_tables *st, const tables *t,
                  const sim_media *media, const tables *const *mt, halo_dose *halo,
                  const spectral_maps *smaps, float *host, grid_box *occupied, double *dose,
                  int first, int n, run_result *r, smx_error *err);

#endif
