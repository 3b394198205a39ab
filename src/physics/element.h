/* One element of a material's composition: what the material table
 * (physics/material.h) lists and the nuclear cross sections
 * (physics/nuclear.h) sum over, in a header of its own so that neither
 * module needs the other's. */
#ifndef SMX_ELEMENT_H
#define SMX_ELEMENT_H

typedef struct material_element {
    int Z;
    double A; /* g/mol, standard atomic weight */
    double w; /* mass fraction */
} material_element;

#endif
