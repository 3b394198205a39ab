// The deposit's spread along each direction's path on the GPU: the second half
// of src/numerics/deposit_path.h (the first, the per-direction deposit map,
// is written by the energy kernels). One thread per dose cell gathers, in the
// header's order, from the map cells whose paths reach it: no atomics, and
// the same double operations as the CPU (smx_path_cell).
#ifndef SMX_CUDA_DEPOSIT_PATH_CUH
#define SMX_CUDA_DEPOSIT_PATH_CUH

#include "common.cuh"
#include "streaming.cuh"

extern "C" {
#include "numerics/deposit_path.h"
}

// The step's paths in device memory (written by deposit_spread's first
// kernel): pz, px [nth] each, and reach[PATH_REACH]: the extreme offsets (z
// lo, z hi, x lo, x hi) over every direction and the widest span in cells.
#define PATH_REACH 5
// A path's cells and the products of its fractions f[a][b] = fz[a] * fx[b]
// (the first 3 x 3: the fast form of deposit_path.cu); +0 past the path's
// cells.
struct path_fast {
    int zlo, zn, xlo, xn;
    double f[3][3];
};
struct path_scratch_dev {
    smx_path_axis *pz, *px;
    path_fast *pf;
    int *reach;
};

// Sharing by capped mass (deposit_path.h): the medium map ([nz] rows of px)
// and each medium's density; medium NULL = sharing by length.
struct mass_share_dev {
    const unsigned char *medium;
    const double *density;
};

// What the deposit's spread is handed: the dose it adds to and the deposit
// map it spreads (dmap: [nth] planes of d.slice floats, rows of d.px); ps:
// scratch for the step's paths, found from the streaming tables st, the
// device's step counter and moved (A_stream has already run in this step);
// mass: sharing by capped mass when its medium is set; reg: the step's source
// region, read only there (its occupied and written boxes joined, where the
// fused kernel wrote the map), or the whole grid (NULL: energy_deposit writes
// every cell); slot_boxes, nslots: where a one-pass kernel visited each
// slot's own box (common.cuh; nslots > 1, null otherwise), those boxes, read
// there only; the stop flag and the blocks of the spread.
struct spread_args {
    double *dose;
    const float *dmap;
    path_scratch_dev ps;
    dev_dims d;
    stream_tables_dev st;
    mass_share_dev mass;
    const int64_t *step;
    int moved;
    const active_regions *reg;
    const box4 *slot_boxes;
    int nslots;
    const int *stop;
    int blocks;
};

// dose += the spread of dmap. Launches: the paths (one block), what the held
// cells keep (with mass), then the spread.
cudaError_t deposit_spread(const spread_args &a, cudaStream_t s);

#endif
