/* A plain complex FFT in double (radix 2, in place), and the 2D transform
 * built from it: what the halo's convolution needs on the host, the same on
 * every backend, without a library. */
#ifndef SMX_FFT_H
#define SMX_FFT_H

#include <stdint.h>

/* The smallest power of two >= n (n >= 1). */
int64_t fft_size(int64_t n);

/* re, im: n values (n a power of two), transformed in place; inverse: the
 * unscaled inverse (divide by n for the round trip). */
void fft_1d(double *re, double *im, int64_t n, int inverse);

/* How a 2D transform runs: on [nz][nx] values (both powers of two), on up
 * to `threads` OpenMP threads (the result does not depend on how many), with
 * scratch: threads * 2 * nz doubles. */
typedef struct fft_2d_plan {
    int64_t nz, nx;
    double *scratch;
    int threads;
} fft_2d_plan;

/* re, im: pl's [nz][nx] values, transformed in place (inverse: unscaled). */
void fft_2d(const fft_2d_plan *pl, double *re, double *im, int inverse);

#endif
