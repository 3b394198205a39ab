/* Shared by the CPU backend's files only: the backend table's entry points
 * (backend_cpu.c) and the reference operators they step with (backend_cpu_operators.c). */
#ifndef SMX_BACKEND_CPU_INTERNAL_H
#define SMX_BACKEND_CPU_INTERNAL_H

#include "input/plan.h"
#include "numerics/deposit_path.h"
#include "numerics/direction_chunks.h"
#include "numerics/moments.h"
#include "transport/backend.h"

typedef grid_box box; /* inclusive; empty when z0 > z1 */

static const box BOX_EMPTY = { 1, 0, 1, 0 };

static inline int box_empty(box b)
{
    return b.z0 > b.z1 || b.x0 > b.x1;
}

static inline box box_union(box a, box b)
{
    if (box_empty(a))
        return b;
    if (box_empty(b))
        return a;
    return (box){ a.z0 < b.z0 ? a.z0 : b.z0, a.z1 > b.z1 ? a.z1 : b.z1, a.x0 < b.x0 ? a.x0 : b.x0,
                  a.x1 > b.x1 ? a.x1 : b.x1 };
}

/* One unit of parallel work: a z row of one energy bin (or of all bins). */
typedef struct unit {
    int ie, z;
} unit;

typedef struct cpu_ctx {
    const sim_tables *s;
    const grid *g;
    int only_op; /* backend_test_options.only_op: -1 = every operator */
    /* psi, and under the moments scheme its moments after it: buffer k of
     * cur (comp()) is component k: 0 the weight; 1 and 2 the weight times its
     * mean offset from the cell's centre along z and x (cells); 3 the weight
     * times its mean squared offset along x. */
    float *cur, *tmp;
    int ncomp; /* 4 under the moments scheme, else 1 */
    int moments;
    /* The early exit (backend.early_exit): values of psi below it are dropped
     * where A_theta reads them (tallied as THETA_CUTOFF), as on the GPU;
     * 0: off, and under the moments scheme, whose values the CPU keeps. */
    float threshold;
    box *box_cur, *box_tmp; /* [ne] */
    box *box_next; /* [ne] scratch for A_E */
    double *dose; /* [grid.dose_planes][nz][nx], MeV: the dose, then the released energy */
    unit *units; /* [ne * nz] */
    step_tally *partial; /* [ne * nz] per-unit tallies */
    double *row_w; /* [ne * nz] per-unit weight sums */
    int *row_x0, *row_x1; /* [ne * nz] non-zero x extent per unit */
    /* The measure taken by the streaming as it writes (stream_measures: the
     * step's last operator is the streaming, under the shift scheme; set at
     * setup): per bin ie, direction j and row z of its new box, entry
     * ms_off[ie] + j * rows + z - z0 holds the row's sum and non-zero
     * extent, cpu_measure's per direction. */
    int stream_measures;
    int64_t *ms_off; /* [ne] */
    double *ms_w; /* [nth * ne * nz] at most; pages only where the boxes' rows take them */
    int *ms_x0, *ms_x1;
    int *step_oz, *step_ox; /* [nth] whole-cell moves of the current step */
    float *scratch; /* [threads][nth * nx] */
    double *dep_row; /* [threads][cpu_dep_rows][nx] rows of deposit or release, in double */
    float *zero_row; /* [nx] zeros: the spectral tallies' directions past the last */
    /* The spectral tallies' direction sums of this step's units (cpu_spectral_begin):
     * unit k (bin ie's row z: k = spec_ustart[ie] + z - spec_box[ie].z0) holds its
     * box's columns from spec_w + spec_woff[k]. spec_in_theta: A_theta forms them
     * (it runs first on the step's psi, with every operator). */
    box *spec_box; /* [ne] the boxes at the step's start */
    int64_t *spec_ustart; /* [ne] */
    int64_t *spec_woff; /* [ne * nz + 1] */
    double *spec_w; /* [ne * nz * nx] at most; the first spec_woff[spec_n] in use */
    int64_t spec_n;
    int spec_in_theta;
    float *dmap; /* [nth][nz][nx] this step's deposit per direction (deposit_path.h) */
    float *dmz, *dmx, *dqx; /* [nth][nz][nx] moments scheme: its moments (deposit_path.h) */
    smx_path_axis *path_z, *path_x; /* [nth] this step's paths */
    double *mass_density; /* [n_media] densities when the deposit is shared by mass
                                (deposit_path.h); NULL = by length */
    int64_t step; /* the step being taken (0-based) */
    int moved; /* A_stream has run in this step */
    int nthreads;
    double w0, e0, w_prev, e_prev;
    int front, back; /* deepest and shallowest rows holding weight (-1: none) */
    int stopped;
    int *span_z0,
        *span_z1; /* [ne] rows each bin has ever occupied (memory touched, see cpu_step) */
    double mem_limit; /* bytes the run may touch (backend.host_memory_bytes or physical) */
    double touched; /* bytes it has touched so far, by that bound */
    step_record last; /* the step not yet collected */
    int have_last;
    int uploaded; /* a source has been uploaded (the next upload clears its run) */
    float *snap; /* host copy for snapshots */
    /* Runs of one medium along each z row (the medium map, cut where it
     * changes): row z's runs are run_start[z] .. run_start[z + 1] - 1, x
     * ascending, covering 0 .. nx - 1. One run per row in a uniform medium. */
    int *run_start; /* [nz + 1] */
    int *run_x0, *run_x1, *run_m;
    /* This step's choice in media 1, 2, ... (lut_energy.h, energy_dither_lut):
     * 1 = source bin ie of medium m takes the lower table. [0][*] unused. */
    uint8_t *lower; /* [n_media][ne] */
} cpu_ctx;

/* The table source bin ie of medium m moves by in this step. */
static inline const energy_lut *cpu_step_lut(const cpu_ctx *c, int m, int ie)
{
    if (!m)
        return &c->s->el;
    const energy_dither_lut *d = sim_dither(c->s, m);
    return c->lower[(int64_t)m * c->g->ne + ie] ? &d->lower : &d->upper;
}

/* The part of row z's run r inside [a, b]; 0 when they do not meet. */
static inline int run_clip(const cpu_ctx *c, int r, int a, int b, int *xa, int *xb)
{
    *xa = c->run_x0[r] > a ? c->run_x0[r] : a;
    *xb = c->run_x1[r] < b ? c->run_x1[r] : b;
    return *xa <= *xb;
}

/* Columns [a, b] of row z inside box bx: [*xa, *xb], or 0 (left as they were) if none. */
static inline int box_row(box bx, int z, int a, int b, int *xa, int *xb)
{
    if (box_empty(bx) || z < bx.z0 || z > bx.z1)
        return 0;
    const int lo = bx.x0 > a ? bx.x0 : a, hi = bx.x1 < b ? bx.x1 : b;
    if (lo > hi)
        return 0;
    *xa = lo, *xb = hi;
    return 1;
}

static inline float *plane(const cpu_ctx *c, float *psi, int64_t ie, int64_t ith)
{
    return psi + psi_index(c->g, ie, ith, 0, 0);
}

/* Component k of a state buffer (cpu_ctx.cur). */
static inline float *comp(const cpu_ctx *c, float *psi, int k)
{
    return psi + (int64_t)k * c->g->cells;
}

/* One step's operators on c->cur, each adding what leaves psi to t. */
void cpu_op_theta(cpu_ctx *c, step_tally *t);
void cpu_op_energy(cpu_ctx *c, step_tally *t);
/* measure: also take the measure's row sums of what it writes (ms_*). */
void cpu_op_stream(cpu_ctx *c, int64_t step, int measure, step_tally *t);
/* streamed: the rows' sums are those the streaming took (ms_*), else
 * they are read from psi. */
void cpu_measure(cpu_ctx *c, int streamed, double *wsum, double *esum);
/* transport.nuclear: halo: the energy the step's non-elastic events hand to
 * secondary protons, from psi as the step finds it, added to the dose's
 * release planes (physics/nuclear_halo.h); nothing otherwise. begin at the
 * step's start (the units and, unless A_theta does, their direction sums),
 * cpu_spectral_tallies after the operators. */
void cpu_spectral_begin(cpu_ctx *c);
void cpu_spectral_tallies(cpu_ctx *c);
/* This step's choices in the media other than the reference. */
void cpu_step_tables(cpu_ctx *c, int64_t step);

/* Rows of dep_row per thread: the deposit's 4, or the spectral tallies'
 * running sums (dose_planes - 1; cpu_spectral_tallies). */
static inline int cpu_dep_rows(const grid *g)
{
    return g->dose_planes > 4 ? g->dose_planes : 4;
}

#endif
