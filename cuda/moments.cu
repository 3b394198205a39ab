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
        psi[d.cells + c] = smx_mom_store(psi[c], -0.5, SMX_MOM_ZSHIFT);
        psi[2 * d.cells + c] = smx_mom_store(psi[c], 0.0, SMX_MOM_XSHIFT);
        psi[3 * d.cells + c] = 0.0f;
    }
}

// The target (z, x) of plane `pl`: the part of each candidate source that
// lands in it (rows z - k1 .. z - k0, columns x - fx - 2 .. x - fx + 1 within
// its slot, ascending), summed in float from +0 into o[4].
__device__ __forceinline__ void gather_target(const float *__restrict__ in, dev_dims d, int64_t pl,
                                              double sz, double sx, int z, int x, float (&o)[4])
{
    const float *w = in + pl * d.slice, *mz = w + d.cells, *mx = mz + d.cells, *qx = mx + d.cells;
    const int sw = (int)slot_w(d), nz = (int)d.nz, fx = (int)floor(sx), sl = slot_lo(d, x);
    int k0, k1;
    smx_mom_rows(sz, &k0, &k1);
    float aw = 0.0f, amz = 0.0f, amx = 0.0f, aqx = 0.0f;
    for (int zs = z - k1; zs <= z - k0; zs++) {
        if (zs < 0 || zs >= nz)
            continue;
        for (int xs = x - fx - 2; xs <= x - fx + 1; xs++) {
            if (xs < sl || xs >= sl + sw || xs >= d.nx)
                continue;
            const int64_t c = (int64_t)zs * d.px + xs;
            const float v = w[c];
            if (v == 0.0f || !smx_mom_keeps(v))
                continue;
            int kz;
            const double uz = smx_mom_point(mz[c], v, sz, &kz);
            if (zs + kz != z)
                continue;
            smx_mom_parts p;
            smx_mom_split(mx[c], qx[c], v, sx, &p);
            const int a = x - xs - p.lo;
            if (a < 0 || a >= p.n)
                continue;
            const float part = (float)((double)v * p.f[a]);
            aw = aw + part;
            amz = amz + smx_mom_store(part, uz, SMX_MOM_ZSHIFT);
            amx = amx + smx_mom_store(part, p.m[a], SMX_MOM_XSHIFT);
            aqx = aqx + (float)((double)part * p.q[a]);
        }
    }
    o[0] = aw;
    o[1] = amz;
    o[2] = amx;
    o[3] = aqx;
}

// What source (z, x) of plane `pl` sends out of the grid or its slot (and a
// subnormal weight whole).
__device__ __forceinline__ double source_leak(const float *__restrict__ in, dev_dims d, int64_t pl,
                                              double sz, double sx, int z, int x)
{
    const float *w = in + pl * d.slice, *mz = w + d.cells, *mx = mz + d.cells, *qx = mx + d.cells;
    const int64_t c = (int64_t)z * d.px + x;
    const float v = w[c];
    if (v == 0.0f)
        return 0.0;
    if (!smx_mom_keeps(v))
        return v;
    const int sw = (int)slot_w(d), nz = (int)d.nz, sl = slot_lo(d, x);
    int kz;
    smx_mom_point(mz[c], v, sz, &kz);
    smx_mom_parts p;
    smx_mom_split(mx[c], qx[c], v, sx, &p);
    const int tz = z + kz;
    double leak = 0.0;
    for (int a = 0; a < p.n; a++) {
        const int tx = x + p.lo + a;
        if (tz < 0 || tz >= nz || tx < sl || tx >= sl + sw || tx >= d.nx)
            leak += (float)((double)v * p.f[a]);
    }
    return leak;
}

__device__ __forceinline__ void store_target(float *__restrict__ out, dev_dims d, int64_t to,
                                             const float (&o)[4])
{
    out[to] = o[0];
    out[d.cells + to] = o[1];
    out[2 * d.cells + to] = o[2];
    out[3 * d.cells + to] = o[3];
}

// One thread per cell (bin, direction, z, x < nx): the gather as a target,
// the leak as a source.
__global__ void stream_kernel(const float *__restrict__ in, float *__restrict__ out, dev_dims d,
                              stream_tables_dev t, const int *stop, double *partials, int blocks)
{
    if (*stop)
        return;
    const int64_t n = d.ne * d.nth * d.nz * d.nx, stride = (int64_t)gridDim.x * blockDim.x;
    double w_leak = 0.0, e_leak = 0.0;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const int x = (int)(i % d.nx);
        const int64_t r = i / d.nx; // (ie, j, z) row
        const int z = (int)(r % d.nz);
        const int64_t pl = r / d.nz, ie = pl / d.nth, j = pl % d.nth;
        float o[4];
        gather_target(in, d, pl, t.sz[j], t.sx[j], z, x, o);
        store_target(out, d, pl * d.slice + (int64_t)z * d.px + x, o);
        const double leak = source_leak(in, d, pl, t.sz[j], t.sx[j], z, x);
        w_leak += leak;
        e_leak += leak * t.E[ie];
    }
    const double v[2] = { w_leak, e_leak };
    const int f[2] = { TF_W_SPATIAL_LEAK, TF_E_SPATIAL_LEAK };
    block_partials_at<2>(v, f, partials, blocks);
}

// The same over the active region (the occupied box and its image under the
// moves, the bins streamed now and those whose old values must become zero),
// measuring its output as stream_gather_and_measure does: TF_W_OUT, TF_E_OUT
// and each bin's non-zero extent joined into box_next.
__global__ void stream_measure_kernel(const float *__restrict__ in, float *__restrict__ out,
                                      dev_dims d, stream_tables_dev t, const active_regions *reg,
                                      int4 reach, box4 *box_next, const int *stop, double *partials,
                                      int blocks)
{
    extern __shared__ int sbox[]; // [ne][4]
    if (*stop)
        return;
    const int ne = (int)d.ne;
    extents_clear(sbox, ne);
    __syncthreads();
    const box4 R = stream_region(d, reg, reach);
    const int blo = min(reg->src_lo, reg->tgt_lo), bhi = max(reg->src_hi, reg->tgt_hi);
    const int64_t nb = bhi >= blo ? bhi - blo + 1 : 0;
    const int64_t rows = box_is_empty(R) ? 0 : R.z1 - R.z0 + 1, width = R.x1 - R.x0 + 1;
    const int64_t n = nb * d.nth * rows * (box_is_empty(R) ? 0 : width);
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    double lw = 0.0, le = 0.0, w = 0.0, e = 0.0;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const int x = R.x0 + (int)(i % width);
        const int64_t r = i / width;
        const int z = R.z0 + (int)(r % rows);
        const int64_t q = r / rows, ie = blo + q / d.nth, j = q % d.nth;
        const int64_t pl = ie * d.nth + j;
        const double E = t.E[ie];
        float o[4];
        gather_target(in, d, pl, t.sz[j], t.sx[j], z, x, o);
        store_target(out, d, pl * d.slice + (int64_t)z * d.px + x, o);
        if (o[0] != 0.0f) {
            w += o[0];
            e += (double)o[0] * E;
            atomicMin(&sbox[4 * ie + 0], z);
            atomicMax(&sbox[4 * ie + 1], z);
            atomicMin(&sbox[4 * ie + 2], x);
            atomicMax(&sbox[4 * ie + 3], x);
        }
        const double leak = source_leak(in, d, pl, t.sz[j], t.sx[j], z, x);
        lw += leak;
        le += leak * E;
    }
    const double v[4] = { lw, le, w, e };
    const int f[4] = { TF_W_SPATIAL_LEAK, TF_E_SPATIAL_LEAK, TF_W_OUT, TF_E_OUT };
    block_partials_at<4>(v, f, partials, blocks);
    __syncthreads();
    extents_flush(sbox, ne, box_next);
}

__global__ void held_kernel(double *dose, const float *__restrict__ dmap, moment_maps_dev m,
                            dev_dims d, stream_tables_dev st, mass_share_dev mass,
                            const active_regions *reg, const int *stop)
{
    if (*stop)
        return;
    const box4 S = map_region(d, reg);
    if (box_is_empty(S))
        return;
    const int64_t wd = S.x1 - S.x0 + 1, n = (int64_t)(S.z1 - S.z0 + 1) * wd;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    const smx_mpath_maps maps = { dmap, m.mz, m.mx, m.qx };
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const int z = S.z0 + (int)(i / wd), x = S.x0 + (int)(i % wd), sl = slot_lo(d, x);
        double *c = dose + (int64_t)z * d.px + x;
        *c = smx_mpath_held(*c, &maps, sl, d.slice, (int)d.px, (int)d.nth, st.sz, st.sx, z, x - sl,
                            (int)d.nz, (int)slot_w(d), mass.medium + sl, mass.density);
    }
}

// Every dose cell the region's paths reach (the CPU's reach, smx_mpath_reach,
// over the map's region), sources read inside that region.
__global__ void spread_kernel(double *dose, const float *__restrict__ dmap, moment_maps_dev m,
                              dev_dims d, stream_tables_dev st, mass_share_dev mass,
                              const active_regions *reg, const int *stop)
{
    if (*stop)
        return;
    const box4 S = map_region(d, reg);
    if (box_is_empty(S))
        return;
    int zlo, zhi, xlo, xhi;
    smx_mpath_reach(st.sz, (int)d.nth, 0, S.z0, S.z1, (int)d.nz, &zlo, &zhi);
    smx_mpath_reach(st.sx, (int)d.nth, 1, S.x0, S.x1, (int)d.nx, &xlo, &xhi);
    const int64_t wd = xhi - xlo + 1, n = (int64_t)(zhi - zlo + 1) * wd;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    const smx_mpath_maps maps = { dmap, m.mz, m.mx, m.qx };
    const int sw = (int)slot_w(d);
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const int z = zlo + (int)(i / wd), x = xlo + (int)(i % wd), sl = slot_lo(d, x);
        const int x0 = S.x0 > sl ? S.x0 - sl : 0, x1 = S.x1 < sl + sw - 1 ? S.x1 - sl : sw - 1;
        double *c = dose + (int64_t)z * d.px + x;
        *c = smx_mpath_cell(*c, &maps, sl, d.slice, (int)d.px, (int)d.nth, st.sz, st.sx, z, x - sl,
                            (int)d.nz, sw, S.z0, S.z1, x0, x1,
                            mass.medium ? mass.medium + sl : NULL, mass.density);
    }
}

} // namespace

cudaError_t moments_source(float *psi, dev_dims d, int blocks, cudaStream_t s)
{
    source_kernel<<<blocks, SMX_THREADS, 0, s>>>(psi, d);
    return cudaGetLastError();
}

cudaError_t moments_stream(const float *in, float *out, dev_dims d, stream_tables_dev t,
                           const int *stop, double *partials, int blocks, cudaStream_t s)
{
    stream_kernel<<<blocks, SMX_THREADS, 0, s>>>(in, out, d, t, stop, partials, blocks);
    return cudaGetLastError();
}

cudaError_t moments_spread(double *dose, const float *dmap, moment_maps_dev m, dev_dims d,
                           stream_tables_dev st, mass_share_dev mass, const active_regions *reg,
                           const int *stop, int blocks, cudaStream_t s)
{
    if (mass.medium)
        held_kernel<<<blocks, SMX_THREADS, 0, s>>>(dose, dmap, m, d, st, mass, reg, stop);
    spread_kernel<<<blocks, SMX_THREADS, 0, s>>>(dose, dmap, m, d, st, mass, reg, stop);
    return cudaGetLastError();
}

cudaError_t moments_stream_measure(const float *in, float *out, dev_dims d, stream_tables_dev t,
                                   const active_regions *reg, int4 reach, box4 *box_next,
                                   const int *stop, double *partials, int blocks, cudaStream_t s)
{
    const size_t smem = (size_t)d.ne * 4 * sizeof(int);
    stream_measure_kernel<<<blocks, SMX_THREADS, smem, s>>>(in, out, d, t, reg, reach, box_next,
                                                            stop, partials, blocks);
    return cudaGetLastError();
}
