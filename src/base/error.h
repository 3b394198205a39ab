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
    /* The plan key the error is at ("grid.space.nz", "geometry.shapes[1].material",
     * "beam.spots[3].weight": a column of spot 3 of the field),
     * set by a layer that knows the key but not the plan's file (smx_fail_key);
     * the layer that owns the plan words it with the key's file, line and
     * column (plan_word_error, input/plan.h). Empty: not a key's fault. */
    char key[96];
} smx_error;

/* Records the first error only (later ones are usually consequences); returns code. */
int smx_fail(smx_error *e, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int smx_vfail(smx_error *e, int code, const char *fmt, va_list ap);
/* smx_fail for an error that is the fault of plan key `key` (its path, as
 * plan_fail_at takes it): the message says what is wrong with the key's value,
 * without the key; plan_word_error puts the key and where it was given before it. */
int smx_fail_key(smx_error *e, int code, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Puts the first error already in e at plan key `key`, as smx_fail_key would
 * have (a reader's or table builder's error that knows no key), when it is an
 * input error (out of memory is not the key's fault); returns rc. */
int smx_blame_key(smx_error *e, const char *key, int rc);

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
