/* The backend table: every backend (CPU reference, CUDA) implements the same
 * few entry points; the host loop, lookup tables, tallies and output are shared. */
#ifndef SMX_BACKEND_H
#define SMX_BACKEND_H

#include <stdint.h>

#include "base/error.h"
#include "physics/grid.h"
#include "physics/sim_tables.h"
#include "transport/run.h"
#include "transport/tally.h"

typedef struct plan plan;

/* One step's outcome, as the backend reports it. */
typedef struct step_record {
    step_balance b;
    int front_row; /* deepest z row holding weight after the step, -1 if none */
    int back_row; /* shallowest z row holding weight after the step (a lower bound: 0 where the
                     backend does not track it), -1 if none */
    int stopped; /* this step ended the run (steps: auto, weight below threshold) */
} step_record;

/* The nuclear halo's convolution of n sources at once (transport/halo_dose.h,
 * halo_dose_convolve's middle step): in [n][bands][cz][cx], the energy each
 * source released per block; out [n][cz][cx], the real part of the inverse
 * transform (unscaled) on the blocks. kre, kim: [bands][Z][X] the kernels'
 * transforms, the same for every call of a run. */
typedef struct halo_fft_job {
    int64_t Z, X, cz, cx;
    int bands, n;
    const double *kre, *kim;
    const double *in; /* NULL: the blocks the device keeps (halo_block_spec) */
    double *out;
} halo_fft_job;

/* Where a state's halo blocks lie, for the device to sum them as the host's
 * halo_dose_blocks does (the same bits): block (bz, bx) of a slot takes the
 * grid's rows bz fz .. bz fz + fz - 1 and the columns x with (x + ox) / fx ==
 * bx, of the released energy's planes plane0 .. plane0 + fft.bands - 1 (a
 * band each); slot k's columns start at the grid's column x0[k], and the
 * window's row 0 lies on the grid's row 0 (window_reset). fft: the
 * transforms' sizes and kernels (its n, in and out are not read). */
typedef struct halo_block_spec {
    halo_fft_job fft;
    int fz, fx, ox, plane0, slots;
    const int *x0; /* [slots] */
} halo_block_spec;

typedef struct backend_ops {
    const char *name;
    /* Steps between collect() calls that keep the device busy without a host
     * sync in the loop (1 for the CPU). */
    int collect_every;
    /* A run's context for the tables s (which must outlive it). The tests'
     * switches have a setup of their own (transport/backend_test.h). */
    int (*setup)(void **ctx, const sim_tables *s, smx_error *err);
    /* Initial state and its weight / energy (the auto-stop rule refers to w0).
     * occupied: per energy bin a box holding every non-zero value of psi0
     * (source_fill's), so that only those rows are read; NULL: the backend
     * searches psi0. Called after setup, and again for each further source
     * of the run (a field's spots, output.per_spot_dose): the previous
     * source's state, dose and records are discarded first. The tables'
     * medium map (s->mm->cell) is read again: a window's map changes with
     * the spot (transport/window.h). */
    int (*upload)(void *ctx, const float *psi0, const grid_box *occupied, double w0, double e0,
                  smx_error *err);
    /* Step n (from 0): psi <- ops(psi), dose accumulated. May only enqueue the
     * work. After the step that stops an auto run, further steps change nothing. */
    int (*step)(void *ctx, int64_t n, smx_error *err);
    /* Records of the steps done since the last call, in order (at most max). */
    int (*collect)(void *ctx, step_record *out, int max, int *n_out, smx_error *err);
    /* The moving window (transport/window.h), after a collect that returned
     * every step enqueued: moves the state, its dose and what the backend
     * keeps of where psi holds weight `rows` rows towards z = 0 (row z + rows
     * becomes row z); the rows entering at the far end hold nothing. The dose
     * of the rows that leave is copied to dose_out ([dose_planes][rows][nx],
     * MeV, each of the grid's dose planes in turn); they
     * hold no weight and no step can reach them any more (the caller keeps a
     * margin behind the back row). The tables' medium map (s->mm->cell),
     * which the caller has moved with the window, is read again. NULL, or
     * can_shift 0: the window cannot move (the records carry no back row). */
    int (*shift)(void *ctx, int rows, double *dose_out, smx_error *err);
    int (*can_shift)(void *ctx);
    /* Snapshot of psi after the last step: begin copies it out without waiting
     * where the backend can; wait hands over the host copy (valid until the next begin). */
    int (*snapshot_begin)(void *ctx, smx_error *err);
    int (*snapshot_wait)(void *ctx, const float **psi, smx_error *err);
    /* Dose in MeV (not normalised), [grid.dose_planes][nz][nx]: the dose, then
     * under transport.nuclear: halo the energy released per band. */
    int (*download_dose)(void *ctx, double *dose_MeV, smx_error *err);
    void (*describe)(void *ctx, run_result *r);
    void (*release)(void *ctx);
    /* After the first upload: how many states of this plan (ctx's and further
     * ones from setup) may step at once, each its own spot of a field's
     * per-spot runs: what the device's memory holds, and 1 where two states
     * could compute a spot differently (a method chosen by timing). */
    int (*lanes)(void *ctx);
    /* halo_fft_job on the device: 0, or an error; -1 where the device
     * declines it (no cuFFT), and NULL where the backend has none (the CPU):
     * the host then transforms (halo_dose_convolve). */
    int (*halo_convolve)(void *ctx, const halo_fft_job *job, smx_error *err);
    /* After an upload, before its steps (a field's per-spot batch): the
     * state's halo blocks kept on the device (halo_block_spec). Until the
     * next upload, shift and download_dose leave the released energy's
     * planes out of dose_out and dose (what those hold there is undefined):
     * each window row joins its slot's blocks as it leaves, and
     * halo_convolve with job->in NULL transforms the blocks, the rows still
     * in the window joined first. 0, an error, or -1 where the device
     * declines (no cuFFT, or no memory for the transforms); NULL where the
     * backend has none: the host then sums the blocks from the planes. */
    int (*halo_keep)(void *ctx, const halo_block_spec *spec, smx_error *err);

} backend_ops;

/* The auto-stop rule, shared by every backend (steps and auto_stop_weight:
 * transport.*, backend_settings): the weight in flight below
 * auto_stop_weight of the initial weight, or none left at all (a spot's run
 * with slots: auto_stop_weight 0, simulate.c). */
static inline int backend_auto_stop(int steps, double auto_stop_weight, double w_out, double w0)
{
    return steps == 0 && (w_out < auto_stop_weight * w0 || w_out <= 0.0);
}

extern const backend_ops backend_cpu;
/* Host memory the CPU backend allocates for a grid (bytes). */
double backend_cpu_host_bytes(const grid *g);
/* What the CPU backend holds before the beam moves (its buffers are calloc'd
 * and cost only where written). */
double backend_cpu_min_bytes(const grid *g);
/* Host bytes a run may use: backend.host_memory_bytes, or the machine's
 * physical memory (backend_cpu.c). */
double backend_host_limit_bytes(const plan *p);
/* Spots side by side the CPU backend takes for backend.per_spot_lanes: auto,
 * for states of grid g: up to 4, as many as half of limit_bytes holds. */
int backend_cpu_auto_lanes(const grid *g, double limit_bytes);
#ifdef SMX_HAVE_CUDA
extern const backend_ops backend_cuda;
/* Device memory the CUDA backend's arena needs for a grid (without the FFT path). */
double backend_cuda_device_bytes(const grid *g);
#endif

#endif
