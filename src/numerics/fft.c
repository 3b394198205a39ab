#include "numerics/fft.h"

#include <math.h>
#include <omp.h>

#define PI 3.14159265358979323846

int64_t fft_size(int64_t n)
{
    int64_t s = 1;
    while (s < n)
        s <<= 1;
    return s;
}

int64_t fft_twiddles_size(int64_t n)
{
    return 2 * (n - 1);
}

/* Stage `len` (2, 4, ..., n) holds len / 2 factors from index len / 2 - 1. */
void fft_twiddles(double *tw, int64_t n, int inverse)
{
    double *c = tw, *s = tw + (n - 1);
    for (int64_t len = 2; len <= n; len <<= 1) {
        const double a = (inverse ? 2.0 : -2.0) * PI / (double)len;
        for (int64_t k = 0; k < len / 2; k++) {
            c[len / 2 - 1 + k] = cos(a * (double)k);
            s[len / 2 - 1 + k] = sin(a * (double)k);
        }
    }
}

void fft_1d(double *re, double *im, int64_t n, const double *tw)
{
    for (int64_t i = 1, j = 0; i < n; i++) { /* bit reversal */
        int64_t bit = n >> 1;
        for (; j & bit; bit >>= 1)
            j ^= bit;
        j ^= bit;
        if (i < j) {
            double t = re[i];
            re[i] = re[j];
            re[j] = t;
            t = im[i];
            im[i] = im[j];
            im[j] = t;
        }
    }
    for (int64_t len = 2; len <= n; len <<= 1) {
        /* The twiddles from sin and cos at each k (fft_twiddles), not by
         * recurrence: their rounding does not grow with the length. */
        const double *c = tw + (len / 2 - 1), *s = tw + (n - 1) + (len / 2 - 1);
        for (int64_t k = 0; k < len / 2; k++) {
            const double wr = c[k], wi = s[k];
            for (int64_t i = k; i < n; i += len) {
                const int64_t j = i + len / 2;
                const double xr = re[j] * wr - im[j] * wi, xi = re[j] * wi + im[j] * wr;
                re[j] = re[i] - xr;
                im[j] = im[i] - xi;
                re[i] += xr;
                im[i] += xi;
            }
        }
    }
}

void fft_2d(const fft_2d_plan *pl, double *re, double *im)
{
    const int64_t nz = pl->nz, nx = pl->nx;
    const int64_t rows = pl->rows_in > 0 && pl->rows_in < nz ? pl->rows_in : nz;
    const int64_t cols = pl->cols_out > 0 && pl->cols_out < nx ? pl->cols_out : nx;
    double *scratch = pl->scratch;
    const int threads = pl->threads;
    /* Rows, then columns, each transform on its own: the same values for any
     * number of threads. */
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int64_t z = 0; z < rows; z++)
        fft_1d(re + z * nx, im + z * nx, nx, pl->tw_x);
#pragma omp parallel num_threads(threads)
    {
        double *cr = scratch + (int64_t)omp_get_thread_num() * 2 * nz, *ci = cr + nz;
#pragma omp for schedule(static)
        for (int64_t x = 0; x < cols; x++) {
            for (int64_t z = 0; z < nz; z++) {
                cr[z] = re[z * nx + x];
                ci[z] = im[z * nx + x];
            }
            fft_1d(cr, ci, nz, pl->tw_z);
            for (int64_t z = 0; z < nz; z++) {
                re[z * nx + x] = cr[z];
                im[z * nx + x] = ci[z];
            }
        }
    }
}
