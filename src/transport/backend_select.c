#include "transport/backend_select.h"

#include <omp.h>
#include <stdio.h>

int backend_choose(const plan *p, const gpu_info *gi, const backend_ops **be, smx_error *err)
{
#ifdef SMX_HAVE_CUDA
    if (p->device == DEVICE_CUDA || (p->device == DEVICE_AUTO && gi->count > 0)) {
        /* A device error (exit 3), not bad input: the plan is valid, the
         * machine lacks what it asks for. */
        if (gi->count == 0)
            return smx_fail_key(err, SMX_EXIT_RUNTIME, "backend.device",
                                "cuda was asked for, but no CUDA device is usable (%s); expected "
                                "cpu or auto on this machine",
                                gi->why_none);
        *be = &backend_cuda;
        return 0;
    }
    if (gi->no_code)
        smx_warn("running on the CPU: no GPU code here for %s\n", gi->why_none);
#else
    if (p->device == DEVICE_CUDA)
        return smx_fail_key(err, SMX_EXIT_RUNTIME, "backend.device",
                            "cuda was asked for, but this build has no CUDA (%s); expected cpu or "
                            "auto",
                            gi->why_none);
#endif
    *be = &backend_cpu;
    return 0;
}

void backend_describe(const plan *p, const gpu_info *gi, const backend_ops *be, char *out,
                      size_t cap)
{
    (void)be; /* a build without CUDA has only the CPU backend */
#ifdef SMX_HAVE_CUDA
    if (be == &backend_cuda) {
        snprintf(out, cap, "cuda (device %d: %.200s, compute capability %d.%d)", gpu_selected(),
                 gi->name, gi->cc_major, gi->cc_minor);
        return;
    }
#endif
    /* The CPU backend runs backend.threads threads, or OpenMP's default. */
    int threads = p->threads > 0 ? p->threads : omp_get_max_threads();
#ifdef SMX_HAVE_CUDA
    const char *why = p->device == DEVICE_CPU ? "backend.device: cpu" : "no CUDA device: ";
#else
    const char *why =
        p->device == DEVICE_CPU ? "backend.device: cpu" : ""; /* why_none: built without CUDA */
#endif
    snprintf(out, cap, "cpu (OpenMP, %d thread%s; %s%.400s)", threads, threads == 1 ? "" : "s", why,
             p->device == DEVICE_CPU ? "" : gi->why_none);
}

double backend_host_bytes(const grid *g, const backend_ops *be)
{
    double psi = (double)g->cells * sizeof(float);
    if (be == &backend_cpu)
        return backend_cpu_host_bytes(g) + psi;
    return 2.0 * psi + (double)g->slice * sizeof(double);
}

/* A psi snapshot needs the whole of psi on the host (the CUDA backend's
 * pinned buffer, the CPU backend's pages as it writes them). */
static double snapshot_bytes(const plan *p, const grid *g)
{
    int any = p->snapshot_every > 0 || p->n_snapshot_steps > 0 || p->snapshot_final;
    return any ? (double)g->cells * sizeof(float) : 0.0;
}

double backend_host_min_bytes(const plan *p, const grid *g, const backend_ops *be)
{
    double snap = snapshot_bytes(p, g);
    if (be == &backend_cpu)
        return backend_cpu_min_bytes(g) + snap;
    return (double)g->ne * g->nth * g->nx * sizeof(float) + (double)g->slice * sizeof(double) +
           snap;
}

int backend_check_host_memory(const plan *p, const grid *g, const backend_ops *be, smx_error *err)
{
    double need = backend_host_min_bytes(p, g, be), have = backend_host_limit_bytes(p);
    if (need <= have)
        return 0;
    return smx_fail_key(
        err, SMX_EXIT_INPUT, "grid.space.nx",
        "the grid (%lld x %lld x %lld x %lld) needs at least %.3g GB of host memory "
        "for the %s backend, this run may use %.3g GB (%s); expected a smaller grid%s",
        (long long)g->ne, (long long)g->nth, (long long)g->nz, (long long)g->nx, need * 1e-9,
        be->name, have * 1e-9,
        p->host_memory_bytes > 0 ? "backend.host_memory_bytes" : "this machine's memory",
        snapshot_bytes(p, g) > 0 ? ", or fewer psi snapshots" : "");
}
