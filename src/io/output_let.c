/* /let (output.let): the primaries' LET per cell and, with
 * output.per_spot_let, each spot's LETd x dose; /dose_to_water
 * (output.dose_to_water). The maps come from the dose's spectral planes
 * (transport/spectral_maps.h, docs/physics.md "LET", "Dose to water"). */
#include <stdlib.h>

#include "io/output_internal.h"

static int write_let_maps(output *o, const plan *p, const grid *g, const run_result *r,
                          smx_error *err)
{
    const hsize_t nz = (hsize_t)g->nz, nx = (hsize_t)g->nx;
    const char *axes = "z_centres_mm,x_centres_mm";
    const dset list[] = {
        { .name = "dose_averaged_keV_um",
          .kind = V_F64,
          .rank = 2,
          .dims = { nz, nx },
          .data = r->let_d,
          .units = "keV/um",
          .axes = axes,
          .description =
              "LETd: the primary protons' unrestricted LET (stopping power) in the cell's "
              "medium, averaged over the energy they lose there; 0 where none do" },
        { .name = "track_averaged_keV_um",
          .kind = V_F64,
          .rank = 2,
          .dims = { nz, nx },
          .data = r->let_t,
          .units = "keV/um",
          .axes = axes,
          .description = "LETt: the same LET averaged over the primaries' track length in the "
                         "cell; 0 where none pass" },
    };
    hid_t grp = H5I_INVALID_HID;
    int rc = out_open_group(o, "/let", &grp, err);
    if (!rc)
        rc = out_put_all(o, grp, "/let", list, sizeof list / sizeof list[0], err);
    if (!rc)
        rc = out_attr_str(o, grp, "/let", "particles",
                          "primary protons (the nuclear halo's secondaries and the fragments' "
                          "local deposit are in /dose but not in these averages)",
                          err);
    out_close_id(&grp, H5Gclose);
    if (!rc && r->per_spot_let.indptr) {
        const spot_rows_out w = {
            .rows = &r->per_spot_let,
            .path = "/let/per_spot_let_dose",
            .units = "Gy keV/um",
            .unit_name = "Gy_keV_um",
            .quantity = "LETd times dose per proton",
            .data_doc = "LETd times the dose per proton of the row's spot in the column's cell, "
                        "on the cells of /dose/per_spot's row",
            .peak_doc = "Each spot's largest LETd times dose per proton",
            .group_doc = "Each spot's LETd x dose per proton (output.per_spot_let), compressed "
                         "sparse rows with the same rows and cells as /dose/per_spot, stored "
                         "as it is (attribute encoding), each row with its own scale under "
                         "uint16: (protons @ this) / (protons @ /dose/per_spot) is a plan's LETd"
        };
        rc = out_write_spot_rows(o, p, g, &w, err);
    }
    return rc;
}

static int write_dose_to_water(output *o, const plan *p, const grid *g, const run_result *r,
                               smx_error *err)
{
    double protons;
    double *gy = out_dose_gy(o, p, g, r->dose_water_MeV, &protons), *gy1 = gy + g->slice;
    if (!gy)
        return smx_fail(err, SMX_EXIT_RUNTIME, "%s: out of memory writing /dose_to_water",
                        o->final_path);
    const hsize_t nz = (hsize_t)g->nz, nx = (hsize_t)g->nx;
    const char *axes = "z_centres_mm,x_centres_mm";
    const dset list[] = {
        { .name = "dose_Gy",
          .kind = V_F64,
          .rank = 2,
          .dims = { nz, nx },
          .data = gy,
          .units = "Gy",
          .axes = axes,
          .description = "Dose to water of the beam's protons: /dose/dose_Gy (dose to medium) "
                         "times the water-to-medium mass stopping-power ratio over the cell's "
                         "spectrum" },
        { .name = "dose_Gy_per_proton",
          .kind = V_F64,
          .rank = 2,
          .dims = { nz, nx },
          .data = gy1,
          .units = "Gy",
          .axes = axes,
          .description = "The same per proton" },
    };
    hid_t grp = H5I_INVALID_HID;
    int rc = out_open_group(o, "/dose_to_water", &grp, err);
    if (!rc)
        rc = out_put_all(o, grp, "/dose_to_water", list, sizeof list / sizeof list[0], err);
    if (!rc)
        rc = out_attr_str(o, grp, "/dose_to_water", "quantity", "dose to water", err);
    out_close_id(&grp, H5Gclose);
    free(gy);
    return rc;
}

int out_write_let(output *o, const plan *p, const grid *g, const run_result *r, smx_error *err)
{
    int rc = 0;
    if (r->let_d && r->let_t)
        rc = write_let_maps(o, p, g, r, err);
    if (!rc && r->dose_water_MeV)
        rc = write_dose_to_water(o, p, g, r, err);
    return rc;
}
