/* /mpi: the processes of an MPI job that wrote the file (an MPI build,
 * docs/mpi.md): how many, the MPI library, and each rank's host, device and
 * block of per-spot rows: its rows of the nominal (/dose/per_spot) and its
 * (scenario, spot) pairs, which differ only in a plan with scenarios. A
 * build without MPI writes no /mpi. */
#include <stdlib.h>

#include "io/output_internal.h"

int out_write_ranks(output *o, const provenance *pv, smx_error *err)
{
    const int n = pv->n_ranks;
    const char **host = malloc((size_t)n * sizeof *host);
    const char **device = malloc((size_t)n * sizeof *device);
    int64_t *first = malloc((size_t)n * sizeof *first);
    int64_t *count = malloc((size_t)n * sizeof *count);
    int64_t *pair_first = malloc((size_t)n * sizeof *pair_first);
    int64_t *pair_count = malloc((size_t)n * sizeof *pair_count);
    int rc = 0;
    if (!host || !device || !first || !count || !pair_first || !pair_count) {
        rc = smx_fail(err, SMX_EXIT_RUNTIME, "%s: out of memory writing /mpi", o->final_path);
        goto done;
    }
    for (int k = 0; k < n; k++) {
        host[k] = pv->ranks[k].host;
        device[k] = pv->ranks[k].device;
        first[k] = pv->ranks[k].spot_first;
        count[k] = pv->ranks[k].spot_count;
        pair_first[k] = pv->ranks[k].pair_first;
        pair_count[k] = pv->ranks[k].pair_count;
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
        { .name = "pair_first",
          .kind = V_I64,
          .rank = 1,
          .dims = { nr },
          .data = pair_first,
          .units = "1",
          .axes = ax,
          .description =
              "First (scenario, spot) pair the rank computed, numbered scenario * spots + spot "
              "(attribute spots; scenario 0 is the nominal, /dose/per_spot; scenario s > 0 is "
              "/scenarios/NNN/per_spot); spot_first without scenarios" },
        { .name = "pair_count",
          .kind = V_I64,
          .rank = 1,
          .dims = { nr },
          .data = pair_count,
          .units = "1",
          .axes = ax,
          .description = "(Scenario, spot) pairs the rank computed, contiguous from pair_first "
                         "(its rows of every scenario); spot_count without scenarios" },
    };
    hid_t grp = H5I_INVALID_HID;
    rc = out_open_group(o, "/mpi", &grp, err);
    if (!rc)
        rc = out_put_all(o, grp, "/mpi", list, sizeof list / sizeof list[0], err);
    if (!rc)
        rc = out_attr_int(o, grp, "/mpi", "ranks", n, err);
    if (!rc)
        rc = out_attr_int(o, grp, "/mpi", "scenarios", pv->mpi_scenarios, err);
    if (!rc)
        rc = out_attr_int(o, grp, "/mpi", "spots", pv->mpi_spots, err);
    if (!rc)
        rc = out_attr_str(o, grp, "/mpi", "library",
                          pv->mpi_library[0] ? pv->mpi_library : "unknown", err);
    if (!rc)
        rc = out_attr_str(
            o, grp, "/mpi", "description",
            "The processes of the MPI job that wrote this file: rank 0 ran the field's total "
            "dose (of every scenario) and wrote the file; each rank computed its block of "
            "per-spot rows, contiguous in the list of (scenario, spot) pairs",
            err);
    out_close_id(&grp, H5Gclose);
done:
    free(host);
    free(device);
    free(first);
    free(count);
    free(pair_first);
    free(pair_count);
    return rc;
}
