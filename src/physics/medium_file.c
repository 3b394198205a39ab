#include "physics/medium_file.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "physics/h5_image.h"

/* A map is a few megabytes; a file this large is the wrong one. */
#define MEDIUM_FILE_MAX_BYTES ((size_t)1 << 30)
#define MEDIUM_FILE_MAX_CELLS ((int64_t)1 << 28)

typedef struct reading {
    medium_file *f;
    int ct;
} reading;

/* An attribute of / as one number; a missing optional one leaves *out as it is. */
static int read_attr_f64(hid_t fid, const char *path, const char *name, int required, double *out,
                         smx_error *err)
{
    htri_t ex = H5Aexists(fid, name);
    if (ex < 0)
        return smx_fail(err, SMX_EXIT_INPUT, "%s: cannot look up attribute '%s'", path, name);
    if (ex == 0) {
        if (required)
            return smx_fail(err, SMX_EXIT_INPUT,
                            "%s: attribute '%s' of / is missing; expected the cell size in mm "
                            "(docs/geometry.md)",
                            path, name);
        return 0;
    }
    hid_t a = H5Aopen(fid, name, H5P_DEFAULT);
    hid_t sp = a < 0 ? H5I_INVALID_HID : H5Aget_space(a);
    int rc = 0;
    if (a < 0 || sp < 0 || H5Sget_simple_extent_npoints(sp) != 1)
        rc = smx_fail(err, SMX_EXIT_INPUT, "%s: attribute '%s' is unreadable or not one number",
                      path, name);
    else if (H5Aread(a, H5T_NATIVE_DOUBLE, out) < 0)
        rc = smx_fail(err, SMX_EXIT_INPUT, "%s: attribute '%s' cannot be read as a number", path,
                      name);
    else if (!isfinite(*out))
        rc = smx_fail(err, SMX_EXIT_INPUT, "%s: attribute '%s' is %g; expected a finite number",
                      path, name, *out);
    if (sp >= 0)
        H5Sclose(sp);
    if (a >= 0)
        H5Aclose(a);
    return rc;
}

/* A 2-D dataset's shape; with nz, nx already set, it must match. */
static int shape_of(hid_t ds, const char *path, const char *name, medium_file *f, smx_error *err)
{
    hid_t sp = H5Dget_space(ds);
    hsize_t dims[2] = { 0, 0 };
    int rank = sp < 0 ? -1 : H5Sget_simple_extent_ndims(sp);
    if (rank == 2 && H5Sget_simple_extent_dims(sp, dims, NULL) < 0)
        rank = -1;
    if (sp >= 0)
        H5Sclose(sp);
    if (rank != 2)
        return smx_fail(err, SMX_EXIT_INPUT, "%s: /%s has %s; expected a 2-D dataset [nz][nx]",
                        path, name,
                        rank < 0    ? "an unreadable shape"
                        : rank == 1 ? "1 dimension"
                                    : "another rank");
    if (dims[0] == 0 || dims[1] == 0 || (int64_t)(dims[0] * dims[1]) > MEDIUM_FILE_MAX_CELLS)
        return smx_fail(err, SMX_EXIT_INPUT,
                        "%s: /%s is %llu x %llu; expected between 1 and %lld cells", path, name,
                        (unsigned long long)dims[0], (unsigned long long)dims[1],
                        (long long)MEDIUM_FILE_MAX_CELLS);
    if (f->nz == 0) {
        f->nz = (int)dims[0];
        f->nx = (int)dims[1];
    } else if ((hsize_t)f->nz != dims[0] || (hsize_t)f->nx != dims[1]) {
        return smx_fail(err, SMX_EXIT_INPUT,
                        "%s: /%s is %llu x %llu but /material_index is %d x %d; expected the "
                        "same shape",
                        path, name, (unsigned long long)dims[0], (unsigned long long)dims[1], f->nz,
                        f->nx);
    }
    return 0;
}

/* A numeric 2-D dataset to read: its name, the type its values are read as
 * (mtype, elem bytes each) and where the new buffer goes. */
typedef struct grid_dataset {
    const char *name;
    hid_t mtype;
    size_t elem;
    void **out;
} grid_dataset;

/* Dataset d of the file read into a new buffer of f's shape. */
static int read_grid(hid_t fid, const char *path, const grid_dataset *d, medium_file *f,
                     smx_error *err)
{
    const char *name = d->name;
    const hid_t mtype = d->mtype;
    const size_t elem = d->elem;
    void **out = d->out;
    hid_t ds = H5Dopen2(fid, name, H5P_DEFAULT);
    if (ds < 0)
        return smx_fail(err, SMX_EXIT_INPUT, "%s: cannot open dataset /%s", path, name);
    int rc = shape_of(ds, path, name, f, err);
    hid_t t = rc ? H5I_INVALID_HID : H5Dget_type(ds);
    if (!rc && (t < 0 || (H5Tget_class(t) != H5T_INTEGER && H5Tget_class(t) != H5T_FLOAT)))
        rc = smx_fail(err, SMX_EXIT_INPUT, "%s: /%s is not numeric; expected integers or floats",
                      path, name);
    if (t >= 0)
        H5Tclose(t);
    if (!rc) {
        *out = malloc((size_t)f->nz * (size_t)f->nx * elem);
        if (!*out)
            rc = smx_fail(err, SMX_EXIT_RUNTIME, "%s: out of memory reading /%s", path, name);
        else if (H5Dread(ds, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, *out) < 0)
            rc = smx_fail(err, SMX_EXIT_INPUT,
                          "%s: /%s cannot be read (or its values do not fit the type read)", path,
                          name);
    }
    H5Dclose(ds);
    return rc;
}

static int read_names(hid_t fid, const char *path, medium_file *f, smx_error *err)
{
    hid_t ds = H5Dopen2(fid, "materials", H5P_DEFAULT);
    if (ds < 0)
        return smx_fail(err, SMX_EXIT_INPUT,
                        "%s: cannot open dataset /materials; expected the material names, "
                        "one string per index",
                        path);
    hid_t t = H5Dget_type(ds), sp = H5Dget_space(ds), mt = H5I_INVALID_HID;
    int rc = 0;
    hssize_t n = sp < 0 ? -1 : H5Sget_simple_extent_npoints(sp);
    if (t < 0 || H5Tget_class(t) != H5T_STRING || n < 1 || n > MEDIUM_MAX ||
        H5Sget_simple_extent_ndims(sp) != 1) {
        rc = smx_fail(err, SMX_EXIT_INPUT, "%s: /materials is not a 1-D list of 1 to %d strings",
                      path, MEDIUM_MAX);
        goto done;
    }
    f->n_names = (int)n;
    f->names = calloc((size_t)n, sizeof *f->names);
    if (!f->names) {
        rc = smx_fail(err, SMX_EXIT_RUNTIME, "%s: out of memory", path);
        goto done;
    }
    htri_t var = H5Tis_variable_str(t);
    if (var < 0) {
        rc = smx_fail(err, SMX_EXIT_INPUT, "%s: /materials has an unreadable string type", path);
    } else if (var) {
        char **v = calloc((size_t)n, sizeof *v);
        mt = H5Tcopy(H5T_C_S1);
        if (!v || mt < 0 || H5Tset_size(mt, H5T_VARIABLE) < 0 ||
            H5Dread(ds, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0) {
            rc = smx_fail(err, SMX_EXIT_INPUT, "%s: /materials cannot be read", path);
        } else {
            for (hssize_t i = 0; i < n; i++)
                snprintf(f->names[i], sizeof f->names[i], "%s", v[i] ? v[i] : "");
            H5Dvlen_reclaim(mt, sp, H5P_DEFAULT, v);
        }
        free(v);
    } else {
        size_t w = H5Tget_size(t);
        char *buf = w ? calloc((size_t)n, w + 1) : NULL;
        mt = H5Tcopy(H5T_C_S1);
        if (!buf || mt < 0 || H5Tset_size(mt, w + 1) < 0 ||
            H5Dread(ds, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0)
            rc = smx_fail(err, SMX_EXIT_INPUT, "%s: /materials cannot be read", path);
        else
            for (hssize_t i = 0; i < n; i++)
                snprintf(f->names[i], sizeof f->names[i], "%.*s", (int)w,
                         buf + (size_t)i * (w + 1));
        free(buf);
    }
    for (int i = 0; !rc && i < f->n_names; i++) {
        if (!f->names[i][0])
            rc = smx_fail(err, SMX_EXIT_INPUT,
                          "%s: /materials[%d] is empty; expected a material name", path, i);
        for (int j = 0; !rc && j < i; j++)
            if (!strcmp(f->names[i], f->names[j]))
                rc = smx_fail(err, SMX_EXIT_INPUT,
                              "%s: /materials[%d] and [%d] are both '%s'; expected each "
                              "name once",
                              path, j, i, f->names[i]);
    }
done:
    if (mt >= 0)
        H5Tclose(mt);
    if (t >= 0)
        H5Tclose(t);
    if (sp >= 0)
        H5Sclose(sp);
    H5Dclose(ds);
    return rc;
}

static int read_file(hid_t fid, const char *path, void *ctx, smx_error *err)
{
    reading *r = ctx;
    medium_file *f = r->f;
    medium_file_free(f);
    int rc;
    if (r->ct) {
        const grid_dataset hu = { "hu", H5T_NATIVE_DOUBLE, sizeof(double), (void **)&f->hu };
        if ((rc = read_grid(fid, path, &hu, f, err)))
            return rc;
        for (int64_t i = 0; i < (int64_t)f->nz * f->nx; i++)
            if (!isfinite(f->hu[i]))
                return smx_fail(err, SMX_EXIT_INPUT,
                                "%s: /hu at (z %lld, x %lld) is %g; expected a finite CT "
                                "number",
                                path, (long long)(i / f->nx), (long long)(i % f->nx), f->hu[i]);
    } else {
        const grid_dataset index = { "material_index", H5T_NATIVE_INT, sizeof(int),
                                     (void **)&f->index };
        if ((rc = read_names(fid, path, f, err)) || (rc = read_grid(fid, path, &index, f, err)))
            return rc;
        for (int64_t i = 0; i < (int64_t)f->nz * f->nx; i++)
            if (f->index[i] < 0 || f->index[i] >= f->n_names)
                return smx_fail(err, SMX_EXIT_INPUT,
                                "%s: /material_index at (z %lld, x %lld) is %d; expected an "
                                "index into /materials, 0 to %d",
                                path, (long long)(i / f->nx), (long long)(i % f->nx), f->index[i],
                                f->n_names - 1);
        htri_t ex = H5Lexists(fid, "density_g_cm3", H5P_DEFAULT);
        if (ex < 0)
            return smx_fail(err, SMX_EXIT_INPUT, "%s: cannot look up /density_g_cm3", path);
        if (ex > 0) {
            const grid_dataset density = { "density_g_cm3", H5T_NATIVE_FLOAT, sizeof(float),
                                           (void **)&f->density };
            if ((rc = read_grid(fid, path, &density, f, err)))
                return rc;
            for (int64_t i = 0; i < (int64_t)f->nz * f->nx; i++)
                if (!(f->density[i] > 0.0f && f->density[i] <= 25.0f))
                    return smx_fail(err, SMX_EXIT_INPUT,
                                    "%s: /density_g_cm3 at (z %lld, x %lld) is %g; expected "
                                    "a density in (0, 25] g/cm3",
                                    path, (long long)(i / f->nx), (long long)(i % f->nx),
                                    (double)f->density[i]);
        }
    }
    if ((rc = read_attr_f64(fid, path, "dx_mm", 1, &f->dx_mm, err)) ||
        (rc = read_attr_f64(fid, path, "dz_mm", 1, &f->dz_mm, err)))
        return rc;
    if (!(f->dx_mm > 0 && f->dz_mm > 0))
        return smx_fail(err, SMX_EXIT_INPUT, "%s: cell size dx_mm %g, dz_mm %g; expected both > 0",
                        path, f->dx_mm, f->dz_mm);
    f->x0_mm = -0.5 * f->nx * f->dx_mm;
    f->z0_mm = 0.0;
    if ((rc = read_attr_f64(fid, path, "x0_mm", 0, &f->x0_mm, err)) ||
        (rc = read_attr_f64(fid, path, "z0_mm", 0, &f->z0_mm, err)))
        return rc;
    return 0;
}

static int read_any(medium_file *f, const char *path, int ct, smx_error *err)
{
    memset(f, 0, sizeof *f);
    reading r = { f, ct };
    int rc = h5_image_read(path, MEDIUM_FILE_MAX_BYTES, read_file, &r, err);
    if (rc)
        medium_file_free(f);
    return rc;
}

int medium_file_read_map(medium_file *f, const char *path, smx_error *err)
{
    return read_any(f, path, 0, err);
}
int medium_file_read_ct(medium_file *f, const char *path, smx_error *err)
{
    return read_any(f, path, 1, err);
}

void medium_file_free(medium_file *f)
{
    free(f->index);
    free(f->density);
    free(f->names);
    free(f->hu);
    memset(f, 0, sizeof *f);
}

int medium_file_cell_at(const medium_file *f, double z_mm, double x_mm, int *iz, int *ix)
{
    double fz = floor((z_mm - f->z0_mm) / f->dz_mm), fx = floor((x_mm - f->x0_mm) / f->dx_mm);
    if (!(fz >= 0 && fz < f->nz && fx >= 0 && fx < f->nx))
        return 0;
    *iz = (int)fz;
    *ix = (int)fx;
    return 1;
}
