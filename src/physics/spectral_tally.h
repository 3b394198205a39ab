/* Spectral tallies: dose planes (grid.h, planes 1 .. dose_planes - 1) that
 * each step adds to from psi as it finds the cells, a coefficient per
 * (medium, energy bin) times the bin's weight summed over its directions:
 *
 *     plane_q(cell) += sum_i c_q[m(cell)][i] * sum_j psi[i][j](cell)
 *
 * Both backends add them in the same order (bins ascending, each term one
 * fma; src/transport/backend_cpu_operators.c, cuda/spectral_tally.cu), so
 * they agree bit for bit. What the planes hold:
 *  - the nuclear halo's released energy per band (physics/nuclear_halo.h);
 *  - for LET and the dose to water (docs/physics.md, "LET" and "Dose to
 *    water"), per step of a primary of bin i (E_i -> E' by the CSDA table of
 *    the medium, or to rest):
 *      edep      dE = E_i - E'                        MeV
 *      let_edep  int_{E'}^{E_i} L(E) dE               MeV keV/um
 *      track     int_{E'}^{E_i} dE / L(E), the path     mm
 *      water     int_{E'}^{E_i} s_w,m(E) dE            MeV
 *    with L = rho S(E) the medium's unrestricted LET (PSTAR's total stopping
 *    power, as the transport's energy loss; its nuclear part is below 0.2 %
 *    above 1 MeV) and
 *    s_w,m = (S/rho)_water / (S/rho)_medium. Over a step the dose-averaged
 *    LET is int L^2 dx / int L dx = int L dE / dE, so the sums give
 *    LETd = let_edep / edep, LETt = edep / track and the dose to water's
 *    factor water / edep, each the average over the cell's spectrum. */
#ifndef SMX_SPECTRAL_TALLY_H
#define SMX_SPECTRAL_TALLY_H

#include <stdint.h>

#include "base/error.h"
#include "physics/grid.h"
#include "physics/lut_energy.h"
#include "physics/tables.h"

typedef struct spectral_tallies {
    int n_planes; /* planes 1 .. n_planes of the dose (grid.dose_planes - 1); 0: none */
    int n_media, ne;
    double *coef; /* [n_planes][n_media][ne], per unit weight */
    int *first, *last; /* [n_planes]: the bins whose coefficient is non-zero in some medium */
} spectral_tallies;

/* One medium as the tallies see it: its plain energy table (E', the halo's
 * release), its material table and density. */
typedef struct spectral_medium {
    const energy_lut *lut;
    const tables *t;
    double density_g_cm3;
} spectral_medium;

/* water: the water table (used only when g->plane_water; may be one of the
 * media's). Nothing to free after an error. */
int spectral_tallies_build(spectral_tallies *st, const grid *g, int n_media,
                           const spectral_medium *media, const tables *water, smx_error *err);
void spectral_tallies_free(spectral_tallies *st);

/* The coefficient of dose plane q (1 .. n_planes), medium m, bin i. */
static inline double spectral_coef(const spectral_tallies *st, int q, int m, int64_t i)
{
    return st->coef[((int64_t)(q - 1) * st->n_media + m) * st->ne + i];
}

/* The mass stopping-power ratio water / medium at E (the dose to water's
 * factor where no primary's spectrum is known: cells the halo alone reaches). */
double spectral_water_ratio(const tables *water, const tables *medium, double E_MeV);

#endif
