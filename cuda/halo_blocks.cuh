// The nuclear halo's blocks of a per-spot state's slots, summed on the device
// from the released energy's dose planes (backend_ops' halo_keep;
// src/transport/halo_dose.h, halo_dose_blocks): the blocks stay on the device
// for the transforms (halo_fft.cuh), and those planes are never copied out.
#ifndef SMX_CUDA_HALO_BLOCKS_CUH
#define SMX_CUDA_HALO_BLOCKS_CUH

#include "common.cuh"

// The blocks [slots][bands][cz][cx] and where their cells lie: the dose's
// planes plane0 .. plane0 + bands - 1 of the state (d: its rows' pitch, its
// slots' width), slot k's window columns from the grid's column x0[k]
// (device), block (bz, bx) over the grid's rows bz fz .. and the columns x
// with (x + ox) / fx == bx.
struct halo_blocks_args {
    const double *dose;
    dev_dims d;
    int plane0, bands, slots;
    const int *x0;
    int fz, fx, ox;
    int64_t cz, cx;
    double *blocks;
};

// Adds the window's rows r0 .. r1 - 1 (the grid's z0 + r0 ..) into the
// blocks: each block's cells in the host's order (rows ascending, then
// columns; zeros left out), onto what the block holds, so that rows added as
// they leave the window and the rest added at the end give the host's sums
// bit for bit.
cudaError_t halo_blocks_add(const halo_blocks_args &a, int z0, int r0, int r1, cudaStream_t s);

#endif
