/* transport.nuclear: halo: the secondary protons' dose, from the energy their
 * non-elastic events released in each cell (the dose's release planes,
 * grid.dose_planes) convolved with the kernel of its band
 * (physics/nuclear_halo.h). Host code, the same for every backend.
 *
 * The kernel reaches centimetres, so the convolution runs on blocks of whole
 * cells (about 2 mm) by FFT, and its result is
 * interpolated back from the blocks' centres (bilinearly, each block's
 * weights scaled to keep its energy: a linear map, so that a field's spots
 * sum to its total). */
#ifndef SMX_HALO_DOSE_H
#define SMX_HALO_DOSE_H

#include "base/error.h"
#include "input/plan.h"
#include "physics/grid.h"
#include "physics/medium.h"
#include "physics/tables.h"

typedef struct halo_dose {
    int on;
    int fz, fx; /* grid cells per block */
    int ox; /* columns the first block reaches left of the grid */
    int64_t cz, cx; /* blocks */
    int64_t Z, X; /* FFT size */
    double *kre, *kim; /* [bands][Z][X] the kernels' transforms */
    double *re, *im, *acc_re, *acc_im, *scratch; /* work */
    int threads; /* the transforms' OpenMP threads */
    double *tw; /* the transforms' twiddles: forward z, x, inverse z, x (numerics/fft.h) */
    int64_t *bz, *bx; /* [2 nz], [2 nx]: the blocks each cell takes from (axis_weights) */
    double *wz, *wx; /* their weights */
    double *rows; /* [cz][nx] the blocks interpolated along x */
    double *to_ref; /* [nz][nx] reference density over the cell's; NULL: one density */
    int bands;
    double *blocks, *out; /* halo_dose_apply's [bands][cz][cx] and [cz][cx] */
    const double **row; /* [nz] halo_dose_apply's rows of a plane */
} halo_dose;

/* h->on = 0 when the plan's nuclear model is not halo. t: the grid's
 * reference medium, in which the kernels are built; mm: the run's media (NULL
 * or without cells: one medium). */
int halo_dose_init(halo_dose *h, const plan *p, const grid *g, const tables *t,
                   const medium_map *mm, smx_error *err);
/* dose: [g->dose_planes][nz][nx] MeV; adds the secondaries' dose to plane 0.
 * The kernel is the reference medium's: in a cell of another density the
 * secondaries' dose per unit mass is kept (their fluence does not jump at a
 * face), so the energy a cell takes scales with its density.
 * released, deposited (may be NULL): MeV the planes held, and what the
 * secondaries deposited on the grid. */
void halo_dose_apply(halo_dose *h, const grid *g, double *dose, double *released,
                     double *deposited);
void halo_dose_free(halo_dose *h);

/* halo_dose_apply in its three parts, so that a field's spots may share the
 * middle one, on the device where the backend has it (backend_ops'
 * halo_convolve); the host's parts compute apply's values bit for bit.
 * One plane of a source: row[z] (z < nz) holds its values at the grid's
 * columns x0 .. x0 + nx - 1, NULL a row of zeros. */
typedef struct halo_rows {
    const double *const *row;
    int64_t nz, x0, nx;
} halo_rows;
/* 1. One band's released energy added into blocks [cz][cx]; returns its sum. */
double halo_dose_blocks(const halo_dose *h, const halo_rows *plane, double *blocks);
/* 2. The convolution of a source's blocks [bands][cz][cx] with the kernels,
 * bands whose band_sum is 0 left out: out [cz][cx], unscaled (Z X times the
 * blocks' dose). */
void halo_dose_convolve(halo_dose *h, const double *blocks, const double *band_sum, double *out);
/* 3. out's dose (scaled in place) added to plane 0 of dose, through T
 * ([cz][nx] scratch; h is only read, so that spots may spread at once);
 * returns the secondaries' deposit on the grid (apply's *deposited). Only for
 * a source that released energy. */
double halo_dose_spread(const halo_dose *h, const grid *g, double *out, double *dose, double *T);

#endif
