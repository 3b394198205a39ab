#include "transport/window.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "input/plan_access.h"
#include "numerics/deposit_path.h"
#include "physics/beam_reach.h"

double window_sigmas(double fraction)
{
    if (!(fraction > 0.0) || fraction >= 1.0)
        return 1e9;
    return sqrt(2.0 * log(1.0 / fraction)) + 1.0;
}

/* Columns of g that [lo, hi] mm touches, clipped to the grid. */
static window_span span_of_mm(const grid *g, double lo, double hi)
{
    int a = (int)floor((lo - g->x.edges[0]) / g->dx), b = (int)floor((hi - g->x.edges[0]) / g->dx);
    a = a < 0 ? 0 : a >= g->nx ? (int)g->nx - 1 : a;
    b = b < 0 ? 0 : b >= g->nx ? (int)g->nx - 1 : b;
    return (window_span){ a, b };
}

static window_span span_join(window_span a, window_span b)
{
    return (window_span){ a.x_lo < b.x_lo ? a.x_lo : b.x_lo, a.x_hi > b.x_hi ? a.x_hi : b.x_hi };
}

int window_shape_of(window_shape *ws, window_span *spans, const window_request *q, smx_error *err)
{
    const plan *p = q->p;
    const grid *g = q->g;
    const medium_map *m = q->m;
    const tables *const *mt = q->mt;
    const int first = q->first, n = q->n, field = q->field, collect_every = q->collect_every;
    int moving = q->moving;
    const double sigmas = q->sigmas;
    /* Each step moves a direction up to ds along its path, a deposit path
     * reaches SMX_PATH_CELLS cells: this many columns beyond the reach on
     * each side keep the steps' own moves inside. */
    const int guard = (int)ceil(g->ds / g->dx) + SMX_PATH_CELLS;
    int width = 1;
    double range_mm = 0.0;
    /* Each spot's reach (a path traced in quarter cells: independent, and a
     * field has hundreds of spots, so in parallel), then the joins. */
    const int count = field ? plan_spot_count(p) : 1;
    const int64_t jobs = (int64_t)n * count;
    window_span *c = malloc((size_t)jobs * sizeof *c);
    double *path = malloc((size_t)jobs * sizeof *path);
    if (!c || !path) {
        free(c);
        free(path);
        return smx_fail(err, SMX_EXIT_RUNTIME, "out of host memory");
    }
#pragma omp parallel for schedule(dynamic, 4)
    for (int64_t j = 0; j < jobs; j++) {
        const plan_spot s = plan_spot_at(p, field ? (int)j : first + (int)j);
        beam_reach b;
        beam_reach_of(g, m, mt, &s, sigmas < 1e8 ? sigmas : 1.0, &b);
        window_span sp = span_of_mm(g, b.x_lo_mm, b.x_hi_mm);
        sp.x_lo = sp.x_lo - guard < 0 ? 0 : sp.x_lo - guard;
        sp.x_hi = sp.x_hi + guard >= g->nx ? (int)g->nx - 1 : sp.x_hi + guard;
        c[j] = sigmas < 1e8 ? sp : (window_span){ 0, (int)g->nx - 1 };
        path[j] = isfinite(b.stop_mm) ? b.stop_mm : g->z.edges[g->nz];
    }
    /* How far apart in depth two directions drift a unit of path: the
     * spread of sin(theta) over the direction bins (theta from +x; 90 deg is
     * depth), 1 - cos(20 deg) = 0.06 for the default window about depth. */
    double vmin = 1.0, vmax = -1.0;
    for (int i = 0; i <= g->nth; i++) {
        const double v = sin(g->theta.edges[i]);
        vmin = v < vmin ? v : vmin;
        vmax = v > vmax ? v : vmax;
    }
    if (g->theta.edges[0] < M_PI / 2 && g->theta.edges[g->nth] > M_PI / 2)
        vmax = 1.0;
    const double lag = vmax - vmin;
    for (int k = 0; k < n; k++) {
        window_span sp = { (int)g->nx, -1 };
        for (int i = 0; i < count; i++) {
            const int64_t j = (int64_t)k * count + i;
            sp = span_join(sp, c[j]);
            range_mm = path[j] > range_mm ? path[j] : range_mm;
        }
        if (spans)
            spans[k] = sp;
        if (sp.x_hi - sp.x_lo + 1 > width)
            width = sp.x_hi - sp.x_lo + 1;
    }
    free(c);
    free(path);
    ws->nx = width > g->nx ? (int)g->nx : width;
    ws->slots = 1;
    /* Depth: a direction moves at most ceil(ds / dz) rows a step; between two
     * looks at the front the beam covers collect_every of them. Behind the
     * back row, a step's deposit path reaches SMX_PATH_CELLS rows. Between
     * back and front lies the weight that travelled in the slowest direction,
     * behind the fastest by `lag` of the path, and the shift scheme's random
     * walk of a sub-cell remainder at every change of direction bin, which
     * the early exit keeps to a few rows: measured 0.11 rows a step for a
     * 100 MeV pencil with the default grid (docs/model.md, "Windows"); twice
     * the geometric lag and that walk are kept. A beam whose rows spread
     * further stops the run with an error (window_follow). */
    const int per_step = (int)ceil(g->ds / g->dz);
    ws->front_margin = collect_every * per_step + SMX_PATH_CELLS + 1;
    ws->back_margin = SMX_PATH_CELLS + 1;
    const int band = 4 + (int)ceil(2.0 * (lag + 0.11 * g->dz / g->ds) * range_mm / g->dz);
    int nz = ws->front_margin + ws->back_margin + band;
    nz = (nz + 7) / 8 * 8;
    /* Without the early exit no tail ever vanishes, and the bilinear scheme
     * shares every move between two rows: weight then spreads in depth
     * without the bound above, so the window keeps every row. */
    if (p->streaming_scheme == STREAM_BILINEAR || p->early_exit == EARLY_EXIT_OFF ||
        p->window_mode == WINDOW_GRID)
        moving = 0;
    if (p->window_mode == WINDOW_GRID)
        ws->nx = (int)g->nx;
    ws->nz = !moving || nz >= g->nz ? (int)g->nz : nz;
    return 0;
}

int window_spot_band(const grid *g)
{
    const int rows = (int)ceil(WINDOW_SPOT_BAND_MM / g->dz - 1e-9);
    return rows > 8 ? rows : 8;
}

int window_rows_for_band(const window_shape *ws, int band)
{
    int nz = ws->front_margin + ws->back_margin + band;
    nz = (nz + 7) / 8 * 8;
    return nz < ws->nz ? nz : ws->nz;
}

/* An axis of n cells, its values set later (window_place_slot). */
static int axis_alloc(axis *dst, int64_t n)
{
    dst->n = n;
    dst->centres = calloc((size_t)n, sizeof *dst->centres);
    dst->edges = calloc((size_t)n + 1, sizeof *dst->edges);
    return dst->centres && dst->edges ? 0 : -1;
}

static int axis_copy(axis *dst, const axis *src)
{
    return axis_part(dst, src, 0, src->n);
}

int window_init(window *w, const grid *g, const medium_map *full, const window_shape *ws,
                smx_error *err)
{
    memset(w, 0, sizeof *w);
    w->g = g;
    w->kept_lo = 0, w->kept_hi = -1;
    w->full = full && full->cell ? full : NULL;
    w->shape = *ws;
    if (w->shape.slots < 1)
        w->shape.slots = 1;
    const int slots = w->shape.slots;
    w->width = (int64_t)slots * ws->nx;
    grid *wg = &w->wg;
    *wg = *g;
    wg->E = wg->theta = wg->x = wg->z = (axis){ 0 };
    wg->nx = w->width;
    wg->slot_nx = slots > 1 ? ws->nx : 0;
    wg->nz = ws->nz;
    wg->slice = wg->nz * wg->nx;
    wg->cells = wg->ne * wg->nth * wg->slice;
    if (full) {
        w->mm = *full;
        w->mm.nz = ws->nz;
        w->mm.nx = (int)w->width;
        w->mm.cell = NULL;
    }
    const size_t cells = (size_t)ws->nz * w->width;
    if (axis_copy(&wg->E, &g->E) || axis_copy(&wg->theta, &g->theta) ||
        axis_alloc(&wg->x, w->width) || axis_part(&wg->z, &g->z, 0, ws->nz) ||
        !(w->x0 = calloc((size_t)slots, sizeof *w->x0)) ||
        !(w->left = calloc((size_t)g->nz * w->width * g->dose_planes, sizeof *w->left)) ||
        !(w->rows_out = malloc(cells * g->dose_planes * sizeof *w->rows_out)) ||
        (w->full && !(w->mm.cell = calloc(cells, 1)))) {
        window_free(w);
        return smx_fail(err, SMX_EXIT_RUNTIME,
                        "out of host memory for a window of %d x %d cells (%d slots)", ws->nz,
                        ws->nx, slots);
    }
    return 0;
}

void window_free(window *w)
{
    grid_free(&w->wg);
    free(w->x0);
    free(w->mm.cell);
    free(w->left);
    free(w->rows_out);
    memset(w, 0, sizeof *w);
}

/* The window's map rows z .. z + count - 1 of slot k from the run's map at
 * rows z0 + z of the slot's columns; map_rows: every slot's. */
static void map_slot_rows(window *w, int k, int z, int count)
{
    const int nx = w->shape.nx;
    for (int r = z; r < z + count; r++)
        memcpy(w->mm.cell + (int64_t)r * w->width + (int64_t)k * nx,
               w->full->cell + (int64_t)(w->z0 + r) * w->full->nx + w->x0[k], (size_t)nx);
}

static void map_rows(window *w, int z, int count)
{
    if (w->full)
        for (int k = 0; k < w->shape.slots; k++)
            map_slot_rows(w, k, z, count);
}

void window_reset(window *w)
{
    /* The rows that have left need no clearing: slot_row reads only rows
     * below z0, and window_follow assigns each row (every plane, every
     * column) as z0 passes it. (Clearing them took 15 ms a batch on the
     * benchmark field's per-spot run, 0.37 s in all.) */
    w->z0 = 0;
    w->shifts = 0;
    w->band = 0;
    w->overflow = 0;
    memset(w->x0, 0, (size_t)w->shape.slots * sizeof *w->x0);
    /* The map: each placed slot writes its columns; a slot that takes no
     * source keeps media of an earlier one (valid, and under no weight). */
}

void window_place_slot(window *w, int k, window_span span)
{
    const int nx = w->shape.nx, gnx = (int)w->g->nx;
    int x0 = span.x_lo - (nx - (span.x_hi - span.x_lo + 1)) / 2;
    x0 = x0 + nx > gnx ? gnx - nx : x0;
    w->x0[k] = x0 < 0 ? 0 : x0;
    /* The slot's columns of the x axis (a slot's upper edge is the next
     * slot's lower one: the axis of a state with slots is not monotone). */
    memcpy(w->wg.x.centres + (int64_t)k * nx, w->g->x.centres + w->x0[k],
           (size_t)nx * sizeof(double));
    memcpy(w->wg.x.edges + (int64_t)k * nx, w->g->x.edges + w->x0[k],
           ((size_t)nx + 1) * sizeof(double));
    if (w->full) /* the slot's columns of the map */
        map_slot_rows(w, k, 0, w->shape.nz);
}

void window_place(window *w, window_span span)
{
    window_reset(w);
    window_place_slot(w, 0, span);
}

int window_follow(window *w, const backend_ops *be, void *ctx, int front, int back, smx_error *err)
{
    const window_shape *s = &w->shape;
    if (front >= 0 && back >= 0 && front - back + 1 > w->band)
        w->band = front - back + 1;
    const int room = (int)w->g->nz - (w->z0 + s->nz); /* rows of the grid beyond the window */
    if (front < 0 || room <= 0 || front < s->nz - s->front_margin)
        return 0;
    int rows = back - s->back_margin;
    /* Up to the grid's far end, which is the grid's edge, margin or not. */
    const int to_end = rows >= room;
    rows = to_end ? room : rows;
    w->overflow = rows <= 0 || (!to_end && front - rows >= s->nz - s->front_margin);
    if (w->overflow)
        return smx_fail(
            err, SMX_EXIT_RUNTIME,
            "the beam's rows (%d to %d of the grid) no longer fit its window of %d rows "
            "(%d kept ahead of the front, %d behind the back); transport.window: grid keeps "
            "every row",
            w->z0 + back, w->z0 + front, s->nz, s->front_margin, s->back_margin);
    /* The map moves with the window first (the backend reads it again in
     * the shift): rows behind fall off, the grid's next rows enter. */
    const int z_old = w->z0;
    w->z0 += rows;
    if (w->full) {
        memmove(w->mm.cell, w->mm.cell + (int64_t)rows * w->width,
                (size_t)(s->nz - rows) * w->width);
        map_rows(w, s->nz - rows, rows);
    }
    int rc = be->shift(ctx, rows, w->rows_out, err);
    if (rc)
        return rc;
    /* rows_out and left: the dose's planes (grid.dose_planes) one after the
     * other. The kept planes are skipped: the backend wrote nothing there,
     * and their rows of left would be first writes to pages of a large
     * calloc'd array, which took most of a per-spot shift's host time
     * (docs/bench/per-spot-slots.md, "The window's shift on the host"). */
    const int64_t n = (int64_t)rows * w->width;
    for (int q = 0; q < w->g->dose_planes; q++)
        if (q < w->kept_lo || q > w->kept_hi)
            memcpy(w->left + ((int64_t)q * w->g->nz + z_old) * w->width,
                   w->rows_out + (int64_t)q * n, (size_t)n * sizeof *w->left);
    w->shifts++;
    return 0;
}

/* Slot k's row z of dose plane q: in the rows that have left the window
 * (w->left) or in the window's own (win); NULL beyond the window's far end. */
static const double *slot_row(const window *w, int k, const double *win, int q, int z)
{
    const grid *g = w->g;
    const int64_t width = w->width, off = (int64_t)k * w->shape.nx;
    if (z < w->z0)
        return w->left + ((int64_t)q * g->nz + z) * width + off;
    if (z < w->z0 + w->shape.nz)
        return win + ((int64_t)q * w->shape.nz + (z - w->z0)) * width + off;
    return NULL;
}

void window_dose_plane(const window *w, int k, const double *win, int q, double *dose)
{
    const grid *g = w->g;
    double *dq = dose + q * g->slice;
    memset(dq, 0, (size_t)g->slice * sizeof *dose);
    for (int z = 0; z < g->nz; z++) {
        const double *src = slot_row(w, k, win, q, z);
        if (src)
            memcpy(dq + (int64_t)z * g->nx + w->x0[k], src, (size_t)w->shape.nx * sizeof *dose);
    }
}

void window_dose(const window *w, int k, const double *win, double *dose)
{
    for (int q = 0; q < w->g->dose_planes; q++)
        window_dose_plane(w, k, win, q, dose);
}

void window_plane_rows(const window *w, int k, const double *win, int q, const double **row)
{
    for (int z = 0; z < w->g->nz; z++)
        row[z] = slot_row(w, k, win, q, z);
}

static grid_box box_join_g(grid_box a, grid_box b)
{
    if (a.z0 > a.z1 || a.x0 > a.x1)
        return b;
    return (grid_box){ a.z0 < b.z0 ? a.z0 : b.z0, a.z1 > b.z1 ? a.z1 : b.z1,
                       a.x0 < b.x0 ? a.x0 : b.x0, a.x1 > b.x1 ? a.x1 : b.x1 };
}

void window_source(const window *w, int k, int first, const source_buf *src, float *wpsi,
                   grid_box *wocc)
{
    const float *psi0 = src->psi;
    const grid_box *occupied = src->occupied;
    const grid *wg = &w->wg;
    const grid g0 = grid_row0(w->g);
    const int nx = w->shape.nx, xk = w->x0[k], off = k * nx;
    for (int64_t ie = 0; ie < g0.ne; ie++) {
        grid_box b = occupied[ie];
        if (first)
            wocc[ie] = (grid_box){ 1, 0, 1, 0 };
        if (b.z0 > b.z1 || b.x0 > b.x1)
            continue;
        int x0 = b.x0 > xk ? b.x0 : xk, x1 = b.x1 < xk + nx - 1 ? b.x1 : xk + nx - 1;
        if (x0 > x1 || b.z0 > 0)
            continue;
        wocc[ie] = box_join_g(wocc[ie], (grid_box){ 0, 0, x0 - xk + off, x1 - xk + off });
        for (int64_t j = 0; j < g0.nth; j++)
            memcpy(wpsi + psi_index(wg, ie, j, 0, x0 - xk + off),
                   psi0 + psi_index(&g0, ie, j, 0, x0), (size_t)(x1 - x0 + 1) * sizeof *wpsi);
    }
}
