// The CUDA backend's nuclear halo for a field's per-spot runs
// (src/transport/backend.h, halo_keep and halo_convolve): each slot's
// blocks summed on the device from the released energy's planes as their
// rows leave the window (cuda_shift) and at the batch's end, then
// transformed there (halo_fft.cu); only the convolutions' results [cz][cx]
// are copied to the host, which spreads them onto each spot's row.
#include "backend_cuda_internal.cuh"

// Device buffer *p of *cap bytes grown to hold `want`: 0, 1 where the
// device's memory does not hold it (*p then freed, nothing reported), or an
// error.
static int grow_device(void **p, size_t *cap, size_t want, smx_error *err)
{
    if (want <= *cap)
        return 0;
    cudaFree(*p);
    *p = nullptr;
    *cap = 0;
    const cudaError_t e = cudaMalloc(p, want);
    if (e == cudaErrorMemoryAllocation) {
        cudaGetLastError(); // not sticky: clear it
        *p = nullptr;
        return 1;
    }
    CUDA_CHECK_ERR(err, e);
    *cap = want;
    return 0;
}

// Room for `bytes` of blocks and `slots` first columns: 0, 1 where the
// device's memory does not hold them (the host then sums the blocks), or an
// error.
static int halo_blocks_room(cuda_ctx *c, size_t bytes, int slots, smx_error *err)
{
    void *x0 = (void *)c->hb.x0;
    int rc = grow_device((void **)&c->hb.blocks, &c->hb_cap_bytes, bytes, err);
    if (rc == 0)
        rc = grow_device(&x0, &c->hb_x0_bytes, (size_t)slots * sizeof *c->hb.x0, err);
    c->hb.x0 = (int *)x0;
    return rc;
}

int cuda_halo_keep(void *vctx, const halo_block_spec *spec, smx_error *err)
{
    cuda_ctx *c = (cuda_ctx *)vctx;
    c->keep_halo = 0;
    const halo_fft_job &f = spec->fft;
    if (spec->plane0 < 1 || spec->plane0 + f.bands > c->planes || spec->slots < 1 ||
        (int64_t)spec->slots * slot_w(c->d) > c->d.nx || spec->fz < 1 || spec->fx < 1)
        return smx_fail(err, SMX_EXIT_RUNTIME,
                        "internal: halo blocks of planes %d-%d for %d slots on a state of %d "
                        "planes and %lld columns",
                        spec->plane0, spec->plane0 + f.bands - 1, spec->slots, c->planes,
                        (long long)c->d.nx);
    if (int rc = halo_fft_ready(&c->halo, c->stream, &f, err))
        return rc; // -1: the device declines the transforms, and so the blocks
    const size_t bytes = (size_t)spec->slots * f.bands * f.cz * f.cx * sizeof(double);
    if (int rc = halo_blocks_room(c, bytes, spec->slots, err))
        return rc == 1 ? -1 : rc;
    halo_blocks_args &b = c->hb;
    b.dose = c->dose;
    b.d = c->d;
    b.plane0 = spec->plane0;
    b.bands = f.bands;
    b.slots = spec->slots;
    b.fz = spec->fz;
    b.fx = spec->fx;
    b.ox = spec->ox;
    b.cz = f.cz;
    b.cx = f.cx;
    CUDA_CHECK_ERR(err, cudaMemcpyAsync((void *)b.x0, spec->x0, (size_t)spec->slots * sizeof(int),
                                        cudaMemcpyHostToDevice, c->stream));
    CUDA_CHECK_ERR(err, cudaMemsetAsync(b.blocks, 0, bytes, c->stream));
    CUDA_CHECK_ERR(err, cudaStreamSynchronize(c->stream)); // spec->x0 may change after the call
    c->hb_z0 = 0;
    c->hb_final = 0;
    c->keep_halo = 1;
    return 0;
}

int cuda_halo_convolve(void *vctx, const halo_fft_job *job, smx_error *err)
{
    cuda_ctx *c = (cuda_ctx *)vctx;
    if (job->in)
        return halo_fft_run(&c->halo, c->stream, job, nullptr, err);
    if (!c->keep_halo || job->n > c->hb.slots || job->bands != c->hb.bands || job->cz != c->hb.cz ||
        job->cx != c->hb.cx)
        return smx_fail(err, SMX_EXIT_RUNTIME,
                        "internal: the halo of %d spots from blocks the device does not keep",
                        job->n);
    if (!c->hb_final) { // the rows still in the window
        CUDA_CHECK_ERR(err, halo_blocks_add(c->hb, c->hb_z0, 0, (int)c->d.nz, c->stream));
        c->hb_final = 1;
    }
    return halo_fft_run(&c->halo, c->stream, job, c->hb.blocks, err);
}
