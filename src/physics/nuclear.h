/* Non-elastic nuclear interactions of primary protons: the cross section that
 * removes them from psi, and the share of their energy absorbed near the
 * interaction point. */
#ifndef SMX_NUCLEAR_H
#define SMX_NUCLEAR_H

#include "physics/element.h"
#include "physics/nuclear_icru63.h"
#include "physics/tables.h"

/* Of the energy of a proton lost to a non-elastic interaction, the share
 * deposited locally (secondary protons and heavier fragments); the rest leaves
 * with neutrons and gammas. 0.6: Bortfeld, Med. Phys. 24 (1997) 2024, from the
 * energy budget of the ICRU Report 63 evaluation. */
#define SMX_NUCLEAR_LOCAL_FRACTION 0.6

/* Non-elastic cross section of liquid water per unit mass (cm2/g), from the
 * oxygen nuclei (hydrogen has no non-elastic channel below the pion threshold):
 * the fit of Fippel and Soukup, Med. Phys. 31 (2004) 2263, to the ICRU
 * Report 63 evaluation, 7 to 250 MeV; 0 below 7 MeV (Coulomb barrier), and its
 * 250 MeV value above, where the fit ends. */
double nonelastic_water_cm2_g(double E_MeV);

/* Other materials: per element, ICRU Report 63's evaluated cross section per
 * nucleus (physics/nuclear_icru63.h) scaled, at each energy, by the ratio of
 * the water fit's oxygen to ICRU 63's oxygen, so that water's own composition
 * gives the water fit exactly and every other material keeps ICRU 63's ratio
 * to water. Hydrogen contributes nothing (no non-elastic channel below the
 * pion threshold); nothing is removed at or below the fit's 7 MeV, for any
 * element.
 *
 * An element ICRU 63 does not evaluate (Na, Mg, S, Cl, Ar, K, Ti, Zn in the
 * library) takes the reduced cross section sigma / A^(2/3) interpolated
 * linearly in A between the evaluated elements on either side of its A
 * (nonelastic_between_mb), or scaled as A^(2/3) from the nearest evaluated
 * element beyond the table's ends. Checked by leaving out evaluated elements
 * and against Barashenkov's evaluation and two parametrisations
 * (tests/test_nuclear.c, docs/materials.md). */

/* Per nucleus (mb) before the scale to the water fit: ICRU 63, or the rule
 * above for an element it does not evaluate; 0 for Z <= 1. */
double nonelastic_element_eval_mb(int Z, double A, double E_MeV);
/* The rule between two evaluations lo and hi (A_lo < A_hi), at mass A. */
double nonelastic_between_mb(const nonelastic_eval *lo, const nonelastic_eval *hi, double A,
                             double E_MeV);
/* A composition's non-elastic cross section per unit mass relative to liquid
 * water's at E: sum w_i sigma_i / A_i over it, over the same for water, with
 * sigma_i = nonelastic_element_eval_mb (each evaluated element looked up once).
 * Exactly 1 for water's composition; 0 below 7 MeV, where ICRU 63 has no oxygen
 * value (nor the water fit a cross section). */
double nonelastic_ratio_to_water(const material_element *el, int n, double E_MeV);
/* The same ratio for a composition planned once (how each element is
 * evaluated, its weight over A, A^(2/3)), for the many energies of a
 * material's tables: the same bits as nonelastic_ratio_to_water. */
enum nonelastic_term_kind {
    NONELASTIC_NONE, /* Z <= 1: nothing */
    NONELASTIC_EVALUATED, /* ICRU 63's element lo */
    NONELASTIC_BETWEEN, /* the A-rule between lo and hi at u */
    NONELASTIC_NEAREST /* A^(2/3) from the nearest evaluated element, lo */
};
typedef struct nonelastic_term {
    double w_over_A;
    int kind, lo, hi;
    double u, A23;
} nonelastic_term;
#define NONELASTIC_MIX_MAX 16
typedef struct nonelastic_mix {
    int n;
    nonelastic_term terms[NONELASTIC_MIX_MAX];
} nonelastic_mix;
/* 0 (m unset) for more than NONELASTIC_MIX_MAX elements: use
 * nonelastic_ratio_to_water. */
int nonelastic_mix_init(nonelastic_mix *m, const material_element *el, int n);
double nonelastic_mix_ratio(const nonelastic_mix *m, double E_MeV);
/* Oxygen's cross section per nucleus (mb) that the water fit stands for. */
double nonelastic_oxygen_fit_mb(double E_MeV);
/* What the transport uses, per nucleus (mb): the evaluated value times
 * nonelastic_oxygen_fit_mb / ICRU 63's oxygen at E; 0 at or below 7 MeV. */
double nonelastic_element_mb(int Z, double A, double E_MeV);

#define SMX_OXYGEN_A 15.9994
#define SMX_WATER_OXYGEN_MASS_FRACTION 0.888106
/* Avogadro's number (CODATA 2018), per mol; 1 mb = 1e-27 cm2. */
#define SMX_AVOGADRO 6.02214076e23
#define SMX_MB_CM2 1e-27

/* Probability of surviving, without a non-elastic interaction, the path from
 * residual range R(E) down by ds_g g/cm2 (or to R(E_stop), if that comes first). */
double nuclear_survival(const tables *t, double (*sigma_cm2_g)(double), double E_MeV,
                        double E_stop_MeV, double ds_g);
/* The same over a step's quadrature points (tables_step_points_of), bit for bit. */
double nuclear_survival_over(const tables_step_points *q, double (*sigma_cm2_g)(double));

#endif
