// Shared by the CUDA backend's files only (backend_cuda*): the context every
// entry point works on, and the functions one file calls in another. The
// backend's jobs: backend_cuda_setup.cu (layout, arena, tables, the kernel
// path), backend_cuda.cu (upload, the step as a captured graph, records,
// snapshots, release), backend_cuda_angular.cu (the start-up choice of the
// angular method, A_theta launched with it), backend_cuda_bench.cu (the
// benchmark hooks), backend_cuda_ops.cu (the backend's tables of them all); the
// end-of-step kernels are bookkeeping.cu's.
#ifndef SMX_CUDA_BACKEND_INTERNAL_CUH
#define SMX_CUDA_BACKEND_INTERNAL_CUH

extern "C" {
#include "transport/backend.h"
#include "transport/backend_host.h"
#include "transport/backend_test.h"
#include "transport/device_query.h"
}
#include "angular.cuh"
#include "arena_keep.cuh"
#include "bookkeeping.cuh"
#include "check.cuh"
#include "common.cuh"
#include "deposit_path.cuh"
#include "energy.cuh"
#include "energy_media.cuh"
#include "fused.cuh"
#include "halo_blocks.cuh"
#include "halo_fft.cuh"
#include "moments.cuh"
#include "spectral_tally.cuh"
#include "streaming.cuh"
#include "window_shift.cuh"

#define MAX_RUNS 32 // theta launches of the hybrid; more runs fall back to one method

// The step's pipelines (enqueue_step, backend_cuda.cu), each a fixed sequence
// of kernels.
enum step_pipeline {
    PIPE_FUSED_ONE_PASS, // fused_step: theta + energy + stream in one kernel (shift scheme;
    // with media its media instances)
    PIPE_FUSED_TWO_PASS, // fused_theta_energy, then stream + measure, over the active region
    PIPE_MOMENTS_REGIONS, // the moments scheme in two passes over the active region
    PIPE_PER_OPERATOR, // one whole-grid kernel per operator, in the plan's order
};

// The pipeline a step takes, and what the rest of the backend must know of
// it; worked out in one place (choose_pipeline, backend_cuda_setup.cu) from
// the choices below it in cuda_ctx: at setup, and again at each upload (a run
// with media takes its one pass by the source's size; the angular method,
// locked at the first upload, may rule out the fused pipelines).
struct pipeline_choice {
    step_pipeline kind;
    bool regions; // the step works on the active region (box_a, reg), which the window can move
    bool alternates; // psi alternates between psi_a and psi_b with the step count
};

struct cuda_ctx {
    const sim_tables *s;
    const grid *g;
    backend_test_options opt; // the tests' switches (transport/backend_test.h); a run's: defaults
    backend_settings set; // the plan's values (transport/backend_host.h)
    pipeline_choice pipe; // the step's pipeline (choose_pipeline)
    dev_dims d;
    int blocks;
    int cluster_launch; // the fused kernel runs in thread-block clusters (fused.cuh)
    int tiles; // tiles per block of the fused kernel's unsplit instance (fused.cuh)
    cudaStream_t stream, copy;
    cudaEvent_t ev_step, ev_copy;
    cudaGraphExec_t graph;
    int use_graph;
    // arena and its pieces
    char *arena;
    size_t arena_bytes; // what the state needs
    size_t arena_have; // what its arena holds (a kept one may hold more: arena_keep.cuh)
    float *psi_a, *psi_b; // ncomp blocks of d.cells each (moments.cuh)
    int ncomp; // SMX_MOM_COMPONENTS under the moments scheme (moments.cuh), else 1
    moment_maps_dev mmaps; // the deposit's moments beside dmap (moments scheme)
    moments_energy_dev mt; // A_E's tables under the moments scheme (moments_energy)
    double *partials_discard; // what A_theta tallies on a moment component (not a tally)
    double *dose; // [planes][slice]: the dose, then the released energy per band (grid.dose_planes)
    int planes;
    spectral_tables_dev tally; // the dose's planes 1.. (spectral_tally.cuh)
    double *tally_wsum; // [ne][slice] each bin's weight summed over directions (the tallies')
    float *dmap; // [nth] slices: the step's deposit per direction (deposit_path.cuh)
    path_scratch_dev paths; // the step's deposit paths
    double *partials; // [TF_COUNT][blocks]
    int *front_part; // [blocks]
    box4 *box_a; // [ne] where psi_a is non-zero (fused path)
    box4 *box_next; // [ne] collected by streaming for the next step
    active_regions *reg;
    int4 reach; // min/max whole-cell move in z and x over directions
    step_rec_dev *ring;
    run_state_dev *state;
    int *stop;
    angular_tables_dev at;
    energy_tables_dev et;
    int media; // cells hold different media: the media instances or kernels, no FFT
    int media_regions; // ... over the active region (media_single_ok: the one pass)
    int media_single_ok; // the single pass serves this grid with media (fused.cuh; the shift scheme)
    int media_single; // ... and this source (cuda_upload; tests may ask for the whole-grid
        // kernels instead): psi alternates as single_pass
    int media_reach; // R (fused_args::reach): a target's sources lie in T .. T + R
    energy_media_dev em;
    unsigned char *medium_dev; // [nz][px] the cells' media (em's, mass's); NULL: one medium
    // Its host copy (pinned), copied on the step's stream (cuda_medium_upload),
    // and the event of the last copy, before which the host leaves it alone.
    unsigned char *medium_host;
    cudaEvent_t ev_medium;
    mass_share_dev
        mass; // the deposit shared by capped mass (deposit_path.h); medium NULL = by length
    energy_tables_dev
        et_media; // et with each source bin's target range over every medium and table
    fused_tables_dev ft;
    fused_split_dev split; // the fused kernel's energy split of steps with few tiles
    stream_tables_dev stt;
    void *fft_mem;
    angular_fft *fft;
    halo_fft *halo; // the nuclear halo's per-spot convolution (halo_fft.cuh), made on first use
    // The halo's blocks kept on the device (halo_keep, until the next
    // upload: keep_halo): hb's blocks and x0 hold hb_cap_bytes and
    // hb_x0_bytes; hb_z0: the grid's row of the window's row 0.
    halo_blocks_args hb;
    int keep_halo, hb_z0, hb_final; // hb_final: the window's own rows have joined
    size_t hb_cap_bytes, hb_x0_bytes;
    // choices
    int angular; // 0 direct (shared), 1 direct (global), 2 fft, 3 per-bucket hybrid
    // The hybrid: energy bins in runs of one sigma bucket (factor-2 ranges of
    // sigma/dtheta, contiguous because sigma falls with energy), each run with
    // its own locked choice; each theta launch writes its own partials slot.
    int n_runs;
    int run_lo[MAX_RUNS], run_hi[MAX_RUNS], run_fft[MAX_RUNS];
    int slots;
    int stream_variant;
    int energy_gather;
    int fused; // theta + energy in one kernel, stream measures the step
    int single_pass; // fused and shift streaming: the whole step is one kernel
    // Spectral tally planes the single pass takes inside its one pass over
    // psi (one medium, where its shared memory holds them); 0: the tallies
    // run apart (spectral_launch), before the step's pipeline.
    int fused_tallies;
    // The split instance writes its steps' direction sums (split_sums).
    int split_sums;
    // Single pass with spots side by side: each slot's boxes (common.cuh,
    // slot_boxes), nslots = slot_count(d) > 1; 0 where the union serves.
    box4 *slot_boxes;
    int *slot_pref; // [FUSED_SLOTS + 1] tiles before each slot's (slot_tiles)
    group_bins_dev gbins; // the bins each row's column groups hold (nslots > 1)
    int nslots;
    // Single pass: the state alternates between psi_a (even step count) and
    // psi_b (odd). The host's count: steps enqueued, set back to the device's
    // count when a collect sees the run end (later steps changed nothing).
    int64_t enqueued;
    float threshold;
    double w0, e0; // the source's initial weight and energy (tally_close_balance)
    int uploaded; // a source has been uploaded: the next upload clears its run first
    // host side
    float *pinned; // snapshot buffer
    gpu_info info;
    char variants[768];
    char angular_why[240];
};

// What each kernel family is handed on c's state, built in one place for the
// step's pipelines (backend_cuda.cu) and the benchmark's single operators
// (backend_cuda_bench.cu); a caller changes what its launch takes otherwise.

// A_theta from in to out, tallied into c's partials.
inline angular_io angular_io_of(const cuda_ctx *c, const float *in, float *out)
{
    return angular_io{ in, out, c->stop, c->partials, c->blocks };
}

// A_E in place on psi, one medium (c->et).
inline energy_args energy_of(const cuda_ctx *c, float *psi)
{
    return energy_args{ psi, c->dmap, c->d, c->et, c->stop, c->partials, c->blocks };
}

// A_E in place on psi with media (c->em), over c's active region.
inline energy_media_args energy_media_of(const cuda_ctx *c, float *psi)
{
    return energy_media_args{ psi, c->dmap, c->d, c->em, c->stop, c->partials, c->blocks };
}

// The moments scheme in place on psi, over c's active region.
inline moments_args moments_of(const cuda_ctx *c, float *psi)
{
    return moments_args{ psi,    c->dmap, c->mmaps,    c->d,     c->mt,
                         c->reg, c->stop, c->partials, c->blocks };
}

// A_stream from in to out, measuring into box_next over c's active region
// where the launch measures.
inline stream_args stream_of(const cuda_ctx *c, const float *in, float *out)
{
    return stream_args{ in,       out,         &c->state->step, c->d,        c->stt,   c->reg,
                        c->reach, c->box_next, c->stop,         c->partials, c->blocks };
}

// Spots side by side whose one-pass step visits each slot's own box (the
// kernel_variants' slot_boxes), and keeps each box and the column groups'
// bins step by step: 0 where the step visits the union, or a state holds one
// spot, or another pipeline runs (which keeps neither).
inline int slot_boxes_visited(const cuda_ctx *c)
{
    return c->pipe.kind == PIPE_FUSED_ONE_PASS && c->nslots > 1 ? c->nslots : 0;
}

// The deposit's spread into the dose; moved: A_stream has run in this step;
// reg: the step's source region (NULL: the whole grid), with slots each
// slot's box where the step visits those.
inline spread_args spread_of(const cuda_ctx *c, int moved, const active_regions *reg)
{
    const box4 *sb = reg && slot_boxes_visited(c) ? c->slot_boxes : nullptr;
    return spread_args{ c->dose, c->dmap, c->paths, c->d,      c->stt,  c->mass,  &c->state->step,
                        moved,   reg,     sb,       c->nslots, c->stop, c->blocks };
}

// 1 when the single pass takes the spectral tallies (those of its unsplit
// steps; decide_fused_extras, backend_cuda_setup.cu).
inline bool fused_takes_tallies(const cuda_ctx *c)
{
    return c->fused_tallies > 0;
}

// 1 when the single pass's split instance writes its steps' direction sums
// for the plane kernel (fused.cuh, spec_wsum; decide_fused_extras): where
// the pass takes the tallies and the sums cost the split instance no
// resident block, without slots. With slots it visits each slot's box, and
// cells of the bins' boxes between the slots would keep older sums: there
// the two tally kernels run before the step, as where the pass does not
// take them.
inline bool split_sums(const cuda_ctx *c)
{
    return c->split_sums != 0;
}

// The slots' fields of a one-pass kernel's (or the bookkeeping's and the
// window shift's) arguments: each slot's box, the tiles before each slot's,
// the slot count and the bins each row's column groups hold.
template <typename Args>
inline void take_slots(Args &a, const cuda_ctx *c)
{
    a.slot_boxes = c->slot_boxes;
    a.slot_pref = c->slot_pref;
    a.nslots = c->nslots;
    a.gbins = c->gbins;
}

// The spectral tallies a one pass takes inside it (none where `takes` is 0)
// and the planes they add to.
template <typename Args>
inline void take_tallies(Args &a, const cuda_ctx *c, bool takes)
{
    a.spec = takes ? c->tally : spectral_tables_dev{};
    a.spec_dose = c->dose;
}

// The fused kernel psi_a -> psi_b (fused_theta_energy), or the whole step
// alternating between them (fused_step).
inline fused_args fused_of(const cuda_ctx *c)
{
    fused_args A;
    A.psi0 = c->psi_a;
    A.psi1 = c->psi_b;
    A.step = &c->state->step;
    A.dmap = c->dmap;
    A.d = c->d;
    A.at = c->at;
    A.ft = c->ft;
    A.st = c->stt;
    A.threshold = c->threshold;
    A.box_a = c->box_a;
    A.box_next = c->box_next;
    A.reg = c->reg;
    A.stop = c->stop;
    A.partials = c->partials;
    A.blocks = c->blocks;
    A.kp = c->opt.cuda.fused_kp_cap;
    A.tiles = c->tiles;
    A.split = c->split;
    A.cluster_launch = c->cluster_launch;
    take_slots(A, c);
    take_tallies(A, c, fused_takes_tallies(c));
    A.spec_wsum = split_sums(c) ? c->tally_wsum : nullptr;
    A.em = energy_media_dev{}; // one medium
    A.reach = 0;
    return A;
}

// 1 when this run's steps take spectral tallies (the halo's released energy,
// LET, the dose to water).
inline bool spectral_tallies_due(const cuda_ctx *c)
{
    return c->planes > 1 && (c->opt.only_op < 0 || c->opt.only_op == OP_ENERGY);
}

// 1 when the one pass of a run with media takes them: on its unsplit steps
// (the tally kernels take those it splits); its shared memory holds their
// sums wherever it runs (fused_media_step_supported).
inline bool media_takes_tallies(const cuda_ctx *c)
{
    return c->pipe.kind == PIPE_FUSED_ONE_PASS && c->media_single && spectral_tallies_due(c);
}

// The single pass of a run with media (fused_step with em set), psi
// alternating between psi_a and psi_b: one tile a block, no padded stage,
// its split steps' direction sums where split_sums (else their tallies run
// apart).
inline fused_args fused_media_of(const cuda_ctx *c)
{
    fused_args A = fused_of(c);
    A.ft = fused_tables_dev{};
    A.kp = 0;
    A.em = c->em;
    A.reach = c->media_reach;
    take_tallies(A, c, media_takes_tallies(c)); // spec_wsum: fused_of's
    return A;
}

// The one pass's arguments: with media its media instances'.
inline fused_args one_pass_of(const cuda_ctx *c)
{
    return c->media_single ? fused_media_of(c) : fused_of(c);
}

// The measure of psi_a (the paths that do not measure inside a kernel).
inline measure_args measure_of(const cuda_ctx *c)
{
    return measure_args{ c->psi_a, c->d, c->et.E, c->stop, c->partials, c->front_part, c->blocks };
}

// The end-of-step bookkeeping with the energy tables et (each bin's target
// range) and the boxes and regions of the paths that keep them; single_pass:
// psi alternates. Without slots (nslots 0).
inline finish_args finish_of(const cuda_ctx *c, const energy_tables_dev &et, int single_pass)
{
    finish_args a;
    a.partials = c->partials;
    a.slots = c->slots;
    a.front_part = c->front_part;
    a.blocks = c->blocks;
    a.ring = c->ring;
    a.st = c->state;
    a.stop = c->stop;
    a.ne = (int)c->d.ne;
    a.box_a = c->box_a;
    a.box_next = c->box_next;
    a.reg = c->reg;
    a.et = et;
    a.single_pass = single_pass;
    a.slot_boxes = nullptr;
    a.slot_pref = nullptr;
    a.nslots = 0;
    a.gbins = group_bins_dev{};
    a.nz = (int)c->d.nz;
    return a;
}

// The same after a one pass (psi alternates), whose slots' boxes and column
// groups' bins it moves on.
inline finish_args finish_of_slots(const cuda_ctx *c, const energy_tables_dev &et)
{
    finish_args a = finish_of(c, et, 1);
    take_slots(a, c);
    return a;
}

// backend_cuda_setup.cu
int cuda_setup(void **out, const sim_tables *s, smx_error *err);
// From the fused, single_pass, media_regions, media_single and ncomp choices:
// the pipeline enqueue_step takes (c->pipe).
void choose_pipeline(cuda_ctx *c);
// The tables' medium map (s->mm->cell) to the device again: a window's map
// changes with the spot and as the window moves (transport/window.h).
int cuda_medium_upload(cuda_ctx *c, smx_error *err);
// Lowest and highest target bin of source bin ie over every medium's tables
// (y < 0: it stops in all of them).
int2 target_range(const sim_tables *s, int ie);

// Dose plane q stays on the device: the halo's blocks are kept there
// (halo_keep) and q is one of the released energy's planes.
inline bool halo_plane_kept(const cuda_ctx *c, int q)
{
    return c->keep_halo && q >= c->hb.plane0 && q < c->hb.plane0 + c->hb.bands;
}

// backend_cuda.cu: the table's entry points (backend_ops)
int cuda_upload(void *vctx, const float *psi0, const grid_box *occupied, double w0, double e0,
                smx_error *err);
int cuda_step(void *vctx, int64_t n, smx_error *err);
int cuda_collect(void *vctx, step_record *out, int max, int *n_out, smx_error *err);
int cuda_shift(void *vctx, int rows, double *dose_out, smx_error *err);
int cuda_can_shift(void *vctx);
int cuda_snapshot_begin(void *vctx, smx_error *err);
int cuda_snapshot_wait(void *vctx, const float **psi, smx_error *err);
int cuda_download_dose(void *vctx, double *dose, smx_error *err);
void cuda_describe(void *vctx, run_result *r);
void cuda_release(void *vctx);
int cuda_lanes(void *vctx);
// backend_cuda_halo.cu: the nuclear halo's per-spot blocks and transforms
int cuda_halo_convolve(void *vctx, const halo_fft_job *job, smx_error *err);
int cuda_halo_keep(void *vctx, const halo_block_spec *spec, smx_error *err);
// The buffer holding the state after the steps enqueued so far.
const float *current_psi(const cuda_ctx *c);

// backend_cuda_angular.cu: sets c->angular (and the hybrid's runs) for the whole run.
int cuda_choose_angular(cuda_ctx *c, smx_error *err);
// A_theta from `in` to `out` with the chosen method(s).
cudaError_t launch_theta(cuda_ctx *c, const float *in, float *out);

// backend_cuda_bench.cu: the benchmark's hooks (transport/backend_bench.h).
int cuda_bench_steps(void *vctx, int64_t first, int count, double *ms, smx_error *err);
int cuda_bench_op(void *vctx, int op, double *ms, smx_error *err);
int cuda_bench_copy(void *vctx, double *bps, smx_error *err);
void cuda_bench_facts(void *vctx, int *launches, double *bytes_dense, double *mem_used);

#endif
