#include "physics/material.h"

#include <string.h>

#include "physics/nuclear.h"

static const material_props known[] = {
    /* Z/A = 10 / 18.0153 (H2O). X0 = 36.08 g/cm2 (PDG). X_S = 46.88 g/cm2 as tabulated
     * by Gottschalk, Med. Phys. 37 (2010) 352; his defining formula over the H
     * and O weight fractions gives 46.94 with current constants. */
    {"water (liquid)", 0.555084, 36.08, 46.88, 1.0, nonelastic_water_cm2_g},
};

const material_props *material_props_find(const char *name)
{
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (strcmp(known[i].name, name) == 0)
            return &known[i];
    return NULL;
}
