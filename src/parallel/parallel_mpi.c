/* The job's processes with MPI (built with `make MPI=1`; docs/mpi.md).
 *
 * Waiting ranks poll their request with a short sleep instead of MPI's busy
 * wait, so that a rank that has finished its share does not take a core from
 * one still computing on the same host (the CPU backend uses every core it is
 * given). Every MPI call's code is checked; a failed call ends the job
 * (mpi_fatal): the ranks could no longer agree on anything. */
#include <mpi.h>
#include <omp.h>

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/test_hooks.h"
#include "parallel/parallel.h"

static par_job self; /* for the messages of mpi_fatal */
static void (*cleanup_fn)(void *);
static void *cleanup_ctx;

void par_set_cleanup(void (*fn)(void *ctx), void *ctx)
{
    cleanup_fn = fn;
    cleanup_ctx = ctx;
}

static _Noreturn void mpi_fatal(const char *call, int code)
{
    char what[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    if (MPI_Error_string(code, what, &len) != MPI_SUCCESS)
        snprintf(what, sizeof what, "MPI error %d", code);
    fprintf(stderr, "smx2d-sim: error: rank %d of %d on %s: %s failed: %s; ending the job\n",
            self.rank, self.size, self.host, call, what);
    fflush(stderr);
    if (cleanup_fn)
        cleanup_fn(cleanup_ctx);
    MPI_Abort(MPI_COMM_WORLD, SMX_EXIT_RUNTIME);
    exit(SMX_EXIT_RUNTIME); /* MPI_Abort does not return; if it did, this rank still ends */
}

#define MPI_CHECK(call)                \
    do {                               \
        int mpi_rc_ = (call);          \
        if (mpi_rc_ != MPI_SUCCESS)    \
            mpi_fatal(#call, mpi_rc_); \
    } while (0)

/* Completes req, sleeping 0.2 ms between tests (MPI_Wait would spin). */
static void wait_quietly(MPI_Request *req, const char *what)
{
    const struct timespec tick = { 0, 200 * 1000 };
    for (;;) {
        int done = 0;
        int rc = MPI_Test(req, &done, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS)
            mpi_fatal(what, rc);
        if (done)
            return;
        nanosleep(&tick, NULL);
    }
}

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* A dist tree that carries Open MPI (scripts/dist-mpi.sh) relocates it in
 * bin/mpirun; the binary started without it (one process, no mpirun) does
 * the same here, so that MPI_Init finds the tree's components and texts
 * rather than the build machine's paths. Nothing changes where OPAL_PREFIX is
 * set already or the tree has no lib/openmpi. */
static void relocate_bundled_mpi(void)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (getenv("OPAL_PREFIX") || n <= 0)
        return;
    exe[n] = '\0';
    for (int up = 0; up < 2; up++) { /* bin/smx2d-sim -> the tree */
        char *slash = strrchr(exe, '/');
        if (!slash)
            return;
        *slash = '\0';
    }
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/lib/openmpi", exe);
    if (!is_dir(path))
        return;
    static const struct {
        const char *var, *sub;
    } dirs[] = {
        { "OPAL_PREFIX", "" },
        { "OPAL_EXEC_PREFIX", "" },
        { "OPAL_BINDIR", "/libexec/openmpi" },
        { "OPAL_LIBDIR", "/lib" },
        { "OPAL_PKGLIBDIR", "/lib/openmpi" },
        { "OPAL_DATAROOTDIR", "/share" },
        { "OPAL_DATADIR", "/share" },
        { "OPAL_PKGDATADIR", "/share/openmpi" },
        { "OPAL_SYSCONFDIR", "/etc/openmpi" },
        { "OMPI_MCA_mca_base_component_path", "/lib/openmpi" },
        { "OMPI_MCA_mca_base_param_files", "/etc/openmpi/openmpi-mca-params.conf" },
        { "PMIX_MCA_mca_base_component_path", "/lib/pmix" },
        { "PMIX_INSTALL_PREFIX", "" },
    };
    for (size_t k = 0; k < sizeof dirs / sizeof dirs[0]; k++) {
        snprintf(path, sizeof path, "%s%s", exe, dirs[k].sub);
        setenv(dirs[k].var, path, 0);
    }
}

int par_init(par_job *job, int *argc, char ***argv, smx_error *err)
{
    (void)err; /* MPI's failures end the job (mpi_fatal) */
    memset(job, 0, sizeof *job);
    if (gethostname(job->host, sizeof job->host - 1) != 0 || !job->host[0])
        snprintf(job->host, sizeof job->host, "unknown");
    self = *job;
    self.size = 1;
    relocate_bundled_mpi();
    /* Before MPI_Init no handler can be set: MPI's default ends the job. */
    MPI_CHECK(MPI_Init(argc, argv));
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &job->rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &job->size));
    self = *job;
    /* The ranks that share this host's memory: their order picks the GPU. */
    MPI_Comm local;
    MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, job->rank, MPI_INFO_NULL,
                                  &local));
    MPI_CHECK(MPI_Comm_rank(local, &job->local_rank));
    MPI_CHECK(MPI_Comm_size(local, &job->local_size));
    MPI_CHECK(MPI_Comm_free(&local));
    self = *job;
    smx_test_rank = job->rank;
    /* Ranks that share a host share its cores (CPU backend), unless
     * OMP_NUM_THREADS or backend.threads says otherwise: a rank bound to one
     * core by mpirun gets one thread. */
    job->cores_allowed = omp_get_num_procs();
    const long online = sysconf(_SC_NPROCESSORS_ONLN);
    job->cores_host = online > 0 && online < INT_MAX ? (int)online : 0;
    self = *job;
    if (job->local_size > 1 && !getenv("OMP_NUM_THREADS")) {
        int per = job->cores_allowed / job->local_size;
        omp_set_num_threads(per > 0 ? per : 1);
    }
    return 0;
}

void par_finalize(void)
{
    MPI_Request req;
    MPI_CHECK(MPI_Ibarrier(MPI_COMM_WORLD, &req));
    wait_quietly(&req, "MPI_Ibarrier");
    MPI_CHECK(MPI_Finalize());
}

void par_library_version(char *out, size_t cap)
{
    char v[MPI_MAX_LIBRARY_VERSION_STRING] = "";
    int len = 0;
    if (MPI_Get_library_version(v, &len) != MPI_SUCCESS) {
        snprintf(out, cap, "unknown");
        return;
    }
    v[strcspn(v, "\n")] = '\0';
    snprintf(out, cap, "%s", v);
}

void par_tag_error(const par_job *job, smx_error *err)
{
    if (job->size == 1 || !err->code)
        return;
    char msg[sizeof err->msg];
    snprintf(msg, sizeof msg, "rank %d of %d on %s: %.1900s", job->rank, job->size, job->host,
             err->msg);
    memcpy(err->msg, msg, sizeof msg);
}

/* One rank's outcome, as par_agree gathers it. */
typedef struct outcome {
    int code;
    char host[64];
    char msg[sizeof((smx_error *)0)->msg];
} outcome;

/* Rank 0: the message of the lowest failing rank, the ranks that failed the
 * same way, and the other messages, as far as they fit. */
static void combine(const outcome *all, int size, smx_error *out)
{
    int f = 0;
    while (all[f].code == 0)
        f++;
    out->code = all[f].code;
    char *m = out->msg;
    const size_t cap = sizeof out->msg;
    size_t len = (size_t)snprintf(m, cap, "rank %d of %d on %s: %s", f, size, all[f].host,
                                  all[f].msg[0] ? all[f].msg : "failed");
    int same = 0;
    for (int k = f + 1; k < size; k++)
        same += all[k].code && strcmp(all[k].msg, all[f].msg) == 0;
    if (same > 0 && len < cap) {
        len += (size_t)snprintf(m + len, cap - len, " (also rank%s", same > 1 ? "s" : "");
        int shown = 0;
        for (int k = f + 1; k < size && len < cap; k++)
            if (all[k].code && strcmp(all[k].msg, all[f].msg) == 0 && shown++ < 8)
                len += (size_t)snprintf(m + len, cap - len, "%s%d", shown > 1 ? ", " : " ", k);
        if (len < cap)
            len += (size_t)snprintf(m + len, cap - len, "%s)", same > 8 ? ", ..." : "");
    }
    for (int k = f + 1; k < size && len < cap; k++)
        if (all[k].code && strcmp(all[k].msg, all[f].msg) != 0)
            len += (size_t)snprintf(m + len, cap - len, "; rank %d on %s: %s", k, all[k].host,
                                    all[k].msg[0] ? all[k].msg : "failed");
}

int par_agree(const par_job *job, int rc, smx_error *err)
{
    int failed = rc != 0, any = 0;
    MPI_Request req;
    MPI_CHECK(MPI_Iallreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &req));
    wait_quietly(&req, "MPI_Iallreduce");
    if (!any)
        return 0;
    outcome mine = { 0 };
    mine.code = rc ? (err->code ? err->code : rc) : 0;
    snprintf(mine.host, sizeof mine.host, "%s", job->host);
    if (rc)
        snprintf(mine.msg, sizeof mine.msg, "%s", err->msg);
    outcome *all = NULL;
    if (job->rank == 0 && !(all = malloc((size_t)job->size * sizeof *all)))
        mpi_fatal("malloc for the ranks' errors", MPI_ERR_NO_MEM);
    MPI_CHECK(MPI_Igather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE, 0,
                          MPI_COMM_WORLD, &req));
    wait_quietly(&req, "MPI_Igather");
    smx_error job_err = { 0 };
    if (job->rank == 0)
        combine(all, job->size, &job_err);
    free(all);
    MPI_CHECK(MPI_Ibcast(&job_err, (int)sizeof job_err, MPI_BYTE, 0, MPI_COMM_WORLD, &req));
    wait_quietly(&req, "MPI_Ibcast");
    *err = job_err;
    return job_err.code;
}

/* Moves `bytes` bytes between rank 0 and `peer` in pieces MPI's int counts hold. */
enum { PIECE = 1 << 30 };

static void send_bytes(const void *buf, int64_t bytes, int tag)
{
    const char *b = buf;
    for (int64_t at = 0; at < bytes; at += PIECE) {
        int n = (int)(bytes - at < PIECE ? bytes - at : PIECE);
        MPI_Request req;
        MPI_CHECK(MPI_Isend(b + at, n, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &req));
        wait_quietly(&req, "MPI_Isend");
    }
}

static void recv_bytes(void *buf, int64_t bytes, int peer, int tag)
{
    char *b = buf;
    for (int64_t at = 0; at < bytes; at += PIECE) {
        int n = (int)(bytes - at < PIECE ? bytes - at : PIECE);
        MPI_CHECK(MPI_Recv(b + at, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
}

/* A matrix's cell indices travel as runs of consecutive cells (first, count):
 * a spot's row holds a few hundred runs of tens of cells, so the runs are a
 * small fraction of the indices' bytes, and rank 0 expands them into exactly
 * the indices the rank holds. */
static void send_index_runs(const int32_t *idx, int64_t nnz, int tag)
{
    int64_t runs = 0;
    for (int64_t i = 0; i < nnz; i++)
        runs += i == 0 || idx[i] != idx[i - 1] + 1;
    int32_t *r = malloc((size_t)(runs ? runs : 1) * 2 * sizeof *r);
    if (!r)
        mpi_fatal("malloc for the rows' index runs", MPI_ERR_NO_MEM);
    int64_t k = -1;
    for (int64_t i = 0; i < nnz; i++) {
        if (i == 0 || idx[i] != idx[i - 1] + 1) { /* a new run starts here */
            k++;
            r[2 * k] = idx[i];
            r[2 * k + 1] = 0;
        }
        r[2 * k + 1]++;
    }
    send_bytes(&runs, sizeof runs, tag);
    send_bytes(r, runs * 2 * (int64_t)sizeof *r, tag);
    free(r);
}

static void recv_index_runs(int32_t *idx, int64_t nnz, int peer, int tag)
{
    int64_t runs = 0;
    recv_bytes(&runs, sizeof runs, peer, tag);
    int32_t *r = malloc((size_t)(runs ? runs : 1) * 2 * sizeof *r);
    if (!r)
        mpi_fatal("malloc for the rows' index runs", MPI_ERR_NO_MEM);
    recv_bytes(r, runs * 2 * (int64_t)sizeof *r, peer, tag);
    int64_t at = 0;
    for (int64_t k = 0; k < runs; k++)
        for (int32_t c = 0; c < r[2 * k + 1] && at < nnz; c++)
            idx[at++] = r[2 * k] + c;
    free(r);
    if (at != nnz)
        mpi_fatal("the rows' index runs (a count that differs from the values')", MPI_ERR_COUNT);
}

/* The tags of one matrix's five arrays; the LET rows' are after the dose's
 * (TAG_COUNT on), so that the two matrices' messages can never be matched
 * with each other. */
enum { TAG_INDPTR = 1, TAG_INDICES, TAG_VALUES, TAG_DROPPED, TAG_WEIGHT, TAG_COUNT = 5 };

/* realloc(old, bytes), or old and *bad set where it fails (old stays valid). */
static void *grown(void *old, size_t bytes, int *bad)
{
    void *p = realloc(old, bytes);
    if (!p)
        *bad = 1;
    return p ? p : old;
}

/* Rank 0: its own rows *sd grown to n rows and nnz values, every array
 * reallocated in place (a block of this size is its own mapping, which
 * realloc remaps rather than copies), the other ranks' rows to follow. */
static int spot_dose_grow(spot_dose *sd, int n, int64_t nnz, double threshold)
{
    const size_t rows = (size_t)(n ? n : 1), vals = (size_t)(nnz ? nnz : 1);
    int bad = 0;
    sd->indptr = grown(sd->indptr, (rows + 1) * sizeof *sd->indptr, &bad);
    sd->indices = grown(sd->indices, vals * sizeof *sd->indices, &bad);
    sd->values = grown(sd->values, vals * sizeof *sd->values, &bad);
    sd->dropped = grown(sd->dropped, rows * sizeof *sd->dropped, &bad);
    sd->weight = grown(sd->weight, rows * sizeof *sd->weight, &bad);
    if (bad)
        return 1;
    if (sd->n_spots == 0)
        sd->indptr[0] = 0;
    sd->threshold = threshold;
    sd->cap = nnz;
    return 0;
}

/* One matrix of rows to gather: its rows (rank 0's become all of them), its
 * threshold, the first of its messages' tags and its name. */
typedef struct rows_gather {
    spot_dose *sd;
    double threshold;
    int tag0;
    const char *what;
} rows_gather;

/* Collective: the rows of every rank's *m->sd (bound[k] .. bound[k + 1] - 1
 * on rank k) become rank 0's, in rank order; m->what names the matrix in
 * errors. Rank 0 sizes the whole matrix and says whether it can hold it
 * before anyone sends. */

static int gather_rows(const par_job *job, const int *bound, const rows_gather *m, smx_error *err)
{
    spot_dose *sd = m->sd;
    const double threshold = m->threshold;
    const int tag0 = m->tag0;
    const char *what = m->what;
    const int n_spots = bound[job->size];
    MPI_Request req;
    int64_t mine[2] = { sd->indptr ? sd->n_spots : 0, sd->indptr ? sd->nnz : 0 };
    int64_t *sizes = NULL;
    if (job->rank == 0 && !(sizes = malloc(2 * (size_t)job->size * sizeof *sizes)))
        mpi_fatal("malloc for the ranks' row counts", MPI_ERR_NO_MEM);
    MPI_CHECK(MPI_Igather(mine, 2, MPI_INT64_T, sizes, 2, MPI_INT64_T, 0, MPI_COMM_WORLD, &req));
    wait_quietly(&req, "MPI_Igather");

    int ok = 1;
    if (job->rank == 0) {
        int64_t nnz = 0;
        for (int k = 0; k < job->size; k++) {
            const int count = bound[k + 1] - bound[k];
            if (sizes[2 * k] != count && ok) {
                ok = 0;
                smx_fail(err, SMX_EXIT_RUNTIME,
                         "rank %d of %d computed %lld %s rows, its block has %d", k, job->size,
                         (long long)sizes[2 * k], what, count);
            }
            nnz += sizes[2 * k + 1];
        }
        if (ok && !sd->indptr)
            sd->n_spots = 0, sd->nnz = 0; /* no rows of its own: none yet */
        if (ok && spot_dose_grow(sd, n_spots, nnz, threshold)) {
            ok = 0;
            smx_fail(err, SMX_EXIT_RUNTIME,
                     "out of host memory for the %s matrix (%d rows, %lld values)", what, n_spots,
                     (long long)nnz);
        }
    }
    MPI_CHECK(MPI_Ibcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD, &req));
    wait_quietly(&req, "MPI_Ibcast");
    if (!ok) {
        free(sizes);
        return job->rank == 0
                   ? err->code
                   : smx_fail(err, SMX_EXIT_RUNTIME, "rank 0 could not gather the %s rows", what);
    }

    if (job->rank != 0) {
        const int64_t n = mine[0], nnz = mine[1];
        if (n > 0) {
            send_bytes(sd->indptr, (n + 1) * (int64_t)sizeof *sd->indptr, tag0 + TAG_INDPTR);
            send_index_runs(sd->indices, nnz, tag0 + TAG_INDICES);
            send_bytes(sd->values, nnz * (int64_t)sizeof *sd->values, tag0 + TAG_VALUES);
            send_bytes(sd->dropped, n * (int64_t)sizeof *sd->dropped, tag0 + TAG_DROPPED);
            send_bytes(sd->weight, n * (int64_t)sizeof *sd->weight, tag0 + TAG_WEIGHT);
        }
        return 0;
    }

    /* Rank 0: its own block is first and stays where it is; each rank's
     * follows, its row pointers rebased. */
    int64_t row = sizes[0], at = sizes[1];
    for (int k = 1; k < job->size; k++) {
        const int64_t n = sizes[2 * k], nnz = sizes[2 * k + 1];
        if (n == 0)
            continue;
        /* The rank's indptr lands on row's slot (whose value, at, is already set) and after. */
        const int64_t keep = sd->indptr[row];
        recv_bytes(sd->indptr + row, (n + 1) * (int64_t)sizeof *sd->indptr, k, tag0 + TAG_INDPTR);
        for (int64_t i = 0; i <= n; i++)
            sd->indptr[row + i] += keep;
        recv_index_runs(sd->indices + at, nnz, k, tag0 + TAG_INDICES);
        recv_bytes(sd->values + at, nnz * (int64_t)sizeof *sd->values, k, tag0 + TAG_VALUES);
        recv_bytes(sd->dropped + row, n * (int64_t)sizeof *sd->dropped, k, tag0 + TAG_DROPPED);
        recv_bytes(sd->weight + row, n * (int64_t)sizeof *sd->weight, k, tag0 + TAG_WEIGHT);
        row += n;
        at += nnz;
    }
    free(sizes);
    sd->n_spots = (int)row;
    sd->nnz = at;
    return 0;
}

int par_gather_spots(const par_job *job, const int *bound, double threshold, run_result *r,
                     smx_error *err)
{
    const int n_spots = bound[job->size];
    /* Every rank's conservation figures, reduced in a fixed order of exact operations (sum of counts, max). */
    int viol = 0;
    double max_err[4] = { 0.0, 0.0, 0.0, 0.0 },
           mine_err[4] = { r->max_weight_rel_err, r->max_energy_rel_err, r->tail_max_weight_rel_err,
                           r->tail_max_energy_rel_err };
    int tail = 0;
    MPI_Request req;
    MPI_CHECK(MPI_Ireduce(&r->conservation_violations, &viol, 1, MPI_INT, MPI_SUM, 0,
                          MPI_COMM_WORLD, &req));
    wait_quietly(&req, "MPI_Ireduce");
    MPI_CHECK(MPI_Ireduce(&r->tail_steps, &tail, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD, &req));
    wait_quietly(&req, "MPI_Ireduce");
    MPI_CHECK(MPI_Ireduce(mine_err, max_err, 4, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD, &req));
    wait_quietly(&req, "MPI_Ireduce");
    if (job->rank == 0) {
        r->conservation_violations = viol;
        r->max_weight_rel_err = max_err[0];
        r->max_energy_rel_err = max_err[1];
        r->tail_steps = tail;
        r->tail_max_weight_rel_err = max_err[2];
        r->tail_max_energy_rel_err = max_err[3];
    }
    if (n_spots == 0)
        return 0;
    const rows_gather dose = { &r->per_spot, threshold, 0, "per-spot" };
    int rc = gather_rows(job, bound, &dose, err);
    if (rc)
        return rc;
    /* output.per_spot_let: the same rows' LETd x dose, where the plan and
     * grid make them (every rank that has rows has them then; a rank without
     * rows has none, so ask every rank). */
    int mine_let = r->per_spot_let.indptr != NULL, any_let = 0;
    MPI_CHECK(MPI_Iallreduce(&mine_let, &any_let, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &req));
    wait_quietly(&req, "MPI_Iallreduce");
    if (!any_let)
        return 0;
    const rows_gather let = { &r->per_spot_let, threshold, TAG_COUNT, "per-spot LET" };
    return gather_rows(job, bound, &let, err);
}

/* One rank's facts for /mpi. */
typedef struct rank_facts {
    char host[64];
    char device[192];
    par_block block;
} rank_facts;

int par_gather_ranks(const par_job *job, const char *device, const par_block *block, provenance *pv,
                     smx_error *err)
{
    rank_facts mine = { 0 };
    snprintf(mine.host, sizeof mine.host, "%s", job->host);
    snprintf(mine.device, sizeof mine.device, "%s", device && device[0] ? device : "unknown");
    mine.block = *block;
    rank_facts *all = NULL;
    if (job->rank == 0 && !(all = malloc((size_t)job->size * sizeof *all)))
        mpi_fatal("malloc for the ranks' facts", MPI_ERR_NO_MEM);
    MPI_Request req;
    MPI_CHECK(MPI_Igather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE, 0,
                          MPI_COMM_WORLD, &req));
    wait_quietly(&req, "MPI_Igather");
    if (job->rank != 0)
        return 0;
    provenance_free(pv);
    pv->ranks = calloc((size_t)job->size, sizeof *pv->ranks);
    if (!pv->ranks) {
        free(all);
        return smx_fail(err, SMX_EXIT_RUNTIME, "out of host memory for the ranks' provenance");
    }
    pv->n_ranks = job->size;
    par_library_version(pv->mpi_library, sizeof pv->mpi_library);
    for (int k = 0; k < job->size; k++) {
        provenance_rank *pr = &pv->ranks[k];
        snprintf(pr->host, sizeof pr->host, "%s", all[k].host);
        snprintf(pr->device, sizeof pr->device, "%s", all[k].device);
        pr->spot_first = all[k].block.spot_first;
        pr->spot_count = all[k].block.spot_count;
        pr->pair_first = all[k].block.pair_first;
        pr->pair_count = all[k].block.pair_count;
    }
    free(all);
    return 0;
}
