#include "deposit_path.cuh"
#include "tiling.cuh"

namespace {

// Paths a block copies into shared memory (2 x 56 bytes each); wider angular
// grids read them from global memory.
constexpr int PATH_SMEM = 128;
constexpr int GROUPS = SMX_PATH_LEAVES_MIN; // one warp per group of directions
constexpr int FAST_MAX = 3; // widest path (cells per axis) of the fast form
// Offsets per axis of the sources whose ratios the spread keeps a tile
// (ratio_box): paths of at most FAST_MAX cells that go either way.
constexpr int SPREAD_BOX = 2 * FAST_MAX - 1;
// Directions whose held rests a block keeps a tile (held cells of grids with
// more take smx_path_held in the tile's last step).
constexpr int HELD_DIRS = 64;

// By capped mass, the ratio smx_path_ratio(rho_t, rho_s) of a lane's cell t
// to each source s at offsets (z0 + i, x0 + j) from it, i < the box's rows,
// j < w, formed once a tile (spread_cells) at col[(i * w + j) * 32].
struct ratio_box {
    const double *col;
    int z0, x0, w;
};
static_assert(SMX_THREADS == 32 * GROUPS, "a block is one warp per group of directions, 32 cells");

// One direction's P_j by smx_path_direction (the grid's edge cells, paths
// wider than FAST_MAX cells, or more than PATH_SMEM directions).
// dmap, tx, S and m.medium are the cell's slot's (a slot is a grid nx columns wide).
__device__ __forceinline__ double direction_sum(const float *dmap, dev_dims d, int nx,
                                                path_scratch_dev ps, int j, int tz, int tx, box4 S,
                                                mass_share_dev m)
{
    return smx_path_direction(dmap + (int64_t)j * d.slice, (int)d.px, &ps.pz[j], &ps.px[j], tz, tx,
                              (int)d.nz, nx, S.z0, S.z1, S.x0, S.x1, m.medium, m.density);
}

// P_j for K directions j0 .. j0 + K - 1 of a cell off the grid's edges whose
// paths span at most N cells per axis: there every offset has one source cell
// (none outside the region), so all the loads are issued first. A source
// outside the region, or a direction past the last, reads as +0.0f, and the
// fractions past a path's end are +0 (path_fast); P + f * v == P for P >= +0
// when f or v is +0, so every term can be added without a branch and each
// P_j has the bits of smx_path_direction (f is its product of the two
// fractions). MASS: each f times its source's smx_path_ratio(rho_t, rho_s)
// first, as smx_path_direction, read from the tile's ratio box rb (1 for a
// source outside the region or past the path's cells: a finite factor of a
// +0 term).
template <int N, int K, bool MASS>
__device__ __forceinline__ void
directions_interior(double (&P)[K], const float *__restrict__ dmap, int64_t plane, int pitch,
                    const path_fast *pf, int j0, int nth, int tz, int tx, box4 S, ratio_box rb)
{
    float v[K][N][N];
    double r[MASS ? K : 1][MASS ? N : 1][MASS ? N : 1];
#pragma unroll
    for (int k = 0; k < K; k++) {
        const path_fast &p = pf[min(j0 + k, nth - 1)];
#pragma unroll
        for (int a = 0; a < N; a++) {
            const int zs = tz - p.zlo - a;
#pragma unroll
            for (int b = 0; b < N; b++) {
                const int xs = tx - p.xlo - b;
                const bool in =
                    j0 + k < nth && zs >= S.z0 && zs <= S.z1 && xs >= S.x0 && xs <= S.x1;
                v[k][a][b] = in ? __ldg(dmap + (j0 + k) * plane + (int64_t)zs * pitch + xs) : 0.0f;
                // Past the path's cells (f = +0) any finite ratio adds +0.
                if constexpr (MASS)
                    r[k][a][b] = in && a < p.zn && b < p.xn
                                     ? rb.col[((zs - tz - rb.z0) * rb.w + xs - tx - rb.x0) * 32]
                                     : 1.0;
            }
        }
    }
#pragma unroll
    for (int k = 0; k < K; k++) {
        const path_fast &p = pf[min(j0 + k, nth - 1)];
        double s = 0.0;
#pragma unroll
        for (int a = 0; a < N; a++)
#pragma unroll
            for (int b = 0; b < N; b++)
                if constexpr (MASS)
                    s = s + (p.f[a][b] * r[k][a][b]) * (double)v[k][a][b];
                else
                    s = s + p.f[a][b] * (double)v[k][a][b];
        P[k] = s;
    }
}

// P[0 .. 7] for directions j0 .. j0 + B - 1 (B <= 8), K at a time
// (directions_interior; +0 past B).
template <int N, int K, bool MASS>
__device__ __forceinline__ void directions_by(double (&P)[8], int B, const float *__restrict__ dmap,
                                              int64_t plane, int pitch, const path_fast *pf, int j0,
                                              int nth, int tz, int tx, box4 S, ratio_box rb)
{
#pragma unroll
    for (int h = 0; h < 8; h += K) {
        double Q[K];
        if (h < B)
            directions_interior<N, K, MASS>(Q, dmap, plane, pitch, pf, j0 + h, nth, tz, tx, S, rb);
#pragma unroll
        for (int k = 0; k < K; k++)
            P[h + k] = h < B ? Q[k] : 0.0;
    }
}

// The step's paths, once: thread j computes direction j's (both axes), then
// the block's extreme offsets and widest span go beside them (path_scratch).
__global__ void path_kernel(path_scratch_dev ps, dev_dims d, stream_tables_dev st,
                            const int64_t *step, int moved, const int *stop)
{
    if (*stop)
        return;
    __shared__ int reach[PATH_REACH];
    const int nth = (int)d.nth, shift = st.scheme == 1;
    const long long n = *step;
    if (threadIdx.x == 0)
        reach[0] = reach[1] = reach[2] = reach[3] = 0, reach[4] = 1;
    __syncthreads();
    for (int j = threadIdx.x; j < nth; j += blockDim.x) {
        smx_path_axis a, b;
        smx_path_of(st.sz[j], n, moved, shift, -0.5, &a);
        smx_path_of(st.sx[j], n, moved, shift, 0.0, &b);
        ps.pz[j] = a;
        ps.px[j] = b;
        path_fast f{ a.lo, a.n, b.lo, b.n, {} };
        for (int u = 0; u < FAST_MAX && u < a.n; u++)
            for (int v = 0; v < FAST_MAX && v < b.n; v++)
                f.f[u][v] = a.f[u] * b.f[v]; // the product smx_path_direction forms
        ps.pf[j] = f;
        atomicMin(&reach[0], a.lo), atomicMax(&reach[1], a.lo + a.n - 1);
        atomicMin(&reach[2], b.lo), atomicMax(&reach[3], b.lo + b.n - 1);
        atomicMax(&reach[4], max(a.n, b.n));
    }
    __syncthreads();
    if (threadIdx.x < PATH_REACH)
        ps.reach[threadIdx.x] = reach[threadIdx.x];
}

// Spots side by side (a.slot_boxes, deposit_path.cuh): the cells a kernel
// visits, slot by slot, in tiles of 32 cells of one slot. src: each slot's
// box that the one pass visited (its map is +0 outside it); cells: that box
// widened by the paths' reach r (z lo, z hi, x lo, x hi offsets), clipped to
// the rows and the slot's columns; pref: the tiles before each slot's. A cell
// outside every slot's box would add +0 to its dose, so the spread's bits are
// those of the union's region, at the cost of the slots' own boxes.
struct slot_cells {
    box4 src[FUSED_SLOTS], cells[FUSED_SLOTS];
    int pref[FUSED_SLOTS + 1];
};

// Fills sc (shared memory) for nslots (<= FUSED_SLOTS) slots; every thread of
// the block calls it (two barriers).
__device__ void slot_cells_fill(slot_cells &sc, const box4 *slot_boxes, int nslots, dev_dims d,
                                int4 r)
{
    const int sw = (int)slot_w(d);
    for (int k = threadIdx.x; k < nslots; k += blockDim.x) {
        const box4 v = slot_visit(slot_boxes, k);
        box4 b = box_empty4();
        if (!box_is_empty(v))
            b = box4{ max(0, v.z0 + r.x), min((int)d.nz - 1, v.z1 + r.y), max(k * sw, v.x0 + r.z),
                      min(k * sw + sw - 1, v.x1 + r.w) };
        sc.src[k] = v;
        sc.cells[k] = b;
        sc.pref[k + 1] =
            box_is_empty(b) ? 0 : (int)(((int64_t)(b.z1 - b.z0 + 1) * (b.x1 - b.x0 + 1) + 31) / 32);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        sc.pref[0] = 0;
        for (int k = 0; k < nslots; k++)
            sc.pref[k + 1] += sc.pref[k];
    }
    __syncthreads();
}

// Cell `lane` of tile `tile` of sc: its slot k, row and column; false past
// the slot's cells.
__device__ __forceinline__ bool slot_cell(const slot_cells &sc, int nslots, int64_t tile, int lane,
                                          int &k, int &z, int &x)
{
    k = slot_of_tile(sc.pref, nslots, tile);
    const box4 b = sc.cells[k];
    const int w = b.x1 - b.x0 + 1;
    const int64_t i = (tile - sc.pref[k]) * 32 + lane;
    if (i >= (int64_t)(b.z1 - b.z0 + 1) * w)
        return false;
    z = b.z0 + (int)(i / w);
    x = b.x0 + (int)(i % w);
    return true;
}

// The pairwise tree over a group's B (a power of two, <= 8) leaves.
__device__ __forceinline__ double group_tree(double (&P)[8], int B)
{
#pragma unroll
    for (int h = 1; h < 8; h *= 2)
#pragma unroll
        for (int k = 0; k + h < 8; k += 2 * h)
            if (k + h < B)
                P[k] = P[k] + P[k + h];
    return P[0];
}

// By capped mass, a tile's ratios once a tile, not once a direction: warp g
// forms every GROUPS-th offset of its lane's box. s_ratio: each source's
// smx_path_ratio to the cell; s_hq: for a held cell, each neighbour's
// 1 - rho_c / rho_t (+0 where it is not lighter: a term that adds +0), the
// neighbour at the mirrored offset (a path's cell). Clamped to the grid: a
// source off it is outside the region and never read.
__device__ __forceinline__ void tile_mass_ratios(double (*s_ratio)[32], double (*s_hq)[32],
                                                 const mass_share_dev &mass,
                                                 const unsigned char *medium, dev_dims d,
                                                 const int *reach, int bh, int bw, int tz, int lx,
                                                 bool live, bool held)
{
    const int lane = threadIdx.x & 31, g = threadIdx.x >> 5;
    const int nz = (int)d.nz, sw = (int)slot_w(d), bz0 = -reach[1], bx0 = -reach[3];
    const double rho_t = live ? mass.density[medium[(int64_t)tz * d.px + lx]] : 0.0;
    for (int o = g; o < bh * bw; o += GROUPS) {
        const int zs = min(max(tz + bz0 + o / bw, 0), nz - 1);
        const int xs = min(max(lx + bx0 + o % bw, 0), sw - 1);
        s_ratio[o][lane] =
            live ? smx_path_ratio(rho_t, mass.density[medium[(int64_t)zs * d.px + xs]]) : 1.0;
        const int zc = min(max(tz + reach[0] + o / bw, 0), nz - 1);
        const int xc = min(max(lx + reach[2] + o % bw, 0), sw - 1);
        const double rho_c = held ? mass.density[medium[(int64_t)zc * d.px + xc]] : 0.0;
        s_hq[o][lane] = held && rho_c < rho_t ? 1.0 - rho_c / rho_t : 0.0;
    }
}

// What a held cell keeps, direction by direction (smx_path_held's terms):
// v_j U_j for this warp's directions j0 .. j1 - 1, U_j the path's weights
// on s_hq, into s_hp for warp 0 to sum in order.
__device__ __forceinline__ void held_direction_terms(double (*s_hp)[32], const double (*s_hq)[32],
                                                     const path_fast *s_pf, const float *dm,
                                                     dev_dims d, const int *reach, int bw, int j0,
                                                     int j1, int tz, int lx)
{
    const int lane = threadIdx.x & 31;
    for (int j = j0; j < j1; j++) {
        const path_fast &p = s_pf[j];
        double U = 0.0;
        for (int a = 0; a < p.zn; a++)
            for (int b = 0; b < p.xn; b++)
                U = U + p.f[a][b] * s_hq[(p.zlo + a - reach[0]) * bw + p.xlo + b - reach[2]][lane];
        s_hp[j][lane] = (double)__ldg(dm + (int64_t)j * d.slice + (int64_t)tz * d.px + lx) * U;
    }
}

// smx_path_cell on tiles of 32 cells: warp g sums the tree of directions g B
// .. (g + 1) B - 1 (B = leaves / GROUPS) for its lane's cell, and the first
// warp joins the GROUPS subtrees, ((s0 + s1) + (s2 + s3)) + ..., the top of
// the same tree.
// MASS: capped mass sharing (mass's medium set), an instantiation of its own
// so that sharing by length keeps its registers. With slots (slot_boxes),
// the cells each slot's own box reaches.
template <bool MASS>
__device__ __forceinline__ void spread_cells(double *dose, const float *__restrict__ dmap,
                                             path_scratch_dev ps, dev_dims d, mass_share_dev mass,
                                             const active_regions *reg, const box4 *slot_boxes,
                                             int nslots, const int *stop)
{
    if (*stop)
        return;
    __shared__ path_fast s_pf[PATH_SMEM];
    __shared__ double s_part[2][GROUPS][32]; // two tiles' subtrees: one barrier per tile
    __shared__ double s_ratio[MASS ? SPREAD_BOX * SPREAD_BOX : 1][32]; // the tile's ratio_box
    // By capped mass, what each held cell keeps (smx_path_held): each
    // neighbour's 1 - rho_c / rho_s (+0 where it is not lighter: a term that
    // adds +0), and each direction's v_j U_j, summed in order by warp 0.
    __shared__ double s_hq[MASS ? SPREAD_BOX * SPREAD_BOX : 1][32];
    __shared__ double s_hp[MASS ? HELD_DIRS : 1][32];
    __shared__ slot_cells sc;
    const int nth = (int)d.nth, nz = (int)d.nz, nx = (int)d.nx, sw = (int)slot_w(d);
    const box4 S = map_region(d, reg);
    if (box_is_empty(S))
        return;
    // The cells the region's paths reach; blocks past them leave at once.
    const int zlo = max(0, S.z0 + ps.reach[0]), zhi = min(nz - 1, S.z1 + ps.reach[1]);
    const int xlo = max(0, S.x0 + ps.reach[2]), xhi = min(nx - 1, S.x1 + ps.reach[3]);
    const int widest = ps.reach[4];
    const int64_t w = xhi - xlo + 1;
    int64_t tiles = ((int64_t)(zhi - zlo + 1) * w + 31) / 32;
    if (slot_boxes) {
        slot_cells_fill(sc, slot_boxes, nslots, d,
                        int4{ ps.reach[0], ps.reach[1], ps.reach[2], ps.reach[3] });
        tiles = sc.pref[nslots];
    }
    if (blockIdx.x >= tiles)
        return;
    // The sources' offsets from a cell: the paths' reach negated.
    const int bz0 = -ps.reach[1], bx0 = -ps.reach[3];
    const int bh = ps.reach[1] - ps.reach[0] + 1, bw = ps.reach[3] - ps.reach[2] + 1;
    const bool fast_ok =
        nth <= PATH_SMEM && widest <= FAST_MAX && (!MASS || (bh <= SPREAD_BOX && bw <= SPREAD_BOX));
    const bool held_ok = MASS && fast_ok && nth <= HELD_DIRS; // else smx_path_held
    if (fast_ok)
        for (int j = threadIdx.x; j < nth; j += blockDim.x)
            s_pf[j] = ps.pf[j];
    __syncthreads();
    const int lane = threadIdx.x & 31, g = threadIdx.x >> 5;
    const int B = smx_path_leaves(nth) / GROUPS, j0 = g * B;
    int buf = 0;
    for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x, buf ^= 1) {
        const int64_t i = tile * 32 + lane; // cells < 2^31 (a slice's)
        int k = 0, tz = zlo + (int)(i / w), tx = xlo + (int)(i % w);
        const bool live = slot_boxes ? slot_cell(sc, nslots, tile, lane, k, tz, tx)
                                     : i < (int64_t)(zhi - zlo + 1) * w;
        if (!live)
            tz = tx = 0;
        // The map's sources: the region, or the cell's slot's box.
        const box4 R = slot_boxes ? sc.src[k] : S;
        // The cell's slot is its grid (physics/grid.h): its column, sources,
        // map and media counted from the slot's first column.
        const int sl = live ? slot_lo(d, tx) : 0, lx = tx - sl;
        const box4 SL{ R.z0, R.z1, max(R.x0, sl) - sl, min(R.x1, sl + sw - 1) - sl };
        const float *dm = dmap + sl;
        mass_share_dev ml = mass;
        if (MASS)
            ml.medium = mass.medium + sl;
        const bool fast = fast_ok && tz > 0 && tz < nz - 1 && lx > 0 && lx < sw - 1;
        // A held cell: in the map's region, or in its slot's own box.
        const bool held = MASS && live && tz >= R.z0 && tz <= R.z1 && tx >= R.x0 && tx <= R.x1;
        ratio_box rb{ nullptr, 0, 0, 0 };
        if (MASS && fast_ok) {
            tile_mass_ratios(s_ratio, s_hq, mass, ml.medium, d, ps.reach, bh, bw, tz, lx, live,
                             held);
            __syncthreads();
            rb = ratio_box{ &s_ratio[0][lane], bz0, bx0, bw };
        }
        double part = 0.0;
        if (live && fast && B <= 8) {
            // By capped mass each source's ratio is a double held beside its
            // value: fewer directions at a time keep the instance at two
            // blocks a SM (eight at once took 204 registers).
            double P[8];
            if (widest <= 2)
                directions_by<2, MASS ? 4 : 8, MASS>(P, B, dm, d.slice, (int)d.px, s_pf, j0,
                                                     min(nth, j0 + B), tz, lx, SL, rb);
            else
                directions_by<3, MASS ? 2 : 4, MASS>(P, B, dm, d.slice, (int)d.px, s_pf, j0,
                                                     min(nth, j0 + B), tz, lx, SL, rb);
            part = group_tree(P, B);
        } else if (live) {
            smx_path_tree t;
            t.top = t.count = 0;
            for (int k = 0; k < B; k++)
                smx_path_tree_push(
                    &t, j0 + k < nth ? direction_sum(dm, d, sw, ps, j0 + k, tz, lx, SL, ml) : 0.0);
            part = t.v[0];
        }
        if (held_ok && held) // this warp's directions' v_j U_j
            held_direction_terms(s_hp, s_hq, s_pf, dm, d, ps.reach, bw, j0, min(nth, j0 + B), tz,
                                 lx);
        s_part[buf][g][lane] = part;
        __syncthreads();
        if (g == 0 && live) {
            const double(&p)[GROUPS][32] = s_part[buf];
            const double T = ((p[0][lane] + p[1][lane]) + (p[2][lane] + p[3][lane])) +
                             ((p[4][lane] + p[5][lane]) + (p[6][lane] + p[7][lane]));
            double *c = dose + (int64_t)tz * d.px + tx;
            // The held rest first, as its own pass added it before the spread.
            if (held_ok && held) {
                double rest = 0.0;
                for (int j = 0; j < nth; j++)
                    rest = rest + s_hp[j][lane];
                *c = *c + rest;
            } else if (MASS && held) {
                *c = smx_path_held(*c, dm, d.slice, (int)d.px, nth, ps.pz, ps.px, tz, lx, nz, sw,
                                   ml.medium, mass.density);
            }
            *c = *c + T;
        }
    }
}

// Sharing by length, and by capped mass: the mass instance holds each
// source's ratio beside its value, and two of its blocks a SM (at most 128
// registers a thread, no spills) step faster than one of 204 registers.
__global__ void deposit_spread_length(double *dose, const float *__restrict__ dmap,
                                      path_scratch_dev ps, dev_dims d, mass_share_dev mass,
                                      const active_regions *reg, const box4 *slot_boxes, int nslots,
                                      const int *stop)
{
    spread_cells<false>(dose, dmap, ps, d, mass, reg, slot_boxes, nslots, stop);
}
__global__ void __launch_bounds__(SMX_THREADS, 2)
    deposit_spread_mass(double *dose, const float *__restrict__ dmap, path_scratch_dev ps,
                        dev_dims d, mass_share_dev mass, const active_regions *reg,
                        const box4 *slot_boxes, int nslots, const int *stop)
{
    spread_cells<true>(dose, dmap, ps, d, mass, reg, slot_boxes, nslots, stop);
}

} // namespace

cudaError_t deposit_spread(const spread_args &a, cudaStream_t s)
{
    double *dose = a.dose;
    const float *dmap = a.dmap;
    const path_scratch_dev ps = a.ps;
    const dev_dims d = a.d;
    const mass_share_dev mass = a.mass;
    const active_regions *reg = a.reg;
    const int *stop = a.stop;
    const int blocks = a.blocks;
    path_kernel<<<1, SMX_THREADS, 0, s>>>(ps, d, a.st, a.step, a.moved, stop);
    // Each slot's own box where the one pass visited those (spread_of: null
    // otherwise).
    const box4 *sb = a.slot_boxes;
    const int ns = a.nslots;
    if (mass.medium)
        deposit_spread_mass<<<blocks, SMX_THREADS, 0, s>>>(dose, dmap, ps, d, mass, reg, sb, ns,
                                                           stop);
    else
        deposit_spread_length<<<blocks, SMX_THREADS, 0, s>>>(dose, dmap, ps, d, mass, reg, sb, ns,
                                                             stop);
    return cudaGetLastError();
}
