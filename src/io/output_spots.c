/* /dose/per_spot: each spot's dose per proton (the dose-influence matrix of a
 * treatment field), as compressed sparse rows, data and indices chunked and
 * compressed (shuffle + deflate). output.per_spot_precision picks the values'
 * type, named by the group's attribute `encoding`: uint16 = integers of a
 * scale per row (value = data * scale[row], within scale / 2 of the float32
 * value), float32 = the float values as computed. schemas/output.md has the
 * lines that read either into a scipy.sparse matrix. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "input/plan_access.h"
#include "io/output_internal.h"

/* A row's peak is stored as the largest uint16. */
#define SPOT_U16_MAX 65535.0
/* Values per chunk of data and indices: 256 KiB of uint16, 512 KiB of int32
 * or float, so reading one row decompresses a chunk or two; larger chunks
 * compressed no better on a 230 MeV spot's row. */
#define SPOT_CHUNK_VALUES ((hsize_t)1 << 17)
/* The fastest level: on four of the benchmark field's spots it stores 0.78
 * bytes a value against 0.68 at level 4, in a third of the time; at level 4
 * the 820-spot field's 57 million values took several seconds on one core,
 * comparable to their per-spot transport on a GPU. */
#define SPOT_DEFLATE_LEVEL 1

#define ENCODING_U16 "uint16 per-row scale"
#define ENCODING_F32 "float32"

/* The values of a CSR group beside the rows' own: each stored value (data),
 * and each spot's protons, dropped sum, nominal energy, position, largest
 * value and, under uint16, scale. */
typedef struct spot_values {
    void *data; /* [nnz]: float (the plan's unit per proton) or uint16_t (of the row's scale) */
    double *spot; /* [6][n_spots]: the six columns below, one allocation */
    double *protons, *dropped, *energy, *x, *peak, *scale;
} spot_values;

static void spot_values_free(spot_values *v)
{
    free(v->data);
    free(v->spot);
}

/* MeV per unit weight -> the plan's unit per proton, rounded once to float:
 * the float32 value, and what uint16 rounds to its row's scale. */
static float value_at(const output *o, const plan *p, const grid *g, const spot_dose *sd, int64_t j)
{
    return (float)(sd->values[j] * out_gy_per_MeV_at(o, p, g, sd->indices[j]));
}

/* The integer of value f in units of scale, rounded to nearest, so that
 * q * scale is within scale / 2 of f. The stored values are positive and none
 * is above its row's peak: the clamp guards only the division's last bit. A
 * row whose peak is 0 has scale 0 and stores 0. */
static uint16_t quantize(float f, double scale)
{
    double q = scale > 0.0 ? nearbyint((double)f / scale) : 0.0;
    q = q < 0.0 ? 0.0 : q > SPOT_U16_MAX ? SPOT_U16_MAX : q;
    return (uint16_t)q;
}

/* Row k's peak, then its values in the group's encoding; the per-spot columns
 * from the plan's spots and the rows. */
static int spot_values_fill(spot_values *v, output *o, const plan *p, const grid *g,
                            const spot_rows_out *w, smx_error *err)
{
    const spot_dose *sd = w->rows;
    const hsize_t n = (hsize_t)sd->n_spots, nnz = (hsize_t)sd->nnz;
    const double per_MeV = out_gy_per_MeV(p, g);
    const int u16 = p->per_spot_precision == PER_SPOT_UINT16;
    v->data = malloc((nnz ? nnz : 1) * (u16 ? sizeof(uint16_t) : sizeof(float)));
    v->spot = malloc(6 * n * sizeof *v->spot);
    if (!v->data || !v->spot) {
        spot_values_free(v);
        return smx_fail(err, SMX_EXIT_RUNTIME, "%s: out of memory writing %s", o->final_path,
                        w->path);
    }
    float *f32 = v->data;
    uint16_t *q16 = v->data;
    v->protons = v->spot, v->dropped = v->spot + n, v->energy = v->spot + 2 * n;
    v->x = v->spot + 3 * n, v->peak = v->spot + 4 * n, v->scale = v->spot + 5 * n;
    /* Rows on the host's threads, each its own values and columns: one
     * thread took 0.55 s for the benchmark field's 57 million values. */
#pragma omp parallel for schedule(dynamic, 4)
    for (int k = 0; k < sd->n_spots; k++) {
        const plan_spot s = plan_spot_at(p, k);
        const int64_t j0 = sd->indptr[k], j1 = sd->indptr[k + 1];
        v->protons[k] = s.weight;
        v->dropped[k] = sd->dropped[k] * per_MeV;
        v->energy[k] = s.energy_MeV;
        v->x[k] = s.x_mm;
        double peak = 0.0;
        for (int64_t j = j0; j < j1; j++) {
            const float f = value_at(o, p, g, sd, j);
            peak = f > peak ? f : peak;
        }
        v->peak[k] = peak;
        v->scale[k] = peak / SPOT_U16_MAX;
        for (int64_t j = j0; j < j1; j++) {
            if (u16)
                q16[j] = quantize(value_at(o, p, g, sd, j), v->scale[k]);
            else
                f32[j] = value_at(o, p, g, sd, j);
        }
    }
    return 0;
}

/* The values in a chunk of data and indices (a dataset smaller than a chunk
 * is one chunk). */
static hsize_t spot_chunk(hsize_t nnz)
{
    return nnz < SPOT_CHUNK_VALUES ? nnz : SPOT_CHUNK_VALUES;
}

/* data and indices chunked, shuffled and deflated: the indices, ascending runs
 * of cells, shrink to a few hundredths of their bytes, the uint16 values to
 * about a third. The chunks are compressed on the host's threads and written
 * whole (io/h5_deflate.h), so a full disk fails at its chunk; no chunk cache
 * (output_snapshot.c's reason). An empty dataset
 * cannot be chunked and stays contiguous (*dcpl, *dapl left invalid). */
static int spot_compression(output *o, hsize_t nnz, const char *path, hid_t *dcpl, hid_t *dapl,
                            smx_error *err)
{
    *dcpl = *dapl = H5I_INVALID_HID;
    if (nnz == 0)
        return 0;
    const hsize_t chunk = spot_chunk(nnz);
    if ((*dcpl = H5Pcreate(H5P_DATASET_CREATE)) < 0 || H5Pset_chunk(*dcpl, 1, &chunk) < 0 ||
        H5Pset_shuffle(*dcpl) < 0 || H5Pset_deflate(*dcpl, SPOT_DEFLATE_LEVEL) < 0 ||
        (*dapl = H5Pcreate(H5P_DATASET_ACCESS)) < 0 || H5Pset_chunk_cache(*dapl, 0, 0, 1.0) < 0)
        return out_h5_fail(o, err, "set up chunking and compression for", path);
    return 0;
}

/* A per-spot column of the group (axes "spot"). */
typedef struct spot_column {
    const char *name, *units, *description;
    const double *values;
} spot_column;

enum { N_CSR = 4, MAX_COLUMNS = 6 };

/* What the group's datasets are made of: the rows and their values, the
 * compression of data and indices (0: contiguous), and the texts the
 * datasets' descriptions are built in. */
typedef struct spot_group {
    const spot_rows_out *w;
    const spot_values *v;
    int64_t shape[2];
    int u16;
    hid_t dcpl, dapl;
    char data_doc[400], peak_name[48], dropped_name[48], dropped_doc[200], scale_doc[300];
} spot_group;

/* The group's datasets: data, indices, indptr, shape, then the per-spot
 * columns (scale under uint16 only); returns how many. */
static size_t spot_datasets(dset *list, spot_group *sg)
{
    const spot_rows_out *w = sg->w;
    const spot_values *v = sg->v;
    const spot_dose *sd = w->rows;
    const int u16 = sg->u16;
    const hsize_t n = (hsize_t)sd->n_spots, nnz = (hsize_t)sd->nnz;
    const hid_t dcpl = sg->dcpl < 0 ? 0 : sg->dcpl, dapl = sg->dapl < 0 ? 0 : sg->dapl;
    const size_t chunk = (size_t)spot_chunk(nnz);
    snprintf(sg->data_doc, sizeof sg->data_doc, "%s%s", w->data_doc,
             u16 ? ", as integers of the row's scale: the value is data * scale[row]" : "");
    snprintf(sg->peak_name, sizeof sg->peak_name, "peak_%s", w->unit_name);
    snprintf(sg->dropped_name, sizeof sg->dropped_name, "dropped_%s", w->unit_name);
    snprintf(sg->dropped_doc, sizeof sg->dropped_doc,
             "Sum over cells of each spot's %s that was not stored (below threshold times %s)",
             w->quantity, sg->peak_name);
    snprintf(sg->scale_doc, sizeof sg->scale_doc,
             "Each row's scale, %s / 65535: value = data * scale[row], within scale / 2 of the "
             "float32 value",
             sg->peak_name);
    list[0] = (dset){ .name = "data",
                      .kind = u16 ? V_U16 : V_F32,
                      .rank = 1,
                      .dims = { nnz },
                      .data = v->data,
                      .units = u16 ? "1" : w->units,
                      .description = sg->data_doc,
                      .dcpl = dcpl,
                      .dapl = dapl,
                      .deflate_chunk = dcpl ? chunk : 0,
                      .deflate_level = SPOT_DEFLATE_LEVEL };
    list[1] = (dset){ .name = "indices",
                      .kind = V_I32,
                      .rank = 1,
                      .dims = { nnz },
                      .data = sd->indices,
                      .units = "1",
                      .description =
                          "Cell of each value: z * nx + x in /dose/dose_Gy (row-major [nz][nx])",
                      .dcpl = dcpl,
                      .dapl = dapl,
                      .deflate_chunk = dcpl ? chunk : 0,
                      .deflate_level = SPOT_DEFLATE_LEVEL };
    list[2] = (dset){ .name = "indptr",
                      .kind = V_I64,
                      .rank = 1,
                      .dims = { n + 1 },
                      .data = sd->indptr,
                      .units = "1",
                      .description = "Spot k's values are data[indptr[k]:indptr[k+1]]" };
    list[3] = (dset){ .name = "shape",
                      .kind = V_I64,
                      .rank = 1,
                      .dims = { 2 },
                      .data = sg->shape,
                      .units = "1",
                      .description = "Rows (spots, in the spot map's order) and columns (dose "
                                     "cells, nz * nx)" };
    const spot_column columns[MAX_COLUMNS] = {
        { "protons", "1",
          "Each spot's protons (its weight): protons @ matrix is the field's dose_Gy", v->protons },
        { "energy_MeV", "MeV", "Each spot's nominal energy", v->energy },
        { "x_mm", "mm", "Each spot's lateral position", v->x },
        { sg->peak_name, w->units, w->peak_doc, v->peak },
        { sg->dropped_name, w->units, sg->dropped_doc, v->dropped },
        { "scale", w->units, sg->scale_doc, v->scale },
    };
    const int n_columns = u16 ? MAX_COLUMNS : MAX_COLUMNS - 1;
    for (int k = 0; k < n_columns; k++)
        list[N_CSR + k] = (dset){ .name = columns[k].name,
                                  .kind = V_F64,
                                  .rank = 1,
                                  .dims = { n },
                                  .data = columns[k].values,
                                  .units = columns[k].units,
                                  .axes = "spot",
                                  .description = columns[k].description };
    return (size_t)(N_CSR + n_columns);
}

int out_write_spot_rows(output *o, const plan *p, const grid *g, const spot_rows_out *w,
                        smx_error *err)
{
    const spot_dose *sd = w->rows;
    if (!sd->indptr || sd->n_spots == 0)
        return 0;
    spot_values v = { 0 };
    int rc = spot_values_fill(&v, o, p, g, w, err);
    if (rc)
        return rc;
    spot_group sg = { .w = w,
                      .v = &v,
                      .shape = { sd->n_spots, g->slice },
                      .u16 = p->per_spot_precision == PER_SPOT_UINT16 };
    hid_t grp = H5I_INVALID_HID;
    rc = spot_compression(o, (hsize_t)sd->nnz, w->path, &sg.dcpl, &sg.dapl, err);
    if (!rc)
        rc = out_open_group(o, w->path, &grp, err);
    if (!rc) {
        dset list[N_CSR + MAX_COLUMNS];
        size_t n = spot_datasets(list, &sg);
        rc = out_put_all(o, grp, w->path, list, n, err);
    }
    if (!rc)
        rc = out_attr_str(o, grp, w->path, "format", "csr", err);
    if (!rc)
        rc = out_attr_str(o, grp, w->path, "encoding", sg.u16 ? ENCODING_U16 : ENCODING_F32, err);
    if (!rc)
        rc = out_attr_f64(o, grp, w->path, "threshold", sd->threshold, err);
    if (!rc) /* the spots' runs' own (output.per_spot_early_exit_ratio) */
        rc = out_attr_f64(o, grp, w->path, "early_exit_threshold", plan_spot_early_exit(p), err);
    if (!rc)
        rc = out_attr_str(o, grp, w->path, "description", w->group_doc, err);
    out_close_id(&grp, H5Gclose);
    out_close_id(&sg.dapl, H5Pclose);
    out_close_id(&sg.dcpl, H5Pclose);
    spot_values_free(&v);
    return rc;
}

int out_write_per_spot(output *o, const char *path, const plan *p, const grid *g,
                       const run_result *r, smx_error *err)
{
    const spot_rows_out w = {
        .rows = &r->per_spot,
        .path = path,
        .units = "Gy",
        .unit_name = "Gy",
        .quantity = "dose per proton",
        .data_doc =
            "Dose per proton of the row's spot in the column's cell (values stored, row by row)",
        .peak_doc = "Each spot's largest dose per proton",
        .group_doc = "Dose per proton of each spot transported alone (output.per_spot_dose), "
                     "compressed sparse rows (data, indices, indptr, shape) whose values are "
                     "data * scale[row] under the encoding 'uint16 per-row scale', data itself "
                     "under 'float32' (output.per_spot_precision); values below threshold times "
                     "the spot's peak are not stored (their sum: dropped_Gy)"
    };
    return out_write_spot_rows(o, p, g, &w, err);
}
