/* Constants of a material that the physics models need beside its stopping-power
 * table: found by the table file's `material` attribute (material_props_find) or
 * by the material library's key (material_props_by_key; physics/material_library.h).
 * A table whose material is not listed here runs with the models that need none
 * of these switched off (transport.scattering_power: fermi_rossi,
 * straggling: false, nuclear: false), and the plan loader says so.
 *
 * Where each number comes from (docs/materials.md has the table):
 *   composition, I, density  NIST (ESTAR/PSTAR material data, ICRU Reports 37/49);
 *   Z/A                      sum of w Z / A over the composition;
 *   X0                       Tsai's formula over the composition (PDG, Passage of
 *                            particles through matter, eq. 34.26 with its L_rad,
 *                            L'_rad and Coulomb correction f(Z)); reproduces PDG's
 *                            tabulated X0 of these materials to 0.01 g/cm2;
 *   XS                       Gottschalk's scattering length, Med. Phys. 37 (2010) 352:
 *                            1/(rho X_S) = alpha N_A r_e^2 sum w Z^2/A
 *                            [2 ln(33219 (A Z)^(-1/3)) - 1];
 *   non-elastic sigma/rho    physics/nuclear.h: water's fit to ICRU 63 times the
 *                            material's ratio to water at E from ICRU 63's
 *                            per-element cross sections (material_nonelastic_ratio).
 * tests/test_materials.c recomputes Z/A, X0 and XS from the composition and fails
 * if a stored constant drifts from it; tests/test_nuclear.c checks the non-elastic
 * cross sections. */
#ifndef SMX_MATERIAL_H
#define SMX_MATERIAL_H

#include "physics/element.h"

#define MATERIAL_MAX_ELEMENTS 16

typedef struct material_props {
    const char *name; /* as the table file's `material` attribute */
    double Z_over_A; /* mol/g: electrons per unit mass, for Bohr's straggling */
    double X0_g_cm2; /* radiation length */
    double XS_g_cm2; /* Gottschalk's scattering length */
    /* Non-elastic nuclear cross section per unit mass (cm2/g) at E (MeV). */
    double (*nonelastic_cm2_g)(double E_MeV);
    const char *key; /* material library key (physics/material_library.h) */
    double I_eV; /* mean excitation energy of its stopping-power table */
    double density_g_cm3; /* nominal density: a plan's default for this material */
    int n_elements;
    material_element elements[MATERIAL_MAX_ELEMENTS];
    /* Where the stopping powers of its table come from, in a few words. */
    const char *stopping_origin;
} material_props;

/* NULL when the material is not known. */
const material_props *material_props_find(const char *name);
/* By material library key; NULL when there is none. */
const material_props *material_props_by_key(const char *key);
/* All known materials: i from 0 to material_props_count() - 1. */
int material_props_count(void);
const material_props *material_props_at(int i);

/* Sums over the composition (the definitions above), for checks and docs. */
double material_z_over_a(const material_props *m);
double material_radiation_length_tsai(const material_props *m); /* g/cm2 */
double material_scattering_length(const material_props *m); /* g/cm2 */
/* Non-elastic cross section per unit mass relative to liquid water's at E,
 * from the composition (physics/nuclear.h: nonelastic_ratio_to_water). */
double material_nonelastic_ratio(const material_props *m, double E_MeV);

#endif
