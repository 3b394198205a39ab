// The nuclear halo's convolution on the device (interface: halo_fft.cuh).
// The host's transform (numerics/fft.h) is a complex one in double with the
// same sign and scaling as cuFFT's Z2Z (forward e^{-i}, inverse unscaled), so
// the kernels' transforms the host made serve here as they are, and a spot's
// halo differs from the host's by the transforms' rounding only.
#include <cstdlib>
#include <cstring>
#include <cufft.h>

#include "check.cuh"
#include "common.cuh"
#include "cufft_loader.cuh"
#include "halo_fft.cuh"

// Spots transformed together (a spot takes bands + 1 transforms of Z x X
// complex doubles: 14 MB on the 0.5 mm bench field's grid); fewer only where
// the device's memory does not hold them.
#define HALO_FFT_CHUNK_MAX 16

struct halo_fft {
    const cufft_api *cf;
    int64_t Z, X, cz, cx;
    int bands, chunk;
    cufftHandle fwd, inv; // chunk * bands and chunk transforms of [Z][X]
    bool have_fwd, have_inv;
    cufftDoubleComplex *K; // [bands][Z][X]
    cufftDoubleComplex *buf; // [chunk][bands][Z][X]
    cufftDoubleComplex *acc; // [chunk][Z][X]
    double *in, *out; // [chunk][bands][cz][cx], [chunk][cz][cx]
};

// The blocks into the transform's [Z][X], zero beyond them.
__global__ void halo_scatter(cufftDoubleComplex *buf, const double *in, int64_t total, int64_t Z,
                             int64_t X, int64_t cz, int64_t cx)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total;
         i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t s = i / (Z * X), r = i % (Z * X), z = r / X, x = r % X;
        const double v = z < cz && x < cx ? in[(s * cz + z) * cx + x] : 0.0;
        buf[i] = make_cuDoubleComplex(v, 0.0);
    }
}

// Each spot's transforms times the kernels', summed over the bands in order
// (the host's order).
__global__ void halo_multiply(cufftDoubleComplex *acc, const cufftDoubleComplex *buf,
                              const cufftDoubleComplex *K, int64_t total, int64_t n, int bands)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total;
         i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t s = i / n, r = i % n;
        double re = 0.0, im = 0.0;
        for (int b = 0; b < bands; b++) {
            const cufftDoubleComplex v = buf[(s * bands + b) * n + r], k = K[b * n + r];
            re += v.x * k.x - v.y * k.y;
            im += v.x * k.y + v.y * k.x;
        }
        acc[i] = make_cuDoubleComplex(re, im);
    }
}

// The real part on the blocks.
__global__ void halo_gather(double *out, const cufftDoubleComplex *acc, int64_t total, int64_t Z,
                            int64_t X, int64_t cz, int64_t cx)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total;
         i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t s = i / (cz * cx), r = i % (cz * cx), z = r / cx, x = r % cx;
        out[i] = acc[(s * Z + z) * X + x].x;
    }
}

void halo_fft_destroy(halo_fft *h)
{
    if (!h)
        return;
    if (h->have_fwd)
        h->cf->Destroy(h->fwd);
    if (h->have_inv)
        h->cf->Destroy(h->inv);
    cudaFree(h->K);
    cudaFree(h->buf);
    cudaFree(h->acc);
    cudaFree(h->in);
    cudaFree(h->out);
    free(h);
}

// Out of the device's memory: cudaMalloc's error, or cuFFT's for its plan's
// work area. Only these make a smaller chunk worth trying.
enum { BUFFERS_MADE = 0, BUFFERS_TOO_BIG = 1, BUFFERS_FAILED = 2 };

static int alloc_status(cudaError_t e, const char *what, smx_error *err)
{
    if (e == cudaSuccess)
        return BUFFERS_MADE;
    cudaGetLastError(); // an allocation failure is not sticky: clear it
    if (e == cudaErrorMemoryAllocation)
        return BUFFERS_TOO_BIG;
    smx_fail(err, SMX_EXIT_RUNTIME, "the halo's transforms: %s failed: %s (%s)", what,
             cudaGetErrorString(e), cudaGetErrorName(e));
    return BUFFERS_FAILED;
}

static int plan_status(cufftResult r, const char *what, smx_error *err)
{
    if (r == CUFFT_SUCCESS)
        return BUFFERS_MADE;
    cudaGetLastError();
    if (r == CUFFT_ALLOC_FAILED)
        return BUFFERS_TOO_BIG;
    smx_fail(err, SMX_EXIT_RUNTIME, "the halo's transforms: %s failed: %s (%d)", what,
             cufft_result_name(r), (int)r);
    return BUFFERS_FAILED;
}

static int plan_2d(const halo_fft *h, cufftHandle *p, bool *have, int batch, cudaStream_t stream,
                   smx_error *err)
{
    long long n[2] = { h->Z, h->X };
    size_t work = 0;
    int rc = plan_status(h->cf->Create(p), "cufftCreate", err);
    if (rc)
        return rc;
    *have = true;
    rc = plan_status(h->cf->MakePlanMany64(*p, 2, n, nullptr, 1, h->Z * h->X, nullptr, 1,
                                           h->Z * h->X, CUFFT_Z2Z, batch, &work),
                     "cufftMakePlanMany64", err);
    if (rc)
        return rc;
    return plan_status(h->cf->SetStream(*p, stream), "cufftSetStream", err);
}

// The device's buffers for `chunk` spots, cuFFT's work areas included:
// BUFFERS_TOO_BIG (nothing reported) where they do not fit, BUFFERS_FAILED
// (reported) on any other error.
static int make_buffers(halo_fft *h, cudaStream_t stream, smx_error *err)
{
    const size_t n = (size_t)(h->Z * h->X), blk = (size_t)(h->cz * h->cx);
    const size_t c = (size_t)h->chunk;
    int rc;
    if ((rc = alloc_status(cudaMalloc(&h->buf, c * h->bands * n * sizeof *h->buf), "cudaMalloc",
                           err)) ||
        (rc = alloc_status(cudaMalloc(&h->acc, c * n * sizeof *h->acc), "cudaMalloc", err)) ||
        (rc = alloc_status(cudaMalloc(&h->in, c * h->bands * blk * sizeof *h->in), "cudaMalloc",
                           err)) ||
        (rc = alloc_status(cudaMalloc(&h->out, c * blk * sizeof *h->out), "cudaMalloc", err)))
        return rc;
    // The plans transform whole chunks: what a short chunk's spare
    // transforms read is defined (and never read back).
    cudaError_t e = cudaMemset(h->buf, 0, c * h->bands * n * sizeof *h->buf);
    if (e == cudaSuccess)
        e = cudaMemset(h->acc, 0, c * n * sizeof *h->acc);
    if (e != cudaSuccess) {
        smx_fail(err, SMX_EXIT_RUNTIME, "the halo's transforms: cudaMemset failed: %s (%s)",
                 cudaGetErrorString(e), cudaGetErrorName(e));
        return BUFFERS_FAILED;
    }
    if ((rc = plan_2d(h, &h->fwd, &h->have_fwd, h->chunk * h->bands, stream, err)) ||
        (rc = plan_2d(h, &h->inv, &h->have_inv, h->chunk, stream, err)))
        return rc;
    return BUFFERS_MADE;
}

static int halo_fft_make(halo_fft **out, cudaStream_t stream, const halo_fft_job *job,
                         smx_error *err)
{
    const char *why = nullptr;
    const cufft_api *cf = cufft_load(&why);
    if (!cf)
        return -1;
    const size_t n = (size_t)(job->Z * job->X);
    // The plans' batch does not follow the job's spots: a spot's transform is
    // then the same whatever spots share its batch (cuFFT may choose its
    // kernels by the batch's size).
    for (int chunk = HALO_FFT_CHUNK_MAX; chunk >= 1; chunk /= 2) {
        halo_fft *h = (halo_fft *)calloc(1, sizeof *h);
        if (!h)
            return smx_fail(err, SMX_EXIT_RUNTIME, "out of host memory for the halo's transforms");
        h->cf = cf;
        h->Z = job->Z;
        h->X = job->X;
        h->cz = job->cz;
        h->cx = job->cx;
        h->bands = job->bands;
        h->chunk = chunk;
        const int made = make_buffers(h, stream, err);
        if (made != BUFFERS_MADE) {
            halo_fft_destroy(h);
            if (made == BUFFERS_FAILED)
                return 1;
            continue;
        }
        cufftDoubleComplex *k = (cufftDoubleComplex *)malloc(h->bands * n * sizeof *k);
        if (!k) {
            halo_fft_destroy(h);
            return smx_fail(err, SMX_EXIT_RUNTIME, "out of host memory for the halo's kernels");
        }
        for (size_t i = 0; i < h->bands * n; i++)
            k[i] = make_cuDoubleComplex(job->kre[i], job->kim[i]);
        int rc = alloc_status(cudaMalloc(&h->K, h->bands * n * sizeof *h->K), "cudaMalloc", err);
        if (rc == BUFFERS_MADE)
            rc = alloc_status(cudaMemcpy(h->K, k, h->bands * n * sizeof *k, cudaMemcpyHostToDevice),
                              "cudaMemcpy", err);
        free(k);
        if (rc != BUFFERS_MADE) {
            halo_fft_destroy(h);
            if (rc == BUFFERS_FAILED)
                return 1;
            continue;
        }
        *out = h;
        return 0;
    }
    return -1;
}

int halo_fft_ready(halo_fft **hp, cudaStream_t stream, const halo_fft_job *job, smx_error *err)
{
    halo_fft *h = *hp;
    if (h && (h->Z != job->Z || h->X != job->X || h->cz != job->cz || h->cx != job->cx ||
              h->bands != job->bands)) {
        halo_fft_destroy(h);
        *hp = h = nullptr;
    }
    return h ? 0 : halo_fft_make(hp, stream, job, err);
}

int halo_fft_run(halo_fft **hp, cudaStream_t stream, const halo_fft_job *job, const double *in_dev,
                 smx_error *err)
{
    if (const int rc = halo_fft_ready(hp, stream, job, err))
        return rc;
    halo_fft *h = *hp;
    const int64_t n = h->Z * h->X, blk = h->cz * h->cx;
    const int grid = 1024;
    for (int s0 = 0; s0 < job->n; s0 += h->chunk) {
        const int c = job->n - s0 < h->chunk ? job->n - s0 : h->chunk;
        const double *in = in_dev ? in_dev + (size_t)s0 * h->bands * blk : h->in;
        if (!in_dev)
            CUDA_CHECK_ERR(err, cudaMemcpyAsync(h->in, job->in + (size_t)s0 * h->bands * blk,
                                                (size_t)c * h->bands * blk * sizeof *h->in,
                                                cudaMemcpyHostToDevice, stream));
        halo_scatter<<<grid, SMX_THREADS, 0, stream>>>(h->buf, in, (int64_t)c * h->bands * n, h->Z,
                                                       h->X, h->cz, h->cx);
        CUDA_CHECK_LAUNCH(err);
        // A plan of `chunk` transforms run on c <= chunk: the spare ones
        // transform what the buffer holds, which nothing reads.
        CUFFT_CHECK_ERR(err, h->cf->ExecZ2Z(h->fwd, h->buf, h->buf, CUFFT_FORWARD));
        halo_multiply<<<grid, SMX_THREADS, 0, stream>>>(h->acc, h->buf, h->K, (int64_t)c * n, n,
                                                        h->bands);
        CUDA_CHECK_LAUNCH(err);
        CUFFT_CHECK_ERR(err, h->cf->ExecZ2Z(h->inv, h->acc, h->acc, CUFFT_INVERSE));
        halo_gather<<<grid, SMX_THREADS, 0, stream>>>(h->out, h->acc, (int64_t)c * blk, h->Z, h->X,
                                                      h->cz, h->cx);
        CUDA_CHECK_LAUNCH(err);
        CUDA_CHECK_ERR(err, cudaMemcpyAsync(job->out + (size_t)s0 * blk, h->out,
                                            (size_t)c * blk * sizeof *h->out,
                                            cudaMemcpyDeviceToHost, stream));
        CUDA_CHECK_ERR(err, cudaStreamSynchronize(stream));
    }
    return 0;
}
