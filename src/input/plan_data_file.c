/* Where a plan's data files are found: as written when absolute, else next
 * to the plan, in $SMX2D_DATA_DIR, in the installed data directory or the
 * source tree's data/ (plan.h, plan_resolve_data_file). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "input/plan_internal.h"

static int readable_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && !S_ISDIR(st.st_mode) && access(path, R_OK) == 0;
}

/* Appends "dir/name" to the tried list; returns 1 (and sets out) if it is there. */
static int try_dir(char *out, const char *dir, const char *name, char *tried, size_t tried_size)
{
    char cand[PLAN_PATH_MAX];
    int n = snprintf(cand, sizeof cand, "%s/%s", dir, name);
    if (n < 0 || (size_t)n >= sizeof cand)
        return 0;
    size_t used = strlen(tried);
    snprintf(tried + used, tried_size - used, "%s%s", used ? ", " : "", cand);
    if (!readable_file(cand))
        return 0;
    memcpy(out, cand, (size_t)n + 1);
    return 1;
}

int plan_resolve_data_file(const plan *p, const char *key, const char *name, char *out,
                           smx_error *err)
{
    char tried[4 * PLAN_PATH_MAX + 16] = "";
    char shown[SHOW_MAX + 4];

    if (name[0] == '/') {
        if (readable_file(name)) {
            snprintf(out, PLAN_PATH_MAX, "%s", name);
            return 0;
        }
        return plan_fail_at(p, err, key,
                            "'%s' was not found or is not readable; expected an existing file",
                            plan_show(name, strlen(name), shown, sizeof shown));
    }
    if (p->dir[0] && try_dir(out, p->dir, name, tried, sizeof tried)) /* text plans have none */
        return 0;
    const char *env = getenv("SMX2D_DATA_DIR");
    if (env && env[0]) {
        if (try_dir(out, env, name, tried, sizeof tried))
            return 0;
    } else {
        /* Say so: an unset variable is the usual reason for this error. */
        size_t used = strlen(tried);
        snprintf(tried + used, sizeof tried - used, ", $SMX2D_DATA_DIR (not set)");
    }
    char exe[PLAN_PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            char dir[PLAN_PATH_MAX];
            *slash = '\0';
            int w = snprintf(dir, sizeof dir, "%s/../share/smx2d-sim/data", exe);
            if (w > 0 && (size_t)w < sizeof dir && try_dir(out, dir, name, tried, sizeof tried))
                return 0;
        }
    }
#ifdef SMX_SOURCE_DATA_DIR
    if (try_dir(out, SMX_SOURCE_DATA_DIR, name, tried, sizeof tried))
        return 0;
#endif
    return plan_fail_at(p, err, key,
                        "'%s' was not found; tried %s; expected a readable file, relative to "
                        "the plan's directory or in $SMX2D_DATA_DIR",
                        plan_show(name, strlen(name), shown, sizeof shown), tried);
}
