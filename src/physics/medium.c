#include "physics/medium.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void copy_name(char *dst, size_t cap, const char *src)
{
    snprintf(dst, cap, "%s", src ? src : "");
}

int medium_map_add_material(medium_map *m, const char *name, const char *table_path, smx_error *err)
{
    for (int i = 0; i < m->n_materials; i++)
        if (strcmp(m->materials[i].name, name) == 0 && strcmp(m->materials[i].table_path, table_path) == 0)
            return i;
    if (m->n_materials >= MEDIUM_MAX)
        return smx_fail(err, SMX_EXIT_INPUT, "more than %d materials in one plan", MEDIUM_MAX), -1;
    medium_material *nm = realloc(m->materials, (size_t)(m->n_materials + 1) * sizeof *nm);
    if (!nm)
        return smx_fail(err, SMX_EXIT_RUNTIME, "out of memory (material list)"), -1;
    m->materials = nm;
    copy_name(nm[m->n_materials].name, sizeof nm->name, name);
    copy_name(nm[m->n_materials].table_path, sizeof nm->table_path, table_path);
    return m->n_materials++;
}

int medium_map_add_medium(medium_map *m, int material, double density_g_cm3, smx_error *err)
{
    for (int i = 0; i < m->n_media; i++)
        if (m->media[i].material == material && m->media[i].density_g_cm3 == density_g_cm3)
            return i;
    if (m->n_media >= MEDIUM_MAX)
        return smx_fail(err, SMX_EXIT_INPUT,
                        "more than %d distinct (material, density) media in one plan; "
                        "quantise the densities more coarsely", MEDIUM_MAX), -1;
    medium *nm = realloc(m->media, (size_t)(m->n_media + 1) * sizeof *nm);
    if (!nm)
        return smx_fail(err, SMX_EXIT_RUNTIME, "out of memory (media list)"), -1;
    m->media = nm;
    nm[m->n_media] = (medium){material, density_g_cm3};
    return m->n_media++;
}

int medium_map_uniform(medium_map *m, int nz, int nx, const char *name, const char *table_path,
                       double density_g_cm3, smx_error *err)
{
    *m = (medium_map){.nz = nz, .nx = nx};
    int mat = medium_map_add_material(m, name, table_path, err);
    if (mat < 0 || medium_map_add_medium(m, mat, density_g_cm3, err) < 0) {
        medium_map_free(m);
        return err->code ? err->code : SMX_EXIT_RUNTIME;
    }
    snprintf(m->rule, sizeof m->rule, "uniform");
    return 0;
}

int medium_map_cells(medium_map *m, smx_error *err)
{
    if (m->cell)
        return 0;
    m->cell = calloc((size_t)m->nz * (size_t)m->nx, 1);
    if (!m->cell)
        return smx_fail(err, SMX_EXIT_RUNTIME, "out of memory (material map of %d x %d cells)", m->nz, m->nx);
    return 0;
}

void medium_map_free(medium_map *m)
{
    free(m->materials);
    free(m->media);
    free(m->cell);
    *m = (medium_map){0};
}
