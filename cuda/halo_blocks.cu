// The halo's blocks from the dose planes (halo_blocks.cuh says what they are).
#include "halo_blocks.cuh"

namespace {

// Grid-stride launches of at most this many blocks (as halo_fft.cu's).
constexpr int HALO_BLOCKS_GRID = 1024;

// Entry i of the (slot, band, block row, block column)s that the rows
// r0 .. r1 - 1 reach (block rows from bz_lo, rows of them per (slot, band)).
__device__ void halo_block_sum(const halo_blocks_args &a, int z0, int r0, int r1, int bz_lo,
                               int64_t rows, int64_t i)
{
    const int64_t per_band = rows * a.cx;
    const int64_t kb = i / per_band, r = i % per_band;
    const int k = (int)(kb / a.bands), b = (int)(kb % a.bands);
    const int bz = bz_lo + (int)(r / a.cx), bx = (int)(r % a.cx);
    const int sw = (int)slot_w(a.d), xk = a.x0[k];
    // The window's rows of block row bz among r0 .. r1 - 1, and the slot's
    // columns (window columns k sw + i, grid columns xk + i) of column bx.
    const int w_lo = max(r0, bz * a.fz - z0), w_hi = min(r1, (bz + 1) * a.fz - z0);
    const int i_lo = max(0, bx * a.fx - a.ox - xk), i_hi = min(sw, (bx + 1) * a.fx - a.ox - xk);
    if (w_lo >= w_hi || i_lo >= i_hi)
        return;
    double *blk = a.blocks + ((int64_t)k * a.bands + b) * a.cz * a.cx + (int64_t)bz * a.cx + bx;
    const double *p = a.dose + (int64_t)(a.plane0 + b) * a.d.slice + (int64_t)k * sw;
    double acc = *blk;
    for (int w = w_lo; w < w_hi; w++)
        for (int x = i_lo; x < i_hi; x++) {
            const double v = p[(int64_t)w * a.d.px + x];
            if (v != 0.0)
                acc += v;
        }
    *blk = acc;
}

__global__ void halo_blocks_kernel(halo_blocks_args a, int z0, int r0, int r1, int bz_lo,
                                   int64_t rows, int64_t total)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total;
         i += (int64_t)gridDim.x * blockDim.x)
        halo_block_sum(a, z0, r0, r1, bz_lo, rows, i);
}

} // namespace

cudaError_t halo_blocks_add(const halo_blocks_args &a, int z0, int r0, int r1, cudaStream_t s)
{
    if (r1 <= r0 || a.slots < 1 || a.bands < 1)
        return cudaSuccess;
    const int64_t bz_lo = (z0 + r0) / a.fz;
    const int64_t bz_hi = min((int64_t)(z0 + r1 - 1) / a.fz, a.cz - 1);
    if (bz_hi < bz_lo)
        return cudaSuccess;
    const int64_t rows = bz_hi - bz_lo + 1, total = (int64_t)a.slots * a.bands * rows * a.cx;
    const int64_t want = (total + SMX_THREADS - 1) / SMX_THREADS;
    halo_blocks_kernel<<<(unsigned)min(want, (int64_t)HALO_BLOCKS_GRID), SMX_THREADS, 0, s>>>(
        a, z0, r0, r1, (int)bz_lo, rows, total);
    return cudaGetLastError();
}
