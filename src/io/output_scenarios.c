/* /scenarios: the dose (and per-spot matrix) of each scenario of a robust
 * plan (scenarios.*, docs/planning.md). Scenario 0 is the nominal, whose
 * /scenarios/000 holds hard links to /dose and /dose/per_spot, so that a
 * reader loops over every scenario alike and nothing is stored twice. */
#include <stdio.h>
#include <stdlib.h>

#include "io/output_internal.h"

static void scenario_path(char *out, size_t cap, int index, const char *leaf)
{
    snprintf(out, cap, "/scenarios/%03d%s%s", index, leaf[0] ? "/" : "", leaf);
}

/* /scenarios/NNN with the scenario's range error and shift as attributes. */
static int open_scenario_group(output *o, int index, const plan_scenario *sc, hid_t *grp,
                               smx_error *err)
{
    char path[64];
    hid_t top = H5I_INVALID_HID;
    int rc = out_open_group(o, "/scenarios", &top, err);
    out_close_id(&top, H5Gclose);
    scenario_path(path, sizeof path, index, "");
    if (!rc)
        rc = out_open_group(o, path, grp, err);
    if (!rc)
        rc = out_attr_f64(o, *grp, path, "range_error_percent", sc->range_error_percent, err);
    if (!rc)
        rc = out_attr_f64(o, *grp, path, "shift_mm", sc->shift_mm, err);
    if (!rc)
        rc = out_attr_f64(o, *grp, path, "density_divisor", 1.0 + sc->range_error_percent / 100.0,
                          err);
    return rc;
}

static int write_scenario(output *o, int index, const output_run *run, const medium_map *media,
                          smx_error *err)
{
    const plan_scenario sc = plan_scenario_at(run->p, index);
    hid_t grp = H5I_INVALID_HID;
    int rc = out_ready(o, run->g, err, "output_write_scenario");
    if (!rc && !o->setup_done)
        rc = smx_fail(err, SMX_EXIT_RUNTIME, "%s: internal: a scenario written before the setup",
                      o->final_path);
    if (!rc)
        rc = open_scenario_group(o, index, &sc, &grp, err);
    out_close_id(&grp, H5Gclose);
    if (rc)
        return rc;
    char dose[64], spots[64];
    scenario_path(dose, sizeof dose, index, "dose");
    scenario_path(spots, sizeof spots, index, "per_spot");
    /* Gy of this scenario's cells: its densities are the nominal's divided by
     * 1 + r/100, so the masses that convert MeV to Gy are its own. */
    const medium_map *nominal = o->media;
    o->media = media && media->cell ? media : NULL;
    rc = out_write_dose(o, dose, spots, run, err);
    o->media = nominal;
    return rc;
}

int output_write_scenario(output *o, int index, const output_run *run, const medium_map *media,
                          smx_error *err)
{
    if (index < 1 || index >= plan_scenario_count(run->p))
        return smx_fail(err, SMX_EXIT_RUNTIME, "internal: scenario %d of %d written", index,
                        plan_scenario_count(run->p));
    h5quiet q = out_quiet_begin();
    int rc = write_scenario(o, index, run, media, err);
    out_quiet_end(q);
    return rc;
}

/* A hard link at `link` to the existing object `target`. */
static int hard_link(output *o, const char *target, const char *link, smx_error *err)
{
    if (H5Lcreate_hard(o->file, target, o->file, link, H5P_DEFAULT, H5P_DEFAULT) < 0)
        return out_h5_fail(o, err, "link", link);
    return SMX_OK;
}

static int write_index(output *o, const plan *p, smx_error *err)
{
    const int n = plan_scenario_count(p);
    if (!o->result_done)
        return smx_fail(err, SMX_EXIT_RUNTIME, "%s: internal: /scenarios before /dose",
                        o->final_path);
    double *range = malloc(2 * (size_t)n * sizeof *range), *shift = range + n;
    if (!range)
        return smx_fail(err, SMX_EXIT_RUNTIME, "%s: out of memory writing /scenarios",
                        o->final_path);
    for (int i = 0; i < n; i++) {
        const plan_scenario sc = plan_scenario_at(p, i);
        range[i] = sc.range_error_percent;
        shift[i] = sc.shift_mm;
    }
    const hsize_t dn = (hsize_t)n;
    const dset list[] = {
        { .name = "range_error_percent",
          .kind = V_F64,
          .rank = 1,
          .dims = { dn },
          .data = range,
          .units = "%",
          .axes = "scenario",
          .description = "Each scenario's range error: its densities are the nominal's divided "
                         "by 1 + r/100 (row 0: the nominal, 0)" },
        { .name = "shift_mm",
          .kind = V_F64,
          .rank = 1,
          .dims = { dn },
          .data = shift,
          .units = "mm",
          .axes = "scenario",
          .description = "Each scenario's setup shift: every spot moved by +s in x, the patient "
                         "by -s (row 0: the nominal, 0)" },
    };
    hid_t top = H5I_INVALID_HID, grp = H5I_INVALID_HID;
    const plan_scenario nominal = { 0.0, 0.0 };
    int rc = out_open_group(o, "/scenarios", &top, err);
    if (!rc)
        rc = out_put_all(o, top, "/scenarios", list, sizeof list / sizeof list[0], err);
    if (!rc)
        rc = out_attr_int(o, top, "/scenarios", "count", n, err);
    if (!rc)
        rc = out_attr_str(o, top, "/scenarios", "combine",
                          plan_choice_name("scenarios.combine", p->scenario_combine), err);
    if (!rc)
        rc = out_attr_str(
            o, top, "/scenarios", "description",
            "The plan's scenarios (scenarios.*): NNN/dose is scenario NNN's dose group, laid out "
            "as /dose, and NNN/per_spot its per-spot matrix (output.per_spot_dose), laid out as "
            "/dose/per_spot; 000 is the nominal, hard links to /dose and /dose/per_spot",
            err);
    if (!rc)
        rc = open_scenario_group(o, 0, &nominal, &grp, err);
    out_close_id(&grp, H5Gclose);
    out_close_id(&top, H5Gclose);
    free(range);
    if (!rc)
        rc = hard_link(o, "/dose", "/scenarios/000/dose", err);
    if (!rc && p->per_spot_dose) {
        htri_t has = H5Lexists(o->file, "/dose/per_spot", H5P_DEFAULT);
        if (has < 0)
            rc = out_h5_fail(o, err, "look up", "/dose/per_spot");
        else if (has > 0)
            rc = hard_link(o, "/dose/per_spot", "/scenarios/000/per_spot", err);
    }
    return rc;
}

int output_write_scenario_index(output *o, const plan *p, smx_error *err)
{
    if (plan_scenario_count(p) < 2)
        return SMX_OK; /* no scenarios: the file stays the plain plan's */
    h5quiet q = out_quiet_begin();
    int rc = write_index(o, p, err);
    out_quiet_end(q);
    return rc;
}
