/* Range of monoenergetic pencil beams against NIST PSTAR.
 * R80 must equal the PSTAR projected range (CSDA x detour) within 0.5 mm or
 * 0.5 % (the target in docs/physics.md, Measured accuracy), and not move by
 * more than 0.2 mm when ds is halved.
 * With straggling switched off, the default range-uniform energy grid adds no
 * numerical straggling of its own: R80 - R20 must then stay within one 0.5 mm
 * row (the physical fall-off, 2 mm at 150 MeV, is test_depth_dose's).
 * At ds = 1 mm (rows of 0.5 mm) R80 must be within 0.15 mm of PSTAR too. */
#include <math.h>

#include "check.h"
#include "report/analysis.h"
#include "sim_fixture.h"

typedef struct range_result {
    double r80, r20, expected, wall_s;
} range_result;

static int run_beam(double E, const char *step, const char *kind, const char *straggling,
                    range_result *out)
{
    char e[64], b[64], nz[64], st[64], ek[64], sg[64];
    fixture f;
    /* Enough depth for the range plus a margin. */
    double R_mm = 0.0;
    {
        tables t = { 0 };
        smx_error err = { 0 };
        if (tables_load(&t, "data/pstar_water.h5", &err))
            return 1;
        R_mm = tables_csda_range(&t, E) * 10.0;
        out->expected = tables_projected_range(&t, E) * 10.0;
        tables_free(&t);
    }
    snprintf(e, sizeof e, "grid.energy.E_max_MeV=%g", E);
    snprintf(b, sizeof b, "beam.energy_MeV=%g", E);
    snprintf(nz, sizeof nz, "grid.space.nz=%d", (int)(R_mm / 0.5) + 20);
    snprintf(st, sizeof st, "transport.step_mm=%s", step);
    snprintf(ek, sizeof ek, "grid.energy.kind=%s", kind);
    snprintf(sg, sizeof sg, "transport.straggling=%s", straggling);
    /* Coarse lateral cells: the laterally integrated depth dose does not depend
     * on them while the beam stays inside the 42 mm wide domain. */
    const char *sets[] = {
        e, b, nz, st, ek, sg, "grid.space.nx=21", "grid.space.dx_mm=2", "grid.energy.n_bins=300"
    };
    int nsets = strcmp(kind, "uniform") == 0 ? 9 : 8;
    if (fixture_run(&f, NULL, sets, nsets))
        return 1;
    double *dd = malloc(f.g.nz * sizeof *dd);
    depth_dose(&f.g, f.r.dose_MeV, dd);
    out->r80 = distal_depth_mm(&f.g, dd, 0.8);
    out->r20 = distal_depth_mm(&f.g, dd, 0.2);
    out->wall_s = 0.0;
    for (int i = 0; i < f.r.n_phases; i++)
        out->wall_s += f.r.phase_s[i];
    CHECK_MSG(f.r.conservation_violations == 0, "%g MeV: %d steps violated conservation", E,
              f.r.conservation_violations);
    free(dd);
    fixture_free(&f);
    return 0;
}

int main(int argc, char **argv)
{
    (void)argc;
    const double energies[] = { 70.0, 100.0, 150.0 };
    printf("%8s %10s %10s %9s %9s %10s %10s %8s\n", "E_MeV", "R80_mm", "PSTAR_mm", "diff_mm",
           "diff_%", "R80-R20", "", "wall_s");
    for (int i = 0; i < (test_quick() ? 1 : 3); i++) {
        range_result r;
        CHECK(run_beam(energies[i], "0.5", "range", "true", &r) == 0);
        double diff = r.r80 - r.expected;
        /* The requirement: within 0.5 mm or 0.5 %, whichever is larger. */
        double tol = fmax(0.5, 0.005 * r.expected);
        printf("%8.1f %10.3f %10.3f %9.3f %9.3f %10.3f %10s %8.2f\n", energies[i], r.r80,
               r.expected, diff, 100.0 * diff / r.expected, r.r20 - r.r80, "", r.wall_s);
        CHECK_MSG(fabs(diff) <= tol, "%g MeV: R80 %.3f mm vs PSTAR %.3f mm", energies[i], r.r80,
                  r.expected);
    }
    /* No straggling: the range grid's own fall-off, a fraction of a row. */
    range_result ns;
    const double E_ns = test_energy(150.0), E_ds = test_energy(100.0), E_uni = test_energy(150.0);
    CHECK(run_beam(E_ns, "0.5", "range", "false", &ns) == 0);
    double falloff_limit =
        0.5; /* one row: a beam that stops within a row, read between row centres */
    printf("%g MeV without straggling: R80-R20 %.3f mm (limit %.3f mm)\n", E_ns, ns.r20 - ns.r80,
           falloff_limit);
    CHECK_MSG(ns.r20 - ns.r80 < falloff_limit, "R80-R20 %.3f mm without straggling",
              ns.r20 - ns.r80);

    /* ds halved: R80 must not move by more than 0.2 mm. */
    range_result full, half;
    CHECK(run_beam(E_ds, "0.5", "range", "true", &full) == 0);
    CHECK(run_beam(E_ds, "0.25", "range", "true", &half) == 0);
    printf("%g MeV: R80 %.3f mm at ds 0.5, %.3f mm at ds 0.25 (moved %.3f mm)\n", E_ds, full.r80,
           half.r80, half.r80 - full.r80);
    CHECK_ABS(half.r80, full.r80, 0.2); /* issue requirement */

    /* ds = 1 mm: the bin above the lowest lands on the lowest centre through
     * a round trip in the range table, a few ulps below it at this step; it
     * once stopped there a whole step early (R80 0.93 mm short at 70 MeV).
     * Required: within 0.15 mm of PSTAR (the target at every grid). */
    range_result coarse;
    const double E_c = 70.0;
    CHECK(run_beam(E_c, "1.0", "range", "true", &coarse) == 0);
    printf("%g MeV at ds 1 mm: R80 %.3f mm, PSTAR %.3f mm (%+.3f)\n", E_c, coarse.r80,
           coarse.expected, coarse.r80 - coarse.expected);
    CHECK_ABS(coarse.r80, coarse.expected, 0.15);

    /* Uniform-in-energy grid: numerical straggling, reported (not a requirement). */
    range_result uni;
    CHECK(run_beam(E_uni, "0.5", "uniform", "true", &uni) == 0);
    printf("%g MeV, uniform grid of 300 bins: R80 %.3f mm (PSTAR %.3f), R80-R20 %.3f mm\n", E_uni,
           uni.r80, uni.expected, uni.r20 - uni.r80);
    return check_report(argv[0]);
}
