/* Errors and exit codes shared by every module.
 * Library code never exits: it fills an smx_error and returns its code, so the
 * tests can assert the exact message and main() alone decides the exit status. */
#ifndef SMX_ERROR_H
#define SMX_ERROR_H

#include <stdarg.h>

#ifdef __cplusplus
extern "C" {
#endif

enum smx_exit {
    SMX_OK = 0,
    SMX_EXIT_USAGE = 1, /* bad command line */
    SMX_EXIT_INPUT = 2, /* bad plan, table file or output path */
    SMX_EXIT_RUNTIME = 3, /* I/O, memory, device or conservation failure */
    SMX_EXIT_INTERRUPTED = 130
};

typedef struct smx_error {
    int code;
    char msg[2048];
    /* Set by a backend whose state did not fit its memory, where a smaller
     * state of the same plan may (transport/simulate.c sets the total's
     * window up again with the rows that fit). */
    int no_room;
} smx_error;

/* Records the first error only (later ones are usually consequences); returns code. */
int smx_fail(smx_error *e, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int smx_vfail(smx_error *e, int code, const char *fmt, va_list ap);

/* Log levels for the step log and diagnostics on stderr. */
extern int smx_quiet;
/* Put after "smx2d-sim: warning: " (an MPI rank's "rank R of N on HOST: "); empty by default. */
extern char smx_warn_tag[96];
void smx_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void smx_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#ifdef __cplusplus
}
#endif

#endif
