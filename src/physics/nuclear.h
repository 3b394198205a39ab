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

/* Probability of surviving, without a non-elastic interaction, the path from
 * residual range R(E) down by ds_g g/cm2 (or to R(E_stop), if that comes first). */
double nuclear_survival(const tables *t, double (*sigma_cm2_g)(double), double E_MeV,
                        double E_stop_MeV, double ds_g);

#endif
