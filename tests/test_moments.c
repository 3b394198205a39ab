/* The moments scheme's moves (numerics/moments.h), as arithmetic: what they
 * must keep whatever the offsets, spreads and moves.
 *  - a point along z lands in the row holding the midpoint of its next step,
 *    one of smx_mom_rows' (at most two rows for a step of up to two rows), at
 *    an offset in that row's range, and where the moved mean is;
 *  - a strip along x is cut into at most SMX_MOM_PARTS parts in consecutive
 *    columns whose shares sum to 1, each part's mean inside its column, and
 *    the parts keep the strip's mean and mean square (the weight's first and
 *    second moments about any point), to double rounding;
 *  - offsets and spreads rounded past their bounds are clamped.
 * The physics (widths against Fermi-Eyges at every grid) is
 * test_grid_convergence's. */
#include <math.h>
#include <stdlib.h>

#include "check.h"
#include "numerics/moments.h"

int main(int argc, char **argv)
{
    (void)argc;
    srand(12345);
    int bad_point = 0, bad_split = 0, bad_mean = 0, bad_sq = 0, worst_n = 0;
    double worst_mean = 0.0, worst_sq = 0.0;
    for (int i = 0; i < 200000; i++) {
        const double u = (double)rand() / RAND_MAX - 0.5;
        const double var = (0.25 - u * u) * ((double)rand() / RAND_MAX) *
                           (i % 7 == 0 ? 0.0 : 1.0); /* some points */
        const double s = 8.0 * ((double)rand() / RAND_MAX) - 4.0;
        const float w = 0.5f + (float)rand() / RAND_MAX;
        /* The state holds the first moments shifted (moments.h). */
        const float m = (float)(w * (u + SMX_MOM_XSHIFT)), q = (float)(w * (u * u + var));
        /* The float moments are what the state holds; the exact u, var of
         * those floats are what the parts must keep. */
        const double uf = fmin(fmax((double)m / w - SMX_MOM_XSHIFT, -0.5), 0.5);
        const double vf = fmin(fmax((double)q / w - uf * uf, 0.0), 0.25);

        /* Along z the offsets a row holds depend on the move (moments.h). */
        double lo, hi;
        smx_mom_depth_range(s, &lo, &hi);
        const float mzf =
            (float)(w * (lo + (hi - lo) * ((double)rand() / RAND_MAX) + SMX_MOM_ZSHIFT));
        const double vz = fmin(fmax((double)mzf / w - SMX_MOM_ZSHIFT, lo), hi);
        int k, k0, k1;
        const double off = smx_mom_point(mzf, w, s, &k);
        smx_mom_rows(s, &k0, &k1);
        if (!(off >= lo - 1e-12 && off <= hi + 1e-12) || k < k0 || k > k1 ||
            (fabs(s) <= 2.0 && k1 - k0 > 1) || fabs(k + off - (vz + s)) > 1e-12)
            bad_point++;

        smx_mom_parts p;
        smx_mom_split(m, q, w, s, &p);
        double fs = 0.0, mean = 0.0, sq = 0.0;
        for (int a = 0; a < p.n; a++) {
            const double x = p.lo + a;
            if (!(p.f[a] >= 0.0) || fabs(p.m[a]) > 0.5 + 1e-12 || p.q[a] < p.m[a] * p.m[a] - 1e-12)
                bad_split++;
            fs += p.f[a];
            mean += p.f[a] * (x + p.m[a]);
            sq += p.f[a] * (x * x + 2.0 * x * p.m[a] + p.q[a]);
        }
        worst_n = p.n > worst_n ? p.n : worst_n;
        const double c = uf + s;
        const double em = fabs(mean - c), eq = fabs(sq - (c * c + vf));
        worst_mean = em > worst_mean ? em : worst_mean;
        worst_sq = eq > worst_sq ? eq : worst_sq;
        /* Double rounding of a few terms of size up to s^2 ~ 16. */
        if (fabs(fs - 1.0) > 1e-13 || em > 1e-12)
            bad_mean++;
        if (eq > 1e-11)
            bad_sq++;
    }
    printf("points: %d bad; strips: %d bad parts, %d means, %d mean squares off; at most %d "
           "parts; worst mean %.2e, mean square %.2e\n",
           bad_point, bad_split, bad_mean, bad_sq, worst_n, worst_mean, worst_sq);
    CHECK(bad_point == 0);
    CHECK(bad_split == 0 && bad_mean == 0 && bad_sq == 0);
    CHECK(worst_n <= SMX_MOM_PARTS);

    /* A point keeps no spread: one column, mean square = mean^2. */
    smx_mom_parts p;
    smx_mom_split(1.25f, 0.0625f, 1.0f, 0.5, &p);
    CHECK(p.n == 1 && p.lo == 1 && fabs(p.m[0] + 0.25) < 1e-15 && fabs(p.q[0] - 0.0625) < 1e-15);
    /* A full-cell strip moved by half a cell: two halves, means +-1/4. */
    smx_mom_split(1.0f, (float)(1.0 / 12.0), 1.0f, 0.5, &p);
    CHECK(p.n == 2 && p.lo == 0 && fabs(p.f[0] - 0.5) < 1e-7 && fabs(p.m[0] - 0.25) < 1e-7 &&
          fabs(p.m[1] + 0.25) < 1e-7);
    /* Rounded past the bounds: offset 0.5000001 and variance below 0 clamp. */
    int k;
    CHECK(fabs(smx_mom_point(4.5000005f, 1.0f, 0.0, &k) + 0.5) < 1e-15 && k == 1);
    smx_mom_split(1.1f, 0.0f, 1.0f, 0.0, &p); /* mean square below mean^2 */
    CHECK(p.n == 1 && fabs(p.q[0] - p.m[0] * p.m[0]) < 1e-15);
    return check_report(argv[0]);
}
