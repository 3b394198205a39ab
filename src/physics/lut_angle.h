/* Angular scattering kernels (A_theta), built once per run.
 *
 * For energy bin iE the kernel spreads weight from direction bin j to j + k,
 * k in [-K, K], with weights w[k] that sum to 1 (probability conserving) and
 * whose second moment equals sigma^2 = T(E) * rho * ds (solved to 1e-10 in double;
 * the float weights hold it to ~6e-8, their sum to ~3e-8 of 1)
 * for every sigma/dtheta from 0 up: a kernel narrower than a bin is the
 * variance-matched three-point [a, 1-2a, a], not a sampled Gaussian (which
 * would collapse to [0, 1, 0] and never spread the beam).
 * Energy bins whose sigma is equal share one kernel (built once). */
#ifndef SMX_LUT_ANGLE_H
#define SMX_LUT_ANGLE_H

#include "base/error.h"

typedef struct angle_kernels {
    int ne; /* energy bins */
    int n_kernels; /* distinct kernels */
    int *kernel_of_energy; /* [ne] -> kernel id */
    int *half_width; /* [n_kernels] K */
    int *offset; /* [n_kernels] index of w[-K] in weights */
    float *weights; /* concatenated, 2K+1 per kernel, w[k] at offset + K + k */
    double *sigma_bins; /* [n_kernels] requested sigma / dtheta */
    double *weight_sum; /* [n_kernels] sum of the float weights, in double
                             * (1 - sum is tallied as THETA_CUTOFF) */
    int max_half_width;
} angle_kernels;

/* sigma_bins[iE] = sigma(E) / dtheta (>= 0). n_theta bounds the support: a
 * circular (full-circle) grid never has 2K+1 > n_theta, a window never K > n_theta - 1;
 * a sigma whose variance that support cannot hold is SMX_EXIT_INPUT. */
int angle_kernels_build(angle_kernels *ak, const double *sigma_bins, int ne, int n_theta,
                        int circular, smx_error *err);
void angle_kernels_free(angle_kernels *ak);
/* The largest sigma/dtheta a kernel on n_theta bins can hold (the flat
 * kernel's on the widest support): above it angle_kernels_build refuses. */
double angle_kernel_sigma_limit(int n_theta, int circular);

/* Moments of one kernel as stored (float weights, computed in double). */
void angle_kernel_moments(const angle_kernels *ak, int kernel, double *m0, double *m1, double *m2);

#endif
