/* Shared by the material-table test programs (test_tables.c: the shipped
 * file, its generator and the interpolation; test_tables_malformed.c: the
 * reader's validation of broken files): the shipped paths and a scratch folder
 * that must be empty again at the end. */
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

#endif
