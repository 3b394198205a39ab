/* Plan reader: defaults and their locations, --set, table-file lookup, the
 * shipped schema files against the schema table (byte for byte), and the
 * resolved plan's round trip. The exact message of every error class:
 * test_plan_errors.c.
 *
 * Runs from the repository root (CTest WORKING_DIRECTORY); fixture plans live in
 * tests/plan_cases/. SMX2D_DATA_DIR points at a temporary directory holding an
 * empty pstar_water.h5: plan_load only checks that the table file exists. */
#include <math.h>

#include "input/plan_access.h"
#include "plan_fixture.h"
#include "transport/backend_host.h"

/* ---- valid plans ---- */

static void test_minimal_defaults(void)
{
    plan p;
    smx_error err;
    int rc = load(&p, CASES "minimal.yaml", NULL, 0, &err);
    CHECK_MSG(rc == 0, "minimal.yaml: %s", err.msg);
    if (rc)
        return;
    CHECK_STREQ(p.path, CASES "minimal.yaml");
    CHECK_STREQ(p.dir, "tests/plan_cases");
    char want_table[128];
    snprintf(want_table, sizeof want_table, "%s/pstar_water.h5", tmp_dir);
    CHECK_STREQ(p.table_path, want_table);
    CHECK_STREQ(p.table_file, "pstar_water.h5");

    size_t len = 0;
    char *text = read_text(CASES "minimal.yaml", &len);
    CHECK(text && p.yaml_len == len && p.yaml_text && !memcmp(p.yaml_text, text, len));
    free(text);

    /* given */
    CHECK(p.E_max_MeV == 100.0 && p.nx == 81 && p.nz == 170);
    CHECK(p.dx_mm == 0.5 && p.dz_mm == 0.5 && p.beam_energy_MeV == 100.0 && p.step_mm == 0.5);
    CHECK_STREQ(p.output_file, "minimal.h5");
    /* defaults */
    CHECK(p.energy_kind == EGRID_RANGE && p.energy_bins == 0);
    CHECK(p.E_min_MeV == 1.0 && p.E_cutoff_MeV == 1.0);
    CHECK(p.angle_mode == ANGLE_WINDOW && p.angle_bins == 41);
    CHECK(p.angle_centre_deg == 90.0 && p.angle_half_width_deg == 20.0);
    CHECK(p.slab_thickness_mm == 1.0 && p.density_g_cm3 == 1.0);
    CHECK_STREQ(p.material_name, "water");
    CHECK(p.beam_energy_sigma_MeV == 0.0 && p.beam_direction_deg == 90.0);
    CHECK(p.beam_x_mm == 0.0 && p.beam_sigma_x_mm == 0.0 && p.beam_weight == 1.0);
    CHECK(p.steps == 0 && p.auto_stop_weight == 1e-6 && p.max_steps == 100000);
    CHECK(p.scattering == 1 && p.streaming_scheme == STREAM_SHIFT);
    CHECK(p.operator_order[0] == OP_THETA && p.operator_order[1] == OP_ENERGY &&
          p.operator_order[2] == OP_STREAM);
    CHECK(p.device == DEVICE_AUTO && p.threads == 0);
    CHECK(p.variant_energy == VAR_E_AUTO && p.variant_angular == VAR_A_AUTO &&
          p.variant_stream == VAR_S_AUTO);
    CHECK(p.cuda_graph == 1 && p.gpu_memory_fraction == 0.9 && p.gpu_memory_bytes == 0.0);
    CHECK(p.early_exit == EARLY_EXIT_FIXED && p.early_exit_threshold == 1e-12);
    /* The spots' early exit, tied to the rows' cut: 1e-7 x 1e-4 on 0.5 mm
     * cells and steps (to double rounding: 1e-24), 8 times that on 1 mm, an
     * eighth on 0.25 mm; never below the run's (a cut of 1e-6 gives 1e-13);
     * the run's with the ratio 0. */
    CHECK(p.per_spot_threshold == 1e-4 && p.per_spot_early_exit_ratio == 1e-7);
    CHECK(p.dx_mm == 0.5 && p.dz_mm == 0.5 && p.step_mm == 0.5);
    CHECK(fabs(plan_spot_early_exit(&p) - 1e-11) < 1e-24);
    {
        plan q = p;
        q.dx_mm = q.dz_mm = q.step_mm = 1.0;
        CHECK(fabs(plan_spot_early_exit(&q) - 8e-11) < 1e-24);
        q.dx_mm = q.dz_mm = q.step_mm = 0.25;
        CHECK(fabs(plan_spot_early_exit(&q) - 1.25e-12) < 1e-24);
        q.dx_mm = q.dz_mm = q.step_mm = 0.5;
        q.per_spot_threshold = 1e-6;
        CHECK(plan_spot_early_exit(&q) == 1e-12);
        q.per_spot_threshold = 1e-4;
        q.per_spot_early_exit_ratio = 0.0;
        CHECK(plan_spot_early_exit(&q) == 1e-12);
    }
    CHECK(p.overwrite == 0 && p.snapshot_every == 0 && p.n_snapshot_steps == 0);
    CHECK(p.snapshot_final == 1 && p.log_every == 0 && p.keep_partial == 0);

    /* locations: the value's line:col, or 0 for a default */
    plan_loc emax = p.loc[ki("grid.energy.E_max_MeV")];
    CHECK(emax.line == 4 && emax.col == 16 && !emax.from_cli);
    plan_loc file = p.loc[ki("output.file")];
    CHECK(file.line == 15 && file.col == 9);
    plan_loc emin = p.loc[ki("grid.energy.E_min_MeV")];
    CHECK(emin.line == 0 && emin.col == 0 && !emin.from_cli);
    CHECK(p.loc[ki("backend.device")].line == 0);

    /* plan_fail_at: from the file, defaulted, and not a key */
    smx_error e = { 0 };
    CHECK(plan_fail_at(&p, &e, "grid.energy.E_max_MeV", "%d is odd", 7) == SMX_EXIT_INPUT);
    CHECK_STREQ(e.msg, "tests/plan_cases/minimal.yaml:4:16: grid.energy.E_max_MeV: 7 is odd");
    CHECK(e.code == SMX_EXIT_INPUT);
    memset(&e, 0, sizeof e);
    plan_fail_at(&p, &e, "grid.energy.E_min_MeV", "too low for the table");
    CHECK_STREQ(e.msg, "tests/plan_cases/minimal.yaml: grid.energy.E_min_MeV: too low for the "
                       "table");
    memset(&e, 0, sizeof e);
    plan_fail_at(&p, &e, NULL, "the plan needs %s", "care");
    CHECK_STREQ(e.msg, "tests/plan_cases/minimal.yaml: the plan needs care");
    plan_free(&p);
    CHECK(p.loc == NULL && p.yaml_text == NULL);
}

static void test_full_plan(void)
{
    plan p;
    smx_error err;
    int rc = load(&p, CASES "full_plan.yaml", NULL, 0, &err);
    CHECK_MSG(rc == 0, "full_plan.yaml: %s", err.msg);
    if (rc)
        return;
    CHECK(p.energy_kind == EGRID_UNIFORM && p.energy_bins == 120);
    CHECK(p.E_min_MeV == 2.0 && p.E_max_MeV == 160.0 && p.E_cutoff_MeV == 3.0);
    CHECK(p.angle_mode == ANGLE_FULL && p.angle_bins == 64);
    CHECK(p.nx == 100 && p.nz == 300 && p.dx_mm == 1.0 && p.dz_mm == 0.25);
    CHECK(p.slab_thickness_mm == 2.5);
    CHECK_STREQ(p.material_name, "water at 1.05");
    CHECK(p.density_g_cm3 == 1.05);
    CHECK(p.beam_energy_MeV == 150.0 && p.beam_energy_sigma_MeV == 0.75);
    CHECK(p.beam_direction_deg == 80.0 && p.beam_x_mm == -12.5 && p.beam_sigma_x_mm == 3.0);
    CHECK(p.beam_weight == 1e9);
    CHECK(p.step_mm == 0.25 && p.steps == 1200 && p.auto_stop_weight == 1e-4);
    CHECK(p.max_steps == 5000 && p.scattering == 0 && p.streaming_scheme == STREAM_BILINEAR);
    CHECK(p.operator_order[0] == OP_ENERGY && p.operator_order[1] == OP_THETA &&
          p.operator_order[2] == OP_STREAM);
    CHECK(p.device == DEVICE_CPU && p.threads == 8);
    CHECK(p.variant_energy == VAR_E_SCATTER && p.variant_angular == VAR_A_FFT &&
          p.variant_stream == VAR_S_WARP);
    CHECK(p.cuda_graph == 0 && p.gpu_memory_fraction == 0.5 && p.gpu_memory_bytes == 8e9);
    CHECK(p.early_exit == EARLY_EXIT_ADAPTIVE && p.early_exit_threshold == 1e-10);
    CHECK_STREQ(p.output_file, "results/full plan.h5");
    CHECK(p.overwrite == 1 && p.snapshot_every == 100 && p.snapshot_final == 0);
    CHECK(p.n_snapshot_steps == 3 && p.snapshot_steps[0] == 0 && p.snapshot_steps[1] == 50 &&
          p.snapshot_steps[2] == 1199);
    CHECK(p.log_every == 10 && p.keep_partial == 1);
    /* dotted keys carry their own location */
    plan_loc e = p.loc[ki("beam.energy_MeV")];
    CHECK(e.line == 16 && e.col == 18);
    plan_free(&p);

    rc = load(&p, CASES "direction_wraps.yaml", NULL, 0, &err);
    CHECK_MSG(rc == 0, "direction_wraps.yaml: %s", err.msg);
    plan_free(&p);
}

static void test_overrides(void)
{
    const char *sets[] = {
        "beam.energy_MeV=80",
        "transport.steps=250",
        "output.snapshot_steps=[0, 10, 20]",
        "backend.device=cpu",
        "transport.operator_order=[stream, energy, theta]",
        "material.name=\"slab #2\"",
        "beam.energy_MeV=90", /* a later --set wins */
        "transport.scattering=false",
    };
    plan p;
    smx_error err;
    int rc = load(&p, CASES "minimal.yaml", sets, (int)(sizeof sets / sizeof sets[0]), &err);
    CHECK_MSG(rc == 0, "overrides: %s", err.msg);
    if (rc)
        return;
    CHECK(p.beam_energy_MeV == 90.0 && p.steps == 250 && p.device == DEVICE_CPU);
    CHECK(p.n_snapshot_steps == 3 && p.snapshot_steps[2] == 20);
    CHECK(p.operator_order[0] == OP_STREAM && p.operator_order[2] == OP_THETA);
    CHECK_STREQ(p.material_name, "slab #2");
    CHECK(p.scattering == 0);
    plan_loc l = p.loc[ki("beam.energy_MeV")];
    CHECK(l.from_cli == 1 && l.line == 0);
    CHECK(p.loc[ki("grid.energy.E_max_MeV")].from_cli == 0);
    smx_error e = { 0 };
    plan_fail_at(&p, &e, "beam.energy_MeV", "%s", "beyond the table");
    CHECK_STREQ(e.msg, "--set beam.energy_MeV=90: beam.energy_MeV: beyond the table");
    plan_free(&p);

    /* transport.nuclear: the model by name, and its old switch's values:
     * true is the model it switched on (local), false off; halo by default. */
    static const struct {
        const char *set;
        int want;
    } nuc[] = { { NULL, NUCLEAR_HALO },
                { "transport.nuclear=true", NUCLEAR_LOCAL },
                { "transport.nuclear=false", NUCLEAR_OFF },
                { "transport.nuclear=local", NUCLEAR_LOCAL },
                { "transport.nuclear=off", NUCLEAR_OFF },
                { "transport.nuclear=halo", NUCLEAR_HALO } };
    for (size_t i = 0; i < sizeof nuc / sizeof nuc[0]; i++) {
        const char *one[] = { nuc[i].set };
        rc = load(&p, CASES "minimal.yaml", one, nuc[i].set ? 1 : 0, &err);
        CHECK_MSG(rc == 0 && p.nuclear == nuc[i].want, "%s: %d (%s)",
                  nuc[i].set ? nuc[i].set : "default", rc ? -1 : p.nuclear, err.msg);
        if (!rc)
            plan_free(&p);
    }
    const char *bad[] = { "transport.nuclear=hallo" };
    CHECK(load(&p, CASES "minimal.yaml", bad, 1, &err) == SMX_EXIT_INPUT);
    CHECK_MSG(strstr(err.msg, "transport.nuclear") && strstr(err.msg, "halo"), "%s", err.msg);

    /* --set can supply a key that the file lacks. */
    const char *fill[] = { "output.file=from-cli.h5" };
    rc = load(&p, CASES "missing_section.yaml", fill, 1, &err);
    CHECK_MSG(rc == 0, "missing_section + --set: %s", err.msg);
    CHECK_STREQ(p.output_file, "from-cli.h5");
    plan_free(&p);
}

static void test_table_lookup(void)
{
    char dir[128], plan_path[160], table[160], other[160], text[512];
    snprintf(dir, sizeof dir, "%s/plans", tmp_dir);
    CHECK(mkdir(dir, 0700) == 0);
    snprintf(table, sizeof table, "%s/local.h5", dir);
    write_text(table, "");
    snprintf(plan_path, sizeof plan_path, "%s/plan.yaml", dir);
    /* The plan's own directory comes before $SMX2D_DATA_DIR. */
    snprintf(other, sizeof other, "%s/local.h5", tmp_dir);
    write_text(other, "");
    snprintf(text, sizeof text,
             "grid: {energy: {E_max_MeV: 100}, space: {nx: 81, nz: 170, dx_mm: 0.5, dz_mm: 0.5}}\n"
             "material: {table_file: local.h5}\n"
             "beam: {energy_MeV: 100}\n"
             "transport: {step_mm: 0.5}\n"
             "output: {file: out.h5}\n");
    write_text(plan_path, text);
    plan p;
    smx_error err;
    int rc = load(&p, plan_path, NULL, 0, &err);
    CHECK_MSG(rc == 0, "local table: %s", err.msg);
    CHECK_STREQ(p.table_path, table);
    CHECK_STREQ(p.dir, dir);
    plan_free(&p);

    /* An absolute table path is used as it is. */
    char set[200];
    snprintf(set, sizeof set, "material.table_file=%s", other);
    const char *sets[] = { set };
    rc = load(&p, plan_path, sets, 1, &err);
    CHECK_MSG(rc == 0, "absolute table: %s", err.msg);
    CHECK_STREQ(p.table_path, other);
    plan_free(&p);

    /* Not next to the plan: found through $SMX2D_DATA_DIR. */
    remove(table);
    rc = load(&p, plan_path, NULL, 0, &err);
    CHECK_MSG(rc == 0, "table via SMX2D_DATA_DIR: %s", err.msg);
    CHECK_STREQ(p.table_path, other);
    plan_free(&p);
    remove(other);
    remove(plan_path);
    rmdir(dir);
}

/* ---- the shipped files against the table ---- */

static void check_same_as_shipped(const char *path, writer w)
{
    size_t want_len = 0, got_len = 0;
    char *want = read_text(path, &want_len);
    char *got = capture(w, &got_len);
    CHECK_MSG(want != NULL, "cannot read %s", path);
    if (want && got) {
        int same = want_len == got_len && !memcmp(want, got, got_len);
        size_t at = 0, line = 1;
        while (at < want_len && at < got_len && want[at] == got[at])
            line += want[at++] == '\n';
        CHECK_MSG(same,
                  "%s is out of date with the schema table in src/input/plan_schema.c "
                  "(first difference on line %zu); run `make schema`",
                  path, line);
    }
    free(want);
    free(got);
}

static void test_shipped_files(void)
{
    check_same_as_shipped("schemas/plan.schema.json", plan_write_json_schema);
    check_same_as_shipped("config/plan-reference.yaml", plan_write_reference);

    size_t n;
    char *schema = capture(plan_write_json_schema, &n);
    char *ref = capture(plan_write_reference, &n);
    for (size_t i = 0; schema && ref && i < plan_key_count; i++) {
        const char *leaf = strrchr(plan_keys[i].path, '.') + 1;
        char pat[96];
        snprintf(pat, sizeof pat, "\"%s\": {", leaf);
        CHECK_MSG(strstr(schema, pat) != NULL, "%s missing from the JSON Schema",
                  plan_keys[i].path);
        snprintf(pat, sizeof pat, " %s: ", leaf);
        CHECK_MSG(strstr(ref, pat) != NULL, "%s missing from the reference plan",
                  plan_keys[i].path);
    }
    free(schema);
    free(ref);

    /* The reference plan loads, and sets every key it can. */
    plan p;
    smx_error err;
    int rc = load(&p, "config/plan-reference.yaml", NULL, 0, &err);
    CHECK_MSG(rc == 0, "config/plan-reference.yaml: %s", err.msg);
    if (rc)
        return;
    CHECK_STREQ(p.output_file, "plan-reference.h5");
    for (size_t i = 0; i < plan_key_count; i++) {
        int optional = plan_keys[i].default_value && !plan_keys[i].default_value[0];
        CHECK_MSG(optional || p.loc[i].line > 0, "%s is not written in the reference plan",
                  plan_keys[i].path);
    }
    plan_free(&p);
}

/* ---- resolved plan round trip ---- */

static void check_round_trip(const char *path, const char *const *sets, int n)
{
    plan a, b;
    smx_error err;
    int rc = load(&a, path, sets, n, &err);
    CHECK_MSG(rc == 0, "%s: %s", path, err.msg);
    if (rc)
        return;
    char out[128];
    snprintf(out, sizeof out, "%s/resolved.yaml", tmp_dir);
    char *text = plan_resolved_text(&a);
    write_text(out, text ? text : "");
    rc = load(&b, out, NULL, 0, &err);
    CHECK_MSG(rc == 0, "resolved %s: %s\n%s", path, err.msg, text);
    for (size_t i = 0; !rc && i < plan_key_count; i++) {
        const plan_key *k = &plan_keys[i];
        char *va = value_text(&a, k), *vb = value_text(&b, k);
        CHECK_MSG(va && vb && !strcmp(va, vb), "%s: %s after the round trip, was %s", k->path, vb,
                  va);
        if (k->type == PT_REAL) {
            double x, y;
            memcpy(&x, (char *)&a + k->offset, sizeof x);
            memcpy(&y, (char *)&b + k->offset, sizeof y);
            CHECK_MSG(!memcmp(&x, &y, sizeof x), "%s: %.17g became %.17g", k->path, x, y);
        }
        /* Every key appears in the resolved text, as a line or a "not set" note. */
        char pat[96];
        snprintf(pat, sizeof pat, "%s: ", k->path);
        CHECK_MSG(text && strstr(text, pat), "%s missing from the resolved plan", k->path);
        free(va);
        free(vb);
    }
    /* Defaults are marked as such. */
    if (a.loc[ki("grid.angle.centre_deg")].line == 0)
        CHECK(text && strstr(text, "grid.angle.centre_deg: 90  # default\n"));
    free(text);
    if (!rc)
        plan_free(&b);
    plan_free(&a);
    remove(out);
}

static void test_resolved_round_trip(void)
{
    /* 99.5 MeV: the spread's top (+4 x 0.1) stays inside E_max = 100. */
    const char *sets[] = { "beam.energy_sigma_MeV=0.1", "beam.energy_MeV=99.5",
                           "beam.weight=3.3e-7", "output.snapshot_steps=[5]",
                           "material.name=\"true\"" };
    check_round_trip(CASES "minimal.yaml", sets, 5);
    check_round_trip(CASES "full_plan.yaml", NULL, 0);
    check_round_trip("config/plan-reference.yaml", NULL, 0);

    /* A spot file gives the energies: beam.energy_MeV, required otherwise, is
     * written as not set (it was once written as 0, which did not load back). */
    char plan_path[128], spots[128];
    snprintf(plan_path, sizeof plan_path, "%s/field.yaml", tmp_dir);
    snprintf(spots, sizeof spots, "%s/field.csv", tmp_dir);
    write_text(spots, "energy_MeV, x_mm, weight\n100, 0, 1\n90, 1, 0.5\n");
    write_text(plan_path, "grid: {energy: {E_max_MeV: 100}, space: {nx: 81, nz: 170, dx_mm: 0.5, "
                          "dz_mm: 0.5}}\nbeam: {spots_file: field.csv}\n"
                          "transport: {step_mm: 0.5}\noutput: {file: field.h5}\n");
    check_round_trip(plan_path, NULL, 0);
    plan p;
    smx_error err;
    if (load(&p, plan_path, NULL, 0, &err) == 0) {
        char *text = plan_resolved_text(&p);
        CHECK(text && strstr(text, "\n# beam.energy_MeV: not set\n"));
        free(text);
        plan_free(&p);
    }
    remove(spots);
    remove(plan_path);
}

/* An error a lower layer put at column `column` of spot i (key
 * "beam.spots[i].COLUMN", physics/source.h) is worded as plan_spot_fail
 * words its own: at the spot file's line and column. */
static void check_spot_wording(const plan *p, int i, const char *column)
{
    char key[64];
    snprintf(key, sizeof key, "beam.spots[%d].%s", i, column);
    smx_error low = { 0 }, want = { 0 };
    smx_fail_key(&low, SMX_EXIT_INPUT, key, "this spot puts no weight on the grid");
    CHECK(plan_word_error(p, &low) == SMX_EXIT_INPUT && !low.key[0]);
    const plan_spot s = plan_spot_at(p, i);
    plan_spot_fail(p, &s, column, &want, "this spot puts no weight on the grid");
    CHECK_STREQ(low.msg, want.msg);
}

/* A plan that leaves grid.energy.E_max_MeV out gets the highest beam or spot
 * energy plus four energy spreads, rounded up to a whole MeV, marked as
 * derived in the resolved plan (which then states it). */
static void test_energy_grid_from_beam(void)
{
    char plan_path[128], spots_path[128];
    snprintf(plan_path, sizeof plan_path, "%s/no_emax.yaml", tmp_dir);
    snprintf(spots_path, sizeof spots_path, "%s/no_emax_spots.csv", tmp_dir);
    write_text(plan_path,
               "grid:\n  space: {nx: 81, nz: 170, dx_mm: 0.5, dz_mm: 0.5}\n"
               "beam: {energy_MeV: 100, energy_sigma_MeV: 0.6}\ntransport: {step_mm: 0.5}\n"
               "output: {file: x.h5}\n");
    plan p;
    smx_error err;
    int rc = load(&p, plan_path, NULL, 0, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    if (rc)
        return;
    CHECK(p.E_max_MeV == 103.0 &&
          p.loc[ki("grid.energy.E_max_MeV")].derived); /* ceil(100 + 4 x 0.6) */
    char *text = plan_resolved_text(&p);
    CHECK_MSG(text && strstr(text, "grid.energy.E_max_MeV: 103  # from the beam\n"), "%s",
              text ? text : "");
    free(text);
    check_spot_wording(&p, 0, "weight"); /* the beam.* spot: at the key beam.weight */
    plan_free(&p);
    /* A field: its highest spot (the spread column defaults to beam.energy_sigma_MeV). */
    write_text(spots_path, "energy_MeV, x_mm, weight\n90, 0, 1\n120.2, 1, 0.5\n");
    const char *sets[] = { "beam.spots_file=no_emax_spots.csv", "beam.energy_sigma_MeV=0" };
    rc = load(&p, plan_path, sets, 2, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    if (!rc) {
        CHECK(p.E_max_MeV == 121.0 && p.n_spots == 2);
        check_spot_wording(&p, 1, "weight");
        check_spot_wording(&p, 0, "sigma_x_mm"); /* a column the file leaves to beam.* */
        plan_free(&p);
    }
    /* Given, it is kept, and a spot above it is an error at the spot. */
    const char *low[] = { "beam.spots_file=no_emax_spots.csv", "grid.energy.E_max_MeV=110" };
    CHECK(load(&p, plan_path, low, 2, &err) == SMX_EXIT_INPUT);
    CHECK_MSG(
        strstr(err.msg,
               "no_emax_spots.csv:3:1: energy_MeV: 120.2 is above grid.energy.E_max_MeV = 110"),
        "%s", err.msg);
    remove(plan_path);
    remove(spots_path);
}

/* scenarios.*: how many scenarios each combination makes, in which order,
 * and what a scenario changes in the plan. */
static void test_scenarios(void)
{
    plan p;
    smx_error err;
    /* Default: none, the plan alone. */
    CHECK(load(&p, CASES "minimal.yaml", NULL, 0, &err) == 0);
    CHECK(plan_scenario_count(&p) == 1 && p.n_scenario_range_percent == 0 &&
          p.n_scenario_shift_mm == 0 && p.scenario_combine == SCENARIO_SEPARATE);
    plan_free(&p);

    const char *sep[] = { "scenarios.range_error_percent=[-3.5, 3.5]",
                          "scenarios.shift_mm=[-2.25, 2.25, 4]" };
    CHECK(load(&p, CASES "minimal.yaml", sep, 2, &err) == 0);
    CHECK(plan_scenario_count(&p) == 1 + 2 + 3);
    plan_scenario a = plan_scenario_at(&p, 0), b = plan_scenario_at(&p, 2),
                  c = plan_scenario_at(&p, 5);
    CHECK(a.range_error_percent == 0 && a.shift_mm == 0);
    CHECK(b.range_error_percent == 3.5 && b.shift_mm == 0);
    CHECK(c.range_error_percent == 0 && c.shift_mm == 4);
    plan_free(&p);

    const char *all[] = { sep[0], sep[1], "scenarios.combine=all" };
    CHECK(load(&p, CASES "minimal.yaml", all, 3, &err) == 0);
    CHECK(plan_scenario_count(&p) == 3 * 4); /* ({0} u ranges) x ({0} u shifts) */
    a = plan_scenario_at(&p, 0);
    b = plan_scenario_at(&p, 1); /* range 0, the first shift */
    c = plan_scenario_at(&p, 11); /* the last range with the last shift */
    CHECK(a.range_error_percent == 0 && a.shift_mm == 0);
    CHECK(b.range_error_percent == 0 && b.shift_mm == -2.25);
    CHECK(c.range_error_percent == 3.5 && c.shift_mm == 4);
    plan_free(&p);

    const char *pairs[] = { "scenarios.range_error_percent=[0, 2]", "scenarios.shift_mm=[0, -1]",
                            "scenarios.combine=pairs" };
    CHECK(load(&p, CASES "minimal.yaml", pairs, 3, &err) == 0);
    CHECK(plan_scenario_count(&p) == 3);
    b = plan_scenario_at(&p, 2);
    CHECK(b.range_error_percent == 2 && b.shift_mm == -1);
    /* Scenario 2: densities over 1.02, the beam 1 mm towards -x. */
    plan_apply_scenario(&p, 2);
    CHECK(p.scenario_index == 2);
    CHECK(p.density_g_cm3 == 1.0 / 1.02 && p.beam_x_mm == -1.0);
    plan_free(&p);
    /* Scenario 1, (0, 0): nothing changes. */
    CHECK(load(&p, CASES "minimal.yaml", pairs, 3, &err) == 0);
    plan_apply_scenario(&p, 1);
    CHECK(p.density_g_cm3 == 1.0 && p.beam_x_mm == 0.0);
    /* The lists round-trip through the resolved plan. */
    char *text = plan_resolved_text(&p);
    CHECK_MSG(text && strstr(text, "scenarios.shift_mm: [0, -1]"), "%s", text ? text : "");
    free(text);
    plan_free(&p);
}

/* ---- the table itself ---- */

static void test_table_covers_struct(void)
{
    /* Every byte of struct plan above the "Not keys" fields belongs to a key,
     * or is padding (a short gap before an aligned field). */
    size_t end = offsetof(plan, path);
    unsigned char owned[sizeof(plan)] = { 0 };
    for (size_t i = 0; i < plan_key_count; i++) {
        const plan_key *k = &plan_keys[i];
        size_t bytes = k->size;
        if (k->type == PT_INT_LIST)
            bytes = (k->size + 1) * sizeof(int); /* the count follows the array */
        else if (k->type == PT_OP_LIST)
            bytes = k->size * sizeof(int);
        else if (k->type == PT_REAL_LIST)
            bytes = k->size * sizeof(double) + sizeof(int); /* the count follows the array */
        else if (k->type == PT_SHAPE_LIST)
            bytes = k->size * sizeof(plan_shape) + sizeof(int); /* the count follows the array */
        CHECK_MSG(k->offset + bytes <= end, "%s lies outside the key fields", k->path);
        for (size_t b = k->offset; b < k->offset + bytes && b < end; b++) {
            CHECK_MSG(!owned[b], "%s overlaps another key", k->path);
            owned[b] = 1;
        }
        CHECK_MSG(plan_key_index(k->path) == (int)i, "%s is in the table twice", k->path);
        CHECK_MSG(k->doc && k->doc[0] && k->units, "%s lacks doc or units", k->path);
        if (k->type == PT_ENUM || k->type == PT_OP_LIST)
            CHECK_MSG(k->choices && k->choices[0], "%s lacks choices", k->path);
    }
    for (size_t b = 0; b < end;) {
        if (owned[b]) {
            b++;
            continue;
        }
        size_t gap = b;
        while (b < end && !owned[b])
            b++;
        CHECK_MSG(b - gap < sizeof(double) && b % sizeof(double) == 0,
                  "bytes %zu..%zu of struct plan belong to no key", gap, b);
    }
}

static void test_names(void)
{
    CHECK(plan_key_index("grid.energy.kind") == 0);
    CHECK(plan_key_index("grid.energy") == -1);
    CHECK(plan_key_index("nope") == -1);
    CHECK(plan_key_index(NULL) == -1);
    CHECK_STREQ(plan_choice_name("grid.energy.kind", EGRID_UNIFORM), "uniform");
    CHECK_STREQ(plan_choice_name("grid.angle.mode", ANGLE_FULL), "full");
    CHECK_STREQ(plan_choice_name("backend.device", DEVICE_CUDA), "cuda");
    CHECK_STREQ(plan_choice_name("backend.streaming", VAR_S_FALLBACK), "fallback");
    CHECK_STREQ(plan_choice_name("backend.early_exit", EARLY_EXIT_OFF), "off");
    CHECK_STREQ(plan_choice_name("transport.streaming_scheme", STREAM_BILINEAR), "bilinear");
    CHECK_STREQ(plan_choice_name("transport.nuclear", NUCLEAR_HALO), "halo");
    CHECK_STREQ(plan_choice_name("transport.operator_order", OP_STREAM), "stream");
    CHECK(plan_choice_name("backend.device", 3) == NULL);
    CHECK(plan_choice_name("backend.device", -1) == NULL);
    CHECK(plan_choice_name("grid.space.nx", 0) == NULL);
    CHECK(plan_choice_name("nope", 0) == NULL);
    /* The name the backends print (transport/backend_host.h) is the schema's. */
    for (int i = -1; i <= STREAM_MOMENTS + 1; i++) {
        const char *a = backend_scheme_name(i),
                   *b = plan_choice_name("transport.streaming_scheme", i);
        CHECK_MSG(a == b || (a && b && !strcmp(a, b)), "streaming scheme %d: %s, %s", i,
                  a ? a : "NULL", b ? b : "NULL");
    }

    char buf[40];
    plan_format_real(0.9, buf, sizeof buf);
    CHECK_STREQ(buf, "0.9");
    plan_format_real(1000, buf, sizeof buf);
    CHECK_STREQ(buf, "1000");
    plan_format_real(1e-6, buf, sizeof buf);
    CHECK_STREQ(buf, "1.0e-06");
    plan_format_real(0.1 + 0.2, buf, sizeof buf);
    CHECK_STREQ(buf, "0.30000000000000004");

    plan zero = { 0 };
    plan_free(&zero);
}

int main(int argc, char **argv)
{
    (void)argc;
    char table[128];
    if (plan_fixture_begin(table, sizeof table))
        return 1;
    test_minimal_defaults();
    test_full_plan();
    test_overrides();
    test_table_lookup();
    test_shipped_files();
    test_resolved_round_trip();
    test_energy_grid_from_beam();
    test_table_covers_struct();
    test_names();
    test_scenarios();
    plan_fixture_end(table);
    return check_report(argv[0]);
}
