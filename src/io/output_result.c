/* The end of the run: dose (MeV and Gy), tallies per step and cumulative,
 * timing, and the provenance as root attributes. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/output_internal.h"
#include "report/analysis.h"

int out_write_dose(output *o, const char *path, const char *spots_path, const output_run *run,
                   smx_error *err)
{
    const plan *p = run->p;
    const grid *g = run->g;
    const run_result *r = run->r;
    char where[128]; /* the dose_Gy dataset, for the messages */
    snprintf(where, sizeof where, "%s/dose_Gy", path);
    size_t cells = (size_t)(g->nz * g->nx);
    double slab = p->slab_thickness_mm, rho = g->density;
    if (!(slab > 0) || !(rho > 0) || !(g->dx > 0) || !(g->dz > 0))
        return smx_fail(err, SMX_EXIT_RUNTIME,
                        "%s: cannot convert dose to Gy: slab thickness %g mm, density %g "
                        "g/cm3, cell %g x %g mm must all be positive",
                        o->final_path, slab, rho, g->dx, g->dz);
    if (!r->dose_MeV)
        return smx_fail(err, SMX_EXIT_RUNTIME, "%s: the run result has no dose array",
                        o->final_path);
    double protons;
    double *gy = out_dose_gy(o, p, g, r->dose_MeV, &protons), *gy1 = gy + cells;
    if (!gy)
        return smx_fail(err, SMX_EXIT_RUNTIME, "%s: out of memory writing %s", o->final_path, path);

    hid_t grp = H5I_INVALID_HID, ds = H5I_INVALID_HID;
    int rc = out_open_group(o, path, &grp, err);
    const hsize_t nz = (hsize_t)g->nz, nx = (hsize_t)g->nx;
    if (!rc)
        rc = out_put_dataset(o,
                             &(dset){ .parent = grp,
                                      .parent_path = path,
                                      .name = "energy_deposit_MeV",
                                      .kind = V_F64,
                                      .rank = 2,
                                      .dims = { nz, nx },
                                      .data = r->dose_MeV,
                                      .units = "MeV",
                                      .description = "Energy deposited in each cell per unit "
                                                     "initial beam weight (per proton)",
                                      .axes = "z_centres_mm,x_centres_mm" },
                             NULL, err);
    if (!rc)
        rc = out_put_dataset(o,
                             &(dset){ .parent = grp,
                                      .parent_path = path,
                                      .name = "dose_Gy",
                                      .kind = V_F64,
                                      .rank = 2,
                                      .dims = { nz, nx },
                                      .data = gy,
                                      .units = "Gy",
                                      .description =
                                          "Absorbed dose of the beam's protons (attribute "
                                          "protons: beam.weight, or the spots' weights "
                                          "summed): dose_Gy_per_proton times protons",
                                      .axes = "z_centres_mm,x_centres_mm" },
                             &ds, err);
    if (!rc)
        rc = out_attr_f64(o, ds, where, "slab_thickness_mm", slab, err);
    /* With media the mass is each cell's own: no one density converts the
     * whole map, so the attribute is NaN and `density` says where they are. */
    const int per_cell = o->media && o->media->cell;
    if (!rc)
        rc = out_attr_f64(o, ds, where, "density_g_cm3", per_cell ? NAN : rho, err);
    if (!rc)
        rc = out_attr_str(o, ds, where, "density",
                          per_cell
                              ? "per cell: /geometry/density_g_cm3 (attribute density_g_cm3 is NaN)"
                              : "uniform: attribute density_g_cm3, the plan's material",
                          err);
    if (!rc)
        rc = out_attr_f64(o, ds, where, "protons", protons, err);
    rc = out_close_dataset(o, &ds, where, rc, err);
    if (!rc)
        rc = out_put_dataset(o,
                             &(dset){ .parent = grp,
                                      .parent_path = path,
                                      .name = "dose_Gy_per_proton",
                                      .kind = V_F64,
                                      .rank = 2,
                                      .dims = { nz, nx },
                                      .data = gy1,
                                      .units = "Gy",
                                      .description =
                                          "Absorbed dose per proton (per unit initial beam "
                                          "weight): energy_deposit_MeV over the mass of a dx "
                                          "x dz x slab_thickness_mm cell of its density "
                                          "(/geometry/density_g_cm3; density_g_cm3 where "
                                          "one material fills the grid)",
                                      .axes = "z_centres_mm,x_centres_mm" },
                             NULL, err);
    if (!rc)
        rc = out_attr_str(o, grp, path, "quantity", "dose to medium", err);
    if (!rc)
        rc = out_write_per_spot(o, spots_path, p, g, r, err);
    out_close_id(&grp, H5Gclose);
    free(gy);
    return rc;
}

/* Column-major copies of the per-step balance records, one array per dataset. */
typedef struct step_columns {
    double *w_ch, *e_ch; /* [n][CH_COUNT] */
    double *dep, *w_in, *w_out, *e_in, *e_out, *w_rel, *e_rel; /* [n] */
} step_columns;

static void free_columns(step_columns *c)
{
    free(c->w_ch);
    free(c->e_ch);
    free(c->dep);
    free(c->w_in);
    free(c->w_out);
    free(c->e_in);
    free(c->e_out);
    free(c->w_rel);
    free(c->e_rel);
}

static int fill_columns(step_columns *c, const run_result *r)
{
    /* At least one element so a 0-step run still gets non-NULL buffers. */
    size_t n = r->n_steps > 0 ? (size_t)r->n_steps : 1;
    memset(c, 0, sizeof *c);
    c->w_ch = calloc(n * CH_COUNT, sizeof(double));
    c->e_ch = calloc(n * CH_COUNT, sizeof(double));
    double **cols[] = { &c->dep, &c->w_in, &c->w_out, &c->e_in, &c->e_out, &c->w_rel, &c->e_rel };
    int ok = c->w_ch && c->e_ch;
    for (size_t k = 0; k < sizeof cols / sizeof cols[0]; k++)
        ok = (*cols[k] = calloc(n, sizeof(double))) != NULL && ok;
    if (!ok)
        return -1;
    for (int i = 0; i < r->n_steps; i++) {
        const step_balance *b = &r->steps[i];
        for (int ch = 0; ch < CH_COUNT; ch++) {
            c->w_ch[(size_t)i * CH_COUNT + ch] = b->t.weight[ch];
            c->e_ch[(size_t)i * CH_COUNT + ch] = b->t.energy[ch];
        }
        c->dep[i] = b->t.deposited;
        c->w_in[i] = b->weight_in;
        c->w_out[i] = b->weight_out;
        c->e_in[i] = b->energy_in;
        c->e_out[i] = b->energy_out;
        c->w_rel[i] = b->weight_rel_err;
        c->e_rel[i] = b->energy_rel_err;
    }
    return 0;
}

/* What /tallies' datasets hold, each by name: the per-step columns, the
 * run's step times and fronts, its cumulative figures and its initial
 * weight and energy. */
typedef struct tally_data {
    const double *w_ch, *e_ch, *dep, *w_in, *w_out, *e_in, *e_out, *w_rel, *e_rel;
    const double *step_ms, *front_depth_mm;
    const double *cum_weight, *cum_energy, *cum_deposited;
    const double *initial_weight, *initial_energy, *halo_released, *halo_deposited;
} tally_data;

/* A dataset's shape in /tallies. */
enum tally_shape {
    TALLY_STEP_CHANNEL, /* [n_steps][CH_COUNT] */
    TALLY_STEP, /* [n_steps] */
    TALLY_CHANNEL, /* [CH_COUNT] */
    TALLY_ONE /* one value */
};

/* One dataset of /tallies: its name, shape, values (a field of tally_data),
 * units and description. */
typedef struct tally_doc {
    const char *name;
    enum tally_shape shape;
    size_t data; /* offsetof(tally_data, FIELD) */
    const char *units, *description;
} tally_doc;

#define TALLY(field) offsetof(tally_data, field)
static const tally_doc tally_docs[] = {
    { "weight_per_step", TALLY_STEP_CHANNEL, TALLY(w_ch), "1",
      "Weight removed from psi in each step, per escape channel" },
    { "energy_per_step_MeV", TALLY_STEP_CHANNEL, TALLY(e_ch), "MeV",
      "Energy carried by the removed weight, per channel; "
      "energy_stopped is deposited locally and is also part of "
      "deposited_per_step_MeV" },
    { "deposited_per_step_MeV", TALLY_STEP, TALLY(dep), "MeV",
      "Energy deposited into the dose grid in each step" },
    { "weight_in", TALLY_STEP, TALLY(w_in), "1", "Sum of psi before each step" },
    { "weight_out", TALLY_STEP, TALLY(w_out), "1", "Sum of psi after each step" },
    { "energy_in_MeV", TALLY_STEP, TALLY(e_in), "MeV", "Sum of psi x E before each step" },
    { "energy_out_MeV", TALLY_STEP, TALLY(e_out), "MeV", "Sum of psi x E after each step" },
    { "weight_rel_err", TALLY_STEP, TALLY(w_rel), "1",
      "|weight_in - weight_out - sum of channel weights| / weight_in "
      "(0 when weight_in is 0)" },
    { "energy_rel_err", TALLY_STEP, TALLY(e_rel), "1",
      "|energy_in - energy_out - deposited - sum of channel energies "
      "except energy_stopped| / energy_in (0 when energy_in is 0)" },
    { "step_ms", TALLY_STEP, TALLY(step_ms), "ms", "Wall-clock time of each step" },
    { "front_depth_mm", TALLY_STEP, TALLY(front_depth_mm), "mm",
      "Deepest z centre holding weight after each step" },
    { "cumulative_weight", TALLY_CHANNEL, TALLY(cum_weight), "1",
      "Weight removed over the whole run, per channel" },
    { "cumulative_energy_MeV", TALLY_CHANNEL, TALLY(cum_energy), "MeV",
      "Energy removed over the whole run, per channel" },
    { "cumulative_deposited_MeV", TALLY_ONE, TALLY(cum_deposited), "MeV",
      "Energy deposited over the whole run" },
    { "initial_weight", TALLY_ONE, TALLY(initial_weight), "1", "Sum of psi after the source" },
    { "initial_energy_MeV", TALLY_ONE, TALLY(initial_energy), "MeV",
      "Sum of psi x E after the source" },
    { "halo_released_MeV", TALLY_ONE, TALLY(halo_released), "MeV",
      "transport.nuclear: halo: energy non-elastic events handed to secondary "
      "protons, per unit initial weight (part of NUCLEAR's energy); 0 otherwise" },
    { "halo_deposited_MeV", TALLY_ONE, TALLY(halo_deposited), "MeV",
      "Of it, what the halo kernel deposited on the grid (part of the dose), "
      "per unit initial weight" },
};
#undef TALLY
#define N_TALLY_DOCS (sizeof tally_docs / sizeof tally_docs[0])

/* The dataset doc d declares, its values in td, over n steps. */
static dset tally_dataset(const tally_doc *d, const tally_data *td, hsize_t n)
{
    dset s = { .name = d->name,
               .kind = V_F64,
               .data = *(const double *const *)((const char *)td + d->data),
               .units = d->units,
               .description = d->description };
    switch (d->shape) {
    case TALLY_STEP_CHANNEL:
        s.rank = 2, s.dims[0] = n, s.dims[1] = CH_COUNT;
        s.axes = "step,channel (see channel_names)";
        break;
    case TALLY_STEP:
        s.rank = 1, s.dims[0] = n, s.axes = "step";
        break;
    case TALLY_CHANNEL:
        s.rank = 1, s.dims[0] = CH_COUNT, s.axes = "channel";
        break;
    case TALLY_ONE:
        break;
    }
    return s;
}

/* "energy_stopped,nuclear,...": the channels' names, in order. */
static void channel_names(char *names, size_t cap)
{
    names[0] = '\0';
    for (int k = 0; k < CH_COUNT; k++) {
        strncat(names, k ? "," : "", cap - strlen(names) - 1);
        strncat(names, tally_channel_names[k], cap - strlen(names) - 1);
    }
}

static int write_tallies(output *o, const run_result *r, smx_error *err)
{
    step_columns c;
    if (r->n_steps < 0 || (r->n_steps > 0 && (!r->steps || !r->step_ms || !r->front_depth_mm)))
        return smx_fail(err, SMX_EXIT_RUNTIME,
                        "%s: run result with %d steps has no step "
                        "arrays",
                        o->final_path, r->n_steps);
    if (fill_columns(&c, r)) {
        free_columns(&c);
        return smx_fail(err, SMX_EXIT_RUNTIME, "%s: out of memory writing /tallies", o->final_path);
    }
    static const double none[1] = { 0.0 };
    const hsize_t n = (hsize_t)r->n_steps;
    const tally_data td = { .w_ch = c.w_ch,
                            .e_ch = c.e_ch,
                            .dep = c.dep,
                            .w_in = c.w_in,
                            .w_out = c.w_out,
                            .e_in = c.e_in,
                            .e_out = c.e_out,
                            .w_rel = c.w_rel,
                            .e_rel = c.e_rel,
                            .step_ms = n ? r->step_ms : none,
                            .front_depth_mm = n ? r->front_depth_mm : none,
                            .cum_weight = r->cumulative.weight,
                            .cum_energy = r->cumulative.energy,
                            .cum_deposited = &r->cumulative.deposited,
                            .initial_weight = &r->initial_weight,
                            .initial_energy = &r->initial_energy_MeV,
                            .halo_released = &r->halo_released_MeV,
                            .halo_deposited = &r->halo_deposited_MeV };
    dset list[N_TALLY_DOCS];
    for (size_t k = 0; k < N_TALLY_DOCS; k++)
        list[k] = tally_dataset(&tally_docs[k], &td, n);

    hid_t grp = H5I_INVALID_HID;
    int rc = out_open_group(o, "/tallies", &grp, err);
    if (!rc) {
        char names[256];
        channel_names(names, sizeof names);
        rc = out_attr_str(o, grp, "/tallies", "channel_names", names, err);
    }
    if (!rc)
        rc = out_put_all(o, grp, "/tallies", list, N_TALLY_DOCS, err);
    out_close_id(&grp, H5Gclose);
    free_columns(&c);
    return rc;
}

static int write_timing(output *o, const run_result *r, smx_error *err)
{
    int n = r->n_phases < 0 ? 0 : r->n_phases > RUN_MAX_PHASES ? RUN_MAX_PHASES : r->n_phases;
    hid_t grp = H5I_INVALID_HID;
    int rc = out_open_group(o, "/timing", &grp, err);
    if (!rc)
        rc = out_put_dataset(o,
                             &(dset){ .parent = grp,
                                      .parent_path = "/timing",
                                      .name = "phase_names",
                                      .kind = V_TEXTS,
                                      .rank = 1,
                                      .dims = { (hsize_t)n },
                                      .data = r->phase_name,
                                      .units = "",
                                      .description = "Name of each timed phase, in order" },
                             NULL, err);
    if (!rc)
        rc = out_put_dataset(o,
                             &(dset){ .parent = grp,
                                      .parent_path = "/timing",
                                      .name = "phase_seconds",
                                      .kind = V_F64,
                                      .rank = 1,
                                      .dims = { (hsize_t)n },
                                      .data = r->phase_s,
                                      .units = "s",
                                      .axes = "phase_names",
                                      .description = "Wall-clock time of each phase" },
                             NULL, err);
    out_close_id(&grp, H5Gclose);
    return rc;
}

static const char *stop_reason_name(int reason)
{
    switch (reason) {
    case STOP_STEPS_DONE:
        return "steps_done";
    case STOP_WEIGHT_BELOW:
        return "weight_below";
    case STOP_MAX_STEPS:
        return "max_steps";
    case STOP_INTERRUPTED:
        return "interrupted";
    case STOP_FAILED:
        return "failed";
    }
    return "unknown";
}

static int write_root_attrs(output *o, const run_result *r, const provenance *pv, smx_error *err)
{
    const struct {
        const char *name, *value;
    } strs[] = {
        { "code_version", pv->code_version },
        { "git_describe", pv->git_describe },
        { "compiler", pv->compiler },
        { "cflags", pv->cflags },
        { "nvcc_version", pv->nvcc_version },
        { "nvcc_flags", pv->nvcc_flags },
        { "cuda_runtime_version", pv->cuda_version },
        { "cuda_driver_version", pv->cuda_driver_version },
        { "cufft_version", pv->cufft_version },
        { "hdf5_version", pv->hdf5_version },
        { "libyaml_version", pv->yaml_version },
        { "hostname", pv->hostname },
        { "argv", pv->argv },
        { "utc_start", pv->utc_start },
        { "utc_end", pv->utc_end },
        { "plan_sha256", pv->plan_sha256 },
        { "backend", r->backend_name },
        { "device_name", r->device_name },
        { "compute_capability", r->compute_capability },
        { "kernel_variants", r->kernel_variants },
        { "stop_reason", stop_reason_name(r->stop_reason) },
    };
    int rc = SMX_OK;
    /* An empty attribute reads like a writer bug; say that the fact was unknown. */
    for (size_t k = 0; !rc && k < sizeof strs / sizeof strs[0]; k++)
        rc = out_attr_str(o, o->file, "/", strs[k].name,
                          strs[k].value[0] ? strs[k].value : "unknown", err);
    /* The tables loader hashes the file it actually read (written at setup);
     * the caller's copy only replaces it when there is one. */
    if (!rc && pv->table_sha256[0])
        rc = out_attr_str(o, o->file, "/", "table_sha256", pv->table_sha256, err);
    /* Which kernels stepped the spots (output.per_spot_dose alone). */
    if (!rc && r->spot_kernel_variants[0])
        rc = out_attr_str(o, o->file, "/", "spot_kernel_variants", r->spot_kernel_variants, err);
    if (!rc)
        rc = out_attr_int(o, o->file, "/", "n_steps", r->n_steps, err);
    if (!rc)
        rc = out_attr_f64(o, o->file, "/", "conservation_max_weight_rel_err", r->max_weight_rel_err,
                          err);
    if (!rc)
        rc = out_attr_f64(o, o->file, "/", "conservation_max_energy_rel_err", r->max_energy_rel_err,
                          err);
    if (!rc)
        rc = out_attr_int(o, o->file, "/", "conservation_violations", r->conservation_violations,
                          err);
    if (!rc)
        rc = out_attr_int(o, o->file, "/", "conservation_tail_steps", r->tail_steps, err);
    if (!rc)
        rc = out_attr_f64(o, o->file, "/", "conservation_tail_max_weight_rel_err",
                          r->tail_max_weight_rel_err, err);
    if (!rc)
        rc = out_attr_f64(o, o->file, "/", "conservation_tail_max_energy_rel_err",
                          r->tail_max_energy_rel_err, err);
    return rc;
}

/* The figures the terminal summary prints (the caller works them out once for
 * both), kept in the file, with its warnings. */
static int write_summary(output *o, const run_result *r, const dose_figures *fig, smx_error *err)
{
    const dose_figures f = *fig;
    char warnings[2048];
    if (!summary_warnings(&f, run_leak_fraction(r), warnings, sizeof warnings))
        snprintf(warnings, sizeof warnings, "none");
    else /* lines separated, not ended, by a newline */
        warnings[strlen(warnings) - 1] = '\0';
    const dset list[] = {
        { .name = "R80_mm",
          .kind = V_F64,
          .rank = 0,
          .data = &f.r80_mm,
          .units = "mm",
          .description =
              "Deepest depth where the depth dose falls through 80 % of the distal peak's value, staying "
              "below beyond it (NaN: not inside the grid; the attribute warnings says why)" },
        { .name = "R20_mm",
          .kind = V_F64,
          .rank = 0,
          .data = &f.r20_mm,
          .units = "mm",
          .description = "The same at 20 % of the distal peak's value" },
        { .name = "peak_depth_mm",
          .kind = V_F64,
          .rank = 0,
          .data = &f.peak_depth_mm,
          .units = "mm",
          .description =
              "Depth (row centre) of the distal peak: the maximum met going up the distal fall-off from "
              "its deepest fall through half the maximum (one Bragg peak: the peak; a spread-out peak: "
              "its deepest peak)" },
        { .name = "peak_to_entrance",
          .kind = V_F64,
          .rank = 0,
          .data = &f.peak_to_entrance,
          .units = "1",
          .description = "The distal peak's value over the first row's" },
        { .name = "maximum_depth_mm",
          .kind = V_F64,
          .rank = 0,
          .data = &f.max_depth_mm,
          .units = "mm",
          .description = "Depth (row centre) of the depth dose's maximum (the first, if several)" },
        { .name = "maximum_to_peak",
          .kind = V_F64,
          .rank = 0,
          .data = &f.max_to_peak,
          .units = "1",
          .description =
              "The maximum over the distal peak's value: 1 when the distal peak is the maximum, above 1 "
              "when the maximum lies before it (a spread-out peak's proximal overshoot)" },
        { .name = "lateral_rms_at_half_R80_mm",
          .kind = V_F64,
          .rank = 0,
          .data = &f.lateral_rms_half_r80_mm,
          .units = "mm",
          .description = "rms lateral width of the dose at depth R80 / 2" },
    };
    hid_t grp = H5I_INVALID_HID;
    int rc = out_open_group(o, "/summary", &grp, err);
    if (!rc)
        rc = out_attr_str(
            o, grp, "/summary", "description",
            "Figures of the depth dose: the dose (Gy, each cell's energy over its own mass) summed "
            "over x times dx, per row (Gy mm), interpolated linearly between row centres",
            err);
    if (!rc)
        rc = out_attr_str(o, grp, "/summary", "warnings", warnings, err);
    if (!rc)
        rc = out_put_all(o, grp, "/summary", list, sizeof list / sizeof list[0], err);
    out_close_id(&grp, H5Gclose);
    return rc;
}

static int result_impl(output *o, const output_run *run, const dose_figures *fig,
                       const provenance *pv, smx_error *err)
{
    const plan *p = run->p;
    const grid *g = run->g;
    const run_result *r = run->r;
    int rc = out_ready(o, g, err, "output_write_result");
    if (!rc)
        rc = out_write_dose(o, "/dose", "/dose/per_spot", run, err);
    if (!rc) /* the nominal's LET and dose to water */
        rc = out_write_let(o, p, g, r, err);
    if (!rc)
        rc = write_summary(o, r, fig, err);
    if (!rc)
        rc = write_tallies(o, r, err);
    if (!rc)
        rc = write_timing(o, r, err);
    if (!rc)
        rc = write_root_attrs(o, r, pv, err);
    if (!rc && pv->n_ranks > 0)
        rc = out_write_ranks(o, pv, err);
    if (!rc) {
        out_remember_mesh(o, g);
        o->result_done = 1;
    }
    return rc;
}

int output_write_result(output *o, const output_run *run, const dose_figures *fig,
                        const provenance *pv, smx_error *err)
{
    h5quiet q = out_quiet_begin();
    int rc = result_impl(o, run, fig, pv, err);
    out_quiet_end(q);
    return rc;
}
