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
        psi[4 * d.cells + c] = psi[c]; // e = 0 at shift 1: w
        psi[5 * d.cells + c] = 0.0f;
    }
}

// The target (z, x) of plane `pl`: the part of each candidate source that
// lands in it (rows z - k1 .. z - k0, columns x - fx - 2 .. x - fx + 1 within
// its slot, ascending), summed in float from +0 into o[SMX_MOM_COMPONENTS].
__device__ __forceinline__ void gather_target(const float *__restrict__ in, dev_dims d, int64_t pl,
                                              double sz, double sx, int z, int x,
                                              float (&o)[SMX_MOM_COMPONENTS])
{
    const float *w = in + pl * d.slice, *mz = w + d.cells, *mx = mz + d.cells, *qx = mx + d.cells,
                *me = qx + d.cells, *qe = me + d.cells;
    const int sw = (int)slot_w(d), nz = (int)d.nz, fx = (int)floor(sx), sl = slot_lo(d, x);
    int k0, k1;
    smx_mom_rows(sz, &k0, &k1);
    float aw = 0.0f, amz = 0.0f, amx = 0.0f, aqx = 0.0f, ame = 0.0f, aqe = 0.0f;
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
            const double ue = smx_mom_energy(me[c], v), qu = (double)qe[c] / (double)v;
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
            ame = ame + smx_mom_store(part, ue, SMX_MOM_ESHIFT);
            aqe = aqe + (float)((double)part * qu);
        }
    }
    o[0] = aw;
    o[1] = amz;
    o[2] = amx;
    o[3] = aqx;
    o[4] = ame;
    o[5] = aqe;
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
                                             const float (&o)[SMX_MOM_COMPONENTS])
{
#pragma unroll
    for (int q = 0; q < SMX_MOM_COMPONENTS; q++)
        out[q * d.cells + to] = o[q];
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
        float o[SMX_MOM_COMPONENTS];
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
        float o[SMX_MOM_COMPONENTS];
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

// The deposit of one source bin (ie) of one cell (moments.h, the CPU's
// cpu_deposit_moments): the mean table's deposit at the cell's mean energy,
// D = fma(dep, w, D) then fma(slope, w e, D), with the tallies of the tables
// its strip's parts take (in medium 0 the plain table whole); a cell without
// weight deposits nothing.
__device__ __forceinline__ double energy_deposit_bin(const moments_energy_dev &t, int64_t ne,
                                                     int64_t m, int ie, float w, float me, float qe,
                                                     double D, media_tally &tl)
{
    if (w == 0.0f)
        return D;
    const int64_t mi = m * ne + ie;
    const double dep = t.deposit_mean[mi], slope = t.slope[mi];
    const double v = (double)w, ew = (double)me - SMX_MOM_ESHIFT * v;
    D = __fma_rn(dep, v, D);
    D = __fma_rn(slope, ew, D);
    smx_emom_parts pa = { { 1.0, 0.0 }, { 0.0, 0.0 }, { 0.0, 0.0 } };
    if (m)
        smx_emom_split(me, qe, w, t.p_low[mi], &pa);
    tl.e_round -= slope * ew;
    for (int k = 0; k < 2; k++) {
        if (pa.f[k] == 0.0)
            continue;
        const int64_t tk = (m * 2 + k) * ne + ie;
        const double vk = v * pa.f[k];
        tl.e_round += vk * (t.deposit[tk] - dep);
        if (t.target[tk] < 0) {
            tl.w_stop += vk;
            tl.e_stop += vk * t.E[ie];
        } else if (t.nuc_w[tk] != 0.0) {
            tl.w_nuc += vk * t.nuc_w[tk];
            tl.e_nuc += vk * t.nuc_e[tk];
        }
    }
    return D;
}

// One thread per (direction, z, x) cell of F: the deposit chains over the
// source bins lo .. hi, then the move of every bin wl .. wh in place, reading
// only source bins (the others hold the CPU's zeros, or stale values that
// stand for them; a zero term changes no bit of a gather, and a source
// without weight takes no part of a medium's split). The early exit's cut
// takes its moments with it before A_theta (moments_drop), so that no moment
// reaches A_E without its weight.
__global__ void energy_kernel(float *psi, float *__restrict__ dmap, moment_maps_dev mm, dev_dims d,
                              moments_energy_dev t, const active_regions *reg, const int *stop,
                              double *partials, int blocks)
{
    if (*stop)
        return;
    const int64_t ne = d.ne;
    box4 F;
    int lo, hi, wl, wh;
    if (reg) {
        F = box_join(reg->occupied, reg->written);
        lo = reg->src_lo, hi = reg->src_hi;
        wl = max(0, min(reg->tgt_lo, reg->wtgt_lo));
        wh = min((int)ne - 1, max(hi, max(reg->tgt_hi, reg->wtgt_hi)));
    } else {
        F = box4{ 0, (int)d.nz - 1, 0, (int)d.nx - 1 };
        lo = wl = 0, hi = wh = (int)ne - 1;
    }
    const int nxr = box_is_empty(F) ? 0 : F.x1 - F.x0 + 1;
    const int64_t per = box_is_empty(F) ? 0 : (int64_t)(F.z1 - F.z0 + 1) * nxr;
    const int64_t items = per * d.nth, es = d.nth * d.slice, cs = d.cells;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    double dep_sum = 0.0;
    media_tally tl;
    for (int64_t q = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; q < items; q += stride) {
        const int64_t j = q / per, r = q - j * per, z = r / nxr;
        const int64_t c = (F.z0 + z) * d.px + F.x0 + (r - z * nxr);
        const int64_t m = t.medium ? t.medium[c] : 0;
        float *p = psi + j * d.slice + c; // (j, z, x); bin stride es, component stride cs
        double D = 0.0, Dz = 0.0, Dx = 0.0, Dq = 0.0;
        for (int ie = lo; ie <= hi; ie++) {
            const float *b = p + ie * es;
            const double dep = t.deposit_mean[m * ne + ie];
            D = energy_deposit_bin(t, ne, m, ie, b[0], b[4 * cs], b[5 * cs], D, tl);
            Dz = __fma_rn(dep, (double)b[cs], Dz);
            Dx = __fma_rn(dep, (double)b[2 * cs], Dx);
            Dq = __fma_rn(dep, (double)b[3 * cs], Dq);
        }
        const int64_t mo = j * d.slice + c;
        dmap[mo] = (float)D;
        mm.mz[mo] = (float)Dz;
        mm.mx[mo] = (float)Dx;
        mm.qx[mo] = (float)Dq;
        dep_sum += D;
        for (int tb = wl; tb <= wh; tb++) {
            float a[SMX_MOM_COMPONENTS];
#pragma unroll
            for (int k = 0; k < SMX_MOM_COMPONENTS; k++)
                a[k] = 0.0f;
            bool first = true;
            if (m == 0) {
                // The plain table's coefficients on every component, sources
                // ascending: the first term rounded once, the others fma.
                const energy_gather_dev e = t.gather[tb];
                for (int k = 0; k < e.count; k++) {
                    const int sb = e.src[k];
                    if (sb < lo || sb > hi)
                        continue;
                    const float *b = p + sb * es, cf = e.coeff[k];
#pragma unroll
                    for (int u = 0; u < SMX_MOM_COMPONENTS; u++)
                        a[u] = first ? __fmul_rn(cf, b[u * cs]) : __fmaf_rn(cf, b[u * cs], a[u]);
                    first = false;
                }
            } else {
                const int64_t row = m * ne + tb;
                for (int k = t.cand_start[row]; k < t.cand_start[row + 1]; k++) {
                    const media_candidate e = t.cand[k];
                    const int sb = e.src_table >> 1, up = e.src_table & 1;
                    if (sb < lo || sb > hi)
                        continue;
                    const float *b = p + sb * es;
                    const float w = b[0];
                    if (w == 0.0f)
                        continue;
                    smx_emom_parts pa;
                    smx_emom_split(b[4 * cs], b[5 * cs], w, t.p_low[m * ne + sb], &pa);
                    const double f = pa.f[up];
                    if (f == 0.0)
                        continue; // the other table's term
                    float v[SMX_MOM_COMPONENTS];
#pragma unroll
                    for (int u = 0; u < 4; u++)
                        v[u] = f == 1.0 ? b[u * cs] : (float)((double)b[u * cs] * f);
                    v[4] = smx_mom_store(v[0], pa.m[up], SMX_MOM_ESHIFT);
                    v[5] = (float)((double)v[0] * pa.q[up]);
#pragma unroll
                    for (int u = 0; u < SMX_MOM_COMPONENTS; u++)
                        a[u] = first ? __fmul_rn(e.coeff, v[u]) : __fmaf_rn(e.coeff, v[u], a[u]);
                    first = false;
                }
            }
            float *o = p + tb * es;
#pragma unroll
            for (int u = 0; u < SMX_MOM_COMPONENTS; u++)
                o[u * cs] = a[u];
        }
    }
    media_partials(dep_sum, tl, partials, blocks);
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

// Direction j's deposit into target (z, tx) (slot-relative column tx), from
// its sources inside box; off the edges by the direct shares.
__device__ __forceinline__ double spread_direction(const smx_mpath_maps *maps, dev_dims d,
                                                   const stream_tables_dev &st, int sl, int j,
                                                   int z, int tx, const int (&box)[4],
                                                   const unsigned char *med, const double *density)
{
    const int sw = (int)slot_w(d);
    const long long o = sl + (long long)j * d.slice;
    if (z > 0 && z < (int)d.nz - 1 && tx > 0 && tx < sw - 1)
        return smx_mpath_direction_inner(maps, o, (int)d.px, st.sz[j], st.sx[j], z, tx, box, med,
                                         density);
    return smx_mpath_direction(maps, o, (int)d.px, st.sz[j], st.sx[j], z, tx, (int)d.nz, sw, box[0],
                               box[1], box[2], box[3], med, density);
}

// Every dose cell the region's paths reach (the CPU's reach, smx_mpath_reach,
// over the map's region), sources read inside that region. One warp per
// cell, a lane per direction: the directions' deposits are summed in the
// CPU's tree (smx_mpath_cell, deposit_path.h): the balanced pairwise sums of
// 32 leaves by shuffles (left + right at every level; leaves past the tree's
// own, zeros, add +0 to a sum of non-negative deposits: the same bits), and
// blocks of 32 leaves through the tree's own push.
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
    const int lane = threadIdx.x & 31, nth = (int)d.nth;
    const int blocks32 = (smx_path_leaves(nth) + 31) / 32;
    const int64_t nwarps = ((int64_t)gridDim.x * blockDim.x) >> 5;
    const smx_mpath_maps maps = { dmap, m.mz, m.mx, m.qx };
    const int sw = (int)slot_w(d);
    for (int64_t i = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5; i < n; i += nwarps) {
        const int z = zlo + (int)(i / wd), x = xlo + (int)(i % wd), sl = slot_lo(d, x);
        const int x0 = S.x0 > sl ? S.x0 - sl : 0, x1 = S.x1 < sl + sw - 1 ? S.x1 - sl : sw - 1;
        const int box[4] = { S.z0, S.z1, x0, x1 };
        const unsigned char *med = mass.medium ? mass.medium + sl : NULL;
        smx_path_tree t;
        t.top = t.count = 0;
        for (int b = 0; b < blocks32; b++) {
            const int j = b * 32 + lane;
            double v =
                j < nth ? spread_direction(&maps, d, st, sl, j, z, x - sl, box, med, mass.density)
                        : 0.0;
            for (int s = 1; s < 32; s <<= 1) {
                const double o = __shfl_down_sync(0xffffffffu, v, s);
                if ((lane & (2 * s - 1)) == 0)
                    v = v + o;
            }
            smx_path_tree_push(&t, v); // lane 0's is the block's sum
        }
        if (lane == 0) {
            double *c = dose + (int64_t)z * d.px + x;
            *c = *c + t.v[0];
        }
    }
}

// The early exit's cut on the moments (moments_drop): over the region's source
// bins and occupied box (the whole state without a region), every moment of
// a cell whose weight A_theta will drop (below the threshold) is zeroed.
__global__ void drop_kernel(float *psi, dev_dims d, float threshold, const active_regions *reg,
                            const int *stop)
{
    if (*stop)
        return;
    box4 F;
    int lo, hi;
    if (reg) {
        F = reg->occupied;
        lo = reg->src_lo, hi = reg->src_hi;
    } else {
        F = box4{ 0, (int)d.nz - 1, 0, (int)d.nx - 1 };
        lo = 0, hi = (int)d.ne - 1;
    }
    if (box_is_empty(F) || hi < lo)
        return;
    const int64_t nxr = F.x1 - F.x0 + 1, per = (int64_t)(F.z1 - F.z0 + 1) * nxr;
    const int64_t items = (int64_t)(hi - lo + 1) * d.nth * per, cs = d.cells;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t q = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; q < items; q += stride) {
        const int64_t pl = q / per, r = q - pl * per, z = r / nxr;
        const int64_t c =
            lo * d.nth * d.slice + pl * d.slice + (F.z0 + z) * d.px + F.x0 + (r - z * nxr);
        if (psi[c] < threshold)
            for (int k = 1; k < SMX_MOM_COMPONENTS; k++)
                psi[k * cs + c] = 0.0f;
    }
}

} // namespace

cudaError_t moments_drop(const moments_args &a, float threshold, cudaStream_t s)
{
    if (!(threshold > 0.0f))
        return cudaSuccess;
    drop_kernel<<<a.blocks, SMX_THREADS, 0, s>>>(a.psi, a.d, threshold, a.reg, a.stop);
    return cudaGetLastError();
}

cudaError_t moments_source(float *psi, dev_dims d, int blocks, cudaStream_t s)
{
    source_kernel<<<blocks, SMX_THREADS, 0, s>>>(psi, d);
    return cudaGetLastError();
}

cudaError_t moments_stream(const stream_args &a, cudaStream_t s)
{
    stream_kernel<<<a.blocks, SMX_THREADS, 0, s>>>(a.in, a.out, a.d, a.t, a.stop, a.partials,
                                                   a.blocks);
    return cudaGetLastError();
}

cudaError_t moments_energy(const moments_args &a, cudaStream_t s)
{
    energy_kernel<<<a.blocks, SMX_THREADS, 0, s>>>(a.psi, a.dmap, a.m, a.d, a.t, a.reg, a.stop,
                                                   a.partials, a.blocks);
    return cudaGetLastError();
}

cudaError_t moments_spread(const spread_args &a, moment_maps_dev m, cudaStream_t s)
{
    if (a.mass.medium)
        held_kernel<<<a.blocks, SMX_THREADS, 0, s>>>(a.dose, a.dmap, m, a.d, a.st, a.mass, a.reg,
                                                     a.stop);
    spread_kernel<<<a.blocks, SMX_THREADS, 0, s>>>(a.dose, a.dmap, m, a.d, a.st, a.mass, a.reg,
                                                   a.stop);
    return cudaGetLastError();
}

cudaError_t moments_stream_measure(const stream_args &a, cudaStream_t s)
{
    const size_t smem = (size_t)a.d.ne * 4 * sizeof(int);
    stream_measure_kernel<<<a.blocks, SMX_THREADS, smem, s>>>(
        a.in, a.out, a.d, a.t, a.reg, a.reach, a.box_next, a.stop, a.partials, a.blocks);
    return cudaGetLastError();
}
