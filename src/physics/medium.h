/* What every cell of the (z, x) grid is made of: a small list of media, each a
 * (material, density) pair, and one medium index per cell.
 *
 * Medium 0 is the plan's `material:` (the background). It is also the
 * reference medium of the energy grid: on a `range` grid one step in medium 0
 * moves a particle exactly one bin; in any other medium the energy after a step
 * is split between bins (docs/physics.md, "Heterogeneous media").
 *
 * Densities are quantised where a map gives many distinct values (CT numbers):
 * every cell's density is its medium's, and the dose in Gy uses exactly that
 * value, so the map written to the result file is the map transported. */
#ifndef SMX_MEDIUM_H
#define SMX_MEDIUM_H

#include <stdint.h>

#include "base/error.h"

/* A cell's medium index is one byte. */
#define MEDIUM_MAX 255
#define MEDIUM_NAME_MAX 64
#define MEDIUM_PATH_MAX 4096

typedef struct medium_material {
    char name[MEDIUM_NAME_MAX]; /* as the plan names it (library key or material.name) */
    char table_path[MEDIUM_PATH_MAX]; /* its HDF5 table, resolved */
} medium_material;

typedef struct medium {
    int material; /* index into medium_map.materials */
    double density_g_cm3;
} medium;

typedef struct medium_map {
    int nz, nx;
    int n_materials;
    medium_material *materials; /* [n_materials]; [0] is the background */
    int n_media;
    medium *media; /* [n_media]; [0] is the background at the plan's density */
    uint8_t *cell; /* [nz * nx], z-major like dose; NULL = every cell medium 0 */
    char rule[512]; /* how the map was made (shapes, map file, CT calibration), for provenance */
    double density_step; /* relative step of the density quantisation of map/CT cells; 0 = exact */
} medium_map;

/* The one medium of a uniform map: a material (its name, its table) at a density. */
typedef struct uniform_medium {
    const char *name;
    const char *table_path;
    double density_g_cm3;
} uniform_medium;

/* One medium everywhere: the plan's material at its density (no allocation of
 * cell). u's name and table_path are copied. */
int medium_map_uniform(medium_map *m, int nz, int nx, const uniform_medium *u, smx_error *err);

/* Adds a medium (material index, density) if it is not in the list yet and
 * returns its index; -1 with err set when MEDIUM_MAX would be exceeded. */
int medium_map_add_medium(medium_map *m, int material, double density_g_cm3, smx_error *err);

/* Adds a material by name and table path if not present; returns its index. */
int medium_map_add_material(medium_map *m, const char *name, const char *table_path,
                            smx_error *err);

/* Allocates cell[] (all medium 0) if it is still NULL. */
int medium_map_cells(medium_map *m, smx_error *err);

static inline int medium_of(const medium_map *m, int z, int x)
{
    return m->cell ? m->cell[(int64_t)z * m->nx + x] : 0;
}

static inline int medium_map_uniform_p(const medium_map *m)
{
    return m->n_media == 1;
}

/* 1 when the map's cells hold media of more than one density: where a step's
 * deposit is then shared by mass (numerics/deposit_path.h). */
static inline int medium_map_mass_varies(const medium_map *m)
{
    if (!m || !m->cell)
        return 0;
    for (int i = 1; i < m->n_media; i++)
        if (m->media[i].density_g_cm3 != m->media[0].density_g_cm3)
            return 1;
    return 0;
}

/* dst: a copy of src whose every medium's density is divided by `divisor`
 * (a robust plan's range scenario, which scales the densities of the loaded
 * map instead of building it again; the cells keep their media). */
int medium_map_scaled(medium_map *dst, const medium_map *src, double divisor, smx_error *err);

void medium_map_free(medium_map *m);

/* Per cell, the reference density rho_ref over the cell's ([nz][nx]), in
 * *out; *out NULL where the map has no cells (one medium). -1: out of memory. */
int medium_map_to_reference(const medium_map *m, double rho_ref, double **out);

/* Density quantisation: rho rounded, in log, to the nearest of (1 + step)^k
 * g/cm3 (k an integer), so the result is within a factor (1 + step)^(1/2)
 * of rho and 1 g/cm3 is kept exactly. step 0 returns rho. */
double medium_quantise_density(double rho, double step);

/* Fills the cells from one (material index, density) pair per cell, adding
 * the media they need. Densities are kept exactly when the media fit in
 * MEDIUM_MAX - reserve; otherwise they are quantised with the smallest step
 * 0.005 * 2^k (k = 0, 1, ...) that fits, recorded in m->density_step. Cells
 * whose pair equals an existing medium (the background) get that medium. */
int medium_map_fill_cells(medium_map *m, const int *material, const double *density, int reserve,
                          smx_error *err);

#endif
