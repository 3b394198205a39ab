/* The direction bins a plan gets when it leaves grid.angle.n_bins and
 * half_width_deg out (src/physics/angle_grid.h):
 *  - a 100 MeV pencil stopping in water gets 41 odd bins over +-20 deg
 *    (the window's size was calibrated there: ANGLE_EDGE_SIGMAS), and its run
 *    loses at most 1e-4 of the protons past the window's edges, the bound
 *    docs/model.md asks a user to check;
 *  - a beam that leaves the grid early gets fewer bins and a narrower window,
 *    which still holds what it loses to 1e-4;
 *  - a tilted beam's window is centred on its direction (a bin centre);
 *  - a key the plan gives is kept; without scattering, 41 over +-20 deg. */
#include <math.h>

#include "check.h"
#include "sim_fixture.h"

/* The fixture's plan with grid.angle left out. */
static const char *const AUTO_PLAN = "grid:\n"
                                     "  energy: {kind: range, E_min_MeV: 1.0, E_cutoff_MeV: 1.0}\n"
                                     "  space: {nx: 81, nz: 170, dx_mm: 0.5, dz_mm: 0.5}\n"
                                     "material: {table_file: pstar_water.h5}\n"
                                     "beam: {energy_MeV: 100.0}\n"
                                     "transport: {step_mm: 0.5, steps: auto}\n"
                                     "output: {file: unused.h5, snapshot_final: false}\n";

static double lost_past_edges(const fixture *f)
{
    return f->r.cumulative.weight[CH_THETA_BOUNDARY] / f->r.initial_weight;
}

static void stopping_beam(void)
{
    fixture f;
    CHECK(fixture_run(&f, AUTO_PLAN, NULL, 0) == 0);
    printf("100 MeV in water: %d bins over +-%.2f deg, %.2e of the protons past the edges\n",
           f.p.angle_bins, f.p.angle_half_width_deg, lost_past_edges(&f));
    CHECK(f.p.angle_bins % 2 == 1);
    CHECK(f.p.angle_bins == 41);
    CHECK_ABS(f.p.angle_half_width_deg, 20.0, 0.5);
    CHECK(lost_past_edges(&f) <= 1e-4);
    fixture_free(&f);
}

/* 230 MeV through 50 mm of water: theta_0 about 0.5 deg where it leaves. */
static void leaving_beam(void)
{
    const char *sets[] = { "beam.energy_MeV=230", "grid.space.nz=100" };
    fixture f;
    CHECK(fixture_run(&f, AUTO_PLAN, sets, 2) == 0);
    printf("230 MeV through 50 mm: %d bins over +-%.2f deg, %.2e of the protons past the edges\n",
           f.p.angle_bins, f.p.angle_half_width_deg, lost_past_edges(&f));
    CHECK(f.p.angle_bins < 41 && f.p.angle_half_width_deg < 5.0);
    CHECK(lost_past_edges(&f) <= 1e-4);
    fixture_free(&f);
}

static void tilted_and_given(void)
{
    const char *tilt[] = { "beam.direction_deg=100", "grid.space.nz=40" };
    fixture f;
    CHECK(fixture_load(&f, AUTO_PLAN, tilt, 2) == 0);
    printf("a beam at 100 deg: +-%.2f deg about %g\n", f.p.angle_half_width_deg,
           f.p.angle_centre_deg);
    CHECK(f.p.angle_centre_deg == 100.0); /* its direction on the middle bin's centre */
    CHECK(f.p.angle_half_width_deg > 2.0 && f.p.angle_half_width_deg < 20.0);
    fixture_free(&f);

    const char *given[] = { "grid.angle.n_bins=61" };
    CHECK(fixture_load(&f, AUTO_PLAN, given, 1) == 0);
    CHECK(f.p.angle_bins == 61);
    CHECK_ABS(f.p.angle_half_width_deg, 20.0, 0.5); /* the window still from the beam */
    fixture_free(&f);

    const char *off[] = { "transport.scattering=false" };
    CHECK(fixture_load(&f, AUTO_PLAN, off, 1) == 0);
    CHECK(f.p.angle_bins == 41 && f.p.angle_half_width_deg == 20.0);
    fixture_free(&f);
}

int main(int argc, char **argv)
{
    (void)argc;
    stopping_beam();
    leaving_beam();
    tilted_and_given();
    return check_report(argv[0]);
}
