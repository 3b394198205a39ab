// The CUDA backend's tables: its entry points (src/transport/backend.h) from
// backend_cuda_setup.cu (setup), backend_cuda.cu (upload to release,
// lanes) and backend_cuda_halo.cu (the halo's), and the benchmark's hooks (src/transport/backend_bench.h) from
// backend_cuda_bench.cu, gathered here so that none of those files needs
// another's.
#include "backend_cuda_internal.cuh"

extern "C" {
#include "transport/backend_bench.h"
}

extern "C" const backend_ops backend_cuda = {
    "cuda",
    RING,
    cuda_setup,
    cuda_upload,
    cuda_step,
    cuda_collect,
    cuda_shift,
    cuda_can_shift,
    cuda_snapshot_begin,
    cuda_snapshot_wait,
    cuda_download_dose,
    cuda_describe,
    cuda_release,
    cuda_lanes,
    cuda_halo_convolve,
    cuda_halo_keep,
};

extern "C" const backend_bench_ops backend_cuda_bench = {
    cuda_bench_steps,
    cuda_bench_op,
    cuda_bench_copy,
    cuda_bench_facts,
};
