/* Depth dose of monoenergetic pencil beams against Bortfeld's analytic Bragg
 * curve (tests/reference_models.h) and the non-elastic survival of primaries:
 *  - distal fall-off R80 - R20 within 10 % of Bortfeld's, and within 10 % of
 *    itself when ds and dz are halved (range straggling is physics, not grid);
 *  - peak-to-entrance ratio within 10 % of Bortfeld's with nuclear build-down;
 *  - primaries surviving to 90 % of the range within 1 % (absolute) of the
 *    survival of the ICRU 63 non-elastic and the p-p elastic cross sections
 *    integrated along the path (the transport's removal), and within 2 % of
 *    Bortfeld's linear fluence model, which was fitted to Janni's 1982 tables
 *    (the physics; non-elastic only, so the p-p part is applied to it too);
 *  - R80 within 0.2 mm of the PSTAR projected range;
 *  - no plateau row more than 1 % off its neighbours' mean (plateau.h; the
 *    other grids are test_dose_grid's).
 * The reference curve is averaged over the same 0.5 mm rows as the dose and
 * read with the same interpolation, so both carry the same binning.
 * The lateral grid is coarse (dx = 2 mm): the laterally integrated depth dose
 * does not depend on it once the beam stays inside the domain. */
#include <math.h>

#include "check.h"
#include "plateau.h"
#include "physics/nuclear.h"
#include "physics/pp_elastic.h"
#include "reference_models.h"
#include "report/analysis.h"
#include "sim_fixture.h"

typedef struct dd_figures {
    double r80, r20, peak_to_entrance;
} dd_figures;

static dd_figures figures_of(const grid *g, const double *dd)
{
    int64_t pk = 0;
    for (int64_t z = 1; z < g->nz; z++)
        if (dd[z] > dd[pk])
            pk = z;
    return (dd_figures){ distal_depth_mm(g, dd, 0.8), distal_depth_mm(g, dd, 0.2), dd[pk] / dd[0] };
}

/* Bortfeld's curve averaged over each row of g (R and sigma in cm). Rows far
 * before the peak, which the figures never read, get the entrance row's value. */
static dd_figures bortfeld_rows(const grid *g, double R, double sigma)
{
    double *dd = malloc(g->nz * sizeof *dd);
    const int n = 8; /* Gauss-free midpoint rule within a row of 0.5 mm */
    for (int64_t z = 0; z < g->nz; z++) {
        double z0 = z * g->dz * 0.1, z1 = (z + 1) * g->dz * 0.1;
        if (z > 0 && z1 < R - 12.0 * sigma - 0.5) {
            dd[z] = dd[0];
            continue;
        }
        double s = 0.0;
        for (int k = 0; k < n; k++)
            s += bortfeld_dose(z0 + (k + 0.5) * (z1 - z0) / n, R, sigma);
        dd[z] = s / n;
    }
    dd_figures f = figures_of(g, dd);
    free(dd);
    return f;
}

typedef struct beam_run {
    dd_figures sim, ref;
    double survival90, icru90, bortfeld90, pstar_mm;
    double plateau; /* worst plateau row, per cent (plateau.h) */
    int plateau_row;
} beam_run;

static int run_beam(double E, double step_mm, beam_run *out)
{
    tables t = { 0 };
    smx_error err = { 0 };
    if (tables_load(&t, "data/pstar_water.h5", &err))
        return 1;
    double R_cm = tables_csda_range(&t, E);
    out->pstar_mm = tables_projected_range(&t, E) * 10.0;
    char e[64], b[64], nz[64], st[64], dz[64];
    snprintf(e, sizeof e, "grid.energy.E_max_MeV=%g", E);
    snprintf(b, sizeof b, "beam.energy_MeV=%g", E);
    snprintf(nz, sizeof nz, "grid.space.nz=%d", (int)(R_cm * 10.0 / step_mm) + 40);
    snprintf(st, sizeof st, "transport.step_mm=%g", step_mm);
    snprintf(dz, sizeof dz, "grid.space.dz_mm=%g", step_mm);
    const char *sets[] = { e, b, nz, st, dz, "grid.space.nx=41", "grid.space.dx_mm=2" };
    fixture f;
    if (fixture_run(&f, NULL, sets, 7)) {
        tables_free(&t);
        return 1;
    }
    double *dd = malloc(f.g.nz * sizeof *dd);
    depth_dose(&f.g, f.r.dose_MeV, dd);
    out->sim = figures_of(&f.g, dd);
    out->plateau = plateau_worst_row(dd, f.g.nz, step_mm, out->sim.r80, &out->plateau_row);
    out->ref = bortfeld_rows(&f.g, R_cm, bortfeld_sigma_cm(R_cm));
    /* Primaries after the step that ends at 90 % of the range: the initial
     * weight less every non-elastic removal so far. */
    int n90 = (int)lround(0.9 * R_cm * 10.0 / step_mm) - 1;
    double removed = 0.0;
    for (int s = 0; s <= n90 && s < f.r.n_steps; s++)
        removed += f.r.steps[s].t.weight[CH_NUCLEAR];
    out->survival90 = 1.0 - removed / f.r.initial_weight;
    double z90_cm = (n90 + 1) * step_mm * 0.1;
    /* Removal: ICRU 63's non-elastic cross section and, under the default
     * halo model, p-p elastic scattering on the hydrogen (physics/pp_elastic.h;
     * water: 2 H per 18.015 g). Bortfeld's fluence has the non-elastic part
     * only: ours is compared with it without the p-p part. */
    double mu = 0.0, mu_pp = 0.0;
    const double h_per_g = 2.0 * SMX_AVOGADRO / 18.015;
    for (int k = 0; k < 4000; k++) { /* water: rho = 1, so g/cm2 = cm */
        const double E = tables_energy_at_range(&t, R_cm - (k + 0.5) * z90_cm / 4000);
        mu += nonelastic_water_cm2_g(E) * z90_cm / 4000;
        mu_pp += h_per_g * pp_elastic_mb(E) * SMX_MB_CM2 * z90_cm / 4000;
    }
    out->icru90 = exp(-mu - mu_pp);
    out->bortfeld90 = bortfeld_fluence(z90_cm, R_cm) * exp(-mu_pp);
    CHECK_MSG(f.r.conservation_violations == 0, "%g MeV: %d steps violated conservation", E,
              f.r.conservation_violations);
    free(dd);
    fixture_free(&f);
    tables_free(&t);
    return 0;
}

int main(int argc, char **argv)
{
    (void)argc;
    const double energies[] = { 70.0, 150.0, 230.0 };
    printf("%6s %9s %9s %8s %9s %9s %8s %9s %9s %9s %9s %10s\n", "E_MeV", "R80-PSTAR", "falloff",
           "Bortf", "diff_%", "peak/ent", "Bortf", "diff_%", "surv90", "ICRU63", "Bortf",
           "plateau_%");
    beam_run runs[3];
    int ran = 0;
    for (int i = 0; i < (test_quick() ? 1 : 3); i++, ran++) {
        beam_run r;
        CHECK(run_beam(energies[i], 0.5, &r) == 0);
        runs[i] = r;
        double fo = r.sim.r20 - r.sim.r80, fo_ref = r.ref.r20 - r.ref.r80;
        double dfo = 100.0 * (fo / fo_ref - 1.0);
        double dpe = 100.0 * (r.sim.peak_to_entrance / r.ref.peak_to_entrance - 1.0);
        printf("%6.0f %9.3f %9.3f %8.3f %9.2f %9.3f %8.3f %9.2f %9.4f %9.4f %9.4f %+10.2f\n",
               energies[i], r.sim.r80 - r.pstar_mm, fo, fo_ref, dfo, r.sim.peak_to_entrance,
               r.ref.peak_to_entrance, dpe, r.survival90, r.icru90, r.bortfeld90, r.plateau);
        CHECK_MSG(fabs(r.sim.r80 - r.pstar_mm) <= 0.2, "%g MeV: R80 %.3f mm, PSTAR %.3f mm",
                  energies[i], r.sim.r80, r.pstar_mm);
        /* 11 %: the straggling is 5-8 % above Bortfeld's fit, which leaves out
         * the relativistic factor (docs/physics.md); the halo's fast
         * secondaries, which stop where their primaries would, add 0.6 % at
         * 230 MeV. */
        CHECK_MSG(fabs(dfo) <= 11.0, "%g MeV: R80-R20 %.3f mm, Bortfeld %.3f mm", energies[i], fo,
                  fo_ref);
        CHECK_MSG(fabs(dpe) <= 10.0, "%g MeV: peak/entrance %.3f, Bortfeld %.3f", energies[i],
                  r.sim.peak_to_entrance, r.ref.peak_to_entrance);
        CHECK_MSG(fabs(r.survival90 - r.icru90) <= 0.01,
                  "%g MeV: %.4f survive to 90 %%, ICRU 63 %.4f", energies[i], r.survival90,
                  r.icru90);
        CHECK_MSG(fabs(r.survival90 - r.bortfeld90) <= 0.02,
                  "%g MeV: %.4f survive to 90 %%, Bortfeld %.4f", energies[i], r.survival90,
                  r.bortfeld90);
        CHECK_MSG(fabs(r.plateau) <= PLATEAU_LIMIT_PERCENT,
                  "%g MeV: plateau row at %.2f mm is %+.2f %% off its "
                  "neighbours",
                  energies[i], (r.plateau_row + 0.5) * 0.5, r.plateau);
    }
    /* Halving ds and dz: the fall-off is physical, so it must stay put. The
     * 0.5 mm run is the loop's at that energy. */
    beam_run full = { 0 }, half;
    const double E_ds = test_energy(150.0);
    int have = 0;
    for (int i = 0; i < ran; i++)
        if (energies[i] == E_ds)
            full = runs[i], have = 1;
    if (!have)
        CHECK(run_beam(E_ds, 0.5, &full) == 0);
    CHECK(run_beam(E_ds, 0.25, &half) == 0);
    double fo1 = full.sim.r20 - full.sim.r80, fo2 = half.sim.r20 - half.sim.r80;
    printf(
        "%g MeV: R80-R20 %.3f mm at ds = dz = 0.5 mm, %.3f mm at 0.25 mm (%+.2f %%); R80 moved %.3f mm\n",
        E_ds, fo1, fo2, 100.0 * (fo2 / fo1 - 1.0), half.sim.r80 - full.sim.r80);
    CHECK(fabs(fo2 / fo1 - 1.0) <= 0.10);
    CHECK(fabs(half.sim.r80 - full.sim.r80) <= 0.2);
    return check_report(argv[0]);
}
