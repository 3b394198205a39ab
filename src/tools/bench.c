/* smx2d-sim --bench: the benchmark protocol of BENCHMARKS.md ("How to reproduce",
 * "How to read the table").
 *
 * Grids Small 20x16x100x100, Production 100x32x400x200 and Stress 200x64x800x400
 * (Ne x Ntheta x Nz x Nx), each with (a) a 70 MeV pencil beam (dx = dz = ds =
 * 0.15 mm, 40 deg window, 1-70 MeV) and (b) every cell occupied with fixed
 * pseudo-random weights (the dense worst case). Per case: warm-up steps, then
 * timed steps (device events on the GPU), mean and p95 ms/step, the time of
 * each operator alone, launches per step, device memory before and after the
 * timed steps, bytes a dense step moves and the bandwidth that implies as a
 * fraction of a psi-sized device-to-device copy measured in the same run.
 * Then the end-to-end time of a whole pencil run to the end of its range, and,
 * with variants, the same dense step for every kernel variant. */
#include "tools/bench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cJSON.h>

#include "physics/source.h"
#include "transport/backend.h"
#include "transport/backend_bench.h"
#include "transport/device_query.h"
#include "run/run_setup.h"
#include "transport/simulate.h"
#include "transport/stepper.h"

/* Untimed steps before the timed ones, in every case. */
#define BENCH_WARMUP 5

typedef struct bench_grid {
    const char *name;
    int ne, nth, nz, nx;
} bench_grid;

static const bench_grid GRIDS[] = {
    { "small", 20, 16, 100, 100 },
    { "production", 100, 32, 400, 200 },
    { "stress", 200, 64, 800, 400 },
};

/* The physical setting shared by every case; the grid sizes are set per case. */
static const char *const BENCH_PLAN =
    "grid:\n"
    "  energy: {kind: uniform, n_bins: 100, E_min_MeV: 1.0, E_max_MeV: 70.0, E_cutoff_MeV: 1.0}\n"
    "  angle: {mode: window, n_bins: 32, centre_deg: 90.0, half_width_deg: 20.0}\n"
    "  space: {nx: 200, nz: 400, dx_mm: 0.15, dz_mm: 0.15}\n"
    "material: {table_file: pstar_water.h5}\n"
    "beam: {energy_MeV: 70.0}\n"
    "transport: {step_mm: 0.15, steps: auto}\n"
    "output: {file: bench-unused.h5, snapshot_final: false}\n";

typedef struct case_result {
    char grid[16], kind[16], label[96];
    char kernels[1024]; /* the backend's kernel_variants: which pipeline the case timed */
    int ne, nth, nz, nx, steps;
    double mean_ms, p95_ms, min_ms;
    double *step_ms; /* the timed steps in order (the work can change as the state evolves) */
    double op_ms[4];
    int launches;
    double bytes_dense, copy_bps, floor_ms, mem_before, mem_after;
    int ok;
} case_result;

/* --set overrides: n strings "key=value". */
typedef struct set_list {
    const char *const *v;
    int n;
} set_list;

/* One case: a grid, the pencil beam or the dense state, its timed steps, the
 * variant's label (NULL: the default) and its overrides. */
typedef struct bench_case {
    const bench_grid *bg;
    int dense, steps;
    const char *label;
    set_list extra;
} bench_case;

/* The whole pencil run to the end of its range (run_pencil_to_end). */
typedef struct pencil_result {
    int ran, steps;
    double loop_ms, mean_ms;
} pencil_result;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The set-up of one case (run/run_setup.h): the bench plan on grid bg,
 * then the extra --set overrides; with media and backend as the options say. */
static int load_case(run_setup *s, const bench_grid *bg, set_list extra, int media, int backend,
                     smx_error *err)
{
    const char *const *more = extra.v;
    const int n_extra = extra.n;
    char sz[4][64];
    snprintf(sz[0], 64, "grid.energy.n_bins=%d", bg->ne);
    snprintf(sz[1], 64, "grid.angle.n_bins=%d", bg->nth);
    snprintf(sz[2], 64, "grid.space.nz=%d", bg->nz);
    snprintf(sz[3], 64, "grid.space.nx=%d", bg->nx);
    const char *sets[32] = { sz[0], sz[1], sz[2], sz[3] };
    int n = 4;
    for (int i = 0; i < n_extra && n < 32; i++)
        sets[n++] = more[i];
    /* The benchmark's grid is fixed (32 or 64 directions, the beam between
     * two of them): timing, not the user's plan to warn about. */
    plan_warn_grid = 0;
    const run_setup_options o = {
        .plan_text = BENCH_PLAN, .sets = sets, .n_sets = n, .media = media, .backend = backend
    };
    return run_setup_init(s, &o, err);
}

/* Dense: every cell occupied, fixed pseudo-random weights in [0.5, 1.5). */
static void fill_dense(float *psi, const grid *g, double *w, double *e)
{
    uint64_t r = 0x853c49e6748fea9bull;
    double W = 0.0, En = 0.0;
    for (int64_t ie = 0; ie < g->ne; ie++) {
        double s = 0.0;
        for (int64_t k = 0; k < g->nth * g->slice; k++) {
            r ^= r << 13;
            r ^= r >> 7;
            r ^= r << 17;
            float v = (float)(0.5 + (r >> 40) * (1.0 / 16777216.0));
            psi[ie * g->nth * g->slice + k] = v;
            s += v;
        }
        W += s;
        En += s * g->E.centres[ie];
    }
    *w = W;
    *e = En;
}

static int run_case(const backend_ops *be, const bench_case *k, case_result *cr, smx_error *err)
{
    const bench_grid *bg = k->bg;
    const int dense = k->dense, steps = k->steps, n_extra = k->extra.n;
    const char *label = k->label;
    const char *const *extra = k->extra.v;
    const backend_bench_ops *bo = backend_bench_of(be);
    run_setup s = { 0 };
    sim_tables st = { 0 };
    void *ctx = NULL;
    float *psi0 = NULL;
    double *ms = NULL;
    int have_st = 0;
    memset(cr, 0, sizeof *cr);
    snprintf(cr->grid, sizeof cr->grid, "%s", bg->name);
    snprintf(cr->kind, sizeof cr->kind, "%s", dense ? "dense" : "pencil");
    snprintf(cr->label, sizeof cr->label, "%s", label ? label : "default");
    cr->steps = steps; /* the sizes: the grid as built, below */
    const char *sets[24];
    int n = 0;
    sets[n++] = "transport.steps=1000000";
    sets[n++] = "transport.max_steps=1000000";
    for (int i = 0; i < n_extra; i++)
        sets[n++] = extra[i];
    /* --set geometry.* benchmarks the step through a medium map. */
    int rc = load_case(&s, bg, (set_list){ sets, n }, 1, 0, err);
    if (rc)
        goto done;
    const grid *g = &s.g;
    /* The grid as built: --set may have changed the benchmark grid's sizes. */
    cr->ne = (int)g->ne, cr->nth = (int)g->nth, cr->nz = (int)g->nz, cr->nx = (int)g->nx;
    const sim_media sm = run_setup_media(&s);
    if ((rc = simulate_tables_build(&st, &s.p, g, &s.t, &sm, err)))
        goto done;
    have_st = 1;
    psi0 = calloc((size_t)g->cells, sizeof *psi0);
    ms = malloc(steps * sizeof *ms);
    if (!psi0 || !ms) {
        rc = smx_fail(err, SMX_EXIT_RUNTIME, "out of host memory for the %s grid", bg->name);
        goto done;
    }
    source_buf sb = { psi0, NULL, 0.0, 0.0 };
    if (dense)
        fill_dense(psi0, g, &sb.weight, &sb.energy_MeV);
    else if ((rc = source_fill(&sb, &s.p, g, err)))
        goto done;
    double before = 0, after = 0, bytes = 0;
    if ((rc = be->setup(&ctx, &st, err)) ||
        (rc = be->upload(ctx, psi0, NULL, sb.weight, sb.energy_MeV, err)))
        goto done;
    free(psi0);
    psi0 = NULL;
    run_result *rr = calloc(1, sizeof *rr);
    if (rr) { /* which kernels step this case, as a run's /provenance names them */
        be->describe(ctx, rr);
        snprintf(cr->kernels, sizeof cr->kernels, "%s", rr->kernel_variants);
        free(rr);
    }
    bo->facts(ctx, &cr->launches, &bytes, &before);
    /* Warm-up, then the timed steps, each batch enqueued as a run enqueues
     * (the warm-up's times into their own array: steps may be fewer). */
    double warm_ms[BENCH_WARMUP];
    if ((rc = bo->steps(ctx, 0, BENCH_WARMUP, warm_ms, err)) ||
        (rc = bo->steps(ctx, BENCH_WARMUP, steps, ms, err)))
        goto done;
    bo->facts(ctx, &cr->launches, &bytes, &after);
    for (int op = 0; op < 4; op++) {
        double best = 1e30, v;
        for (int rep = 0; rep < 3; rep++) {
            if ((rc = bo->op(ctx, op, &v, err)))
                goto done;
            best = v < best ? v : best;
        }
        cr->op_ms[op] = best;
    }
    if ((rc = bo->copy(ctx, &cr->copy_bps, err)))
        goto done;
    double sum = 0.0;
    for (int i = 0; i < steps; i++)
        sum += ms[i];
    if ((cr->step_ms = malloc(steps * sizeof *cr->step_ms)))
        memcpy(cr->step_ms, ms, steps * sizeof *ms);
    qsort(ms, steps, sizeof *ms, cmp_double);
    cr->mean_ms = sum / steps;
    cr->p95_ms = ms[(int)ceil(0.95 * steps) - 1];
    cr->min_ms = ms[0];
    cr->bytes_dense = bytes;
    cr->floor_ms = bytes / cr->copy_bps * 1e3;
    cr->mem_before = before;
    cr->mem_after = after;
    cr->ok = 1;
done:
    if (ctx)
        be->release(ctx);
    if (have_st)
        sim_tables_free(&st);
    free(psi0);
    free(ms);
    if (rc)
        plan_word_error(&s.p, err); /* an error at a key of the case's plan */
    run_setup_free(&s);
    return rc;
}

/* The whole pencil run, steps: auto, on the Production grid: the user's view. */
static int run_pencil_to_end(const backend_ops *be, pencil_result *pr, smx_error *err)
{
    run_setup s = { 0 };
    run_result r;
    run_result_init(&r);
    const char *sets[] = { "backend.early_exit=fixed" };
    int rc = load_case(&s, &GRIDS[1], (set_list){ sets, 1 }, 0, 0, err);
    if (!rc) {
        int q = smx_quiet;
        smx_quiet = 1;
        rc = simulate(&(sim_input){ &s.p, &s.g, &s.t, NULL }, be, NULL, &r, err);
        smx_quiet = q;
    }
    if (!rc) {
        pr->ran = 1;
        pr->loop_ms = 0;
        for (int i = 0; i < r.n_phases; i++)
            if (strcmp(r.phase_name[i], "steps") == 0)
                pr->loop_ms = r.phase_s[i] * 1e3;
        pr->steps = r.n_steps;
        pr->mean_ms = pr->loop_ms / (r.n_steps ? r.n_steps : 1);
    } else {
        plan_word_error(&s.p, err);
    }
    run_result_free(&r);
    run_setup_free(&s);
    return rc;
}

static void print_row(const case_result *c)
{
    printf("%-10s %-6s %-34s %8.3f %8.3f %8.3f %8.3f %8.3f %8.3f %4d %8.2f %7.3f %6.2f %8.2f\n",
           c->grid, c->kind, c->label, c->mean_ms, c->p95_ms, c->op_ms[0], c->op_ms[1], c->op_ms[2],
           c->op_ms[3], c->launches, c->bytes_dense / 1e9, c->floor_ms,
           c->floor_ms > 0 ? c->mean_ms / c->floor_ms : 0.0, c->mem_after / 1e9);
}

/* One case as a JSON object (cJSON escapes the strings: variant labels come
 * from the program, grid names and devices from the machine). */
static cJSON *json_case(const case_result *c)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddStringToObject(o, "grid", c->grid);
    cJSON_AddStringToObject(o, "kind", c->kind);
    cJSON_AddStringToObject(o, "variant", c->label);
    cJSON_AddStringToObject(o, "kernel_variants", c->kernels);
    const struct {
        const char *key;
        double v;
    } nums[] = {
        { "Ne", c->ne },
        { "Ntheta", c->nth },
        { "Nz", c->nz },
        { "Nx", c->nx },
        { "timed_steps", c->steps },
        { "mean_ms", c->mean_ms },
        { "p95_ms", c->p95_ms },
        { "min_ms", c->min_ms },
        { "theta_ms", c->op_ms[0] },
        { "energy_ms", c->op_ms[1] },
        { "stream_ms", c->op_ms[2] },
        { "bookkeeping_ms", c->op_ms[3] },
        { "launches_per_step", c->launches },
        { "dense_bytes_per_step", c->bytes_dense },
        { "copy_bandwidth_GBps", c->copy_bps / 1e9 },
        { "floor_ms", c->floor_ms },
        { "mean_over_floor", c->floor_ms > 0 ? c->mean_ms / c->floor_ms : 0.0 },
        { "device_mem_before_GB", c->mem_before / 1e9 },
        { "device_mem_after_GB", c->mem_after / 1e9 },
    };
    for (size_t k = 0; k < sizeof nums / sizeof nums[0]; k++)
        cJSON_AddNumberToObject(o, nums[k].key, nums[k].v);
    cJSON *ms = c->step_ms ? cJSON_CreateDoubleArray(c->step_ms, c->steps) : cJSON_CreateArray();
    if (ms)
        cJSON_AddItemToObject(o, "step_ms", ms);
    return o;
}

/* What the benchmark found: on which device and backend, its cases and the
 * whole pencil run. */
typedef struct bench_report {
    const char *device, *backend;
    const case_result *res;
    int nres;
    pencil_result pencil;
} bench_report;

/* The whole benchmark as one JSON document, written to path. */
static int write_json(const char *path, const bench_report *b, smx_error *err)
{
    const char *device = b->device, *backend = b->backend;
    const case_result *res = b->res;
    const int nres = b->nres;
    cJSON *root = cJSON_CreateObject(), *cases = cJSON_CreateArray();
    int ok = root && cases;
    if (ok) {
        cJSON_AddStringToObject(root, "device", device);
        cJSON_AddStringToObject(root, "backend", backend);
        cJSON_AddItemToObject(root, "cases", cases);
        for (int i = 0; i < nres && ok; i++) {
            cJSON *c = json_case(&res[i]);
            ok = c != NULL;
            if (c)
                cJSON_AddItemToArray(cases, c);
        }
    } else {
        cJSON_Delete(cases);
    }
    if (ok && b->pencil.ran) {
        cJSON *pr = cJSON_AddObjectToObject(root, "pencil_run");
        ok = pr && cJSON_AddNumberToObject(pr, "steps", b->pencil.steps) &&
             cJSON_AddNumberToObject(pr, "loop_ms", b->pencil.loop_ms) &&
             cJSON_AddNumberToObject(pr, "mean_step_ms", b->pencil.mean_ms);
    } else if (ok) {
        ok = cJSON_AddNullToObject(root, "pencil_run") != NULL;
    }
    char *text = ok ? cJSON_Print(root) : NULL;
    cJSON_Delete(root);
    if (!text)
        return smx_fail(err, SMX_EXIT_RUNTIME, "out of memory writing the benchmark JSON");
    FILE *f = fopen(path, "w");
    int rc = 0;
    if (!f)
        rc = smx_fail(err, SMX_EXIT_INPUT, "%s: cannot write the benchmark JSON", path);
    else if (fprintf(f, "%s\n", text) < 0 || fclose(f) != 0)
        rc = smx_fail(err, SMX_EXIT_RUNTIME, "%s: write error", path);
    cJSON_free(text);
    return rc;
}

/* The backend is chosen as for a plan: backend.device from --device / --set,
 * read by the plan reader from the first case's plan. */
static int choose_bench_backend(const bench_options *o, const backend_ops **be, char *name,
                                size_t name_size, smx_error *err)
{
    run_setup s = { 0 };
    /* geometry.* is left out: it is checked against each case's own grid. */
    const char *sets[64];
    int n = 0;
    for (int i = 0; i < o->n_sets && n < 64; i++)
        if (strncmp(o->sets[i], "geometry.", 9) != 0)
            sets[n++] = o->sets[i];
    int rc = load_case(&s, &GRIDS[0], (set_list){ sets, n }, 0, 1, err);
    if (!rc) {
        *be = s.be;
        snprintf(name, name_size, "%s", *be == &backend_cpu ? "CPU" : s.gi.name);
    }
    run_setup_free(&s);
    return rc;
}

int bench_main(const bench_options *o, smx_error *err)
{
    const backend_ops *be = NULL;
    char device_name[300];
    int rc = choose_bench_backend(o, &be, device_name, sizeof device_name, err);
    if (rc)
        return rc;
    case_result *res = calloc(64, sizeof *res);
    int nres = 0;
    if (!res)
        return smx_fail(err, SMX_EXIT_RUNTIME, "out of memory");
    printf("smx2d-sim benchmark on %s (backend %s), %d timed steps per case after %d warm-up\n",
           device_name, be->name, o->steps, BENCH_WARMUP);
    printf("%-10s %-6s %-34s %8s %8s %8s %8s %8s %8s %4s %8s %7s %6s %8s\n", "grid", "beam",
           "variant", "mean_ms", "p95_ms", "theta", "energy", "stream", "measure", "lnch",
           "GB/step", "floor", "x_flr", "mem_GB");
    for (int gi = 0; gi < 3; gi++) {
        if (!(o->grids & (1 << gi)))
            continue;
        for (int dense = 0; dense < 2; dense++) {
            case_result *c = &res[nres];
            const bench_case k = { &GRIDS[gi], dense, o->steps, NULL, { o->sets, o->n_sets } };
            if ((rc = run_case(be, &k, c, err)))
                goto done;
            print_row(c);
            nres++;
        }
    }
    if (o->variants) {
        /* Every variant on the dense Production step (docs/bench/gpus-and-variants.md, "Kernel
         * variants"): what each design choice of the default step buys. */
        static const struct {
            const char *label;
            const char *sets[4];
            int n;
        } V[] = {
            { "stream=gather",
              { "backend.streaming=gather", "transport.streaming_scheme=bilinear" },
              2 },
            { "stream=atomic",
              { "backend.streaming=atomic", "transport.streaming_scheme=bilinear" },
              2 },
            { "stream=warp",
              { "backend.streaming=warp", "transport.streaming_scheme=bilinear" },
              2 },
            { "stream=fallback",
              { "backend.streaming=fallback", "transport.streaming_scheme=bilinear" },
              2 },
            { "energy=scatter", { "backend.energy=scatter" }, 1 },
            { "full circle, angular=direct",
              { "grid.angle.mode=full", "backend.angular=direct" },
              2 },
            { "full circle, angular=fft", { "grid.angle.mode=full", "backend.angular=fft" }, 2 },
            { "cuda_graph=false", { "backend.cuda_graph=false" }, 1 },
            { "early_exit=off", { "backend.early_exit=off" }, 1 },
        };
        char why[256];
        /* The GPU's FFT case needs cuFFT, which a machine may lack (loaded at run time). */
        const int no_fft = be != &backend_cpu && cufft_query(1, why, sizeof why) == 0;
        for (size_t v = 0; v < sizeof V / sizeof V[0]; v++) {
            if (no_fft && strstr(V[v].label, "angular=fft")) {
                printf("%-10s %-6s %-34s skipped: %s\n", "production", "both", V[v].label, why);
                continue;
            }
            case_result *c = &res[nres];
            for (int dense = 1; dense >= 0; dense--) {
                c = &res[nres];
                const bench_case k = {
                    &GRIDS[1], dense, o->steps, V[v].label, { V[v].sets, V[v].n }
                };
                if ((rc = run_case(be, &k, c, err)))
                    goto done;
                print_row(c);
                nres++;
            }
        }
    }
    /* The whole pencil run is a Production-grid measurement: with that grid only. */
    pencil_result pr = { 0 };
    if (o->grids & 2) {
        if ((rc = run_pencil_to_end(be, &pr, err)))
            goto done;
        printf("pencil run to the end of its range (production grid, 70 MeV): %d steps, %.2f ms in "
               "the step loop, %.4f ms/step\n",
               pr.steps, pr.loop_ms, pr.mean_ms);
    }
    if (o->json) {
        const bench_report b = { device_name, be->name, res, nres, pr };
        if ((rc = write_json(o->json, &b, err)))
            goto done;
        printf("wrote %s\n", o->json);
    }
done:
    for (int i = 0; i < 64; i++)
        free(res[i].step_ms);
    free(res);
    return rc;
}
