// C-callable checks of device code that the backend's normal inputs cannot
// reach; used by tests/test_gpu.c.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "check.cuh"
#include "streaming.cuh"

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
    auto next = [&r]() { r ^= r << 13; r ^= r >> 7; r ^= r << 17; return r; };
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
    const int variants[] = {SV_ATOMIC, SV_WARP, SV_FALLBACK};
    for (int v : variants) {
        CUDA_CHECK_ERR(err, cudaMemset(d_o, 0, ntarget * sizeof(float)));
        CUDA_CHECK_ERR(err, stream_scatter_selftest(v, d_t, d_v, n, d_o, 264, 0));
        CUDA_CHECK_ERR(err, cudaMemcpy(out.data(), d_o, ntarget * sizeof(float), cudaMemcpyDeviceToHost));
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
