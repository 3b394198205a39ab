// A_theta on the GPU through cuFFT, full circle only (interface and
// semantics: angular.cuh; the direct kernels are angular_direct.cu).
//
// Per energy bin one batched R2C along theta (n = nth, istride = slice,
// idist = 1, batch = slice), a pointwise product with the bin's kernel
// spectrum (scaled by 1/nth, built on the host in double at create), one
// batched C2R into out. Memory: see angular_fft_bytes. The start-up autotune
// (backend_cuda_angular.cu) picks it over the direct kernels where it is
// faster (wide kernels: K near nth / 2).
//
// cuFFT is called through the table cufft_loader.cu fills at run time (the
// binary does not link it); the backend creates this path only after
// cufft_load() succeeded, and create checks again.
//
// error.h is a C header without extern "C" guards: it is included here inside
// extern "C" (before angular.cuh, whose include of it is then a no-op) so that
// smx_fail links against the C definition.
#include <cstdint>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <new>

#include <cufft.h>

#include "common.cuh"
extern "C" {
#include "base/error.h"
}
#include "angular_internal.cuh"
#include "cufft_loader.cuh"

// ---- cuFFT error reporting --------------------------------------------------

// The cudaError_t that angular_fft_apply returns for a failed cuFFT call (the
// interface returns cudaError_t; the cufftResult itself goes to stderr).
static cudaError_t cufft_as_cuda(cufftResult r)
{
    switch (r) {
    case CUFFT_ALLOC_FAILED:
        return cudaErrorMemoryAllocation;
    case CUFFT_INVALID_VALUE:
    case CUFFT_INVALID_SIZE:
    case CUFFT_INVALID_TYPE:
    case CUFFT_UNALIGNED_DATA:
        return cudaErrorInvalidValue;
    case CUFFT_EXEC_FAILED:
        return cudaErrorLaunchFailure;
    default:
        return cudaErrorUnknown;
    }
}

// In angular_fft_apply: reports the statement and cufftResult on stderr and
// returns a cudaError_t (cufft_as_cuda).
#define CUFFT_CHECK_APPLY(stmt)                                                                  \
    do {                                                                                         \
        cufftResult r_ = (stmt);                                                                 \
        if (r_ != CUFFT_SUCCESS) {                                                               \
            fprintf(stderr, "smx2d-sim: %s:%d: %s failed: %s (%d)\n", __FILE__, __LINE__, #stmt, \
                    cufft_result_name(r_), (int)r_);                                             \
            return cufft_as_cuda(r_);                                                            \
        }                                                                                        \
    } while (0)

#define LAUNCH_RETURN()                      \
    do {                                     \
        cudaError_t e_ = cudaGetLastError(); \
        if (e_ != cudaSuccess)               \
            return e_;                       \
    } while (0)

// ---- 3. cuFFT path ----------------------------------------------------------------
//
// Memory (angular_fft_bytes), carved from `mem` in this order, each part
// rounded up to 256 bytes:
//   spectra  n_kernels * (nth/2 + 1) cufftComplex   kernel spectra / nth
//   cbuf     (nth/2 + 1) * slice cufftComplex       one energy bin's R2C output,
//                                                   layout [m][z][x]
//   rbuf     nth * slice floats                     staging for a bin whose
//            address in `in` / `out` is not 8-byte aligned (cuFFT rejects those
//            with CUFFT_INVALID_VALUE; happens for odd bins when nth * nz * nx
//            is odd): the bin is copied there (cudaMemcpyAsync, device to
//            device) before the R2C / after the C2R. Always reserved.
//   work     max(work size of the R2C plan, of the C2R plan): one work area
//            shared by both plans (they run one after the other on one stream)
// The work sizes are those cuFFT reports when the two plans are actually made
// (cufftMakePlanMany64 with auto-allocation off, exactly as in create), so the
// sizing and create agree by construction; create re-derives the layout and
// fails cleanly if it would not fit. cuFFT may still keep small internal plan
// data of its own (allocated by cuFFT when a plan is made, at setup); the step
// loop allocates nothing.
//
// The stop flag: cuFFT cannot read a device flag, so R2C / product / C2R run
// even after an auto run has ended on the device and `out` is then written (with
// the correct convolution of `in`). The backend must therefore not enqueue
// FFT-path steps beyond the end (it does not for this path). The tally kernel
// honours *stop like every other kernel (no partials after the end); the
// product kernel deliberately does not, so that `out` is always the correct
// result and never a half-transformed one.

struct angular_fft {
    const cufft_api *fft; // the loaded cuFFT
    dev_dims d;
    angular_tables_dev t;
    int nf; // nth / 2 + 1
    cufftHandle r2c, c2r;
    bool have_r2c, have_c2r;
    cufftComplex *spectra, *cbuf;
    float *rbuf;
    void *work;
    size_t work_bytes;
};

namespace {

size_t round256(size_t n)
{
    return (n + 255) / 256 * 256;
}

// Makes one batched plan along theta with auto-allocation off. `h` is created
// here; the caller destroys it (also on failure, when *made is true).
cufftResult make_theta_plan(const cufft_api &cf, dev_dims d, cufftType type, cufftHandle *h,
                            bool *made, size_t *work)
{
    *made = false;
    cufftResult r = cf.Create(h);
    if (r != CUFFT_SUCCESS)
        return r;
    *made = true;
    if ((r = cf.SetAutoAllocation(*h, 0)) != CUFFT_SUCCESS)
        return r;
    long long n[1] = { d.nth };
    long long nf = d.nth / 2 + 1;
    long long real_embed[1] = { d.nth }, cplx_embed[1] = { nf };
    const bool fwd = type == CUFFT_R2C;
    // Element m of transform b (b = z*nx + x) lies at b + m * slice on both sides.
    return cf.MakePlanMany64(*h, 1, n, fwd ? real_embed : cplx_embed, d.slice, 1,
                             fwd ? cplx_embed : real_embed, d.slice, 1, type, d.slice, work);
}

// Work size both plans need (max), or a cuFFT error.
cufftResult fft_work_bytes(const cufft_api &cf, dev_dims d, size_t *work)
{
    *work = 0;
    cufftResult r = CUFFT_SUCCESS;
    const cufftType types[2] = { CUFFT_R2C, CUFFT_C2R };
    for (int i = 0; i < 2 && r == CUFFT_SUCCESS; i++) {
        cufftHandle h = 0;
        bool made = false;
        size_t ws = 0;
        r = make_theta_plan(cf, d, types[i], &h, &made, &ws);
        if (made) {
            cufftResult rd = cf.Destroy(h);
            if (r == CUFFT_SUCCESS)
                r = rd;
        }
        if (r == CUFFT_SUCCESS && ws > *work)
            *work = ws;
    }
    return r;
}

struct fft_layout {
    size_t spectra, cbuf, rbuf, work, total; // byte offsets into mem, total size
};

constexpr uintptr_t kFftAlign = sizeof(cufftComplex); // cuFFT's data alignment

bool fft_aligned(const void *p)
{
    return reinterpret_cast<uintptr_t>(p) % kFftAlign == 0;
}

fft_layout fft_layout_for(dev_dims d, int n_kernels, size_t work)
{
    const size_t nf = (size_t)(d.nth / 2 + 1);
    fft_layout L;
    L.spectra = 0;
    L.cbuf = round256((size_t)n_kernels * nf * sizeof(cufftComplex));
    L.rbuf = L.cbuf + round256(nf * (size_t)d.slice * sizeof(cufftComplex));
    L.work = L.rbuf + round256((size_t)d.nth * (size_t)d.slice * sizeof(float));
    L.total = L.work + round256(work);
    return L;
}

// cbuf[m][zx] *= spectrum[kernel_of_energy[ie]][m] (spectrum already / nth).
__global__ void __launch_bounds__(SMX_THREADS)
    k_fft_product(cufftComplex *cbuf, const cufftComplex *__restrict__ spectra,
                  const int *kernel_of_energy, int64_t ie, int64_t nf, int64_t slice)
{
    const int64_t n = nf * slice, stride = (int64_t)gridDim.x * blockDim.x;
    const cufftComplex *S = spectra + (int64_t)kernel_of_energy[ie] * nf;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const cufftComplex a = cbuf[i], b = S[i / slice];
        cbuf[i] = make_cuFloatComplex(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
    }
}

// Cutoff tallies of the FFT path: per column total * (1 - weight_sum) (x E);
// the boundary fields are written as 0 (full circle).
__global__ void __launch_bounds__(SMX_THREADS)
    k_fft_tally(const float *__restrict__ in, dev_dims d, angular_tables_dev t, const int *stop,
                double *partials, int blocks)
{
    if (block_stopped(stop))
        return;
    const int64_t slice = d.slice, ncols = d.ne * d.slice;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    theta_tally tal;
    for (int64_t c = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; c < ncols; c += stride) {
        const int64_t ie = c / slice, zx = c - ie * slice;
        const float *col = in + ie * d.nth * slice + zx;
        column_input ci; // full circle: no threshold, no edge
        for_column(col, slice, 0, 1, (int)d.nth,
                   [&](int th, float v) { ci.take(v, th, false, 0.0f, nullptr, false); });
        const int k = t.kernel_of_energy[ie];
        tal.add(ci, t.weight_sum[k], t.E[ie]);
    }
    tal.write(partials, blocks);
}

} // namespace

size_t angular_fft_bytes(dev_dims d, int n_kernels)
{
    size_t work = 0;
    const cufft_api *cf = cufft_load(nullptr);
    if (!cf || d.nth < 1 || d.slice < 1 || fft_work_bytes(*cf, d, &work) != CUFFT_SUCCESS)
        work = 0; // create then reports the missing cuFFT, its error or the shortfall itself
    return fft_layout_for(d, n_kernels, work).total;
}

// Spectra of every kernel, / nth, in double, rounded to float complex:
// S_k[m] = (1/nth) sum_{d=-K..K} w[d] exp(-2 pi i m d / nth), i.e. the DFT of
// the kernel placed circularly with w[d] at index d mod nth (the convolution
// centre at index 0). Exact integer phases (m * d mod nth) index one table.
static int build_spectra(cufftComplex *S, const angular_fft_setup &u, smx_error *err)
{
    const int n_kernels = u.t.n_kernels;
    const float *hw = u.host_weights;
    const int *hoff = u.host_offset, *hhw = u.host_half_width;
    const int64_t nth = u.d.nth, nf = nth / 2 + 1;
    double *cs = (double *)malloc(2 * (size_t)nth * sizeof(double));
    if (!cs)
        return smx_fail(err, SMX_EXIT_RUNTIME, "out of memory (FFT kernel spectra)");
    const double two_pi = 6.283185307179586476925286766559;
    for (int64_t q = 0; q < nth; q++) {
        cs[2 * q] = cos(two_pi * (double)q / (double)nth);
        cs[2 * q + 1] = sin(two_pi * (double)q / (double)nth);
    }
    for (int k = 0; k < n_kernels; k++) {
        const int K = hhw[k];
        const float *w = hw + hoff[k] + K;
        for (int64_t m = 0; m < nf; m++) {
            double re = 0.0, im = 0.0;
            // q = m * (d mod nth) mod nth, advanced by m per step of d
            int64_t q = (m * ((((int64_t)-K) % nth + nth) % nth)) % nth;
            for (int dd = -K; dd <= K; dd++) {
                re += (double)w[dd] * cs[2 * q];
                im -= (double)w[dd] * cs[2 * q + 1];
                q += m;
                if (q >= nth)
                    q -= nth;
            }
            S[(int64_t)k * nf + m] =
                make_cuFloatComplex((float)(re / (double)nth), (float)(im / (double)nth));
        }
    }
    free(cs);
    return 0;
}

static int fft_create_into(angular_fft *f, const angular_fft_setup &u, cudaStream_t s,
                           smx_error *err)
{
    const dev_dims d = u.d;
    const angular_tables_dev &t = u.t;
    // The sizing angular_fft_bytes did (deterministic for one device and grid),
    // repeated so that a cuFFT failure in it is reported here.
    const cufft_api &cf = *f->fft;
    size_t ws_sized = 0, ws_r2c = 0, ws_c2r = 0;
    CUFFT_CHECK_ERR(err, fft_work_bytes(cf, d, &ws_sized));
    CUFFT_CHECK_ERR(err, make_theta_plan(cf, d, CUFFT_R2C, &f->r2c, &f->have_r2c, &ws_r2c));
    CUFFT_CHECK_ERR(err, make_theta_plan(cf, d, CUFFT_C2R, &f->c2r, &f->have_c2r, &ws_c2r));
    f->work_bytes = ws_r2c > ws_c2r ? ws_r2c : ws_c2r;
    const fft_layout L = fft_layout_for(d, t.n_kernels, f->work_bytes);
    const size_t avail = fft_layout_for(d, t.n_kernels, ws_sized).total;
    if (L.total > avail)
        return smx_fail(err, SMX_EXIT_RUNTIME,
                        "A_theta FFT: cuFFT asks for a %zu-byte work area, more than the %zu "
                        "bytes reserved by angular_fft_bytes",
                        f->work_bytes, avail - L.work);
    char *base = static_cast<char *>(u.mem);
    f->spectra = reinterpret_cast<cufftComplex *>(base + L.spectra);
    f->cbuf = reinterpret_cast<cufftComplex *>(base + L.cbuf);
    f->rbuf = reinterpret_cast<float *>(base + L.rbuf);
    f->work = base + L.work;
    CUFFT_CHECK_ERR(err, cf.SetWorkArea(f->r2c, f->work));
    CUFFT_CHECK_ERR(err, cf.SetWorkArea(f->c2r, f->work));
    CUFFT_CHECK_ERR(err, cf.SetStream(f->r2c, s));
    CUFFT_CHECK_ERR(err, cf.SetStream(f->c2r, s));

    const size_t sbytes = (size_t)t.n_kernels * (size_t)f->nf * sizeof(cufftComplex);
    cufftComplex *hs = (cufftComplex *)malloc(sbytes ? sbytes : 1);
    if (!hs)
        return smx_fail(err, SMX_EXIT_RUNTIME, "out of memory (FFT kernel spectra)");
    int rc = build_spectra(hs, u, err);
    if (rc) {
        free(hs);
        return rc;
    }
    cudaError_t e = cudaMemcpyAsync(f->spectra, hs, sbytes, cudaMemcpyHostToDevice, s);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(s); // hs is pageable and freed below
    free(hs);
    if (e != cudaSuccess)
        return smx_fail(err, SMX_EXIT_RUNTIME,
                        "%s:%d: uploading the FFT kernel spectra (cudaMemcpyAsync + "
                        "cudaStreamSynchronize) failed: %s (%s)",
                        __FILE__, __LINE__, cudaGetErrorString(e), cudaGetErrorName(e));
    return 0;
}

int angular_fft_create(angular_fft **f, const angular_fft_setup &u, cudaStream_t s, smx_error *err)
{
    const dev_dims d = u.d;
    const angular_tables_dev &t = u.t;
    *f = nullptr;
    if (!t.circular)
        return smx_fail(
            err, SMX_EXIT_INPUT,
            "A_theta FFT path: the windowed angular grid is not periodic (its edges "
            "are absorbing); the FFT path needs the full circle, use the direct kernel");
    if (d.nth < 1 || d.slice < 1 || d.ne < 1 || t.n_kernels < 1)
        return smx_fail(err, SMX_EXIT_INPUT,
                        "A_theta FFT path: empty grid (nth %lld, nz*nx %lld, "
                        "ne %lld, %d kernels)",
                        (long long)d.nth, (long long)d.slice, (long long)d.ne, t.n_kernels);
    if (!u.mem)
        return smx_fail(err, SMX_EXIT_RUNTIME, "A_theta FFT path: no device memory given");
    const char *why = nullptr;
    const cufft_api *cf = cufft_load(&why);
    if (!cf)
        return smx_fail(err, SMX_EXIT_RUNTIME, "A_theta FFT path: cuFFT is unavailable: %s", why);
    angular_fft *p = new (std::nothrow) angular_fft();
    if (!p)
        return smx_fail(err, SMX_EXIT_RUNTIME, "out of memory");
    p->fft = cf;
    p->d = d;
    p->t = t;
    p->nf = (int)(d.nth / 2 + 1);
    int rc = fft_create_into(p, u, s, err);
    if (rc) {
        angular_fft_destroy(p);
        return rc;
    }
    *f = p;
    return 0;
}

cudaError_t angular_fft_apply_range(angular_fft *f, const angular_io &io, int64_t lo, int64_t hi,
                                    cudaStream_t s)
{
    const float *in = io.in;
    float *out = io.out;
    const int blocks = io.blocks;
    const dev_dims &d = f->d;
    const cufft_api &cf = *f->fft;
    const int64_t bin = d.nth * d.slice;
    CUFFT_CHECK_APPLY(cf.SetStream(f->r2c, s));
    CUFFT_CHECK_APPLY(cf.SetStream(f->c2r, s));
    // Tallies first: they read `in` only. The tally kernel sees the range as a
    // grid of its own (pointers and tables offset to bin lo).
    dev_dims dr = d;
    dr.ne = hi - lo + 1;
    dr.cells = dr.ne * bin;
    angular_tables_dev tr = f->t;
    tr.kernel_of_energy += lo;
    tr.E += lo;
    k_fft_tally<<<blocks, SMX_THREADS, 0, s>>>(in + lo * bin, dr, tr, io.stop, io.partials, blocks);
    LAUNCH_RETURN();
    const size_t bin_bytes = (size_t)bin * sizeof(float);
    for (int64_t ie = lo; ie <= hi; ie++) {
        const float *src = in + ie * bin;
        float *dst = out + ie * bin;
        if (!fft_aligned(src)) {
            cudaError_t e = cudaMemcpyAsync(f->rbuf, src, bin_bytes, cudaMemcpyDeviceToDevice, s);
            if (e != cudaSuccess)
                return e;
            src = f->rbuf;
        }
        // Out-of-place R2C leaves its input intact (the cast only drops const).
        CUFFT_CHECK_APPLY(cf.ExecR2C(f->r2c, const_cast<cufftReal *>(src), f->cbuf));
        k_fft_product<<<blocks, SMX_THREADS, 0, s>>>(f->cbuf, f->spectra, f->t.kernel_of_energy, ie,
                                                     f->nf, d.slice);
        LAUNCH_RETURN();
        const bool stage = !fft_aligned(dst);
        CUFFT_CHECK_APPLY(cf.ExecC2R(f->c2r, f->cbuf, stage ? f->rbuf : dst));
        if (stage) {
            cudaError_t e = cudaMemcpyAsync(dst, f->rbuf, bin_bytes, cudaMemcpyDeviceToDevice, s);
            if (e != cudaSuccess)
                return e;
        }
    }
    return cudaGetLastError();
}

cudaError_t angular_fft_apply(angular_fft *f, const angular_io &io, cudaStream_t s)
{
    return angular_fft_apply_range(f, io, 0, f->d.ne - 1, s);
}

void angular_fft_destroy(angular_fft *f)
{
    if (!f)
        return;
    // Destroy failures cannot be acted on here; they are reported.
    if (f->have_r2c) {
        cufftResult r = f->fft->Destroy(f->r2c);
        if (r != CUFFT_SUCCESS)
            fprintf(stderr, "smx2d-sim: cufftDestroy (R2C plan) failed: %s\n",
                    cufft_result_name(r));
    }
    if (f->have_c2r) {
        cufftResult r = f->fft->Destroy(f->c2r);
        if (r != CUFFT_SUCCESS)
            fprintf(stderr, "smx2d-sim: cufftDestroy (C2R plan) failed: %s\n",
                    cufft_result_name(r));
    }
    delete f;
}
