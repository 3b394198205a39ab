/* Treatment fields (beam.spots_file):
 *  - the transport is linear: a field's dose is the sum of its spots' doses,
 *    each run alone and weighted by its share of the field's weight (the dose
 *    is per unit initial weight) (within 1e-5 of the maximum: psi is float, and the sum of
 *    two runs rounds differently from one run of the summed state, ~1e-7 per
 *    step over ~150 steps). The scattering power is Fermi-Rossi here because
 *    the differential Highland's reference energy is the field's highest
 *    energy, which a spot run alone does not know;
 *  - output.per_spot_dose: each stored row is the spot's own run (check_per_spot);
 *  - the shipped SOBP example (config/sobp.yaml, weights from
 *    scripts/sobp_weights.py) is flat within +-2 % from 80 to 110 mm in the
 *    laterally integrated depth dose, as its comment says. */
#include <math.h>
#include <stdlib.h>

#include "check.h"
#include "report/analysis.h"
#include "sim_fixture.h"

static const char *const SPOTS[] = { "100, -4, 1.0, 0", "80, 3, 0.7, 0", "90, 0, 0.4, 1.5" };
static const double WEIGHT[] = { 1.0, 0.7, 0.4 };
#define NSPOTS 3

/* Runs the fixture's plan with the given spot lines and n_extra more --set
 * values; dose into *dose (owned). */
static int run_spots_with(const char *const *lines, int n, const char *const *extra, int n_extra,
                          double **dose, fixture *keep)
{
    char path[] = "/tmp/smx-spots-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return 1;
    FILE *f = fdopen(fd, "w");
    fprintf(f, "# spots of test_field\nenergy_MeV, x_mm, weight, sigma_x_mm\n");
    for (int i = 0; i < n; i++)
        fprintf(f, "%s\n", lines[i]);
    fclose(f);
    char spots[96];
    snprintf(spots, sizeof spots, "beam.spots_file=%s", path);
    /* Fermi-Rossi and no out-of-plane detour: physics that does not depend on
     * the plan's reference energy (its highest spot's), so that a spot alone
     * and the same spot in the field are the same problem. */
    const char *sets[9] = { spots, "transport.scattering_power=fermi_rossi", "grid.space.nx=41",
                            "grid.space.dx_mm=1", "transport.out_of_plane_detour=false" };
    for (int i = 0; i < n_extra && i < 4; i++)
        sets[5 + i] = extra[i];
    fixture fx;
    int rc = fixture_run(&fx, NULL, sets, 5 + (n_extra < 4 ? n_extra : 4));
    unlink(path);
    if (rc)
        return rc;
    *dose = malloc(fx.g.slice * sizeof **dose);
    memcpy(*dose, fx.r.dose_MeV, fx.g.slice * sizeof **dose);
    CHECK_MSG(fx.r.conservation_violations == 0, "%d spots: %d steps violated conservation", n,
              fx.r.conservation_violations);
    if (keep)
        *keep = fx;
    else
        fixture_free(&fx);
    return 0;
}

static int run_spots(const char *const *lines, int n, double **dose, fixture *keep)
{
    return run_spots_with(lines, n, NULL, 0, dose, keep);
}

/* output.per_spot_dose: each row is the spot's own run, bit for bit (the
 * backend's state is cleared between spots, a spot's run steps until no
 * weight is left, as a plan of that spot alone with auto_stop_weight 0, and
 * gives the same floats alone or beside others in the slots of one state),
 * the stored and dropped values add up to the row, and the rows weighted by
 * the spots' protons give the field (the linearity bound above). Run with
 * threshold 0 (every value stored), with the default, and with threshold 0
 * and all three spots at once, on moving windows and (early exit off) on
 * windows of every row and column. A spot's own run is the one with the
 * early exit's threshold tied to the rows' cut (per_spot.c): the run's
 * threshold at cut 0, 1e-7 x 1e-4 (times the cell, 2 here) at the defaults, which changes values
 * (the check can tell them apart). */
static void check_per_spot(void)
{
    /* Each spot alone, with the early exit (passes 0-2) and without (pass 3):
     * both backends drop the values below its threshold. */
    double *one_exit[NSPOTS] = { 0 }, *one_off[NSPOTS] = { 0 }, *one_tied[NSPOTS] = { 0 };
    const char *to_zero[] = { "transport.auto_stop_weight=0", "backend.early_exit=off" };
    /* This fixture's cells: dx 1 mm, dz and the step 0.5 mm, twice the
     * reference cell of the tie (plan_access.h): 2 x 1e-7 x 1e-4. */
    const char *tied[] = { "transport.auto_stop_weight=0", "backend.early_exit_threshold=2e-11" };
    int64_t tie_moves = 0;
    for (int k = 0; k < NSPOTS; k++) {
        CHECK(run_spots_with(&SPOTS[k], 1, to_zero, 1, &one_exit[k], NULL) == 0);
        CHECK(run_spots_with(&SPOTS[k], 1, to_zero, 2, &one_off[k], NULL) == 0);
        fixture ft;
        CHECK(run_spots_with(&SPOTS[k], 1, tied, 2, &one_tied[k], &ft) == 0);
        for (int64_t c = 0; one_exit[k] && one_tied[k] && c < ft.g.slice; c++)
            tie_moves += (float)one_exit[k][c] != (float)one_tied[k][c];
        fixture_free(&ft);
    }
    printf("per-spot early exit tied to the rows' cut: %lld cells of the spots' own runs move\n",
           (long long)tie_moves);
    CHECK_MSG(tie_moves > 0, "the tied threshold changes no value: the check cannot fail");
    /* A sanitized build (test_quick) leaves out the windows of every row. */
    for (int pass = 0; pass < (test_quick() ? 3 : 4); pass++) {
        fixture f;
        double *all = NULL;
        double *const *one = pass == 3 ? one_off : pass == 1 ? one_tied : one_exit;
        const char *sets[] = { "output.per_spot_dose=true",
                               pass >= 2 ? "backend.per_spot_lanes=3" : "backend.per_spot_lanes=1",
                               "output.per_spot_threshold=0", "backend.early_exit=off" };
        CHECK(run_spots_with(SPOTS, NSPOTS, sets,
                             pass == 1   ? 2
                             : pass == 3 ? 4
                                         : 3,
                             &all, &f) == 0);
        CHECK_MSG(f.r.spot_slots == (pass >= 2 ? 3 : 1), "pass %d: %d spots at once", pass,
                  f.r.spot_slots);
        CHECK_MSG(pass != 3 || (f.r.spot_window_nz == f.g.nz && f.r.spot_window_nx == f.g.nx),
                  "early exit off: windows of %d x %d", f.r.spot_window_nz, f.r.spot_window_nx);
        const spot_dose *sd = &f.r.per_spot;
        CHECK_MSG(sd->n_spots == NSPOTS && sd->indptr && sd->indptr[NSPOTS] == sd->nnz,
                  "%d rows, nnz %lld", sd->n_spots, (long long)sd->nnz);
        if (sd->n_spots != NSPOTS) {
            fixture_free(&f);
            free(all);
            continue;
        }
        double mx = 0.0, diff = 0.0, dropped_bound = 0.0;
        int64_t mismatched = 0;
        double *row = calloc(f.g.slice, sizeof *row);
        double *sum = calloc(f.g.slice, sizeof *sum);
        for (int k = 0; k < NSPOTS; k++) {
            double kept = 0.0, full = 0.0, top = 0.0;
            for (int64_t c = 0; c < f.g.slice; c++)
                row[c] = 0.0, full += one[k][c], top = fmax(top, one[k][c]);
            for (int64_t j = sd->indptr[k]; j < sd->indptr[k + 1]; j++) {
                row[sd->indices[j]] = sd->values[j];
                kept += sd->values[j];
                /* Bit for bit, but for the nuclear halo of a window narrower than
                 * the grid: the weight it leaves out (below the window's fraction,
                 * window.h) released energy the spot's own run spreads over every
                 * cell through the kernel: 1e-6 of the row's largest value. */
                const double own = one[k][sd->indices[j]];
                mismatched += f.r.spot_window_nx < f.g.nx ? fabs(sd->values[j] - own) > 1e-6 * top
                                                          : sd->values[j] != (float)own;
            }
            /* float values summed against the double row: 1e-6 is float's rounding. */
            CHECK_MSG(fabs(kept + sd->dropped[k] - full) <= 1e-6 * full,
                      "spot %d: stored %.9e + dropped %.3e != %.9e", k, kept, sd->dropped[k], full);
            CHECK_MSG(sd->weight[k] > 0.0, "spot %d: weight %g", k, sd->weight[k]);
            const double share = WEIGHT[k] / (WEIGHT[0] + WEIGHT[1] + WEIGHT[2]);
            double peak = 0.0;
            for (int64_t c = 0; c < f.g.slice; c++) {
                sum[c] += share * row[c];
                peak = fmax(peak, one[k][c]);
            }
            dropped_bound += share * sd->threshold * peak;
        }
        for (int64_t c = 0; c < f.g.slice; c++) {
            mx = fmax(mx, all[c]);
            diff = fmax(diff, fabs(all[c] - sum[c]));
        }
        printf(
            "per-spot dose (threshold %g, %d at once, windows %d x %d): %lld values stored, %lld "
            "differ from the spot's own run; weighted rows vs field: max |diff| %.2e of the "
            "maximum\n",
            sd->threshold, f.r.spot_slots, f.r.spot_window_nz, f.r.spot_window_nx,
            (long long)sd->nnz, (long long)mismatched, diff / mx);
        CHECK_MSG(mismatched == 0, "%lld per-spot values differ from the spot's own run",
                  (long long)mismatched);
        /* The linearity bound, plus what each spot may drop in one cell
         * (below threshold times its peak, weighted by its share). */
        CHECK_MSG(diff <= 1e-5 * mx + dropped_bound,
                  "weighted rows differ from the field by %.2e (bound %.2e)", diff / mx,
                  (1e-5 * mx + dropped_bound) / mx);
        free(row);
        free(sum);
        free(all);
        fixture_free(&f);
    }
    for (int k = 0; k < NSPOTS; k++) {
        free(one_exit[k]);
        free(one_off[k]);
        free(one_tied[k]);
    }
}

static void check_linear(void)
{
    fixture field;
    double *all = NULL, *one[NSPOTS] = { 0 };
    CHECK(run_spots(SPOTS, NSPOTS, &all, &field) == 0);
    CHECK(field.p.n_spots == NSPOTS && plan_reference_energy_MeV(&field.p) == 100.0);
    for (int k = 0; k < NSPOTS; k++)
        CHECK(run_spots(&SPOTS[k], 1, &one[k], NULL) == 0);
    double mx = 0.0, diff = 0.0, sum_all = 0.0, sum_one = 0.0;
    for (int64_t c = 0; c < field.g.slice; c++) {
        double s = 0.0;
        for (int k = 0; k < NSPOTS; k++)
            s += WEIGHT[k] / (WEIGHT[0] + WEIGHT[1] + WEIGHT[2]) * one[k][c];
        mx = fmax(mx, all[c]);
        diff = fmax(diff, fabs(all[c] - s));
        sum_all += all[c];
        sum_one += s;
    }
    printf(
        "field of %d spots against the sum of the spots run alone: max |diff| %.2e of the maximum, total "
        "%.9e vs %.9e\n",
        NSPOTS, diff / mx, sum_all, sum_one);
    CHECK_MSG(diff <= 1e-5 * mx,
              "field dose differs from the sum of its spots by %.2e of the maximum", diff / mx);
    /* The spots are where the file puts them: the left one's lateral mean is
     * left of the right one's (the sum would also be symmetric if they were
     * misplaced). */
    double m0 = 0, w0 = 0, m1 = 0, w1 = 0;
    for (int64_t z = 0; z < field.g.nz; z++)
        for (int64_t x = 0; x < field.g.nx; x++) {
            m0 += one[0][z * field.g.nx + x] * field.g.x.centres[x],
                w0 += one[0][z * field.g.nx + x];
            m1 += one[1][z * field.g.nx + x] * field.g.x.centres[x],
                w1 += one[1][z * field.g.nx + x];
        }
    CHECK_MSG(fabs(m0 / w0 + 4.0) < 0.1 && fabs(m1 / w1 - 3.0) < 0.1, "spot means %.3f and %.3f mm",
              m0 / w0, m1 / w1);
    free(all);
    for (int k = 0; k < NSPOTS; k++)
        free(one[k]);
    fixture_free(&field);
}

static void check_sobp(void)
{
    run_setup s;
    run_result r;
    smx_error err = { 0 };
    run_result_init(&r);
    smx_quiet = 1;
    CHECK_MSG(run_setup_init(&s, &(run_setup_options){ .plan_path = "config/sobp.yaml" }, &err) ==
                  0,
              "%s", err.msg);
    CHECK(simulate(&(sim_input){ &s.p, &s.g, &s.t, NULL }, &backend_cpu, NULL, &r, &err) == 0);
    const grid *g = &s.g;
    double *dd = malloc(g->nz * sizeof *dd), mean = 0.0, lo = 1e300, hi = 0.0;
    depth_dose(g, r.dose_MeV, dd);
    int n = 0;
    for (int64_t z = 0; z < g->nz; z++)
        if (g->z.centres[z] >= 80.0 && g->z.centres[z] <= 110.0)
            mean += dd[z], n++;
    mean /= n;
    for (int64_t z = 0; z < g->nz; z++)
        if (g->z.centres[z] >= 80.0 && g->z.centres[z] <= 110.0)
            lo = fmin(lo, dd[z] / mean), hi = fmax(hi, dd[z] / mean);
    printf(
        "config/sobp.yaml (%d spots): depth dose from 80 to 110 mm within %+.2f / %+.2f %% of its mean\n",
        s.p.n_spots, 100 * (lo - 1), 100 * (hi - 1));
    CHECK_MSG(n > 50 && lo >= 0.98 && hi <= 1.02, "SOBP plateau %+.2f / %+.2f %%", 100 * (lo - 1),
              100 * (hi - 1));
    free(dd);
    run_result_free(&r);
    run_setup_free(&s);
}

/* The cases, each a CTest test of its own (tests/physics.cmake): `test_field
 * CASE...` runs those, `test_field` all. */
int main(int argc, char **argv)
{
    test_cases(argc, argv);
    if (test_case("linear"))
        check_linear();
    if (test_case("per_spot"))
        check_per_spot();
    if (test_case("sobp"))
        check_sobp();
    return check_report(argv[0]);
}
