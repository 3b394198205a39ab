/* psi snapshots during the run: chunked and compressed, one dataset per step. */

#include "io/output_internal.h"

/* A reader decompresses a whole chunk to get any value in it; this bounds that
 * cost for partial reads of very wide planes. */
#define PSI_CHUNK_MAX_BYTES (4u << 20)

static int snapshot_impl(output *o, const grid *g, int step, const float *psi,
                         smx_error *err)
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
                       "step_NNNNNN per saved step (0 = after the source)", err)))
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
    if ((dcpl = H5Pcreate(H5P_DATASET_CREATE)) < 0 || H5Pset_chunk(dcpl, 4, chunk) < 0 ||
        H5Pset_shuffle(dcpl) < 0 || H5Pset_deflate(dcpl, 4) < 0 ||
        /* No chunk cache: each chunk is written once, and writing it during
         * H5Dwrite (not later, at close) makes a full disk fail right there. */
        (dapl = H5Pcreate(H5P_DATASET_ACCESS)) < 0 ||
        H5Pset_chunk_cache(dapl, 0, 0, 1.0) < 0) {
        rc = out_h5_fail(o, err, "set up chunking and compression for", where);
        goto done;
    }
    char desc[128];
    snprintf(desc, sizeof desc, "psi after %d step(s)", step);
    rc = out_put_dataset(o, &(dset){ .parent = grp, .parent_path = "/psi", .name = name,
                                 .kind = V_F32, .rank = 4,
                                 .dims = { (hsize_t)g->ne, (hsize_t)g->nth, (hsize_t)g->nz,
                                           (hsize_t)g->nx },
                                 .data = psi, .units = "weight per bin", .description = desc,
                                 .axes = "energy_centres_MeV,theta_centres_deg,z_centres_mm,"
                                         "x_centres_mm",
                                 .dcpl = dcpl, .dapl = dapl }, &ds, err);
    if (!rc)
        rc = out_attr_int(o, ds, where, "step", step, err);
done:
    rc = out_close_dataset(o, &ds, where, rc, err);
    out_close_id(&dapl, H5Pclose);
    out_close_id(&dcpl, H5Pclose);
    out_close_id(&grp, H5Gclose);
    return rc;
}

int output_write_snapshot(output *o, const grid *g, int step, const float *psi,
                          smx_error *err)
{
    h5quiet q = out_quiet_begin();
    int rc = snapshot_impl(o, g, step, psi, err);
    out_quiet_end(q);
    return rc;
}
