#include "physics/material.h"

#include <math.h>
#include <pthread.h>
#include <string.h>

#include "physics/nuclear.h"

/* Standard atomic weights (g/mol) as in the NIST material data. */
#define A_H 1.00794
#define A_C 12.0107
#define A_N 14.0067
#define A_O 15.9994
#define A_NA 22.98977
#define A_MG 24.305
#define A_AL 26.981538
#define A_P 30.973761
#define A_S 32.065
#define A_CL 35.453
#define A_AR 39.948
#define A_K 39.0983
#define A_CA 40.078
#define A_TI 47.867
#define A_FE 55.845
#define A_ZN 65.409

enum {
    M_WATER,
    M_AIR,
    M_LUNG,
    M_ADIPOSE,
    M_MUSCLE,
    M_BONE_COMPACT,
    M_BONE_CORTICAL,
    M_PMMA,
    M_POLYETHYLENE,
    M_ALUMINIUM,
    M_TITANIUM,
    M_GRAPHITE,
    M_COUNT
};

static const material_props known[M_COUNT];

/* Each material's composition planned for the non-elastic sums once
 * (nuclear.h, nonelastic_mix), not at each of the thousands of energies its
 * tables take it at; built on first use, from whichever thread comes first. */
_Static_assert(MATERIAL_MAX_ELEMENTS <= NONELASTIC_MIX_MAX, "a material's elements fit a mix");
static nonelastic_mix mixes[M_COUNT];
static pthread_once_t mixes_once = PTHREAD_ONCE_INIT;
static void mixes_plan(void)
{
    for (int i = 0; i < M_COUNT; i++)
        nonelastic_mix_init(&mixes[i], known[i].elements, known[i].n_elements);
}

/* Non-elastic cross section of material i: water's times the composition's
 * ratio to water at E (material_nonelastic_ratio, bit for bit). */
#define NONELASTIC_OF(fn, i)                                                   \
    static double fn(double E)                                                 \
    {                                                                          \
        pthread_once(&mixes_once, mixes_plan);                                 \
        return nonelastic_water_cm2_g(E) * nonelastic_mix_ratio(&mixes[i], E); \
    }
NONELASTIC_OF(nonelastic_air, M_AIR)
NONELASTIC_OF(nonelastic_lung, M_LUNG)
NONELASTIC_OF(nonelastic_adipose, M_ADIPOSE)
NONELASTIC_OF(nonelastic_muscle, M_MUSCLE)
NONELASTIC_OF(nonelastic_bone_compact, M_BONE_COMPACT)
NONELASTIC_OF(nonelastic_bone_cortical, M_BONE_CORTICAL)
NONELASTIC_OF(nonelastic_pmma, M_PMMA)
NONELASTIC_OF(nonelastic_polyethylene, M_POLYETHYLENE)
NONELASTIC_OF(nonelastic_aluminium, M_ALUMINIUM)
NONELASTIC_OF(nonelastic_titanium, M_TITANIUM)
NONELASTIC_OF(nonelastic_graphite, M_GRAPHITE)

#define PSTAR "NIST PSTAR (ICRU 49)"
#define PSTAR3 "NIST PSTAR (ICRU 49), 3-digit transcription, ranges recomputed from it"

/* X0 and XS are the composition sums (material.h) rounded to 0.01 g/cm2, Z/A
 * to 5 digits; densities and I as NIST lists them, except lung (see below). */
/* A data table, laid out by hand. */
/* clang-format off */
static const material_props known[M_COUNT] = {
    /* Z/A = 10 / 18.0153 (H2O). X0 = 36.08 g/cm2 (PDG). X_S = 46.88 g/cm2 as tabulated
     * by Gottschalk, Med. Phys. 37 (2010) 352; his defining formula over the H
     * and O weight fractions (material_scattering_length) gives 46.880. */
    [M_WATER] = {"water (liquid)", 0.555084, 36.08, 46.88, nonelastic_water_cm2_g, "water", 75.0,
                 1.0, 2, {{1, A_H, 0.111894}, {8, A_O, 0.888106}}, PSTAR},
    [M_AIR] = {"air, dry (near sea level)", 0.49919, 36.62, 46.76, nonelastic_air, "air", 85.7,
               1.20479e-3, 4, {{6, A_C, 0.000124}, {7, A_N, 0.755268}, {8, A_O, 0.231781},
                               {18, A_AR, 0.012827}}, PSTAR},
    /* Density: NIST's 1.05 g/cm3 for LUNG (ICRP), lung tissue without air; an
     * inflated lung (about 0.26 g/cm3, ICRU Report 46) needs a density in the plan.
     * Mass quantities do not depend on it. */
    [M_LUNG] = {"lung (ICRP)", 0.54965, 36.50, 47.44, nonelastic_lung, "lung", 75.3, 1.05, 13,
                {{1, A_H, 0.101278}, {6, A_C, 0.102310}, {7, A_N, 0.028650}, {8, A_O, 0.757072},
                 {11, A_NA, 0.001840}, {12, A_MG, 0.000730}, {15, A_P, 0.000800},
                 {16, A_S, 0.002250}, {17, A_CL, 0.002660}, {19, A_K, 0.001940},
                 {20, A_CA, 0.000090}, {26, A_FE, 0.000370}, {30, A_ZN, 0.000010}},
                "derived from PSTAR skeletal muscle (ICRP) by the Bethe ratio"},
    [M_ADIPOSE] = {"adipose tissue (ICRP)", 0.55847, 41.73, 56.18, nonelastic_adipose, "adipose",
                   63.2, 0.92, 13,
                   {{1, A_H, 0.119477}, {6, A_C, 0.637240}, {7, A_N, 0.007970},
                    {8, A_O, 0.232333}, {11, A_NA, 0.000500}, {12, A_MG, 0.000020},
                    {15, A_P, 0.000160}, {16, A_S, 0.000730}, {17, A_CL, 0.001190},
                    {19, A_K, 0.000320}, {20, A_CA, 0.000020}, {26, A_FE, 0.000020},
                    {30, A_ZN, 0.000020}}, PSTAR},
    [M_MUSCLE] = {"muscle, skeletal (ICRP)", 0.54938, 36.55, 47.52, nonelastic_muscle, "muscle",
                  75.3, 1.04, 13,
                  {{1, A_H, 0.100637}, {6, A_C, 0.107830}, {7, A_N, 0.027680}, {8, A_O, 0.754773},
                   {11, A_NA, 0.000750}, {12, A_MG, 0.000190}, {15, A_P, 0.001800},
                   {16, A_S, 0.002410}, {17, A_CL, 0.000790}, {19, A_K, 0.003020},
                   {20, A_CA, 0.000030}, {26, A_FE, 0.000040}, {30, A_ZN, 0.000050}}, PSTAR},
    [M_BONE_COMPACT] = {"bone, compact (ICRU)", 0.53011, 30.49, 38.12, nonelastic_bone_compact,
                        "bone_compact", 91.9, 1.85, 8,
                        {{1, A_H, 0.063984}, {6, A_C, 0.278000}, {7, A_N, 0.027000},
                         {8, A_O, 0.410016}, {12, A_MG, 0.002000}, {15, A_P, 0.070000},
                         {16, A_S, 0.002000}, {20, A_CA, 0.147000}}, PSTAR},
    [M_BONE_CORTICAL] = {"bone, cortical (ICRP)", 0.52130, 27.42, 33.66, nonelastic_bone_cortical,
                         "bone_cortical", 106.4, 1.85, 9,
                         {{1, A_H, 0.047234}, {6, A_C, 0.144330}, {7, A_N, 0.041990},
                          {8, A_O, 0.446096}, {12, A_MG, 0.002200}, {15, A_P, 0.104970},
                          {16, A_S, 0.003150}, {20, A_CA, 0.209930}, {30, A_ZN, 0.000100}},
                         "derived from PSTAR compact bone (ICRU) by the Bethe ratio"},
    [M_PMMA] = {"polymethyl methacrylate (PMMA, Lucite, Perspex)", 0.53937, 40.55, 53.76,
                nonelastic_pmma, "pmma", 74.0, 1.19, 3,
                {{1, A_H, 0.080538}, {6, A_C, 0.599848}, {8, A_O, 0.319614}}, PSTAR},
    [M_POLYETHYLENE] = {"polyethylene", 0.57034, 44.77, 61.79, nonelastic_polyethylene,
                        "polyethylene", 57.4, 0.94, 2, {{1, A_H, 0.143711}, {6, A_C, 0.856289}},
                        "derived from PSTAR adipose tissue (ICRP) by the Bethe ratio"},
    [M_ALUMINIUM] = {"aluminium", 0.48181, 24.01, 28.75, nonelastic_aluminium, "aluminium", 166.0,
                     2.699, 1, {{13, A_AL, 1.0}}, PSTAR},
    [M_TITANIUM] = {"titanium", 0.45961, 16.16, 18.67, nonelastic_titanium, "titanium", 233.0,
                    4.54, 1, {{22, A_TI, 1.0}}, PSTAR3},
    [M_GRAPHITE] = {"graphite", 0.49955, 42.70, 56.34, nonelastic_graphite, "graphite", 78.0, 1.7,
                    1, {{6, A_C, 1.0}}, PSTAR3},
};
/* clang-format on */

const material_props *material_props_find(const char *name)
{
    for (int i = 0; i < M_COUNT; i++)
        if (strcmp(known[i].name, name) == 0)
            return &known[i];
    return NULL;
}

const material_props *material_props_by_key(const char *key)
{
    for (int i = 0; i < M_COUNT; i++)
        if (strcmp(known[i].key, key) == 0)
            return &known[i];
    return NULL;
}

int material_props_count(void)
{
    return M_COUNT;
}

const material_props *material_props_at(int i)
{
    return i >= 0 && i < M_COUNT ? &known[i] : NULL;
}

double material_z_over_a(const material_props *m)
{
    double s = 0.0;
    for (int i = 0; i < m->n_elements; i++)
        s += m->elements[i].w * m->elements[i].Z / m->elements[i].A;
    return s;
}

/* alpha, r_e (cm), N_A (1/mol): CODATA 2018. */
#define ALPHA (1.0 / 137.035999084)
#define R_E_CM 2.8179403262e-13
#define N_A 6.02214076e23

/* Tsai's 1/X0 of one element per unit mass (cm2/g), PDG eq. 34.26. */
static double inv_x0_element(int Z, double A)
{
    /* Tsai's L_rad and L'_rad: his own values below Z = 5, the Thomas-Fermi forms above. */
    static const double lrad[5] = { 0.0, 5.31, 4.79, 4.74, 4.71 };
    static const double lradp[5] = { 0.0, 6.144, 5.621, 5.805, 5.924 };
    double Lr = Z < 5 ? lrad[Z] : log(184.15 * pow(Z, -1.0 / 3.0));
    double Lp = Z < 5 ? lradp[Z] : log(1194.0 * pow(Z, -2.0 / 3.0));
    double a2 = (ALPHA * Z) * (ALPHA * Z);
    double f =
        a2 * (1.0 / (1.0 + a2) + 0.20206 - 0.0369 * a2 + 0.0083 * a2 * a2 - 0.002 * a2 * a2 * a2);
    return 4.0 * ALPHA * R_E_CM * R_E_CM * N_A / A * (Z * Z * (Lr - f) + Z * Lp);
}

double material_radiation_length_tsai(const material_props *m)
{
    double s = 0.0;
    for (int i = 0; i < m->n_elements; i++)
        s += m->elements[i].w * inv_x0_element(m->elements[i].Z, m->elements[i].A);
    return 1.0 / s;
}

double material_scattering_length(const material_props *m)
{
    double s = 0.0;
    for (int i = 0; i < m->n_elements; i++) {
        double Z = m->elements[i].Z, A = m->elements[i].A;
        s += m->elements[i].w * ALPHA * N_A * R_E_CM * R_E_CM * Z * Z / A *
             (2.0 * log(33219.0 * pow(A * Z, -1.0 / 3.0)) - 1.0);
    }
    return 1.0 / s;
}

double material_nonelastic_ratio(const material_props *m, double E_MeV)
{
    return nonelastic_ratio_to_water(m->elements, m->n_elements, E_MeV);
}
