/* The lookup tables of one run: everything built once on the host from the
 * plan, the grid and the material tables before the step loop (energy LUT,
 * angular kernels, streaming table, boundary fractions). Every backend steps
 * from these; none rebuilds them. */
#ifndef SMX_SIM_TABLES_H
#define SMX_SIM_TABLES_H

#include "base/error.h"
#include "input/plan.h"
#include "physics/grid.h"
#include "physics/lut_angle.h"
#include "physics/lut_energy.h"
#include "physics/lut_stream.h"
#include "physics/medium.h"
#include "physics/tables.h"

/* Everything built once on the host before the step loop. */
typedef struct sim_tables {
    const plan *p;
    const grid *g;
    energy_lut el;           /* medium 0's (the plan's material) */
    angle_kernels ak;        /* kernel of medium m, energy bin i: kernel_of_energy[m * ne + i] */
    stream_table st;
    double *boundary_frac;   /* window mode: [n_kernels][nth] share of source bin i scattered outside */
    /* Heterogeneous media (sim_tables_set_media); one medium otherwise. */
    const medium_map *mm;    /* which medium each cell holds; NULL = medium 0 everywhere */
    int n_media;
    energy_lut *el_media;    /* [n_media - 1]: media 1, 2, ...: the plain (mean-keeping) tables,
                                whose deposits every step uses */
    energy_dither_lut *dither; /* [n_media - 1]: how psi moves in media 1, 2, ... */
    int energy_gather;       /* 1 = gather LUT, 0 = scatter (chosen by plan and LUT validity) */
    int stream_gather;       /* 1 = gather, 0 = scatter */
    int only_op;             /* tests: apply only this enum op_id per step; -1 = all */
    int force_fft_from;      /* tests: CUDA hybrid with bins >= this on the FFT; 0 = off */
    int fused_kp_cap;        /* tests: widest kernel the fused CUDA step convolves from its
                                padded stage (wider ones take the bounds-checked path); 0 = default */
    int fused_split_off;     /* tests: 1 = the fused CUDA step never splits a tile's energy range */
    int media_one_pass;      /* tests: 1 = a CUDA run with media steps in one pass wherever it can,
                                -1 = never (two passes), 0 = by its start (cuda_upload) */
    int fused_one_tile;      /* tests: 1 = the fused CUDA step's unsplit blocks walk one tile each,
                                as on grids whose bins leave no room for two stage rings */
    int fused_boundary_global; /* tests: 1 = the fused CUDA step reads the window's boundary
                                  fractions of wide kernels from global memory, not shared */
    int cuda_pad_rows;       /* tests: 1 = the CUDA backend pads every grid's rows to whole
                                128-byte lines (row_pitch_for), not only wide ones */
} sim_tables;

int sim_tables_build(sim_tables *s, const plan *p, const grid *g, const tables *t, smx_error *err);
/* After sim_tables_build: the tables of every medium of mm (mt[k] is the table
 * of mm->materials[k]; mt[0] the one given to sim_tables_build). mm and the
 * tables must outlive s. A uniform map changes nothing. */
int sim_tables_set_media(sim_tables *s, const medium_map *mm, const tables *const *mt, smx_error *err);

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
