/* Where the energy of a non-elastic nuclear interaction goes (transport.nuclear:
 * halo, docs/physics.md "Nuclear products"): its partition between the
 * fragments that stop where they are made, the secondary protons that carry
 * energy forward and sideways over centimetres, and the neutrons and gammas
 * that leave; and the kernel that places the secondary protons' energy. */
#ifndef SMX_NUCLEAR_HALO_H
#define SMX_NUCLEAR_HALO_H

#include "physics/tables.h"

/* Of the kinetic energy a primary of energy E brings into a non-elastic
 * event on oxygen, the shares (summing to 1):
 *  - local: deuterons, tritons, helium, recoil nuclei and evaporation
 *    protons, all with ranges below a millimetre;
 *  - protons: the fast secondary protons (the halo);
 *  - neutral: neutrons, gammas and the binding energy, out of the problem. */
typedef struct nuclear_partition {
    double local, protons, neutral;
} nuclear_partition;

nuclear_partition nuclear_partition_water(double E_MeV);

/* The released energy is kept apart by the primary's energy at the event, in
 * bands whose kernels differ (a secondary's range follows its primary's
 * energy). Band b holds E in [edge b, edge b + 1), the last band upwards. */
#define SMX_HALO_BANDS 6
int nuclear_halo_band(double E_MeV); /* -1 below the first edge */
double nuclear_halo_band_edge(int b); /* b = 0 .. SMX_HALO_BANDS - 1 */

/* A kernel on cells of hz x hx mm: K[(iz - z0) * nkx + (ix - x0)] is the
 * share of the energy released at the centre of cell (0, 0) that the
 * secondary protons deposit in cell (iz, ix) (rows along the grid's z, columns
 * along x), for primaries of energies spread uniformly over [E_lo, E_hi]
 * moving at angle_deg from +z towards +x. The cells hold the y-integrated
 * deposit (the 2D grid's planes are uniform along y). Cells beyond the
 * reach given are cut, so the kernel's sum is what lands within it. */
typedef struct halo_kernel {
    int z0, x0, nkz, nkx; /* rows z0 .. z0 + nkz - 1, columns x0 .. x0 + nkx - 1 */
    double *K;
} halo_kernel;

/* What a kernel is built for: the primaries' band of energies, their
 * direction, the cells, and the reach kept either side (max_rows, max_cols:
 * the grid's size). */
typedef struct halo_kernel_spec {
    double E_lo, E_hi; /* MeV */
    double angle_deg; /* from +z towards +x */
    double hz_mm, hx_mm; /* the cells, water-equivalent */
    int max_rows, max_cols;
} halo_kernel_spec;

int halo_kernel_build(halo_kernel *k, const tables *water, const halo_kernel_spec *s);
void halo_kernel_free(halo_kernel *k);

#endif
