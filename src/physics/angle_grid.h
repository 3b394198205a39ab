/* The direction bins a plan gets when it leaves grid.angle.n_bins and
 * grid.angle.half_width_deg out: from the angles its beam reaches.
 *
 * The projected angular spread theta_0 of a beam in water, as a function of
 * the fraction of its range travelled, hardly depends on its energy (Highland:
 * 1.5 deg at half range, 2.8 at 90 %, 4.1 at 99 % for 70-230 MeV;
 * out_of_plane_theta2 gives it for any material). So:
 *  - the window holds the spots' directions plus ANGLE_EDGE_SIGMAS times the
 *    spread at the last step the beam takes inside the grid (theta_0 there,
 *    with the beam's divergence added in quadrature): what is lost past its
 *    edges (theta_boundary) stays near 1e-5 of the protons;
 *  - the bins are theta_0 at half the beam's path divided by
 *    ANGLE_BIN_FRACTION: where the beam's core is formed, each of its
 *    standard deviations spans that many bins.
 * A beam that stops within the grid gets 41 bins over +-20 deg in water
 * (0.98 deg a bin); one that leaves the grid early, fewer and a narrower
 * window (a 230 MeV beam through 50 mm: 23 bins over +-3.1 deg); a
 * material that scatters more per unit of range (bone), a wider window.
 * The bins are uniform: on them the core of a pencil's profile comes out
 * 10-17 % narrow at half its range, the rms right (docs/physics.md, "Known
 * defects"); finer bins near the beam's direction are what would cure it. Without
 * scattering, the plan's previous defaults (41 over +-20 deg). */
#ifndef SMX_ANGLE_GRID_H
#define SMX_ANGLE_GRID_H

#include "input/plan.h"
#include "physics/tables.h"

/* 4.6: measured on a 100 MeV pencil in water at 0.5 mm, theta_0 4.34 deg at
 * its last step: the protons lost past the edges (theta_boundary) are 1.5e-5
 * at 4.6 (+-20 deg) and 1.7e-4 at 4.0 (+-17.4 deg; peak/entrance -0.3 %):
 * the last steps' tails are wider than a Gaussian's. */
#define ANGLE_EDGE_SIGMAS 4.6
#define ANGLE_BIN_FRACTION 1.5

typedef struct angle_choice {
    int n_bins;
    double half_width_deg; /* window mode */
    double theta_end_deg; /* the spread at the beam's last step in the grid */
    double theta_half_deg; /* theta_0 at half its path */
    double path_mm; /* the path the beam takes inside the grid */
} angle_choice;

/* The bins for plan p (its beam, grid depth, material t, scattering power);
 * t must hold the in-plane path range already (tables_set_path_range).
 * Returns 0, or -1 when there is nothing to derive from (no scattering). */
int angle_grid_from_beam(const plan *p, const tables *t, angle_choice *c);

#endif
