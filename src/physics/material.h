/* Constants of a material that the physics models need beside its stopping-power
 * table: found by the table file's `material` attribute. Only liquid water is
 * known so far; a table of another material runs with the models that need
 * none of these switched off (transport.scattering_power: fermi_rossi,
 * straggling: false, nuclear: false), and the plan loader says so. */
#ifndef SMX_MATERIAL_H
#define SMX_MATERIAL_H

typedef struct material_props {
    const char *name;       /* as the table file's `material` attribute */
    double Z_over_A;        /* mol/g: electrons per unit mass, for Bohr's straggling */
    double X0_g_cm2;        /* radiation length */
    double XS_g_cm2;        /* Gottschalk's scattering length */
    double density_g_cm3;
    /* Non-elastic nuclear cross section per unit mass (cm2/g) at E (MeV). */
    double (*nonelastic_cm2_g)(double E_MeV);
} material_props;

/* NULL when the material is not known. */
const material_props *material_props_find(const char *name);

#endif
