#include "physics/medium_tables.h"

#include <stdlib.h>
#include <string.h>

#include "base/data_file.h"
#include "physics/material_library.h"

int medium_tables_load(medium_tables *mt, const medium_map *m, const tables *t0,
                       const out_of_plane_model *detour, smx_error *err)
{
    *mt = (medium_tables){ 0 };
    mt->owned = calloc((size_t)m->n_materials, sizeof *mt->owned);
    mt->mt = calloc((size_t)m->n_materials, sizeof *mt->mt);
    if (!mt->owned || !mt->mt) {
        medium_tables_free(mt);
        return smx_fail(err, SMX_EXIT_RUNTIME, "out of memory (tables of %d materials)",
                        m->n_materials);
    }
    mt->n = m->n_materials;
    mt->mt[0] = t0;
    for (int k = 1; k < m->n_materials; k++) {
        int rc = tables_load(&mt->owned[k], m->materials[k].table_path, err);
        if (!rc)
            rc = tables_set_path_range(&mt->owned[k], t0, detour, err);
        if (rc) {
            medium_tables_free(mt);
            return rc;
        }
        mt->mt[k] = &mt->owned[k];
    }
    return 0;
}

int medium_tables_load_water(medium_tables *mt, const medium_map *m, const plan *p, smx_error *err)
{
    for (int k = 0; k < m->n_materials; k++)
        if (!strcmp(m->materials[k].name, "water")) {
            mt->water = mt->mt[k];
            return 0;
        }
    char rel[PLAN_PATH_MAX], path[PLAN_PATH_MAX];
    int rc;
    if (material_library_table_name("water", rel, sizeof rel))
        return smx_fail(err, SMX_EXIT_RUNTIME, "internal: the water table's name");
    if ((rc = data_file_find(p->dir, rel, path, sizeof path, err)))
        return smx_blame_key(err, "output.dose_to_water", rc);
    if ((rc = tables_load(&mt->water_owned, path, err)))
        return rc;
    mt->water = &mt->water_owned;
    return 0;
}

void medium_tables_free(medium_tables *mt)
{
    tables_free(&mt->water_owned);
    for (int k = 1; mt->owned && k < mt->n; k++)
        tables_free(&mt->owned[k]);
    free(mt->owned);
    free(mt->mt);
    *mt = (medium_tables){ 0 };
}
