#include "io/provenance.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <hdf5.h>
#include <yaml.h>

#include "buildinfo.h"
#include "transport/device_query.h"

#if defined(SMX_HAVE_CUDA) && SMX_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

static void set(char *dst, size_t cap, const char *src)
{
    snprintf(dst, cap, "%s", src && src[0] ? src : "unknown");
}
#define SET(field, src) set((field), sizeof(field), (src))

void utc_now_iso8601(char out[32])
{
    time_t now = time(NULL);
    struct tm tm;
    if (now == (time_t)-1 || !gmtime_r(&now, &tm) ||
        strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
        snprintf(out, 32, "unknown");
}

/* CUDA encodes versions as 1000 * major + 10 * minor. */
#if defined(SMX_HAVE_CUDA) && SMX_HAVE_CUDA
static void cuda_ver(char *dst, size_t cap, int v)
{
    snprintf(dst, cap, "%d.%d", v / 1000, (v % 1000) / 10);
}

/* The runtime is linked in (cudart_static): its version is the headers'. The
 * driver's is the device query's (provenance_set_driver): asking the driver
 * here loads it, 0.1 s of a CPU run on a GPU host. */
static void cuda_versions(provenance *pv)
{
    cuda_ver(pv->cuda_version, sizeof pv->cuda_version, CUDART_VERSION);
    SET(pv->cuda_driver_version, "unknown"); /* until provenance_set_driver */
}

void provenance_set_driver(provenance *pv, const gpu_info *gi)
{
    if (!gi->queried) /* why the run asked nothing (run_setup.c) */
        snprintf(pv->cuda_driver_version, sizeof pv->cuda_driver_version, "%.63s", gi->why_none);
    else if (gi->driver_version > 0)
        cuda_ver(pv->cuda_driver_version, sizeof pv->cuda_driver_version, gi->driver_version);
    else
        SET(pv->cuda_driver_version, "none");
}
#else
static void cuda_versions(provenance *pv)
{
    SET(pv->cuda_version, "none");
    SET(pv->cuda_driver_version, "none");
}

void provenance_set_driver(provenance *pv, const gpu_info *gi)
{
    (void)pv;
    (void)gi;
}
#endif

/* Quote only when needed, so the common case reads like the command typed; an
 * argument with anything the shell would interpret is single-quoted (with '\''
 * for embedded quotes), so the recorded line can be pasted back into a shell. */
static int needs_quotes(const char *a)
{
    if (!a[0])
        return 1;
    for (const char *c = a; *c; c++)
        if (strchr(" \t\n'\"\\$`!*?[]{}()<>|&;#~", *c))
            return 1;
    return 0;
}

/* Appends to dst (capacity cap, current length *len); returns 0 when it did not
 * fit so the caller can mark the truncation. */
static int append(char *dst, size_t cap, size_t *len, const char *s)
{
    size_t n = strlen(s);
    if (*len + n + 1 > cap)
        return 0;
    memcpy(dst + *len, s, n + 1);
    *len += n;
    return 1;
}

static void join_argv(char *dst, size_t cap, int argc, char **argv)
{
    static const char ellipsis[] = " ...";
    size_t len = 0, room = cap - sizeof ellipsis;
    dst[0] = '\0';
    for (int i = 0; i < argc && argv && argv[i]; i++) {
        size_t mark = len;
        int ok = (i == 0 || append(dst, room, &len, " "));
        if (ok && needs_quotes(argv[i])) {
            ok = append(dst, room, &len, "'");
            for (const char *c = argv[i]; ok && *c; c++) {
                char one[2] = { *c, '\0' };
                ok = append(dst, room, &len, *c == '\'' ? "'\\''" : one);
            }
            ok = ok && append(dst, room, &len, "'");
        } else if (ok) {
            ok = append(dst, room, &len, argv[i]);
        }
        if (!ok) {
            dst[mark] = '\0';
            len = mark;
            append(dst, cap, &len, ellipsis);
            return;
        }
    }
}

void provenance_init(provenance *pv, int argc, char **argv)
{
    memset(pv, 0, sizeof *pv);
    SET(pv->code_version, SMX_VERSION);
    SET(pv->git_describe, SMX_GIT_DESCRIBE);
    SET(pv->compiler, SMX_COMPILER);
    SET(pv->cflags, SMX_CFLAGS);
    SET(pv->nvcc_version, SMX_NVCC);
    SET(pv->nvcc_flags, SMX_NVCCFLAGS);
    /* The build script records no flags when CUDA is off; say so explicitly. */
    if (strcmp(pv->nvcc_version, "none") == 0)
        SET(pv->nvcc_flags, "none");
    cuda_versions(pv);
    SET(pv->cufft_version, "none"); /* provenance_finish: what the run loaded */

    unsigned maj = 0, min = 0, rel = 0;
    if (H5get_libversion(&maj, &min, &rel) >= 0)
        snprintf(pv->hdf5_version, sizeof pv->hdf5_version, "%u.%u.%u", maj, min, rel);
    else
        SET(pv->hdf5_version, "unknown");
    SET(pv->yaml_version, yaml_get_version_string());

    /* gethostname() need not terminate a truncated name. */
    if (gethostname(pv->hostname, sizeof pv->hostname - 1) != 0 || !pv->hostname[0])
        SET(pv->hostname, "unknown");
    pv->hostname[sizeof pv->hostname - 1] = '\0';

    join_argv(pv->argv, sizeof pv->argv, argc, argv);
    if (!pv->argv[0])
        SET(pv->argv, "unknown");
    utc_now_iso8601(pv->utc_start);
}

void provenance_free(provenance *pv)
{
    free(pv->ranks);
    pv->ranks = NULL;
    pv->n_ranks = 0;
}

void provenance_finish(provenance *pv)
{
    utc_now_iso8601(pv->utc_end);
    /* cuFFT is loaded only where the CUDA backend may use it (cuda/cufft_loader.cuh). */
    char why[256];
    int v = cufft_query(0, why, sizeof why);
    if (v > 0)
        snprintf(pv->cufft_version, sizeof pv->cufft_version, "%d", v);
    else
        SET(pv->cufft_version, "none");
}
