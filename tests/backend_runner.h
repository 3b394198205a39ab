/* Runs a few steps on any backend from a given psi, for kernel-level tests:
 * outputs are poisoned with NaN before they are read back, so a value the
 * backend failed to write shows up. */
#ifndef SMX_TEST_BACKEND_RUNNER_H
#define SMX_TEST_BACKEND_RUNNER_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transport/backend.h"
#include "run/run_setup.h"
#include "transport/backend_test.h"
#include "transport/stepper.h"

/* only_op: -1 = full steps, else one enum op_id per step. Returns 0 or an exit code. */
static int runner_force_fft_from = 0; /* tests: CUDA hybrid split (see cuda_test_options) */
static int runner_fused_kp_cap =
    0; /* tests: fused step's padded half-width cap (see cuda_test_options) */
static int runner_fused_split_off =
    0; /* tests: no energy split in the fused step (see cuda_test_options) */
static int runner_fused_one_tile =
    0; /* tests: one tile per block in the fused step (see cuda_test_options) */
static int runner_cuda_pad_rows =
    0; /* tests: CUDA rows padded on every grid (see cuda_test_options) */
static int runner_fused_boundary_global =
    0; /* tests: wide kernels' boundary fractions from global memory */
static int runner_media_whole_grid =
    0; /* tests: CUDA media step with one kernel per operator (see cuda_test_options) */
static char runner_variants[1024]; /* the last run's kernel_variants (which paths ran) */
static const medium_map *runner_mm = NULL; /* tests: the cells' media (NULL: one medium) */
static const tables *const *runner_mt =
    NULL; /* tests: the table of each of runner_mm's materials */
/* The last run's released-energy planes (transport.nuclear: halo): [planes - 1][slice], or
 * NULL; freed by the next run. */
static double *runner_release = NULL;

static inline int run_backend(const backend_ops *be, const plan *p, const grid *g, const tables *t,
                              int only_op, const float *psi0, int n, float *psi, double *dose,
                              step_record *last, smx_error *err)
{
    sim_tables st;
    void *ctx = NULL;
    const sim_media media = { runner_mm, runner_mt, NULL };
    int rc = simulate_tables_build(&st, p, g, t, runner_mm ? &media : NULL, err);
    if (rc)
        return rc;
    backend_test_options opt = backend_test_options_default();
    opt.only_op = only_op;
    opt.cuda.force_fft_from = runner_force_fft_from;
    opt.cuda.fused_kp_cap = runner_fused_kp_cap;
    opt.cuda.fused_split_off = runner_fused_split_off;
    opt.cuda.fused_one_tile = runner_fused_one_tile;
    opt.cuda.cuda_pad_rows = runner_cuda_pad_rows;
    opt.cuda.fused_boundary_global = runner_fused_boundary_global;
    opt.cuda.media_whole_grid = runner_media_whole_grid;
    double w0 = 0.0, e0 = 0.0;
    for (int64_t ie = 0; ie < g->ne; ie++)
        for (int64_t k = 0; k < g->nth * g->slice; k++) {
            double v = psi0[ie * g->nth * g->slice + k];
            w0 += v;
            e0 += v * g->E.centres[ie];
        }
    if ((rc = backend_setup_test(be, &ctx, &st, &opt, err)) ||
        (rc = be->upload(ctx, psi0, NULL, w0, e0, err)))
        goto done;
    memset(last, 0, sizeof *last);
    for (int k = 0; k < n; k++) {
        step_record rec[1];
        int got = 0;
        if ((rc = be->step(ctx, k, err)))
            goto done;
        /* Collect after every step so that each record is checked. */
        if ((rc = be->collect(ctx, rec, 1, &got, err)))
            goto done;
        if (got)
            *last = rec[0];
    }
    for (int64_t i = 0; i < g->cells; i++)
        psi[i] = NAN;
    double *planes = malloc((size_t)g->slice * g->dose_planes * sizeof *planes);
    if (!planes) {
        rc = SMX_EXIT_RUNTIME;
        goto done;
    }
    for (int64_t i = 0; i < g->slice * g->dose_planes; i++)
        planes[i] = NAN;
    const float *snap;
    if ((rc = be->snapshot_begin(ctx, err)) || (rc = be->snapshot_wait(ctx, &snap, err)) ||
        (rc = be->download_dose(ctx, planes, err))) {
        free(planes);
        goto done;
    }
    /* The dose to the caller; the release planes kept for it. */
    memcpy(dose, planes, (size_t)g->slice * sizeof *dose);
    free(runner_release);
    runner_release = NULL;
    if (g->dose_planes > 1) {
        runner_release = planes;
        memmove(planes, planes + g->slice,
                (size_t)g->slice * (g->dose_planes - 1) * sizeof *planes);
    } else {
        free(planes);
    }
    memcpy(psi, snap, g->cells * sizeof *psi);
    run_result *rr = calloc(1, sizeof *rr);
    if (rr) {
        be->describe(ctx, rr);
        snprintf(runner_variants, sizeof runner_variants, "%s", rr->kernel_variants);
        free(rr);
    }
done:
    if (ctx)
        be->release(ctx);
    sim_tables_free(&st);
    return rc;
}

#endif
