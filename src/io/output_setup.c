/* What the result file holds before the first step: the axes (centres and
 * edges, with units) and the plan (verbatim YAML and resolved values). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/sha256.h"
#include <hdf5_hl.h>

#include "io/output_internal.h"

#define RAD_TO_DEG (180.0 / 3.14159265358979323846)

/* An axis as /axes holds it: the stem of its datasets' names, its units,
 * what it is, and the factor from the grid's units to those. */
typedef struct axis_doc {
    const char *stem, *units, *what;
    double scale;
} axis_doc;

/* Axis a's centres (a dimension scale) and edges, as d says. */
static int write_axis(output *o, hid_t grp, const axis_doc *d, const axis *a, smx_error *err)
{
    const char *stem = d->stem, *units = d->units, *what = d->what;
    const double scale = d->scale;
    size_t n = (size_t)a->n;
    double *c = malloc(n * sizeof *c), *e = malloc((n + 1) * sizeof *e);
    if (!c || !e) {
        free(c);
        free(e);
        return smx_fail(err, SMX_EXIT_RUNTIME, "%s: out of memory writing /axes", o->final_path);
    }
    for (size_t i = 0; i < n; i++)
        c[i] = a->centres[i] * scale;
    for (size_t i = 0; i <= n; i++)
        e[i] = a->edges[i] * scale;
    char name[64], desc[256];
    snprintf(name, sizeof name, "%s_centres_%s", stem, units);
    snprintf(desc, sizeof desc, "%s bin centres", what);
    hid_t sid = H5I_INVALID_HID;
    int rc = out_put_dataset(o,
                             &(dset){ .parent = grp,
                                      .parent_path = "/axes",
                                      .name = name,
                                      .kind = V_F64,
                                      .rank = 1,
                                      .dims = { n },
                                      .data = c,
                                      .units = units,
                                      .description = desc },
                             &sid, err);
    /* The centres are the dimension scale of every gridded dataset along this axis. */
    char label[96];
    snprintf(label, sizeof label, "%s (%s)", stem, units);
    if (!rc && H5DSset_scale(sid, label) < 0)
        rc = out_h5_fail(o, err, "make a dimension scale of", name);
    if (sid >= 0)
        H5Dclose(sid);
    snprintf(name, sizeof name, "%s_edges_%s", stem, units);
    snprintf(desc, sizeof desc, "%s bin edges, ascending (n + 1 values)", what);
    if (!rc)
        rc = out_put_dataset(o,
                             &(dset){ .parent = grp,
                                      .parent_path = "/axes",
                                      .name = name,
                                      .kind = V_F64,
                                      .rank = 1,
                                      .dims = { n + 1 },
                                      .data = e,
                                      .units = units,
                                      .description = desc },
                             NULL, err);
    free(c);
    free(e);
    return rc;
}

static int setup_impl(output *o, const plan *p, const grid *g, const tables *t, smx_error *err)
{
    int rc = out_ready(o, g, err, "output_write_setup");
    if (rc)
        return rc;
    hid_t grp = H5I_INVALID_HID;
    char *resolved = NULL;

    static const axis_doc docs[4] = {
        { "energy", "MeV", "Kinetic energy", 1.0 },
        { "theta", "deg", "Direction, from +x towards +z (90 deg = along depth)", RAD_TO_DEG },
        { "x", "mm", "Lateral position (0 = beam axis)", 1.0 },
        { "z", "mm", "Depth (0 = entrance plane)", 1.0 },
    };
    const axis *axes[4] = { &g->E, &g->theta, &g->x, &g->z };
    if ((rc = out_open_group(o, "/axes", &grp, err)))
        goto done;
    for (int k = 0; k < 4 && !rc; k++)
        rc = write_axis(o, grp, &docs[k], axes[k], err);
    if (rc)
        goto done;
    out_close_id(&grp, H5Gclose);

    if ((rc = out_open_group(o, "/plan", &grp, err)))
        goto done;
    rc = out_put_dataset(o,
                         &(dset){ .parent = grp,
                                  .parent_path = "/plan",
                                  .name = "yaml_text",
                                  .kind = V_TEXT,
                                  .data = p->yaml_text,
                                  .units = "",
                                  .description = "The plan file, verbatim" },
                         NULL, err);
    if (rc)
        goto done;
    resolved = plan_resolved_text(p);
    if (!resolved) {
        rc = smx_fail(err, SMX_EXIT_RUNTIME, "%s: cannot capture the resolved plan: %s",
                      o->final_path, strerror(errno));
        goto done;
    }
    rc = out_put_dataset(o,
                         &(dset){ .parent = grp,
                                  .parent_path = "/plan",
                                  .name = "resolved",
                                  .kind = V_TEXT,
                                  .data = resolved,
                                  .units = "",
                                  .description = "Every plan key with the value used "
                                                 "(defaults and --set applied), one "
                                                 "'key.path: value' line each" },
                         NULL, err);
    if (rc)
        goto done;

    if (p->spots_file[0] && p->spots_text) { /* the field's spot map, verbatim, beside the plan */
        char hex[65];
        sha256_hex(p->spots_text, p->spots_len, hex);
        if ((rc = out_put_dataset(
                 o,
                 &(dset){ .parent = grp,
                          .parent_path = "/plan",
                          .name = "spots_csv",
                          .kind = V_TEXT,
                          .data = p->spots_text,
                          .units = "",
                          .description = "The spot map of beam.spots_file, verbatim" },
                 NULL, err)) ||
            (rc = out_attr_str(o, o->file, "/", "spots_file", p->spots_path, err)) ||
            (rc = out_attr_str(o, o->file, "/", "spots_sha256", hex, err)))
            goto done;
    }
    if ((rc = out_attr_str(o, o->file, "/", "plan_file", p->path, err)) ||
        (rc = out_attr_str(o, o->file, "/", "table_file", t ? t->path : p->table_path, err)) ||
        (t && t->sha256[0] && (rc = out_attr_str(o, o->file, "/", "table_sha256", t->sha256, err))))
        goto done;
    out_remember_mesh(o, g);
    o->setup_done = 1;
done:
    out_close_id(&grp, H5Gclose);
    free(resolved);
    return rc;
}

int output_write_setup(output *o, const plan *p, const grid *g, const tables *t, smx_error *err)
{
    h5quiet q = out_quiet_begin();
    int rc = setup_impl(o, p, g, t, err);
    out_quiet_end(q);
    return rc;
}
