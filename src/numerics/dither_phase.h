/* Which of a medium's two whole-bin energy tables a step takes (the lower or
 * the upper centre bracketing E', src/physics/lut_energy.h), shared by every
 * backend so that they choose alike bit for bit.
 *
 * The choice is a Bresenham sequence over the steps: the lower centre when the
 * fractional part of (phase + displacement) plus the share p_low reaches 1, so
 * that K consecutive steps take it K p_low times within one. The displacement
 * is what a particle now in bin i has moved, in bins of the reference's
 * residual range, over `step` steps had it been in this medium all along:
 * u(N_i + step) - i, with N the medium's range counted in steps (steps[i] at
 * bin i's centre, increasing) and u its inverse. Where the medium's stopping
 * power is the reference's times a constant this is step * (bins per step),
 * the plain sequence n p_low; where the ratio changes with energy (bone
 * against water: a few per cent between 150 MeV and the end of the range) the
 * plain sequence's n p_low jumps by n dp each time the particle changes bin,
 * hundreds of steps into a run, and the choices near the end of the range
 * stop following the particle's true loss (0.9 mm short in compact bone at
 * 70 and 150 MeV); the displacement moves smoothly instead.
 *
 * All in double, every operation rounded separately (no contraction: -std=c11
 * on the host, --fmad=false on the device). */
#ifndef SMX_DITHER_PHASE_H
#define SMX_DITHER_PHASE_H

#include <math.h>

#ifdef __CUDACC__
#define SMX_DITHER_HD __host__ __device__
#else
#define SMX_DITHER_HD
#endif

/* The sequence's phase, irrational: with a rational share (0.5 at a density
 * of 1.5) a rational phase puts the sum exactly on integers, where bins whose
 * shares differ in the last digits would choose differently in the same step
 * and pull the energy distribution apart. */
#define SMX_DITHER_PHASE 0.6180339887498949

/* 1: step `step` takes the lower centre for source bin i of a medium whose
 * range in steps is steps[0 .. ne - 1] and whose lower share is p_low. */
static inline SMX_DITHER_HD int smx_dither_lower(const double *steps, int ne, double p_low, int i,
                                                 long long step)
{
    if (ne < 2)
        return 1;
    const double nt = steps[i] + (double)step;
    double u;
    if (nt >= steps[ne - 1]) { /* a start above the grid: the top interval's rate */
        u = (double)(ne - 1) + (nt - steps[ne - 1]) / (steps[ne - 1] - steps[ne - 2]);
    } else {
        int lo = i, hi = ne - 1; /* steps[lo] <= nt < steps[hi] */
        while (hi - lo > 1) {
            const int mid = lo + (hi - lo) / 2;
            if (steps[mid] <= nt)
                lo = mid;
            else
                hi = mid;
        }
        u = (double)lo + (nt - steps[lo]) / (steps[lo + 1] - steps[lo]);
    }
    const double x = (u - (double)i) + SMX_DITHER_PHASE;
    return (x - floor(x)) + p_low >= 1.0;
}

#endif
