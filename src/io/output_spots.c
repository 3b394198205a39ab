/* /dose/per_spot: each spot's dose per proton (the dose-influence matrix of a
 * treatment field), as compressed sparse rows that scipy.sparse reads as they
 * are: csr_matrix((data, indices, indptr), shape=shape). */
#include <stdio.h>
#include <stdlib.h>

#include "input/plan_access.h"
#include "io/output_internal.h"

/* The values of a CSR group beside the rows' own: each stored value in the
 * plan's dose unit (data), and each spot's protons, dropped sum, nominal
 * energy, position and largest value. */
typedef struct spot_values {
    float *data; /* [nnz] */
    double *spot; /* [5][n_spots]: the five columns below, one allocation */
    double *protons, *dropped, *energy, *x, *peak;
} spot_values;

static void spot_values_free(spot_values *v)
{
    free(v->data);
    free(v->spot);
}

/* MeV per unit weight -> the plan's unit per proton, rounded once to float;
 * the per-spot columns from the plan's spots and the rows. */
static int spot_values_fill(spot_values *v, output *o, const plan *p, const grid *g,
                            const spot_rows_out *w, smx_error *err)
{
    const spot_dose *sd = w->rows;
    const hsize_t n = (hsize_t)sd->n_spots, nnz = (hsize_t)sd->nnz;
    const double per_MeV = out_gy_per_MeV(p, g);
    v->data = malloc((nnz ? nnz : 1) * sizeof *v->data);
    v->spot = malloc(5 * n * sizeof *v->spot);
    if (!v->data || !v->spot) {
        spot_values_free(v);
        return smx_fail(err, SMX_EXIT_RUNTIME, "%s: out of memory writing %s", o->final_path,
                        w->path);
    }
    float *data = v->data;
    for (hsize_t i = 0; i < nnz; i++)
        data[i] = (float)(sd->values[i] * out_gy_per_MeV_at(o, p, g, sd->indices[i]));
    v->protons = v->spot, v->dropped = v->spot + n, v->energy = v->spot + 2 * n;
    v->x = v->spot + 3 * n, v->peak = v->spot + 4 * n;
    for (int k = 0; k < sd->n_spots; k++) {
        const plan_spot s = plan_spot_at(p, k);
        v->protons[k] = s.weight;
        v->dropped[k] = sd->dropped[k] * per_MeV;
        v->energy[k] = s.energy_MeV;
        v->x[k] = s.x_mm;
        v->peak[k] = 0.0;
        for (int64_t j = sd->indptr[k]; j < sd->indptr[k + 1]; j++)
            v->peak[k] = data[j] > v->peak[k] ? data[j] : v->peak[k];
    }
    return 0;
}

/* A per-spot column of the group (axes "spot"). */
typedef struct spot_column {
    const char *name, *units, *description;
    const double *values;
} spot_column;

int out_write_spot_rows(output *o, const plan *p, const grid *g, const spot_rows_out *w,
                        smx_error *err)
{
    const spot_dose *sd = w->rows;
    if (!sd->indptr || sd->n_spots == 0)
        return 0;
    const hsize_t n = (hsize_t)sd->n_spots, nnz = (hsize_t)sd->nnz;
    const int64_t shape[2] = { sd->n_spots, g->slice };
    spot_values v = { 0 };
    int rc = spot_values_fill(&v, o, p, g, w, err);
    if (rc)
        return rc;
    char peak_name[48], dropped_name[48], dropped_doc[200];
    snprintf(peak_name, sizeof peak_name, "peak_%s", w->unit_name);
    snprintf(dropped_name, sizeof dropped_name, "dropped_%s", w->unit_name);
    snprintf(dropped_doc, sizeof dropped_doc,
             "Sum over cells of each spot's %s that was not stored (below threshold times %s)",
             w->quantity, peak_name);
    const spot_column columns[] = {
        { "protons", "1",
          "Each spot's protons (its weight): protons @ matrix is the field's dose_Gy", v.protons },
        { "energy_MeV", "MeV", "Each spot's nominal energy", v.energy },
        { "x_mm", "mm", "Each spot's lateral position", v.x },
        { peak_name, w->units, w->peak_doc, v.peak },
        { dropped_name, w->units, dropped_doc, v.dropped },
    };
    enum { N_COLUMNS = sizeof columns / sizeof columns[0] };
    dset list[4 + N_COLUMNS] = {
        { .name = "data",
          .kind = V_F32,
          .rank = 1,
          .dims = { nnz },
          .data = v.data,
          .units = w->units,
          .description = w->data_doc },
        { .name = "indices",
          .kind = V_I32,
          .rank = 1,
          .dims = { nnz },
          .data = sd->indices,
          .units = "1",
          .description = "Cell of each value: z * nx + x in /dose/dose_Gy (row-major [nz][nx])" },
        { .name = "indptr",
          .kind = V_I64,
          .rank = 1,
          .dims = { n + 1 },
          .data = sd->indptr,
          .units = "1",
          .description = "Spot k's values are data[indptr[k]:indptr[k+1]]" },
        { .name = "shape",
          .kind = V_I64,
          .rank = 1,
          .dims = { 2 },
          .data = shape,
          .units = "1",
          .description =
              "Rows (spots, in the spot map's order) and columns (dose cells, nz * nx)" },
    };
    for (int k = 0; k < N_COLUMNS; k++)
        list[4 + k] = (dset){ .name = columns[k].name,
                              .kind = V_F64,
                              .rank = 1,
                              .dims = { n },
                              .data = columns[k].values,
                              .units = columns[k].units,
                              .axes = "spot",
                              .description = columns[k].description };
    hid_t grp = H5I_INVALID_HID;
    rc = out_open_group(o, w->path, &grp, err);
    if (!rc)
        rc = out_put_all(o, grp, w->path, list, sizeof list / sizeof list[0], err);
    if (!rc)
        rc = out_attr_str(o, grp, w->path, "format", "csr", err);
    if (!rc)
        rc = out_attr_f64(o, grp, w->path, "threshold", sd->threshold, err);
    if (!rc)
        rc = out_attr_str(o, grp, w->path, "description", w->group_doc, err);
    out_close_id(&grp, H5Gclose);
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
                     "compressed sparse rows: scipy.sparse.csr_matrix((data, indices, indptr), "
                     "shape=shape); values below threshold times the spot's peak are not stored "
                     "(their sum: dropped_Gy)"
    };
    return out_write_spot_rows(o, p, g, &w, err);
}
