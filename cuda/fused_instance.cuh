// One instance group of the fused step kernel (fused.cuh): the
// including file defines FUSED_INSTANCE_NMAX and FUSED_INSTANCE_NAME(x),
// which pastes the group's suffix onto x. Under slots the kernel is only
// instantiated with the stream (the single pass); the two-pass instance
// takes none. Included once by each instance file: no include guard.
#include "fused_kernel.cuh"

cudaError_t FUSED_INSTANCE_NAME(fused_launch_nmax)(const fused_args &A, bool stream, bool slots,
                                                   cudaStream_t s)
{
    if (A.em.medium) // media: the single pass only
        return !stream ? cudaErrorInvalidValue
               : slots ? launch_n<FUSED_INSTANCE_NMAX, true, true, true>(A, s)
                       : launch_n<FUSED_INSTANCE_NMAX, true, false, true>(A, s);
    if (!stream)
        return slots ? cudaErrorInvalidValue : launch_n<FUSED_INSTANCE_NMAX, false, false>(A, s);
    return slots ? launch_n<FUSED_INSTANCE_NMAX, true, true>(A, s)
                 : launch_n<FUSED_INSTANCE_NMAX, true, false>(A, s);
}

// Only the groups whose columns can write the split sums (fused.cuh,
// FUSED_SPLIT_SUMS_MAX_NTH) answer whether media's fit.
#if FUSED_INSTANCE_NMAX <= 32
static_assert(FUSED_INSTANCE_NMAX <= FUSED_SPLIT_SUMS_MAX_NTH, "a group that writes split sums");
int FUSED_INSTANCE_NAME(fused_media_sums_fit_nmax)(int64_t ne, int reach_bins, int spec,
                                                   int bin_bytes)
{
    return media_sums_fit_n<FUSED_INSTANCE_NMAX>(ne, reach_bins, spec, bin_bytes);
}
#endif

int FUSED_INSTANCE_NAME(fused_rows_fit_nmax)(int kp, int64_t ne, int tiles, int n_wide, bool stream,
                                             int spec, bool split_sums)
{
    return stream
               ? boundary_rows_fit_n<FUSED_INSTANCE_NMAX, true>(kp, ne, tiles, n_wide, spec,
                                                                split_sums)
               : boundary_rows_fit_n<FUSED_INSTANCE_NMAX, false>(kp, ne, tiles, n_wide, 0, false);
}
