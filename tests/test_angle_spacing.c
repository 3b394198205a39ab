/* grid.angle.spacing: beam (physics/angle_grid.h, physics/grid.c,
 * physics/lut_angle.h): direction bins of width d0 sqrt(1 + (theta /
 * theta_c)^2) about the beam's direction, each source bin with its own
 * scattering kernel. Required:
 *  - the kernels: for every energy bin and every source bin, weights >= 0,
 *    their sum 1 to float rounding, mean exactly the source's centre and
 *    variance exactly the step's sigma^2 (on the bins continued past the
 *    window, where what lands leaves), to the float weights' precision;
 *  - conservation: weight and energy balance to 1e-6 per step (as
 *    test_conservation), with weight leaving past a narrow window's edges,
 *    and through a bone slab (the media's kernels);
 *  - the bins a plan gets (27 over +-30 deg for a beam stopping in water,
 *    given keys kept, a narrow window for a beam leaving early) and the
 *    plans refused at grid.angle.spacing (full circle, no scattering);
 *  - a 150 MeV pencil in water at 0.5 mm (the grid from the beam) under
 *    `shift` and `moments`: the Gaussian core's sigma (fitted within +-2.5
 *    sigma, iterated, as scripts/smx2d_post's core_sigma) and the rms at 50,
 *    80 and 95 % of PSTAR's projected range against Fermi-Eyges with
 *    Highland's theta_0 (tests/reference_models.h; the rms against the
 *    cell-integrated Gaussian's), to the tolerances below, and at most 1e-4
 *    of the protons lost past the window. The nuclear model is `local`: the
 *    transport's width, before the halo's tail.
 * `test_angle_spacing report` (CTest angle_spacing_report, label report)
 * prints the table of docs/model.md, "The direction window": 70 and 150 MeV
 * at 0.5 and 1 mm, shift and moments, 41 uniform bins over +-20 deg against
 * the beam spacing, with each run's wall and CPU time. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "physics/sim_tables.h"
#include "reference_data.h"
#include "reference_models.h"
#include "report/analysis.h"
#include "sim_fixture.h"

#define X0_WATER 36.08 /* g/cm2, Highland's radiation length of water (PDG) */

/* Tolerances, from what `report` measured (docs/model.md, "The direction
 * window"; core / rms against Fermi-Eyges at 50 / 80 / 95 % of the range):
 *  - moments: core -4.4 / -2.4 / -2.2 %, rms -1.2 / -0.6 / -0.5 %: the core
 *    within the 5 % (the angular study's exact transport gave -2.2 %
 *    at half range, the scheme's strips add the rest), the rms within 3 %;
 *  - shift: core -0.6 / +0.5 % and rms +2.5 / +2.4 % at 80 and 95 %,
 *    within 5 %; at half range (Fermi-Eyges 2.1 cells) core +22.9 %, rms
 *    +20.8 %: the remainder walk (docs/physics.md, "Known defects"), which
 *    the fine central bins feed, since every change of direction bin takes
 *    the new direction's sub-cell remainder. Required there: wider than
 *    moments' by 10 % (the defect, so that its cure shows here) and by at
 *    most 30 % wider than Fermi-Eyges (that it grows no worse). */
#define CORE_TOL_MOMENTS 0.05
#define RMS_TOL_MOMENTS 0.03
#define TOL_SHIFT 0.05
#define SHIFT_HALF_MAX 0.30
#define BOUNDARY_MAX 1e-4

/* The fixture's plan with grid.angle's bins and window left out. */
static const char *const BEAM_PLAN = "grid:\n"
                                     "  energy: {kind: range, E_min_MeV: 1.0, E_cutoff_MeV: 1.0}\n"
                                     "  angle: {mode: window, spacing: beam}\n"
                                     "  space: {nx: 81, nz: 170, dx_mm: 0.5, dz_mm: 0.5}\n"
                                     "material: {table_file: pstar_water.h5}\n"
                                     "beam: {energy_MeV: 100.0}\n"
                                     "transport: {step_mm: 0.5, steps: auto}\n"
                                     "output: {file: unused.h5, snapshot_final: false}\n";

static const double FRAC[3] = { 0.5, 0.8, 0.95 };

static int report_mode = 0;

/* ---- the kernels ---------------------------------------------------------- */

/* Every (energy bin, source bin) kernel of a pencil of energy E on steps of
 * d mm, against the step's sigma. */
/* The gather of the per-source kernels (angle_gather, what the CUDA A_theta
 * sums) against the CPU's scatter (theta_mapped_run's order: every target
 * zeroed, then each source's weights added by fmaf, sources ascending): the
 * same bits for every kernel and target on random inputs, and each source's
 * cut-off 1 - its weights' sum. */
static void gather_equals_scatter(const angle_kernels *ak)
{
    angle_gather ag;
    smx_error err = { 0 };
    CHECK(angle_gather_build(ak, &ag, &err) == 0);
    CHECK((size_t)ag.n_terms == angle_gather_terms(ak));
    const int n = ak->n_theta;
    float *in = malloc((size_t)n * sizeof *in), *sc = malloc((size_t)n * sizeof *sc),
          *ga = malloc((size_t)n * sizeof *ga);
    uint64_t r = 0x9e3779b97f4a7c15ull;
    int differ = 0, cut_off = 0;
    for (int k = 0; k < ak->n_kernels; k++) {
        for (int j = 0; j < n; j++) {
            r = r * 6364136223846793005ull + 1442695040888963407ull;
            in[j] = (float)((double)(r >> 11) / 9007199254740992.0);
            sc[j] = 0.0f;
        }
        for (int j = 0; j < n; j++) {
            const size_t kj = (size_t)k * n + j;
            const float *w = ak->src_weights + ak->src_off[kj];
            for (int t = 0; t < ak->src_len[kj]; t++) {
                const int i = ak->src_lo[kj] + t;
                if (i >= 0 && i < n)
                    sc[i] = fmaf(w[t], in[j], sc[i]);
            }
            cut_off += ag.cut[kj] != 1.0 - ak->src_sum[kj];
        }
        for (int i = 0; i < n; i++) {
            float acc = 0.0f;
            for (int e = ag.off[(size_t)k * n + i]; e < ag.off[(size_t)k * n + i + 1]; e++) {
                CHECK(e == ag.off[(size_t)k * n + i] || ag.src[e] > ag.src[e - 1]);
                acc = fmaf(ag.w[e], in[ag.src[e]], acc);
            }
            ga[i] = acc;
        }
        differ += memcmp(sc, ga, (size_t)n * sizeof *sc) != 0;
    }
    CHECK_MSG(differ == 0, "%d of %d kernels' gather differs from the scatter", differ,
              ak->n_kernels);
    CHECK(cut_off == 0);
    free(in);
    free(sc);
    free(ga);
    angle_gather_free(&ag);
}

static void kernels_of(double E, double d)
{
    char e[64], b[64], st[64], dx[64], dz[64], nz[64];
    snprintf(e, sizeof e, "grid.energy.E_max_MeV=%g", E);
    snprintf(b, sizeof b, "beam.energy_MeV=%g", E);
    snprintf(st, sizeof st, "transport.step_mm=%g", d);
    snprintf(dx, sizeof dx, "grid.space.dx_mm=%g", d);
    snprintf(dz, sizeof dz, "grid.space.dz_mm=%g", d);
    snprintf(nz, sizeof nz, "grid.space.nz=%d", (int)(1.1 * 40.8 * pow(E / 70.0, 1.75) / d) + 4);
    const char *sets[] = { e, b, st, dx, dz, nz };
    fixture f;
    CHECK(fixture_load(&f, BEAM_PLAN, sets, 6) == 0);
    const grid *g = &f.g;
    CHECK(g->angle_spacing == ANGLE_BEAM);
    sim_tables s;
    smx_error err = { 0 };
    CHECK(sim_tables_build(&s, &f.p, g, &f.t, &err) == 0);
    const angle_kernels *ak = &s.ak;
    CHECK(ak->per_source == 1 && ak->n_theta == (int)g->nth);
    const int nth = (int)g->nth;
    double wmin = 1.0, sum_err = 0.0, mean_err = 0.0, var_err = 0.0, centre_err = 0.0;
    for (int64_t ie = 0; ie < g->ne; ie++) {
        const int k = sim_kernel_of(&s, 0, (int)ie);
        const double sg = ak->sigma_bins[k];
        for (int j = 0; j < nth; j++) {
            const size_t kj = (size_t)k * nth + j;
            for (int i = 0; i < ak->src_len[kj]; i++)
                wmin = fmin(wmin, (double)ak->src_weights[ak->src_off[kj] + i]);
            double m0, m1, m2;
            angle_kernel_source_moments(ak, k, j, &m0, &m1, &m2);
            sum_err = fmax(sum_err, fabs(m0 - 1.0));
            CHECK(m0 == ak->src_sum[kj]);
            if (sg > 0.0) {
                mean_err = fmax(mean_err, fabs(m1) / sg);
                var_err = fmax(var_err, fabs(m2 / (sg * sg) - 1.0));
            } else {
                CHECK(m1 == 0.0 && m2 == 0.0);
            }
            /* The kernel's centres are the grid's (units of d0 about the window's centre). */
            const double c = ak->theta_ext[ak->ghosts + j] * g->dtheta;
            centre_err = fmax(centre_err, fabs(c - (g->theta.centres[j] - M_PI / 2)));
        }
    }
    printf("%g MeV, %g mm: %lld energy bins, %d kernels x %d sources (%d three-point, %d fitted), "
           "%d ghosts: min weight %.2e, |sum - 1| %.1e, |mean| %.1e sigma, |var / sigma^2 - 1| "
           "%.1e, centres %.1e rad\n",
           E, d, (long long)g->ne, ak->n_kernels, nth, ak->n_three_point, ak->n_fitted, ak->ghosts,
           wmin, sum_err, mean_err, var_err, centre_err);
    CHECK(wmin >= 0.0);
    /* Float weights: each rounded to 6e-8 of itself; the centre's takes the rest. */
    CHECK(sum_err <= 1e-7);
    CHECK(mean_err <= 1e-6);
    CHECK(var_err <= 1e-6);
    CHECK(centre_err <= 1e-12);
    CHECK(ak->n_three_point > 0 && ak->n_fitted > 0);
    /* The widest kernel's outer bins send weight past the window's edges
     * (boundary_frac, what the step tallies), its central one none. */
    int wide = 0;
    for (int k = 1; k < ak->n_kernels; k++)
        wide = ak->sigma_bins[k] > ak->sigma_bins[wide] ? k : wide;
    CHECK(s.boundary_frac[(size_t)wide * nth] > 0.0);
    CHECK(s.boundary_frac[(size_t)wide * nth] == ak->src_lost[(size_t)wide * nth]);
    CHECK(s.boundary_frac[(size_t)wide * nth + nth / 2] == 0.0);
    gather_equals_scatter(ak);
    sim_tables_free(&s);
    fixture_free(&f);
}

/* ---- conservation --------------------------------------------------------- */

static void check_balance(const fixture *f, const char *name)
{
    printf("%s: %d steps, max relative error weight %.3e, energy %.3e; past the window %.3e, "
           "kernel rounding %.3e\n",
           name, f->r.n_steps, f->r.max_weight_rel_err, f->r.max_energy_rel_err,
           f->r.cumulative.weight[CH_THETA_BOUNDARY] / f->r.initial_weight,
           f->r.cumulative.weight[CH_THETA_CUTOFF] / f->r.initial_weight);
    for (int n = 0; n < f->r.n_steps; n++) {
        CHECK_MSG(f->r.steps[n].weight_rel_err <= 1e-6, "%s: step %d weight %.3e", name, n + 1,
                  f->r.steps[n].weight_rel_err);
        CHECK_MSG(f->r.steps[n].energy_rel_err <= 1e-6, "%s: step %d energy %.3e", name, n + 1,
                  f->r.steps[n].energy_rel_err);
    }
    CHECK(f->r.conservation_violations == 0);
}

/* A tilted 30 MeV beam in a window of +-4 deg: much of it leaves past the edges. */
static void narrow_window(void)
{
    const char *sets[] = { "beam.energy_MeV=30",
                           "grid.energy.E_max_MeV=30",
                           "grid.angle.n_bins=9",
                           "grid.angle.half_width_deg=4",
                           "grid.angle.centre_deg=80",
                           "beam.direction_deg=80",
                           "beam.x_mm=3",
                           "grid.space.nx=15",
                           "grid.space.nz=40",
                           "transport.streaming_scheme=moments" };
    fixture f;
    CHECK(fixture_run(&f, BEAM_PLAN, sets, 10) == 0);
    check_balance(&f, "30 MeV, 9 bins over +-4 deg (moments)");
    CHECK(f.r.cumulative.weight[CH_THETA_BOUNDARY] > 1e-2 * f.r.initial_weight);
    CHECK(f.r.cumulative.weight[CH_THETA_CUTOFF] != 0.0);
    fixture_free(&f);
}

/* Bone in water: the media's kernels (one set per medium). */
static void media(void)
{
    const char *sets[] = { "geometry.shapes=[{material: bone_compact, z_mm: [10, 25]}]",
                           "grid.space.nx=41" };
    fixture f;
    CHECK(fixture_run(&f, BEAM_PLAN, sets, 2) == 0);
    check_balance(&f, "100 MeV through 15 mm of compact bone (shift)");
    fixture_free(&f);
}

/* ---- the bins a plan gets ------------------------------------------------- */

static void derived_bins(void)
{
    fixture f;
    const double deg = 180.0 / M_PI;
    /* A beam that stops in water: 27 bins over +-30 deg, theta_c 0.6 theta_0(R/2). */
    CHECK(fixture_load(&f, BEAM_PLAN, NULL, 0) == 0);
    const grid *g = &f.g;
    const int n = (int)g->nth;
    const double d_mid = (g->theta.edges[n / 2 + 1] - g->theta.edges[n / 2]) * deg;
    printf("100 MeV stopping in water: %d bins over +-%.3g deg, theta_c %.3g deg, bins %.3g deg "
           "at the centre to %.3g at the edges\n",
           n, f.p.angle_half_width_deg, f.p.angle_theta_c_deg, d_mid,
           (g->theta.edges[n] - g->theta.edges[n - 1]) * deg);
    CHECK(n == 27 && f.p.angle_half_width_deg == 30.0);
    CHECK(f.p.angle_theta_c_deg > 0.8 && f.p.angle_theta_c_deg < 1.0); /* 0.6 x ~1.5 deg */
    CHECK_REL(d_mid, f.p.angle_theta_c_deg / 0.6 / 5.0, 0.1);
    CHECK(g->theta.centres[n / 2] == M_PI / 2); /* the beam on the middle bin's centre */
    CHECK(g->theta.edges[0] == M_PI / 2 - 30.0 / deg && g->theta.edges[n] == M_PI / 2 + 30.0 / deg);
    for (int i = 0; i < n; i++) /* ascending, symmetric, centres inside their bins */
        CHECK(g->theta.edges[i] < g->theta.centres[i] &&
              g->theta.centres[i] < g->theta.edges[i + 1] &&
              fabs(g->theta.centres[i] + g->theta.centres[n - 1 - i] - M_PI) < 1e-14);
    fixture_free(&f);

    /* Given keys are kept; theta_c still from the beam. */
    const char *given[] = { "grid.angle.n_bins=31", "grid.angle.half_width_deg=25" };
    CHECK(fixture_load(&f, BEAM_PLAN, given, 2) == 0);
    CHECK(f.g.nth == 31 && fabs(f.g.theta.edges[31] * deg - 115.0) < 1e-12);
    CHECK(f.p.angle_theta_c_deg > 0.8 && f.p.angle_theta_c_deg < 1.0);
    fixture_free(&f);

    /* A beam that leaves the grid early: the narrow window of the uniform
     * rule, 4.6 theta_0 at its last step. */
    const char *leaving[] = { "beam.energy_MeV=230", "grid.space.nz=100" };
    CHECK(fixture_load(&f, BEAM_PLAN, leaving, 2) == 0);
    printf("230 MeV through 50 mm: %d bins over +-%.3g deg, theta_c %.3g deg\n", (int)f.g.nth,
           f.p.angle_half_width_deg, f.p.angle_theta_c_deg);
    CHECK(f.p.angle_half_width_deg < 5.0 && f.g.nth % 2 == 1);
    fixture_free(&f);

    /* Refused at the key: the full circle, and no scattering to size the bins. */
    const char *full[] = { "grid.angle.mode=full" };
    CHECK(fixture_load(&f, BEAM_PLAN, full, 1) == SMX_EXIT_INPUT);
    CHECK(strstr(f.err.msg, "grid.angle.spacing") != NULL);
    fixture_free(&f);
    const char *flat[] = { "transport.scattering=false" };
    CHECK(fixture_load(&f, BEAM_PLAN, flat, 1) == SMX_EXIT_INPUT);
    CHECK(strstr(f.err.msg, "grid.angle.spacing") != NULL);
    fixture_free(&f);
}

/* ---- the pencil's width ----------------------------------------------------- */

typedef struct pencil {
    double core[3], rms[3], boundary, wall_s, cpu_s, r80;
    int nth;
    double hw_deg;
} pencil;

/* Share of a Gaussian of width s (centre mu) in the cell [lo, hi). */
static double cell_share(double lo, double hi, double mu, double s)
{
    return 0.5 * (erf((hi - mu) / (M_SQRT2 * s)) - erf((lo - mu) / (M_SQRT2 * s)));
}

/* The rms of the cell-integrated Gaussian of width s on cells of width d. */
static double cell_rms(double s, double d)
{
    double s0 = 0.0, s2 = 0.0;
    for (int i = -(int)(8.0 * s / d) - 2; i <= (int)(8.0 * s / d) + 2; i++) {
        const double w = cell_share((i - 0.5) * d, (i + 0.5) * d, 0.0, s);
        s0 += w;
        s2 += w * i * d * i * d;
    }
    return sqrt(s2 / s0);
}

static double profile_rms(const double *p, const double *x, int n)
{
    double s0 = 0.0, s1 = 0.0, s2 = 0.0;
    for (int i = 0; i < n; i++)
        s0 += p[i], s1 += p[i] * x[i];
    const double m = s1 / s0;
    for (int i = 0; i < n; i++)
        s2 += p[i] * (x[i] - m) * (x[i] - m);
    return sqrt(s2 / s0);
}

/* scripts/smx2d_post's core_sigma: a cell-integrated Gaussian (free height,
 * centred on the centroid of the cells kept) fitted by least squares to the
 * cells within 2.5 sigma of the maximum's (at least 5), repeated until sigma
 * settles. */
static double core_sigma(const double *p, const double *x, int n, double d)
{
    int k = 0;
    for (int i = 1; i < n; i++)
        k = p[i] > p[k] ? i : k;
    double sigma = fmax(profile_rms(p, x, n), d);
    for (int it = 0; it < 30; it++) {
        /* the cells kept: within 2.5 sigma, and the 5 nearest */
        double mw = 0.0, m1 = 0.0;
        int lo = k, hi = k;
        while (lo > 0 && (fabs(x[lo - 1] - x[k]) <= 2.5 * sigma || hi - lo + 1 < 5))
            lo--;
        while (hi < n - 1 && (fabs(x[hi + 1] - x[k]) <= 2.5 * sigma || hi - lo + 1 < 5))
            hi++;
        for (int i = lo; i <= hi; i++)
            mw += p[i], m1 += p[i] * x[i];
        const double mu = m1 / mw;
        double a = 0.02 * d, b = 4.0 * sigma;
        const double gr = 0.5 * (sqrt(5.0) - 1.0);
        for (int g = 0; g < 60; g++) {
            const double c = b - gr * (b - a), e = a + gr * (b - a), s[2] = { c, e };
            double r[2];
            for (int q = 0; q < 2; q++) {
                double mm = 0.0, mp = 0.0, pp = 0.0;
                for (int i = lo; i <= hi; i++) {
                    const double gv = cell_share(x[i] - 0.5 * d, x[i] + 0.5 * d, mu, s[q]) / d;
                    mm += gv * gv, mp += gv * p[i], pp += p[i] * p[i];
                }
                r[q] = pp - mp * mp / mm;
            }
            if (r[0] < r[1])
                b = e;
            else
                a = c;
        }
        const double nw = 0.5 * (a + b);
        const int done = fabs(nw - sigma) <= 1e-4 * sigma;
        sigma = nw;
        if (done)
            break;
    }
    return sigma;
}

static double now_s(clockid_t id)
{
    struct timespec t;
    clock_gettime(id, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

/* A zero-width pencil of energy E on d mm cells and steps: spacing "beam" (the
 * grid from the beam) or "uniform" (41 bins over +-20 deg). */
static int run_pencil(double E, double d, const char *scheme, const char *spacing, const double *fe,
                      const double *zk, pencil *out)
{
    pencil_sets ps;
    pencil_sets_fill(&ps, E, d, scheme, fe[2]);
    const int uniform = strcmp(spacing, "uniform") == 0;
    /* The widths are the transport's against Fermi-Eyges, before the nuclear
     * halo (a broad tail the rms would take in): its local model. */
    const char *sets[12];
    for (int i = 0; i < 8; i++)
        sets[i] = ps.set[i];
    sets[8] = "transport.nuclear=local";
    sets[9] = uniform ? "grid.angle.spacing=uniform" : "grid.angle.spacing=beam";
    sets[10] = "grid.angle.n_bins=41";
    sets[11] = "grid.angle.half_width_deg=20";
    fixture f;
    const double w0 = now_s(CLOCK_MONOTONIC), c0 = now_s(CLOCK_PROCESS_CPUTIME_ID);
    if (fixture_run(&f, BEAM_PLAN, sets, uniform ? 12 : 10))
        return 1;
    out->wall_s = now_s(CLOCK_MONOTONIC) - w0;
    out->cpu_s = now_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
    const grid *g = &f.g;
    double *prof = malloc(g->nx * sizeof *prof), *dd = malloc(g->nz * sizeof *dd);
    depth_dose(g, f.r.dose_MeV, dd);
    out->r80 = distal_depth_mm(g, dd, 0.8);
    for (int k = 0; k < 3; k++) {
        /* The profile at depth zk, between the rows about it. */
        const double pos = zk[k] / g->dz - 0.5;
        const int z = (int)floor(pos);
        const double t = pos - z;
        for (int64_t x = 0; x < g->nx; x++)
            prof[x] =
                (1.0 - t) * f.r.dose_MeV[z * g->nx + x] + t * f.r.dose_MeV[(z + 1) * g->nx + x];
        out->rms[k] = profile_rms(prof, g->x.centres, (int)g->nx);
        out->core[k] = core_sigma(prof, g->x.centres, (int)g->nx, d);
    }
    out->boundary = f.r.cumulative.weight[CH_THETA_BOUNDARY] / f.r.initial_weight;
    out->nth = (int)g->nth;
    out->hw_deg = f.p.angle_half_width_deg;
    char name[160];
    snprintf(name, sizeof name, "%g MeV, %g mm, %s, %s spacing", E, d, scheme, spacing);
    check_balance(&f, name);
    free(prof);
    free(dd);
    fixture_free(&f);
    return 0;
}

static double pct(double a, double b)
{
    return 100.0 * (a / b - 1.0);
}

/* One row of the table; returns the pencil for the caller's checks. */
static pencil row(const tables *t, double E, double d, const char *scheme, const char *spacing)
{
    const double R = pstar_reference_mm(E, PSTAR_PROJECTED);
    double fe[3], zk[3];
    for (int k = 0; k < 3; k++) {
        zk[k] = FRAC[k] * R;
        fe[k] = highland_fermi_eyges_mm(t, E, zk[k], 1.0, X0_WATER);
    }
    pencil p = { 0 };
    CHECK(run_pencil(E, d, scheme, spacing, fe, zk, &p) == 0);
    printf("| %g MeV | %g | %s | %s (%d over +-%.3g deg) | ", E, d, scheme, spacing, p.nth,
           p.hw_deg);
    for (int k = 0; k < 3; k++)
        printf("%+.1f%s", pct(p.core[k], fe[k]), k < 2 ? " / " : " | ");
    for (int k = 0; k < 3; k++)
        printf("%+.1f%s", pct(p.rms[k], cell_rms(fe[k], d)), k < 2 ? " / " : " | ");
    printf("%.1e | %.1f s (CPU %.2f s) |\n", p.boundary, p.wall_s, p.cpu_s);
    fflush(stdout);
    for (int k = 0; k < 3; k++) {
        p.core[k] /= fe[k];
        p.rms[k] /= cell_rms(fe[k], d);
    }
    return p;
}

int main(int argc, char **argv)
{
    report_mode = argc > 1 && strcmp(argv[1], "report") == 0;
    tables t = { 0 };
    smx_error err = { 0 };
    CHECK(tables_load(&t, "data/pstar_water.h5", &err) == 0);
    if (!report_mode) {
        kernels_of(70.0, 0.5);
        kernels_of(150.0, 0.5);
        kernels_of(150.0, 1.0);
        narrow_window();
        media();
        derived_bins();
    }
    printf(
        "| beam | grid (mm) | scheme | directions | core / FE - 1 at 50 / 80 / 95 %% (%%) | rms / FE "
        "- 1 (%%) | theta_boundary | time |\n");
    if (!report_mode) {
        const pencil sh = row(&t, 150.0, 0.5, "shift", "beam");
        const pencil mo = row(&t, 150.0, 0.5, "moments", "beam");
        for (int k = 0; k < 3; k++) {
            CHECK_MSG(fabs(mo.core[k] - 1.0) <= CORE_TOL_MOMENTS,
                      "moments, %.0f %% of R: core %+.1f %%", 100.0 * FRAC[k],
                      100.0 * (mo.core[k] - 1.0));
            CHECK_MSG(fabs(mo.rms[k] - 1.0) <= RMS_TOL_MOMENTS,
                      "moments, %.0f %% of R: rms %+.1f %%", 100.0 * FRAC[k],
                      100.0 * (mo.rms[k] - 1.0));
            const double tol = k == 0 ? SHIFT_HALF_MAX : TOL_SHIFT;
            CHECK_MSG(fabs(sh.core[k] - 1.0) <= tol, "shift, %.0f %% of R: core %+.1f %%",
                      100.0 * FRAC[k], 100.0 * (sh.core[k] - 1.0));
            CHECK_MSG(fabs(sh.rms[k] - 1.0) <= tol, "shift, %.0f %% of R: rms %+.1f %%",
                      100.0 * FRAC[k], 100.0 * (sh.rms[k] - 1.0));
        }
        /* The remainder walk at half range: shift wider than moments. */
        CHECK(sh.rms[0] > 1.1 * mo.rms[0] && sh.core[0] > 1.1 * mo.core[0]);
        for (int s = 0; s < 2; s++) {
            const pencil *p = s ? &mo : &sh;
            CHECK(p->boundary <= BOUNDARY_MAX);
            CHECK(p->nth == 27 && fabs(p->hw_deg - 30.0) < 1e-9);
        }
    } else {
        const double energies[] = { 70.0, 150.0 }, grids[] = { 0.5, 1.0 };
        const char *schemes[] = { "shift", "moments" };
        const char *spacings[] = { "uniform", "beam" };
        for (int ie = 0; ie < 2; ie++)
            for (int ig = 0; ig < 2; ig++)
                for (int s = 0; s < 2; s++)
                    for (int sp = 0; sp < 2; sp++)
                        row(&t, energies[ie], grids[ig], schemes[s], spacings[sp]);
    }
    tables_free(&t);
    return check_report(argv[0]);
}
