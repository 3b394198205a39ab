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
 * On uniform bins the core of a pencil's profile comes out 10-17 % narrow at
 * half its range, the rms right (docs/physics.md, "Known defects"): a beam
 * whose spread is below a bin keeps most of its weight exactly straight.
 * Without scattering, the plan's previous defaults (41 over +-20 deg).
 *
 * grid.angle.spacing: beam (window mode) makes the bins fine near the
 * window's centre and wide towards its edges: width d0 sqrt(1 + (theta /
 * theta_c)^2), i.e. theta = theta_c sinh(u d0 / theta_c) of a uniform u
 * (physics/grid.c). theta_c is ANGLE_BEAM_THETA_C times theta_0 at half the
 * beam's path, whether or not the plan gives the bins; left out, the window
 * is at least ANGLE_BEAM_MIN_HALF_WIDTH_DEG for a beam that stops in the grid
 * (the wide outer bins cost little, and keep the last steps' tails), and the
 * bins are as many as make d0 theta_0 / ANGLE_BEAM_BIN_FRACTION: 27 over
 * +-30 deg for a beam stopping in water. A numerical study of the angular
 * discretisation alone (exact lateral transport; 70, 150, 230 MeV) put the
 * core within 3 % of Fermi-Eyges at 50-95 % of the range with 25-27 such bins
 * over +-30 deg, losing <= 1e-5 of the weight past the edges. */
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
/* spacing: beam (above). */
#define ANGLE_BEAM_THETA_C 0.6
#define ANGLE_BEAM_BIN_FRACTION 5.0
#define ANGLE_BEAM_MIN_HALF_WIDTH_DEG 30.0

typedef struct angle_choice {
    int n_bins;
    double half_width_deg; /* window mode */
    double theta_end_deg; /* the spread at the beam's last step in the grid */
    double theta_half_deg; /* theta_0 at half its path */
    double path_mm; /* the path the beam takes inside the grid */
    int stops; /* 1: the beam stops inside the grid (it does not leave it early) */
    double theta_c_deg; /* spacing: beam: theta_c of the bins' widths; 0 otherwise */
} angle_choice;

/* The bins for plan p (its beam, grid depth, material t, scattering power);
 * t must hold the in-plane path range already (tables_set_path_range).
 * Returns 0, or -1 when there is nothing to derive from (no scattering).
 * Keys the plan gives are kept in c (n_bins, half_width_deg); theta_c_deg is
 * set under spacing: beam whatever the plan gives. */
int angle_grid_from_beam(const plan *p, const tables *t, angle_choice *c);

#endif
