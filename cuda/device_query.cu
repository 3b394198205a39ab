// Which GPU this process can use; never fails, a machine without a GPU or
// driver simply reports count = 0 with the reason.
#include <cstdio>
#include <cstring>

#include <cuda_runtime.h>

#include "buildinfo.h"
#include "transport/device_query.h"

// Nothing to do: whether the runtime finds an image of it for the device says
// whether this binary carries GPU code the device can run (every kernel is
// built for the same architectures).
__global__ void probe_kernel() {}

static int selected_device = 0;

extern "C" void gpu_select(int index)
{
    selected_device = index;
}

extern "C" int gpu_selected(void)
{
    return selected_device;
}

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
    if (selected_device < 0 || selected_device >= n) {
        snprintf(gi->why_none, sizeof gi->why_none, "device %d was selected, this machine has %d", selected_device,
                 n);
        return;
    }
    cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, selected_device) != cudaSuccess) {
        snprintf(gi->why_none, sizeof gi->why_none, "cudaGetDeviceProperties failed");
        return;
    }
    cudaFuncAttributes fa;
    e = cudaFuncGetAttributes(&fa, probe_kernel);
    if (e != cudaSuccess) {
        cudaGetLastError();
        gi->no_code = 1;
        snprintf(gi->why_none, sizeof gi->why_none,
                 "%.100s (compute capability %d.%d): this binary carries GPU code for %.120s only (%.80s); rebuild "
                 "with e.g. make CUDA_ARCH=-gencode=arch=compute_%d%d,code=sm_%d%d",
                 prop.name, prop.major, prop.minor, SMX_CUDA_ARCHS, cudaGetErrorString(e), prop.major,
                 prop.minor, prop.major, prop.minor);
        return;
    }
    gi->count = n;
    snprintf(gi->name, sizeof gi->name, "%s", prop.name);
    gi->cc_major = prop.major;
    gi->cc_minor = prop.minor;
    gi->total_bytes = (double)prop.totalGlobalMem;
    size_t fr = 0, tot = 0; // of the current device: the selected one
    if (cudaSetDevice(selected_device) == cudaSuccess && cudaMemGetInfo(&fr, &tot) == cudaSuccess)
        gi->free_bytes = (double)fr;
}
