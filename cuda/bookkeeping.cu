// End-of-step kernels of the CUDA backend (bookkeeping.cuh says what each does).
#include "bookkeeping.cuh"

#include "tiling.cuh"

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

// Source bins that hold weight and the target bins they move to (those that
// receive a non-zero coefficient, trange). Host side (upload).
void active_bin_ranges(const box4 *box, int ne, const int2 *trange, active_regions *reg)
{
    int slo = ne, shi = -1, tlo = ne, thi = -1;
    for (int k = 0; k < ne; k++) {
        if (box_is_empty(box[k]))
            continue;
        slo = min(slo, k);
        shi = max(shi, k);
        if (trange[k].y >= 0) {
            tlo = min(tlo, trange[k].x);
            thi = max(thi, trange[k].y);
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
                              step_rec_dev *ring, run_state_dev *st, int *stop, int ne, box4 *box_a,
                              box4 *box_next, active_regions *reg, energy_tables_dev et,
                              int single_pass, box4 *slot_boxes, int *slot_pref, int nslots,
                              group_bins_dev gbins, int nz)
{
    __shared__ double sums[TF_COUNT];
    __shared__ int s_tiles[FUSED_SLOTS];
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
    int2 tr_first{ -1, -1 };
    if (box_a && t < ne) {
        b_first = box_next[t];
        tr_first = et.trange[t];
    }
    const int64_t n = gbins.r ? st->step : 0; // this step's count (rs.step)
    if (t < 9)
        red[t] = (t == 0 || t == 2 || t == 4 || t == 6) ? INT_MAX : -1;
    // One warp per field: each lane sums a fixed stride of the block partials,
    // then a shuffle tree; the order is fixed, so the result is deterministic.
    // Eight loads are issued before their adds: one at a time, each of a
    // lane's partials would wait a full memory latency, on every step's
    // critical path.
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
    if (slot_boxes && t < nslots) {
        // Each slot's boxes as the union's below: this step's input becomes
        // what the next step overwrites, the measured box the next input.
        box4 *const sb = slot_boxes + t;
        const box4 occ = sb[SB_OCCUPIED * FUSED_SLOTS], next = sb[SB_NEXT * FUSED_SLOTS];
        sb[SB_WRITTEN * FUSED_SLOTS] = occ;
        sb[SB_OCCUPIED * FUSED_SLOTS] = next;
        sb[SB_NEXT * FUSED_SLOTS] = box_empty4();
        s_tiles[t] = slot_tiles(slot_boxes, t); // the boxes just written
    }
    if (gbins.r) { // what this step's output buffer held is next step's to measure
        int2 *r = group_bins_at(gbins, nz, n, GB_OUTPUT);
        for (int64_t i = t; i < (int64_t)nz * gbins.ncg; i += blockDim.x)
            r[i] = group_bins_none();
    }
    __syncthreads(); // red initialised
    if (box_a) {
        // Each thread's extremes, then one warp reduction and one shared
        // atomic per warp and value: per-thread atomics on the same eight
        // words serialise within each warp.
        int zlo = INT_MAX, zhi = -1, xlo = INT_MAX, xhi = -1, slo = INT_MAX, shi = -1,
            tlo = INT_MAX, thi = -1;
        for (int k = t; k < ne; k += blockDim.x) {
            const bool first = k == t;
            const box4 b = first ? b_first : box_next[k];
            const int2 tr = first ? tr_first : et.trange[k];
            box_a[k] = b;
            box_next[k] = box_empty4();
            if (box_is_empty(b))
                continue;
            zlo = min(zlo, b.z0), zhi = max(zhi, b.z1);
            xlo = min(xlo, b.x0), xhi = max(xhi, b.x1);
            slo = min(slo, k), shi = max(shi, k);
            if (tr.y >= 0) {
                tlo = min(tlo, tr.x);
                thi = max(thi, tr.y);
            }
        }
        // blockDim.x is whole warps: every lane takes part.
        zlo = warp_min(zlo), zhi = warp_max(zhi);
        xlo = warp_min(xlo), xhi = warp_max(xhi);
        slo = warp_min(slo), shi = warp_max(shi);
        tlo = warp_min(tlo), thi = warp_max(thi);
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
    if (slot_boxes && nslots > 1) { // the next step's tiles before each slot's (fused_step)
        int n = 0;
        for (int k = 0; k < nslots; k++) {
            slot_pref[k] = n;
            n += s_tiles[k];
        }
        slot_pref[nslots] = n;
    }
    int front = red[8];
    int back = front >= 0 ? 0 : -1;
    if (box_a) {
        // Where the buffer written next step holds values now: the two-pass
        // step overwrites psi_b, which holds this step's theta+energy output
        // (the targets); the single pass overwrites the buffer of this step's
        // input (the sources).
        rg.written = rg.occupied;
        rg.wtgt_lo = single_pass ? rg.src_lo : rg.tgt_lo;
        rg.wtgt_hi = single_pass ? rg.src_hi : rg.tgt_hi;
        rg.occupied = red[1] >= 0 ? box4{ red[0], red[1], red[2], red[3] } : box_empty4();
        rg.src_lo = red[5] >= 0 ? red[4] : ne, rg.src_hi = red[5];
        rg.tgt_lo = red[7] >= 0 ? red[6] : ne, rg.tgt_hi = red[7];
        *reg = rg;
        front = red[1];
        back = red[1] >= 0 ? red[0] : -1;
    }
    step_rec_dev r;
    for (int k = 0; k < TF_COUNT; k++)
        r.f[k] = sums[k];
    r.w_in = rs.w_prev;
    r.e_in = rs.e_prev;
    r.front = front;
    r.back = back;
    // as backend_auto_stop (transport/backend.h): below the threshold, or no weight left
    r.stopped = rs.stop_below >= 0.0 && (sums[TF_W_OUT] < rs.stop_below || sums[TF_W_OUT] <= 0.0);
    ring[rs.n_since % RING] = r;
    rs.w_prev = sums[TF_W_OUT];
    rs.e_prev = sums[TF_E_OUT];
    rs.step++;
    rs.n_since++;
    *st = rs;
    if (r.stopped)
        *stop = 1;
}

cudaError_t measure_launch(const measure_args &a, cudaStream_t s)
{
    measure_kernel<<<a.blocks, SMX_THREADS, 0, s>>>(a.psi, a.d, a.E, a.stop, a.partials,
                                                    a.front_part, a.blocks);
    return cudaGetLastError();
}

cudaError_t finish_launch(const finish_args &a, cudaStream_t s)
{
    if (a.nslots > FUSED_SLOTS)
        return cudaErrorInvalidValue;
    finish_kernel<<<1, 32 * TF_COUNT, 0, s>>>(a.partials, a.slots, a.front_part, a.blocks, a.ring,
                                              a.st, a.stop, a.ne, a.box_a, a.box_next, a.reg, a.et,
                                              a.single_pass, a.slot_boxes, a.slot_pref, a.nslots,
                                              a.nslots > 1 ? a.gbins : group_bins_dev{}, a.nz);
    return cudaGetLastError();
}

__global__ void clear_rows_kernel(float *psi, dev_dims d, int z0, int nrow, int lo, int64_t rows)
{
    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        const int64_t ie = lo + r / (d.nth * nrow), rem = r % (d.nth * nrow);
        float *row = psi + dev_index(d, ie, rem / nrow, z0 + rem % nrow, 0);
        for (int64_t x = threadIdx.x; x < d.px; x += blockDim.x)
            row[x] = 0.0f;
    }
}

cudaError_t clear_rows_launch(float *psi, dev_dims d, bin_rows r, cudaStream_t s)
{
    const int z0 = r.z0, z1 = r.z1, lo = r.lo, hi = r.hi;
    if (z1 < z0 || hi < lo)
        return cudaSuccess;
    const int nrow = z1 - z0 + 1;
    const int64_t rows = (int64_t)(hi - lo + 1) * d.nth * nrow;
    const int blocks = (int)(rows < 65536 ? rows : 65536);
    clear_rows_kernel<<<blocks, SMX_THREADS, 0, s>>>(psi, d, z0, nrow, lo, rows);
    return cudaGetLastError();
}
