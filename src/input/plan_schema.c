/* The schema table: the one place where a plan key is declared.
 *
 * Adding a key means adding a struct plan field and one row here; validation,
 * schemas/plan.schema.json and config/plan-reference.yaml all follow from the
 * row (written by plan_schema_write.c: run `make schema` to regenerate the two
 * shipped files; the plan test fails until they match). */
#include "input/plan.h"

#include <math.h>
#include <stddef.h>

#define AT(field) .offset = offsetof(plan, field), .size = sizeof(((plan *)0)->field)
#define LIST_AT(field)               \
    .offset = offsetof(plan, field), \
    .size = sizeof(((plan *)0)->field) / sizeof(((plan *)0)->field[0])
#define NO_MIN .min = -INFINITY
#define NO_MAX .max = INFINITY

/* The generic list code finds a list's count right after its array. */
_Static_assert(offsetof(plan, n_shapes) == offsetof(plan, shapes) + sizeof(((plan *)0)->shapes),
               "n_shapes must follow shapes");
_Static_assert(offsetof(plan, n_snapshot_steps) ==
                   offsetof(plan, snapshot_steps) + sizeof(((plan *)0)->snapshot_steps),
               "n_snapshot_steps must follow snapshot_steps");

_Static_assert(offsetof(plan, n_scenario_range_percent) ==
                   offsetof(plan, scenario_range_percent) +
                       sizeof(((plan *)0)->scenario_range_percent),
               "n_scenario_range_percent must follow scenario_range_percent");
_Static_assert(offsetof(plan, n_scenario_shift_mm) ==
                   offsetof(plan, scenario_shift_mm) + sizeof(((plan *)0)->scenario_shift_mm),
               "n_scenario_shift_mm must follow scenario_shift_mm");

/* A data table, laid out by hand. */
/* clang-format off */
const plan_key plan_keys[] = {
    /* ---- grid.energy ---- */
    { .path = "grid.energy.kind", .type = PT_ENUM, AT(energy_kind), .default_value = "range",
      .choices = "range|uniform", .units = "",
      .doc = "energy grid: range = bins uniform in CSDA residual range, one bin per step "
             "(no numerical straggling); uniform = bins uniform in energy" },
    { .path = "grid.energy.n_bins", .type = PT_INT, AT(energy_bins), .default_value = "",
      .min = 1, .max = 100000, .units = "",
      .doc = "number of energy bins; only with kind: uniform (range grids derive it "
             "from transport.step_mm)" },
    { .path = "grid.energy.E_min_MeV", .type = PT_REAL, AT(E_min_MeV), .default_value = "1.0",
      .min = 0, .min_exclusive = 1, .max = 1000, .units = "MeV",
      .doc = "lowest energy of the grid" },
    { .path = "grid.energy.E_max_MeV", .type = PT_REAL, AT(E_max_MeV), .default_value = "",
      .min = 0, .min_exclusive = 1, .max = 1000, .units = "MeV",
      .doc = "highest energy of the grid; left out: the highest beam (or spot) energy plus "
             "four of its energy spreads, rounded up to a whole MeV" },
    { .path = "grid.energy.E_cutoff_MeV", .type = PT_REAL, AT(E_cutoff_MeV), .default_value = "1.0",
      .min = 0, .min_exclusive = 1, .max = 1000, .units = "MeV",
      .doc = "a particle whose energy falls below this stops and deposits the rest "
             "of its energy where it is" },

    /* ---- grid.angle ---- */
    { .path = "grid.angle.mode", .type = PT_ENUM, AT(angle_mode), .default_value = "window",
      .choices = "window|full", .units = "",
      .doc = "angular grid: window = n_bins over centre +- half_width with absorbing "
             "edges; full = n_bins over 360 deg, periodic" },
    { .path = "grid.angle.n_bins", .type = PT_INT, AT(angle_bins), .default_value = "",
      .min = 1, .max = 100000, .units = "",
      .doc = "number of direction bins (odd puts the window centre on a bin centre); left "
             "out: bins of theta_0 / 1.5 at half the beam's path (spacing: beam: a central bin "
             "of about theta_0 / 5; docs/model.md, \"The direction window\")" },
    { .path = "grid.angle.centre_deg", .type = PT_REAL, AT(angle_centre_deg),
      .default_value = "90", .min = 0, .max = 360, .max_exclusive = 1, .units = "deg",
      .doc = "centre of the angular window, from the +x axis (90 = +z, into depth); left "
             "out with half_width_deg, the spots' direction when they all have one" },
    { .path = "grid.angle.half_width_deg", .type = PT_REAL, AT(angle_half_width_deg),
      .default_value = "", .min = 0, .min_exclusive = 1, .max = 180, .units = "deg",
      .doc = "half width of the angular window (window mode only); left out: the spots' "
             "directions plus 4.6 theta_0 of the beam at its last step in the grid (spacing: "
             "beam: at least 30 deg for a beam that stops in the grid)" },
    { .path = "grid.angle.spacing", .type = PT_ENUM, AT(angle_spacing),
      .default_value = "uniform", .choices = "uniform|beam", .units = "",
      .doc = "direction bins: uniform = equal bins; beam = bins of width "
             "d0 sqrt(1 + (theta / theta_c)^2) about the window's centre, theta_c = 0.6 "
             "theta_0 at half the beam's path and d0 about theta_0 / 5 there (window mode; "
             "meant for transport.streaming_scheme: moments; docs/model.md, \"The direction "
             "window\")" },

    /* ---- grid.space ---- */
    { .path = "grid.space.nx", .type = PT_INT, AT(nx), .default_value = NULL,
      .min = 1, .max = 100000, .units = "",
      .doc = "number of lateral cells (x, centred on x = 0)" },
    { .path = "grid.space.nz", .type = PT_INT, AT(nz), .default_value = NULL,
      .min = 1, .max = 100000, .units = "",
      .doc = "number of depth cells (z, from the entrance plane z = 0)" },
    { .path = "grid.space.dx_mm", .type = PT_REAL, AT(dx_mm), .default_value = NULL,
      .min = 0, .min_exclusive = 1, .max = 1000, .units = "mm",
      .doc = "lateral cell size" },
    { .path = "grid.space.dz_mm", .type = PT_REAL, AT(dz_mm), .default_value = NULL,
      .min = 0, .min_exclusive = 1, .max = 1000, .units = "mm",
      .doc = "depth cell size" },
    { .path = "grid.space.slab_thickness_mm", .type = PT_REAL, AT(slab_thickness_mm),
      .default_value = "1.0", .min = 0, .min_exclusive = 1, .max = 1000, .units = "mm",
      .doc = "out-of-plane thickness of the 2D slab, which turns deposited MeV into Gy" },

    /* ---- material ---- */
    { .path = "material.name", .type = PT_STRING, AT(material_name), .default_value = "water",
      .units = "", .doc = "material name, recorded in the output" },
    { .path = "material.table_file", .type = PT_STRING, AT(table_file),
      .default_value = "pstar_water.h5", .units = "",
      .doc = "HDF5 physics table; a relative path is looked for next to the plan, in "
             "$SMX2D_DATA_DIR, then in the installed data directory" },
    { .path = "material.density_g_cm3", .type = PT_REAL, AT(density_g_cm3),
      .default_value = "1.0", .min = 0, .min_exclusive = 1, .max = 25, .units = "g/cm^3",
      .doc = "mass density (the table's mass stopping powers are scaled by it)" },

    /* ---- geometry ---- */
    { .path = "geometry.shapes", .type = PT_SHAPE_LIST, LIST_AT(shapes), .default_value = "[]",
      .units = "",
      .doc = "axis-aligned rectangles, each of one material, drawn over the background "
             "(material:) and over a map or CT; later shapes win where they overlap. A cell "
             "belongs to a shape when its centre lies in [x_mm[0], x_mm[1]) x [z_mm[0], "
             "z_mm[1]) (docs/geometry.md)" },
    { .path = "geometry.map_file", .type = PT_STRING, AT(map_file), .default_value = "",
      .units = "",
      .doc = "HDF5 material map: per-cell material index and density with the material names "
             "(docs/geometry.md); found like material.table_file. Empty: no map" },
    { .path = "geometry.ct.file", .type = PT_STRING, AT(ct_file), .default_value = "",
      .units = "",
      .doc = "HDF5 CT image: per-cell CT number (HU), turned into material and density by "
             "geometry.ct.calibration; found like material.table_file. Empty: no CT" },
    { .path = "geometry.ct.calibration", .type = PT_STRING, AT(ct_calibration),
      .default_value = "", .units = "",
      .doc = "CSV calibration of the CT numbers: piecewise-linear HU -> mass density and HU "
             "intervals -> library material (Schneider et al. 2000 style; the shipped "
             "ct_schneider2000.csv is one); found like material.table_file" },

    /* ---- beam ---- */
    { .path = "beam.energy_MeV", .type = PT_REAL, AT(beam_energy_MeV), .default_value = NULL,
      .min = 0, .min_exclusive = 1, .max = 1000, .units = "MeV",
      .doc = "beam energy" },
    { .path = "beam.energy_sigma_MeV", .type = PT_REAL, AT(beam_energy_sigma_MeV),
      .default_value = "0", .min = 0, .max = 100, .units = "MeV",
      .doc = "Gaussian energy spread, standard deviation (0 = monoenergetic)" },
    { .path = "beam.direction_deg", .type = PT_REAL, AT(beam_direction_deg),
      .default_value = "90", .min = 0, .max = 360, .max_exclusive = 1, .units = "deg",
      .doc = "beam direction from the +x axis (90 = along +z, into depth)" },
    { .path = "beam.x_mm", .type = PT_REAL, AT(beam_x_mm), .default_value = "0",
      NO_MIN, NO_MAX, .units = "mm",
      .doc = "lateral beam position on the entrance plane (x = 0 is the domain's centre)" },
    { .path = "beam.sigma_x_mm", .type = PT_REAL, AT(beam_sigma_x_mm), .default_value = "0",
      .min = 0, .max = 1000, .units = "mm",
      .doc = "lateral Gaussian width, standard deviation (0 = pencil beam)" },
    { .path = "beam.divergence_mrad", .type = PT_REAL, AT(beam_divergence_mrad),
      .default_value = "0", .min = 0, .max = 500, .units = "mrad",
      .doc = "Gaussian angular spread of the projected angle, standard deviation "
             "(0 = every particle along beam.direction_deg)" },
    { .path = "beam.correlation", .type = PT_REAL, AT(beam_correlation),
      .default_value = "0", .min = -1, .min_exclusive = 1, .max = 1, .max_exclusive = 1,
      .units = "",
      .doc = "correlation of lateral position and angle at the entrance (positive: a "
             "diverging beam, whose particles on the +x side move towards +x; needs "
             "sigma_x_mm and divergence_mrad)" },
    { .path = "beam.weight", .type = PT_REAL, AT(beam_weight), .default_value = "1.0",
      .min = 0, .min_exclusive = 1, NO_MAX, .units = "",
      .doc = "number of protons of the beam: /dose/dose_Gy is their dose, dose_Gy_per_proton one's" },
    { .path = "beam.spots_file", .type = PT_STRING, AT(spots_file), .default_value = "",
      .units = "",
      .doc = "treatment field: a CSV spot map, a header line naming its columns, then one spot "
             "per line; columns energy_MeV, x_mm, weight (required), direction_deg, "
             "energy_sigma_MeV, sigma_x_mm, divergence_mrad, correlation (each defaults to its "
             "beam.* key); a relative path is looked for like material.table_file. Empty: one "
             "spot, the beam.* keys" },

    /* ---- transport ---- */
    { .path = "transport.step_mm", .type = PT_REAL, AT(step_mm), .default_value = NULL,
      .min = 0, .min_exclusive = 1, .max = 1000, .units = "mm",
      .doc = "step length ds (also the residual-range spacing of a range energy grid)" },
    { .path = "transport.steps", .type = PT_INT_OR_AUTO, AT(steps), .default_value = "auto",
      .min = 1, .max = 100000000, .units = "",
      .doc = "number of steps, or auto: step until the weight in flight falls below "
             "auto_stop_weight" },
    { .path = "transport.auto_stop_weight", .type = PT_REAL, AT(auto_stop_weight),
      .default_value = "1.0e-6", .min = 0, .max = 1, .units = "",
      .doc = "with steps: auto, stop once the weight in flight is below this fraction "
             "of the initial weight (0: once no weight is left; a spot's run of "
             "output.per_spot_dose always steps that far)" },
    { .path = "transport.max_steps", .type = PT_INT, AT(max_steps), .default_value = "100000",
      .min = 1, .max = 100000000, .units = "",
      .doc = "upper limit on the number of steps of an auto run" },
    { .path = "transport.scattering", .type = PT_BOOL, AT(scattering), .default_value = "true",
      .units = "",
      .doc = "multiple Coulomb scattering (false switches A_theta off, for studies of "
             "the numerical width)" },
    { .path = "transport.scattering_power", .type = PT_ENUM, AT(scattering_power),
      .default_value = "highland", .choices = "highland|fermi_rossi", .units = "",
      .doc = "scattering power: highland = Gottschalk's differential Highland, which "
             "reproduces Highland's angle for every depth; fermi_rossi = the table's "
             "Fermi-Rossi form (larger by 10-20 %)" },
    { .path = "transport.straggling", .type = PT_BOOL, AT(straggling), .default_value = "true",
      .units = "",
      .doc = "energy-loss straggling (Bohr's variance, applied in residual range) in A_E" },
    { .path = "transport.out_of_plane_detour", .type = PT_BOOL, AT(out_of_plane_detour),
      .default_value = "true", .units = "",
      .doc = "the path a proton travels across the plane (its y angles scatter as its x "
             "angles) in the energy loss, so that ranges are a 3-D beam's; false = a strictly "
             "2-D proton, whose range is longer by half the 3-D detour (0.17 mm at 230 MeV)" },
    { .path = "transport.nuclear", .type = PT_ENUM, AT(nuclear), .default_value = "halo",
      .choices = "off|local|halo", .aliases = "false=off|true=local", .units = "",
      .doc = "non-elastic nuclear interactions: primaries removed at the ICRU 63 rate; "
             "halo = their energy split between local fragments, secondary protons spread "
             "by the halo kernel and neutrals that leave; local = a fixed 0.6 deposited in "
             "the cell, the rest leaves; off = none (false and true are read as off and "
             "local)" },
    { .path = "transport.streaming_scheme", .type = PT_ENUM, AT(streaming_scheme),
      .default_value = "shift", .choices = "bilinear|shift|moments", .units = "",
      .doc = "spatial streaming: bilinear = area weighting over up to four cells; "
             "shift = whole-cell shifts that accumulate the exact displacement; moments = "
             "each cell carries its weight's mean offset (z, x) and spread (x), so the "
             "transport does not depend on the grid (slower: no one-pass GPU step yet)" },
    { .path = "transport.window", .type = PT_ENUM, AT(window_mode),
      .default_value = "moving", .choices = "moving|grid", .units = "",
      .doc = "what a source's state holds: moving = the columns of its reach (a spot's to "
             "output.per_spot_threshold; the total's every column) and a band of rows that "
             "follows the beam; grid = the whole grid (memory of the whole grid per state)" },
    { .path = "transport.operator_order", .type = PT_OP_LIST, LIST_AT(operator_order),
      .default_value = "[theta, energy, stream]", .choices = "theta|energy|stream",
      .units = "", .doc = "order in which the operators are applied within one step" },

    /* ---- backend ---- */
    { .path = "backend.device", .type = PT_ENUM, AT(device), .default_value = "auto",
      .choices = "auto|cpu|cuda", .units = "",
      .doc = "where to run: auto = CUDA when a GPU is present, else the CPU" },
    { .path = "backend.threads", .type = PT_INT, AT(threads), .default_value = "0",
      .min = 0, .max = 65536, .units = "",
      .doc = "OpenMP threads of the CPU backend (0 = all cores)" },
    { .path = "backend.energy", .type = PT_ENUM, AT(variant_energy), .default_value = "auto",
      .choices = "auto|gather|scatter", .units = "",
      .doc = "energy-loss form: gather (from the per-target table) or scatter (per source); "
             "auto = gather whenever the table allows it, which is also the faster" },
    { .path = "backend.angular", .type = PT_ENUM, AT(variant_angular), .default_value = "auto",
      .choices = "auto|direct|fft", .units = "",
      .doc = "CUDA angular convolution: direct or fft (full circle only); auto = timed per "
             "sigma bucket at start-up (the CPU always convolves directly)" },
    { .path = "backend.streaming", .type = PT_ENUM, AT(variant_stream), .default_value = "auto",
      .choices = "auto|gather|atomic|warp|fallback", .units = "",
      .doc = "streaming kernel variant (auto = gather: deterministic, atomic-free and the fastest "
             "measured, see BENCHMARKS.md)" },
    { .path = "backend.cuda_graph", .type = PT_BOOL, AT(cuda_graph), .default_value = "true",
      .units = "", .doc = "capture the CUDA step in a graph and replay it" },
    { .path = "backend.fused", .type = PT_BOOL, AT(fused), .default_value = "true",
      .units = "",
      .doc = "CUDA: apply A_theta and A_E in one pass and measure the step while streaming "
             "(default operator order, monotone energy table, at most 64 angle bins); "
             "false runs one kernel per operator" },
    { .path = "backend.per_spot_lanes", .type = PT_INT_OR_AUTO, AT(per_spot_lanes),
      .default_value = "auto", .min = 1, .max = 64, .units = "",
      .doc = "output.per_spot_dose: spots transported at once, each in a window of its own, "
             "side by side in one state that every launch of a step serves (auto = as many as "
             "the GPU's memory and backend.gpu_memory_fraction hold, up to 64; on the CPU up "
             "to 4, as half the host's memory holds); the rows do not depend on it" },
    { .path = "backend.gpu_memory_fraction", .type = PT_REAL, AT(gpu_memory_fraction),
      .default_value = "0.9", .min = 0, .min_exclusive = 1, .max = 1, .units = "",
      .doc = "largest fraction of the GPU's memory the run may take" },
    { .path = "backend.gpu_memory_bytes", .type = PT_REAL, AT(gpu_memory_bytes),
      .default_value = "0", .min = 0, NO_MAX, .units = "bytes",
      .doc = "absolute cap on GPU memory (0 = no cap)" },
    { .path = "backend.host_memory_bytes", .type = PT_REAL, AT(host_memory_bytes),
      .default_value = "0", .min = 0, NO_MAX, .units = "bytes",
      .doc = "host memory the run may use (0 = the machine's physical memory): a run whose "
             "smallest footprint exceeds it is refused, and the CPU backend, which uses memory "
             "only where the beam goes, stops cleanly when the beam's rows would exceed it" },
    { .path = "backend.early_exit", .type = PT_ENUM, AT(early_exit), .default_value = "fixed",
      .choices = "off|fixed|adaptive", .units = "",
      .doc = "CUDA: drop weight below the threshold (tallied as THETA_CUTOFF): off; fixed = below the threshold; "
             "adaptive = below the threshold times the largest initial psi value" },
    { .path = "backend.early_exit_threshold", .type = PT_REAL, AT(early_exit_threshold),
      .default_value = "1.0e-12", .min = 0, .max = 1, .units = "",
      .doc = "weight below which a cell counts as empty (see early_exit)" },

    /* ---- output ---- */
    { .path = "output.file", .type = PT_STRING, AT(output_file), .default_value = NULL,
      .units = "", .doc = "HDF5 result file" },
    { .path = "output.overwrite", .type = PT_BOOL, AT(overwrite), .default_value = "false",
      .units = "", .doc = "replace an existing result file" },
    { .path = "output.beyond_grid", .type = PT_ENUM, AT(beyond_grid), .default_value = "warn",
      .choices = "warn|fail", .units = "",
      .doc = "a beam that reaches beyond the grid (predicted from its CSDA range and lateral reach "
             "before the run, or found in the dose after it): warn = say so first and exit 0; "
             "fail = refuse the plan before the run (exit 2), or exit 3 after writing the result" },
    { .path = "output.snapshot_every", .type = PT_INT, AT(snapshot_every), .default_value = "0",
      .min = 0, .max = 100000000, .units = "",
      .doc = "write psi every this many steps (0 = none)" },
    { .path = "output.snapshot_steps", .type = PT_INT_LIST, LIST_AT(snapshot_steps),
      .default_value = "[]", .min = 0, .max = 100000000, .units = "",
      .doc = "further steps after which psi is written (0 = the initial state)" },
    { .path = "output.snapshot_final", .type = PT_BOOL, AT(snapshot_final),
      .default_value = "true", .units = "", .doc = "write psi after the last step" },
    { .path = "output.log_every", .type = PT_INT, AT(log_every), .default_value = "0",
      .min = 0, .max = 100000000, .units = "",
      .doc = "print a step-log line every this many steps (0 = about 20 lines over the expected steps)" },
    { .path = "output.keep_partial", .type = PT_BOOL, AT(keep_partial), .default_value = "false",
      .units = "",
      .doc = "keep an interrupted or failed run's file as <file>.incomplete.h5" },
    { .path = "output.per_spot_dose", .type = PT_BOOL, AT(per_spot_dose), .default_value = "false",
      .units = "",
      .doc = "also transport each spot alone and store its dose per proton (the dose-influence "
             "matrix, /dose/per_spot, compressed sparse rows)" },
    { .path = "output.per_spot_threshold", .type = PT_REAL, AT(per_spot_threshold),
      .default_value = "1.0e-4", .min = 0, .max = 1, .units = "",
      .doc = "per-spot values below this fraction of the spot's largest value are not stored "
             "(their sum is, per spot, in /dose/per_spot/dropped_Gy)" },
    { .path = "output.per_spot_early_exit_ratio", .type = PT_REAL, AT(per_spot_early_exit_ratio),
      .default_value = "1.0e-7", .min = 0, .max = 1, .units = "",
      .doc = "each spot's own run drops weight below this times output.per_spot_threshold "
             "times the cell (dx dz step over 0.5 mm cubed; a fraction of the spot's weight; "
             "never below backend.early_exit_threshold): the "
             "default keeps every value within 2e-5 of its row's peak of a run at 1e-12, "
             "1e-6 within 2e-4, for fewer steps (docs/accuracy-and-speed.md); "
             "0 = backend.early_exit_threshold, each row then bit for bit its spot's run alone" },
    { .path = "output.per_spot_precision", .type = PT_ENUM, AT(per_spot_precision),
      .default_value = "uint16", .choices = "uint16|float32", .units = "",
      .doc = "how the per-spot values are stored: uint16 = 16-bit integers times a scale per "
             "row (the row's peak / 65535), each value within half that scale (7.6e-6 of the "
             "row's peak) of its float32 value; float32 = the values as computed, bit for bit "
             "(the matrix about 3.6 times larger on disk)" },
    { .path = "output.let", .type = PT_BOOL, AT(let), .default_value = "false", .units = "",
      .doc = "also score the primary protons' linear energy transfer per cell: dose-averaged "
             "and track-averaged LET in keV/um (/let; docs/physics.md, \"LET\")" },
    { .path = "output.per_spot_let", .type = PT_BOOL, AT(per_spot_let), .default_value = "false",
      .units = "",
      .doc = "with output.per_spot_dose and output.let: each spot's LETd times its dose, "
             "compressed sparse rows beside /dose/per_spot (/let/per_spot_let_dose)" },
    { .path = "output.dose_to_water", .type = PT_BOOL, AT(dose_to_water),
      .default_value = "false", .units = "",
      .doc = "also write the dose to water (/dose_to_water): each cell's dose to medium times "
             "the water-to-medium mass stopping-power ratio over the local spectrum; /dose stays "
             "the dose to medium" },

    /* ---- scenarios (robust planning, docs/planning.md) ---- */
    /* -50 < r < 100: a density at most doubles or halves. Real range
     * uncertainties are a few percent; beyond a factor of two the scenario is
     * no longer a perturbation of the plan but another plan, and r <= -100
     * would make densities infinite or negative. */
    { .path = "scenarios.range_error_percent", .type = PT_REAL_LIST,
      LIST_AT(scenario_range_percent), .default_value = "[]", .min = -50, .min_exclusive = 1,
      .max = 100, .max_exclusive = 1, .units = "%",
      .doc = "range errors: +r makes the beam's range r % longer by dividing every density "
             "(background, shapes, map, CT) by 1 + r/100; one scenario each (see combine)" },
    { .path = "scenarios.shift_mm", .type = PT_REAL_LIST, LIST_AT(scenario_shift_mm),
      .default_value = "[]", NO_MIN, NO_MAX, .units = "mm",
      .doc = "setup errors: +s moves the beam (every spot) by +s mm in x, i.e. the patient "
             "by -s; one scenario each (see combine)" },
    { .path = "scenarios.combine", .type = PT_ENUM, AT(scenario_combine),
      .default_value = "separate", .choices = "separate|all|pairs", .units = "",
      .doc = "separate = the nominal, then each range error alone, then each shift alone; "
             "all = every (range, shift) pair including 0 for each, nominal first; pairs = "
             "the i-th range error with the i-th shift (equal lists), after the nominal" },
};
/* clang-format on */

const size_t plan_key_count = sizeof plan_keys / sizeof plan_keys[0];

#define SHAPE_AT(field) \
    .offset = offsetof(plan_shape, field), .size = sizeof(((plan_shape *)0)->field)
/* A data table, laid out by hand. */
/* clang-format off */
const plan_field plan_shape_fields[] = {
    { .name = "material", .type = PF_STRING, SHAPE_AT(material),
      .loc_offset = offsetof(plan_shape, material_at), .required = 1, .units = "",
      .doc = "a library material (water, air, lung, adipose, muscle, bone_compact, "
             "bone_cortical, pmma, polyethylene, aluminium, titanium, graphite) or the plan's "
             "material.name" },
    { .name = "z_mm", .type = PF_RANGE, SHAPE_AT(z_mm),
      .loc_offset = offsetof(plan_shape, z_at), .required = 1, .min = 0, NO_MAX, .units = "mm",
      .doc = "depth range [from, to), inside [0, nz * dz_mm]" },
    { .name = "x_mm", .type = PF_RANGE, SHAPE_AT(x_mm),
      .loc_offset = offsetof(plan_shape, x_at), .required = 0, NO_MIN, NO_MAX, .units = "mm",
      .doc = "lateral range [from, to), inside [-nx * dx_mm / 2, nx * dx_mm / 2]; left out: "
             "the whole width (a slab)" },
    { .name = "density_g_cm3", .type = PF_REAL, SHAPE_AT(density_g_cm3),
      .loc_offset = offsetof(plan_shape, density_at), .required = 0, .min = 0, .max = 25,
      .units = "g/cm^3",
      .doc = "mass density; left out: the material's nominal density (docs/geometry.md)" },
};
/* clang-format on */
const size_t plan_shape_field_count = sizeof plan_shape_fields / sizeof plan_shape_fields[0];
