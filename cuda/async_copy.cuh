// Asynchronous copies into shared memory, the thread-block-cluster barrier
// and named barriers, as inline PTX: shared by the fused kernel (fused.cu) and the
// memory-pattern probe (scripts/access_probe.cu), which must move data the
// same way.
#ifndef SMX_CUDA_ASYNC_COPY_CUH
#define SMX_CUDA_ASYNC_COPY_CUH

// cp.async of 4 bytes into shared memory; fill = false writes a zero without
// reading (an absent column or bin), so that every stage row is rewritten.
// Before sm_80 there is no cp.async: the copy is an ordinary load and store,
// complete when it returns, and commit and wait have nothing to do (the
// callers' barriers still order the stores before other threads read them).
__device__ __forceinline__ void cp_async4(float *dst, const float *src, bool fill)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const unsigned d = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(d), "l"(src),
                 "r"(fill ? 4 : 0)
                 : "memory");
#else
    *dst = fill ? *src : 0.0f;
#endif
}

// Sixteen bytes (both addresses 16-byte aligned), through L2 only: a block's
// records read once per step (energy_media.cuh, media_bin).
__device__ __forceinline__ void cp_async16(void *dst, const void *src)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const unsigned d = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(d), "l"(src) : "memory");
#else
    *reinterpret_cast<float4 *>(dst) = *reinterpret_cast<const float4 *>(src);
#endif
}
__device__ __forceinline__ void cp_async_commit()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}
// Waits until at most N of this thread's committed groups are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

// Every thread of a cluster arrives once per round and waits for the previous
// round's arrivals (relaxed: the barrier orders no memory, it only keeps the
// cluster's blocks in step). Before sm_90 there are no clusters: the host
// launches without them and these do nothing.
__device__ __forceinline__ void cluster_arrive()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("barrier.cluster.arrive.relaxed;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void cluster_wait()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("barrier.cluster.wait;\n" ::: "memory");
#endif
}

// Named barrier `id` (1 to 15: 0 is __syncthreads') of `count` threads (whole
// warps): a group of warps in a block keeps in step with itself alone, as a
// block of its own would.
__device__ __forceinline__ void named_sync(int id, int count)
{
    asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(count) : "memory");
}

#endif
