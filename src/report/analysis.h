/* Figures of merit of a dose map: depth-dose, distal depths, Bragg peak,
 * lateral width. Shared by the end-of-run summary and the regression tests. */
#ifndef SMX_ANALYSIS_H
#define SMX_ANALYSIS_H

#include "physics/grid.h"

/* Laterally integrated dose per z row (MeV), dd[nz]. */
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

/* The run's summary of its depth dose (laterally integrated) and width: what
 * the terminal prints and the result file keeps (/summary). NAN where a
 * figure is undefined (no distal fall-off inside the grid, no entrance dose). */
typedef struct dose_figures {
    double r80_mm, r20_mm, peak_depth_mm, peak_to_entrance, lateral_rms_half_r80_mm;
} dose_figures;
/* 0, or -1 when out of memory. */
int dose_figures_of(const grid *g, const double *dose, dose_figures *f);

#endif
