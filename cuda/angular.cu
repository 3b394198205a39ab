// A_theta on the GPU (interface and semantics: angular.cuh; oracle: op_theta()
// in src/transport/cpu_operators.c).
//
// Three implementations:
//
// 1. angular_direct: shared-memory direct convolution (roadmap P1-A,
//    R-ATH-SHMEM-1/2/3). One work item is one (ie, z, x) column. A block takes
//    a TILE of TC consecutive columns (consecutive x, so every theta row of the
//    tile is one coalesced load), stages it in dynamic shared memory as
//    s_in[th][col] (nth * TC floats) and writes out[ie][j][z][x] directly.
//    TC is chosen from nth alone (direct_tile_cols): the largest of 256, 128,
//    64, 32 whose tile fits in 32 KB (so that 4+ blocks of 256 threads share an
//    SM; at ~62 registers per thread, 4 is also the register limit), else 32.
//    With TC < 256 the block's 256 threads form G = 256 / TC groups: thread t
//    serves column t % TC and, within it, group g = t / TC loads the theta rows
//    th = g + G * m and computes the row blocks j0 = (g + G * m) * ROWS ..
//    j0 + ROWS - 1. Every thread therefore only ever touches ONE column per
//    tile, which keeps the tallies per thread and the warp vote per warp (a
//    warp is 32 columns of one group since TC >= 32).
//    Tiles are walked by a grid-stride loop over the fixed grid, so the work of
//    each block is fixed. Loads are issued LOAD_BATCH (8) at a time per thread
//    before any is used (the rows of a column are nz*nx floats apart), and each
//    thread computes ROWS (16) consecutive outputs at once from a sliding
//    register window (conv_rows): one shared load and one weight load per
//    kernel tap for 16 outputs instead of per output.
//    Dynamic shared memory = nth * TC * 4 bytes + 256 ints (per-thread
//    "column has weight" flags for the warp vote); angular_direct_smem_bytes
//    adds a reserve for the kernel's static shared memory (block_partials'
//    scratch, the stop broadcast). Up to nth = 373 the block stays within the
//    default 48 KB; above that the launcher raises the kernel's
//    cudaFuncAttributeMaxDynamicSharedMemorySize (a host call, no allocation),
//    and with TC = 32 nth reaches ~1800 on a 227 KB H100/H200 before the
//    backend has to fall back to angular_direct_global.
//    The kernel weights are read through the read-only cache (__ldg): all
//    lanes of a warp normally share one energy bin, so each w[d] is a single
//    broadcast load; they are not staged (max_half_width is therefore not part
//    of the shared-memory size).
//
// 2. angular_direct_global: one thread per column, no shared memory; the
//    column is read once for the tallies and then once more per kernel tap and
//    row block (conv_rows reading global memory through L1/L2). For nth too
//    large for the shared tile.
//
// 3. FFT path (full circle only): per energy bin one batched R2C along theta
//    (n = nth, istride = slice, idist = 1, batch = slice), a pointwise product
//    with the bin's kernel spectrum (scaled by 1/nth, built on the host in
//    double at create), one batched C2R into out. Memory: see angular_fft_bytes.
//
// Measured on an H100 (standalone harness, 4 blocks per SM, one call, full
// circle, half the columns empty; direct / direct-global / FFT): Production
// grid (100 x 32 x 400 x 200), K <= 4: 0.89 / 1.01 / 2.95 ms; K <= 15: 1.50 /
// 1.72 / 2.97 ms. Stress grid (200 x 64 x 800 x 400), K <= 8: 16.3 / 21.0 /
// 44.5 ms; K <= 31: 40.8 / 49.3 / 44.5 ms. Direct wins for small K; the FFT
// catches up near K ~ nth / 2.
//
// error.h is a C header without extern "C" guards: it is included here inside
// extern "C" (before angular.cuh, whose include of it is then a no-op) so that
// smx_fail links against the C definition.
//
// Exactness: both direct kernels sum for d ascending from -K starting from
// 0.0f with explicit fused multiply-adds (__fmaf_rn, one rounding per term),
// which is exactly the CPU's `out[x] = 0; out[x] = fmaf(w[d], in[src][x],
// out[x])` (src/transport/fma_rows.h) in IEEE single precision, so with threshold 0 the
// result is bitwise the CPU's. Tallies are doubles formed in a
// different order than the CPU's, so they agree to rounding (~1e-15 relative).
//
// Tallies (per-block partials, common.cuh): for a column of energy bin ie with
// kernel k, weights kept after the threshold `kept[j]` and dropped weight
// `dropped`:
//   TF_W_THETA_BOUNDARY += sum_j kept[j] * boundary_frac[k][j]   (window mode)
//   TF_W_THETA_CUTOFF   += sum_j kept[j] * (1 - weight_sum[k]) + dropped
//   TF_E_*              =  the same times E[ie]
// so that sum(out) = sum(in) - boundary - cutoff (weight is conserved).
#include <climits>
#include <cstdint>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <new>

#include <cufft.h>

#include "common.cuh"
extern "C" {
#include "base/error.h"
}
#include "angular.cuh"
#include "conv_rows.cuh"

static_assert(TF_W_THETA_CUTOFF == TF_W_THETA_BOUNDARY + 1, "partials fields must be adjacent");
static_assert(TF_E_THETA_CUTOFF == TF_E_THETA_BOUNDARY + 1, "partials fields must be adjacent");

// ---- cuFFT error reporting --------------------------------------------------

static const char *cufft_result_name(cufftResult r)
{
    switch (r) {
    case CUFFT_SUCCESS: return "CUFFT_SUCCESS";
    case CUFFT_INVALID_PLAN: return "CUFFT_INVALID_PLAN";
    case CUFFT_ALLOC_FAILED: return "CUFFT_ALLOC_FAILED";
    case CUFFT_INVALID_TYPE: return "CUFFT_INVALID_TYPE";
    case CUFFT_INVALID_VALUE: return "CUFFT_INVALID_VALUE";
    case CUFFT_INTERNAL_ERROR: return "CUFFT_INTERNAL_ERROR";
    case CUFFT_EXEC_FAILED: return "CUFFT_EXEC_FAILED";
    case CUFFT_SETUP_FAILED: return "CUFFT_SETUP_FAILED";
    case CUFFT_INVALID_SIZE: return "CUFFT_INVALID_SIZE";
    case CUFFT_UNALIGNED_DATA: return "CUFFT_UNALIGNED_DATA";
    case CUFFT_INVALID_DEVICE: return "CUFFT_INVALID_DEVICE";
    case CUFFT_NO_WORKSPACE: return "CUFFT_NO_WORKSPACE";
    case CUFFT_NOT_IMPLEMENTED: return "CUFFT_NOT_IMPLEMENTED";
    case CUFFT_NOT_SUPPORTED: return "CUFFT_NOT_SUPPORTED";
    default: return "unknown cufftResult";
    }
}

// In functions that fill an smx_error (create): records the statement, file,
// line and cufftResult and returns SMX_EXIT_RUNTIME.
#define CUFFT_CHECK_ERR(err, stmt)                                                              \
    do {                                                                                        \
        cufftResult r_ = (stmt);                                                                \
        if (r_ != CUFFT_SUCCESS)                                                                \
            return smx_fail((err), SMX_EXIT_RUNTIME, "%s:%d: %s failed: %s (%d)", __FILE__,     \
                            __LINE__, #stmt, cufft_result_name(r_), (int)r_);                   \
    } while (0)

// The cudaError_t that angular_fft_apply returns for a failed cuFFT call (the
// interface returns cudaError_t; the cufftResult itself goes to stderr).
static cudaError_t cufft_as_cuda(cufftResult r)
{
    switch (r) {
    case CUFFT_ALLOC_FAILED: return cudaErrorMemoryAllocation;
    case CUFFT_INVALID_VALUE:
    case CUFFT_INVALID_SIZE:
    case CUFFT_INVALID_TYPE:
    case CUFFT_UNALIGNED_DATA: return cudaErrorInvalidValue;
    case CUFFT_EXEC_FAILED: return cudaErrorLaunchFailure;
    default: return cudaErrorUnknown;
    }
}

// In angular_fft_apply: reports the statement and cufftResult on stderr and
// returns a cudaError_t (cufft_as_cuda).
#define CUFFT_CHECK_APPLY(stmt)                                                                 \
    do {                                                                                        \
        cufftResult r_ = (stmt);                                                                \
        if (r_ != CUFFT_SUCCESS) {                                                              \
            fprintf(stderr, "smx2d-sim: %s:%d: %s failed: %s (%d)\n", __FILE__, __LINE__,       \
                    #stmt, cufft_result_name(r_), (int)r_);                                     \
            return cufft_as_cuda(r_);                                                           \
        }                                                                                       \
    } while (0)

#define LAUNCH_RETURN()                                                                         \
    do {                                                                                        \
        cudaError_t e_ = cudaGetLastError();                                                    \
        if (e_ != cudaSuccess)                                                                  \
            return e_;                                                                          \
    } while (0)

// ---- shared pieces of the direct kernels ------------------------------------

namespace {

constexpr size_t kTileTargetBytes = 32 * 1024; // tile size aimed at (occupancy)
constexpr size_t kStaticSmemReserve = 256;     // static __shared__ of the kernels (< 100 B used)
constexpr size_t kDefaultSmemLimit = 48 * 1024;

int direct_tile_cols(int64_t nth)
{
    for (int tc = SMX_THREADS; tc > 32; tc >>= 1)
        if ((size_t)nth * (size_t)tc * sizeof(float) <= kTileTargetBytes)
            return tc;
    return 32;
}

size_t direct_dyn_bytes(int64_t nth, int tc)
{
    return (size_t)nth * (size_t)tc * sizeof(float) + SMX_THREADS * sizeof(int);
}

// Block-uniform read of the stop flag (thread 0 reads, the block agrees).
__device__ inline bool block_stopped(const int *stop)
{
    __shared__ int s_stop;
    if (threadIdx.x == 0)
        s_stop = stop ? *(volatile const int *)stop : 0;
    __syncthreads();
    return s_stop != 0;
}

// One column's inputs as they are read: values below the early-exit threshold
// are dropped, the rest summed (and, in window mode, weighted by the share the
// kernel scatters past an edge).
struct column_input {
    double kept = 0.0, bnd = 0.0, dropped = 0.0;

    // Returns the value to convolve.
    __device__ float take(float v, int th, bool use_thr, float threshold, const double *bf, bool window)
    {
        if (use_thr && v < threshold) {
            dropped += v;
            v = 0.0f;
        }
        kept += v;
        if (window)
            bnd += (double)v * bf[th];
        return v;
    }
};

// Column tallies of one thread added to its running sums.
struct theta_tally {
    double wb = 0.0, wc = 0.0, eb = 0.0, ec = 0.0;

    __device__ void add(const column_input &in, double wsum, double E)
    {
        const double cut = in.kept * (1.0 - wsum) + in.dropped, bnd = in.bnd;
        wb += bnd;
        wc += cut;
        eb += bnd * E;
        ec += cut * E;
    }

    // Every thread of the block must call this (barriers inside).
    __device__ void write(double *partials, int blocks) const
    {
        if (!partials)
            return;
        const double w[2] = {wb, wc}, e[2] = {eb, ec};
        block_partials<2>(w, partials, TF_W_THETA_BOUNDARY, blocks);
        block_partials<2>(e, partials, TF_E_THETA_BOUNDARY, blocks);
    }
};

// Rows per register block: each thread computes ROWS consecutive outputs
// j0 .. j0+ROWS-1 of its column together (see conv_rows).
#ifndef SMX_THETA_ROWS
#define SMX_THETA_ROWS 16
#endif
constexpr int ROWS = SMX_THETA_ROWS;
// Loads of one column issued back to back before any is used (memory-level
// parallelism: the theta rows of a column lie nz*nx floats apart).
#ifndef SMX_THETA_LOAD_BATCH
#define SMX_THETA_LOAD_BATCH 8
#endif
constexpr int LOAD_BATCH = SMX_THETA_LOAD_BATCH;

// Calls f(th, in[th]) for th = first, first + step, ... < nth, in that order,
// fetching LOAD_BATCH values at a time.
template <typename F>
__device__ inline void for_column(const float *col, int64_t slice, int first, int step, int nth, F f)
{
    for (int th0 = first; th0 < nth; th0 += LOAD_BATCH * step) {
        float v[LOAD_BATCH];
#pragma unroll
        for (int u = 0; u < LOAD_BATCH; u++) {
            const int th = th0 + u * step;
            v[u] = th < nth ? __ldg(col + (int64_t)th * slice) : 0.0f;
        }
#pragma unroll
        for (int u = 0; u < LOAD_BATCH; u++) {
            const int th = th0 + u * step;
            if (th < nth)
                f(th, v[u]);
        }
    }
}

// conv_rows for rows j0 .. j0+ROWS-1 of a column, stored to o[j * slice].
template <typename Load>
__device__ inline void conv_rows_store(float *o, int64_t slice, int j0, int nth, int K, const float *w,
                                       bool circular, Load load)
{
    float acc[ROWS];
    conv_rows(j0, nth, K, w, circular, load, acc);
#pragma unroll
    for (int r = 0; r < ROWS; r++)
        if (j0 + r < nth)
            o[(int64_t)(j0 + r) * slice] = acc[r];
}

// ---- 1. shared-memory direct kernel -------------------------------------------

template <int TC>
__global__ void __launch_bounds__(SMX_THREADS)
    k_theta_direct_shared(const float *__restrict__ in, float *__restrict__ out, dev_dims d,
                          angular_tables_dev t, float threshold, const int *stop,
                          double *partials, int blocks)
{
    static_assert(SMX_THREADS % TC == 0 && TC >= 32, "a warp must lie inside one group");
    constexpr int G = SMX_THREADS / TC;
    extern __shared__ float smem[];
    if (block_stopped(stop))
        return; // uniform for the block: partials are not written either

    const int nth = (int)d.nth;
    float *s_in = smem;                                        // [nth][TC]
    int *s_has = reinterpret_cast<int *>(smem + (size_t)nth * TC); // [SMX_THREADS]
    const int tid = threadIdx.x, col = tid % TC, g = tid / TC;
    const int64_t slice = d.slice, ncols = d.ne * d.slice;
    const int64_t ntiles = (ncols + TC - 1) / TC;
    const bool use_thr = threshold > 0.0f;
    theta_tally tal;

    // Uniform trip count for the whole block (tile is block-uniform).
    for (int64_t tile = blockIdx.x; tile < ntiles; tile += gridDim.x) {
        const int64_t c = tile * TC + col;
        const bool active = c < ncols;
        int64_t ie = 0, zx = 0;
        if (active) {
            ie = c / slice;
            zx = c - ie * slice;
        }
        const int64_t base = ie * (int64_t)nth * slice + zx; // in/out[ie][0][z][x]
        const int k = active ? t.kernel_of_energy[ie] : 0;

        __syncthreads(); // the previous tile's s_in / s_has are no longer read
        column_input ci;
        int has = 0;
        const double *bf = t.boundary_frac + (int64_t)k * nth;
        if (active) {
            for_column(in + base, slice, g, G, nth, [&](int th, float v) {
                v = ci.take(v, th, use_thr, threshold, bf, !t.circular);
                has |= v != 0.0f;
                s_in[th * TC + col] = v;
            });
        } else {
            for (int th = g; th < nth; th += G)
                s_in[th * TC + col] = 0.0f;
        }
        if (active)
            tal.add(ci, t.weight_sum[k], t.E[ie]);
        if (use_thr)
            s_has[tid] = has;
        __syncthreads();

        // Early exit: a warp whose 32 columns hold no weight writes zeros.
        bool skip = false;
        if (use_thr) {
            int any = 0;
            if (active)
                for (int gg = 0; gg < G; gg++)
                    any |= s_has[gg * TC + col];
            skip = __all_sync(0xffffffffu, any == 0); // all 32 lanes reach this
        }
        if (active) {
            float *o = out + base;
            if (skip) {
                for (int j = g; j < nth; j += G)
                    o[(int64_t)j * slice] = 0.0f;
            } else {
                const int K = t.half_width[k];
                const float *w = t.weights + t.offset[k] + K;
                const float *sc = s_in + col;
                auto load = [sc](int src) { return sc[src * TC]; };
                // Row blocks q = g, g + G, ...: rows j0 = q * ROWS .. j0 + ROWS - 1.
                for (int j0 = g * ROWS; j0 < nth; j0 += G * ROWS)
                    conv_rows_store(o, slice, j0, nth, K, w, t.circular != 0, load);
            }
        }
    }
    tal.write(partials, blocks);
}

// ---- 2. global-memory direct kernel ---------------------------------------------

__global__ void __launch_bounds__(SMX_THREADS)
    k_theta_direct_global(const float *__restrict__ in, float *__restrict__ out, dev_dims d,
                          angular_tables_dev t, float threshold, const int *stop,
                          double *partials, int blocks)
{
    if (block_stopped(stop))
        return;
    const int nth = (int)d.nth;
    const int64_t slice = d.slice, ncols = d.ne * d.slice;
    const int64_t stride = (int64_t)gridDim.x * SMX_THREADS;
    const bool use_thr = threshold > 0.0f;
    theta_tally tal;

    // c0 is block-uniform, so every lane of every warp runs the same number of
    // iterations and reaches __all_sync; the tail is predicated by `active`.
    for (int64_t c0 = (int64_t)blockIdx.x * SMX_THREADS; c0 < ncols; c0 += stride) {
        const int64_t c = c0 + threadIdx.x;
        const bool active = c < ncols;
        int64_t ie = 0, zx = 0;
        if (active) {
            ie = c / slice;
            zx = c - ie * slice;
        }
        const int64_t base = ie * (int64_t)nth * slice + zx;
        const float *col = in + base;
        int any = 0;
        int k = 0;
        if (active) {
            k = t.kernel_of_energy[ie];
            const double *bf = t.boundary_frac + (int64_t)k * nth;
            column_input ci;
            for_column(col, slice, 0, 1, nth, [&](int th, float v) {
                any |= ci.take(v, th, use_thr, threshold, bf, !t.circular) != 0.0f;
            });
            tal.add(ci, t.weight_sum[k], t.E[ie]);
        }
        bool skip = false;
        if (use_thr)
            skip = __all_sync(0xffffffffu, any == 0);
        if (active) {
            float *o = out + base;
            if (skip) {
                for (int j = 0; j < nth; j++)
                    o[(int64_t)j * slice] = 0.0f;
            } else {
                const int K = t.half_width[k];
                const float *w = t.weights + t.offset[k] + K;
                auto load = [col, slice, use_thr, threshold](int src) {
                    float v = __ldg(col + (int64_t)src * slice);
                    return use_thr && v < threshold ? 0.0f : v;
                };
                for (int j0 = 0; j0 < nth; j0 += ROWS)
                    conv_rows_store(o, slice, j0, nth, K, w, t.circular != 0, load);
            }
        }
    }
    tal.write(partials, blocks);
}

template <int TC>
cudaError_t launch_direct_shared(const float *in, float *out, dev_dims d, angular_tables_dev t,
                                 float threshold, const int *stop, double *partials, int blocks,
                                 cudaStream_t s)
{
    const size_t dyn = direct_dyn_bytes(d.nth, TC);
    if (dyn > (size_t)INT_MAX)
        return cudaErrorInvalidValue;
    if (dyn + kStaticSmemReserve > kDefaultSmemLimit) {
        // Opt in above 48 KB (host-side function attribute: no allocation, no
        // stream work). Set on every launch rather than cached, so that it holds
        // after a device reset too; it is cheap.
        cudaError_t e = cudaFuncSetAttribute(k_theta_direct_shared<TC>,
                                             cudaFuncAttributeMaxDynamicSharedMemorySize, (int)dyn);
        if (e != cudaSuccess)
            return e;
    }
    k_theta_direct_shared<TC><<<blocks, SMX_THREADS, dyn, s>>>(in, out, d, t, threshold, stop,
                                                                partials, blocks);
    return cudaGetLastError();
}

} // namespace

size_t angular_direct_smem_bytes(int64_t nth, int max_half_width)
{
    (void)max_half_width; // weights are read through the read-only cache, not staged
    return direct_dyn_bytes(nth, direct_tile_cols(nth)) + kStaticSmemReserve;
}

cudaError_t angular_direct(const float *in, float *out, dev_dims d, angular_tables_dev t,
                           float threshold, const int *stop, double *partials, int blocks,
                           cudaStream_t s)
{
    switch (direct_tile_cols(d.nth)) {
    case 256: return launch_direct_shared<256>(in, out, d, t, threshold, stop, partials, blocks, s);
    case 128: return launch_direct_shared<128>(in, out, d, t, threshold, stop, partials, blocks, s);
    case 64: return launch_direct_shared<64>(in, out, d, t, threshold, stop, partials, blocks, s);
    default: return launch_direct_shared<32>(in, out, d, t, threshold, stop, partials, blocks, s);
    }
}

cudaError_t angular_direct_global(const float *in, float *out, dev_dims d, angular_tables_dev t,
                                  float threshold, const int *stop, double *partials, int blocks,
                                  cudaStream_t s)
{
    k_theta_direct_global<<<blocks, SMX_THREADS, 0, s>>>(in, out, d, t, threshold, stop, partials,
                                                         blocks);
    return cudaGetLastError();
}

// ---- 3. cuFFT path ----------------------------------------------------------------
//
// Memory (angular_fft_bytes), carved from `mem` in this order, each part
// rounded up to 256 bytes:
//   spectra  n_kernels * (nth/2 + 1) cufftComplex   kernel spectra / nth
//   cbuf     (nth/2 + 1) * slice cufftComplex       one energy bin's R2C output,
//                                                   layout [m][z][x]
//   rbuf     nth * slice floats                     staging for a bin whose
//            address in `in` / `out` is not 8-byte aligned (cuFFT rejects those
//            with CUFFT_INVALID_VALUE; happens for odd bins when nth * nz * nx
//            is odd): the bin is copied there (cudaMemcpyAsync, device to
//            device) before the R2C / after the C2R. Always reserved.
//   work     max(work size of the R2C plan, of the C2R plan): one work area
//            shared by both plans (they run one after the other on one stream)
// The work sizes are those cuFFT reports when the two plans are actually made
// (cufftMakePlanMany64 with auto-allocation off, exactly as in create), so the
// sizing and create agree by construction; create re-derives the layout and
// fails cleanly if it would not fit. cuFFT may still keep small internal plan
// data of its own (allocated by cuFFT when a plan is made, at setup); the step
// loop allocates nothing.
//
// The stop flag: cuFFT cannot read a device flag, so R2C / product / C2R run
// even after an auto run has ended on the device and `out` is then written (with
// the correct convolution of `in`). The backend must therefore not enqueue
// FFT-path steps beyond the end (it does not for this path). The tally kernel
// honours *stop like every other kernel (no partials after the end); the
// product kernel deliberately does not, so that `out` is always the correct
// result and never a half-transformed one.

struct angular_fft {
    dev_dims d;
    angular_tables_dev t;
    int nf; // nth / 2 + 1
    cufftHandle r2c, c2r;
    bool have_r2c, have_c2r;
    cufftComplex *spectra, *cbuf;
    float *rbuf;
    void *work;
    size_t work_bytes;
};

namespace {

size_t round256(size_t n) { return (n + 255) / 256 * 256; }

// Makes one batched plan along theta with auto-allocation off. `h` is created
// here; the caller destroys it (also on failure, when *made is true).
cufftResult make_theta_plan(dev_dims d, cufftType type, cufftHandle *h, bool *made, size_t *work)
{
    *made = false;
    cufftResult r = cufftCreate(h);
    if (r != CUFFT_SUCCESS)
        return r;
    *made = true;
    if ((r = cufftSetAutoAllocation(*h, 0)) != CUFFT_SUCCESS)
        return r;
    long long n[1] = {d.nth};
    long long nf = d.nth / 2 + 1;
    long long real_embed[1] = {d.nth}, cplx_embed[1] = {nf};
    const bool fwd = type == CUFFT_R2C;
    // Element m of transform b (b = z*nx + x) lies at b + m * slice on both sides.
    return cufftMakePlanMany64(*h, 1, n, fwd ? real_embed : cplx_embed, d.slice, 1,
                               fwd ? cplx_embed : real_embed, d.slice, 1, type, d.slice, work);
}

// Work size both plans need (max), or a cuFFT error.
cufftResult fft_work_bytes(dev_dims d, size_t *work)
{
    *work = 0;
    cufftResult r = CUFFT_SUCCESS;
    const cufftType types[2] = {CUFFT_R2C, CUFFT_C2R};
    for (int i = 0; i < 2 && r == CUFFT_SUCCESS; i++) {
        cufftHandle h = 0;
        bool made = false;
        size_t ws = 0;
        r = make_theta_plan(d, types[i], &h, &made, &ws);
        if (made) {
            cufftResult rd = cufftDestroy(h);
            if (r == CUFFT_SUCCESS)
                r = rd;
        }
        if (r == CUFFT_SUCCESS && ws > *work)
            *work = ws;
    }
    return r;
}

struct fft_layout {
    size_t spectra, cbuf, rbuf, work, total; // byte offsets into mem, total size
};

constexpr uintptr_t kFftAlign = sizeof(cufftComplex); // cuFFT's data alignment

bool fft_aligned(const void *p) { return reinterpret_cast<uintptr_t>(p) % kFftAlign == 0; }

fft_layout fft_layout_for(dev_dims d, int n_kernels, size_t work)
{
    const size_t nf = (size_t)(d.nth / 2 + 1);
    fft_layout L;
    L.spectra = 0;
    L.cbuf = round256((size_t)n_kernels * nf * sizeof(cufftComplex));
    L.rbuf = L.cbuf + round256(nf * (size_t)d.slice * sizeof(cufftComplex));
    L.work = L.rbuf + round256((size_t)d.nth * (size_t)d.slice * sizeof(float));
    L.total = L.work + round256(work);
    return L;
}

// cbuf[m][zx] *= spectrum[kernel_of_energy[ie]][m] (spectrum already / nth).
__global__ void __launch_bounds__(SMX_THREADS)
    k_fft_product(cufftComplex *cbuf, const cufftComplex *__restrict__ spectra,
                  const int *kernel_of_energy, int64_t ie, int64_t nf, int64_t slice)
{
    const int64_t n = nf * slice, stride = (int64_t)gridDim.x * blockDim.x;
    const cufftComplex *S = spectra + (int64_t)kernel_of_energy[ie] * nf;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const cufftComplex a = cbuf[i], b = S[i / slice];
        cbuf[i] = make_cuFloatComplex(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
    }
}

// Cutoff tallies of the FFT path: per column total * (1 - weight_sum) (x E);
// the boundary fields are written as 0 (full circle).
__global__ void __launch_bounds__(SMX_THREADS)
    k_fft_tally(const float *__restrict__ in, dev_dims d, angular_tables_dev t, const int *stop,
                double *partials, int blocks)
{
    if (block_stopped(stop))
        return;
    const int64_t slice = d.slice, ncols = d.ne * d.slice;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    theta_tally tal;
    for (int64_t c = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; c < ncols; c += stride) {
        const int64_t ie = c / slice, zx = c - ie * slice;
        const float *col = in + ie * d.nth * slice + zx;
        column_input ci; // full circle: no threshold, no edge
        for_column(col, slice, 0, 1, (int)d.nth,
                   [&](int th, float v) { ci.take(v, th, false, 0.0f, nullptr, false); });
        const int k = t.kernel_of_energy[ie];
        tal.add(ci, t.weight_sum[k], t.E[ie]);
    }
    tal.write(partials, blocks);
}

} // namespace

size_t angular_fft_bytes(dev_dims d, int n_kernels)
{
    size_t work = 0;
    if (d.nth < 1 || d.slice < 1 || fft_work_bytes(d, &work) != CUFFT_SUCCESS)
        work = 0; // create then reports the cuFFT error (or the shortfall) itself
    return fft_layout_for(d, n_kernels, work).total;
}

// Spectra of every kernel, / nth, in double, rounded to float complex:
// S_k[m] = (1/nth) sum_{d=-K..K} w[d] exp(-2 pi i m d / nth), i.e. the DFT of
// the kernel placed circularly with w[d] at index d mod nth (the convolution
// centre at index 0). Exact integer phases (m * d mod nth) index one table.
static int build_spectra(cufftComplex *S, dev_dims d, int n_kernels, const float *hw,
                         const int *hoff, const int *hhw, smx_error *err)
{
    const int64_t nth = d.nth, nf = nth / 2 + 1;
    double *cs = (double *)malloc(2 * (size_t)nth * sizeof(double));
    if (!cs)
        return smx_fail(err, SMX_EXIT_RUNTIME, "out of memory (FFT kernel spectra)");
    const double two_pi = 6.283185307179586476925286766559;
    for (int64_t q = 0; q < nth; q++) {
        cs[2 * q] = cos(two_pi * (double)q / (double)nth);
        cs[2 * q + 1] = sin(two_pi * (double)q / (double)nth);
    }
    for (int k = 0; k < n_kernels; k++) {
        const int K = hhw[k];
        const float *w = hw + hoff[k] + K;
        for (int64_t m = 0; m < nf; m++) {
            double re = 0.0, im = 0.0;
            // q = m * (d mod nth) mod nth, advanced by m per step of d
            int64_t q = (m * ((((int64_t)-K) % nth + nth) % nth)) % nth;
            for (int dd = -K; dd <= K; dd++) {
                re += (double)w[dd] * cs[2 * q];
                im -= (double)w[dd] * cs[2 * q + 1];
                q += m;
                if (q >= nth)
                    q -= nth;
            }
            S[(int64_t)k * nf + m] = make_cuFloatComplex((float)(re / (double)nth),
                                                         (float)(im / (double)nth));
        }
    }
    free(cs);
    return 0;
}

static int fft_create_into(angular_fft *f, dev_dims d, angular_tables_dev t,
                           const float *host_weights, const int *host_offset,
                           const int *host_half_width, void *mem, cudaStream_t s, smx_error *err)
{
    // The sizing angular_fft_bytes did (deterministic for one device and grid),
    // repeated so that a cuFFT failure in it is reported here.
    size_t ws_sized = 0, ws_r2c = 0, ws_c2r = 0;
    CUFFT_CHECK_ERR(err, fft_work_bytes(d, &ws_sized));
    CUFFT_CHECK_ERR(err, make_theta_plan(d, CUFFT_R2C, &f->r2c, &f->have_r2c, &ws_r2c));
    CUFFT_CHECK_ERR(err, make_theta_plan(d, CUFFT_C2R, &f->c2r, &f->have_c2r, &ws_c2r));
    f->work_bytes = ws_r2c > ws_c2r ? ws_r2c : ws_c2r;
    const fft_layout L = fft_layout_for(d, t.n_kernels, f->work_bytes);
    const size_t avail = fft_layout_for(d, t.n_kernels, ws_sized).total;
    if (L.total > avail)
        return smx_fail(err, SMX_EXIT_RUNTIME,
                        "A_theta FFT: cuFFT asks for a %zu-byte work area, more than the %zu "
                        "bytes reserved by angular_fft_bytes",
                        f->work_bytes, avail - L.work);
    char *base = static_cast<char *>(mem);
    f->spectra = reinterpret_cast<cufftComplex *>(base + L.spectra);
    f->cbuf = reinterpret_cast<cufftComplex *>(base + L.cbuf);
    f->rbuf = reinterpret_cast<float *>(base + L.rbuf);
    f->work = base + L.work;
    CUFFT_CHECK_ERR(err, cufftSetWorkArea(f->r2c, f->work));
    CUFFT_CHECK_ERR(err, cufftSetWorkArea(f->c2r, f->work));
    CUFFT_CHECK_ERR(err, cufftSetStream(f->r2c, s));
    CUFFT_CHECK_ERR(err, cufftSetStream(f->c2r, s));

    const size_t sbytes = (size_t)t.n_kernels * (size_t)f->nf * sizeof(cufftComplex);
    cufftComplex *hs = (cufftComplex *)malloc(sbytes ? sbytes : 1);
    if (!hs)
        return smx_fail(err, SMX_EXIT_RUNTIME, "out of memory (FFT kernel spectra)");
    int rc = build_spectra(hs, d, t.n_kernels, host_weights, host_offset, host_half_width, err);
    if (rc) {
        free(hs);
        return rc;
    }
    cudaError_t e = cudaMemcpyAsync(f->spectra, hs, sbytes, cudaMemcpyHostToDevice, s);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(s); // hs is pageable and freed below
    free(hs);
    if (e != cudaSuccess)
        return smx_fail(err, SMX_EXIT_RUNTIME,
                        "%s:%d: uploading the FFT kernel spectra (cudaMemcpyAsync + "
                        "cudaStreamSynchronize) failed: %s (%s)",
                        __FILE__, __LINE__, cudaGetErrorString(e), cudaGetErrorName(e));
    return 0;
}

int angular_fft_create(angular_fft **f, dev_dims d, angular_tables_dev t, const float *host_weights,
                       const int *host_offset, const int *host_half_width, void *mem,
                       cudaStream_t s, smx_error *err)
{
    *f = nullptr;
    if (!t.circular)
        return smx_fail(err, SMX_EXIT_INPUT,
                        "A_theta FFT path: the windowed angular grid is not periodic (its edges "
                        "are absorbing); the FFT path needs the full circle, use the direct kernel");
    if (d.nth < 1 || d.slice < 1 || d.ne < 1 || t.n_kernels < 1)
        return smx_fail(err, SMX_EXIT_INPUT, "A_theta FFT path: empty grid (nth %lld, nz*nx %lld, "
                        "ne %lld, %d kernels)", (long long)d.nth, (long long)d.slice,
                        (long long)d.ne, t.n_kernels);
    if (!mem)
        return smx_fail(err, SMX_EXIT_RUNTIME, "A_theta FFT path: no device memory given");
    angular_fft *p = new (std::nothrow) angular_fft();
    if (!p)
        return smx_fail(err, SMX_EXIT_RUNTIME, "out of memory");
    p->d = d;
    p->t = t;
    p->nf = (int)(d.nth / 2 + 1);
    int rc = fft_create_into(p, d, t, host_weights, host_offset, host_half_width, mem, s, err);
    if (rc) {
        angular_fft_destroy(p);
        return rc;
    }
    *f = p;
    return 0;
}

cudaError_t angular_fft_apply_range(angular_fft *f, const float *in, float *out, int64_t lo,
                                    int64_t hi, const int *stop, double *partials, int blocks,
                                    cudaStream_t s)
{
    const dev_dims &d = f->d;
    const int64_t bin = d.nth * d.slice;
    CUFFT_CHECK_APPLY(cufftSetStream(f->r2c, s));
    CUFFT_CHECK_APPLY(cufftSetStream(f->c2r, s));
    // Tallies first: they read `in` only. The tally kernel sees the range as a
    // grid of its own (pointers and tables offset to bin lo).
    dev_dims dr = d;
    dr.ne = hi - lo + 1;
    dr.cells = dr.ne * bin;
    angular_tables_dev tr = f->t;
    tr.kernel_of_energy += lo;
    tr.E += lo;
    k_fft_tally<<<blocks, SMX_THREADS, 0, s>>>(in + lo * bin, dr, tr, stop, partials, blocks);
    LAUNCH_RETURN();
    const size_t bin_bytes = (size_t)bin * sizeof(float);
    for (int64_t ie = lo; ie <= hi; ie++) {
        const float *src = in + ie * bin;
        float *dst = out + ie * bin;
        if (!fft_aligned(src)) {
            cudaError_t e = cudaMemcpyAsync(f->rbuf, src, bin_bytes, cudaMemcpyDeviceToDevice, s);
            if (e != cudaSuccess)
                return e;
            src = f->rbuf;
        }
        // Out-of-place R2C leaves its input intact (the cast only drops const).
        CUFFT_CHECK_APPLY(cufftExecR2C(f->r2c, const_cast<cufftReal *>(src), f->cbuf));
        k_fft_product<<<blocks, SMX_THREADS, 0, s>>>(f->cbuf, f->spectra, f->t.kernel_of_energy,
                                                     ie, f->nf, d.slice);
        LAUNCH_RETURN();
        const bool stage = !fft_aligned(dst);
        CUFFT_CHECK_APPLY(cufftExecC2R(f->c2r, f->cbuf, stage ? f->rbuf : dst));
        if (stage) {
            cudaError_t e = cudaMemcpyAsync(dst, f->rbuf, bin_bytes, cudaMemcpyDeviceToDevice, s);
            if (e != cudaSuccess)
                return e;
        }
    }
    return cudaGetLastError();
}

cudaError_t angular_fft_apply(angular_fft *f, const float *in, float *out, const int *stop,
                              double *partials, int blocks, cudaStream_t s)
{
    return angular_fft_apply_range(f, in, out, 0, f->d.ne - 1, stop, partials, blocks, s);
}

void angular_fft_destroy(angular_fft *f)
{
    if (!f)
        return;
    // Destroy failures cannot be acted on here; they are reported.
    if (f->have_r2c) {
        cufftResult r = cufftDestroy(f->r2c);
        if (r != CUFFT_SUCCESS)
            fprintf(stderr, "smx2d-sim: cufftDestroy (R2C plan) failed: %s\n", cufft_result_name(r));
    }
    if (f->have_c2r) {
        cufftResult r = cufftDestroy(f->c2r);
        if (r != CUFFT_SUCCESS)
            fprintf(stderr, "smx2d-sim: cufftDestroy (C2R plan) failed: %s\n", cufft_result_name(r));
    }
    delete f;
}
