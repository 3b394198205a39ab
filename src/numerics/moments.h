/* How the moments scheme moves a cell's weight, shared by every backend so
 * that their psi agrees bit for bit.
 *
 * Why moments: the whole-cell shift with one sub-cell remainder per direction
 * puts weight that changes direction bin at its new direction's remainder, a
 * random error of up to half a cell per change that widened a 70 MeV pencil by
 * +42 % at half range on 0.5 mm cells. Here every (energy, direction, cell)
 * carries, beside its weight w, the weight times the mean offset of its
 * particles from the cell's centre along z and x (mz, mx, in cells) and the
 * weight times their mean squared offset along x (qx). A_theta and A_E are
 * linear and move no particle, so they act on each moment as on the weight;
 * only A_stream moves them:
 * - along z (depth, where a step moves nearly one row) the weight moves as a
 *   point at its mean offset v, to v + s. It is then held by the row that
 *   holds the midpoint of its next step, v + s + s/2, not its start: with
 *   ds = dz a forward particle starts each step on a row's edge, and held by
 *   the row above (its start a hair before the edge, cos theta < 1) its step
 *   in the row below was charged to the row above's medium, a dose 43 % low in
 *   the first row of a titanium slab and 75 % high in its last. Its offset
 *   from that row's centre lies in [-1/2 - s/2, 1/2 - s/2] (and at the
 *   entrance, -1/2: a source starts on the upper edge of row 0);
 * - along x (the lateral spread, narrower than a cell in a pencil's first
 *   centimetres) as a uniform strip of its mean and variance: the strip,
 *   moved by s, is cut by the column edges, and each part lands in its
 *   column with its own weight, mean and mean square. A uniform strip cut in
 *   parts keeps its first and second moments, so the move widens nothing and
 *   narrows nothing; merging parts (A_theta) adds moments exactly. With only
 *   a mean (a point along x too) every merge of two directions' particles in
 *   one cell lost their spread: widths came out 7-30 % narrow.
 * Offsets are clamped to [-1/2, 1/2] and variances to [0, 1/4] (particles of
 * one cell; the float moments may round past). All in double from the float
 * moments; the backends round what they store.
 * The first moments are stored shifted, w (u + SMX_MOM_ZSHIFT) and
 * w (u + SMX_MOM_XSHIFT), so that every component is non-negative as psi is
 * (offsets lie within 2.5 cells along z and 1/2 along x): the GPU's region
 * kernels drop a value below the early exit's threshold, 0 for a moment, and
 * take a sum of zero for an empty cell. Merging still adds them exactly
 * (the sum of w (u + c) is W (mean u + c)). */
#ifndef SMX_MOMENTS_H
#define SMX_MOMENTS_H

#include <float.h>
#include <math.h>
#include <stdint.h>

#ifdef __CUDACC__
#define SMX_MOM_HD __host__ __device__
#else
#define SMX_MOM_HD
#endif

/* Columns a strip may cover: up to sqrt(3) cells wide. */
#define SMX_MOM_PARTS 3
/* The shifts of the stored first moments (powers of two: exact). */
#define SMX_MOM_ZSHIFT 4.0
#define SMX_MOM_XSHIFT 1.0
#define SMX_MOM_ESHIFT 1.0
/* The state's components: weight, the z and x first moments, the x second
 * moment, and the energy's first and second moments (below). */
#define SMX_MOM_COMPONENTS 6

/* A stored first moment's mean offset, and a part's stored moment. */
static inline SMX_MOM_HD double smx_mom_mean(float m, float w, double shift)
{
    return (double)m / (double)w - shift;
}
static inline SMX_MOM_HD float smx_mom_store(float part, double u, double shift)
{
    return (float)((double)part * (u + shift));
}

/* A weight below FLT_MIN leaves the state at A_stream (tallied with the
 * leak): a subnormal carries no usable offset (w u rounds to a few units of
 * 1e-45), and such a tail stuck at the entrance, one subnormal unit whose
 * offset rounded back to 0 at every step, held a moving window's back. */
static inline SMX_MOM_HD int smx_mom_keeps(float w)
{
    return w >= FLT_MIN;
}

static inline SMX_MOM_HD double smx_mom_clamp(double u, double lo, double hi)
{
    return u < lo ? lo : u > hi ? hi : u;
}

/* Along z, a direction of move s: the offsets a row holds, from its centre,
 * [*lo, *hi]: those whose step's midpoint it holds, and for a forward move
 * the entrance, -1/2 (a source in row 0 whose first step is longer than two
 * rows). */
static inline SMX_MOM_HD void smx_mom_depth_range(double s, double *lo, double *hi)
{
    *lo = -0.5 - 0.5 * s;
    *hi = 0.5 - 0.5 * s;
    if (s > 0.0 && *hi < -0.5)
        *hi = -0.5;
}

/* The rows a point of direction s may land in: *k0 .. *k1 on. */
static inline SMX_MOM_HD void smx_mom_rows(double s, int *k0, int *k1)
{
    double lo, hi;
    smx_mom_depth_range(s, &lo, &hi);
    *k0 = (int)floor(lo + 1.5 * s + 0.5);
    *k1 = (int)floor(hi + 1.5 * s + 0.5);
}

/* Along z: a point at offset m / w (clamped to the row's range) moved by s
 * lands *k rows on, the row holding the midpoint of its next step; returns
 * its new offset there. */
static inline SMX_MOM_HD double smx_mom_point(float m, float w, double s, int *k)
{
    double lo, hi;
    smx_mom_depth_range(s, &lo, &hi);
    const double u = smx_mom_clamp(smx_mom_mean(m, w, SMX_MOM_ZSHIFT), lo, hi);
    const double p = u + s, f = floor(p + 0.5 * s + 0.5);
    *k = (int)f;
    return p - f;
}

/* Along x: the parts of a strip, in ascending columns lo .. lo + n - 1 from
 * the source: share f, mean offset m and mean squared offset q, each from
 * its own column's centre. */
typedef struct smx_mom_parts {
    int lo, n;
    double f[SMX_MOM_PARTS], m[SMX_MOM_PARTS], q[SMX_MOM_PARTS];
} smx_mom_parts;

static inline SMX_MOM_HD void smx_mom_split(float m, float q, float w, double s, smx_mom_parts *p)
{
    const double u = smx_mom_clamp(smx_mom_mean(m, w, SMX_MOM_XSHIFT), -0.5, 0.5);
    const double var = smx_mom_clamp((double)q / (double)w - u * u, 0.0, 0.25);
    const double c = u + s, h = sqrt(3.0 * var);
    const double a = c - h, b = c + h;
    int lo = (int)floor(a + 0.5), hi = (int)floor(b + 0.5);
    if (hi > lo && b + 0.5 == floor(b + 0.5))
        hi--; /* the strip ends on an edge: nothing in the next column */
    if (!(h > 0.0) || hi == lo) {
        /* One column: a point keeps no spread, a strip inside one column its own. */
        p->lo = lo;
        p->n = 1;
        p->f[0] = 1.0;
        p->m[0] = c - lo;
        p->q[0] = (c - lo) * (c - lo) + var;
        return;
    }
    p->lo = lo;
    p->n = hi - lo + 1;
    for (int k = lo; k <= hi; k++) {
        const double l = (a > k - 0.5 ? a : k - 0.5) - k, r = (b < k + 0.5 ? b : k + 0.5) - k;
        p->f[k - lo] = (r - l) / (b - a);
        p->m[k - lo] = 0.5 * (l + r);
        p->q[k - lo] = (l * l + l * r + r * r) / 3.0;
    }
}

/* ---- The energy moments -------------------------------------------------
 * Beside its position, every (energy, direction, cell) carries the mean
 * offset e of its particles' energy from the bin's centre, in bins of the
 * reference medium's residual range (stored w (e + SMX_MOM_ESHIFT), e in
 * [-1/2, 1/2]), and their mean squared offset (stored w <e^2>). On a range
 * grid one step in the reference medium moves every particle exactly one
 * bin, so both ride along unchanged: the same coefficients as the weight.
 * In another medium a step moves a particle from bin i a fractional number
 * of bins, to L + (1 - p_low) with L the lower bracketing centre (p_low the
 * lower table's share, lut_energy.h). Without the moments the whole-bin
 * tables could only be chosen per step, alike for every cell of a medium (a
 * Bresenham sequence, dither_phase.h), which keeps the mean within a bin for
 * a particle that stays in one medium but not across crossings: 2 cm of lung
 * came out 0.34 mm short, and water with +-2 % density noise per cell
 * 0.18 mm short with its fall-off 16 % wider. With the moments the cell's
 * particles, a uniform strip of their mean and variance, move by exactly
 * 1 - p_low bins above L, and the bin edge halfway between L and L + 1 cuts
 * the strip: the part below takes the lower table, the part above the upper
 * one, each with its own mean and mean square from its new centre (as a
 * strip along x is cut by the column edges). The second moment is needed:
 * with the mean alone, every merge of particles of different offsets (two
 * directions in A_theta, two cells in A_stream) lost their spread, and a
 * 2 cm slab of water at 1.85 g/cm3 narrowed the distal fall-off by 35 %.
 * The deposit follows e to first order, through the slope of the table's
 * deposit over the bins. */

/* A cell's energy offset, clamped (the float moment may round past). */
static inline SMX_MOM_HD double smx_mom_energy(float me, float w)
{
    return smx_mom_clamp(smx_mom_mean(me, w, SMX_MOM_ESHIFT), -0.5, 0.5);
}

/* The two parts of a cell's strip after a step with lower share p_low:
 * share f, mean offset m and mean squared offset q from the lower [0] and
 * upper [1] centre. */
typedef struct smx_emom_parts {
    double f[2], m[2], q[2];
} smx_emom_parts;

static inline SMX_MOM_HD void smx_emom_split(float me, float qe, float w, double p_low,
                                             smx_emom_parts *p)
{
    const double u = smx_mom_energy(me, w);
    const double var = smx_mom_clamp((double)qe / (double)w - u * u, 0.0, 0.25);
    const double c = u + (1.0 - p_low), h = sqrt(3.0 * var);
    const double a = c - h, b = c + h;
    if (!(h > 0.0) || b <= 0.5 || a >= 0.5) {
        const int k = c < 0.5 ? 0 : 1; /* a point, or a strip on one side */
        p->f[k] = 1.0;
        p->m[k] = c - k;
        p->q[k] = (c - k) * (c - k) + var;
        p->f[1 - k] = p->m[1 - k] = p->q[1 - k] = 0.0;
        return;
    }
    /* [a, 1/2] from L, [1/2, b] from L + 1. */
    const double l0 = a, r0 = 0.5, l1 = -0.5, r1 = b - 1.0;
    p->f[0] = (r0 - l0) / (b - a);
    p->f[1] = 1.0 - p->f[0];
    p->m[0] = 0.5 * (l0 + r0);
    p->m[1] = 0.5 * (l1 + r1);
    p->q[0] = (l0 * l0 + l0 * r0 + r0 * r0) / 3.0;
    p->q[1] = (l1 * l1 + l1 * r1 + r1 * r1) / 3.0;
}

/* The deposit per unit weight and unit offset of bin i of a table with
 * deposits dep and targets target (< 0: stops) on centres E: the central
 * difference of the deposit over the neighbours that share the bin's fate
 * (one-sided at a grid end or where a neighbour's fate differs); for a bin
 * that stops, whose deposit is its whole energy, that of the centres. */
static inline SMX_MOM_HD double smx_emom_slope(const double *dep, const int32_t *target,
                                               const double *E, int ne, int i)
{
    const int stops = target[i] < 0;
    const double *v = stops ? E : dep;
    const int lo = i > 0 && (target[i - 1] < 0) == stops ? i - 1 : i;
    const int hi = i + 1 < ne && (target[i + 1] < 0) == stops ? i + 1 : i;
    return hi > lo ? (v[hi] - v[lo]) / (double)(hi - lo) : 0.0;
}

#endif
