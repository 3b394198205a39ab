// A_E on the GPU where cells hold different media (src/physics/medium.h): the
// semantics of cpu_op_energy() in src/transport/cpu_operators.c with a medium
// map, and of the whole-bin tables of the media other than the reference
// (src/physics/lut_energy.h, energy_dither_lut).
//
// Tables are per (medium, table): table 0 is the lower-centre table, 1 the
// upper one; medium 0 (the reference) has its plain table in both, a share
// p_low of 1 (always table 0) and its gather entries as candidates, so that
// one kernel serves every cell and medium 0's cells compute exactly what the
// one-medium kernels of energy.cu compute.
//
// energy_media_deposit: one thread per (z, x), as energy_deposit; the dose
//   takes the medium's mean deposit (deposit_mean); weight stopped and
//   removed follow the table the step chose, and the chosen table's deposit
//   minus the mean goes to MEDIUM_ROUNDING.
// energy_media_move: one thread per (th, z, x) column, in place: gather over
//   the candidates of the cell's medium whose table the step chose (the first
//   rounded once, the others fma, sources ascending), or scatter from the
//   chosen table. Bitwise the CPU's.
#ifndef SMX_CUDA_ENERGY_MEDIA_CUH
#define SMX_CUDA_ENERGY_MEDIA_CUH

#include "common.cuh"

#define ENERGY_MEDIA_CANDIDATES 6 // ENERGY_CANDIDATES of src/physics/lut_energy.h

struct energy_candidates_dev {
    int src[ENERGY_MEDIA_CANDIDATES];
    float coeff[ENERGY_MEDIA_CANDIDATES];
    unsigned char upper[ENERGY_MEDIA_CANDIDATES];
    int count;
};

struct energy_media_dev {
    const unsigned char *medium;          // [nz][px]
    const double *p_low;                  // [n_media][ne]
    const double *steps;                  // [n_media][ne] range in steps (physics/dither_phase.h)
    unsigned char *lower;                 // [n_media][ne] this step's choice (energy_media_choose):
                                          // 1 = table 0 (lower centre)
    const double *deposit_mean;           // [n_media][ne] MeV per unit weight
    // per (medium, table) at ((m * 2 + table) * ne + ie)
    const int *target;
    const float4 *coeff;
    const double *deposit, *nuc_w, *nuc_e;
    const energy_candidates_dev *gather;  // [n_media][ne] per target
    const double *E;                      // [ne] centres
    int n_media;
};


// Device pieces shared by the media kernels (energy_media.cu, fused_media.cu).

// The whole-bin table that source bin ie of medium m takes this step: its
// index into the per-(medium, table) arrays.
__device__ inline int64_t media_table(const energy_media_dev &t, int64_t ne, int64_t m, int ie)
{
    return (m * 2 + (t.lower[m * ne + ie] ? 0 : 1)) * ne + ie;
}

// A_E's tallies of weight v leaving a source bin by table k (dm its medium's
// mean deposit, E its centre): stopped or non-elastic weight, and the chosen
// table's deposit minus the mean (MEDIUM_ROUNDING).
struct media_tally {
    double w_stop = 0.0, e_stop = 0.0, w_nuc = 0.0, e_nuc = 0.0, e_round = 0.0;

    __device__ void add(const energy_media_dev &t, int64_t k, double dm, double v, double E)
    {
        if (t.target[k] < 0) {
            w_stop += v;
            e_stop += v * E;
        } else {
            w_nuc += v * t.nuc_w[k];
            e_nuc += v * t.nuc_e[k];
        }
        e_round += v * (t.deposit[k] - dm);
    }
};

// Target bin e's value: its candidates whose table the step chose (low: the
// medium's choices) and whose source lies in [lo, hi], sources ascending, the
// first rounded once and the others fused multiply-adds, as the CPU.
template <typename Src>
__device__ inline float media_gather(const energy_candidates_dev &e, const unsigned char *low, int lo, int hi,
                                     Src src)
{
    float v = 0.0f;
    bool first = true;
    for (int k = 0; k < e.count; k++) {
        const int s = e.src[k];
        if (s < lo || s > hi || (low[s] ? 0 : 1) != e.upper[k])
            continue; // a zero source, or the other table's term
        v = first ? __fmul_rn(e.coeff[k], src(s)) : __fmaf_rn(e.coeff[k], src(s), v);
        first = false;
    }
    return v;
}

// The six A_E fields of a block's partials (SMX_THREADS threads).
__device__ inline void media_partials(double dep_sum, const media_tally &tl, double *partials, int blocks)
{
    const double v[6] = {dep_sum, tl.w_stop, tl.e_stop, tl.w_nuc, tl.e_nuc, tl.e_round};
    const int f[6] = {TF_DEPOSITED, TF_W_ENERGY_STOPPED, TF_E_ENERGY_STOPPED,
                      TF_W_NUCLEAR, TF_E_NUCLEAR, TF_E_MEDIUM_ROUNDING};
    block_partials_at<6>(v, f, partials, blocks);
}

// This step's choice of every (medium, source bin), for the two kernels below.
cudaError_t energy_media_choose(energy_media_dev t, int64_t ne, const int64_t *step, const int *stop,
                                cudaStream_t s);
cudaError_t energy_media_deposit(const float *psi, float *dmap, dev_dims d, energy_media_dev t, const int *stop,
                                 double *partials, int blocks, cudaStream_t s);
cudaError_t energy_media_move(int gather, float *psi, dev_dims d, energy_media_dev t, const int *stop, int blocks,
                              cudaStream_t s);

// The step's deposit and gather in one kernel, in place on psi (the output of
// A_theta), restricted to the active region (media_region_kernel): the
// two-pass step of a run with media (backend_cuda.cu). Bitwise the two kernels above.
cudaError_t energy_media_region(float *psi, float *dmap, dev_dims d, energy_media_dev t, const active_regions *reg,
                                const int *stop, double *partials, int blocks, cudaStream_t s);

#endif
