/* Angular scattering kernels (A_theta), built once per run.
 *
 * For energy bin iE the kernel spreads weight from direction bin j to j + k,
 * k in [-K, K], with weights w[k] that sum to 1 (probability conserving) and
 * whose second moment equals sigma^2 = T(E) * rho * ds (solved to 1e-10 in double;
 * the float weights hold it to ~6e-8, their sum to ~3e-8 of 1)
 * for every sigma/dtheta from 0 up: a kernel narrower than a bin is the
 * variance-matched three-point [a, 1-2a, a], not a sampled Gaussian (which
 * would collapse to [0, 1, 0] and never spread the beam).
 * Energy bins whose sigma is equal share one kernel (built once).
 *
 * On bins of unequal width (grid.angle.spacing: beam, physics/grid.c) the
 * kernel depends on the source bin j too: angle_kernels_build_mapped gives
 * each (kernel, source bin) its own weights, with mean exactly theta_j and
 * variance exactly sigma^2 (the 1e-10 above, before the float rounding). */
#ifndef SMX_LUT_ANGLE_H
#define SMX_LUT_ANGLE_H

#include <math.h>
#include <stddef.h>

#include "base/error.h"

/* spacing: beam: the direction at u (in bins) from the window's centre, in
 * units of the central bin's width d0: theta_c sinh(u d0 / theta_c) / d0, with
 * tc_bins = theta_c / d0. Bins span u in [i - n/2, i + 1 - n/2]. */
static inline double angle_map_sinh(double tc_bins, double u)
{
    return tc_bins * sinh(u / tc_bins);
}

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
    /* angle_kernels_build_mapped only (per_source = 1); NULL otherwise. For
     * kernel k and source bin j, at kj = k * n_theta + j: weights
     * src_weights[src_off[kj] .. + src_len[kj]) land on bins src_lo[kj] ..,
     * which may lie past the window (i < 0 or i >= n_theta: the ghost bins
     * that continue the map, where the weight leaves). The half widths,
     * offsets and weight sums above then describe no kernel (K = the widest
     * reach, weight_sum 1). */
    int per_source;
    int n_theta, ghosts; /* the window's bins; ghost bins on each side */
    double *theta_ext; /* [n_theta + 2 ghosts] centres in units of d0 from the
                          window's centre: bin i at theta_ext[ghosts + i] */
    int *src_lo, *src_len, *src_off; /* [n_kernels * n_theta] */
    float *src_weights;
    double *src_sum; /* [n_kernels * n_theta] sum of the float weights (1 - sum: THETA_CUTOFF) */
    double *src_lost; /* [n_kernels * n_theta] sum of those landing past the window */
    int n_three_point, n_fitted; /* (kernel, source) pairs of each shape */
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

/* Kernels on the n_theta bins of a window whose centres are angle_map_sinh
 * (tc_bins, i + 0.5 - n_theta / 2) (units of d0; sigma_bins = sigma / d0), one
 * per (distinct sigma, source bin j), each with mean theta_j and variance
 * sigma^2 on the bins continued past the window (ghosts), where what lands
 * leaves:
 *  - the three points j - 1, j, j + 1 with the unequal-spacing weights
 *    sigma^2 / (h-(h- + h+)), 1 - ..., sigma^2 / (h+(h- + h+)) while the
 *    centre's is the largest;
 *  - else p_i proportional to width_i exp(a d_i + b d_i^2) (d_i = theta_i -
 *    theta_j) on the bins within 5 sigma (plus half their width) of theta_j
 *    and at least two each side, a and b by Newton's method on the convex
 *    dual, so that the mean and the variance are exact.
 * Weights are floats; the centre weight takes the rounding of the others. */
int angle_kernels_build_mapped(angle_kernels *ak, const double *sigma_bins, int ne, int n_theta,
                               double tc_bins, smx_error *err);
/* Moments of the kernel of source bin j about theta_j, over every stored
 * weight (the ghosts' too), in units of d0 (m1 = sum w (theta_i - theta_j)). */
void angle_kernel_source_moments(const angle_kernels *ak, int kernel, int j, double *m0, double *m1,
                                 double *m2);

/* The per-source kernels (per_source) as a gather, for a backend that sums
 * each target bin on its own (the CUDA A_theta): for kernel k and target bin
 * i, at ki = k * n_theta + i, the terms off[ki] .. off[ki + 1] - 1 with
 * source bins src[] in ascending order and weights w[]: the order in which
 * the CPU's scatter over the sources adds them into bin i, so that the same
 * fused multiply-adds from +0 give the same bits. Weights landing past the
 * window are no term. cut[kj]: 1 - src_sum[kj], the THETA_CUTOFF of a unit
 * weight in source bin j. */
typedef struct angle_gather {
    int n_terms;
    int *off; /* [n_kernels * n_theta + 1] */
    int *src; /* [n_terms] */
    float *w; /* [n_terms] */
    double *cut; /* [n_kernels * n_theta] */
} angle_gather;

/* The number of terms angle_gather_build makes (0 without per_source). */
size_t angle_gather_terms(const angle_kernels *ak);
int angle_gather_build(const angle_kernels *ak, angle_gather *ag, smx_error *err);
void angle_gather_free(angle_gather *ag);

#endif
