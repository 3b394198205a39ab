// C-callable checks of device code that the backend's normal inputs cannot
// reach (tests/test_gpu.c), and of the fused step's tiling, which runs on the
// host as well (tests/test_tiling.c, no GPU needed).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "check.cuh"
#include "streaming.cuh"
#include "tiling.cuh"

// Warp-aggregated and fallback scatter against per-target sums on the host, on
// inputs mixing heavily shared and unique targets. Returns the worst relative
// error over variants {atomic, warp, fallback} in *worst; 0 or an exit code.
extern "C" int cuda_check_scatter_aggregation(double *worst, smx_error *err)
{
    const int64_t n = 1 << 20;
    const int ntarget = 4096;
    std::vector<long long> tg(n);
    std::vector<float> val(n);
    unsigned long long r = 88172645463325252ull;
    auto next = [&r]() {
        r ^= r << 13;
        r ^= r >> 7;
        r ^= r << 17;
        return r;
    };
    for (int64_t i = 0; i < n; i++) {
        int pattern = (int)((i / 32) % 4); // per warp: shared, unique, mixed, with holes
        long long t;
        if (pattern == 0)
            t = (long long)((i / 32) % ntarget);
        else if (pattern == 1)
            t = (long long)(next() % ntarget);
        else if (pattern == 2)
            t = (i % 3 == 0) ? (long long)(next() % ntarget) : (long long)((i / 32) % 7);
        else
            t = (i % 5 == 0) ? -1 : (long long)((i / 64) % ntarget);
        tg[i] = t;
        val[i] = (float)(0.25 + (next() % 1000) / 1000.0);
    }
    std::vector<double> ref(ntarget, 0.0);
    for (int64_t i = 0; i < n; i++)
        if (tg[i] >= 0)
            ref[tg[i]] += val[i];
    long long *d_t;
    float *d_v, *d_o;
    CUDA_CHECK_ERR(err, cudaMalloc(&d_t, n * sizeof(long long)));
    CUDA_CHECK_ERR(err, cudaMalloc(&d_v, n * sizeof(float)));
    CUDA_CHECK_ERR(err, cudaMalloc(&d_o, ntarget * sizeof(float)));
    CUDA_CHECK_ERR(err, cudaMemcpy(d_t, tg.data(), n * sizeof(long long), cudaMemcpyHostToDevice));
    CUDA_CHECK_ERR(err, cudaMemcpy(d_v, val.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    std::vector<float> out(ntarget);
    *worst = 0.0;
    const int variants[] = { SV_ATOMIC, SV_WARP, SV_FALLBACK };
    for (int v : variants) {
        CUDA_CHECK_ERR(err, cudaMemset(d_o, 0, ntarget * sizeof(float)));
        CUDA_CHECK_ERR(err, stream_scatter_selftest(v, scatter_adds{ d_t, d_v, n }, d_o, 264, 0));
        CUDA_CHECK_ERR(
            err, cudaMemcpy(out.data(), d_o, ntarget * sizeof(float), cudaMemcpyDeviceToHost));
        double e = 0.0;
        for (int t = 0; t < ntarget; t++)
            if (ref[t] > 0)
                e = fmax(e, fabs(out[t] - ref[t]) / ref[t]);
        printf("  scatter self-test variant %d: max relative error %.2e\n", v, e);
        *worst = fmax(*worst, e);
    }
    cudaFree(d_t);
    cudaFree(d_v);
    cudaFree(d_o);
    return 0;
}

// The fused step's tiling of the columns z0..z1 x x0..x1: every column is the
// (tile, lane) of exactly one tile, none lies outside, and no tile is empty
// (an empty tile would hold a slot for nothing). Returns the tile count, or -1
// with the first fault in msg.
extern "C" long long cuda_check_tiling(int z0, int z1, int x0, int x1, char *msg, size_t n)
{
    const box4 F{ z0, z1, x0, x1 };
    const tiling t = tiling_of(F);
    const long long ntiles = tiles_of(t);
    if (box_is_empty(F)) {
        if (ntiles != 0)
            snprintf(msg, n, "empty box, %lld tiles", ntiles);
        return ntiles != 0 ? -1 : 0;
    }
    const int w = x1 - x0 + 1;
    std::vector<int> hits((size_t)(z1 - z0 + 1) * w, 0);
    for (long long tile = 0; tile < ntiles; tile++) {
        int live = 0;
        for (int col = 0; col < FUSED_COLS; col++) {
            int cz = 0, cx = 0;
            if (!tile_cell(F, t, (int)tile, col, cz, cx))
                continue;
            live++;
            if (cz < z0 || cz > z1 || cx < x0 || cx > x1) {
                snprintf(msg, n, "tile %lld lane %d: column (%d, %d) outside the box", tile, col,
                         cz, cx);
                return -1;
            }
            if (++hits[(size_t)(cz - z0) * w + (cx - x0)] > 1) {
                snprintf(msg, n, "tile %lld lane %d: column (%d, %d) visited twice", tile, col, cz,
                         cx);
                return -1;
            }
        }
        if (!live) {
            snprintf(msg, n, "tile %lld of %lld has no column", tile, ntiles);
            return -1;
        }
    }
    for (size_t i = 0; i < hits.size(); i++)
        if (hits[i] != 1) {
            snprintf(msg, n, "column (%d, %d) in no tile", z0 + (int)(i / w), x0 + (int)(i % w));
            return -1;
        }
    return ntiles;
}
