// access-probe: what the fused step's memory access pattern costs on this GPU
// with no arithmetic at all, against a plain device-to-device copy of the same
// bytes. It answers "how close to the copy floor can this layout get?", which
// the benchmark (smx2d-sim --bench) cannot: its step also computes.
//
// The pattern is the fused kernel's (cuda/fused.cu): psi[E][theta][z][x] on
// the benchmark's Production grid; a block walks a tile of COLS consecutive
// columns through every energy bin; the threads of one column own 8
// directions each; each bin arrives in shared memory through a ring of three
// cp.async stages; each value is stored at its cell plus the direction's
// whole-cell move (the single-pass streaming). Moves: none; z only (direction
// j moves j mod 2 rows: 800 bytes, so a warp's 128 bytes straddle two lines but
// fill whole 32-byte sectors); x and z (also (j mod 3) - 1 cells in x: the
// stores start 4 bytes off a sector, as when a direction moves sideways).
//
// Usage: access-probe   (prints one line per case; exit 1 on a CUDA error)
#include <cstdio>
#include <cuda_runtime.h>

#define PROBE_CHECK(x)                                                                                 \
    do {                                                                                               \
        const cudaError_t e_ = (x);                                                                    \
        if (e_ != cudaSuccess) {                                                                       \
            fprintf(stderr, "access-probe: %s: %s\n", #x, cudaGetErrorString(e_));                     \
            return 1;                                                                                  \
        }                                                                                              \
    } while (0)

namespace {

constexpr int NE = 100, NTH = 32, NZ = 400, NX = 200; // the benchmark's Production grid
constexpr int M = 8, G = NTH / M, RING = 3;           // as the fused kernel for 32 directions
constexpr long SLICE = (long)NZ * NX, ESTRIDE = NTH * SLICE;
constexpr int REPS = 12, WARMUP = 2;

__device__ __forceinline__ void cp_async4(float *dst, const float *src)
{
    const unsigned d = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(d), "l"(src) : "memory");
}

template <int COLS>
__global__ void __launch_bounds__(COLS *G) pattern(const float *in, float *out, int moves)
{
    __shared__ float stage[RING][NTH][COLS];
    const int col = threadIdx.x % COLS, g = threadIdx.x / COLS, j0 = g * M;
    const long ntiles = (SLICE + COLS - 1) / COLS;
    int move[M]; // flattened cell offset of direction j0 + m
    for (int m = 0; m < M; m++) {
        const int j = j0 + m;
        move[m] = (moves >= 1 ? (j % 2) * NX : 0) + (moves >= 2 ? (j % 3) - 1 : 0);
    }
    for (long tile = blockIdx.x; tile < ntiles; tile += gridDim.x) {
        const long c = tile * COLS + col;
        const bool live = c < SLICE;
        auto issue = [&](int s, int slot) {
            if (s < NE && live)
                for (int m = 0; m < M; m++)
                    cp_async4(&stage[slot][j0 + m][col], in + s * ESTRIDE + (j0 + m) * SLICE + c);
            asm volatile("cp.async.commit_group;\n" ::: "memory");
        };
        for (int i = 0; i < RING - 1; i++)
            issue(i, i);
        int slot = 0;
        for (int s = 0; s < NE; s++) {
            asm volatile("cp.async.wait_group %0;\n" ::"n"(RING - 2) : "memory");
            __syncthreads(); // bin s is in; every thread is done with bin s - 1's stage
            issue(s + RING - 1, (slot + RING - 1) % RING);
            if (live)
                for (int m = 0; m < M; m++) {
                    const long t = c + move[m];
                    if (t >= 0 && t < SLICE)
                        out[s * ESTRIDE + (j0 + m) * SLICE + t] = stage[slot][j0 + m][col];
                }
            slot = (slot + 1) % RING;
        }
        __syncthreads(); // the ring is reused by the next tile
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

template <int COLS>
int run_pattern(const float *in, float *out, int blocks, int moves, float copy_ms)
{
    float mean, best;
    auto launch = [&]() {
        pattern<COLS><<<blocks, COLS * G>>>(in, out, moves);
        return cudaGetLastError();
    };
    if (time_it(launch, &mean, &best))
        return 1;
    static const char *const name[3] = {"none", "z", "x and z"};
    printf("pattern  %3d-column tiles  %4d blocks  moves %-7s  mean %.3f ms  min %.3f ms  %.2fx copy\n", COLS,
           blocks, name[moves], mean, best, mean / copy_ms);
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
    printf("access-probe on %s: psi %dx%dx%dx%d (%.2f GB read and written per pass)\n", prop.name, NE, NTH, NZ,
           NX, bytes / 1e9);
    float copy_ms, copy_best;
    auto copy = [&]() { return cudaMemcpyAsync(out, in, bytes, cudaMemcpyDeviceToDevice); };
    if (time_it(copy, &copy_ms, &copy_best))
        return 1;
    printf("copy     (device to device)                              mean %.3f ms  min %.3f ms\n", copy_ms, copy_best);
    // The fused kernel's shape (32 columns, 4 blocks per SM), then wider tiles.
    int rc = run_pattern<32>(in, out, 4 * sms, 0, copy_ms) || run_pattern<32>(in, out, 4 * sms, 1, copy_ms) ||
             run_pattern<32>(in, out, 4 * sms, 2, copy_ms) || run_pattern<64>(in, out, 2 * sms, 2, copy_ms) ||
             run_pattern<128>(in, out, sms, 2, copy_ms);
    PROBE_CHECK(cudaFree(in));
    PROBE_CHECK(cudaFree(out));
    return rc;
}
