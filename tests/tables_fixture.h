/* Shared by the material-table test programs (test_tables.c: the shipped
 * file, its generator and the interpolation; test_tables_malformed.c: the
 * reader's validation of broken files; test_materials.c: the library): the
 * shipped paths, a scratch folder that must be empty again at the end, the
 * files' attributes read directly, and the generator run without a shell. */
#ifndef SMX_TEST_TABLES_FIXTURE_H
#define SMX_TEST_TABLES_FIXTURE_H

#include "base/sha256.h"
#include "check.h"
#include "physics/tables.h"

#include <hdf5.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define H5_PATH "data/pstar_water.h5"
#define CSV_PATH "data/pstar_water.csv"
#define MAXN 512

static char tmpdir[64];

static inline void tmp_path(char *buf, size_t cap, const char *name)
{
    snprintf(buf, cap, "%s/%s", tmpdir, name);
}

static inline int tables_fixture_begin(void)
{
    snprintf(tmpdir, sizeof tmpdir, "%s", "/tmp/smx_tables_XXXXXX");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    return 0;
}

/* Every check cleans up after itself; a leftover (say, a generator's
 * temporary file) makes this fail. */
static inline void tables_fixture_end(void)
{
    CHECK_MSG(rmdir(tmpdir) == 0, "%s not empty: %s", tmpdir, strerror(errno));
}

/* ---- reading attributes directly, to compare files beyond what the reader keeps ---- */

static inline int attr_string(const char *file, const char *obj, const char *name, char *buf,
                              size_t cap)
{
    int rc = -1;
    buf[0] = '\0';
    hid_t f = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t a = f >= 0 ? H5Aopen_by_name(f, obj, name, H5P_DEFAULT, H5P_DEFAULT) : -1;
    hid_t ft = a >= 0 ? H5Aget_type(a) : -1;
    size_t sz = ft >= 0 ? H5Tget_size(ft) : 0;
    if (ft >= 0 && H5Tget_class(ft) == H5T_STRING && !H5Tis_variable_str(ft) && sz < cap &&
        H5Aread(a, ft, buf) >= 0) {
        buf[sz] = '\0';
        rc = 0;
    }
    if (ft >= 0)
        H5Tclose(ft);
    if (a >= 0)
        H5Aclose(a);
    if (f >= 0)
        H5Fclose(f);
    return rc;
}

static inline int attr_double(const char *file, const char *name, double *v)
{
    hid_t f = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t a = f >= 0 ? H5Aopen(f, name, H5P_DEFAULT) : -1;
    int rc = a >= 0 && H5Aread(a, H5T_NATIVE_DOUBLE, v) >= 0 ? 0 : -1;
    if (a >= 0)
        H5Aclose(a);
    if (f >= 0)
        H5Fclose(f);
    return rc;
}

/* Runs argv (argv[0] the program's path; NULL-terminated) with stderr
 * captured into errfile and stdout discarded; its exit status, -1 if it did
 * not exit normally. No shell: paths stay verbatim. */
static inline int run_program(const char *const argv[], const char *errfile)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        int fd = open(errfile, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int devnull = open("/dev/null", O_WRONLY);
        if (fd < 0 || devnull < 0 || dup2(fd, 2) < 0 || dup2(devnull, 1) < 0)
            _exit(126);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    int st;
    if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
        return -1;
    return WEXITSTATUS(st);
}

#endif
