/* Elastic nuclear scattering of a proton on a free proton (the hydrogen of the
 * medium), under transport.nuclear: halo. Multiple Coulomb scattering covers
 * the small angles; the strong interaction sends the two protons apart at
 * large angles, nearly isotropically in the centre of mass below the pion
 * threshold: the one at theta from the beam keeps E cos^2 theta, the other
 * E sin^2 theta, so a secondary's energy E' is uniform on [0, E] and its
 * angle acos sqrt(E' / E), the kinematics of the halo's kernel
 * (physics/nuclear_halo.h). Gottschalk et al., Phys. Med. Biol. 60 (2015)
 * 5627, count these "elastic interactions with H" in the nuclear halo. The
 * event takes the primary out of psi and hands all of its energy to the
 * kernel (no fragments, nothing neutral). */
#ifndef SMX_PP_ELASTIC_H
#define SMX_PP_ELASTIC_H

#include "physics/material.h"

/* Below this the two protons' ranges are under 0.6 mm (and the halo's
 * kernels start): no event is counted. */
#define SMX_PP_ELASTIC_MIN_MEV 7.0

/* The p-p elastic cross section per hydrogen nucleus (mb), each event once
 * (centre-of-mass angles 0 to 90 degrees), at lab kinetic energy E: the fit of
 * Buss et al., Phys. Rep. 512 (2012) 1, to the world p-p data (27.8 mb at
 * 100 MeV, 24.0 at 150, 23.5 at 200-250); Starkov's fit in Geant4 agrees within
 * 5 % from 50 to 250 MeV. 0 below SMX_PP_ELASTIC_MIN_MEV. */
double pp_elastic_mb(double E_MeV);

/* Hydrogen nuclei per gram of a composition. */
double pp_elastic_hydrogen_per_g(const material_element *el, int n);

#endif
