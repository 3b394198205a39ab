/* The moving window (src/transport/window.h) on the CPU backend: a run whose
 * window holds every cell the beam reaches gives the dose of the run on the
 * whole grid bit for bit, through water and through media, however often it
 * moves; a narrower window differs only by what its sides cut; a field's
 * per-spot rows, weighted, add up to its total. The reference is the same run
 * with the whole grid as its window, which a plan asking for snapshots gets
 * (psi snapshots are of the grid). */
#include <math.h>

#include "base/test_hooks.h"
#include "check.h"
#include "physics/medium_plan.h"
#include "sim_fixture.h"
#include "transport/window.h"

/* A snapshot sink that keeps nothing: its presence makes the window the grid. */
static int drop_snapshot(void *ctx, const grid *g, int step, const float *psi, smx_error *err)
{
    (void)ctx, (void)g, (void)step, (void)psi, (void)err;
    return 0;
}

/* Runs the fixture's plan with `sets` on the CPU, on a moving window or (dense)
 * on the whole grid; the geometry's media as the program builds them. */
static int run(fixture *f, const char *const *sets, int nsets, int dense)
{
    const char *all[16];
    int n = 0;
    for (int i = 0; i < nsets && n < 15; i++)
        all[n++] = sets[i];
    all[n++] = dense ? "output.snapshot_final=true" : "output.snapshot_final=false";
    if (fixture_load(f, NULL, all, n))
        return -1;
    medium_map mm = { 0 };
    medium_tables mtab = { 0 };
    const out_of_plane_model detour = out_of_plane_of_plan(&f->p, &f->t); /* as run_setup */
    int rc = medium_map_build(&mm, &f->p, &f->g, &f->err) ||
             medium_tables_load(&mtab, &mm, &f->t, &detour, &f->err);
    if (!rc) {
        const sim_media media = { &mm, mtab.mt, NULL };
        const snapshot_sink sink = { drop_snapshot, NULL };
        rc = simulate(&(sim_input){ &f->p, &f->g, &f->t, &media }, &backend_cpu,
                      dense ? &sink : NULL, &f->r, &f->err);
    }
    if (rc)
        fprintf(stderr, "run: %s\n", f->err.msg);
    medium_tables_free(&mtab);
    medium_map_free(&mm);
    return rc;
}

/* Largest |a - b| over the largest |a|. */
static double max_rel(const double *a, const double *b, int64_t n)
{
    double d = 0.0, m = 0.0;
    for (int64_t i = 0; i < n; i++) {
        d = fmax(d, fabs(a[i] - b[i]));
        m = fmax(m, fabs(a[i]));
    }
    return m > 0.0 ? d / m : d;
}

/* Window against grid for one plan: bitwise (tol 0) or within tol. */
static void compare(const char *what, const char *const *sets, int nsets, double tol,
                    int want_narrow)
{
    fixture w, d;
    if (run(&w, sets, nsets, 0) || run(&d, sets, nsets, 1)) {
        CHECK_MSG(0, "%s: the runs failed", what);
        fixture_free(&w);
        fixture_free(&d);
        return;
    }
    const int64_t n = w.g.slice;
    const int same = memcmp(w.r.dose_MeV, d.r.dose_MeV, (size_t)n * sizeof(double)) == 0;
    const double rel = max_rel(d.r.dose_MeV, w.r.dose_MeV, n);
    printf("  %-34s window %3d x %3d of %3lld x %3lld, moved %2d times, steps %d/%d, dose %s "
           "(max diff %.1e of the peak)\n",
           what, w.r.window_nz, w.r.window_nx, (long long)w.g.nz, (long long)w.g.nx,
           w.r.window_moves, w.r.n_steps, d.r.n_steps, same ? "bitwise equal" : "differs", rel);
    CHECK_MSG(w.r.window_moves > 0 && w.r.window_nz < w.g.nz, "%s: the window never moved", what);
    CHECK_MSG(d.r.window_nz == d.g.nz && d.r.window_nx == d.g.nx && d.r.window_moves == 0,
              "%s: a run with snapshots must keep the whole grid", what);
    CHECK_MSG(!want_narrow || w.r.window_nx < w.g.nx, "%s: the window is not narrower", what);
    CHECK_MSG(tol == 0.0 ? same : rel <= tol, "%s: dose differs by %.2e of the peak (allowed %.1e)",
              what, rel, tol);
    CHECK(w.r.conservation_violations == 0 && d.r.conservation_violations == 0);
    fixture_free(&w);
    fixture_free(&d);
}

/* Writes a spot map of `n` lines to path (mkstemp'd) and the --set for it. */
static void spot_file(char *path, char *set, size_t size, const char *const *lines, int n)
{
    int fd = mkstemp(path);
    FILE *fp = fdopen(fd, "w");
    fprintf(fp, "energy_MeV, x_mm, weight\n");
    for (int i = 0; i < n; i++)
        fprintf(fp, "%s\n", lines[i]);
    fclose(fp);
    snprintf(set, size, "beam.spots_file=%s", path);
}

/* A field's rows, weighted by the spots' protons, against its total. With a
 * fixed step count and the fixed early exit, the total and each spot see the
 * same steps (the auto stop and the adaptive exit are relative to each
 * source's own weight and peak, so they end the field and a spot at
 * different points). */
static void rows_sum_to_total(void)
{
    static const char *const lines[] = { "72, -6, 1.0", "68, 0, 0.5", "70, 7, 2.0" };
    char path[] = "/tmp/smx-window-spots-XXXXXX", spots[96];
    spot_file(path, spots, sizeof spots, lines, 3);
    const char *sets[] = { spots,
                           "beam.sigma_x_mm=2.0",
                           "output.per_spot_dose=true",
                           "output.per_spot_threshold=0",
                           "grid.space.nz=120",
                           "backend.early_exit=fixed",
                           "transport.steps=92" };
    fixture f;
    if (run(&f, sets, 7, 0)) {
        CHECK_MSG(0, "per-spot run failed");
        unlink(path);
        fixture_free(&f);
        return;
    }
    unlink(path);
    const spot_dose *sd = &f.r.per_spot;
    const int64_t n = f.g.slice;
    double *sum = calloc((size_t)n, sizeof *sum), *mag = calloc((size_t)n, sizeof *mag);
    for (int k = 0; k < sd->n_spots; k++)
        for (int64_t j = sd->indptr[k]; j < sd->indptr[k + 1]; j++) {
            sum[sd->indices[j]] += sd->weight[k] * (double)sd->values[j];
            mag[sd->indices[j]] += sd->weight[k] * fabs((double)sd->values[j]);
        }
    /* psi is float: every operator of every step rounds each value to
     * 2^-24, so the field transported as one psi and its spots transported
     * apart part by up to a few 2^-24 per step (and the rows are stored in
     * float): bound 3 x 2^-24 per step of the rows' magnitude, plus 1e-12 of
     * the peak where the rows hold nothing. */
    double worst = 0.0, peak = 0.0;
    for (int64_t c = 0; c < n; c++)
        peak = fmax(peak, f.r.dose_MeV[c] * f.r.initial_weight);
    int ok = sd->n_spots == 3 && peak > 0.0;
    const double per = 3.0 * 0x1p-24 * f.r.n_steps;
    for (int64_t c = 0; c < n; c++) {
        const double total = f.r.dose_MeV[c] * f.r.initial_weight, d = fabs(sum[c] - total);
        if (mag[c] > 0.0)
            worst = fmax(worst, d / mag[c]);
        ok &= d <= per * mag[c] + 1e-12 * peak;
    }
    free(sum);
    free(mag);
    printf("  per-spot rows: %d spots, windows %d x %d moved %d times, weighted rows against the "
           "total: largest difference %.2e of the rows' magnitude (bound %.1e)\n",
           sd->n_spots, f.r.spot_window_nz, f.r.spot_window_nx, f.r.spot_window_moves, worst, per);
    CHECK_MSG(ok, "the weighted rows do not add up to the total");
    CHECK(f.r.spot_window_moves > 0 && f.r.spot_window_nz < f.g.nz);
    CHECK(f.r.conservation_violations == 0);
    fixture_free(&f);
}

/* A spot's row on its own window (its reach to where a Gaussian of its width
 * falls below output.per_spot_threshold) against the same spot's total on
 * every column: the row stores float (2^-24 relative), and the window's sides
 * cut what would have scattered back at 1e-9 of the peak at most. */
static void narrow_rows(void)
{
    /* The total steps until no weight is left, as a spot's run does, and
     * the spot takes the total's early exit (the tie to the rows' cut,
     * per_spot.c, would part them by 2e-8 of the peak). */
    const char *sets[] = { "grid.space.nx=121",
                           "grid.space.nz=100",
                           "grid.energy.E_max_MeV=70",
                           "beam.energy_MeV=70",
                           "output.per_spot_dose=true",
                           "output.per_spot_threshold=1e-4",
                           "transport.auto_stop_weight=0",
                           "output.per_spot_early_exit_ratio=0" };
    fixture f;
    if (run(&f, sets, 8, 0)) {
        CHECK_MSG(0, "narrow window: the run failed");
        fixture_free(&f);
        return;
    }
    const spot_dose *sd = &f.r.per_spot;
    double peak = 0.0, worst = 0.0, dropped = 0.0, sum = 0.0;
    for (int64_t c = 0; c < f.g.slice; c++) {
        peak = fmax(peak, f.r.dose_MeV[c]);
        sum += f.r.dose_MeV[c];
    }
    for (int64_t j = sd->indptr[0]; sd->n_spots == 1 && j < sd->indptr[1]; j++) {
        const double t = f.r.dose_MeV[sd->indices[j]];
        worst = fmax(worst, fabs((double)sd->values[j] - t) - 0x1p-24 * fabs(t));
    }
    for (int64_t c = 0; c < f.g.slice; c++) /* what the row does not hold */
        dropped += f.r.dose_MeV[c];
    for (int64_t j = sd->indptr[0]; sd->n_spots == 1 && j < sd->indptr[1]; j++)
        dropped -= f.r.dose_MeV[sd->indices[j]];
    printf("  one spot, window %3d x %3d of %3lld x %3lld, moved %2d times: row against the "
           "total %.1e of the peak beyond float rounding; the total outside the row's cells "
           "%.4e MeV, the row's dropped sum %.4e MeV\n",
           f.r.spot_window_nz, f.r.spot_window_nx, (long long)f.g.nz, (long long)f.g.nx,
           f.r.spot_window_moves, worst / peak, dropped, sd->n_spots == 1 ? sd->dropped[0] : -1.0);
    CHECK(sd->n_spots == 1 && f.r.spot_window_nx < f.g.nx && f.r.spot_window_moves > 0);
    CHECK_MSG(worst <= 1e-9 * peak, "the row differs from the total by %.2e of the peak",
              worst / peak);
    /* Both sums hold every value below the threshold; the total's also what
     * the window's sides cut: they agree to 1e-9 of the spot's energy. */
    CHECK_MSG(sd->n_spots == 1 && fabs(dropped - sd->dropped[0]) <= 1e-9 * sum,
              "the values below the threshold sum to %.6e MeV in the total, %.6e in the row",
              dropped, sd->n_spots == 1 ? sd->dropped[0] : -1.0);
    fixture_free(&f);
}

/* Spots side by side in the slots of one state (backend.per_spot_lanes):
 * each row bit for bit the row of the same spot stepped alone, through bone
 * and lung (the media's shares of the deposit paths near the slots' sides)
 * and on windows that move, on the grid of `cells` (dx = dz = step; nx, nz
 * for the same 60 x 85 mm). full: also 2 at once (the last batch one short)
 * and windows that start with a band of 1 row and grow. */
static void slots_rows(const char *const cells[6], int full)
{
    static const char *const lines[] = { "70, -5, 1.0", "65, 0, 0.5", "75, 4, 2.0" };
    char path[] = "/tmp/smx-window-slots-XXXXXX", spots[96];
    spot_file(path, spots, sizeof spots, lines, 3);
    const char *base[] = { spots,
                           "beam.sigma_x_mm=1.5",
                           cells[0],
                           "grid.energy.E_max_MeV=80",
                           "output.per_spot_dose=true",
                           "output.per_spot_threshold=1e-4",
                           "geometry.shapes=[{material: bone_compact, z_mm: [5, 12], x_mm: [-15, "
                           "1]}, {material: lung, z_mm: [15, 25], x_mm: [-2, 15], density_g_cm3: "
                           "0.26}]",
                           NULL,
                           cells[1],
                           cells[2],
                           cells[3],
                           cells[4],
                           cells[5] };
    /* The last: windows that start with a band of 1 row and grow. */
    fixture f[4];
    const char *lanes[4] = { "backend.per_spot_lanes=1", "backend.per_spot_lanes=3",
                             "backend.per_spot_lanes=2", "backend.per_spot_lanes=3" };
    int ok = 1;
    /* A sanitized build (test_quick) leaves out 2 at once: the same code as 3. */
    const int skip = !full ? 2 : test_quick() ? 2 : -1, last = full ? 4 : 2;
    memset(f, 0, sizeof f);
    for (int i = 0; i < last; i++) {
        if (i == skip)
            continue;
        base[7] = lanes[i];
        /* The last run's batches start on a band of 1 row, which they outgrow (the
         * early exit drops their tails, and their rows can stay within 2). */
        static const smx_test_hooks band1 = { .spot_band = 1 };
        smx_test_hooks_installed = i == 3 ? &band1 : NULL;
        ok &= run(&f[i], base, 13, 0) == 0;
        smx_test_hooks_installed = NULL;
    }
    unlink(path);
    CHECK_MSG(ok && (!full || f[3].r.spot_window_grew > 0) && f[0].r.spot_window_grew == 0,
              "the band of 1 row grew %d times", ok ? f[3].r.spot_window_grew : -1);
    printf("  spots side by side, %s:\n", cells[1]);
    for (int i = 1; i < last && ok; i++) {
        if (i == skip)
            continue;
        const spot_dose *a = &f[0].r.per_spot, *b = &f[i].r.per_spot;
        const int same = a->n_spots == 3 && b->n_spots == 3 && a->nnz == b->nnz && a->nnz > 0 &&
                         memcmp(a->indptr, b->indptr, 4 * sizeof *a->indptr) == 0 &&
                         memcmp(a->indices, b->indices, (size_t)a->nnz * sizeof *a->indices) == 0 &&
                         memcmp(a->values, b->values, (size_t)a->nnz * sizeof *a->values) == 0 &&
                         memcmp(a->dropped, b->dropped, 3 * sizeof *a->dropped) == 0;
        printf("  %d spots at once (window %d x %d, grew %d times, moved %d times): rows %s those "
               "stepped one at a time (%lld values)\n",
               f[i].r.spot_slots, f[i].r.spot_window_nz, f[i].r.spot_window_nx,
               f[i].r.spot_window_grew, f[i].r.spot_window_moves,
               same ? "bitwise equal to" : "DIFFER from", (long long)b->nnz);
        CHECK_MSG(same, "%s: the rows differ from one spot at a time", lanes[i]);
        CHECK(f[i].r.spot_slots == (i == 2 ? 2 : 3) && f[i].r.spot_window_moves > 0);
        CHECK(f[i].r.conservation_violations == 0);
    }
    CHECK_MSG(ok, "slots: a run failed");
    for (int i = 0; i < 4; i++)
        fixture_free(&f[i]);
}

/* Spots of 80, 45 and 30 MeV in water, or through bone and lung (shapes:
 * NULL, or geometry.shapes): the batches' states hold only the energy bins
 * their spots reach (a new, smaller state for the lower ones), and each row
 * is still bit for bit the spot's own run on every bin of the grid (a plan of
 * that spot alone, stepped until no weight is left). Through media a state
 * of fewer bins chooses each medium's energy table from the run's range
 * tables (sim_tables_share_steps); from its own it would choose otherwise
 * once a particle has crossed the lung. */
static void class_rows(const char *shapes, const char *scheme)
{
    static const char *const lines[] = { "80, -5, 1.0", "45, 0, 0.5", "30, 6, 2.0" };
    /* Fermi-Rossi and no out-of-plane detour: a scattering power and a range
     * that do not depend on the plan's reference energy (the highest spot's),
     * which the plans of one spot alone would change. */
    const char *grid[] = { "grid.space.nx=81", "grid.space.nz=120", "grid.energy.E_max_MeV=90",
                           "transport.scattering_power=fermi_rossi",
                           "transport.out_of_plane_detour=false" };
    char path[] = "/tmp/smx-window-class-XXXXXX", spots[96];
    spot_file(path, spots, sizeof spots, lines, 3);
    const char *sets[11] = { grid[0],
                             grid[1],
                             grid[2],
                             grid[3],
                             grid[4],
                             spots,
                             "output.per_spot_dose=true",
                             "output.per_spot_threshold=0",
                             "backend.per_spot_lanes=2" };
    int nset = 9;
    if (shapes)
        sets[nset++] = shapes;
    if (scheme)
        sets[nset++] = scheme;
    fixture f;
    int ok = run(&f, sets, nset, 0) == 0;
    unlink(path);
    const spot_dose *sd = &f.r.per_spot;
    ok = ok && sd->n_spots == 3;
    int64_t differ = 0, compared = 0;
    for (int k = 0; ok && k < 3; k++) {
        char p1[] = "/tmp/smx-window-one-XXXXXX", s1[96];
        spot_file(p1, s1, sizeof s1, &lines[k], 1);
        const char *one[9] = {
            grid[0], grid[1], grid[2], grid[3], grid[4], s1, "transport.auto_stop_weight=0"
        };
        int none = 7;
        if (shapes)
            one[none++] = shapes;
        if (scheme)
            one[none++] = scheme;
        fixture o;
        ok = run(&o, one, none, 0) == 0;
        unlink(p1);
        for (int64_t j = sd->indptr[k]; ok && j < sd->indptr[k + 1]; j++, compared++)
            differ += sd->values[j] != (float)o.r.dose_MeV[sd->indices[j]];
        fixture_free(&o);
    }
    printf("  spots of 80, 45 and 30 MeV%s%s, %d states of %d to %d energy bins (the grid %lld): "
           "%lld of %lld values differ from each spot's own run on every bin\n",
           shapes ? " through bone and lung" : "", scheme ? " (moments)" : "", f.r.spot_classes,
           f.r.spot_bins_first, f.r.spot_bins_last, (long long)f.g.ne, (long long)differ,
           (long long)compared);
    CHECK_MSG(ok && f.r.spot_classes >= 2 && f.r.spot_bins_last < f.r.spot_bins_first &&
                  f.r.spot_bins_first < f.g.ne,
              "states of fewer bins: %d, %d to %d", f.r.spot_classes, f.r.spot_bins_first,
              f.r.spot_bins_last);
    CHECK_MSG(ok && compared > 0 && differ == 0, "%lld per-spot values differ", (long long)differ);
    fixture_free(&f);
}

static int64_t kept_width;
static int kept_planes;

/* The CPU backend with a memory of `room_rows` rows of the window: a larger
 * state is refused as the CUDA backend refuses one beyond its cap
 * (err->no_room), and lanes says how many states of the last size fit. */
static int room_rows, last_rows;
static int small_setup(void **out, const sim_tables *s, smx_error *err)
{
    last_rows = (int)s->g->nz;
    if (last_rows > room_rows) {
        err->no_room = 1;
        return smx_fail(err, SMX_EXIT_INPUT, "test: %d rows do not fit %d", last_rows, room_rows);
    }
    return backend_cpu.setup(out, s, err);
}
static int small_lanes(void *ctx)
{
    (void)ctx;
    return room_rows / last_rows;
}

/* The total on a window whose bound's rows do not fit the backend's memory:
 * it takes the rows that fit and gives the whole grid's dose bit for bit
 * (150 MeV on 1 mm cells: a bound of 80 rows);
 * with room for fewer rows than the band's state the run is refused with the
 * backend's error. */
static void total_rows_that_fit(void)
{
    const char *sets[] = { "grid.space.nx=17",      "grid.space.nz=170",
                           "grid.space.dx_mm=1.0",  "grid.space.dz_mm=1.0",
                           "transport.step_mm=1.0", "grid.energy.E_max_MeV=150",
                           "beam.energy_MeV=150" };
    fixture w, d, s;
    if (run(&w, sets, 7, 0) || run(&d, sets, 7, 1)) {
        CHECK_MSG(0, "rows that fit: the runs failed");
        fixture_free(&w);
        fixture_free(&d);
        return;
    }
    backend_ops small = backend_cpu;
    small.setup = small_setup;
    small.lanes = small_lanes;
    const int bound = w.r.window_nz;
    room_rows = bound - 1;
    int rc = fixture_load(&s, NULL, sets, 7) ||
             simulate(&(sim_input){ &s.p, &s.g, &s.t, NULL }, &small, NULL, &s.r, &s.err);
    const int same =
        !rc && memcmp(s.r.dose_MeV, d.r.dose_MeV, (size_t)d.g.slice * sizeof(double)) == 0;
    printf("  total, room for %d of the bound's %d rows: window of %d rows, moved %d times, "
           "dose %s the whole grid's\n",
           room_rows, bound, s.r.window_nz, s.r.window_moves, same ? "bitwise" : "NOT");
    CHECK_MSG(!rc, "rows that fit: %s", s.err.msg);
    CHECK(!rc && s.r.window_nz < bound && s.r.window_nz <= room_rows && s.r.window_moves > 0);
    CHECK_MSG(same, "the total on the rows that fit differs from the whole grid's");
    CHECK(!rc && s.r.conservation_violations == 0);
    fixture_free(&s);
    room_rows = 8; /* less than any band's state */
    rc = fixture_load(&s, NULL, sets, 7);
    if (!rc)
        rc = simulate(&(sim_input){ &s.p, &s.g, &s.t, NULL }, &small, NULL, &s.r, &s.err);
    CHECK_MSG(rc == SMX_EXIT_INPUT && strstr(s.err.msg, "do not fit 8"),
              "no room for any band: exit %d, \"%s\"", rc, s.err.msg);
    fixture_free(&s);
    fixture_free(&w);
    fixture_free(&d);
}

/* The per-spot windows' band is a length (8 mm), not a row count: 16 rows
 * at 0.5 mm, 32 at 0.25 mm, 8 at 1 mm, and never below 8 rows. */
static void band_rows(void)
{
    const double dz[] = { 0.25, 0.5, 1.0, 2.0, 0.3 };
    const int want[] = { 32, 16, 8, 8, 27 };
    for (int i = 0; i < 5; i++) {
        grid g = { 0 };
        g.dz = dz[i];
        const int rows = window_spot_band(&g);
        printf("  band at dz %.2f mm: %d rows\n", dz[i], rows);
        CHECK_MSG(rows == want[i], "band at dz %.2f mm: %d rows, expected %d", dz[i], rows,
                  want[i]);
    }
}

/* A backend whose shift writes plane q's leaving rows as q + 1 in every
 * plane (a kept plane's scratch holds whatever is there). */
static int fill_shift(void *ctx, int rows, double *dose_out, smx_error *err)
{
    (void)ctx, (void)err;
    const int64_t per = (int64_t)rows * kept_width;
    for (int q = 0; q < kept_planes; q++)
        for (int64_t i = 0; i < per; i++)
            dose_out[q * per + i] = q + 1;
    return 0;
}

/* The planes a backend keeps on the device (a field's halo bands,
 * backend_ops.halo_keep) are left alone by a shift: the rows that leave
 * reach `left` in every other plane, and a kept plane's rows there stay as
 * they were (never written; the host never reads them). */
static void kept_planes_rows(void)
{
    fixture f;
    const char *sets[] = { "grid.space.nx=31", "grid.space.nz=100", "output.let=true" };
    if (fixture_load(&f, NULL, sets, 3)) {
        CHECK_MSG(0, "kept planes: %s", f.err.msg);
        return;
    }
    window w;
    const window_shape ws = { (int)f.g.nx, 40, 4, 2, 1 };
    if (window_init(&w, &f.g, NULL, &ws, &f.err)) {
        CHECK_MSG(0, "kept planes: %s", f.err.msg);
        fixture_free(&f);
        return;
    }
    kept_width = w.width;
    kept_planes = f.g.dose_planes;
    backend_ops be = backend_cpu;
    be.shift = fill_shift;
    w.kept_lo = 1, w.kept_hi = 2; /* two of the planes, as the halo's bands are */
    /* The front near the far end and the back at row 12: 10 rows move. */
    const int rc = window_follow(&w, &be, NULL, 37, 12, &f.err);
    int right = 0, wrong = 0;
    for (int q = 0; q < kept_planes; q++)
        for (int64_t i = 0; i < (int64_t)10 * w.width; i++) {
            const double v = w.left[(int64_t)q * f.g.nz * w.width + i];
            const int kept = q >= 1 && q <= 2;
            if (v == (kept ? 0.0 : q + 1))
                right++;
            else
                wrong++;
        }
    printf("  a shift of %d rows with planes 1-2 of %d kept: %d values as expected, %d not\n", w.z0,
           kept_planes, right, wrong);
    CHECK_MSG(rc == 0, "kept planes: %s", f.err.msg);
    CHECK(kept_planes >= 4 && w.z0 == 10 && wrong == 0 && right == kept_planes * 10 * w.width);
    window_free(&w);
    fixture_free(&f);
}

/* The cases, each a CTest test of its own or a few together
 * (tests/physics.cmake): `test_window CASE...` runs those, `test_window` all. */
int main(int argc, char **argv)
{
    test_cases(argc, argv);
    const char *water[] = { "grid.space.nx=31", "grid.space.nz=100", "grid.energy.E_max_MeV=70",
                            "beam.energy_MeV=70" };
    const char *media[] = {
        "grid.space.nx=31",
        "geometry.shapes=[{material: bone_compact, z_mm: [10, 25]}, "
        "{material: lung, z_mm: [30, 45], x_mm: [-7.75, 0], density_g_cm3: 0.26}]"
    };
    if (test_case("whole_grid")) {
        compare("70 MeV pencil, full-width window", water, 4, 0.0, 0);
        /* The same on 1 mm and 0.25 mm cells and steps: the band and its moves
         * are in rows, which the grid sets. */
        const char *coarse[] = { "grid.space.nx=17",      "grid.space.nz=50",
                                 "grid.space.dx_mm=1.0",  "grid.space.dz_mm=1.0",
                                 "transport.step_mm=1.0", "grid.energy.E_max_MeV=70",
                                 "beam.energy_MeV=70" };
        compare("70 MeV pencil, 1 mm grid", coarse, 7, 0.0, 0);
        const char *fine[] = { "grid.space.nx=41",       "grid.space.nz=200",
                               "grid.space.dx_mm=0.25",  "grid.space.dz_mm=0.25",
                               "transport.step_mm=0.25", "grid.energy.E_max_MeV=70",
                               "beam.energy_MeV=70" };
        compare("70 MeV pencil, 0.25 mm grid", fine, 7, 0.0, 0);
        compare("through bone and lung", media, 2, 0.0, 0);
    }
    if (test_case("narrow_rows"))
        narrow_rows();
    if (test_case("band_rows"))
        band_rows();
    if (test_case("kept_planes"))
        kept_planes_rows();
    if (test_case("rows_that_fit"))
        total_rows_that_fit();
    if (test_case("rows_sum"))
        rows_sum_to_total();
    if (test_case("slots")) {
        const char *half[] = { "grid.space.nx=121",    "grid.space.dx_mm=0.5",
                               "grid.space.dz_mm=0.5", "transport.step_mm=0.5",
                               "grid.space.nz=170",    "transport.streaming_scheme=shift" };
        slots_rows(half, 1);
    }
    /* The slots' sides in cells: the same at 1 mm and 0.25 mm. */
    if (test_case("slots_1mm")) {
        const char *one_mm[] = { "grid.space.nx=61",     "grid.space.dx_mm=1.0",
                                 "grid.space.dz_mm=1.0", "transport.step_mm=1.0",
                                 "grid.space.nz=85",     "transport.streaming_scheme=shift" };
        slots_rows(one_mm, 0);
    }
    if (test_case("slots_quarter") && !test_quick()) {
        const char *quarter[] = { "grid.space.nx=241",     "grid.space.dx_mm=0.25",
                                  "grid.space.dz_mm=0.25", "transport.step_mm=0.25",
                                  "grid.space.nz=340",     "transport.streaming_scheme=shift" };
        slots_rows(quarter, 0);
    }
    /* The moments scheme keeps both contracts: a window that holds the beam
     * gives the grid's dose bit for bit, through water and media, and slots
     * side by side give each spot's own rows. */
    if (test_case("moments")) {
        const char *mwater[] = { "grid.space.nx=31", "grid.space.nz=100",
                                 "grid.energy.E_max_MeV=70", "beam.energy_MeV=70",
                                 "transport.streaming_scheme=moments" };
        compare("70 MeV pencil, moments", mwater, 5, 0.0, 0);
        const char *mmedia[] = { media[0], media[1], "transport.streaming_scheme=moments" };
        compare("through bone and lung, moments", mmedia, 3, 0.0, 0);
    }
    if (test_case("moments_slots")) {
        const char *mslots[] = { "grid.space.nx=61",     "grid.space.dx_mm=1.0",
                                 "grid.space.dz_mm=1.0", "transport.step_mm=1.0",
                                 "grid.space.nz=85",     "transport.streaming_scheme=moments" };
        slots_rows(mslots, 0);
    }
    const char *bone_lung =
        "geometry.shapes=[{material: bone_compact, z_mm: [4, 10]}, "
        "{material: lung, z_mm: [12, 30], x_mm: [-20, 3], density_g_cm3: 0.26}]";
    if (test_case("class_rows"))
        class_rows(NULL, NULL);
    if (test_case("class_rows_media"))
        class_rows(bone_lung, NULL);
    /* The moments scheme chooses its media's tables per cell from the bin's
     * share alone, which a state of fewer bins keeps. */
    if (test_case("class_rows_media_moments"))
        class_rows(bone_lung, "transport.streaming_scheme=moments");
    return check_report("test_window");
}
