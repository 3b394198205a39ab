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

/* [nz][nx] values (both powers of two), in place, on up to `threads` OpenMP
 * threads (the result does not depend on how many); scratch: threads * 2 * nz
 * doubles. */
void fft_2d(double *re, double *im, int64_t nz, int64_t nx, int inverse, double *scratch,
            int threads);

#endif
