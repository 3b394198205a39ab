/* Figures of merit of a dose map: depth-dose, distal depths, peaks, lateral
 * width, and what the grid cut off. Shared by the end-of-run summary, the
 * result file's /summary and the regression tests. */
#ifndef SMX_ANALYSIS_H
#define SMX_ANALYSIS_H

#include <stddef.h>

#include "physics/grid.h"
#include "physics/medium.h"
#include "transport/run.h"

/* Laterally integrated energy per z row (MeV), dd[nz]. */
void depth_dose(const grid *g, const double *dose, double *dd);
/* Depth (mm) of the row-centre maximum. */
double peak_depth_mm(const grid *g, const double *dd);
/* Depth beyond the peak where dd falls to level x max, interpolated linearly
 * between row centres (R80: level 0.8). NAN if it never falls that low. */
double distal_depth_mm(const grid *g, const double *dd, double level);
/* Mean and rms lateral position of one dose row's profile (mm). */
void lateral_moments(const grid *g, const double *dose, int iz, double *mean, double *rms);
/* rms lateral width at depth z_mm, interpolated between the two nearest rows. */
double lateral_rms_at(const grid *g, const double *dose, double z_mm);

/* Each cell's dose on the scale of its energy: energy_MeV x (the reference
 * density g->density / the cell's density), which is the dose in Gy up to one
 * constant factor (the mass of a cell of the reference density). Where one
 * density fills the grid (m NULL or uniform) the values are the energies
 * themselves, bit for bit. Returns energy_MeV itself in that case, else a new
 * array (*owned, to free); NULL when out of memory. */
const double *dose_on_energy_scale(const grid *g, const double *energy_MeV, const medium_map *m,
                                   double **owned);

/* The run's summary of its laterally integrated dose (sum over x of D dx, in
 * Gy mm up to a constant) and width: what the terminal prints and the result
 * file keeps (/summary, schemas/output.md defines each figure). NAN where a
 * figure is undefined (no distal fall-off inside the grid, no entrance dose).
 *
 * The distal peak is the maximum nearest the distal fall-off: from the
 * deepest point where the curve falls through half its maximum, the curve is
 * followed up to its first maximum (a flat top: its deepest row, unless it is
 * the maximum's value, whose first row it then is). For one Bragg peak it is the peak (the
 * maximum); for a spread-out peak, the deepest peak of the plateau, whereas
 * the maximum may be a proximal overshoot. R80 and R20 are the deepest depths
 * where the curve falls through 80 % and 20 % of the distal peak's value, the
 * curve staying below beyond them. */
typedef struct dose_figures {
    double r80_mm, r20_mm;
    double peak_depth_mm; /* the distal peak's row centre */
    double peak_to_entrance; /* the distal peak over the first row */
    double max_depth_mm; /* the maximum's row centre (the first, if several) */
    double max_to_peak; /* the maximum over the distal peak (1: the peak is the maximum) */
    double lateral_rms_half_r80_mm;
    double far_edge_rel; /* the curve's last row over its maximum */
    double side_rel; /* the largest dose in the first or last column over the largest dose */
} dose_figures;
/* energy_MeV: the run's energy per cell (r->dose_MeV); m: the medium map
 * (NULL: one medium). 0, or -1 when out of memory. */
int dose_figures_of(const grid *g, const double *energy_MeV, const medium_map *m, dose_figures *f);

/* Why R80 (or R20, level 0.2) is undefined, in words; "" when it is defined. */
void dose_figures_why_undefined(const dose_figures *f, double level, char *out, size_t cap);

/* A dose at the grid's far edge or sides above this fraction of the maximum
 * means the beam reaches it: a beam that stops inside leaves none there. */
#define SUMMARY_EDGE_REL 0.01
/* Protons leaving through the grid's edges worth a warning on their own: a
 * beam well inside the grid loses orders of magnitude less (large-angle tails). */
#define SUMMARY_LEAK_REL 1e-3

/* What the grid cut off, from the figures and the fraction of the protons
 * that left through the grid's edges (the escape tally spatial_leak over the
 * initial weight): one warning per line, each ending in '\n', into out ("" when
 * none). Returns the number of warnings. */
int summary_warnings(const dose_figures *f, double leak_fraction, char *out, size_t cap);
/* The fraction of a run's protons that left through the grid's edges. */
double run_leak_fraction(const run_result *r);

#endif
