#include "physics/material_library.h"

#include "physics/material.h"

#include <stdio.h>
#include <string.h>

static const char *const keys[MATERIAL_LIBRARY_N] = { MATERIAL_LIBRARY_KEYS };

int material_library_find(const char *key)
{
    for (int i = 0; i < MATERIAL_LIBRARY_N; i++)
        if (strcmp(keys[i], key) == 0)
            return i;
    return -1;
}

const char *material_library_key(int i)
{
    return i >= 0 && i < MATERIAL_LIBRARY_N ? keys[i] : NULL;
}

int material_library_table_name(const char *key, char *out, unsigned long cap)
{
    int n = snprintf(out, cap, "materials/%s.h5", key);
    return n > 0 && (unsigned long)n < cap ? 0 : -1;
}

const material_props *material_library_props(const char *key)
{
    return material_library_find(key) >= 0 ? material_props_by_key(key) : NULL;
}
