#include "transport/per_spot.h"

#include <stdlib.h>
#include <string.h>

#include "base/test_hooks.h"
#include "physics/source.h"

/* Spots stepped at once at most (backend.per_spot_lanes); with auto, the
 * backend's memory decides how many slots fit. */
#define SLOTS_MAX 64

/* Several spots may share a state (slots side by side) where a spot's run
 * does not depend on what it shares it with: under the shift and moments
 * schemes, whose moves the slots bound (the bilinear one's are not), and without the
 * adaptive early exit, whose threshold scales with the largest value of the
 * whole state. */
static int slots_allowed(const plan *p)
{
    return p->streaming_scheme != STREAM_BILINEAR && p->early_exit != EARLY_EXIT_ADAPTIVE;
}

/* The plan a spot's run steps under: with steps: auto, it ends when its
 * state holds no weight at all (auto_stop_weight 0, backend_auto_stop; every
 * particle stops at the energy cut-off or leaves), not below a fraction of
 * it, so that a spot that has ended and still shares its state with others
 * changes no more, and its row is the same in any batch, alone or not: the
 * run of that spot alone with transport.auto_stop_weight: 0. */
static plan per_spot_plan(const plan *p)
{
    plan q = *p;
    q.auto_stop_weight = 0.0;
    return q;
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

/* The per-spot state of shape ws with `want` slots, or fewer where the
 * backend's memory does not hold them (halved, with a warning); *slots: how
 * many it has. */
static int batch_state(stepper *sp, const stepper *proto, const sim_tables *st,
                       const window_shape *ws, int want, int *slots, smx_error *err)
{
    for (*slots = want;; *slots /= 2) {
        int rc = batch_setup(sp, proto, st, ws, *slots, err);
        if (!rc || *slots == 1)
            return rc;
        smx_warn("a per-spot state of %d slots could not be set up (%s); trying %d\n", *slots,
                 err->msg, *slots / 2);
        *err = (smx_error){ 0 };
    }
}

/* batch_state anew (sp and its dose scratch *wdose freed first), and the
 * scratch for the state's window dose. */
static int batch_rebuild(stepper *sp, double **wdose, const stepper *proto, const sim_tables *st,
                         const window_shape *ws, int want, int *slots, smx_error *err)
{
    stepper_free(sp);
    free(*wdose);
    *wdose = NULL;
    int rc = batch_state(sp, proto, st, ws, want, slots, err);
    if (!rc &&
        !(*wdose = malloc((size_t)sp->win.wg.slice * sp->win.wg.dose_planes * sizeof **wdose)))
        rc = smx_fail(err, SMX_EXIT_RUNTIME, "out of host memory");
    return rc;
}

/* The spots of a block in the order their batches take them: highest
 * occupied energy bin first (a batch's spots then need about as many steps,
 * and each batch's bins are those of its first spot), then spot order; w0:
 * the spot's weight on the grid (its row is per unit of it). */
typedef struct spot_key {
    int spot, top;
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
} spot_class;

static void spot_class_free(spot_class *k)
{
    if (k->built) {
        sim_tables_free(&k->st);
        grid_free(&k->g);
    }
    memset(k, 0, sizeof *k);
}

static int spot_class_build(spot_class *k, const plan *p, const grid *g, int ne, const tables *t,
                            const sim_media *media, smx_error *err)
{
    spot_class_free(k);
    if (grid_energy_prefix(&k->g, g, ne))
        return smx_fail(err, SMX_EXIT_RUNTIME, "out of host memory");
    int rc = simulate_tables_build(&k->st, p, &k->g, t, media, err);
    if (rc) {
        grid_free(&k->g);
        return rc;
    }
    k->built = 1;
    return 0;
}

/* output.per_spot_dose: every spot transported on its own window (its
 * lateral reach to where its dose falls below output.per_spot_threshold, and
 * a band of rows that follows it), up to backend.per_spot_lanes of them at
 * once in the slots of one state (auto: as many as the backend's memory
 * holds; physics/grid.h, slot_nx), so that one launch sequence steps them
 * all, on the energy bins the batch needs (spot_class); each spot's dose per
 * unit weight becomes its row of r->per_spot, in spot order. A row does not
 * depend on the spots stepped beside it (slots_allowed, per_spot_plan). The
 * steps' balances count in r's conservation figures. Spots first .. first +
 * n - 1 of the plan (all of them, or an MPI rank's block); n > 0. st: the
 * run's tables; t, media: what they were built from (a class's tables); mt:
 * its materials' tables (window sizes). */
int per_spot_runs(const stepper *proto_in, const sim_tables *st, const tables *t,
                  const sim_media *media, const tables *const *mt, halo_dose *halo,
                  const spectral_maps *smaps, float *host, grid_box *occupied, double *dose,
                  int first, int n, run_result *r, smx_error *err)
{
    const plan q = per_spot_plan(proto_in->p);
    const plan *p = &q;
    stepper proto = *proto_in;
    proto.p = p;
    const grid *g = proto_in->g;
    const grid g0 = grid_row0(g); /* the layout of host: a source fills row 0 */
    const int n_plan = plan_spot_count(p);
    spot_dose_free(&r->per_spot);
    spot_dose_free(&r->per_spot_let);
    r->per_spot.threshold = p->per_spot_threshold;
    r->per_spot_let.threshold = p->per_spot_threshold;
    /* Dropped values are summed at the reference density (spot_dose). */
    double *to_ref = NULL;
    if (medium_map_to_reference(st->mm, g->density, &to_ref))
        return smx_fail(err, SMX_EXIT_RUNTIME, "out of host memory");
    window_span *spans = malloc((size_t)n_plan * sizeof *spans);
    spot_key *order = malloc((size_t)n * sizeof *order);
    if (!spans || !order) {
        free(to_ref);
        free(spans);
        free(order);
        return smx_fail(err, SMX_EXIT_RUNTIME, "out of host memory for %d spots", n);
    }
    /* Each spot's highest occupied energy bin and weight, from its source
     * (filled again when its batch starts: a fill writes one row). */
    int rc = 0;
    for (int i = 0; i < n && !rc; i++) {
        double wk = 0.0, ek = 0.0;
        if ((rc = source_fill_spot(host, p, &g0, first + i, occupied, &wk, &ek, err)))
            break;
        order[i] = (spot_key){ first + i, 0, wk };
        for (int64_t ie = 0; ie < g->ne; ie++)
            if (occupied[ie].z0 <= occupied[ie].z1 && occupied[ie].x0 <= occupied[ie].x1)
                order[i].top = (int)ie;
        source_clear(host, &g0, occupied);
        if (!(wk > 0.0))
            rc = source_spot_fail(err, first + i, "weight", "this spot puts no weight on the grid");
    }
    qsort(order, (size_t)n, sizeof *order, by_top_desc);
    /* Fewer bins where every state computes a spot the same: in window mode,
     * whose angular method is not chosen by timing (backend_ops.lanes), and
     * in one medium. With several, a medium's choice between its two energy
     * tables (numerics/dither_phase.h) follows its range table over the
     * state's bins, extrapolated above the top one: a state of fewer bins
     * would choose otherwise for a particle that has crossed a lighter
     * medium. */
    const int classes = slots_allowed(p) && g->angle_mode == ANGLE_WINDOW && st->n_media <= 1;

    /* The windows' shape, from every spot of the plan, not one block's, so
     * that a row does not depend on the spots it ran beside (an MPI rank's
     * block, the batches); moving where the backend can move it, else again
     * with every row. A moving window starts with a band of
     * WINDOW_SPOT_BAND rows (bound: what window_shape_of allows). */
    if (proto.every_collect > WINDOW_SPOT_COLLECT)
        proto.every_collect = WINDOW_SPOT_COLLECT;
    window_shape bound = { 0 }, ws = { 0 };
    int band = smx_test_spot_band(WINDOW_SPOT_BAND), regrown = 0, n_classes = 0;
    stepper sp = { 0 };
    spot_class cls = { 0 };
    int slots = 1, want = 1, ne_first = 0;
    double *wdose = NULL;
    spot_dose *rows = rc ? NULL : calloc((size_t)n, sizeof *rows);
    /* output.per_spot_let: each spot's LETd x dose on its dose row's cells. */
    const int with_let = p->per_spot_let && g->plane_let_edep;
    spot_dose *lrows = rc || !with_let ? NULL : calloc((size_t)n, sizeof *lrows);
    double *let_d = with_let ? malloc((size_t)g->slice * sizeof *let_d) : NULL;
    if (!rc && (!rows || (with_let && (!lrows || !let_d))))
        rc = smx_fail(err, SMX_EXIT_RUNTIME, "out of host memory");
    double t0 = stepper_now_s(), last = t0, t_upload = 0.0, t_steps = 0.0, t_dose = 0.0;
    int appended = 0;
    run_result one;
    run_result_init(&one);
    int b0 = 0;
    while (!rc && b0 < n) {
        if (smx_interrupted) {
            rc = smx_fail(err, SMX_EXIT_INTERRUPTED,
                          "interrupted during the per-spot runs (%d of %d spots done)", b0, n);
            break;
        }
        /* The state for this batch: a class of fewer bins where it needs
         * few enough, and how many spots it holds at once (a state of one
         * slot asks the backend's memory). */
        const int need = classes ? order[b0].top + 1 : (int)g->ne;
        if (!cls.built || need > cls.g.ne || need <= SPOT_CLASS_SHRINK * cls.g.ne) {
            stepper_free(&sp);
            free(wdose);
            wdose = NULL;
            if ((rc = spot_class_build(&cls, p, g, need, t, media, err)))
                break;
            n_classes++;
            proto.g = &cls.g;
            sim_tables stq = cls.st;
            stq.p = p;
            for (int moving = !bound.nz ? 1 : bound.nz < g->nz;; moving = 0) {
                if (!bound.nz || !moving) {
                    rc = window_shape_of(&bound, spans, p, g, st->mm, mt, 0, n_plan, 0,
                                         window_sigmas(p->per_spot_threshold), proto.every_collect,
                                         moving, err);
                    ws = bound;
                    if (!rc && bound.nz < g->nz)
                        ws.nz = window_rows_for_band(&bound, band);
                }
                if (!rc)
                    rc = batch_setup(&sp, &proto, &stq, &ws, 1, err);
                if (rc || stepper_moves_ok(&sp))
                    break;
                stepper_free(&sp);
            }
            if (rc)
                break;
            if (!r->backend_name[0]) /* an MPI rank without the total */
                proto.be->describe(sp.ctx, r);
            int fit = proto.be->lanes ? proto.be->lanes(sp.ctx) : 1;
            want = p->per_spot_lanes > 0 ? p->per_spot_lanes : fit;
            want = want > n - b0 ? n - b0 : want > SLOTS_MAX ? SLOTS_MAX : want;
            if (!slots_allowed(p))
                want = 1;
            /* One spot at a time keeps the bound's rows: the band's would
             * only cost moves (a CPU move copies every row its bins have
             * touched). The probe is the state where nothing changes. */
            const int probe_nz = ws.nz;
            if (want == 1 && n_classes == 1)
                ws.nz = bound.nz;
            slots = 1;
            if (want > 1 || ws.nz != probe_nz)
                rc = batch_rebuild(&sp, &wdose, &proto, &stq, &ws, want, &slots, err);
            else if (!(wdose =
                           malloc((size_t)sp.win.wg.slice * sp.win.wg.dose_planes * sizeof *wdose)))
                rc = smx_fail(err, SMX_EXIT_RUNTIME, "out of host memory");
            if (rc)
                break;
            if (n_classes == 1) {
                ne_first = (int)cls.g.ne;
                r->spot_slots = slots;
                char which[96];
                if (n == n_plan)
                    snprintf(which, sizeof which, "%d spot%s", n, n == 1 ? "" : "s");
                else
                    snprintf(which, sizeof which,
                             "spots %d-%d of %d here (other processes run the rest)", first + 1,
                             first + n, n_plan);
                smx_info("per-spot dose: %s, %d at once (windows of %d x %d cells side by side, "
                         "%d energy bins), values below %.1e of each spot's peak dropped\n",
                         which, slots, ws.nz, ws.nx, (int)cls.g.ne, p->per_spot_threshold);
            }
            r->spot_slots = slots > r->spot_slots ? slots : r->spot_slots;
        }
        const int nb = n - b0 < slots ? n - b0 : slots;
        /* The batch's sources, each from the all-zero host buffer into its slot. */
        double ta = stepper_now_s(), w0 = 0.0, e0 = 0.0;
        window_reset(&sp.win);
        for (int k = 0; k < nb && !rc; k++) {
            const int spot = order[b0 + k].spot;
            double wk = 0.0, ek = 0.0;
            window_place_slot(&sp.win, k, spans[spot]);
            if ((rc = source_fill_spot(host, p, &g0, spot, occupied, &wk, &ek, err)))
                break;
            window_source(&sp.win, k, k == 0, host, occupied, sp.wpsi, sp.wocc);
            source_clear(host, &g0, occupied);
            w0 += wk;
            e0 += ek;
        }
        if (!rc)
            rc = sp.be->upload(sp.ctx, sp.wpsi, sp.wocc, w0, e0, err);
        source_clear(sp.wpsi, &sp.win.wg, sp.wocc);
        if (rc)
            break;
        run_result_restart(&one, w0, e0);
        double tb = stepper_now_s();
        t_upload += tb - ta;
        rc = stepper_run(&sp, &one, NULL, 0, NULL, NULL, err);
        double tc = stepper_now_s();
        t_steps += tc - tb;
        if (rc && sp.win.overflow && ws.nz < bound.nz) {
            /* The batch's rows outgrew its band: the batch again, on twice
             * the band (fewer slots where memory then holds fewer). */
            *err = (smx_error){ 0 };
            band *= 2;
            ws.nz = window_rows_for_band(&bound, band);
            regrown++;
            sim_tables stq = cls.st;
            stq.p = p;
            rc = batch_rebuild(&sp, &wdose, &proto, &stq, &ws, want, &slots, err);
            continue;
        }
        if (rc)
            break;
        if ((rc = sp.be->download_dose(sp.ctx, wdose, err)))
            break;
        const window *w = &sp.win;
        const int z1w = (w->z0 + w->shape.nz < g->nz ? w->z0 + w->shape.nz : (int)g->nz) - 1;
        for (int k = 0; k < nb && !rc; k++) {
            const int spot = order[b0 + k].spot;
            window_dose(w, k, wdose, dose);
            /* Only the rows and columns the slot has covered hold dose; the
             * nuclear halo reaches the whole grid. */
            int x0 = w->x0[k], x1 = w->x0[k] + w->shape.nx - 1, z1 = z1w;
            if (halo->on) {
                halo_dose_apply(halo, g, dose, NULL, NULL);
                x0 = 0;
                x1 = (int)g->nx - 1;
                z1 = (int)g->nz - 1;
            }
            for (int64_t z = 0; z <= z1; z++)
                for (int64_t c = z * g->nx + x0; c <= z * g->nx + x1; c++)
                    dose[c] /= order[b0 + k].w0;
            rows[spot - first].threshold = p->per_spot_threshold;
            rows[spot - first].to_reference = to_ref;
            if (spot_dose_append_box(&rows[spot - first], 1, dose, g->nx, 0, z1, x0, x1,
                                     order[b0 + k].w0))
                rc = smx_fail(err, SMX_EXIT_RUNTIME,
                              "out of host memory storing the dose of spot %d", spot + 1);
            if (!rc && with_let) { /* the LET is a ratio of planes: any normalisation */
                spectral_let(smaps, dose, let_d, NULL);
                lrows[spot - first].to_reference = to_ref;
                if (spot_dose_append_like(&lrows[spot - first], 1, &rows[spot - first], 0, dose,
                                          let_d, g->nx, 0, z1, x0, x1, order[b0 + k].w0))
                    rc = smx_fail(err, SMX_EXIT_RUNTIME,
                                  "out of host memory storing the LET of spot %d", spot + 1);
            }
        }
        r->spot_window_moves += w->shifts;
        if (w->band > r->spot_window_band)
            r->spot_window_band = w->band;
        run_result_add_balance(r, &one);
        t_dose += stepper_now_s() - tc;
        while (!rc && appended < n && rows[appended].n_spots == 1) {
            if (spot_dose_take_row(&r->per_spot, n, &rows[appended]) ||
                (with_let && spot_dose_take_row(&r->per_spot_let, n, &lrows[appended])))
                rc = smx_fail(err, SMX_EXIT_RUNTIME,
                              "out of host memory storing the dose of spot %d",
                              first + appended + 1);
            spot_dose_free(&rows[appended]);
            if (with_let)
                spot_dose_free(&lrows[appended]);
            appended++;
            if (!rc && appended == 1)
                rc = smx_test_fail("per-spot", err);
        }
        double now = stepper_now_s();
        if (!rc && (now - last > 1.0 || b0 + nb == n)) {
            double el = now - t0;
            smx_info("  spot %d/%d  %.1f s  %.1f spots/s  eta %.1f s\n", b0 + nb, n, el,
                     (b0 + nb) / el, el / (b0 + nb) * (n - b0 - nb));
            last = now;
        }
        b0 += nb;
    }
    r->spot_window_nz = ws.nz;
    r->spot_window_nx = ws.nx;
    r->spot_window_grew = regrown;
    r->spot_classes = n_classes;
    r->spot_bins_first = ne_first;
    r->spot_bins_last = (int)cls.g.ne;
    if (!rc && regrown)
        smx_info("  per-spot windows grew %d time%s to %d rows (a batch's rows outgrew the "
                 "band)\n",
                 regrown, regrown == 1 ? "" : "s", ws.nz);
    if (!rc)
        smx_info(
            "  per-spot time: uploads %.3f s, steps %.3f s, doses and their sparse rows %.3f s "
            "(up to %d spots at once; %d state%s, %d to %d energy bins)\n",
            t_upload, t_steps, t_dose, r->spot_slots, n_classes, n_classes == 1 ? "" : "s",
            ne_first, (int)cls.g.ne);
    run_result_free(&one);
    stepper_free(&sp);
    spot_class_free(&cls);
    if (rows)
        for (int k = 0; k < n; k++)
            spot_dose_free(&rows[k]);
    free(rows);
    if (lrows)
        for (int k = 0; k < n; k++)
            spot_dose_free(&lrows[k]);
    free(lrows);
    free(let_d);
    free(to_ref);
    free(spans);
    free(order);
    free(wdose);
    return rc;
}
