#include "base/error.h"

#include <stdio.h>
#include <string.h>

int smx_quiet = 0;
char smx_warn_tag[96] = "";

int smx_vfail(smx_error *e, int code, const char *fmt, va_list ap)
{
    if (e && e->code == 0) {
        e->code = code;
        vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    }
    return code;
}

int smx_fail(smx_error *e, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    smx_vfail(e, code, fmt, ap);
    va_end(ap);
    return code;
}

int smx_fail_key(smx_error *e, int code, const char *key, const char *fmt, ...)
{
    const int first = e && e->code == 0;
    va_list ap;
    va_start(ap, fmt);
    smx_vfail(e, code, fmt, ap);
    va_end(ap);
    if (first && key)
        snprintf(e->key, sizeof e->key, "%s", key);
    return code;
}

int smx_blame_key(smx_error *e, const char *key, int rc)
{
    /* Only input errors are the key's fault (out of memory, say, is not). */
    if (e && rc && e->code == SMX_EXIT_INPUT && !e->key[0] && key)
        snprintf(e->key, sizeof e->key, "%s", key);
    return rc;
}

void smx_info(const char *fmt, ...)
{
    if (smx_quiet)
        return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stdout, fmt, ap);
    va_end(ap);
    fflush(stdout);
}

void smx_warn(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "smx2d-sim: warning: %s", smx_warn_tag);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
}
