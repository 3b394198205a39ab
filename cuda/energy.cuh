// A_E on the GPU: deposit, then continuous slowing down from the LUT of
// src/physics/lut_energy.c. Semantics are those of cpu_op_energy() in src/transport/cpu_operators.c.
//
// energy_deposit: one thread per (z, x): dose[z][x] += deposit[ie] * psi[ie][th][z][x]
//   in the CPU's order (ie ascending, then th ascending), in double; stopped
//   bins (target < 0) add their weight and energy to ENERGY_STOPPED.
// energy_gather: one thread per (th, z, x) column, IN PLACE: for target j
//   ascending, psi[j] = fma(c1, psi[s1], c0 psi[s0]) from the gather LUT. In place is
//   safe because every source of j lies at or above j and the thread owns its column.
// energy_scatter: the fallback, same column ownership, sources ascending: each
//   source is consumed and added into its two targets (at or below it).
// Both are atomic-free and round exactly as the CPU (explicit __fmul_rn and
// __fmaf_rn, as src/transport/fma_rows.h), so both are bitwise the CPU's.
#ifndef SMX_CUDA_ENERGY_CUH
#define SMX_CUDA_ENERGY_CUH

#include "common.cuh"

struct energy_gather_dev {
    int src[2];
    float coeff[2];
    int count;
};

struct energy_tables_dev {
    const int *target;                 // [ne] lower target, -1 = stops
    const float *c_lo, *c_hi;          // [ne]
    const double *deposit;             // [ne] MeV per unit weight
    const energy_gather_dev *gather;   // [ne] per target
    const double *E;                   // [ne] centres
};

cudaError_t energy_deposit(const float *psi, double *dose, dev_dims d, energy_tables_dev t,
                           const int *stop, double *partials, int blocks, cudaStream_t s);
cudaError_t energy_move(int gather, float *psi, dev_dims d, energy_tables_dev t, const int *stop,
                        int blocks, cudaStream_t s);

#endif
