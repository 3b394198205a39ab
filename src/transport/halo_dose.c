#include "transport/halo_dose.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "numerics/fft.h"
#include "physics/nuclear_halo.h"

/* The blocks' size: about this (mm), whole cells. 1 mm along z instead
 * changed the 230 MeV fall-off by less than 0.01 mm and doubled the
 * transforms' cost (a per-spot run makes one set per spot). */
#define HALO_BLOCK_Z_MM 2.0
#define HALO_BLOCK_X_MM 2.0

void halo_dose_free(halo_dose *h)
{
    free(h->kre);
    free(h->kim);
    free(h->re);
    free(h->im);
    free(h->acc_re);
    free(h->acc_im);
    free(h->scratch);
    free(h->tw);
    free(h->bz);
    free(h->rows);
    free(h->to_ref);
    free(h->bx);
    free(h->wz);
    free(h->wx);
    free(h->blocks);
    free(h->out);
    free(h->row);
    memset(h, 0, sizeof *h);
}

static int block_of(double mm, double d)
{
    int f = (int)lround(mm / d);
    return f < 1 ? 1 : f;
}

/* Cell i of an axis of n cells, f to a block, takes from the two blocks whose
 * centres bracket its centre, linearly (a cell beyond the outer centres from
 * the outer block alone): blk[2i], w[2i] and blk[2i + 1], w[2i + 1]. Each
 * block's weights are then scaled to sum to 1 over the cells, so that the
 * interpolation keeps every block's energy, is the same linear map for any
 * dose (a field's spots sum to its total) and depends on the geometry only. */
static void axis_weights(int64_t n, int f, int64_t nb, int off, int64_t *blk, double *w)
{
    double *sum = calloc((size_t)nb, sizeof *sum);
    for (int64_t i = 0; i < n; i++) {
        double pos = (i + off + 0.5) / f - 0.5; /* in blocks, from the first block's centre */
        int64_t b0 = (int64_t)floor(pos);
        double a = pos - (double)b0;
        if (b0 < 0) {
            b0 = 0;
            a = 0.0;
        }
        if (b0 >= nb - 1) {
            b0 = nb - 1;
            a = 0.0;
        }
        blk[2 * i] = b0;
        w[2 * i] = 1.0 - a;
        blk[2 * i + 1] = b0 + 1 < nb ? b0 + 1 : b0;
        w[2 * i + 1] = a;
    }
    if (sum) {
        for (int64_t k = 0; k < 2 * n; k++)
            sum[blk[k]] += w[k];
        for (int64_t k = 0; k < 2 * n; k++)
            w[k] = sum[blk[k]] > 0.0 ? w[k] / sum[blk[k]] : 0.0;
    }
    free(sum);
}

/* A transform of h's [Z][X] values on h's threads and scratch; rows_in,
 * cols_out: what fft_2d may leave out (0: nothing). */
static void halo_fft(const halo_dose *h, double *re, double *im, int inverse, int64_t rows_in,
                     int64_t cols_out)
{
    const int64_t nz = fft_twiddles_size(h->Z), nx = fft_twiddles_size(h->X);
    const double *tw = h->tw + (inverse ? nz + nx : 0);
    const fft_2d_plan pl = { h->Z, h->X, rows_in, cols_out, h->scratch, h->threads, tw, tw + nz };
    fft_2d(&pl, re, im);
}

int halo_dose_init(halo_dose *h, const plan *p, const grid *g, const tables *t,
                   const medium_map *mm, smx_error *err)
{
    memset(h, 0, sizeof *h);
    if (g->halo_bands < 1)
        return 0;
    h->on = 1;
    const int nb = g->halo_bands;
    h->fz = block_of(HALO_BLOCK_Z_MM, g->dz);
    h->fx = block_of(HALO_BLOCK_X_MM, g->dx);
    /* Across the beam the blocks lie symmetric about the grid's middle (a
     * centred beam stays centred): an odd block on an odd column count, the
     * blocks' overhang split evenly. */
    if (g->nx % 2 && h->fx % 2 == 0)
        h->fx = h->fx > 2 ? h->fx - 1 : h->fx + 1;
    h->cz = (g->nz + h->fz - 1) / h->fz;
    h->cx = (g->nx + h->fx - 1) / h->fx;
    if ((h->cx * h->fx - g->nx) % 2)
        h->cx++;
    h->ox = (int)((h->cx * h->fx - g->nx) / 2);
    const double hz = h->fz * g->dz * g->density, hx = h->fx * g->dx * g->density;
    const double angle = 90.0 - p->beam_direction_deg;
    double E_top = g->E.edges[g->E.n];
    halo_kernel k[SMX_HALO_BANDS];
    int64_t kz = 1, kx = 1;
    int bad = 0;
    for (int b = 0; b < nb; b++) {
        double lo = nuclear_halo_band_edge(b);
        double hi = b + 1 < nb ? nuclear_halo_band_edge(b + 1) : E_top;
        k[b] = (halo_kernel){ 0 };
        if (hi <= lo || halo_kernel_build(&k[b], t,
                                          &(halo_kernel_spec){ lo, hi, angle, hz, hx,
                                                               (int)h->cz - 1, (int)h->cx - 1 })) {
            if (hi > lo)
                bad = 1;
            continue;
        }
        kz = k[b].nkz > kz ? k[b].nkz : kz;
        kx = k[b].nkx > kx ? k[b].nkx : kx;
    }
    h->Z = fft_size(h->cz + kz);
    h->X = fft_size(h->cx + kx);
    const size_t n = (size_t)(h->Z * h->X);
    h->kre = calloc(n * nb, sizeof *h->kre);
    h->kim = calloc(n * nb, sizeof *h->kim);
    h->re = malloc(n * sizeof *h->re);
    h->im = malloc(n * sizeof *h->im);
    h->acc_re = malloc(n * sizeof *h->acc_re);
    h->acc_im = malloc(n * sizeof *h->acc_im);
    h->threads = omp_get_max_threads();
    h->scratch =
        malloc((size_t)h->threads * 2 * (size_t)(h->Z > h->X ? h->Z : h->X) * sizeof *h->scratch);
    const int64_t twz = fft_twiddles_size(h->Z), twx = fft_twiddles_size(h->X);
    if ((h->tw = malloc(2 * (size_t)(twz + twx) * sizeof *h->tw))) {
        fft_twiddles(h->tw, h->Z, 0);
        fft_twiddles(h->tw + twz, h->X, 0);
        fft_twiddles(h->tw + twz + twx, h->Z, 1);
        fft_twiddles(h->tw + 2 * twz + twx, h->X, 1);
    }
    h->bands = nb;
    h->blocks = malloc((size_t)(nb * h->cz * h->cx) * sizeof *h->blocks);
    h->out = malloc((size_t)(h->cz * h->cx) * sizeof *h->out);
    h->row = malloc((size_t)g->nz * sizeof *h->row);
    h->bz = malloc(2 * (size_t)g->nz * sizeof *h->bz);
    h->bx = malloc(2 * (size_t)g->nx * sizeof *h->bx);
    h->wz = malloc(2 * (size_t)g->nz * sizeof *h->wz);
    h->wx = malloc(2 * (size_t)g->nx * sizeof *h->wx);
    h->rows = malloc((size_t)h->cz * g->nx * sizeof *h->rows);
    if (bad || !h->kre || !h->kim || !h->re || !h->im || !h->acc_re || !h->acc_im || !h->scratch ||
        !h->tw || !h->bz || !h->bx || !h->wz || !h->wx || !h->rows ||
        medium_map_to_reference(mm, g->density, &h->to_ref)) {
        for (int b = 0; b < nb; b++)
            halo_kernel_free(&k[b]);
        halo_dose_free(h);
        return smx_fail(err, SMX_EXIT_RUNTIME,
                        "out of host memory for the nuclear halo's kernels (%.3g GB)",
                        2.0 * n * nb * sizeof(double) * 1e-9);
    }
    /* Each kernel wrapped onto the FFT's period. */
    for (int b = 0; b < nb; b++) {
        double *kr = h->kre + n * b, *ki = h->kim + n * b;
        if (!k[b].K)
            continue;
        for (int r = 0; r < k[b].nkz; r++)
            for (int c = 0; c < k[b].nkx; c++) {
                const int64_t iz = k[b].z0 + r, ix = k[b].x0 + c;
                const double v = k[b].K[(int64_t)r * k[b].nkx + c];
                kr[((iz % h->Z + h->Z) % h->Z) * h->X + (ix % h->X + h->X) % h->X] = v;
            }
        halo_fft(h, kr, ki, 0, 0, 0); /* wrapped: any row */
        halo_kernel_free(&k[b]);
    }
    axis_weights(g->nz, h->fz, h->cz, 0, h->bz, h->wz);
    axis_weights(g->nx, h->fx, h->cx, h->ox, h->bx, h->wx);
    return 0;
}

double halo_dose_blocks(const halo_dose *h, const halo_rows *plane, double *blocks)
{
    double sum = 0.0;
    for (int64_t z = 0; z < plane->nz; z++) {
        const double *r = plane->row[z];
        if (!r)
            continue;
        double *brow = blocks + (z / h->fz) * h->cx;
        for (int64_t i = 0; i < plane->nx; i++) {
            const double v = r[i];
            if (v == 0.0)
                continue;
            sum += v;
            brow[(plane->x0 + i + h->ox) / h->fx] += v;
        }
    }
    return sum;
}

void halo_dose_convolve(halo_dose *h, const double *blocks, const double *band_sum, double *out)
{
    const size_t n = (size_t)(h->Z * h->X);
    const int64_t nblk = h->cz * h->cx;
    memset(h->acc_re, 0, n * sizeof *h->acc_re);
    memset(h->acc_im, 0, n * sizeof *h->acc_im);
    for (int b = 0; b < h->bands; b++) {
        if (band_sum[b] == 0.0)
            continue;
        memset(h->re, 0, n * sizeof *h->re);
        memset(h->im, 0, n * sizeof *h->im);
        for (int64_t z = 0; z < h->cz; z++)
            memcpy(h->re + z * h->X, blocks + b * nblk + z * h->cx, (size_t)h->cx * sizeof *h->re);
        halo_fft(h, h->re, h->im, 0, h->cz, 0); /* the blocks' rows only */
        const double *kr = h->kre + n * b, *ki = h->kim + n * b;
        for (size_t i = 0; i < n; i++) {
            h->acc_re[i] += h->re[i] * kr[i] - h->im[i] * ki[i];
            h->acc_im[i] += h->re[i] * ki[i] + h->im[i] * kr[i];
        }
    }
    halo_fft(h, h->acc_re, h->acc_im, 1, 0, h->cx); /* the blocks' columns wanted */
    for (int64_t z = 0; z < h->cz; z++)
        memcpy(out + z * h->cx, h->acc_re + z * h->X, (size_t)h->cx * sizeof *out);
}

double halo_dose_spread(const halo_dose *h, const grid *g, double *out, double *dose, double *T)
{
    const double *to_ref = h->to_ref;
    const double n = (double)(h->Z * h->X);
    const int64_t cx = h->cx;
    /* The blocks' energy (the FFT's 1 / n); what the transforms' rounding
     * leaves where the kernel put nothing (below 1e-13 of the largest block)
     * is zero. */
    double block_sum = 0.0, top = 0.0;
    for (int64_t i = 0; i < h->cz * cx; i++)
        top = fmax(top, out[i]);
    for (int64_t i = 0; i < h->cz * cx; i++) {
        double *v = &out[i];
        *v = *v > 1e-13 * top ? *v / n : 0.0;
        block_sum += *v;
    }
    /* Back to the cells (axis_weights), x first into each block row. */
    const int64_t nx = g->nx;
    for (int64_t bz = 0; bz < h->cz; bz++)
        for (int64_t x = 0; x < nx; x++)
            T[bz * nx + x] = out[bz * cx + h->bx[2 * x]] * h->wx[2 * x] +
                             out[bz * cx + h->bx[2 * x + 1]] * h->wx[2 * x + 1];
    double on_grid = 0.0;
    for (int64_t z = 0; z < g->nz; z++)
        for (int64_t x = 0; x < nx; x++) {
            double v = T[h->bz[2 * z] * nx + x] * h->wz[2 * z] +
                       T[h->bz[2 * z + 1] * nx + x] * h->wz[2 * z + 1];
            if (to_ref)
                v /= to_ref[z * nx + x];
            dose[z * nx + x] += v;
            on_grid += v;
        }
    return to_ref ? on_grid : block_sum;
}

void halo_dose_apply(halo_dose *h, const grid *g, double *dose, double *released, double *deposited)
{
    if (released)
        *released = 0.0;
    if (deposited)
        *deposited = 0.0;
    if (!h->on)
        return;
    const int64_t nblk = h->cz * h->cx;
    double rel = 0.0, band_sum[SMX_HALO_BANDS];
    memset(h->blocks, 0, (size_t)(h->bands * nblk) * sizeof *h->blocks);
    for (int b = 0; b < h->bands; b++) {
        const double *R = dose + (1 + b) * g->slice;
        for (int64_t z = 0; z < g->nz; z++)
            h->row[z] = R + z * g->nx;
        const halo_rows plane = { h->row, g->nz, 0, g->nx };
        band_sum[b] = halo_dose_blocks(h, &plane, h->blocks + b * nblk);
        rel += band_sum[b];
    }
    if (released)
        *released = rel;
    if (rel == 0.0)
        return;
    halo_dose_convolve(h, h->blocks, band_sum, h->out);
    const double dep = halo_dose_spread(h, g, h->out, dose, h->rows);
    if (deposited)
        *deposited = dep;
}
