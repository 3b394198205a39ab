// Which GPU this process can use; never fails, a machine without a GPU or
// driver simply reports count = 0 with the reason.
#include <cstdio>
#include <cstring>

#include <cuda_runtime.h>

#include "transport/device_query.h"

extern "C" void gpu_query(gpu_info *gi)
{
    memset(gi, 0, sizeof *gi);
    cudaRuntimeGetVersion(&gi->runtime_version);
    cudaDriverGetVersion(&gi->driver_version);
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
        snprintf(gi->why_none, sizeof gi->why_none, "%s",
                 e != cudaSuccess ? cudaGetErrorString(e) : "no CUDA device");
        cudaGetLastError(); // clear the sticky-free error so later queries start clean
        return;
    }
    cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
        snprintf(gi->why_none, sizeof gi->why_none, "cudaGetDeviceProperties failed");
        return;
    }
    gi->count = n;
    snprintf(gi->name, sizeof gi->name, "%s", prop.name);
    gi->cc_major = prop.major;
    gi->cc_minor = prop.minor;
    gi->total_bytes = (double)prop.totalGlobalMem;
    size_t fr = 0, tot = 0;
    if (cudaMemGetInfo(&fr, &tot) == cudaSuccess)
        gi->free_bytes = (double)fr;
}
