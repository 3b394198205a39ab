/* What the program tells the user on the terminal: the version banner, the dry
 * run (what a plan would do, without doing it) and the end-of-run summary. */
#ifndef SMX_REPORT_H
#define SMX_REPORT_H

#include "input/plan.h"
#include "physics/grid.h"
#include "physics/medium.h"
#include "physics/tables.h"
#include "transport/backend.h"
#include "transport/device_query.h"
#include "report/analysis.h"
#include "transport/run.h"

void report_version(void);
/* "backend:   cpu (OpenMP, 2 threads; ...)": which backend runs and why
 * (backend_describe); on stdout always in a dry run, else unless --quiet. */
void report_backend(const plan *p, const gpu_info *gi, const backend_ops *be, int dry_run);
/* Before a run: a warning for each spot (or summed over a field's spots)
 * whose predicted reach the grid cuts off (the dry run's "reach" line
 * without the line); returns how many leave through the far edge or a side. */
int report_reach_warnings(const plan *p, const grid *g, const medium_map *media,
                          const tables *const *mt);
/* What the dry run reports on: a validated plan, its grid and tables, the
 * medium map (mt[k]: the tables of the map's material k), the backend and GPU
 * the run would use and the steps it expects. */
typedef struct dry_run {
    const plan *p;
    const grid *g;
    const tables *t;
    const medium_map *media;
    const tables *const *mt;
    const backend_ops *be;
    const gpu_info *gi;
    int expected;
} dry_run;
/* Grid, tables, media, memory, steps and output of a validated plan. Also
 * predicts where each spot goes (physics/beam_reach.h) and warns when the
 * grid would cut it off; returns how many spots it cuts off. */
int report_dry_run(const dry_run *d);
/* The media of a map: materials, how many media, cells per medium (part of the dry run). */
void report_media(FILE *f, const medium_map *m);
/* Figures of merit of the laterally integrated dose (R80, R20, distal peak,
 * maximum, lateral width; media: each cell's density, NULL for one medium),
 * stop reason, conservation, wall time; then a warning for what the grid cut
 * off (report/analysis.h, summary_warnings). */
void report_summary(const run_result *r, const dose_figures *f);
/* A robust plan's scenarios (scenarios.*), one line each: range error, shift
 * and R80 (fig[i]: scenario i's figures, fig[0] the nominal's), and how far
 * each R80 lies from the nominal's. Nothing for a plan without scenarios. */
void report_scenarios(const plan *p, const dose_figures *fig);
/* The dry run's line about them: how many, how combined. */
void report_scenarios_planned(const plan *p);

#endif
