/* Lateral spread of a zero-width 150 MeV pencil beam (dx = 0.5 mm) against
 * Fermi-Eyges theory computed here from the same scattering power and the PSTAR
 * range-energy relation: sigma_x^2(z) = int_0^z (z-u)^2 T(E(u)) du.
 * Required: within 10 % at 80 % and 15 % at 50 % of the range, for the default
 * (shift) and the bilinear streaming schemes; with scattering off the width is
 * numerical only and is reported. */
#include <math.h>

#include "check.h"
#include "report/analysis.h"
#include "sim_fixture.h"

static double fermi_eyges_sigma(const tables *t, double E0, double z_mm, double rho)
{
    double R0 = tables_csda_range(t, E0); /* g/cm2 */
    const int n = 20000;
    double du = z_mm / n, s2 = 0.0;
    for (int i = 0; i < n; i++) {
        double u = (i + 0.5) * du;
        double E = tables_energy_at_range(t, R0 - u * 0.1 * rho);
        double T = tables_scattering_power(t, E) * rho * 0.1; /* rad2 per mm */
        s2 += (z_mm - u) * (z_mm - u) * T * du;
    }
    return sqrt(s2);
}

typedef struct widths {
    double at50, at80, range;
} widths;

/* Direction bin 11 of 41 over 70..110 deg: a tilted beam exactly on a bin centre. */
#define TILTED_DEG "81.21951219512195"

static int run(const char *scheme, const char *scattering, widths *w, double *fe50, double *fe80)
{
    char sch[64], sc[64], dir[64];
    snprintf(sch, sizeof sch, "transport.streaming_scheme=%s", scheme);
    snprintf(sc, sizeof sc, "transport.scattering=%s", scattering);
    /* Without scattering a beam along the axis never moves sideways in either
     * scheme; a tilted one shows the streaming's own diffusion. */
    snprintf(dir, sizeof dir, "beam.direction_deg=%s",
             strcmp(scattering, "true") == 0 ? "90" : TILTED_DEG);
    const char *sets[] = {"grid.energy.E_max_MeV=150", "beam.energy_MeV=150", "grid.space.nz=340",
                          "grid.space.nx=101", sch, sc, dir};
    fixture f;
    if (fixture_run(&f, NULL, sets, 7))
        return 1;
    double R = tables_projected_range(&f.t, 150.0) * 10.0;
    w->range = R;
    w->at50 = lateral_rms_at(&f.g, f.r.dose_MeV, 0.5 * R);
    w->at80 = lateral_rms_at(&f.g, f.r.dose_MeV, 0.8 * R);
    *fe50 = fermi_eyges_sigma(&f.t, 150.0, 0.5 * R, f.p.density_g_cm3);
    *fe80 = fermi_eyges_sigma(&f.t, 150.0, 0.8 * R, f.p.density_g_cm3);
    CHECK(f.r.conservation_violations == 0);
    fixture_free(&f);
    return 0;
}

int main(int argc, char **argv)
{
    (void)argc;
    const char *schemes[] = {"shift", "bilinear"};
    double shift50 = 0.0;
    printf("%10s %10s %10s %10s %10s %10s %10s\n", "scheme", "FE50_mm", "sim50_mm", "err50_%",
           "FE80_mm", "sim80_mm", "err80_%");
    for (int s = 0; s < 2; s++) {
        widths w, off;
        double fe50, fe80;
        CHECK(run(schemes[s], "true", &w, &fe50, &fe80) == 0);
        double e50 = 100.0 * (w.at50 / fe50 - 1.0), e80 = 100.0 * (w.at80 / fe80 - 1.0);
        printf("%10s %10.4f %10.4f %10.2f %10.4f %10.4f %10.2f\n", schemes[s], fe50, w.at50, e50,
               fe80, w.at80, e80);
        /* Issue requirement for dx = 0.5 mm at 150 MeV, on the default scheme; the
         * bilinear variant is reported, and must be the wider of the two. */
        if (s == 0) {
            CHECK_MSG(fabs(e50) <= 15.0, "%s: width at 50 %% of range off by %.2f %%", schemes[s], e50);
            CHECK_MSG(fabs(e80) <= 10.0, "%s: width at 80 %% of range off by %.2f %%", schemes[s], e80);
            shift50 = w.at50;
        } else {
            CHECK(w.at50 > shift50);
        }
        printf("%10s numerical share sqrt(sim^2 - FE^2): %.4f mm at 50 %%, %.4f mm at 80 %%\n",
               schemes[s], sqrt(fmax(0.0, w.at50 * w.at50 - fe50 * fe50)),
               sqrt(fmax(0.0, w.at80 * w.at80 - fe80 * fe80)));
        double fe50_off, fe80_off;
        CHECK(run(schemes[s], "false", &off, &fe50_off, &fe80_off) == 0);
        printf("%10s scattering off, beam tilted 8.8 deg: width %.4f mm at 50 %%, %.4f mm at 80 %%\n",
               schemes[s], off.at50, off.at80);
        /* Whole-cell moves keep a direction in one cell per step; a row can hold two
         * steps' deposits in neighbouring cells where z does not advance, so allow
         * a trace far below one cell. */
        if (s == 0)
            CHECK(off.at80 < 0.01 * 0.5);
        else /* area weighting must show its known diffusion, or this test measures nothing */
            CHECK(off.at80 > 0.05);
    }
    return check_report(argv[0]);
}
