// A_E on the GPU where cells hold different media (src/physics/medium.h): the
// semantics of cpu_op_energy() in src/transport/backend_cpu_operators.c with a medium
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
// energy_media_choose: the step's choice of table for every (medium, bin)
//   and, for the one pass, its fields of each (bin, medium)'s record
//   (media_bin), whose other fields energy_media_records writes at upload.
#ifndef SMX_CUDA_ENERGY_MEDIA_CUH
#define SMX_CUDA_ENERGY_MEDIA_CUH

#include "common.cuh"

struct angular_tables_dev; // angular.cuh
struct spectral_tables_dev; // spectral_tally.cuh

// One (source, table) pair that can reach a target (energy_candidate of
// src/physics/lut_energy.h), packed into 8 bytes for one load.
struct __align__(8) media_candidate
{
    int src_table; // source bin * 2 + table (1 = the upper table)
    float coeff;
};

// One (medium, source bin)'s values for the one pass (fused.cuh, "Media"),
// copied into shared memory with the bin's weights (or read from global
// memory by a tile of many media), so that a lane reads its medium's kernel,
// deposit and tallies without a chain of global loads in the bin loop (those
// loads were the media step's longest stalls). The kernel, the mean deposit,
// the truncation and the tallies' coefficients are the run's, written at
// upload; energy_media_choose completes the record each step with the
// fields of the table it chose (flags, nuc_w, nuc_e, round).
struct __align__(16) media_bin
{
    int kid, K, woff; // the medium's angular kernel at the bin: index, half width, weights' offset
    int flags; // MEDIA_BIN_LOWER: the step takes table 0; MEDIA_BIN_STOP: its table stops the bin
    double deposit_mean; // MeV per unit weight (deposit_mean)
    double cut; // 1 - the kernel's weight sum (its truncation)
    double nuc_w, nuc_e; // the chosen table's non-elastic weight and energy per unit weight
    double round; // the chosen table's deposit minus the mean (MEDIUM_ROUNDING)
};
#define MEDIA_BIN_LOWER 1
#define MEDIA_BIN_STOP 2

// The records: for each source bin and medium, rec_bytes holding the
// media_bin, the spectral tallies' coefficients of that medium and bin
// [nplanes of the run's tallies] and, from byte w_off, the weights of the
// medium's angular kernel at the bin [2K + 1] (so that a staged tile reads
// them from shared memory); [ne][n_media] of them.
struct media_bins_dev {
    unsigned char *out; // [ne][n_media] records; NULL: not built (whole-grid kernels)
    int rec_bytes; // media_rec_bytes(nplanes, the widest kernel's half width)
    int w_off; // media_rec_weights(nplanes)
};

// Where a record's kernel weights start: after its coefficients.
__host__ __device__ inline int media_rec_weights(int nplanes)
{
    return (int)sizeof(media_bin) + nplanes * (int)sizeof(double);
}
// Bytes of one record (a multiple of 16: whole cp.async copies).
__host__ __device__ inline int media_rec_bytes(int nplanes, int max_half_width)
{
    return (media_rec_weights(nplanes) + (2 * max_half_width + 1) * (int)sizeof(float) + 15) & ~15;
}

// A tile whose 32 cells hold at most this many media stages each bin's
// records of those media in shared memory (fused_layout); a tile of more
// (a CT's bone edges) reads each lane's record from global memory.
#define MEDIA_STAGED_MAX 8

struct energy_media_dev {
    const unsigned char *medium; // [nz][px]
    const double *p_low; // [n_media][ne]
    const double *steps; // [n_media][n_steps] range in steps (numerics/dither_phase.h)
    unsigned char *lower; // [n_media][ne] this step's choice (energy_media_choose):
        // 1 = table 0 (lower centre)
    const double *deposit_mean; // [n_media][ne] MeV per unit weight
    // per (medium, table) at ((m * 2 + table) * ne + ie)
    const int *target;
    const float4 *coeff;
    const double *deposit, *nuc_w, *nuc_e;
    // per target of each medium, every (source, table) that can reach it,
    // sources ascending: cand[cand_start[m * ne + T] .. cand_start[m * ne + T + 1])
    const int *cand_start; // [n_media * ne + 1]
    const media_candidate *cand;
    const double *E; // [ne] centres
    int n_media;
    int n_steps; // the range tables' bins: the run's, which a per-spot state of fewer shares
    media_bins_dev bins; // the one pass's records of each (medium, bin), completed with the choice
};

// The bytes a stage keeps for one bin's records: room for the most a tile
// stages, or for every medium where the run has fewer.
__host__ __device__ inline int media_stage_bytes(const energy_media_dev &t)
{
    return (t.n_media < MEDIA_STAGED_MAX ? t.n_media : MEDIA_STAGED_MAX) * t.bins.rec_bytes;
}

// Device pieces shared by the media kernels (energy_media.cu, fused_kernel.cuh).

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
        add(t.target[k] < 0, t.nuc_w[k], t.nuc_e[k], t.deposit[k] - dm, v, E);
    }
    // The same from a bin's record (its round is the same difference).
    __device__ void add(const media_bin &b, double v, double E)
    {
        add((b.flags & MEDIA_BIN_STOP) != 0, b.nuc_w, b.nuc_e, b.round, v, E);
    }
    __device__ void add(bool stop, double nw, double ne, double round, double v, double E)
    {
        if (stop) {
            w_stop += v;
            e_stop += v * E;
        } else {
            w_nuc += v * nw;
            e_nuc += v * ne;
        }
        e_round += v * round;
    }
};

// Candidates a gather loads at once: their loads go out together, so that a
// lane waits on memory once per MEDIA_CAND_BATCH candidates instead of once
// per candidate (the media step's longest stall).
#define MEDIA_CAND_BATCH 4

// Target bin T's value (row = m * ne + T) for M directions of one column at
// once (the lane's M consecutive directions, 32 floats apart from src(s)):
// the candidates whose table the step chose (low(s): source s takes table
// 0) and whose source lies in [lo, hi], sources ascending, the first rounded
// once and the others fused multiply-adds, as the CPU. Which candidates
// count does not depend on the direction, so each is loaded and tested once.
template <int M, typename Low, typename Src>
__device__ inline void media_gather_dirs(const energy_media_dev &t, int64_t row, Low low, int lo,
                                         int hi, float (&v)[M], Src src)
{
#pragma unroll
    for (int mm = 0; mm < M; mm++)
        v[mm] = 0.0f;
    bool first = true;
    const int2 *cand = reinterpret_cast<const int2 *>(t.cand);
    const int k0 = __ldg(t.cand_start + row), k1 = __ldg(t.cand_start + row + 1);
    for (int kb = k0; kb < k1; kb += MEDIA_CAND_BATCH) {
        int2 e[MEDIA_CAND_BATCH];
#pragma unroll
        for (int u = 0; u < MEDIA_CAND_BATCH; u++)
            e[u] = kb + u < k1 ? __ldg(cand + kb + u) : int2{ 0, 0 };
#pragma unroll
        for (int u = 0; u < MEDIA_CAND_BATCH; u++) {
            const int s = e[u].x >> 1;
            if (kb + u >= k1 || s < lo || s > hi || (low(s) ? 0 : 1) != (e[u].x & 1))
                continue;
            const float c = __int_as_float(e[u].y);
            const float *r = src(s);
            if (first) {
#pragma unroll
                for (int mm = 0; mm < M; mm++)
                    v[mm] = __fmul_rn(c, r[mm * 32]);
            } else {
#pragma unroll
                for (int mm = 0; mm < M; mm++)
                    v[mm] = __fmaf_rn(c, r[mm * 32], v[mm]);
            }
            first = false;
        }
    }
}

// Target bin T's value (row = m * ne + T) of the column at p (energy stride
// estride): media_gather_dirs for one direction.
__device__ inline float media_gather(const energy_media_dev &t, int64_t row,
                                     const unsigned char *low, int lo, int hi, const float *p,
                                     int64_t estride)
{
    float v[1];
    media_gather_dirs<1>(
        t, row, [&](int s) { return low[s] != 0; }, lo, hi, v,
        [&](int s) { return p + s * estride; });
    return v[0];
}

// The six A_E fields of a block's partials (SMX_THREADS threads).
__device__ inline void media_partials(double dep_sum, const media_tally &tl, double *partials,
                                      int blocks)
{
    const double v[6] = { dep_sum, tl.w_stop, tl.e_stop, tl.w_nuc, tl.e_nuc, tl.e_round };
    const int f[6] = { TF_DEPOSITED, TF_W_ENERGY_STOPPED, TF_E_ENERGY_STOPPED,
                       TF_W_NUCLEAR, TF_E_NUCLEAR,        TF_E_MEDIUM_ROUNDING };
    block_partials_at<6>(v, f, partials, blocks);
}

// The run's fields of the one pass's records (media_bin; the step's are
// energy_media_choose's) in t.bins: each medium's angular kernel at each bin
// (at), its mean deposit and truncation, and the coefficients of the
// tallies the pass takes (tal, t.bins.rec_bytes holding tal.nplanes).
cudaError_t energy_media_records(const energy_media_dev &t, int64_t ne,
                                 const angular_tables_dev &at, const spectral_tables_dev &tal,
                                 cudaStream_t s);
// This step's choice of every (medium, source bin), for the two kernels below,
// and, where t.bins.out is set, its fields of the one pass's records (media_bin).
cudaError_t energy_media_choose(energy_media_dev t, int64_t ne, const int64_t *step,
                                const int *stop, cudaStream_t s);
// What the launches below are handed: psi on grid d (read by the deposit,
// moved in place, the whole grid), the deposit map dmap, the tables, the
// stop flag, the per-block partials the deposit tallies into and the number
// of blocks.
struct energy_media_args {
    float *psi;
    float *dmap;
    dev_dims d;
    energy_media_dev t;
    const int *stop;
    double *partials;
    int blocks;
};
cudaError_t energy_media_deposit(const energy_media_args &a, cudaStream_t s);
// gather: the gather, else the scatter (dmap and partials unused).
cudaError_t energy_media_move(int gather, const energy_media_args &a, cudaStream_t s);

#endif
