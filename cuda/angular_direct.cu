// A_theta on the GPU, direct convolution (interface and semantics: angular.cuh;
// oracle: cpu_op_theta() in src/transport/backend_cpu_operators.c; the cuFFT path is
// angular_fft.cu).
//
// Two direct implementations:
//
// 1. angular_direct: shared-memory direct convolution (the default: a step's
//    kernels are narrow, and K taps from shared memory cost less than a transform).
//    One work item is one (ie, z, x) column. A block takes
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
// Direct against FFT (full circle): direct costs K taps a direction, the FFT
// a forward and an inverse transform whatever K, so direct wins for narrow
// kernels and the FFT catches up near K ~ nth / 2; the autotune chooses per sigma bucket.
//
// error.h is a C header without extern "C" guards: it is included here inside
// extern "C" (before angular.cuh, whose include of it is then a no-op) so that
// smx_fail links against the C definition.
//
// Exactness: both direct kernels sum for d ascending from -K starting from
// 0.0f with explicit fused multiply-adds (__fmaf_rn, one rounding per term),
// which is exactly the CPU's `out[x] = 0; out[x] = fmaf(w[d], in[src][x],
// out[x])` (src/numerics/fma_rows.h) in IEEE single precision, so with threshold 0 the
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

#include "common.cuh"
extern "C" {
#include "base/error.h"
}
#include "angular_internal.cuh"

namespace {

constexpr size_t kTileTargetBytes = 32 * 1024; // tile size aimed at (occupancy)
constexpr size_t kStaticSmemReserve = 256; // static __shared__ of the kernels (< 100 B used)
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

// Target bin j of kernel k under kernels per source bin (t.gat_off): its
// terms for the sources in ascending order, summed from +0 by fused
// multiply-adds, the CPU's order (theta_mapped_run) and so its bits.
template <typename Load>
__device__ __forceinline__ float gather_target(const angular_tables_dev &t, int k, int nth, int j,
                                               Load load)
{
    const int *go = t.gat_off + (int64_t)k * nth;
    float acc = 0.0f;
    for (int e = __ldg(go + j), end = __ldg(go + j + 1); e < end; e++)
        acc = __fmaf_rn(__ldg(t.gat_w + e), load(__ldg(t.gat_src + e)), acc);
    return acc;
}

// ---- 1. shared-memory direct kernel -------------------------------------------

template <int TC>
__global__ void __launch_bounds__(SMX_THREADS)
    k_theta_direct_shared(const float *__restrict__ in, float *__restrict__ out, dev_dims d,
                          angular_tables_dev t, float threshold, const active_regions *reg,
                          const int *stop, double *partials, int blocks, int ncomp)
{
    static_assert(SMX_THREADS % TC == 0 && TC >= 32, "a warp must lie inside one group");
    constexpr int G = SMX_THREADS / TC;
    extern __shared__ float smem[];
    if (block_stopped(stop))
        return; // uniform for the block: partials are not written either

    const int nth = (int)d.nth;
    float *s_in = smem; // [nth][TC]
    int *s_has = reinterpret_cast<int *>(smem + (size_t)nth * TC); // [SMX_THREADS]
    const int tid = threadIdx.x, col = tid % TC, g = tid / TC;
    const int64_t slice = d.slice;
    // The columns: every (ie, z, x), or with a region only the source bins of
    // the columns where the input holds weight or the output last step's values.
    const region_cols rc = region_cols_of(d, reg);
    const int64_t ncols = rc.ncols;
    const int64_t ntiles = (ncols + TC - 1) / TC;
    theta_tally tal;

    // Uniform trip count for the whole block (tile is block-uniform).
    for (int64_t tile = blockIdx.x; tile < ntiles; tile += gridDim.x) {
        const int64_t c = tile * TC + col;
        const bool active = c < ncols;
        int64_t ie = 0, zx = 0;
        if (active)
            rc.at(c, d, ie, zx);
        const int64_t base = ie * (int64_t)nth * slice + zx; // in/out[ie][0][z][x]
        const int k = active ? kernel_at(t, ie, zx) : 0;

        // The components of the moments scheme (ncomp > 1) in turn, each the
        // weight's kernel; the early exit and the tallies are the weight's
        // alone (a moment is not a weight).
        for (int comp = 0; comp < ncomp; comp++) {
            const float *cin = in + comp * d.cells;
            const float thr = comp ? 0.0f : threshold;
            const bool use_thr = thr > 0.0f;
            __syncthreads(); // the previous tile's s_in / s_has are no longer read
            column_input ci;
            int has = 0;
            const double *bf = t.boundary_frac + (int64_t)k * nth;
            const double *cf = t.gat_cut ? t.gat_cut + (int64_t)k * nth : nullptr;
            if (active) {
                for_column(cin + base, slice, g, G, nth, [&](int th, float v) {
                    v = ci.take(v, th, use_thr, thr, bf, !t.circular, cf);
                    has |= v != 0.0f;
                    s_in[th * TC + col] = v;
                });
            } else {
                for (int th = g; th < nth; th += G)
                    s_in[th * TC + col] = 0.0f;
            }
            if (active && comp == 0)
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
                float *o = out + comp * d.cells + base;
                if (skip) {
                    for (int j = g; j < nth; j += G)
                        o[(int64_t)j * slice] = 0.0f;
                } else if (t.gat_off) {
                    const float *sc = s_in + col;
                    for (int j = g; j < nth; j += G)
                        o[(int64_t)j * slice] =
                            gather_target(t, k, nth, j, [sc](int src) { return sc[src * TC]; });
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
    }
    tal.write(partials, blocks);
}

// ---- 2. global-memory direct kernel ---------------------------------------------

__global__ void __launch_bounds__(SMX_THREADS)
    k_theta_direct_global(const float *__restrict__ in, float *__restrict__ out, dev_dims d,
                          angular_tables_dev t, float threshold, const int *stop, double *partials,
                          int blocks)
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
            k = kernel_at(t, ie, zx);
            const double *bf = t.boundary_frac + (int64_t)k * nth;
            const double *cf = t.gat_cut ? t.gat_cut + (int64_t)k * nth : nullptr;
            column_input ci;
            for_column(col, slice, 0, 1, nth, [&](int th, float v) {
                any |= ci.take(v, th, use_thr, threshold, bf, !t.circular, cf) != 0.0f;
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
                if (t.gat_off) {
                    for (int j = 0; j < nth; j++)
                        o[(int64_t)j * slice] = gather_target(t, k, nth, j, load);
                    continue;
                }
                for (int j0 = 0; j0 < nth; j0 += ROWS)
                    conv_rows_store(o, slice, j0, nth, K, w, t.circular != 0, load);
            }
        }
    }
    tal.write(partials, blocks);
}

template <int TC>
cudaError_t launch_direct_shared(const angular_io &io, const angular_components &a, cudaStream_t s)
{
    const size_t dyn = direct_dyn_bytes(a.d.nth, TC);
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
    k_theta_direct_shared<TC><<<io.blocks, SMX_THREADS, dyn, s>>>(
        io.in, io.out, a.d, *a.t, a.threshold, a.reg, io.stop, io.partials, io.blocks, a.ncomp);
    return cudaGetLastError();
}

} // namespace

size_t angular_direct_smem_bytes(int64_t nth, int max_half_width)
{
    (void)max_half_width; // weights are read through the read-only cache, not staged
    return direct_dyn_bytes(nth, direct_tile_cols(nth)) + kStaticSmemReserve;
}

cudaError_t angular_direct(const angular_io &io, dev_dims d, const angular_tables_dev &t,
                           float threshold, cudaStream_t s)
{
    return angular_direct_components(io, angular_components{ d, &t, threshold, nullptr, 1 }, s);
}

cudaError_t angular_direct_components(const angular_io &io, const angular_components &a,
                                      cudaStream_t s)
{
    switch (direct_tile_cols(a.d.nth)) {
    case 256:
        return launch_direct_shared<256>(io, a, s);
    case 128:
        return launch_direct_shared<128>(io, a, s);
    case 64:
        return launch_direct_shared<64>(io, a, s);
    default:
        return launch_direct_shared<32>(io, a, s);
    }
}

cudaError_t angular_direct_global(const angular_io &io, dev_dims d, const angular_tables_dev &t,
                                  float threshold, cudaStream_t s)
{
    k_theta_direct_global<<<io.blocks, SMX_THREADS, 0, s>>>(io.in, io.out, d, t, threshold, io.stop,
                                                            io.partials, io.blocks);
    return cudaGetLastError();
}
