/* The schema table: the one place where a plan key is declared.
 *
 * Adding a key means adding a struct plan field and one row here; validation,
 * schemas/plan.schema.json and config/plan-reference.yaml all follow from the
 * row (run `make schema` to regenerate the two shipped files; the plan
 * test fails until they match). */
#include "input/plan.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define AT(field) .offset = offsetof(plan, field), .size = sizeof(((plan *)0)->field)
#define LIST_AT(field) .offset = offsetof(plan, field), \
    .size = sizeof(((plan *)0)->field) / sizeof(((plan *)0)->field[0])
#define NO_MIN .min = -INFINITY
#define NO_MAX .max = INFINITY

/* The generic list code finds a list's count right after its array. */
_Static_assert(offsetof(plan, n_shapes) == offsetof(plan, shapes) + sizeof(((plan *)0)->shapes),
               "n_shapes must follow shapes");
_Static_assert(offsetof(plan, n_snapshot_steps) ==
                   offsetof(plan, snapshot_steps) + sizeof(((plan *)0)->snapshot_steps),
               "n_snapshot_steps must follow snapshot_steps");

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
    { .path = "grid.angle.n_bins", .type = PT_INT, AT(angle_bins), .default_value = "41",
      .min = 1, .max = 100000, .units = "",
      .doc = "number of direction bins (odd puts the window centre on a bin centre)" },
    { .path = "grid.angle.centre_deg", .type = PT_REAL, AT(angle_centre_deg),
      .default_value = "90", .min = 0, .max = 360, .max_exclusive = 1, .units = "deg",
      .doc = "centre of the angular window, from the +x axis (90 = +z, into depth)" },
    { .path = "grid.angle.half_width_deg", .type = PT_REAL, AT(angle_half_width_deg),
      .default_value = "20", .min = 0, .min_exclusive = 1, .max = 180, .units = "deg",
      .doc = "half width of the angular window (window mode only)" },

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
      .default_value = "1.0e-6", .min = 0, .min_exclusive = 1, .max = 1, .units = "",
      .doc = "with steps: auto, stop once the weight in flight is below this fraction "
             "of the initial weight" },
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
    { .path = "transport.nuclear", .type = PT_BOOL, AT(nuclear), .default_value = "true",
      .units = "",
      .doc = "non-elastic nuclear interactions: primaries removed at the ICRU 63 rate, "
             "a local share of their energy deposited, the rest tallied as NUCLEAR" },
    { .path = "transport.streaming_scheme", .type = PT_ENUM, AT(streaming_scheme),
      .default_value = "shift", .choices = "bilinear|shift", .units = "",
      .doc = "spatial streaming: bilinear = area weighting over up to four cells; "
             "shift = whole-cell shifts that accumulate the exact displacement" },
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
      .default_value = "auto", .min = 1, .max = 8, .units = "",
      .doc = "output.per_spot_dose: spots transported at once, each in a state of its own "
             "(auto = as many as the GPU's memory and backend.gpu_memory_fraction hold, up to 8; "
             "the CPU takes one, its operators use every core); the rows do not depend on it" },
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
             "(their sum is, per spot, in /dose/per_spot/dropped)" },
};

const size_t plan_key_count = sizeof plan_keys / sizeof plan_keys[0];

#define SHAPE_AT(field) .offset = offsetof(plan_shape, field), .size = sizeof(((plan_shape *)0)->field)
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
const size_t plan_shape_field_count = sizeof plan_shape_fields / sizeof plan_shape_fields[0];

/* Descriptions of the mappings that group the keys (schema and reference only). */
static const struct { const char *path, *doc; } sections[] = {
    { "grid", "phase-space grid: energy, direction and space axes" },
    { "grid.energy", "energy axis" },
    { "grid.angle", "direction axis (theta from the +x axis, 90 deg = +z, into depth)" },
    { "grid.space", "spatial grid: nz x nx cells, z = depth" },
    { "material", "the background medium (every cell no shape, map or CT claims) and its "
                  "physics table; also the energy grid's reference medium" },
    { "geometry", "what each cell is made of: a map or a CT image, then shapes on top "
                  "(docs/geometry.md); left out, every cell is the material: above" },
    { "geometry.ct", "a CT image and its calibration (HU -> density and material)" },
    { "beam", "the incident proton beam" },
    { "transport", "stepping and the operators" },
    { "backend", "where and how the steps run; the results do not depend on these" },
    { "output", "result file, snapshots and step log" },
};

/* Example values for required keys: together they make a small valid run, a
 * 100 MeV pencil beam in water, so the reference plan runs as written. */
static const struct { const char *path, *value; } examples[] = {
    { "grid.energy.n_bins", "200" },
    { "grid.energy.E_max_MeV", "100" },
    { "grid.space.nx", "81" },
    { "grid.space.nz", "170" },
    { "grid.space.dx_mm", "0.5" },
    { "grid.space.dz_mm", "0.5" },
    { "beam.energy_MeV", "100" },
    { "transport.step_mm", "0.5" },
    { "output.file", "plan-reference.h5" },
    { "geometry.map_file", "phantom_map.h5" },
    { "geometry.ct.file", "ct_phantom.h5" },
    { "geometry.ct.calibration", "ct_schneider2000.csv" },
};

static const char *section_doc(const char *path, size_t len)
{
    for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++)
        if (strlen(sections[i].path) == len && !strncmp(sections[i].path, path, len))
            return sections[i].doc;
    return "";
}

static const char *example_of(const plan_key *k)
{
    for (size_t i = 0; i < sizeof examples / sizeof examples[0]; i++)
        if (!strcmp(examples[i].path, k->path))
            return examples[i].value;
    return NULL;
}

/* ---- walking the key paths as a tree ----
 * The writers emit nested mappings, while the table is flat; a child of a section
 * is the next dotted component of some key under it, in table order. */

typedef struct child {
    const char *name;   /* points into a key path */
    size_t len;
    int key;            /* index of the leaf key, or -1 for a sub-section */
} child;

static size_t children_of(const char *prefix, size_t plen, child *out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < plan_key_count; i++) {
        const char *path = plan_keys[i].path;
        if (plen && (strncmp(path, prefix, plen) || path[plen] != '.'))
            continue;
        const char *name = path + (plen ? plen + 1 : 0);
        const char *dot = strchr(name, '.');
        size_t len = dot ? (size_t)(dot - name) : strlen(name);
        size_t j;
        for (j = 0; j < n; j++)
            if (out[j].len == len && !strncmp(out[j].name, name, len))
                break;
        if (j < n || n == max)
            continue;
        out[n++] = (child){ name, len, dot ? -1 : (int)i };
    }
    return n;
}

/* A section must appear when anything under it is required. */
static int section_required(const char *prefix, size_t plen)
{
    for (size_t i = 0; i < plan_key_count; i++)
        if (!plan_keys[i].default_value && !strncmp(plan_keys[i].path, prefix, plen) &&
            plan_keys[i].path[plen] == '.')
            return 1;
    return 0;
}

static void indent(FILE *f, int level)
{
    for (int i = 0; i < level; i++)
        fputs("  ", f);
}

/* ---- JSON Schema ---- */

static void json_number(FILE *f, double v)
{
    char buf[40];
    plan_format_real(v, buf, sizeof buf);
    fputs(buf, f);
}

static void json_bounds(FILE *f, const plan_key *k, int level)
{
    if (isfinite(k->min)) {
        indent(f, level);
        fputs(k->min_exclusive ? "\"exclusiveMinimum\": " : "\"minimum\": ", f);
        json_number(f, k->min);
        fputs(",\n", f);
    }
    if (isfinite(k->max)) {
        indent(f, level);
        fputs(k->max_exclusive ? "\"exclusiveMaximum\": " : "\"maximum\": ", f);
        json_number(f, k->max);
        fputs(",\n", f);
    }
}

static void json_enum(FILE *f, const char *choices)
{
    fputs("[", f);
    for (const char *s = choices; *s;) {
        size_t len = strcspn(s, "|");
        fprintf(f, "%s\"%.*s\"", s == choices ? "" : ", ", (int)len, s);
        s += len;
        if (*s == '|')
            s++;
    }
    fputs("]", f);
}

/* geometry.shapes: an array of objects whose properties are plan_shape_fields[]. */
static void json_shape_items(FILE *f, const plan_key *k, int level)
{
    indent(f, level);
    fputs("\"type\": \"array\",\n", f);
    indent(f, level);
    fprintf(f, "\"maxItems\": %zu,\n", k->size);
    indent(f, level);
    fputs("\"items\": {\n", f);
    indent(f, level + 1);
    fputs("\"type\": \"object\",\n", f);
    indent(f, level + 1);
    fputs("\"additionalProperties\": false,\n", f);
    indent(f, level + 1);
    fputs("\"required\": [", f);
    int first = 1;
    for (size_t i = 0; i < plan_shape_field_count; i++)
        if (plan_shape_fields[i].required) {
            fprintf(f, "%s\"%s\"", first ? "" : ", ", plan_shape_fields[i].name);
            first = 0;
        }
    fputs("],\n", f);
    indent(f, level + 1);
    fputs("\"properties\": {\n", f);
    for (size_t i = 0; i < plan_shape_field_count; i++) {
        const plan_field *fd = &plan_shape_fields[i];
        char desc[1024];
        if (fd->units[0])
            snprintf(desc, sizeof desc, "%s; in %s", fd->doc, fd->units);
        else
            snprintf(desc, sizeof desc, "%s", fd->doc);
        indent(f, level + 2);
        fprintf(f, "\"%s\": {\n", fd->name);
        indent(f, level + 3);
        fputs("\"description\": ", f);
        plan_write_json_string(f, desc);
        fputs(",\n", f);
        indent(f, level + 3);
        if (fd->type == PF_STRING) {
            fputs("\"type\": \"string\",\n", f);
            indent(f, level + 3);
            fprintf(f, "\"minLength\": 1,\n");
            indent(f, level + 3);
            fprintf(f, "\"maxLength\": %zu\n", fd->size - 1);
        } else if (fd->type == PF_REAL) {
            fputs("\"type\": \"number\",\n", f);
            indent(f, level + 3);
            fputs("\"exclusiveMinimum\": ", f);
            json_number(f, fd->min);
            fputs(",\n", f);
            indent(f, level + 3);
            fputs("\"maximum\": ", f);
            json_number(f, fd->max);
            fputc('\n', f);
        } else {
            fputs("\"type\": \"array\",\n", f);
            indent(f, level + 3);
            fputs("\"items\": { \"type\": \"number\" },\n", f);
            indent(f, level + 3);
            fputs("\"minItems\": 2,\n", f);
            indent(f, level + 3);
            fputs("\"maxItems\": 2\n", f);
        }
        indent(f, level + 2);
        fputs(i + 1 < plan_shape_field_count ? "},\n" : "}\n", f);
    }
    indent(f, level + 1);
    fputs("}\n", f);
    indent(f, level);
    fputs("},\n", f);
}

static void json_key(FILE *f, const plan_key *k, const plan *defaults, int level)
{
    char desc[1024];
    if (k->units[0])
        snprintf(desc, sizeof desc, "%s; in %s", k->doc, k->units);
    else
        snprintf(desc, sizeof desc, "%s", k->doc);
    indent(f, level);
    fputs("\"description\": ", f);
    plan_write_json_string(f, desc);
    fputs(",\n", f);

    switch (k->type) {
    case PT_BOOL:
        indent(f, level);
        fputs("\"type\": \"boolean\",\n", f);
        break;
    case PT_INT:
    case PT_REAL:
        indent(f, level);
        fprintf(f, "\"type\": \"%s\",\n", k->type == PT_INT ? "integer" : "number");
        json_bounds(f, k, level);
        break;
    case PT_STRING:
        indent(f, level);
        fprintf(f, "\"type\": \"string\",\n");
        indent(f, level);
        fprintf(f, "\"minLength\": 1,\n");
        indent(f, level);
        fprintf(f, "\"maxLength\": %zu,\n", k->size - 1);
        break;
    case PT_ENUM:
        indent(f, level);
        fputs("\"enum\": ", f);
        json_enum(f, k->choices);
        fputs(",\n", f);
        break;
    case PT_INT_OR_AUTO:
        indent(f, level);
        fputs("\"anyOf\": [\n", f);
        indent(f, level + 1);
        fputs("{\n", f);
        indent(f, level + 2);
        fputs("\"type\": \"integer\",\n", f);
        json_bounds(f, k, level + 2);
        indent(f, level + 2);
        fputs("\"description\": \"an explicit value instead of auto\"\n", f);
        indent(f, level + 1);
        fputs("},\n", f);
        indent(f, level + 1);
        fputs("{ \"const\": \"auto\" }\n", f);
        indent(f, level);
        fputs("],\n", f);
        break;
    case PT_INT_LIST:
        indent(f, level);
        fputs("\"type\": \"array\",\n", f);
        indent(f, level);
        fputs("\"items\": {\n", f);
        indent(f, level + 1);
        fputs("\"type\": \"integer\",\n", f);
        json_bounds(f, k, level + 1);
        indent(f, level + 1);
        fputs("\"description\": \"a step number\"\n", f);
        indent(f, level);
        fputs("},\n", f);
        indent(f, level);
        fprintf(f, "\"maxItems\": %zu,\n", k->size);
        break;
    case PT_SHAPE_LIST:
        json_shape_items(f, k, level);
        break;
    case PT_OP_LIST:
        indent(f, level);
        fputs("\"type\": \"array\",\n", f);
        indent(f, level);
        fputs("\"items\": { \"enum\": ", f);
        json_enum(f, k->choices);
        fputs(" },\n", f);
        indent(f, level);
        fprintf(f, "\"minItems\": %zu,\n", k->size);
        indent(f, level);
        fprintf(f, "\"maxItems\": %zu,\n", k->size);
        indent(f, level);
        fputs("\"uniqueItems\": true,\n", f);
        break;
    }

    indent(f, level);
    if (k->default_value && k->default_value[0]) {
        fputs("\"default\": ", f);
        plan_write_value(f, defaults, k, 1);
    } else {
        /* Required and conditional keys: the reference plan's value as an example. */
        const char *ex = example_of(k);
        fputs("\"examples\": [", f);
        if (ex && (k->type == PT_STRING || k->type == PT_ENUM))
            plan_write_json_string(f, ex);
        else if (ex)
            fputs(ex, f);
        fputs("]", f);
    }
    fputc('\n', f);
}

static void json_section(FILE *f, const char *prefix, size_t plen, const plan *defaults,
                         int level)
{
    child kids[64];
    size_t n = children_of(prefix, plen, kids, 64);

    indent(f, level);
    fputs("\"type\": \"object\",\n", f);
    indent(f, level);
    fputs("\"additionalProperties\": false,\n", f);
    int first = 1;
    for (size_t i = 0; i < n; i++) {
        const char *path = kids[i].name - (plen ? plen + 1 : 0);
        size_t clen = (size_t)(kids[i].name + kids[i].len - path);
        int req = kids[i].key >= 0 ? plan_keys[kids[i].key].default_value == NULL
                                   : section_required(path, clen);
        if (req) {
            if (first) {
                indent(f, level);
                fputs("\"required\": [", f);
            }
            fprintf(f, "%s\"%.*s\"", first ? "" : ", ", (int)kids[i].len, kids[i].name);
            first = 0;
        }
    }
    if (!first)
        fputs("],\n", f);
    if (plen == strlen("grid.energy") && !strncmp(prefix, "grid.energy", plen)) {
        /* The one rule that ties two keys together and that JSON Schema can say:
         * n_bins goes with a uniform grid and only with it (kind defaults to range). */
        indent(f, level);
        fputs("\"if\": { \"properties\": { \"kind\": { \"const\": \"uniform\" } }, "
              "\"required\": [\"kind\"] },\n", f);
        indent(f, level);
        fputs("\"then\": { \"required\": [\"n_bins\"] },\n", f);
        indent(f, level);
        fputs("\"else\": { \"not\": { \"required\": [\"n_bins\"] } },\n", f);
    }
    indent(f, level);
    fputs("\"properties\": {\n", f);
    for (size_t i = 0; i < n; i++) {
        indent(f, level + 1);
        fprintf(f, "\"%.*s\": {\n", (int)kids[i].len, kids[i].name);
        if (kids[i].key >= 0) {
            json_key(f, &plan_keys[kids[i].key], defaults, level + 2);
        } else {
            const char *path = kids[i].name - (plen ? plen + 1 : 0);
            size_t clen = (size_t)(kids[i].name + kids[i].len - path);
            indent(f, level + 2);
            fputs("\"description\": ", f);
            plan_write_json_string(f, section_doc(path, clen));
            fputs(",\n", f);
            json_section(f, path, clen, defaults, level + 2);
        }
        indent(f, level + 1);
        fputs(i + 1 < n ? "},\n" : "}\n", f);
    }
    indent(f, level);
    fputs("}\n", f);
}

void plan_write_json_schema(FILE *f)
{
    plan defaults = {0};
    smx_error err = {0};
    plan_set_defaults(&defaults, &err);

    fputs("{\n", f);
    fputs("  \"$schema\": \"https://json-schema.org/draft/2020-12/schema\",\n", f);
    fputs("  \"title\": \"smx2d-sim run plan\",\n", f);
    fputs("  \"description\": \"One YAML file describes one run. Generated from the schema "
          "table in src/input/plan_schema.c by `smx2d-sim --print-plan-schema` (make schema); "
          "do not edit by hand. Cross-field rules (E_cutoff >= E_min, the beam inside the "
          "grid, ...) are checked by smx2d-sim itself, which also accepts a key written as "
          "one dotted path (grid.space.nx: 81), the form of its resolved plan.\",\n", f);
    json_section(f, "", 0, &defaults, 1);
    fputs("}\n", f);
    plan_free(&defaults);
}

/* ---- reference plan ---- */

/* Comment lines stay within 88 columns so the reference reads well in an editor. */
static void comment(FILE *f, int level, const char *text)
{
    const int width = 88 - 2 * level - 2;
    while (*text) {
        int len = (int)strlen(text);
        if (len > width) {
            int cut = width;
            while (cut > 0 && text[cut] != ' ')
                cut--;
            len = cut > 0 ? cut : width;
        }
        indent(f, level);
        fprintf(f, "# %.*s\n", len, text);
        text += len;
        while (*text == ' ')
            text++;
    }
}

static void reference_key(FILE *f, const plan_key *k, size_t name_off, int level)
{
    char expected[512], line[700];
    plan_key_expected(k, expected, sizeof expected);
    comment(f, level, k->doc);
    if (!k->default_value)
        snprintf(line, sizeof line, "%s; required (example value)", expected);
    else if (!k->default_value[0])
        snprintf(line, sizeof line, "%s; no default", expected);
    else
        snprintf(line, sizeof line, "%s; default %s", expected, k->default_value);
    comment(f, level, line);
    indent(f, level);
    if (!k->default_value)
        fprintf(f, "%s: %s\n", k->path + name_off, example_of(k));
    else if (!k->default_value[0])
        fprintf(f, "# %s: %s\n", k->path + name_off, example_of(k));
    else
        fprintf(f, "%s: %s\n", k->path + name_off, k->default_value);
    if (k->type == PT_SHAPE_LIST) {
        comment(f, level, "each shape:");
        for (size_t i = 0; i < plan_shape_field_count; i++) {
            const plan_field *fd = &plan_shape_fields[i];
            char line2[700];
            snprintf(line2, sizeof line2, "- %s (%s%s%s): %s", fd->name, fd->required ? "required" : "optional",
                     fd->units[0] ? ", " : "", fd->units, fd->doc);
            comment(f, level, line2);
        }
        comment(f, level, "for example:");
        comment(f, level, "shapes:");
        comment(f, level, "  - {material: bone_compact, z_mm: [20, 40]}");
        comment(f, level, "  - {material: lung, z_mm: [60, 80], x_mm: [-10, 10], density_g_cm3: 0.26}");
    }
}

static void reference_section(FILE *f, const char *prefix, size_t plen, int level)
{
    child kids[64];
    size_t n = children_of(prefix, plen, kids, 64);
    for (size_t i = 0; i < n; i++) {
        size_t off = plen ? plen + 1 : 0;
        if (i > 0)
            fputc('\n', f);
        if (kids[i].key >= 0) {
            reference_key(f, &plan_keys[kids[i].key], off, level);
            continue;
        }
        const char *path = kids[i].name - off;
        size_t clen = (size_t)(kids[i].name + kids[i].len - path);
        comment(f, level, section_doc(path, clen));
        indent(f, level);
        fprintf(f, "%.*s:\n", (int)kids[i].len, kids[i].name);
        reference_section(f, path, clen, level + 1);
    }
}

void plan_write_reference(FILE *f)
{
    fputs("# smx2d-sim reference plan: every key, with its default value.\n"
          "#\n"
          "# Keys marked \"required\" have no default; the values given for them make a\n"
          "# small valid run (a 100 MeV pencil beam in water). Any other key may be left\n"
          "# out. A key may also be written as one dotted path (grid.space.nx: 81), and\n"
          "# `smx2d-sim PLAN --set key.path=value` overrides a key on the command line.\n"
          "#\n"
          "# Generated from src/input/plan_schema.c by `smx2d-sim --print-reference-plan`\n"
          "# (make schema); do not edit by hand. JSON Schema: schemas/plan.schema.json.\n"
          "\n", f);
    reference_section(f, "", 0, 0);
}
