/* The physics tables of a medium map's materials, for the transport: the
 * plan's own (material 0, already loaded by the caller) and one more per
 * further material, each read and validated as material.table_file is. */
#ifndef SMX_MEDIUM_TABLES_H
#define SMX_MEDIUM_TABLES_H

#include "base/error.h"
#include "input/plan.h"
#include "physics/medium.h"
#include "physics/out_of_plane.h"
#include "physics/tables.h"

typedef struct medium_tables {
    int n; /* the map's materials */
    tables *owned; /* [n]: [0] unused (the caller's) */
    const tables **mt; /* [n]: mt[0] = the caller's, mt[k] = &owned[k] */
    const tables *water; /* medium_tables_load_water: a material named water, or water_owned */
    tables water_owned;
} medium_tables;

/* Each further material's table with its in-plane path range, theta_0
 * gathered in t0's material by the model m (NULL: the CSDA range). */
int medium_tables_load(medium_tables *mt, const medium_map *m, const tables *t0,
                       const out_of_plane_model *detour, smx_error *err);
/* output.dose_to_water: the water table the ratio is taken to, that of the
 * map's material named "water" if it has one, else the library's. */
int medium_tables_load_water(medium_tables *mt, const medium_map *m, const plan *p, smx_error *err);
void medium_tables_free(medium_tables *mt);

#endif
