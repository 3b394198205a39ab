// A_E on the GPU: deposit, then continuous slowing down from the LUT of
// src/physics/lut_energy.c. Semantics are those of cpu_op_energy() in src/transport/backend_cpu_operators.c.
//
// energy_deposit: one thread per (z, x): each direction's deposit map entry
//   dmap[th][z][x] = the chain of fma(deposit[ie], psi[ie][th][z][x]) over ie
//   ascending, in double, stored as float (src/numerics/deposit_path.h; the
//   spread into the dose is deposit_path.cuh's); stopped bins (target < 0)
//   add their weight and energy to ENERGY_STOPPED, the others their
//   non-elastic removal to NUCLEAR.
// energy_gather: one thread per (th, z, x) column, IN PLACE: for target j
//   ascending, psi[j] = c0 psi[s0], then fma(ck, psi[sk], psi[j]) for the
//   further sources, ascending, from the gather LUT. In place is safe because
//   every source of j lies at or above j and the thread owns its column.
// energy_scatter: the fallback, same column ownership, sources ascending: each
//   source is consumed and added into its targets (t-1 .. t+1, at or below it).
// Both are atomic-free and round exactly as the CPU (explicit __fmul_rn and
// __fmaf_rn, as src/numerics/fma_rows.h), so both are bitwise the CPU's.
#ifndef SMX_CUDA_ENERGY_CUH
#define SMX_CUDA_ENERGY_CUH

#include "common.cuh"

#define ENERGY_SOURCES 3 // ENERGY_TARGETS of src/physics/lut_energy.h

struct energy_gather_dev {
    int src[ENERGY_SOURCES];
    float coeff[ENERGY_SOURCES];
    int count;
};

struct energy_tables_dev {
    const int *target; // [ne] bracketing lower bin t, -1 = stops
    const float4 *coeff; // [ne] to t-1, t, t+1 (w unused)
    const int2 *trange; // [ne] lowest and highest target receiving weight
    const double *deposit; // [ne] MeV per unit weight
    const double *nuc_w, *nuc_e; // [ne] non-elastic removal: weight, escaping MeV
    const energy_gather_dev *gather; // [ne] per target
    const double *E; // [ne] centres
};

// What A_E's launches are handed: psi on grid d (read by the deposit, moved
// in place), the deposit map dmap, the tables, the stop flag, the per-block
// partials the deposit tallies into and the number of blocks.
struct energy_args {
    float *psi;
    float *dmap;
    dev_dims d;
    energy_tables_dev t;
    const int *stop;
    double *partials;
    int blocks;
};

cudaError_t energy_deposit(const energy_args &a, cudaStream_t s);
// gather: energy_gather, else energy_scatter (dmap and partials unused).
cudaError_t energy_move(int gather, const energy_args &a, cudaStream_t s);

#endif
