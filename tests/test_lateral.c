/* Lateral spread of zero-width pencil beams on the default grid (dx = dz = ds
 * = 0.5 mm, 41 directions over +-20 deg, shift scheme) against Fermi-Eyges
 * theory, two ways:
 *  (a) physics: with Highland's theta_0 of the slab traversed so far
 *      (tests/reference_models.h, from Gottschalk et al., NIM B 74 (1993)
 *      467), a formula the code does not use;
 *  (b) the model: with the scattering power the code uses (differential
 *      Highland, or Fermi-Rossi from the table).
 * Required, at 50, 80 and 95 % of the range, 70, 150 and 230 MeV:
 *  - the model: Fermi-Eyges with the code's differential Highland within
 *    3.5 % of (a) (the fit's own deviation, 3.3 % at most, at 70 MeV and
 *    half range);
 *  - the simulation: sim^2 <= ((1 + 3.5 %) FE)^2 + NUM_VAR_CELLS2 dx^2 and
 *    sim >= (1 - 3.5 %) FE, FE of (a). The 3.5 % is (b)'s deviation from
 *    (a); NUM_VAR_CELLS2 is the shift scheme's known numerical widening
 *    (docs/physics.md, Known defects: mass that changes direction bin takes
 *    the sub-cell remainder of its new direction, a position error of up to
 *    half a cell, a quarter cell^2 of variance at most per change), allowed
 *    as a variance in cells^2, not as a percentage of the width: at 230 MeV
 *    (FE 4.4 to 13 cells) it is 1.5 % of the width at most and a 10 % error
 *    of the width fails; at 150 MeV from 80 % of the range on (4.6 cells and
 *    more) likewise. Where the width is below two cells (70 MeV, FE 0.5 to
 *    1.6 cells; 150 MeV at half range, 2.1 cells) the grid does not resolve
 *    it and the walk dominates: the same bound holds there, but a 10 %
 *    error of the width may pass (70 MeV's widths are resolved, under the
 *    moments scheme, in test_grid_convergence);
 *  - at 230 MeV a numerical share sqrt(sim^2 - FE_own^2) below 25 % of FE at
 *    half range (the NUM_VAR_CELLS2 bound there is 26 %).
 * Fermi-Rossi is reported against (a) too: it is the wider model (required:
 * 10 % wider at 80 % of the range).
 * Scattering off: a tilted beam keeps zero width under the shift scheme and
 * spreads under bilinear (the streaming's own diffusion). */
#include <math.h>

#include "check.h"
#include "physics/material.h"
#include "physics/scattering_power.h"
#include "reference_models.h"
#include "report/analysis.h"
#include "sim_fixture.h"

/* Fermi-Eyges with the code's own scattering power: sigma_x^2(z) =
 * int_0^z (z-u)^2 T(E(u)) du. */
static double fe_own(const tables *t, double E0, double z_mm, double rho, int highland)
{
    double R0 = tables_csda_range(t, E0);
    const material_props *m = material_props_find(t->material);
    const int n = 20000;
    double du = z_mm / n, s2 = 0.0;
    for (int i = 0; i < n; i++) {
        double u = (i + 0.5) * du;
        double E = tables_energy_at_range(t, R0 - u * 0.1 * rho);
        double T = highland ? scattering_power_dhighland(E, E0, m->XS_g_cm2)
                            : tables_scattering_power(t, E);
        s2 += (z_mm - u) * (z_mm - u) * T * rho * 0.1 * du;
    }
    return sqrt(s2);
}

static const double depths[3] = { 0.5, 0.8, 0.95 };

typedef struct widths {
    double sim[3], fe_highland[3], fe_own[3];
} widths;

/* Direction bin 11 of 41 over 70..110 deg: a tilted beam exactly on a bin centre. */
#define TILTED_DEG "81.21951219512195"

static int run(double E, const char *model, const char *scheme, const char *scattering, int nx_min,
               widths *w)
{
    tables t = { 0 };
    smx_error err = { 0 };
    if (tables_load(&t, "data/pstar_water.h5", &err))
        return 1;
    double R = tables_projected_range(&t, E) * 10.0, Rc = tables_csda_range(&t, E) * 10.0;
    /* The lateral domain holds +-5 sigma of the width at 95 % of the range. */
    double s95 = highland_fermi_eyges_mm(&t, E, 0.95 * R, 1.0, SMX_X0_WATER_G_CM2);
    int nx = 2 * (int)ceil(5.0 * s95 / 0.5) + 1;
    nx = nx < nx_min ? nx_min : nx;
    tables_free(&t);
    char e[64], b[64], nz[64], nxs[64], mo[64], sch[64], sc[64], dir[64];
    snprintf(e, sizeof e, "grid.energy.E_max_MeV=%g", E);
    snprintf(b, sizeof b, "beam.energy_MeV=%g", E);
    snprintf(nz, sizeof nz, "grid.space.nz=%d", (int)(Rc / 0.5) + 20);
    snprintf(nxs, sizeof nxs, "grid.space.nx=%d", nx);
    snprintf(mo, sizeof mo, "transport.scattering_power=%s", model);
    snprintf(sch, sizeof sch, "transport.streaming_scheme=%s", scheme);
    snprintf(sc, sizeof sc, "transport.scattering=%s", scattering);
    /* Without scattering a beam along the axis never moves sideways in either
     * scheme; a tilted one shows the streaming's own diffusion. It starts at
     * x = -12 mm (a cell centre) and moves to the other side. */
    const int tilted = strcmp(scattering, "true") != 0;
    snprintf(dir, sizeof dir, "beam.direction_deg=%s", tilted ? TILTED_DEG : "90");
    /* The rms of the multiple-scattering core, before the nuclear halo's
     * broad tail (tests/test_halo.c): the local nuclear model. */
    const char *sets[] = {
        e, b, nz, nxs, mo, sch, sc, dir, "transport.nuclear=local", "beam.x_mm=-12"
    };
    fixture f;
    if (fixture_run(&f, NULL, sets, tilted ? 10 : 9))
        return 1;
    for (int k = 0; k < 3; k++) {
        double z = depths[k] * R;
        w->sim[k] = lateral_rms_at(&f.g, f.r.dose_MeV, z);
        w->fe_highland[k] =
            highland_fermi_eyges_mm(&f.t, E, z, f.p.density_g_cm3, SMX_X0_WATER_G_CM2);
        w->fe_own[k] = fe_own(&f.t, E, z, f.p.density_g_cm3, strcmp(model, "highland") == 0);
    }
    CHECK(f.r.conservation_violations == 0);
    fixture_free(&f);
    return 0;
}

static double pct(double a, double b)
{
    return 100.0 * (a / b - 1.0);
}

/* (b) against (a): differential Highland reproduces Highland's theta_0 of
 * the slab traversed within 3.3 % (docs/physics.md). */
#define MODEL_TOL 0.035
/* The shift scheme's numerical variance, in cells^2: five direction changes'
 * worth at a quarter cell^2 each (a particle at 70 MeV stays about 20 steps
 * in a bin over the 80 steps to 95 % of its range; docs/physics.md). */
#define NUM_VAR_CELLS2 1.25
#define DX_MM 0.5

/* The cases, each a CTest test of its own (tests/physics.cmake): `test_lateral
 * CASE...` runs those, `test_lateral` all. */
int main(int argc, char **argv)
{
    test_cases(argc, argv);
    const double energies[] = { 70.0, 150.0, 230.0 };
    static const char *const cases[] = { "highland_70", "highland_150", "highland_230",
                                         "fermi_rossi" };
    for (int i = 0; i < 4; i++) {
        /* Highland at each energy, then Fermi-Rossi at 150 MeV. */
        if (!test_case(cases[i]) || (test_quick() && (i == 1 || i == 2)))
            continue;
        printf("%6s %11s %26s %26s %26s %9s\n", "E_MeV", "model", "50 %: sim FE(H) err%",
               "80 %: sim FE(H) err%", "95 %: sim FE(H) err%", "num50/FE");
        const double E = i < 3 ? energies[i] : test_energy(150.0);
        const char *model = i < 3 ? "highland" : "fermi_rossi";
        widths w;
        CHECK(run(E, model, "shift", "true", 41, &w) == 0);
        double share =
            sqrt(fmax(0.0, w.sim[0] * w.sim[0] - w.fe_own[0] * w.fe_own[0])) / w.fe_own[0];
        printf("%6.0f %11s", E, model);
        for (int k = 0; k < 3; k++)
            printf(" %8.4f %8.4f %8.2f", w.sim[k], w.fe_highland[k],
                   pct(w.sim[k], w.fe_highland[k]));
        printf(" %9.3f\n", share);
        printf("%6s %11s", "", "(own FE)");
        for (int k = 0; k < 3; k++)
            printf(" %8s %8.4f %8.2f", "", w.fe_own[k], pct(w.sim[k], w.fe_own[k]));
        printf("\n");
        if (i == 3) {
            CHECK(w.sim[1] > 1.1 * w.fe_highland[1]); /* Fermi-Rossi over-scatters */
            continue;
        }
        for (int k = 0; k < 3; k++) {
            CHECK_MSG(
                fabs(pct(w.fe_own[k], w.fe_highland[k])) <= 3.5,
                "%g MeV: differential Highland's FE %.4f mm at %.0f %% of range, Highland's %.4f mm",
                E, w.fe_own[k], 100 * depths[k], w.fe_highland[k]);
            const double fe = w.fe_highland[k];
            const double hi = sqrt(pow((1.0 + MODEL_TOL) * fe, 2) + NUM_VAR_CELLS2 * DX_MM * DX_MM);
            CHECK_MSG(w.sim[k] <= hi && w.sim[k] >= (1.0 - MODEL_TOL) * fe,
                      "%g MeV: width at %.0f %% of range %.4f mm, Highland FE %.4f mm (%.1f "
                      "cells): outside %.4f .. %.4f mm",
                      E, 100 * depths[k], w.sim[k], fe, fe / DX_MM, (1.0 - MODEL_TOL) * fe, hi);
        }
        if (i == 2)
            CHECK_MSG(share <= 0.25, "%g MeV: numerical share %.3f of FE at 50 %%", E, share);
    }
    /* Scattering off, 150 MeV, the beam tilted: from x = -12 mm it moves 20 mm
     * sideways by 80 % of the range (to +8 mm, 12 mm from the grid's side,
     * four times the bilinear width there) and 24.7 mm by its end, so the
     * domain is wider: +-20 mm (the bilinear run, whose window is the whole
     * grid, takes two thirds of the time it took on +-30 mm centred on the
     * beam's start). */
    if (test_case("scattering_off")) {
        widths off_s, off_b;
        CHECK(run(test_energy(150.0), "highland", "shift", "false", 81, &off_s) == 0);
        CHECK(run(test_energy(150.0), "highland", "bilinear", "false", 81, &off_b) == 0);
        printf("scattering off, beam tilted 8.8 deg: width at 80 %% %.4f mm (shift), %.4f mm "
               "(bilinear)\n",
               off_s.sim[1], off_b.sim[1]);
        /* Whole-cell moves keep a direction in one cell per step; a row can hold two
         * steps' deposits in neighbouring cells where z does not advance, so allow
         * a trace far below one cell. */
        CHECK(off_s.sim[1] < 0.01 * 0.5);
        CHECK(off_b.sim[1] > 0.05); /* area weighting must show its known diffusion */
    }
    return check_report(argv[0]);
}
