/* Angular kernels (A_theta): moments, shape, conservation under convolution,
 * the sub-bin trap, grid limits and kernel sharing. */
#include "check.h"
#include "physics/lut_angle.h"

#include <stdint.h>
#include <stdlib.h>

/* Every weight is a float: each is within 2^-24 relative of the double it was
 * rounded from, and the centre absorbs the rounding of the others, so
 * |m0 - 1| <= 2^-25 ~ 3e-8 and m2 (a sum of non-negative k^2 w) is within 2^-24
 * ~ 6e-8 relative of the solved double variance, itself within 1e-10 of s^2.
 * 1e-6 keeps a 15x margin over that while being 10^4 times tighter than the 1 %
 * the design asks for: a wrong support, a missed solve or a sampled Gaussian are
 * all off by far more. */
#define M0_TOL 1e-6
#define M2_TOL 1e-6
/* Convolutions below are in double on exact float inputs: only summation order
 * separates the two sides. */
#define CONV_TOL 1e-12

#define N_SWEEP 81

static double worst_m2 = 0.0, worst_m0 = 0.0;

static const float *centre_of(const angle_kernels *ak, int id)
{
    return ak->weights + ak->offset[id] + ak->half_width[id];
}

/* out[i] = sum_k w[k] in[i - k] on a circle of length n. */
static void convolve_circular(const float *c, int K, const double *in, double *out, int n)
{
    for (int i = 0; i < n; i++) {
        double acc = 0.0;
        for (int k = -K; k <= K; k++) {
            int j = ((i - k) % n + n) % n;
            acc += (double)c[k] * in[j];
        }
        out[i] = acc;
    }
}

/* A small deterministic generator, so that a failure reproduces. */
static uint64_t rng_state = 0x2545f4914f6cdd1dULL;
static double rng_uniform(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) * 0x1.0p-53;
}

static void check_kernel(const angle_kernels *ak, int id, double s, int n_theta, int circular)
{
    int K = ak->half_width[id];
    const float *c = centre_of(ak, id);
    double m0, m1, m2;
    angle_kernel_moments(ak, id, &m0, &m1, &m2);

    CHECK_MSG(fabs(m0 - 1.0) <= M0_TOL, "s = %.6g: m0 = %.17g", s, m0);
    CHECK_MSG(m0 == ak->weight_sum[id], "s = %.6g: m0 %.17g vs weight_sum %.17g", s, m0,
              ak->weight_sum[id]);
    CHECK_MSG(fabs(m1) <= 1e-6, "s = %.6g: m1 = %.3g", s, m1);
    if (fabs(m0 - 1.0) > worst_m0)
        worst_m0 = fabs(m0 - 1.0);
    if (s > 0.0) {
        double rel = m2 / (s * s) - 1.0;
        CHECK_MSG(fabs(rel) <= M2_TOL, "s = %.6g (n_theta %d, %s): m2/s^2 - 1 = %.3g", s, n_theta,
                  circular ? "circular" : "window", rel);
        if (fabs(rel) > worst_m2)
            worst_m2 = fabs(rel);
    } else {
        CHECK(K == 0 && c[0] == 1.0f);
    }

    if (circular)
        CHECK_MSG(2 * K + 1 <= n_theta, "s = %.6g: K = %d on %d bins", s, K, n_theta);
    else
        CHECK_MSG(K <= n_theta - 1, "s = %.6g: K = %d on %d bins", s, K, n_theta);

    /* Non-negative, symmetric to the bit, and unimodal: a kernel that is not
     * monotone away from its centre is not the shape asked for even if its
     * moments happen to match. */
    for (int k = 0; k <= K; k++) {
        CHECK_MSG(c[k] >= 0.0f && c[-k] >= 0.0f, "s = %.6g: w[%d] = %g", s, k, c[k]);
        CHECK_MSG(c[k] == c[-k], "s = %.6g: w[%d] = %.9g, w[-%d] = %.9g", s, k, c[k], k, c[-k]);
        if (k > 0)
            CHECK_MSG(c[k] <= c[k - 1], "s = %.6g: w[%d] = %.9g > w[%d] = %.9g", s, k, c[k], k - 1,
                      c[k - 1]);
    }

    /* Convolution on a line long enough that a delta's image does not wrap (for
     * the window grid K may reach n_theta - 1), or the grid's own circle. */
    int n = 2 * K + 1 > n_theta ? 2 * K + 1 : n_theta;
    double *in = calloc((size_t)n, sizeof *in), *out = calloc((size_t)n, sizeof *out);
    if (!in || !out) {
        CHECK(!"out of memory");
        free(in);
        free(out);
        return;
    }
    in[K] = 1.0;
    convolve_circular(c, K, in, out, n);
    double tot = 0.0, mean = 0.0, raw2 = 0.0;
    for (int i = 0; i < n; i++) {
        double d = (double)(i - K);
        tot += out[i];
        mean += d * out[i];
        raw2 += d * d * out[i];
    }
    CHECK_REL(tot, ak->weight_sum[id], CONV_TOL);
    if (s > 0.0) {
        CHECK_REL(raw2, m2, CONV_TOL);
        mean /= tot;
        double var = raw2 / tot - mean * mean;
        CHECK_REL(var, m2 / m0, CONV_TOL);
    }

    double tin = 0.0, tout = 0.0;
    for (int i = 0; i < n; i++) {
        in[i] = rng_uniform();
        tin += in[i];
    }
    convolve_circular(c, K, in, out, n);
    for (int i = 0; i < n; i++) {
        CHECK(out[i] >= 0.0);
        tout += out[i];
    }
    CHECK_REL(tout, tin * ak->weight_sum[id], CONV_TOL);
    free(in);
    free(out);
}

static void test_sweep(int n_theta, int circular)
{
    double s[N_SWEEP + 7];
    int ne = 0;
    for (int i = 0; i < N_SWEEP; i++)
        s[ne++] = 0.01 * pow(1000.0, (double)i / (N_SWEEP - 1));
    /* Edges of the three-point regime and the trivial kernel. */
    s[ne++] = 0.0;
    s[ne++] = sqrt(2.0 / 3.0);
    s[ne++] = nextafter(sqrt(2.0 / 3.0), 1.0);
    s[ne++] = 1e-6;
    s[ne++] = 0.4;
    s[ne++] = 2.0;
    s[ne++] = 0.8;

    angle_kernels ak;
    smx_error err = { 0 };
    int rc = angle_kernels_build(&ak, s, ne, n_theta, circular, &err);
    CHECK_MSG(rc == SMX_OK, "%s", err.msg);
    if (rc != SMX_OK)
        return;
    CHECK(ak.ne == ne && ak.n_kernels == ne);
    int maxK = 0;
    for (int ie = 0; ie < ne; ie++) {
        int id = ak.kernel_of_energy[ie];
        CHECK(id >= 0 && id < ak.n_kernels);
        CHECK(ak.sigma_bins[id] == s[ie]);
        if (ak.half_width[id] > maxK)
            maxK = ak.half_width[id];
        check_kernel(&ak, id, s[ie], n_theta, circular);
    }
    CHECK(ak.max_half_width == maxK);
    /* The support follows s: three points up to sqrt(2/3), then 5 sigma. */
    CHECK(ak.half_width[ak.kernel_of_energy[N_SWEEP + 6]] == 1);
    CHECK(ak.half_width[ak.kernel_of_energy[N_SWEEP + 2]] == 5);
    CHECK(ak.half_width[ak.kernel_of_energy[N_SWEEP + 5]] == 10);
    angle_kernels_free(&ak);
}

/* The trap this module exists for: a Gaussian integrated over bins, at sigma a
 * tenth of a bin, keeps almost nothing outside the centre bin, so the beam
 * would never spread. This check would fail for such a kernel. */
static void test_sampled_gaussian_fails(void)
{
    const double s = 0.1;
    double naive_var = 0.0, naive_sum = 0.0;
    for (int k = -5; k <= 5; k++) {
        double w = 0.5 * (erfc((k - 0.5) / (s * sqrt(2.0))) - erfc((k + 0.5) / (s * sqrt(2.0))));
        naive_sum += w;
        naive_var += (double)k * k * w;
    }
    naive_var /= naive_sum;
    CHECK_MSG(naive_var < 1e-3 * s * s, "naive variance %.3g vs s^2 %.3g", naive_var, s * s);

    angle_kernels ak;
    smx_error err = { 0 };
    CHECK(angle_kernels_build(&ak, &s, 1, 64, 1, &err) == SMX_OK);
    double m0, m1, m2;
    angle_kernel_moments(&ak, 0, &m0, &m1, &m2);
    CHECK_REL(m2, s * s, M2_TOL);
    /* The three-point kernel, with its exact a = s^2/2. */
    CHECK(ak.half_width[0] == 1);
    CHECK(centre_of(&ak, 0)[1] == (float)(s * s / 2));
    angle_kernels_free(&ak);
}

static void test_too_wide(void)
{
    angle_kernels ak;
    smx_error err = { 0 };
    double s[3] = { 0.5, 23.1, 30.0 };
    int rc = angle_kernels_build(&ak, s, 3, 32, 1, &err);
    CHECK(rc == SMX_EXIT_INPUT && err.code == SMX_EXIT_INPUT);
    CHECK_STREQ(err.msg, "angular grid cannot represent the scattering: sigma/dtheta = 23.1 "
                         "(energy bin 1) exceeds what 32 bins over the full circle can hold "
                         "(at most 8.94); sigma grows as sqrt(step), so take a shorter step");
    CHECK(ak.weights == NULL && ak.kernel_of_energy == NULL && ak.n_kernels == 0);

    smx_error err2 = { 0 };
    rc = angle_kernels_build(&ak, s, 3, 21, 0, &err2);
    CHECK(rc == SMX_EXIT_INPUT);
    CHECK_STREQ(err2.msg, "angular window too narrow for the scattering: sigma/dtheta = 23.1 "
                          "(energy bin 1) exceeds what a window of 21 bins can hold "
                          "(at most 11.8); widen the window or take a shorter step");

    /* Just inside the flat kernel's variance the solve still succeeds. */
    smx_error err3 = { 0 };
    double edge = sqrt(15.0 * 16.0 / 3.0) * (1.0 - 1e-9);
    rc = angle_kernels_build(&ak, &edge, 1, 32, 1, &err3);
    CHECK_MSG(rc == SMX_OK, "%s", err3.msg);
    if (rc == SMX_OK)
        check_kernel(&ak, 0, edge, 32, 1);
    angle_kernels_free(&ak);

    /* Any scattering at all needs three bins on a circle, two in a window. */
    double small = 0.1;
    smx_error err4 = { 0 };
    CHECK(angle_kernels_build(&ak, &small, 1, 2, 1, &err4) == SMX_EXIT_INPUT);
    CHECK(strstr(err4.msg, "sigma/dtheta = 0.1") != NULL);
    smx_error err5 = { 0 };
    CHECK(angle_kernels_build(&ak, &small, 1, 2, 0, &err5) == SMX_OK);
    angle_kernels_free(&ak);
    /* No scattering needs no room. */
    double zero = 0.0;
    smx_error err6 = { 0 };
    CHECK(angle_kernels_build(&ak, &zero, 1, 1, 1, &err6) == SMX_OK);
    CHECK(ak.half_width[0] == 0 && ak.weights[0] == 1.0f && ak.weight_sum[0] == 1.0);
    angle_kernels_free(&ak);

    double bad[2] = { 0.3, -1e-3 };
    smx_error err7 = { 0 };
    CHECK(angle_kernels_build(&ak, bad, 2, 32, 1, &err7) == SMX_EXIT_INPUT);
    CHECK_STREQ(err7.msg, "angular kernels: sigma/dtheta = -0.001 for energy bin 1 is not a "
                          "finite non-negative number (check the scattering-power table)");
    bad[1] = NAN;
    smx_error err8 = { 0 };
    CHECK(angle_kernels_build(&ak, bad, 2, 32, 1, &err8) == SMX_EXIT_INPUT);
    bad[1] = INFINITY;
    smx_error err9 = { 0 };
    CHECK(angle_kernels_build(&ak, bad, 2, 32, 1, &err9) == SMX_EXIT_INPUT);
    angle_kernels_free(&ak);
}

static void test_dedup(void)
{
    double s[8] = { 0.3, 2.5, 0.3, 0.0, -0.0, 2.5, nextafter(2.5, 3.0), 0.3 };
    angle_kernels ak;
    smx_error err = { 0 };
    CHECK(angle_kernels_build(&ak, s, 8, 64, 1, &err) == SMX_OK);
    const int *id = ak.kernel_of_energy;
    CHECK(ak.n_kernels == 4);
    CHECK(id[0] == 0 && id[1] == 1 && id[3] == 2); /* ids in order of first use */
    CHECK(id[2] == id[0] && id[7] == id[0]);
    CHECK(id[5] == id[1]);
    CHECK(id[4] == id[3]); /* -0 and +0 are both no scattering */
    CHECK(id[6] != id[1]); /* one ulp apart is a different kernel */
    CHECK(id[0] != id[1] && id[0] != id[3] && id[1] != id[3]);
    angle_kernels_free(&ak);

    /* Many bins, few values: every bin finds its kernel through the hash. */
    enum { NE = 50000, NV = 997 };
    double *big = malloc(NE * sizeof *big);
    CHECK(big != NULL);
    if (!big)
        return;
    for (int i = 0; i < NE; i++)
        big[i] = 0.01 + 0.01 * (double)((i * 7919) % NV);
    smx_error err2 = { 0 };
    CHECK(angle_kernels_build(&ak, big, NE, 64, 0, &err2) == SMX_OK);
    CHECK(ak.n_kernels == NV);
    int bad = 0;
    for (int i = 0; i < NE && ak.n_kernels == NV; i++)
        bad += ak.sigma_bins[ak.kernel_of_energy[i]] != big[i];
    CHECK(bad == 0);
    angle_kernels_free(&ak);
    free(big);
}

static void test_free_safe(void)
{
    angle_kernels ak;
    memset(&ak, 0, sizeof ak);
    angle_kernels_free(&ak);
    angle_kernels_free(&ak);
    angle_kernels_free(NULL);
    double m0, m1, m2;
    angle_kernel_moments(&ak, 0, &m0, &m1, &m2);
    CHECK(isnan(m0) && isnan(m1) && isnan(m2));
    smx_error err = { 0 };
    CHECK(angle_kernels_build(&ak, NULL, 0, 16, 1, &err) == SMX_OK);
    CHECK(ak.n_kernels == 0 && ak.max_half_width == 0);
    angle_kernels_free(&ak);
}

int main(int argc, char **argv)
{
    (void)argc;
    test_sweep(64, 1);
    test_sweep(41, 0);
    test_sampled_gaussian_fails();
    test_too_wide();
    test_dedup();
    test_free_safe();
    printf("angular sweep 0.01..10: worst |m2/s^2 - 1| = %.3g, worst |m0 - 1| = %.3g\n", worst_m2,
           worst_m0);
    return check_report(argv[0]);
}
