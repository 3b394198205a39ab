/* The CPU reference operators (OpenMP): the oracle for the CUDA kernels.
 *
 * Work follows the occupied region: each energy bin carries a box (z and x
 * ranges) outside which its psi is exactly zero, and every operator loops over
 * boxes only. Boxes are re-tightened to the non-zero extent after each step.
 * A_theta and A_E work in place (A_E walks energy upwards: every source lies at
 * or above its targets); A_stream ping-pongs between two buffers.
 * Reductions are formed per work unit and summed in a fixed order, so results
 * do not depend on the thread count. */
#include <math.h>
#include <omp.h>
#include <string.h>

#include "numerics/direction_chunks.h"
#include "numerics/fma_rows.h"
#include "transport/backend_cpu_internal.h"

/* Units (ie, z) over the boxes of `boxes`, in a fixed order. */
static int64_t build_units(cpu_ctx *c, const box *boxes)
{
    int64_t n = 0;
    for (int ie = 0; ie < c->g->ne; ie++) {
        if (box_empty(boxes[ie]))
            continue;
        for (int z = boxes[ie].z0; z <= boxes[ie].z1; z++)
            c->units[n++] = (unit){ ie, z };
    }
    return n;
}

static void sum_partials(const cpu_ctx *c, int64_t n, step_tally *t)
{
    for (int64_t u = 0; u < n; u++)
        tally_add(t, &c->partial[u]);
}

/* ---- A_theta: convolution over direction, per energy bin's kernel --------- */
/* One run of A_theta: nxb cells from x0 on row z of energy bin ie, kernel kid,
 * psi's rows in base (one component), their copy in in. */
typedef struct theta_run {
    int ie, z, x0, nxb, kid;
    float *base;
    const float *in;
} theta_run;

/* Bins of unequal width (grid.angle.spacing: beam): each source bin j has its
 * own kernel (physics/lut_angle.h), scattered onto its targets inside the
 * window in the order of j; what lands past the edges is tallied. One run of
 * nxb cells, its source rows in `in`, psi's rows in `base`. */
static void theta_mapped_run(const cpu_ctx *c, const angle_kernels *ak, const theta_run *r)
{
    const grid *g = c->g;
    const int nth = (int)g->nth;
    const int kid = r->kid, ie = r->ie, z = r->z, x0 = r->x0, nxb = r->nxb;
    float *base = r->base;
    const float *in = r->in;
    for (int j = 0; j < nth; j++) {
        float *out = plane(c, base, ie, j) + (int64_t)z * g->nx + x0;
        for (int x = 0; x < nxb; x++)
            out[x] = 0.0f;
    }
    for (int j = 0; j < nth; j++) {
        const size_t kj = (size_t)kid * nth + j;
        const int lo = ak->src_lo[kj], len = ak->src_len[kj];
        const float *w = ak->src_weights + ak->src_off[kj];
        for (int i = lo < 0 ? -lo : 0; i < len && lo + i < nth; i++)
            rows_fma(plane(c, base, ie, lo + i) + (int64_t)z * g->nx + x0, in + (size_t)j * nxb,
                     w[i], nxb);
    }
}

/* One value of a row: dropped by the early exit where below thr (the GPU's
 * test, in float; with thr 0 nothing is), its share of the row's dropped and
 * kept sums added. A kept value adds +0 to the dropped sum and a dropped one
 * +0 to the kept sum, which leaves them as they were (sums of values >= 0). */
static inline void tally_value(float *v, float thr, double *drop, double *kept)
{
    const float a = *v;
    const int below = a < thr;
    *drop += below ? a : 0.0f;
    *v = below ? 0.0f : a;
    *kept += *v;
}

/* Rows 0 .. nr - 1 (nr <= 4) of n values each, from v (row r at v + r n):
 * each value below thr becomes 0 (the early exit), and per row the sum of
 * those dropped and then of those kept, each over x ascending in double.
 * Four rows share one loop so that their eight chains of dependent adds
 * overlap; each chain's operations are those of one row at a time. */
static void row_tallies(float *v, int nr, int n, float thr, double drop[4], double kept[4])
{
    for (int r = 0; r < 4; r++)
        drop[r] = kept[r] = 0.0;
    if (nr == 4) {
        float *v1 = v + n, *v2 = v1 + n, *v3 = v2 + n;
        double d0 = 0.0, d1 = 0.0, d2 = 0.0, d3 = 0.0, k0 = 0.0, k1 = 0.0, k2 = 0.0, k3 = 0.0;
        for (int x = 0; x < n; x++) {
            tally_value(v + x, thr, &d0, &k0);
            tally_value(v1 + x, thr, &d1, &k1);
            tally_value(v2 + x, thr, &d2, &k2);
            tally_value(v3 + x, thr, &d3, &k3);
        }
        drop[0] = d0, drop[1] = d1, drop[2] = d2, drop[3] = d3;
        kept[0] = k0, kept[1] = k1, kept[2] = k2, kept[3] = k3;
        return;
    }
    for (int r = 0; r < nr; r++)
        for (int x = 0; x < n; x++)
            tally_value(v + (size_t)r * n + x, thr, &drop[r], &kept[r]);
}

/* W[x0..x1] += each x's chunk sum (numerics/direction_chunks.h's
 * smx_chunk_tree), one pass over the chunk's rows; the tree written out, so
 * that it stays in registers (the loops of smx_chunk_tree went through
 * memory: 8 % of a per-spot run's time). */
static void chunk_rows_add(double *restrict W, const float *const *rows, int chunk, int x0, int x1)
{
    if (chunk == 4) {
        for (int x = x0; x <= x1; x++) {
            const double t[4] = { rows[0][x], rows[1][x], rows[2][x], rows[3][x] };
            W[x] += smx_chunk_tree4(t);
        }
        return;
    }
    for (int x = x0; x <= x1; x++) {
        const double t[8] = { rows[0][x], rows[1][x], rows[2][x], rows[3][x],
                              rows[4][x], rows[5][x], rows[6][x], rows[7][x] };
        W[x] += smx_chunk_tree8(t);
    }
}

/* W[0 .. n) = each cell's sum over its directions, in the spectral tallies'
 * order (numerics/direction_chunks.h): direction j's row of n cells starts
 * at row0 + j stride (A_theta's copy of a run, or a row of psi's planes). */
static void direction_sums(const cpu_ctx *c, const float *row0, int64_t stride, int n, double *W)
{
    const int nth = (int)c->g->nth, chunk = smx_direction_chunk(nth);
    for (int x = 0; x < n; x++)
        W[x] = 0.0;
    for (int j0 = 0; j0 < nth; j0 += chunk) {
        const float *rows[SMX_DIRECTION_CHUNK_MAX];
        for (int m = 0; m < SMX_DIRECTION_CHUNK_MAX; m++) /* past the last: zeros */
            rows[m] = j0 + m < nth ? row0 + (j0 + m) * stride : c->zero_row;
        chunk_rows_add(W, rows, chunk, 0, n - 1);
    }
}

/* Each run of one medium along the row convolves with that medium's kernel;
 * the values below the early exit's threshold are dropped first. */
void cpu_op_theta(cpu_ctx *c, step_tally *t)
{
    const grid *g = c->g;
    const angle_kernels *ak = &c->s->ak;
    const int nth = (int)g->nth, circular = g->angle_mode == ANGLE_FULL;
    const float thr = c->threshold;
    int64_t n = build_units(c, c->box_cur);
#pragma omp parallel for schedule(dynamic, 4)
    for (int64_t u = 0; u < n; u++) {
        int ie = c->units[u].ie, z = c->units[u].z;
        box b = c->box_cur[ie];
        float *in = c->scratch + (size_t)omp_get_thread_num() * nth * g->nx;
        step_tally *pt = &c->partial[u];
        tally_clear(pt);
        double lost = 0.0, cut = 0.0, dropped = 0.0;
        /* The moments move with the weight: the same kernel on every component. */
        for (int k = 0; k < c->ncomp; k++)
            for (int r = c->run_start[z]; r < c->run_start[z + 1]; r++) {
                int x0, x1;
                if (!run_clip(c, r, b.x0, b.x1, &x0, &x1))
                    continue;
                int nxb = x1 - x0 + 1;
                int kid = sim_kernel_of(c->s, c->run_m[r], ie), K = ak->half_width[kid];
                const float *w = ak->per_source ? NULL : ak->weights + ak->offset[kid] + K;
                const double *bfrac = c->s->boundary_frac + (size_t)kid * nth;
                double total = 0.0, run_lost = 0.0, run_cut = 0.0;
                float *base = comp(c, c->cur, k);
                for (int j = 0; j < nth; j++)
                    memcpy(in + (size_t)j * nxb, plane(c, base, ie, j) + (int64_t)z * g->nx + x0,
                           nxb * sizeof *in);
                if (!k && c->spec_in_theta) /* the psi the step starts from, before the drop */
                    direction_sums(c, in, nxb, nxb, c->spec_w + c->spec_woff[u] + (x0 - b.x0));
                for (int j0 = 0; j0 < nth && !k; j0 += 4) {
                    const int nr = nth - j0 < 4 ? nth - j0 : 4;
                    double drop[4], kept[4];
                    row_tallies(in + (size_t)j0 * nxb, nr, nxb, thr, drop, kept);
                    for (int r = 0; r < nr; r++) {
                        const int j = j0 + r;
                        if (thr > 0.0f)
                            dropped += drop[r];
                        total += kept[r];
                        run_lost += kept[r] * bfrac[j];
                        if (ak->per_source)
                            run_cut += kept[r] * (1.0 - ak->src_sum[(size_t)kid * nth + j]);
                    }
                }
                if (ak->per_source) {
                    const theta_run tr = { ie, z, x0, nxb, kid, base, in };
                    theta_mapped_run(c, ak, &tr);
                    if (!k) {
                        lost += run_lost;
                        cut += run_cut;
                    }
                    continue;
                }
                for (int j = 0; j < nth; j++) {
                    float *out = plane(c, base, ie, j) + (int64_t)z * g->nx + x0;
                    int first = 1; /* the sum starts at its first term, not at zeros */
                    for (int d = -K; d <= K; d++) {
                        int src = j - d;
                        if (circular)
                            src = ((src % nth) + nth) % nth;
                        else if (src < 0 || src >= nth)
                            continue;
                        if (first)
                            rows_mul(out, in + (size_t)src * nxb, w[d], nxb);
                        else
                            rows_fma(out, in + (size_t)src * nxb, w[d], nxb);
                        first = 0;
                    }
                    if (first)
                        memset(out, 0, (size_t)nxb * sizeof *out);
                }
                if (k)
                    continue;
                lost += run_lost;
                cut += total * (1.0 - ak->weight_sum[kid]);
            }
        double E = g->E.centres[ie];
        pt->weight[CH_THETA_BOUNDARY] = lost;
        pt->energy[CH_THETA_BOUNDARY] = lost * E;
        pt->weight[CH_THETA_CUTOFF] = cut + dropped;
        pt->energy[CH_THETA_CUTOFF] = (cut + dropped) * E;
    }
    sum_partials(c, n, t);
}

/* ---- the deposit's spread along each direction's path (deposit_path.h) ---- */
/* Under the moments scheme each cell's path starts at its own deposit-weighted
 * moments (smx_mpath_*), otherwise at its direction's remainder (smx_path_*).
 * A cell's slot is its grid (physics/grid.h): its column, the sources, the
 * map and the media are counted from the slot's first column. */
static void cpu_deposit_spread(cpu_ctx *c, box all)
{
    const grid *g = c->g;
    const int nth = (int)g->nth;
    if (box_empty(all))
        return;
    const double *rho = c->mass_density;
    const uint8_t *cell = rho ? c->s->mm->cell : NULL;
    const double *sz = c->s->st.sz, *sx = c->s->st.sx;
    const smx_mpath_maps maps = { c->dmap, c->dmz, c->dmx, c->dqx };
    const int sw = (int)grid_slot_nx(g), nz = (int)g->nz, pitch = (int)g->nx;
    if (rho) { /* sharing by capped mass: what each held cell keeps, first */
#pragma omp parallel for schedule(dynamic, 2)
        for (int z = all.z0; z <= all.z1; z++)
            for (int x = all.x0; x <= all.x1; x++) {
                const int sl = grid_slot_lo(g, x);
                double *d = &c->dose[(int64_t)z * g->nx + x];
                *d = c->moments ? smx_mpath_held(*d, &maps, sl, g->slice, pitch, nth, sz, sx, z,
                                                 x - sl, nz, sw, cell + sl, rho)
                                : smx_path_held(*d, c->dmap + sl, g->slice, pitch, nth, c->path_z,
                                                c->path_x, z, x - sl, nz, sw, cell + sl, rho);
            }
    }
    int zlo, zhi, xlo, xhi;
    if (c->moments) {
        smx_mpath_reach(sz, nth, 0, all.z0, all.z1, nz, &zlo, &zhi);
        smx_mpath_reach(sx, nth, 1, all.x0, all.x1, pitch, &xlo, &xhi);
    } else {
        smx_path_reach(c->path_z, nth, all.z0, all.z1, nz, &zlo, &zhi);
        smx_path_reach(c->path_x, nth, all.x0, all.x1, pitch, &xlo, &xhi);
    }
    /* Cells off every edge go SMX_PATH_LANES at a time where the map's
     * sharing is by length (smx_path_cells_interior; 64 leaves at most). */
    const int lanes = !rho && !c->moments && smx_path_leaves(nth) <= 64;
#pragma omp parallel for schedule(dynamic, 2)
    for (int tz = zlo; tz <= zhi; tz++) {
        double *drow = c->dose + (int64_t)tz * g->nx;
        for (int tx = xlo; tx <= xhi; tx++) {
            const int sl = grid_slot_lo(g, tx);
            const int x0 = all.x0 > sl ? all.x0 - sl : 0;
            const int x1 = all.x1 < sl + sw - 1 ? all.x1 - sl : sw - 1;
            const uint8_t *m = cell ? cell + sl : NULL;
            const int lx = tx - sl;
            if (lanes && tz > 0 && tz < nz - 1 && lx > 0 && lx + SMX_PATH_LANES < sw &&
                tx + SMX_PATH_LANES - 1 <= xhi) {
                const smx_path_view v = { c->dmap + sl, g->slice, pitch,  nth, c->path_z,
                                          c->path_x,    all.z0,   all.z1, x0,  x1 };
                smx_path_cells_interior(&v, drow + tx, tz, lx);
                tx += SMX_PATH_LANES - 1;
                continue;
            }
            drow[tx] =
                c->moments
                    ? smx_mpath_cell(drow[tx], &maps, sl, g->slice, pitch, nth, sz, sx, tz, tx - sl,
                                     nz, sw, all.z0, all.z1, x0, x1, m, rho)
                    : smx_path_cell(drow[tx], c->dmap + sl, g->slice, pitch, nth, c->path_z,
                                    c->path_x, tz, tx - sl, nz, sw, all.z0, all.z1, x0, x1, m, rho);
        }
    }
}

/* ---- A_E: deposit, then move weight down in energy ------------------------ */
void cpu_step_tables(cpu_ctx *c, int64_t step)
{
    const sim_tables *s = c->s;
    for (int m = 1; m < s->n_media && !c->moments; m++) /* moments: per cell */
        for (int ie = 0; ie < c->g->ne; ie++)
            c->lower[(int64_t)m * c->g->ne + ie] =
                (uint8_t)energy_dither_low(sim_dither(s, m), (int)ie, step);
}

/* Weight v of source bin ie (centre Ei) moved by table el: what leaves psi
 * with it, stopped or removed by non-elastic interactions. */
static inline void tally_table(step_tally *pt, const energy_lut *el, int ie, double v, double Ei)
{
    if (el->target[ie] < 0) {
        pt->weight[CH_ENERGY_STOPPED] += v;
        pt->energy[CH_ENERGY_STOPPED] += v * Ei;
    } else if (el->nuclear_weight[ie] != 0.0) {
        pt->weight[CH_NUCLEAR] += v * el->nuclear_weight[ie];
        pt->energy[CH_NUCLEAR] += v * el->nuclear_energy[ie];
    }
}

/* A run of one medium m along row z of direction j: cells x0 .. x1. */
typedef struct cell_run {
    int j, z, x0, x1, m;
} cell_run;

/* The moments scheme's deposit of source bin ie along run u, from its
 * cells' weights (w) and the energy's stored moments (me, qe), into D (the
 * run's cells of the direction's deposit row): each cell deposits the mean
 * table's loss at its particles' mean energy, to first order in their
 * offset e (moments.h): D = fma(dep, w, D), then fma(slope, w e, D). Its
 * weight moves by the tables its strip's parts take (in a medium other than
 * the reference); what their loss differs from the deposit by is tallied
 * (CH_MEDIUM_ROUNDING), so the balance, counted at the bins' centres,
 * closes. */
static void cpu_deposit_moments(const cpu_ctx *c, step_tally *pt, double *D, const cell_run *u,
                                int ie)
{
    const sim_tables *s = c->s;
    const grid *g = c->g;
    const int m = u->m;
    const int64_t n = u->x1 - u->x0 + 1;
    const float *w = plane(c, c->cur, ie, u->j) + (int64_t)u->z * g->nx + u->x0;
    const int64_t o = w - c->cur;
    const float *me = comp(c, c->cur, 4) + o, *qe = comp(c, c->cur, 5) + o;
    const energy_lut *mean = sim_energy_lut(s, m);
    const energy_dither_lut *d = m ? sim_dither(s, m) : NULL;
    const double dep = mean->deposit_MeV[ie], Ei = g->E.centres[ie];
    const double slope =
        smx_emom_slope(mean->deposit_MeV, mean->target, g->E.centres, (int)g->ne, ie);
    for (int64_t x = 0; x < n; x++) {
        if (w[x] == 0.0f)
            continue;
        const double v = (double)w[x], ew = (double)me[x] - SMX_MOM_ESHIFT * v;
        D[x] = fma(dep, v, D[x]);
        D[x] = fma(slope, ew, D[x]);
        smx_emom_parts pa = { { 1.0, 0.0 }, { 0.0, 0.0 }, { 0.0, 0.0 } };
        if (d)
            smx_emom_split(me[x], qe[x], w[x], d->p_low[ie], &pa);
        pt->energy[CH_MEDIUM_ROUNDING] -= slope * ew;
        for (int k = 0; k < 2; k++) {
            if (pa.f[k] == 0.0)
                continue;
            const energy_lut *el = !d ? mean : k ? &d->upper : &d->lower;
            const double vk = v * pa.f[k];
            pt->energy[CH_MEDIUM_ROUNDING] += vk * (el->deposit_MeV[ie] - dep);
            tally_table(pt, el, ie, vk, Ei);
        }
    }
}

/* The moments scheme's A_E for target bin t along run u (its medium m != 0),
 * in place: every (source, table) pair that can reach t, sources ascending,
 * takes the part of the source cell's energy strip that the table's side
 * holds (moments.h,
 * smx_emom_split): its weight and position moments (the share of each,
 * rounded once) and its energy moments from its new centre, each times the
 * pair's coefficient. The first term rounded once, every further one an fma
 * (the order of the reference's gather). All components of a target are
 * summed before any is written: a source may be the target itself. */
static void cpu_energy_moments_run(const cpu_ctx *c, const cell_run *u, int t)
{
    const grid *g = c->g;
    const int j = u->j, z = u->z, x0 = u->x0, x1 = u->x1, m = u->m;
    const energy_dither_lut *dl = sim_dither(c->s, m);
    const int64_t zo = (int64_t)z * g->nx, cells = g->cells;
    float *cw = c->cur;
    for (int x = x0; x <= x1; x++) {
        float a[SMX_MOM_COMPONENTS] = { 0.0f };
        int first = 1;
        for (int k = dl->cand_start[t]; k < dl->cand_start[t + 1]; k++) {
            const energy_candidate *e = &dl->cand[k];
            const int64_t o = psi_index(g, e->src, j, 0, 0) + zo + x;
            const float w = cw[o];
            if (w == 0.0f)
                continue;
            smx_emom_parts pa;
            smx_emom_split(cw[4 * cells + o], cw[5 * cells + o], w, dl->p_low[e->src], &pa);
            const int u = e->upper;
            if (pa.f[u] == 0.0)
                continue; /* the other table's term */
            float v[SMX_MOM_COMPONENTS];
            for (int q = 0; q < 4; q++)
                v[q] = pa.f[u] == 1.0 ? cw[q * cells + o]
                                      : (float)((double)cw[q * cells + o] * pa.f[u]);
            v[4] = smx_mom_store(v[0], pa.m[u], SMX_MOM_ESHIFT);
            v[5] = (float)((double)v[0] * pa.q[u]);
            for (int q = 0; q < SMX_MOM_COMPONENTS; q++)
                a[q] = first ? e->coeff * v[q] : fmaf(e->coeff, v[q], a[q]);
            first = 0;
        }
        const int64_t o = psi_index(g, t, j, 0, 0) + zo + x;
        for (int q = 0; q < SMX_MOM_COMPONENTS; q++)
            cw[q * cells + o] = a[q];
    }
}

/* A_E's gather on row z, columns x0..x1: dst = c0 s (gather_first), then
 * dst = fma(c, s, dst) for each further source (gather_term). Each source is
 * read only inside its box bs, where it may hold values: elsewhere it is
 * zero, so the first term is c0 0 and a further one adds +0 to dst >= 0,
 * the same bits. A page a source never wrote is then not read, which would
 * map it to the shared zero page and make its first write a copy that
 * flushes every other core's TLB. */
typedef struct gather_row {
    float *dst; /* the target's row z */
    int z, x0, x1;
} gather_row;
static void gather_first(const gather_row *r, const float *s, float c0, box bs)
{
    const float zero = c0 * 0.0f;
    int a0 = r->x1 + 1, a1 = r->x1;
    box_row(bs, r->z, r->x0, r->x1, &a0, &a1);
    for (int x = r->x0; x < a0; x++)
        r->dst[x] = zero;
    for (int x = a0; x <= a1; x++)
        r->dst[x] = c0 * s[x];
    for (int x = a1 + 1; x <= r->x1; x++)
        r->dst[x] = zero;
}
static void gather_term(const gather_row *r, const float *s, float c, box bs)
{
    int a0, a1;
    if (box_row(bs, r->z, r->x0, r->x1, &a0, &a1))
        rows_fma(r->dst + a0, s + a0, c, a1 - a0 + 1);
}

/* One (direction, z row) of A_E: its tallies and the deposit's rows in
 * double (the map's, and the moments scheme's beside it), this thread's. */
typedef struct energy_unit {
    int j, z;
    step_tally *pt;
    double *D, *Dz, *Dx, *Dq;
} energy_unit;

/* The unit's deposit of source bin ie: each run of one medium along the row,
 * the mean loss (the step's table moves psi), its tallies. */
static void deposit_bin(const cpu_ctx *c, const energy_unit *eu, int ie)
{
    const sim_tables *s = c->s;
    const grid *g = c->g;
    const int j = eu->j, z = eu->z;
    box b = c->box_cur[ie];
    if (box_empty(b) || z < b.z0 || z > b.z1)
        return;
    const float *row = plane(c, c->cur, ie, j) + (int64_t)z * g->nx;
    for (int r = c->run_start[z]; r < c->run_start[z + 1]; r++) {
        int x0, x1;
        if (!run_clip(c, r, b.x0, b.x1, &x0, &x1))
            continue;
        /* The dose takes the mean loss; psi moves by the step's table. */
        const energy_lut *mean = sim_energy_lut(s, c->run_m[r]);
        const double dep = mean->deposit_MeV[ie];
        if (c->moments) {
            const int64_t o = row - c->cur + x0;
            const cell_run run = { j, z, x0, x1, c->run_m[r] };
            cpu_deposit_moments(c, eu->pt, eu->D + x0, &run, ie);
            rows_fma_f64_sum(eu->Dz + x0, comp(c, c->cur, 1) + o, dep, x1 - x0 + 1);
            rows_fma_f64_sum(eu->Dx + x0, comp(c, c->cur, 2) + o, dep, x1 - x0 + 1);
            rows_fma_f64_sum(eu->Dq + x0, comp(c, c->cur, 3) + o, dep, x1 - x0 + 1);
            continue;
        }
        const energy_lut *el = cpu_step_lut(c, c->run_m[r], ie);
        const double wsum = rows_fma_f64_sum(eu->D + x0, row + x0, dep, x1 - x0 + 1);
        if (el != mean)
            eu->pt->energy[CH_MEDIUM_ROUNDING] += wsum * (el->deposit_MeV[ie] - dep);
        tally_table(eu->pt, el, ie, wsum, g->E.centres[ie]);
    }
}

/* Unit u of the rows `all` (direction u / rows): its tallies cleared and
 * its deposit rows zeroed. */
static energy_unit deposit_begin(cpu_ctx *c, int64_t u, box all)
{
    const grid *g = c->g;
    const int64_t nrows = all.z1 - all.z0 + 1;
    double *D = c->dep_row + (int64_t)omp_get_thread_num() * 4 * g->nx;
    const energy_unit eu = { (int)(u / nrows), all.z0 + (int)(u % nrows),
                             &c->partial[u],   D,
                             D + g->nx,        D + 2 * g->nx,
                             D + 3 * g->nx };
    tally_clear(eu.pt);
    for (int x = all.x0; x <= all.x1; x++)
        eu.D[x] = eu.Dz[x] = eu.Dx[x] = eu.Dq[x] = 0.0;
    return eu;
}

/* The unit's deposit into the map (and the moments' maps), in float. */
static void deposit_end(cpu_ctx *c, const energy_unit *eu, box all)
{
    const grid *g = c->g;
    const int64_t mo = (int64_t)eu->j * g->slice + (int64_t)eu->z * g->nx;
    float *m = c->dmap + mo;
    for (int x = all.x0; x <= all.x1; x++) {
        m[x] = (float)eu->D[x];
        eu->pt->deposited += eu->D[x];
    }
    if (c->moments)
        for (int x = all.x0; x <= all.x1; x++) {
            c->dmz[mo + x] = (float)eu->Dz[x];
            c->dmx[mo + x] = (float)eu->Dx[x];
            c->dqx[mo + x] = (float)eu->Dq[x];
        }
}

/* New boxes: a target's box is the union of its sources', over every
 * medium's table (a bin's weight may sit in any of them). */
static void energy_boxes(cpu_ctx *c)
{
    const sim_tables *s = c->s;
    const int ne = (int)c->g->ne;
    for (int ie = 0; ie < ne; ie++)
        c->box_next[ie] = BOX_EMPTY;
    for (int m = 0; m < s->n_media; m++) {
        for (int ie = 0; ie < ne; ie++) {
            /* Moments: each cell chooses, so both whole-bin tables. */
            for (int u = 0; u < (c->moments && m ? 2 : 1); u++) {
                const energy_lut *el = !(c->moments && m) ? cpu_step_lut(c, m, ie)
                                       : u                ? &sim_dither(s, m)->upper
                                                          : &sim_dither(s, m)->lower;
                int tg = el->target[ie];
                if (tg < 0 || box_empty(c->box_cur[ie]))
                    continue;
                for (int k = 0; k < ENERGY_TARGETS; k++)
                    if (el->coeff[ie][k] != 0.0f)
                        c->box_next[tg - 1 + k] =
                            box_union(c->box_next[tg - 1 + k], c->box_cur[ie]);
            }
        }
    }
}

/* Target bin ie of row z, direction j, in place (gather, the default) or
 * source bin ie consumed into its targets (backend.energy: scatter). In a
 * medium other than the reference the gather walks every (source, table)
 * pair that can reach the target and uses those whose table the step chose.
 * The moments move with the weight: the same coefficients in the reference
 * medium; in another, each cell's energy moment chooses
 * (cpu_energy_moments_run, all components at once, as a gather). Every
 * source lies at or above its targets (lut_energy.h): walking a row's bins
 * ascending reads only unmodified sources. */
static void move_bin(const cpu_ctx *c, int j, int z, int ie)
{
    const sim_tables *s = c->s;
    const grid *g = c->g;
    const int ne = (int)g->ne, gather = s->energy_gather;
    for (int k = 0; k < c->ncomp; k++) {
        float *cb = comp(c, c->cur, k);
        box oldb = c->box_cur[ie], newb = c->box_next[ie];
        box reg = gather || c->moments ? box_union(oldb, newb) : oldb;
        if (box_empty(reg) || z < reg.z0 || z > reg.z1)
            continue;
        for (int r = c->run_start[z]; r < c->run_start[z + 1]; r++) {
            int x0, x1, m = c->run_m[r];
            if (c->moments && m) {
                if (k == 0 && run_clip(c, r, reg.x0, reg.x1, &x0, &x1))
                    cpu_energy_moments_run(c, &(cell_run){ j, z, x0, x1, m }, ie);
                continue;
            }
            const box rg = gather ? reg : oldb;
            if (box_empty(rg) || z < rg.z0 || z > rg.z1 || !run_clip(c, r, rg.x0, rg.x1, &x0, &x1))
                continue;
            float *dst = plane(c, cb, ie, j) + (int64_t)z * g->nx;
            if (gather && m == 0) {
                const energy_gather_entry *e = &s->el.gather[ie];
                if (e->count == 0) {
                    for (int x = x0; x <= x1; x++)
                        dst[x] = 0.0f;
                } else {
                    /* The first term rounded once (c0 s0), every further one an fma,
                     * sources ascending: the order of the scatter form and the GPU's. */
                    const gather_row gr = { dst, z, x0, x1 };
                    gather_first(&gr, plane(c, cb, e->src[0], j) + (int64_t)z * g->nx, e->coeff[0],
                                 c->box_cur[e->src[0]]);
                    for (int q = 1; q < e->count; q++)
                        gather_term(&gr, plane(c, cb, e->src[q], j) + (int64_t)z * g->nx,
                                    e->coeff[q], c->box_cur[e->src[q]]);
                }
            } else if (gather) {
                const energy_dither_lut *dl = sim_dither(s, m);
                const uint8_t *low = c->lower + (int64_t)m * ne;
                const gather_row gr = { dst, z, x0, x1 };
                int first = 1;
                for (int q = dl->cand_start[ie]; q < dl->cand_start[ie + 1]; q++) {
                    const energy_candidate *e = &dl->cand[q];
                    if (low[e->src] == e->upper)
                        continue; /* the other table's term */
                    const float *sk = plane(c, cb, e->src, j) + (int64_t)z * g->nx;
                    if (first)
                        gather_first(&gr, sk, e->coeff, c->box_cur[e->src]);
                    else
                        gather_term(&gr, sk, e->coeff, c->box_cur[e->src]);
                    first = 0;
                }
                if (first)
                    for (int x = x0; x <= x1; x++)
                        dst[x] = 0.0f;
            } else {
                /* Scatter: consume source ie, add into targets at or below it.
                 * A target equal to the source (the upward side of
                 * straggling) receives after the source is read. */
                const energy_lut *el = cpu_step_lut(c, m, ie);
                int tg = el->target[ie];
                float *tk[ENERGY_TARGETS] = { NULL };
                if (tg >= 0)
                    for (int q = 0; q < ENERGY_TARGETS; q++)
                        if (el->coeff[ie][q] != 0.0f)
                            tk[q] = plane(c, cb, tg - 1 + q, j) + (int64_t)z * g->nx;
                for (int x = x0; x <= x1; x++) {
                    float v = dst[x];
                    dst[x] = 0.0f;
                    for (int q = 0; q < ENERGY_TARGETS; q++)
                        if (tk[q])
                            tk[q][x] = fmaf(el->coeff[ie][q], v, tk[q][x]);
                }
            }
        }
    }
}

/* Every run of one medium along a row steps with that medium's table. The
 * deposit goes per direction into the map, summed over the source bins in
 * the order of deposit_path.h, then psi moves; one (direction, z row) per
 * unit, bins ascending. Outside the moments scheme each bin's deposit is
 * taken just before its row is written: a source's row is read once from
 * memory for both (its deposit reads it before any target overwrites it,
 * as the two passes did), with the same bits. */
void cpu_op_energy(cpu_ctx *c, step_tally *t)
{
    const sim_tables *s = c->s;
    const grid *g = c->g;
    const int ne = (int)g->ne, nth = (int)g->nth;
    box all = BOX_EMPTY;
    for (int ie = 0; ie < ne; ie++)
        all = box_union(all, c->box_cur[ie]);
    /* The step's paths: the map's mass shares (deposit_path.h) and the spread. */
    const stream_table *st = &s->st;
    for (int j = 0; j < nth && !c->moments; j++) { /* moments: each cell's own (spread) */
        smx_path_of(st->sz[j], (long long)c->step, c->moved, st->scheme == STREAM_SHIFT, -0.5,
                    &c->path_z[j]);
        smx_path_of(st->sx[j], (long long)c->step, c->moved, st->scheme == STREAM_SHIFT, 0.0,
                    &c->path_x[j]);
    }
    energy_boxes(c);
    const int64_t nrows = box_empty(all) ? 0 : all.z1 - all.z0 + 1, nunits = nth * nrows;
    const int fused = !c->moments;
#pragma omp parallel for schedule(dynamic, 4)
    for (int64_t u = 0; u < nunits; u++) {
        const energy_unit eu = deposit_begin(c, u, all);
        for (int ie = 0; ie < ne; ie++) {
            deposit_bin(c, &eu, ie);
            if (fused)
                move_bin(c, eu.j, eu.z, ie);
        }
        deposit_end(c, &eu, all);
    }
    if (!fused) /* the moments' deposit reads every component before any moves */
#pragma omp parallel for schedule(dynamic, 4)
        for (int64_t u = 0; u < nunits; u++)
            for (int ie = 0; ie < ne; ie++)
                move_bin(c, (int)(u / nrows), all.z0 + (int)(u % nrows), ie);
    sum_partials(c, nunits, t);
    cpu_deposit_spread(c, all);
    memcpy(c->box_cur, c->box_next, ne * sizeof *c->box_cur);
}

/* ---- A_stream: cur -> tmp, then swap ------------------------------------- */
static inline int in_domain(const grid *g, int z, int x)
{
    return z >= 0 && z < g->nz && x >= 0 && x < g->nx;
}

/* The moments scheme's A_stream, one (bin, direction) plane. Each source
 * cell's weight moves along z as a point at its mean offset, to the row that
 * holds it after the move (smx_mom_point); along x as a uniform strip with its
 * mean and mean square, cut by the column edges after the move
 * (smx_mom_split): each part lands in its column with its own mean and mean
 * square, so the move keeps the weight's first and second moments exactly.
 * Sources in ascending (z, x), parts in ascending x; each target adds, in
 * float from +0, the part's weight (float)(w f) and its moments
 * (float)(part * mean) and (float)(part * mean square). Weight that lands
 * outside the grid, or outside its slot along x, leaks, and so does a
 * subnormal weight (smx_mom_keeps). */
static double stream_moments_plane(cpu_ctx *c, int ie, int j, box b)
{
    const grid *g = c->g;
    const stream_table *st = &c->s->st;
    const int sw = (int)grid_slot_nx(g);
    const float *w = plane(c, comp(c, c->cur, 0), ie, j), *mz = plane(c, comp(c, c->cur, 1), ie, j),
                *mx = plane(c, comp(c, c->cur, 2), ie, j),
                *qx = plane(c, comp(c, c->cur, 3), ie, j),
                *me = plane(c, comp(c, c->cur, 4), ie, j),
                *qe = plane(c, comp(c, c->cur, 5), ie, j);
    float *ow = plane(c, comp(c, c->tmp, 0), ie, j), *omz = plane(c, comp(c, c->tmp, 1), ie, j),
          *omx = plane(c, comp(c, c->tmp, 2), ie, j), *oqx = plane(c, comp(c, c->tmp, 3), ie, j),
          *ome = plane(c, comp(c, c->tmp, 4), ie, j), *oqe = plane(c, comp(c, c->tmp, 5), ie, j);
    double leak = 0.0;
    for (int z = b.z0; z <= b.z1; z++) {
        const int64_t r = (int64_t)z * g->nx;
        for (int x = b.x0; x <= b.x1; x++) {
            const float v = w[r + x];
            if (v == 0.0f)
                continue;
            if (!smx_mom_keeps(v)) {
                leak += v;
                continue;
            }
            int kz;
            const double uz = smx_mom_point(mz[r + x], v, st->sz[j], &kz);
            const double ue = smx_mom_energy(me[r + x], v), qu = (double)qe[r + x] / (double)v;
            smx_mom_parts px;
            smx_mom_split(mx[r + x], qx[r + x], v, st->sx[j], &px);
            const int tz = z + kz, sl = x - x % sw;
            for (int a = 0; a < px.n; a++) {
                const int tx = x + px.lo + a;
                const float part = (float)((double)v * px.f[a]);
                if (tz < 0 || tz >= g->nz || tx < sl || tx >= sl + sw || tx >= g->nx) {
                    leak += part;
                    continue;
                }
                const int64_t o = (int64_t)tz * g->nx + tx;
                ow[o] = ow[o] + part;
                omz[o] = omz[o] + smx_mom_store(part, uz, SMX_MOM_ZSHIFT);
                omx[o] = omx[o] + smx_mom_store(part, px.m[a], SMX_MOM_XSHIFT);
                oqx[o] = oqx[o] + (float)((double)part * px.q[a]);
                ome[o] = ome[o] + smx_mom_store(part, ue, SMX_MOM_ESHIFT);
                oqe[o] = oqe[o] + (float)((double)part * qu);
            }
        }
    }
    return leak;
}

/* A shift step's move of one (bin, direction): source box b by (dz, dx),
 * on a grid of nz rows whose slots are sw columns wide. */
typedef struct shift_move {
    box b;
    int dz, dx, nz, sw;
} shift_move;

/* Clears row z of the move's output buffer on columns x0..x1, except the
 * columns that the move writes on it (those of each slot whose targets stay
 * in it; cpu_op_stream). */
static void shift_clear_row(float *row, int x0, int x1, int z, const shift_move *m)
{
    const box b = m->b;
    const int sw = m->sw, dx = m->dx, sz = z - m->dz;
    int next = x0; /* columns below it are cleared or written */
    if (sz >= b.z0 && sz <= b.z1 && z >= 0 && z < m->nz)
        for (int sl = b.x0 - b.x0 % sw; sl <= b.x1 && next <= x1; sl += sw) {
            const int lo = b.x0 > sl ? b.x0 : sl, hi = b.x1 < sl + sw - 1 ? b.x1 : sl + sw - 1;
            const int w0 = lo + dx > sl ? lo + dx : sl;
            const int w1 = hi + dx < sl + sw - 1 ? hi + dx : sl + sw - 1;
            if (w0 > w1)
                continue;
            if (w0 > next) {
                const int e = w0 - 1 < x1 ? w0 - 1 : x1;
                memset(row + next, 0, (size_t)(e - next + 1) * sizeof *row);
            }
            next = w1 + 1 > next ? w1 + 1 : next;
        }
    if (next <= x1)
        memset(row + next, 0, (size_t)(x1 - next + 1) * sizeof *row);
}

/* cpu_measure's row sums and extents of direction j of bin ie (out: its
 * plane, just written) over the rows and columns of the bin's new box, while
 * they are in cache. */
static void measure_plane(cpu_ctx *c, const float *out, int ie, int j)
{
    const box nb = c->box_next[ie];
    if (box_empty(nb))
        return;
    int64_t k = c->ms_off[ie] + (int64_t)j * (nb.z1 - nb.z0 + 1);
    for (int z = nb.z0; z <= nb.z1; z++, k++) {
        int64_t f, l;
        c->ms_w[k] =
            rows_sum_extent(out + (int64_t)z * c->g->nx + nb.x0, nb.x1 - nb.x0 + 1, &f, &l);
        c->ms_x0[k] = (int)f;
        c->ms_x1[k] = (int)l;
    }
}

void cpu_op_stream(cpu_ctx *c, int64_t step, int measure, step_tally *t)
{
    const grid *g = c->g;
    const stream_table *st = &c->s->st;
    const int ne = (int)g->ne, nth = (int)g->nth;
    const int gather = c->s->stream_gather, moments = c->moments;
    const int shift = st->scheme == STREAM_SHIFT;

    /* Per-direction moves of this step; the new box of each bin covers them all. */
    int *oz = c->step_oz, *ox = c->step_ox;
    int ozmin = 1 << 30, ozmax = -(1 << 30), oxmin = 1 << 30, oxmax = -(1 << 30);
    for (int j = 0; j < nth; j++) {
        /* Moments: along z a point lands k0 .. k1 rows on (smx_mom_rows);
         * along x a strip spans up to four columns from floor(s) - 1. Shift:
         * this step's whole-cell move. Bilinear: the four cells from the
         * floor of the move. */
        int k0 = 0, k1 = 0;
        if (moments)
            smx_mom_rows(st->sz[j], &k0, &k1);
        const int ez = moments ? k1 - k0 : shift ? 0 : 1, ex = moments ? 3 : shift ? 0 : 1;
        oz[j] = moments ? k0 : shift ? stream_shift(st->sz[j], step) : st->oz[j];
        ox[j] = moments ? (int)floor(st->sx[j]) - 1
                : shift ? stream_shift(st->sx[j], step)
                        : st->ox[j];
        ozmin = oz[j] < ozmin ? oz[j] : ozmin;
        ozmax = oz[j] + ez > ozmax ? oz[j] + ez : ozmax;
        oxmin = ox[j] < oxmin ? ox[j] : oxmin;
        oxmax = ox[j] + ex > oxmax ? ox[j] + ex : oxmax;
    }
    int64_t n = 0;
    for (int ie = 0; ie < ne; ie++) {
        box b = c->box_cur[ie], nb = BOX_EMPTY;
        if (!box_empty(b)) {
            nb = (box){ b.z0 + ozmin, b.z1 + ozmax, b.x0 + oxmin, b.x1 + oxmax };
            nb.z0 = nb.z0 < 0 ? 0 : nb.z0;
            nb.x0 = nb.x0 < 0 ? 0 : nb.x0;
            nb.z1 = nb.z1 >= g->nz ? (int)g->nz - 1 : nb.z1;
            nb.x1 = nb.x1 >= g->nx ? (int)g->nx - 1 : nb.x1;
            if (nb.z0 > nb.z1 || nb.x0 > nb.x1)
                nb = BOX_EMPTY;
        }
        c->box_next[ie] = nb;
        if (!box_empty(b) || !box_empty(c->box_tmp[ie]))
            for (int j = 0; j < nth; j++)
                c->units[n++] = (unit){ ie, j };
    }
    if (measure) /* each bin's rows of its new box, every direction */
        for (int64_t ie = 0, off = 0; ie < ne; ie++) {
            c->ms_off[ie] = off;
            const box nb = c->box_next[ie];
            off += box_empty(nb) ? 0 : (int64_t)nth * (nb.z1 - nb.z0 + 1);
        }
#pragma omp parallel for schedule(dynamic, 2)
    for (int64_t u = 0; u < n; u++) {
        int ie = c->units[u].ie, j = c->units[u].z;
        box b = c->box_cur[ie], nb = c->box_next[ie], old = c->box_tmp[ie];
        const float *in = plane(c, c->cur, ie, j);
        float *out = plane(c, c->tmp, ie, j);
        step_tally *pt = &c->partial[u];
        tally_clear(pt);
        /* Clear what this buffer held for the bin last time. The moments'
         * scatter adds into its targets, so their rows are written (zeroed)
         * first too: a page first read, then written, faults twice. */
        const box cl = moments && !box_empty(b) ? box_union(old, nb) : old;
        if (shift && !moments && !box_empty(cl)) {
            /* Only what the move below does not write over. */
            const shift_move m = { b, oz[j], ox[j], (int)g->nz, (int)grid_slot_nx(g) };
            for (int z = cl.z0; z <= cl.z1; z++)
                shift_clear_row(out + (int64_t)z * g->nx, cl.x0, cl.x1, z, &m);
        } else if (!box_empty(cl))
            for (int k = 0; k < c->ncomp; k++) {
                float *ok = plane(c, comp(c, c->tmp, k), ie, j);
                for (int z = cl.z0; z <= cl.z1; z++)
                    memset(ok + (int64_t)z * g->nx + cl.x0, 0, (cl.x1 - cl.x0 + 1) * sizeof *ok);
            }
        if (box_empty(b))
            continue;
        const float *w = st->w + 4 * j;
        int dz = oz[j], dx = ox[j];
        double leak = 0.0;
        if (moments) {
            leak = stream_moments_plane(c, ie, j, b);
        } else if (shift) {
            /* Along x the domain is the source's slot (the grid without
             * slots): the box's columns slot by slot, ascending. */
            const int sw = (int)grid_slot_nx(g);
            for (int z = b.z0; z <= b.z1; z++) {
                const int tz = z + dz, zin = tz >= 0 && tz < g->nz;
                const float *r = in + (int64_t)z * g->nx;
                for (int sl = b.x0 - b.x0 % sw; sl <= b.x1; sl += sw) {
                    const int lo = b.x0 > sl ? b.x0 : sl;
                    const int hi = b.x1 < sl + sw - 1 ? b.x1 : sl + sw - 1;
                    /* The columns whose targets stay in the slot move as one
                     * copy; the others leak, added in ascending x. */
                    int va = sl - dx > lo ? sl - dx : lo,
                        vb = sl + sw - 1 - dx < hi ? sl + sw - 1 - dx : hi;
                    if (!zin)
                        va = hi + 1, vb = hi;
                    for (int x = lo; x < va && x <= hi; x++)
                        leak += r[x];
                    if (va <= vb)
                        memcpy(out + (int64_t)tz * g->nx + va + dx, r + va,
                               (size_t)(vb - va + 1) * sizeof *r);
                    for (int x = (vb + 1 > lo ? vb + 1 : lo); x <= hi; x++)
                        leak += r[x];
                }
            }
            if (measure)
                measure_plane(c, out, ie, j);
        } else if (gather) {
            for (int z = nb.z0; z <= nb.z1; z++) {
                float *o = out + (int64_t)z * g->nx;
                for (int x = nb.x0; x <= nb.x1; x++) {
                    float acc = 0.0f;
                    for (int a = 0; a < 2; a++) {
                        int sz = z - dz - a;
                        if (sz < b.z0 || sz > b.z1)
                            continue;
                        const float *r = in + (int64_t)sz * g->nx;
                        for (int bb = 0; bb < 2; bb++) {
                            int sx = x - dx - bb;
                            if (sx >= b.x0 && sx <= b.x1)
                                acc += w[2 * a + bb] * r[sx];
                        }
                    }
                    o[x] = acc;
                }
            }
            /* Leak: sources whose targets fall outside the domain. */
            for (int z = b.z0; z <= b.z1; z++) {
                int zin = z + dz >= 0 && z + dz + 1 < g->nz;
                const float *r = in + (int64_t)z * g->nx;
                for (int x = b.x0; x <= b.x1; x++) {
                    if (zin && x + dx >= 0 && x + dx + 1 < g->nx)
                        continue;
                    for (int k = 0; k < 4; k++)
                        if (!in_domain(g, z + dz + k / 2, x + dx + k % 2))
                            leak += (double)w[k] * r[x];
                }
            }
        } else {
            for (int z = b.z0; z <= b.z1; z++) {
                const float *r = in + (int64_t)z * g->nx;
                for (int x = b.x0; x <= b.x1; x++) {
                    for (int k = 0; k < 4; k++) {
                        int tz = z + dz + k / 2, tx = x + dx + k % 2;
                        if (in_domain(g, tz, tx))
                            out[(int64_t)tz * g->nx + tx] += w[k] * r[x];
                        else
                            leak += (double)w[k] * r[x];
                    }
                }
            }
        }
        pt->weight[CH_SPATIAL_LEAK] = leak;
        pt->energy[CH_SPATIAL_LEAK] = leak * g->E.centres[ie];
    }
    sum_partials(c, n, t);
    float *sw = c->cur;
    c->cur = c->tmp;
    c->tmp = sw;
    box *bs = c->box_tmp;
    c->box_tmp = c->box_cur; /* the old buffer still holds data inside these */
    c->box_cur = bs;
    memcpy(c->box_cur, c->box_next, ne * sizeof *c->box_cur);
}

/* The spectral tallies (physics/spectral_tally.h) in two parts. At the
 * step's start, each unit (bin, row) of the boxes gets a row of spec_w for
 * its cells' direction sums (in double, in chunks: numerics/direction_chunks.h),
 * which A_theta forms as it copies the rows where it runs first (its copy is
 * the psi the step starts from), and this pass forms otherwise. At the end,
 * per row and plane, bins ascending, each sum is taken times its bin's
 * coefficient by one fma: the order of the CUDA kernels' cell. One pass
 * over psi fewer where A_theta forms the sums: the tallies' own pass read
 * every direction of every cell again (15 % of the CPU's per-spot steps). */
void cpu_spectral_begin(cpu_ctx *c)
{
    const grid *g = c->g;
    c->spec_n = 0;
    if (g->dose_planes < 2)
        return;
    const int ne = (int)g->ne;
    memcpy(c->spec_box, c->box_cur, ne * sizeof *c->spec_box);
    int64_t u = 0;
    c->spec_woff[0] = 0;
    for (int ie = 0; ie < ne; ie++) {
        const box bx = c->spec_box[ie];
        c->spec_ustart[ie] = u;
        for (int z = bx.z0; !box_empty(bx) && z <= bx.z1; z++, u++)
            c->spec_woff[u + 1] = c->spec_woff[u] + (bx.x1 - bx.x0 + 1);
    }
    c->spec_n = u;
    if (c->spec_in_theta)
        return;
#pragma omp parallel for schedule(dynamic, 4)
    for (int ie = 0; ie < ne; ie++) {
        const box bx = c->spec_box[ie];
        for (int z = bx.z0; !box_empty(bx) && z <= bx.z1; z++) {
            const int64_t k = c->spec_ustart[ie] + (z - bx.z0);
            direction_sums(c, plane(c, c->cur, ie, 0) + (int64_t)z * g->nx + bx.x0, g->slice,
                           bx.x1 - bx.x0 + 1, c->spec_w + c->spec_woff[k]);
        }
    }
}

void cpu_spectral_tallies(cpu_ctx *c)
{
    const grid *g = c->g;
    if (g->dose_planes < 2 || c->spec_n == 0)
        return;
    const sim_tables *s = c->s;
    const spectral_tallies *st = &s->tally;
    const int ne = (int)g->ne, nq = g->dose_planes - 1;
    box all = BOX_EMPTY;
    for (int ie = 0; ie < ne; ie++)
        all = box_union(all, c->spec_box[ie]);
#pragma omp parallel for schedule(dynamic, 4)
    for (int z = all.z0; z <= all.z1; z++) {
        double *R = c->dep_row + (int64_t)omp_get_thread_num() * cpu_dep_rows(g) * g->nx;
        for (int q = 0; q < nq; q++)
            for (int x = all.x0; x <= all.x1; x++)
                R[(int64_t)q * g->nx + x] = 0.0;
        for (int ie = 0; ie < ne; ie++) {
            box bx = c->spec_box[ie];
            if (box_empty(bx) || z < bx.z0 || z > bx.z1)
                continue;
            const double *W = c->spec_w + c->spec_woff[c->spec_ustart[ie] + (z - bx.z0)];
            for (int r = c->run_start[z]; r < c->run_start[z + 1]; r++) {
                int x0, x1;
                if (!run_clip(c, r, bx.x0, bx.x1, &x0, &x1))
                    continue;
                for (int q = 1; q <= nq; q++) {
                    const double k = spectral_coef(st, q, c->run_m[r], ie);
                    if (k != 0.0)
                        rows_fma_f64(R + (int64_t)(q - 1) * g->nx + x0, W + (x0 - bx.x0), k,
                                     x1 - x0 + 1);
                }
            }
        }
        for (int q = 0; q < nq; q++) {
            double *d = c->dose + (1 + q) * g->slice + (int64_t)z * g->nx;
            for (int x = all.x0; x <= all.x1; x++)
                d[x] += R[(int64_t)q * g->nx + x];
        }
    }
}

/* Sums psi (weight and energy), tightens each bin's box to its non-zero cells
 * and finds the front. Each (bin, row)'s sum adds its directions' row sums
 * in direction order: those the streaming took as it wrote the rows where
 * it ran last (streamed: stream_measures), else read from psi
 * here, the same values either way. */
void cpu_measure(cpu_ctx *c, int streamed, double *wsum, double *esum)
{
    const grid *g = c->g;
    const int nth = (int)g->nth, ne = (int)g->ne;
    int64_t n = build_units(c, c->box_cur);
#pragma omp parallel for schedule(dynamic, 4)
    for (int64_t u = 0; u < n; u++) {
        int ie = c->units[u].ie, z = c->units[u].z;
        box b = c->box_cur[ie];
        const int rows = b.z1 - b.z0 + 1;
        double s = 0.0;
        int x0 = 1 << 30, x1 = -1;
        for (int j = 0; j < nth; j++) {
            int64_t f, l;
            if (streamed) {
                const int64_t k = c->ms_off[ie] + (int64_t)j * rows + (z - b.z0);
                s += c->ms_w[k];
                f = c->ms_x0[k];
                l = c->ms_x1[k];
            } else {
                const float *r = plane(c, c->cur, ie, j) + (int64_t)z * g->nx;
                s += rows_sum_extent(r + b.x0, b.x1 - b.x0 + 1, &f, &l);
            }
            if (f >= 0) {
                x0 = b.x0 + f < x0 ? b.x0 + (int)f : x0;
                x1 = b.x0 + l > x1 ? b.x0 + (int)l : x1;
            }
        }
        c->row_w[u] = s;
        c->row_x0[u] = x0;
        c->row_x1[u] = x1;
    }
    double W = 0.0, En = 0.0;
    int front = -1, back = -1;
    int64_t u = 0;
    for (int ie = 0; ie < ne; ie++) {
        box b = c->box_cur[ie];
        if (box_empty(b))
            continue;
        box t = BOX_EMPTY;
        double wb = 0.0;
        for (int z = b.z0; z <= b.z1; z++, u++) {
            wb += c->row_w[u];
            if (c->row_x1[u] >= 0)
                t = box_union(t, (box){ z, z, c->row_x0[u], c->row_x1[u] });
        }
        W += wb;
        En += wb * g->E.centres[ie];
        /* Shrinking the box is safe: outside it the bin is exactly zero. The
         * old extent stays recorded in box_tmp's role only for the other buffer. */
        c->box_cur[ie] = t;
        if (!box_empty(t) && t.z1 > front)
            front = t.z1;
        if (!box_empty(t) && (back < 0 || t.z0 < back))
            back = t.z0;
    }
    *wsum = W;
    *esum = En;
    c->front = front;
    c->back = back;
}
