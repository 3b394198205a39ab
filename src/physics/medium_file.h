/* The geometry's HDF5 inputs: a material map (geometry.map_file) and a CT
 * image (geometry.ct.file). Layout (docs/geometry.md):
 *
 *   /material_index  integer [nz][nx]   index into /materials, per cell
 *   /materials       strings [n]        material names (library keys or the plan's material.name)
 *   /density_g_cm3   float   [nz][nx]   mass density per cell (optional: nominal densities)
 *   /hu              number  [nz][nx]   CT number per cell (CT image only)
 *   attributes of /: dx_mm, dz_mm (cell size; required), x0_mm, z0_mm (the
 *   image's first x and z edge; default -nx dx_mm / 2 and 0, the plan's frame)
 *
 * Every value is checked on reading; the file is read in a child process
 * first (physics/h5_image.h), so a corrupt file is an error, not a crash. */
#ifndef SMX_MEDIUM_FILE_H
#define SMX_MEDIUM_FILE_H

#include "base/error.h"
#include "physics/medium.h"

typedef struct medium_file {
    int nz, nx;
    double dz_mm, dx_mm, z0_mm, x0_mm; /* cell size and first edges */
    int *index; /* map: [nz * nx], z-major */
    float *density; /* map: [nz * nx] g/cm3, or NULL (not in the file) */
    char (*names)[MEDIUM_NAME_MAX]; /* map: [n_names] */
    int n_names;
    double *hu; /* CT: [nz * nx] */
} medium_file;

int medium_file_read_map(medium_file *f, const char *path, smx_error *err);
int medium_file_read_ct(medium_file *f, const char *path, smx_error *err);
void medium_file_free(medium_file *f);

/* The image's cell holding point (z, x) in mm: 1 and (*iz, *ix) when inside. */
int medium_file_cell_at(const medium_file *f, double z_mm, double x_mm, int *iz, int *ix);

#endif
