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

#include "backend_cuda_internal.cuh"
#include "source_upload.cuh"
#include "tiling.cuh"

// The moments scheme over the active region (moments.cuh), in two passes as
// the media path: A_theta a -> b on every component in one launch (the
// region kernel; a moment component with no early exit and no tallies),
// A_E in place on b (every component at once: in a medium other than the
// reference each cell's energy moments choose its tables), the spread from
// the maps' region, then the moments' stream b -> a measuring the new state.
static int enqueue_moments_regions(cuda_ctx *c, smx_error *err)
{
    CUDA_CHECK_ERR(err, moments_drop(moments_of(c, c->psi_a), c->threshold, c->stream));
    const angular_components all = { c->d, &c->at, c->threshold, c->reg, c->ncomp };
    CUDA_CHECK_ERR(err,
                   angular_direct_components(angular_io_of(c, c->psi_a, c->psi_b), all, c->stream));
    CUDA_CHECK_ERR(err, moments_energy(moments_of(c, c->psi_b), c->stream));
    CUDA_CHECK_ERR(err, moments_spread(spread_of(c, 0, c->reg), c->mmaps, c->stream));
    CUDA_CHECK_ERR(err, moments_stream_measure(stream_of(c, c->psi_b, c->psi_a), c->stream));
    CUDA_CHECK_ERR(err, finish_launch(finish_of(c, c->media ? c->et_media : c->et, 0), c->stream));
    return 0;
}

// The tally kernels' arguments; gate_on: the one pass takes the unsplit
// steps' tallies, so the kernels serve only the steps it splits.
static spectral_args spectral_of(const cuda_ctx *c, int gate_on)
{
    const pipeline_choice &q = c->pipe;
    const spectral_gate gate = { gate_on, c->slot_pref, c->nslots, c->split.max_tiles, c->blocks };
    return spectral_args{ c->psi_a,
                          c->psi_b,
                          q.alternates,
                          &c->state->step,
                          c->dose,
                          c->tally_wsum,
                          c->d,
                          c->tally,
                          c->medium_dev,
                          q.regions ? c->reg : NULL,
                          q.regions ? c->box_a : NULL,
                          c->stop,
                          c->blocks,
                          gate };
}

// The fused one-pass step (shift streaming): with media the choice of
// whole-bin tables first; then one kernel, psi[step & 1] -> the other, which
// writes every partials field itself, the deposit's spread and the
// bookkeeping.
static int enqueue_fused_one_pass(cuda_ctx *c, smx_error *err)
{
    if (c->media_single)
        CUDA_CHECK_ERR(err,
                       energy_media_choose(c->em, c->d.ne, &c->state->step, c->stop, c->stream));
    CUDA_CHECK_ERR(err, fused_step(one_pass_of(c), c->stream));
    // The planes of a split step's tallies, from the direction sums its
    // split instance wrote (before the bookkeeping moves the region on).
    if (spectral_tallies_due(c) && split_sums(c))
        CUDA_CHECK_ERR(err, spectral_plane_launch(spectral_of(c, 1), c->stream));
    CUDA_CHECK_ERR(err, deposit_spread(spread_of(c, 0, c->reg), c->stream));
    CUDA_CHECK_ERR(err,
                   finish_launch(finish_of_slots(c, c->media ? c->et_media : c->et), c->stream));
    return 0;
}

// The fused two-pass step: A_theta + A_E (with the deposit) in one pass
// a -> b, then streaming b -> a measuring its own output (after the
// partials' memset).
static int enqueue_fused_two_pass(cuda_ctx *c, smx_error *err)
{
    CUDA_CHECK_ERR(err, fused_theta_energy(fused_of(c), c->stream));
    CUDA_CHECK_ERR(err, deposit_spread(spread_of(c, 0, c->reg), c->stream));
    CUDA_CHECK_ERR(err, stream_gather_and_measure(stream_of(c, c->psi_b, c->psi_a), c->stream));
    CUDA_CHECK_ERR(err, finish_launch(finish_of(c, c->et, 0), c->stream));
    return 0;
}

// A_theta on every component of the state (moments.cuh): a moment component
// takes the weight's kernel with no early exit (its values are not weights)
// and tallies nothing (its partials go to a scratch slot).
static cudaError_t theta_all(cuda_ctx *c, const float *in, float *out)
{
    moments_args drop = moments_of(c, (float *)in);
    drop.reg = NULL; // the whole grid
    cudaError_t e = c->ncomp > 1 ? moments_drop(drop, c->threshold, c->stream) : cudaSuccess;
    if (e == cudaSuccess)
        e = launch_theta(c, in, out);
    double *partials = c->partials;
    const float threshold = c->threshold;
    c->partials = c->partials_discard;
    c->threshold = 0.0f;
    for (int k = 1; k < c->ncomp && e == cudaSuccess; k++)
        e = launch_theta(c, in + k * c->d.cells, out + k * c->d.cells);
    c->partials = partials;
    c->threshold = threshold;
    return e;
}

// A_E's move, in place.
static cudaError_t energy_move_psi(cuda_ctx *c, float *psi)
{
    return c->media ? energy_media_move(c->energy_gather, energy_media_of(c, psi), c->stream)
                    : energy_move(c->energy_gather, energy_of(c, psi), c->stream);
}

// A_E's deposit map, then the spread along each direction's path.
static cudaError_t deposit_all(cuda_ctx *c, float *psi, int moved)
{
    cudaError_t e = c->media ? energy_media_deposit(energy_media_of(c, psi), c->stream)
                             : energy_deposit(energy_of(c, psi), c->stream);
    if (e != cudaSuccess)
        return e;
    return deposit_spread(spread_of(c, moved, NULL), c->stream);
}

// A_E under the moments scheme over the whole grid: the deposit maps and the
// move of every component in one kernel (moments_energy), then the spread
// along each cell's own path.
static cudaError_t energy_moments_all(cuda_ctx *c, float *psi)
{
    moments_args a = moments_of(c, psi);
    a.reg = NULL; // the whole grid
    cudaError_t e = moments_energy(a, c->stream);
    if (e != cudaSuccess)
        return e;
    return moments_spread(spread_of(c, 0, NULL), c->mmaps, c->stream);
}

// One step with one whole-grid kernel per operator, in the plan's order (the
// tests' only_op: that operator alone), then the measure and the bookkeeping.
static int enqueue_per_operator(cuda_ctx *c, smx_error *err)
{
    float *cur = c->psi_a, *oth = c->psi_b; // where the data is, and the other buffer
    int moved = 0; // A_stream has run in this step (where the deposit's paths start)
    for (int k = 0; k < PLAN_ORDER_MAX; k++) {
        int op = c->set.operator_order[k];
        if (c->opt.only_op >= 0 && op != c->opt.only_op)
            continue;
        cudaError_t e = cudaSuccess;
        if (op == OP_THETA) {
            e = theta_all(c, cur, oth);
            float *t = cur;
            cur = oth;
            oth = t;
        } else if (op == OP_ENERGY && c->ncomp > 1) {
            e = energy_moments_all(c, cur);
        } else if (op == OP_ENERGY && c->media) {
            e = energy_media_choose(c->em, c->d.ne, &c->state->step, c->stop, c->stream);
            if (e == cudaSuccess)
                e = deposit_all(c, cur, moved);
            if (e == cudaSuccess)
                e = energy_move_psi(c, cur);
        } else if (op == OP_ENERGY) {
            e = deposit_all(c, cur, moved);
            if (e == cudaSuccess)
                e = energy_move_psi(c, cur);
        } else {
            e = c->ncomp > 1 ? moments_stream(stream_of(c, cur, oth), c->stream)
                             : stream_launch(c->stream_variant, stream_of(c, cur, oth), c->stream);
            moved = 1;
            float *t = cur;
            cur = oth;
            oth = t;
        }
        if (e != cudaSuccess)
            return smx_fail(err, SMX_EXIT_RUNTIME, "%s: operator %d launch failed: %s", __FILE__,
                            op, cudaGetErrorString(e));
    }
    // Test hooks may apply one out-of-place operator: bring the data home.
    if (cur != c->psi_a)
        CUDA_CHECK_ERR(err,
                       cudaMemcpyAsync(c->psi_a, cur, (size_t)c->d.cells * c->ncomp * sizeof(float),
                                       cudaMemcpyDeviceToDevice, c->stream));
    CUDA_CHECK_ERR(err, measure_launch(measure_of(c), c->stream));
    finish_args f = finish_of(c, c->et, 0);
    f.box_a = f.box_next = NULL; // no boxes or regions on this path
    f.reg = NULL;
    CUDA_CHECK_ERR(err, finish_launch(f, c->stream));
    return 0;
}

// Enqueues one step on c->stream (also used inside graph capture): the
// spectral tallies, then the pipeline c->pipe names.
static int enqueue_step(cuda_ctx *c, smx_error *err)
{
    const pipeline_choice &q = c->pipe;
    // The spectral tallies (the halo's released energy, LET, dose to water),
    // from the state the step finds (inside the single pass where it takes them).
    // The one pass takes them on its unsplit steps; these kernels then run
    // only on the steps it splits (a pencil's few tiles), deciding as it does.
    // Where the pass takes them, its split steps' planes come after it
    // (enqueue_fused_one_pass).
    // The media one pass likewise.
    const bool in_pass = fused_takes_tallies(c) || media_takes_tallies(c); // the single pass
    if (spectral_tallies_due(c) && !split_sums(c)) // split_sums implies in_pass
        CUDA_CHECK_ERR(err, spectral_launch(spectral_of(c, in_pass ? 1 : 0), c->stream));
    // Every pipeline but the one pass starts from cleared partials.
    if (q.kind != PIPE_FUSED_ONE_PASS)
        CUDA_CHECK_ERR(err,
                       cudaMemsetAsync(c->partials, 0,
                                       (size_t)c->slots * TF_COUNT * c->blocks * sizeof(double),
                                       c->stream));
    switch (q.kind) {
    case PIPE_FUSED_ONE_PASS:
        return enqueue_fused_one_pass(c, err);
    case PIPE_FUSED_TWO_PASS:
        return enqueue_fused_two_pass(c, err);
    case PIPE_MOMENTS_REGIONS:
        return enqueue_moments_regions(c, err);
    case PIPE_PER_OPERATOR:
        break;
    }
    return enqueue_per_operator(c, err);
}

// The pieces of a source for source_scatter (source_upload.cuh).
struct source_pack {
    std::vector<int4> at;
    std::vector<float> vals;
};

// Per energy bin the smallest box holding psi0's non-zero values, searched
// inside the given boxes (or the whole grid); the largest value, for the
// adaptive early exit; with pack, every piece of 32 columns of those rows
// that holds a value, with its values (the row's, zeros past nx).
static void source_boxes(const grid *g, const float *psi0, const grid_box *occupied, box4 *boxes,
                         float *mx, source_pack *pack)
{
    *mx = 0.0f;
    const int64_t P = SOURCE_PIECE_COLS;
    for (int64_t ie = 0; ie < g->ne; ie++) {
        boxes[ie] = box_empty4();
        const grid_box b =
            occupied ? occupied[ie] : grid_box{ 0, (int)g->nz - 1, 0, (int)g->nx - 1 };
        if (b.z0 > b.z1 || b.x0 > b.x1)
            continue;
        for (int64_t j = 0; j < g->nth; j++)
            for (int64_t z = b.z0; z <= b.z1; z++) {
                const float *row = psi0 + psi_index(g, ie, j, z, 0);
                for (int64_t k = b.x0 / P; k <= b.x1 / P; k++) {
                    bool any = false;
                    const int64_t xa = std::max<int64_t>(b.x0, k * P);
                    const int64_t xb = std::min<int64_t>(b.x1, k * P + P - 1);
                    for (int64_t x = xa; x <= xb; x++)
                        if (row[x] != 0.0f) {
                            any = true;
                            boxes[ie] = box_join(boxes[ie], box4{ (int)z, (int)z, (int)x, (int)x });
                            *mx = row[x] > *mx ? row[x] : *mx;
                        }
                    if (!pack || !any)
                        continue;
                    pack->at.push_back(int4{ (int)ie, (int)j, (int)z, (int)k });
                    for (int64_t x = k * P; x < k * P + P; x++)
                        pack->vals.push_back(x < g->nx ? row[x] : 0.0f);
                }
            }
    }
}

// Whether a source within `occupied` goes up in pieces: bounds of at most
// half the state's rows (as copy_source's rows), so that its pieces fit
// psi_b's first component.
static bool source_pieces_fit(const cuda_ctx *c, const grid_box *occupied)
{
    if (!occupied)
        return false;
    int64_t rows = 0;
    for (int64_t ie = 0; ie < c->g->ne; ie++) {
        const grid_box b = occupied[ie];
        if (b.z0 <= b.z1 && b.x0 <= b.x1)
            rows += (int64_t)(b.z1 - b.z0 + 1) * c->g->nth;
    }
    return 2 * rows <= dev_rows(c->d);
}

// The pieces into psi_a through psi_b's first bytes (zero again after),
// both on the state's stream: psi_a is zero (cleared, or zeroed here first),
// and psi_b holds the pieces' bytes (fewer than a component's: the source's
// rows are at most half the state's, source_pieces_fit).
static int scatter_source(cuda_ctx *c, const source_pack &pack, bool cleared, smx_error *err)
{
    const size_t bytes = (size_t)c->d.cells * c->ncomp * sizeof(float);
    const size_t n = pack.at.size(), vb = pack.vals.size() * sizeof(float), ab = n * sizeof(int4);
    if (vb + ab > (size_t)c->d.cells * sizeof(float))
        return smx_fail(err, SMX_EXIT_RUNTIME,
                        "internal: a source of %zu pieces does not fit the state's buffer", n);
    if (!cleared)
        CUDA_CHECK_ERR(err, cudaMemsetAsync(c->psi_a, 0, bytes, c->stream));
    char *scratch = reinterpret_cast<char *>(c->psi_b);
    CUDA_CHECK_ERR(
        err, cudaMemcpyAsync(scratch, pack.vals.data(), vb, cudaMemcpyHostToDevice, c->stream));
    CUDA_CHECK_ERR(
        err, cudaMemcpyAsync(scratch + vb, pack.at.data(), ab, cudaMemcpyHostToDevice, c->stream));
    const source_pieces_dev p{ reinterpret_cast<const int4 *>(scratch + vb),
                               reinterpret_cast<const float *>(scratch), (int64_t)n };
    CUDA_CHECK_ERR(err, source_scatter(c->psi_a, c->d, p, c->stream));
    CUDA_CHECK_ERR(err, cudaMemsetAsync(c->psi_b, 0, cleared ? vb + ab : bytes, c->stream));
    // The host's pack is freed on return: its copies must be done.
    CUDA_CHECK_ERR(err, cudaStreamSynchronize(c->stream));
    return 0;
}

// Before a field's next spot: zeroes where the fused path's regions say the
// finished run left values (the state's buffer: the occupied box over the
// source bins; the other buffer: the written box over its bins), so that a
// spot costs what its beam occupies, not the size of psi. Returns whether the
// buffers are all zero again (the other paths keep no regions: false, and the
// upload clears them whole).
static int clear_last_run(cuda_ctx *c, bool *cleared, smx_error *err)
{
    *cleared = false;
    if (!c->uploaded || !c->pipe.regions)
        return 0;
    active_regions rg;
    CUDA_CHECK_ERR(err, cudaStreamSynchronize(c->stream));
    CUDA_CHECK_ERR(err, cudaMemcpy(&rg, c->reg, sizeof rg, cudaMemcpyDeviceToHost));
    float *cur = (float *)current_psi(c), *other = cur == c->psi_a ? c->psi_b : c->psi_a;
    const bin_rows occupied = { rg.occupied.z0, rg.occupied.z1, rg.src_lo, rg.src_hi };
    const bin_rows written = { rg.written.z0, rg.written.z1, std::max(rg.wtgt_lo, 0),
                               std::min(rg.wtgt_hi, (int)c->d.ne - 1) };
    for (int k = 0; k < c->ncomp; k++) {
        CUDA_CHECK_ERR(err, clear_rows_launch(cur + k * c->d.cells, c->d, occupied, c->stream));
        CUDA_CHECK_ERR(err, clear_rows_launch(other + k * c->d.cells, c->d, written, c->stream));
    }
    *cleared = true;
    return 0;
}

// Only the rows of the boxes cross the bus, each bin's in the fewer copies
// (a row of every direction, or a run of rows of one direction; host rows
// are nx floats, device rows px); everything else, the rows' padding
// included, is zeroed on the device, so the time to start a narrow beam
// does not grow with psi. A state occupying most rows goes in one copy.
// cleared: the buffers are all zero already (clear_last_run).
static int copy_source(cuda_ctx *c, const float *psi0, const std::vector<box4> &boxes, bool cleared,
                       smx_error *err)
{
    const grid *g = c->g;
    // The clears of clear_last_run, on the state's stream, before the
    // copies below on the default one.
    CUDA_CHECK_ERR(err, cudaStreamSynchronize(c->stream));
    const size_t bytes = (size_t)c->d.cells * c->ncomp * sizeof(float);
    int64_t box_rows = 0;
    for (int64_t ie = 0; ie < g->ne; ie++)
        box_rows +=
            box_is_empty(boxes[ie]) ? 0 : (int64_t)(boxes[ie].z1 - boxes[ie].z0 + 1) * g->nth;
    if (2 * box_rows > dev_rows(c->d)) {
        CUDA_CHECK_ERR(err,
                       cudaMemcpy2D(c->psi_a, c->d.px * sizeof(float), psi0, g->nx * sizeof(float),
                                    g->nx * sizeof(float), dev_rows(c->d), cudaMemcpyHostToDevice));
        if (c->d.px > c->d.nx)
            CUDA_CHECK_ERR(err, cudaMemset2D(c->psi_a + c->d.nx, c->d.px * sizeof(float), 0,
                                             (c->d.px - c->d.nx) * sizeof(float), dev_rows(c->d)));
    } else {
        if (!cleared)
            CUDA_CHECK_ERR(err, cudaMemset(c->psi_a, 0, bytes));
        for (int64_t ie = 0; ie < g->ne; ie++) {
            const box4 b = boxes[ie];
            if (box_is_empty(b))
                continue;
            const int64_t nrow = b.z1 - b.z0 + 1;
            if (nrow <= g->nth) // per row z: that row of every direction, a plane apart
                for (int64_t z = b.z0; z <= b.z1; z++)
                    CUDA_CHECK_ERR(err,
                                   cudaMemcpy2D(c->psi_a + dev_index(c->d, ie, 0, z, 0),
                                                c->d.slice * sizeof(float),
                                                psi0 + psi_index(g, ie, 0, z, 0),
                                                g->slice * sizeof(float), g->nx * sizeof(float),
                                                g->nth, cudaMemcpyHostToDevice));
            else // per direction: its rows z0 .. z1
                for (int64_t j = 0; j < g->nth; j++)
                    CUDA_CHECK_ERR(err, cudaMemcpy2D(c->psi_a + dev_index(c->d, ie, j, b.z0, 0),
                                                     c->d.px * sizeof(float),
                                                     psi0 + psi_index(g, ie, j, b.z0, 0),
                                                     g->nx * sizeof(float), g->nx * sizeof(float),
                                                     nrow, cudaMemcpyHostToDevice));
        }
    }
    if (!cleared)
        CUDA_CHECK_ERR(err, cudaMemset(c->psi_b, 0, bytes));
    return 0;
}

// The source's active regions (the boxes, their bins' ranges, each slot's
// start), and whether a run with media takes its one pass for this source.
static int start_regions(cuda_ctx *c, const std::vector<box4> &boxes, smx_error *err)
{
    const grid *g = c->g;
    std::vector<box4> none(g->ne, box_empty4());
    box4 occ = box_empty4();
    for (int64_t ie = 0; ie < g->ne; ie++)
        occ = box_join(occ, boxes[ie]);
    active_regions r0{ occ, box_empty4(), 0, -1, 0, -1, (int)g->ne, -1 };
    // The ranges from the host copies of the tables (et points to device memory).
    std::vector<int2> tr(g->ne);
    for (int64_t ie = 0; ie < g->ne; ie++)
        tr[ie] = target_range(c->s, (int)ie);
    active_bin_ranges(boxes.data(), (int)g->ne, tr.data(), &r0);
    CUDA_CHECK_ERR(
        err, cudaMemcpy(c->box_a, boxes.data(), g->ne * sizeof(box4), cudaMemcpyHostToDevice));
    CUDA_CHECK_ERR(
        err, cudaMemcpy(c->box_next, none.data(), g->ne * sizeof(box4), cudaMemcpyHostToDevice));
    CUDA_CHECK_ERR(err, cudaMemcpy(c->reg, &r0, sizeof r0, cudaMemcpyHostToDevice));
    if (c->nslots > 1) {
        // Each slot's start: the union's box within the slot's columns
        // (a bound; the first step measures it); nothing written yet. The
        // deposit map holds the last run's values wherever it had weight.
        std::vector<box4> sb(SB_KINDS * FUSED_SLOTS, box_empty4());
        const int w = (int)slot_w(c->d);
        for (int k = 0; k < c->nslots && !box_is_empty(occ); k++) {
            box4 b{ occ.z0, occ.z1, std::max(occ.x0, k * w), std::min(occ.x1, k * w + w - 1) };
            if (b.x0 <= b.x1)
                sb[SB_OCCUPIED * FUSED_SLOTS + k] = b;
        }
        std::vector<int> pref(c->nslots + 1, 0);
        slot_prefix(sb.data(), c->nslots, pref.data());
        CUDA_CHECK_ERR(err, cudaMemcpy(c->slot_boxes, sb.data(), sb.size() * sizeof(box4),
                                       cudaMemcpyHostToDevice));
        CUDA_CHECK_ERR(err, cudaMemcpy(c->slot_pref, pref.data(), pref.size() * sizeof(int),
                                       cudaMemcpyHostToDevice));
        // The column groups' bins at step 0 (the source's boxes bound
        // them); the other buffer is zero and nothing is measured yet.
        const int64_t ncg = c->gbins.ncg, ng = c->d.nz * ncg;
        std::vector<int2> gb(3 * ng, group_bins_none());
        int2 *in = gb.data() + GB_INPUT * ng;
        for (int64_t ie = 0; ie < g->ne; ie++) {
            const box4 b = boxes[ie];
            if (box_is_empty(b))
                continue;
            for (int64_t z = b.z0; z <= b.z1; z++)
                for (int64_t k = b.x0 / GROUP_BINS_COLS; k <= b.x1 / GROUP_BINS_COLS; k++) {
                    int2 &r = in[z * ncg + k];
                    r.x = std::min(r.x, (int)ie), r.y = std::max(r.y, (int)ie);
                }
        }
        CUDA_CHECK_ERR(err, cudaMemcpy(c->gbins.r, gb.data(), gb.size() * sizeof(int2),
                                       cudaMemcpyHostToDevice));
        CUDA_CHECK_ERR(err, cudaMemset(c->dmap, 0, (size_t)c->d.nth * c->d.slice * sizeof(float)));
    }
    return 0;
}

// The step's graph holds this source's early-exit threshold: captured anew.
static int capture_step(cuda_ctx *c, smx_error *err)
{
    if (c->graph) {
        CUDA_CHECK_ERR(err, cudaGraphExecDestroy(c->graph));
        c->graph = NULL;
    }
    if (!c->use_graph)
        return 0;
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
    return 0;
}

// The kernel_variants line of the provenance: which paths this source runs.
static void describe_variants(cuda_ctx *c)
{
    // The fused kernel splits a step's energy range across blocks when the
    // step has few tiles (a pencil beam); the provenance records the limit.
    char split_why[64] = "off";
    if ((c->fused || c->media_single) && c->split.max_tiles > 0)
        snprintf(split_why, sizeof split_why, "steps<=%d_tiles(groups>=%d_bins)",
                 c->split.max_tiles, FUSED_SPLIT_MIN_BINS);
    // Where the spectral tallies (halo release, LET, dose to water) are taken.
    // In the pass, its split steps' planes come from the direction sums it
    // wrote, or where those do not fit, from both tally kernels (split_apart).
    char tallies[48] = "none";
    const bool in_pass = fused_takes_tallies(c) || media_takes_tallies(c);
    if (c->planes > 1)
        snprintf(tallies, sizeof tallies, "%s(%d_planes%s)", in_pass ? "in_pass" : "apart",
                 c->planes - 1, in_pass && !split_sums(c) ? ",split_apart" : "");
    const step_pipeline k = c->pipe.kind;
    snprintf(c->variants, sizeof c->variants,
             "angular=%s energy=%s stream=%s streaming_scheme=%s cuda_graph=%s early_exit=%s(%.3g) "
             "fused=%s spectral_tallies=%s energy_split=%s fused_tiles_per_block=%d "
             "fused_boundary_rows=%d row_pitch=%lld slot_boxes=%d",
             c->angular_why, c->energy_gather ? "gather" : "scatter",
             c->stream_variant == SV_GATHER   ? "gather"
             : c->stream_variant == SV_ATOMIC ? "atomic"
             : c->stream_variant == SV_WARP   ? "warp"
                                              : "fallback",
             backend_scheme_name(c->s->st.scheme), c->use_graph ? "on" : "off",
             c->set.early_exit == EARLY_EXIT_OFF     ? "off"
             : c->set.early_exit == EARLY_EXIT_FIXED ? "fixed"
                                                     : "adaptive",
             (double)c->threshold,
             k == PIPE_FUSED_ONE_PASS && c->media ? "media (one pass)"
             : k == PIPE_FUSED_ONE_PASS           ? "theta+energy+stream (one pass)"
             : k == PIPE_FUSED_TWO_PASS           ? "theta+energy, stream+measure"
             : k == PIPE_MOMENTS_REGIONS ? "moments (theta, energy, stream+measure; active region)"
                                         : "no",
             tallies, split_why, c->tiles, c->fused ? c->ft.n_wide : 0, (long long)c->d.px,
             slot_boxes_visited(c));
}

int cuda_upload(void *vctx, const float *psi0, const grid_box *occupied, double w0, double e0,
                smx_error *err)
{
    cuda_ctx *c = (cuda_ctx *)vctx;
    bool cleared = false;
    c->keep_halo = 0; // until halo_keep asks again
    if (int rc = clear_last_run(c, &cleared, err))
        return rc;
    if (int rc = cuda_medium_upload(c, err))
        return rc;
    c->set = backend_settings_of(c->s); // the plan as the tables point to it now, as at setup
    const backend_settings &b = c->set;
    const grid *g = c->g;
    std::vector<box4> boxes(g->ne);
    float mx = 0.0f;
    // A source within bounds of at most half the state's rows (a field's
    // spots, a windowed beam) goes up in pieces of 32 columns that hold a
    // value: the spots side by side of a batch hold a few columns of each
    // slot's width in each of their rows.
    source_pack pack;
    const bool pieces = source_pieces_fit(c, occupied);
    source_boxes(g, psi0, occupied, boxes.data(), &mx, pieces ? &pack : nullptr);
    if (int rc = pieces ? scatter_source(c, pack, cleared, err)
                        : copy_source(c, psi0, boxes, cleared, err))
        return rc;
    if (c->ncomp > 1) { // the source's moments, from its weights (moments.cuh), once copied
        CUDA_CHECK_ERR(err, cudaDeviceSynchronize());
        CUDA_CHECK_ERR(err, moments_source(c->psi_a, c->d, c->blocks, c->stream));
    }
    CUDA_CHECK_ERR(err, cudaMemset(c->dose, 0, (size_t)c->d.slice * c->planes * sizeof(double)));
    CUDA_CHECK_ERR(err, cudaMemset(c->stop, 0, sizeof(int)));
    c->threshold = backend_early_exit_threshold(&b, mx);
    if (int rc = start_regions(c, boxes, err))
        return rc;
    run_state_dev st{ w0, e0, b.steps == 0 ? b.auto_stop_weight * w0 : -1.0, 0, 0 };
    c->w0 = w0;
    c->e0 = e0;
    CUDA_CHECK_ERR(err, cudaMemcpy(c->state, &st, sizeof st, cudaMemcpyHostToDevice));

    // Angular method: locked at the first upload for the whole run, a
    // field's later spots included (backend_cuda_angular.cu).
    if (!c->uploaded) {
        if (int rc = cuda_choose_angular(c, err))
            return rc;
        if (c->angular != 0) // no fused pass: nothing of it (split_sums too) may stay set
            c->fused = c->single_pass = c->fused_tallies = c->split_sums = c->media_regions =
                c->media_single = c->media_single_ok = 0;
    }
    choose_pipeline(c);
    // The whole device, not only the step's stream: the upload's copies above
    // (cudaMemcpy on the legacy stream) return once a pageable source is
    // staged, and the non-blocking step stream does not wait for their DMA.
    CUDA_CHECK_ERR(err, cudaDeviceSynchronize());
    c->uploaded = 1;
    c->enqueued = 0;
    if (int rc = capture_step(c, err))
        return rc;
    describe_variants(c);
    return 0;
}

// The buffer holding the state after the steps enqueued so far.
const float *current_psi(const cuda_ctx *c)
{
    return c->pipe.alternates && (c->enqueued & 1) ? c->psi_b : c->psi_a;
}

int cuda_step(void *vctx, int64_t n, smx_error *err)
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

int cuda_collect(void *vctx, step_record *out, int max, int *n_out, smx_error *err)
{
    cuda_ctx *c = (cuda_ctx *)vctx;
    step_rec_dev ring[RING];
    run_state_dev st;
    CUDA_CHECK_ERR(err,
                   cudaMemcpyAsync(&st, c->state, sizeof st, cudaMemcpyDeviceToHost, c->stream));
    CUDA_CHECK_ERR(err,
                   cudaMemcpyAsync(ring, c->ring, sizeof ring, cudaMemcpyDeviceToHost, c->stream));
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
        static_assert(TF_E_THETA_BOUNDARY - TF_W_THETA_BOUNDARY == CH_COUNT &&
                          TF_DEPOSITED - TF_E_THETA_BOUNDARY == CH_COUNT,
                      "one weight and one energy field per tally channel, in tally.h's order");
        for (int ch = 0; ch < CH_COUNT; ch++) {
            o->b.t.weight[ch] = r.f[TF_W_THETA_BOUNDARY + ch];
            o->b.t.energy[ch] = r.f[TF_E_THETA_BOUNDARY + ch];
        }
        o->b.t.deposited = r.f[TF_DEPOSITED];
        tally_close_balance(&o->b, c->w0, c->e0);
        o->front_row = r.front;
        o->back_row = r.back;
        o->stopped = r.stopped;
    }
    *n_out = n;
    return 0;
}

int cuda_snapshot_begin(void *vctx, smx_error *err)
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

int cuda_snapshot_wait(void *vctx, const float **psi, smx_error *err)
{
    cuda_ctx *c = (cuda_ctx *)vctx;
    CUDA_CHECK_ERR(err, cudaEventSynchronize(c->ev_copy));
    *psi = c->pinned;
    return 0;
}

// The window moves (transport/window.h): the paths that keep regions (box_a)
// know where psi holds weight, so only those rows move; the dose rows that
// leave go to the host first. The step's graph holds only pointers, which
// stay: it replays on as before.
int cuda_shift(void *vctx, int rows, double *dose_out, smx_error *err)
{
    cuda_ctx *c = (cuda_ctx *)vctx;
    if (!cuda_can_shift(c) || rows <= 0 || rows >= c->d.nz)
        return smx_fail(err, SMX_EXIT_RUNTIME,
                        "internal: a window shift of %d rows on a path "
                        "without regions",
                        rows);
    active_regions rg;
    CUDA_CHECK_ERR(err, cudaStreamSynchronize(c->stream));
    CUDA_CHECK_ERR(err, cudaMemcpy(&rg, c->reg, sizeof rg, cudaMemcpyDeviceToHost));
    if (!box_is_empty(rg.occupied) && rg.occupied.z0 < rows)
        return smx_fail(err, SMX_EXIT_RUNTIME,
                        "internal: a window shift of %d rows with weight in row %d", rows,
                        rg.occupied.z0);
    for (int q = 0; q < c->planes; q++)
        if (!halo_plane_kept(c, q))
            CUDA_CHECK_ERR(err, cudaMemcpy2D(dose_out + (size_t)q * rows * c->d.nx,
                                             c->d.nx * sizeof(double), c->dose + q * c->d.slice,
                                             c->d.px * sizeof(double), c->d.nx * sizeof(double),
                                             rows, cudaMemcpyDeviceToHost));
    if (c->keep_halo) { // the leaving rows' released energy joins the blocks instead
        CUDA_CHECK_ERR(err, halo_blocks_add(c->hb, c->hb_z0, 0, rows, c->stream));
        c->hb_z0 += rows;
    }
    float *cur = (float *)current_psi(c), *other = cur == c->psi_a ? c->psi_b : c->psi_a;
    window_shift_args w;
    w.cur = cur;
    w.other = other;
    w.ncomp = c->ncomp;
    w.dose = c->dose;
    w.planes = c->planes;
    w.box_a = c->box_a;
    w.reg = c->reg;
    w.rg = rg;
    w.d = c->d;
    take_slots(w, c);
    w.groups_kept = slot_boxes_visited(c) > 1;
    w.st = c->state;
    CUDA_CHECK_ERR(err, window_shift_launch(w, rows, c->stream));
    // The deposit map's values lie at the rows before the move, where the
    // slots' boxes no longer say a step rewrites them (fused_step).
    if (c->nslots > 1)
        CUDA_CHECK_ERR(
            err,
            cudaMemsetAsync(c->dmap, 0, (size_t)c->d.nth * c->d.slice * sizeof(float), c->stream));
    if (int rc = cuda_medium_upload(c, err)) // on the stream, after the shift's kernels
        return rc;
    return 0;
}

int cuda_can_shift(void *vctx)
{
    const cuda_ctx *c = (const cuda_ctx *)vctx;
    return c->pipe.regions;
}

int cuda_download_dose(void *vctx, double *dose, smx_error *err)
{
    cuda_ctx *c = (cuda_ctx *)vctx;
    CUDA_CHECK_ERR(err, cudaStreamSynchronize(c->stream));
    for (int q = 0; q < c->planes; q++)
        if (!halo_plane_kept(c, q))
            CUDA_CHECK_ERR(err, cudaMemcpy2D(dose + (size_t)q * c->d.nz * c->d.nx,
                                             c->d.nx * sizeof(double), c->dose + q * c->d.slice,
                                             c->d.px * sizeof(double), c->d.nx * sizeof(double),
                                             c->d.nz, cudaMemcpyDeviceToHost));
    return 0;
}

void cuda_describe(void *vctx, run_result *r)
{
    cuda_ctx *c = (cuda_ctx *)vctx;
    snprintf(r->backend_name, sizeof r->backend_name, "cuda");
    snprintf(r->device_name, sizeof r->device_name, "%s", c->info.name);
    snprintf(r->compute_capability, sizeof r->compute_capability, "%d.%d", c->info.cc_major,
             c->info.cc_minor);
    snprintf(r->kernel_variants, sizeof r->kernel_variants, "%s arena=%.3fGB", c->variants,
             c->arena_bytes / 1e9);
}

void cuda_release(void *vctx)
{
    cuda_ctx *c = (cuda_ctx *)vctx;
    if (!c)
        return;
    if (c->stream)
        cudaStreamSynchronize(c->stream);
    halo_fft_destroy(c->halo);
    cudaFree(c->hb.blocks);
    cudaFree((void *)c->hb.x0);
    if (c->fft)
        angular_fft_destroy(c->fft);
    if (c->graph)
        cudaGraphExecDestroy(c->graph);
    if (c->ev_step)
        cudaEventDestroy(c->ev_step);
    if (c->ev_copy)
        cudaEventDestroy(c->ev_copy);
    if (c->ev_medium)
        cudaEventDestroy(c->ev_medium);
    if (c->medium_host)
        cudaFreeHost(c->medium_host);
    if (c->copy)
        cudaStreamDestroy(c->copy);
    if (c->stream)
        cudaStreamDestroy(c->stream);
    if (c->pinned)
        cudaFreeHost(c->pinned);
    if (c->arena)
        arena_keep(arena_block{ c->arena, c->arena_have });
    free(c);
}

// Further states of the plan that fit beside this one: within the plan's cap
// on device memory (gpu_memory_fraction / gpu_memory_bytes, for all states
// together) and the memory free now, less a reserve for the runtime. One
// where the angular method was timed (the FFT in play): another state could
// choose differently and compute a spot's dose differently.
#define LANES_MAX 64
#define LANES_RESERVE_BYTES (512.0 * 1024 * 1024)

int cuda_lanes(void *vctx)
{
    cuda_ctx *c = (cuda_ctx *)vctx;
    if (c->fft)
        return 1;
    size_t free_b = 0, total_b = 0;
    if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) {
        cudaGetLastError();
        return 1;
    }
    const backend_settings &b = c->set;
    double cap = b.gpu_memory_fraction * (double)total_b;
    if (b.gpu_memory_bytes > 0 && b.gpu_memory_bytes < cap)
        cap = b.gpu_memory_bytes;
    const double each = (double)c->arena_bytes;
    // Free for the states: what the device has free, this state's arena
    // beyond its need and an arena kept from an earlier state (arena_keep.cuh).
    const double free_for =
        (double)free_b + (double)(c->arena_have - c->arena_bytes) + (double)arena_kept_bytes();
    int by_cap = (int)(cap / each), by_free = 1 + (int)((free_for - LANES_RESERVE_BYTES) / each);
    int n = by_cap < by_free ? by_cap : by_free;
    return n < 1 ? 1 : n > LANES_MAX ? LANES_MAX : n;
}
