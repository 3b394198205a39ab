/* The benchmark's hooks into a backend (smx2d-sim --bench, src/tools/bench.c):
 * timed steps and operators on a context from backend_ops.setup. A run never
 * calls them; they sit apart from the backend table so that it holds only what
 * a run needs. */
#ifndef SMX_BACKEND_BENCH_H
#define SMX_BACKEND_BENCH_H

#include <stdint.h>

#include "base/error.h"
#include "transport/backend.h"

typedef struct backend_bench_ops {
    /* Steps first .. first+count-1, enqueued back to back as in a run (no host
     * wait between them), each timed on the device into ms[k]; blocks until
     * all are done. */
    int (*steps)(void *ctx, int64_t first, int count, double *ms, smx_error *err);
    /* One operator (enum op_id, or 3 = end-of-step bookkeeping) on the current
     * state, timed; the state is not kept consistent (benchmark only). */
    int (*op)(void *ctx, int op, double *ms, smx_error *err);
    /* Read+write bytes per second of a psi-sized device-to-device copy. */
    int (*copy)(void *ctx, double *bytes_per_s, smx_error *err);
    /* Kernel launches per step, bytes the step moves with every cell occupied,
     * and device memory in use now (bytes). */
    void (*facts)(void *ctx, int *launches, double *bytes_dense, double *mem_used);
} backend_bench_ops;

extern const backend_bench_ops backend_cpu_bench;
#ifdef SMX_HAVE_CUDA
extern const backend_bench_ops backend_cuda_bench;
#endif

/* The hooks of backend be (one of the tables of transport/backend.h). */
static inline const backend_bench_ops *backend_bench_of(const backend_ops *be)
{
#ifdef SMX_HAVE_CUDA
    if (be == &backend_cuda)
        return &backend_cuda_bench;
#endif
    (void)be;
    return &backend_cpu_bench;
}

#endif
