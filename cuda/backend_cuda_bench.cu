// The CUDA backend's benchmark hooks (src/tools/bench.c): steps timed with
// device events, one operator alone, a psi-sized copy, and the step's facts.
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <vector>

#include "backend_cuda_internal.cuh"

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
int cuda_bench_steps(void *vctx, int64_t first, int count, double *ms, smx_error *err)
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

int cuda_bench_op(void *vctx, int op, double *ms, smx_error *err)
{
    cuda_ctx *c = (cuda_ctx *)vctx;
    event_pair e;
    int rc = events_create(&e, err);
    if (rc)
        return rc;
    cudaError_t ce = cudaSuccess;
    cudaEventRecord(e.a, c->stream);
    const bool one_pass = c->pipe.kind == PIPE_FUSED_ONE_PASS;
    if (one_pass && op == OP_THETA) { // the whole step, one kernel: rewrites the next state
        if (c->media_single) // (with media, the choice of tables first)
            ce = energy_media_choose(c->em, c->d.ne, &c->state->step, c->stop, c->stream);
        if (ce == cudaSuccess)
            ce = fused_step(one_pass_of(c), c->stream);
    } else if (one_pass && op == OP_ENERGY) { // the deposit's spread (the step's second kernel)
        ce = deposit_spread(spread_of(c, 0, c->reg), c->stream);
    } else if (one_pass) {
        ce = cudaSuccess; // inside the one kernel
    } else if (c->fused && op == OP_THETA) { // theta + energy: one kernel
        ce = fused_theta_energy(fused_of(c), c->stream);
    } else if (c->fused &&
               op == OP_ENERGY) { // the deposit's spread; A_E is inside the theta+energy kernel
        ce = deposit_spread(spread_of(c, 0, c->reg), c->stream);
    } else if (c->fused && op == OP_STREAM) {
        // Into the scratch buffer, with a scratch box list (the state is not kept).
        ce = stream_gather_and_measure(stream_of(c, c->psi_a, c->psi_b), c->stream);
    } else if (c->fused) {
        ce = cudaSuccess; // the measure is inside streaming
    } else if (op == OP_THETA) {
        ce = launch_theta(c, c->psi_a, c->psi_b);
    } else if (op == OP_ENERGY) {
        ce = energy_deposit(energy_of(c, c->psi_a), c->stream);
        if (ce == cudaSuccess)
            ce = deposit_spread(spread_of(c, 0, NULL), c->stream);
        if (ce == cudaSuccess)
            ce = energy_move(c->energy_gather, energy_of(c, c->psi_a), c->stream);
    } else if (op == OP_STREAM) {
        ce = stream_launch(c->stream_variant, stream_of(c, c->psi_a, c->psi_b), c->stream);
    } else {
        ce = measure_launch(measure_of(c), c->stream);
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

int cuda_bench_copy(void *vctx, double *bps, smx_error *err)
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
        cudaError_t ce =
            cudaMemcpyAsync(c->psi_b, c->psi_a, bytes, cudaMemcpyDeviceToDevice, c->stream);
        cudaEventRecord(e.b, c->stream);
        double ms = 0;
        if (ce != cudaSuccess)
            rc = smx_fail(err, SMX_EXIT_RUNTIME, "copy benchmark failed: %s",
                          cudaGetErrorString(ce));
        else if (!(rc = events_ms(&e, &ms, err)) && rep > 0 && ms < best)
            best = ms; // the first copy is warm-up
    }
    events_destroy(&e);
    *bps = 2.0 * bytes / (best * 1e-3); // read + write
    return rc;
}

void cuda_bench_facts(void *vctx, int *launches, double *bytes_dense, double *mem_used)
{
    cuda_ctx *c = (cuda_ctx *)vctx;
    // The grid's own cells (not the rows' padding): what a pass must move.
    double psi = (double)c->g->cells * sizeof(float), dose = (double)c->g->slice * sizeof(double);
    // The deposit map: written by A_E, read by the spread, which updates the dose.
    double dmap = (double)c->g->nth * c->g->slice * sizeof(float);
    int theta = c->angular == 2 ? (int)(2 * c->d.ne + 2) : 1;
    int stream = c->stream_variant == SV_GATHER ? 1 : 2;
    *launches = 1 /* partials memset */ + theta + 4 /* energy, paths, spread */ + stream +
                2 /* measure, finish */;
    if (c->pipe.kind == PIPE_FUSED_ONE_PASS) {
        // (with media the choice of tables) the step (its unsplit and split
        // instances, one of which returns at once), paths, spread, finish
        *launches = (c->split.max_tiles > 0 ? 5 : 4) + (c->media_single ? 1 : 0);
        *bytes_dense = 2 * psi + 2 * dmap + 2 * dose;
        size_t fr0 = 0, tot0 = 0;
        cudaMemGetInfo(&fr0, &tot0);
        *mem_used = (double)(tot0 - fr0);
        return;
    }
    if (c->fused) {
        *launches = c->split.max_tiles > 0
                        ? 7
                        : 6; // memset, theta+energy (x2), paths, spread, stream+measure, finish
        *bytes_dense = 4 * psi + 2 * dmap + 2 * dose;
        size_t fr0 = 0, tot0 = 0;
        cudaMemGetInfo(&fr0, &tot0);
        *mem_used = (double)(tot0 - fr0);
        return;
    }
    // Each operator reads and writes psi once, the deposit reads it once more,
    // the measure reads it once; the scatter variants also clear their output.
    *bytes_dense =
        2 * psi + (psi + 2 * dmap + 2 * dose) + 2 * psi + (stream == 2 ? 3 : 2) * psi + psi;
    size_t fr = 0, tot = 0;
    cudaMemGetInfo(&fr, &tot);
    *mem_used = (double)(tot - fr);
}
