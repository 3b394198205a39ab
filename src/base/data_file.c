#include "base/data_file.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/text.h"

#define DATA_PATH_MAX 4096

static int readable_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && !S_ISDIR(st.st_mode) && access(path, R_OK) == 0;
}

/* Appends "dir/name" to the tried list; returns 1 (and sets out) if it is there. */
static int try_dir(char *out, size_t cap, const char *dir, const char *name, char *tried,
                   size_t tried_size)
{
    char cand[DATA_PATH_MAX];
    int n = snprintf(cand, sizeof cand, "%s/%s", dir, name);
    if (n < 0 || (size_t)n >= sizeof cand || (size_t)n >= cap)
        return 0;
    size_t used = strlen(tried);
    snprintf(tried + used, tried_size - used, "%s%s", used ? ", " : "", cand);
    if (!readable_file(cand))
        return 0;
    memcpy(out, cand, (size_t)n + 1);
    return 1;
}

int data_file_find(const char *dir, const char *name, char *out, size_t cap, smx_error *err)
{
    char tried[4 * DATA_PATH_MAX + 16] = "";
    char shown[SMX_SHOW_MAX + 4];

    if (name[0] == '/') {
        if (readable_file(name)) {
            snprintf(out, cap, "%s", name);
            return 0;
        }
        return smx_fail(err, SMX_EXIT_INPUT,
                        "'%s' was not found or is not readable; expected an existing file",
                        smx_show(name, strlen(name), shown, sizeof shown));
    }
    if (dir && dir[0] &&
        try_dir(out, cap, dir, name, tried, sizeof tried)) /* text plans have none */
        return 0;
    const char *env = getenv("SMX2D_DATA_DIR");
    if (env && env[0]) {
        if (try_dir(out, cap, env, name, tried, sizeof tried))
            return 0;
    } else {
        /* Say so: an unset variable is the usual reason for this error. */
        size_t used = strlen(tried);
        snprintf(tried + used, sizeof tried - used, ", $SMX2D_DATA_DIR (not set)");
    }
    char exe[DATA_PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            char share[DATA_PATH_MAX];
            *slash = '\0';
            int w = snprintf(share, sizeof share, "%s/../share/smx2d-sim/data", exe);
            if (w > 0 && (size_t)w < sizeof share &&
                try_dir(out, cap, share, name, tried, sizeof tried))
                return 0;
        }
    }
#ifdef SMX_SOURCE_DATA_DIR
    if (try_dir(out, cap, SMX_SOURCE_DATA_DIR, name, tried, sizeof tried))
        return 0;
#endif
    return smx_fail(err, SMX_EXIT_INPUT,
                    "'%s' was not found; tried %s; expected a readable file, relative to "
                    "the plan's directory or in $SMX2D_DATA_DIR",
                    smx_show(name, strlen(name), shown, sizeof shown), tried);
}
