#include "moments.cuh"

extern "C" {
#include "numerics/deposit_path.h"
#include "numerics/moments.h"
}

namespace {

__global__ void source_kernel(float *psi, dev_dims d)
{
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t c = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; c < d.cells; c += stride) {
        psi[d.cells + c] = -0.5f * psi[c];
        psi[2 * d.cells + c] = 0.0f;
        psi[3 * d.cells + c] = 0.0f;
    }
}

// One thread per (direction, cell): the three chains over the bins ascending.
__global__ void deposit_kernel(const float *__restrict__ psi, moment_maps_dev m, dev_dims d,
                               const double *__restrict__ dep, const unsigned char *medium,
                               const int *stop)
{
    if (*stop)
        return;
    const int64_t n = d.nth * d.slice, stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const int64_t j = i / d.slice, c = i % d.slice;
        const double *dm = dep + (medium ? (int64_t)medium[c] * d.ne : 0);
        double Dz = 0.0, Dx = 0.0, Dq = 0.0;
        for (int64_t ie = 0; ie < d.ne; ie++) {
            const int64_t o = (ie * d.nth + j) * d.slice + c;
            Dz = __fma_rn(dm[ie], (double)psi[d.cells + o], Dz);
            Dx = __fma_rn(dm[ie], (double)psi[2 * d.cells + o], Dx);
            Dq = __fma_rn(dm[ie], (double)psi[3 * d.cells + o], Dq);
        }
        m.mz[i] = (float)Dz;
        m.mx[i] = (float)Dx;
        m.qx[i] = (float)Dq;
    }
}

// One thread per cell (bin, direction, z, x < nx): the gather as a target,
// the leak as a source.
__global__ void stream_kernel(const float *__restrict__ in, float *__restrict__ out, dev_dims d,
                              stream_tables_dev t, const int *stop, double *partials, int blocks)
{
    if (*stop)
        return;
    const int64_t n = d.ne * d.nth * d.nz * d.nx, stride = (int64_t)gridDim.x * blockDim.x;
    const int sw = (int)slot_w(d), nz = (int)d.nz;
    double w_leak = 0.0, e_leak = 0.0;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const int x = (int)(i % d.nx);
        const int64_t r = i / d.nx; // (ie, j, z) row
        const int z = (int)(r % d.nz);
        const int64_t pl = r / d.nz, ie = pl / d.nth, j = pl % d.nth;
        const float *w = in + pl * d.slice, *mz = w + d.cells, *mx = mz + d.cells,
                    *qx = mx + d.cells;
        const double sz = t.sz[j], sx = t.sx[j];
        const int fx = (int)floor(sx), sl = slot_lo(d, x);
        int k0, k1;
        smx_mom_rows(sz, &k0, &k1);
        // As a target: sources zs = z - k1 .. z - k0; xs = x - fx - 2 .. x - fx + 1
        // within the slot, ascending.
        float aw = 0.0f, amz = 0.0f, amx = 0.0f, aqx = 0.0f;
        for (int zs = z - k1; zs <= z - k0; zs++) {
            if (zs < 0 || zs >= nz)
                continue;
            for (int xs = x - fx - 2; xs <= x - fx + 1; xs++) {
                if (xs < sl || xs >= sl + sw || xs >= d.nx)
                    continue;
                const int64_t o = (int64_t)zs * d.px + xs;
                const float v = w[o];
                if (v == 0.0f || !smx_mom_keeps(v))
                    continue;
                int kz;
                const double uz = smx_mom_point(mz[o], v, sz, &kz);
                if (zs + kz != z)
                    continue;
                smx_mom_parts p;
                smx_mom_split(mx[o], qx[o], v, sx, &p);
                const int a = x - xs - p.lo;
                if (a < 0 || a >= p.n)
                    continue;
                const float part = (float)((double)v * p.f[a]);
                aw = aw + part;
                amz = amz + (float)((double)part * uz);
                amx = amx + (float)((double)part * p.m[a]);
                aqx = aqx + (float)((double)part * p.q[a]);
            }
        }
        const int64_t to = pl * d.slice + (int64_t)z * d.px + x;
        out[to] = aw;
        out[d.cells + to] = amz;
        out[2 * d.cells + to] = amx;
        out[3 * d.cells + to] = aqx;
        // As a source: what leaves.
        const int64_t so = (int64_t)z * d.px + x;
        const float v = w[so];
        if (v == 0.0f)
            continue;
        double leak = 0.0;
        if (!smx_mom_keeps(v)) {
            leak = v;
        } else {
            int kz;
            smx_mom_point(mz[so], v, sz, &kz);
            smx_mom_parts p;
            smx_mom_split(mx[so], qx[so], v, sx, &p);
            const int tz = z + kz;
            for (int a = 0; a < p.n; a++) {
                const int tx = x + p.lo + a;
                if (tz < 0 || tz >= nz || tx < sl || tx >= sl + sw || tx >= d.nx)
                    leak += (float)((double)v * p.f[a]);
            }
        }
        w_leak += leak;
        e_leak += leak * t.E[ie];
    }
    const double v[2] = { w_leak, e_leak };
    const int f[2] = { TF_W_SPATIAL_LEAK, TF_E_SPATIAL_LEAK };
    block_partials_at<2>(v, f, partials, blocks);
}

__global__ void held_kernel(double *dose, const float *__restrict__ dmap, moment_maps_dev m,
                            dev_dims d, stream_tables_dev st, mass_share_dev mass, const int *stop)
{
    if (*stop)
        return;
    const int64_t n = d.nz * d.nx, stride = (int64_t)gridDim.x * blockDim.x;
    const smx_mpath_maps maps = { dmap, m.mz, m.mx, m.qx };
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const int z = (int)(i / d.nx), x = (int)(i % d.nx), sl = slot_lo(d, x);
        double *c = dose + (int64_t)z * d.px + x;
        *c = smx_mpath_held(*c, &maps, sl, d.slice, (int)d.px, (int)d.nth, st.sz, st.sx, z, x - sl,
                            (int)d.nz, (int)slot_w(d), mass.medium + sl, mass.density);
    }
}

__global__ void spread_kernel(double *dose, const float *__restrict__ dmap, moment_maps_dev m,
                              dev_dims d, stream_tables_dev st, mass_share_dev mass,
                              const int *stop)
{
    if (*stop)
        return;
    const int64_t n = d.nz * d.nx, stride = (int64_t)gridDim.x * blockDim.x;
    const smx_mpath_maps maps = { dmap, m.mz, m.mx, m.qx };
    const int sw = (int)slot_w(d);
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const int z = (int)(i / d.nx), x = (int)(i % d.nx), sl = slot_lo(d, x);
        double *c = dose + (int64_t)z * d.px + x;
        *c = smx_mpath_cell(*c, &maps, sl, d.slice, (int)d.px, (int)d.nth, st.sz, st.sx, z, x - sl,
                            (int)d.nz, sw, 0, (int)d.nz - 1, 0, sw - 1,
                            mass.medium ? mass.medium + sl : NULL, mass.density);
    }
}

} // namespace

cudaError_t moments_source(float *psi, dev_dims d, int blocks, cudaStream_t s)
{
    source_kernel<<<blocks, SMX_THREADS, 0, s>>>(psi, d);
    return cudaGetLastError();
}

cudaError_t moments_deposit(const float *psi, moment_maps_dev m, dev_dims d, const double *dep,
                            const unsigned char *medium, const int *stop, int blocks,
                            cudaStream_t s)
{
    deposit_kernel<<<blocks, SMX_THREADS, 0, s>>>(psi, m, d, dep, medium, stop);
    return cudaGetLastError();
}

cudaError_t moments_stream(const float *in, float *out, dev_dims d, stream_tables_dev t,
                           const int *stop, double *partials, int blocks, cudaStream_t s)
{
    stream_kernel<<<blocks, SMX_THREADS, 0, s>>>(in, out, d, t, stop, partials, blocks);
    return cudaGetLastError();
}

cudaError_t moments_spread(double *dose, const float *dmap, moment_maps_dev m, dev_dims d,
                           stream_tables_dev st, mass_share_dev mass, const int *stop, int blocks,
                           cudaStream_t s)
{
    if (mass.medium)
        held_kernel<<<blocks, SMX_THREADS, 0, s>>>(dose, dmap, m, d, st, mass, stop);
    spread_kernel<<<blocks, SMX_THREADS, 0, s>>>(dose, dmap, m, d, st, mass, stop);
    return cudaGetLastError();
}
