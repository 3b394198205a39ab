// access-probe: what the fused step's memory access pattern costs on this GPU
// with no arithmetic at all, against a plain device-to-device copy of the same
// bytes. It answers "how close to the copy floor can this layout get?", which
// the benchmark (smx2d-sim --bench) cannot: its step also computes.
//
// The pattern is the fused kernel's (cuda/fused.cu) as it was before the
// backend padded its rows to whole lines: psi[E][theta][z][x] on the
// benchmark's Production grid, rows of NX floats (-DPROBE_NX=224 or another
// multiple of 32 gives rows of whole lines, every column live); a block
// walks a tile of COLS consecutive columns through every energy bin; the
// threads of one column own 8 directions each; each bin arrives in shared
// memory through a ring of three cp.async stages; each value is stored at its
// cell plus the direction's whole-cell move (the single-pass streaming).
// Moves: none; z only (direction j moves j mod 2 rows: 800 bytes, so a warp's
// 128 bytes straddle two lines but fill whole 32-byte sectors); x and z (also
// (j mod 3) - 1 cells in x: the stores start 4 bytes off a sector, as when a
// direction moves sideways); the benchmark's own moves, step by step. "read" applies the move where psi is
// read instead (a gather: the stores stay aligned, the loads do not). Shapes:
// one tile per block, with or without clusters of blocks kept in step; SUB
// tiles per block, each with its own named barrier (the fused kernel's
// FUSED_SUB); and "by SM", the blocks resident on one SM on adjacent tiles.
//
// Usage: access-probe   (prints one line per case; exit 1 on a CUDA error)
#include <cmath>
#include <cstdio>
#include <cuda_runtime.h>

#include "async_copy.cuh"
#include "streaming.cuh"

#define PROBE_CHECK(x)                                                             \
    do {                                                                           \
        const cudaError_t e_ = (x);                                                \
        if (e_ != cudaSuccess) {                                                   \
            fprintf(stderr, "access-probe: %s: %s\n", #x, cudaGetErrorString(e_)); \
            return 1;                                                              \
        }                                                                          \
    } while (0)

namespace {

// The probe's own 16-byte case (the kernel copies 4 bytes per cp.async):
// cp.async of 16 bytes (4 floats, 16-byte aligned at both ends) past L1
// (.cg): the first `bytes` of them read, the rest zero-filled.
__device__ __forceinline__ void cp_async16_cg(float *dst, const float *src, int bytes)
{
    const unsigned d = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d), "l"(src), "r"(bytes)
                 : "memory");
}

// Row width, a build option (docs/tuning.md): other widths (-DPROBE_NX=224)
// show how the row pitch aligns the z moves.
#ifndef PROBE_NX
#define PROBE_NX 200
#endif
constexpr int NE = 100, NTH = 32, NZ = 400, NX = PROBE_NX; // the benchmark's Production grid
constexpr int M = 8, G = NTH / M, RING = 3; // as the fused kernel for 32 directions
constexpr long SLICE = (long)NZ * NX, ESTRIDE = NTH * SLICE;
constexpr int REPS = 12, WARMUP = 2;

// move_tab[j]: the flattened cell offset of direction j. read_side: the move
// is applied where psi is read (a gather: out at c takes in at c - move) instead
// of where it is written. CL > 1: clusters of CL blocks on adjacent tiles, kept
// within one bin of each other by the cluster barrier (async_copy.cuh).
// SUB > 1: a block holds SUB independent groups of G warps, each on its own
// tile of COLS columns with its own named barrier, the SUB tiles adjacent (one
// block's memory picture is SUB * COLS columns, its barriers stay COLS wide).
// sm_slots: the blocks resident on one SM take adjacent tiles (slot from a
// per-SM counter; the grid is blocks_per_sm per SM; bad is set when an SM
// holds more, or %smid is not below the SM count: cases the probe does not serve).
template <int COLS, int CL, int SUB = 1, bool VEC = false>
__global__ void __launch_bounds__(COLS *G *SUB)
    pattern(const float *in, float *out, const int *move_tab, int read_side, int *sm_slots,
            int blocks_per_sm, int *bad)
{
    __shared__ __align__(16) float stage[SUB][RING][NTH][COLS];
    const int sub = threadIdx.x / (COLS * G), t = threadIdx.x % (COLS * G);
    const int col = t % COLS, g = t / COLS, j0 = g * M;
    const long ntiles = (SLICE + COLS - 1) / COLS;
    auto sub_sync = [&]() {
        if (SUB == 1)
            __syncthreads();
        else
            named_sync(1 + sub, COLS * G);
    };
    int rmove[M], wmove[M];
    for (int m = 0; m < M; m++) {
        rmove[m] = read_side ? -move_tab[j0 + m] : 0;
        wmove[m] = read_side ? 0 : move_tab[j0 + m];
    }
    // Work unit u of round r: units are clusters (CL blocks) or, with sm_map,
    // the blocks of one SM; a unit covers CL * SUB (or blocks_per_sm) adjacent tiles.
    // (passed through the stage, which is full: 48 KB at 4 x 32 or 128 columns)
    int *const s_pass = reinterpret_cast<int *>(&stage[0][0][0][0]);
    if (threadIdx.x == 0) {
        if (sm_slots) {
            unsigned smid;
            asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
            const int slot =
                smid < gridDim.x / blocks_per_sm ? atomicAdd(&sm_slots[smid], 1) : blocks_per_sm;
            if (slot >= blocks_per_sm) // %smid past the SM count, or too many blocks on this SM
                atomicExch(bad, 1);
            s_pass[0] = (int)smid, s_pass[1] = slot % blocks_per_sm;
        } else {
            s_pass[0] = blockIdx.x / CL, s_pass[1] = blockIdx.x % CL;
        }
    }
    __syncthreads();
    const int s_unit = s_pass[0], s_slot = s_pass[1];
    __syncthreads();
    const int per_unit = sm_slots ? blocks_per_sm : CL;
    const long nunits = sm_slots ? gridDim.x / blocks_per_sm : gridDim.x / CL;
    const long tiles_per_unit = (long)per_unit * SUB,
               ngroups = (ntiles + tiles_per_unit - 1) / tiles_per_unit;
    for (long grp = s_unit; grp < ngroups; grp += nunits) { // the same trip count in a unit
        const long tile = (grp * per_unit + s_slot) * SUB + sub;
        const long c = tile * COLS + col;
        const bool live = tile < ntiles && c < SLICE;
        auto issue = [&](int s, int slot) {
            if (VEC) { // 16-byte copies, each of 4 columns of one direction (write-side moves only)
                for (int k = t; k < NTH * COLS / 4; k += COLS * G) {
                    const int row = k / (COLS / 4), c4 = k % (COLS / 4) * 4;
                    const long src = tile * COLS + c4;
                    if (s < NE && tile < ntiles && src < SLICE)
                        cp_async16_cg(&stage[sub][slot][row][c4],
                                      in + s * ESTRIDE + row * SLICE + src, 16);
                }
            } else if (s < NE && live)
                for (int m = 0; m < M; m++) {
                    const long src = c + rmove[m];
                    if (src >= 0 && src < SLICE)
                        cp_async4(&stage[sub][slot][j0 + m][col],
                                  in + s * ESTRIDE + (j0 + m) * SLICE + src, true);
                }
            cp_async_commit();
        };
        for (int i = 0; i < RING - 1; i++)
            issue(i, i);
        int slot = 0;
        for (int s = 0; s < NE; s++) {
            cp_async_wait<RING - 2>();
            sub_sync(); // bin s is in; every thread is done with bin s - 1's stage
            if (CL > 1) {
                if (s > 0)
                    cluster_wait();
                cluster_arrive();
            }
            issue(s + RING - 1, (slot + RING - 1) % RING);
            if (live)
                for (int m = 0; m < M; m++) {
                    const long t = c + wmove[m];
                    if (t >= 0 && t < SLICE)
                        out[s * ESTRIDE + (j0 + m) * SLICE + t] = stage[sub][slot][j0 + m][col];
                }
            slot = (slot + 1) % RING;
        }
        sub_sync(); // the ring is reused by the next tile
        if (CL > 1)
            cluster_wait(); // the last bin's arrivals: the cluster leaves the tile together
    }
}

// Mean and minimum over REPS - WARMUP timed repetitions of `launch`.
template <typename F>
int time_it(F launch, float *mean, float *best)
{
    cudaEvent_t a, b;
    PROBE_CHECK(cudaEventCreate(&a));
    PROBE_CHECK(cudaEventCreate(&b));
    float sum = 0.0f;
    *best = 1e30f;
    for (int r = 0; r < REPS; r++) {
        PROBE_CHECK(cudaEventRecord(a));
        PROBE_CHECK(launch());
        PROBE_CHECK(cudaEventRecord(b));
        PROBE_CHECK(cudaEventSynchronize(b));
        float ms;
        PROBE_CHECK(cudaEventElapsedTime(&ms, a, b));
        if (r >= WARMUP) {
            sum += ms;
            *best = ms < *best ? ms : *best;
        }
    }
    *mean = sum / (REPS - WARMUP);
    PROBE_CHECK(cudaEventDestroy(a));
    PROBE_CHECK(cudaEventDestroy(b));
    return 0;
}

// The move tables: 0 none, 1 z only, 2 x and z (synthetic, every step alike);
// 3 + n: the benchmark's own window (32 directions over 90 +- 20 degrees,
// ds = dx = dz) at step n, as the shift scheme rounds it (stream_shift_of).
void moves_for(int kind, int (&tab)[NTH])
{
    for (int j = 0; j < NTH; j++) {
        if (kind < 3) {
            tab[j] = (kind >= 1 ? (j % 2) * NX : 0) + (kind >= 2 ? (j % 3) - 1 : 0);
            continue;
        }
        const long n = kind - 3;
        const double th = (70.0 + (j + 0.5) * 40.0 / NTH) * 3.14159265358979323846 / 180.0;
        const double sx = cos(th), sz = sin(th);
        const long mx = stream_shift_of(sx, n), mz = stream_shift_of(sz, n);
        tab[j] = (int)(mz * NX + mx);
    }
}

// One line: the pattern with the moves of `kinds` (averaged over them), on the
// write or the read side. sm_map: the blocks of one SM take adjacent tiles
// (blocks / SMs of them, the launch must place them evenly: checked).
template <int COLS, int CL = 1, int SUB = 1, bool VEC = false>
int run_pattern(const float *in, float *out, int *d_moves, int blocks, int kind0, int nkinds,
                int read_side, const char *label, float copy_ms, int *d_slots = nullptr,
                int *d_bad = nullptr, int sms = 0)
{
    float mean_sum = 0.0f, best = 1e30f;
    const int per_sm = d_slots ? blocks / sms : 0;
    for (int k = kind0; k < kind0 + nkinds; k++) {
        int tab[NTH];
        moves_for(k, tab);
        PROBE_CHECK(cudaMemcpy(d_moves, tab, sizeof tab, cudaMemcpyHostToDevice));
        if (d_bad)
            PROBE_CHECK(cudaMemset(d_bad, 0, sizeof(int)));
        float mean, b;
        auto launch = [&]() {
            if (d_slots) {
                const cudaError_t e = cudaMemsetAsync(d_slots, 0, sms * sizeof(int));
                if (e != cudaSuccess)
                    return e;
            }
            cudaLaunchConfig_t cfg = {};
            cfg.gridDim = dim3(blocks);
            cfg.blockDim = dim3(COLS * G * SUB);
            cudaLaunchAttribute attr;
            attr.id = cudaLaunchAttributeClusterDimension;
            attr.val.clusterDim.x = CL;
            attr.val.clusterDim.y = 1;
            attr.val.clusterDim.z = 1;
            cfg.attrs = &attr;
            cfg.numAttrs = 1;
            return cudaLaunchKernelEx(&cfg, pattern<COLS, CL, SUB, VEC>, (const float *)in, out,
                                      (const int *)d_moves, read_side, d_slots, per_sm, d_bad);
        };
        if (time_it(launch, &mean, &b))
            return 1;
        if (d_bad) {
            int bad = 0;
            PROBE_CHECK(cudaMemcpy(&bad, d_bad, sizeof bad, cudaMemcpyDeviceToHost));
            if (bad) {
                printf("pattern  %s: the blocks did not land %d per SM; case not served\n", label,
                       per_sm);
                return 0;
            }
        }
        mean_sum += mean;
        best = b < best ? b : best;
    }
    const float mean = mean_sum / nkinds;
    char shape[48];
    snprintf(shape, sizeof shape, "%dx%d-column tiles%s%s", SUB, COLS, d_slots ? " by SM" : "",
             VEC ? ", 16 B loads" : "");
    printf(
        "pattern  %-24s  %4d blocks  cluster %d  %-36s  %-5s  mean %.3f ms  min %.3f ms  %.2fx copy\n",
        shape, blocks, CL, label, read_side ? "read" : "write", mean, best, mean / copy_ms);
    return 0;
}

} // namespace

int main()
{
    const size_t n = (size_t)NE * ESTRIDE, bytes = n * sizeof(float);
    float *in = nullptr, *out = nullptr;
    PROBE_CHECK(cudaMalloc(&in, bytes));
    PROBE_CHECK(cudaMalloc(&out, bytes));
    PROBE_CHECK(cudaMemset(in, 0, bytes));
    PROBE_CHECK(cudaMemset(out, 0, bytes));
    int sms;
    PROBE_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    cudaDeviceProp prop;
    PROBE_CHECK(cudaGetDeviceProperties(&prop, 0));
    printf("access-probe on %s: psi %dx%dx%dx%d (%.2f GB read and written per pass)\n", prop.name,
           NE, NTH, NZ, NX, bytes / 1e9);
    float copy_ms, copy_best;
    auto copy = [&]() { return cudaMemcpyAsync(out, in, bytes, cudaMemcpyDeviceToDevice); };
    if (time_it(copy, &copy_ms, &copy_best))
        return 1;
    printf(
        "copy     (device to device)                                                                            mean %.3f ms  min %.3f ms\n",
        copy_ms, copy_best);
    int *d_moves = nullptr, *d_slots = nullptr, *d_bad = nullptr;
    PROBE_CHECK(cudaMalloc(&d_moves, NTH * sizeof(int)));
    PROBE_CHECK(cudaMalloc(&d_slots, sms * sizeof(int)));
    PROBE_CHECK(cudaMalloc(&d_bad, sizeof(int)));
    // The fused kernel's shape (32 columns, 4 blocks per SM), then wider tiles;
    // the benchmark's moves averaged over its first 16 steps.
    const int b32 = 4 * sms;
    int rc =
        run_pattern<32>(in, out, d_moves, b32, 0, 1, 0, "moves none", copy_ms) ||
        run_pattern<32>(in, out, d_moves, b32, 1, 1, 0, "moves z (j mod 2 rows)", copy_ms) ||
        run_pattern<32>(in, out, d_moves, b32, 2, 1, 0, "moves x and z ((j mod 3) - 1 cells)",
                        copy_ms) ||
        run_pattern<64>(in, out, d_moves, 2 * sms, 2, 1, 0, "moves x and z ((j mod 3) - 1 cells)",
                        copy_ms) ||
        run_pattern<128>(in, out, d_moves, sms, 2, 1, 0, "moves x and z ((j mod 3) - 1 cells)",
                         copy_ms) ||
        run_pattern<32>(in, out, d_moves, b32, 2, 1, 1, "moves x and z ((j mod 3) - 1 cells)",
                        copy_ms) ||
        run_pattern<32>(in, out, d_moves, b32, 3, 16, 0, "benchmark moves, steps 0-15", copy_ms) ||
        run_pattern<32>(in, out, d_moves, b32, 3, 16, 1, "benchmark moves, steps 0-15", copy_ms) ||
        run_pattern<64>(in, out, d_moves, 2 * sms, 3, 16, 0, "benchmark moves, steps 0-15",
                        copy_ms) ||
        run_pattern<128>(in, out, d_moves, sms, 3, 16, 0, "benchmark moves, steps 0-15", copy_ms) ||
        run_pattern<128>(in, out, d_moves, 2 * sms, 3, 16, 0, "benchmark moves, steps 0-15",
                         copy_ms) ||
        run_pattern<32, 2>(in, out, d_moves, b32, 3, 16, 0, "benchmark moves, steps 0-15",
                           copy_ms) ||
        run_pattern<32, 4>(in, out, d_moves, b32, 3, 16, 0, "benchmark moves, steps 0-15",
                           copy_ms) ||
        run_pattern<32, 2>(in, out, d_moves, b32, 2, 1, 0, "moves x and z ((j mod 3) - 1 cells)",
                           copy_ms) ||
        run_pattern<32, 4>(in, out, d_moves, b32, 2, 1, 0, "moves x and z ((j mod 3) - 1 cells)",
                           copy_ms) ||
        run_pattern<32>(in, out, d_moves, b32, 0, 1, 0, "moves none", copy_ms, d_slots, d_bad,
                        sms) ||
        run_pattern<32>(in, out, d_moves, b32, 3, 16, 0, "benchmark moves, steps 0-15", copy_ms,
                        d_slots, d_bad, sms) ||
        run_pattern<32, 1, 4>(in, out, d_moves, sms, 0, 1, 0, "moves none", copy_ms) ||
        run_pattern<32, 1, 4>(in, out, d_moves, sms, 3, 16, 0, "benchmark moves, steps 0-15",
                              copy_ms) ||
        run_pattern<32, 1, 2>(in, out, d_moves, 2 * sms, 3, 16, 0, "benchmark moves, steps 0-15",
                              copy_ms) ||
        run_pattern<32, 2, 2>(in, out, d_moves, 2 * sms, 3, 16, 0, "benchmark moves, steps 0-15",
                              copy_ms) ||
        run_pattern<32, 2, 2, true>(in, out, d_moves, 2 * sms, 3, 16, 0,
                                    "benchmark moves, steps 0-15", copy_ms) ||
        run_pattern<32, 2, 2, true>(in, out, d_moves, 2 * sms, 0, 1, 0, "moves none", copy_ms) ||
        run_pattern<32, 2, 2>(in, out, d_moves, 2 * sms, 0, 1, 0, "moves none", copy_ms) ||
        run_pattern<128>(in, out, d_moves, sms, 0, 1, 0, "moves none", copy_ms) ||
        // the fused kernel's shape with the moves where psi is read (aligned
        // stores): do the clusters still matter? (The write-side case is above.)
        run_pattern<32, 1, 2>(in, out, d_moves, 2 * sms, 3, 16, 1, "benchmark moves, steps 0-15",
                              copy_ms) ||
        run_pattern<32, 2, 2>(in, out, d_moves, 2 * sms, 3, 16, 1, "benchmark moves, steps 0-15",
                              copy_ms);
    PROBE_CHECK(cudaFree(d_moves));
    PROBE_CHECK(cudaFree(d_slots));
    PROBE_CHECK(cudaFree(d_bad));
    PROBE_CHECK(cudaFree(in));
    PROBE_CHECK(cudaFree(out));
    return rc;
}
