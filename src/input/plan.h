/* The run plan: one YAML file describes one run.
 *
 * Every key lives in exactly one place, the schema table plan_keys[] in
 * plan_schema.c. That table drives validation (plan_*.c), the JSON Schema
 * (schemas/plan.schema.json) and the documented reference plan
 * (config/plan-reference.yaml); a test fails if the shipped files drift from it. */
#ifndef SMX_PLAN_H
#define SMX_PLAN_H

#include <stddef.h>
#include <stdio.h>

#include "base/error.h"
#include "base/plan_choices.h"

#define PLAN_PATH_MAX 4096
#define PLAN_NAME_MAX 64
#define PLAN_MAX_SNAPSHOTS 256
#define PLAN_MAX_SHAPES 64
#define PLAN_MAX_SCENARIO_VALUES 32 /* per list of scenarios.*: up to 33 x 33 combined */

#define PLAN_ANGLE_BINS 1 /* grid.angle.n_bins left out */
#define PLAN_ANGLE_WIDTH 2 /* grid.angle.half_width_deg left out (window mode) */

/* Where a value came from, for error messages naming file:line:col. */
typedef struct plan_loc {
    int line, col; /* 1-based; 0 = not given (default used) */
    int from_cli; /* 1 = set by --set on the command line */
    int derived; /* 1 = left out, and worked out from other keys (grid.energy.E_max_MeV) */
    const char *option; /* from_cli by an option standing for the key ("--output"); NULL: --set */
} plan_loc;

/* One shape of geometry.shapes: an axis-aligned rectangle of one material
 * (docs/geometry.md). A cell belongs to it when the cell's centre (x, z)
 * satisfies x_mm[0] <= x < x_mm[1] and z_mm[0] <= z < z_mm[1]. */
typedef struct plan_shape {
    char material[PLAN_NAME_MAX]; /* a library key, or the plan's material.name */
    double z_mm[2]; /* depth range, z = 0 the entrance plane */
    double x_mm[2]; /* lateral range, x = 0 the domain's centre */
    int has_x; /* 0: x_mm left out, the whole width */
    double density_g_cm3; /* 0: left out, the material's nominal density */
    /* Where the shape and each of its fields were written (line 0: not given). */
    plan_loc at, material_at, z_at, x_at, density_at;
} plan_shape;

typedef struct plan {
    /* grid.energy */
    int energy_kind; /* enum energy_grid_kind */
    int energy_bins; /* uniform only; range grids derive it from step_mm */
    double E_min_MeV, E_max_MeV, E_cutoff_MeV;
    /* grid.angle */
    int angle_mode; /* enum angle_mode */
    int angle_bins;
    double angle_centre_deg, angle_half_width_deg;
    int angle_spacing; /* enum angle_spacing */
    /* grid.space */
    int nx, nz;
    double dx_mm, dz_mm;
    double slab_thickness_mm; /* out-of-plane thickness used to turn MeV into Gy */
    /* material */
    char material_name[PLAN_NAME_MAX];
    char table_file[PLAN_PATH_MAX]; /* as written in the plan */
    double density_g_cm3;
    /* geometry */
    plan_shape shapes[PLAN_MAX_SHAPES]; /* later shapes win where they overlap */
    int n_shapes;
    char map_file[PLAN_PATH_MAX]; /* geometry.map_file as written; "" = none */
    char ct_file[PLAN_PATH_MAX]; /* geometry.ct.file as written; "" = none */
    char ct_calibration[PLAN_PATH_MAX]; /* geometry.ct.calibration as written */
    /* beam */
    double beam_energy_MeV, beam_energy_sigma_MeV;
    double beam_direction_deg;
    double beam_x_mm, beam_sigma_x_mm; /* sigma 0 = pencil */
    double beam_divergence_mrad; /* angular sigma of the projected angle, 0 = parallel */
    double beam_correlation; /* x-theta correlation of the entrance phase space */
    double beam_weight;
    char spots_file[PLAN_PATH_MAX]; /* beam.spots_file as written; "" = one spot, the beam.* keys */
    /* transport */
    double step_mm;
    int steps; /* 0 = auto */
    double auto_stop_weight; /* auto: stop when remaining weight < this x initial */
    int max_steps;
    int scattering; /* 0 switches A_theta off (numerical-width studies) */
    int scattering_power; /* enum scattering_power_model */
    int straggling; /* energy-loss straggling in A_E */
    int out_of_plane_detour; /* the path across the plane in the energy loss (physics/out_of_plane.h) */
    int nuclear; /* enum nuclear_model: non-elastic interactions of primaries */
    int streaming_scheme; /* enum streaming_scheme */
    int window_mode; /* enum window_mode (transport/window.h) */
    int operator_order[PLAN_ORDER_MAX]; /* enum op_id, applied left to right */
    /* backend */
    int device; /* enum device_kind */
    int threads; /* OpenMP threads, 0 = all cores */
    int variant_energy, variant_angular, variant_stream;
    int cuda_graph;
    int fused; /* CUDA: fuse operators into fewer passes where possible */
    int per_spot_lanes; /* 0 = auto */
    double gpu_memory_fraction;
    double gpu_memory_bytes; /* 0 = no absolute cap */
    double host_memory_bytes; /* 0 = physical memory */
    int early_exit; /* enum early_exit_mode */
    double early_exit_threshold;
    /* output */
    char output_file[PLAN_PATH_MAX];
    int overwrite;
    int beyond_grid; /* enum beyond_grid_mode */
    int snapshot_every; /* 0 = none */
    int snapshot_steps[PLAN_MAX_SNAPSHOTS];
    int n_snapshot_steps;
    int snapshot_final;
    int log_every; /* 0 = automatic rate */
    int keep_partial;
    int per_spot_dose; /* also transport each spot alone and store its dose */
    double per_spot_threshold; /* relative cut of the stored per-spot values */
    double per_spot_early_exit_ratio; /* a spot's early exit: this x per_spot_threshold */
    int per_spot_precision; /* enum per_spot_precision: the stored values' type */
    int let; /* score LETd and LETt per cell (the dose's spectral planes, grid.h) */
    int per_spot_let; /* each spot's LETd x dose row beside its dose row */
    int dose_to_water; /* also the dose to water, from the local water/medium ratio */
    /* scenarios (robust planning; docs/planning.md) */
    double scenario_range_percent[PLAN_MAX_SCENARIO_VALUES]; /* +r: range r % longer */
    int n_scenario_range_percent;
    double scenario_shift_mm[PLAN_MAX_SCENARIO_VALUES]; /* +s: the beam moves +s mm in x */
    int n_scenario_shift_mm;
    int scenario_combine; /* enum scenario_combine */

    /* Not keys: facts about where the plan came from. */
    char path[PLAN_PATH_MAX]; /* plan file as given */
    /* PLAN_ANGLE_*: what the plan left out of grid.angle, worked out from the
     * beam once its material's table is loaded (physics/angle_grid.h); until
     * then provisional values that pass the plan's checks. */
    int angle_auto;
    char dir[PLAN_PATH_MAX]; /* its directory, for relative table paths */
    char table_path[PLAN_PATH_MAX]; /* table_file resolved against dir */
    char spots_path[PLAN_PATH_MAX]; /* spots_file resolved the same way */
    char map_path[PLAN_PATH_MAX]; /* geometry.map_file resolved the same way */
    char ct_path[PLAN_PATH_MAX]; /* geometry.ct.file resolved */
    char ct_calibration_path[PLAN_PATH_MAX]; /* geometry.ct.calibration resolved */
    struct plan_spot *spots; /* the spot file's spots (owned), n_spots of them */
    char *spots_text; /* the spot file's bytes as read (owned; provenance) */
    size_t spots_len;
    int n_spots;
    char *yaml_text; /* verbatim file contents (owned) */
    size_t yaml_len;
    plan_loc *loc; /* one per plan_keys[] entry (owned) */
    /* The scenario this plan was turned into (plan_apply_scenario): 0 the
     * nominal. The medium map's densities are scaled by run/scenario.c. */
    int scenario_index;
    /* grid.angle.spacing: beam: theta_c of the direction bins' widths, worked
     * out from the beam at set-up (physics/angle_grid.h) like the grid.angle
     * keys a plan leaves out; 0 until then, and with uniform spacing. */
    double angle_theta_c_deg;
} plan;

/* ---- the schema table ---- */
enum plan_type {
    PT_BOOL,
    PT_INT,
    PT_REAL,
    PT_STRING,
    PT_ENUM,
    PT_INT_LIST,
    PT_INT_OR_AUTO,
    PT_OP_LIST,
    PT_SHAPE_LIST, /* a list of mappings, each one plan_shape (fields: plan_shape_fields[]) */
    PT_REAL_LIST /* a list of numbers, each checked against min and max */
};

typedef struct plan_key {
    const char *path; /* dotted key path, e.g. "grid.energy.E_min_MeV" */
    int type; /* enum plan_type */
    size_t offset; /* offsetof(plan, field) */
    size_t size; /* capacity for strings / lists */
    const char *default_value; /* YAML text of the default; NULL = required */
    double min, max; /* numeric range */
    int min_exclusive, max_exclusive;
    const char *choices; /* PT_ENUM: "a|b|c", stored as the index */
    const char *aliases; /* PT_ENUM: "old=new|...", older spellings read as a choice; NULL */
    const char *units; /* "" when dimensionless */
    const char *doc; /* one line, shown in the reference plan and schema */
} plan_key;
/* default_value "" marks a key that is optional but has no default: it stays 0
 * unless given, and a cross-field rule decides whether it is needed (n_bins of a
 * uniform energy grid). Lists (PT_INT_LIST, PT_REAL_LIST) keep their count in the
 * int right after the array; size is their capacity in elements, for strings in bytes. */

extern const plan_key plan_keys[];
extern const size_t plan_key_count;

/* The fields of one geometry.shapes entry, declared once like the keys: the
 * reader, the JSON Schema and the reference plan follow this table. */
enum plan_field_type { PF_STRING, PF_REAL, PF_RANGE /* [lo, hi], lo < hi */ };
typedef struct plan_field {
    const char *name;
    int type; /* enum plan_field_type */
    size_t offset, size; /* in plan_shape; size: capacity of a string */
    size_t loc_offset; /* its plan_loc in plan_shape */
    int required;
    double min, max; /* numeric range (PF_REAL: min exclusive) */
    const char *units;
    const char *doc;
} plan_field;
extern const plan_field plan_shape_fields[];
extern const size_t plan_shape_field_count;

/* One spot of a treatment field: a line of beam.spots_file, or the beam.*
 * keys (line 0). Columns of the file carry the keys' names. */
typedef struct plan_spot {
    double energy_MeV, energy_sigma_MeV, direction_deg, x_mm, sigma_x_mm, divergence_mrad,
        correlation, weight;
    int line; /* in the spot file; 0: the beam.* keys */
    int col[8]; /* the file's column of each value above, in that order (0: the beam.* default) */
} plan_spot;

/* The field's spots (plan_spot_count, plan_spot_at) and the other accessors
 * that the layers above read the plan through: input/plan_access.h. */
/* A spot's energy, position, direction and correlation against the plan's
 * grid: the reader's rules, also for callers that change a plan afterwards. */
int plan_spot_check(const plan *p, const plan_spot *s, smx_error *err);
/* An error about one value of a spot: at beam.COLUMN in the plan for the
 * beam.* spot, at the spot's line of the spot file otherwise. */
int plan_spot_fail(const plan *p, const plan_spot *s, const char *column, smx_error *err,
                   const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* The scenarios of a robust plan (scenarios.*, plan_scenarios.c): scenario 0
 * is the nominal plan; 1 when the plan has none. */
typedef struct plan_scenario {
    double range_error_percent; /* +r: every density divided by 1 + r/100 */
    double shift_mm; /* +s: every spot (and beam.x_mm) moved by +s mm in x */
} plan_scenario;
int plan_scenario_count(const plan *p);
plan_scenario plan_scenario_at(const plan *p, int i);
/* Turns the loaded nominal plan p into its scenario i (0: unchanged): the
 * background's and the shapes' densities divided by 1 + r/100 (the loaded
 * medium map's by medium_map_scaled), beam.x_mm and every spot's x_mm
 * moved by s. The reader has checked that every scenario keeps its spots in
 * the domain. */
void plan_apply_scenario(plan *p, int i);
/* dst: a copy of the loaded plan src (its own buffers: plan_free it) turned
 * into scenario i (plan_apply_scenario; 0 the nominal), without reading the
 * plan's file again. */
int plan_scenario_copy(plan *dst, const plan *src, int i, smx_error *err);

/* Index of a key path in plan_keys[], or -1. */
int plan_key_index(const char *path);

/* ---- reading ---- */
/* Reads, parses and validates a plan file. overrides[] are "key.path=value"
 * strings from --set, or an option that stands for a key written
 * "--output=FILE", "--device=auto|cpu|cuda", "--threads=N" or "--overwrite"
 * (messages then name the option as typed), applied after the file. On error returns SMX_EXIT_INPUT
 * with a message "FILE:LINE:COL: key.path: ..." in err. p is overwritten on
 * entry; after an error nothing is left allocated (plan_free is still safe).
 * A key may also be written as one dotted path ("grid.space.nx: 81"), which is
 * how plan_write_resolved() writes it, so resolved output loads back. */
int plan_load(plan *p, const char *path, const char *const *overrides, int n_overrides,
              smx_error *err);
/* plan_load of YAML text held in memory (the benchmark's plans, the tests'):
 * `name` stands for the file in messages; the plan has no directory, so its
 * relative data files are looked up in $SMX2D_DATA_DIR and the installed data. */
int plan_load_text(plan *p, const char *name, const char *text, const char *const *overrides,
                   int n_overrides, smx_error *err);
void plan_free(plan *p);

/* A data file named by key `key` as written (`name`): absolute, next to the
 * plan, in $SMX2D_DATA_DIR, or in the installed data directory; the path
 * found goes to out (PLAN_PATH_MAX bytes). Errors name the key's place in
 * the plan (key NULL: the plan file only). Also used for the tables of the
 * material library and the geometry's files (plan_data_file.c). */
int plan_resolve_data_file(const plan *p, const char *key, const char *name, char *out,
                           smx_error *err);

/* Error at the location of key `path` in p; the message reads
 *   "FILE:LINE:COL: PATH: <fmt>"        when the value came from the plan file,
 *   "--set PATH=VALUE: PATH: <fmt>"     when it came from --set,
 *   "FILE: PATH: <fmt>"                 when the default was used,
 * so fmt starts with the problem itself, e.g. "%g mm is too long; expected ...".
 * Returns SMX_EXIT_INPUT. */
int plan_fail_at(const plan *p, smx_error *err, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* An error err already holds (from a reader or a table builder that knows no
 * plan), put at the plan key `path` as plan_fail_at puts its own. Only input
 * errors are moved (others, out of memory say, are not the key's fault).
 * Returns rc. */
int plan_blame_key(const plan *p, const char *path, int rc, smx_error *err);
/* Words an error a lower layer put at a plan key (err->key, smx_fail_key /
 * smx_blame_key) as plan_fail_at would have: the key's file, line and column
 * or its --set, the key, then the message; "geometry.shapes[N].FIELD" as
 * plan_fail_at_shape, "beam.spots[N].COLUMN" (spot N of plan_spot_at) as
 * plan_spot_fail. The error keeps its code (a device error at a key, such as
 * backend.device, stays one); err->key is cleared.
 * Returns err->code. The layer that owns the plan calls it once, where the
 * chain of calls that could fail returns to it. */
int plan_word_error(const plan *p, smx_error *err);
/* The same for field `field` of geometry.shapes[i] ("geometry.shapes[1].material");
 * field NULL names the whole entry. */
int plan_fail_at_shape(const plan *p, smx_error *err, int i, const char *field, const char *fmt,
                       ...) __attribute__((format(printf, 5, 6)));

/* Writers driven by the schema table. */
void plan_write_json_schema(FILE *f);
void plan_write_reference(FILE *f);
/* The resolved values, one "key.path: value" line each (for output and --dry-run);
 * "  # default" marks defaults, "  # --set" overrides, and an optional key left
 * out is a comment line "# key.path: not set". */
void plan_write_resolved(FILE *f, const plan *p);
/* The same as a malloc'd string (NULL when out of memory). */
char *plan_resolved_text(const plan *p);

/* Name of choice `index` of an enum key (or of transport.operator_order), NULL if
 * there is none; e.g. plan_choice_name("backend.device", DEVICE_CUDA) = "cuda". */
const char *plan_choice_name(const char *path, int index);

/* ---- helpers shared by the reader (plan_*.c) and plan_schema.c ---- */
/* Sets every key that has a default (loc, when allocated, says default); required
 * keys and keys without a default stay 0. Fails only if the table is broken. */
int plan_set_defaults(plan *p, smx_error *err);
/* What a key accepts, with range and units, e.g. "a number in (0, 1000] MeV". */
void plan_key_expected(const plan_key *k, char *buf, size_t n);
/* The value of key k in p as YAML flow text (json = 0) or as JSON (json = 1). */
void plan_write_value(FILE *f, const plan *p, const plan_key *k, int json);
/* Shortest decimal text that reads back as exactly v: "0.9", "1000", "1e-06". */
/* Whether plan_load warns about grids that cost accuracy (a step other than
 * the row, a pencil direction off a bin centre); 1 unless a tool that loads
 * its own fixed plan (the benchmark harness) turns it off. */
extern int plan_warn_grid;
void plan_format_real(double v, char *buf, size_t n);
void plan_write_json_string(FILE *f, const char *s);

#endif
