/* The plan's geometry as a medium map (physics/medium.h): the background
 * (material:), then a material map or a CT image (geometry.map_file,
 * geometry.ct), then the shapes on top, later shapes winning
 * (docs/geometry.md). */
#ifndef SMX_MEDIUM_PLAN_H
#define SMX_MEDIUM_PLAN_H

#include "base/error.h"
#include "input/plan.h"
#include "physics/grid.h"
#include "physics/medium.h"

/* The uniform map when the plan has no geometry. Material names resolve to
 * the plan's material (material.name: its table_file) or to a library key
 * (its table data/materials/KEY.h5, found like material.table_file). Errors
 * name the plan's, the map's or the calibration's file, line and column. */
int medium_map_build(medium_map *m, const plan *p, const grid *g, smx_error *err);

/* Nominal mass density of a library material (g/cm3), 0 for an unknown key. */
double medium_nominal_density_g_cm3(const char *key);

#endif
