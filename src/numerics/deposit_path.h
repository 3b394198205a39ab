/* Where a step's deposited energy lands, shared by every backend so that their
 * dose agrees bit for bit.
 *
 * Why along the path: under the shift scheme a direction bin moves by whole
 * cells and carries the sub-cell remainder, so a bin whose remainder crosses a
 * half skips a move and would deposit two steps in one row (a one-row spike of
 * 5-14 % in the plateau). The deposit of direction j in cell (z, x) is instead
 * spread over the cells that the step's straight path crosses, each receiving
 * the fraction of the path inside it. The path starts where the direction's
 * particles truly are: n s - M from the cell's centre, n the step, s the move
 * per step in cells and M the whole-cell moves already made (round(n s), or
 * round((n + 1) s) when A_stream ran earlier in the same step). Depth is
 * counted from the entrance plane, the upper edge of row 0 (where the source
 * starts), so z is offset by -1/2; the lateral source sits on cell centres.
 * Under the bilinear scheme the streaming itself spreads the weight: the
 * deposit stays in its cell (one fraction of 1).
 *
 * The order, per step:
 * 1. A_E, per cell and direction j: D_j = fma(deposit[e], (double)psi[e][j],
 *    D_j) over the energy bins e in ascending order from D_j = +0, stored as
 *    float in the deposit map dmap[j][z][x] (bins holding no weight add an
 *    exact +0 and may be skipped).
 * 2. The spread (smx_path_cell), per dose cell: P_j = the sum of
 *    f_z f_x dmap[j][zs][xs] over the z fraction a, the source row zs, the x
 *    fraction b and the source column xs, each ascending, from P_j = +0; then
 *    dose = dose + T, T the pairwise tree over P_0 .. P_{L-1} (L the number
 *    of directions rounded up to a power of two, at least SMX_PATH_LEAVES_MIN,
 *    leaves past the last direction +0): ((P_0 + P_1) + (P_2 + P_3)) + ...
 *    All in double with every product and sum rounded separately (no
 *    contraction: -std=c11 on the host, --fmad=false on the device).
 * Why a tree: the directions of a cell are summed by different threads on the
 * GPU (SMX_PATH_LEAVES_MIN groups of L / SMX_PATH_LEAVES_MIN consecutive
 * ones); a running sum over the directions would make each cell one thread's
 * chain of dependent loads and additions, the step waiting on the longest.
 * A path's share beyond the grid's edge lands in the edge cell, so the dose
 * map holds all of DEPOSITED (less the float rounding of dmap, < 1e-7). */
#ifndef SMX_DEPOSIT_PATH_H
#define SMX_DEPOSIT_PATH_H

#include <math.h>

#include "numerics/moments.h"

#ifdef __CUDACC__
#define SMX_PATH_HD __host__ __device__
#else
#define SMX_PATH_HD
#endif

/* Cells a step may cross along z or x (transport.step_mm at most this many dz
 * and dx: the plan check); a path then touches at most SMX_PATH_MAX_MOVE + 2
 * cells per axis. */
#define SMX_PATH_MAX_MOVE 4
#define SMX_PATH_CELLS (SMX_PATH_MAX_MOVE + 2)

/* One axis of one direction's path: fractions f[0 .. n-1] of the path in the
 * cells at offsets lo .. lo + n - 1 from the cell holding the weight. */
typedef struct smx_path_axis {
    int lo, n;
    double f[SMX_PATH_CELLS];
} smx_path_axis;

/* The straight segment [r, r + s] (cells, from the centre of cell 0; |s| <=
 * SMX_PATH_MAX_MOVE) cut by the cell edges at half-integers. */
static inline SMX_PATH_HD void smx_path_cut(double r, double s, smx_path_axis *p)
{
    const double a = s > 0.0 ? r : r + s, b = s > 0.0 ? r + s : r; /* a <= b */
    int lo = (int)floor(a + 0.5), hi = (int)floor(b + 0.5);
    if (b + 0.5 == floor(b + 0.5) && hi > lo)
        hi--; /* the path ends on an edge: nothing in the next cell */
    if (s == 0.0 || hi - lo + 1 > SMX_PATH_CELLS) {
        p->lo = lo;
        p->n = 1;
        p->f[0] = 1.0;
        return;
    }
    p->lo = lo;
    p->n = hi - lo + 1;
    for (int d = lo; d <= hi; d++) {
        const double l = a > d - 0.5 ? a : d - 0.5, u = b < d + 0.5 ? b : d + 0.5;
        p->f[d - lo] = (u - l) / (b - a);
    }
}

/* The fraction smx_path_cut(r, s) gives the cell at offset d (0 where it
 * lists none): the same expressions, so the same double, without the
 * axis's arrays (the GPU's spread keeps this in registers). */
static inline SMX_PATH_HD double smx_path_cut_share(double r, double s, int d)
{
    const double a = s > 0.0 ? r : r + s, b = s > 0.0 ? r + s : r; /* a <= b */
    const int lo = (int)floor(a + 0.5);
    int hi = (int)floor(b + 0.5);
    if (b + 0.5 == floor(b + 0.5) && hi > lo)
        hi--;
    if (d < lo || d > hi)
        return 0.0;
    if (s == 0.0 || hi - lo + 1 > SMX_PATH_CELLS)
        return d == lo ? 1.0 : 0.0;
    const double l = a > d - 0.5 ? a : d - 0.5, u = b < d + 0.5 ? b : d + 0.5;
    return (u - l) / (b - a);
}

/* Direction j's path at step n (0-based): s its move per step in cells
 * (stream_table sz or sx), moved = 1 when A_stream already ran this step,
 * entrance = -0.5 along z (rows start at the entrance plane), 0 along x.
 * shift = 0 (bilinear scheme): the deposit stays in its cell. */
static inline SMX_PATH_HD void smx_path_of(double s, long long n, int moved, int shift,
                                           double entrance, smx_path_axis *p)
{
    if (!shift) {
        p->lo = 0;
        p->n = 1;
        p->f[0] = 1.0;
        return;
    }
    const double done = (double)llround((double)(n + moved) * s);
    smx_path_cut((double)n * s - done + entrance, s, p);
}

/* Source cells along one axis whose offset o lands in cell t of [0, len):
 * t - o, and every cell beyond the edge when t is an edge cell; clipped to
 * the sources [s0, s1]. Empty when *lo > *hi. */
static inline SMX_PATH_HD void smx_path_sources(int t, int o, int len, int s0, int s1, int *lo,
                                                int *hi)
{
    int a = t == 0 ? s0 : t - o, b = t == len - 1 ? s1 : t - o;
    *lo = a > s0 ? a : s0;
    *hi = b < s1 ? b : s1;
}

/* Leaves of the directions' tree: at least this many (the GPU's groups). */
#define SMX_PATH_LEAVES_MIN 8

static inline SMX_PATH_HD int smx_path_leaves(int nth)
{
    int l = SMX_PATH_LEAVES_MIN;
    while (l < nth)
        l *= 2;
    return l;
}

/* A cell's share factor under sharing by capped mass (below): rho_t / rho_s
 * for a cell lighter than the source's, else exactly 1. */
static inline SMX_PATH_HD double smx_path_ratio(double rho_t, double rho_s)
{
    return rho_t < rho_s ? rho_t / rho_s : 1.0;
}

/* P_j: what direction j's path brings to cell (tz, tx) from its map plane dj
 * (rows of `pitch`), reading only sources inside [z0, z1] x [x0, x1] (where
 * this step wrote the map). medium NULL: by length, P + f v per source. With
 * the medium map (rows of `pitch` too) and densities: by capped mass (below),
 * P + (f smx_path_ratio(rho_t, rho_s)) v, rho_s the source's density, rho_t
 * the cell's. */
static inline SMX_PATH_HD double
smx_path_direction(const float *dj, int pitch, const smx_path_axis *pz, const smx_path_axis *px,
                   int tz, int tx, int nz, int nx, int z0, int z1, int x0, int x1,
                   const unsigned char *medium, const double *density)
{
    double P = 0.0;
    const double rho_t = medium ? density[medium[(long long)tz * pitch + tx]] : 0.0;
    for (int a = 0; a < pz->n; a++) {
        int zlo, zhi;
        smx_path_sources(tz, pz->lo + a, nz, z0, z1, &zlo, &zhi);
        for (int zs = zlo; zs <= zhi; zs++) {
            const float *row = dj + (long long)zs * pitch;
            const unsigned char *mrow = medium ? medium + (long long)zs * pitch : NULL;
            for (int b = 0; b < px->n; b++) {
                const double f = pz->f[a] * px->f[b];
                int xlo, xhi;
                smx_path_sources(tx, px->lo + b, nx, x0, x1, &xlo, &xhi);
                for (int xs = xlo; xs <= xhi; xs++)
                    P = mrow ? P + (f * smx_path_ratio(rho_t, density[mrow[xs]])) * (double)row[xs]
                             : P + f * (double)row[xs];
            }
        }
    }
    return P;
}

/* The pairwise tree of a sequence of leaves built one leaf at a time: leaf i
 * joins the stack, then its completed subtrees merge (one merge per trailing
 * one bit of i), the left operand the lower leaves. 2^SMX_PATH_STACK leaves
 * at most. */
#define SMX_PATH_STACK 16
typedef struct smx_path_tree {
    double v[SMX_PATH_STACK + 1];
    int top, count;
} smx_path_tree;

static inline SMX_PATH_HD void smx_path_tree_push(smx_path_tree *t, double x)
{
    for (int k = t->count++; k & 1; k >>= 1)
        x = t->v[--t->top] + x;
    t->v[t->top++] = x;
}

/* dose + the deposits that the paths of every direction bring to cell (tz,
 * tx), in the order above. dmap: [nth] planes of `plane` floats, rows of
 * `pitch`; only sources inside [z0, z1] x [x0, x1] are read. pz, px: the
 * directions' paths. medium, density: as smx_path_direction's. */
static inline SMX_PATH_HD double smx_path_cell(double dose, const float *dmap, long long plane,
                                               int pitch, int nth, const smx_path_axis *pz,
                                               const smx_path_axis *px, int tz, int tx, int nz,
                                               int nx, int z0, int z1, int x0, int x1,
                                               const unsigned char *medium, const double *density)
{
    smx_path_tree t;
    t.top = t.count = 0;
    const int leaves = smx_path_leaves(nth);
    for (int j = 0; j < leaves; j++)
        smx_path_tree_push(&t, j < nth ? smx_path_direction(dmap + (long long)j * plane, pitch,
                                                            &pz[j], &px[j], tz, tx, nz, nx, z0, z1,
                                                            x0, x1, medium, density)
                                       : 0.0);
    return dose + t.v[0];
}

/* smx_path_cell, sharing by length, for SMX_PATH_LANES cells of one row at
 * once (the CPU's spread): cells (tz, tx .. tx + SMX_PATH_LANES - 1), none on
 * an edge (0 < tz < nz - 1, 0 < tx, tx + SMX_PATH_LANES < nx). There each of
 * a path's offsets has the one source t - o (smx_path_sources), so every cell
 * takes the same terms in the same order; a source outside the box adds
 * f * 0 = +0, which leaves a sum of non-negative terms as it was. The
 * directions' leaves are then joined level by level, the pairwise tree of
 * smx_path_tree_push (64 leaves at most). The same bits as smx_path_cell. */
#define SMX_PATH_LANES 8
typedef struct smx_path_view {
    const float *dmap; /* [nth] planes of `plane` floats, rows of `pitch` */
    long long plane;
    int pitch, nth;
    const smx_path_axis *pz, *px;
    int z0, z1, x0, x1; /* the sources' box */
} smx_path_view;

static inline void smx_path_cells_interior(const smx_path_view *v, double *dose, int tz, int tx)
{
    double P[64][SMX_PATH_LANES];
    const int leaves = smx_path_leaves(v->nth);
    for (int j = 0; j < leaves; j++) {
        double *Pj = P[j];
        for (int l = 0; l < SMX_PATH_LANES; l++)
            Pj[l] = 0.0;
        if (j >= v->nth)
            continue;
        const smx_path_axis *az = &v->pz[j], *ax = &v->px[j];
        const float *dj = v->dmap + (long long)j * v->plane;
        for (int a = 0; a < az->n; a++) {
            const int zs = tz - (az->lo + a);
            if (zs < v->z0 || zs > v->z1)
                continue;
            const float *row = dj + (long long)zs * v->pitch;
            for (int b = 0; b < ax->n; b++) {
                const double f = az->f[a] * ax->f[b];
                const int xs0 = tx - (ax->lo + b);
                for (int l = 0; l < SMX_PATH_LANES; l++) {
                    const int xs = xs0 + l;
                    const float s = xs >= v->x0 && xs <= v->x1 ? row[xs] : 0.0f;
                    Pj[l] = Pj[l] + f * (double)s;
                }
            }
        }
    }
    for (int h = 1; h < leaves; h *= 2)
        for (int k = 0; k + h < leaves; k += 2 * h)
            for (int l = 0; l < SMX_PATH_LANES; l++)
                P[k][l] = P[k][l] + P[k + h][l];
    for (int l = 0; l < SMX_PATH_LANES; l++)
        dose[l] = dose[l] + P[0][l];
}

/* Sharing by capped mass. The deposit D of a step was lost at the stopping
 * power of the medium of the cell that holds the weight (density rho_s), but
 * under the shift scheme the path may lie partly in a neighbour. Shared by
 * length alone, a dense cell's deposit lands in a light neighbour its
 * particles only partly cross, and that cell's small mass turns it into a
 * dose spike (a muscle row's energy in the last lung row before it: +11.8 %;
 * 35 times its neighbours in the last row of an air gap). So a cell on the
 * path lighter than the held one takes only what its own medium would take
 * from its length, f_z f_x D rho_c / rho_s (the density ratio standing for
 * the stopping-power ratio); a cell as dense or denser takes its length's
 * share f_z f_x D; and the held cell keeps the rest, D U with U = the sum
 * over the lighter cells of f_z f_x (1 - rho_c / rho_s): the energy the held
 * medium removed beyond what the light cells would have. The shares sum to D;
 * a light cell never holds more than its own stopping power gives it. Where
 * every cell on the path is as dense as the held one the shares are those by
 * length, bit for bit (factor exactly 1, U exactly 0).
 * The spread applies the factors (smx_path_direction); the held cell's rest
 * is added to the dose before the spread: dose + S, S = the sum over the
 * directions j ascending of (double)dmap_j U_j, U_j's terms in the order of
 * the path's cells (z fraction a, then x fraction b, ascending), each cell
 * clamped to the grid as its share is. Both only where the map holds more
 * than one density. medium: [nz] rows of `pitch` medium indices (the map's
 * pitch); density: per medium, g/cm3. */
static inline SMX_PATH_HD double smx_path_rest(const smx_path_axis *pz, const smx_path_axis *px,
                                               int z, int x, int nz, int nx,
                                               const unsigned char *medium, int pitch,
                                               const double *density)
{
    const double rho_s = density[medium[(long long)z * pitch + x]];
    double U = 0.0;
    for (int a = 0; a < pz->n; a++) {
        int zc = z + pz->lo + a;
        zc = zc < 0 ? 0 : zc > nz - 1 ? nz - 1 : zc;
        const unsigned char *row = medium + (long long)zc * pitch;
        for (int b = 0; b < px->n; b++) {
            int xc = x + px->lo + b;
            xc = xc < 0 ? 0 : xc > nx - 1 ? nx - 1 : xc;
            const double rho_c = density[row[xc]];
            if (rho_c < rho_s)
                U = U + (pz->f[a] * px->f[b]) * (1.0 - rho_c / rho_s);
        }
    }
    return U;
}

/* dose + S: what the held cell (z, x) keeps over every direction. */
static inline SMX_PATH_HD double smx_path_held(double dose, const float *dmap, long long plane,
                                               int pitch, int nth, const smx_path_axis *pz,
                                               const smx_path_axis *px, int z, int x, int nz,
                                               int nx, const unsigned char *medium,
                                               const double *density)
{
    double S = 0.0;
    const float *v = dmap + (long long)z * pitch + x;
    for (int j = 0; j < nth; j++)
        S = S + (double)v[(long long)j * plane] *
                    smx_path_rest(&pz[j], &px[j], z, x, nz, nx, medium, pitch, density);
    return dose + S;
}

/* The cells a source region [s0, s1] reaches along one axis: widened by the
 * paths' extreme offsets, clipped to [0, len). */
static inline SMX_PATH_HD void smx_path_reach(const smx_path_axis *p, int nth, int s0, int s1,
                                              int len, int *lo, int *hi)
{
    int omin = 0, omax = 0;
    for (int j = 0; j < nth; j++) {
        omin = p[j].lo < omin ? p[j].lo : omin;
        omax = p[j].lo + p[j].n - 1 > omax ? p[j].lo + p[j].n - 1 : omax;
    }
    *lo = s0 + omin < 0 ? 0 : s0 + omin;
    *hi = s1 + omax > len - 1 ? len - 1 : s1 + omax;
}

/* ---- Paths that start where each cell's weight is (the moments scheme) ----
 * Under the moments scheme every (direction, cell) carries the weight's mean
 * offset from the cell's centre along z and x and its mean squared offset
 * along x (numerics/moments.h), and so does the deposit: mz_j, mx_j, qx_j =
 * the sums over the energy bins e ascending of fma(deposit[e], (double)m[e][j],
 * .), stored as float beside dmap. The deposit of source (zs, xs) lands:
 * - along z on the path [v, v + sz], v = mz / D (its mean depth offset);
 * - along x on the strip the step sweeps: centred on u + sx / 2, u = mx / D,
 *   with the variance of the weight's spread plus the path's, var + sx^2/12
 *   (var = qx / D - u^2), as a uniform strip of that variance (half-width
 *   sqrt(3 var + sx^2 / 4)).
 * Each axis' share of a cell is the sum of its fractions over its cells
 * clamped to the grid that are that cell. P_j(tz, tx) is the sum over the
 * sources in reach (zs ascending, then xs) of (fz fx) D (times the capped
 * mass factor with media), from +0; the directions' tree and the held cell's
 * rest are as above. */

/* Cells a moments path may cross along either axis: a strip of up to
 * sqrt(3)/2 cells either side of a centre that has moved up to half the step. */
typedef struct smx_mpath_maps {
    const float *D, *mz, *mx, *qx; /* [nth] planes each */
} smx_mpath_maps;

/* The uniform strip [c - h, c + h] (cells, from the centre of cell 0) cut by
 * the cell edges; a point (h = 0) is one cell, floor(c + 1/2). */
static inline SMX_PATH_HD void smx_strip_cut(double c, double h, smx_path_axis *p)
{
    if (!(h > 0.0)) {
        p->lo = (int)floor(c + 0.5);
        p->n = 1;
        p->f[0] = 1.0;
        return;
    }
    smx_path_cut(c - h, 2.0 * h, p);
}

/* smx_strip_cut's fraction for the cell at offset d: the point's cell whole,
 * or the strip's segment's share (smx_path_cut_share). */
static inline SMX_PATH_HD double smx_strip_share(double c, double h, int d)
{
    if (!(h > 0.0))
        return d == (int)floor(c + 0.5) ? 1.0 : 0.0;
    return smx_path_cut_share(c - h, 2.0 * h, d);
}

/* The x strip of a deposit from its float moments: centre *c and half
 * width *h. */
static inline SMX_PATH_HD void smx_mpath_strip_of(float D, float mx, float qx, double sx, double *c,
                                                  double *h)
{
    const double u0 = smx_mom_mean(mx, D, SMX_MOM_XSHIFT);
    const double u = u0 < -0.5 ? -0.5 : u0 > 0.5 ? 0.5 : u0;
    double var = (double)qx / (double)D - u * u;
    var = var < 0.0 ? 0.0 : var > 0.25 ? 0.25 : var;
    *c = u + 0.5 * sx;
    *h = sqrt(3.0 * var + 0.25 * sx * sx);
}

static inline SMX_PATH_HD void smx_mpath_strip(float D, float mx, float qx, double sx,
                                               smx_path_axis *p)
{
    double c, h;
    smx_mpath_strip_of(D, mx, qx, sx, &c, &h);
    smx_strip_cut(c, h, p);
}

/* The z path's start of a deposit from its float moment, clamped to the
 * row's range of offsets [lo, hi] (numerics/moments.h, smx_mom_depth_range). */
static inline SMX_PATH_HD double smx_mpath_depth_start(float D, float mz, double lo, double hi)
{
    const double v0 = smx_mom_mean(mz, D, SMX_MOM_ZSHIFT);
    return v0 < lo ? lo : v0 > hi ? hi : v0;
}

static inline SMX_PATH_HD void smx_mpath_depth(float D, float mz, double sz, smx_path_axis *p)
{
    double lo, hi;
    smx_mom_depth_range(sz, &lo, &hi);
    smx_path_cut(smx_mpath_depth_start(D, mz, lo, hi), sz, p);
}

/* One source's term of P_j: P + f D, with media times the capped mass factor
 * of the target's density rho_t and the source's medium ms. */
static inline SMX_PATH_HD double smx_mpath_term(double P, double f, float D, double rho_t,
                                                const unsigned char *medium, const double *density,
                                                long long ms_at)
{
    return medium ? P + (f * smx_path_ratio(rho_t, density[medium[ms_at]])) * (double)D
                  : P + f * (double)D;
}

/* The share of axis p from source cell `src` that lands in cell t of [0, len),
 * each cell clamped to the grid. */
static inline SMX_PATH_HD double smx_mpath_share(const smx_path_axis *p, int src, int t, int len)
{
    double f = 0.0;
    for (int a = 0; a < p->n; a++) {
        int c = src + p->lo + a;
        c = c < 0 ? 0 : c > len - 1 ? len - 1 : c;
        if (c == t)
            f = f + p->f[a];
    }
    return f;
}

/* The source offsets a target may receive from: [t - *hi, t - *lo]. Along z
 * (strip = 0) the path [v, v + s], v in the row's range (numerics/moments.h);
 * along x (strip = 1) the strip above, at most sqrt(3)/2 + |s|/2 from a
 * centre within 1/2 + s/2. */
static inline SMX_PATH_HD void smx_mpath_span(double s, int strip, int *lo, int *hi)
{
    if (!strip) {
        double a, b;
        smx_mom_depth_range(s, &a, &b);
        *lo = (int)floor((s < 0.0 ? a + s : a) + 0.5);
        *hi = (int)floor((s > 0.0 ? b + s : b) + 0.5);
        return;
    }
    *lo = (int)floor(s < 0.0 ? s : 0.0) - strip;
    *hi = (int)floor(s > 0.0 ? s : 0.0) + 1 + strip;
}

/* P_j for cell (tz, tx): the direction's planes (rows of `pitch`, offset o),
 * its moves sz, sx; sources read inside [z0, z1] x [x0, x1]; medium, density
 * as smx_path_direction's. */
static inline SMX_PATH_HD double smx_mpath_direction(const smx_mpath_maps *m, long long o,
                                                     int pitch, double sz, double sx, int tz,
                                                     int tx, int nz, int nx, int z0, int z1, int x0,
                                                     int x1, const unsigned char *medium,
                                                     const double *density)
{
    double P = 0.0;
    const double rho_t = medium ? density[medium[(long long)tz * pitch + tx]] : 0.0;
    int zl, zh, xl, xh;
    smx_mpath_span(sz, 0, &zl, &zh);
    smx_mpath_span(sx, 1, &xl, &xh);
    /* An edge cell also takes what lies beyond the edge: sources further out. */
    int za = tz == 0 ? z0 : tz - zh, zb = tz == nz - 1 ? z1 : tz - zl;
    int xa = tx == 0 ? x0 : tx - xh, xb = tx == nx - 1 ? x1 : tx - xl;
    za = za > z0 ? za : z0;
    zb = zb < z1 ? zb : z1;
    xa = xa > x0 ? xa : x0;
    xb = xb < x1 ? xb : x1;
    for (int zs = za; zs <= zb; zs++) {
        const long long row = o + (long long)zs * pitch;
        for (int xs = xa; xs <= xb; xs++) {
            const float D = m->D[row + xs];
            if (D == 0.0f)
                continue;
            smx_path_axis pz, px;
            smx_mpath_depth(D, m->mz[row + xs], sz, &pz);
            const double fz = smx_mpath_share(&pz, zs, tz, nz);
            if (fz == 0.0)
                continue;
            smx_mpath_strip(D, m->mx[row + xs], m->qx[row + xs], sx, &px);
            const double fx = smx_mpath_share(&px, xs, tx, nx);
            if (fx == 0.0)
                continue;
            P = smx_mpath_term(P, fz * fx, D, rho_t, medium, density, (long long)zs * pitch + xs);
        }
    }
    return P;
}

/* smx_mpath_direction for a cell off the edges (0 < tz < nz - 1 and 0 < tx
 * < nx - 1), where no cut is clamped onto the cell: a source's share is its
 * cuts' fractions at the cell's offsets (smx_path_cut_share), the same
 * doubles in the same order, so the same P bit for bit. */
static inline SMX_PATH_HD double smx_mpath_direction_inner(const smx_mpath_maps *m, long long o,
                                                           int pitch, double sz, double sx, int tz,
                                                           int tx, const int *box,
                                                           const unsigned char *medium,
                                                           const double *density)
{
    double P = 0.0;
    const double rho_t = medium ? density[medium[(long long)tz * pitch + tx]] : 0.0;
    int zl, zh, xl, xh;
    smx_mpath_span(sz, 0, &zl, &zh);
    smx_mpath_span(sx, 1, &xl, &xh);
    const int za = tz - zh > box[0] ? tz - zh : box[0], zb = tz - zl < box[1] ? tz - zl : box[1];
    const int xa = tx - xh > box[2] ? tx - xh : box[2], xb = tx - xl < box[3] ? tx - xl : box[3];
    double dlo, dhi;
    smx_mom_depth_range(sz, &dlo, &dhi);
    for (int zs = za; zs <= zb; zs++) {
        const long long row = o + (long long)zs * pitch;
        for (int xs = xa; xs <= xb; xs++) {
            const float D = m->D[row + xs];
            if (D == 0.0f)
                continue;
            const double fz = smx_path_cut_share(
                smx_mpath_depth_start(D, m->mz[row + xs], dlo, dhi), sz, tz - zs);
            if (fz == 0.0)
                continue;
            double c, h;
            smx_mpath_strip_of(D, m->mx[row + xs], m->qx[row + xs], sx, &c, &h);
            const double fx = smx_strip_share(c, h, tx - xs);
            if (fx == 0.0)
                continue;
            P = smx_mpath_term(P, fz * fx, D, rho_t, medium, density, (long long)zs * pitch + xs);
        }
    }
    return P;
}

/* dose + the paths of every direction into cell (tz, tx) (the tree above);
 * the maps' planes start at column offset `col` (a slot's first column). */
static inline SMX_PATH_HD double smx_mpath_cell(double dose, const smx_mpath_maps *m, long long col,
                                                long long plane, int pitch, int nth,
                                                const double *sz, const double *sx, int tz, int tx,
                                                int nz, int nx, int z0, int z1, int x0, int x1,
                                                const unsigned char *medium, const double *density)
{
    smx_path_tree t;
    t.top = t.count = 0;
    const int leaves = smx_path_leaves(nth);
    for (int j = 0; j < leaves; j++)
        smx_path_tree_push(&t, j < nth ? smx_mpath_direction(m, col + (long long)j * plane, pitch,
                                                             sz[j], sx[j], tz, tx, nz, nx, z0, z1,
                                                             x0, x1, medium, density)
                                       : 0.0);
    return dose + t.v[0];
}

/* The held cell's rest with media (smx_path_held), each direction's path
 * from the cell's own moments. */
static inline SMX_PATH_HD double smx_mpath_held(double dose, const smx_mpath_maps *m, long long col,
                                                long long plane, int pitch, int nth,
                                                const double *sz, const double *sx, int z, int x,
                                                int nz, int nx, const unsigned char *medium,
                                                const double *density)
{
    double S = 0.0;
    const long long c = col + (long long)z * pitch + x;
    for (int j = 0; j < nth; j++) {
        const long long o = (long long)j * plane + c;
        const float D = m->D[o];
        if (D == 0.0f)
            continue;
        smx_path_axis pz, px;
        smx_mpath_depth(D, m->mz[o], sz[j], &pz);
        smx_mpath_strip(D, m->mx[o], m->qx[o], sx[j], &px);
        S = S + (double)D * smx_path_rest(&pz, &px, z, x, nz, nx, medium, pitch, density);
    }
    return dose + S;
}

/* The cells a source region [s0, s1] reaches along one axis under the
 * moments scheme: widened by every direction's span, clipped to [0, len). */
static inline SMX_PATH_HD void smx_mpath_reach(const double *s, int nth, int strip, int s0, int s1,
                                               int len, int *lo, int *hi)
{
    int omin = 0, omax = 0;
    for (int j = 0; j < nth; j++) {
        int l, h;
        smx_mpath_span(s[j], strip, &l, &h);
        omin = l < omin ? l : omin;
        omax = h > omax ? h : omax;
    }
    *lo = s0 + omin < 0 ? 0 : s0 + omin;
    *hi = s1 + omax > len - 1 ? len - 1 : s1 + omax;
}

#endif
