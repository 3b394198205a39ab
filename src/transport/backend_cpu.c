/* The CPU backend's entry points (src/transport/backend.h): buffers, steps,
 * records, snapshots and the benchmark hooks, around the reference operators
 * of backend_cpu_operators.c. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "input/plan_access.h"
#include "numerics/fma_rows.h"
#include "transport/backend_bench.h"
#include "transport/backend_cpu_internal.h"
#include "transport/backend_host.h"
#include "transport/backend_test.h"

static void cpu_release(void *vctx);

static double cpu_fixed_bytes(const grid *g, int threads);

/* The medium runs of every z row (cpu_ctx.run_*). */
static int build_runs(cpu_ctx *c)
{
    const grid *g = c->g;
    const medium_map *mm = c->s->mm;
    int64_t n = 0;
    for (int z = 0; z < g->nz; z++)
        for (int x = 0; x < g->nx; x++)
            n += x == 0 || !mm || medium_of(mm, z, x) != medium_of(mm, z, x - 1);
    if (!mm || !mm->cell)
        n = g->nz;
    free(c->run_start);
    free(c->run_x0);
    free(c->run_x1);
    free(c->run_m);
    c->run_start = malloc((g->nz + 1) * sizeof(int));
    c->run_x0 = malloc(n * sizeof(int));
    c->run_x1 = malloc(n * sizeof(int));
    c->run_m = malloc(n * sizeof(int));
    if (!c->run_start || !c->run_x0 || !c->run_x1 || !c->run_m)
        return -1;
    int r = 0;
    for (int z = 0; z < g->nz; z++) {
        c->run_start[z] = r;
        for (int x = 0; x < g->nx; x++) {
            int m = mm ? medium_of(mm, z, x) : 0;
            if (x > 0 && m == c->run_m[r - 1]) {
                c->run_x1[r - 1] = x;
                continue;
            }
            c->run_x0[r] = c->run_x1[r] = x;
            c->run_m[r++] = m;
        }
    }
    c->run_start[g->nz] = r;
    return 0;
}

int backend_cpu_setup_test(void **out, const sim_tables *s, const backend_test_options *o,
                           smx_error *err)
{
    const grid *g = s->g;
    if (!s->tally_ready || s->tally.n_planes != g->dose_planes - 1)
        return smx_fail(err, SMX_EXIT_RUNTIME,
                        "internal: the dose's spectral tallies were not built for its %d planes",
                        g->dose_planes);
    cpu_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return smx_fail(err, SMX_EXIT_RUNTIME, "out of memory");
    c->s = s;
    c->g = g;
    c->only_op = o ? o->only_op : backend_test_options_default().only_op;
    if (s->p->threads > 0)
        omp_set_num_threads(s->p->threads);
    c->nthreads = omp_get_max_threads();
    /* Work units are (bin, z row), (bin, direction) or (direction, z row) pairs. */
    int64_t nu = (g->ne > g->nth ? g->ne : g->nth) * (g->nz > g->nth ? g->nz : g->nth);
    /* calloc: pages never touched by a narrow beam are never faulted in. */
    /* The moments scheme carries psi's moments beside it (numerics/moments.h). */
    c->ncomp = g->ncomp > 1 ? g->ncomp : 1;
    c->moments = c->ncomp > 1;
    c->cur = calloc((size_t)g->cells * c->ncomp, sizeof(float));
    c->tmp = calloc((size_t)g->cells * c->ncomp, sizeof(float));
    c->box_cur = malloc(g->ne * sizeof(box));
    c->box_tmp = malloc(g->ne * sizeof(box));
    c->box_next = malloc(g->ne * sizeof(box));
    c->dose = calloc((size_t)g->slice * g->dose_planes, sizeof(double));
    c->units = malloc(nu * sizeof(unit));
    c->partial = malloc(nu * sizeof(step_tally));
    c->row_w = malloc(nu * sizeof(double));
    c->row_x0 = malloc(nu * sizeof(int));
    c->row_x1 = malloc(nu * sizeof(int));
    c->ms_off = malloc(g->ne * sizeof(int64_t));
    c->ms_w = malloc((size_t)g->nth * g->ne * g->nz * sizeof(double));
    c->ms_x0 = malloc((size_t)g->nth * g->ne * g->nz * sizeof(int));
    c->ms_x1 = malloc((size_t)g->nth * g->ne * g->nz * sizeof(int));
    c->step_oz = malloc(g->nth * sizeof(int));
    c->step_ox = malloc(g->nth * sizeof(int));
    c->scratch = malloc((size_t)c->nthreads * g->nth * g->nx * sizeof(float));
    c->dep_row = malloc((size_t)c->nthreads * cpu_dep_rows(g) * g->nx * sizeof(double));
    c->zero_row = calloc((size_t)g->nx, sizeof(float));
    if (g->dose_planes > 1) { /* spec_w: pages only where the boxes' rows take them */
        c->spec_box = malloc(g->ne * sizeof(box));
        c->spec_ustart = malloc(g->ne * sizeof(int64_t));
        c->spec_woff = malloc((nu + 1) * sizeof(int64_t));
        c->spec_w = malloc(nu * g->nx * sizeof(double));
    }
    c->spec_in_theta = g->dose_planes > 1 && c->only_op < 0 && s->p->operator_order[0] == OP_THETA;
    /* The streaming measures what it writes where it runs last in the step,
     * under the shift scheme (its output row is a copy it has just made):
     * a pass over psi fewer. */
    int last = -1;
    for (int k = 0; k < PLAN_ORDER_MAX; k++)
        if (c->only_op < 0 || s->p->operator_order[k] == c->only_op)
            last = s->p->operator_order[k];
    c->stream_measures = last == OP_STREAM && s->st.scheme == STREAM_SHIFT && !c->moments;
    c->dmap = malloc((size_t)g->nth * g->slice * sizeof(float));
    if (c->moments) {
        c->dmz = malloc((size_t)g->nth * g->slice * sizeof(float));
        c->dmx = malloc((size_t)g->nth * g->slice * sizeof(float));
        c->dqx = malloc((size_t)g->nth * g->slice * sizeof(float));
    }
    c->path_z = malloc(g->nth * sizeof(smx_path_axis));
    c->span_z0 = malloc(g->ne * sizeof(int));
    c->span_z1 = malloc(g->ne * sizeof(int));
    c->mem_limit = backend_host_limit_bytes(s->p);
    c->path_x = malloc(g->nth * sizeof(smx_path_axis));
    if (!c->cur || !c->tmp || !c->box_cur || !c->box_tmp || !c->box_next || !c->dose || !c->units ||
        !c->partial || !c->row_w || !c->row_x0 || !c->row_x1 || !c->ms_off || !c->ms_w ||
        !c->ms_x0 || !c->ms_x1 || !c->step_oz || !c->step_ox || !c->scratch || !c->dep_row ||
        !c->zero_row || !c->dmap ||
        (g->dose_planes > 1 && (!c->spec_box || !c->spec_ustart || !c->spec_woff || !c->spec_w)) ||
        (c->moments && (!c->dmz || !c->dmx || !c->dqx)) || !c->path_z || !c->path_x ||
        !c->span_z0 || !c->span_z1 || build_runs(c) ||
        !(c->lower = calloc((size_t)s->n_media * g->ne, 1))) {
        cpu_release(c);
        return smx_fail(err, SMX_EXIT_RUNTIME,
                        "out of host memory: the CPU backend needs %.3g GB for this grid",
                        backend_cpu_host_bytes(g) / 1e9);
    }
    if (s->st.scheme != STREAM_BILINEAR && medium_map_mass_varies(s->mm)) {
        if (!(c->mass_density = malloc((size_t)s->mm->n_media * sizeof(double)))) {
            cpu_release(c);
            return smx_fail(err, SMX_EXIT_RUNTIME, "out of host memory");
        }
        for (int m = 0; m < s->mm->n_media; m++)
            c->mass_density[m] = s->mm->media[m].density_g_cm3;
    }
    for (int64_t i = 0; i < g->ne; i++)
        c->box_cur[i] = c->box_tmp[i] = BOX_EMPTY;
    c->front = c->back = -1;
    *out = c;
    return 0;
}

static int cpu_setup(void **out, const sim_tables *s, smx_error *err)
{
    return backend_cpu_setup_test(out, s, NULL, err);
}

/* Back to the state after setup (buffers and dose all zero) after a run:
 * only each buffer's rows inside its box (every operator keeps a bin zero
 * outside it). */
static void cpu_clear(cpu_ctx *c)
{
    const grid *g = c->g;
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t ie = 0; ie < g->ne; ie++)
        for (int q = 0; q < 2; q++) { /* each buffer inside its box: outside it, zero */
            const box bb = q ? c->box_tmp[ie] : c->box_cur[ie];
            if (box_empty(bb))
                continue;
            const int64_t n = (int64_t)(bb.z1 - bb.z0 + 1) * g->nx;
            for (int k = 0; k < c->ncomp; k++)
                for (int64_t j = 0; j < g->nth; j++)
                    memset(comp(c, q ? c->tmp : c->cur, k) + psi_index(g, ie, j, bb.z0, 0), 0,
                           (size_t)n * sizeof(float));
        }
    memset(c->dose, 0, (size_t)g->slice * g->dose_planes * sizeof(double));
    c->stopped = 0;
    c->have_last = 0;
    c->front = c->back = -1;
}

/* After setup, while both buffers are still all zero, or after a run (a
 * field's next spot), whose rows are cleared first: only the source's
 * non-zero rows are copied, so a narrow beam never faults in the rest. */
static int cpu_upload(void *vctx, const float *psi0, const grid_box *occupied, double w0, double e0,
                      smx_error *err)
{
    cpu_ctx *c = vctx;
    if (c->uploaded)
        cpu_clear(c);
    c->uploaded = 1;
    /* A window's medium map changes with the spot (transport/window.h). */
    if (c->s->mm && c->s->mm->cell && build_runs(c))
        return smx_fail(err, SMX_EXIT_RUNTIME, "out of host memory");
    c->w0 = w0;
    c->e0 = e0;
    const grid *g = c->g;
    float mx = 0.0f; /* the source's largest value: the adaptive early exit's scale */
    /* Rows inside the given boxes (or every row), copied where non-zero (a
     * source's values are not negative: its row's largest says so). */
    for (int64_t ie = 0; ie < g->ne; ie++) {
        box b = occupied ? occupied[ie] : (box){ 0, (int)g->nz - 1, 0, (int)g->nx - 1 };
        for (int64_t j = 0; j < g->nth && !box_empty(b); j++)
            for (int64_t z = b.z0; z <= b.z1; z++) {
                const int64_t r = psi_index(g, ie, j, z, 0);
                float row_max = 0.0f;
                for (int64_t x = b.x0; x <= b.x1; x++)
                    row_max = psi0[r + x] > row_max ? psi0[r + x] : row_max;
                if (row_max == 0.0f)
                    continue;
                mx = row_max > mx ? row_max : mx;
                memcpy(c->cur + r, psi0 + r, g->nx * sizeof *psi0);
                /* A source starts on the entrance plane, the upper edge of
                 * its row, and on its cells' centres (the stored moments
                 * w (u + shift), moments.h). */
                if (c->moments) {
                    for (int64_t xx = 0; xx < g->nx; xx++)
                        comp(c, c->cur, 1)[r + xx] =
                            smx_mom_store(psi0[r + xx], -0.5, SMX_MOM_ZSHIFT);
                    memcpy(comp(c, c->cur, 2) + r, psi0 + r, g->nx * sizeof *psi0);
                    /* At its bins' centres (e = 0, shift 1: w). */
                    memcpy(comp(c, c->cur, 4) + r, psi0 + r, g->nx * sizeof *psi0);
                }
            }
        /* cpu_measure() tightens the boxes to the source. */
        c->box_cur[ie] = b;
        c->box_tmp[ie] = BOX_EMPTY;
        c->span_z0[ie] = 1 << 30;
        c->span_z1[ie] = -1;
    }
    const backend_settings b = backend_settings_of(c->s);
    c->threshold = c->moments ? 0.0f : backend_early_exit_threshold(&b, mx);
    cpu_measure(c, 0, &c->w_prev, &c->e_prev);
    return 0;
}

static int cpu_step(void *vctx, int64_t n, smx_error *err)
{
    cpu_ctx *c = vctx;
    const plan *p = c->s->p;
    if (c->stopped)
        return 0;
    step_balance *b = &c->last.b;
    memset(b, 0, sizeof *b);
    b->weight_in = c->w_prev;
    b->energy_in = c->e_prev;
    c->step = n;
    c->moved = 0;
    cpu_step_tables(c, n);
    const int tallies = c->only_op < 0 || c->only_op == OP_ENERGY;
    if (tallies)
        cpu_spectral_begin(c);
    for (int k = 0; k < PLAN_ORDER_MAX; k++) {
        int op = p->operator_order[k];
        if (c->only_op >= 0 && op != c->only_op)
            continue;
        switch (op) {
        case OP_THETA:
            cpu_op_theta(c, &b->t);
            break;
        case OP_ENERGY:
            cpu_op_energy(c, &b->t);
            break;
        case OP_STREAM:
            cpu_op_stream(c, n, c->stream_measures, &b->t);
            c->moved = 1;
            break;
        }
    }
    if (tallies)
        cpu_spectral_tallies(c);
    cpu_measure(c, c->stream_measures, &b->weight_out, &b->energy_out);
    /* Memory: the buffers are calloc'd, so a page costs only once written. A
     * bin's rows are written within its box and a few rows around it (the
     * moves), so the rows it has ever occupied, in both psi buffers and the
     * deposit map, bound what the run has touched. Past the limit the run
     * stops here, with an error, before the machine runs short. */
    double touched = cpu_fixed_bytes(c->g, c->nthreads);
    int all0 = 1 << 30, all1 = -1;
    const int margin = SMX_PATH_MAX_MOVE + 1;
    for (int64_t ie = 0; ie < c->g->ne; ie++) {
        box bx = c->box_cur[ie];
        if (!box_empty(bx)) {
            int z0 = bx.z0 - margin < 0 ? 0 : bx.z0 - margin;
            int z1 = bx.z1 + margin >= c->g->nz ? (int)c->g->nz - 1 : bx.z1 + margin;
            c->span_z0[ie] = z0 < c->span_z0[ie] ? z0 : c->span_z0[ie];
            c->span_z1[ie] = z1 > c->span_z1[ie] ? z1 : c->span_z1[ie];
        }
        if (c->span_z1[ie] >= c->span_z0[ie]) {
            touched += 2.0 * c->ncomp * c->g->nth * (c->span_z1[ie] - c->span_z0[ie] + 1) *
                       c->g->nx * sizeof(float);
            all0 = c->span_z0[ie] < all0 ? c->span_z0[ie] : all0;
            all1 = c->span_z1[ie] > all1 ? c->span_z1[ie] : all1;
        }
    }
    if (all1 >= all0)
        touched += (double)c->ncomp * c->g->nth * (all1 - all0 + 1) * c->g->nx * sizeof(float);
    c->touched = touched;
    if (touched > c->mem_limit)
        return smx_fail(
            err, SMX_EXIT_RUNTIME,
            "step %lld: the beam now occupies rows needing %.3g GB of host memory on the cpu "
            "backend, more than the %.3g GB this run may use (backend.host_memory_bytes, or the "
            "machine's memory); use a smaller grid, the cuda backend, or a larger "
            "backend.host_memory_bytes",
            (long long)n, touched * 1e-9, c->mem_limit * 1e-9);
    tally_close_balance(b, c->w0, c->e0);
    c->w_prev = b->weight_out;
    c->e_prev = b->energy_out;
    c->last.front_row = c->front;
    c->last.back_row = c->back;
    /* The tables' auto-stop weight: 0 in a per-spot state. */
    c->last.stopped = c->stopped =
        backend_auto_stop(p->steps, c->s->auto_stop_weight, b->weight_out, c->w0);
    c->have_last = 1;
    return 0;
}

static int cpu_collect(void *vctx, step_record *out, int max, int *n_out, smx_error *err)
{
    (void)err;
    cpu_ctx *c = vctx;
    *n_out = 0;
    if (c->have_last && max > 0) {
        out[0] = c->last;
        *n_out = 1;
        c->have_last = 0;
    }
    return 0;
}

/* The window moves: each buffer's rows of a bin inside its box (the rest is
 * zero) move `rows` rows towards z = 0, the spans with them (what the run
 * has touched), the dose too; the deposit map is rewritten every step before
 * it is read. */
static int cpu_shift(void *vctx, int rows, double *dose_out, smx_error *err)
{
    cpu_ctx *c = vctx;
    const grid *g = c->g;
    const int64_t nx = g->nx, nz = g->nz;
    if (rows <= 0 || rows >= nz || (c->back >= 0 && c->back < rows))
        return smx_fail(err, SMX_EXIT_RUNTIME,
                        "internal: a window shift of %d rows with weight in row %d", rows, c->back);
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t ie = 0; ie < g->ne; ie++) {
        const box b = box_union(c->box_cur[ie], c->box_tmp[ie]);
        int z0 = c->span_z0[ie], z1 = c->span_z1[ie];
        if (!box_empty(b)) {
            z0 = b.z0 < z0 ? b.z0 : z0;
            z1 = b.z1 > z1 ? b.z1 : z1;
        }
        if (z1 < z0)
            continue;
        /* Each buffer's rows inside its own box: outside it the bin is zero
         * there (every operator keeps it so), and stays zero once moved. */
        for (int k = 0; k < c->ncomp; k++)
            for (int64_t jb = 0; jb < 2 * g->nth; jb++) { /* both buffers of every direction */
                const box bb = jb & 1 ? c->box_tmp[ie] : c->box_cur[ie];
                if (box_empty(bb))
                    continue;
                float *p = comp(c, jb & 1 ? c->tmp : c->cur, k) + psi_index(g, ie, jb / 2, 0, 0);
                const int lo = bb.z0 > rows ? bb.z0 : rows; /* first row that stays */
                if (bb.z1 >= lo)
                    memmove(p + (lo - rows) * nx, p + lo * nx,
                            (size_t)(bb.z1 - lo + 1) * nx * sizeof(float));
                /* What the move leaves behind at the far end, and the rows that left. */
                const int a = bb.z1 - rows + 1 < 0 ? 0 : bb.z1 - rows + 1;
                if (bb.z1 >= a)
                    memset(p + a * nx, 0, (size_t)(bb.z1 - a + 1) * nx * sizeof(float));
            }
        for (box *bx = &c->box_cur[ie]; bx; bx = bx == &c->box_cur[ie] ? &c->box_tmp[ie] : NULL)
            if (!box_empty(*bx)) {
                bx->z0 = bx->z0 - rows < 0 ? 0 : bx->z0 - rows;
                bx->z1 -= rows;
                if (bx->z1 < 0)
                    *bx = BOX_EMPTY;
            }
        c->span_z0[ie] = z0 - rows < 0 ? 0 : z0 - rows;
        c->span_z1[ie] = z1 - rows;
        if (c->span_z1[ie] < c->span_z0[ie]) {
            c->span_z0[ie] = 1 << 30;
            c->span_z1[ie] = -1;
        }
    }
    for (int q = 0; q < g->dose_planes; q++) { /* the dose, then the released energy */
        double *d = c->dose + q * g->slice;
        memcpy(dose_out + (int64_t)q * rows * nx, d, (size_t)rows * nx * sizeof(double));
        memmove(d, d + rows * nx, (size_t)(nz - rows) * nx * sizeof(double));
        memset(d + (nz - rows) * nx, 0, (size_t)rows * nx * sizeof(double));
    }
    if (c->front >= 0)
        c->front -= rows;
    if (c->back >= 0)
        c->back -= rows;
    if (c->s->mm && c->s->mm->cell && build_runs(c))
        return smx_fail(err, SMX_EXIT_RUNTIME, "out of host memory");
    return 0;
}

static int cpu_can_shift(void *vctx)
{
    (void)vctx;
    return 1;
}

static int cpu_snapshot_begin(void *vctx, smx_error *err)
{
    cpu_ctx *c = vctx;
    if (!c->snap && !(c->snap = malloc((size_t)c->g->cells * sizeof(float))))
        return smx_fail(err, SMX_EXIT_RUNTIME, "out of host memory for a psi snapshot (%.3g GB)",
                        (double)c->g->cells * 4e-9);
    memcpy(c->snap, c->cur, (size_t)c->g->cells * sizeof(float));
    return 0;
}

static int cpu_snapshot_wait(void *vctx, const float **psi, smx_error *err)
{
    (void)err;
    *psi = ((cpu_ctx *)vctx)->snap;
    return 0;
}

static int cpu_download_dose(void *vctx, double *dose, smx_error *err)
{
    (void)err;
    cpu_ctx *c = vctx;
    memcpy(dose, c->dose, (size_t)c->g->slice * c->g->dose_planes * sizeof(double));
    return 0;
}

static void cpu_describe(void *vctx, run_result *r)
{
    cpu_ctx *c = vctx;
    snprintf(r->backend_name, sizeof r->backend_name, "cpu");
    snprintf(r->device_name, sizeof r->device_name, "CPU (%d OpenMP threads)", c->nthreads);
    snprintf(r->compute_capability, sizeof r->compute_capability, "none");
    snprintf(r->kernel_variants, sizeof r->kernel_variants,
             "energy=%s stream=%s streaming_scheme=%s angular=direct",
             c->s->energy_gather ? "gather" : "scatter", c->s->stream_gather ? "gather" : "scatter",
             backend_scheme_name(c->s->st.scheme));
}

static void cpu_release(void *vctx)
{
    cpu_ctx *c = vctx;
    if (!c)
        return;
    free(c->cur);
    free(c->tmp);
    free(c->box_cur);
    free(c->box_tmp);
    free(c->box_next);
    free(c->dose);
    free(c->units);
    free(c->partial);
    free(c->dep_row);
    free(c->zero_row);
    free(c->spec_box);
    free(c->spec_ustart);
    free(c->spec_woff);
    free(c->spec_w);
    free(c->dmap);
    free(c->dmz);
    free(c->dmx);
    free(c->dqx);
    free(c->mass_density);
    free(c->path_z);
    free(c->path_x);
    free(c->span_z0);
    free(c->span_z1);
    free(c->row_w);
    free(c->row_x0);
    free(c->row_x1);
    free(c->ms_off);
    free(c->ms_w);
    free(c->ms_x0);
    free(c->ms_x1);
    free(c->step_oz);
    free(c->step_ox);
    free(c->scratch);
    free(c->snap);
    free(c->run_start);
    free(c->run_x0);
    free(c->run_x1);
    free(c->run_m);
    free(c->lower);
    free(c);
}

/* ---- benchmark hooks: wall-clock times of the same work ---------------- */
static double wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static int cpu_bench_steps(void *vctx, int64_t first, int count, double *ms, smx_error *err)
{
    for (int k = 0; k < count; k++) {
        double t0 = wall_ms();
        int rc = cpu_step(vctx, first + k, err);
        ms[k] = wall_ms() - t0;
        ((cpu_ctx *)vctx)->have_last = 0;
        if (rc)
            return rc;
    }
    return 0;
}

static int cpu_bench_op(void *vctx, int op, double *ms, smx_error *err)
{
    (void)err;
    cpu_ctx *c = vctx;
    step_tally t;
    double w, e;
    tally_clear(&t);
    double t0 = wall_ms();
    switch (op) {
    case OP_THETA:
        cpu_op_theta(c, &t);
        break;
    case OP_ENERGY:
        cpu_op_energy(c, &t);
        break;
    case OP_STREAM:
        cpu_op_stream(c, 0, 0, &t);
        break;
    default:
        cpu_measure(c, 0, &w, &e);
        break;
    }
    *ms = wall_ms() - t0;
    return 0;
}

static int cpu_bench_copy(void *vctx, double *bps, smx_error *err)
{
    (void)err;
    cpu_ctx *c = vctx;
    size_t bytes = (size_t)c->g->cells * sizeof(float);
    double best = 1e30;
    for (int rep = 0; rep < 3; rep++) {
        double t0 = wall_ms();
        memcpy(c->tmp, c->cur, bytes);
        double ms = wall_ms() - t0;
        best = ms < best ? ms : best;
    }
    memset(c->tmp, 0, bytes);
    for (int64_t i = 0; i < c->g->ne; i++)
        c->box_tmp[i] = BOX_EMPTY;
    *bps = 2.0 * bytes / (best * 1e-3);
    return 0;
}

static void cpu_bench_facts(void *vctx, int *launches, double *bytes_dense, double *mem_used)
{
    cpu_ctx *c = vctx;
    double psi = (double)c->g->cells * sizeof(float);
    *launches = 0;
    *bytes_dense = 8.0 * psi;
    *mem_used = 2.0 * psi;
}

const backend_bench_ops backend_cpu_bench = {
    .steps = cpu_bench_steps,
    .op = cpu_bench_op,
    .copy = cpu_bench_copy,
    .facts = cpu_bench_facts,
};

/* Spots side by side in one state, as on the GPU: a step's fixed work (the
 * operators' parallel regions, the tables, the measure, the window's
 * bookkeeping) serves them all and the threads' work lists are longer. The
 * six-spot bench's per-spot phase took 0.80 of the time with three at once
 * as with one, the same with four, about 0.9 with two (docs/bench/per-spot-slots.md,
 * "The CPU"). */
#define CPU_LANES_AUTO 4
int backend_cpu_auto_lanes(const grid *g, double limit_bytes)
{
    const double each = backend_cpu_host_bytes(g);
    const int n = each > 0.0 ? (int)(0.5 * limit_bytes / each) : CPU_LANES_AUTO;
    return n < 1 ? 1 : n > CPU_LANES_AUTO ? CPU_LANES_AUTO : n;
}

static int cpu_lanes(void *vctx)
{
    const cpu_ctx *c = vctx;
    return backend_cpu_auto_lanes(c->g, c->mem_limit);
}

const backend_ops backend_cpu = {
    .name = "cpu",
    .collect_every = 1,
    .setup = cpu_setup,
    .upload = cpu_upload,
    .step = cpu_step,
    .collect = cpu_collect,
    .shift = cpu_shift,
    .can_shift = cpu_can_shift,
    .snapshot_begin = cpu_snapshot_begin,
    .snapshot_wait = cpu_snapshot_wait,
    .download_dose = cpu_download_dose,
    .describe = cpu_describe,
    .release = cpu_release,
    .lanes = cpu_lanes,
};

static double physical_memory_bytes(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && size > 0 ? (double)pages * size : INFINITY;
}

double backend_host_limit_bytes(const plan *p)
{
    return p->host_memory_bytes > 0 ? p->host_memory_bytes : physical_memory_bytes();
}

/* What the CPU backend holds whatever the beam does: the dose and small
 * tables (slices of doubles), the threads' scratch rows. */
static double cpu_fixed_bytes(const grid *g, int threads)
{
    return (double)g->slice * sizeof(double) * (1 + g->dose_planes) +
           (double)threads * (g->nth * g->nx * sizeof(float) + g->nx * sizeof(double));
}

double backend_cpu_min_bytes(const grid *g)
{
    /* The fixed part and the source's rows (row 0 of every bin and direction,
     * in both buffers and the host copy), for one thread per core. */
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    return cpu_fixed_bytes(g, cores > 0 ? (int)cores : 1) +
           3.0 * g->ncomp * g->ne * g->nth * g->nx * sizeof(float);
}

double backend_cpu_host_bytes(const grid *g)
{
    /* Two psi buffers (operators ping-pong), the deposit map (one float slice
     * per direction), dose in double, plus one slice of doubles for small
     * tables. */
    return (2.0 * (double)g->cells * sizeof(float) + (double)g->nth * g->slice * sizeof(float)) *
               g->ncomp +
           (double)g->slice * sizeof(double) * (1 + g->dose_planes);
}
