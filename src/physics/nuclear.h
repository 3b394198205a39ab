/* Non-elastic nuclear interactions of primary protons: the cross section that
 * removes them from psi, and the share of their energy absorbed near the
 * interaction point. */
#ifndef SMX_NUCLEAR_H
#define SMX_NUCLEAR_H

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

/* Other materials: the cross section per nucleus of element (Z, A) is taken as
 * oxygen's scaled by (A / A_O)^(2/3) (the geometric nuclear size, R ~ A^(1/3)),
 * with oxygen's energy dependence; hydrogen contributes nothing. Per unit mass
 * of the element that is oxygen's per-mass cross section times (A_O / A)^(1/3),
 * and oxygen's per-mass cross section is water's divided by oxygen's mass
 * fraction in water. This returns that factor for one element,
 *   share(Z, A) = (A_O / A)^(1/3) / w_O(water)   (0 for Z = 1),
 * so that sigma/rho of a material = nonelastic_water_cm2_g(E) * sum w_i share_i.
 * An approximation (docs/materials.md): the A^(2/3) law ignores the nuclear
 * surface and shell effects, every element keeps oxygen's 7 MeV threshold and
 * energy dependence, and it has not been checked here against evaluated
 * per-element data (ICRU Report 63 tabulates C, O, Al and others: the reference
 * to check it against). Water itself is unchanged: its share sum is exactly 1. */
double nonelastic_element_share(int Z, double A);
#define SMX_OXYGEN_A 15.9994
#define SMX_WATER_OXYGEN_MASS_FRACTION 0.888106

/* Probability of surviving, without a non-elastic interaction, the path from
 * residual range R(E) down by ds_g g/cm2 (or to R(E_stop), if that comes first). */
double nuclear_survival(const tables *t, double (*sigma_cm2_g)(double), double E_MeV,
                        double E_stop_MeV, double ds_g);

#endif
