/* Runs a check in a child process first: for readers that a corrupt input can
 * crash instead of fail (HDF5 1.10 does, found by fuzzing). The child's
 * verdict comes back through a pipe; a child killed by a signal is an input
 * error naming the file, not a crash of this process. */
#ifndef SMX_CHILD_CHECK_H
#define SMX_CHILD_CHECK_H

#include "base/error.h"

/* fn(ctx, err) in a forked child. 0 when it returned 0, else its error (or the
 * crash) in err. `path` names the input in messages. */
int child_check(int (*fn)(void *ctx, smx_error *err), void *ctx, const char *path, smx_error *err);

#endif
