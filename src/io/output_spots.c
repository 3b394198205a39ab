/* /dose/per_spot: each spot's dose per proton (the dose-influence matrix of a
 * treatment field), as compressed sparse rows that scipy.sparse reads as they
 * are: csr_matrix((data, indices, indptr), shape=shape). */
#include <stdio.h>
#include <stdlib.h>

#include "input/plan_access.h"
#include "io/output_internal.h"

int out_write_spot_rows(output *o, const plan *p, const grid *g, const spot_rows_out *w,
                        smx_error *err)
{
    const spot_dose *sd = w->rows;
    if (!sd->indptr || sd->n_spots == 0)
        return 0;
    const hsize_t n = (hsize_t)sd->n_spots, nnz = (hsize_t)sd->nnz;
    const int64_t shape[2] = { sd->n_spots, g->slice };
    const double per_MeV = out_gy_per_MeV(p, g);
    float *data = malloc((nnz ? nnz : 1) * sizeof *data);
    double *spot = malloc(5 * n * sizeof *spot);
    if (!data || !spot) {
        free(data);
        free(spot);
        return smx_fail(err, SMX_EXIT_RUNTIME, "%s: out of memory writing %s", o->final_path,
                        w->path);
    }
    /* MeV per unit weight -> Gy per proton, rounded once to float. */
    for (hsize_t i = 0; i < nnz; i++)
        data[i] = (float)(sd->values[i] * out_gy_per_MeV_at(o, p, g, sd->indices[i]));
    double *protons = spot, *dropped = spot + n, *energy = spot + 2 * n, *x = spot + 3 * n,
           *peak = spot + 4 * n;
    for (int k = 0; k < sd->n_spots; k++) {
        const plan_spot s = plan_spot_at(p, k);
        protons[k] = s.weight;
        dropped[k] = sd->dropped[k] * per_MeV;
        energy[k] = s.energy_MeV;
        x[k] = s.x_mm;
        peak[k] = 0.0;
        for (int64_t j = sd->indptr[k]; j < sd->indptr[k + 1]; j++)
            peak[k] = data[j] > peak[k] ? data[j] : peak[k];
    }
    const char *sp = "spot";
    char peak_name[48], dropped_name[48], dropped_doc[200];
    snprintf(peak_name, sizeof peak_name, "peak_%s", w->unit_name);
    snprintf(dropped_name, sizeof dropped_name, "dropped_%s", w->unit_name);
    snprintf(dropped_doc, sizeof dropped_doc,
             "Sum over cells of each spot's %s that was not stored (below threshold times %s)",
             w->quantity, peak_name);
    const dset list[] = {
        { .name = "data",
          .kind = V_F32,
          .rank = 1,
          .dims = { nnz },
          .data = data,
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
        { .name = "protons",
          .kind = V_F64,
          .rank = 1,
          .dims = { n },
          .data = protons,
          .units = "1",
          .axes = sp,
          .description =
              "Each spot's protons (its weight): protons @ matrix is the field's dose_Gy" },
        { .name = "energy_MeV",
          .kind = V_F64,
          .rank = 1,
          .dims = { n },
          .data = energy,
          .units = "MeV",
          .axes = sp,
          .description = "Each spot's nominal energy" },
        { .name = "x_mm",
          .kind = V_F64,
          .rank = 1,
          .dims = { n },
          .data = x,
          .units = "mm",
          .axes = sp,
          .description = "Each spot's lateral position" },
        { .name = peak_name,
          .kind = V_F64,
          .rank = 1,
          .dims = { n },
          .data = peak,
          .units = w->units,
          .axes = sp,
          .description = w->peak_doc },
        { .name = dropped_name,
          .kind = V_F64,
          .rank = 1,
          .dims = { n },
          .data = dropped,
          .units = w->units,
          .axes = sp,
          .description = dropped_doc },
    };
    hid_t grp = H5I_INVALID_HID;
    int rc = out_open_group(o, w->path, &grp, err);
    if (!rc)
        rc = out_put_all(o, grp, w->path, list, sizeof list / sizeof list[0], err);
    if (!rc)
        rc = out_attr_str(o, grp, w->path, "format", "csr", err);
    if (!rc)
        rc = out_attr_f64(o, grp, w->path, "threshold", sd->threshold, err);
    if (!rc)
        rc = out_attr_str(o, grp, w->path, "description", w->group_doc, err);
    out_close_id(&grp, H5Gclose);
    free(data);
    free(spot);
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
