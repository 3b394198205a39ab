#include "base/file_bytes.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int file_bytes_read(const char *path, size_t max_bytes, const char *expected, unsigned char **out,
                    size_t *len, smx_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return smx_fail(err, SMX_EXIT_INPUT, "%s: cannot open: %s", path, strerror(errno));
    unsigned char *buf = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    for (;;) {
        if (n == cap) {
            if (cap >= max_bytes) {
                rc = smx_fail(err, SMX_EXIT_INPUT, "%s: larger than %zu MB; expected %s", path,
                              max_bytes >> 20, expected);
                break;
            }
            cap = cap ? 2 * cap : 1 << 16;
            unsigned char *grown = realloc(buf, cap);
            if (!grown) {
                rc = smx_fail(err, SMX_EXIT_RUNTIME, "%s: out of memory reading it", path);
                break;
            }
            buf = grown;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) {
            if (ferror(f))
                rc = smx_fail(err, SMX_EXIT_INPUT, "%s: cannot read: %s", path, strerror(errno));
            break;
        }
    }
    fclose(f);
    if (rc) {
        free(buf);
        return rc;
    }
    *out = buf;
    *len = n;
    return 0;
}
