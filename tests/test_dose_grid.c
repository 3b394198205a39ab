/* The depth dose carries no artifact of the grid (docs/physics.md, "Where the
 * deposit lands"):
 *  - in the plateau (from the entrance to 90 % of the range) no row deviates
 *    more than 1 % from the mean of its two neighbours. Before the deposit
 *    followed each direction's path, a direction bin that skipped a whole-cell
 *    move deposited two steps in one row: +6 % at 100 MeV, +13 % at 200 MeV;
 *  - a step longer or shorter than the rows (ds = 2 dz, ds = dz / 2) gives a
 *    smooth dose too, and R80 within 0.2 mm of the ds = dz run.
 * The lateral grid is coarse (21 cells of 2 mm): the laterally integrated depth
 * dose does not depend on it once the beam stays inside the domain. */
#include <math.h>

#include "check.h"
#include "plateau.h"
#include "report/analysis.h"
#include "sim_fixture.h"

typedef struct dd_run {
    double r80, r20, worst; /* worst: the plateau row deviation, per cent */
    int worst_row;
    double dz;
} dd_run;

static int run(double E, double step_mm, double dz_mm, dd_run *out)
{
    char e[64], b[64], nz[64], st[64], dz[64];
    /* Depth: the CSDA range of water rounded up, plus 2 cm. */
    double R_mm = 10.0 * 0.0022 * pow(E, 1.77) + 20.0;
    snprintf(e, sizeof e, "grid.energy.E_max_MeV=%g", E);
    snprintf(b, sizeof b, "beam.energy_MeV=%g", E);
    snprintf(nz, sizeof nz, "grid.space.nz=%d", (int)(R_mm / dz_mm));
    snprintf(st, sizeof st, "transport.step_mm=%g", step_mm);
    snprintf(dz, sizeof dz, "grid.space.dz_mm=%g", dz_mm);
    const char *sets[] = { e, b, nz, st, dz, "grid.space.nx=21", "grid.space.dx_mm=2" };
    fixture f;
    if (fixture_run(&f, NULL, sets, 7))
        return 1;
    double *dd = malloc(f.g.nz * sizeof *dd);
    depth_dose(&f.g, f.r.dose_MeV, dd);
    out->r80 = distal_depth_mm(&f.g, dd, 0.8);
    out->r20 = distal_depth_mm(&f.g, dd, 0.2);
    out->dz = dz_mm;
    out->worst = plateau_worst_row(dd, f.g.nz, dz_mm, out->r80, &out->worst_row);
    CHECK_MSG(f.r.conservation_violations == 0, "%g MeV: %d steps violated conservation", E,
              f.r.conservation_violations);
    free(dd);
    fixture_free(&f);
    return 0;
}

static void report(const char *what, double E, double ds, const dd_run *r)
{
    printf(
        "%-10s %5.0f MeV ds %.2f dz %.2f: R80 %8.3f mm, R80-R20 %.3f mm, worst plateau row %+6.2f %% at z = "
        "%.2f mm\n",
        what, E, ds, r->dz, r->r80, r->r20 - r->r80, r->worst, (r->worst_row + 0.5) * r->dz);
    CHECK_MSG(fabs(r->worst) <= PLATEAU_LIMIT_PERCENT,
              "%g MeV ds %g dz %g: row at %.2f mm is %+.2f %% off its neighbours", E, ds, r->dz,
              (r->worst_row + 0.5) * r->dz, r->worst);
}

/* The cases, each a CTest test of its own (tests/physics.cmake):
 * `test_dose_grid CASE...` runs those, `test_dose_grid` all. */
int main(int argc, char **argv)
{
    test_cases(argc, argv);
    dd_run base, longer, shorter, high;
    /* Quick mode (check.h) keeps these 100 MeV runs and leaves out 200 MeV. */
    const double E = 100.0;
    if (test_case("steps_100")) {
        CHECK(run(E, 0.5, 0.5, &base) == 0);
        report("ds = dz", E, 0.5, &base);
        CHECK(run(E, 0.5, 0.25, &longer) == 0);
        report("ds = 2 dz", E, 0.5, &longer);
        CHECK(run(E, 0.25, 0.5, &shorter) == 0);
        report("ds = dz/2", E, 0.25, &shorter);
        /* The R80s of different steps agree within 0.2 mm (the PSTAR target). */
        CHECK_MSG(fabs(longer.r80 - base.r80) <= 0.2, "ds = 2 dz moves R80 by %.3f mm",
                  longer.r80 - base.r80);
        CHECK_MSG(fabs(shorter.r80 - base.r80) <= 0.2, "ds = dz/2 moves R80 by %.3f mm",
                  shorter.r80 - base.r80);
    }
    if (test_case("rows_200") && !test_quick()) {
        CHECK(run(200.0, 0.5, 0.5, &high) == 0);
        report("ds = dz", 200.0, 0.5, &high);
    }
    return check_report(argv[0]);
}
