// A_stream on the GPU (see streaming.cuh for the semantics and the variants).
//
// Launch configuration: every kernel runs on the fixed grid `blocks` x SMX_THREADS
// (1-D, no dynamic shared memory) and walks its work items with a grid-stride loop:
//   gather    items = OUTPUT cells 0 .. d.cells-1 (the same thread also tallies
//             the leak of the SOURCE at its own cell)
//   atomic,   items = SOURCE cells 0 .. d.cells-1; launched after a zeroing
//   warp,     kernel (stream_zero, same grid) that clears `out`
//   fallback
//
// Stop: every kernel (stream_zero included) returns at once when *stop != 0.
// The test is uniform per block (all threads read the same word), and it comes
// before block_partials(), so a stopped step writes neither `out` nor the
// partials: the backend must ignore the partials of stopped steps (it does, the
// step is not recorded). `out` is cleared by a kernel that honours *stop rather
// than by cudaMemsetAsync, so that steps enqueued beyond the end change nothing
// (common.cuh); it is as graph-capturable as the memset.
//
// Warp convergence (warp, fallback): the grid-stride loop runs per WARP, not
// per thread: all 32 lanes of a warp share `base` (a multiple of 32, since
// SMX_THREADS is) and so run the same number of iterations; lane `lane` takes
// item base + lane and carries a `valid` predicate for the tail. Every
// *_sync intrinsic is therefore reached by all 32 lanes, with the full mask
// (equal to __ballot_sync(0xffffffff, 1) at those points), never inside a
// divergent branch and never after a divergent return; __activemask() is not
// used. Targets outside the domain, and all targets of invalid lanes, are the
// sentinel -1, which forms its own match group that never issues an atomic.
#include "streaming.cuh"

namespace {

constexpr unsigned FULL = 0xffffffffu;
static_assert(SMX_THREADS % 32 == 0, "the per-warp grid-stride loop needs whole warps");

// Cell (z, x) lies in the domain of column `from` (0 <= from < nx): the grid,
// or the slot holding `from` where the grid has slots.
__device__ __forceinline__ bool in_domain(const dev_dims &d, int64_t z, int64_t x, int64_t from)
{
    const int64_t lo = slot_lo(d, (int)from);
    return z >= 0 && z < d.nz && x >= lo && x < lo + slot_w(d);
}

// One cell, decomposed.
struct cell {
    int64_t plane; // (ie * nth + j) * slice
    int64_t ie, j, z, x;
};

__device__ __forceinline__ cell decompose(const dev_dims &d, int64_t i)
{
    cell c;
    const int64_t p = i / d.slice; // ie * nth + j
    const int64_t r = i - p * d.slice; // z * px + x (x >= nx: a row's padding)
    c.z = r / d.px;
    c.x = r - c.z * d.px;
    c.ie = p / d.nth;
    c.j = p - c.ie * d.nth;
    c.plane = p * d.slice;
    return c;
}

// The move of direction j at step n: offsets and, for bilinear, the 4 weights
// (k = 2a + b goes to (z + dz + a, x + dx + b)); shift has one target, weight 1.
template <bool SHIFT>
struct dir_move {
    int64_t dz, dx;
    float w[4];
};

template <bool SHIFT>
__device__ __forceinline__ dir_move<SHIFT> move_of(const stream_tables_dev &t, int64_t j, int64_t n)
{
    dir_move<SHIFT> m;
    if (SHIFT) {
        m.dz = stream_shift_of(__ldg(t.sz + j), n);
        m.dx = stream_shift_of(__ldg(t.sx + j), n);
        m.w[0] = 1.0f;
        m.w[1] = m.w[2] = m.w[3] = 0.0f;
    } else {
        m.dz = __ldg(t.oz + j);
        m.dx = __ldg(t.ox + j);
        for (int k = 0; k < 4; k++)
            m.w[k] = __ldg(t.w + 4 * j + k);
    }
    return m;
}

__host__ __device__ constexpr int ntargets(bool shift)
{
    return shift ? 1 : 4;
}

// The targets of one source cell: global index (-1 when outside the domain)
// and the value w * in sent there; returns the leaked weight
// sum_{k outside} (double)w[k] * in, as cpu_op_stream() computes it.
template <bool SHIFT>
__device__ __forceinline__ double
source_targets(const dev_dims &d, const cell &c, const dir_move<SHIFT> &m, float v,
               long long (&tgt)[ntargets(SHIFT)], float (&val)[ntargets(SHIFT)])
{
    double leak = 0.0;
    for (int k = 0; k < ntargets(SHIFT); k++) {
        const int64_t tz = c.z + m.dz + k / 2, tx = c.x + m.dx + k % 2;
        if (in_domain(d, tz, tx, c.x)) {
            // v == 0 (most of phase space) adds +0 to a cleared cell: skipped,
            // which changes no bit of the result and saves the atomic.
            tgt[k] = v != 0.0f ? c.plane + tz * d.px + tx : -1;
            val[k] = SHIFT ? v : __fmul_rn(m.w[k], v);
        } else {
            tgt[k] = -1;
            val[k] = 0.0f;
            leak += SHIFT ? (double)v : (double)m.w[k] * (double)v;
        }
    }
    return leak;
}

// The leak of the source *src at cell c alone (gather); *src is read only
// when some target is outside the domain.
template <bool SHIFT>
__device__ __forceinline__ double source_leak(const dev_dims &d, const cell &c,
                                              const dir_move<SHIFT> &m, const float *src)
{
    bool out = false;
    for (int k = 0; k < ntargets(SHIFT); k++)
        out = out || !in_domain(d, c.z + m.dz + k / 2, c.x + m.dx + k % 2, c.x);
    if (!out)
        return 0.0;
    long long tgt[ntargets(SHIFT)];
    float val[ntargets(SHIFT)];
    return source_targets<SHIFT>(d, c, m, __ldg(src), tgt, val);
}

__device__ __forceinline__ unsigned warp_max_unsigned(unsigned v)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    return __reduce_max_sync(FULL, v);
#else
    for (int off = 16; off > 0; off >>= 1) {
        const unsigned o = __shfl_xor_sync(FULL, v, off);
        v = o > v ? o : v;
    }
    return v;
#endif
}

// Warp-aggregated add. MUST be called by all 32 lanes of the warp together (see
// the file comment). tgt < 0: nothing to add.
//   grp    = lanes whose target equals mine (__match_any_sync; the sentinel
//            lanes form a group of their own, which never adds)
//   leader = lowest lane of grp; it adds val of every other lane of grp, in
//            increasing lane order, to its own, then issues the one atomicAdd.
// Only lanes of grp are ever added into the leader's sum: at round r each lane
// reads (one __shfl_sync, all lanes, full mask) the value of the r-th member
// after the leader of ITS OWN group, taken from its own copy of grp. The rounds
// run to the largest live group of the warp (uniform), so lanes of smaller
// groups (and sentinel lanes) read themselves and add nothing more.
__device__ __forceinline__ void add_warp(float *out, long long tgt, float val, int lane)
{
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 700
    const unsigned grp = __match_any_sync(FULL, (unsigned long long)tgt);
    const bool live = tgt >= 0;
    const unsigned cnt = live ? (unsigned)__popc(grp) : 1u;
    const unsigned rounds = warp_max_unsigned(cnt); // 1 when no two live lanes share a target
    unsigned rest = grp & (grp - 1); // grp without its leader (lowest bit)
    float sum = val;
    for (unsigned r = 1; r < rounds; r++) {
        const bool has = rest != 0;
        const int src = has ? __ffs(rest) - 1 : lane;
        rest &= rest - 1;
        const float o = __shfl_sync(FULL, val, src);
        if (has)
            sum = __fadd_rn(sum, o);
    }
    if (live && lane == __ffs(grp) - 1)
        atomicAdd(out + tgt, sum);
#else
    (void)lane; // no __match_any_sync before CC 7.0: plain atomics
    if (tgt >= 0)
        atomicAdd(out + tgt, val);
#endif
}

// The fallback variant: if all live lanes (valid, target in the domain) share
// one target, one shuffle reduction over the warp (the other lanes contribute
// 0) and lane 0 adds once; otherwise every live lane adds its own value.
// MUST be called by all 32 lanes together. The branches depend only on warp-
// uniform values (ballot, all), so the shuffles inside run converged.
__device__ __forceinline__ void add_fallback(float *out, long long tgt, float val, int lane)
{
    const bool live = tgt >= 0;
    const unsigned lm = __ballot_sync(FULL, live);
    const int first = lm ? __ffs(lm) - 1 : 0;
    const long long t0 = __shfl_sync(FULL, tgt, first);
    const bool same = __all_sync(FULL, !live || tgt == t0);
    if (lm != 0 && same) {
        float v = live ? val : 0.0f;
        for (int off = 16; off > 0; off >>= 1)
            v = __fadd_rn(v, __shfl_down_sync(FULL, v, off));
        if (lane == 0)
            atomicAdd(out + t0, v);
    } else if (live) {
        atomicAdd(out + tgt, val);
    }
}

enum scatter_mode { MODE_ATOMIC, MODE_WARP, MODE_FALLBACK };

__device__ __forceinline__ void write_partials(double lw, double le, double *partials, int blocks)
{
    const double a[1] = { lw }, b[1] = { le };
    block_partials<1>(a, partials, TF_W_SPATIAL_LEAK, blocks);
    block_partials<1>(b, partials, TF_E_SPATIAL_LEAK, blocks);
}

// ---- kernels -----------------------------------------------------------------

__global__ void __launch_bounds__(SMX_THREADS)
    stream_zero(float *__restrict__ out, int64_t n, const int *stop)
{
    if (*stop)
        return;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        out[i] = 0.0f;
}

// The value gathered into output cell (z, x) of one plane: its <= 4 sources in
// the CPU's order (a, b) = (0,0) (0,1) (1,0) (1,1), or the one shifted source.
template <bool SHIFT>
__device__ __forceinline__ float gather_cell(const float *__restrict__ in, const dev_dims &d,
                                             int64_t plane, int64_t z, int64_t x,
                                             const dir_move<SHIFT> &m)
{
    float acc = 0.0f;
    if (x >= d.nx) // a row's padding receives nothing (what moves there has left the domain)
        return acc;
    if (SHIFT) {
        const int64_t sz = z - m.dz, sx = x - m.dx;
        if (in_domain(d, sz, sx, x))
            acc = __ldg(in + plane + sz * d.px + sx);
    } else {
        for (int a = 0; a < 2; a++) {
            const int64_t sz = z - m.dz - a;
            if (sz < 0 || sz >= d.nz)
                continue;
            for (int b = 0; b < 2; b++) {
                const int64_t sx = x - m.dx - b;
                if (in_domain(d, sz, sx, x))
                    acc = __fadd_rn(acc,
                                    __fmul_rn(m.w[2 * a + b], __ldg(in + plane + sz * d.px + sx)));
            }
        }
    }
    return acc;
}

// One thread per OUTPUT cell; bitwise the CPU gather (same operand order, no
// contraction: __fmul_rn / __fadd_rn whatever --fmad says).
template <bool SHIFT>
__global__ void __launch_bounds__(SMX_THREADS)
    stream_gather(const float *__restrict__ in, float *__restrict__ out, const int64_t *step,
                  dev_dims d, stream_tables_dev t, const int *stop, double *__restrict__ partials,
                  int blocks)
{
    if (*stop)
        return; // uniform per block: no partials for a stopped step
    const int64_t n = *step;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    double lw = 0.0, le = 0.0;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < d.cells; i += stride) {
        const cell c = decompose(d, i);
        const dir_move<SHIFT> m = move_of<SHIFT>(t, c.j, n);
        out[i] = gather_cell<SHIFT>(in, d, c.plane, c.z, c.x, m);
        // Leak of the source at this cell.
        const double leak = source_leak<SHIFT>(d, c, m, in + i);
        if (leak != 0.0) {
            lw += leak;
            le += leak * __ldg(t.E + c.ie);
        }
    }
    write_partials(lw, le, partials, blocks);
}

// Gather plus the end-of-step measure, for when streaming is the step's last
// operator, restricted to the active region: the rows of `occupied` (where the
// input holds weight) joined with their image under this step's moves. Every
// output cell outside that region is already zero (it held nothing before and
// receives nothing), so it is not touched. One work item is one row (plane,
// z); its cells go to the threads along x. The output is summed as it is
// written (TF_W_OUT, TF_E_OUT) and each energy bin's non-zero extent is
// collected into box_next (per block in shared memory, then one global atomic
// per bin and side), which becomes the next step's box_a.
template <bool SHIFT>
__global__ void __launch_bounds__(SMX_THREADS)
    stream_gather_measure(const float *__restrict__ in, float *__restrict__ out,
                          const int64_t *step, dev_dims d, stream_tables_dev t,
                          const active_regions *reg, int4 reach, box4 *box_next, const int *stop,
                          double *__restrict__ partials, int blocks)
{
    extern __shared__ int sbox[]; // [ne][4]
    if (*stop)
        return;
    const int ne = (int)d.ne;
    extents_clear(sbox, ne);
    __syncthreads();
    const int64_t n = *step;
    // reach = (min dz, max dz, min dx, max dx) over directions, bilinear +1 included
    const box4 R = stream_region(d, reg, reach);
    // Energy bins to touch: those streamed now (the targets of this step's
    // energy loss) and those whose old values in `out` must become zero.
    const int blo = min(reg->src_lo, reg->tgt_lo), bhi = max(reg->src_hi, reg->tgt_hi);
    const int64_t nb = bhi >= blo ? bhi - blo + 1 : 0;
    const int64_t rows = box_is_empty(R) ? 0 : (int64_t)(R.z1 - R.z0 + 1);
    const int width = box_is_empty(R) ? 1 : R.x1 - R.x0 + 1;
    // Several rows per block when rows are short: threads map to (row, x); each
    // thread then takes KR rows of its item (KR independent loads in flight).
    constexpr int KR = 4;
    const int rpi = width >= (int)blockDim.x ? 1 : (int)blockDim.x / width;
    const int64_t groups = (rows + (int64_t)rpi * KR - 1) / ((int64_t)rpi * KR);
    const int64_t items = groups * nb * d.nth;
    double lw = 0.0, le = 0.0, w = 0.0, e = 0.0;
    const int lane = threadIdx.x & 31;
    const int trow = rpi > 1 ? (int)threadIdx.x / width : 0;
    const int tx = rpi > 1 ? (int)threadIdx.x - trow * width : (int)threadIdx.x;
    const bool tvalid = rpi > 1 ? trow < rpi : true;
    for (int64_t q = blockIdx.x; q < items; q += gridDim.x) {
        const int64_t p = q / groups; // plane index within the bin range
        cell c;
        c.ie = blo + p / d.nth;
        c.j = p - (c.ie - blo) * d.nth;
        c.plane = (c.ie * d.nth + c.j) * d.slice;
        const int64_t zbase = R.z0 + (q - p * groups) * rpi * KR + trow;
        const double E = __ldg(t.E + c.ie);
        const dir_move<SHIFT> m = move_of<SHIFT>(t, c.j, n);
        int xlo = 1 << 30, xhi = -1, zlo = 1 << 30, zhi = -1;
        // Warp-uniform trip count over x, so the warp reductions below see all lanes.
        for (int xb = R.x0; xb <= R.x1; xb += rpi > 1 ? R.x1 - R.x0 + 1 : (int)blockDim.x) {
            const int x = xb + tx;
            float acc[KR];
#pragma unroll
            for (int k = 0; k < KR; k++) {
                const int64_t z = zbase + (int64_t)k * rpi;
                acc[k] = (tvalid && z <= R.z1 && x <= R.x1)
                             ? gather_cell<SHIFT>(in, d, c.plane, z, x, m)
                             : 0.0f;
            }
#pragma unroll
            for (int k = 0; k < KR; k++) {
                const int64_t z = zbase + (int64_t)k * rpi;
                if (!(tvalid && z <= R.z1 && x <= R.x1))
                    continue;
                c.z = z;
                c.x = x;
                out[c.plane + z * d.px + x] = acc[k];
                if (acc[k] != 0.0f) {
                    w += acc[k];
                    e += (double)acc[k] * E;
                    xlo = min(xlo, x);
                    xhi = max(xhi, x);
                    zlo = min(zlo, (int)z);
                    zhi = max(zhi, (int)z);
                }
                const double leak = source_leak<SHIFT>(d, c, m, in + c.plane + z * d.px + x);
                if (leak != 0.0) {
                    lw += leak;
                    le += leak * E;
                }
            }
        }
        // This item's extent, one shared atomic per warp and side (all lanes of
        // a warp share the plane, so the bin).
        const int wxl = warp_min(xlo), wxh = warp_max(xhi);
        const int wzl = warp_min(zlo), wzh = warp_max(zhi);
        if (lane == 0 && wxh >= 0) {
            atomicMin(&sbox[4 * c.ie + 0], wzl);
            atomicMax(&sbox[4 * c.ie + 1], wzh);
            atomicMin(&sbox[4 * c.ie + 2], wxl);
            atomicMax(&sbox[4 * c.ie + 3], wxh);
        }
    }
    write_partials(lw, le, partials, blocks);
    const double a[1] = { w }, b[1] = { e };
    block_partials<1>(a, partials, TF_W_OUT, blocks);
    block_partials<1>(b, partials, TF_E_OUT, blocks);
    __syncthreads();
    extents_flush(sbox, ne, box_next);
}

// One lane per SOURCE cell; `out` was zeroed by stream_zero. The loop is per
// warp (see the file comment) so that MODE_WARP / MODE_FALLBACK call their
// warp intrinsics with all 32 lanes.
template <bool SHIFT, int MODE>
__global__ void __launch_bounds__(SMX_THREADS)
    stream_scatter(const float *__restrict__ in, float *__restrict__ out, const int64_t *step,
                   dev_dims d, stream_tables_dev t, const int *stop, double *__restrict__ partials,
                   int blocks)
{
    if (*stop)
        return; // uniform per block: no partials for a stopped step
    const int64_t n = *step;
    const int lane = threadIdx.x & 31;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    double lw = 0.0, le = 0.0;
    for (int64_t base = (int64_t)blockIdx.x * blockDim.x + (threadIdx.x & ~31u); base < d.cells;
         base += stride) {
        const int64_t i = base + lane;
        const bool valid = i < d.cells;
        long long tgt[ntargets(SHIFT)];
        float val[ntargets(SHIFT)];
        for (int k = 0; k < ntargets(SHIFT); k++) {
            tgt[k] = -1;
            val[k] = 0.0f;
        }
        if (valid) {
            const cell c = decompose(d, i);
            const dir_move<SHIFT> m = move_of<SHIFT>(t, c.j, n);
            const double leak = source_targets<SHIFT>(d, c, m, __ldg(in + i), tgt, val);
            if (leak != 0.0) {
                lw += leak;
                le += leak * __ldg(t.E + c.ie);
            }
        }
        // Every lane of the warp reaches the calls below (same trip count, no
        // return inside the loop): their *_sync intrinsics see all 32 lanes.
        for (int k = 0; k < ntargets(SHIFT); k++) {
            if (MODE == MODE_WARP)
                add_warp(out, tgt[k], val[k], lane);
            else if (MODE == MODE_FALLBACK)
                add_fallback(out, tgt[k], val[k], lane);
            else if (tgt[k] >= 0)
                atomicAdd(out + tgt[k], val[k]);
        }
    }
    write_partials(lw, le, partials, blocks);
}

// Self-test entry: the same per-warp loop and add functions on arbitrary
// (target, value) lists, so that groups of shared targets (which A_stream
// itself never produces: for a fixed k its map is injective) can be tested.
template <int MODE>
__global__ void __launch_bounds__(SMX_THREADS)
    scatter_selftest(const long long *__restrict__ targets, const float *__restrict__ values,
                     int64_t n, float *__restrict__ out)
{
    const int lane = threadIdx.x & 31;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t base = (int64_t)blockIdx.x * blockDim.x + (threadIdx.x & ~31u); base < n;
         base += stride) {
        const int64_t i = base + lane;
        long long tg = -1;
        float v = 0.0f;
        if (i < n) {
            tg = targets[i] < 0 ? -1 : targets[i];
            v = values[i];
        }
        if (MODE == MODE_WARP)
            add_warp(out, tg, v, lane);
        else if (MODE == MODE_FALLBACK)
            add_fallback(out, tg, v, lane);
        else if (tg >= 0)
            atomicAdd(out + tg, v);
    }
}

template <bool SHIFT>
cudaError_t launch_scheme(int variant, const stream_args &a, cudaStream_t s)
{
    const float *in = a.in;
    float *out = a.out;
    const int64_t *step = a.step;
    const dev_dims d = a.d;
    const stream_tables_dev &t = a.t;
    const int *stop = a.stop;
    double *partials = a.partials;
    const int blocks = a.blocks;
    if (variant == SV_GATHER) {
        stream_gather<SHIFT>
            <<<blocks, SMX_THREADS, 0, s>>>(in, out, step, d, t, stop, partials, blocks);
        return cudaGetLastError();
    }
    stream_zero<<<blocks, SMX_THREADS, 0, s>>>(out, d.cells, stop);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess)
        return e;
    switch (variant) {
    case SV_ATOMIC:
        stream_scatter<SHIFT, MODE_ATOMIC>
            <<<blocks, SMX_THREADS, 0, s>>>(in, out, step, d, t, stop, partials, blocks);
        break;
    case SV_WARP:
        stream_scatter<SHIFT, MODE_WARP>
            <<<blocks, SMX_THREADS, 0, s>>>(in, out, step, d, t, stop, partials, blocks);
        break;
    default:
        stream_scatter<SHIFT, MODE_FALLBACK>
            <<<blocks, SMX_THREADS, 0, s>>>(in, out, step, d, t, stop, partials, blocks);
        break;
    }
    return cudaGetLastError();
}

} // namespace

cudaError_t stream_launch(int variant, const stream_args &a, cudaStream_t s)
{
    if (a.blocks < 1 || variant < SV_GATHER || variant > SV_FALLBACK ||
        (a.t.scheme != 0 && a.t.scheme != 1))
        return cudaErrorInvalidValue;
    return a.t.scheme == 1 ? launch_scheme<true>(variant, a, s)
                           : launch_scheme<false>(variant, a, s);
}

// Test hook (declare it where used): adds values[i] into out[targets[i]] for
// targets[i] >= 0 with the add of `variant` (SV_ATOMIC, SV_WARP or SV_FALLBACK),
// i in 0 .. n-1, on the fixed grid `blocks` x SMX_THREADS. `out` is NOT
// cleared. Results equal a per-target sum to float rounding (order differs).
cudaError_t stream_scatter_selftest(int variant, const scatter_adds &adds, float *out, int blocks,
                                    cudaStream_t s)
{
    const long long *targets = adds.targets;
    const float *values = adds.values;
    const int64_t n = adds.n;
    if (blocks < 1)
        return cudaErrorInvalidValue;
    switch (variant) {
    case SV_ATOMIC:
        scatter_selftest<MODE_ATOMIC><<<blocks, SMX_THREADS, 0, s>>>(targets, values, n, out);
        break;
    case SV_WARP:
        scatter_selftest<MODE_WARP><<<blocks, SMX_THREADS, 0, s>>>(targets, values, n, out);
        break;
    case SV_FALLBACK:
        scatter_selftest<MODE_FALLBACK><<<blocks, SMX_THREADS, 0, s>>>(targets, values, n, out);
        break;
    default:
        return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}

cudaError_t stream_gather_and_measure(const stream_args &a, cudaStream_t s)
{
    const size_t smem = (size_t)a.d.ne * 4 * sizeof(int);
    if (a.t.scheme == 1)
        stream_gather_measure<true>
            <<<a.blocks, SMX_THREADS, smem, s>>>(a.in, a.out, a.step, a.d, a.t, a.reg, a.reach,
                                                 a.box_next, a.stop, a.partials, a.blocks);
    else
        stream_gather_measure<false>
            <<<a.blocks, SMX_THREADS, smem, s>>>(a.in, a.out, a.step, a.d, a.t, a.reg, a.reach,
                                                 a.box_next, a.stop, a.partials, a.blocks);
    return cudaGetLastError();
}
