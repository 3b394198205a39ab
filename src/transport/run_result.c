#include "transport/run.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"

void run_result_init(run_result *r)
{
    memset(r, 0, sizeof *r);
    r->stop_reason = STOP_STEPS_DONE;
}

/* dose_MeV is owned by the result (allocated by the step loop with malloc), so a
 * single run_result_free() releases everything the writer may have read. */
void run_result_free(run_result *r)
{
    free(r->steps);
    free(r->step_ms);
    free(r->front_depth_mm);
    free(r->dose_MeV);
    spot_dose_free(&r->per_spot);
    free(r->let_d);
    free(r->let_t);
    free(r->dose_water_MeV);
    spot_dose_free(&r->per_spot_let);
    run_result_init(r);
}

/* Each array is reallocated on its own; one that grew before a later one failed
 * is still valid at the larger size, so capacity only advances once all have. */
static int grow(run_result *r)
{
    int cap = r->capacity > 0 ? r->capacity : 64;
    if (r->n_steps >= cap) {
        if (cap > (1 << 29))
            return SMX_EXIT_RUNTIME;
        cap *= 2;
    }
    step_balance *s = realloc(r->steps, (size_t)cap * sizeof *s);
    if (!s)
        return SMX_EXIT_RUNTIME;
    r->steps = s;
    double *ms = realloc(r->step_ms, (size_t)cap * sizeof *ms);
    if (!ms)
        return SMX_EXIT_RUNTIME;
    r->step_ms = ms;
    double *fd = realloc(r->front_depth_mm, (size_t)cap * sizeof *fd);
    if (!fd)
        return SMX_EXIT_RUNTIME;
    r->front_depth_mm = fd;
    r->capacity = cap;
    return SMX_OK;
}

/* Also keeps the cumulative tallies and the worst relative errors, so that every
 * caller gets them from one place instead of re-summing the per-step arrays.
 * conservation_violations is left to the caller, which owns the tolerance. */
int run_result_push(run_result *r, const step_balance *b, double ms, double front_mm)
{
    if (r->n_steps >= r->capacity) {
        int rc = grow(r);
        if (rc)
            return rc;
    }
    int i = r->n_steps++;
    r->steps[i] = *b;
    r->step_ms[i] = ms;
    r->front_depth_mm[i] = front_mm;
    tally_add(&r->cumulative, &b->t);
    if (run_result_in_tail(r, b)) {
        r->tail_steps++;
        if (b->weight_rel_err > r->tail_max_weight_rel_err)
            r->tail_max_weight_rel_err = b->weight_rel_err;
        if (b->energy_rel_err > r->tail_max_energy_rel_err)
            r->tail_max_energy_rel_err = b->energy_rel_err;
        return SMX_OK;
    }
    if (b->weight_rel_err > r->max_weight_rel_err)
        r->max_weight_rel_err = b->weight_rel_err;
    if (b->energy_rel_err > r->max_energy_rel_err)
        r->max_energy_rel_err = b->energy_rel_err;
    return SMX_OK;
}

void run_result_restart(run_result *r, double w0, double e0)
{
    r->n_steps = 0;
    tally_clear(&r->cumulative);
    r->conservation_violations = 0;
    r->max_weight_rel_err = r->max_energy_rel_err = 0.0;
    r->tail_steps = 0;
    r->tail_max_weight_rel_err = r->tail_max_energy_rel_err = 0.0;
    r->initial_weight = w0;
    r->initial_energy_MeV = e0;
}

void run_result_add_balance(run_result *into, const run_result *from)
{
    into->conservation_violations += from->conservation_violations;
    into->max_weight_rel_err = fmax(into->max_weight_rel_err, from->max_weight_rel_err);
    into->max_energy_rel_err = fmax(into->max_energy_rel_err, from->max_energy_rel_err);
    into->tail_steps += from->tail_steps;
    into->tail_max_weight_rel_err =
        fmax(into->tail_max_weight_rel_err, from->tail_max_weight_rel_err);
    into->tail_max_energy_rel_err =
        fmax(into->tail_max_energy_rel_err, from->tail_max_energy_rel_err);
}

/* The name is stored, not copied: callers pass string literals. Past the fixed
 * capacity further phases are folded into a last slot renamed "other" rather
 * than dropped, so the total time still adds up without mislabelling it. */
void run_result_phase(run_result *r, const char *name, double seconds)
{
    for (int i = 0; i < r->n_phases; i++) {
        if (strcmp(r->phase_name[i], name) == 0) {
            r->phase_s[i] += seconds;
            return;
        }
    }
    if (r->n_phases < RUN_MAX_PHASES) {
        r->phase_name[r->n_phases] = name;
        r->phase_s[r->n_phases] = seconds;
        r->n_phases++;
    } else {
        r->phase_name[RUN_MAX_PHASES - 1] = "other";
        r->phase_s[RUN_MAX_PHASES - 1] += seconds;
    }
}

/* Room for n_spots rows and keep more values. */
static int spot_dose_reserve(spot_dose *sd, int n_spots, int64_t keep)
{
    if (!sd->indptr) {
        sd->indptr = calloc((size_t)n_spots + 1, sizeof *sd->indptr);
        sd->dropped = calloc((size_t)n_spots, sizeof *sd->dropped);
        sd->weight = calloc((size_t)n_spots, sizeof *sd->weight);
        if (!sd->indptr || !sd->dropped || !sd->weight)
            return SMX_EXIT_RUNTIME;
    }
    if (sd->nnz + keep > sd->cap) {
        int64_t cap = sd->cap > 0 ? sd->cap : 1 << 16;
        while (cap < sd->nnz + keep)
            cap *= 2;
        int32_t *ix = realloc(sd->indices, (size_t)cap * sizeof *ix);
        if (!ix)
            return SMX_EXIT_RUNTIME;
        sd->indices = ix;
        float *v = realloc(sd->values, (size_t)cap * sizeof *v);
        if (!v)
            return SMX_EXIT_RUNTIME;
        sd->values = v;
        sd->cap = cap;
    }
    return SMX_OK;
}

int spot_dose_take_rows(spot_dose *sd, int n_spots, const spot_dose *rows, int count)
{
    int64_t keep = 0;
    for (int k = 0; k < count; k++)
        keep += rows[k].nnz;
    if (spot_dose_reserve(sd, n_spots, keep))
        return SMX_EXIT_RUNTIME;
    const int row0 = sd->n_spots; /* indptr[row0] == nnz */
    for (int k = 0; k < count; k++) {
        sd->indptr[row0 + k + 1] = sd->indptr[row0 + k] + rows[k].nnz;
        sd->dropped[row0 + k] = rows[k].dropped[0];
        sd->weight[row0 + k] = rows[k].weight[0];
    }
    /* Each row into its own place on the host's threads: one thread copying
     * (and faulting in the pages) took 0.29 s of the benchmark field's 57 M
     * values. */
#pragma omp parallel for schedule(dynamic, 1)
    for (int k = 0; k < count; k++) {
        const int64_t at = sd->indptr[row0 + k], n = rows[k].nnz;
        if (n > 0) {
            memcpy(sd->indices + at, rows[k].indices, (size_t)n * sizeof *sd->indices);
            memcpy(sd->values + at, rows[k].values, (size_t)n * sizeof *sd->values);
        }
    }
    sd->nnz += keep;
    sd->n_spots += count;
    return SMX_OK;
}

void spot_dose_free(spot_dose *sd)
{
    const double *keep = sd->to_reference;
    free(sd->indptr);
    free(sd->indices);
    free(sd->values);
    free(sd->dropped);
    free(sd->weight);
    memset(sd, 0, sizeof *sd);
    sd->to_reference = keep; /* not owned: the caller's setting stays */
}

int spot_dose_append_box(spot_dose *sd, int n_spots, const spot_row_src *src)
{
    const double *dose = src->dose;
    const double weight = src->weight;
    const spot_box b = src->box;
    const int64_t nx = b.nx;
    const int z0 = b.z0, z1 = b.z1, x0 = b.x0, x1 = b.x1;
    double peak = 0.0;
    int64_t keep = 0;
    for (int64_t z = z0; z <= z1; z++)
        for (int64_t i = z * nx + x0; i <= z * nx + x1; i++)
            peak = dose[i] > peak ? dose[i] : peak;
    const double cut = sd->threshold * peak;
    for (int64_t z = z0; z <= z1; z++)
        for (int64_t i = z * nx + x0; i <= z * nx + x1; i++)
            keep += dose[i] != 0.0 && dose[i] >= cut;
    if (spot_dose_reserve(sd, n_spots, keep))
        return SMX_EXIT_RUNTIME;
    const int row = sd->n_spots;
    double dropped = 0.0;
    for (int64_t z = z0; z <= z1; z++)
        for (int64_t i = z * nx + x0; i <= z * nx + x1; i++) {
            if (dose[i] != 0.0 && dose[i] >= cut) {
                sd->indices[sd->nnz] = (int32_t)i;
                sd->values[sd->nnz++] = (float)dose[i];
            } else {
                dropped += sd->to_reference ? dose[i] * sd->to_reference[i] : dose[i];
            }
        }
    sd->dropped[row] = dropped;
    sd->weight[row] = weight;
    sd->indptr[row + 1] = sd->nnz;
    sd->n_spots++;
    return SMX_OK;
}

int spot_dose_append_like(spot_dose *sd, int n_spots, const spot_dose *like, int row,
                          const spot_row_src *src, const double *factor)
{
    const double *dose = src->dose;
    const double weight = src->weight;
    const spot_box b = src->box;
    const int64_t nx = b.nx;
    const int z0 = b.z0, z1 = b.z1, x0 = b.x0, x1 = b.x1;
    const int64_t k0 = like->indptr[row], k1 = like->indptr[row + 1];
    if (spot_dose_reserve(sd, n_spots, k1 - k0))
        return SMX_EXIT_RUNTIME;
    const int r = sd->n_spots;
    double dropped = 0.0;
    int64_t k = k0;
    for (int64_t z = z0; z <= z1; z++)
        for (int64_t i = z * nx + x0; i <= z * nx + x1; i++) {
            const double v = dose[i] * factor[i];
            if (k < k1 && like->indices[k] == i) {
                sd->indices[sd->nnz] = (int32_t)i;
                sd->values[sd->nnz++] = (float)v;
                k++;
            } else {
                dropped += sd->to_reference ? v * sd->to_reference[i] : v;
            }
        }
    sd->dropped[r] = dropped;
    sd->weight[r] = weight;
    sd->indptr[r + 1] = sd->nnz;
    sd->n_spots++;
    return SMX_OK;
}

int spot_dose_append(spot_dose *sd, int n_spots, const double *dose, int64_t cells, double weight)
{
    const spot_row_src src = { dose, { cells, 0, 0, 0, (int)cells - 1 }, weight };
    return spot_dose_append_box(sd, n_spots, &src);
}
