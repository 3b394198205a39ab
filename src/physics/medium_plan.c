#include "physics/medium_plan.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/data_file.h"
#include "base/text.h"
#include "input/plan_access.h"
#include "physics/ct_calibration.h"
#include "physics/material.h"
#include "physics/material_library.h"
#include "physics/medium_file.h"

/* The library material's nominal density (physics/material.c: the density
 * of NIST's composition, the one its stopping powers belong with), used where
 * a shape or a map leaves the density out; 0 for a name outside the library. */
double medium_nominal_density_g_cm3(const char *key)
{
    const material_props *m = material_library_props(key);
    return m ? m->density_g_cm3 : 0.0;
}

/* Where a material name was written, for the messages of resolve(). */
typedef struct origin {
    const plan *p;
    int shape; /* >= 0: geometry.shapes[shape].material */
    const char *file; /* else this file ... */
    int line, col; /* ... at line:col (0: no line) */
    const char *what; /* ... and this item, e.g. "/materials[2]" */
} origin;

/* An error at geometry.shapes[i] (field "" the whole entry, else ".material"),
 * which the plan's owner words with the entry's line (plan_word_error). */
static int fail_shape(smx_error *err, int i, const char *field, const char *msg)
{
    char key[64];
    snprintf(key, sizeof key, "geometry.shapes[%d]%s", i, field);
    return smx_fail_key(err, SMX_EXIT_INPUT, key, "%s", msg);
}

static int fail_origin(const origin *o, smx_error *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail_origin(const origin *o, smx_error *err, const char *fmt, ...)
{
    char msg[1800];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (o->shape >= 0)
        return fail_shape(err, o->shape, ".material", msg);
    if (o->line > 0)
        return smx_fail(err, SMX_EXIT_INPUT, "%s:%d:%d: %s: %s", o->file, o->line, o->col, o->what,
                        msg);
    return smx_fail(err, SMX_EXIT_INPUT, "%s: %s: %s", o->file, o->what, msg);
}

/* A material name as an index into m->materials: the plan's material.name is
 * material 0; any other name must be a library key, whose table is found
 * like material.table_file. */
static int resolve(medium_map *m, const plan *p, const char *name, const origin *o, smx_error *err)
{
    if (!strcmp(name, p->material_name))
        return 0;
    if (material_library_find(name) < 0) {
        const char *keys[MATERIAL_LIBRARY_N + 1];
        for (int i = 0; i < MATERIAL_LIBRARY_N; i++)
            keys[i] = material_library_key(i);
        keys[MATERIAL_LIBRARY_N] = p->material_name;
        const char *near = smx_closest_name(name, keys, MATERIAL_LIBRARY_N + 1);
        char list[400] = "";
        for (int i = 0; i < MATERIAL_LIBRARY_N; i++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s, ", keys[i]);
        if (near)
            return fail_origin(o, err, "unknown material '%.64s'; did you mean '%s'?", name, near),
                   -1;
        return fail_origin(o, err,
                           "unknown material '%.64s'; expected a library material (%sor the plan's "
                           "material.name '%s')",
                           name, list, p->material_name),
               -1;
    }
    char rel[PLAN_PATH_MAX], path[PLAN_PATH_MAX];
    smx_error e = { 0 };
    if (material_library_table_name(name, rel, sizeof rel) ||
        data_file_find(p->dir, rel, path, sizeof path, &e))
        return fail_origin(o, err, "the table of library material '%s': %s", name, e.msg), -1;
    return medium_map_add_material(m, name, path, err);
}

/* The density a name gets when none is given: the plan's own for material 0. */
static double default_density(const medium_map *m, const plan *p, int material)
{
    return material == 0 ? p->density_g_cm3
                         : medium_nominal_density_g_cm3(m->materials[material].name);
}

static void append_rule(medium_map *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void append_rule(medium_map *m, const char *fmt, ...)
{
    size_t used = strlen(m->rule);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m->rule + used, sizeof m->rule - used, fmt, ap);
    va_end(ap);
}

/* The plan cell (iz, ix)'s cell of an image, by the cell centre rule. */
static int image_cell(const medium_file *f, const grid *g, int iz, int ix, int64_t *at)
{
    int jz, jx;
    if (!medium_file_cell_at(f, g->z.centres[iz], g->x.centres[ix], &jz, &jx))
        return 0;
    *at = (int64_t)jz * f->nx + jx;
    return 1;
}

/* The image must hold every cell centre of the plan's grid. */
static int check_cover(const medium_file *f, const grid *g, const char *path, const char *key,
                       smx_error *err)
{
    double zc0 = g->z.centres[0], zc1 = g->z.centres[g->nz - 1];
    double xc0 = g->x.centres[0], xc1 = g->x.centres[g->nx - 1];
    int a, b;
    if (medium_file_cell_at(f, zc0, xc0, &a, &b) && medium_file_cell_at(f, zc1, xc1, &a, &b))
        return 0;
    return smx_fail(
        err, SMX_EXIT_INPUT,
        "%s (%s): the image covers z %g to %g mm, x %g to %g mm (%d x %d cells of "
        "%g x %g mm); the plan's cell centres run over z %g to %g mm, x %g to %g mm; expected an image "
        "that covers every cell centre (set the attributes z0_mm, x0_mm to place it)",
        path, key, f->z0_mm, f->z0_mm + f->nz * f->dz_mm, f->x0_mm, f->x0_mm + f->nx * f->dx_mm,
        f->nz, f->nx, f->dz_mm, f->dx_mm, zc0, zc1, xc0, xc1);
}

static int same_grid(const medium_file *f, const grid *g)
{
    return f->nz == g->nz && f->nx == g->nx && f->dz_mm == g->dz && f->dx_mm == g->dx &&
           f->z0_mm == g->z.edges[0] && f->x0_mm == g->x.edges[0];
}

static int from_map(medium_map *m, const plan *p, const grid *g, int reserve, smx_error *err)
{
    medium_file f;
    int rc = medium_file_read_map(&f, p->map_path, err);
    if (rc)
        return smx_blame_key(err, "geometry.map_file", rc); /* a file the reader refused */
    int *mat_of = NULL, *mat = NULL;
    double *rho = NULL;
    const size_t n = (size_t)g->nz * (size_t)g->nx;
    if ((rc = check_cover(&f, g, p->map_path, "geometry.map_file", err)))
        goto done;
    mat_of = malloc((size_t)f.n_names * sizeof *mat_of);
    mat = malloc(n * sizeof *mat);
    rho = malloc(n * sizeof *rho);
    if (!mat_of || !mat || !rho) {
        rc = smx_fail(err, SMX_EXIT_RUNTIME, "%s: out of memory", p->map_path);
        goto done;
    }
    for (int i = 0; i < f.n_names; i++) {
        char what[64];
        snprintf(what, sizeof what, "/materials[%d]", i);
        origin o = { p, -1, p->map_path, 0, 0, what };
        if ((mat_of[i] = resolve(m, p, f.names[i], &o, err)) < 0) {
            rc = err->code;
            goto done;
        }
    }
    for (int iz = 0; iz < g->nz; iz++)
        for (int ix = 0; ix < g->nx; ix++) {
            int64_t at = 0, c = (int64_t)iz * g->nx + ix;
            image_cell(&f, g, iz, ix, &at); /* inside: check_cover */
            mat[c] = mat_of[f.index[at]];
            rho[c] = f.density ? (double)f.density[at] : default_density(m, p, mat[c]);
        }
    if ((rc = medium_map_fill_cells(m, mat, rho, reserve, err)))
        goto done;
    append_rule(m, "map %s (%d x %d cells of %g x %g mm%s; %s)", p->map_file, f.nz, f.nx, f.dz_mm,
                f.dx_mm,
                same_grid(&f, g) ? ", the plan's grid"
                                 : ", resampled: each cell takes the map cell holding its centre",
                f.density ? "densities from the map" : "nominal densities");
done:
    free(mat_of);
    free(mat);
    free(rho);
    medium_file_free(&f);
    return rc;
}

static int from_ct(medium_map *m, const plan *p, const grid *g, int reserve, smx_error *err)
{
    medium_file f;
    ct_calibration cal;
    int rc = ct_calibration_load(&cal, p->ct_calibration_path, err);
    if (rc)
        return rc;
    if ((rc = medium_file_read_ct(&f, p->ct_path, err))) {
        ct_calibration_free(&cal);
        return smx_blame_key(err, "geometry.ct.file", rc);
    }
    int *mat_of = NULL, *mat = NULL;
    double *rho = NULL;
    const size_t n = (size_t)g->nz * (size_t)g->nx;
    if ((rc = check_cover(&f, g, p->ct_path, "geometry.ct.file", err)))
        goto done;
    mat_of = malloc((size_t)cal.n_materials * sizeof *mat_of);
    mat = malloc(n * sizeof *mat);
    rho = malloc(n * sizeof *rho);
    if (!mat_of || !mat || !rho) {
        rc = smx_fail(err, SMX_EXIT_RUNTIME, "%s: out of memory", p->ct_path);
        goto done;
    }
    for (int i = 0; i < cal.n_materials; i++) {
        origin o = {
            p, -1, p->ct_calibration_path, cal.material_line[i], cal.material_col[i], "material"
        };
        if ((mat_of[i] = resolve(m, p, cal.material[i], &o, err)) < 0) {
            rc = err->code;
            goto done;
        }
    }
    for (int iz = 0; iz < g->nz; iz++)
        for (int ix = 0; ix < g->nx; ix++) {
            int64_t at = 0, c = (int64_t)iz * g->nx + ix;
            image_cell(&f, g, iz, ix, &at);
            int row = 0, side = ct_calibration_eval(&cal, f.hu[at], &rho[c], &row);
            if (side) {
                rc = smx_fail(
                    err, SMX_EXIT_INPUT,
                    "%s (geometry.ct.file): /hu at (z %lld, x %lld) is %g HU, %s "
                    "the calibration %s (geometry.ct.calibration; density points %g to %g HU, materials "
                    "from %g HU); expected CT numbers inside it, or a calibration extended to cover them",
                    p->ct_path, (long long)(at / f.nx), (long long)(at % f.nx), f.hu[at],
                    side < 0 ? "below" : "above", p->ct_calibration_path, cal.point_hu[0],
                    cal.point_hu[cal.n_points - 1], cal.material_hu[0]);
                goto done;
            }
            mat[c] = mat_of[row];
        }
    if ((rc = medium_map_fill_cells(m, mat, rho, reserve, err)))
        goto done;
    append_rule(
        m,
        "CT %s (%d x %d cells of %g x %g mm%s) with calibration %s (piecewise-linear HU -> density, HU "
        "intervals -> material)",
        p->ct_file, f.nz, f.nx, f.dz_mm, f.dx_mm,
        same_grid(&f, g) ? ", the plan's grid"
                         : ", resampled: each cell takes the CT cell holding its centre",
        p->ct_calibration);
done:
    free(mat_of);
    free(mat);
    free(rho);
    medium_file_free(&f);
    ct_calibration_free(&cal);
    return rc;
}

static int shapes(medium_map *m, const plan *p, const grid *g, smx_error *err)
{
    const size_t n = (size_t)g->nz * (size_t)g->nx;
    /* owner[c]: the last shape that claimed cell c, -1 none; each shape must keep one. */
    int *owner = malloc(n * sizeof *owner);
    if (!owner || medium_map_cells(m, err)) {
        free(owner);
        return err->code ? err->code
                         : smx_fail(err, SMX_EXIT_RUNTIME, "out of memory (material map)");
    }
    for (size_t c = 0; c < n; c++)
        owner[c] = -1;
    int rc = 0;
    for (int i = 0; i < p->n_shapes && !rc; i++) {
        const plan_shape *s = &p->shapes[i];
        origin o = { p, i, NULL, 0, 0, NULL };
        int mat = resolve(m, p, s->material, &o, err);
        if (mat < 0) {
            rc = err->code;
            break;
        }
        double rho = s->density_g_cm3 > 0 ? s->density_g_cm3 : default_density(m, p, mat);
        int med = medium_map_add_medium(m, mat, rho, err);
        if (med < 0) {
            rc = err->code;
            break;
        }
        int z0, z1, x0 = 0, x1 = (int)g->nx - 1;
        /* The plan reader checked that each range holds a cell centre, with the same rule. */
        const plan_axis az = { g->z.edges[0], g->dz, (int)g->nz };
        const plan_axis ax = { g->x.edges[0], g->dx, (int)g->nx };
        plan_axis_cells(&az, s->z_mm[0], s->z_mm[1], &z0, &z1);
        if (s->has_x)
            plan_axis_cells(&ax, s->x_mm[0], s->x_mm[1], &x0, &x1);
        for (int iz = z0; iz <= z1; iz++)
            for (int ix = x0; ix <= x1; ix++) {
                m->cell[(int64_t)iz * g->nx + ix] = (uint8_t)med;
                owner[(int64_t)iz * g->nx + ix] = i;
            }
    }
    /* A shape that later shapes cover entirely is a plan that says two things. */
    int *kept = calloc((size_t)(p->n_shapes ? p->n_shapes : 1), sizeof *kept);
    if (!rc && !kept)
        rc = smx_fail(err, SMX_EXIT_RUNTIME, "out of memory (material map)");
    for (size_t c = 0; !rc && c < n; c++)
        if (owner[c] >= 0)
            kept[owner[c]] = 1;
    for (int i = 0; !rc && i < p->n_shapes; i++)
        if (!kept[i])
            rc = fail_shape(err, i, "",
                            "every cell of this shape is taken by later shapes (later shapes win); "
                            "expected each shape to show in at least one cell");
    free(kept);
    free(owner);
    if (!rc)
        append_rule(
            m,
            "%s%d shape%s on top (a cell belongs to a shape when its centre is inside; later shapes win)",
            m->rule[0] ? "; " : "", p->n_shapes, p->n_shapes == 1 ? "" : "s");
    return rc;
}

int medium_map_build(medium_map *m, const plan *p, const grid *g, smx_error *err)
{
    const uniform_medium u = { p->material_name, p->table_path, p->density_g_cm3 };
    int rc = medium_map_uniform(m, (int)g->nz, (int)g->nx, &u, err);
    if (rc)
        return rc;
    if (!p->map_file[0] && !p->ct_file[0] && p->n_shapes == 0)
        return 0; /* rule "uniform" */
    m->rule[0] = '\0';
    append_rule(m, "background %s at %g g/cm3", p->material_name, p->density_g_cm3);
    if (p->map_file[0] || p->ct_file[0]) {
        append_rule(m, "; ");
        /* Room is kept for the shapes' media, one each at most. */
        rc = p->map_file[0] ? from_map(m, p, g, p->n_shapes, err)
                            : from_ct(m, p, g, p->n_shapes, err);
        if (!rc && m->density_step > 0)
            append_rule(
                m,
                "; densities quantised to (1 + %g)^k g/cm3, each within a factor %.6g of its value",
                m->density_step, sqrt(1.0 + m->density_step));
    }
    if (!rc && p->n_shapes)
        rc = shapes(m, p, g, err);
    if (rc)
        medium_map_free(m);
    return rc;
}
