/* Energy-loss straggling: Bohr's variance, carried in residual range.
 *
 * Bohr: the energy variance grows by K (Z/A) (1 - beta^2/2) / (1 - beta^2) per
 * g/cm2, K = 4 pi N_A r_e^2 (m_e c^2)^2 = 0.15692 MeV^2 cm2/g (ICRU Report 49,
 * section 2.7, with Uehling's relativistic factor). A spread in energy at one
 * depth becomes a spread in residual range: dVar(R) = dVar(E) / S(E)^2. Summing
 * it along the path in residual range is Tschalar's thick-absorber result to
 * first order: the widening of the energy spread by dS/dE (particles that are
 * slower lose more) is automatic in range, because every particle then loses
 * range at the same rate. */
#ifndef SMX_STRAGGLING_H
#define SMX_STRAGGLING_H

#include "physics/tables.h"

#define SMX_BOHR_K_MEV2_CM2_G 0.156918

/* Bohr's energy variance per unit mass thickness (MeV^2 cm2/g) at E. */
double straggling_bohr_rate(double E_MeV, double Z_over_A);

/* Variance of residual range (g2/cm4) added over the path from R(E) down by
 * ds_g g/cm2 (or to R(E_stop), if that comes first). */
double straggling_range_variance(const tables *t, double Z_over_A, double E_MeV, double E_stop_MeV,
                                 double ds_g);
/* The same over a step's quadrature points (tables_step_points_of) in t, bit
 * for bit. */
double straggling_range_variance_over(const tables *t, double Z_over_A,
                                      const tables_step_points *q);

#endif
