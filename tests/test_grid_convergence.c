/* The transport against physical references at three grids: zero-width
 * pencil beams in water at dx = dz = ds = 1.0, 0.5 and 0.25 mm under the
 * moments scheme (transport.streaming_scheme: moments, numerics/moments.h),
 * default angular grid (41 directions over +-20 deg).
 * Required, at every grid:
 *  - R80 within 0.15 mm of PSTAR's published projected range
 *    (tests/reference/pstar_water_ranges.txt; docs/physics.md: the target of
 *    grid independence; the laterally integrated dose);
 *  - the lateral rms at 50, 80 and 95 % of the range within 5 % of
 *    Fermi-Eyges with Highland's theta_0 (reference_models.h, a formula the
 *    code does not use), both sides taken over the same cells: the reference
 *    is the rms of the cell-integrated Gaussian of that width. Where the width
 *    is below half a cell the grid does not resolve it and it is reported only.
 * On 0.5 mm rows, where tests/reference/bortfeld_water.txt reads Bortfeld's
 * curve: R80 - R20 within 5 % (0.05 mm at least; 12 % at 70 MeV, see
 * FALLOFF_TOL_70_05) and peak/entrance within 3 % of his eq. 29 with eq. 17's
 * straggling (the reasons are test_depth_dose's; here the nuclear model is
 * `local`, Bortfeld's own: 0.6 of the non-elastic energy deposited where the
 * primary is removed). On 0.25 mm rows, against the same curve read on them
 * (tests/reference/bortfeld_water_rows025.txt): R80 - R20 within 5 %, where
 * the grid resolves 70 MeV's fall-off.
 * `test_grid_convergence report` (CTest `grid_convergence_report`, label
 * `report`, outside the regression suite) also prints what is not required
 * yet (docs/physics.md, "Known defects": a finer angular grid for the first,
 * a source that starts at its exact energy for the 70 MeV peak on 1 mm
 * rows): the Gaussian core's width (a fit of cell-integrated Gaussians within
 * +-2.5 sigma), and R80 - R20 and peak/entrance on the other grids.
 * The shift scheme is run beside it at 0.5 mm and its 70 MeV rms must be
 * wider than the moments scheme's there: the grid dependence it had. */
#include <math.h>
#include <stdlib.h>

#include "check.h"
#include "reference_data.h"
#include "reference_models.h"
#include "report/analysis.h"
#include "sim_fixture.h"

#define X0_WATER 36.08 /* g/cm2, Highland's radiation length of water (PDG) */

typedef struct pencil {
    double r80, r20, pe, rms[3], core[3];
} pencil;

static const double FRAC[3] = { 0.5, 0.8, 0.95 };

/* `report`: the figures not required (above) are fitted and printed too. */
static int report_mode = 0;

/* Fall-off against Bortfeld (test_depth_dose's FALLOFF_TOL and its reason). */
#define FALLOFF_TOL 0.05
/* 70 MeV on 0.5 mm rows: the fall-off (0.72 mm) spans 1.4 rows, and where the
 * beam's energy falls among the range bins moves it (a beam on a centre keeps
 * only the straggling's spread, one between two starts split between them),
 * as does where R80 falls among the rows (Bortfeld's own curve reads 0.698 to
 * 0.741 mm as R0 moves within a row). Measured over 69.9-70.2 MeV: 0.645 to
 * 0.736 mm, -10 % to +3 %: 12 %. The same beams on 0.25 mm rows read 0.635
 * to 0.660 mm against Bortfeld's 0.651 there, checked to FALLOFF_TOL: the
 * physics converges, and a 10 % error of the straggling fails there. */
#define FALLOFF_TOL_70_05 0.12

/* Bortfeld's fall-off and peak/entrance with eq. 17's straggling on the rows
 * of `file` (tests/reference/, sigma_model 1); 0 if found. */
static int bortfeld_reference(const char *file, double E, double *falloff, double *pe)
{
    ref_table t;
    if (ref_table_load(&t, file, 8))
        return 1;
    int found = 0;
    for (int i = 0; i < t.nrows; i++)
        if (ref_at(&t, i, 0) == E && ref_at(&t, i, 3) == 1.0) {
            *falloff = ref_at(&t, i, 6);
            *pe = ref_at(&t, i, 7);
            found = 1;
        }
    ref_table_free(&t);
    return found ? 0 : 1;
}

/* Share of a Gaussian of width s in the cell of centre x and width d. */
static double cell_share(double x, double d, double s)
{
    return 0.5 * (erf((x + 0.5 * d) / (M_SQRT2 * s)) - erf((x - 0.5 * d) / (M_SQRT2 * s)));
}

/* rms about 0 of profile p (cell centres x0 + i d). */
static double profile_rms(const double *p, int n, double d)
{
    double s0 = 0.0, s2 = 0.0;
    for (int i = 0; i < n; i++) {
        const double x = (i - n / 2) * d;
        s0 += p[i];
        s2 += p[i] * x * x;
    }
    return sqrt(s2 / s0);
}

/* The width whose cell-integrated Gaussian fits p best within +-2.5 of it
 * (least squares, amplitude solved for each width, golden section). */
static double core_fit(const double *p, int n, double d, double guess)
{
    double lo = 0.2 * guess, hi = 2.0 * guess;
    const double gr = 0.5 * (sqrt(5.0) - 1.0);
    double a = hi - gr * (hi - lo), b = lo + gr * (hi - lo), fa = 0.0, fb = 0.0;
    for (int it = 0; it < 80; it++) {
        double s[2] = { a, b }, r[2];
        for (int k = 0; k < 2; k++) {
            double sg = 0.0, gg = 0.0, pp = 0.0;
            const double lim = fmax(2.5 * s[k], 1.5 * d);
            for (int i = 0; i < n; i++) {
                const double x = (i - n / 2) * d;
                if (fabs(x) > lim)
                    continue;
                const double gv = cell_share(x, d, s[k]);
                sg += p[i] * gv;
                gg += gv * gv;
                pp += p[i] * p[i];
            }
            r[k] = (pp - sg * sg / gg) / pp; /* relative residual */
        }
        fa = r[0];
        fb = r[1];
        if (fa < fb)
            hi = b;
        else
            lo = a;
        a = hi - gr * (hi - lo);
        b = lo + gr * (hi - lo);
    }
    return 0.5 * (a + b);
}

static int run_pencil(double E, double d, const char *scheme, const double *fe, pencil *out)
{
    pencil_sets ps;
    pencil_sets_fill(&ps, E, d, scheme, fe[2]);
    /* The widths are the transport's against Fermi-Eyges, before the nuclear
     * halo (a broad tail the rms would take in): its local model. */
    const char *sets[9];
    for (int i = 0; i < 8; i++)
        sets[i] = ps.set[i];
    sets[8] = "transport.nuclear=local";
    fixture f;
    if (fixture_run(&f, NULL, sets, 9))
        return 1;
    const grid *g = &f.g;
    double *dd = malloc(g->nz * sizeof *dd), *prof = malloc(g->nx * sizeof *prof);
    depth_dose(g, f.r.dose_MeV, dd);
    out->r80 = distal_depth_mm(g, dd, 0.8);
    out->r20 = distal_depth_mm(g, dd, 0.2);
    double peak = 0.0;
    for (int64_t z = 0; z < g->nz; z++)
        peak = dd[z] > peak ? dd[z] : peak;
    out->pe = peak / dd[0];
    for (int k = 0; k < 3; k++) {
        /* The profile at depth FRAC R80, between the rows about it. */
        const double pos = FRAC[k] * out->r80 / g->dz - 0.5;
        const int z = (int)floor(pos);
        const double t = pos - z;
        for (int64_t x = 0; x < g->nx; x++)
            prof[x] =
                (1.0 - t) * f.r.dose_MeV[z * g->nx + x] + t * f.r.dose_MeV[(z + 1) * g->nx + x];
        out->rms[k] = profile_rms(prof, (int)g->nx, d);
        out->core[k] = report_mode ? core_fit(prof, (int)g->nx, d, fe[k]) : NAN;
    }
    CHECK_MSG(f.r.conservation_violations == 0, "%g MeV at %g mm: %d steps violated conservation",
              E, d, f.r.conservation_violations);
    free(dd);
    free(prof);
    fixture_free(&f);
    return 0;
}

/* The rms of the cell-integrated Gaussian of width s on cells of width d. */
static double cell_rms(double s, double d)
{
    double s0 = 0.0, s2 = 0.0;
    for (int i = -(int)(8.0 * s / d) - 2; i <= (int)(8.0 * s / d) + 2; i++) {
        const double w = cell_share(i * d, d, s);
        s0 += w;
        s2 += w * i * d * i * d;
    }
    return sqrt(s2 / s0);
}

int main(int argc, char **argv)
{
    report_mode = argc > 1 && strcmp(argv[1], "report") == 0;
    tables t = { 0 };
    smx_error err = { 0 };
    CHECK(tables_load(&t, "data/pstar_water.h5", &err) == 0);
    const double energies[] = { 70.0, 150.0 };
    const double grids[] = { 1.0, 0.5, 0.25 };
    printf("%5s %5s %8s %8s %6s %6s %6s  %s\n", "E", "d", "R80", "-PSTAR", "fall", "P/E", "",
           "rms / FE (cells), core / FE at 50 80 95 % of R");
    for (int ie = 0; ie < (test_quick() ? 1 : 2); ie++) {
        const double E = energies[ie], R = pstar_reference_mm(E, PSTAR_PROJECTED);
        double fe[3];
        for (int k = 0; k < 3; k++)
            fe[k] = highland_fermi_eyges_mm(&t, E, FRAC[k] * R, 1.0, X0_WATER);
        for (int ig = 0; ig < 3; ig++) {
            const double d = grids[ig];
            /* 150 MeV on 0.25 mm cells holds about 30 GB of state on the CPU
             * (six components, two buffers): run where SMX_TEST_FINE is set. */
            if (E > 100.0 && d < 0.5 && (test_quick() || !getenv("SMX_TEST_FINE")))
                continue;
            pencil p;
            CHECK(run_pencil(E, d, "moments", fe, &p) == 0);
            const int rows_05 = d == 0.5; /* the reference curve's rows */
            printf("%5.0f %5.2f %8.3f %+8.3f", E, d, p.r80, p.r80 - R);
            if (rows_05 || d == 0.25 || report_mode)
                printf(" %6.3f %6.3f %6s ", p.r20 - p.r80, p.pe, "");
            else
                printf(" %6s %6s %6s ", "", "", "");
            for (int k = 0; k < 3; k++) {
                printf(" %.3f/%.3f %+5.1f%%", p.rms[k], cell_rms(fe[k], d),
                       100.0 * (p.rms[k] / cell_rms(fe[k], d) - 1.0));
                if (report_mode)
                    printf(" core %+5.1f%%", 100.0 * (p.core[k] / fe[k] - 1.0));
            }
            printf("\n");
            if (rows_05) {
                double fo_ref = NAN, pe_ref = NAN;
                CHECK_MSG(bortfeld_reference("bortfeld_water.txt", E, &fo_ref, &pe_ref) == 0,
                          "%g MeV: no Bortfeld reference", E);
                printf("%5s %5s Bortfeld (eq. 29, eq. 17 straggling): fall-off %.3f mm (%+.1f %%), "
                       "peak/entrance %.3f (%+.1f %%)\n",
                       "", "", fo_ref, 100.0 * ((p.r20 - p.r80) / fo_ref - 1.0), pe_ref,
                       100.0 * (p.pe / pe_ref - 1.0));
                /* The fall-off to 0.05 mm at least: R80 and R20 are each read
                 * between row centres, where a tenth of a row is the
                 * reading's resolution. */
                const double tol = E < 100.0 ? FALLOFF_TOL_70_05 : FALLOFF_TOL;
                CHECK_MSG(fabs((p.r20 - p.r80) - fo_ref) <= fmax(tol * fo_ref, 0.05),
                          "%g MeV at %g mm: R80-R20 %.3f mm, Bortfeld %.3f mm", E, d, p.r20 - p.r80,
                          fo_ref);
                CHECK_MSG(fabs(p.pe / pe_ref - 1.0) <= 0.03,
                          "%g MeV at %g mm: peak/entrance %.3f, Bortfeld %.3f", E, d, p.pe, pe_ref);
            }
            if (d == 0.25) {
                double fo_ref = NAN, pe_ref = NAN;
                CHECK_MSG(bortfeld_reference("bortfeld_water_rows025.txt", E, &fo_ref, &pe_ref) ==
                              0,
                          "%g MeV: no Bortfeld reference on 0.25 mm rows", E);
                printf("%5s %5s Bortfeld on 0.25 mm rows: fall-off %.3f mm (%+.1f %%)\n", "", "",
                       fo_ref, 100.0 * ((p.r20 - p.r80) / fo_ref - 1.0));
                CHECK_MSG(fabs((p.r20 - p.r80) / fo_ref - 1.0) <= FALLOFF_TOL,
                          "%g MeV at %g mm: R80-R20 %.3f mm, Bortfeld %.3f mm", E, d, p.r20 - p.r80,
                          fo_ref);
            }
            /* The issue's target: R80 within 0.15 mm of PSTAR at every grid. */
            CHECK_MSG(fabs(p.r80 - R) <= 0.15, "%g MeV at %g mm: R80 %.3f vs PSTAR %.3f", E, d,
                      p.r80, R);
            for (int k = 0; k < 3; k++)
                if (fe[k] >= 0.5 * d) /* resolved by the grid */
                    CHECK_MSG(fabs(p.rms[k] / cell_rms(fe[k], d) - 1.0) <= 0.05,
                              "%g MeV at %g mm, %.0f %% of R: rms %.3f vs Fermi-Eyges %.3f", E, d,
                              100.0 * FRAC[k], p.rms[k], cell_rms(fe[k], d));
        }
    }
    /* The shift scheme's remainder walk: the 70 MeV pencil at 0.5 mm is wider. */
    {
        const double E = 70.0, R = pstar_reference_mm(E, PSTAR_PROJECTED);
        double fe[3];
        for (int k = 0; k < 3; k++)
            fe[k] = highland_fermi_eyges_mm(&t, E, FRAC[k] * R, 1.0, X0_WATER);
        pencil s, m;
        CHECK(run_pencil(E, 0.5, "shift", fe, &s) == 0);
        CHECK(run_pencil(E, 0.5, "moments", fe, &m) == 0);
        printf("70 MeV, 0.5 mm, rms at half range: shift %.3f, moments %.3f, Fermi-Eyges %.3f\n",
               s.rms[0], m.rms[0], cell_rms(fe[0], 0.5));
        CHECK(s.rms[0] > 1.2 * m.rms[0]);
    }
    tables_free(&t);
    return check_report(argv[0]);
}
