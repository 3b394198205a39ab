/* The whole-bin choice of media other than the reference (numerics/dither_phase.h)
 * as a sequence, against the continuous loss it stands for:
 *  - a constant number of bins per step (stopping power the reference's times
 *    a constant): the plain Bresenham sequence, any K consecutive steps take
 *    the lower centre K p times within one;
 *  - bins per step that change along the range as compact bone's against
 *    water's do (1.70 to 1.73 over the grid), with and without the bin-to-bin
 *    jitter of interpolated tables (+-0.004): a particle followed from any
 *    start bin at step 0 stays within 2.5 bins of the continuous loss over
 *    a 400-bin range, and the jitter moves that by less than half a bin. The
 *    sequence indexed by the step alone (n p of the current bin) is printed
 *    for comparison: the jitter takes it to 14.7 bins. What is left, a slow
 *    drift where the ratio changes, is docs/physics.md's known defect. */
#include <math.h>
#include <stdio.h>

#include "check.h"
#include "numerics/dither_phase.h"

#define NE 400

static double jitter = 0.0; /* amplitude of the tables' bin-to-bin noise */

/* Bins per step at bin u (continuous) of the varying medium. */
static double move_at(double u)
{
    return 1.70 + 0.03 * u / NE + jitter * sin(1.7 * u);
}

static double constant_move(double u)
{
    (void)u;
    return 1.85;
}

/* The medium's range in steps at each centre: trapezoid of 1 / move. */
static void range_in_steps(double *steps, double (*mv)(double))
{
    steps[0] = 0.0;
    for (int i = 1; i < NE; i++)
        steps[i] = steps[i - 1] + 0.5 * (1.0 / mv(i - 1) + 1.0 / mv(i));
}

/* Follows one particle from bin i0 at step 0 with the whole-bin choices,
 * against the continuous position (midpoint rule per step on the move);
 * returns the largest |bin - position| before it reaches bin 2. */
static double follow(int i0, const double *steps, int step_indexed)
{
    int i = i0;
    double u = i0, worst = 0.0;
    for (long long n = 0; i > 2; n++) {
        double d = move_at(i);
        int k = (int)floor(d);
        double p = d - k;
        int low = step_indexed ? floor((double)(n + 1) * p + SMX_DITHER_PHASE) -
                                         floor((double)n * p + SMX_DITHER_PHASE) >=
                                     1.0
                               : smx_dither_lower(steps, NE, p, i, n);
        i -= k + (low ? 1 : 0);
        u -= move_at(u - 0.5 * move_at(u));
        worst = fmax(worst, fabs(i - u));
    }
    return worst;
}

/* The largest distance over start bins 40 .. NE. */
static double worst_over_starts(int step_indexed)
{
    double steps[NE], w = 0.0;
    range_in_steps(steps, move_at);
    for (int i0 = 40; i0 < NE; i0 += 23)
        w = fmax(w, follow(i0, steps, step_indexed));
    return w;
}

int main(int argc, char **argv)
{
    (void)argc;
    double steps[NE];

    /* Constant move: every window of K steps within one of K p. */
    range_in_steps(steps, constant_move);
    const double p = 0.85;
    int bad = 0;
    for (int i = 10; i < NE; i += 37)
        for (int n0 = 0; n0 < 300; n0 += 7)
            for (int K = 1; K <= 100; K += 9) {
                int c = 0;
                for (int n = n0; n < n0 + K; n++)
                    c += smx_dither_lower(steps, NE, p, i, n);
                bad += fabs(c - K * p) >= 1.0;
            }
    CHECK_MSG(bad == 0, "constant move: %d windows off by a bin or more", bad);

    /* Varying move, smooth and with the tables' jitter. */
    jitter = 0.0;
    double smooth = worst_over_starts(0), smooth_step = worst_over_starts(1);
    jitter = 0.004;
    double noisy = worst_over_starts(0), noisy_step = worst_over_starts(1);
    printf(
        "bone-like move: largest distance from the continuous loss %.3f bins smooth, %.3f with jitter "
        "(step-indexed sequence %.3f, %.3f)\n",
        smooth, noisy, smooth_step, noisy_step);
    /* Measured 2.35 bins for both: the slow drift where the ratio changes. */
    CHECK_MSG(noisy <= 2.5 && smooth <= 2.5,
              "bone-like move: %.3f / %.3f bins from the continuous loss", smooth, noisy);
    /* The jitter must not be amplified (the step-indexed sequence: 3.1 -> 14.7). */
    CHECK_MSG(fabs(noisy - smooth) <= 0.5, "jitter moves the distance by %.3f bins",
              noisy - smooth);
    return check_report(argv[0]);
}
