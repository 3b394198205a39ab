// CUDA_CHECK_ERR(err, stmt): every CUDA runtime call is checked; a failure
// records the failing statement, file, line and CUDA error in err (an
// smx_error) and returns SMX_EXIT_RUNTIME from the calling function.
// CUDA_CHECK_LAUNCH(err) does the same for the error a kernel launch leaves.
// cuFFT calls have their own CUFFT_CHECK_ERR and CUFFT_CHECK_APPLY
// (angular_fft.cu).
#ifndef SMX_CUDA_CHECK_CUH
#define SMX_CUDA_CHECK_CUH

#include <cuda_runtime.h>

#include "base/error.h"

#define CUDA_CHECK_ERR(err, stmt)                                                           \
    do {                                                                                    \
        cudaError_t e_ = (stmt);                                                            \
        if (e_ != cudaSuccess)                                                              \
            return smx_fail((err), SMX_EXIT_RUNTIME, "%s:%d: %s failed: %s (%s)", __FILE__, \
                            __LINE__, #stmt, cudaGetErrorString(e_), cudaGetErrorName(e_)); \
    } while (0)

// After a kernel launch: launch-configuration errors surface here.
#define CUDA_CHECK_LAUNCH(err) CUDA_CHECK_ERR(err, cudaGetLastError())

#endif
