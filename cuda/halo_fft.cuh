// The nuclear halo's convolution on the device (backend_ops' halo_convolve;
// src/transport/halo_dose.h): a batch of spots' released energy per block,
// transformed as the host transforms it (complex, double), multiplied by
// the kernels' transforms band by band, summed, and transformed back.
#ifndef SMX_HALO_FFT_CUH
#define SMX_HALO_FFT_CUH

#include <cuda_runtime.h>

extern "C" {
#include "base/error.h"
#include "transport/backend.h"
}

struct halo_fft;

// *h made for job's sizes (or made again for others) where it is not: 0, an
// error, or -1 where cuFFT is unavailable or the device lacks the memory for
// one spot's transforms (the host then transforms).
int halo_fft_ready(halo_fft **h, cudaStream_t stream, const halo_fft_job *job, smx_error *err);
// job on stream, *h made as halo_fft_ready makes it (the same returns); its
// blocks from in_dev (the device's [n][bands][cz][cx]) where that is not
// NULL, else from job->in.
int halo_fft_run(halo_fft **h, cudaStream_t stream, const halo_fft_job *job, const double *in_dev,
                 smx_error *err);
void halo_fft_destroy(halo_fft *h);

#endif
