/* smx2d-sim: plan -> tables -> grid -> step loop on a backend -> HDF5 result. */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/sha256.h"
#include "buildinfo.h"
#include "input/cli.h"
#include "input/plan.h"
#include "io/output.h"
#include "io/provenance.h"
#include "physics/tables.h"
#include "report/analysis.h"
#include "tools/bench.h"
#include "transport/backend.h"
#include "transport/device_query.h"
#include "transport/simulate.h"

static void on_signal(int sig)
{
    (void)sig;
    smx_interrupted = 1;
}

static void print_version(void)
{
    gpu_info gi;
    gpu_query(&gi);
    printf("smx2d-sim %s (%s)\n  compiler: %s\n  nvcc: %s\n  GPU: %s\n", SMX_VERSION,
           SMX_GIT_DESCRIBE, SMX_COMPILER, SMX_NVCC, gi.count ? gi.name : gi.why_none);
}

/* Picks the backend the plan asks for; errors name backend.device. auto takes
 * the GPU when this build has CUDA and a device answers, else the CPU. */
static int choose_backend(const plan *p, const gpu_info *gi, const backend_ops **be, smx_error *err)
{
#ifdef SMX_HAVE_CUDA
    if (p->device == DEVICE_CUDA || (p->device == DEVICE_AUTO && gi->count > 0)) {
        if (gi->count == 0)
            return plan_fail_at(p, err, "backend.device",
                                "cuda was asked for, but no CUDA device is usable (%s); expected "
                                "cpu or auto on this machine", gi->why_none);
        *be = &backend_cuda;
        return 0;
    }
#else
    if (p->device == DEVICE_CUDA)
        return plan_fail_at(p, err, "backend.device",
                            "cuda was asked for, but this build has no CUDA (%s); expected cpu or "
                            "auto", gi->why_none);
#endif
    *be = &backend_cpu;
    return 0;
}

/* Host bytes a run needs: the CPU backend keeps two psi buffers and a host copy;
 * the CUDA backend a host copy and a pinned snapshot buffer. */
static double host_bytes_needed(const grid *g, const backend_ops *be)
{
    double psi = (double)g->cells * sizeof(float);
    if (strcmp(be->name, "cpu") == 0)
        return grid_host_bytes(g) + psi;
    return 2.0 * psi + (double)g->slice * sizeof(double);
}

static double physical_memory_bytes(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && size > 0 ? (double)pages * size : INFINITY;
}

static int snapshot_count(const plan *p, int expected_steps)
{
    int n = 0;
    for (int s = 0; s <= expected_steps; s++) {
        int want = (p->snapshot_every > 0 && s > 0 && s % p->snapshot_every == 0);
        for (int i = 0; i < p->n_snapshot_steps && !want; i++)
            want = p->snapshot_steps[i] == s;
        n += want;
    }
    return n + (p->snapshot_final ? 1 : 0);
}

static void print_dry_run(const plan *p, const grid *g, const tables *t, const backend_ops *be,
                          int expected)
{
    const double deg = 180.0 / M_PI;
    double psi_gb = (double)g->cells * 4e-9;
    printf("plan:      %s (valid)\n", p->path);
    printf("tables:    %s (%s, sha256 %.16s...)\n", t->path, t->material, t->sha256);
    printf("energy:    %lld bins, %s grid, %.4g to %.4g MeV, stop below %.4g MeV\n",
           (long long)g->ne, g->energy_kind == EGRID_RANGE ? "range" : "uniform", g->E.edges[0],
           g->E.edges[g->ne], g->E_stop);
    printf("angle:     %lld bins, %s, %.4g to %.4g deg, %.4g deg per bin\n", (long long)g->nth,
           g->angle_mode == ANGLE_FULL ? "full circle" : "window", g->theta.edges[0] * deg,
           g->theta.edges[g->nth] * deg, g->dtheta * deg);
    printf("space:     nz %lld x nx %lld cells of %.4g x %.4g mm (depth 0 to %.4g mm, x %.4g to %.4g mm)\n",
           (long long)g->nz, (long long)g->nx, g->dz, g->dx, g->z.edges[g->nz], g->x.edges[0],
           g->x.edges[g->nx]);
    printf("psi:       %lld cells, %.4g GB per copy\n", (long long)g->cells, psi_gb);
    printf("memory:    host %.4g GB, backend %s\n", host_bytes_needed(g, be) * 1e-9, be->name);
#ifdef SMX_HAVE_CUDA
    if (be == &backend_cuda)
        printf("device:    %.4g GB arena (2 psi buffers, dose, tables; the FFT path adds its spectra)\n",
               backend_cuda_device_bytes(g) * 1e-9);
#endif
    printf("steps:     %s, step %.4g mm (expected %d)\n", p->steps ? "fixed" : "auto", g->ds,
           expected);
    int ns = snapshot_count(p, expected);
    printf("output:    %s (%s), %d psi snapshot(s) of %.4g GB uncompressed, XDMF sidecar\n",
           p->output_file, p->overwrite ? "overwrite allowed" : "must not exist", ns, psi_gb);
}

static void print_summary(const grid *g, const run_result *r, double wall_s)
{
    double *dd = malloc(g->nz * sizeof *dd);
    if (!dd)
        return;
    depth_dose(g, r->dose_MeV, dd);
    double zpk = peak_depth_mm(g, dd), r80 = distal_depth_mm(g, dd, 0.8);
    double r20 = distal_depth_mm(g, dd, 0.2);
    double pk = 0.0;
    for (int64_t z = 0; z < g->nz; z++)
        pk = dd[z] > pk ? dd[z] : pk;
    double entrance = dd[0] > 0.0 ? pk / dd[0] : NAN;
    double sig_mid = isfinite(r80) ? lateral_rms_at(g, r->dose_MeV, 0.5 * r80) : NAN;
    double escaped = 0.0;
    for (int c = 0; c < CH_COUNT; c++)
        escaped += r->cumulative.weight[c];
    smx_info("\nsummary\n");
    smx_info("  steps                     %d (%s)\n", r->n_steps,
             r->stop_reason == STOP_WEIGHT_BELOW ? "remaining weight below threshold"
             : r->stop_reason == STOP_MAX_STEPS  ? "max_steps reached"
                                                 : "fixed count");
    smx_info("  R80 / R20                 %.3f / %.3f mm (R80-R20 %.3f mm)\n", r80, r20, r20 - r80);
    smx_info("  Bragg peak depth          %.3f mm\n", zpk);
    smx_info("  peak-to-entrance ratio    %.3f\n", entrance);
    smx_info("  lateral rms at R80/2      %.3f mm\n", sig_mid);
    smx_info("  weight left / escaped     %.3e / %.6f of initial\n",
             r->n_steps ? r->steps[r->n_steps - 1].weight_out / r->initial_weight : 1.0,
             escaped / r->initial_weight);
    smx_info("  conservation (max/step)   weight %.2e, energy %.2e relative, %d violation(s)\n",
             r->max_weight_rel_err, r->max_energy_rel_err, r->conservation_violations);
    smx_info("  wall time                 %.3f s\n", wall_s);
    free(dd);
}

static int fail(const smx_error *err)
{
    fprintf(stderr, "smx2d-sim: error: %s\n", err->msg);
    return err->code ? err->code : SMX_EXIT_RUNTIME;
}

/* --bench: the backend is chosen as for a plan (--device / --set backend.device). */
static int run_bench(const cli *c)
{
    plan p = {0};
    smx_error err = {0};
    gpu_info gi;
    gpu_query(&gi);
    p.device = DEVICE_AUTO;
    for (int i = 0; i < c->n_sets; i++) {
        if (strcmp(c->sets[i], "backend.device=cpu") == 0)
            p.device = DEVICE_CPU;
        else if (strcmp(c->sets[i], "backend.device=cuda") == 0)
            p.device = DEVICE_CUDA;
    }
    const backend_ops *be = NULL;
    if (choose_backend(&p, &gi, &be, &err))
        return fail(&err);
    bench_options o = {c->bench_grids, c->bench_steps, c->bench_variants, c->bench_json, c->sets,
                       c->n_sets};
    char name[300];
    snprintf(name, sizeof name, "%s", be == &backend_cpu ? "CPU" : gi.name);
    int rc = bench_main(&o, be, name, &err);
    return rc ? fail(&err) : 0;
}

int main(int argc, char **argv)
{
    cli c;
    int rc = cli_parse(&c, argc, argv);
    if (rc)
        return rc;
    if (c.help) {
        cli_usage(stdout);
        return 0;
    }
    if (c.version) {
        print_version();
        return 0;
    }
    if (c.print_schema) {
        plan_write_json_schema(stdout);
        return 0;
    }
    if (c.print_reference) {
        plan_write_reference(stdout);
        return 0;
    }
    smx_quiet = c.quiet;
    if (c.bench)
        return run_bench(&c);

    provenance pv;
    provenance_init(&pv, argc, argv);
    plan p = {0};
    tables t = {0};
    grid g = {0};
    run_result r;
    run_result_init(&r);
    smx_error err = {0};
    output *out = NULL;
    gpu_info gi;
    const backend_ops *be = NULL;

    if ((rc = plan_load(&p, c.plan_path, c.sets, c.n_sets, &err)))
        goto end;
    if ((rc = tables_load(&t, p.table_path, &err))) {
        /* Say which plan key pointed at the bad table. */
        smx_error e2 = {0};
        plan_fail_at(&p, &e2, "material.table_file", "%s", err.msg);
        err = e2;
        goto end;
    }
    if ((rc = grid_build(&g, &p, &t, &err)))
        goto end;
    gpu_query(&gi);
    if ((rc = choose_backend(&p, &gi, &be, &err)))
        goto end;
    int expected = simulate_expected_steps(&p, &g, &t);
    double need = host_bytes_needed(&g, be), have = physical_memory_bytes();
    if (need > have) {
        rc = plan_fail_at(&p, &err, "grid.space.nx",
                          "the grid (%lld x %lld x %lld x %lld) needs %.3g GB of host memory "
                          "for the %s backend, this machine has %.3g GB; expected a smaller grid",
                          (long long)g.ne, (long long)g.nth, (long long)g.nz, (long long)g.nx,
                          need * 1e-9, be->name, have * 1e-9);
        goto end;
    }
    if (c.dry_run) {
        print_dry_run(&p, &g, &t, be, expected);
        goto end;
    }
    if ((rc = output_check_target(p.output_file, p.overwrite, &err)))
        goto end;

    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    sha256_hex(p.yaml_text, p.yaml_len, pv.plan_sha256);
    memcpy(pv.table_sha256, t.sha256, sizeof pv.table_sha256);
    if ((rc = output_open(&out, p.output_file, p.overwrite, &err)) ||
        (rc = output_write_setup(out, &p, &g, &t, &err)))
        goto end;

    smx_info("smx2d-sim %s: %s -> %s\n", SMX_VERSION, p.path, p.output_file);
    rc = simulate(&p, &g, &t, be, out, &r, &err);
    provenance_finish(&pv);
    if (rc == SMX_EXIT_INTERRUPTED && p.keep_partial && r.dose_MeV) {
        smx_error e2 = {0};
        output_write_result(out, &p, &g, &r, &pv, &e2);
    }
    if (rc)
        goto end;
    if ((rc = output_write_result(out, &p, &g, &r, &pv, &err)) || (rc = output_commit(out, &err)))
        goto end;
    out = NULL;
    double wall = 0.0;
    for (int i = 0; i < r.n_phases; i++)
        wall += r.phase_s[i];
    print_summary(&g, &r, wall);
    if (r.conservation_violations) {
        rc = smx_fail(&err, SMX_EXIT_RUNTIME,
                      "conservation violated in %d step(s) (max weight %.3e, energy %.3e; "
                      "tolerance %.0e); the result was written and records them",
                      r.conservation_violations, r.max_weight_rel_err, r.max_energy_rel_err,
                      SMX_CONSERVATION_TOL);
    }
end:
    if (out)
        output_abort(out, p.keep_partial);
    if (rc && rc != SMX_EXIT_USAGE)
        rc = fail(&err);
    run_result_free(&r);
    grid_free(&g);
    tables_free(&t);
    plan_free(&p);
    return rc;
}
