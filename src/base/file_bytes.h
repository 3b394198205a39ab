/* A whole input file in memory, read once: what is parsed is what is hashed. */
#ifndef SMX_FILE_BYTES_H
#define SMX_FILE_BYTES_H

#include <stddef.h>

#include "base/error.h"

/* *out (malloc'd) and *len; a file longer than max_bytes is an input error
 * saying what was expected instead (`expected`, e.g. "a table file"). */
int file_bytes_read(const char *path, size_t max_bytes, const char *expected, unsigned char **out,
                    size_t *len, smx_error *err);

#endif
