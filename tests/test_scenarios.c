/* Robust scenarios (scenarios.*, docs/planning.md), each built from the
 * loaded set-up as the program builds it (run/scenario.h) and run on the CPU
 * backend:
 *  - a (0, 0) scenario is the nominal, bit for bit (dose and per-spot rows);
 *  - a shift of exactly one cell (dx) in uniform water moves the dose by one
 *    column;
 *  - a range error +r scales R80 by 1 + r/100 (the CSDA range in g/cm2 is
 *    fixed, the densities are divided by 1 + r/100);
 *  - every density of the problem is divided: the background, a shape's
 *    given density and a library material's nominal one;
 *  - each scenario's per-spot rows, weighted by the spots' protons, give that
 *    scenario's total. */
#include <math.h>
#include <stdlib.h>

#include "check.h"
#include "report/analysis.h"
#include "run/scenario.h"
#include "sim_fixture.h"

/* Scenario k's plan, grid and cells: the set-up's own for k = 0. */
typedef struct scen_run {
    run_setup s;
    run_scenario sc;
    run_result r;
    const plan *p;
    const grid *g;
    const medium_map *media;
} scen_run;

static int build_scenario(const char *const *sets, int n, int k, scen_run *out, smx_error *err)
{
    smx_quiet = 1;
    setenv("SMX2D_DATA_DIR", "data", 1);
    memset(&out->sc, 0, sizeof out->sc);
    const run_setup_options o = {
        .plan_text = FIXTURE_BASE_PLAN, .sets = sets, .n_sets = n, .media = 1
    };
    int rc = run_setup_init(&out->s, &o, err);
    if (!rc && k > 0)
        rc = run_scenario_build(&out->sc, &out->s, k, err);
    out->p = k > 0 ? &out->sc.p : &out->s.p;
    out->g = k > 0 ? &out->sc.g : &out->s.g;
    out->media = k > 0 ? &out->sc.media : &out->s.media;
    return rc;
}

/* Scenario k of the fixture's plan with sets, run whole (total and spots). */
static int run_case(const char *const *sets, int n, int k, scen_run *out)
{
    run_result_init(&out->r);
    smx_error err = { 0 };
    int rc = build_scenario(sets, n, k, out, &err);
    const sim_media sm = { out->media, out->s.mtab.mt, out->s.mtab.water };
    if (!rc)
        rc = simulate_part(&(sim_input){ out->p, out->g, &out->s.t, &sm }, &backend_cpu, NULL, NULL,
                           &out->r, &err);
    CHECK_MSG(rc == 0, "scenario %d: %s", k, err.msg);
    if (!rc)
        CHECK_MSG(out->r.conservation_violations == 0, "scenario %d: %d steps broke conservation",
                  k, out->r.conservation_violations);
    return rc;
}

static void scen_free(scen_run *x)
{
    run_result_free(&x->r);
    run_scenario_free(&x->sc);
    run_setup_free(&x->s);
}

static double r80_of(const scen_run *x)
{
    dose_figures f;
    if (dose_figures_of(x->g, x->r.dose_MeV, x->media, &f))
        return NAN;
    return f.r80_mm;
}

/* A (0, 0) pair is the nominal plan: the same bytes, total and rows. */
static void check_zero_is_nominal(void)
{
    const char *sets[] = { "scenarios.range_error_percent=[0, 3]", "scenarios.shift_mm=[0, 1]",
                           "scenarios.combine=pairs", "output.per_spot_dose=true",
                           "beam.sigma_x_mm=1" };
    scen_run a, b;
    if (run_case(sets, 5, 0, &a) || run_case(sets, 5, 1, &b))
        return;
    CHECK(memcmp(a.r.dose_MeV, b.r.dose_MeV, a.g->slice * sizeof *a.r.dose_MeV) == 0);
    const spot_dose *x = &a.r.per_spot, *y = &b.r.per_spot;
    CHECK(x->n_spots == 1 && y->n_spots == 1 && x->nnz == y->nnz && x->nnz > 0);
    if (x->nnz == y->nnz) {
        CHECK(memcmp(x->values, y->values, x->nnz * sizeof *x->values) == 0);
        CHECK(memcmp(x->indices, y->indices, x->nnz * sizeof *x->indices) == 0);
    }
    scen_free(&a);
    scen_free(&b);
}

/* +dx moves the beam one column: dose[z][x + 1] of the scenario is the
 * nominal's dose[z][x], in columns more than 5 from an edge (one of the two
 * doses has a column the other has lost). With the local nuclear deposit the
 * columns' arithmetic is the same, so 1e-12 of the maximum (measured 5e-24)
 * allows only double rounding in the dose's sums. The halo model gathers the
 * released energy on 2 mm blocks fixed to the grid (transport/halo_dose.c):
 * a one-cell shift moves the beam within its block, which changes the halo's
 * sampling, measured 1.8e-4 of the maximum (the halo carries p-p elastic
 * scattering's energy too); 3e-4 bounds it, and a wrong shift (none, or the
 * other way) leaves columns differing by 1e-1. */
static void check_shift_one_cell(void)
{
    const struct {
        const char *nuclear;
        double tol;
    } models[] = { { "transport.nuclear=local", 1e-12 }, { "transport.nuclear=halo", 3e-4 } };
    for (int m = 0; m < 2; m++) {
        const char *sets[] = { "scenarios.shift_mm=[0.5]", "beam.sigma_x_mm=2", models[m].nuclear };
        scen_run a, b;
        if (run_case(sets, 3, 0, &a) || run_case(sets, 3, 1, &b))
            return;
        const grid *g = a.g;
        CHECK(b.p->beam_x_mm == 0.5 && g->dx == 0.5);
        double mx = 0.0, diff = 0.0, moved = 0.0;
        for (int64_t z = 0; z < g->nz; z++)
            for (int64_t x = 5; x + 1 < g->nx - 5; x++) {
                const double d0 = a.r.dose_MeV[z * g->nx + x], d1 = b.r.dose_MeV[z * g->nx + x + 1];
                mx = fmax(mx, d0);
                diff = fmax(diff, fabs(d1 - d0));
                moved = fmax(moved, fabs(b.r.dose_MeV[z * g->nx + x] - d0)); /* unshifted */
            }
        printf("shift of one cell (%s): max |dose[x+1] - nominal[x]| %.2e of the maximum "
               "(unshifted columns differ by %.2e)\n",
               models[m].nuclear, diff / mx, moved / mx);
        CHECK_MSG(diff <= models[m].tol * mx, "%s: shifted dose differs from the nominal by %.2e",
                  models[m].nuclear, diff / mx);
        CHECK_MSG(moved > 1e-2 * mx, "the shift did not move the dose (%.2e)", moved / mx);
        scen_free(&a);
        scen_free(&b);
    }
}

/* R80 scales by 1 + r/100. Each scenario finds its R80 by interpolating
 * between 0.5 mm rows a fall-off its steps sample at another phase, and its
 * range energy grid is cut at another residual range: 0.15 mm (under a third
 * of a row) bounds that, where a wrong scaling (1 + r/100 squared, or none)
 * would be off by 0.1 to 2.7 mm at 77 mm and 3.5 %. */
static void check_range_scaling(void)
{
    const char *sets[] = { "scenarios.range_error_percent=[-3.5, 3.5, -10]" };
    scen_run nominal;
    if (run_case(sets, 1, 0, &nominal))
        return;
    const double r0 = r80_of(&nominal);
    const double r[] = { -3.5, 3.5, -10 };
    for (int k = 1; k <= 3; k++) {
        scen_run x;
        if (run_case(sets, 1, k, &x))
            continue;
        const double r80 = r80_of(&x), want = r0 * (1.0 + r[k - 1] / 100.0);
        printf("range error %+g %%: R80 %.3f mm, nominal %.3f x %.3f = %.3f mm (%+.3f mm)\n",
               r[k - 1], r80, r0, 1.0 + r[k - 1] / 100.0, want, r80 - want);
        CHECK_MSG(fabs(r80 - want) <= 0.15, "range error %+g %%: R80 %.3f mm, expected %.3f mm",
                  r[k - 1], r80, want);
        /* The densities went down by the same factor: the grid's and the medium's. */
        CHECK(x.g->density == 1.0 / (1.0 + r[k - 1] / 100.0));
        CHECK(x.media->media[0].density_g_cm3 == x.g->density);
        scen_free(&x);
    }
    scen_free(&nominal);
}

/* Every density: a shape's given one and a library material's nominal one. */
static void check_every_density(void)
{
    const char *sets[] = {
        "scenarios.range_error_percent=[25]",
        "geometry.shapes=[{material: bone_compact, z_mm: [10, 20]}, "
        "{material: water, z_mm: [30, 40], density_g_cm3: 1.2}]",
    };
    for (int k = 0; k < 2; k++) {
        scen_run s;
        smx_error err = { 0 };
        int rc = build_scenario(sets, 2, k, &s, &err);
        CHECK_MSG(rc == 0, "%s", err.msg);
        if (!rc) {
            const medium_map *m = s.media;
            const double div = k ? 1.25 : 1.0;
            int bone = 0, dense_water = 0;
            for (int i = 0; i < m->n_media; i++) {
                const char *name = m->materials[m->media[i].material].name;
                const double rho = m->media[i].density_g_cm3;
                if (!strcmp(name, "bone_compact")) {
                    bone = 1;
                    CHECK_MSG(fabs(rho - 1.85 / div) < 1e-12, "bone at %g g/cm3", rho);
                } else if (i > 0) {
                    dense_water = 1;
                    CHECK_MSG(fabs(rho - 1.2 / div) < 1e-12, "water shape at %g g/cm3", rho);
                }
            }
            CHECK(bone && dense_water && m->media[0].density_g_cm3 == 1.0 / div);
        }
        run_scenario_free(&s.sc);
        run_setup_free(&s.s);
    }
}

/* output.per_spot_dose: each scenario's rows, weighted by the spots'
 * protons, give that scenario's total, within test_field's bound (1e-5 of the
 * maximum for float psi summed in another order, plus what the threshold
 * drops). */
static void check_rows_sum_to_total(void)
{
    const char *sets[] = { "scenarios.range_error_percent=[4]", "scenarios.shift_mm=[-2]",
                           "output.per_spot_dose=true", "beam.sigma_x_mm=1" };
    for (int k = 0; k < 3; k++) {
        scen_run x;
        if (run_case(sets, 4, k, &x))
            continue;
        const spot_dose *sd = &x.r.per_spot;
        const grid *g = x.g;
        double *sum = calloc((size_t)g->slice, sizeof *sum);
        double peak = 0.0, mx = 0.0, diff = 0.0;
        for (int64_t j = sd->indptr[0]; j < sd->indptr[1]; j++) {
            sum[sd->indices[j]] += sd->values[j]; /* one spot: all the protons */
            peak = fmax(peak, sd->values[j]);
        }
        for (int64_t c = 0; c < g->slice; c++) {
            mx = fmax(mx, x.r.dose_MeV[c]);
            diff = fmax(diff, fabs(sum[c] - x.r.dose_MeV[c]));
        }
        const double bound = 1e-5 * mx + sd->threshold * peak;
        printf("scenario %d: rows vs total max |diff| %.2e of the maximum (bound %.2e)\n", k,
               diff / mx, bound / mx);
        CHECK_MSG(sd->n_spots == 1 && diff <= bound, "scenario %d: rows differ by %.2e", k,
                  diff / mx);
        free(sum);
        scen_free(&x);
    }
}

/* The cases, each a CTest test of its own or a few together
 * (tests/physics.cmake): `test_scenarios CASE...` runs those, `test_scenarios` all. */
int main(int argc, char **argv)
{
    test_cases(argc, argv);
    if (test_case("zero_is_nominal"))
        check_zero_is_nominal();
    if (test_case("shift_one_cell"))
        check_shift_one_cell();
    if (test_case("range_scaling"))
        check_range_scaling();
    if (test_case("every_density"))
        check_every_density();
    if (test_case("rows_sum"))
        check_rows_sum_to_total();
    return check_report(argv[0]);
}
