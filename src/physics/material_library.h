/* The materials shipped with the simulator: a plan names them by key
 * (geometry shapes, map files, CT calibrations), and each key's table is
 * data/materials/KEY.h5, found like material.table_file (next to the plan, in
 * $SMX2D_DATA_DIR, then in the installed data directory). The table's
 * `material` attribute names the material_props entry (physics/material.h)
 * that holds its constants. */
#ifndef SMX_MATERIAL_LIBRARY_H
#define SMX_MATERIAL_LIBRARY_H

/* The keys, in the order the docs list them. */
#define MATERIAL_LIBRARY_KEYS                                                             \
    "water", "air", "lung", "adipose", "muscle", "bone_compact", "bone_cortical", "pmma", \
        "polyethylene", "aluminium", "titanium", "graphite"
#define MATERIAL_LIBRARY_N 12

/* Index of key, or -1. */
int material_library_find(const char *key);
/* Key number i (0 <= i < MATERIAL_LIBRARY_N). */
const char *material_library_key(int i);
/* The table's file name relative to a data directory: "materials/KEY.h5". */
int material_library_table_name(const char *key, char *out, unsigned long cap);

struct material_props;
/* The constants of key's material (physics/material.h), or NULL if key is not
 * a library key. Its density_g_cm3 is the material's default density in a plan. */
const struct material_props *material_library_props(const char *key);

#endif
