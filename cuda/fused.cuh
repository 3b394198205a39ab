// A_theta and A_E (with the deposit) fused into one pass over psi, out of
// place, and optionally A_stream too (shift scheme): the whole default step
// (theta, energy, stream) in ONE read and ONE write of psi.
//
// Four to eight threads (one per chunk of directions) own one (z, x) column
// and walk the SOURCE energy bins upwards: bin s is convolved over theta once
// (input staged in shared memory), its deposit joins each direction's chain
// (src/numerics/deposit_path.h; the column's chains go to the deposit map,
// which deposit_path.cuh spreads into the dose), and c[k] * conv goes to
// target t - 1 + k (k = 0 .. 2, t = target[s]: the slowing down's two bins and
// the straggling's third, src/physics/lut_energy.h), kept as three open
// accumulators in registers. Because target[s] never decreases with s
// (the gather LUT's precondition), a target is complete once a source's
// lowest target lies above it, and is written then, in ascending order;
// targets no source reaches are written as zeros. Every float operation happens in the same order as in
// the CPU's cpu_op_theta + cpu_op_energy (gather), so psi is bitwise the CPU's.
//
// Single pass (fused_step): under the shift scheme A_stream moves every cell
// of direction j by the same whole-cell offset, a translation, so the value
// computed for column (z, x) is simply written at (z, x) + move[j]: no two
// columns write one cell and no arithmetic changes. Targets outside the domain
// are SPATIAL_LEAK; cells that no visited column reaches are cleared by their
// own column. The kernel also measures its output (TF_W_OUT, TF_E_OUT, each
// bin's non-zero extent into box_next), which the end-of-step bookkeeping
// needs. The buffers alternate: step n reads psi[n & 1] and writes the other,
// n being the device's step counter (so one captured graph serves every step).
//
// Energy split: a step with few tiles of 32 columns (a pencil beam) would
// leave most blocks idle while a few walk all their bins, so each tile's bin
// range is cut into groups, one block each. A group writes only its own
// target bins, convolving again the sources below that feed its lowest one;
// it tallies only its own sources and stores their convolved weight
// (fused_split_dev), and the tile's last group forms each direction's deposit
// chain over all bins in the order above. psi and the deposit map are the
// same bits either way.
//
// Media (fused_args::em: cells of several materials and densities,
// energy_media.cuh): the same instances' walk, stage ring, energy split,
// clusters, slots, writes and tallies, with what depends on the medium taken
// per lane. A lane convolves source bin s with its medium's kernel (the
// direct kernel's bounds-checked conv_rows; no padded stage), its deposit
// takes the medium's mean deposit, and its convolved values go to a ring of
// the last R + 1 source bins in shared memory (R = fused_args::reach, the
// widest source-target distance of every medium's tables: a target's sources
// lie in T .. T + R). Before bin s takes the oldest slot, target T = s - 1 - R
// is complete and is formed by the gather of the lane's medium (candidates
// ascending, the whole-bin table this step chose: energy_media_choose), then
// written as above; T is the same for every lane, so a bin's writes go out
// together. What a lane reads of its medium at bin s (kernel, mean deposit,
// the chosen table's tallies, the spectral coefficients) comes from the
// step's records (energy_media.cuh, media_bin), copied into shared memory
// with the bin's weights where the tile's cells hold at most
// MEDIA_STAGED_MAX media (read from global memory where they hold more),
// and each lane keeps its sources' choices of table
// as bits beside the ring. psi, the deposit map and the dose are the CPU's
// bits (the gather's first term rounded once is fma(c, v, +0), as the one
// medium's first accumulation). One tile a block; instances for the single
// pass only.
//
// Work is proportional to the occupied region (boxes, see common.cuh). The
// unsplit kernel is launched in thread-block clusters where the device has
// them (sm_90 on), to keep neighbouring tiles' stores together (fused.cu).
// Tallies: THETA_BOUNDARY / THETA_CUTOFF as the angular kernels, DEPOSITED,
// ENERGY_STOPPED and NUCLEAR as energy_deposit. Early exit: values below threshold are
// dropped (THETA_CUTOFF) before the convolution; a bin whose tile of 32
// columns holds no weight skips its arithmetic.
#ifndef SMX_CUDA_FUSED_CUH
#define SMX_CUDA_FUSED_CUH

#include "angular.cuh"
#include "common.cuh"
#include "energy_media.cuh"
#include "fused_shape.cuh"
#include "spectral_tally.cuh"
#include "streaming.cuh"

// One source bin's constants, in one aligned record (three 16-byte shared
// loads). The theta-cut and non-elastic tallies are summed in float within a
// tile (channels of 1e-7 and 5e-4 of the weight a step), so their factors are
// floats.
struct __align__(16) fused_bin
{
    double E, deposit;
    float cut_frac, E_f; // 1 - weight_sum[kernel of the bin]; E in float
    float c[3]; // to targets t - 1 .. t + 1
    float nuc_w, nuc_e; // non-elastic removal per unit weight: weight, escaping MeV
    float pad;
};

// Directions at each edge of the window whose share scattered outside it
// (angular boundary_frac) the fused kernel keeps per bin in shared memory, as
// floats: a kernel of half-width K <= FUSED_EDGE scatters past an edge only
// from the K directions nearest to it. (The tally it feeds is checked to 1e-6
// of the weight; a float product is within 6e-8 of the double one.)
#define FUSED_EDGE 4

// The fused kernel's per-bin tables, built once at setup by the backend.
struct fused_tables_dev {
    const int4 *
        bin_step; // [ne] {kernel id, its K, its weights' offset, energy target}: loaded a bin ahead
    const fused_bin *bins; // [ne]
    // [ne][2] window mode, nth >= 2 FUSED_EDGE: boundary_frac of the bin's
    // kernel for directions 0 .. 3 and nth - 4 .. nth - 1 (zeros otherwise)
    const float4 *edge;
    // Window mode: boundary_frac as floats, one row of nth per distinct kernel
    // of the bins that edge does not serve (K > FUSED_EDGE, or nth < 2
    // FUSED_EDGE), and each bin's row (-1: none), for the kernel to keep in
    // shared memory beside the other per-bin tables. n_wide = 0 (no such bin,
    // or no room: fused_boundary_rows_fit): the kernel reads
    // angular_tables_dev::boundary_frac from global memory instead.
    const float *bf_wide;
    const int *bf_row;
    int n_wide;
};

// The energy split of steps with few tiles (a pencil beam): per tile, the
// convolved weight of each source bin by direction and column (ws,
// fused_split_ws_floats of them: the tile's last group forms the deposit
// chains from them), and how many of the tile's groups are done (count, zero
// between steps). max_tiles = 0: never split.
struct fused_split_dev {
    float *ws;
    int *count; // [max_tiles]
    int max_tiles;
};
size_t fused_split_ws_floats(int64_t nth, int64_t ne, int max_tiles);

// Dynamic shared memory a fused block may use: its stage ring and per-bin
// tables (sm_90 allows 227 KB per block; the rest is left to static shared memory).
#define FUSED_MAX_DYN_SMEM (224 * 1024)

// The most directions for which the split instance takes its owned bins'
// direction sums in the pass (fused_kernel.cuh): at 48 and 64 it has no
// registers to spare for them (it spilled, and the field's steps grew by a
// fifth). The host decides with the same constant (decide_fused_extras).
constexpr int FUSED_SPLIT_SUMS_MAX_NTH = 32;

// 1 when the fused kernel can serve this grid: the n_theta it is built for,
// one energy bin small enough for 32-bit offsets, and a block's stage ring and
// per-bin tables (ne of them) within FUSED_MAX_DYN_SMEM.
int fused_theta_energy_supported(int64_t nth, int64_t slice, int64_t ne, int max_half_width);
// 1 when the single pass can serve it with spec_planes spectral tallies
// (the shift scheme is the caller's check).
int fused_step_supported(int64_t nth, int64_t slice, int64_t ne, int max_half_width,
                         int spec_planes);
// 1 when the single pass serves a run with media on this grid: reach_bins
// (R, fused_args::reach) sets the ring each group keeps, bin_bytes the
// room a stage keeps for a bin's records (media_stage_bytes).
int fused_media_step_supported(int64_t nth, int64_t slice, int64_t ne, int reach_bins,
                               int spec_planes, int bin_bytes);
// 1 when, on such a grid, the media split instance can also write its owned
// bins' direction sums (fused_args::spec_wsum, up to FUSED_SPLIT_SUMS_MAX_NTH
// directions) at no cost of a resident block.
int fused_media_split_sums_fit(int64_t nth, int64_t ne, int reach_bins, int spec_planes,
                               int bin_bytes);
// What a fused block's shared memory depends on: the directions and energy
// bins, the widest kernel, whether the instance streams (fused_step), the
// padded stage's cap (kp_cap, as for fused_args::kp) and the spectral
// tallies' planes the single pass takes.
struct fused_sizes {
    int64_t nth, ne;
    int max_half_width;
    int stream;
    int kp_cap;
    int spec_planes;
    int split_sums; // the split instance writes its bins' direction sums (fused_args::spec_wsum)
};
// Tiles per block of the unsplit instance on a grid it serves: FUSED_SUB, or
// 1 where that many stage rings do not fit (or one_tile, a test hook, asks).
// Decided once at setup and passed to every launch.
int fused_tiles_per_block(const fused_sizes &z, int one_tile);
// Floats per row of fused_tables_dev::bf_wide: the direction count the
// fused kernel is compiled for (nth rounded up to 16, 32, 48 or 64).
int fused_boundary_row_floats(int64_t nth);
// 1 when n_wide rows of fused_tables_dev::bf_wide and z.spec_planes
// planes of in-pass spectral tallies fit beside the block's stage rings and
// tables without costing the SM a resident block against neither (tiles:
// fused_tiles_per_block; the split instance's one-tile blocks need less).
int fused_boundary_rows_fit(const fused_sizes &z, int tiles, int n_wide);

// What the fused kernel is handed (fused_theta_energy and fused_step; the
// kernel takes it whole, by value).
struct fused_args {
    float *psi0, *psi1; // single pass: in = psi[n & 1], out = the other; else in psi0, out psi1
    const int64_t *step; // the device's step count n (single pass)
    float *dmap; // [nth] planes: this step's deposit per direction (deposit_path.h)
    dev_dims d;
    angular_tables_dev at;
    fused_tables_dev ft;
    stream_tables_dev st; // single pass
    float threshold; // the early exit's
    const box4 *box_a; // [ne] where the input holds weight
    box4 *box_next; // [ne] the output's extent, joined in (single pass)
    const active_regions *reg;
    const int *stop;
    double *partials;
    int blocks; // a multiple of FUSED_SUB * FUSED_CLUSTER
    // The launcher's caller: 0, or (tests) the widest kernel convolved from
    // the padded stage (kp_cap). The kernel: kernels of half-width K <= kp
    // convolve from the padded stage (fused_layout), the launcher pads it.
    int kp;
    int tiles; // tiles per block of the unsplit instance (fused_tiles_per_block, same kp_cap)
    fused_split_dev split;
    int cluster_launch; // 1: the unsplit instance is launched in clusters of FUSED_CLUSTER blocks
        // (where the device launches them, sm_90 on)
    box4 *slot_boxes; // [SB_KINDS][FUSED_SLOTS] (common.cuh), with nslots > 1 (single pass)
    const int *slot_pref; // [nslots + 1] tiles before each slot's (slot_tiles)
    int nslots; // > 1: the single pass visits each slot's box (0 or 1: the union's)
    group_bins_dev gbins; // nslots > 1: the bins each row's column groups hold (common.cuh)
    // Single pass, spec.nplanes > 0: the spectral tallies of the state the
    // step finds (spectral_tally.cuh; one medium, medium 0), added to planes
    // 1.. of spec_dose ([1 + nplanes][slice]) by the unsplit instance. On the
    // steps it splits, the split instance writes each owned source bin's
    // direction sums (inside the bin's box) to spec_wsum ([ne][slice]), and
    // spectral_plane_launch, after the step, forms the planes from them.
    spectral_tables_dev spec;
    double *spec_dose;
    double *spec_wsum;
    // Media (em.medium set; single pass, fused_step): each cell's medium, its
    // tables, this step's choice of whole-bin table and its records of each
    // (bin, medium) (energy_media.cuh, after energy_media_choose); reach: R,
    // a target's sources lie in T .. T + R. ft is not read; spec holds
    // n_media media's coefficients (the records carry them).
    energy_media_dev em;
    int reach;
};

// A_theta and A_E, psi0 -> psi1: A's step, st, box_next and slots are not used.
// Only the columns of reg->occupied (where psi0 holds weight) and reg->written
// (where psi1 holds last step's values) are visited; a source bin is read only
// inside its box_a (outside it psi0 is zero). Elsewhere psi1 must be zero.
cudaError_t fused_theta_energy(const fused_args &A, cudaStream_t s);

// One whole step, psi[*step & 1] -> the other buffer (see above). reg->written
// and reg->wtgt_* describe where the output buffer holds the previous state;
// box_next must start empty. nslots > 1 (slot_count(d), at most FUSED_SLOTS):
// each slot's box of slot_boxes (common.cuh) is visited instead of the union
// (reg's boxes still bound them; its bin ranges serve every slot; slot_pref:
// [nslots + 1] the tiles before each slot's, slot_tiles), and each slot's
// new extent is joined into its SB_NEXT box, which must start empty. With
// slots a tile walks only the bins of gbins' GB_INPUT ranges at its cells and
// writes the targets of those and of the GB_OUTPUT ranges where it writes;
// it joins the bins it wrote values into GB_NEXT, which must start empty.
// Every column of the deposit map that no slot's box holds must be zero.
cudaError_t fused_step(const fused_args &A, cudaStream_t s);

// The kernel's instance groups, one per NMAX (the directions a thread
// block's columns hold, fused_nmax): each cuda/fused_nmaxNN.cu instantiates
// the kernel for its NMAX only (fused_instance.cuh), under the shift
// scheme's single pass (stream, with or without slots) and the two-pass
// theta + energy (no stream, no slots); fused.cu dispatches to them.
// The launch of one step (fused_step, fused_theta_energy) by this group.
cudaError_t fused_launch_nmax16(const fused_args &A, bool stream, bool slots, cudaStream_t s);
cudaError_t fused_launch_nmax32(const fused_args &A, bool stream, bool slots, cudaStream_t s);
cudaError_t fused_launch_nmax48(const fused_args &A, bool stream, bool slots, cudaStream_t s);
cudaError_t fused_launch_nmax64(const fused_args &A, bool stream, bool slots, cudaStream_t s);

// fused_media_split_sums_fit for this group (the groups of up to
// FUSED_SPLIT_SUMS_MAX_NTH directions).
int fused_media_sums_fit_nmax16(int64_t ne, int reach_bins, int spec, int bin_bytes);
int fused_media_sums_fit_nmax32(int64_t ne, int reach_bins, int spec, int bin_bytes);

// fused_boundary_rows_fit for this group.
int fused_rows_fit_nmax16(int kp, int64_t ne, int tiles, int n_wide, bool stream, int spec,
                          bool split_sums);
int fused_rows_fit_nmax32(int kp, int64_t ne, int tiles, int n_wide, bool stream, int spec,
                          bool split_sums);
int fused_rows_fit_nmax48(int kp, int64_t ne, int tiles, int n_wide, bool stream, int spec,
                          bool split_sums);
int fused_rows_fit_nmax64(int kp, int64_t ne, int tiles, int n_wide, bool stream, int spec,
                          bool split_sums);

#endif
