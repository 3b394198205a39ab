/* What a second interrupt does. The first SIGINT/SIGTERM asks a run to stop
 * at its next safe point, which removes its temporary result; a second one
 * ends the program at once, so that a run stuck in a long write can still be
 * stopped. Before it ends, the file registered here (the run's temporary
 * result, NAME.h5.partial-PID) is removed and the user is told, rather than
 * left for the next run to find. */
#ifndef SMX_INTERRUPT_H
#define SMX_INTERRUPT_H

/* Registers the file a second interrupt removes (copied); NULL: none. */
void smx_interrupt_file(const char *path);

/* From the signal handler, on the second interrupt: says so on stderr and
 * removes the registered file. Only async-signal-safe calls (write, unlink). */
void smx_interrupt_now(void);

#endif
