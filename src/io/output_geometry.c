/* /geometry: the medium map the run transported, cell by cell, with the
 * materials it names and how it was made (schemas/output.md); and the mass of
 * a dose cell from it, by which MeV become Gy. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/sha256.h"
#include "input/plan_access.h"
#include "io/output_internal.h"

/* The arrays /geometry holds, made from the medium map. */
typedef struct geometry_arrays {
    uint8_t *index, *medium; /* [nz * nx]: each cell's material and medium */
    float *density; /* [nz * nx] */
    const char **names, **paths, **shas; /* [n_materials] */
    char (*sha)[65]; /* [n_materials]: the hashes shas points to */
    int *medium_material; /* [n_media] */
    double *medium_density; /* [n_media] */
    char *joined; /* the names, comma-separated (material_index's attribute) */
} geometry_arrays;

static void geometry_arrays_free(geometry_arrays *a)
{
    free(a->joined);
    free(a->medium);
    free(a->index);
    free(a->density);
    free(a->names);
    free(a->paths);
    free(a->sha);
    free(a->shas);
    free(a->medium_material);
    free(a->medium_density);
    *a = (geometry_arrays){ 0 };
}

/* The names as one attribute too, which is how smx2d-plot labels a map. */
static char *joined_names(const medium_map *m)
{
    size_t names_len = 1;
    for (int i = 0; i < m->n_materials; i++)
        names_len += strlen(m->materials[i].name) + 1;
    char *joined = calloc(names_len, 1);
    for (int i = 0; joined && i < m->n_materials; i++)
        snprintf(joined + strlen(joined), names_len - strlen(joined), "%s%s", i ? "," : "",
                 m->materials[i].name);
    return joined;
}

static int geometry_arrays_of(geometry_arrays *a, const medium_map *m)
{
    const size_t n = (size_t)m->nz * (size_t)m->nx;
    *a = (geometry_arrays){ 0 };
    a->index = calloc(n ? n : 1, 1);
    a->medium = calloc(n ? n : 1, 1);
    a->density = malloc((n ? n : 1) * sizeof *a->density);
    a->names = calloc((size_t)m->n_materials, sizeof *a->names);
    a->paths = calloc((size_t)m->n_materials, sizeof *a->paths);
    a->sha = calloc((size_t)m->n_materials, sizeof *a->sha);
    a->shas = calloc((size_t)m->n_materials, sizeof *a->shas);
    a->medium_material = malloc((size_t)m->n_media * sizeof *a->medium_material);
    a->medium_density = malloc((size_t)m->n_media * sizeof *a->medium_density);
    a->joined = joined_names(m);
    if (!a->index || !a->medium || !a->density || !a->names || !a->paths || !a->sha || !a->shas ||
        !a->medium_material || !a->medium_density || !a->joined)
        return -1;
    for (size_t c = 0; c < n; c++) {
        a->medium[c] = m->cell ? m->cell[c] : 0;
        a->index[c] = (uint8_t)m->media[a->medium[c]].material;
        a->density[c] = (float)m->media[a->medium[c]].density_g_cm3;
    }
    for (int i = 0; i < m->n_materials; i++) {
        a->names[i] = m->materials[i].name;
        a->paths[i] = m->materials[i].table_path;
        /* The table as it is now; the lead's loader records the hash of the bytes it read. */
        if (sha256_file_hex(a->paths[i], a->sha[i]) != 0)
            a->sha[i][0] = '\0';
        a->shas[i] = a->sha[i];
    }
    for (int i = 0; i < m->n_media; i++) {
        a->medium_material[i] = m->media[i].material;
        a->medium_density[i] = m->media[i].density_g_cm3;
    }
    return 0;
}

static int geometry_impl(output *o, const medium_map *m, smx_error *err)
{
    if (!o || o->file < 0 || !o->setup_done)
        return smx_fail(err, SMX_EXIT_RUNTIME, "output_write_geometry before output_write_setup");
    if (m->nz != o->mesh.nz || m->nx != o->mesh.nx)
        return smx_fail(err, SMX_EXIT_RUNTIME,
                        "%s: the material map is %d x %d cells, the dose grid %lld x %lld",
                        o->final_path, m->nz, m->nx, (long long)o->mesh.nz, (long long)o->mesh.nx);
    geometry_arrays a;
    hid_t grp = H5I_INVALID_HID, ds = H5I_INVALID_HID;
    int rc = 0;
    if (geometry_arrays_of(&a, m)) {
        rc = smx_fail(err, SMX_EXIT_RUNTIME, "%s: out of memory writing /geometry", o->final_path);
        goto done;
    }
    const hsize_t nm = (hsize_t)m->n_materials, nd = (hsize_t)m->n_media;
    const dset list[] = {
        { .name = "medium_index",
          .kind = V_U8,
          .rank = 2,
          .dims = { (hsize_t)m->nz, (hsize_t)m->nx },
          .data = a.medium,
          .units = "",
          .axes = "z_centres_mm,x_centres_mm",
          .description =
              "Medium of each cell, as transported: an index into /geometry/medium_material and "
              "medium_density_g_cm3 (0 = the plan's material: at its density)" },
        { .name = "density_g_cm3",
          .kind = V_F32,
          .rank = 2,
          .dims = { (hsize_t)m->nz, (hsize_t)m->nx },
          .data = a.density,
          .units = "g/cm^3",
          .axes = "z_centres_mm,x_centres_mm",
          .description =
              "Mass density of each cell as transported (its medium's density, after any "
              "quantisation), float32 of the medium's value" },
        { .name = "materials",
          .kind = V_TEXTS,
          .rank = 1,
          .dims = { nm },
          .data = a.names,
          .units = "",
          .description =
              "Material names (library keys, or the plan's material.name for material 0)" },
        { .name = "material_tables",
          .kind = V_TEXTS,
          .rank = 1,
          .dims = { nm },
          .data = a.paths,
          .units = "",
          .description = "Each material's HDF5 table, as resolved" },
        { .name = "material_table_sha256",
          .kind = V_TEXTS,
          .rank = 1,
          .dims = { nm },
          .data = a.shas,
          .units = "",
          .description =
              "SHA-256 of each table file when the result was set up (empty: not readable)" },
        { .name = "medium_material",
          .kind = V_I32,
          .rank = 1,
          .dims = { nd },
          .data = a.medium_material,
          .units = "",
          .description = "Each medium's material: an index into /geometry/materials" },
        { .name = "medium_density_g_cm3",
          .kind = V_F64,
          .rank = 1,
          .dims = { nd },
          .data = a.medium_density,
          .units = "g/cm^3",
          .description = "Each medium's mass density" },
    };
    if ((rc = out_open_group(o, "/geometry", &grp, err)) ||
        (rc = out_put_dataset(o,
                              &(dset){ .parent = grp,
                                       .parent_path = "/geometry",
                                       .name = "material_index",
                                       .kind = V_U8,
                                       .rank = 2,
                                       .dims = { (hsize_t)m->nz, (hsize_t)m->nx },
                                       .data = a.index,
                                       .units = "",
                                       .axes = "z_centres_mm,x_centres_mm",
                                       .description =
                                           "Material of each cell: an index into "
                                           "/geometry/materials (0 = the plan's material:)" },
                              &ds, err)) ||
        (rc = out_attr_str(o, ds, "/geometry/material_index", "names", a.joined, err)) ||
        (rc = out_put_all(o, grp, "/geometry", list, sizeof list / sizeof list[0], err)) ||
        (rc = out_attr_str(o, grp, "/geometry", "rule", m->rule, err)) ||
        (rc = out_attr_f64(o, grp, "/geometry", "density_step", m->density_step, err)) ||
        (rc = out_attr_int(o, grp, "/geometry", "n_media", m->n_media, err)))
        goto done;
    o->geometry_done = 1;
done:
    out_close_id(&ds, H5Dclose);
    out_close_id(&grp, H5Gclose);
    geometry_arrays_free(&a);
    return rc;
}

int output_write_geometry(output *o, const medium_map *m, smx_error *err)
{
    h5quiet q = out_quiet_begin();
    int rc = geometry_impl(o, m, err);
    out_quiet_end(q);
    if (!rc)
        o->media = m;
    return rc;
}

/* Gy per MeV from a dose cell's mass, the grid's density or, cell by cell,
 * that of the medium map written here (o->media). */
#define MEV_TO_J 1.602176634e-13

double out_gy_per_MeV(const plan *p, const grid *g)
{
    /* kg of one cell: g/cm3 -> kg/m3 is x1e3 and mm3 -> m3 is x1e-9. */
    double mass_kg = g->density * 1e3 * (g->dx * g->dz * p->slab_thickness_mm) * 1e-9;
    return MEV_TO_J / mass_kg;
}

double out_gy_per_MeV_at(const output *o, const plan *p, const grid *g, int64_t c)
{
    const medium_map *m = o->media;
    if (!m || !m->cell)
        return out_gy_per_MeV(p, g);
    double rho = m->media[m->cell[c]].density_g_cm3;
    return out_gy_per_MeV(p, g) * (g->density / rho);
}

double *out_dose_gy(const output *o, const plan *p, const grid *g, const double *mev,
                    double *protons)
{
    /* Protons: the beam's weight, or the sum of the spots' (beam.weight's
     * meaning); the run's dose is per unit of it. */
    *protons = 0.0;
    for (int k = 0; k < plan_spot_count(p); k++)
        *protons += plan_spot_at(p, k).weight;
    const size_t cells = (size_t)g->slice;
    double *gy = malloc(2 * cells * sizeof *gy), *gy1 = gy + cells;
    if (!gy)
        return NULL;
    for (size_t i = 0; i < cells; i++) {
        gy1[i] = mev[i] * out_gy_per_MeV_at(o, p, g, (int64_t)i);
        gy[i] = gy1[i] * *protons;
    }
    return gy;
}
