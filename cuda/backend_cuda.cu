// CUDA backend: the same entry points as the CPU backend (src/transport/backend.h), with
// the tables built by the shared host code and the operators as kernels.
//
// Buffers: psi_a holds the state between steps. theta and stream are out of
// place and energy works in place, so each step goes a -> b -> b -> a (in any
// operator order) and one captured CUDA graph replays every step.
// Every device buffer comes from one arena allocated at setup and sized from
// the plan; the step loop allocates nothing, copies nothing and never waits for
// the host: tallies go to a ring of per-step records that the host collects
// every collect_every steps, and an auto run ends on the device (stop flag).
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <vector>

extern "C" {
#include "transport/backend.h"
#include "transport/device_query.h"
}
#include "angular.cuh"
#include "check.cuh"
#include "common.cuh"
#include "energy.cuh"
#include "fused.cuh"
#include "streaming.cuh"

#define RING 64
#define MAX_RUNS 32 // theta launches of the hybrid; more runs fall back to one method // steps between collects; the record ring holds one interval

struct step_rec_dev {
    double f[TF_COUNT];
    double w_in, e_in;
    int front;
    int stopped;
};

struct run_state_dev {
    double w_prev, e_prev;
    double stop_below; // auto: weight threshold; < 0 = fixed step count
    int64_t step;      // steps completed
    int n_since;       // records written since the last collect
};

struct cuda_ctx {
    const sim_tables *s;
    const grid *g;
    dev_dims d;
    int blocks;
    int cluster_launch; // the fused kernel runs in thread-block clusters (fused.cuh)
    int tiles;          // tiles per block of the fused kernel's unsplit instance (fused.cuh)
    cudaStream_t stream, copy;
    cudaEvent_t ev_step, ev_copy;
    cudaGraphExec_t graph;
    int use_graph;
    // arena and its pieces
    char *arena;
    size_t arena_bytes;
    float *psi_a, *psi_b;
    double *dose;
    double *partials; // [TF_COUNT][blocks]
    int *front_part;  // [blocks]
    box4 *box_a;      // [ne] where psi_a is non-zero (fused path)
    box4 *box_next;   // [ne] collected by streaming for the next step
    active_regions *reg;
    int4 reach;       // min/max whole-cell move in z and x over directions
    step_rec_dev *ring;
    run_state_dev *state;
    int *stop;
    angular_tables_dev at;
    energy_tables_dev et;
    fused_tables_dev ft;
    fused_split_dev split; // the fused kernel's energy split of steps with few tiles
    stream_tables_dev stt;
    void *fft_mem;
    angular_fft *fft;
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
    int fused;          // theta + energy in one kernel, stream measures the step
    int single_pass;    // fused and shift streaming: the whole step is one kernel
    // Single pass: the state alternates between psi_a (even step count) and
    // psi_b (odd). The host's count: steps enqueued, set back to the device's
    // count when a collect sees the run end (later steps changed nothing).
    int64_t enqueued;
    float threshold;
    // host side
    float *pinned;   // snapshot buffer
    gpu_info info;
    char variants[768];
    char angular_why[240];
};

// ---------------------------------------------------------------------------
// Kernels owned by the backend: the end-of-step measure and bookkeeping.

__global__ void measure_kernel(const float *__restrict__ psi, dev_dims d, const double *E,
                               const int *stop, double *partials, int *front_part, int blocks)
{
    if (*stop)
        return;
    double w = 0.0, e = 0.0;
    int front = -1;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < d.cells; i += stride) {
        const float v = psi[i];
        if (v != 0.0f) {
            const int64_t ie = i / (d.nth * d.slice);
            const int z = (int)((i % d.slice) / d.px);
            w += v;
            e += (double)v * E[ie];
            front = z > front ? z : front;
        }
    }
    __shared__ double scratch[SMX_WARPS];
    __shared__ int fmax_s[SMX_WARPS];
    double sw = block_sum(w, scratch);
    if (threadIdx.x == 0)
        partials[(int64_t)TF_W_OUT * blocks + blockIdx.x] = sw;
    double se = block_sum(e, scratch);
    if (threadIdx.x == 0)
        partials[(int64_t)TF_E_OUT * blocks + blockIdx.x] = se;
    for (int off = 16; off > 0; off >>= 1)
        front = max(front, __shfl_down_sync(0xffffffffu, front, off));
    if ((threadIdx.x & 31) == 0)
        fmax_s[threadIdx.x >> 5] = front;
    __syncthreads();
    if (threadIdx.x == 0) {
        int m = -1;
        for (int k = 0; k < SMX_WARPS; k++)
            m = max(m, fmax_s[k]);
        front_part[blockIdx.x] = m;
    }
}

// Source bins that hold weight and the target bins they move to (the second
// target only when it receives a non-zero coefficient). Host side (upload).
static void active_bin_ranges(const box4 *box, int ne, const int *target, const float *c_hi,
                              active_regions *reg)
{
    int slo = ne, shi = -1, tlo = ne, thi = -1;
    for (int k = 0; k < ne; k++) {
        if (box_is_empty(box[k]))
            continue;
        slo = min(slo, k);
        shi = max(shi, k);
        const int t = target[k];
        if (t >= 0) {
            tlo = min(tlo, t);
            thi = max(thi, bin_target_hi(t, c_hi[k], ne));
        }
    }
    reg->src_lo = slo, reg->src_hi = shi, reg->tgt_lo = tlo, reg->tgt_hi = thi;
}

// One block: sums the partials field by field in block order (deterministic),
// writes the step's record and decides the auto stop. Fused path: the boxes
// measured this step become the state (per bin, spread over the threads; the
// unions and bin ranges are min/max reductions, so their order does not
// matter). A single thread walking ne boxes or `blocks` fronts would pay one
// memory latency each, tens of microseconds per step. The kernel is on every
// step's critical path, so each independent load is issued at its start
// (the stop flag, the run state, the first box of each thread) and the
// flag is tested only before the first store to global memory.
__global__ void finish_kernel(const double *partials, int slots, const int *front_part, int blocks,
                              step_rec_dev *ring, run_state_dev *st, int *stop, int ne,
                              box4 *box_a, box4 *box_next, active_regions *reg,
                              energy_tables_dev et, int single_pass)
{
    __shared__ double sums[TF_COUNT];
    __shared__ int red[9]; // occupied z0 z1 x0 x1, src lo hi, tgt lo hi, front
    const int t = threadIdx.x, lane = t & 31, warp = t >> 5;
    const int stopped = *stop; // the same for every thread
    run_state_dev rs;
    active_regions rg;
    // Read here, before any store: a store between two loads that may alias
    // makes each load wait for the previous round trip.
    if (t == 0) {
        rs = *st;
        if (box_a)
            rg = *reg;
    }
    box4 b_first = box_empty4(); // bin t's box, target and fraction (the loop's first iteration)
    int tg_first = -1;
    float chi_first = 0.0f;
    if (box_a && t < ne) {
        b_first = box_next[t];
        tg_first = et.target[t];
        chi_first = et.c_hi[t];
    }
    if (t < 9)
        red[t] = (t == 0 || t == 2 || t == 4 || t == 6) ? INT_MAX : -1;
    // One warp per field: each lane sums a fixed stride of the block partials,
    // then a shuffle tree; the order is fixed, so the result is deterministic.
    // Eight loads are issued before their adds: one at a time, the ~33
    // partials of a lane cost 10 us per step (Nsight Compute, H100).
    for (int f = warp; f < TF_COUNT; f += blockDim.x / 32) {
        double v = 0.0;
        for (int sl = 0; sl < slots; sl++) {
            const double *p = partials + ((int64_t)sl * TF_COUNT + f) * blocks;
            int b = lane;
            for (; b + 7 * 32 < blocks; b += 8 * 32) {
                double a[8];
#pragma unroll
                for (int u = 0; u < 8; u++)
                    a[u] = p[b + u * 32];
#pragma unroll
                for (int u = 0; u < 8; u++)
                    v += a[u];
            }
            for (; b < blocks; b += 32)
                v += p[b];
        }
        for (int off = 16; off > 0; off >>= 1)
            v += __shfl_down_sync(0xffffffffu, v, off);
        if (lane == 0)
            sums[f] = v;
    }
    if (stopped)
        return; // uniform: nothing is written after the run stopped
    __syncthreads(); // red initialised
    if (box_a) {
        // Each thread's extremes, then one warp reduction and one shared
        // atomic per warp and value: per-thread atomics on the same eight
        // words serialise within each warp.
        int zlo = INT_MAX, zhi = -1, xlo = INT_MAX, xhi = -1, slo = INT_MAX, shi = -1, tlo = INT_MAX, thi = -1;
        for (int k = t; k < ne; k += blockDim.x) {
            const bool first = k == t;
            const box4 b = first ? b_first : box_next[k];
            const int tg = first ? tg_first : et.target[k];
            const float chi = first ? chi_first : et.c_hi[k];
            box_a[k] = b;
            box_next[k] = box_empty4();
            if (box_is_empty(b))
                continue;
            zlo = min(zlo, b.z0), zhi = max(zhi, b.z1);
            xlo = min(xlo, b.x0), xhi = max(xhi, b.x1);
            slo = min(slo, k), shi = max(shi, k);
            if (tg >= 0) {
                tlo = min(tlo, tg);
                thi = max(thi, bin_target_hi(tg, chi, ne));
            }
        }
        const unsigned all = 0xffffffffu; // blockDim.x is whole warps
        zlo = __reduce_min_sync(all, zlo), zhi = __reduce_max_sync(all, zhi);
        xlo = __reduce_min_sync(all, xlo), xhi = __reduce_max_sync(all, xhi);
        slo = __reduce_min_sync(all, slo), shi = __reduce_max_sync(all, shi);
        tlo = __reduce_min_sync(all, tlo), thi = __reduce_max_sync(all, thi);
        if (lane == 0 && shi >= 0) {
            atomicMin(&red[0], zlo), atomicMax(&red[1], zhi);
            atomicMin(&red[2], xlo), atomicMax(&red[3], xhi);
            atomicMin(&red[4], slo), atomicMax(&red[5], shi);
            atomicMin(&red[6], tlo), atomicMax(&red[7], thi);
        }
    } else {
        int m = -1;
        for (int b = t; b < blocks; b += blockDim.x)
            m = max(m, front_part[b]);
        atomicMax(&red[8], m);
    }
    __syncthreads();
    if (t != 0)
        return;
    int front = red[8];
    if (box_a) {
        // Where the buffer written next step holds values now: the two-pass
        // step overwrites psi_b, which holds this step's theta+energy output
        // (the targets); the single pass overwrites the buffer of this step's
        // input (the sources).
        rg.written = rg.occupied;
        rg.wtgt_lo = single_pass ? rg.src_lo : rg.tgt_lo;
        rg.wtgt_hi = single_pass ? rg.src_hi : rg.tgt_hi;
        rg.occupied = red[1] >= 0 ? box4{red[0], red[1], red[2], red[3]} : box_empty4();
        rg.src_lo = red[5] >= 0 ? red[4] : ne, rg.src_hi = red[5];
        rg.tgt_lo = red[7] >= 0 ? red[6] : ne, rg.tgt_hi = red[7];
        *reg = rg;
        front = red[1];
    }
    step_rec_dev r;
    for (int k = 0; k < TF_COUNT; k++)
        r.f[k] = sums[k];
    r.w_in = rs.w_prev;
    r.e_in = rs.e_prev;
    r.front = front;
    r.stopped = rs.stop_below >= 0.0 && sums[TF_W_OUT] < rs.stop_below;
    ring[rs.n_since % RING] = r;
    rs.w_prev = sums[TF_W_OUT];
    rs.e_prev = sums[TF_E_OUT];
    rs.step++;
    rs.n_since++;
    *st = rs;
    if (r.stopped)
        *stop = 1;
}

// ---------------------------------------------------------------------------

static size_t align_up(size_t n) { return (n + 255) & ~(size_t)255; }

// Blocks of the grid-stride kernels per SM, counted in tiles of the fused
// kernel (its unsplit blocks hold FUSED_SUB tiles each): one wave of the fused
// kernel for up to 32 directions (two resident blocks of two tiles per SM),
// two waves of its one-block-per-SM form above. Measured on the H100 with the
// sub-tiles (e1fc247): for up to 32 directions, 8 per SM gave the dense
// Production step 0.991 against 1.005 ms but the pencil run 16.2 against 14.3
// ms; for 64 directions, 4 per SM against 8 gave the same dense Stress step
// (15.16 ms) and its pencil step 0.030 against 0.033 ms, with half the split
// scratch (2 per SM: dense Stress 15.36 ms). Before the sub-tiles (f95b42e +
// 1): 4 per SM against 8 gave the Production pencil run 15.1 against 16.5 ms.
#define BLOCKS_PER_SM 4
static_assert(BLOCKS_PER_SM % (FUSED_SUB * FUSED_CLUSTER) == 0,
              "the fused kernel's unsplit grid (blocks / FUSED_SUB) is whole clusters");

// Most tiles a step may have for the fused kernel to split their energy range
// across blocks (with more, every block already has a tile); 0 where no fused
// kernel can run (more than 64 directions).
static int split_tiles_for(const grid *g, int blocks) { return g->nth <= 64 ? blocks / 2 : 0; }

// The device layout of the grid. Rows are padded to row_pitch_for where the
// fused kernels run (pad_rows): their tiles of 32 columns then read and store
// whole lines. The kernels of the other paths sweep psi cell by cell and would
// only sweep the padding too (on the Production grid 12 % more cells: their
// dense steps took 9-11 % longer with it, the warp-aggregated streaming 3 %;
// BENCHMARKS.md, session 9). The test
// hook s->cuda_pad_rows pads every path (s may be NULL: no test hooks).
static dev_dims dev_dims_for(const grid *g, const sim_tables *s, bool pad_rows)
{
    const bool force = s && s->cuda_pad_rows;
    const int64_t px = pad_rows || force ? row_pitch_for(g->nx, force) : g->nx, slice = g->nz * px;
    return dev_dims{g->ne, g->nth, g->nz, g->nx, px, slice, g->ne * g->nth * slice};
}

// Bytes of device memory the plan needs (the arena) with the layout d, before any allocation.
static size_t arena_bytes_for(const grid *g, const sim_tables *s, const dev_dims &d, int blocks,
                              size_t fft_bytes)
{
    size_t ne = (size_t)g->ne, nth = (size_t)g->nth, nk = s ? (size_t)s->ak.n_kernels : ne;
    size_t nw = s ? (size_t)(s->ak.offset[nk - 1] + 2 * s->ak.half_width[nk - 1] + 1) : ne * 64;
    size_t b = 0;
    b += 2 * align_up((size_t)d.cells * sizeof(float));
    b += align_up((size_t)d.slice * sizeof(double));
    b += align_up((size_t)(MAX_RUNS + 1) * TF_COUNT * blocks * sizeof(double)) + align_up(blocks * sizeof(int));
    b += align_up(RING * sizeof(step_rec_dev)) + align_up(sizeof(run_state_dev)) + align_up(sizeof(int));
    b += align_up(nw * sizeof(float)) + 2 * align_up(nk * sizeof(int)) + align_up(ne * sizeof(int));
    b += align_up(ne * sizeof(int4)) + align_up(ne * sizeof(fused_bin)) + align_up(nk * sizeof(double));
    b += align_up(2 * ne * sizeof(float4));
    b += align_up(nk * 64 * sizeof(float)) + align_up(ne * sizeof(int)); // fused boundary rows (at most)
    b += align_up(nk * nth * sizeof(double)) + align_up(ne * sizeof(double)) * 2 + align_up(ne * sizeof(int));
    b += 2 * align_up(ne * sizeof(float)) + align_up(ne * sizeof(energy_gather_dev));
    b += 2 * align_up(nth * sizeof(int)) + align_up(4 * nth * sizeof(float)) + 2 * align_up(nth * sizeof(double));
    b += 2 * align_up(ne * sizeof(box4)) + align_up(sizeof(active_regions));
    const int st = split_tiles_for(g, blocks); // the fused kernel's energy split
    b += align_up(fused_split_ws_doubles(g->nth, g->ne, st) * sizeof(double)) + align_up(st * sizeof(int));
    b += fft_bytes;
    return b;
}

extern "C" double backend_cuda_device_bytes(const grid *g)
{
    // an H100's 132 SMs, rows padded as the default one-pass path pads them
    return (double)arena_bytes_for(g, NULL, dev_dims_for(g, NULL, true), 132 * BLOCKS_PER_SM, 0);
}

struct arena_cursor {
    char *base;
    size_t used;
    template <class T> T *take(size_t n)
    {
        T *p = (T *)(base + used);
        used += align_up(n * sizeof(T));
        return p;
    }
};

template <class T>
static int upload_array(T *dst, const T *src, size_t n, smx_error *err)
{
    CUDA_CHECK_ERR(err, cudaMemcpy(dst, src, n * sizeof(T), cudaMemcpyHostToDevice));
    return 0;
}

static void cuda_release(void *vctx);

// A_theta on energy bins lo..hi only, with one method: the kernels see the
// range as a grid of its own (pointers and per-bin tables offset to lo).
static cudaError_t theta_on_range(cuda_ctx *c, const float *in, float *out, int lo, int hi, int fft,
                                  double *part)
{
    if (fft)
        return angular_fft_apply_range(c->fft, in, out, lo, hi, c->stop, part, c->blocks, c->stream);
    const int64_t bin = c->d.nth * c->d.slice;
    dev_dims dr = c->d;
    dr.ne = hi - lo + 1;
    dr.cells = dr.ne * bin;
    angular_tables_dev tr = c->at;
    tr.kernel_of_energy += lo;
    tr.E += lo;
    return angular_direct(in + lo * bin, out + lo * bin, dr, tr, c->threshold, c->stop, part,
                          c->blocks, c->stream);
}

// A_theta from `in` to `out` with the chosen method(s).
static cudaError_t launch_theta(cuda_ctx *c, const float *in, float *out)
{
    if (c->angular == 2)
        return angular_fft_apply(c->fft, in, out, c->stop, c->partials, c->blocks, c->stream);
    if (c->angular == 1)
        return angular_direct_global(in, out, c->d, c->at, c->threshold, c->stop, c->partials,
                                     c->blocks, c->stream);
    if (c->angular == 0)
        return angular_direct(in, out, c->d, c->at, c->threshold, c->stop, c->partials, c->blocks,
                              c->stream);
    for (int r = 0; r < c->n_runs; r++) {
        double *part = c->partials + (int64_t)(r + 1) * TF_COUNT * c->blocks;
        cudaError_t e = theta_on_range(c, in, out, c->run_lo[r], c->run_hi[r], c->run_fft[r], part);
        if (e != cudaSuccess)
            return e;
    }
    return cudaSuccess;
}

// The fused path: A_theta + A_E (with the deposit) in one pass a -> b, then
// streaming b -> a measuring its own output. Three kernels and a memset.
// Single pass (shift streaming): one kernel, psi[step & 1] -> the other, which
// writes every partials field itself, and the bookkeeping.
static int enqueue_fused_step(cuda_ctx *c, smx_error *err)
{
    if (c->single_pass) {
        CUDA_CHECK_ERR(err, fused_step(c->psi_a, c->psi_b, &c->state->step, c->dose, c->d, c->at,
                                       c->ft, c->stt, c->threshold, c->box_a, c->box_next, c->reg,
                                       c->stop, c->partials, c->blocks, c->cluster_launch,
                                       c->s->fused_kp_cap, c->tiles, c->split, c->stream));
        finish_kernel<<<1, 32 * TF_COUNT, 0, c->stream>>>(
            c->partials, c->slots, c->front_part, c->blocks, c->ring, c->state, c->stop, (int)c->d.ne,
            c->box_a, c->box_next, c->reg, c->et, 1);
        CUDA_CHECK_LAUNCH(err);
        return 0;
    }
    CUDA_CHECK_ERR(err, cudaMemsetAsync(c->partials, 0,
                                        (size_t)c->slots * TF_COUNT * c->blocks * sizeof(double),
                                        c->stream));
    CUDA_CHECK_ERR(err, fused_theta_energy(c->psi_a, c->psi_b, c->dose, c->d, c->at,
                                           c->ft, c->threshold, c->box_a, c->reg, c->stop, c->partials,
                                           c->blocks, c->cluster_launch, c->s->fused_kp_cap, c->tiles, c->split,
                                           c->stream));
    CUDA_CHECK_ERR(err, stream_gather_and_measure(c->psi_b, c->psi_a, &c->state->step, c->d, c->stt,
                                                  c->reg, c->reach, c->box_next, c->stop,
                                                  c->partials, c->blocks, c->stream));
    finish_kernel<<<1, 32 * TF_COUNT, 0, c->stream>>>(
        c->partials, c->slots, c->front_part, c->blocks, c->ring, c->state, c->stop, (int)c->d.ne, c->box_a,
        c->box_next, c->reg, c->et, 0);
    CUDA_CHECK_LAUNCH(err);
    return 0;
}

// Enqueues one step on c->stream (also used inside graph capture).
static int enqueue_step(cuda_ctx *c, smx_error *err)
{
    if (c->fused)
        return enqueue_fused_step(c, err);
    const plan *p = c->s->p;
    CUDA_CHECK_ERR(err, cudaMemsetAsync(c->partials, 0,
                                        (size_t)c->slots * TF_COUNT * c->blocks * sizeof(double),
                                        c->stream));
    float *cur = c->psi_a, *oth = c->psi_b; // where the data is, and the other buffer
    for (int k = 0; k < PLAN_ORDER_MAX; k++) {
        int op = p->operator_order[k];
        if (c->s->only_op >= 0 && op != c->s->only_op)
            continue;
        cudaError_t e = cudaSuccess;
        if (op == OP_THETA) {
            e = launch_theta(c, cur, oth);
            float *t = cur;
            cur = oth;
            oth = t;
        } else if (op == OP_ENERGY) {
            e = energy_deposit(cur, c->dose, c->d, c->et, c->stop, c->partials, c->blocks, c->stream);
            if (e == cudaSuccess)
                e = energy_move(c->energy_gather, cur, c->d, c->et, c->stop, c->blocks, c->stream);
        } else {
            e = stream_launch(c->stream_variant, cur, oth, &c->state->step, c->d, c->stt, c->stop,
                              c->partials, c->blocks, c->stream);
            float *t = cur;
            cur = oth;
            oth = t;
        }
        if (e != cudaSuccess)
            return smx_fail(err, SMX_EXIT_RUNTIME, "%s: operator %d launch failed: %s", __FILE__, op,
                            cudaGetErrorString(e));
    }
    // Test hooks may apply one out-of-place operator: bring the data home.
    if (cur != c->psi_a)
        CUDA_CHECK_ERR(err, cudaMemcpyAsync(c->psi_a, cur, (size_t)c->d.cells * sizeof(float),
                                            cudaMemcpyDeviceToDevice, c->stream));
    measure_kernel<<<c->blocks, SMX_THREADS, 0, c->stream>>>(c->psi_a, c->d, c->et.E, c->stop,
                                                             c->partials, c->front_part, c->blocks);
    CUDA_CHECK_LAUNCH(err);
    finish_kernel<<<1, 32 * TF_COUNT, 0, c->stream>>>(
        c->partials, c->slots, c->front_part, c->blocks, c->ring, c->state, c->stop, (int)c->d.ne, NULL, NULL,
        NULL, c->et, 0);
    CUDA_CHECK_LAUNCH(err);
    return 0;
}

static int cuda_setup(void **out, const sim_tables *s, smx_error *err)
{
    const grid *g = s->g;
    const plan *p = s->p;
    cuda_ctx *c = (cuda_ctx *)calloc(1, sizeof *c);
    if (!c)
        return smx_fail(err, SMX_EXIT_RUNTIME, "out of memory");
    *out = NULL;
    c->s = s;
    c->g = g;
    c->d = dev_dims_for(g, s, true); // the fused kernels' layout, for their preconditions below
    gpu_query(&c->info);
    if (c->info.count == 0) {
        smx_fail(err, SMX_EXIT_RUNTIME, "no usable CUDA device: %s", c->info.why_none);
        free(c);
        return SMX_EXIT_RUNTIME;
    }
    CUDA_CHECK_ERR(err, cudaSetDevice(0));
    cudaDeviceProp prop;
    CUDA_CHECK_ERR(err, cudaGetDeviceProperties(&prop, 0));
    c->blocks = prop.multiProcessorCount * BLOCKS_PER_SM;
    c->cluster_launch = prop.clusterLaunch != 0; // sm_90 on (fused.cuh, FUSED_CLUSTER)

    // Variants, decided before the arena is sized (the FFT needs memory).
    c->energy_gather = s->energy_gather;
    switch (p->variant_stream) {
    case VAR_S_ATOMIC: c->stream_variant = SV_ATOMIC; break;
    case VAR_S_WARP: c->stream_variant = prop.major >= 7 ? SV_WARP : SV_FALLBACK; break;
    case VAR_S_FALLBACK: c->stream_variant = SV_FALLBACK; break;
    default: c->stream_variant = SV_GATHER; break; // deterministic and atomic-free
    }
    int mhw = s->ak.max_half_width;
    size_t smem = angular_direct_smem_bytes(g->nth, mhw);
    int smem_ok = smem <= (size_t)prop.sharedMemPerBlockOptin;
    c->angular = smem_ok ? 0 : 1;
    snprintf(c->angular_why, sizeof c->angular_why, "%s", smem_ok ? "direct" :
             "direct-global (shared memory limit)");
    int want_fft = p->variant_angular == VAR_A_FFT ||
                   (p->variant_angular == VAR_A_AUTO && g->angle_mode == ANGLE_FULL);
    // cuFFT cannot read the device stop flag: after an auto run ends on the
    // device, steps still enqueued would run the FFT. Its output is the scratch
    // buffer only when theta comes first, so that is required for auto runs.
    if (want_fft && p->steps == 0 && p->operator_order[0] != OP_THETA) {
        if (p->variant_angular == VAR_A_FFT)
            smx_warn("backend.angular: fft with steps: auto needs theta first in "
                     "transport.operator_order; using direct\n");
        want_fft = 0;
    }
    if (want_fft && g->angle_mode != ANGLE_FULL) {
        smx_warn("backend.angular: fft needs the full-circle angular grid; using direct\n");
        want_fft = 0;
    }
    // Fusion keeps the exact operations of the unfused kernels, so it is taken
    // whenever its preconditions hold (not where the plan puts every bin on
    // the FFT: cuda_upload turns fusion off when the FFT serves any bin).
    c->fused = p->fused && s->only_op < 0 && c->angular == 0 && c->energy_gather &&
               !(want_fft && p->variant_angular == VAR_A_FFT && s->force_fft_from == 0) &&
               c->stream_variant == SV_GATHER && fused_theta_energy_supported(g->nth, c->d.slice, g->ne, mhw) &&
               p->operator_order[0] == OP_THETA && p->operator_order[1] == OP_ENERGY &&
               p->operator_order[2] == OP_STREAM;
    c->single_pass =
        c->fused && s->st.scheme == STREAM_SHIFT && fused_step_supported(g->nth, c->d.slice, g->ne, mhw);
    // FUSED_SUB tiles per block, or one on grids too large for that many stage rings.
    c->tiles = c->fused ? fused_tiles_per_block(g->nth, g->ne, mhw, c->single_pass, s->fused_kp_cap,
                                                s->fused_one_tile)
                        : 0;
    if (!c->fused)
        c->d = dev_dims_for(g, s, false);
    size_t fft_bytes = want_fft ? angular_fft_bytes(c->d, s->ak.n_kernels) : 0;

    size_t need = arena_bytes_for(g, s, c->d, c->blocks, fft_bytes);
    double cap = p->gpu_memory_fraction * (double)prop.totalGlobalMem;
    if (p->gpu_memory_bytes > 0 && p->gpu_memory_bytes < cap)
        cap = p->gpu_memory_bytes;
    if ((double)need > cap) {
        free(c);
        return plan_fail_at(p, err, "backend.gpu_memory_fraction",
                            "the grid needs %.3f GB of device memory, the cap is %.3f GB (%s, "
                            "%.3f GB total); expected a smaller grid or a larger cap",
                            need / 1e9, cap / 1e9, prop.name, prop.totalGlobalMem / 1e9);
    }
    cudaError_t e = cudaMalloc(&c->arena, need);
    if (e != cudaSuccess) {
        free(c);
        return smx_fail(err, SMX_EXIT_RUNTIME, "cudaMalloc of the %.3f GB arena failed: %s",
                        need / 1e9, cudaGetErrorString(e));
    }
    c->arena_bytes = need;
    *out = c; // from here on cuda_release cleans up

    arena_cursor a{c->arena, 0};
    size_t ne = g->ne, nth = g->nth, nk = s->ak.n_kernels;
    size_t nw = s->ak.offset[nk - 1] + 2 * s->ak.half_width[nk - 1] + 1;
    c->psi_a = a.take<float>(c->d.cells);
    c->psi_b = a.take<float>(c->d.cells);
    c->dose = a.take<double>(c->d.slice);
    c->partials = a.take<double>((size_t)(MAX_RUNS + 1) * TF_COUNT * c->blocks);
    c->slots = 1;
    c->front_part = a.take<int>(c->blocks);
    c->ring = a.take<step_rec_dev>(RING);
    c->state = a.take<run_state_dev>(1);
    c->stop = a.take<int>(1);
    c->box_a = a.take<box4>(ne);
    c->box_next = a.take<box4>(ne);
    c->reg = a.take<active_regions>(1);
    if (const int st = split_tiles_for(g, c->blocks)) {
        c->split = fused_split_dev{a.take<double>(fused_split_ws_doubles(g->nth, g->ne, st)), a.take<int>(st),
                                   s->fused_split_off ? 0 : st};
        CUDA_CHECK_ERR(err, cudaMemset(c->split.count, 0, st * sizeof(int)));
    }
    float *w = a.take<float>(nw);
    int *off = a.take<int>(nk), *hw = a.take<int>(nk), *koe = a.take<int>(ne);
    int4 *bk = a.take<int4>(ne);
    fused_bin *fb = a.take<fused_bin>(ne);
    float4 *edge = a.take<float4>(2 * ne);
    float *bfw = a.take<float>(nk * 64);
    int *bfrow = a.take<int>(ne);
    double *wsum = a.take<double>(nk), *bfrac = a.take<double>(nk * nth);
    double *E = a.take<double>(ne), *dep = a.take<double>(ne);
    int *tg = a.take<int>(ne);
    float *clo = a.take<float>(ne), *chi = a.take<float>(ne);
    energy_gather_dev *gat = a.take<energy_gather_dev>(ne);
    int *ox = a.take<int>(nth), *oz = a.take<int>(nth);
    float *sw = a.take<float>(4 * nth);
    double *sx = a.take<double>(nth), *sz = a.take<double>(nth);
    if (fft_bytes)
        c->fft_mem = a.take<char>(fft_bytes);

    std::vector<energy_gather_dev> hg(ne);
    for (size_t i = 0; i < ne; i++) {
        const energy_gather_entry &ge = s->el.gather[i];
        hg[i] = energy_gather_dev{{ge.src[0], ge.src[1]}, {ge.coeff[0], ge.coeff[1]}, ge.count};
    }
    std::vector<int4> hbk(ne);
    for (size_t i = 0; i < ne; i++) {
        const int k = s->ak.kernel_of_energy[i];
        hbk[i] = int4{k, s->ak.half_width[k], s->ak.offset[k], s->el.target[i]};
    }
    std::vector<fused_bin> hfb(ne);
    for (size_t i = 0; i < ne; i++) {
        const int k = s->ak.kernel_of_energy[i];
        hfb[i] = fused_bin{g->E.centres[i], s->el.deposit_MeV[i], (float)(1.0 - s->ak.weight_sum[k]),
                           (float)g->E.centres[i], s->el.c_lo[i], s->el.c_hi[i]};
    }
    static_assert(FUSED_EDGE == 4, "one float4 per window edge");
    std::vector<float4> hedge(2 * ne, float4{0.0f, 0.0f, 0.0f, 0.0f});
    if (g->angle_mode == ANGLE_WINDOW && nth >= 2 * FUSED_EDGE)
        for (size_t i = 0; i < ne; i++) {
            const double *bf = s->boundary_frac + (size_t)s->ak.kernel_of_energy[i] * nth;
            const double *hi = bf + nth - FUSED_EDGE;
            hedge[2 * i] = float4{(float)bf[0], (float)bf[1], (float)bf[2], (float)bf[3]};
            hedge[2 * i + 1] = float4{(float)hi[0], (float)hi[1], (float)hi[2], (float)hi[3]};
        }
    // The kernels edge_loss does not serve, as float rows of the fused
    // kernel's direction count, for its shared memory (fused_tables_dev).
    const int row_floats = fused_boundary_row_floats((int64_t)nth);
    std::vector<int> hrow(ne, -1), row_of_kernel(nk, -1);
    std::vector<float> hbfw;
    if (c->fused && g->angle_mode == ANGLE_WINDOW && !s->fused_boundary_global)
        for (size_t i = 0; i < ne; i++) {
            const int k = s->ak.kernel_of_energy[i];
            if (s->ak.half_width[k] <= FUSED_EDGE && nth >= 2 * FUSED_EDGE)
                continue; // edge_loss
            if (row_of_kernel[k] < 0) {
                row_of_kernel[k] = (int)(hbfw.size() / row_floats);
                hbfw.resize(hbfw.size() + row_floats, 0.0f);
                for (size_t j = 0; j < nth; j++)
                    hbfw[row_of_kernel[k] * row_floats + j] = (float)s->boundary_frac[(size_t)k * nth + j];
            }
            hrow[i] = row_of_kernel[k];
        }
    int n_wide = (int)(hbfw.size() / row_floats);
    if (n_wide > 0 && !fused_boundary_rows_fit(nth, ne, mhw, c->single_pass, s->fused_kp_cap, c->tiles, n_wide))
        n_wide = 0; // edge rows from angular_tables_dev::boundary_frac in global memory
    c->ft = fused_tables_dev{bk, fb, edge, bfw, bfrow, n_wide};
    int rc = upload_array(w, s->ak.weights, nw, err) || upload_array(off, s->ak.offset, nk, err) ||
             upload_array(bk, hbk.data(), ne, err) || upload_array(fb, hfb.data(), ne, err) ||
             upload_array(edge, hedge.data(), 2 * ne, err) ||
             (n_wide > 0 && (upload_array(bfw, hbfw.data(), hbfw.size(), err) ||
                             upload_array(bfrow, hrow.data(), ne, err))) ||
             upload_array(hw, s->ak.half_width, nk, err) ||
             upload_array(koe, s->ak.kernel_of_energy, ne, err) ||
             upload_array(wsum, s->ak.weight_sum, nk, err) ||
             upload_array(bfrac, s->boundary_frac, nk * nth, err) ||
             upload_array(E, g->E.centres, ne, err) || upload_array(dep, s->el.deposit_MeV, ne, err) ||
             upload_array(tg, (const int *)s->el.target, ne, err) ||
             upload_array(clo, s->el.c_lo, ne, err) || upload_array(chi, s->el.c_hi, ne, err) ||
             upload_array(gat, hg.data(), ne, err) || upload_array(ox, (const int *)s->st.ox, nth, err) ||
             upload_array(oz, (const int *)s->st.oz, nth, err) ||
             upload_array(sw, s->st.w, 4 * nth, err) || upload_array(sx, s->st.sx, nth, err) ||
             upload_array(sz, s->st.sz, nth, err);
    if (rc)
        return err->code;
    c->at = angular_tables_dev{w, off, hw, koe, wsum, bfrac, E, (int)nk, mhw, g->angle_mode == ANGLE_FULL};
    c->et = energy_tables_dev{tg, clo, chi, dep, gat, E};
    c->stt = stream_tables_dev{ox, oz, sw, sx, sz, E, s->st.scheme};
    // How far one step can move weight, over all directions (bounds the active region).
    {
        int zl = 1 << 30, zh = -(1 << 30), xl = 1 << 30, xh = -(1 << 30);
        for (size_t j = 0; j < nth; j++) {
            int z0, z1, x0, x1;
            if (s->st.scheme == STREAM_SHIFT) {
                z0 = (int)floor(s->st.sz[j]), z1 = (int)ceil(s->st.sz[j]);
                x0 = (int)floor(s->st.sx[j]), x1 = (int)ceil(s->st.sx[j]);
            } else {
                z0 = s->st.oz[j], z1 = s->st.oz[j] + 1, x0 = s->st.ox[j], x1 = s->st.ox[j] + 1;
            }
            zl = std::min(zl, z0), zh = std::max(zh, z1), xl = std::min(xl, x0), xh = std::max(xh, x1);
        }
        c->reach = make_int4(zl, zh, xl, xh);
    }

    CUDA_CHECK_ERR(err, cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking));
    CUDA_CHECK_ERR(err, cudaStreamCreateWithFlags(&c->copy, cudaStreamNonBlocking));
    CUDA_CHECK_ERR(err, cudaEventCreateWithFlags(&c->ev_step, cudaEventDisableTiming));
    CUDA_CHECK_ERR(err, cudaEventCreateWithFlags(&c->ev_copy, cudaEventDisableTiming));
    if (smem > 48 * 1024 && smem_ok) {
        // The direct kernel raises its own dynamic shared-memory limit (angular.cu).
    }
    if (fft_bytes) {
        rc = angular_fft_create(&c->fft, c->d, c->at, s->ak.weights, s->ak.offset, s->ak.half_width,
                                c->fft_mem, c->stream, err);
        if (rc)
            return rc;
    }
    if (p->snapshot_every > 0 || p->n_snapshot_steps > 0 || p->snapshot_final)
        CUDA_CHECK_ERR(err, cudaMallocHost(&c->pinned, (size_t)g->cells * sizeof(float)));
    switch (p->early_exit) {
    case EARLY_EXIT_OFF: c->threshold = 0.0f; break;
    default: c->threshold = (float)p->early_exit_threshold; break; // adaptive: scaled at upload
    }
    c->use_graph = p->cuda_graph;
    return 0;
}

// Times theta with one method on energy bins lo..hi of the current data (into
// psi_b, partials into the scratch slot at the end of the buffer).
static float time_angular(cuda_ctx *c, int fft, int lo, int hi, smx_error *err)
{
    cudaEvent_t t0, t1;
    if (cudaEventCreate(&t0) != cudaSuccess || cudaEventCreate(&t1) != cudaSuccess)
        return -1.0f;
    double *part = c->partials + (int64_t)MAX_RUNS * TF_COUNT * c->blocks;
    float best = 1e30f;
    for (int rep = 0; rep < 4; rep++) {
        cudaEventRecord(t0, c->stream);
        cudaError_t e = theta_on_range(c, c->psi_a, c->psi_b, lo, hi, fft, part);
        cudaEventRecord(t1, c->stream);
        if (e != cudaSuccess || cudaEventSynchronize(t1) != cudaSuccess) {
            smx_fail(err, SMX_EXIT_RUNTIME, "angular microbenchmark failed: %s", cudaGetErrorString(e));
            best = -1.0f;
            break;
        }
        float ms = 0.0f;
        cudaEventElapsedTime(&ms, t0, t1);
        if (rep > 0 && ms < best) // the first run is warm-up
            best = ms;
    }
    cudaEventDestroy(t0);
    cudaEventDestroy(t1);
    return best;
}

// Roadmap D-Atheta-1 / R-ATH-BENCH-1: energy bins are grouped into sigma
// buckets (sigma/dtheta within a factor 2: floor(log2)), each run of one
// bucket is timed with both methods on the initial state and its choice locked.
// A kernel is fixed per energy bin for the whole run, so sigma never changes
// under a bin and no re-check is needed later.
static int choose_angular_per_bucket(cuda_ctx *c, smx_error *err)
{
    const angle_kernels *ak = &c->s->ak;
    const int ne = (int)c->d.ne;
    int lo[MAX_RUNS], hi[MAX_RUNS], bucket[MAX_RUNS], n = 0;
    for (int ie = 0; ie < ne; ie++) {
        double sg = ak->sigma_bins[ak->kernel_of_energy[ie]];
        int b = sg > 0.0 ? (int)floor(log2(sg)) : -1000; // -1000: no scattering
        if (c->s->force_fft_from > 0) // test hook: two runs, split where the test says
            b = ie >= c->s->force_fft_from ? 1 : 0;
        if (n > 0 && bucket[n - 1] == b) {
            hi[n - 1] = ie;
            continue;
        }
        if (n == MAX_RUNS)
            return 1; // too fragmented: the caller keeps one method for all
        lo[n] = hi[n] = ie;
        bucket[n++] = b;
    }
    char *w = c->angular_why;
    size_t room = sizeof c->angular_why;
    int used = snprintf(w, room, "per-bucket");
    int any_fft = 0, any_direct = 0;
    c->n_runs = 0;
    for (int r = 0; r < n; r++) {
        float td = time_angular(c, 0, lo[r], hi[r], err), tf = time_angular(c, 1, lo[r], hi[r], err);
        if (td < 0 || tf < 0)
            return -1;
        int fft = c->s->force_fft_from > 0 ? bucket[r] == 1 : tf < td;
        any_fft |= fft;
        any_direct |= !fft;
        // Neighbouring runs with the same choice share one launch.
        if (c->n_runs > 0 && c->run_fft[c->n_runs - 1] == fft) {
            c->run_hi[c->n_runs - 1] = hi[r];
        } else {
            c->run_lo[c->n_runs] = lo[r];
            c->run_hi[c->n_runs] = hi[r];
            c->run_fft[c->n_runs++] = fft;
        }
        if (used < (int)room)
            used += snprintf(w + used, room - used, " [bins %d-%d: %s, %.3f/%.3f ms]", lo[r], hi[r],
                             fft ? "fft" : "direct", td, tf);
    }
    if (!any_fft)
        c->angular = 0;
    else if (!any_direct)
        c->angular = 2;
    else {
        c->angular = 3;
        c->slots = 1 + c->n_runs;
    }
    return 0;
}

static int cuda_upload(void *vctx, const float *psi0, double w0, double e0, smx_error *err)
{
    cuda_ctx *c = (cuda_ctx *)vctx;
    const plan *p = c->s->p;
    const size_t bytes = (size_t)c->d.cells * sizeof(float);
    // Host rows are nx floats, device rows px: the rows' cells are copied, their padding zeroed.
    const int64_t rows = dev_rows(c->d);
    CUDA_CHECK_ERR(err, cudaMemcpy2D(c->psi_a, c->d.px * sizeof(float), psi0, c->d.nx * sizeof(float),
                                     c->d.nx * sizeof(float), rows, cudaMemcpyHostToDevice));
    if (c->d.px > c->d.nx)
        CUDA_CHECK_ERR(err, cudaMemset2D(c->psi_a + c->d.nx, c->d.px * sizeof(float), 0,
                                         (c->d.px - c->d.nx) * sizeof(float), rows));
    CUDA_CHECK_ERR(err, cudaMemset(c->psi_b, 0, bytes));
    CUDA_CHECK_ERR(err, cudaMemset(c->dose, 0, (size_t)c->d.slice * sizeof(double)));
    CUDA_CHECK_ERR(err, cudaMemset(c->stop, 0, sizeof(int)));
    if (p->early_exit == EARLY_EXIT_ADAPTIVE) {
        float mx = 0.0f;
        for (int64_t i = 0; i < c->g->cells; i++)
            mx = psi0[i] > mx ? psi0[i] : mx;
        c->threshold = (float)(p->early_exit_threshold * mx);
    }
    // Boxes of the initial state (the source), found on the host.
    {
        const grid *g = c->g;
        std::vector<box4> boxes(g->ne, box_empty4()), none(g->ne, box_empty4());
        box4 occ = box_empty4();
        for (int64_t ie = 0; ie < g->ne; ie++) {
            for (int64_t j = 0; j < g->nth; j++)
                for (int64_t z = 0; z < g->nz; z++) {
                    const float *row = psi0 + psi_index(g, ie, j, z, 0);
                    for (int64_t x = 0; x < g->nx; x++)
                        if (row[x] != 0.0f)
                            boxes[ie] = box_join(boxes[ie], box4{(int)z, (int)z, (int)x, (int)x});
                }
            occ = box_join(occ, boxes[ie]);
        }
        active_regions r0{occ, box_empty4(), 0, -1, 0, -1, (int)g->ne, -1};
        // The ranges from the host copies of the tables (et points to device memory).
        active_bin_ranges(boxes.data(), (int)g->ne, (const int *)c->s->el.target, c->s->el.c_hi, &r0);
        CUDA_CHECK_ERR(err, cudaMemcpy(c->box_a, boxes.data(), g->ne * sizeof(box4), cudaMemcpyHostToDevice));
        CUDA_CHECK_ERR(err, cudaMemcpy(c->box_next, none.data(), g->ne * sizeof(box4), cudaMemcpyHostToDevice));
        CUDA_CHECK_ERR(err, cudaMemcpy(c->reg, &r0, sizeof r0, cudaMemcpyHostToDevice));
    }
    run_state_dev st{w0, e0, p->steps == 0 ? p->auto_stop_weight * w0 : -1.0, 0, 0};
    CUDA_CHECK_ERR(err, cudaMemcpy(c->state, &st, sizeof st, cudaMemcpyHostToDevice));

    // Angular method: a start-up microbenchmark on the initial state when both
    // are possible and the plan leaves it open (roadmap D-Atheta-1 stage 2). The
    // kernels are fixed per energy bin for the whole run, so sigma never
    // changes and the choice stays locked.
    if (c->fft && (p->variant_angular == VAR_A_AUTO || c->s->force_fft_from > 0)) {
        int rc = choose_angular_per_bucket(c, err);
        if (rc < 0)
            return err->code ? err->code : SMX_EXIT_RUNTIME;
        if (rc > 0) { // too many buckets: one method for all bins
            float td = time_angular(c, 0, 0, (int)c->d.ne - 1, err);
            float tf = time_angular(c, 1, 0, (int)c->d.ne - 1, err);
            if (td < 0 || tf < 0)
                return err->code ? err->code : SMX_EXIT_RUNTIME;
            c->angular = tf < td ? 2 : 0;
            snprintf(c->angular_why, sizeof c->angular_why, "%s (benchmark: direct %.3f ms, fft %.3f ms)",
                     c->angular == 2 ? "fft" : "direct", td, tf);
        }
        CUDA_CHECK_ERR(err, cudaMemsetAsync(c->psi_b, 0, bytes, c->stream));
    } else if (c->fft) {
        c->angular = 2;
        snprintf(c->angular_why, sizeof c->angular_why, "fft (plan)");
    }
    CUDA_CHECK_ERR(err, cudaStreamSynchronize(c->stream));
    if (c->angular != 0)
        c->fused = c->single_pass = 0;
    c->enqueued = 0;

    if (c->use_graph) {
        cudaGraph_t graph;
        CUDA_CHECK_ERR(err, cudaStreamBeginCapture(c->stream, cudaStreamCaptureModeThreadLocal));
        int rc = enqueue_step(c, err);
        cudaError_t e = cudaStreamEndCapture(c->stream, &graph);
        if (rc)
            return rc;
        CUDA_CHECK_ERR(err, e);
        e = cudaGraphInstantiate(&c->graph, graph, 0);
        cudaGraphDestroy(graph);
        CUDA_CHECK_ERR(err, e);
    }
    // The fused kernel splits a step's energy range across blocks when the
    // step has few tiles (a pencil beam); the provenance records the limit.
    char split_why[64] = "off";
    if (c->fused && c->split.max_tiles > 0)
        snprintf(split_why, sizeof split_why, "steps<=%d_tiles(groups>=%d_bins)", c->split.max_tiles,
                 FUSED_SPLIT_MIN_BINS);
    snprintf(c->variants, sizeof c->variants,
             "angular=%s energy=%s stream=%s streaming_scheme=%s cuda_graph=%s early_exit=%s(%.3g) "
             "fused=%s energy_split=%s fused_tiles_per_block=%d fused_boundary_rows=%d row_pitch=%lld",
             c->angular_why, c->energy_gather ? "gather" : "scatter",
             c->stream_variant == SV_GATHER ? "gather" : c->stream_variant == SV_ATOMIC ? "atomic"
             : c->stream_variant == SV_WARP ? "warp" : "fallback",
             c->s->st.scheme == STREAM_SHIFT ? "shift" : "bilinear", c->use_graph ? "on" : "off",
             p->early_exit == EARLY_EXIT_OFF ? "off" : p->early_exit == EARLY_EXIT_FIXED ? "fixed" : "adaptive",
             (double)c->threshold,
             c->single_pass ? "theta+energy+stream (one pass)"
             : c->fused     ? "theta+energy, stream+measure"
                            : "no",
             split_why, c->tiles, c->fused ? c->ft.n_wide : 0, (long long)c->d.px);
    return 0;
}

// The buffer holding the state after the steps enqueued so far.
static const float *current_psi(const cuda_ctx *c)
{
    return c->single_pass && (c->enqueued & 1) ? c->psi_b : c->psi_a;
}

static int cuda_step(void *vctx, int64_t n, smx_error *err)
{
    // The device keeps its own step counter (graph replay needs it there).
    cuda_ctx *c = (cuda_ctx *)vctx;
    c->enqueued = n + 1;
    if (c->use_graph) {
        CUDA_CHECK_ERR(err, cudaGraphLaunch(c->graph, c->stream));
        return 0;
    }
    return enqueue_step(c, err);
}

static int cuda_collect(void *vctx, step_record *out, int max, int *n_out, smx_error *err)
{
    cuda_ctx *c = (cuda_ctx *)vctx;
    step_rec_dev ring[RING];
    run_state_dev st;
    CUDA_CHECK_ERR(err, cudaMemcpyAsync(&st, c->state, sizeof st, cudaMemcpyDeviceToHost, c->stream));
    CUDA_CHECK_ERR(err, cudaMemcpyAsync(ring, c->ring, sizeof ring, cudaMemcpyDeviceToHost, c->stream));
    CUDA_CHECK_ERR(err, cudaMemsetAsync(&c->state->n_since, 0, sizeof(int), c->stream));
    CUDA_CHECK_ERR(err, cudaStreamSynchronize(c->stream));
    int n = st.n_since < max ? st.n_since : max;
    c->enqueued = st.step; // every enqueued step has run; after an auto stop, fewer counted
    if (st.n_since > RING)
        return smx_fail(err, SMX_EXIT_RUNTIME, "internal: %d steps between collects (ring %d)",
                        st.n_since, RING);
    for (int k = 0; k < n; k++) {
        const step_rec_dev &r = ring[k];
        step_record *o = &out[k];
        memset(o, 0, sizeof *o);
        o->b.weight_in = r.w_in;
        o->b.energy_in = r.e_in;
        o->b.weight_out = r.f[TF_W_OUT];
        o->b.energy_out = r.f[TF_E_OUT];
        for (int ch = 0; ch < CH_COUNT; ch++) {
            o->b.t.weight[ch] = r.f[TF_W_THETA_BOUNDARY + ch];
            o->b.t.energy[ch] = r.f[TF_E_THETA_BOUNDARY + ch];
        }
        o->b.t.deposited = r.f[TF_DEPOSITED];
        tally_close_balance(&o->b);
        o->front_row = r.front;
        o->stopped = r.stopped;
    }
    *n_out = n;
    return 0;
}

static int cuda_snapshot_begin(void *vctx, smx_error *err)
{
    cuda_ctx *c = (cuda_ctx *)vctx;
    // Plans that ask for snapshots get the pinned buffer at setup; this late
    // allocation serves callers that did not say so in advance (tests).
    if (!c->pinned)
        CUDA_CHECK_ERR(err, cudaMallocHost(&c->pinned, (size_t)c->g->cells * sizeof(float)));
    // The copy runs on its own stream; the next step waits for it before it
    // may overwrite psi_a, the host does not.
    CUDA_CHECK_ERR(err, cudaEventRecord(c->ev_step, c->stream));
    CUDA_CHECK_ERR(err, cudaStreamWaitEvent(c->copy, c->ev_step, 0));
    CUDA_CHECK_ERR(err, cudaMemcpy2DAsync(c->pinned, c->d.nx * sizeof(float), current_psi(c),
                                          c->d.px * sizeof(float), c->d.nx * sizeof(float),
                                          dev_rows(c->d), cudaMemcpyDeviceToHost, c->copy));
    CUDA_CHECK_ERR(err, cudaEventRecord(c->ev_copy, c->copy));
    CUDA_CHECK_ERR(err, cudaStreamWaitEvent(c->stream, c->ev_copy, 0));
    return 0;
}

static int cuda_snapshot_wait(void *vctx, const float **psi, smx_error *err)
{
    cuda_ctx *c = (cuda_ctx *)vctx;
    CUDA_CHECK_ERR(err, cudaEventSynchronize(c->ev_copy));
    *psi = c->pinned;
    return 0;
}

static int cuda_download_dose(void *vctx, double *dose, smx_error *err)
{
    cuda_ctx *c = (cuda_ctx *)vctx;
    CUDA_CHECK_ERR(err, cudaStreamSynchronize(c->stream));
    CUDA_CHECK_ERR(err, cudaMemcpy2D(dose, c->d.nx * sizeof(double), c->dose, c->d.px * sizeof(double),
                                     c->d.nx * sizeof(double), c->d.nz, cudaMemcpyDeviceToHost));
    return 0;
}

static void cuda_describe(void *vctx, run_result *r)
{
    cuda_ctx *c = (cuda_ctx *)vctx;
    snprintf(r->backend_name, sizeof r->backend_name, "cuda");
    snprintf(r->device_name, sizeof r->device_name, "%s", c->info.name);
    snprintf(r->compute_capability, sizeof r->compute_capability, "%d.%d", c->info.cc_major,
             c->info.cc_minor);
    snprintf(r->kernel_variants, sizeof r->kernel_variants, "%s arena=%.3fGB", c->variants,
             c->arena_bytes / 1e9);
}

static void cuda_release(void *vctx)
{
    cuda_ctx *c = (cuda_ctx *)vctx;
    if (!c)
        return;
    if (c->stream)
        cudaStreamSynchronize(c->stream);
    if (c->fft)
        angular_fft_destroy(c->fft);
    if (c->graph)
        cudaGraphExecDestroy(c->graph);
    if (c->ev_step)
        cudaEventDestroy(c->ev_step);
    if (c->ev_copy)
        cudaEventDestroy(c->ev_copy);
    if (c->copy)
        cudaStreamDestroy(c->copy);
    if (c->stream)
        cudaStreamDestroy(c->stream);
    if (c->pinned)
        cudaFreeHost(c->pinned);
    if (c->arena)
        cudaFree(c->arena);
    free(c);
}

// ---- benchmark hooks --------------------------------------------------------

struct event_pair {
    cudaEvent_t a, b;
};

static int events_create(event_pair *e, smx_error *err)
{
    CUDA_CHECK_ERR(err, cudaEventCreate(&e->a));
    CUDA_CHECK_ERR(err, cudaEventCreate(&e->b));
    return 0;
}

static void events_destroy(event_pair *e)
{
    cudaEventDestroy(e->a);
    cudaEventDestroy(e->b);
}

static int events_ms(event_pair *e, double *ms, smx_error *err)
{
    CUDA_CHECK_ERR(err, cudaEventSynchronize(e->b));
    float f = 0.0f;
    CUDA_CHECK_ERR(err, cudaEventElapsedTime(&f, e->a, e->b));
    *ms = f;
    return 0;
}

// Two events per step (start, stop), so that each step's time is its own even
// though the steps run back to back; the record ring is emptied between steps
// (outside the timed intervals) since the benchmark does not read it.
static int cuda_bench_steps(void *vctx, int64_t first, int count, double *ms, smx_error *err)
{
    cuda_ctx *c = (cuda_ctx *)vctx;
    std::vector<event_pair> ev(count);
    int made = 0, rc = 0;
    for (; made < count && !rc; made++)
        rc = events_create(&ev[made], err);
    for (int k = 0; k < count && !rc; k++) {
        cudaError_t e = cudaEventRecord(ev[k].a, c->stream);
        if (e == cudaSuccess && (rc = cuda_step(c, first + k, err)) == 0)
            e = cudaEventRecord(ev[k].b, c->stream);
        if (e == cudaSuccess && !rc)
            e = cudaMemsetAsync(&c->state->n_since, 0, sizeof(int), c->stream);
        if (e != cudaSuccess && !rc)
            rc = smx_fail(err, SMX_EXIT_RUNTIME, "benchmark step: %s", cudaGetErrorString(e));
    }
    for (int k = 0; k < count && !rc; k++)
        rc = events_ms(&ev[k], &ms[k], err);
    for (int k = 0; k < made; k++)
        events_destroy(&ev[k]);
    return rc;
}

static int cuda_bench_op(void *vctx, int op, double *ms, smx_error *err)
{
    cuda_ctx *c = (cuda_ctx *)vctx;
    event_pair e;
    int rc = events_create(&e, err);
    if (rc)
        return rc;
    cudaError_t ce = cudaSuccess;
    cudaEventRecord(e.a, c->stream);
    if (c->single_pass && op == OP_THETA) { // the whole step, one kernel: rewrites the next state
        ce = fused_step(c->psi_a, c->psi_b, &c->state->step, c->dose, c->d, c->at, c->ft, c->stt,
                        c->threshold, c->box_a, c->box_next, c->reg, c->stop, c->partials, c->blocks,
                        c->cluster_launch, c->s->fused_kp_cap, c->tiles, c->split, c->stream);
    } else if (c->single_pass) {
        ce = cudaSuccess; // inside the one kernel
    } else if (c->fused && op == OP_THETA) { // theta + energy: one kernel
        ce = fused_theta_energy(c->psi_a, c->psi_b, c->dose, c->d, c->at, c->ft, c->threshold,
                                c->box_a, c->reg, c->stop, c->partials, c->blocks, c->cluster_launch,
                                c->s->fused_kp_cap, c->tiles, c->split, c->stream);
    } else if (c->fused && op == OP_ENERGY) {
        ce = cudaSuccess; // inside the theta+energy kernel
    } else if (c->fused && op == OP_STREAM) {
        // Into the scratch buffer, with a scratch box list (the state is not kept).
        ce = stream_gather_and_measure(c->psi_a, c->psi_b, &c->state->step, c->d, c->stt, c->reg,
                                       c->reach, c->box_next, c->stop, c->partials, c->blocks,
                                       c->stream);
    } else if (c->fused) {
        ce = cudaSuccess; // the measure is inside streaming
    } else if (op == OP_THETA) {
        ce = launch_theta(c, c->psi_a, c->psi_b);
    } else if (op == OP_ENERGY) {
        ce = energy_deposit(c->psi_a, c->dose, c->d, c->et, c->stop, c->partials, c->blocks, c->stream);
        if (ce == cudaSuccess)
            ce = energy_move(c->energy_gather, c->psi_a, c->d, c->et, c->stop, c->blocks, c->stream);
    } else if (op == OP_STREAM) {
        ce = stream_launch(c->stream_variant, c->psi_a, c->psi_b, &c->state->step, c->d, c->stt,
                           c->stop, c->partials, c->blocks, c->stream);
    } else {
        measure_kernel<<<c->blocks, SMX_THREADS, 0, c->stream>>>(c->psi_a, c->d, c->et.E, c->stop,
                                                                 c->partials, c->front_part, c->blocks);
        ce = cudaGetLastError();
    }
    cudaEventRecord(e.b, c->stream);
    if (ce != cudaSuccess)
        rc = smx_fail(err, SMX_EXIT_RUNTIME, "benchmark of operator %d failed: %s", op,
                      cudaGetErrorString(ce));
    else
        rc = events_ms(&e, ms, err);
    events_destroy(&e);
    return rc;
}

static int cuda_bench_copy(void *vctx, double *bps, smx_error *err)
{
    cuda_ctx *c = (cuda_ctx *)vctx;
    size_t bytes = (size_t)c->d.cells * sizeof(float);
    event_pair e;
    int rc = events_create(&e, err);
    if (rc)
        return rc;
    double best = 1e30;
    for (int rep = 0; rep < 5 && !rc; rep++) {
        cudaEventRecord(e.a, c->stream);
        cudaError_t ce = cudaMemcpyAsync(c->psi_b, c->psi_a, bytes, cudaMemcpyDeviceToDevice, c->stream);
        cudaEventRecord(e.b, c->stream);
        double ms = 0;
        if (ce != cudaSuccess)
            rc = smx_fail(err, SMX_EXIT_RUNTIME, "copy benchmark failed: %s", cudaGetErrorString(ce));
        else if (!(rc = events_ms(&e, &ms, err)) && rep > 0 && ms < best)
            best = ms; // the first copy is warm-up
    }
    events_destroy(&e);
    *bps = 2.0 * bytes / (best * 1e-3); // read + write
    return rc;
}

static void cuda_bench_facts(void *vctx, int *launches, double *bytes_dense, double *mem_used)
{
    cuda_ctx *c = (cuda_ctx *)vctx;
    // The grid's own cells (not the rows' padding): what a pass must move.
    double psi = (double)c->g->cells * sizeof(float), dose = (double)c->g->slice * sizeof(double);
    int theta = c->angular == 2 ? (int)(2 * c->d.ne + 2) : 1;
    int stream = c->stream_variant == SV_GATHER ? 1 : 2;
    *launches = 1 /* partials memset */ + theta + 2 /* energy */ + stream + 2 /* measure, finish */;
    if (c->single_pass) {
        // the step (its unsplit and split instances, one of which returns at once), finish
        *launches = c->split.max_tiles > 0 ? 3 : 2;
        *bytes_dense = 2 * psi + 2 * dose;
        size_t fr0 = 0, tot0 = 0;
        cudaMemGetInfo(&fr0, &tot0);
        *mem_used = (double)(tot0 - fr0);
        return;
    }
    if (c->fused) {
        *launches = c->split.max_tiles > 0 ? 5 : 4; // memset, theta+energy (x2), stream+measure, finish
        *bytes_dense = 4 * psi + 2 * dose;
        size_t fr0 = 0, tot0 = 0;
        cudaMemGetInfo(&fr0, &tot0);
        *mem_used = (double)(tot0 - fr0);
        return;
    }
    // Each operator reads and writes psi once, the deposit reads it once more,
    // the measure reads it once; the scatter variants also clear their output.
    *bytes_dense = 2 * psi + (psi + 2 * dose) + 2 * psi + (stream == 2 ? 3 : 2) * psi + psi;
    size_t fr = 0, tot = 0;
    cudaMemGetInfo(&fr, &tot);
    *mem_used = (double)(tot - fr);
}

extern "C" const backend_ops backend_cuda = {
    "cuda",
    RING,
    cuda_setup,
    cuda_upload,
    cuda_step,
    cuda_collect,
    cuda_snapshot_begin,
    cuda_snapshot_wait,
    cuda_download_dose,
    cuda_describe,
    cuda_release,
    cuda_bench_steps,
    cuda_bench_op,
    cuda_bench_copy,
    cuda_bench_facts,
};
