#include "transport/backend_select.h"

#include <math.h>
#include <unistd.h>

int backend_choose(const plan *p, const gpu_info *gi, const backend_ops **be, smx_error *err)
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

double backend_host_bytes(const grid *g, const backend_ops *be)
{
    double psi = (double)g->cells * sizeof(float);
    if (be == &backend_cpu)
        return backend_cpu_host_bytes(g) + psi;
    return 2.0 * psi + (double)g->slice * sizeof(double);
}

static double physical_memory_bytes(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && size > 0 ? (double)pages * size : INFINITY;
}

int backend_check_host_memory(const plan *p, const grid *g, const backend_ops *be, smx_error *err)
{
    double need = backend_host_bytes(g, be), have = physical_memory_bytes();
    if (need <= have)
        return 0;
    return plan_fail_at(p, err, "grid.space.nx",
                        "the grid (%lld x %lld x %lld x %lld) needs %.3g GB of host memory "
                        "for the %s backend, this machine has %.3g GB; expected a smaller grid",
                        (long long)g->ne, (long long)g->nth, (long long)g->nz, (long long)g->nx,
                        need * 1e-9, be->name, have * 1e-9);
}
