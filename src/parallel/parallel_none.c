/* A build without MPI: one process, nothing to agree on or gather. */
#include <string.h>
#include <stdio.h>
#include <unistd.h>

#include "parallel/parallel.h"

int par_init(par_job *job, int *argc, char ***argv, smx_error *err)
{
    (void)argc;
    (void)argv;
    (void)err;
    memset(job, 0, sizeof *job);
    job->size = job->local_size = 1;
    if (gethostname(job->host, sizeof job->host - 1) != 0)
        snprintf(job->host, sizeof job->host, "unknown");
    return 0;
}

void par_finalize(void) {}

void par_set_cleanup(void (*fn)(void *ctx), void *ctx)
{
    (void)fn;
    (void)ctx;
}

void par_library_version(char *out, size_t cap)
{
    snprintf(out, cap, "none");
}

int par_agree(const par_job *job, int rc, smx_error *err)
{
    (void)job;
    (void)err;
    return rc;
}

void par_tag_error(const par_job *job, smx_error *err)
{
    (void)job;
    (void)err;
}

int par_gather_spots(const par_job *job, const int *bound, double threshold, run_result *r,
                     smx_error *err)
{
    (void)job;
    (void)bound;
    (void)threshold;
    (void)r;
    (void)err;
    return 0;
}

int par_gather_ranks(const par_job *job, const char *device, const par_block *block, provenance *pv,
                     smx_error *err)
{
    (void)job;
    (void)device;
    (void)block;
    (void)pv;
    (void)err;
    return 0;
}
