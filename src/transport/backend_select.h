/* Which backend runs a plan, and whether this machine can hold what it needs.
 * Shared by the run and the benchmark, so both choose the same way. */
#ifndef SMX_BACKEND_SELECT_H
#define SMX_BACKEND_SELECT_H

#include "base/error.h"
#include "input/plan.h"
#include "physics/grid.h"
#include "transport/backend.h"
#include "transport/device_query.h"

/* backend.device: cpu, cuda, or auto (the GPU when this build has CUDA and a
 * device answers, else the CPU). Errors name backend.device in the plan. */
int backend_choose(const plan *p, const gpu_info *gi, const backend_ops **be, smx_error *err);
/* The backend backend_choose chose, in words, and why the CPU when auto
 * found no GPU: "cpu (OpenMP, 2 threads; no CUDA device: no NVIDIA driver
 * found)". */
void backend_describe(const plan *p, const gpu_info *gi, const backend_ops *be, char *out,
                      size_t cap);

/* Host bytes a run would need if the beam filled the whole grid: the CPU
 * backend keeps two psi buffers and a host copy; the CUDA backend a host copy
 * and a pinned snapshot buffer. */
double backend_host_bytes(const grid *g, const backend_ops *be);
/* What it needs whatever the beam does: the buffers are calloc'd, so only the
 * rows the beam reaches cost memory, except psi snapshots, which need it all. */
double backend_host_min_bytes(const plan *p, const grid *g, const backend_ops *be);

/* Refuses a run whose smallest footprint exceeds what it may use
 * (backend.host_memory_bytes, or this machine's memory; error at
 * grid.space.nx). The CPU backend checks what it touches as it goes. */
int backend_check_host_memory(const plan *p, const grid *g, const backend_ops *be, smx_error *err);

#endif
