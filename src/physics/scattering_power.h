/* Scattering power T = d<theta^2>/d(rho s) of the projected angle.
 *
 * Differential Highland (Gottschalk, Med. Phys. 37 (2010) 352):
 *   T_dH = f_dH(pv, p1v1) (E_s / pv)^2 / X_S,  E_s = 15.0 MeV,
 *   f_dH = 0.5244 + 0.1975 lg(1 - (pv/p1v1)^2) + 0.2320 lg(pv)
 *          - 0.0098 lg(pv) lg(1 - (pv/p1v1)^2),
 * pv in MeV, p1v1 at the incident energy, X_S the scattering length. Its
 * integral from the entrance reproduces Highland's theta_0 of the slab
 * traversed so far, at every depth, within about 3 % (tests/test_lateral.c):
 * it is non-local (it depends on p1v1), the price of following Highland's
 * log correction. Near the entrance f_dH has an integrable log singularity.
 *
 * Fermi-Rossi: T = (15.0 MeV / pv)^2 / X0 (tables.h), local and 10-20 % larger
 * over the path of a therapy proton. */
#ifndef SMX_SCATTERING_POWER_H
#define SMX_SCATTERING_POWER_H

/* p v (MeV) of a proton of kinetic energy E. */
double proton_pv_MeV(double E_MeV);

/* Fermi-Rossi T (rad2 cm2/g): (SMX_FR_ES_MEV / pv)^2 / X0, the model the
 * table's T column holds (scripts/make_tables.c). */
double scattering_power_fermi_rossi(double E_MeV, double X0_g_cm2);

/* T_dH (rad2 cm2/g) at E for protons incident at E1 > E. */
double scattering_power_dhighland(double E_MeV, double E1_MeV, double XS_g_cm2);

#endif
