/* The lookup tables of one run: everything built once on the host from the
 * plan, the grid and the material tables before the step loop (energy LUT,
 * angular kernels, streaming table, boundary fractions). Every backend steps
 * from these; none rebuilds them. */
#ifndef SMX_SIM_TABLES_H
#define SMX_SIM_TABLES_H

#include "base/error.h"
#include "base/plan_choices.h"
#include "physics/grid.h"
#include "physics/lut_angle.h"
#include "physics/lut_energy.h"
#include "physics/lut_stream.h"
#include "physics/medium.h"
#include "physics/spectral_tally.h"
#include "physics/tables.h"

/* The plan (input/plan.h) is only passed through here. */
typedef struct plan plan;

/* Everything built once on the host before the step loop. */
typedef struct sim_tables {
    const plan *p;
    const grid *g;
    /* With steps: auto, the run stops when the weight in flight falls below
     * this fraction of the initial weight, or none is left: the plan's
     * transport.auto_stop_weight, or 0 for a per-spot state, whose spots must
     * run until their weight is gone (transport/per_spot.c). */
    double auto_stop_weight;
    /* The early exit's threshold: the plan's backend.early_exit_threshold,
     * or in a per-spot state the one tied to the rows' cut
     * (output.per_spot_early_exit_ratio, transport/per_spot.c). */
    double early_exit_threshold;
    energy_lut el; /* medium 0's (the plan's material) */
    angle_kernels ak; /* kernel of medium m, energy bin i: kernel_of_energy[m * ne + i] */
    stream_table st;
    double
        *boundary_frac; /* window mode: [n_kernels][nth] share of source bin i scattered outside */
    /* Heterogeneous media (sim_tables_set_media); one medium otherwise. */
    const medium_map *mm; /* which medium each cell holds; NULL = medium 0 everywhere */
    int n_media;
    energy_lut *el_media; /* [n_media - 1]: media 1, 2, ...: the plain (mean-keeping) tables,
                                whose deposits every step uses */
    energy_dither_lut *dither; /* [n_media - 1]: how psi moves in media 1, 2, ... */
    int energy_gather; /* 1 = gather LUT, 0 = scatter (chosen by plan and LUT validity) */
    int stream_gather; /* 1 = gather, 0 = scatter */
    /* The dose's planes 1.. (grid.dose_planes): what each step adds to them
     * per (medium, bin). Under output.dose_to_water they wait for the water
     * table: sim_tables_set_media builds them then (tally_ready). */
    spectral_tallies tally;
    int tally_ready;
    const tables *tally_water; /* the water table its dose to water took (not owned) */
} sim_tables;

int sim_tables_build(sim_tables *s, const plan *p, const grid *g, const tables *t, smx_error *err);
/* After sim_tables_build: the tables of every medium of mm (mt[k] is the table
 * of mm->materials[k]; mt[0] the one given to sim_tables_build) and water's
 * (output.dose_to_water; may be NULL otherwise). mm and the tables must
 * outlive s. A uniform map changes only the spectral tallies' water. */
int sim_tables_set_media(sim_tables *s, const medium_map *mm, const tables *const *mt,
                         const tables *water, smx_error *err);

/* s, built on the run's lowest bins (a per-spot state of fewer, with the
 * run's media), takes each medium's range in steps over the run's bins
 * (run's): its media then choose their tables as the run's do, bit for bit.
 * On its own bins a medium's choice extrapolates above the top one, and a
 * particle that has crossed a lighter medium would choose otherwise
 * (numerics/dither_phase.h). */
int sim_tables_share_steps(sim_tables *s, const sim_tables *run, smx_error *err);

static inline const energy_lut *sim_energy_lut(const sim_tables *s, int m)
{
    return m ? &s->el_media[m - 1] : &s->el;
}

static inline const energy_dither_lut *sim_dither(const sim_tables *s, int m)
{
    return &s->dither[m - 1];
}

static inline int sim_kernel_of(const sim_tables *s, int m, int ie)
{
    return s->ak.kernel_of_energy[(int64_t)m * s->g->ne + ie];
}
void sim_tables_free(sim_tables *s);

#endif
