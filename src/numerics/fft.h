/* A plain complex FFT in double (radix 2, in place), and the 2D transform
 * built from it: what the halo's convolution needs on the host, the same on
 * every backend, without a library. */
#ifndef SMX_FFT_H
#define SMX_FFT_H

#include <stdint.h>

/* The smallest power of two >= n (n >= 1). */
int64_t fft_size(int64_t n);

/* The twiddle factors of a transform of n points (a power of two) in one
 * direction: 2 (n - 1) doubles, the cosines of every stage in order, then
 * the sines. Taken from a table, the transform computes what it would from
 * sin and cos at each step, bit for bit, without their cost. */
int64_t fft_twiddles_size(int64_t n);
void fft_twiddles(double *tw, int64_t n, int inverse);

/* re, im: n values (n a power of two), transformed in place with the
 * twiddles tw of n and the direction wanted (inverse: unscaled; divide by n
 * for the round trip). */
void fft_1d(double *re, double *im, int64_t n, const double *tw);

/* How a 2D transform runs: on [nz][nx] values (both powers of two), rows
 * (along x) first, then columns, on up to `threads` OpenMP threads (the
 * result does not depend on how many), with scratch: threads * 2 * nz
 * doubles, and the twiddles of nz and nx for its direction.
 * What is known of the data spares work without changing a bit of what is
 * computed: rows_in, the input's rows from the first that may be non-zero
 * (the others are zero, and so are their row transforms); cols_out, the
 * output's columns from the first that are wanted (the others are left
 * half-transformed). */
typedef struct fft_2d_plan {
    int64_t nz, nx;
    int64_t rows_in, cols_out;
    double *scratch;
    int threads;
    const double *tw_z, *tw_x;
} fft_2d_plan;

/* re, im: pl's [nz][nx] values, transformed in place. */
void fft_2d(const fft_2d_plan *pl, double *re, double *im);

#endif
