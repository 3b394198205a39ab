/* The plan reader's error messages: every rejected plan in tests/plan_cases/
 * and every rejected --set names the file, line and column (or the --set), the
 * key, the value and what was expected. */
#include "plan_fixture.h"

static void test_error_messages(void)
{
    static const struct {
        const char *file, *msg;
    } cases[] = {
        /* the file itself */
        { "nonexistent.yaml",
          "tests/plan_cases/nonexistent.yaml: cannot open the plan: No such file or directory" },
        { "", "tests/plan_cases/: cannot read the plan: Is a directory" },
        { "syntax.yaml",
          "tests/plan_cases/syntax.yaml:5:8: YAML syntax error: did not find expected ',' or "
          "']' (while parsing a flow sequence at 4:16)" },
        { "two_documents.yaml",
          "tests/plan_cases/two_documents.yaml:5:1: a second YAML document starts here; "
          "expected one plan per file" },
        { "alias.yaml",
          "tests/plan_cases/alias.yaml:5:12: YAML alias *cell is not supported in a plan; "
          "expected the value written out" },
        { "empty.yaml",
          "tests/plan_cases/empty.yaml: the plan is empty; expected a mapping with sections "
          "grid, material, geometry, beam, transport, backend, output, scenarios" },
        { "top_list.yaml",
          "tests/plan_cases/top_list.yaml:2:1: the top level is a list; expected a mapping "
          "with sections grid, material, geometry, beam, transport, backend, output, scenarios" },
        /* keys */
        { "duplicate_key.yaml",
          "tests/plan_cases/duplicate_key.yaml:5:5: grid.energy.E_max_MeV: duplicate key, "
          "first given at 4:5; expected each key once" },
        { "duplicate_section.yaml",
          "tests/plan_cases/duplicate_section.yaml:14:1: beam: duplicate key, first given at "
          "10:1; expected each key once" },
        { "duplicate_dotted.yaml",
          "tests/plan_cases/duplicate_dotted.yaml:12:3: beam.energy_MeV: duplicate key, first "
          "given at 2:1; expected each key once" },
        { "unknown_near.yaml",
          "tests/plan_cases/unknown_near.yaml:4:5: unknown key 'grid.energy.E_maxx_MeV'; did "
          "you mean 'E_max_MeV'?" },
        { "unknown_far.yaml",
          "tests/plan_cases/unknown_far.yaml:5:5: unknown key 'grid.energy.colour'; expected "
          "one of kind, n_bins, E_min_MeV, E_max_MeV, E_cutoff_MeV" },
        { "unknown_section.yaml",
          "tests/plan_cases/unknown_section.yaml:2:1: unknown key 'gird'; did you mean "
          "'grid'?" },
        { "key_too_deep.yaml",
          "tests/plan_cases/key_too_deep.yaml:2:1: unknown key 'grid.energy.kind.value'; "
          "grid.energy.kind is a key, not a section" },
        { "key_is_list.yaml",
          "tests/plan_cases/key_is_list.yaml:3:5: beam: a key must be a name, not a list; "
          "expected one of energy_MeV, energy_sigma_MeV, direction_deg, x_mm, sigma_x_mm, divergence_mrad, correlation, "
          "weight, spots_file" },
        /* types */
        { "not_number.yaml",
          "tests/plan_cases/not_number.yaml:6:15: beam.energy_MeV: 'abc' is not a number; "
          "expected a number in (0, 1000] MeV" },
        { "quoted_number.yaml",
          "tests/plan_cases/quoted_number.yaml:3:15: beam.energy_MeV: '100' is a quoted "
          "string; expected a number in (0, 1000] MeV" },
        { "not_integer.yaml",
          "tests/plan_cases/not_integer.yaml:4:9: grid.space.nx: '81.5' is not an integer; "
          "expected an integer in [1, 100000]" },
        { "not_bool.yaml",
          "tests/plan_cases/not_bool.yaml:3:14: output.overwrite: 'yes' is not a boolean; "
          "expected true or false" },
        { "mapping_for_scalar.yaml",
          "tests/plan_cases/mapping_for_scalar.yaml:4:5: beam.energy_MeV: got a mapping; "
          "expected a number in (0, 1000] MeV" },
        { "scalar_for_list.yaml",
          "tests/plan_cases/scalar_for_list.yaml:3:19: output.snapshot_steps: got a scalar "
          "'5'; expected a list of at most 256 integers in [0, 100000000], e.g. [100, 200]" },
        { "scalar_for_section.yaml",
          "tests/plan_cases/scalar_for_section.yaml:2:7: beam: got a scalar '100'; expected a "
          "mapping with keys energy_MeV, energy_sigma_MeV, direction_deg, x_mm, sigma_x_mm, divergence_mrad, correlation, "
          "weight, spots_file" },
        { "null_value.yaml",
          "tests/plan_cases/null_value.yaml:4:15: grid.energy.E_max_MeV: no value; expected a "
          "number in (0, 1000] MeV" },
        { "empty_string.yaml",
          "tests/plan_cases/empty_string.yaml:3:9: output.file: the string is empty; expected "
          "a non-empty string" },
        { "long_string.yaml",
          "tests/plan_cases/long_string.yaml:3:9: material.name: 'aaaaaaaaaaaaaaaaaaaaaaaaaaa"
          "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...' is 81 bytes long; "
          "expected at most 63" },
        /* choices */
        { "enum_near.yaml",
          "tests/plan_cases/enum_near.yaml:3:11: backend.device: 'cdua' is not allowed (did "
          "you mean 'cuda'?); expected one of auto, cpu, cuda" },
        { "enum_far.yaml",
          "tests/plan_cases/enum_far.yaml:3:14: backend.streaming: 'quantum' is not allowed; "
          "expected one of auto, gather, atomic, warp, fallback" },
        { "per_spot_precision_bad.yaml",
          "tests/plan_cases/per_spot_precision_bad.yaml:3:23: output.per_spot_precision: "
          "'float16' is not allowed (did you mean 'float32'?); expected one of uint16, float32" },
        { "order_misspelt.yaml",
          "tests/plan_cases/order_misspelt.yaml:5:7: transport.operator_order[1]: 'enrgy' is "
          "not allowed (did you mean 'energy'?); expected one of theta, energy, stream" },
        { "order_repeated.yaml",
          "tests/plan_cases/order_repeated.yaml:3:27: transport.operator_order[1]: 'theta' "
          "appears twice; expected a list holding each of theta, energy, stream once" },
        { "order_short.yaml",
          "tests/plan_cases/order_short.yaml:3:19: transport.operator_order: the list has 2 "
          "entries; expected a list holding each of theta, energy, stream once" },
        /* ranges */
        { "too_small.yaml",
          "tests/plan_cases/too_small.yaml:4:12: grid.space.dx_mm: -0.5 is too small; "
          "expected a number in (0, 1000] mm" },
        { "too_large.yaml",
          "tests/plan_cases/too_large.yaml:3:15: beam.energy_MeV: 2000 is too large; expected "
          "a number in (0, 1000] MeV" },
        { "int_too_large.yaml",
          "tests/plan_cases/int_too_large.yaml:4:9: grid.space.nx: 99999999999999999999 is "
          "too large; expected an integer in [1, 100000]" },
        { "snapshot_negative.yaml",
          "tests/plan_cases/snapshot_negative.yaml:12:24: output.snapshot_steps[1]: -5 is too "
          "small; expected an integer in [0, 100000000]" },
        /* required keys */
        { "missing_in_section.yaml",
          "tests/plan_cases/missing_in_section.yaml:10:1: missing required key "
          "'beam.energy_MeV' (beam energy, MeV)" },
        { "missing_section.yaml",
          "tests/plan_cases/missing_section.yaml: missing required key 'output.file' (HDF5 "
          "result file)" },
        /* keys that must agree */
        { "cutoff_below_min.yaml",
          "tests/plan_cases/cutoff_below_min.yaml:6:19: grid.energy.E_cutoff_MeV: 0.5 is "
          "below grid.energy.E_min_MeV = 1; expected a cutoff >= E_min" },
        { "cutoff_above_emax.yaml",
          "tests/plan_cases/cutoff_above_emax.yaml:5:19: grid.energy.E_cutoff_MeV: 100 is not "
          "below grid.energy.E_max_MeV = 100; expected a cutoff < E_max" },
        { "emax_not_above_emin.yaml",
          "tests/plan_cases/emax_not_above_emin.yaml:5:16: grid.energy.E_max_MeV: 50 is not "
          "above grid.energy.E_min_MeV = 50; expected E_max > E_min" },
        { "beam_above_emax.yaml",
          "tests/plan_cases/beam_above_emax.yaml:7:15: beam.energy_MeV: 150 is above "
          "grid.energy.E_max_MeV = 100; expected a beam energy in [E_cutoff, E_max] = "
          "[1, 100] MeV" },
        { "beam_below_cutoff.yaml",
          "tests/plan_cases/beam_below_cutoff.yaml:8:15: beam.energy_MeV: 3 is below "
          "grid.energy.E_cutoff_MeV = 5; expected a beam energy in [E_cutoff, E_max] = "
          "[5, 100] MeV" },
        { "beam_outside_domain.yaml",
          "tests/plan_cases/beam_outside_domain.yaml:8:9: beam.x_mm: 30 is outside the "
          "domain, x = -20.25 to 20.25 mm (grid.space.nx 81 x dx_mm 0.5); expected "
          "|x_mm| <= 20.25" },
        { "step_too_long.yaml",
          "tests/plan_cases/step_too_long.yaml:9:12: transport.step_mm: 0.5 mm crosses more than 4 "
          "cells of grid.space.dz_mm = 0.1 mm; expected step_mm <= 0.4 mm (4 x min(dz_mm, dx_mm))" },
        { "direction_outside_window.yaml",
          "tests/plan_cases/direction_outside_window.yaml:9:18: beam.direction_deg: 120 is "
          "outside the angular window 70 to 110 deg (grid.angle.centre_deg 90 +- "
          "half_width_deg 20); expected a direction inside the window, or grid.angle.mode: "
          "full" },
        { "uniform_without_bins.yaml",
          "tests/plan_cases/uniform_without_bins.yaml:4:11: grid.energy.kind: uniform grids "
          "need grid.energy.n_bins; expected n_bins (an integer in [1, 100000]) next to kind: "
          "uniform" },
        { "range_with_bins.yaml",
          "tests/plan_cases/range_with_bins.yaml:4:13: grid.energy.n_bins: range grids derive "
          "the bin count from transport.step_mm; expected no n_bins, or kind: uniform" },
        /* the spot file of a field */
        { "spots_unknown_column.yaml",
          "tests/plan_cases/spots_unknown_column.csv:2:19: unknown column 'wieght'; expected the header's "
          "names from energy_MeV, x_mm, weight, direction_deg, energy_sigma_MeV, sigma_x_mm, divergence_mrad, "
          "correlation (beam.spots_file)" },
        /* An energy spread the grid would cut: E_max and what would hold it named. */
        { "spread_above_emax.yaml",
          "tests/plan_cases/spread_above_emax.yaml:3:23: grid.energy.E_max_MeV: 100 MeV cuts off the top of the "
          "beam's energy spectrum: beam.energy_MeV 99.5 + 4 x beam.energy_sigma_MeV 0.8 = 102.7 MeV (27 % of its "
          "protons lie above 100 MeV and would be dropped); expected E_max_MeV >= 102.7, e.g. 103 as the grid "
          "takes when E_max_MeV is left out, or a smaller spread" },
        { "spots_spread_above.yaml",
          "tests/plan_cases/spots_spread_above.yaml:4:16: grid.energy.E_max_MeV: 100 MeV cuts off the top of the "
          "energy spectrum of the spot at tests/plan_cases/spots_spread_above.csv:3 (beam.spots_file): energy_MeV "
          "99 + 4 x energy_sigma_MeV 0.5 = 101 MeV (2.3 % of its protons lie above 100 MeV and would be dropped); "
          "expected E_max_MeV >= 101, e.g. 101 as the grid takes when E_max_MeV is left out, or a smaller spread" },
        { "spots_energy_above.yaml",
          "tests/plan_cases/spots_energy_above.csv:3:1: energy_MeV: 150 is above grid.energy.E_max_MeV = 100; "
          "expected a beam energy in [E_cutoff, E_max] = [1, 100] MeV (beam.spots_file)" },
        { "spots_not_a_number.yaml",
          "tests/plan_cases/spots_not_a_number.csv:2:8: weight: 'abc' is not a finite number; expected a "
          "number (beam.spots_file)" },
        { "spots_header_only.yaml",
          "tests/plan_cases/spots_header_only.csv: no spots after the header (beam.spots_file); expected a "
          "header line naming the columns, then one line per spot" },
        { "spots_correlation_alone.yaml",
          "tests/plan_cases/spots_correlation_alone.csv:2:11: correlation: a position-angle correlation needs "
          "both beam.sigma_x_mm and beam.divergence_mrad greater than 0 (beam.spots_file)" },
        /* scenarios.*: a list of numbers each, in range; pairs of equal lists; shifts
         * that keep the beam in the domain */
        { "scenarios_not_a_list.yaml",
          "tests/plan_cases/scenarios_not_a_list.yaml:9:13: scenarios.shift_mm: got a scalar '3'; "
          "expected a list of at most 32 numbers, in mm, e.g. [-3.5, 3.5]" },
        { "scenarios_item_not_number.yaml",
          "tests/plan_cases/scenarios_item_not_number.yaml:9:19: scenarios.shift_mm[1]: '3' is a "
          "quoted string; expected a number, in mm" },
        { "scenarios_range_too_large.yaml",
          "tests/plan_cases/scenarios_range_too_large.yaml:9:30: scenarios.range_error_percent[1]: "
          "100 is too large; expected a number in (-50, 100) %" },
        { "per_spot_let_alone.yaml",
          "tests/plan_cases/per_spot_let_alone.yaml:7:50: output.per_spot_let: true needs "
          "output.per_spot_dose: true and output.let: true (its rows are each spot's LETd times "
          "its dose row); expected both, or false" },
        { "scenarios_pairs_unequal.yaml",
          "tests/plan_cases/scenarios_pairs_unequal.yaml:9:24: scenarios.range_error_percent: "
          "combine: pairs takes the i-th range error with the i-th shift, but range_error_percent "
          "has 2 entries and shift_mm 1; expected lists of equal length" },
        { "scenarios_shift_outside.yaml",
          "tests/plan_cases/scenarios_shift_outside.yaml:9:13: scenarios.shift_mm: entry 1, 12 mm, "
          "moves the beam (beam.x_mm 10) to x = 22 mm, outside the domain (|x| <= 20.25 mm); "
          "expected shifts that keep every spot inside the grid" },
        /* the table file */
        { "table_missing_absolute.yaml",
          "tests/plan_cases/table_missing_absolute.yaml:7:15: material.table_file: "
          "'/nonexistent/smx2d-sim/no_such_table.h5' was not found or is not readable; "
          "expected an existing file" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[256];
        snprintf(path, sizeof path, CASES "%s", cases[i].file);
        expect_error(path, cases[i].msg);
    }
}

/* The exe-relative and compile-time data directories depend on the build, so
 * this message is checked piece by piece. */
static void test_table_not_found_lists_paths(void)
{
    plan p;
    smx_error err;
    int rc = load(&p, CASES "table_missing_relative.yaml", NULL, 0, &err);
    CHECK(rc == SMX_EXIT_INPUT);
    const char *head =
        "tests/plan_cases/table_missing_relative.yaml:7:15: material.table_file: "
        "'no_such_table.h5' was not found; tried tests/plan_cases/no_such_table.h5, ";
    CHECK_MSG(!strncmp(err.msg, head, strlen(head)), "got: %s", err.msg);
    char env_path[128];
    snprintf(env_path, sizeof env_path, "%s/no_such_table.h5, ", tmp_dir);
    CHECK_MSG(strstr(err.msg, env_path) != NULL, "no $SMX2D_DATA_DIR path in: %s", err.msg);
    CHECK_MSG(strstr(err.msg, "/../share/smx2d-sim/data/no_such_table.h5") != NULL,
              "no installed data path in: %s", err.msg);
    const char *tail = "; expected a readable file, relative to the plan's directory or in "
                       "$SMX2D_DATA_DIR";
    size_t n = strlen(err.msg), t = strlen(tail);
    CHECK_MSG(n > t && !strcmp(err.msg + n - t, tail), "got: %s", err.msg);
    plan_free(&p);
}

/* A missing spot file is looked for like the table (the same list of places). */
static void test_spots_not_found(void)
{
    plan p;
    smx_error err;
    CHECK(load(&p, CASES "spots_missing_file.yaml", NULL, 0, &err) == SMX_EXIT_INPUT);
    const char *head =
        "tests/plan_cases/spots_missing_file.yaml:7:15: beam.spots_file: 'no_such_spots.csv' was "
        "not found; tried tests/plan_cases/no_such_spots.csv, ";
    CHECK_MSG(!strncmp(err.msg, head, strlen(head)), "got: %s", err.msg);
    plan_free(&p);
}

static void test_set_errors(void)
{
    expect_set_error("beam.energy_MeV",
                     "--set beam.energy_MeV: missing '='; expected --set key.path=value, e.g. "
                     "--set beam.energy_MeV=150");
    expect_set_error("=1", "--set =1: no key before '='; expected --set key.path=value");
    expect_set_error("grid.energy.E_maxx_MeV=5",
                     "--set grid.energy.E_maxx_MeV=5: unknown key 'grid.energy.E_maxx_MeV'; did "
                     "you mean 'grid.energy.E_max_MeV'?");
    expect_set_error("E_max_MeV=120", "--set E_max_MeV=120: unknown key 'E_max_MeV'; did you mean "
                                      "'grid.energy.E_max_MeV'?");
    expect_set_error("foo.bar=1",
                     "--set foo.bar=1: unknown key 'foo.bar'; expected a key path such as "
                     "beam.energy_MeV (smx2d-sim --print-reference-plan lists them all)");
    expect_set_error("grid.energy=5",
                     "--set grid.energy=5: 'grid.energy' is a section; expected a full key path, "
                     "grid.energy.NAME with NAME one of kind, n_bins, E_min_MeV, E_max_MeV, "
                     "E_cutoff_MeV");
    expect_set_error("grid.energy.E_max_MeV=abc",
                     "--set grid.energy.E_max_MeV=abc: grid.energy.E_max_MeV: 'abc' is not a "
                     "number; expected a number in (0, 1000] MeV");
    expect_set_error("beam.energy_MeV=",
                     "--set beam.energy_MeV=: beam.energy_MeV: no value; expected a number in "
                     "(0, 1000] MeV");
    expect_set_error("beam.energy_MeV={a: 1}",
                     "--set beam.energy_MeV={a: 1}: beam.energy_MeV: got a mapping; expected a "
                     "number in (0, 1000] MeV");
    expect_set_error("output.snapshot_steps=[1,",
                     "--set output.snapshot_steps=[1,: output.snapshot_steps: '[1,' is not valid "
                     "YAML; expected a list of at most 256 integers in [0, 100000000], e.g. "
                     "[100, 200]");
    expect_set_error("transport.steps=0",
                     "--set transport.steps=0: transport.steps: 0 is too small; expected auto or "
                     "an integer in [1, 100000000]");
    expect_set_error("transport.steps=many",
                     "--set transport.steps=many: transport.steps: 'many' is neither an integer "
                     "nor auto; expected auto or an integer in [1, 100000000]");
    expect_set_error("transport.scattering=1",
                     "--set transport.scattering=1: transport.scattering: '1' is not a boolean; "
                     "expected true or false");
    expect_set_error("scenarios.range_error_percent=[-50]",
                     "--set scenarios.range_error_percent=[-50]: scenarios.range_error_percent[0]: "
                     "-50 is too small; expected a number in (-50, 100) %");
    expect_set_error("scenarios.combine=every",
                     "--set scenarios.combine=every: scenarios.combine: 'every' is not allowed; "
                     "expected one of separate, all, pairs");
    expect_set_error("output.per_spot_precision=double",
                     "--set output.per_spot_precision=double: output.per_spot_precision: "
                     "'double' is not allowed; expected one of uint16, float32");
    /* Cross-field errors name the --set that caused them. */
    expect_set_error("grid.energy.E_cutoff_MeV=0.5",
                     "--set grid.energy.E_cutoff_MeV=0.5: grid.energy.E_cutoff_MeV: 0.5 is below "
                     "grid.energy.E_min_MeV = 1; expected a cutoff >= E_min");
    expect_set_error("grid.energy.kind=uniform",
                     "--set grid.energy.kind=uniform: grid.energy.kind: uniform grids need "
                     "grid.energy.n_bins; expected n_bins (an integer in [1, 100000]) next to "
                     "kind: uniform");
    /* The first bad --set is the one reported. */
    const char *two[] = { "beam.x_mm=abc", "beam.y_mm=1" };
    expect_error_set(CASES "minimal.yaml", two, 2,
                     "--set beam.x_mm=abc: beam.x_mm: 'abc' is not a number; expected a number, "
                     "in mm");
}

int main(int argc, char **argv)
{
    (void)argc;
    char table[128];
    if (plan_fixture_begin(table, sizeof table))
        return 1;
    test_error_messages();
    test_table_not_found_lists_paths();
    test_spots_not_found();
    test_set_errors();
    plan_fixture_end(table);
    return check_report(argv[0]);
}
