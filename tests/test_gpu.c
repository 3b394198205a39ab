/* The CUDA backend against the CPU reference (the oracle), on a real GPU.
 * Skips with SMX_TEST_SKIP (77) where no GPU is usable, saying why.
 *
 *  1. each operator alone, every variant, on fresh random non-trivial psi
 *     (every cell occupied), outputs poisoned before read-back:
 *     psi and dose max relative error <= 1e-4, tallies <= 1e-6 (variants that
 *     sum in another order, atomics and the FFT, cannot be bitwise; the exact
 *     ones are also checked bitwise);
 *  2. full steps; graph replay equals plain launches (bitwise); FFT equals direct;
 *  3. whole runs (quickstart, 150 MeV): dose <= 1e-4, R80 and lateral width
 *     identical to 0.01 mm, conservation <= 1e-6 at every step;
 *  4. determinism: two GPU runs give identical bytes. */
#include <math.h>

#ifndef SMX_HAVE_CUDA
#include "check.h"
int main(void)
{
    printf("skipped: built without CUDA\n");
    return SMX_TEST_SKIP;
}
#else
#include "backend_runner.h"
#include "check.h"
#include "physics/material_library.h"
#include "physics/medium_plan.h"
#include "physics/medium_tables.h"
#include "random_psi.h"
#include "report/analysis.h"
#include "sim_fixture.h"
#include "transport/device_query.h"

int cuda_check_scatter_aggregation(double *worst, smx_error *err);

static uint64_t rng = 0x243f6a8885a308d3ull;

/* max |a - b| / max |b| over n values: the error relative to the largest value,
 * so that the rounding of near-zero cells does not dominate. */
static double max_rel_f(const float *a, const float *b, int64_t n)
{
    double m = 0.0, d = 0.0;
    for (int64_t i = 0; i < n; i++) {
        m = fmax(m, fabs((double)b[i]));
        double e = fabs((double)a[i] - b[i]);
        d = isnan(e) ? INFINITY : fmax(d, e);
    }
    return m > 0.0 ? d / m : d;
}

static double max_rel_d(const double *a, const double *b, int64_t n)
{
    double m = 0.0, d = 0.0;
    for (int64_t i = 0; i < n; i++) {
        m = fmax(m, fabs(b[i]));
        double e = fabs(a[i] - b[i]);
        d = isnan(e) ? INFINITY : fmax(d, e);
    }
    return m > 0.0 ? d / m : d;
}

/* Tallies of one step relative to the weight (energy) that went in. */
static double tally_rel(const step_record *a, const step_record *b)
{
    double e = 0.0;
    for (int c = 0; c < CH_COUNT; c++) {
        e = fmax(e, fabs(a->b.t.weight[c] - b->b.t.weight[c]) / b->b.weight_in);
        e = fmax(e, fabs(a->b.t.energy[c] - b->b.t.energy[c]) / b->b.energy_in);
    }
    e = fmax(e, fabs(a->b.t.deposited - b->b.t.deposited) / b->b.energy_in);
    e = fmax(e, fabs(a->b.weight_out - b->b.weight_out) / b->b.weight_in);
    e = fmax(e, fabs(a->b.energy_out - b->b.energy_out) / b->b.energy_in);
    return e;
}

typedef struct kcase {
    const char *name;
    int only_op;
    const char *sets[8];
    int nsets;
    int exact; /* 1: psi and dose must equal the CPU's bit for bit */
} kcase;

static const char *const BASE[] = { "grid.energy.kind=uniform", "grid.energy.n_bins=24",
                                    "grid.angle.n_bins=9",      "grid.angle.half_width_deg=8",
                                    "grid.space.nx=37",         "grid.space.nz=29",
                                    "beam.direction_deg=85",    "backend.early_exit=off" };

/* A case's grid: BASE plus its settings. */
static int load_case(fixture *f, const kcase *k)
{
    const char *sets[16];
    int n = 0;
    for (int i = 0; i < 8; i++)
        sets[n++] = BASE[i];
    for (int i = 0; i < k->nsets; i++)
        sets[n++] = k->sets[i];
    return fixture_load(f, NULL, sets, n);
}

/* The widest angular kernel of a case's grid. */
static int max_half_width_of(const kcase *k)
{
    fixture f;
    sim_tables st;
    int K = -1;
    if (load_case(&f, k) == 0) {
        if (sim_tables_build(&st, &f.p, &f.g, &f.t, &f.err) == 0) {
            K = st.ak.max_half_width;
            sim_tables_free(&st);
        }
        fixture_free(&f);
    }
    return K;
}

/* The direction count of a case's grid (-1: it does not load). */
static int nth_of(const kcase *k)
{
    fixture f;
    int n = -1;
    if (load_case(&f, k) == 0) {
        n = (int)f.g.nth;
        fixture_free(&f);
    }
    return n;
}

static void compare_case(const kcase *k, int steps)
{
    fixture f;
    if (load_case(&f, k)) {
        CHECK_MSG(0, "%s: %s", k->name, f.err.msg);
        return;
    }
    const grid *g = &f.g;
    float *psi0 = random_psi(g, &rng), *pc = malloc(g->cells * sizeof *pc),
          *pg = malloc(g->cells * sizeof *pg);
    double *dc = malloc(g->slice * sizeof *dc), *dg = malloc(g->slice * sizeof *dg);
    step_record rc, rg;
    smx_error e1 = { 0 }, e2 = { 0 };
    CHECK_MSG(run_backend(&backend_cpu, &f.p, g, &f.t, k->only_op, psi0, steps, pc, dc, &rc, &e1) ==
                  0,
              "%s: cpu: %s", k->name, e1.msg);
    /* The spectral tallies' planes too (the halo's released energy, LET, water). */
    const int64_t nrel = g->slice * (g->dose_planes - 1);
    double *relc = nrel && runner_release ? malloc(nrel * sizeof *relc) : NULL;
    if (relc)
        memcpy(relc, runner_release, nrel * sizeof *relc);
    CHECK_MSG(
        run_backend(&backend_cuda, &f.p, g, &f.t, k->only_op, psi0, steps, pg, dg, &rg, &e2) == 0,
        "%s: cuda: %s", k->name, e2.msg);
    double ep = max_rel_f(pg, pc, g->cells), ed = max_rel_d(dg, dc, g->slice),
           et = tally_rel(&rg, &rc);
    double er = relc && runner_release ? max_rel_d(runner_release, relc, nrel) : 0.0;
    CHECK_MSG(!nrel || (relc && runner_release), "%s: no release planes", k->name);
    free(relc);
    printf("  %-46s psi %.2e  dose %.2e  release %.2e  tallies %.2e  balance %.1e\n", k->name, ep,
           ed, er, et, fmax(rg.b.weight_rel_err, rg.b.energy_rel_err));
    CHECK_MSG(er <= 1e-4, "%s: release %.3e", k->name, er);
    if (k->exact)
        CHECK_MSG(er == 0.0, "%s: release not bitwise the CPU's", k->name);
    /* The bounds of 1. in the header. */
    CHECK_MSG(ep <= 1e-4, "%s: psi %.3e", k->name, ep);
    CHECK_MSG(ed <= 1e-4, "%s: dose %.3e", k->name, ed);
    CHECK_MSG(et <= 1e-6, "%s: tallies %.3e", k->name, et);
    CHECK_MSG(rg.b.weight_rel_err <= 1e-6 && rg.b.energy_rel_err <= 1e-6, "%s: GPU balance",
              k->name);
    /* Same float operations in the same order (fused.cuh, deposit_path.h). */
    if (k->exact)
        CHECK_MSG(ep == 0.0 && ed == 0.0, "%s: not bitwise the CPU's", k->name);
    free(psi0);
    free(pc);
    free(pg);
    free(dc);
    free(dg);
    fixture_free(&f);
}

/* Each case again, under whatever test hook the caller has set, its name with
 * `suffix`; the CUDA run must report `expect` in its kernel_variants (the
 * hook took effect). */
static void compare_cases_as(const kcase *cases, size_t n, const char *suffix, const char *expect)
{
    for (size_t i = 0; i < n; i++) {
        kcase k = cases[i];
        char name[160];
        snprintf(name, sizeof name, "%s%s", cases[i].name, suffix);
        k.name = name;
        compare_case(&k, 3);
        CHECK_MSG(strstr(runner_variants, expect), "%s: ran %s", name, runner_variants);
    }
}

/* ---- heterogeneous media ------------------------------------------------ */
/* A map on grid g of six media, which runs every path of the media kernels:
 * the fixture's table (water) at other densities, a dense slab (whole bins
 * shifted by 1.5 on average), a light half plane (0.3, mostly no shift), a
 * near-reference block (1.1), the background, a block of compact bone
 * (lib[0], its library table: a stopping-power ratio to water that changes
 * with energy, the phase table of numerics/dither_phase.h not a straight line)
 * and a block of titanium (lib[1]: its step compresses the bins at low
 * energy, so targets gather from more than six (source, table) pairs). */
static int media_map(medium_map *mm, const fixture *f, const tables *lib, int extra)
{
    smx_error err = { 0 };
    const uniform_medium water = { "water", f->p.table_path, f->g.density };
    if (medium_map_uniform(mm, (int)f->g.nz, (int)f->g.nx, &water, &err) ||
        medium_map_cells(mm, &err))
        return 1;
    const double rho[3] = { 1.5, 0.3, 1.1 };
    int med[5];
    for (int k = 0; k < 3; k++)
        if ((med[k] = medium_map_add_medium(mm, 0, rho[k], &err)) < 0)
            return 1;
    const double lib_rho[2] = { 1.85, 4.54 };
    for (int k = 0; k < 2; k++) {
        int mat = medium_map_add_material(mm, lib[k].material, lib[k].path, &err);
        if (mat < 0 || (med[3 + k] = medium_map_add_medium(mm, mat, lib_rho[k], &err)) < 0)
            return 1;
    }
    for (int z = 0; z < f->g.nz; z++)
        for (int x = 0; x < f->g.nx; x++) {
            int m = 0;
            if (z >= f->g.nz / 3 && z < f->g.nz / 2)
                m = med[0];
            else if (x < f->g.nx / 2 && z >= f->g.nz / 2)
                m = med[1];
            else if (x > 3 * f->g.nx / 4 && z < f->g.nz / 3)
                m = med[2];
            else if (x > f->g.nx / 2 && z >= 2 * f->g.nz / 3)
                m = med[3];
            else if (x > f->g.nx / 2 && z >= f->g.nz / 2)
                m = med[4];
            mm->cell[(int64_t)z * f->g.nx + x] = (uint8_t)m;
        }
    /* extra > 0: as many more media, water from 0.55 g/cm3 by 0.1, each in
     * every extra-th column of the background's first third of rows, so
     * that a tile's cells hold many media (a tile of more than
     * MEDIA_STAGED_MAX reads each lane's records from global memory:
     * cuda/energy_media.cuh). */
    for (int k = 0; k < extra; k++) {
        const int id = medium_map_add_medium(mm, 0, 0.55 + 0.1 * k, &err);
        if (id < 0)
            return 1;
        for (int z = 0; z < f->g.nz / 3; z++)
            for (int x = k; x < f->g.nx; x += extra)
                if (mm->cell[(int64_t)z * f->g.nx + x] == 0)
                    mm->cell[(int64_t)z * f->g.nx + x] = (uint8_t)id;
    }
    return 0;
}

/* The library's compact bone and titanium tables (lib[0], lib[1]). */
static int load_library(tables *lib)
{
    const char *keys[2] = { "bone_compact", "titanium" };
    for (int k = 0; k < 2; k++) {
        char name[256], path[512];
        smx_error err = { 0 };
        material_library_table_name(keys[k], name, sizeof name);
        snprintf(path, sizeof path, "data/%s", name);
        if (tables_load(&lib[k], path, &err)) {
            fprintf(stderr, "%s\n", err.msg);
            return 1;
        }
    }
    return 0;
}

static void free_library(tables *lib)
{
    tables_free(&lib[0]);
    tables_free(&lib[1]);
}

/* The media cases mc[0 .. n) on the map with `extra` more media (media_map). */
static void media_run(const kcase *mc, size_t n, int extra)
{
    fixture f;
    kcase base = { "", -1, { 0 }, 0, 1 };
    if (load_case(&f, &base)) {
        CHECK_MSG(0, "media: %s", f.err.msg);
        return;
    }
    medium_map mm;
    tables lib[2] = { { 0 } };
    if (load_library(lib) || media_map(&mm, &f, lib, extra)) {
        CHECK_MSG(0, "media map");
        free_library(lib);
        fixture_free(&f);
        return;
    }
    const tables *mt[3] = { &f.t, &lib[0], &lib[1] };
    runner_mm = &mm;
    runner_mt = mt;
    for (size_t i = 0; i < n; i++) {
        /* Full steps with the default kernels: the one-pass step (shift; the
         * fused kernel's media instances) and, forced by the test switch, one
         * kernel per operator; single operators and fused=false take the
         * whole-grid kernels. */
        const int region = mc[i].only_op < 0 && !strstr(mc[i].sets[0], "fused=false");
        /* Bilinear steps with one kernel per operator, moments in its two passes. */
        const int one_pass =
            region && !strstr(mc[i].sets[0], "bilinear") && !strstr(mc[i].sets[0], "moments");
        for (int pass = one_pass ? 1 : -1; pass >= -1; pass -= 2) {
            if (region) /* the test switch (transport/backend_test.h) */
                runner_media_whole_grid = pass < 0;
            kcase k = mc[i];
            char name[128];
            snprintf(name, sizeof name, "%s%s%s", k.name, extra > 0 ? ", more media" : "",
                     !region    ? ""
                     : pass > 0 ? ", one pass"
                                : ", whole-grid kernels");
            k.name = name;
            compare_case(&k, k.only_op < 0 ? 6 : 1);
            /* The moments scheme's two passes take media as one medium does. */
            const char *want = !region                            ? "fused=no "
                               : pass > 0                         ? "fused=media (one pass)"
                               : strstr(mc[i].sets[0], "moments") ? "fused=moments (theta"
                                                                  : "fused=no ";
            CHECK_MSG(strstr(runner_variants, want), "%s: ran %s", k.name, runner_variants);
            /* The one pass takes the spectral tallies (the halo's planes
             * wherever the nuclear model is on, its split steps' by the
             * tally kernels); the other pipelines leave them
             * to their kernels. */
            int planes = 1;
            for (int q = 0; q < mc[i].nsets; q++)
                planes = planes && !strstr(mc[i].sets[q], "nuclear=false");
            if (region && planes) {
                const char *tallies =
                    one_pass && pass > 0 ? "spectral_tallies=in_pass(" : "spectral_tallies=apart(";
                CHECK_MSG(strstr(runner_variants, tallies), "%s: ran %s", k.name, runner_variants);
            }
            /* Its split steps' direction sums: written by the pass up to 32
             * directions (cuda/fused.cuh, FUSED_SPLIT_SUMS_MAX_NTH), else by
             * the tally kernels. */
            if (region && planes && one_pass && pass > 0) {
                const int nth = nth_of(&mc[i]);
                CHECK_MSG(nth > 0 &&
                              (strstr(runner_variants, ",split_apart") != NULL) == (nth > 32),
                          "%s (%d directions): the split steps' sums: ran %s", k.name, nth,
                          runner_variants);
            }
            runner_media_whole_grid = 0;
        }
    }
    runner_mm = NULL;
    runner_mt = NULL;
    medium_map_free(&mm);
    free_library(lib);
    fixture_free(&f);
}

static void media_cases(int quick)
{
    static const kcase mc[] = {
        { "media: theta direct, window", OP_THETA, { "backend.angular=direct" }, 1, 1 },
        { "media: energy gather", OP_ENERGY, { "backend.energy=gather" }, 1, 1 },
        { "media: energy scatter", OP_ENERGY, { "backend.energy=scatter" }, 1, 1 },
        { "media: full steps (default kernels)", -1, { "backend.cuda_graph=true" }, 1, 1 },
        /* The spectral tallies of LET and the dose to water beside the halo's. */
        { "media: full steps, LET and dose to water",
          -1,
          { "output.let=true", "output.dose_to_water=true" },
          2,
          1 },
        { "media: full steps, no straggling, no nuclear",
          -1,
          { "transport.straggling=false", "transport.nuclear=false" },
          2,
          1 },
        { "media: full steps, one kernel per operator", -1, { "backend.fused=false" }, 1, 1 },
        /* Steps of 4 cells: paths wider than the spread's fast form and its
         * held cells' terms (cuda/deposit_path.cu, spread_cells), which the
         * steps above take: smx_path_held and direction_sum instead. */
        { "media: full steps, ds 4 cells", -1, { "transport.step_mm=2.0" }, 1, 1 },
        /* The one pass's tallies over 41 and 20 directions: chunks of 8
         * whose quads lie in two threads (12 directions a thread), and a
         * last chunk past the directions (8 a thread). */
        { "media: full steps, 41 directions", -1, { "grid.angle.n_bins=41" }, 1, 1 },
        { "media: full steps, 20 directions", -1, { "grid.angle.n_bins=20" }, 1, 1 },
        { "media: full steps, bilinear", -1, { "transport.streaming_scheme=bilinear" }, 1, 1 },
        { "media: full steps, moments", -1, { "transport.streaming_scheme=moments" }, 1, 1 },
        { "media: full steps, moments, one kernel per operator",
          -1,
          { "backend.fused=false", "transport.streaming_scheme=moments" },
          2,
          1 },
        /* Kernels per source bin (the direct kernel's gather) in a medium's cells. */
        { "media: full steps, moments, beam spacing",
          -1,
          { "transport.streaming_scheme=moments", "grid.angle.spacing=beam" },
          2,
          1 },
    };
    media_run(mc, quick ? 2 : sizeof mc / sizeof mc[0], 0);
    /* Sixteen media (ten more: media_map): the first rows' whole tiles hold
     * 10 or 11, more than MEDIA_STAGED_MAX (cuda/energy_media.cuh), so the
     * one pass reads their lanes' records from global memory while the
     * other tiles stage theirs; the default kernels, and with LET and the
     * dose to water the tallies' coefficients in the records (mc[3], mc[4]). */
    if (!quick)
        media_run(mc + 3, 2, 10);
}

/* A 100 MeV pencil through the map on both backends: the dose bit for bit. */
static void media_whole_run(const char *early_exit)
{
    const char *sets[] = { "grid.space.nx=41", "grid.space.nz=200", early_exit };
    double *dose[2] = { NULL, NULL };
    double r80[2] = { 0, 0 };
    int steps[2] = { 0, 0 }, viol[2] = { 0, 0 }, moves[2] = { 0, 0 };
    int64_t slice = 0;
    for (int b = 0; b < 2; b++) {
        fixture f;
        medium_map mm;
        tables lib[2] = { { 0 } };
        if (fixture_load(&f, NULL, sets, 3) || load_library(lib) || media_map(&mm, &f, lib, 0)) {
            CHECK_MSG(0, "media run: %s", f.err.msg);
            free_library(lib);
            return;
        }
        const tables *mt[3] = { &f.t, &lib[0], &lib[1] };
        sim_media media = { &mm, mt, NULL };
        CHECK_MSG(simulate(&(sim_input){ &f.p, &f.g, &f.t, &media },
                           b ? &backend_cuda : &backend_cpu, NULL, &f.r, &f.err) == 0,
                  "%s", f.err.msg);
        double *dd = malloc(f.g.nz * sizeof *dd);
        depth_dose(&f.g, f.r.dose_MeV, dd);
        r80[b] = distal_depth_mm(&f.g, dd, 0.8);
        free(dd);
        steps[b] = f.r.n_steps;
        viol[b] = f.r.conservation_violations;
        moves[b] = f.r.window_moves;
        dose[b] = f.r.dose_MeV;
        f.r.dose_MeV = NULL;
        slice = f.g.slice;
        medium_map_free(&mm);
        free_library(lib);
        fixture_free(&f);
    }
    int same = dose[0] && dose[1] && memcmp(dose[0], dose[1], slice * sizeof(double)) == 0;
    printf("  media: 100 MeV pencil, whole run, %s: steps %d/%d  R80 %.3f/%.3f mm  dose %s  "
           "violations %d/%d  window moves %d/%d\n",
           early_exit, steps[1], steps[0], r80[1], r80[0], same ? "bitwise equal" : "DIFFERS",
           viol[1], viol[0], moves[1], moves[0]);
    /* The media kernels do the CPU's float operations in the CPU's order. */
    CHECK(same);
    CHECK(steps[0] == steps[1] && viol[0] == 0 && viol[1] == 0);
    /* With the early exit the window follows the beam on both backends (the
     * GPU looks at the front less often, so it moves fewer times); without
     * it the window keeps every row (transport/window.c). */
    const int follows = strcmp(early_exit, "backend.early_exit=off") != 0;
    CHECK_MSG(follows ? moves[0] > 0 && moves[1] > 0 : moves[0] == 0 && moves[1] == 0,
              "window moves: GPU %d, CPU %d", moves[1], moves[0]);
    free(dose[0]);
    free(dose[1]);
}

/* Two GPU runs of the same inputs: identical psi and dose bytes expected. */
static void compare_gpu_gpu(const char *name, const char *const *sa, int na, const char *const *sb,
                            int nb, int bitwise)
{
    const char *sets[24];
    fixture fa, fb;
    int n = 0;
    for (int i = 0; i < 8; i++)
        sets[n++] = BASE[i];
    for (int i = 0; i < na; i++)
        sets[n++] = sa[i];
    CHECK(fixture_load(&fa, NULL, sets, n) == 0);
    n = 8;
    for (int i = 0; i < nb; i++)
        sets[n++] = sb[i];
    CHECK(fixture_load(&fb, NULL, sets, n) == 0);
    const grid *g = &fa.g;
    float *psi0 = random_psi(g, &rng), *a = malloc(g->cells * 4), *b = malloc(g->cells * 4);
    double *da = malloc(g->slice * 8), *db = malloc(g->slice * 8);
    step_record ra, rb;
    smx_error e = { 0 };
    CHECK(run_backend(&backend_cuda, &fa.p, g, &fa.t, -1, psi0, 5, a, da, &ra, &e) == 0);
    CHECK(run_backend(&backend_cuda, &fb.p, g, &fb.t, -1, psi0, 5, b, db, &rb, &e) == 0);
    double ep = max_rel_f(a, b, g->cells), ed = max_rel_d(da, db, g->slice);
    int same = memcmp(a, b, g->cells * 4) == 0 && memcmp(da, db, g->slice * 8) == 0;
    printf("  %-46s psi %.2e  dose %.2e  %s\n", name, ep, ed, same ? "identical bytes" : "differ");
    if (bitwise)
        CHECK_MSG(same, "%s: expected identical bytes", name);
    else
        CHECK_MSG(ep <= 1e-4 && ed <= 1e-4, "%s", name); /* float rounding in another order */
    free(psi0);
    free(a);
    free(b);
    free(da);
    free(db);
    fixture_free(&fa);
    fixture_free(&fb);
}

/* ---- the baseline and its variants, one table ----------------------------- */
/* The roadmap's kernels, one per operator (backend.fused=false), are the
 * baseline; every faster pipeline runs the same case from the same psi and
 * must give its bytes (psi, dose, spectral planes) where the design promises
 * them, as XSBench's optimisations give the baseline's verification hash.
 * Each line prints the hash (FNV-1a over the three) so that runs compare. */
typedef struct vcase {
    const char *name;
    const char *sets[4];
    int nsets, media;
} vcase;
typedef struct vvariant {
    const char *name, *set; /* set: one more key, or NULL */
    int split_off, one_tile, pad_rows, media_whole_grid; /* test switches (backend_runner.h) */
    int media; /* 1: a row of the media case alone (the others: every case but media's) */
} vvariant;
typedef struct vresult {
    float *psi;
    double *dose, *rel;
    uint64_t hash;
    int ok;
} vresult;

static uint64_t fnv1a(const void *p, size_t n, uint64_t h)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

static void vresult_free(vresult *r)
{
    free(r->psi);
    free(r->dose);
    free(r->rel);
}

/* One run of case c under variant v (NULL: the baseline), 4 steps from psi0. */
static vresult variant_run(const vcase *c, const vvariant *v, const float *psi0)
{
    kcase k = { c->name, -1, { 0 }, 0, 1 };
    for (int i = 0; i < c->nsets; i++)
        k.sets[k.nsets++] = c->sets[i];
    k.sets[k.nsets++] = v ? "backend.fused=true" : "backend.fused=false";
    if (v && v->set)
        k.sets[k.nsets++] = v->set;
    vresult r = { 0 };
    fixture f;
    if (load_case(&f, &k))
        return r;
    const grid *g = &f.g;
    const int64_t nrel = g->slice * (g->dose_planes - 1);
    r.psi = malloc(g->cells * sizeof *r.psi);
    r.dose = malloc(g->slice * sizeof *r.dose);
    r.rel = malloc((nrel > 0 ? nrel : 1) * sizeof *r.rel);
    runner_fused_split_off = v ? v->split_off : 0;
    runner_fused_one_tile = v ? v->one_tile : 0;
    runner_cuda_pad_rows = v ? v->pad_rows : 0;
    runner_media_whole_grid = v ? v->media_whole_grid : 0;
    step_record rec;
    smx_error e = { 0 };
    r.ok = r.psi && r.dose && r.rel &&
           run_backend(&backend_cuda, &f.p, g, &f.t, -1, psi0, 4, r.psi, r.dose, &rec, &e) == 0 &&
           (!nrel || runner_release);
    runner_fused_split_off = runner_fused_one_tile = runner_cuda_pad_rows = 0;
    runner_media_whole_grid = 0;
    if (r.ok && nrel)
        memcpy(r.rel, runner_release, nrel * sizeof *r.rel);
    if (r.ok) {
        r.hash = fnv1a(r.psi, g->cells * sizeof *r.psi, 1469598103934665603ull);
        r.hash = fnv1a(r.dose, g->slice * sizeof *r.dose, r.hash);
        r.hash = fnv1a(r.rel, nrel * sizeof *r.rel, r.hash);
    }
    CHECK_MSG(r.ok, "%s, %s: %s", c->name, v ? v->name : "baseline", e.msg);
    fixture_free(&f);
    return r;
}

/* The table: each case's baseline, then each variant against it, bit for
 * bit: with the early exit off both are the CPU's bits (fused.cuh); with it
 * on, every pipeline drops the same values before A_theta, as the baseline
 * does, and the kept ones take the same float operations. */
static void variant_table(void)
{
    static const vcase cases[] = {
        { "one medium (halo)", { 0 }, 0, 0 },
        { "LET and dose to water", { "output.let=true", "output.dose_to_water=true" }, 2, 0 },
        { "moments", { "transport.streaming_scheme=moments" }, 1, 0 },
        /* A threshold that drops values (the random psi lies in [0.05, 1.05):
         * the default 1e-12 would drop none in four steps). */
        { "early exit fixed",
          { "backend.early_exit=fixed", "backend.early_exit_threshold=0.1" },
          2,
          0 },
        { "media", { 0 }, 0, 1 },
    };
    static const vvariant variants[] = {
        { "default", NULL, 0, 0, 0, 0, 0 },
        { "graph off", "backend.cuda_graph=false", 0, 0, 0, 0, 0 },
        { "no energy split (tallies in the pass)", NULL, 1, 0, 0, 0, 0 },
        { "no split, one tile per block", NULL, 1, 1, 0, 0, 0 },
        { "padded rows", NULL, 0, 0, 1, 0, 0 },
        { "media in one pass, no energy split", NULL, 1, 0, 0, 0, 1 },
        { "media, whole-grid kernels (test switch)", NULL, 0, 0, 0, 1, 1 },
    };
    fixture f0;
    kcase base = { "", -1, { 0 }, 0, 1 };
    tables lib[2] = { { 0 } };
    medium_map mm;
    if (load_case(&f0, &base) || load_library(lib) || media_map(&mm, &f0, lib, 0)) {
        CHECK_MSG(0, "variant table: set-up");
        return;
    }
    const tables *mt[3] = { &f0.t, &lib[0], &lib[1] };
    float *psi0 = random_psi(&f0.g, &rng);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const vcase *c = &cases[i];
        runner_mm = c->media ? &mm : NULL;
        runner_mt = c->media ? mt : NULL;
        vresult b = variant_run(c, NULL, psi0);
        printf("  %-24s baseline (one kernel per operator)       hash %016llx\n", c->name,
               (unsigned long long)b.hash);
        for (size_t j = 0; j < sizeof variants / sizeof variants[0]; j++) {
            const vvariant *v = &variants[j];
            if (v->media != c->media && j > 0)
                continue; /* the media switches for the media case; the rest for all */
            vresult r = variant_run(c, v, psi0);
            const grid *g = &f0.g;
            const int64_t nrel = g->slice * (g->dose_planes - 1);
            double ep = 1.0, ed = 1.0, er = 1.0;
            if (b.ok && r.ok) {
                ep = max_rel_f(r.psi, b.psi, g->cells);
                ed = max_rel_d(r.dose, b.dose, g->slice);
                er = nrel ? max_rel_d(r.rel, b.rel, nrel) : 0.0;
            }
            printf("  %-24s %-40s hash %016llx %s\n", "", v->name, (unsigned long long)r.hash,
                   r.hash == b.hash ? "= baseline" : "differs");
            CHECK_MSG(b.ok && r.ok && r.hash == b.hash, "%s, %s: psi %.2e dose %.2e planes %.2e",
                      c->name, v->name, ep, ed, er);
            vresult_free(&r);
        }
        vresult_free(&b);
    }
    runner_mm = NULL;
    runner_mt = NULL;
    free(psi0);
    medium_map_free(&mm);
    free_library(lib);
    fixture_free(&f0);
}

typedef struct run_metrics {
    char variants[1024];
    double r80, sigma50, max_err;
    double *dose;
    int64_t slice;
    int violations, n_steps;
} run_metrics;

static void whole_run(const char *device, const char *const *extra, int nextra, run_metrics *m)
{
    char dev[64];
    snprintf(dev, sizeof dev, "backend.device=%s", device);
    const char *sets[16] = { dev };
    for (int i = 0; i < nextra; i++)
        sets[1 + i] = extra[i];
    fixture f;
    memset(m, 0, sizeof *m);
    if (fixture_load(&f, NULL, sets, 1 + nextra)) {
        CHECK(0);
        return;
    }
    const backend_ops *be = strcmp(device, "cuda") == 0 ? &backend_cuda : &backend_cpu;
    CHECK_MSG(simulate(&(sim_input){ &f.p, &f.g, &f.t, NULL }, be, NULL, &f.r, &f.err) == 0, "%s",
              f.err.msg);
    double *dd = malloc(f.g.nz * sizeof *dd);
    depth_dose(&f.g, f.r.dose_MeV, dd);
    m->r80 = distal_depth_mm(&f.g, dd, 0.8);
    m->sigma50 = lateral_rms_at(&f.g, f.r.dose_MeV, 0.5 * m->r80);
    m->max_err = fmax(f.r.max_weight_rel_err, f.r.max_energy_rel_err);
    m->violations = f.r.conservation_violations;
    m->n_steps = f.r.n_steps;
    m->slice = f.g.slice;
    snprintf(m->variants, sizeof m->variants, "%s", f.r.kernel_variants);
    m->dose = f.r.dose_MeV;
    f.r.dose_MeV = NULL;
    free(dd);
    fixture_free(&f);
}

/* A field of three spots with output.per_spot_dose (every value stored) on
 * one backend, the spot map's lines in reverse order when `reverse`: the
 * rows, in a copy owned by the caller; *slots: how many spots stepped at once. */
/* The CUDA switches of field_rows' runs (transport/backend_test.h). A run's
 * code passes none: the field runs through a copy of the CUDA table whose
 * setup hands them over. */
static cuda_test_options field_cuda;
/* Where field_rows' CUDA runs take the nuclear halo: HALO_ON_DEVICE (the
 * default: the blocks summed and transformed on the device), HALO_ON_HOST
 * (the table's halo_convolve left out: blocks and transforms on the host, as
 * the CPU does) or HALO_BLOCKS_ON_HOST (halo_keep left out: the host sums
 * the blocks from the downloaded planes, the device transforms them). */
enum { HALO_ON_DEVICE, HALO_ON_HOST, HALO_BLOCKS_ON_HOST };
static int field_halo;
/* The last field_rows run's spot_kernel_variants (what stepped its spots). */
static char field_variants[1024];

static int field_cuda_setup(void **ctx, const sim_tables *s, smx_error *err)
{
    backend_test_options o = backend_test_options_default();
    o.cuda = field_cuda;
    return backend_cuda_setup_test(ctx, s, &o, err);
}

static spot_dose field_rows(const char *device, const char *const *extra, int nextra, int reverse,
                            int *slots)
{
    static const char *const lines[] = { "80, -3, 1.0", "60, 0, 0.5", "70, 4, 2.0" };
    spot_dose out = { 0 };
    char path[] = "/tmp/smx-gpu-spots-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return out;
    FILE *fp = fdopen(fd, "w");
    fprintf(fp, "energy_MeV, x_mm, weight\n");
    for (int k = 0; k < 3; k++)
        fprintf(fp, "%s\n", lines[reverse ? 2 - k : k]);
    fclose(fp);
    char spots[96], dev[64];
    snprintf(spots, sizeof spots, "beam.spots_file=%s", path);
    snprintf(dev, sizeof dev, "backend.device=%s", device);
    const char *sets[16] = { spots,
                             dev,
                             "output.per_spot_dose=true",
                             "output.per_spot_threshold=0",
                             "backend.early_exit=off",
                             "transport.scattering_power=fermi_rossi" };
    for (int i = 0; i < nextra && i < 10; i++)
        sets[6 + i] = extra[i];
    fixture f;
    if (fixture_load(&f, NULL, sets, 6 + nextra)) {
        unlink(path);
        CHECK(0);
        return out;
    }
    backend_ops cuda_with = backend_cuda;
    cuda_with.setup = field_cuda_setup;
    if (field_halo == HALO_ON_HOST)
        cuda_with.halo_convolve = NULL;
    if (field_halo == HALO_BLOCKS_ON_HOST)
        cuda_with.halo_keep = NULL;
    const backend_ops *be = strcmp(device, "cuda") == 0 ? &cuda_with : &backend_cpu;
    /* The plan's geometry (one medium without geometry keys), as the program builds it. */
    medium_map mm = { 0 };
    medium_tables mtab = { 0 };
    const out_of_plane_model detour = out_of_plane_of_plan(&f.p, &f.t); /* as run_setup */
    if (medium_map_build(&mm, &f.p, &f.g, &f.err) ||
        medium_tables_load(&mtab, &mm, &f.t, &detour, &f.err)) {
        CHECK_MSG(0, "media: %s", f.err.msg);
    } else {
        sim_media media = { &mm, mtab.mt, NULL };
        CHECK_MSG(simulate(&(sim_input){ &f.p, &f.g, &f.t, &media }, be, NULL, &f.r, &f.err) == 0,
                  "%s", f.err.msg);
        CHECK(f.r.conservation_violations == 0);
    }
    medium_tables_free(&mtab);
    medium_map_free(&mm);
    unlink(path);
    out = f.r.per_spot;
    *slots = f.r.spot_slots;
    snprintf(field_variants, sizeof field_variants, "%s", f.r.spot_kernel_variants);
    memset(&f.r.per_spot, 0, sizeof f.r.per_spot);
    fixture_free(&f);
    return out;
}

/* Largest difference between row ka of a and row kb of b (dense: a value one
 * side stores and the other rounds to 0 counts), relative to the row's peak;
 * *same: bit for bit equal. */
static double row_diff(const spot_dose *a, int ka, const spot_dose *b, int kb, int *same)
{
    double mx = 0.0, d = 0.0;
    *same = a->indptr[ka + 1] - a->indptr[ka] == b->indptr[kb + 1] - b->indptr[kb];
    for (int64_t j = a->indptr[ka], jb = b->indptr[kb];
         j < a->indptr[ka + 1] || jb < b->indptr[kb + 1];) {
        int ia = j < a->indptr[ka + 1] ? a->indices[j] : INT32_MAX;
        int ib = jb < b->indptr[kb + 1] ? b->indices[jb] : INT32_MAX;
        float va = ia <= ib ? a->values[j] : 0.0f, vb = ib <= ia ? b->values[jb] : 0.0f;
        *same &= ia == ib && va == vb;
        d = fmax(d, fabs((double)va - vb));
        mx = fmax(mx, fmax(va, vb));
        j += ia <= ib;
        jb += ib <= ia;
    }
    return mx > 0 ? d / mx : d;
}

/* output.per_spot_dose on the GPU: the upload clears a finished batch's state
 * on the device (the fused paths by their regions, the others whole). The GPU
 * steps the three spots at once, side by side in the slots of one state (one
 * at a time under the bilinear scheme), the CPU one at a time: each row must
 * be the CPU's bit for bit, with the early exit too under `shift` (both drop
 * the same values before A_theta with the same float test), and within 1e-4
 * of the row's peak with it under `moments` (the GPU drops a cell's moments
 * with its weight, the CPU keeps every value there). That comparison takes
 * the GPU's rows with the halo convolved on the host, as the CPU does; with
 * the device's convolution (cuda/halo_fft.cu, the default) the rows must be
 * those within HALO_DEVICE_TOL, and the same bits whether the device sums the
 * blocks (cuda/halo_blocks.cu, the default) or the host does. The spot map in reverse order, and one
 * spot at a time on the GPU, must give the same rows bit for bit: every spot
 * then has other neighbours and predecessors, and anything a slot let
 * through or a clear left behind would change it. */
/* The device's transforms round differently from the host's (double, about
 * 1e-15 of the halo's dose, a few percent of a row's values): seen through
 * the rows' float32, a value may move by one unit in its last place, 6e-8
 * of itself. 1e-6 of the row's peak: a kernel or band mixed up fails it. */
#define HALO_DEVICE_TOL 1e-6
static void per_spot_cases(int n_paths)
{
    /* Media: a bone slab across the spots' path, lung beside it and a
     * titanium pin (more than six candidates per target). */
#define SPOT_MEDIA                                                               \
    "geometry.shapes=[{material: bone_compact, z_mm: [10, 25]}, "                \
    "{material: lung, z_mm: [30, 45], x_mm: [-20.25, 0], density_g_cm3: 0.26}, " \
    "{material: titanium, z_mm: [26, 29], x_mm: [-2, 4]}]"
    const char *paths[][4] = {
        { "backend.fused=true", "transport.streaming_scheme=shift", NULL, NULL },
        { "backend.fused=true", "transport.streaming_scheme=bilinear", NULL, NULL },
        { "backend.fused=false", "transport.streaming_scheme=shift", NULL, NULL },
        { "backend.fused=true", "transport.streaming_scheme=shift", SPOT_MEDIA, NULL },
        { "backend.fused=true", "transport.streaming_scheme=shift", SPOT_MEDIA, NULL },
        { "backend.fused=false", "transport.streaming_scheme=shift", SPOT_MEDIA, NULL },
        /* With the early exit the spots' windows move (transport/window.h). */
        { "backend.fused=true", "transport.streaming_scheme=shift", "backend.early_exit=fixed",
          NULL },
        { "backend.fused=true", "transport.streaming_scheme=shift", SPOT_MEDIA,
          "backend.early_exit=fixed" },
        { "backend.fused=true", "transport.streaming_scheme=moments", NULL, NULL },
        { "backend.fused=true", "transport.streaming_scheme=moments", SPOT_MEDIA, NULL },
        { "backend.fused=false", "transport.streaming_scheme=moments", NULL, NULL },
        /* With the early exit the windows move; the rows within 1e-6. */
        { "backend.fused=true", "transport.streaming_scheme=moments", SPOT_MEDIA,
          "backend.early_exit=fixed" },
        /* Bins of unequal width: kernels per source bin in the slots' windows. */
        { "backend.fused=true", "transport.streaming_scheme=moments", "grid.angle.spacing=beam",
          NULL }
    };
    const char *names[] = { "one pass",
                            "two-pass fused",
                            "one kernel per operator",
                            "media, whole-grid kernels (test switch)",
                            "media, one pass",
                            "media, per operator",
                            "moving windows",
                            "moving windows, media",
                            "moments",
                            "moments, media",
                            "moments, per operator",
                            "moments, moving windows, media",
                            "moments, beam spacing" };
    const int whole_grid[] = { 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0 }; /* the test switch */
    const int n_all = (int)(sizeof paths / sizeof paths[0]);
    for (int i = 0; i < n_paths && i < n_all; i++) {
        const int ns = paths[i][3] ? 4 : paths[i][2] ? 3 : 2;
        field_cuda.media_whole_grid = whole_grid[i];
        /* The CPU with the same transport (the streaming scheme and the
         * geometry; backend.fused is the GPU's alone). */
        int s_cpu = 0, s_a = 0, s_b = 0, s_one = 0;
        const char *cpu_sets[5] = { paths[i][1], paths[i][2], paths[i][3], NULL, NULL };
        cpu_sets[ns - 1] = "backend.per_spot_lanes=1"; /* the CPU's one spot at a time */
        spot_dose cpu = field_rows("cpu", cpu_sets, ns, 0, &s_cpu);
        spot_dose a = field_rows("cuda", paths[i], ns, 0, &s_a),
                  b = field_rows("cuda", paths[i], ns, 1, &s_b);
        char variants_a[1024];
        snprintf(variants_a, sizeof variants_a, "%s", field_variants);
        const char *single[5] = { paths[i][0], paths[i][1], paths[i][2], paths[i][3], NULL };
        single[ns] = "backend.per_spot_lanes=1";
        spot_dose one = field_rows("cuda", single, ns + 1, 0, &s_one);
        int s_h = 0, s_hb = 0;
        field_halo = HALO_ON_HOST;
        spot_dose ah = field_rows("cuda", paths[i], ns, 0, &s_h);
        field_halo = HALO_BLOCKS_ON_HOST;
        spot_dose hb = field_rows("cuda", paths[i], ns, 0, &s_hb);
        field_halo = HALO_ON_DEVICE;
        /* The one-pass step on the union of the slots' boxes instead of each
         * slot's own (cuda/common.cuh, slot_boxes): the same rows. */
        field_cuda.slot_boxes_off = 1;
        int s_u = 0;
        spot_dose un = field_rows("cuda", paths[i], ns, 0, &s_u);
        field_cuda = (cuda_test_options){ 0 };
        /* The one-pass steps (one medium, or media in one pass) visit each
         * slot's own box, the union where that is switched off; the other
         * pipelines know only the union (kernel_variants' slot_boxes). */
        int media = 0;
        for (int q = 2; q < 4; q++)
            media |= paths[i][q] && strstr(paths[i][q], "geometry.shapes") != NULL;
        const int slot_boxes = strstr(paths[i][0], "fused=true") && strstr(paths[i][1], "shift") &&
                               (!media || !whole_grid[i]);
        char want_boxes[32];
        snprintf(want_boxes, sizeof want_boxes, "slot_boxes=%d ", slot_boxes ? s_a : 0);
        CHECK_MSG(strstr(variants_a, want_boxes), "%s: %s wanted, ran %s", names[i], want_boxes,
                  variants_a);
        CHECK_MSG(strstr(field_variants, "slot_boxes=0 "), "%s: on the union, ran %s", names[i],
                  field_variants);
        const int exits = paths[i][2] && strstr(paths[i][ns - 1], "early_exit=fixed");
        const int bilinear = strstr(paths[i][1], "bilinear") != NULL;
        double w_cpu = 0.0, w_halo = 0.0;
        int ok = a.n_spots == 3 && b.n_spots == 3 && cpu.n_spots == 3 && one.n_spots == 3 &&
                 un.n_spots == 3 && ah.n_spots == 3 && hb.n_spots == 3,
            reversed_same = ok, one_same = ok, cpu_same = ok, union_same = ok, blocks_same = ok;
        for (int k = 0; ok && k < 3; k++) {
            int same;
            w_cpu = fmax(w_cpu, row_diff(&ah, k, &cpu, k, &same));
            cpu_same &= same;
            w_halo = fmax(w_halo, row_diff(&a, k, &ah, k, &same));
            row_diff(&a, k, &b, 2 - k, &same);
            reversed_same &= same;
            row_diff(&a, k, &one, k, &same);
            one_same &= same;
            row_diff(&a, k, &un, k, &same);
            union_same &= same;
            row_diff(&a, k, &hb, k, &same);
            blocks_same &= same;
        }
        printf("  per-spot dose, %-24s %d at once: rows vs CPU %.2e (%s), the device's halo %.2e "
               "(its blocks against the host's: %s), spots in reverse order: "
               "%s, one at a time: %s, on the slots' union: %s\n",
               names[i], s_a, w_cpu, cpu_same ? "bitwise" : "differ", w_halo,
               blocks_same ? "identical rows" : "ROWS DIFFER",
               reversed_same ? "identical rows" : "ROWS DIFFER",
               one_same ? "identical rows" : "ROWS DIFFER",
               union_same ? "identical rows" : "ROWS DIFFER");
        CHECK_MSG(s_a == (bilinear ? 1 : 3) && s_b == s_a && s_one == 1 && s_cpu == 1,
                  "%s: %d, %d, %d and %d spots at once", names[i], s_a, s_b, s_one, s_cpu);
        /* Under moments a cell's energy strip is cut between two tables by its
         * offset, a point strip wholly: the dropped values' share of a cell's
         * moments can move it across the edge (measured 9.1e-5 with media). */
        const int moments_exit = exits && strstr(paths[i][1], "moments") != NULL;
        CHECK_MSG(ok && (moments_exit ? w_cpu <= 1e-4 : cpu_same),
                  "%s: per-spot rows differ from the CPU's by %.2e", names[i], w_cpu);
        CHECK_MSG(ok && w_halo <= HALO_DEVICE_TOL,
                  "%s: the device's halo moves the rows by %.2e of their peak", names[i], w_halo);
        /* The device sums each block's cells in the host's order, rows that
         * left the window first: the same blocks, so the same rows. */
        CHECK_MSG(blocks_same, "%s: the device's halo blocks differ from the host's", names[i]);
        CHECK_MSG(reversed_same, "%s: a spot's row depends on the spots beside it", names[i]);
        CHECK_MSG(one_same, "%s: a spot's row depends on the spots stepped with it", names[i]);
        CHECK_MSG(union_same, "%s: rows on each slot's box differ from the union's", names[i]);
        spot_dose_free(&un);
        spot_dose_free(&a);
        spot_dose_free(&b);
        spot_dose_free(&one);
        spot_dose_free(&ah);
        spot_dose_free(&hb);
        spot_dose_free(&cpu);
    }
}

/* The benchmark's Stress grid (BENCHMARKS.md; 200 x 64 x 800 x 400 = 4.1e9
 * cells, 16.4 GB per psi copy): a few dense-front steps must run with 64-bit
 * indexing and keep the balance. Needs ~34 GB of device memory. */
static int stress(const gpu_info *gi)
{
    if (gi->total_bytes < 40e9) {
        printf("skipped: the Stress grid needs ~34 GB of device memory, %s has %.1f GB\n", gi->name,
               gi->total_bytes / 1e9);
        return SMX_TEST_SKIP;
    }
    /* A spectrum of 100 +- 4 x 25 MeV fills every energy bin and stays inside E_max. */
    const char *sets[] = { "grid.energy.kind=uniform",   "grid.energy.n_bins=200",
                           "grid.energy.E_max_MeV=200",  "beam.energy_MeV=100",
                           "grid.angle.mode=full",       "grid.angle.n_bins=64",
                           "grid.space.nz=800",          "grid.space.nx=400",
                           "beam.sigma_x_mm=20",         "beam.energy_sigma_MeV=25",
                           "transport.steps=4",          "backend.device=cuda",
                           "output.snapshot_final=false" };
    fixture f;
    if (fixture_load(&f, NULL, sets, 13))
        return 1;
    printf("stress grid: %lld cells (%.1f GB per psi copy)\n", (long long)f.g.cells,
           f.g.cells * 4e-9);
    CHECK(f.g.cells > (int64_t)INT32_MAX); /* the point: indices past 2^31 */
    CHECK_MSG(simulate(&(sim_input){ &f.p, &f.g, &f.t, NULL }, &backend_cuda, NULL, &f.r, &f.err) ==
                  0,
              "%s", f.err.msg);
    for (int n = 0; n < f.r.n_steps; n++)
        printf("  step %d: weight %.9f, balance weight %.2e energy %.2e, %.1f ms\n", n + 1,
               f.r.steps[n].weight_out, f.r.steps[n].weight_rel_err, f.r.steps[n].energy_rel_err,
               f.r.step_ms[n]);
    CHECK(f.r.n_steps == 4);
    CHECK(f.r.conservation_violations == 0);
    CHECK(f.r.max_weight_rel_err <= 1e-6 && f.r.max_energy_rel_err <= 1e-6);
    fixture_free(&f);
    return check_report("test_gpu stress");
}

int main(int argc, char **argv)
{
    gpu_info gi;
    gpu_query(&gi);
    if (gi.no_code) { /* a GPU is there: the build is wrong for it, which is a failure */
        printf("FAIL: %s\n", gi.why_none);
        return 1;
    }
    if (gi.count == 0) {
        printf("skipped: %s\n", gi.why_none);
        return SMX_TEST_SKIP;
    }
    if (argc > 1 && strcmp(argv[1], "stress") == 0)
        return stress(&gi);
    if (argc > 1 && strcmp(argv[1], "variants") == 0) { /* the table alone */
        printf("baseline and variants (4 steps each):\n");
        variant_table();
        return check_report(argv[0]);
    }
    printf("device: %s (cc %d.%d), %.1f GB, runtime %d, driver %d\n", gi.name, gi.cc_major,
           gi.cc_minor, gi.total_bytes / 1e9, gi.runtime_version, gi.driver_version);

    /* quick: a few cases that run every kernel family once (compute-sanitizer,
     * scripts/sanitize-gpu.sh, which slows kernels by one to two orders). */
    const int steps_only =
        argc > 1 && strcmp(argv[1], "quick-steps") == 0; /* racecheck: no whole runs at all */
    if (argc > 1 && (strcmp(argv[1], "quick") == 0 || steps_only)) {
        const kcase few[] = {
            { "theta direct, window", OP_THETA, { "backend.angular=direct" }, 1, 1 },
            { "energy gather", OP_ENERGY, { "backend.energy=gather" }, 1, 1 },
            { "stream gather, shift", OP_STREAM, { "backend.streaming=gather" }, 1, 1 },
            { "2 steps, default (one pass)", -1, { "backend.cuda_graph=true" }, 1, 1 },
            { "2 steps, two-pass fused (bilinear)",
              -1,
              { "transport.streaming_scheme=bilinear" },
              1,
              1 },
            { "2 steps, moments", -1, { "transport.streaming_scheme=moments" }, 1, 1 },
            { "2 steps, moments, beam spacing",
              -1,
              { "transport.streaming_scheme=moments", "grid.angle.spacing=beam" },
              2,
              1 },
        };
        for (size_t i = 0; i < sizeof few / sizeof few[0]; i++)
            compare_case(&few[i], 2);
        variant_table(); /* every pipeline once more, the tallies inside the one pass too */
        media_cases(1);
        if (!steps_only)
            per_spot_cases(1);
        return check_report(argv[0]);
    }

    printf("1. operators alone, CUDA vs CPU, random dense psi:\n");
    const kcase cases[] = {
        { "theta direct, window", OP_THETA, { "backend.angular=direct" }, 1, 1 },
        /* Bins of unequal width: a kernel per source bin, as a gather
         * (physics/lut_angle.h, angle_gather), the CPU's scatter's bits. */
        { "theta direct, window, beam spacing",
          OP_THETA,
          { "backend.angular=direct", "grid.angle.spacing=beam" },
          2,
          1 },
        { "theta direct, full circle",
          OP_THETA,
          { "backend.angular=direct", "grid.angle.mode=full", "grid.angle.n_bins=32" },
          3,
          1 },
        { "theta fft, full circle",
          OP_THETA,
          { "backend.angular=fft", "grid.angle.mode=full", "grid.angle.n_bins=32" },
          3,
          0 },
        { "energy gather", OP_ENERGY, { "backend.energy=gather" }, 1, 1 },
        { "energy scatter", OP_ENERGY, { "backend.energy=scatter" }, 1, 0 },
        /* Bins narrower than a step's energy loss: each source splits
         * between two bins below it and straggles into a third. */
        { "energy gather, split and straggling",
          OP_ENERGY,
          { "backend.energy=gather", "grid.energy.n_bins=300" },
          2,
          1 },
        { "energy scatter, split and straggling",
          OP_ENERGY,
          { "backend.energy=scatter", "grid.energy.n_bins=300" },
          2,
          0 },
        /* The deposit's chains per direction and their spread
         * (deposit_path.h) over more directions than the fused kernel's
         * threads hold (41), and over more than the fused kernel serves (96). */
        { "energy gather, 41 directions",
          OP_ENERGY,
          { "backend.energy=gather", "grid.angle.n_bins=41" },
          2,
          1 },
        { "energy gather, 96 directions",
          OP_ENERGY,
          { "backend.energy=gather", "grid.angle.n_bins=96" },
          2,
          1 },
        { "stream gather, bilinear",
          OP_STREAM,
          { "backend.streaming=gather", "transport.streaming_scheme=bilinear" },
          2,
          1 },
        { "stream atomic, bilinear",
          OP_STREAM,
          { "backend.streaming=atomic", "transport.streaming_scheme=bilinear" },
          2,
          0 },
        { "stream warp-aggregated, bilinear",
          OP_STREAM,
          { "backend.streaming=warp", "transport.streaming_scheme=bilinear" },
          2,
          0 },
        { "stream fallback, bilinear",
          OP_STREAM,
          { "backend.streaming=fallback", "transport.streaming_scheme=bilinear" },
          2,
          0 },
        { "stream gather, shift", OP_STREAM, { "backend.streaming=gather" }, 1, 1 },
        { "stream warp-aggregated, shift", OP_STREAM, { "backend.streaming=warp" }, 1, 0 },
        { "stream warp, full circle (many targets)",
          OP_STREAM,
          { "backend.streaming=warp", "grid.angle.mode=full", "grid.angle.n_bins=32",
            "transport.streaming_scheme=bilinear" },
          4,
          0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        compare_case(&cases[i], 2);

    /* Many lanes of a warp on one target and many not: only the self-test hook
     * reaches this (streaming's own targets are unique per warp). Float sums
     * of up to ~256 terms in another order: 1e-5. */
    double worst = 0.0;
    smx_error serr = { 0 };
    CHECK_MSG(cuda_check_scatter_aggregation(&worst, &serr) == 0, "%s", serr.msg);
    CHECK(worst <= 1e-5);

    printf("2. full steps:\n");
    const kcase full[] = {
        { "3 steps, default (one pass), graph on", -1, { "backend.cuda_graph=true" }, 1, 1 },
        { "3 steps, one pass, graph off", -1, { "backend.cuda_graph=false" }, 1, 1 },
        { "3 steps, one pass, slowing down only",
          -1,
          { "transport.straggling=false", "transport.nuclear=false" },
          2,
          1 },
        { "3 steps, one pass, split and straggling (300 bins)",
          -1,
          { "grid.energy.n_bins=300" },
          1,
          1 },
        { "4 steps, one pass, 41 bins",
          -1,
          { "grid.angle.n_bins=41", "transport.streaming_scheme=shift", "transport.steps=4" },
          3,
          1 },
        { "3 steps, one pass, full circle 32 bins",
          -1,
          { "grid.angle.mode=full", "grid.angle.n_bins=32", "backend.angular=direct" },
          3,
          1 },
        { "3 steps, one pass, 64 bins", -1, { "grid.angle.n_bins=64" }, 1, 1 },
        { "3 steps, one pass, 13 bins, ds 2 cells",
          -1,
          { "grid.angle.n_bins=13", "transport.step_mm=2.0" },
          2,
          1 },
        { "3 steps, two-pass fused (bilinear)",
          -1,
          { "transport.streaming_scheme=bilinear" },
          1,
          1 },
        { "3 steps, one kernel per operator", -1, { "backend.fused=false" }, 1, 1 },
        { "3 steps, full circle, fft, atomic, scatter",
          -1,
          { "grid.angle.mode=full", "grid.angle.n_bins=32", "backend.angular=fft",
            "backend.streaming=atomic", "backend.energy=scatter" },
          5,
          0 },
        { "3 steps, reversed operator order",
          -1,
          { "transport.operator_order=[stream, energy, theta]" },
          1,
          1 },
        /* The moments scheme (cuda/moments.cuh): its stream's gather, its
         * deposit's own paths, every component through A_theta and A_E. */
        { "3 steps, moments", -1, { "transport.streaming_scheme=moments" }, 1, 1 },
        /* BASE's +-8 deg with 41 directions: kernels too wide for the two
         * passes' launch (bilinear fails there the same way, "invalid
         * argument"): one kernel per operator. */
        { "4 steps, moments, 41 bins, one kernel per operator",
          -1,
          { "grid.angle.n_bins=41", "transport.streaming_scheme=moments", "transport.steps=4",
            "backend.fused=false" },
          4,
          1 },
        { "3 steps, moments, 13 bins, ds 2 cells",
          -1,
          { "grid.angle.n_bins=13", "transport.step_mm=2.0", "transport.streaming_scheme=moments" },
          3,
          1 },
        { "3 steps, moments, full circle 32 bins",
          -1,
          { "grid.angle.mode=full", "grid.angle.n_bins=32", "backend.angular=direct",
            "transport.streaming_scheme=moments" },
          4,
          1 },
        { "3 steps, moments, one kernel per operator",
          -1,
          { "transport.streaming_scheme=moments", "backend.fused=false" },
          2,
          1 },
        /* Bins of unequal width (grid.angle.spacing: beam): under moments
         * the two passes' direct kernel takes a kernel per source bin; under
         * shift the fused kernels do not, and the step takes one kernel per
         * operator. */
        { "3 steps, moments, beam spacing",
          -1,
          { "transport.streaming_scheme=moments", "grid.angle.spacing=beam" },
          2,
          1 },
        { "3 steps, moments, beam spacing, one kernel per operator",
          -1,
          { "transport.streaming_scheme=moments", "grid.angle.spacing=beam",
            "backend.fused=false" },
          3,
          1 },
        { "3 steps, shift, beam spacing", -1, { "grid.angle.spacing=beam" }, 1, 1 },
        /* 41 directions over +-20 deg (the default window): two passes. */
        { "3 steps, moments, 41 bins over +-20 deg",
          -1,
          { "grid.angle.n_bins=41", "grid.angle.half_width_deg=20",
            "transport.streaming_scheme=moments" },
          3,
          1 },
    };
    for (size_t i = 0; i < sizeof full / sizeof full[0]; i++)
        compare_case(&full[i], 3);
    /* The one pass takes the spectral tallies (the halo's release) of the
     * steps it does not split; BASE's steps split (below), so these take
     * them apart, in the kernels of cuda/spectral_tally.cu, with the pass's
     * tallies switched on (the tallies' own kernels decide the split as the
     * step's does). */
    const kcase apart[] = {
        { "3 steps, one pass, LET and dose to water",
          -1,
          { "output.let=true", "output.dose_to_water=true" },
          2,
          1 },
    };
    compare_cases_as(apart, 1, ", split steps (tallies apart)", "spectral_tallies=in_pass(");
    /* The same with the device rows padded to whole 128-byte lines
     * (row_pitch_for, cuda/common.cuh), as the backend lays out wide grids
     * (nx = 200 -> 224): the test hook pads BASE's 37 cells to 64. Every
     * kernel must leave the padding out of the grid: nothing moves into it,
     * nothing is read or tallied from it, the host sees the same psi and dose. */
    runner_cuda_pad_rows = 1;
    compare_cases_as(full, sizeof full / sizeof full[0], ", padded rows", "row_pitch=64");
    runner_cuda_pad_rows = 0;
    /* The fused step's energy split (cuda/fused.cu): BASE's grid has 34 tiles
     * of 32 columns and 24 source bins, so on any GPU of 17 or more SMs every
     * one-pass case above cuts each tile's bins into 4 groups, the groups
     * recomputing the sources that feed their lowest target. The same kinds of
     * steps with the split off (one block walks all bins of a tile) must be the
     * CPU's bit for bit as well. Unsplit, the kernel runs in clusters of two
     * blocks of two tiles each (FUSED_CLUSTER, FUSED_SUB), so a cluster takes
     * four consecutive tiles: BASE's 34 leave the last cluster's second block
     * without a column; 30 rows (35 tiles) leave its last tile without one;
     * 28 rows (33 tiles, the last one 12 columns wide) leave only the first
     * tile of the last cluster with columns. Those that have none must still
     * walk every bin, or the cluster's barriers would wait forever. */
    const kcase unsplit[] = {
        { "3 steps, one pass, no energy split", -1, { "backend.cuda_graph=true" }, 1, 1 },
        { "3 steps, one pass, no split, LET and dose to water",
          -1,
          { "output.let=true", "output.dose_to_water=true" },
          2,
          1 },
        { "3 steps, one pass, no split, 35 tiles (odd)", -1, { "grid.space.nz=30" }, 1, 1 },
        { "3 steps, one pass, no split, 33 tiles (one in the last cluster)",
          -1,
          { "grid.space.nz=28" },
          1,
          1 },
        { "3 steps, one pass, 13 bins, ds 2 cells, no split",
          -1,
          { "grid.angle.n_bins=13", "transport.step_mm=2.0" },
          2,
          1 },
        { "3 steps, two-pass fused (bilinear), no split",
          -1,
          { "transport.streaming_scheme=bilinear" },
          1,
          1 },
    };
    const size_t n_unsplit = sizeof unsplit / sizeof unsplit[0];
    runner_fused_split_off = 1;
    compare_cases_as(unsplit, n_unsplit, "", "fused_tiles_per_block=2");
    /* Unsplit, the one pass takes the spectral tallies inside it, in the
     * CPU's order (numerics/direction_chunks.h): the cases above (3 planes,
     * the halo's release; 7 with LET's and the dose to water's; 13
     * directions in chunks of 4 with the halo's) and this one, which says so. */
    const kcase in_pass[] = {
        { "3 steps, one pass, no split, 13 bins (chunks of 4), LET",
          -1,
          { "grid.angle.n_bins=13", "output.let=true" },
          2,
          1 },
    };
    compare_cases_as(in_pass, sizeof in_pass / sizeof in_pass[0], ", tallies in the pass",
                     "spectral_tallies=in_pass(");
    /* The same with one tile per block, the form the kernel takes on grids
     * whose per-bin tables leave no room for two stage rings (test hook). */
    runner_fused_one_tile = 1;
    compare_cases_as(unsplit, n_unsplit, ", one tile per block", "fused_tiles_per_block=1");
    runner_fused_one_tile = 0;
    /* Unsplit with padded rows: each row's block of 32 aligned columns is a
     * tile, and the leftover 5 columns of the rows go 32 to a tile, each such
     * tile spanning seven or eight rows (cuda/fused.cu, tile_cell). */
    runner_cuda_pad_rows = 1;
    compare_cases_as(unsplit, n_unsplit, ", padded rows", "row_pitch=64");
    runner_cuda_pad_rows = 0;
    runner_fused_split_off = 0;
    /* 3000 energy bins: the fused kernel's per-bin tables (128 bytes a bin)
     * exceed its shared-memory budget (FUSED_MAX_DYN_SMEM), so the backend
     * must fall back to one kernel per operator rather than fail to launch.
     * (Bins of 0.033 MeV are narrower than one step's straggling, which the
     * plan then refuses: it is switched off here.) */
    const kcase many_bins = { "3 steps, 3000 energy bins (fused step does not fit)",
                              -1,
                              { "grid.energy.n_bins=3000", "transport.straggling=false" },
                              2,
                              1 };
    compare_case(&many_bins, 3);
    /* Kernels wider than the fused step's padded stage take its bounds-checked
     * convolution: cap the padding at K = 1 (test hook) on grids whose kernels
     * reach K >= 2 (8 and 5 here), so both paths run in one step; the
     * full-circle case scatters with Fermi-Rossi, whose larger angles widen
     * its kernels past the cap. (Without the hook, the 64-bin window case
     * above has K = 63 > FUSED_MAX_KP.) */
    const kcase wide[] = {
        { "3 steps, one pass, K > padding (window)", -1, { "transport.step_mm=2.0" }, 1, 1 },
        { "3 steps, one pass, K > padding (full circle)",
          -1,
          { "grid.angle.mode=full", "grid.angle.n_bins=64", "backend.angular=direct",
            "transport.step_mm=4.0", "transport.scattering_power=fermi_rossi", "grid.space.dx_mm=1",
            "grid.space.dz_mm=1" },
          7,
          1 },
    };
    runner_fused_kp_cap = 1;
    for (size_t i = 0; i < sizeof wide / sizeof wide[0]; i++) {
        CHECK_MSG(max_half_width_of(&wide[i]) >= 2, "%s: no kernel wider than the cap",
                  wide[i].name);
        compare_case(&wide[i], 3);
    }
    runner_fused_kp_cap = 0;
    /* The window's boundary tally of kernels wider than FUSED_EDGE: the fused
     * kernel reads their boundary fractions from rows it keeps in shared
     * memory (kernel_variants: fused_boundary_rows > 0); where those rows
     * would cost a resident block it reads them from global memory (test hook:
     * fused_boundary_rows=0). Either way the CPU's tallies to 1e-6, psi and
     * dose bit for bit. */
    const kcase edge_rows[] = {
        { "3 steps, one pass, ds 2 cells (wide kernels)", -1, { "transport.step_mm=2.0" }, 1, 1 },
        { "3 steps, one pass, 13 bins, ds 2 cells (wide kernels)",
          -1,
          { "grid.angle.n_bins=13", "transport.step_mm=2.0" },
          2,
          1 },
    };
    for (size_t i = 0; i < sizeof edge_rows / sizeof edge_rows[0]; i++) {
        CHECK_MSG(max_half_width_of(&edge_rows[i]) > 4, "%s: no kernel wider than FUSED_EDGE",
                  edge_rows[i].name);
        compare_case(&edge_rows[i], 3);
        const char *r = strstr(runner_variants, "fused_boundary_rows=");
        CHECK_MSG(r && atoi(r + strlen("fused_boundary_rows=")) > 0, "%s: ran %s",
                  edge_rows[i].name, runner_variants);
    }
    runner_fused_boundary_global = 1;
    compare_cases_as(edge_rows, sizeof edge_rows / sizeof edge_rows[0],
                     ", boundary rows from global memory", "fused_boundary_rows=0");
    runner_fused_boundary_global = 0;
    /* steps: auto ending before the 8 steps asked: later steps change nothing,
     * and the state must be read from the buffer of the last real step (the
     * single pass alternates buffers). Two stop levels, so that runs ending
     * after an odd and after an even number of steps are both likely. */
    const kcase stops[] = {
        { "auto stop at 0.85 of the weight",
          -1,
          { "transport.steps=auto", "transport.auto_stop_weight=0.85" },
          2,
          1 },
        { "auto stop at 0.8 of the weight",
          -1,
          { "transport.steps=auto", "transport.auto_stop_weight=0.8" },
          2,
          1 },
    };
    for (size_t i = 0; i < sizeof stops / sizeof stops[0]; i++)
        compare_case(&stops[i], 8);
    /* The per-bucket hybrid with both methods in one step: bins from 12 up on the
     * FFT, below on the direct kernel (forced; the timed choice may not split). */
    runner_force_fft_from = 12;
    const kcase hyb = { "3 steps, hybrid direct/fft by bucket (forced split)",
                        -1,
                        { "grid.angle.mode=full", "grid.angle.n_bins=32", "backend.angular=auto" },
                        3,
                        0 };
    compare_case(&hyb, 3);
    runner_force_fft_from = 0;
    const char *g_on[] = { "backend.cuda_graph=true" }, *g_off[] = { "backend.cuda_graph=false" };
    compare_gpu_gpu("graph replay vs plain launches", g_on, 1, g_off, 1, 1);
    const char *fu_on[] = { "backend.fused=true" }, *fu_off[] = { "backend.fused=false" };
    compare_gpu_gpu("fused vs one kernel per operator", fu_on, 1, fu_off, 1, 1);
    const char *fa[] = { "grid.angle.mode=full", "grid.angle.n_bins=32", "backend.angular=fft" };
    const char *fd[] = { "grid.angle.mode=full", "grid.angle.n_bins=32", "backend.angular=direct" };
    compare_gpu_gpu("fft vs direct (5 full steps)", fa, 3, fd, 3, 0);
    compare_gpu_gpu("determinism: default kernels twice", g_on, 1, g_on, 1, 1);

    printf("2b. heterogeneous media (unfused path), CUDA vs CPU:\n");
    media_cases(0);
    media_whole_run("backend.early_exit=off");
    media_whole_run("backend.early_exit=fixed");

    printf("3. per-spot dose, CUDA vs CPU:\n");
    per_spot_cases(13);

    printf("3b. moving windows, whole runs with the early exit (transport/window.h):\n");
    {
        const char *mv[] = { "backend.early_exit=fixed", "transport.window=moving" };
        const char *gr[] = { "backend.early_exit=fixed", "transport.window=grid" };
        run_metrics cm, gm, cg, gg;
        whole_run("cpu", mv, 2, &cm);
        whole_run("cuda", mv, 2, &gm);
        whole_run("cpu", gr, 2, &cg);
        whole_run("cuda", gr, 2, &gg);
        const size_t n = (size_t)cm.slice * sizeof(double);
        const int ok = cm.dose && gm.dose && cg.dose && gg.dose;
        const int gpu_cpu = ok && memcmp(cm.dose, gm.dose, n) == 0;
        const int grid_cpu = ok && memcmp(cg.dose, gg.dose, n) == 0;
        const int win_grid = ok && memcmp(gm.dose, gg.dose, n) == 0;
        printf(
            "  quickstart, early exit: moving window CUDA vs CPU %s (%.2e), whole grid CUDA vs CPU "
            "%s (%.2e), CUDA window vs grid %s\n",
            gpu_cpu ? "bitwise equal" : "DIFFERS", ok ? max_rel_d(gm.dose, cm.dose, cm.slice) : 1.0,
            grid_cpu ? "bitwise equal" : "DIFFERS",
            ok ? max_rel_d(gg.dose, cg.dose, cg.slice) : 1.0,
            win_grid ? "bitwise equal" : "DIFFERS");
        CHECK(ok && win_grid);
        /* Both backends drop the same values (docs/physics.md). */
        CHECK_MSG(gpu_cpu && grid_cpu, "with the early exit CUDA's dose is not the CPU's");
        free(cm.dose);
        free(gm.dose);
        free(cg.dose);
        free(gg.dose);
    }

    printf("baseline and variants (4 steps each):\n");
    variant_table();

    printf("4. whole runs, CUDA vs CPU:\n");
    const char *q[] = { "backend.early_exit=off" };
    const char *p150[] = { "grid.energy.E_max_MeV=150", "beam.energy_MeV=150", "grid.space.nz=340",
                           "grid.space.nx=101", "backend.early_exit=off" };
    /* Full circle with 64 bins: wide kernels at low energy, where the per-bucket
     * microbenchmark may pick the FFT (the hybrid path). */
    const char *pfull[] = { "grid.angle.mode=full", "grid.angle.n_bins=64",
                            "backend.angular=auto", "backend.early_exit=off",
                            "grid.space.nx=61",     "transport.steps=120" };
    /* The moments scheme's whole run (the generic path, direct A_theta): bit
     * for bit the CPU's. */
    const char *qm[] = { "backend.early_exit=off", "transport.streaming_scheme=moments",
                         "backend.angular=direct" };
    struct {
        const char *name;
        const char *const *sets;
        int n;
    } runs[] = { { "quickstart (100 MeV)", q, 1 },
                 { "150 MeV pencil", p150, 5 },
                 { "full circle, angular auto", pfull, 6 },
                 { "quickstart, moments", qm, 3 } };
    for (int i = 0; i < 4; i++) {
        run_metrics mc, mg, mg2;
        whole_run("cpu", runs[i].sets, runs[i].n, &mc);
        whole_run("cuda", runs[i].sets, runs[i].n, &mg);
        whole_run("cuda", runs[i].sets, runs[i].n, &mg2);
        double ed = mc.dose && mg.dose ? max_rel_d(mg.dose, mc.dose, mc.slice) : INFINITY;
        printf("  %-22s steps %d/%d  dose %.2e  R80 %.3f/%.3f mm  sigma(R80/2) %.4f/%.4f mm  "
               "conservation %.1e  repeat %s\n",
               runs[i].name, mg.n_steps, mc.n_steps, ed, mg.r80, mc.r80, mg.sigma50, mc.sigma50,
               mg.max_err,
               mg.dose && mg2.dose && memcmp(mg.dose, mg2.dose, mg.slice * 8) == 0 ? "identical"
                                                                                   : "DIFFERS");
        printf("    variants: %s\n", mg.variants);
        CHECK(ed <= 1e-4);
        if (i < 2) { /* the full-circle case stops mid-range: no R80 to compare */
            CHECK_ABS(mg.r80, mc.r80, 0.01); /* issue: identical to 0.01 mm */
            CHECK_ABS(mg.sigma50, mc.sigma50, 0.01);
        }
        CHECK(mg.max_err <= 1e-6 && mg.violations == 0);
        CHECK(mg.n_steps == mc.n_steps);
        /* The per-bucket choice is timed, so it may differ between two runs: the
         * default kernels' determinism is checked on the first two runs. */
        if (i < 2)
            CHECK(mg.dose && mg2.dose && memcmp(mg.dose, mg2.dose, mg.slice * 8) == 0);
        if (i == 3)
            CHECK_MSG(mg.dose && mc.dose && memcmp(mg.dose, mc.dose, mg.slice * 8) == 0,
                      "moments: the dose is not bitwise the CPU's");
        free(mc.dose);
        free(mg.dose);
        free(mg2.dose);
    }
    return check_report(argv[0]);
}
#endif
