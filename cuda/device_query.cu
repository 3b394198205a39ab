// Which GPU this process can use; never fails, a machine without a GPU or
// driver simply reports count = 0 with the reason.
#include <cstdio>
#include <cstdlib>
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

// Why cudaGetDeviceCount found no device, in words a user can act on. The
// runtime's own strings mislead here: without any NVIDIA driver it says "CUDA
// driver version is insufficient for CUDA runtime version", as for an old one.
static void describe_no_device(cudaError_t e, int driver_version, int runtime_version, char *out,
                               size_t cap)
{
    const char *visible = getenv("CUDA_VISIBLE_DEVICES");
    if (driver_version == 0) // what cudaDriverGetVersion reports when no driver loads
        snprintf(out, cap, "no NVIDIA driver found (libcuda.so.1 could not be loaded)");
    else if (e == cudaErrorInsufficientDriver)
        snprintf(
            out, cap,
            "the NVIDIA driver supports CUDA %d.%d, this build needs CUDA %d.%d or newer; update "
            "the driver",
            driver_version / 1000, driver_version % 1000 / 10, runtime_version / 1000,
            runtime_version % 1000 / 10);
    else if ((e == cudaErrorNoDevice || e == cudaSuccess) && visible)
        snprintf(out, cap,
                 "no NVIDIA GPU found (the driver is there; CUDA_VISIBLE_DEVICES is '%.100s')",
                 visible);
    else if (e == cudaErrorNoDevice || e == cudaSuccess)
        snprintf(out, cap, "no NVIDIA GPU found (the driver is there but reports no device)");
    else
        snprintf(out, cap, "the CUDA runtime cannot use the GPU: %s (%s)", cudaGetErrorString(e),
                 cudaGetErrorName(e));
}

extern "C" void gpu_query(gpu_info *gi)
{
    memset(gi, 0, sizeof *gi);
    gi->queried = 1;
    cudaRuntimeGetVersion(&gi->runtime_version);
    cudaDriverGetVersion(&gi->driver_version);
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
        describe_no_device(e, gi->driver_version, gi->runtime_version, gi->why_none,
                           sizeof gi->why_none);
        cudaGetLastError(); // clear the sticky-free error so later queries start clean
        return;
    }
    if (selected_device < 0 || selected_device >= n) {
        snprintf(gi->why_none, sizeof gi->why_none, "device %d was selected, this machine has %d",
                 selected_device, n);
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
        snprintf(
            gi->why_none, sizeof gi->why_none,
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
