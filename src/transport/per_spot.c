#include "transport/per_spot.h"

#include <stdio.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "base/test_hooks.h"
#include "input/plan_access.h"
#include "physics/source.h"

/* Spots stepped at once at most (backend.per_spot_lanes); with auto, the
 * backend's memory decides how many slots fit. */
#define SLOTS_MAX 64

/* Several spots may share a state (slots side by side) where a spot's run
 * does not depend on what it shares it with: under the shift and moments
 * schemes, whose moves the slots bound (the bilinear one's are not), and without the
 * adaptive early exit, whose threshold scales with the largest value of the
 * whole state (and with auto_stop_weight 0: spot_class_build). */
static int slots_allowed(const plan *p)
{
    return p->streaming_scheme != STREAM_BILINEAR && p->early_exit != EARLY_EXIT_ADAPTIVE;
}

/* The per-spot state of `slots` slots of shape ws (a copy with ws.slots set):
 * its window, tables and backend context. */
static int batch_setup(stepper *sp, const stepper *proto, const sim_tables *st,
                       const window_shape *ws, int slots, smx_error *err)
{
    *sp = *proto;
    sp->ctx = NULL;
    window_shape w = *ws;
    w.slots = slots;
    int rc = stepper_window(sp, st, &w, 1, err);
    if (!rc && (rc = proto->be->setup(&sp->ctx, &sp->st, err)))
        stepper_free(sp);
    return rc;
}

/* The spots of a block in the order their batches take them: highest
 * occupied energy bin first (a batch's spots then need about as many steps,
 * and each batch's bins are those of its first spot), then spot order; w0:
 * the spot's weight on the grid (its row is per unit of it); steps: its
 * expected steps, its work in the progress count (spot_progress.h). */
typedef struct spot_key {
    int spot, top, steps;
    double w0;
} spot_key;
static int by_top_desc(const void *a, const void *b)
{
    const spot_key *x = a, *y = b;
    return x->top != y->top ? y->top - x->top : x->spot - y->spot;
}

/* The bins a batch's state holds: the run's lowest `ne` energy bins (its
 * first spot's highest occupied bin and below: no weight ever rises in
 * energy, physics/lut_energy.h), its grid and the tables built on it (the
 * same entries for those bins as the run's, every one of them a function of
 * its bin's energy and the bins below). A new class is built where the next
 * batch needs at most SPOT_CLASS_SHRINK of the bins the state holds: fewer
 * bins, more spots at once. */
#define SPOT_CLASS_SHRINK 0.6
typedef struct spot_class {
    grid g; /* g.ne: the bins */
    sim_tables st;
    int built;
    int borrowed; /* st's arrays are the run's (the class holds all its bins) */
} spot_class;

static void spot_class_free(spot_class *k)
{
    if (k->built) {
        if (!k->borrowed)
            sim_tables_free(&k->st);
        grid_free(&k->g);
    }
    memset(k, 0, sizeof *k);
}

/* The class of the job's run's lowest ne bins: its grid and its tables,
 * those of a per-spot state (auto_stop_weight 0, the early exit's threshold
 * tied to the rows' cut). */
static int spot_class_build(spot_class *k, const per_spot_job *J, int ne, smx_error *err)
{
    const plan *p = J->proto->p;
    const grid *g = J->proto->g;
    spot_class_free(k);
    if (grid_energy_prefix(&k->g, g, ne))
        return smx_fail(err, SMX_EXIT_RUNTIME, "out of host memory");
    if (k->g.ne == g->ne) {
        /* Every bin of the run: its tables are the run's, built from the
         * same inputs (a CT's media took as long again to build). */
        k->st = *J->st;
        k->st.g = &k->g;
        k->borrowed = 1;
    } else {
        int rc = simulate_tables_build(&k->st, p, &k->g, J->t, J->media, err);
        if (!rc && (rc = sim_tables_share_steps(&k->st, J->st, err)))
            sim_tables_free(&k->st);
        if (rc) {
            grid_free(&k->g);
            return rc;
        }
    }
    /* With steps: auto, a spot's run ends when its state holds no weight at
     * all (every particle stops at the energy cut-off or leaves), not below
     * a fraction of it, so that a spot that has ended and still shares its
     * state with others changes no more, and its row is the same in any
     * batch, alone or not: the run of that spot alone with
     * transport.auto_stop_weight: 0. */
    k->st.auto_stop_weight = 0.0;
    /* Tied to the rows' cut: a spot's tails below what its row keeps cost
     * steps and change no stored value beyond a fraction of the cut (the
     * measured bound: docs/accuracy-and-speed.md). */
    k->st.early_exit_threshold = plan_spot_early_exit(p);
    k->built = 1;
    return 0;
}

/* The per-spot runs of a block as they go: the job, the order of its spots,
 * the state the current batch steps on and the rows it has made. */
typedef struct spot_runs {
    const per_spot_job *job;
    const plan *p;
    const grid *g; /* the run's grid */
    grid g0; /* the layout of host: a source fills row 0 */
    int n_plan; /* the plan's spots (a block is n of them) */
    stepper proto; /* the run's settings; its grid the current class's */
    double *to_ref; /* dropped values are summed at the reference density (spot_dose) */
    window_span *spans; /* [n_plan]: each spot's columns */
    spot_key *order; /* [n]: the batches' order */
    int classes; /* fewer bins for a batch that needs fewer (spot_class) */
    window_shape bound, ws; /* what window_shape_of allows; the state's shape */
    int band, regrown, n_classes;
    stepper sp; /* the current state */
    spot_class cls; /* its bins */
    int slots, want, ne_first;
    double *wdose; /* [sp.win.wg.slice x planes]: the state's window dose */
    spot_dose *rows, *lrows; /* [n]: the block's dose rows; LETd x dose rows */
    int with_let; /* output.per_spot_let */
    /* The nuclear halo of a batch's spots (halo_dose.h's three parts): per
     * slot its blocks [bands][cz][cx], their sums [bands] and the
     * convolution's result [cz][cx]; room for halo_cap slots. */
    double *halo_in, *halo_sum, *halo_out;
    unsigned char *halo_has; /* [halo_cap] the slot's spot released energy into the halo */
    const double **halo_row; /* [omp_get_max_threads()][g->nz] */
    int halo_cap, halo_host; /* halo_host: the host transforms (the device declined) */
    int halo_dev; /* the batch's blocks are the device's (batch_halo_keep) */
    /* The rows of a batch's spots are made on up to row_threads threads,
     * each with its scratch: a grid's dose planes, the halo's block rows
     * (halo_dose_spread) and a LET map. */
    int row_threads;
    double **row_dose, **row_blocks, **row_let;
    run_result one; /* a batch's steps */
    int appended; /* rows handed to r, in spot order */
    spot_progress own; /* the count of a block alone (job->progress NULL) */
    spot_progress *prog; /* the count the batches add to: the job's or own */
    double t_states, t_upload, t_steps, t_dose; /* the per-spot line's phases */
    double t_moves; /* of t_steps, the host's time in the windows' moves */
    int n_batches, n_steps; /* the batches stepped, and their steps */
} spot_runs;

static void spot_runs_free(spot_runs *R)
{
    const int n = R->job->n;
    run_result_free(&R->one);
    stepper_free(&R->sp);
    spot_class_free(&R->cls);
    for (int k = 0; R->rows && k < n; k++)
        spot_dose_free(&R->rows[k]);
    free(R->rows);
    for (int k = 0; R->lrows && k < n; k++)
        spot_dose_free(&R->lrows[k]);
    free(R->lrows);
    free(R->to_ref);
    free(R->spans);
    free(R->order);
    free(R->wdose);
    free(R->halo_in);
    free(R->halo_sum);
    free(R->halo_out);
    free(R->halo_has);
    free(R->halo_row);
    for (int t = 0; t < R->row_threads; t++) {
        free(R->row_dose[t]);
        free(R->row_blocks[t]);
        free(R->row_let[t]);
    }
    free(R->row_dose);
    free(R->row_blocks);
    free(R->row_let);
}

/* Each spot's highest occupied energy bin and weight, from its source
 * (filled again when its batch starts: a fill writes one row), and the
 * block's spots in their batches' order. */
static int spot_order(spot_runs *R, smx_error *err)
{
    const per_spot_job *J = R->job;
    const grid *g = R->g;
    int rc = 0;
    for (int i = 0; i < J->n && !rc; i++) {
        source_buf sb = { J->host, J->occupied, 0.0, 0.0 };
        if ((rc = source_fill_spot(&sb, R->p, &R->g0, J->first + i, err)))
            break;
        R->order[i] = (spot_key){ J->first + i, 0, J->steps[i], sb.weight };
        for (int64_t ie = 0; ie < g->ne; ie++)
            if (J->occupied[ie].z0 <= J->occupied[ie].z1 &&
                J->occupied[ie].x0 <= J->occupied[ie].x1)
                R->order[i].top = (int)ie;
        source_clear(J->host, &R->g0, J->occupied);
        if (!(sb.weight > 0.0))
            rc = source_spot_fail(err, J->first + i, "weight",
                                  "this spot puts no weight on the grid");
    }
    qsort(R->order, (size_t)J->n, sizeof *R->order, by_top_desc);
    return rc;
}

/* What the runs need before the first batch: the spots' order, the rows'
 * buffers. */
static int spot_runs_init(spot_runs *R, const per_spot_job *J, run_result *r, smx_error *err)
{
    const plan *p = J->proto->p;
    const grid *g = J->proto->g;
    *R = (spot_runs){ .job = J,
                      .p = p,
                      .g = g,
                      .g0 = grid_row0(g),
                      .n_plan = plan_spot_count(p),
                      .proto = *J->proto,
                      .band = smx_test_spot_band(window_spot_band(g)),
                      .slots = 1,
                      .want = 1 };
    run_result_init(&R->one);
    spot_dose_free(&r->per_spot);
    spot_dose_free(&r->per_spot_let);
    r->per_spot.threshold = p->per_spot_threshold;
    r->per_spot_let.threshold = p->per_spot_threshold;
    if (medium_map_to_reference(J->st->mm, g->density, &R->to_ref))
        return smx_fail(err, SMX_EXIT_RUNTIME, "out of host memory");
    R->spans = malloc((size_t)R->n_plan * sizeof *R->spans);
    R->order = malloc((size_t)J->n * sizeof *R->order);
    if (!R->spans || !R->order)
        return smx_fail(err, SMX_EXIT_RUNTIME, "out of host memory for %d spots", J->n);
    int rc = spot_order(R, err);
    if (rc)
        return rc;
    /* Fewer bins where every state computes a spot the same: in window mode,
     * whose angular method is not chosen by timing (backend_ops.lanes). With
     * media, a state of fewer bins takes the run's range tables
     * (sim_tables_share_steps), so that its media choose their energy tables
     * as the run's. */
    R->classes = slots_allowed(p) && g->angle_mode == ANGLE_WINDOW;
    /* The windows' collect interval: a moving window is moved at collects. */
    if (R->proto.every_collect > WINDOW_SPOT_COLLECT)
        R->proto.every_collect = WINDOW_SPOT_COLLECT;
    R->rows = calloc((size_t)J->n, sizeof *R->rows);
    /* output.per_spot_let: each spot's LETd x dose on its dose row's cells. */
    R->with_let = p->per_spot_let && g->plane_let_edep;
    if (R->with_let) {
        R->lrows = calloc((size_t)J->n, sizeof *R->lrows);
    }
    if (!R->rows || (R->with_let && !R->lrows))
        return smx_fail(err, SMX_EXIT_RUNTIME, "out of host memory");
    R->prog = J->progress;
    if (!R->prog) { /* a field without scenarios: its spots are the count */
        double work = 0.0;
        for (int i = 0; i < J->n; i++)
            work += R->order[i].steps;
        spot_progress_begin(&R->own, &(spot_progress_size){ J->n, work, 0, 1, 0 }, stepper_now_s());
        R->prog = &R->own;
    }
    spot_progress_spots(R->prog, J->n);
    return 0;
}

/* The per-spot state of shape R->ws with R->want slots, or fewer where the
 * backend's memory does not hold them (halved, with a warning; R->slots: how
 * many it has), the old state and its dose scratch freed first, and the
 * scratch for its window dose. */
static int batch_rebuild(spot_runs *R, smx_error *err)
{
    stepper_free(&R->sp);
    free(R->wdose);
    R->wdose = NULL;
    int rc;
    for (R->slots = R->want;; R->slots /= 2) {
        rc = batch_setup(&R->sp, &R->proto, &R->cls.st, &R->ws, R->slots, err);
        if (!rc || R->slots == 1)
            break;
        smx_warn("a per-spot state of %d slots could not be set up (%s); trying %d\n", R->slots,
                 err->msg, R->slots / 2);
        *err = (smx_error){ 0 };
    }
    if (!rc && !(R->wdose = malloc((size_t)R->sp.win.wg.slice * R->sp.win.wg.dose_planes *
                                   sizeof *R->wdose)))
        rc = smx_fail(err, SMX_EXIT_RUNTIME, "out of host memory");
    return rc;
}

/* The windows' shape, from every spot of the plan, not one block's, so that
 * a row does not depend on the spots it ran beside (an MPI rank's block, the
 * batches), and a probe state of one slot on the current class: moving
 * where the backend can move it, else again with every row. A moving window
 * starts with a band of R->band rows (bound: what window_shape_of allows). */
static int probe_state(spot_runs *R, smx_error *err)
{
    const per_spot_job *J = R->job;
    const plan *p = R->p;
    int rc = 0;
    for (int moving = !R->bound.nz ? 1 : R->bound.nz < R->g->nz;; moving = 0) {
        if (!R->bound.nz || !moving) {
            const window_request q = { p,
                                       R->g,
                                       J->st->mm,
                                       J->mt,
                                       0,
                                       R->n_plan,
                                       0,
                                       window_sigmas(p->per_spot_threshold),
                                       R->proto.every_collect,
                                       moving };
            rc = window_shape_of(&R->bound, R->spans, &q, err);
            R->ws = R->bound;
            if (!rc && R->bound.nz < R->g->nz)
                R->ws.nz = window_rows_for_band(&R->bound, R->band);
        }
        if (!rc)
            rc = batch_setup(&R->sp, &R->proto, &R->cls.st, &R->ws, 1, err);
        if (rc || stepper_moves_ok(&R->sp))
            return rc;
        stepper_free(&R->sp);
    }
}

/* The first state's line of the log: how many spots, how many at once, on
 * which windows. */
static void announce_states(const spot_runs *R)
{
    const per_spot_job *J = R->job;
    const int n = J->n;
    char which[96];
    if (n == R->n_plan)
        snprintf(which, sizeof which, "%d spot%s", n, n == 1 ? "" : "s");
    else
        snprintf(which, sizeof which, "spots %d-%d of %d here (other processes run the rest)",
                 J->first + 1, J->first + n, R->n_plan);
    smx_info("per-spot dose: %s, %d at once (windows of %d x %d cells side by side, "
             "%d energy bins), values below %.1e of each spot's peak dropped\n",
             which, R->slots, R->ws.nz, R->ws.nx, (int)R->cls.g.ne, R->p->per_spot_threshold);
}

/* The state for the batch that starts at b0: a class of fewer bins where it
 * needs few enough, and how many spots it holds at once (a state of one slot
 * asks the backend's memory). Kept while the batch fits the current one. */
static int class_state(spot_runs *R, int b0, run_result *r, smx_error *err)
{
    const per_spot_job *J = R->job;
    const int need = R->classes ? R->order[b0].top + 1 : (int)R->g->ne;
    if (R->cls.built && need <= R->cls.g.ne && need > SPOT_CLASS_SHRINK * R->cls.g.ne)
        return 0;
    stepper_free(&R->sp);
    free(R->wdose);
    R->wdose = NULL;
    int rc = spot_class_build(&R->cls, J, need, err);
    if (rc)
        return rc;
    R->n_classes++;
    R->proto.g = &R->cls.g;
    if ((rc = probe_state(R, err)))
        return rc;
    if (!r->backend_name[0]) /* an MPI rank without the total */
        R->proto.be->describe(R->sp.ctx, r);
    const int n_left = J->n - b0;
    const int fit = R->proto.be->lanes ? R->proto.be->lanes(R->sp.ctx) : 1;
    int want = R->p->per_spot_lanes > 0 ? R->p->per_spot_lanes : fit;
    want = want > n_left ? n_left : want > SLOTS_MAX ? SLOTS_MAX : want;
    R->want = slots_allowed(R->p) ? want : 1;
    /* One spot at a time keeps the bound's rows: a band would add moves and
     * save no time (the CPU's six-spot bench: per-spot phase within 2 %,
     * bench/results/cpu-clears.txt). The probe is the state where nothing
     * changes. */
    const int probe_nz = R->ws.nz;
    if (R->want == 1 && R->n_classes == 1)
        R->ws.nz = R->bound.nz;
    R->slots = 1;
    if (R->want > 1 || R->ws.nz != probe_nz)
        rc = batch_rebuild(R, err);
    else if (!(R->wdose = malloc((size_t)R->sp.win.wg.slice * R->sp.win.wg.dose_planes *
                                 sizeof *R->wdose)))
        rc = smx_fail(err, SMX_EXIT_RUNTIME, "out of host memory");
    if (rc)
        return rc;
    if (R->n_classes == 1) {
        R->ne_first = (int)R->cls.g.ne;
        r->spot_slots = R->slots;
        announce_states(R);
    }
    r->spot_slots = R->slots > r->spot_slots ? R->slots : r->spot_slots;
    return 0;
}

/* The batch's sources (spots order[b0 .. b0 + nb)), each from the all-zero
 * host buffer into its slot, uploaded as one source. */
static int batch_upload(spot_runs *R, int b0, int nb, smx_error *err)
{
    const per_spot_job *J = R->job;
    stepper *sp = &R->sp;
    double w0 = 0.0, e0 = 0.0;
    int rc = 0;
    window_reset(&sp->win);
    for (int k = 0; k < nb && !rc; k++) {
        const int spot = R->order[b0 + k].spot;
        source_buf sb = { J->host, J->occupied, 0.0, 0.0 };
        window_place_slot(&sp->win, k, R->spans[spot]);
        if ((rc = source_fill_spot(&sb, R->p, &R->g0, spot, err)))
            break;
        window_source(&sp->win, k, k == 0, &sb, sp->wpsi, sp->wocc);
        source_clear(J->host, &R->g0, J->occupied);
        w0 += sb.weight;
        e0 += sb.energy_MeV;
    }
    if (!rc)
        rc = sp->be->upload(sp->ctx, sp->wpsi, sp->wocc, w0, e0, err);
    source_clear(sp->wpsi, &sp->win.wg, sp->wocc);
    if (!rc)
        run_result_restart(&R->one, w0, e0);
    return rc;
}

/* The energy slot k released into the halo: its bands' sums (halo_dose_apply's order). */
static double halo_released(const spot_runs *R, int k)
{
    const int nb = R->job->halo->bands;
    double rel = 0.0;
    for (int b = 0; b < nb; b++)
        rel += R->halo_sum[k * nb + b];
    return rel;
}

/* After the batch's upload: its nb spots' halo blocks kept on the device
 * where the backend can (backend_ops.halo_keep), the released energy's
 * planes then never copied out; else (R->halo_host from the first decline
 * on) the host sums them from those planes (batch_halo). */
static int batch_halo_keep(spot_runs *R, int nb, smx_error *err)
{
    const halo_dose *h = R->job->halo;
    const backend_ops *be = R->sp.be;
    R->halo_dev = 0;
    R->sp.win.kept_lo = 0, R->sp.win.kept_hi = -1;
    if (!h->on || R->halo_host || !be->halo_keep || !be->halo_convolve)
        return 0;
    const halo_fft_job fft = { h->Z, h->X, h->cz, h->cx, h->bands, nb, h->kre, h->kim, NULL, NULL };
    /* Band b's released energy is dose plane 1 + b (grid.dose_planes). */
    const halo_block_spec spec = { fft, h->fz, h->fx, h->ox, 1, nb, R->sp.win.x0 };
    const int rc = be->halo_keep(R->sp.ctx, &spec, err);
    if (rc == -1)
        R->halo_host = 1;
    R->halo_dev = rc == 0;
    if (R->halo_dev) /* the window's shifts then leave the bands' planes alone */
        R->sp.win.kept_lo = spec.plane0, R->sp.win.kept_hi = spec.plane0 + h->bands - 1;
    return rc == -1 ? 0 : rc;
}

/* Room for the halo of nb spots: the convolutions' results and whether each
 * spot released any energy (both paths), the blocks and their sums (the
 * host's). */
static int halo_room(spot_runs *R, int nb, smx_error *err)
{
    const halo_dose *h = R->job->halo;
    const int64_t nblk = h->cz * h->cx;
    if (nb <= R->halo_cap)
        return 0;
    free(R->halo_in);
    free(R->halo_sum);
    free(R->halo_out);
    free(R->halo_has);
    R->halo_in = malloc((size_t)(nb * h->bands * nblk) * sizeof *R->halo_in);
    R->halo_sum = malloc((size_t)(nb * h->bands) * sizeof *R->halo_sum);
    R->halo_out = malloc((size_t)(nb * nblk) * sizeof *R->halo_out);
    R->halo_has = malloc((size_t)nb * sizeof *R->halo_has);
    R->halo_cap = nb;
    if (!R->halo_row)
        R->halo_row = malloc((size_t)omp_get_max_threads() * R->g->nz * sizeof *R->halo_row);
    if (!R->halo_in || !R->halo_sum || !R->halo_out || !R->halo_has || !R->halo_row) {
        R->halo_cap = 0;
        return smx_fail(err, SMX_EXIT_RUNTIME,
                        "out of host memory for the nuclear halo of %d spots", nb);
    }
    return 0;
}

/* The nuclear halo of the batch's nb spots: the device's blocks transformed
 * there (batch_halo_keep), or the blocks summed on the host from the state's
 * window dose and transformed on the device where the backend can, else on
 * the host. */
static int batch_halo(spot_runs *R, int nb, smx_error *err)
{
    halo_dose *h = R->job->halo;
    const window *w = &R->sp.win;
    const int64_t nblk = h->cz * h->cx;
    int rc = halo_room(R, nb, err);
    if (rc)
        return rc;
    const backend_ops *be = R->sp.be;
    if (R->halo_dev) {
        const halo_fft_job job = { h->Z, h->X,   h->cz,  h->cx, h->bands,
                                   nb,   h->kre, h->kim, NULL,  R->halo_out };
        if ((rc = be->halo_convolve(R->sp.ctx, &job, err)))
            return rc == -1 ? smx_fail(err, SMX_EXIT_RUNTIME,
                                       "internal: the device declined the halo it keeps")
                            : rc;
        /* No energy released, no blocks: the transforms of zeros are zeros. */
        for (int k = 0; k < nb; k++) {
            R->halo_has[k] = 0;
            for (int64_t i = 0; i < nblk && !R->halo_has[k]; i++)
                R->halo_has[k] = R->halo_out[k * nblk + i] != 0.0;
        }
        return 0;
    }
    memset(R->halo_in, 0, (size_t)(nb * h->bands * nblk) * sizeof *R->halo_in);
    /* Each (spot, band)'s blocks on its own thread (its own sum, in the
     * same order on any): one thread walked every slot's rows of every band
     * while the device waited. */
    const int nkb = nb * h->bands;
#pragma omp parallel for schedule(dynamic, 1)
    for (int kb = 0; kb < nkb; kb++) {
        const int k = kb / h->bands, b = kb % h->bands;
        const double **row = R->halo_row + (int64_t)omp_get_thread_num() * R->g->nz;
        window_plane_rows(w, k, R->wdose, 1 + b, row);
        const halo_rows plane = { row, R->g->nz, w->x0[k], w->shape.nx };
        R->halo_sum[kb] = halo_dose_blocks(h, &plane, R->halo_in + (int64_t)kb * nblk);
    }
    for (int k = 0; k < nb; k++)
        R->halo_has[k] = halo_released(R, k) != 0.0;
    if (be->halo_convolve && !R->halo_host) {
        const halo_fft_job job = { h->Z, h->X,   h->cz,  h->cx,      h->bands,
                                   nb,   h->kre, h->kim, R->halo_in, R->halo_out };
        rc = be->halo_convolve(R->sp.ctx, &job, err);
        if (rc != -1)
            return rc;
        R->halo_host = 1;
    }
    for (int k = 0; k < nb; k++)
        if (R->halo_has[k])
            halo_dose_convolve(h, R->halo_in + k * h->bands * nblk, R->halo_sum + k * h->bands,
                               R->halo_out + k * nblk);
    return 0;
}

/* Each row thread's scratch (spot_runs' row_*), made on the first batch. */
static int row_scratch(spot_runs *R, smx_error *err)
{
    if (R->row_threads)
        return 0;
    const grid *g = R->g;
    const halo_dose *h = R->job->halo;
    const int n = omp_get_max_threads();
    R->row_dose = calloc((size_t)n, sizeof *R->row_dose);
    R->row_blocks = calloc((size_t)n, sizeof *R->row_blocks);
    R->row_let = calloc((size_t)n, sizeof *R->row_let);
    if (!R->row_dose || !R->row_blocks || !R->row_let)
        return smx_fail(err, SMX_EXIT_RUNTIME, "out of host memory for the spots' rows");
    R->row_threads = n;
    for (int t = 0; t < n; t++) {
        R->row_dose[t] = malloc((size_t)g->slice * g->dose_planes * sizeof **R->row_dose);
        if (h->on)
            R->row_blocks[t] = malloc((size_t)(h->cz * g->nx) * sizeof **R->row_blocks);
        if (R->with_let)
            R->row_let[t] = malloc((size_t)g->slice * sizeof **R->row_let);
        if (!R->row_dose[t] || (h->on && !R->row_blocks[t]) || (R->with_let && !R->row_let[t]))
            return smx_fail(err, SMX_EXIT_RUNTIME,
                            "out of host memory for the spots' rows (%d threads)", n);
    }
    return 0;
}

/* Spot k of the batch (order[b0 + k]): its dose per unit weight from the
 * state's window dose, with the run's nuclear halo, into its sparse rows, on
 * row thread t's scratch. */
static int batch_row(spot_runs *R, int b0, int k, int t, smx_error *err)
{
    const per_spot_job *J = R->job;
    const grid *g = R->g;
    const window *w = &R->sp.win;
    double *dose = R->row_dose[t];
    const spot_key key = R->order[b0 + k];
    const int row = key.spot - J->first;
    /* The planes a row reads: the dose, and the LET's (the halo's bands are
     * in its blocks already, batch_halo). */
    window_dose_plane(w, k, R->wdose, 0, dose);
    if (R->with_let) {
        window_dose_plane(w, k, R->wdose, g->plane_edep, dose);
        window_dose_plane(w, k, R->wdose, g->plane_let_edep, dose);
        window_dose_plane(w, k, R->wdose, g->plane_track, dose);
    }
    /* Only the rows and columns the slot has covered hold dose; the nuclear
     * halo reaches the whole grid. */
    int x0 = w->x0[k], x1 = w->x0[k] + w->shape.nx - 1;
    int z1 = (w->z0 + w->shape.nz < g->nz ? w->z0 + w->shape.nz : (int)g->nz) - 1;
    if (J->halo->on) {
        const halo_dose *h = J->halo;
        if (R->halo_has[k])
            halo_dose_spread(J->halo, g, R->halo_out + (int64_t)k * h->cz * h->cx, dose,
                             R->row_blocks[t]);
        x0 = 0;
        x1 = (int)g->nx - 1;
        z1 = (int)g->nz - 1;
    }
    for (int64_t z = 0; z <= z1; z++)
        for (int64_t c = z * g->nx + x0; c <= z * g->nx + x1; c++)
            dose[c] /= key.w0;
    R->rows[row].threshold = R->p->per_spot_threshold;
    R->rows[row].to_reference = R->to_ref;
    const spot_row_src src = { dose, { g->nx, 0, z1, x0, x1 }, key.w0 };
    if (spot_dose_append_box(&R->rows[row], 1, &src))
        return smx_fail(err, SMX_EXIT_RUNTIME, "out of host memory storing the dose of spot %d",
                        key.spot + 1);
    if (!R->with_let)
        return 0;
    /* The LET is a ratio of planes: any normalisation. */
    spectral_let(J->smaps, dose, R->row_let[t], NULL);
    R->lrows[row].to_reference = R->to_ref;
    if (spot_dose_append_like(&R->lrows[row], 1, &R->rows[row], 0, &src, R->row_let[t]))
        return smx_fail(err, SMX_EXIT_RUNTIME, "out of host memory storing the LET of spot %d",
                        key.spot + 1);
    return 0;
}

/* The rows finished in spot order, handed to r as they complete. */
static int take_rows(spot_runs *R, run_result *r, smx_error *err)
{
    const per_spot_job *J = R->job;
    const int n = J->n, a = R->appended;
    int count = 0;
    while (a + count < n && R->rows[a + count].n_spots == 1)
        count++;
    if (!count)
        return 0;
    int rc = 0;
    if (spot_dose_take_rows(&r->per_spot, n, R->rows + a, count) ||
        (R->with_let && spot_dose_take_rows(&r->per_spot_let, n, R->lrows + a, count)))
        rc = smx_fail(err, SMX_EXIT_RUNTIME, "out of host memory storing the doses of spots %d-%d",
                      J->first + a + 1, J->first + a + count);
#pragma omp parallel for schedule(dynamic, 1)
    for (int k = a; k < a + count; k++) {
        spot_dose_free(&R->rows[k]);
        if (R->with_let)
            spot_dose_free(&R->lrows[k]);
    }
    R->appended += count;
    if (!rc && a == 0)
        rc = smx_test_fail("per-spot", err);
    return rc;
}

/* The kernels that step the spots (run_result.spot_kernel_variants): the
 * current state's, described after an upload, which chooses its pipeline. */
static int note_spot_kernels(const spot_runs *R, run_result *r, smx_error *err)
{
    run_result *d = calloc(1, sizeof *d);
    if (!d)
        return smx_fail(err, SMX_EXIT_RUNTIME, "out of host memory");
    R->sp.be->describe(R->sp.ctx, d);
    snprintf(r->spot_kernel_variants, sizeof r->spot_kernel_variants, "%s", d->kernel_variants);
    free(d);
    return 0;
}

/* One batch, spots order[b0 .. b0 + nb), on the current state: uploaded,
 * stepped, its rows made. *again: its rows outgrew the state's band, which
 * is then twice as wide (fewer slots where memory then holds fewer); the
 * batch runs again. */
static int run_batch(spot_runs *R, int b0, int nb, run_result *r, int *again, smx_error *err)
{
    double ta = stepper_now_s();
    int rc = batch_upload(R, b0, nb, err);
    if (!rc)
        rc = batch_halo_keep(R, nb, err);
    if (rc)
        return rc;
    if (!r->spot_kernel_variants[0] && (rc = note_spot_kernels(R, r, err)))
        return rc;
    double tb = stepper_now_s();
    R->t_upload += tb - ta;
    rc = stepper_run(&R->sp, &R->one, NULL, 0, err);
    double tc = stepper_now_s();
    R->t_steps += tc - tb;
    R->t_moves += R->sp.moves_s;
    R->n_batches++;
    R->n_steps += R->one.n_steps;
    *again = 0;
    if (rc && R->sp.win.overflow && R->ws.nz < R->bound.nz) {
        *err = (smx_error){ 0 };
        R->band *= 2;
        R->ws.nz = window_rows_for_band(&R->bound, R->band);
        R->regrown++;
        *again = 1;
        return batch_rebuild(R, err);
    }
    if (rc || (rc = R->sp.be->download_dose(R->sp.ctx, R->wdose, err)))
        return rc;
    if (R->job->halo->on && (rc = batch_halo(R, nb, err)))
        return rc;
    if ((rc = row_scratch(R, err)))
        return rc;
    /* Each spot's row on its own thread and scratch: the same row on any. */
    smx_error *errs = calloc((size_t)nb, sizeof *errs);
    int *rcs = calloc((size_t)nb, sizeof *rcs);
    if (!errs || !rcs) {
        free(errs);
        free(rcs);
        return smx_fail(err, SMX_EXIT_RUNTIME, "out of host memory");
    }
    const int nt = nb < R->row_threads ? nb : R->row_threads;
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)
    for (int k = 0; k < nb; k++)
        rcs[k] = batch_row(R, b0, k, omp_get_thread_num(), &errs[k]);
    for (int k = 0; k < nb && !rc; k++)
        if ((rc = rcs[k]))
            *err = errs[k];
    free(errs);
    free(rcs);
    r->spot_window_moves += R->sp.win.shifts;
    if (R->sp.win.band > r->spot_window_band)
        r->spot_window_band = R->sp.win.band;
    run_result_add_balance(r, &R->one);
    rc = rc ? rc : take_rows(R, r, err);
    R->t_dose += stepper_now_s() - tc;
    return rc;
}

/* The batch of spots order[b0 .. b0 + nb), done in `seconds`, counted; the
 * progress line at most once a second and after the block's last batch. */
static void log_progress(spot_runs *R, int b0, int nb, double seconds)
{
    double work = 0.0;
    for (int k = b0; k < b0 + nb; k++)
        work += R->order[k].steps;
    spot_progress_batch(R->prog, nb, work, seconds);
    spot_progress_log(R->prog, stepper_now_s(), b0 + nb == R->job->n);
}

/* What the runs leave in r besides the rows, and the closing lines of the log. */
static void report_runs(const spot_runs *R, int rc, run_result *r)
{
    r->spot_window_nz = R->ws.nz;
    r->spot_window_nx = R->ws.nx;
    r->spot_window_grew = R->regrown;
    r->spot_classes = R->n_classes;
    r->spot_bins_first = R->ne_first;
    r->spot_bins_last = (int)R->cls.g.ne;
    if (rc)
        return;
    if (R->regrown)
        smx_info("  per-spot windows grew %d time%s to %d rows (a batch's rows outgrew the "
                 "band)\n",
                 R->regrown, R->regrown == 1 ? "" : "s", R->ws.nz);
    smx_info("  per-spot time: states %.3f s, uploads %.3f s, steps %.3f s (%d in %d batch%s; of "
             "them %.3f s on the host moving the windows), doses and their sparse rows %.3f s (up "
             "to %d spots at once; %d state%s, %d to %d energy bins)\n",
             R->t_states, R->t_upload, R->t_steps, R->n_steps, R->n_batches,
             R->n_batches == 1 ? "" : "es", R->t_moves, R->t_dose, r->spot_slots, R->n_classes,
             R->n_classes == 1 ? "" : "s", R->ne_first, (int)R->cls.g.ne);
}

/* The spots of the batch from order[b0]: as many as the state holds, the
 * batch ended early at a change of the spots' highest occupied bin (the end
 * of an energy layer) where that keeps more than half of them. A step visits
 * the energy bins of all its spots, and spots of two layers hold bands of
 * bins apart (a few bins wide early, tens late): one layer's batch writes
 * only its own band. The rows do not depend on the batch. */
static int batch_count(const spot_runs *R, int b0)
{
    const int n_left = R->job->n - b0;
    if (n_left <= R->slots)
        return n_left;
    for (int k = R->slots; 2 * k > R->slots; k--)
        if (R->order[b0 + k].top != R->order[b0 + k - 1].top)
            return k;
    return R->slots;
}

/* output.per_spot_dose: every spot transported on its own window (its
 * lateral reach to where its dose falls below output.per_spot_threshold, and
 * a band of rows that follows it), up to backend.per_spot_lanes of them at
 * once in the slots of one state (auto: as many as the backend's memory
 * holds; physics/grid.h, slot_nx), so that one launch sequence steps them
 * all, on the energy bins the batch needs (spot_class); each spot's dose per
 * unit weight becomes its row of r->per_spot, in spot order. A row does not
 * depend on the spots stepped beside it (slots_allowed, spot_class_build).
 * The steps' balances count in r's conservation figures. */
int per_spot_runs(const per_spot_job *job, run_result *r, smx_error *err)
{
    spot_runs R;
    int rc = spot_runs_init(&R, job, r, err);
    int b0 = 0;
    while (!rc && b0 < job->n) {
        if (smx_interrupted) {
            rc = smx_fail(err, SMX_EXIT_INTERRUPTED,
                          "interrupted during the per-spot runs (%d of %d spots done)", b0, job->n);
            break;
        }
        const double t_state = stepper_now_s();
        if ((rc = class_state(&R, b0, r, err)))
            break;
        R.t_states += stepper_now_s() - t_state; /* the tables and backend of each state */
        const int nb = batch_count(&R, b0);
        int again = 0;
        const double t_batch = stepper_now_s();
        if ((rc = run_batch(&R, b0, nb, r, &again, err)) || again)
            continue;
        log_progress(&R, b0, nb, stepper_now_s() - t_batch);
        b0 += nb;
    }
    report_runs(&R, rc, r);
    spot_runs_free(&R);
    return rc;
}
