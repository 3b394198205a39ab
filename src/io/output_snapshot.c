/* psi snapshots during the run: chunked and compressed, one dataset per step. */

#include "io/output_internal.h"

#include "base/progress.h"

/* A reader decompresses a whole chunk to get any value in it; this bounds that
 * cost for partial reads of very wide planes. */
#define PSI_CHUNK_MAX_BYTES (4u << 20)

/* psi plane by plane, leaving out the planes that hold no weight: their
 * chunks are never written and read back as the fill value, 0. A beam fills
 * few (E, theta) planes at any one step, so most of psi costs neither
 * compression nor disk. */
static int write_planes(output *o, hid_t ds, const grid *g, const float *psi, const char *where,
                        smx_error *err)
{
    char object[96];
    snprintf(object, sizeof object, "dataset %s", where);
    hid_t fspace = H5Dget_space(ds), mspace = H5I_INVALID_HID;
    const hsize_t plane[2] = { (hsize_t)g->nz, (hsize_t)g->nx };
    int rc = 0;
    if (fspace < 0 || (mspace = H5Screate_simple(2, plane, NULL)) < 0)
        rc = out_h5_fail(o, err, "select the planes of", object);
    const double planes = (double)g->ne * (double)g->nth;
    for (int64_t ie = 0; !rc && ie < g->ne; ie++)
        for (int64_t ith = 0; !rc && ith < g->nth; ith++) {
            progress_update((double)(ie * g->nth + ith), planes); /* a terminal's progress line */
            const float *v = psi + psi_index(g, ie, ith, 0, 0);
            int64_t k = 0;
            while (k < g->slice && v[k] == 0.0f)
                k++;
            if (k == g->slice)
                continue;
            const hsize_t start[4] = { (hsize_t)ie, (hsize_t)ith, 0, 0 },
                          count[4] = { 1, 1, plane[0], plane[1] };
            if (H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL) < 0 ||
                H5Dwrite(ds, H5T_NATIVE_FLOAT, mspace, fspace, H5P_DEFAULT, v) < 0)
                rc = out_h5_fail(o, err, "write", object);
        }
    out_close_id(&mspace, H5Sclose);
    out_close_id(&fspace, H5Sclose);
    return rc;
}

static int snapshot_impl(output *o, const grid *g, int step, const float *psi, smx_error *err)
{
    int rc = out_ready(o, g, err, "output_write_snapshot");
    if (rc)
        return rc;
    if (step < 0 || step > 999999)
        return smx_fail(err, SMX_EXIT_RUNTIME, "%s: snapshot step %d outside 0..999999",
                        o->final_path, step);
    hid_t grp = H5I_INVALID_HID, dcpl = H5I_INVALID_HID, dapl = H5I_INVALID_HID;
    hid_t ds = H5I_INVALID_HID;
    char name[32], where[64];
    snprintf(name, sizeof name, "step_%06d", step);
    snprintf(where, sizeof where, "/psi/%s", name);

    if ((rc = out_open_group(o, "/psi", &grp, err)))
        goto done;
    if ((rc = out_attr_str(o, grp, "/psi", "description",
                           "Phase-space snapshots psi[energy][theta][z][x], one dataset "
                           "step_NNNNNN per saved step (0 = after the source)",
                           err)))
        goto done;

    /* One (E, theta) plane per chunk matches both how the solver stores psi and
     * how it is usually read (a z-x map); very wide planes are split along z so a
     * chunk never exceeds PSI_CHUNK_MAX_BYTES. */
    hsize_t chunk[4] = { 1, 1, (hsize_t)g->nz, (hsize_t)g->nx };
    const hsize_t max_vals = PSI_CHUNK_MAX_BYTES / sizeof(float);
    if (chunk[3] > max_vals)
        chunk[3] = max_vals;
    if (chunk[2] * chunk[3] > max_vals)
        chunk[2] = max_vals / chunk[3];
    const float zero = 0.0f;
    if ((dcpl = H5Pcreate(H5P_DATASET_CREATE)) < 0 || H5Pset_chunk(dcpl, 4, chunk) < 0 ||
        H5Pset_fill_value(dcpl, H5T_NATIVE_FLOAT, &zero) < 0 || H5Pset_shuffle(dcpl) < 0 ||
        H5Pset_deflate(dcpl, 4) < 0 ||
        /* No chunk cache: each chunk is written once, and writing it during
         * H5Dwrite (not later, at close) makes a full disk fail right there. */
        (dapl = H5Pcreate(H5P_DATASET_ACCESS)) < 0 || H5Pset_chunk_cache(dapl, 0, 0, 1.0) < 0) {
        rc = out_h5_fail(o, err, "set up chunking and compression for", where);
        goto done;
    }
    char desc[128];
    snprintf(desc, sizeof desc, "psi after %d step(s)", step);
    rc = out_put_dataset(
        o,
        &(dset){ .parent = grp,
                 .parent_path = "/psi",
                 .name = name,
                 .kind = V_F32,
                 .rank = 4,
                 .dims = { (hsize_t)g->ne, (hsize_t)g->nth, (hsize_t)g->nz, (hsize_t)g->nx },
                 .units = "weight per bin",
                 .description = desc,
                 .axes = "energy_centres_MeV,theta_centres_deg,z_centres_mm,"
                         "x_centres_mm",
                 .dcpl = dcpl,
                 .dapl = dapl,
                 .by_caller = 1 },
        &ds, err);
    if (!rc)
        rc = write_planes(o, ds, g, psi, where, err);
    if (!rc)
        rc = out_attr_int(o, ds, where, "step", step, err);
done:
    rc = out_close_dataset(o, &ds, where, rc, err);
    out_close_id(&dapl, H5Pclose);
    out_close_id(&dcpl, H5Pclose);
    out_close_id(&grp, H5Gclose);
    return rc;
}

int output_write_snapshot(output *o, const grid *g, int step, const float *psi, smx_error *err)
{
    h5quiet q = out_quiet_begin();
    int rc = snapshot_impl(o, g, step, psi, err);
    out_quiet_end(q);
    return rc;
}
