/* A CT calibration: CT number (HU) -> mass density and material, in the
 * style of Schneider, Bortfeld and Schlegel, Phys. Med. Biol. 45 (2000) 459.
 *
 * The file is CSV: lines starting with '#' and blank lines are skipped; the
 * first other line names the columns hu, density_g_cm3 and material (any
 * order); each further line is one row:
 *   - a row with a density is a point of the density curve, which is
 *     piecewise linear in HU between points (a jump is two points one HU
 *     apart); points ascend strictly in HU;
 *   - a row with a material starts that material's HU interval, which runs
 *     up to the next material row (a library key, or the plan's
 *     material.name); material rows ascend strictly in HU;
 *   - a row may carry both.
 * A CT number below the first point or above the last, or below the first
 * material row, is outside the calibration: an error, never a clamp.
 * Every error names the file, line and column. */
#ifndef SMX_CT_CALIBRATION_H
#define SMX_CT_CALIBRATION_H

#include "base/error.h"
#include "physics/medium.h"

typedef struct ct_calibration {
    int n_points;
    double *point_hu, *point_density; /* [n_points] */
    int n_materials;
    double *material_hu; /* [n_materials]: start of each interval */
    char (*material)[MEDIUM_NAME_MAX]; /* [n_materials] */
    int *material_line, *material_col; /* where each name was written */
} ct_calibration;

int ct_calibration_load(ct_calibration *c, const char *path, smx_error *err);
void ct_calibration_free(ct_calibration *c);

/* Density (g/cm3) and material row of a CT number; 0 when hu is inside the
 * calibration, -1 below it, +1 above it. */
int ct_calibration_eval(const ct_calibration *c, double hu, double *density, int *material_row);

#endif
