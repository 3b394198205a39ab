/* XDMF sidecar describing 2D per-cell maps stored in an HDF5 file, so that
 * ParaView (Xdmf or Xdmf3 reader) opens the dose map face-on, x across and depth
 * up the screen (layout: schemas/output.md). */
#ifndef SMX_XDMF_H
#define SMX_XDMF_H

#include <stdint.h>

#include "base/error.h"

/* A uniform nz x nx cell mesh; (z0, x0) is its corner (the first z and x edge). */
typedef struct xdmf_mesh {
    int64_t nz, nx;
    double z0_mm, x0_mm;
    double dz_mm, dx_mm;
} xdmf_mesh;

typedef struct xdmf_field {
    const char *name; /* shown in ParaView */
    const char *h5_path; /* absolute dataset path inside the HDF5 file, shape [nz][nx] */
    int precision; /* bytes per value: 4 or 8 (float), 1 (UChar) */
    const char *number_type; /* XDMF NumberType: NULL = "Float"; "UChar" for a material index */
} xdmf_field;

/* Writes path via a temporary file and rename, so a reader never sees half a file.
 * h5_name is written as given (normally the basename, so both files move together). */
int xdmf_write(const char *path, const char *h5_name, const xdmf_mesh *m, const xdmf_field *fields,
               int n_fields, smx_error *err);

/* "<h5 path minus .h5>.xdmf", or h5 path + ".xdmf"; malloc'd, NULL on no memory. */
char *xdmf_path_for(const char *h5_path);

#endif
