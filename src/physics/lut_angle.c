/* Angular scattering kernels (A_theta).
 *
 * Three shapes, chosen by s = sigma/dtheta:
 *   s == 0            identity [1];
 *   0 < s^2 <= 2/3    [a, 1-2a, a], a = s^2/2 (exact variance; stays unimodal
 *                     only while 1-2a >= a, hence the 2/3);
 *   s^2 > 2/3         exp(-u k^2) on [-K, K], K = max(2, ceil(5 s)) capped by the
 *                     grid, with u solved so that the DISCRETE variance is s^2.
 *                     Sampling exp(-k^2/(2 s^2)) directly would not do: truncation
 *                     and the lattice both bias its variance.
 *
 * Support limits (the cap on K):
 *   circular: 2K+1 <= n_theta. A wider kernel would wrap and land two shifts on
 *             one bin, so its stored moments would no longer be what is applied.
 *   window:   K <= n_theta-1. That is the largest shift that can still land inside
 *             the window (edge to edge); weight shifted further leaves from every
 *             bin, so storing it would only cost bandwidth.
 * On support [-K, K] no symmetric unimodal kernel has variance above the flat
 * one's, K(K+1)/3, so s^2 above that is an input error. The bound depends on the
 * grid only through the window's width in radians (full circle: sigma <= ~1.8 rad),
 * not on the number of bins: the cure is a shorter step or a wider window.
 *
 * Weights are stored as float because the GPU reads the same table. Rounding
 * them leaves their sum a few 1e-8 off 1; the residual goes on the centre weight,
 * where it changes neither the first nor the second moment, and what remains is
 * recorded exactly in weight_sum for the caller's THETA_CUTOFF tally. */
#include "physics/lut_angle.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The three-point kernel is unimodal while a <= 1 - 2a. Deciding on the float a
 * actually stored, not on s: at s^2 = 2/3 the double 1/3 rounds up to a float a
 * whose centre weight 1 - 2a then rounds below it. */
static int three_point_fits(double s)
{
    float a = (float)(0.5 * s * s);
    return 3.0 * (double)a <= 1.0;
}

/* Support in units of s: a Gaussian keeps only ~6e-7 of its weight beyond 5
 * sigma, so cutting there barely changes the shape, and the variance the cut
 * removes is put back by the width solve anyway. */
#define GAUSS_SUPPORT_SIGMAS 5.0
/* The solve aims well inside the 1e-10 promised below, so that the promise
 * survives the rounding of the sums that evaluate the variance. */
#define SOLVE_TOL 1e-13
#define CHECK_TOL 1e-10

static int support_cap(int n_theta, int circular)
{
    return circular ? (n_theta - 1) / 2 : n_theta - 1;
}

static int half_width_for(double s, int cap)
{
    if (s == 0.0)
        return 0;
    int k;
    if (three_point_fits(s)) {
        k = 1;
    } else {
        /* In double first: ceil(5 s) of an absurd s would overflow an int. */
        double kd = ceil(GAUSS_SUPPORT_SIGMAS * s);
        k = kd > (double)cap ? cap : (int)kd;
        if (k < 2)
            k = 2;
    }
    return k < cap ? k : cap;
}

/* Variance of exp(-u k^2) on [-K, K] and its derivative in u, which is minus
 * the variance of k^2 (so Newton needs no extra pass). Summed from the tails
 * inwards so that the small terms are not lost against the large ones. */
static void gauss_variance(int K, double u, double *var, double *dvar)
{
    double n = 0.0, m2 = 0.0, m4 = 0.0;
    for (int k = K; k >= 1; k--) {
        double k2 = (double)k * (double)k;
        double g = exp(-u * k2);
        n += g;
        m2 += k2 * g;
        m4 += k2 * k2 * g;
    }
    n = 1.0 + 2.0 * n;
    double v = 2.0 * m2 / n;
    *var = v;
    *dvar = -(2.0 * m4 / n - v * v);
}

/* Finds u >= 0 with variance(u) = s2. The variance falls monotonically from
 * K(K+1)/3 at u = 0 towards 0, and the caller has checked s2 <= K(K+1)/3, so
 * [0, hi] brackets the root once variance(hi) <= s2. Newton inside the
 * bracket, bisection whenever Newton would leave it. */
static int solve_gauss_width(int K, double s2, double *u_out, double *var_out)
{
    double v, dv;
    double lo = 0.0, hi = 1.0 / (2.0 * s2);
    gauss_variance(K, hi, &v, &dv);
    while (v > s2) {
        lo = hi;
        hi *= 2.0;
        if (!(hi < 1e300)) {
            *u_out = hi;
            *var_out = v;
            return -1;
        }
        gauss_variance(K, hi, &v, &dv);
    }
    double u = 1.0 / (2.0 * s2);
    if (!(u >= lo && u <= hi))
        u = 0.5 * (lo + hi);
    for (int it = 0; it < 300; it++) {
        gauss_variance(K, u, &v, &dv);
        double f = v - s2;
        if (fabs(f) <= SOLVE_TOL * s2)
            break;
        if (f > 0.0)
            lo = u;
        else
            hi = u;
        if (hi - lo <= 1e-16 * hi)
            break;
        double un = dv < 0.0 ? u - f / dv : lo - 1.0;
        if (!(un > lo && un < hi))
            un = 0.5 * (lo + hi);
        u = un;
    }
    gauss_variance(K, u, &v, &dv);
    *u_out = u;
    *var_out = v;
    return fabs(v - s2) <= CHECK_TOL * s2 ? 0 : -1;
}

/* Side weights first, stored once per pair so that w[-k] == w[k] holds bit for
 * bit; the centre weight then absorbs the float rounding of the sides. */
static void fill_sides_and_centre(float *c, int K, const double *side)
{
    double sides = 0.0;
    for (int k = K; k >= 1; k--) {
        float wk = (float)side[k];
        c[k] = wk;
        c[-k] = wk;
        sides += 2.0 * (double)wk;
    }
    c[0] = (float)(1.0 - sides);
}

static int fill_kernel(float *w, int K, double s, double *scratch, smx_error *err, int energy_bin)
{
    float *c = w + K;
    if (K == 0) {
        c[0] = 1.0f;
        return 0;
    }
    if (K == 1 && three_point_fits(s)) {
        scratch[1] = 0.5 * s * s;
        fill_sides_and_centre(c, 1, scratch);
        return 0;
    }
    double u = NAN, v = NAN;
    if (solve_gauss_width(K, s * s, &u, &v) != 0)
        return smx_fail(err, SMX_EXIT_RUNTIME,
                        "angular kernel: could not match the variance for sigma/dtheta = %.6g "
                        "(energy bin %d, K = %d): reached %.17g instead of %.17g",
                        s, energy_bin, K, v, s * s);
    double n = 0.0;
    for (int k = K; k >= 1; k--) {
        scratch[k] = exp(-u * (double)k * (double)k);
        n += scratch[k];
    }
    n = 1.0 + 2.0 * n;
    for (int k = 1; k <= K; k++)
        scratch[k] /= n;
    fill_sides_and_centre(c, K, scratch);
    return 0;
}

/* Pairs from the tails inwards, then the centre: the same order everywhere, so
 * that weight_sum and angle_kernel_moments' m0 agree bit for bit. Each float has
 * 24 significant bits, so these double sums are exact while no weight falls more
 * than 29 binades below 1 (s > ~3e-5); below that they are off by ~1e-16.
 * Pairing also makes m1 exactly 0 for a symmetric kernel, and any asymmetry
 * visible. */
static void moments_of(const float *c, int K, double *m0, double *m1, double *m2)
{
    double s0 = 0.0, s1 = 0.0, s2 = 0.0;
    for (int k = K; k >= 1; k--) {
        double kk = (double)k;
        double p = (double)c[k], q = (double)c[-k];
        s0 += p + q;
        s1 += kk * (p - q);
        s2 += kk * kk * (p + q);
    }
    s0 += (double)c[0];
    *m0 = s0;
    *m1 = s1;
    *m2 = s2;
}

void angle_kernel_moments(const angle_kernels *ak, int kernel, double *m0, double *m1, double *m2)
{
    if (!ak || !ak->weights || kernel < 0 || kernel >= ak->n_kernels) {
        *m0 = *m1 = *m2 = NAN;
        return;
    }
    int K = ak->half_width[kernel];
    moments_of(ak->weights + ak->offset[kernel] + K, K, m0, m1, m2);
}

void angle_kernels_free(angle_kernels *ak)
{
    if (!ak)
        return;
    free(ak->theta_ext);
    free(ak->src_lo);
    free(ak->src_len);
    free(ak->src_off);
    free(ak->src_weights);
    free(ak->src_sum);
    free(ak->src_lost);
    free(ak->kernel_of_energy);
    free(ak->half_width);
    free(ak->offset);
    free(ak->weights);
    free(ak->sigma_bins);
    free(ak->weight_sum);
    memset(ak, 0, sizeof *ak);
}

/* +0 and -0 are both "no scattering" and must share a kernel. */
static uint64_t sigma_key(double s)
{
    if (s == 0.0)
        s = 0.0;
    uint64_t b;
    memcpy(&b, &s, sizeof b);
    return b;
}

/* splitmix64's finaliser: neighbouring doubles differ only in low mantissa bits,
 * which a plain modulus would map to neighbouring, clustering slots. */
static uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}

static void *alloc_zeroed(size_t n, size_t size)
{
    return calloc(n ? n : 1, size);
}

/* Assigns kernel ids in order of first appearance (deterministic), one hash
 * probe per energy bin: O(ne) rather than O(ne^2) comparisons. first_bin[id]
 * is the first energy bin using kernel id, for error messages. */
static int dedup(angle_kernels *ak, const double *sigma_bins, int ne, int *first_bin,
                 smx_error *err)
{
    size_t cap = 2;
    while (cap < 2 * (size_t)ne)
        cap *= 2;
    int *slot = alloc_zeroed(cap, sizeof *slot); /* kernel id + 1; 0 = empty */
    if (!slot)
        return smx_fail(err, SMX_EXIT_RUNTIME, "out of memory building angular kernels");
    int n = 0;
    for (int ie = 0; ie < ne; ie++) {
        uint64_t key = sigma_key(sigma_bins[ie]);
        size_t h = (size_t)mix64(key) & (cap - 1);
        while (slot[h] && sigma_key(ak->sigma_bins[slot[h] - 1]) != key)
            h = (h + 1) & (cap - 1);
        if (!slot[h]) {
            ak->sigma_bins[n] = sigma_bins[ie] == 0.0 ? 0.0 : sigma_bins[ie];
            first_bin[n] = ie;
            slot[h] = ++n;
        }
        ak->kernel_of_energy[ie] = slot[h] - 1;
    }
    free(slot);
    ak->n_kernels = n;
    return 0;
}

double angle_kernel_sigma_limit(int n_theta, int circular)
{
    double K = n_theta < 1 ? 0.0 : (double)support_cap(n_theta, circular);
    return sqrt(K * (K + 1.0) / 3.0);
}

static int fail_too_wide(smx_error *err, double s, int energy_bin, int n_theta, int circular, int K)
{
    double s_max = sqrt((double)K * (double)(K + 1) / 3.0);
    if (circular)
        return smx_fail(err, SMX_EXIT_INPUT,
                        "angular grid cannot represent the scattering: sigma/dtheta = %.3g "
                        "(energy bin %d) exceeds what %d bins over the full circle can hold "
                        "(at most %.3g); sigma grows as sqrt(step), so take a shorter step",
                        s, energy_bin, n_theta, s_max);
    return smx_fail(err, SMX_EXIT_INPUT,
                    "angular window too narrow for the scattering: sigma/dtheta = %.3g "
                    "(energy bin %d) exceeds what a window of %d bins can hold "
                    "(at most %.3g); widen the window or take a shorter step",
                    s, energy_bin, n_theta, s_max);
}

/* Every bin's sigma/dtheta finite and non-negative; their largest in *smax
 * (NULL: not wanted). */
static int check_sigmas(const double *sigma_bins, int ne, double *smax, smx_error *err)
{
    double mx = 0.0;
    for (int ie = 0; ie < ne; ie++) {
        double s = sigma_bins[ie];
        if (!(s >= 0.0) || isinf(s))
            return smx_fail(err, SMX_EXIT_INPUT,
                            "angular kernels: sigma/dtheta = %g for energy bin %d is not a "
                            "finite non-negative number (check the scattering-power table)",
                            s, ie);
        mx = s > mx ? s : mx;
    }
    if (smax)
        *smax = mx;
    return 0;
}

int angle_kernels_build(angle_kernels *ak, const double *sigma_bins, int ne, int n_theta,
                        int circular, smx_error *err)
{
    if (!ak)
        return smx_fail(err, SMX_EXIT_RUNTIME, "angle_kernels_build: no output struct");
    memset(ak, 0, sizeof *ak);
    if (ne < 0 || (ne > 0 && !sigma_bins))
        return smx_fail(err, SMX_EXIT_INPUT, "angular kernels: %d energy bins given", ne);
    if (n_theta < 1)
        return smx_fail(err, SMX_EXIT_INPUT,
                        "angular kernels: n_theta = %d, need at least 1 angle bin", n_theta);
    int rc = check_sigmas(sigma_bins, ne, NULL, err);
    if (rc)
        return rc;
    int *first_bin = NULL;
    double *scratch = NULL;
    ak->ne = ne;
    ak->kernel_of_energy = alloc_zeroed((size_t)ne, sizeof *ak->kernel_of_energy);
    ak->sigma_bins = alloc_zeroed((size_t)ne, sizeof *ak->sigma_bins);
    first_bin = alloc_zeroed((size_t)ne, sizeof *first_bin);
    if (!ak->kernel_of_energy || !ak->sigma_bins || !first_bin) {
        rc = smx_fail(err, SMX_EXIT_RUNTIME, "out of memory building angular kernels");
        goto fail;
    }
    if ((rc = dedup(ak, sigma_bins, ne, first_bin, err)) != 0)
        goto fail;

    int nk = ak->n_kernels;
    ak->half_width = alloc_zeroed((size_t)nk, sizeof *ak->half_width);
    ak->offset = alloc_zeroed((size_t)nk, sizeof *ak->offset);
    ak->weight_sum = alloc_zeroed((size_t)nk, sizeof *ak->weight_sum);
    if (!ak->half_width || !ak->offset || !ak->weight_sum) {
        rc = smx_fail(err, SMX_EXIT_RUNTIME, "out of memory building angular kernels");
        goto fail;
    }

    /* Supports and feasibility first, so that the weights are allocated once. */
    int cap = support_cap(n_theta, circular);
    size_t total = 0;
    for (int id = 0; id < nk; id++) {
        double s = ak->sigma_bins[id];
        int K = half_width_for(s, cap);
        if (s * s > (double)K * (double)(K + 1) / 3.0) {
            rc = fail_too_wide(err, s, first_bin[id], n_theta, circular, K);
            goto fail;
        }
        ak->half_width[id] = K;
        ak->offset[id] = (int)total;
        total += 2 * (size_t)K + 1;
        if (total > INT_MAX) {
            rc = smx_fail(err, SMX_EXIT_RUNTIME,
                          "angular kernels: %zu weights exceed the table's int offsets", total);
            goto fail;
        }
        if (K > ak->max_half_width)
            ak->max_half_width = K;
    }

    ak->weights = alloc_zeroed(total, sizeof *ak->weights);
    scratch = alloc_zeroed((size_t)ak->max_half_width + 1, sizeof *scratch);
    if (!ak->weights || !scratch) {
        rc = smx_fail(err, SMX_EXIT_RUNTIME, "out of memory building angular kernels");
        goto fail;
    }
    for (int id = 0; id < nk; id++) {
        int K = ak->half_width[id];
        float *w = ak->weights + ak->offset[id];
        if ((rc = fill_kernel(w, K, ak->sigma_bins[id], scratch, err, first_bin[id])) != 0)
            goto fail;
        double m1, m2;
        moments_of(w + K, K, &ak->weight_sum[id], &m1, &m2);
    }

    free(first_bin);
    free(scratch);
    return 0;

fail:
    free(first_bin);
    free(scratch);
    angle_kernels_free(ak);
    return rc;
}

/* ---- bins of unequal width (grid.angle.spacing: beam) -------------------- */

/* Newton's method gives up after this many iterations; the study that chose
 * the construction needed fewer than 20. */
#define MAPPED_NEWTON_ITERS 200

/* The window's n bins continued by G ghosts on each side, next = n + 2 G of
 * them: centres c and widths w (units of d0), as mapped_bins fills them. */
typedef struct mapped_grid {
    const double *c, *w;
    int n, G, next;
} mapped_grid;

/* One source's kernel: sigma s (units of d0) at ghost-extended bin J, its
 * support [a, b] and whether it is the three-point one (mapped_support). */
typedef struct mapped_source {
    double s;
    int J, a, b, three;
} mapped_source;

/* Centres c and widths w of the window's bins continued by G ghosts on each
 * side (units of d0): ghost-extended bin i is window bin i - G. */
static void mapped_bins(double tcb, int n, int G, double *c, double *w)
{
    for (int i = 0; i < n + 2 * G; i++) {
        const double u = i - G + 0.5 - 0.5 * n;
        c[i] = angle_map_sinh(tcb, u);
        w[i] = angle_map_sinh(tcb, u + 0.5) - angle_map_sinh(tcb, u - 0.5);
    }
}

/* The kernel of the source at ghost-extended bin J: its support [*a, *b]
 * and whether it is the three-point one. */
static int mapped_support(const mapped_grid *g, double s, int J, int *a, int *b)
{
    const double *c = g->c, *w = g->w;
    const int next = g->next;
    *a = *b = J;
    if (s == 0.0)
        return 1;
    const double hm = c[J] - c[J - 1], hp = c[J + 1] - c[J], s2 = s * s;
    const double wm = s2 / (hm * (hm + hp)), wp = s2 / (hp * (hm + hp));
    if (1.0 - wm - wp >= fmax(wm, wp)) {
        *a = J - 1;
        *b = J + 1;
        return 1;
    }
    const double reach = GAUSS_SUPPORT_SIGMAS * s;
    while (*a > 0 && (J - (*a - 1) <= 2 || fabs(c[*a - 1] - c[J]) <= reach + 0.5 * w[*a - 1]))
        (*a)--;
    while (*b < next - 1 &&
           ((*b + 1) - J <= 2 || fabs(c[*b + 1] - c[J]) <= reach + 0.5 * w[*b + 1]))
        (*b)++;
    return 0;
}

/* The points of the fit of one fitted kernel: offsets t[0..m) from its centre
 * in units of sigma, lb the log of their bins' widths. */
typedef struct expfam_points {
    const double *t, *lb;
    int m;
} expfam_points;

/* p over t[0..m) proportional to exp(lb + A t + B t^2); returns the dual
 * F = log Z - B and the moments m[1..4] of t. */
static double expfam_eval(const expfam_points *x, double A, double B, double *p, double mom[5])
{
    const double *t = x->t, *lb = x->lb;
    const int m = x->m;
    double mx = -INFINITY;
    for (int i = 0; i < m; i++) {
        p[i] = lb[i] + A * t[i] + B * t[i] * t[i];
        mx = p[i] > mx ? p[i] : mx;
    }
    double Z = 0.0;
    for (int i = 0; i < m; i++)
        Z += p[i] = exp(p[i] - mx);
    for (int k = 1; k <= 4; k++)
        mom[k] = 0.0;
    for (int i = 0; i < m; i++) {
        p[i] /= Z;
        const double t2 = t[i] * t[i];
        mom[1] += p[i] * t[i];
        mom[2] += p[i] * t2;
        mom[3] += p[i] * t2 * t[i];
        mom[4] += p[i] * t2 * t2;
    }
    return log(Z) + mx - B;
}

/* p_i proportional to w_i exp(A t_i + B t_i^2) with mean 0 and variance 1 in
 * t = d / s: the minimum of the convex dual log Z(A, B) - B, whose gradient
 * is (E t, E t^2 - 1) and whose Hessian the covariance of (t, t^2). Newton
 * with backtracking from the Gaussian (A = 0, B = -1/2). 0, or -1 when the
 * moments miss by more than CHECK_TOL. */
static int expfam_solve(const expfam_points *x, double *p, double *q)
{
    const int m = x->m;
    double A = 0.0, B = -0.5, mom[5], mn[5];
    double F = expfam_eval(x, A, B, p, mom);
    for (int it = 0; it < MAPPED_NEWTON_ITERS; it++) {
        const double g1 = mom[1], g2 = mom[2] - 1.0;
        if (fabs(g1) + fabs(g2) < 1e-14)
            break;
        const double h11 = mom[2] - mom[1] * mom[1], h12 = mom[3] - mom[1] * mom[2],
                     h22 = mom[4] - mom[2] * mom[2], det = h11 * h22 - h12 * h12;
        if (!(det > 0.0))
            break;
        const double dA = -(h22 * g1 - h12 * g2) / det, dB = -(h11 * g2 - h12 * g1) / det;
        double step = 1.0, Fn = NAN;
        int moved = 0;
        for (int k = 0; k < 60; k++, step *= 0.5) {
            Fn = expfam_eval(x, A + step * dA, B + step * dB, q, mn);
            if (Fn <= F + 1e-15 * fabs(F)) {
                moved = 1;
                break;
            }
        }
        if (!moved)
            break;
        A += step * dA;
        B += step * dB;
        F = Fn;
        memcpy(p, q, (size_t)m * sizeof *p);
        memcpy(mom, mn, sizeof mom);
    }
    return fabs(mom[1]) <= CHECK_TOL && fabs(mom[2] - 1.0) <= CHECK_TOL ? 0 : -1;
}

/* The weights of the source at ghost-extended bin J on [a, b], as floats,
 * the centre's taking the others' rounding; their sum and the part of it
 * past the window (bins below G or from G + n on). scratch: 4 (b - a + 1). */
static int mapped_fill(const mapped_grid *g, const mapped_source *src, float *out, double *sum,
                       double *lost, double *scratch)
{
    const double s = src->s, *c = g->c, *w = g->w;
    const int J = src->J, a = src->a, b = src->b, three = src->three, G = g->G, n = g->n;
    const int m = b - a + 1;
    double *p = scratch, *t = scratch + m, *lb = scratch + 2 * m, *q = scratch + 3 * m;
    if (s == 0.0) {
        p[0] = 1.0;
    } else if (three) {
        const double hm = c[J] - c[J - 1], hp = c[J + 1] - c[J], s2 = s * s;
        p[0] = s2 / (hm * (hm + hp));
        p[2] = s2 / (hp * (hm + hp));
        p[1] = 1.0 - p[0] - p[2];
    } else {
        for (int i = 0; i < m; i++) {
            t[i] = (c[a + i] - c[J]) / s;
            lb[i] = log(w[a + i]);
        }
        const expfam_points x = { t, lb, m };
        if (expfam_solve(&x, p, q))
            return -1;
    }
    double rest = 0.0;
    for (int i = 0; i < m; i++)
        if (a + i != J) {
            out[i] = (float)p[i];
            rest += (double)out[i];
        }
    out[J - a] = (float)(1.0 - rest);
    double all = 0.0, out_w = 0.0;
    for (int i = 0; i < m; i++) {
        all += (double)out[i];
        if (a + i < G || a + i >= G + n)
            out_w += (double)out[i];
    }
    *sum = all;
    *lost = out_w;
    return 0;
}

void angle_kernel_source_moments(const angle_kernels *ak, int kernel, int j, double *m0, double *m1,
                                 double *m2)
{
    if (!ak || !ak->per_source || kernel < 0 || kernel >= ak->n_kernels || j < 0 ||
        j >= ak->n_theta) {
        *m0 = *m1 = *m2 = NAN;
        return;
    }
    const size_t kj = (size_t)kernel * ak->n_theta + j;
    const float *wt = ak->src_weights + ak->src_off[kj];
    const double *c = ak->theta_ext + ak->ghosts;
    double s0 = 0.0, s1 = 0.0, s2 = 0.0;
    for (int i = 0; i < ak->src_len[kj]; i++) {
        const double d = c[ak->src_lo[kj] + i] - c[j], v = (double)wt[i];
        s0 += v;
        s1 += v * d;
        s2 += v * d * d;
    }
    *m0 = s0;
    *m1 = s1;
    *m2 = s2;
}

/* Checks the arguments of angle_kernels_build_mapped other than ak; *smax:
 * the largest of sigma_bins (it sizes the ghosts). */
static int mapped_check_input(const double *sigma_bins, int ne, int n_theta, double tc_bins,
                              double *smax, smx_error *err)
{
    if (ne < 0 || (ne > 0 && !sigma_bins))
        return smx_fail(err, SMX_EXIT_INPUT, "angular kernels: %d energy bins given", ne);
    if (n_theta < 1 || !(tc_bins > 0.0) || !isfinite(tc_bins))
        return smx_fail(err, SMX_EXIT_INPUT,
                        "angular kernels: %d bins with theta_c = %g bins; expected at least 1 "
                        "bin and theta_c > 0",
                        n_theta, tc_bins);
    return check_sigmas(sigma_bins, ne, smax, err);
}

/* Ghosts: at least two (the three-point kernel and the fitted one's two
 * bins each side), and enough that the support of the widest kernel of
 * an edge bin ends inside them. */
static int mapped_ghost_count(int n_theta, double tc_bins, double smax)
{
    const double reach = GAUSS_SUPPORT_SIGMAS * smax;
    const double edge = angle_map_sinh(tc_bins, 0.5 * n_theta);
    int G = 2;
    while (G < 100000) {
        const double u = 0.5 * n_theta + G; /* the outer edge of the last ghost */
        const double cg = angle_map_sinh(tc_bins, u - 0.5),
                     wg = angle_map_sinh(tc_bins, u) - angle_map_sinh(tc_bins, u - 1.0);
        if (!isfinite(wg) || cg - edge - 0.5 * wg > reach + angle_map_sinh(tc_bins, 0.5))
            break;
        G++;
    }
    return G;
}

/* The per-kernel and per-(kernel, source) tables, for the ak->n_kernels
 * kernels on ak->n_theta bins (the weights come once their count is known). */
static int mapped_alloc_tables(angle_kernels *ak, smx_error *err)
{
    const int nk = ak->n_kernels;
    const size_t nkj = (size_t)nk * ak->n_theta;
    ak->half_width = alloc_zeroed((size_t)nk, sizeof *ak->half_width);
    ak->offset = alloc_zeroed((size_t)nk, sizeof *ak->offset);
    ak->weight_sum = alloc_zeroed((size_t)nk, sizeof *ak->weight_sum);
    ak->src_lo = alloc_zeroed(nkj, sizeof *ak->src_lo);
    ak->src_len = alloc_zeroed(nkj, sizeof *ak->src_len);
    ak->src_off = alloc_zeroed(nkj, sizeof *ak->src_off);
    ak->src_sum = alloc_zeroed(nkj, sizeof *ak->src_sum);
    ak->src_lost = alloc_zeroed(nkj, sizeof *ak->src_lost);
    if (!ak->half_width || !ak->offset || !ak->weight_sum || !ak->src_lo || !ak->src_len ||
        !ak->src_off || !ak->src_sum || !ak->src_lost)
        return smx_fail(err, SMX_EXIT_RUNTIME, "out of memory building angular kernels");
    return 0;
}

/* Supports first, so that the weights are allocated once: each (kernel,
 * source)'s bins and offset, each kernel's reach; *total: the weights of all,
 * *widest: the longest support. */
static int mapped_supports(angle_kernels *ak, const mapped_grid *g, size_t *total, int *widest,
                           smx_error *err)
{
    const int nk = ak->n_kernels, n_theta = g->n, G = g->G;
    size_t tot = 0;
    int wid = 0;
    for (int k = 0; k < nk; k++) {
        int K = 0;
        for (int j = 0; j < n_theta; j++) {
            const size_t kj = (size_t)k * n_theta + j;
            int a, b;
            if (mapped_support(g, ak->sigma_bins[k], j + G, &a, &b))
                ak->n_three_point++;
            else
                ak->n_fitted++;
            ak->src_lo[kj] = a - G;
            ak->src_len[kj] = b - a + 1;
            ak->src_off[kj] = (int)tot;
            tot += (size_t)(b - a + 1);
            wid = b - a + 1 > wid ? b - a + 1 : wid;
            K = j + G - a > K ? j + G - a : K;
            K = b - j - G > K ? b - j - G : K;
            if (tot > INT_MAX)
                return smx_fail(err, SMX_EXIT_RUNTIME,
                                "angular kernels: %zu weights exceed the table's int offsets", tot);
        }
        ak->half_width[k] = K;
        ak->weight_sum[k] = 1.0;
        ak->max_half_width = K > ak->max_half_width ? K : ak->max_half_width;
    }
    *total = tot;
    *widest = wid;
    return 0;
}

/* The weights of every (kernel, source) on the supports mapped_supports laid
 * out, in parallel over the kernels (4 widest doubles of scratch per thread);
 * a kernel that fails is named by its first energy bin (first_bin). */
static int mapped_weights(angle_kernels *ak, const mapped_grid *g, size_t total, int widest,
                          const int *first_bin, smx_error *err)
{
    const int nk = ak->n_kernels, n_theta = g->n, G = g->G;
    ak->src_weights = alloc_zeroed(total, sizeof *ak->src_weights);
    if (!ak->src_weights)
        return smx_fail(err, SMX_EXIT_RUNTIME, "out of memory building angular kernels");
    int bad = nk, nomem = 0; /* the first kernel that failed */
#pragma omp parallel
    {
        double *scratch = malloc(4 * (size_t)widest * sizeof *scratch);
        if (!scratch) {
#pragma omp atomic write
            nomem = 1;
        }
#pragma omp for schedule(dynamic, 4)
        for (int k = 0; k < nk; k++) {
            for (int j = 0; scratch && j < n_theta; j++) {
                const size_t kj = (size_t)k * n_theta + j;
                mapped_source src = { .s = ak->sigma_bins[k], .J = j + G };
                src.three = mapped_support(g, src.s, src.J, &src.a, &src.b);
                if (mapped_fill(g, &src, ak->src_weights + ak->src_off[kj], &ak->src_sum[kj],
                                &ak->src_lost[kj], scratch)) {
#pragma omp critical(smx_lut_angle_bad)
                    bad = k < bad ? k : bad;
                    break;
                }
            }
        }
        free(scratch);
    }
    if (nomem)
        return smx_fail(err, SMX_EXIT_RUNTIME, "out of memory building angular kernels");
    if (bad < nk)
        return smx_fail(err, SMX_EXIT_RUNTIME,
                        "angular kernel: could not match the mean and variance for sigma/d0 = "
                        "%.6g (energy bin %d) on bins of unequal width",
                        ak->sigma_bins[bad], first_bin[bad]);
    return 0;
}

int angle_kernels_build_mapped(angle_kernels *ak, const double *sigma_bins, int ne, int n_theta,
                               double tc_bins, smx_error *err)
{
    if (!ak)
        return smx_fail(err, SMX_EXIT_RUNTIME, "angle_kernels_build_mapped: no output struct");
    memset(ak, 0, sizeof *ak);
    double smax = 0.0;
    int rc = mapped_check_input(sigma_bins, ne, n_theta, tc_bins, &smax, err);
    if (rc != 0)
        return rc;
    int *first_bin = NULL;
    double *w = NULL;
    ak->ne = ne;
    ak->per_source = 1;
    ak->n_theta = n_theta;
    const int G = mapped_ghost_count(n_theta, tc_bins, smax);
    ak->ghosts = G;
    const int next = n_theta + 2 * G;
    ak->kernel_of_energy = alloc_zeroed((size_t)ne, sizeof *ak->kernel_of_energy);
    ak->sigma_bins = alloc_zeroed((size_t)ne, sizeof *ak->sigma_bins);
    ak->theta_ext = alloc_zeroed((size_t)next, sizeof *ak->theta_ext);
    w = alloc_zeroed((size_t)next, sizeof *w);
    first_bin = alloc_zeroed((size_t)ne, sizeof *first_bin);
    if (!ak->kernel_of_energy || !ak->sigma_bins || !ak->theta_ext || !w || !first_bin) {
        rc = smx_fail(err, SMX_EXIT_RUNTIME, "out of memory building angular kernels");
        goto fail;
    }
    mapped_bins(tc_bins, n_theta, G, ak->theta_ext, w);
    if ((rc = dedup(ak, sigma_bins, ne, first_bin, err)) != 0)
        goto fail;

    const mapped_grid g = { ak->theta_ext, w, n_theta, G, next };
    size_t total = 0;
    int widest = 0;
    if ((rc = mapped_alloc_tables(ak, err)) != 0 ||
        (rc = mapped_supports(ak, &g, &total, &widest, err)) != 0 ||
        (rc = mapped_weights(ak, &g, total, widest, first_bin, err)) != 0)
        goto fail;
    free(first_bin);
    free(w);
    return 0;
fail:
    free(first_bin);
    free(w);
    angle_kernels_free(ak);
    return rc;
}
