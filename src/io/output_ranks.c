/* /mpi: the processes of an MPI job that wrote the file (an MPI build,
 * docs/mpi.md): how many, the MPI library, and each rank's host, device and
 * block of per-spot rows. A build without MPI writes no /mpi. */
#include <stdlib.h>

#include "io/output_internal.h"

int out_write_ranks(output *o, const provenance *pv, smx_error *err)
{
    const int n = pv->n_ranks;
    const char **host = malloc((size_t)n * sizeof *host);
    const char **device = malloc((size_t)n * sizeof *device);
    int64_t *first = malloc((size_t)n * sizeof *first);
    int64_t *count = malloc((size_t)n * sizeof *count);
    int rc = 0;
    if (!host || !device || !first || !count) {
        rc = smx_fail(err, SMX_EXIT_RUNTIME, "%s: out of memory writing /mpi", o->final_path);
        goto done;
    }
    for (int k = 0; k < n; k++) {
        host[k] = pv->ranks[k].host;
        device[k] = pv->ranks[k].device;
        first[k] = pv->ranks[k].spot_first;
        count[k] = pv->ranks[k].spot_count;
    }
    const hsize_t nr = (hsize_t)n;
    const char *ax = "rank";
    const dset list[] = {
        { .name = "host",
          .kind = V_TEXTS,
          .rank = 1,
          .dims = { nr },
          .data = host,
          .units = "",
          .axes = ax,
          .description = "Each rank's host name (gethostname)" },
        { .name = "device",
          .kind = V_TEXTS,
          .rank = 1,
          .dims = { nr },
          .data = device,
          .units = "",
          .axes = ax,
          .description =
              "The backend and device each rank ran on (a GPU: its local rank modulo the host's "
              "GPUs)" },
        { .name = "spot_first",
          .kind = V_I64,
          .rank = 1,
          .dims = { nr },
          .data = first,
          .units = "1",
          .axes = ax,
          .description = "First row of /dose/per_spot the rank computed (0-based spot index)" },
        { .name = "spot_count",
          .kind = V_I64,
          .rank = 1,
          .dims = { nr },
          .data = count,
          .units = "1",
          .axes = ax,
          .description =
              "Rows of /dose/per_spot the rank computed (contiguous from spot_first; 0 without "
              "output.per_spot_dose)" },
    };
    hid_t grp = H5I_INVALID_HID;
    rc = out_open_group(o, "/mpi", &grp, err);
    if (!rc)
        rc = out_put_all(o, grp, "/mpi", list, sizeof list / sizeof list[0], err);
    if (!rc)
        rc = out_attr_int(o, grp, "/mpi", "ranks", n, err);
    if (!rc)
        rc = out_attr_str(o, grp, "/mpi", "library",
                          pv->mpi_library[0] ? pv->mpi_library : "unknown", err);
    if (!rc)
        rc = out_attr_str(
            o, grp, "/mpi", "description",
            "The processes of the MPI job that wrote this file: rank 0 ran the field's total "
            "dose and wrote the file; each rank computed its block of per-spot rows",
            err);
    out_close_id(&grp, H5Gclose);
done:
    free(host);
    free(device);
    free(first);
    free(count);
    return rc;
}
