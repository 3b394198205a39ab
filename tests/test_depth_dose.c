/* Depth dose of monoenergetic pencil beams (laterally integrated) against
 * published references held as data in tests/reference/:
 *  - R80 within 0.2 mm of PSTAR's projected range (pstar_water_ranges.txt;
 *    the reason is test_range's);
 *  - the distal fall-off R80 - R20 within 5 % (7 % below 100 MeV, where the
 *    beam's place among the range bins moves it) of Bortfeld's analytic curve
 *    (Med. Phys. 24 (1997) 2024, eq. 29) with the range straggling of his
 *    eq. 17, relativistic factor kept (bortfeld_water.txt, sigma_model 1,
 *    computed by scripts/reference/bortfeld.py), and within 5 % of itself
 *    when ds and dz are halved;
 *  - peak-to-entrance within PE_TOL of Bortfeld's published curve (his
 *    straggling fit, sigma_model 0) with his nuclear build-down;
 *  - the primaries removed before 90 % of the range within 4 % of those
 *    ICRU Report 63's oxygen non-elastic cross sections remove
 *    (icru63_nonelastic_oxygen.txt; hydrogen has no non-elastic channel
 *    here) together with p-p elastic scattering on the hydrogen
 *    (physics/pp_elastic.h, itself checked against Starkov's independent fit
 *    in test_halo), and surviving within 2 % (absolute) of Bortfeld's linear
 *    fluence model, which was fitted to Janni's 1982 tables (non-elastic
 *    only, so the p-p part is applied to it too);
 *  - no plateau row more than 1 % off its neighbours' mean (plateau.h; the
 *    other grids are test_dose_grid's).
 * Which straggling: Bortfeld's fit sigma = 0.012 R^0.935 leaves out the
 * relativistic factor (1 - beta^2/2)/(1 - beta^2) of his own eq. 17 (and of
 * ICRU 49's Bohr variance), which widens sigma by 5-8 % from 150 to 230 MeV;
 * the transport keeps it (docs/physics.md, Straggling), so the fall-off is
 * compared with the curve that keeps it too, and held to 5 %, not to the
 * 10-11 % that the fit's missing factor needed.
 * The reference figures are read off the curve averaged over 0.5 mm rows, as
 * the dose is here. The lateral grid is coarse (dx = 2 mm): the laterally
 * integrated depth dose does not depend on it once the beam stays inside. */
#include <math.h>

#include "check.h"
#include "plateau.h"
#include "physics/nuclear.h"
#include "physics/pp_elastic.h"
#include "reference_data.h"
#include "report/analysis.h"
#include "sim_fixture.h"

/* R80 - PSTAR: test_range's RANGE_TOL_MM and its reason. */
#define RANGE_TOL_MM 0.2
/* Fall-off against eq. 29 with eq. 17's straggling: the same physics, but the
 * range grid's own fall-off (0.39 mm at 150 MeV, test_range) adds to the
 * straggling's in quadrature (+1.5 % of 2.26 mm), the halo's fast
 * secondaries stop where their primaries would (+0.6 % at 230 MeV), and the
 * transport's three-point straggling is Gaussian only in its first two
 * moments: 5 %. A 10 % error of the straggling's sigma fails it. */
#define FALLOFF_TOL 0.05
/* Below 100 MeV the fall-off is a row or two of 0.5 mm (0.7 mm at 70 MeV),
 * and where the beam's energy falls among the range bins moves it: a beam
 * between two centres starts split between them, up to half a bin of range
 * spread it does not have. Measured at 70 MeV: R80 - R20 0.681, 0.726, 0.730,
 * 0.758 and 0.756 mm at 70.0, 69.9, 70.05, 70.1 and 70.2 MeV (-5 % to +6 % of
 * Bortfeld's 0.717); the out-of-plane detour moved 70.0 MeV from near half a
 * bin's split to near none. 7 %: that spread and the 5 % above. */
#define FALLOFF_TOL_LOW_E 0.07
/* Removal to 90 % of the range against ICRU 63: the transport's water fit
 * (Fippel and Soukup) is within 2.2 % of the evaluation above 20 MeV and
 * 3.4 % at 9 MeV, where little of the path lies; the steps' deposit is read
 * at the row that ends at 90 %: 4 %. A 10 % error of the cross section fails. */
#define REMOVAL_TOL 0.04

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

/* tests/reference/bortfeld_water.txt: E R0 sigma model R80 R20 falloff P/E. */
enum { BF_E, BF_R0, BF_SIGMA, BF_MODEL, BF_R80, BF_R20, BF_FALLOFF, BF_PE, BF_NCOLS };

static dd_figures bortfeld_reference(double E, int model)
{
    dd_figures f = { NAN, NAN, NAN };
    ref_table t;
    if (ref_table_load(&t, "bortfeld_water.txt", BF_NCOLS))
        return f;
    for (int i = 0; i < t.nrows; i++)
        if (ref_at(&t, i, BF_E) == E && ref_at(&t, i, BF_MODEL) == model)
            f = (dd_figures){ ref_at(&t, i, BF_R80), ref_at(&t, i, BF_R20), ref_at(&t, i, BF_PE) };
    ref_table_free(&t);
    return f;
}

/* Peak-to-entrance against Bortfeld's published curve (his straggling fit):
 * the curve's own peak moves by 1.4 % (70 MeV) to 3.1 % (230 MeV) when its
 * straggling keeps the relativistic factor (bortfeld_water.txt, the two
 * sigma_models), so the reference is known to about that, and its nuclear
 * build-down (beta, gamma) is a one-parameter fit: 3 %. A 5 % error of the
 * peak fails it at 150 and 230 MeV either way, at 70 MeV downwards. */
#define PE_TOL 0.03

/* Bortfeld's surviving fraction of primaries at depth z (cm) for range R
 * (cm): the fluence falling linearly in residual range, beta = 0.012 /cm
 * (his sec. II.B, a fit to Janni's 1982 tables). */
static double bortfeld_fluence(double z, double R)
{
    return (1.0 + 0.012 * (R - z)) / (1.0 + 0.012 * R);
}

/* Oxygen nuclei per gram of water: ICRU 63's cross sections are per nucleus. */
#define OXYGEN_PER_G (SMX_AVOGADRO * SMX_WATER_OXYGEN_MASS_FRACTION / SMX_OXYGEN_A)

typedef struct beam_run {
    dd_figures sim, ref, ref_fit;
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
    /* Bortfeld's R0 and the fluence model's: PSTAR's CSDA range. */
    double R_cm = pstar_reference_mm(E, PSTAR_CSDA) / 10.0;
    out->pstar_mm = pstar_reference_mm(E, PSTAR_PROJECTED);
    ref_table o16;
    if (isnan(R_cm) || ref_table_load(&o16, "icru63_nonelastic_oxygen.txt", 2)) {
        CHECK_MSG(0, "%g MeV: reference data missing", E);
        tables_free(&t);
        return 1;
    }
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
        ref_table_free(&o16);
        return 1;
    }
    double *dd = malloc(f.g.nz * sizeof *dd);
    depth_dose(&f.g, f.r.dose_MeV, dd);
    out->sim = figures_of(&f.g, dd);
    out->plateau = plateau_worst_row(dd, f.g.nz, step_mm, out->sim.r80, &out->plateau_row);
    out->ref = bortfeld_reference(E, 1);
    out->ref_fit = bortfeld_reference(E, 0);
    /* Primaries after the step that ends at 90 % of the range: the initial
     * weight less every non-elastic removal so far. */
    int n90 = (int)lround(0.9 * R_cm * 10.0 / step_mm) - 1;
    double removed = 0.0;
    for (int s = 0; s <= n90 && s < f.r.n_steps; s++)
        removed += f.r.steps[s].t.weight[CH_NUCLEAR];
    out->survival90 = 1.0 - removed / f.r.initial_weight;
    double z90_cm = (n90 + 1) * step_mm * 0.1;
    /* Removal: ICRU 63's oxygen non-elastic cross section (linear between its
     * energies, 0 below the first) and, under the default halo model, p-p
     * elastic scattering on the hydrogen (physics/pp_elastic.h; water: 2 H per
     * 18.015 g), along the path's energies from the simulator's range table.
     * Bortfeld's fluence has the non-elastic part only: ours is compared with
     * it without the p-p part. */
    double mu = 0.0, mu_pp = 0.0;
    const double h_per_g = 2.0 * SMX_AVOGADRO / 18.015;
    for (int k = 0; k < 4000; k++) { /* water: rho = 1, so g/cm2 = cm */
        const double E = tables_energy_at_range(&t, R_cm - (k + 0.5) * z90_cm / 4000);
        const double s_o = E < ref_at(&o16, 0, 0)                ? 0.0
                           : E >= ref_at(&o16, o16.nrows - 1, 0) ? ref_at(&o16, o16.nrows - 1, 1)
                                                                 : ref_interp(&o16, 0, 1, E, 0);
        mu += OXYGEN_PER_G * s_o * SMX_MB_CM2 * z90_cm / 4000;
        mu_pp += h_per_g * pp_elastic_mb(E) * SMX_MB_CM2 * z90_cm / 4000;
    }
    out->icru90 = exp(-mu - mu_pp);
    out->bortfeld90 = bortfeld_fluence(z90_cm, R_cm) * exp(-mu_pp);
    CHECK_MSG(f.r.conservation_violations == 0, "%g MeV: %d steps violated conservation", E,
              f.r.conservation_violations);
    free(dd);
    fixture_free(&f);
    tables_free(&t);
    ref_table_free(&o16);
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
        double dpe = 100.0 * (r.sim.peak_to_entrance / r.ref_fit.peak_to_entrance - 1.0);
        printf("%6.0f %9.3f %9.3f %8.3f %9.2f %9.3f %8.3f %9.2f %9.4f %9.4f %9.4f %+10.2f\n",
               energies[i], r.sim.r80 - r.pstar_mm, fo, fo_ref, dfo, r.sim.peak_to_entrance,
               r.ref_fit.peak_to_entrance, dpe, r.survival90, r.icru90, r.bortfeld90, r.plateau);
        CHECK_MSG(fabs(r.sim.r80 - r.pstar_mm) <= RANGE_TOL_MM,
                  "%g MeV: R80 %.3f mm, PSTAR %.3f mm", energies[i], r.sim.r80, r.pstar_mm);
        const double tol_fo = energies[i] < 100.0 ? FALLOFF_TOL_LOW_E : FALLOFF_TOL;
        CHECK_MSG(fabs(dfo) <= 100.0 * tol_fo, "%g MeV: R80-R20 %.3f mm, Bortfeld %.3f mm",
                  energies[i], fo, fo_ref);
        CHECK_MSG(fabs(dpe) <= 100.0 * PE_TOL, "%g MeV: peak/entrance %.3f, Bortfeld %.3f",
                  energies[i], r.sim.peak_to_entrance, r.ref_fit.peak_to_entrance);
        CHECK_MSG(fabs((1.0 - r.survival90) / (1.0 - r.icru90) - 1.0) <= REMOVAL_TOL,
                  "%g MeV: %.4f removed before 90 %%, ICRU 63 %.4f", energies[i],
                  1.0 - r.survival90, 1.0 - r.icru90);
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
    /* 5 %: the straggling is physics, so the fall-off may change only by the
     * range grid's own share (one row, 0.39 mm in quadrature at 150 MeV: 1.5 %)
     * and the rows' reading; 0.2 mm of R80: test_range's reason for ds halved. */
    CHECK(fabs(fo2 / fo1 - 1.0) <= FALLOFF_TOL);
    CHECK(fabs(half.sim.r80 - full.sim.r80) <= 0.2);
    return check_report(argv[0]);
}
